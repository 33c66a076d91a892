"""The content cache of a mounted workspace: the exact bytes of ``(target, version)`` pairs.

:class:`~fsseam.backends.fsspec.FsspecFileSystem` fills it with what it read
in full (a read tool call streams the whole file) and with what it wrote,
each under the version the store gave those very bytes. It is used for two
things only, and both stay safe whatever it holds:

- the basis of a guarded write or edit: the store accepts a write guarded
  by version V only while it still holds exactly the bytes V named, so
  starting from V's cached bytes is starting from what the store holds, or
  the store refuses (on object stores this turns read + write into the
  write alone);
- what a caller observed, to show what changed since, to see that a new
  version holds the very same bytes, and to rebase an edit cleanly.

It is never asked whether a file changed, nor trusted for a version it does
not name. Bounded in bytes (least recently used first), safe across threads
and tasks (one lock, held for dictionary steps only).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

from fsseam.seam import FsTargetKey, FsVersion

__all__ = ["DEFAULT_CACHE_BYTES", "CachedContent", "ContentCache"]

DEFAULT_CACHE_BYTES: Final = 64 * 1024 * 1024
"""Bytes of file content a mount keeps by default."""

_ENTRY_SHARE: Final = 4
"""One entry may take at most this fraction of the cache (a quarter: 16 MiB by default)."""


@dataclass(frozen=True, slots=True)
class CachedContent:
    """The bytes of one version of one target, and where they were read or written."""

    path: str
    """The store path the bytes belong to (the spelling actually stored)."""
    data: bytes
    """The raw bytes, BOM included."""


class ContentCache:
    """Least-recently-used bytes by ``(target_key, version)``, bounded by ``max_bytes``.

    ``max_bytes=0`` keeps nothing (every ``get`` misses). One entry holds at
    most :attr:`entry_limit` bytes; larger contents are not kept.
    """

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError(f"cache_bytes must be 0 (off) or more, got {max_bytes!r}")
        self.max_bytes = max_bytes
        """The most bytes kept at once."""
        self.entry_limit = max_bytes // _ENTRY_SHARE if max_bytes else 0
        """The largest content one entry may hold."""
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[FsTargetKey, FsVersion], CachedContent] = OrderedDict()
        self._size = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    @property
    def size(self) -> int:
        """Bytes held now."""
        with self._lock:
            return self._size

    def fits(self, size: int | None) -> bool:
        """Whether a content of ``size`` bytes would be kept (``None``: size unknown yet)."""
        return self.entry_limit > 0 and (size is None or size <= self.entry_limit)

    def get(self, key: FsTargetKey, version: FsVersion) -> CachedContent | None:
        """The bytes of ``key`` at exactly ``version``, or ``None``."""
        if not self.max_bytes:
            return None
        with self._lock:
            found = self._items.get((key, version))
            if found is not None:
                self._items.move_to_end((key, version))
            return found

    def put(self, key: FsTargetKey, version: FsVersion, path: str, data: bytes) -> None:
        """Remember that ``key`` at ``version`` is exactly ``data`` (stored at ``path``)."""
        if not self.fits(len(data)):
            return
        entry = CachedContent(path, data)
        with self._lock:
            old = self._items.pop((key, version), None)
            if old is not None:
                self._size -= len(old.data)
            self._items[(key, version)] = entry
            self._size += len(data)
            while self._size > self.max_bytes:
                _, dropped = self._items.popitem(last=False)
                self._size -= len(dropped.data)

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._items.clear()
            self._size = 0
