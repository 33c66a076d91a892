"""``FsspecFileSystem``: the seam over any fsspec filesystem, and ``open_fs``.

Read-only mode, text decoding, the content cache and the choice of path
model live here, once for every store; path rules come from
:mod:`fsseam.backends.paths`, the edit and walk loops from the seam,
versions and guarded writes from the dialect, the cache from
:mod:`fsseam.backends.cache`.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, aclosing, asynccontextmanager
from typing import Any, TypeVar

import fsspec
from fsspec.implementations.local import LocalFileSystem

from fsseam import text as textmod
from fsseam.backends import manage
from fsseam.backends.cache import DEFAULT_CACHE_BYTES, ContentCache
from fsseam.backends.containment import DEFAULT_DENY, DenyRules
from fsseam.backends.dialects import Dialect, LocalDialect, dialect_class, dialect_type, protocols
from fsseam.backends.dialects.base import RawEntry, RawReader
from fsseam.backends.options import check_storage_options
from fsseam.backends.paths import KeyPaths, LocalPaths, PathModel
from fsseam.backends.streams import TextStream
from fsseam.seam import (
    CreateIfAbsent,
    FileSystem,
    FsCapabilities,
    FsDeleteOutcome,
    FsDirEntry,
    FsError,
    FsErrorCode,
    FsInfo,
    FsMoveOutcome,
    FsNotFound,
    FsNotObserved,
    FsNotRegularFile,
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
from fsseam.seam.conflicts import settle, stale
from fsseam.seam.filesystem import EditBasis

__all__ = [
    "DEFAULT_CACHE_BYTES",
    "DEFAULT_DENY",
    "DEFAULT_MAX_EDIT_BYTES",
    "FsspecFileSystem",
    "open_fs",
]

DEFAULT_MAX_EDIT_BYTES = 10 * 1024 * 1024
_RETRIES = 16

T = TypeVar("T")


class FsspecFileSystem(FileSystem):
    """The seam over any fsspec filesystem, rooted at ``root``.

    ``root`` is a path or URL of that filesystem; nothing outside it can be
    read or written. ``read_only`` refuses every mutation before any I/O.
    ``max_edit_bytes`` bounds the files ``edit_text`` loads and produces.
    ``deny`` lists glob patterns, relative to the root, that can never be read
    or written (default ``.git/**`` and ``**/.env``; pass ``()`` for none).
    ``cache_bytes`` bounds the content cache (:mod:`fsseam.backends.cache`,
    default 64 MiB; ``0`` turns it off): the bytes of files read in full
    and written, by version. A guarded write or edit whose version is cached
    sends the store one request, the conditional write; a conflict shows
    what changed; a new version holding the same text is no conflict. On
    local disk, whose stat-identity versions a writer that takes no lock can
    repeat within one clock tick, the cache never replaces the read of an
    edit's basis; it serves the other two uses only.

    Paths follow one model chosen here from the dialect
    (:class:`~fsseam.backends.paths.LocalPaths` or
    :class:`~fsseam.backends.paths.KeyPaths`); the edit and walk loops are
    the seam's.
    """

    def __init__(
        self,
        fs: fsspec.AbstractFileSystem,
        root: str,
        *,
        read_only: bool = False,
        max_edit_bytes: int = DEFAULT_MAX_EDIT_BYTES,
        deny: tuple[str, ...] | list[str] = DEFAULT_DENY,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
    ) -> None:
        self._fs = fs
        self._cache = ContentCache(cache_bytes)
        rules = DenyRules(deny)
        self._read_only = read_only
        self._max_edit_bytes = max_edit_bytes
        kind = dialect_type(fs)
        # The path model normalises the root; the dialect is built with it (and
        # the local one with the deny rules, checked again on every descriptor it
        # opens, where a race cannot slip past). Display paths come from the
        # dialect, which exists by the time anything is displayed.
        self._paths: PathModel
        if kind.local_paths:
            self._paths = LocalPaths(root, rules, self._display)
        else:
            self._paths = KeyPaths(root, rules, self._display, fs=fs, protocols=protocols(fs))
        self._dialect: Dialect
        if issubclass(kind, LocalDialect):
            self._dialect = kind(fs, self._paths.root, deny=rules)
        else:
            self._dialect = kind(fs, self._paths.root)
        # Object-store versions (ETag, generation, content hash) change with every
        # change of the bytes; stat identity may not (a lock-free in-place writer
        # within one clock tick), so on local disk the basis is always read.
        self._cached_basis = not self._dialect.local_paths
        self._capabilities = FsCapabilities(
            atomic_conditional_write=self._dialect.atomic_conditional_write,
            read_only=read_only,
        )

    def _display(self, store: str) -> str:
        return self._dialect.url(store)

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
        return self._paths.display_root

    @property
    def max_edit_bytes(self) -> int:
        """Largest file (and edit result) ``edit_text`` accepts."""
        return self._max_edit_bytes

    @property
    def cache(self) -> ContentCache:
        """The content cache (bytes by target and version)."""
        return self._cache

    def __repr__(self) -> str:
        mode = ", read_only=True" if self._read_only else ""
        return f"FsspecFileSystem({self.root!r}, dialect={self._dialect.name!r}{mode})"

    # -- paths ---------------------------------------------------------------

    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        return await self._paths.offload(self._paths.resolve, path, cwd)

    async def _near(self, path: str) -> str | None:
        """The stored spelling of ``path`` when it differs from it only by Unicode normalization.

        macOS stores names in NFD; a model types NFC. For each non-ASCII
        component missing as spelled, the parent is listed for a name with
        the same NFC form, and that name is used: a file is never created
        beside a name that merely looks the same. ``None`` when nothing
        differs (an ASCII path costs nothing); ``FS_NOT_FOUND`` naming them
        when several names match.
        """
        relative = self._paths.relative(path)
        if relative.isascii():
            return None
        current = self._paths.root
        moved = False
        for part in relative.split("/"):
            child = posixpath.join(current, part)
            if part.isascii():
                current = child
                continue
            try:
                names = [entry.name for entry in await self._dialect.list_dir(current)]
            except FsError:
                return None  # the parent is missing too: nothing to collide with
            if part in names:
                current = child
                continue
            want = unicodedata.normalize("NFC", part)
            near = [name for name in names if unicodedata.normalize("NFC", name) == want]
            if not near:
                return None
            if len(near) > 1:
                spelled = ", ".join(f'"{_escaped(name)}"' for name in sorted(near))
                raise FsNotFound(
                    f'"{self._dialect.url(path)}" does not exist as spelled; in '
                    f'"{self._dialect.url(current)}", {spelled} differ from "{_escaped(part)}" '
                    "only by Unicode normalization: name one of them exactly"
                )
            current = posixpath.join(current, near[0])
            moved = True
        if not moved:
            return None
        self._paths.check_denied(self._dialect.url(current), current)
        return current

    async def _on_file(self, target: FsTarget, operation: Callable[[str], Awaitable[T]]) -> T:
        """``operation(store path)`` of a file target, retried on its near spelling if missing."""
        path = self._paths.file_store_of(target)
        try:
            return await operation(path)
        except FsNotFound:
            near = await self._near(path)
            if near is None:
                raise
        return await operation(near)

    # -- reads ---------------------------------------------------------------

    async def stat(self, target: FsTarget) -> FsInfo | None:
        path = self._paths.store_of(target)
        info = await self._dialect.stat(path)
        if info is None:
            near = await self._near(path)
            if near is not None:
                info = await self._dialect.stat(near)
        return info

    async def lstat(self, path: str, *, cwd: str | None = None) -> FsPathInfo | None:
        store = await self._paths.offload(self._paths.lstat_path, path, cwd)
        return await self._dialect.lstat(store)

    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[FsTextStream]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[FsTextStream]:
            async with AsyncExitStack() as stack:

                async def enter(path: str) -> tuple[str, RawReader]:
                    return path, await stack.enter_async_context(self._dialect.open_read(path))

                path, reader = await self._on_file(target, enter)
                keep = None
                if self._cache.fits(reader.info.size):
                    keep = self._keeper(target.target_key, reader.info.version, path)
                yield TextStream(reader, target.display_path, keep, self._cache.entry_limit)

        return opened()

    async def read_text(self, target: FsTarget) -> str:
        async def read(path: str) -> tuple[bytes, FsInfo, str]:
            data, info = await self._dialect.read_bytes(path)
            return data, info, path

        data, info, path = await self._on_file(target, read)
        text = textmod.decode(data, target.display_path)[0]
        self._cache.put(target.target_key, info.version, path, data)
        return text

    def _keeper(self, key: FsTargetKey, version: FsVersion, path: str) -> Callable[[bytes], None]:
        """What a stream calls with the bytes it read in full, to cache them."""

        def keep(data: bytes) -> None:
            self._cache.put(key, version, path, data)

        return keep

    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        path = self._paths.store_of(target)
        try:
            raw = await self._dialect.list_dir(path)
        except FsNotFound:
            # An object-store prefix exists once something is under it: an
            # empty root lists as empty, unless its bucket is missing.
            if path == self._paths.root and self._paths.implicit_directories:
                if await self._dialect.bucket_exists(path):
                    return []
                raise
            near = await self._near(path)
            if near is None:
                raise
            path, raw = near, await self._dialect.list_dir(near)
        kept = [item for item in raw if not self._dialect.is_internal(item.name)]
        targets = await self._paths.children(path, kept)
        entries = [
            FsDirEntry(item.name, item.type, child, item.version, item.size)
            for item, child in zip(kept, targets, strict=True)
        ]
        entries.sort(key=lambda entry: entry.name)
        return entries

    async def walk(
        self, target: FsTarget, *, max_depth: int | None = None
    ) -> AsyncIterator[FsWalkEntry]:
        if max_depth is not None and max_depth < 1:
            raise ValueError("max_depth must be 1 or more (or None for no limit)")
        paths = self._paths
        top = paths.store_of(target)
        base = top.rstrip("/") + "/"
        # A denied directory is not entered (the local dialect also refuses to
        # enter one that a symlink replaced since it was listed).
        listing = self._dialect.walk(top, max_depth=max_depth, descend=paths.descend)
        try:
            first = await anext(listing)
        except StopAsyncIteration:
            return
        except FsNotFound:
            empty_root = paths.implicit_directories and top == paths.root
            if empty_root and await self._dialect.bucket_exists(top):
                return  # an empty object-store root, as in list_dir
            raise
        pending: tuple[str, RawEntry] | None = first
        try:
            while pending is not None:
                rel, raw = pending
                if not self._dialect.is_internal(raw.name):
                    found = await paths.walked(base + rel, raw)
                    if found is not None:
                        yield FsWalkEntry(rel, raw.type, found, raw.version, raw.size)
                pending = await anext(listing, None)
        finally:
            # A caller that stops early closes us; close the store listing now,
            # on this loop, rather than leave it to the garbage collector.
            close = getattr(listing, "aclose", None)
            if close is not None:
                await close()

    # -- maintenance -----------------------------------------------------------

    async def remove(self, target: FsTarget) -> None:
        """Delete one file, unconditionally (not a model-facing operation).

        For maintenance code such as ``fsseam doctor`` cleaning up its scratch
        object. Refused in read-only mode; ``FS_NOT_FOUND`` when absent.
        """
        self._check_writable(target)
        await self._dialect.remove(self._paths.file_store_of(target))

    # -- writes --------------------------------------------------------------

    def _check_writable(self, target: FsTarget) -> None:
        if self._read_only:
            raise FsSandboxDenied(
                f'cannot modify "{target.display_path}": the workspace {self.root} is read-only'
            )

    async def _current(
        self, key: FsTargetKey, path: str
    ) -> tuple[bytes | None, bool, FsInfo] | None:
        """What is stored now: its bytes (``None`` past ``max_edit_bytes``), BOM, version.

        ``None`` when nothing is there. A file too large to keep is only
        opened for its first bytes (the BOM), never downloaded whole. Bytes
        read whole go to the content cache under their version.
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
                self._cache.put(key, info.version, path, data)
                return data, data.startswith(textmod.BOM), info
        except FsNotFound:
            return None

    async def _current_or_directory(
        self, path: str, target: FsTarget
    ) -> tuple[bytes | None, bool, FsInfo] | None:
        """:meth:`_current`, with a directory at ``path`` worded for a write (and its fix)."""
        try:
            return await self._current(target.target_key, path)
        except FsNotRegularFile as exc:
            raise await self._write_onto(path, target, exc) from None

    async def _write_onto(self, path: str, target: FsTarget, exc: FsError) -> FsError:
        """A store's "not a regular file" for a write: the directory case says what works."""
        info = await self._dialect.stat(path)
        if info is None or info.type != "directory":
            return exc
        shown = target.display_path.rstrip("/")
        return FsNotRegularFile(
            f'"{shown}" is a directory, so it cannot be written as a file; write to a path '
            f'inside it (such as "{shown}/notes.txt") or choose another name'
        )

    async def _put(
        self, target: FsTarget, path: str, data: bytes, guard: FsWriteIntent | None
    ) -> FsVersion:
        """One guarded put; the bytes stored go to the cache under their new version."""
        stored = await self._dialect.put(path, data, guard)
        self._cache.put(target.target_key, stored.version, path, data)
        return stored.version

    async def _create(self, target: FsTarget, path: str, content: str) -> FsWriteOutcome:
        data = textmod.encode(content, False)
        version = await self._put_named(target, path, data, CreateIfAbsent(), doing="write")
        return FsWriteOutcome("create", version, None, content)

    async def _put_named(
        self, target: FsTarget, path: str, data: bytes, guard: FsWriteIntent | None, *, doing: str
    ) -> FsVersion:
        """:meth:`_put`; a create goes to the name an NFC/NFD sibling already has, if one does.

        ``doing`` (``write``, ``move``) words the refusal when that sibling was not read.
        """
        near = await self._near(path) if isinstance(guard, CreateIfAbsent) else None
        try:
            return await self._put(target, near or path, data, guard)
        except FsNotRegularFile as exc:
            raise await self._write_onto(near or path, target, exc) from None
        except FsNotObserved:
            if near is None:
                raise
            raise FsNotObserved(
                f'"{target.display_path}" already exists, stored as '
                f'"{_escaped(posixpath.basename(near))}" (the same name in another Unicode '
                f"normalization form), and was not read before this {doing}"
            ) from None

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: FsWriteIntent | None = None,
    ) -> FsWriteOutcome:
        self._check_writable(target)
        path = self._paths.file_store_of(target)
        if isinstance(expected, CreateIfAbsent):
            return await self._create(target, path, content)
        if isinstance(expected, ReplaceIfVersion):
            return await self._replace(target, path, content, expected.version)
        settled = False
        for _ in range(_RETRIES):
            current = await self._current_or_directory(path, target)
            if current is None and not settled:
                settled = True
                near = await self._near(path)
                if near is not None:
                    path = near
                    current = await self._current_or_directory(path, target)
            old_bytes, bom, old_info = current if current else (None, False, None)
            guard: FsWriteIntent = (
                ReplaceIfVersion(old_info.version) if old_info else CreateIfAbsent()
            )
            try:
                version = await self._put(target, path, textmod.encode_content(content, bom), guard)
            except FsError as exc:
                # Unconditional writes retry a lost race.
                if exc.code in _RACE_CODES:
                    continue
                raise
            return FsWriteOutcome(
                "update" if old_info else "create",
                version,
                _maybe_text(old_bytes, target.display_path),
                content,
                old_info.version if old_info else None,
            )
        raise self._kept_changing(target)

    async def _replace(
        self, target: FsTarget, path: str, content: str, version: FsVersion
    ) -> FsWriteOutcome:
        """A write guarded by ``version``: one put when that version's bytes are cached.

        Otherwise (or once the put is refused) the stored file is read: at
        ``version`` it is replaced; at another version holding the observed
        text it is replaced at that version; else ``FS_STALE_VERSION``
        carrying the change when the observed text is known.
        """
        name = target.display_path
        seen = self._cache.get(target.target_key, version)
        observed = seen.data if seen is not None else None
        if seen is not None:
            path = seen.path
        guard = version
        # The bytes at `guard` without asking the store, when versions name bytes exactly.
        basis = observed if self._cached_basis else None
        settled = False
        for _ in range(_RETRIES):
            if basis is None:
                current = await self._current_or_directory(path, target)
                if current is None and not settled and seen is None:
                    settled = True
                    near = await self._near(path)
                    if near is not None:
                        path = near
                        current = await self._current_or_directory(path, target)
                if current is None:
                    raise FsStaleVersion(f'"{name}" was deleted since it was read')
                data, bom, info = current
                if info.version != guard:
                    await self._judge(name, observed, data, info.version)
                    guard = info.version  # the very text observed: replace it there
            else:
                data, bom = basis, basis.startswith(textmod.BOM)
            try:
                stored = await self._put(
                    target, path, textmod.encode_content(content, bom), ReplaceIfVersion(guard)
                )
            except FsError as exc:
                if exc.code not in _RACE_CODES or observed is None:
                    raise
                basis = None  # it moved on: read what is there and judge that
                continue
            return FsWriteOutcome("update", stored, _maybe_text(data, name), content, guard)
        raise self._kept_changing(target)

    async def _judge(
        self, name: str, observed: bytes | None, current: bytes | None, version: FsVersion
    ) -> None:
        """Return when ``current`` holds the observed text, else raise the conflict (its change)."""
        seen = _maybe_text(observed, name)
        now = _maybe_text(current, name)
        if seen is None or now is None:
            raise stale(name, current_version=version)
        await settle(name, seen, now, version, None)

    @staticmethod
    def _kept_changing(target: FsTarget) -> FsError:
        return FsError(
            f'"{target.display_path}" kept changing during {_RETRIES} write attempts; try again',
            FsErrorCode.FS_STALE_VERSION,
        )

    async def _observed_text(self, target: FsTarget, version: FsVersion) -> str | None:
        seen = self._cache.get(target.target_key, version)
        return None if seen is None else _maybe_text(seen.data, target.display_path)

    async def _edit_basis(self, target: FsTarget, expected: FsVersion | None = None) -> EditBasis:
        """One read (bytes, BOM, version), or none when ``expected``'s bytes are cached.

        The commit is one guarded put either way.
        """
        self._check_writable(target)
        name = target.display_path
        limit = self._max_edit_bytes
        seen = None
        if expected is not None and self._cached_basis:
            seen = self._cache.get(target.target_key, expected)
            if seen is not None and len(seen.data) > limit:
                seen = None  # the store decides what it holds now, and says so
        if seen is not None and expected is not None:
            path, data, version = seen.path, seen.data, expected
        else:

            async def read(path: str) -> tuple[str, bytes, FsInfo]:
                data, info = await self._dialect.read_bytes(path, limit)
                return path, data, info

            path, data, info = await self._on_file(target, read)
            version = info.version
        before, bom = textmod.decode(data, name)
        if seen is None:
            self._cache.put(target.target_key, version, path, data)

        async def commit(edited: str) -> FsVersion:
            encoded = textmod.encode(edited, bom)
            if len(encoded) > limit:
                raise FsTooLarge(
                    f'editing "{name}" would make it {len(encoded)} bytes, over the '
                    f"{limit}-byte edit limit (max_edit_bytes)"
                )
            return await self._put(target, path, encoded, ReplaceIfVersion(version))

        return EditBasis(before, version, commit, read=seen is None)

    # -- delete and move (fsseam.backends.manage) ------------------------------

    async def delete(self, target: FsTarget, expected: FsVersion | None = None) -> FsDeleteOutcome:
        return await manage.delete(self, target, expected)

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        expected: FsVersion | None = None,
        destination_intent: FsWriteIntent | None = None,
    ) -> FsMoveOutcome:
        return await manage.move(self, source, destination, expected, destination_intent)


