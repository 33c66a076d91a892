"""``FsspecFileSystem``: the seam over any fsspec filesystem, and ``open_fs``.

Path containment, read-only mode, text decoding and literal edits live here,
once for every store; versions and guarded writes come from the dialect.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, aclosing, asynccontextmanager
from typing import Any

import fsspec
from fsspec.implementations.local import LocalFileSystem

from fsseam import text as textmod
from fsseam.backends.containment import DEFAULT_DENY, DenyRules, syntax_problem
from fsseam.backends.dialects import Dialect, dialect_class, dialect_for, protocols
from fsseam.backends.dialects.base import RawEntry, RawReader
from fsseam.seam import (
    CreateIfAbsent,
    FileSystem,
    FsCapabilities,
    FsDirEntry,
    FsEditOutcome,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsInfo,
    FsNotFound,
    FsNotText,
    FsPathInfo,
    FsSandboxDenied,
    FsStaleVersion,
    FsTarget,
    FsTargetKey,
    FsTextStream,
    FsTooLarge,
    FsVersion,
    FsWalkEntry,
    FsWriteIntent,
    FsWriteOutcome,
    ReplaceIfVersion,
)

__all__ = ["DEFAULT_DENY", "DEFAULT_MAX_EDIT_BYTES", "FsspecFileSystem", "open_fs"]

DEFAULT_MAX_EDIT_BYTES = 10 * 1024 * 1024
_RETRIES = 16


class _TextStream(FsTextStream):
    def __init__(self, reader: RawReader, name: str) -> None:
        self._reader = reader
        self._name = name
        self.info = reader.info

    async def __aiter__(self) -> AsyncIterator[str]:
        decoder = textmod.StreamDecoder(self._name)
        # aclosing: a decode error must close the reader's generator now, not
        # leave it pending until garbage collection.
        async with aclosing(self._reader.chunks()) as chunks:
            async for chunk in chunks:
                text = decoder.feed(chunk)
                if text:
                    yield text
        tail = decoder.feed(b"", final=True)
        if tail:
            yield tail


class FsspecFileSystem(FileSystem):
    """The seam over any fsspec filesystem, rooted at ``root``.

    ``root`` is a path or URL of that filesystem; nothing outside it can be
    read or written. ``read_only`` refuses every mutation before any I/O.
    ``max_edit_bytes`` bounds the files ``edit_text`` loads and produces.
    ``deny`` lists glob patterns, relative to the root, that can never be read
    or written (default ``.git/**`` and ``**/.env``; pass ``()`` for none).
    """

    def __init__(
        self,
        fs: fsspec.AbstractFileSystem,
        root: str,
        *,
        read_only: bool = False,
        max_edit_bytes: int = DEFAULT_MAX_EDIT_BYTES,
        deny: tuple[str, ...] | list[str] = DEFAULT_DENY,
    ) -> None:
        self._fs = fs
        self._deny_rules = DenyRules(deny)
        self._dialect: Dialect = dialect_for(fs)
        self._protocols = protocols(fs)
        self._read_only = read_only
        self._max_edit_bytes = max_edit_bytes
        self._local = self._dialect.local_paths
        if self._local:
            if root.startswith("file://"):
                root = root[len("file://") :]
            real = os.path.realpath(os.path.abspath(os.path.expanduser(root)))
            if not os.path.isdir(real):
                raise FileNotFoundError(
                    f"workspace root {root!r} is not an existing directory; create it first"
                )
            self._root = real
        else:
            stripped = str(fs._strip_protocol(root)).rstrip("/")
            self._root = stripped or str(fs.root_marker)
        self._dialect.root = self._root
        self._capabilities = FsCapabilities(
            atomic_conditional_write=self._dialect.atomic_conditional_write,
            read_only=read_only,
        )

    # -- public properties -------------------------------------------------

    @property
    def capabilities(self) -> FsCapabilities:
        return self._capabilities

    @property
    def fs(self) -> fsspec.AbstractFileSystem:
        """The wrapped fsspec instance."""
        return self._fs

    @property
    def dialect(self) -> Dialect:
        """The dialect deciding versions and guarded writes."""
        return self._dialect

    @property
    def root(self) -> str:
        """The root as a display path (absolute local path or URL)."""
        return self._dialect.url(self._root)

    @property
    def max_edit_bytes(self) -> int:
        """Largest file (and edit result) ``edit_text`` accepts."""
        return self._max_edit_bytes

    def __repr__(self) -> str:
        mode = ", read_only=True" if self._read_only else ""
        return f"FsspecFileSystem({self.root!r}, dialect={self._dialect.name!r}{mode})"

    # -- paths ---------------------------------------------------------------

    def _deny(self, path: str, why: str) -> FsSandboxDenied:
        return FsSandboxDenied(f'"{path}" {why}; paths must stay inside {self.root}')

    def _check_syntax(self, path: str) -> None:
        if not isinstance(path, str):
            raise self._deny(repr(path), "is not a string")
        problem = syntax_problem(path)
        if problem is not None:
            raise self._deny(path.replace("\x00", "\\0"), problem)

    def _contained(self, candidate: str) -> bool:
        root = self._root
        if candidate == root:
            return True
        prefix = root if root.endswith("/") else root + "/"
        return candidate.startswith(prefix)

    def _check_denied(self, path: str, *stores: str) -> None:
        root = self._root.rstrip("/")
        for store in stores:
            relative = store[len(root) :].lstrip("/")
            pattern = self._deny_rules.match(relative)
            if pattern is not None:
                raise FsSandboxDenied(
                    f'"{path}" matches the deny pattern "{pattern}"; '
                    "fsseam never reads or writes it"
                )

    def _local_join(self, path: str, cwd: str | None) -> str:
        if "://" in path:
            if not path.startswith("file://"):
                raise self._deny(path, "belongs to another store")
            path = path[len("file://") :]
        if os.path.isabs(path):
            return path
        base = self._root if cwd is None else self._local_path(cwd, None, follow=True)
        return os.path.join(base, path)

    def _local_path(self, path: str, cwd: str | None, *, follow: bool) -> str:
        real, display = self._local_resolve(path, cwd)
        return real if follow else display

    def _local_resolve(self, path: str, cwd: str | None) -> tuple[str, str]:
        """``(real, display)``: the path with every symlink resolved, and with all but the last.

        Both must lie inside the root. With ``..`` in the path the two are the
        same (a lexical ``..`` after a symlink would name another file).
        """
        self._check_syntax(path)
        joined = self._local_join(path, cwd)
        parent, name = os.path.split(joined)
        if name in ("", ".", "..") or "/../" in joined or joined.startswith("../"):
            real = display = os.path.realpath(joined)
        else:
            display = os.path.join(os.path.realpath(parent), name)
            real = os.path.realpath(display) if os.path.islink(display) else display
        if not (self._contained(real) and self._contained(display)):
            raise self._deny(path, "resolves outside the workspace")
        return real, display

    def _store_path(self, path: str, cwd: str | None) -> str:
        self._check_syntax(path)
        if "://" in path:
            proto = path.split("://", 1)[0]
            if proto not in self._protocols:
                raise self._deny(path, "belongs to another store")
            store = str(self._fs._strip_protocol(path))
        elif path.startswith("/"):
            store = str(self._fs.root_marker) + path.lstrip("/")
        else:
            base = self._root if cwd is None else self._store_path(cwd, None)
            store = base.rstrip("/") + "/" + path
        # Normalise lexically under a fake "/" so ".." can never climb past it.
        marker = str(self._fs.root_marker)
        normal = posixpath.normpath("/" + store.lstrip("/"))
        normal = marker + normal.lstrip("/") if marker == "" else normal
        if not self._contained(normal):
            raise self._deny(path, "resolves outside the workspace")
        return normal

    def _target(self, store: str) -> FsTarget:
        key = store if self._local else self._dialect.url(store)
        return FsTarget(FsTargetKey(key), self._dialect.url(store))

    def _path_of(self, target: FsTarget, *, verified_later: bool = False) -> str:
        """Re-contain a target on every use (a symlink may have moved since resolve).

        ``verified_later``: the local dialect re-validates the descriptor it
        opens, which is both cheaper and race-free, so the path walk is skipped.
        """
        if self._local:
            key = target.target_key
            real = key if verified_later else os.path.realpath(key)
            if not self._contained(real):
                raise self._deny(target.display_path, "resolves outside the workspace")
            self._check_denied(target.display_path, real)
            return real
        store = self._store_path(target.target_key, None)
        self._check_denied(target.display_path, store)
        return store

    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        if self._local:
            real, display = self._local_resolve(path, cwd)
            self._check_denied(path, real, display)
            return FsTarget(FsTargetKey(real), display)
        store = self._store_path(path, cwd)
        self._check_denied(path, store)
        return self._target(store)

    # -- reads ---------------------------------------------------------------

    async def stat(self, target: FsTarget) -> FsInfo | None:
        return await self._dialect.stat(self._path_of(target))

    async def lstat(self, path: str, *, cwd: str | None = None) -> FsPathInfo | None:
        store = (
            self._local_path(path, cwd, follow=False)
            if self._local
            else self._store_path(path, cwd)
        )
        self._check_denied(path, store)
        return await self._dialect.lstat(store)

    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[FsTextStream]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[FsTextStream]:
            path = self._path_of(target, verified_later=True)
            async with self._dialect.open_read(path) as reader:
                yield _TextStream(reader, target.display_path)

        return opened()

    async def read_text(self, target: FsTarget) -> str:
        data, _ = await self._dialect.read_bytes(self._path_of(target, verified_later=True))
        return textmod.decode(data, target.display_path)[0]

    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        path = self._path_of(target)
        try:
            raw = await self._dialect.list_dir(path)
        except FsNotFound:
            # An object-store prefix exists once something is under it: an
            # empty root lists as empty, unless its bucket is missing.
            if not self._local and path == self._root and await self._dialect.bucket_exists(path):
                return []
            raise
        entries = [
            FsDirEntry(
                name=item.name,
                type=item.type,
                target=self._child_target(path, item.name, item.type == "symlink"),
                version=item.version,
                size=item.size,
            )
            for item in raw
            if not self._dialect.is_internal(item.name)
        ]
        entries.sort(key=lambda entry: entry.name)
        return entries

    def _child_target(self, parent: str, name: str, symlink: bool) -> FsTarget:
        if not self._local:
            return self._target(posixpath.join(parent, name))
        child = os.path.join(parent, name)
        # parent is already symlink-free: only a link child needs resolving (one
        # realpath walk per listed link, not per entry).
        real = os.path.realpath(child) if symlink else child
        key = real if self._contained(real) else child
        return FsTarget(FsTargetKey(key), child)

    async def walk(
        self, target: FsTarget, *, max_depth: int | None = None
    ) -> AsyncIterator[FsWalkEntry]:
        if max_depth is not None and max_depth < 1:
            raise ValueError("max_depth must be 1 or more (or None for no limit)")
        top = self._path_of(target)
        root = self._root.rstrip("/")
        base = top.rstrip("/") + "/"

        def relative(store: str) -> str:
            return store[len(root) :].lstrip("/")

        def descend(store: str) -> bool:
            # A denied directory is not entered; on local disk neither is one
            # that a symlink replaced since it was listed (realpath moves).
            if self._deny_rules.match(relative(store)) is not None:
                return False
            return not self._local or os.path.realpath(store) == store

        listing = self._dialect.walk(top, max_depth=max_depth, descend=descend)
        try:
            first = await anext(listing)
        except StopAsyncIteration:
            return
        except FsNotFound:
            if not self._local and top == self._root and await self._dialect.bucket_exists(top):
                return  # an empty object-store root, as in list_dir
            raise
        pending: tuple[str, RawEntry] | None = first
        try:
            while pending is not None:
                rel, raw = pending
                store = base + rel
                if not self._dialect.is_internal(raw.name) and self._walkable(store, raw):
                    target = self._walk_target(store, raw)
                    yield FsWalkEntry(rel, raw.type, target, raw.version, raw.size)
                pending = await anext(listing, None)
        finally:
            # A caller that stops early closes us; close the store listing now,
            # on this loop, rather than leave it to the garbage collector.
            close = getattr(listing, "aclose", None)
            if close is not None:
                await close()

    def _walkable(self, store: str, raw: RawEntry) -> bool:
        """True when ``resolve`` would accept the entry: not denied, no way out of the root."""
        root = self._root.rstrip("/")
        if self._deny_rules.match(store[len(root) :].lstrip("/")) is not None:
            return False
        if self._local and raw.type == "symlink":
            real = os.path.realpath(store)
            return self._contained(real) and (
                self._deny_rules.match(real[len(root) :].lstrip("/")) is None
            )
        return True

    def _walk_target(self, store: str, raw: RawEntry) -> FsTarget:
        if not self._local:
            return self._target(store)
        # Below a directory already checked to be its own realpath, only a
        # symlink can lead elsewhere; skip the realpath walk for the rest.
        key = os.path.realpath(store) if raw.type == "symlink" else store
        return FsTarget(FsTargetKey(key), store)

    # -- maintenance -----------------------------------------------------------

    async def remove(self, target: FsTarget) -> None:
        """Delete one file, unconditionally (not a model-facing operation).

        For maintenance code such as ``fsseam doctor`` cleaning up its scratch
        object. Refused in read-only mode; ``FS_NOT_FOUND`` when absent.
        """
        self._check_writable(target)
        await self._dialect.remove(self._path_of(target))

    # -- writes --------------------------------------------------------------

    def _check_writable(self, target: FsTarget) -> None:
        if self._read_only:
            raise FsSandboxDenied(
                f'cannot modify "{target.display_path}": the workspace {self.root} is read-only'
            )

    async def _current(self, path: str) -> tuple[bytes | None, bool, FsInfo] | None:
        """What is stored now: its bytes (``None`` past ``max_edit_bytes``), BOM, version.

        ``None`` when nothing is there. A file too large to keep is only
        opened for its first bytes (the BOM), never downloaded whole.
        """
        try:
            async with self._dialect.open_read(path) as reader:
                info = reader.info
                if info.size is not None and info.size > self._max_edit_bytes:
                    # Stopping early: aclosing closes the generator now, not at GC.
                    async with aclosing(reader.chunks()) as chunks:
                        async for chunk in chunks:
                            return None, chunk.startswith(textmod.BOM), info
                    return None, False, info
                data = b"".join([chunk async for chunk in reader.chunks()])
                return data, data.startswith(textmod.BOM), info
        except FsNotFound:
            return None

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: FsWriteIntent | None = None,
    ) -> FsWriteOutcome:
        self._check_writable(target)
        path = self._path_of(target, verified_later=True)
        if isinstance(expected, CreateIfAbsent):
            stored = await self._dialect.put(path, textmod.encode(content, False), expected)
            return FsWriteOutcome("create", stored.version, None, content)
        for _ in range(_RETRIES):
            current = await self._current(path)
            if isinstance(expected, ReplaceIfVersion) and (
                current is None or current[2].version != expected.version
            ):
                what = "deleted" if current is None else "modified"
                raise FsStaleVersion(f'"{target.display_path}" was {what} since it was read')
            old_bytes, bom, old_info = current if current else (None, False, None)
            guard: FsWriteIntent = (
                ReplaceIfVersion(old_info.version) if old_info else CreateIfAbsent()
            )
            try:
                stored = await self._dialect.put(path, textmod.encode_content(content, bom), guard)
            except FsError as exc:
                # Unconditional writes retry a lost race; guarded ones report it.
                if expected is None and exc.code in _RACE_CODES:
                    continue
                raise
            return FsWriteOutcome(
                "update" if old_info else "create",
                stored.version,
                _maybe_text(old_bytes, target.display_path),
                content,
                old_info.version if old_info else None,
            )
        raise FsError(
            f'"{target.display_path}" kept changing during {_RETRIES} write attempts; try again',
            FsErrorCode.FS_STALE_VERSION,
        )

    async def edit_text(
        self,
        target: FsTarget,
        edit: FsEditRequest,
        expected: FsVersion | None = None,
    ) -> FsEditOutcome:
        def apply(text: str, name: str) -> textmod.EditResult:
            return textmod.apply_edit(
                text, edit.old_string, edit.new_string, replace_all=edit.replace_all, name=name
            )

        return await self._edit_with(target, expected, apply)

    async def edit_text_many(
        self,
        target: FsTarget,
        edits: Sequence[FsEditRequest],
        expected: FsVersion | None = None,
    ) -> FsEditOutcome:
        # The same single read + guarded put as edit_text: one critical section
        # for all the edits, so a multi-edit costs what one edit costs.
        def apply(text: str, name: str) -> textmod.EditResult:
            return textmod.apply_edits(text, edits, name=name)

        return await self._edit_with(target, expected, apply)

    async def _edit_with(
        self,
        target: FsTarget,
        expected: FsVersion | None,
        apply: Callable[[str, str], textmod.EditResult],
    ) -> FsEditOutcome:
        """Read, ``apply(text, name)`` in memory, put guarded by the version read."""
        self._check_writable(target)
        path = self._path_of(target, verified_later=True)
        name = target.display_path
        for _ in range(_RETRIES):
            try:
                data, info = await self._dialect.read_bytes(path, self._max_edit_bytes)
            except FsNotFound:
                raise FsStaleVersion(
                    f'"{name}" does not exist (deleted since it was read, or never created); '
                    "create it with write"
                ) from None
            if expected is not None and info.version != expected:
                raise FsStaleVersion(f'"{name}" was modified since it was read')
            before, bom = textmod.decode(data, name)
            result = apply(before, name)
            encoded = textmod.encode(result.text, bom)
            if len(encoded) > self._max_edit_bytes:
                raise FsTooLarge(
                    f'editing "{name}" would make it {len(encoded)} bytes, over the '
                    f"{self._max_edit_bytes}-byte edit limit (max_edit_bytes)"
                )
            try:
                stored = await self._dialect.put(path, encoded, ReplaceIfVersion(info.version))
            except FsError as exc:
                if expected is None and exc.code in _RACE_CODES:
                    continue  # unguarded edit: re-read and re-apply on the new text
                raise
            return FsEditOutcome(
                stored.version, before, result.text, result.replacements, info.version
            )
        raise FsError(
            f'"{name}" kept changing during {_RETRIES} edit attempts; try again',
            FsErrorCode.FS_STALE_VERSION,
        )


_RACE_CODES = frozenset({FsErrorCode.FS_STALE_VERSION, FsErrorCode.FS_NOT_OBSERVED})


def _maybe_text(data: bytes | None, name: str) -> str | None:
    if data is None:
        return None
    try:
        return textmod.decode(data, name)[0]
    except FsNotText:
        return None


def open_fs(
    url_or_path: str,
    *,
    read_only: bool = False,
    max_edit_bytes: int = DEFAULT_MAX_EDIT_BYTES,
    deny: tuple[str, ...] | list[str] = DEFAULT_DENY,
    **storage_options: Any,
) -> FsspecFileSystem:
    """Mount a workspace: a local path, ``file://``, ``memory://``, ``s3://``, ``gs://``, ``az://``...

    The URL is the root; nothing outside it can be touched. ``deny`` patterns
    (relative to the root) can never be read or written. ``storage_options``
    go straight to fsspec (cloud dialects add cache-safe defaults).
    """
    if "://" not in url_or_path or url_or_path.startswith("file://"):
        fs: fsspec.AbstractFileSystem = LocalFileSystem()
        return FsspecFileSystem(
            fs, url_or_path, read_only=read_only, max_edit_bytes=max_edit_bytes, deny=deny
        )
    protocol = url_or_path.split("://", 1)[0]
    cls = dialect_class(protocol)
    store_options = dict(storage_options)
    if cls is not None:
        store_options = cls.default_options(store_options)
    try:
        fs = fsspec.filesystem(protocol, **store_options)
    except ImportError as exc:
        hint = {"s3": "s3", "gs": "gcs", "gcs": "gcs", "az": "azure", "abfs": "azure"}.get(protocol)
        extra = f' (pip install "fsseam[{hint}]")' if hint else ""
        raise ImportError(f"{protocol}:// needs an extra package{extra}: {exc}") from exc
    if protocol == "memory":
        root = str(fs._strip_protocol(url_or_path))
        if not fs.exists(root):
            fs.makedirs(root, exist_ok=True)
    return FsspecFileSystem(
        fs, url_or_path, read_only=read_only, max_edit_bytes=max_edit_bytes, deny=deny
    )
