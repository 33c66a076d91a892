"""Faults with counts, statuses and stalls on a cloud :class:`~fsseam.testing.mounts.Mount`.

:class:`~fsseam.testing.faults.StoreFaults` arms the few faults the shipped
suite needs, one at a time. The hardening tests go further: throttling for N
requests, persistent 5xx answers, a lost answer with a chosen status, and
requests stalled past the client's timeout. :class:`MountFaults` gives that
one vocabulary over S3 (the moto middleware) and GCS / Azure (the recording
proxy in front of fake-gcs-server and Azurite); either way the real s3fs /
gcsfs / Azure SDK and the real dialect code run. A *stall* delays a request
inside the emulator before it is handled (the fault hooks run in the
server's request thread), which is how a client-side timeout is produced.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pytest

from fsseam.backends import FsspecFileSystem
from fsseam.testing.emulators import azure_fixtures, gcs_fixtures
from fsseam.testing.emulators.proxy import Fault, Recorded
from fsseam.testing.mounts import Mount

__all__ = [
    "FAST_RETRY_OPTIONS",
    "TIMEOUT_OPTIONS",
    "MountFaults",
    "Request",
    "hold_s3",
    "mount_faults",
    "quick_retries",
    "stall_s3",
    "stalling",
]

Request = Literal["read", "write"]
"""Which requests a fault hits: those fetching an object's bytes, or storing them."""

_FAULT_SOURCE = {"s3": "s3_server", "gcs": "gcs_proxy", "azure": "azure_proxy"}
"""The fixture whose object injects a cloud backend's faults."""

_MATCHERS: dict[tuple[str, Request], Callable[[Recorded], bool]] = {
    ("gcs", "read"): gcs_fixtures.is_gcs_read,
    ("gcs", "write"): gcs_fixtures.is_gcs_write,
    ("azure", "read"): azure_fixtures.is_azure_read,
    ("azure", "write"): azure_fixtures.is_azure_write,
}

_S3_METHODS: dict[Request, str] = {"read": "GET", "write": "PUT"}

_S3_ERRORS = {503: ("503 Slow Down", "SlowDown"), 500: ("500 Internal", "InternalError")}
"""The S3 error each status means (botocore retries both)."""


def _s3_fault_class() -> Any:
    # Imported on use: moto is only needed once an S3 fault is armed.
    from fsseam.testing.emulators.s3 import Fault as S3Fault

    return S3Fault


def hold_s3(method: str) -> Any:
    """An S3 fault parking the next ``method`` request until its ``release`` event is set.

    ``arrived`` is set when the request reaches the emulator; the request is
    then handled normally.
    """
    base = _s3_fault_class()

    class Hold(base):  # type: ignore[misc, valid-type]
        arrived = threading.Event()
        release = threading.Event()

        def matches(self, method_: str, key: str) -> bool:
            if self.hits < self.times and method_ == self.method:
                self.hits += 1
                self.arrived.set()
                self.release.wait(60)
            return False  # then handled normally

    return Hold("error", method, None, 1)


def stall_s3(method: str, seconds: float, times: int) -> Any:
    """An S3 fault delaying the next ``times`` ``method`` requests by ``seconds``."""
    base = _s3_fault_class()

    class Stall(base):  # type: ignore[misc, valid-type]
        def matches(self, method_: str, key: str) -> bool:
            if self.hits < self.times and method_ == self.method:
                self.hits += 1
                time.sleep(seconds)
            return False

    return Stall("error", method, None, times)


def stalling(match: Callable[[Recorded], bool], seconds: float, times: int) -> Fault:
    """A proxy fault delaying the next ``times`` matching requests by ``seconds``."""
    state = {"hits": 0}

    def delay(rec: Recorded) -> bool:
        if state["hits"] < times and match(rec):
            state["hits"] += 1
            time.sleep(seconds)
        return False

    return Fault(delay, "fail")


@dataclass(frozen=True, slots=True)
class MountFaults:
    """A cloud :class:`Mount` plus the means to break its wire.

    Every method arms a fault for the next matching requests and returns it.
    """

    name: str
    """``s3``, ``gcs`` or ``azure``."""
    mount: Mount
    """The workspace whose store the faults hit."""
    server: Any
    """The S3 emulator, or the GCS / Azure recording proxy."""

    def _matcher(self, kind: Request) -> Callable[[Recorded], bool]:
        return _MATCHERS[(self.name, kind)]

    def cut_read(self, times: int = 1) -> Any:
        """Cut the next reads' connections partway through the body."""
        if self.name == "s3":
            return self.server.reset_body(after_bytes=1 << 16, times=times)
        return self.server.inject(Fault(self._matcher("read"), "cut_body", times=times))

    def fail(self, kind: Request, times: int, status: int = 503) -> Any:
        """Answer the next ``times`` reads or writes with ``status`` (503 or 500) alone."""
        if self.name == "s3":
            line, code = _S3_ERRORS[status]
            return self.server.fail(line, code, times=times, method=_S3_METHODS[kind])
        return self.server.inject(Fault(self._matcher(kind), "fail", status=status, times=times))

    def lose_write_response(self, status: int = 500) -> Any:
        """Apply the next write, then answer ``status`` (the client never hears it landed).

        The S3 middleware always answers 500 InternalError.
        """
        if self.name == "s3":
            return self.server.lose_response(method="PUT")
        return self.server.inject(Fault(self._matcher("write"), "lose_response", status=status))

    def stall(self, kind: Request, seconds: float, times: int = 1) -> Any:
        """Hold the next reads or writes ``seconds`` before the store handles them."""
        if self.name == "s3":
            return self.server.inject(stall_s3(_S3_METHODS[kind], seconds, times))
        return self.server.inject(stalling(self._matcher(kind), seconds, times))

    def heal(self) -> None:
        """Drop every pending fault."""
        self.server.reset()


def mount_faults(request: pytest.FixtureRequest, mount: Mount) -> MountFaults:
    """:class:`MountFaults` on ``mount``'s store, from the emulator plugin's fixture."""
    return MountFaults(mount.name, mount, request.getfixturevalue(_FAULT_SOURCE[mount.name]))


_NO_BOTOCORE_RETRIES = {"retries": {"total_max_attempts": 1}}

FAST_RETRY_OPTIONS: dict[str, dict[str, Any]] = {
    "s3": {"config_kwargs": _NO_BOTOCORE_RETRIES},
    "gcs": {},
    "azure": {},
}
"""Storage options for quick failure: s3fs's own five quick retries, not botocore's backoff."""

TIMEOUT_OPTIONS: dict[str, dict[str, Any]] = {
    "s3": {"config_kwargs": {**_NO_BOTOCORE_RETRIES, "read_timeout": 0.5, "connect_timeout": 0.5}},
    "gcs": {"requests_timeout": 0.5},
    "azure": {"read_timeout": 0.5, "connection_timeout": 0.5},
}
"""Storage options giving each store's client a half-second timeout (stalls last 1 s)."""


def quick_retries(fs: FsspecFileSystem, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the SDK behind ``fs`` retry at once instead of backing off for seconds (test-only).

    S3 needs :data:`FAST_RETRY_OPTIONS` at mount time instead.
    """
    if name == "gcs":
        gcs_fixtures.quick_retries(monkeypatch)
    elif name == "azure":
        azure_fixtures.quick_retries(fs)
