"""Value types that cross the seam: targets, versions, write guards, outcomes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NewType

__all__ = [
    "Absent",
    "CreateIfAbsent",
    "FsCapabilities",
    "FsDeleteOutcome",
    "FsDirEntry",
    "FsEditIntent",
    "FsEditOutcome",
    "FsEditRequest",
    "FsInfo",
    "FsMoveOutcome",
    "FsObservation",
    "FsPathInfo",
    "FsTarget",
    "FsTargetKey",
    "FsVersion",
    "FsWalkEntry",
    "FsWriteIntent",
    "FsWriteOutcome",
    "Present",
    "RebaseIfClean",
    "ReplaceIfVersion",
]

FsVersion = NewType("FsVersion", str)
"""Opaque version token of a file's content; compare for equality, never parse."""

FsTargetKey = NewType("FsTargetKey", str)
"""Opaque identity of a target: two spellings of one object share it."""

FileType = Literal["file", "directory", "other"]
PathType = Literal["file", "directory", "symlink", "other"]


@dataclass(frozen=True, slots=True)
class FsTarget:
    """A resolved, contained location in the mounted store."""

    target_key: FsTargetKey
    """Identity used by the policy and locks; equal for every spelling of one object."""
    display_path: str
    """The path as a person would type it for this store (absolute path or full URL)."""


@dataclass(frozen=True, slots=True)
class FsInfo:
    """Metadata of an existing object, following symlinks."""

    version: FsVersion
    """The store's change token for exactly this content."""
    type: FileType
    """``file``, ``directory`` or ``other`` (FIFO, socket, device)."""
    size: int | None
    """Size in bytes, when known."""


@dataclass(frozen=True, slots=True)
class FsPathInfo:
    """Metadata of a path itself: a final symlink is reported, not followed."""

    version: FsVersion
    """Change token of the path's own object (the link itself for a symlink)."""
    type: PathType
    """``file``, ``directory``, ``symlink`` or ``other``."""
    size: int | None
    """Size in bytes, when known."""


@dataclass(frozen=True, slots=True)
class FsDirEntry:
    """One direct child of a directory."""

    name: str
    """The child's name (no separators)."""
    type: PathType
    """Its type, without following a final symlink."""
    target: FsTarget
    """The child as a resolvable target."""
    version: FsVersion | None
    """Its version when the listing carries one cheaply, else ``None``."""
    size: int | None
    """Size in bytes, when known."""


@dataclass(frozen=True, slots=True)
class FsWalkEntry:
    """One entry found by ``walk`` somewhere below the walked directory."""

    path: str
    """Path relative to the walked directory, ``/``-separated (``src/app.py``)."""
    type: PathType
    """Its type, without following a final symlink (symlinked directories are not entered)."""
    target: FsTarget
    """The entry as a resolvable target."""
    version: FsVersion | None
    """Its version when the listing carries one cheaply, else ``None``."""
    size: int | None
    """Size in bytes, when known."""


@dataclass(frozen=True, slots=True)
class CreateIfAbsent:
    """Write guard: create the file only if nothing exists there."""


@dataclass(frozen=True, slots=True)
class ReplaceIfVersion:
    """Write guard: replace the file only while it is still at ``version``."""

    version: FsVersion
    """The version the writer observed."""


FsWriteIntent = CreateIfAbsent | ReplaceIfVersion
"""The guard of a write; ``None`` instead means unconditional (still atomic)."""


@dataclass(frozen=True, slots=True)
class FsWriteOutcome:
    """What a successful ``write_text`` did."""

    operation: Literal["create", "update"]
    """``create`` when nothing existed before, else ``update``."""
    version: FsVersion
    """Version of the content just written."""
    before: str | None
    """Previous text, when there was one and it was text and fetched."""
    after: str
    """The text now stored."""
    before_version: FsVersion | None = None
    """Version of the replaced file (``None`` when it was created)."""


@dataclass(frozen=True, slots=True)
class FsEditRequest:
    """A literal replacement to apply to a file."""

    old_string: str
    """Exact text to find (matched on LF-normalized text)."""
    new_string: str
    """Replacement; its line breaks take the file's dominant ending."""
    replace_all: bool = False
    """Replace every occurrence instead of requiring exactly one."""


@dataclass(frozen=True, slots=True)
class RebaseIfClean:
    """Edit guard: apply at ``version``, or on top of a later change the edit does not touch.

    When the file moved past ``version``, the edit is applied to the current
    text if, judged by lines against the text at ``version`` (the observed
    base) and the current text, every one of its matches lies wholly outside
    the regions the change touched: no line a match spans was changed or
    deleted, no line was inserted inside it, and each edit matches as many
    times in both texts. Otherwise, or when the base is unknown, the edit is
    refused with ``FS_STALE_VERSION`` as under a plain version. The write of
    the result is guarded by the current version.
    """

    version: FsVersion
    """The version the editor observed."""


FsEditIntent = FsVersion | RebaseIfClean
"""What an edit must match: a version, or a version with a clean rebase allowed."""


@dataclass(frozen=True, slots=True)
class FsEditOutcome:
    """What a successful ``edit_text`` did."""

    version: FsVersion
    """Version of the content just written."""
    before: str
    """The text the edit was applied to."""
    after: str
    """The text now stored."""
    replacements: int
    """How many occurrences were replaced."""
    before_version: FsVersion | None = None
    """Version of the text the edit was applied to."""
    rebased: str | None = None
    """The change the edit was applied on top of (:class:`RebaseIfClean`), as a unified diff.

    From the observed version's text to the text the edit was applied to;
    ``None`` when the edit was applied at the version it was guarded by (or
    at a later version holding the very same text).
    """


@dataclass(frozen=True, slots=True)
class FsDeleteOutcome:
    """What a successful ``delete`` did."""

    before_version: FsVersion
    """Version of the file that was deleted."""


@dataclass(frozen=True, slots=True)
class FsMoveOutcome:
    """What a successful ``move`` did (the destination holds the bytes; the source is gone)."""

    version: FsVersion
    """Version of the destination just written."""
    before_version: FsVersion
    """Version of the source that was moved (and deleted)."""
    replaced_version: FsVersion | None = None
    """Version of the file the destination replaced (``None``: it was created, or the
    destination write was unguarded and did not say)."""


@dataclass(frozen=True, slots=True)
class Present:
    """Observation: the file existed at ``version``."""

    version: FsVersion
    """The version observed."""


@dataclass(frozen=True, slots=True)
class Absent:
    """Observation: nothing existed at the path."""


FsObservation = Present | Absent
"""What a session last saw at a target."""


@dataclass(frozen=True, slots=True)
class FsCapabilities:
    """What a mounted store promises."""

    atomic_conditional_write: bool
    """True when guards hold across processes (the store or a lock protocol checks them)."""
    read_only: bool
    """True when every mutation is refused with ``FS_SANDBOX_DENIED``."""
