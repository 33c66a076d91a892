"""Path models: how one workspace's paths resolve, stay inside the root and name children.

:class:`~fsseam.backends.fsspec.FsspecFileSystem` picks one at construction,
from its dialect:

- :class:`LocalPaths` — OS paths. Symlinks are real: ``resolve`` follows them
  and checks both the real path and the path with all but its last component
  followed. On every later use the local dialect re-validates the descriptor
  it opens (containment and deny patterns on what is actually opened), so a
  symlink swapped in after ``resolve`` is caught race-free.
- :class:`KeyPaths` — fsspec stripped paths (object keys, ``memory://``):
  purely lexical, never a request; ``/bucket/key`` is fsspec's absolute
  notation, not root-relative.

Both refuse, before any I/O on the store: refused syntax, paths over the
store's length limits, anything outside the root, deny-pattern matches. For
file operations they also refuse the root itself, in any spelling (``.``,
``./``, ``x/..``, the root's URL), and any spelling that names a directory
(a trailing ``/``, a last component ``.`` or ``..``): the target's
``display_path`` keeps that trailing ``/``, while its ``target_key`` stays the
directory's.
"""

from __future__ import annotations

import asyncio
import errno
import os
import posixpath
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Any, ParamSpec, TypeVar

from fsseam.backends.containment import (
    KEY_LIMITS,
    LOCAL_LIMITS,
    DenyRules,
    PathLimits,
    contained,
    relative_to,
    syntax_problem,
)
from fsseam.backends.dialects.base import RawEntry
from fsseam.seam import (
    FsError,
    FsErrorCode,
    FsNotRegularFile,
    FsSandboxDenied,
    FsTarget,
    FsTargetKey,
)

__all__ = ["KeyPaths", "LocalPaths", "PathModel"]

P = ParamSpec("P")
T = TypeVar("T")


def _spelled_as_directory(path: str) -> bool:
    """True for ``a/``, ``a/.``, ``a/..``, ``.``: spellings that can only name a directory."""
    return path.endswith("/") or path.rsplit("/", 1)[-1] in (".", "..")


