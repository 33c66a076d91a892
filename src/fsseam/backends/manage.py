"""Delete and move for :class:`~fsseam.backends.fsspec.FsspecFileSystem`.

- **delete** is the dialect's guarded delete: one conditional request on an
  object store, the directory lock and a re-check on local disk. An
  unguarded delete reads the version first and deletes guarded by it, so it
  never removes a change that lands in between (it retries instead), and a
  directory is refused rather than emptied.
- **move** copies bytes, never text: the source is read once (its version is
  that of exactly those bytes), the destination written under its guard, and
  only then the source deleted, guarded by the version read. A store that
  cannot guard a delete is refused before anything is written. A failure of
  the delete leaves both files and says so
  (:class:`~fsseam.seam.FsMoveIncomplete`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsseam.seam import (
    FsDeleteOutcome,
    FsError,
    FsMoveOutcome,
    FsNotFound,
    FsNotRegularFile,
    FsStaleVersion,
    FsTarget,
    FsTooLarge,
    FsVersion,
    FsWriteIntent,
    ReplaceIfVersion,
)
from fsseam.seam.filesystem import move_incomplete, same_file

if TYPE_CHECKING:
    from fsseam.backends.fsspec import FsspecFileSystem

__all__ = ["delete", "move"]

_RETRIES = 16


async def delete(
    fs: FsspecFileSystem, target: FsTarget, expected: FsVersion | None
) -> FsDeleteOutcome:
    """:meth:`FileSystem.delete <fsseam.seam.FileSystem.delete>` on ``fs``."""
    fs._check_writable(target)
    path = fs._paths.file_store_of(target)
    shown = target.display_path
    if expected is not None:
        await _guarded(fs, path, expected)
        return FsDeleteOutcome(expected)
    looked_near = False
    for _ in range(_RETRIES):
        info = await fs._dialect.stat(path)
        if info is None and not looked_near:
            looked_near = True
            near = await fs._near(path)
            if near is not None:
                path = near
                continue
        if info is None:
            raise FsNotFound(f'"{shown}" does not exist; check the path')
        if info.type != "file":
            raise FsNotRegularFile(f'"{shown}" is not a file; delete removes files only')
        try:
            await fs._dialect.delete(path, info.version)
        except FsStaleVersion:
            continue  # changed between the look and the delete: look again
        return FsDeleteOutcome(info.version)
    raise FsStaleVersion(f'"{shown}" kept changing during {_RETRIES} delete attempts; try again')


async def _guarded(fs: FsspecFileSystem, path: str, expected: FsVersion) -> str:
    """Delete ``path`` at ``expected``, or its stored spelling (NFD) when only that exists."""
    try:
        await fs._dialect.delete(path, expected)
        return path
    except FsStaleVersion:
        if fs._paths.relative(path).isascii():
            raise
        near = await fs._near(path)
        if near is None:
            raise
    await fs._dialect.delete(near, expected)
    return near


async def move(
    fs: FsspecFileSystem,
    source: FsTarget,
    destination: FsTarget,
    expected: FsVersion | None,
    destination_intent: FsWriteIntent | None,
) -> FsMoveOutcome:
    """:meth:`FileSystem.move <fsseam.seam.FileSystem.move>` on ``fs``, byte for byte."""
    fs._check_writable(source)
    fs._check_writable(destination)
    same_file(source, destination)
    src = fs._paths.file_store_of(source)
    dst = fs._paths.file_store_of(destination)
    await fs._dialect.check_guarded_delete(src)  # refuse before anything is written
    limit = fs.max_edit_bytes

    async def read(path: str) -> tuple[str, bytes, FsVersion]:
        data, info = await fs._dialect.read_bytes(path, limit)
        return path, data, info.version

    try:
        src, data, version = await fs._on_file(source, read)
    except FsNotFound:
        if expected is None:
            raise
        raise FsStaleVersion(f'"{source.display_path}" was deleted since it was read') from None
    except FsTooLarge:
        raise FsTooLarge(
            f'"{source.display_path}" is over the {limit}-byte limit of a move, which copies '
            "the file through memory (max_edit_bytes); raise max_edit_bytes to move it"
        ) from None
    if expected is not None and version != expected:
        raise FsStaleVersion(f'"{source.display_path}" was modified since it was read')
    written = await _write(fs, destination, dst, data, destination_intent)
    replaced = (
        destination_intent.version if isinstance(destination_intent, ReplaceIfVersion) else None
    )
    try:
        await fs._dialect.delete(src, version)
    except FsError as exc:
        raise move_incomplete(source, destination, exc, written, replaced) from exc
    return FsMoveOutcome(written, version, replaced)


async def _write(
    fs: FsspecFileSystem, target: FsTarget, path: str, data: bytes, guard: FsWriteIntent | None
) -> FsVersion:
    """The destination's write, worded as ``write_text`` words its failures.

    Through the file system's put, so the bytes go to the content cache under
    their new version and an edit of the destination right after the move is
    one request, as after a ``write``.

    On an object store a key can be created beside a prefix of the same name,
    so a destination that is a directory is refused first (one listing).
    """
    if fs._paths.implicit_directories and await fs._dialect.is_directory(path):
        raise await fs._write_onto(path, target, FsNotRegularFile(f'"{path}" is a directory'))
    return await fs._put_named(target, path, data, guard, doing="move")
