"""What the S3, GCS and Azure dialects share: stat, reads pinned to one version, listings.

:class:`ObjectStoreDialect` adds to :class:`~fsseam.backends.dialects.base.GuardedDialect`
(the guarded-write protocol) everything an object store does the same way:

- **stat**: the bucket for a bare bucket path; else the object's metadata;
  else a prefix with something under it is a directory.
- **reads**: one GET carries the first bytes, the version and the total size
  (:meth:`ObjectStoreDialect._get`); the rest comes from ranged GETs pinned
  to that version (:meth:`ObjectStoreDialect._get_range`), in bounded
  memory, through one :class:`PinnedReader`. A read of a missing name that is
  a prefix is ``FS_NOT_REGULAR_FILE``.
- **listings**: one delimited listing, every page; names a key may hold but a
  path cannot (``""``, ``.``, ``..``, ``//``) are skipped, never reinterpreted.
- **attributes**: a replace carries over what the read it is based on saw
  (:class:`AttributeMemory`); a create is typed by
  :func:`~fsseam.backends.dialects.base.content_type`.
- **options**: listing and instance caches off (:meth:`ObjectStoreDialect.default_options`).
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Protocol

from fsseam.backends.dialects.base import (
    CHUNK_SIZE,
    DIRECTORY,
    GuardedDialect,
    ObjectState,
    RawEntry,
    RawReader,
)
from fsseam.backends.dialects.messages import check_size, not_a_directory, not_a_file, not_found
from fsseam.backends.dialects.outcomes import Failure, Wording, boundary
from fsseam.seam import FsError, FsErrorCode, FsInfo, FsNotFound, FsWriteIntent, ReplaceIfVersion

__all__ = [
    "AttributeMemory",
    "Body",
    "MemoryBody",
    "ObjectStoreDialect",
    "Opened",
    "PinnedReader",
]


class Body(Protocol):
    """Bytes arriving from one response (a streamed body, or bytes already in memory)."""

    async def read(self, size: int) -> bytes:
        """Up to ``size`` bytes; ``b""`` at the end."""

    def close(self) -> None:
        """Release the response (drops the connection when unread)."""


class MemoryBody:
    """A :class:`Body` over bytes already read."""

    def __init__(self, data: bytes) -> None:
        self._data: bytes | None = data
        self._pos = 0

    async def read(self, size: int) -> bytes:
        data = self._data
        if data is None:
            return b""
        if self._pos == 0 and size >= len(data):
            self._data = None
            return data  # the common case: no copy
        chunk = data[self._pos : self._pos + size]
        self._pos += len(chunk)
        return chunk

    def close(self) -> None:
        self._data = None


@dataclass(frozen=True, slots=True)
class Opened:
    """What an object store's first GET returned."""

    info: FsInfo
    """Version and TOTAL size of the object."""
    body: Body
    """The first bytes, from offset 0."""
    end: int
    """Where ``body`` ends (the size, or the first range's end)."""
    pin: Any = None
    """What :meth:`ObjectStoreDialect._get_range` needs to pin the version (default:
    ``info.version``)."""
    attributes: dict[str, Any] | None = None
    """Object attributes a replace based on this read carries over (Content-Type...)."""


class PinnedReader(RawReader):
    """The bytes of ONE version: the first GET's body, then ranged GETs pinned to it.

    A body that breaks (a reset, or an end before the promised length) is
    continued from the same offset, up to :data:`_RESUMES` times; a planned
    continuation (``range_size``) is not a break. A version replaced or
    deleted meanwhile fails the read (``_get_range`` refuses), never splicing
    two versions together.
    """

    def __init__(self, dialect: ObjectStoreDialect, path: str, opened: Opened) -> None:
        self._dialect = dialect
        self._path = path
        self._body: Body | None = opened.body
        self._end = opened.end
        self._pos = 0
        self._breaks = 0
        self.pin: Any = opened.info.version if opened.pin is None else opened.pin
        self.info = opened.info

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        while chunk := await self._dialect._io(self.read_chunk()):
            yield chunk

    async def read_chunk(self, limit: int = CHUNK_SIZE) -> bytes:
        """Up to ``limit`` bytes (``b""`` at the end); runs on the store's loop."""
        size = self.info.size or 0
        parts: list[bytes] = []
        got = 0
        while got < limit and self._pos < size:
            if self._body is not None and self._pos >= self._end:
                self._body.close()
                self._body = None
            if self._body is None:
                step = self._dialect.range_size
                self._end = size if step is None else min(self._pos + step, size)
                self._body = await self._dialect._get_range(
                    self._path, self.pin, self._pos, self._end
                )
            try:
                data = await self._body.read(min(limit - got, self._end - self._pos))
            except FsError:
                raise
            except Exception as exc:  # the connection broke mid-body
                self._broke(exc)
                continue
            if not data:
                self._broke(None)
                continue
            parts.append(data)
            got += len(data)
            self._pos += len(data)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _broke(self, exc: BaseException | None) -> None:
        self._breaks += 1
        self.close()
        if self._breaks > _RESUMES:
            why = f"{type(exc).__name__}: {exc}" if exc else "the body ended early"
            raise FsError(
                f'"{self._dialect.url(self._path)}": the connection kept breaking while '
                f"reading ({why}); try again",
                FsErrorCode.FS_IO_ERROR,
            ) from exc

    def close(self) -> None:
        """Release the current response; call on the store's loop."""
        body, self._body = self._body, None
        if body is not None:
            body.close()

    async def aclose(self) -> None:
        """:meth:`close` as a coroutine, for :meth:`Dialect._io`."""
        self.close()


