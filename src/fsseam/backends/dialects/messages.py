"""The failures every dialect words alike: swapping the store changes only the path.

Each helper returns the :class:`~fsseam.seam.FsError` (subclass) to raise,
naming the file, the cause and a fix that works.
"""

from __future__ import annotations

from fsseam.seam import (
    FsError,
    FsErrorCode,
    FsNotFound,
    FsNotObserved,
    FsNotRegularFile,
    FsSandboxDenied,
    FsStaleVersion,
    FsTooLarge,
)

__all__ = [
    "already_exists",
    "cannot_guard_delete",
    "changed_while_reading",
    "check_size",
    "denied",
    "describe",
    "failed",
    "io_error",
    "missing_bucket",
    "not_a_directory",
    "not_a_file",
    "not_found",
    "stale",
    "unreachable",
]


def not_found(url: str) -> FsNotFound:
    """``FS_NOT_FOUND`` for a missing file."""
    return FsNotFound(f'"{url}" does not exist; check the path (write creates new files)')


def not_a_file(url: str) -> FsNotRegularFile:
    """``FS_NOT_REGULAR_FILE`` for a directory (or prefix) where a file was expected."""
    return FsNotRegularFile(f'"{url}" is a directory, not a file')


def not_a_directory(url: str) -> FsError:
    """``FS_NOT_DIRECTORY`` for a file where a directory was expected."""
    return FsError(f'"{url}" is a file, not a directory', FsErrorCode.FS_NOT_DIRECTORY)


def missing_bucket(url: str, kind: str = "bucket") -> FsNotFound:
    """``FS_NOT_FOUND`` for a bucket (container) that does not exist."""
    name = url.split("://", 1)[-1].split("/", 1)[0]
    return FsNotFound(f'"{url}": the {kind} "{name}" does not exist; check the URL')


def denied(url: str, store: str, cause: str, check: str) -> FsError:
    """``FS_PERMISSION_DENIED``: the store refused the credentials or the request."""
    return FsError(
        f'"{url}": {store} denied access ({cause}); check {check}',
        FsErrorCode.FS_PERMISSION_DENIED,
    )


def unreachable(url: str, store: str, cause: str, check: str) -> FsError:
    """``FS_IO_ERROR``: no answer from the store (connection refused, reset, timeout)."""
    return FsError(
        f'"{url}": could not reach {store} ({cause}); check {check}, then retry',
        FsErrorCode.FS_IO_ERROR,
    )


def failed(url: str, store: str, cause: str) -> FsError:
    """``FS_IO_ERROR``: the store answered with an error no other code describes."""
    return FsError(
        f'"{url}": {store} failed ({cause}); retry, or check the store with fsseam doctor',
        FsErrorCode.FS_IO_ERROR,
    )


def io_error(url: str, why: str) -> FsError:
    """``FS_IO_ERROR`` for ``url``; ``why`` says what happened and what to do."""
    return FsError(f'"{url}" {why}', FsErrorCode.FS_IO_ERROR)


def describe(exc: BaseException) -> str:
    """``Type: message`` of an exception, for the cause in a message."""
    return f"{type(exc).__name__}: {exc}"


def already_exists(url: str) -> FsNotObserved:
    """``FS_NOT_OBSERVED`` for a create-only write that met an existing file."""
    return FsNotObserved(f'"{url}" already exists and was not read before this write')


def cannot_guard_delete(url: str, why: str) -> FsSandboxDenied:
    """``FS_SANDBOX_DENIED`` for a delete (or move) on a store that cannot guard it.

    fsseam never falls back to an unguarded delete: it could remove a change
    nobody has seen.
    """
    return FsSandboxDenied(
        f'"{url}" was not deleted: {why}, so a delete could remove a change nobody has '
        "seen; fsseam refuses delete and move on this store (delete it with the store's own "
        "tools after checking it, or use a server that enforces conditional deletes)"
    )


def stale(url: str, *, deleted: bool = False) -> FsStaleVersion:
    """``FS_STALE_VERSION`` for a guard that no longer holds."""
    return FsStaleVersion(f'"{url}" was {"deleted" if deleted else "modified"} since it was read')


def changed_while_reading(url: str) -> FsError:
    """``FS_IO_ERROR`` for a version replaced or deleted in the middle of a streamed read.

    An I/O error, not a conflict: the reader holds no guard.
    """
    return FsError(
        f'"{url}" changed while it was being read; read it again', FsErrorCode.FS_IO_ERROR
    )


def check_size(name: str, size: int | None, limit: int | None) -> None:
    """Raise ``FS_TOO_LARGE`` when ``size`` is over ``limit``."""
    if limit is not None and size is not None and size > limit:
        raise FsTooLarge(
            f'"{name}" is {size} bytes, over the {limit}-byte edit limit (max_edit_bytes); '
            "rewrite it with write, or raise max_edit_bytes"
        )
