"""What a dialect provides: versions, raw reads and guarded writes for one store family.

A dialect works on *store paths* (what fsspec calls a stripped path) that
:class:`~fsseam.backends.fsspec.FsspecFileSystem` has already contained in the
root. Text, edits and path policy live above it; it only moves bytes and
decides versions.
"""

from __future__ import annotations

import asyncio
import hashlib
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from fsseam.seam import (
    FsError,
    FsErrorCode,
    FsInfo,
    FsIOError,
    FsNotFound,
    FsNotObserved,
    FsNotRegularFile,
    FsPathInfo,
    FsStaleVersion,
    FsTooLarge,
    FsVersion,
    FsWriteIntent,
)
from fsseam.seam.filesystem import walk_order
from fsseam.seam.types import PathType

__all__ = [
    "CHUNK_SIZE",
    "Dialect",
    "RawEntry",
    "RawReader",
    "StoredWrite",
    "already_exists",
    "content_version",
    "not_a_file",
    "not_found",
    "on_loop",
    "protocols",
    "stale",
]

T = TypeVar("T")

CHUNK_SIZE = 1 << 20
"""Bytes per chunk when streaming."""


def content_version(data: bytes) -> FsVersion:
    """A version derived from content, for stores with no change token."""
    return FsVersion("sha256:" + hashlib.sha256(data).hexdigest()[:32])


