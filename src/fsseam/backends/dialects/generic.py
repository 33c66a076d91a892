"""Any other fsspec store: best-effort versions and in-process guards.

Version = the store's own change token when ``info()`` carries one (``etag``
or ``generation``), else a hash of the content. Guards are exact within one
process (a striped process-wide lock serialises check and put per target);
across processes nothing is promised, so ``atomic_conditional_write`` is
False. Modification times are not used: at one-second resolution two
same-size writes would share a version.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import Any, ClassVar, NoReturn, TypeVar

from fsseam.backends.dialects import base, messages
from fsseam.backends.dialects.base import (
    DIRECTORY,
    BytesReader,
    Dialect,
    RawEntry,
    RawReader,
    StoredWrite,
)
from fsseam.seam import (
    CreateIfAbsent,
    FsError,
    FsErrorCode,
    FsInfo,
    FsVersion,
    FsWriteIntent,
    ReplaceIfVersion,
)
from fsseam.seam.types import PathType

__all__ = ["GenericDialect"]

T = TypeVar("T")

_STRIPES = [threading.Lock() for _ in range(256)]
_TOKEN_KEYS = ("etag", "ETag", "generation")


def _stripe(path: str) -> threading.Lock:
    return _STRIPES[zlib.crc32(path.encode("utf-8", "surrogateescape")) % len(_STRIPES)]


def _raise(url: str, exc: Exception) -> NoReturn:
    if isinstance(exc, FileNotFoundError):
        raise messages.not_found(url) from exc
    if isinstance(exc, NotADirectoryError):
        raise messages.not_a_directory(url) from exc
    if isinstance(exc, IsADirectoryError):
        raise messages.not_a_file(url) from exc
    if isinstance(exc, PermissionError):
        raise FsError(
            f'"{url}": access denied by the store', FsErrorCode.FS_PERMISSION_DENIED
        ) from exc
    raise FsError(f'"{url}": {type(exc).__name__}: {exc}', FsErrorCode.FS_IO_ERROR) from exc


class GenericDialect(Dialect):
    """Every fsspec store without a dedicated dialect (the memory store included)."""

    name: ClassVar[str] = "generic"
    atomic_conditional_write: ClassVar[bool] = False

    def __init__(self, fs: Any, root: str | None = None) -> None:
        super().__init__(fs, root)
        # In-memory stores answer in microseconds; a worker thread would cost more.
        self._inline = "memory" in base.protocols(fs)

    @contextmanager
    def _errors(self, path: str) -> Iterator[None]:
        try:
            yield
        except FsError:
            raise
        except Exception as exc:  # fsspec stores raise anything
            _raise(self.url(path), exc)

    async def _locked(self, path: str, fn: Callable[[], T]) -> T:
        """Run ``fn`` under the path's lock stripe, inline or in a worker thread."""

        def guarded() -> T:
            with _stripe(path), self._errors(path):
                return fn()

        return await base.run_blocking(self._inline, guarded)

    def _info(self, path: str) -> dict[str, Any] | None:
        try:
            info: dict[str, Any] = self.fs.info(path)
        except FileNotFoundError:
            return None
        return info

    @staticmethod
    def _token(info: dict[str, Any]) -> FsVersion | None:
        for key in _TOKEN_KEYS:
            value = info.get(key)
            if value:
                return FsVersion(f"{key}:{value}")
        return None

    def _read_locked(self, path: str, limit: int | None) -> tuple[bytes, FsInfo]:
        info = self._info(path)
        if info is None:
            raise FileNotFoundError(path)
        if info.get("type") == "directory":
            raise IsADirectoryError(path)
        messages.check_size(self.url(path), info.get("size"), limit)
        data: bytes = self.fs.cat_file(path)
        version = self._token(info) or base.content_version(data)
        return data, FsInfo(version, "file", len(data))

    def _stat_locked(self, path: str) -> FsInfo | None:
        """Version, type and size from one ``info()`` (plus the content when hashing)."""
        info = self._info(path)
        if info is None:
            return None
        if info.get("type") == "directory":
            return FsInfo(DIRECTORY, "directory", None)
        token = self._token(info)
        if token is None:
            token = base.content_version(self.fs.cat_file(path))
        return FsInfo(token, "file", info.get("size"))

    async def stat(self, path: str) -> FsInfo | None:
        return await self._locked(path, lambda: self._stat_locked(path))

    def open_read(self, path: str) -> AbstractAsyncContextManager[RawReader]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[RawReader]:
            data, info = await self._locked(path, lambda: self._read_locked(path, None))
            yield BytesReader(data, info)

        return opened()

    async def read_bytes(self, path: str, limit: int | None = None) -> tuple[bytes, FsInfo]:
        return await self._locked(path, lambda: self._read_locked(path, limit))

    async def put(self, path: str, data: bytes, guard: FsWriteIntent | None) -> StoredWrite:
        def work() -> StoredWrite:
            current = self._stat_locked(path)
            if current is not None and current.type == "directory":
                raise IsADirectoryError(path)
            if isinstance(guard, CreateIfAbsent) and current is not None:
                raise messages.already_exists(self.url(path))
            if isinstance(guard, ReplaceIfVersion):
                if current is None:
                    raise messages.stale(self.url(path), deleted=True)
                if current.version != guard.version:
                    raise messages.stale(self.url(path))
            parent = self.fs._parent(path)
            parent_info = self._info(parent) if parent else None
            if parent_info is None and parent:
                self.fs.makedirs(parent, exist_ok=True)
            elif parent_info is not None and parent_info.get("type") != "directory":
                raise NotADirectoryError(parent)
            self.fs.pipe_file(path, data)
            info = self._info(path) or {}
            return StoredWrite(self._token(info) or base.content_version(data), current is None)

        return await self._locked(path, work)

    async def remove(self, path: str) -> None:
        await self._locked(path, lambda: self.fs.rm_file(path))

    async def delete(self, path: str, expected: FsVersion) -> None:
        """Check the version and remove under the path's lock (exact within this process)."""

        def work() -> None:
            current = self._stat_locked(path)
            if current is None:
                raise messages.stale(self.url(path), deleted=True)
            if current.type == "directory":
                raise messages.not_a_file(self.url(path))
            if current.version != expected:
                raise messages.stale(self.url(path))
            self.fs.rm_file(path)

        await self._locked(path, work)

    async def list_dir(self, path: str) -> list[RawEntry]:
        def work() -> list[RawEntry]:
            info = self._info(path)
            if info is None:
                raise FileNotFoundError(path)
            if info.get("type") != "directory":
                raise NotADirectoryError(path)
            out: list[RawEntry] = []
            for item in self.fs.ls(path, detail=True):
                name = str(item["name"]).rstrip("/").rsplit("/", 1)[-1]
                kind: PathType = "directory" if item.get("type") == "directory" else "file"
                out.append(
                    RawEntry(
                        name,
                        kind,
                        self._token(item) if kind == "file" else None,
                        item.get("size") if kind == "file" else None,
                    )
                )
            return out

        return await self._locked(path, work)