class PathModel(ABC):
    """Resolve, re-contain and name children for one workspace root.

    ``root`` is the root as a store path; ``url(store)`` the display path of a
    store path. Every method raises ``FS_SANDBOX_DENIED`` for a path that
    must not be touched; none talks to an object store.
    """

    local: bool = False
    """True when store paths are OS paths (symlinks exist)."""
    implicit_directories: bool = False
    """True when a directory exists only while something is below it (object-store prefixes)."""

    def __init__(
        self, root: str, deny: DenyRules, url: Callable[[str], str], limits: PathLimits
    ) -> None:
        self.root = root
        self.deny = deny
        self.limits = limits
        self._url = url

    # -- shared rules ------------------------------------------------------------

    @property
    def display_root(self) -> str:
        """The root as people type it (absolute local path or URL)."""
        return self._url(self.root)

    def contained(self, candidate: str) -> bool:
        """True when the store path ``candidate`` is the root or below it."""
        return contained(candidate, self.root)

    def relative(self, store: str) -> str:
        """A contained store path relative to the root (``""`` for the root)."""
        return relative_to(self.root, store)

    def refuse(self, path: str, why: str) -> FsSandboxDenied:
        """``FS_SANDBOX_DENIED`` for ``path``, saying why and where paths must stay."""
        shown = _abbreviated(path)
        return FsSandboxDenied(f'"{shown}" {why}; paths must stay inside {self.display_root}')

    def check_denied(self, path: str, *stores: str) -> None:
        """Refuse ``path`` when any of ``stores`` (contained store paths) matches a deny pattern."""
        for store in stores:
            pattern = self.deny.match(self.relative(store))
            if pattern is not None:
                raise FsSandboxDenied(
                    f'"{path}" matches the deny pattern "{pattern}"; '
                    "fsseam never reads or writes it"
                )

    def check_syntax(self, path: str) -> None:
        """Refuse non-strings and refused syntax (linear in the path)."""
        if not isinstance(path, str):
            raise self.refuse(repr(path), "is not a string")
        problem = syntax_problem(path)
        if problem is not None:
            raise self.refuse(path.replace("\x00", "\\0"), problem)

    def check_length(self, path: str, measured: str) -> None:
        """Refuse ``path`` when its store spelling ``measured`` is over the store's limits.

        Called on the lexical spelling, before any walk of the disk or the
        deny patterns, so an over-long path costs one linear scan.
        """
        too_long = self.limits.problem(path, measured=measured)
        if too_long is not None:
            raise self.refuse(path, too_long)

    def file_store_of(self, target: FsTarget) -> str:
        """:meth:`store_of` for a file operation: the root and directory spellings are refused.

        The root is a directory; so is anything spelled with a trailing ``/``.
        ``FS_NOT_REGULAR_FILE``, with the fix that works.
        """
        store = self.store_of(target)
        shown = target.display_path
        if store == self.root:
            raise FsNotRegularFile(
                f'"{shown}" is the workspace root, a directory, not a file; name a file '
                f'inside it, such as "{self.display_root.rstrip("/")}/notes.txt"'
            )
        if shown.endswith("/"):
            raise FsNotRegularFile(
                f'"{shown}" ends with "/", so it names a directory, not a file; drop the '
                'trailing "/" to name the file'
            )
        return store

    def _target(self, key: str, display: str, directory: bool) -> FsTarget:
        if directory and display != self.display_root and not display.endswith("/"):
            display += "/"
        return FsTarget(FsTargetKey(key), display)

    async def offload(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a method of this model that may touch the disk: in a worker thread when it does."""
        return fn(*args, **kwargs)

    # -- per model -------------------------------------------------------------------

    @abstractmethod
    def resolve(self, path: str, cwd: str | None = None) -> FsTarget:
        """The contained, allowed target ``path`` names (relative to ``cwd``, default the root)."""

    @abstractmethod
    def lstat_path(self, path: str, cwd: str | None = None) -> str:
        """The store path ``lstat`` looks at: a final symlink is not followed."""

    @abstractmethod
    def store_of(self, target: FsTarget) -> str:
        """Re-contain a target on use (it may come from a listing): its store path.

        No I/O: on local disk the dialect validates what it opens.
        """

    @abstractmethod
    def child_targets(self, parent: str, entries: Iterable[RawEntry]) -> list[FsTarget]:
        """Targets for the children of the directory ``parent`` (a store path)."""

    async def children(self, parent: str, entries: list[RawEntry]) -> list[FsTarget]:
        """:meth:`child_targets`, off the event loop when that touches the disk."""
        return self.child_targets(parent, entries)

    async def walked(self, store: str, raw: RawEntry) -> FsTarget | None:
        """:meth:`walk_target`, off the event loop when that touches the disk."""
        return self.walk_target(store, raw)

    def descend(self, store: str) -> bool:
        """Whether a walk may enter the directory ``store``: not a denied one."""
        return self.deny.match(self.relative(store)) is None

    @abstractmethod
    def walk_target(self, store: str, raw: RawEntry) -> FsTarget | None:
        """The target of a walked entry, or ``None`` when ``resolve`` would refuse it."""


class KeyPaths(PathModel):
    """Lexical paths of an fsspec store: object keys, ``memory://`` paths."""

    implicit_directories = True

    def __init__(
        self,
        root: str,
        deny: DenyRules,
        url: Callable[[str], str],
        *,
        fs: Any,
        protocols: tuple[str, ...],
        limits: PathLimits = KEY_LIMITS,
    ) -> None:
        stripped = str(fs._strip_protocol(root)).rstrip("/")
        self._fs = fs
        self._marker = str(fs.root_marker)
        self._protocols = protocols
        super().__init__(stripped or self._marker, deny, url, limits)

    def _store(self, path: str, cwd: str | None) -> str:
        self.check_syntax(path)
        if "://" in path:
            proto = path.split("://", 1)[0]
            if proto not in self._protocols:
                raise self.refuse(path, "belongs to another store")
            store = str(self._fs._strip_protocol(path))
        elif path.startswith("/"):
            store = self._marker + path.lstrip("/")
        else:
            base = self.root if cwd is None else self._store(cwd, None)
            store = base.rstrip("/") + "/" + path
        # Normalise lexically under a fake "/" so ".." can never climb past it.
        normal = posixpath.normpath("/" + store.lstrip("/"))
        normal = self._marker + normal.lstrip("/") if self._marker == "" else normal
        if not self.contained(normal):
            raise self.refuse(path, "resolves outside the workspace")
        # Buckets and containers are not part of the key a store limits.
        key = normal.split("/", 1)[-1] if self._marker == "" else normal
        self.check_length(path, key)
        return normal

    def resolve(self, path: str, cwd: str | None = None) -> FsTarget:
        store = self._store(path, cwd)
        self.check_denied(path, store)
        return self._target(self._url(store), self._url(store), _spelled_as_directory(path))

    def lstat_path(self, path: str, cwd: str | None = None) -> str:
        store = self._store(path, cwd)
        self.check_denied(path, store)
        return store

    def store_of(self, target: FsTarget) -> str:
        store = self._store(target.target_key, None)
        self.check_denied(target.display_path, store)
        return store

    def child_targets(self, parent: str, entries: Iterable[RawEntry]) -> list[FsTarget]:
        out = []
        for entry in entries:
            url = self._url(posixpath.join(parent, entry.name))
            out.append(FsTarget(FsTargetKey(url), url))
        return out

    def walk_target(self, store: str, raw: RawEntry) -> FsTarget | None:
        if self.deny.match(self.relative(store)) is not None:
            return None
        url = self._url(store)
        return FsTarget(FsTargetKey(url), url)


class LocalPaths(PathModel):
    """OS paths below a real (symlink-free) root directory."""

    local = True

    def __init__(
        self,
        root: str,
        deny: DenyRules,
        url: Callable[[str], str] = str,
        *,
        limits: PathLimits = LOCAL_LIMITS,
    ) -> None:
        if root.startswith("file://"):
            root = root[len("file://") :]
        real = os.path.realpath(os.path.abspath(os.path.expanduser(root)))
        if not os.path.isdir(real):
            raise FileNotFoundError(
                f"workspace root {root!r} is not an existing directory; create it first"
            )
        super().__init__(real, deny, url, limits)

    async def offload(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        # realpath walks the disk (one lstat per component, a readlink per
        # link): never on the event loop.
        return await asyncio.to_thread(fn, *args, **kwargs)

    async def children(self, parent: str, entries: list[RawEntry]) -> list[FsTarget]:
        if any(entry.type == "symlink" for entry in entries):
            return await self.offload(self.child_targets, parent, entries)
        return self.child_targets(parent, entries)

    async def walked(self, store: str, raw: RawEntry) -> FsTarget | None:
        if raw.type == "symlink":
            return await self.offload(self.walk_target, store, raw)
        return self.walk_target(store, raw)

    def _join(self, path: str, cwd: str | None) -> str:
        if "://" in path:
            if not path.startswith("file://"):
                raise self.refuse(path, "belongs to another store")
            path = path[len("file://") :]
        if os.path.isabs(path):
            return path
        base = self.root if cwd is None else self._resolve(cwd, None)[0]
        return os.path.join(base, path)

    def _resolve(self, path: str, cwd: str | None) -> tuple[str, str]:
        """``(real, display)``: the path with every symlink resolved, and with all but the last.

        Both must lie inside the root. With ``..`` in the path the two are the
        same (a lexical ``..`` after a symlink would name another file).
        """
        self.check_syntax(path)
        joined = self._join(path, cwd)
        self.check_length(path, joined)
        parent, name = os.path.split(joined)
        if name in ("", ".", "..") or "/../" in joined or joined.startswith("../"):
            real = display = _realpath(joined, path)
        else:
            display = os.path.join(_realpath(parent, path), name)
            real = _realpath(display, path) if os.path.islink(display) else display
        if not (self.contained(real) and self.contained(display)):
            raise self.refuse(path, "resolves outside the workspace")
        return real, display

    def resolve(self, path: str, cwd: str | None = None) -> FsTarget:
        real, display = self._resolve(path, cwd)
        self.check_denied(path, real, display)
        return self._target(real, display, _spelled_as_directory(path))

    def lstat_path(self, path: str, cwd: str | None = None) -> str:
        display = self._resolve(path, cwd)[1]
        self.check_denied(path, display)
        return display

    def store_of(self, target: FsTarget) -> str:
        key = target.target_key
        if not os.path.isabs(key) or not self.contained(os.path.normpath(key)):
            raise self.refuse(target.display_path, "resolves outside the workspace")
        self.check_denied(target.display_path, key)
        return key

    def child_targets(self, parent: str, entries: Iterable[RawEntry]) -> list[FsTarget]:
        # parent is symlink-free: only a link child needs resolving (one
        # realpath walk per listed link, not per entry). Called in a thread
        # when any child is a link.
        out = []
        for entry in entries:
            child = os.path.join(parent, entry.name)
            key = child
            if entry.type == "symlink":
                real = _realpath(child, child)
                key = real if self.contained(real) else child
            out.append(FsTarget(FsTargetKey(key), child))
        return out

    def walk_target(self, store: str, raw: RawEntry) -> FsTarget | None:
        # Below a directory the dialect checked to be its own real path, only
        # a symlink can lead elsewhere: resolve it (in a thread, the caller's
        # job) and apply resolve's rules to where it leads.
        if self.deny.match(self.relative(store)) is not None:
            return None
        key = store
        if raw.type == "symlink":
            try:
                key = _realpath(store, store)
            except FsError:
                return None
            if not self.contained(key) or self.deny.match(self.relative(key)) is not None:
                return None
        return FsTarget(FsTargetKey(key), store)


def _realpath(path: str, shown: str) -> str:
    """``os.path.realpath`` with its race failures as ``FsError``.

    realpath lstat()s a component and then readlink()s it; when a concurrent
    writer swaps the link for a file in between, readlink fails (``EINVAL``,
    or ``ENOENT`` when it vanished). Retry a few times, then say what happened.
    """
    for _ in range(3):
        try:
            return os.path.realpath(path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise FsSandboxDenied(f'"{shown}" is a symlink loop') from exc
            if exc.errno not in (errno.EINVAL, errno.ENOENT):
                raise FsError(
                    f'"{shown}" could not be resolved: {exc.strerror or exc}',
                    FsErrorCode.FS_IO_ERROR,
                ) from exc
            error = exc
    raise FsError(
        f'"{shown}" kept changing while it was resolved (a symlink is being replaced '
        "again and again); try again",
        FsErrorCode.FS_IO_ERROR,
    ) from error


def _abbreviated(path: str) -> str:
    """A path short enough to quote in a message."""
    return path if len(path) <= 120 else f"{path[:60]}...{path[-40:]}"
