"""What dialects exchange: stored writes, object states, raw entries and readers, helpers.

Re-exported by :mod:`fsseam.backends.dialects.base`, where dialects find them.
"""

from __future__ import annotations

import asyncio
import hashlib
import mimetypes
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fsseam.seam import FsInfo, FsVersion
from fsseam.seam.types import PathType

__all__ = [
    "CHUNK_SIZE",
    "DIRECTORY",
    "TOKEN_KEY",
    "BytesReader",
    "ObjectState",
    "RawEntry",
    "RawReader",
    "StoredWrite",
    "content_type",
    "content_version",
    "new_token",
    "on_loop",
]

T = TypeVar("T")

CHUNK_SIZE = 1 << 20
"""Bytes per chunk when streaming."""

DIRECTORY = FsVersion("directory")
"""The version of every directory (prefix) on stores without directory versions."""

TOKEN_KEY = "fsseam-write-token"
"""Metadata key of a guarded write's unique token (Azure spells it with ``_``)."""


def content_version(data: bytes) -> FsVersion:
    """A version derived from content, for stores with no change token."""
    return FsVersion("sha256:" + hashlib.sha256(data).hexdigest()[:32])


# Python's built-in table only (no /etc/mime.types): the same guess on every machine.
_MIME = mimetypes.MimeTypes()


def content_type(name: str) -> str | None:
    """The MIME type a new object named ``name`` is stored with (``None``: unknown)."""
    return _MIME.guess_type(name)[0]


def new_token() -> str:
    """A unique write token (32 hex digits)."""
    return uuid.uuid4().hex


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


# -- values --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StoredWrite:
    """What a dialect's guarded put stored."""

    version: FsVersion
    """Version of the stored content."""
    created: bool
    """True when nothing existed before (a ``CreateIfAbsent`` write)."""
    version_id: str | None = None
    """The store's own id of the new object version, where it has one (S3
    ``VersionId`` on versioned buckets), for reporting; never a guard."""


@dataclass(frozen=True, slots=True)
class ObjectState:
    """An object as the store reports it: its version and the write token it carries."""

    version: FsVersion
    """The store's version (ETag, generation)."""
    token: str | None = None
    """The fsseam write token in its metadata (``None``: not written by fsseam)."""
    version_id: str | None = None
    """The store's object-version id, where it has one (S3 ``VersionId``)."""
    kept: dict[str, Any] | None = field(default=None, compare=False)
    """What a write just stored besides the bytes (content type, metadata), for the next replace."""


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
