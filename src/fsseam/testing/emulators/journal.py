"""The request log and armed faults an emulator's front keeps, made once.

The S3 middleware and the :class:`~fsseam.testing.emulators.proxy.RecordingProxy`
sit between the clients and a store and do the same bookkeeping: record
every request, count them for the round-trip tests, and hand each request
the first armed fault it meets. They differ in what a request and a fault
are, so :class:`RequestJournal` is generic in both.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

__all__ = ["ArmableFault", "RequestJournal"]


class ArmableFault(Protocol):
    """A fault that hits at most ``times`` requests."""

    times: int
    """How many matching requests it may hit."""
    hits: int
    """How many it hit so far."""


RecordT = TypeVar("RecordT")
FaultT = TypeVar("FaultT", bound=ArmableFault)


class RequestJournal(Generic[RecordT, FaultT]):
    """Recorded requests and pending faults, safe to share between request threads."""

    def __init__(self) -> None:
        self._journal_lock = threading.Lock()
        self._records: list[RecordT] = []
        self._faults: list[FaultT] = []
        self._seen = 0

    @property
    def seen(self) -> int:
        """Requests recorded since the emulator started (never reset)."""
        with self._journal_lock:
            return self._seen

    def reset(self) -> None:
        """Forget the recorded requests and every pending fault."""
        with self._journal_lock:
            self._records.clear()
            self._faults.clear()

    def clear_faults(self) -> None:
        """Disarm every pending fault (the request log stays)."""
        with self._journal_lock:
            self._faults.clear()

    def inject(self, fault: FaultT) -> FaultT:
        """Arm ``fault`` until it has hit ``fault.times`` requests; returned for its ``hits``."""
        with self._journal_lock:
            self._faults.append(fault)
        return fault

    def _recorded(self) -> list[RecordT]:
        """A copy of the requests recorded since the last :meth:`reset`."""
        with self._journal_lock:
            return list(self._records)

    def _record(self, record: RecordT) -> None:
        with self._journal_lock:
            self._records.append(record)
            self._seen += 1

    def _take_fault(self, applies: Callable[[FaultT], bool]) -> FaultT | None:
        """The first armed fault with hits left that ``applies`` to a request, its hit counted."""
        with self._journal_lock:
            for fault in self._faults:
                if fault.hits < fault.times and applies(fault):
                    fault.hits += 1
                    return fault
        return None
