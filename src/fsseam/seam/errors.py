"""Errors raised through the seam.

Every failure a tool can report is an :class:`FsError` with a stable
:class:`FsErrorCode`. Subclasses also inherit the matching built-in exception,
so callers can catch them the Python way::

    FsError (Exception)                     .code: FsErrorCode
     ├── FsNotFound (FileNotFoundError)      FS_NOT_FOUND
     ├── FsNotDirectory (NotADirectoryError) FS_NOT_DIRECTORY
     ├── FsNotText (ValueError)              FS_NOT_TEXT
     ├── FsNotRegularFile (IsADirectoryError) FS_NOT_REGULAR_FILE
     ├── FsTooLarge (ValueError)             FS_TOO_LARGE
     ├── FsPermissionDenied (PermissionError) FS_PERMISSION_DENIED
     ├── FsSandboxDenied (PermissionError)   FS_SANDBOX_DENIED
     ├── FsIOError (OSError)                 FS_IO_ERROR
     ├── FsStaleVersion                      FS_STALE_VERSION
     ├── FsNotObserved                       FS_NOT_OBSERVED
     ├── FsAmbiguousEdit (ValueError)        FS_AMBIGUOUS_EDIT
     ├── FsEditNotFound (ValueError)         FS_EDIT_NOT_FOUND
     ├── FsAborted                           FS_ABORTED
     └── FsMoveIncomplete                    the code of what stopped the move

``FsError(message, code)`` builds the matching subclass, so
``raise FsError("gone", FsErrorCode.FS_NOT_FOUND)`` is caught by
``except FileNotFoundError`` too.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from fsseam.seam.types import FsVersion

__all__ = [
    "FsAborted",
    "FsAmbiguousEdit",
    "FsEditNotFound",
    "FsError",
    "FsErrorCode",
    "FsIOError",
    "FsMoveIncomplete",
    "FsNotDirectory",
    "FsNotFound",
    "FsNotObserved",
    "FsNotRegularFile",
    "FsNotText",
    "FsPermissionDenied",
    "FsSandboxDenied",
    "FsStaleVersion",
    "FsTooLarge",
]


class FsErrorCode(StrEnum):
    """Stable machine-readable error codes; each value equals its name."""

    FS_NOT_FOUND = "FS_NOT_FOUND"
    FS_NOT_DIRECTORY = "FS_NOT_DIRECTORY"
    FS_NOT_TEXT = "FS_NOT_TEXT"
    FS_NOT_REGULAR_FILE = "FS_NOT_REGULAR_FILE"
    FS_TOO_LARGE = "FS_TOO_LARGE"
    FS_PERMISSION_DENIED = "FS_PERMISSION_DENIED"
    FS_SANDBOX_DENIED = "FS_SANDBOX_DENIED"
    FS_IO_ERROR = "FS_IO_ERROR"
    FS_STALE_VERSION = "FS_STALE_VERSION"
    FS_NOT_OBSERVED = "FS_NOT_OBSERVED"
    FS_AMBIGUOUS_EDIT = "FS_AMBIGUOUS_EDIT"
    FS_EDIT_NOT_FOUND = "FS_EDIT_NOT_FOUND"
    FS_ABORTED = "FS_ABORTED"


class FsError(Exception):
    """A file-system failure with a stable :attr:`code`.

    Constructing ``FsError(message, code)`` returns the subclass registered for
    ``code`` so that built-in ``except`` clauses keep working.
    """

    _by_code: ClassVar[dict[FsErrorCode, type[FsError]]] = {}
    default_code: ClassVar[FsErrorCode | None] = None

    code: FsErrorCode
    message: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.default_code is not None:
            FsError._by_code.setdefault(cls.default_code, cls)

    def __new__(
        cls, message: str = "", code: FsErrorCode | str | None = None, **details: Any
    ) -> FsError:
        resolved = FsErrorCode(code) if code is not None else cls.default_code
        target: type[FsError] = cls
        if cls is FsError and resolved is not None:
            target = FsError._by_code.get(resolved, FsError)
        return super(FsError, target).__new__(target)

    def __init__(self, message: str = "", code: FsErrorCode | str | None = None) -> None:
        resolved = FsErrorCode(code) if code is not None else self.default_code
        if resolved is None:
            raise TypeError("FsError needs a code")
        # Exception.__init__ only: OSError subclasses would reinterpret the args.
        Exception.__init__(self, message)
        self.message = message
        self.code = resolved

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, {self.code.value!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FsError, (self.message, self.code.value))


class FsNotFound(FsError, FileNotFoundError):
    """The file (or an offset in it) does not exist."""

    default_code = FsErrorCode.FS_NOT_FOUND


class FsNotDirectory(FsError, NotADirectoryError):
    """A path component that must be a directory is not one."""

    default_code = FsErrorCode.FS_NOT_DIRECTORY


class FsNotText(FsError, ValueError):
    """The content is not UTF-8 text (NUL byte or invalid encoding)."""

    default_code = FsErrorCode.FS_NOT_TEXT


class FsNotRegularFile(FsError, IsADirectoryError):
    """The target is a directory or another non-regular object."""

    default_code = FsErrorCode.FS_NOT_REGULAR_FILE


class FsTooLarge(FsError, ValueError):
    """The file or the edit result is larger than the configured limit."""

    default_code = FsErrorCode.FS_TOO_LARGE


class FsPermissionDenied(FsError, PermissionError):
    """The store refused access (credentials, ACLs, file modes)."""

    default_code = FsErrorCode.FS_PERMISSION_DENIED


class FsSandboxDenied(FsError, PermissionError):
    """Outside the workspace root, refused path syntax, or a mutation in read-only mode."""

    default_code = FsErrorCode.FS_SANDBOX_DENIED


class FsIOError(FsError, OSError):
    """Any other store or operating-system failure."""

    default_code = FsErrorCode.FS_IO_ERROR


class FsStaleVersion(FsError):
    """The file changed since it was observed (or vanished).

    A guarded write or edit that the file moved past says what it moved to,
    when it knows:
    """

    default_code = FsErrorCode.FS_STALE_VERSION

    change: str | None
    """Unified diff from the observed version's text to the current one.

    ``None`` when the observed content is unknown (not cached, binary, too
    large) or the file was deleted. Cut at
    :data:`fsseam.changes.DIFF_MAX_BYTES`, with a note saying so.
    """
    current_version: FsVersion | None
    """The version the file is at now (``None`` when deleted or unknown).

    When ``change`` is shown to the caller, ``current_version`` is what it
    has now seen: a retry guarded by it succeeds unless the file moves again.
    """

    def __init__(
        self,
        message: str = "",
        code: FsErrorCode | str | None = None,
        *,
        change: str | None = None,
        current_version: FsVersion | None = None,
    ) -> None:
        super().__init__(message, code)
        self.change = change
        self.current_version = current_version

    def __reduce__(self) -> tuple[Any, ...]:
        state = {"change": self.change, "current_version": self.current_version}
        return (FsError, (self.message, self.code.value), state)


class FsNotObserved(FsError):
    """A write or edit that needs an earlier read of the current file."""

    default_code = FsErrorCode.FS_NOT_OBSERVED


class FsAmbiguousEdit(FsError, ValueError):
    """``old_string`` matches several times and ``replace_all`` is off."""

    default_code = FsErrorCode.FS_AMBIGUOUS_EDIT


class FsEditNotFound(FsError, ValueError):
    """``old_string`` is empty or does not occur in the file."""

    default_code = FsErrorCode.FS_EDIT_NOT_FOUND


class FsAborted(FsError):
    """The operation was cancelled before it committed."""

    default_code = FsErrorCode.FS_ABORTED


class FsMoveIncomplete(FsError):
    """A move wrote its destination but did not delete its source: the content is in both.

    ``code`` is the failure that stopped it (``FS_STALE_VERSION``: the source
    changed or vanished since it was read; ``FS_IO_ERROR``...); the message
    says what exists now. Nothing is lost: a move never deletes its source
    before its destination is written.
    """

    version: FsVersion | None
    """Version of the destination that was written."""
    replaced_version: FsVersion | None
    """Version of the file the destination replaced (``None``: it was created, or unknown)."""

    def __new__(
        cls, message: str = "", code: FsErrorCode | str | None = None, **_: Any
    ) -> FsMoveIncomplete:
        made = super().__new__(cls, message, code)
        assert isinstance(made, FsMoveIncomplete)
        return made

    def __init__(
        self,
        message: str = "",
        code: FsErrorCode | str | None = None,
        *,
        version: FsVersion | None = None,
        replaced_version: FsVersion | None = None,
    ) -> None:
        super().__init__(message, code)
        self.version = version
        self.replaced_version = replaced_version

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _move_incomplete,
            (self.message, self.code.value, self.version, self.replaced_version),
        )


def _move_incomplete(
    message: str, code: str, version: FsVersion | None, replaced: FsVersion | None
) -> FsMoveIncomplete:
    return FsMoveIncomplete(message, code, version=version, replaced_version=replaced)