_RESUMES = 3
"""Broken bodies continued per read."""


class AttributeMemory:
    """Recent (path, version) -> attributes seen on a read, bounded and thread-safe.

    A PUT replaces the whole object, so a replace would reset ``Content-Type``
    or ``Cache-Control``; the read the replace is based on already carried
    them, at no extra request.
    """

    def __init__(self, capacity: int = 1024) -> None:
        self._lock = threading.Lock()
        self._capacity = capacity
        self._items: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()

    def remember(self, path: str, version: str, attributes: dict[str, Any]) -> None:
        with self._lock:
            self._items[(path, version)] = attributes
            self._items.move_to_end((path, version))
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)

    def get(self, path: str, version: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._items.get((path, version))
            return dict(found) if found is not None else None


class ObjectStoreDialect(GuardedDialect):
    """An object store with conditional writes and per-object metadata (S3, GCS, Azure).

    Everything here runs once for every such store: the guarded-write
    protocol (:meth:`put`, a template), stat, reads pinned to one version,
    listings, attribute carry-over and cache-safe options. A store adds the
    hooks below, each raising :class:`~fsseam.seam.FsError` through its one
    error boundary: ``_send`` and ``_token_of`` (the write), ``_get`` and
    ``_get_range`` (reads), ``_head``, ``_has_children``, ``_bucket_exists``
    and ``_children`` (metadata and listings). Store paths are
    ``bucket/key``; every hook runs on the store's loop.
    """

    scheme: ClassVar[str] = "abstract"
    """The URL scheme of display paths (``s3``, ``gs``, ``az``)."""
    range_size: ClassVar[int | None] = None
    """Bytes per ranged GET after the first response (``None``: the rest at once)."""

    def __init__(self, fs: Any, root: str | None = None) -> None:
        super().__init__(fs, root)
        self._attributes = AttributeMemory()

    @classmethod
    def default_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        """Turn off the listing cache and the shared instance cache unless given.

        A dircache entry can be stale (and can even truncate ``cat_file``),
        and cached instances share state across mounts; neither may decide a
        version.
        """
        out = dict(options)
        out.setdefault("use_listings_cache", False)
        out.setdefault("skip_instance_cache", True)
        return out

    def url(self, path: str) -> str:
        return f"{self.scheme}://{path.lstrip('/')}"

    # -- hooks --------------------------------------------------------------

    @abstractmethod
    async def _get(self, path: str) -> Opened:
        """One GET of the object: its first bytes, version and total size.

        ``FS_NOT_FOUND`` when absent (the caller then tells a directory from
        nothing); ``FS_NOT_REGULAR_FILE`` for a folder-marker object.
        """

    @abstractmethod
    async def _get_range(self, path: str, pin: Any, start: int, end: int) -> Body:
        """Bytes ``[start, end)`` of exactly the version ``pin`` names.

        Raises :func:`changed_while_reading` when that version is gone.
        """

    @abstractmethod
    async def _head(self, path: str) -> FsInfo | None:
        """Metadata of the object ``path`` (a folder marker: a directory); ``None``: absent."""

    @abstractmethod
    async def _has_children(self, path: str) -> bool:
        """True when some object lies under ``path/`` (a prefix is a directory)."""

    @abstractmethod
    async def _bucket_exists(self, bucket: str) -> bool:
        """Whether the bucket (container) exists."""

    @abstractmethod
    def _children(self, path: str) -> AsyncIterator[RawEntry]:
        """Everything one delimited listing of ``path/`` shows, every page.

        Names are relative to the prefix; a ``path/`` marker object is named
        ``""``. Names a listing cannot show are filtered by the caller.
        """

    @abstractmethod
    def wording(self) -> Wording:
        """How this store is named in its failures."""

    @staticmethod
    @abstractmethod
    def _failure(exc: Exception) -> Failure:
        """How the store's SDK said that a request failed (its reading of ``exc``)."""

    def _errors(
        self, path: str, action: str = "", *, guarded: bool = False, pinned: bool = False
    ) -> AbstractContextManager[None]:
        """The error boundary of one request on ``path`` (:func:`~.outcomes.boundary`).

        ``guarded``: a conditional write or delete; ``pinned``: it names a version.
        """
        wording = replace(self.wording(), action=action) if action else self.wording()
        return boundary(self.url(path), wording, self._failure, guarded=guarded, pinned=pinned)

    def _stored(self, path: str, state: ObjectState) -> None:
        # The next replace may start from the content cache, with no GET: keep
        # what this version carries, or that replace would reset it.
        if state.kept is not None:
            self._attributes.remember(path, state.version, state.kept)

    def kept_attributes(self, path: str, guard: FsWriteIntent | None) -> dict[str, Any] | None:
        """What a replace at ``guard``'s version carries over, if that version was read here."""
        if isinstance(guard, ReplaceIfVersion):
            return self._attributes.get(path, guard.version)
        return None

    # -- stat, reads, listings ----------------------------------------------

    async def stat(self, path: str) -> FsInfo | None:
        return await self._io(self._stat(path))

    async def _stat(self, path: str) -> FsInfo | None:
        bucket, key = self.split(path)
        if not key:
            return (
                FsInfo(DIRECTORY, "directory", None) if await self._bucket_exists(bucket) else None
            )
        info = await self._head(path)
        if info is not None:
            return info
        return FsInfo(DIRECTORY, "directory", None) if await self._has_children(path) else None

    async def is_directory(self, path: str) -> bool:
        # One listing: a key may sit beside a prefix of the same name, so a HEAD
        # that finds nothing does not say the name is free for a file.
        if not self.split(path)[1]:
            return True
        return await self._io(self._has_children(path))

    async def bucket_exists(self, path: str) -> bool:
        return await self._io(self._bucket_exists(self.split(path)[0]))

    def _reader(self, path: str, opened: Opened) -> PinnedReader:
        """The reader for a first GET (a dialect may return a subclass)."""
        return PinnedReader(self, path, opened)

    async def _open(self, path: str) -> PinnedReader:
        url = self.url(path)
        if not self.split(path)[1]:
            raise not_a_file(url)  # a bucket is a directory
        try:
            opened = await self._get(path)
        except FsNotFound:
            if await self._has_children(path):
                raise not_a_file(url) from None
            raise
        if opened.attributes is not None:
            self._attributes.remember(path, opened.info.version, opened.attributes)
        return self._reader(path, opened)

    def open_read(self, path: str) -> AbstractAsyncContextManager[RawReader]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[RawReader]:
            reader = await self._io(self._open(path))
            try:
                yield reader
            finally:
                await self._io(reader.aclose())

        return opened()

    async def read_bytes(self, path: str, limit: int | None = None) -> tuple[bytes, FsInfo]:
        # Open and read on the store's loop in one hop, not one hop per chunk.
        return await self._io(self._read_all(path, limit))

    async def _read_all(self, path: str, limit: int | None) -> tuple[bytes, FsInfo]:
        reader = await self._open(path)
        try:
            size = reader.info.size or 0
            check_size(self.url(path), size, limit)
            data = await reader.read_chunk(max(size, 1))
            return data, reader.info
        finally:
            reader.close()

    async def list_dir(self, path: str) -> list[RawEntry]:
        return await self._io(self._list_dir(path))

    async def _list_dir(self, path: str) -> list[RawEntry]:
        url = self.url(path)
        entries: dict[tuple[str, str], RawEntry] = {}
        seen = False
        async for entry in self._children(path):
            seen = True
            # Keys may hold "", "." and ".." segments (S3 and GCS store "a/../b.txt"
            # verbatim): such a name is never shown, and never reinterpreted as a path.
            if entry.name not in ("", ".", "..") and "/" not in entry.name:
                entries.setdefault((entry.name, entry.type), entry)
        if seen or not self.split(path)[1]:
            return list(entries.values())
        info = await self._head(path)
        if info is None:
            raise not_found(url)
        if info.type == "directory":
            return []  # a folder-marker object with nothing under it
        raise not_a_directory(url)
