"""Read-before-write policy: what each session has observed, turned into write guards.

Per owner (the session object of the calling agent) and target, the policy
remembers one of: unseen, :class:`~fsseam.seam.Absent`, or
:class:`~fsseam.seam.Present` with a version. From that it answers:

- ``fs/write-intent``: present ⇒ ``ReplaceIfVersion(v)``; otherwise ``CreateIfAbsent``
  (so a write can create a new file but never overwrite one it has not seen);
- ``fs/edit-intent``: unseen ⇒ ``FS_NOT_OBSERVED``; absent ⇒ ``FS_NOT_FOUND``;
  present ⇒ ``v`` (the store refuses the edit if the file moved on).

It performs no I/O. Owners are held weakly when they allow it, by identity
otherwise; an execution without a session (``None``) can read but never
overwrite or edit.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from fsseam.host import Context
from fsseam.seam import (
    FS_EDIT_INTENT,
    FS_OBSERVED,
    FS_WRITE_INTENT,
    Absent,
    CreateIfAbsent,
    FsNotFound,
    FsNotObserved,
    FsObservation,
    FsTarget,
    FsTargetKey,
    FsVersion,
    FsWriteIntent,
    Present,
    ReplaceIfVersion,
)

__all__ = ["ObservationPolicy"]

_Seen = dict[FsTargetKey, FsObservation]


def _owner_of(actor: Any) -> object:
    agent = getattr(actor, "agent", None)
    return getattr(agent, "session", None)


class ObservationPolicy:
    """Plugin that guards writes and edits by what the session last read."""

    def __init__(self) -> None:
        # Reentrant: a weakref callback may fire (GC) while this thread holds it.
        self._lock = threading.RLock()
        # id(owner) -> (weakref or the owner itself, observations). Keyed by
        # identity so sessions with value equality stay apart.
        self._owners: dict[int, tuple[object, _Seen]] = {}

    def setup(self, ctx: Context) -> None:
        """Answer the write/edit intents and record observations on ``ctx``."""
        ctx.on(FS_WRITE_INTENT, self.write_intent)
        ctx.on(FS_EDIT_INTENT, self.edit_intent)
        ctx.on(FS_OBSERVED, self.observed)

    # -- state -------------------------------------------------------------

    def _seen(self, owner: object, create: bool) -> _Seen | None:
        key = id(owner)
        with self._lock:
            entry = self._owners.get(key)
            if entry is not None:
                held = entry[0]
                alive = held() if isinstance(held, weakref.ref) else held
                if alive is owner:
                    return entry[1]
            if not create:
                return None
            seen: _Seen = {}

            def gone(ref: weakref.ref[Any], key: int = key) -> None:
                self._forget(key, ref)

            holder: object
            try:
                holder = weakref.ref(owner, gone)
            except TypeError:
                holder = owner  # ints, strings, tuples: held by identity, strongly
            self._owners[key] = (holder, seen)
            return seen

    def _forget(self, key: int, ref: weakref.ref[Any]) -> None:
        with self._lock:
            entry = self._owners.get(key)
            if entry is not None and entry[0] is ref:
                del self._owners[key]

    def observation(self, owner: object, target: FsTarget) -> FsObservation | None:
        """What ``owner`` last saw at ``target`` (``None``: unseen)."""
        if owner is None:
            return None
        seen = self._seen(owner, create=False)
        return None if seen is None else seen.get(target.target_key)

    def forget(self, owner: object) -> None:
        """Drop everything ``owner`` has observed (e.g. when a session ends)."""
        with self._lock:
            self._owners.pop(id(owner), None)

    # -- listeners -----------------------------------------------------------

    def observed(self, actor: Any, target: FsTarget, observation: FsObservation) -> None:
        """Record that the actor's session saw ``observation`` at ``target``."""
        owner = _owner_of(actor)
        if owner is None:
            return
        seen = self._seen(owner, create=True)
        assert seen is not None
        with self._lock:
            seen[target.target_key] = observation

    def write_intent(self, actor: Any, target: FsTarget) -> FsWriteIntent:
        """The guard for a write: replace what was seen, or create only."""
        seen = self.observation(_owner_of(actor), target)
        if isinstance(seen, Present):
            return ReplaceIfVersion(seen.version)
        return CreateIfAbsent()

    def edit_intent(self, actor: Any, target: FsTarget) -> FsVersion:
        """The version an edit must match; refuses edits of unseen or absent files."""
        seen = self.observation(_owner_of(actor), target)
        if seen is None:
            raise FsNotObserved(f'edit requires reading "{target.display_path}" first')
        if isinstance(seen, Absent):
            raise FsNotFound(
                f'"{target.display_path}" did not exist when it was last read; create it with write'
            )
        return seen.version
