"""Helpers the discovery tools share: root-relative paths, closing walks, plurals."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fsseam.seam import FileSystem, FsTarget, FsWalkEntry

__all__ = ["RelativePaths", "aclose", "plural", "walking"]


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 file`` / ``2 files`` (``many`` for irregular plurals)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


class RelativePaths:
    """Shows display paths relative to the workspace root."""

    def __init__(self, root: FsTarget) -> None:
        self.root = root.display_path.rstrip("/")
        self._prefix = self.root + "/"

    @classmethod
    async def of(cls, fs: FileSystem) -> RelativePaths:
        """The relative paths of ``fs``'s root."""
        return cls(await fs.resolve("."))

    def relative(self, target: FsTarget) -> str:
        """``target`` as a path from the root (``.`` for the root itself)."""
        display = target.display_path
        if display.rstrip("/") == self.root:
            return "."
        return display[len(self._prefix) :] if display.startswith(self._prefix) else display


async def aclose(iterator: AsyncIterator[Any]) -> None:
    """Close an async generator now; left to the garbage collector, its close
    would be scheduled on a loop that may never run again."""
    close = getattr(iterator, "aclose", None)
    if close is not None:
        await close()


@asynccontextmanager
async def walking(
    fs: FileSystem, target: FsTarget, max_depth: int | None = None
) -> AsyncIterator[AsyncIterator[FsWalkEntry]]:
    """``fs.walk`` closed on exit, so a listing stopped early releases its store pages now."""
    listing = fs.walk(target, max_depth=max_depth)
    try:
        yield listing
    finally:
        await aclose(listing)
