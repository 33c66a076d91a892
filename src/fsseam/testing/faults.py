"""Break the wire between a backend and its store, for :class:`~fsseam.testing.GuardedWriteSuite`.

A guarded write over a network has three outcomes: the store applied it, the
store refused it, or nobody knows (a 5xx, a reset, a timeout). The suite
proves that a backend settles the third one correctly, so it needs to lose
answers and cut bodies while the real client, SDK and dialect run. A backend
gives two fixtures:

* ``faults``: a :class:`StoreFaults` acting on the very store ``fs`` talks
  to. It implements one method, :meth:`StoreFaults.arm` (which change, which
  answer), plus :meth:`~StoreFaults.cut_read` and :meth:`~StoreFaults.heal`.
  :class:`ProxyFaults` implements it for any store whose clients go
  through a :class:`~fsseam.testing.emulators.proxy.RecordingProxy`; the
  project's S3 fixtures implement it on the moto middleware instead.
* ``wire``: a :class:`RequestLog` counting the requests that reached the
  store, for the round-trip tests (:class:`ProxyRequestLog` over a proxy).

Every method arms a fault for the NEXT matching request and returns it; its
``hits`` says whether it fired, so a test can tell "recovered" from "the
fault never happened".
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Literal, Protocol

from fsseam.testing.emulators.proxy import Fault, FaultAction, Recorded, RecordingProxy

__all__ = [
    "Answer",
    "ArmedFault",
    "Change",
    "CountingRequestLog",
    "ProxyFaults",
    "ProxyRequestLog",
    "RequestLog",
    "SeenCounter",
    "StoreFaults",
]


class ArmedFault(Protocol):
    """A fault waiting for its request."""

    hits: int
    """How many requests it hit so far (0: it never fired)."""


Change = Literal["write", "delete"]
"""The request a fault breaks: one storing an object's bytes, or one deleting it."""

Answer = Literal["retried", "unknown", "refused"]
"""What the client hears, and whether the store applied the change first.

* ``"retried"``: the change is APPLIED, then answered with a failure the
  client retries (a 500); the retry meets the guard its own first attempt
  already satisfied.
* ``"unknown"``: the change is APPLIED, then answered with a failure the
  client gives up on; only the backend's own record can tell it landed.
* ``"refused"``: the change is NOT applied, and answered with a failure the
  client gives up on.
"""


class StoreFaults(ABC):
    """Faults on the wire of the store behind the ``fs`` under test.

    "A write" is the request that stores an object's bytes (S3 ``PutObject``,
    a GCS upload, an Azure ``Put Blob``); "a read" one that fetches them.
    Implementations make the client's retries quick (no multi-second
    backoff), so the suite stays fast. The named faults the suites arm
    (:meth:`lose_write_answer`...) are all :meth:`arm` with other arguments.
    """

    @abstractmethod
    def arm(self, change: Change, answer: Answer) -> ArmedFault:
        """Break the next ``change`` request with ``answer`` (see :data:`Answer`).

        Raise ``NotImplementedError`` for a fault the store's wire cannot
        produce, saying which: the suite skips the delete tests that need
        it, and fails the write tests.
        """

    @abstractmethod
    def cut_read(self, after_bytes: int) -> ArmedFault:
        """The next read's connection breaks after ``after_bytes`` bytes of its body."""

    @abstractmethod
    def heal(self) -> None:
        """Disarm every pending fault."""

    def lose_write_answer(self) -> ArmedFault:
        """The next write is APPLIED, then answered with a failure the client retries (a 500).

        The client's retry then meets the guard its own write already
        satisfied (a 412): the backend must still report success.
        """
        return self.arm("write", "retried")

    def fail_after_landing(self) -> ArmedFault:
        """The next write is APPLIED, then answered with a failure the client gives up on.

        The outcome is unknown to the client; only the backend's own record
        (its write token) can tell that the write landed.
        """
        return self.arm("write", "unknown")

    def fail_write(self) -> ArmedFault:
        """The next write is NOT applied, and answered with a failure the client gives up on."""
        return self.arm("write", "refused")

    # Deletes (the ``ManageSuite``'s fault tests): a store whose wire cannot
    # break a delete raises NotImplementedError from ``arm``; the suite skips.

    def lose_delete_answer(self) -> ArmedFault:
        """The next delete is APPLIED, then answered with a failure the client retries.

        The retry finds nothing to delete (404) or a failed precondition
        (412): the backend must still report success, and only once.
        """
        return self.arm("delete", "retried")

    def fail_delete_after_landing(self) -> ArmedFault:
        """The next delete is APPLIED, then answered with a failure the client gives up on."""
        return self.arm("delete", "unknown")

    def fail_delete(self) -> ArmedFault:
        """The next delete is NOT applied, and answered with a failure the client gives up on."""
        return self.arm("delete", "refused")


