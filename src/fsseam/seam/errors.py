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

import inspect
from enum import StrEnum
from typing import Any, ClassVar, Self, cast

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

    A subclass names its code in its header (``class FsX(FsError, code=...)``)
    and declares any details it carries as annotated class attributes with a
    default; the constructor takes them as keywords
    (``FsStaleVersion(message, change=..., current_version=...)``) and refuses
    any other, and pickling keeps them.
    """

    _by_code: ClassVar[dict[FsErrorCode, type[FsError]]] = {}
    _details: ClassVar[frozenset[str]] = frozenset()
    default_code: ClassVar[FsErrorCode | None] = None

    code: FsErrorCode
    message: str

    def __init_subclass__(cls, code: FsErrorCode | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.default_code = code
        if cls.default_code is not None:
            FsError._by_code.setdefault(cls.default_code, cls)
        cls._details |= {name for name in inspect.get_annotations(cls) if not name.startswith("_")}

    def __new__(
        cls, message: str = "", code: FsErrorCode | str | None = None, **details: Any
    ) -> Self:
        resolved = FsErrorCode(code) if code is not None else cls.default_code
        target: type[Self] = cls
        if cls is FsError and resolved is not None:
            target = cast("type[Self]", FsError._by_code.get(resolved, FsError))
        return super(FsError, target).__new__(target)

    def __init__(
        self, message: str = "", code: FsErrorCode | str | None = None, **details: Any
    ) -> None:
        resolved = FsErrorCode(code) if code is not None else self.default_code
        if resolved is None:
            raise TypeError("FsError needs a code")
        unknown = sorted(set(details) - self._details)
        if unknown:
            allowed = ", ".join(sorted(self._details)) or "none"
            name = type(self).__name__
            raise TypeError(f"{name} got unexpected keyword details {unknown} (allowed: {allowed})")
        # Exception.__init__ only: OSError subclasses would reinterpret the args.
        Exception.__init__(self, message)
        self.message = message
        self.code = resolved
        for name, value in details.items():
            setattr(self, name, value)

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, {self.code.value!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # The instance dict carries a subclass's keyword details (and any notes),
        # so no subclass needs its own pickling.
        return (type(self), (self.message, self.code.value), self.__dict__)


class FsNotFound(FsError, FileNotFoundError, code=FsErrorCode.FS_NOT_FOUND):
    """The file (or an offset in it) does not exist."""


class FsNotDirectory(FsError, NotADirectoryError, code=FsErrorCode.FS_NOT_DIRECTORY):
    """A path component that must be a directory is not one."""


class FsNotText(FsError, ValueError, code=FsErrorCode.FS_NOT_TEXT):
    """The content is not UTF-8 text (NUL byte or invalid encoding)."""


class FsNotRegularFile(FsError, IsADirectoryError, code=FsErrorCode.FS_NOT_REGULAR_FILE):
    """The target is a directory or another non-regular object."""


class FsTooLarge(FsError, ValueError, code=FsErrorCode.FS_TOO_LARGE):
    """The file or the edit result is larger than the configured limit."""


class FsPermissionDenied(FsError, PermissionError, code=FsErrorCode.FS_PERMISSION_DENIED):
    """The store refused access (credentials, ACLs, file modes)."""


class FsSandboxDenied(FsError, PermissionError, code=FsErrorCode.FS_SANDBOX_DENIED):
    """Outside the workspace root, refused path syntax, or a mutation in read-only mode."""


class FsIOError(FsError, OSError, code=FsErrorCode.FS_IO_ERROR):
    """Any other store or operating-system failure."""


class FsStaleVersion(FsError, code=FsErrorCode.FS_STALE_VERSION):
    """The file changed since it was observed (or vanished).

    A guarded write or edit that the file moved past says what it moved to,
    when it knows:
    """

    change: str | None = None
    """Unified diff from the observed version's text to the current one.

    ``None`` when the observed content is unknown (not cached, binary, too
    large) or the file was deleted. Cut at
    :data:`fsseam.changes.DIFF_MAX_BYTES`, with a note saying so.
    """
    current_version: FsVersion | None = None
    """The version the file is at now (``None`` when deleted or unknown).

    When ``change`` is shown to the caller, ``current_version`` is what it
    has now seen: a retry guarded by it succeeds unless the file moves again.
    """


class FsNotObserved(FsError, code=FsErrorCode.FS_NOT_OBSERVED):
    """A write or edit that needs an earlier read of the current file."""


class FsAmbiguousEdit(FsError, ValueError, code=FsErrorCode.FS_AMBIGUOUS_EDIT):
    """``old_string`` matches several times and ``replace_all`` is off."""


class FsEditNotFound(FsError, ValueError, code=FsErrorCode.FS_EDIT_NOT_FOUND):
    """``old_string`` is empty or does not occur in the file."""


class FsAborted(FsError, code=FsErrorCode.FS_ABORTED):
    """The operation was cancelled before it committed."""


class FsMoveIncomplete(FsError):
    """A move wrote its destination but did not delete its source: the content is in both.

    ``code`` is the failure that stopped it (``FS_STALE_VERSION``: the source
    changed or vanished since it was read; ``FS_IO_ERROR``...); the message
    says what exists now. Nothing is lost: a move never deletes its source
    before its destination is written.
    """

    version: FsVersion | None = None
    """Version of the destination that was written."""
    replaced_version: FsVersion | None = None
    """Version of the file the destination replaced (``None``: it was created, or unknown)."""
