"""Read-before-write policy: what each session has observed, turned into write guards.

Per session (``actor.agent.session`` of the calling agent) and target, the
policy remembers one of: unseen, :class:`~fsseam.seam.Absent`, or
:class:`~fsseam.seam.Present` with a version. From that it answers:

- ``fs/write-intent``: present ⇒ ``ReplaceIfVersion(v)``; otherwise ``CreateIfAbsent``
  (so a write can create a new file but never overwrite one it has not seen);
- ``fs/edit-intent``: unseen ⇒ ``FS_NOT_OBSERVED``; absent ⇒ ``FS_NOT_FOUND``;
  present ⇒ ``v`` (the store refuses the edit if the file moved on), or
  ``RebaseIfClean(v)`` with ``rebase=True``.

A refused write or edit that shows the model the change since its read
records the current version (the tools emit ``fs/observed``), so the next
call can succeed without a read; the observation never moves past a change
the model was not shown whole.

The observations live in an :class:`~fsseam.observations.ObservationStore`
(memory by default; SQLite or Redis to share sessions between processes and
across restarts). A ``str`` session is keyed by its value, any other object by
identity. The policy itself performs no file I/O, and the store decides
nothing: whatever it holds, the store's conditional write is the arbiter, so
a lost or stale observation only makes a call refused. An execution without a
session (``None``) can read, and create new files, but never overwrite or
edit. ``fs/session-ended`` drops a session's observations.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from fsseam.host import FS_SESSION_ENDED, Context
from fsseam.observations import MemoryObservationStore, ObservationStore
from fsseam.seam import (
    FS_EDIT_INTENT,
    FS_OBSERVED,
    FS_WRITE_INTENT,
    Absent,
    CreateIfAbsent,
    FsEditIntent,
    FsNotFound,
    FsNotObserved,
    FsObservation,
    FsTarget,
    FsWriteIntent,
    Present,
    RebaseIfClean,
    ReplaceIfVersion,
)

__all__ = ["ObservationPolicy"]


def _owner_of(actor: Any) -> object:
    agent = getattr(actor, "agent", None)
    return getattr(agent, "session", None)


class ObservationPolicy:
    """Plugin that guards writes and edits by what the session last read.

    ``store`` holds the observations (default: a fresh
    :class:`~fsseam.observations.MemoryObservationStore`); give several
    processes the same SQLite or Redis store and a ``str`` session is one
    session in all of them.

    ``rebase=True`` lets a stale ``edit`` or ``multi_edit`` land on top of the
    change made since the session's read when none of its matches touches a
    line that change touched (:class:`~fsseam.seam.RebaseIfClean`); the
    result says so and shows the change. ``write`` is never rebased, and an
    edit that overlaps the change is refused as before. Off by default: an
    agent that edits by exact snippets rarely needs to see unrelated lines
    first, but a change elsewhere can still matter to it (a renamed
    function, a moved call). Turn it on when several agents or people edit
    different parts of the same files at once (a shared config, generated
    sections, a long document) and refusing every such edit costs more turns
    than it saves; keep it off when an edit must be made against exactly the
    text the agent last read. It needs a backend that remembers what was
    read (``FsspecFileSystem``'s content cache); without one, stale edits
    are refused as before.
    """

    def __init__(self, store: ObservationStore | None = None, *, rebase: bool = False) -> None:
        self.store: ObservationStore = store if store is not None else MemoryObservationStore()
        """Where observations are kept."""
        self.rebase = rebase
        """Whether a stale edit may be applied on top of a change it does not touch."""

    def setup(self, ctx: Context) -> None:
        """Answer the write/edit intents and record observations on ``ctx``."""
        ctx.on(FS_WRITE_INTENT, self.write_intent)
        ctx.on(FS_EDIT_INTENT, self.edit_intent)
        ctx.on(FS_OBSERVED, self.observed)
        ctx.on(FS_SESSION_ENDED, self.forget)

    async def observation(self, session: object, target: FsTarget) -> FsObservation | None:
        """What ``session`` last saw at ``target`` (``None``: unseen)."""
        if session is None:
            return None
        return await self.store.get(session, target.target_key)

    def forget(self, session: object) -> Awaitable[None]:
        """Drop everything ``session`` observed (the ``fs/session-ended`` listener)."""
        return self.store.forget(session)

    # -- listeners -----------------------------------------------------------

    def observed(
        self, actor: Any, target: FsTarget, observation: FsObservation
    ) -> Awaitable[None] | None:
        """Record that the actor's session saw ``observation`` at ``target``.

        Returns the store's pending put; ``ToolRegistry.execute`` awaits it
        before the call returns, so the next call of the session (in any
        process sharing the store) sees it.
        """
        owner = _owner_of(actor)
        if owner is None:
            return None
        return self.store.put(owner, target.target_key, observation)

    async def write_intent(self, actor: Any, target: FsTarget) -> FsWriteIntent:
        """The guard for a write: replace what was seen, or create only."""
        seen = await self.observation(_owner_of(actor), target)
        if isinstance(seen, Present):
            return ReplaceIfVersion(seen.version)
        return CreateIfAbsent()

    async def edit_intent(self, actor: Any, target: FsTarget) -> FsEditIntent:
        """What an edit must match; refuses edits of unseen or absent files.

        The observed version, or ``RebaseIfClean`` of it when ``rebase`` is on.
        """
        seen = await self.observation(_owner_of(actor), target)
        if seen is None:
            raise FsNotObserved(f'edit requires reading "{target.display_path}" first')
        if isinstance(seen, Absent):
            raise FsNotFound(
                f'"{target.display_path}" did not exist when it was last read; create it with write'
            )
        return RebaseIfClean(seen.version) if self.rebase else seen.version