class SeenCounter(Protocol):
    """Anything that counts the requests it has seen: a proxy, an emulator."""

    @property
    def seen(self) -> int:
        """Requests seen so far."""
        ...


class RequestLog:
    """Counts the requests that reached the store (the ``wire`` fixture).

    Reads a :class:`SeenCounter` (every request counts); a store counted
    another way subclasses it and overrides :meth:`clear` and :meth:`count`.
    """

    def __init__(self, counter: SeenCounter) -> None:
        self._counter = counter
        self._start = counter.seen

    def clear(self) -> None:
        """Start counting afresh (pending faults stay armed)."""
        self._start = self._counter.seen

    def count(self) -> int:
        """Requests since the last :meth:`clear`."""
        return self._counter.seen - self._start


CountingRequestLog = RequestLog
"""The name :class:`RequestLog` had while it was an ABC beside this implementation."""


class ProxyRequestLog(RequestLog):
    """:class:`RequestLog` over a :class:`RecordingProxy` (every request counts)."""


_PROXY_ANSWERS: dict[Answer, tuple[FaultAction, bool]] = {
    "retried": ("lose_response", True),
    "unknown": ("lose_response", False),
    "refused": ("fail", False),
}
"""Each answer as a proxy fault: its action, and whether its status is the retried one."""


class ProxyFaults(StoreFaults):
    """:class:`StoreFaults` for a store reached through a :class:`RecordingProxy`.

    ``is_write`` and ``is_read`` recognise the store's write and read
    requests, ``is_delete`` its deletes (default: any ``DELETE``).
    ``retried_status`` is a status the client retries, ``final_status`` one it
    gives up on at once (they differ per SDK: gcsfs retries every status from
    500 to 504, the Azure SDK every 5xx but 501 and 505).
    """

    def __init__(
        self,
        proxy: RecordingProxy,
        *,
        is_write: Callable[[Recorded], bool],
        is_read: Callable[[Recorded], bool],
        retried_status: int = 500,
        final_status: int = 501,
        is_delete: Callable[[Recorded], bool] | None = None,
    ) -> None:
        self.proxy = proxy
        self._changes: dict[Change, Callable[[Recorded], bool]] = {
            "write": is_write,
            "delete": is_delete if is_delete is not None else _is_delete,
        }
        self._is_read = is_read
        self._retried = retried_status
        self._final = final_status

    def arm(self, change: Change, answer: Answer) -> Fault:
        action, retried = _PROXY_ANSWERS[answer]
        status = self._retried if retried else self._final
        return self.proxy.inject(Fault(self._changes[change], action, status=status))

    def cut_read(self, after_bytes: int) -> Fault:
        return self.proxy.inject(Fault(self._is_read, "cut_body", after_bytes=after_bytes))

    def heal(self) -> None:
        self.proxy.clear_faults()


def _is_delete(rec: Recorded) -> bool:
    return rec.method == "DELETE"