_RACE_CODES = frozenset({FsErrorCode.FS_STALE_VERSION, FsErrorCode.FS_NOT_OBSERVED})


def _escaped(name: str) -> str:
    """A name with its non-ASCII characters spelled out, so look-alikes can be told apart."""
    return name if name.isascii() else name.encode("ascii", "backslashreplace").decode()


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
    cache_bytes: int = DEFAULT_CACHE_BYTES,
    **storage_options: Any,
) -> FsspecFileSystem:
    """Mount a workspace: a local path, ``file://``, ``memory://``, ``s3://``, ``gs://``, ``az://``...

    The URL is the root; nothing outside it can be touched. ``deny`` patterns
    (relative to the root) can never be read or written. ``cache_bytes``
    bounds the content cache (default 64 MiB, ``0`` off; see
    :class:`FsspecFileSystem`). ``storage_options`` go straight to fsspec
    (cloud dialects add cache-safe defaults).
    """
    check_storage_options(url_or_path, storage_options)  # a misspelt option is a TypeError
    local = "://" not in url_or_path or url_or_path.startswith("file://")
    fs = LocalFileSystem() if local else _store(url_or_path, storage_options)
    return FsspecFileSystem(
        fs,
        url_or_path,
        read_only=read_only,
        max_edit_bytes=max_edit_bytes,
        deny=deny,
        cache_bytes=cache_bytes,
    )


def _store(url: str, storage_options: dict[str, Any]) -> fsspec.AbstractFileSystem:
    """The fsspec instance for a store URL, with its dialect's cache-safe option defaults."""
    protocol = url.split("://", 1)[0]
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
        root = str(fs._strip_protocol(url))
        if not fs.exists(root):
            fs.makedirs(root, exist_ok=True)
    return fs
