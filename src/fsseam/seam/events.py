"""Names of the events the tools dispatch and the policy answers."""

from __future__ import annotations

from typing import Final

__all__ = ["FS_COMMITTED", "FS_EDIT_INTENT", "FS_OBSERVED", "FS_WRITE_INTENT"]

FS_WRITE_INTENT: Final = "fs/write-intent"
"""waterfall(actor, target) -> FsWriteIntent | None: the guard for a write."""

FS_EDIT_INTENT: Final = "fs/edit-intent"
"""waterfall(actor, target) -> FsVersion | RebaseIfClean | None: what an edit must match.

A plain version (what listeners have always returned) refuses any later
change; :class:`~fsseam.seam.RebaseIfClean` lets the edit land on top of a
change it does not touch. ``None``: unguarded.
"""

FS_OBSERVED: Final = "fs/observed"
"""emit(actor, target, FsObservation): a tool saw the file (or its absence)."""

FS_COMMITTED: Final = "fs/committed"
"""emit(actor, target, operation, before_version, after_version): a tool changed a file.

Either version may be ``None``: nothing was there before a create, nothing is
left after a delete. ``operation`` is ``create``, ``update``, ``edit``,
``delete`` or ``move``. A move emits two events, source first (its
``before_version`` is what was moved, ``after_version`` ``None``), then the
destination (``before_version``: the file it replaced, ``None`` when created).
Subscribe an audit logger (``fsseam.audit.JsonlAuditLog``) to record every
mutation.
"""