async def on_loop(loop: asyncio.AbstractEventLoop | None, coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on ``loop``, the loop an fsspec async store is bound to.

    s3fs, gcsfs and adlfs sessions belong to their own loop; driven from any
    other loop they fail in ways that look like network errors (and s3fs
    retries them). Running on that loop already, await directly.
    """
    if loop is None:
        return await coro
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:  # pragma: no cover - called from sync code
        running = None
    if running is loop:
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))


@dataclass(frozen=True, slots=True)
class StoredWrite:
    """What a dialect's guarded put stored."""

    version: FsVersion
    """Version of the stored content."""
    created: bool
    """True when nothing existed before."""


@dataclass(frozen=True, slots=True)
class RawEntry:
    """A directory child as the store lists it."""

    name: str
    type: PathType
    version: FsVersion | None
    size: int | None


class RawReader(ABC):
    """An open read: ``info`` is the version of exactly the bytes ``chunks`` yields."""

    info: FsInfo

    @abstractmethod
    def chunks(self) -> AsyncGenerator[bytes, None]:
        """The content, in chunks of at most :data:`CHUNK_SIZE` bytes."""


class BytesReader(RawReader):
    """A reader over bytes already in memory."""

    def __init__(self, data: bytes, info: FsInfo) -> None:
        self._data = data
        self.info = info

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        data = self._data
        for start in range(0, len(data), CHUNK_SIZE):
            yield data[start : start + CHUNK_SIZE]


class Dialect(ABC):
    """Versions, raw reads and guarded writes for one family of fsspec stores.

    Every method raises :class:`~fsseam.seam.FsError` only; each dialect maps
    its SDK's exceptions at one boundary.
    """

    name: ClassVar[str] = "abstract"
    atomic_conditional_write: ClassVar[bool] = False
    local_paths: ClassVar[bool] = False
    """True when store paths are OS paths (symlinks, realpath)."""

    def __init__(self, fs: Any) -> None:
        self.fs = fs
        self.root: str | None = None
        """The workspace root as a store path, set by the file system that mounts it."""

    @classmethod
    def default_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        """Storage options for ``open_fs``, with this store's safe defaults added."""
        return options

    def url(self, path: str) -> str:
        """The full URL (or local path) people use for ``path``."""
        return str(self.fs.unstrip_protocol(path))

    @abstractmethod
    async def stat(self, path: str) -> FsInfo | None:
        """Metadata following symlinks; ``None`` when absent."""

    async def lstat(self, path: str) -> FsPathInfo | None:
        """Metadata of the path itself; object stores have no symlinks."""
        info = await self.stat(path)
        if info is None:
            return None
        return FsPathInfo(info.version, info.type, info.size)

    @abstractmethod
    def open_read(self, path: str) -> AbstractAsyncContextManager[RawReader]:
        """Open ``path`` for reading; raises ``FS_NOT_FOUND`` / ``FS_NOT_REGULAR_FILE``."""

    async def read_bytes(self, path: str, limit: int | None = None) -> tuple[bytes, FsInfo]:
        """The whole content and its version; ``FS_TOO_LARGE`` past ``limit`` bytes."""
        async with self.open_read(path) as reader:
            check_size(self.url(path), reader.info.size, limit)
            parts: list[bytes] = []
            total = 0
            async for chunk in reader.chunks():
                total += len(chunk)
                check_size(self.url(path), total, limit)
                parts.append(chunk)
            return b"".join(parts), reader.info

    @abstractmethod
    async def put(self, path: str, data: bytes, guard: FsWriteIntent | None) -> StoredWrite:
        """Atomically store ``data`` at ``path`` under ``guard`` (one atomic step).

        Missing parent directories are created. ``CreateIfAbsent`` on an
        existing object raises ``FS_NOT_OBSERVED``; ``ReplaceIfVersion`` on a
        changed or missing one raises ``FS_STALE_VERSION``.
        """

    @abstractmethod
    async def list_dir(self, path: str) -> list[RawEntry]:
        """Direct children (any order); ``FS_NOT_FOUND`` / ``FS_NOT_DIRECTORY``."""

    async def remove(self, path: str) -> None:
        """Delete one file (unconditionally); ``FS_NOT_FOUND`` when absent.

        Not part of the model-facing seam: maintenance code (``fsseam doctor``
        cleaning its scratch object) uses it.
        """
        try:
            await asyncio.to_thread(self.fs.rm_file, path)
        except FileNotFoundError as exc:
            raise not_found(self.url(path)) from exc
        except OSError as exc:
            raise FsIOError(f'"{self.url(path)}": {exc}') from exc

    async def bucket_exists(self, path: str) -> bool:
        """Whether the bucket / container holding ``path`` exists (object stores)."""
        if self.fs.root_marker:  # a tree, not buckets (memory://, local)
            return True
        bucket = path.lstrip("/").split("/", 1)[0]
        return bool(await asyncio.to_thread(self.fs.exists, bucket))

    def is_internal(self, name: str) -> bool:
        """True for the dialect's own scratch names, hidden from listings."""
        return False

    async def walk(
        self,
        path: str,
        *,
        max_depth: int | None = None,
        descend: Callable[[str], bool] | None = None,
    ) -> AsyncIterator[tuple[str, RawEntry]]:
        """Every entry below the directory ``path``, as ``(relative path, entry)``.

        Order: sorted by relative path, a directory counting as its path plus
        ``/`` (:func:`~fsseam.seam.filesystem.walk_order`); that is the order
        an object store lists keys under a prefix. ``max_depth=1`` is the
        direct children. Symlinks are reported, never entered. A directory is
        entered only when ``descend(store_path)`` is true (the file system
        prunes denied and swapped directories with it). Errors on ``path``
        itself propagate; a subdirectory that vanishes or refuses listing is
        skipped.

        The default recurses with :meth:`list_dir`, one listing per directory.
        An object store may override it with one recursive prefix listing,
        keeping the order and applying ``descend`` as a filter on the keys
        below a refused directory.
        """
        base = path.rstrip("/") + "/"
        stack = [("", _walk_sorted(await self.list_dir(path)))]
        while stack:
            prefix, pending = stack[-1]
            if not pending:
                stack.pop()
                continue
            entry = pending.pop()
            relative = prefix + entry.name
            yield relative, entry
            if entry.type != "directory":
                continue
            if max_depth is not None and relative.count("/") + 1 >= max_depth:
                continue
            child = base + relative
            if descend is not None and not descend(child):
                continue
            try:
                children = await self.list_dir(child)
            except FsError as exc:
                if exc.code in _SKIPPED_DIRECTORY_CODES:
                    continue
                raise
            stack.append((relative + "/", _walk_sorted(children)))


_SKIPPED_DIRECTORY_CODES = frozenset(
    {
        FsErrorCode.FS_NOT_FOUND,
        FsErrorCode.FS_NOT_DIRECTORY,
        FsErrorCode.FS_PERMISSION_DENIED,
        FsErrorCode.FS_SANDBOX_DENIED,
    }
)


def _walk_sorted(entries: list[RawEntry]) -> list[RawEntry]:
    """Entries in reverse walk order, so ``pop()`` yields them in order."""
    return sorted(
        entries, key=lambda entry: walk_order(entry.name, entry.type == "directory"), reverse=True
    )


def protocols(fs: Any) -> tuple[str, ...]:
    """The protocol names an fsspec instance answers to."""
    proto = fs.protocol
    return (proto,) if isinstance(proto, str) else tuple(proto)


# What the model reads must not depend on the store: every dialect words the
# common failures with these, so swapping the backend changes only the path.


def not_found(url: str) -> FsNotFound:
    """``FS_NOT_FOUND`` for a missing file."""
    return FsNotFound(f'"{url}" does not exist; check the path (write creates new files)')


def not_a_file(url: str) -> FsNotRegularFile:
    """``FS_NOT_REGULAR_FILE`` for a directory (or prefix) where a file was expected."""
    return FsNotRegularFile(f'"{url}" is a directory, not a file')


def already_exists(url: str) -> FsNotObserved:
    """``FS_NOT_OBSERVED`` for a create-only write that met an existing file."""
    return FsNotObserved(f'"{url}" already exists and was not read before this write')


def stale(url: str, *, deleted: bool = False) -> FsStaleVersion:
    """``FS_STALE_VERSION`` for a guard that no longer holds."""
    return FsStaleVersion(f'"{url}" was {"deleted" if deleted else "modified"} since it was read')


def check_size(name: str, size: int | None, limit: int | None) -> None:
    """Raise ``FS_TOO_LARGE`` when ``size`` is over ``limit``."""
    if limit is not None and size is not None and size > limit:
        raise FsTooLarge(
            f'"{name}" is {size} bytes, over the {limit}-byte edit limit (max_edit_bytes); '
            "rewrite it with write, or raise max_edit_bytes"
        )


async def run_blocking(inline: bool, fn: Callable[[], T]) -> T:
    """Run a blocking function inline (fast, in-memory stores) or in a worker thread."""
    if inline:
        return fn()
    return await asyncio.to_thread(fn)


@asynccontextmanager
async def reader_from(opener: Callable[[], Awaitable[RawReader]]) -> AsyncIterator[RawReader]:
    """Wrap an awaitable opener as an async context manager."""
    yield await opener()
