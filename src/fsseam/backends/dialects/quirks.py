"""Quirks: the ways a store departs from the protocol it claims, remembered per store.

A dialect detects a quirk once per store (an endpoint) and remembers it,
process-wide, in :data:`QUIRKS`, with the probes it has already run there;
``fsseam doctor`` names each quirk and what fsseam does about it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

__all__ = ["DELETE_PRECONDITION_IGNORED", "QUIRKS", "Quirk"]


@dataclass(frozen=True, slots=True)
class Quirk:
    """A way a store departs from the protocol it claims, detected and worked around.

    Shown by ``fsseam doctor``; the dialect remembers each quirk per store
    (endpoint) for the life of the process.
    """

    name: str
    """A stable identifier, e.g. ``if-match-needs-unquoted-etag``."""
    description: str
    """What the store does, and what fsseam does about it."""


DELETE_PRECONDITION_IGNORED = Quirk(
    "delete-precondition-ignored",
    "a conditional delete (If-Match / ifGenerationMatch) naming an older version deleted "
    "the object anyway; fsseam refuses delete and move on this store rather than risk "
    "deleting a change nobody has seen",
)
"""A store that deletes whatever is stored, whatever the delete's precondition says
(Ceph RGW before 20, fake-gcs-server, MinIO)."""


class _QuirkBook:
    """Quirks seen per store, process-wide: a second mount of a store need not rediscover."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[str, dict[str, Quirk]] = {}
        self._probed: dict[str, set[str]] = {}

    def note(self, store: str, quirk: Quirk) -> bool:
        """Remember ``quirk`` for ``store``; True when it is new."""
        with self._lock:
            known = self._seen.setdefault(store, {})
            if quirk.name in known:
                return False
            known[quirk.name] = quirk
            return True

    def probed(self, store: str, probe: str) -> bool:
        """Whether ``probe`` (a name, e.g. ``delete``) already ran against ``store``."""
        with self._lock:
            return probe in self._probed.get(store, ())

    def mark_probed(self, store: str, probe: str) -> None:
        """Remember that ``probe`` ran against ``store`` (its quirks are noted)."""
        with self._lock:
            self._probed.setdefault(store, set()).add(probe)

    def forget(self, store: str) -> None:
        """Forget what was learned about ``store`` (tests, or a server upgraded in place)."""
        with self._lock:
            self._seen.pop(store, None)
            self._probed.pop(store, None)

    def of(self, store: str) -> tuple[Quirk, ...]:
        with self._lock:
            return tuple(self._seen.get(store, {}).values())


QUIRKS = _QuirkBook()
"""Every quirk detected in this process, by store."""
