"""The text stream ``FsspecFileSystem.open_text`` returns: decoded chunks, cached bytes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import aclosing

from fsseam import text as textmod
from fsseam.backends.dialects.base import RawReader
from fsseam.seam import FsTextStream

__all__ = ["TextStream"]


class TextStream(FsTextStream):
    """A file read as text, chunk by chunk; the bytes of one read to its end go to ``keep``.

    ``keep`` gets them only while they stay within ``limit`` bytes (the cache's bound).
    """

    def __init__(
        self, reader: RawReader, name: str, keep: Callable[[bytes], None] | None, limit: int
    ) -> None:
        self._reader = reader
        self._name = name
        self._keep = keep
        self._limit = limit
        self.info = reader.info

    async def __aiter__(self) -> AsyncIterator[str]:
        decoder = textmod.StreamDecoder(self._name)
        # The raw bytes of a stream read to its end (and decoded) go to the
        # content cache: exactly the bytes of reader.info.version.
        kept: list[bytes] | None = [] if self._keep is not None else None
        size = 0
        # aclosing: a decode error must close the reader's generator now, not
        # leave it pending until garbage collection.
        async with aclosing(self._reader.chunks()) as chunks:
            async for chunk in chunks:
                if kept is not None:
                    size += len(chunk)
                    kept = kept if size <= self._limit else None
                    if kept is not None:
                        kept.append(chunk)
                text = decoder.feed(chunk)
                if text:
                    yield text
        tail = decoder.feed(b"", final=True)
        if kept is not None and self._keep is not None:
            self._keep(b"".join(kept))
        if tail:
            yield tail
