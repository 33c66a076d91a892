"""Faults at the emulators' HTTP layer, one vocabulary for S3, GCS and Azure.

S3 faults go through the moto middleware (``S3Emulator.inject``); GCS and
Azure faults through the :class:`~fsseam.testing.emulators.proxy.RecordingProxy`
in front of fake-gcs-server and Azurite. Either way the real s3fs / gcsfs /
Azure SDK and the real dialect code run. A *stall* delays a request inside
the emulator before it is handled (the fault hooks run in the server's
request thread), which is how a client-side timeout is produced.
"""

from __future__ import annotations

import asyncio
import threading
import time
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from fsseam.testing.emulators.proxy import Fault, Recorded
from tests.hardening.helpers import Mount

Kind = str  # "read" | "write"


def _s3_fault_class() -> Any:
    from fsseam.testing.emulators.s3 import Fault as S3Fault

    return S3Fault


def hold_s3(method: str) -> Any:
    """An S3 fault parking the next ``method`` request until its ``release`` event is set.

    ``arrived`` is set when the request reaches the emulator.
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


def _gcs_read(rec: Recorded) -> bool:
    return rec.method == "GET" and "alt=media" in rec.query


def _gcs_write(rec: Recorded) -> bool:
    return rec.method == "POST" and "/upload/" in rec.path


def _azure_read(rec: Recorded) -> bool:
    return rec.method == "GET" and "comp=" not in rec.query and "restype=" not in rec.query


def _azure_write(rec: Recorded) -> bool:
    return rec.method == "PUT" and "comp=" not in rec.query


_S3_ERRORS = {503: ("503 Slow Down", "SlowDown"), 500: ("500 Internal Error", "InternalError")}


@dataclass
class FaultyStore:
    """A cloud :class:`Mount` plus the means to break its wire."""

    name: str
    mount: Mount
    server: Any
    """The S3 emulator, or the GCS / Azure recording proxy."""

    def _matcher(self, kind: Kind) -> Callable[[Recorded], bool]:
        table = {
            ("gcs", "read"): _gcs_read,
            ("gcs", "write"): _gcs_write,
            ("azure", "read"): _azure_read,
            ("azure", "write"): _azure_write,
        }
        return table[(self.name, kind)]

    @staticmethod
    def _method(kind: Kind) -> str:
        return "GET" if kind == "read" else "PUT"

    def cut_read(self, times: int = 1) -> Any:
        """Cut the next reads' connections halfway through the body."""
        if self.name == "s3":
            return self.server.reset_body(after_bytes=1 << 16, times=times)
        return self.server.inject(Fault(self._matcher("read"), "cut_body", times=times))

    def fail(self, kind: Kind, times: int, status: int = 503) -> Any:
        """Answer the next ``times`` reads or writes with ``status``, handling nothing."""
        if self.name == "s3":
            line, code = {
                503: ("503 Slow Down", "SlowDown"),
                500: ("500 Internal", "InternalError"),
            }[status]
            return self.server.fail(line, code, times=times, method=self._method(kind))
        return self.server.inject(Fault(self._matcher(kind), "fail", status=status, times=times))

    def lose_write_response(self, status: int = 500) -> Any:
        """Apply the next write, then answer ``status`` (the client never hears it landed).

        The S3 middleware always answers 500 InternalError.
        """
        if self.name == "s3":
            return self.server.lose_response(method="PUT")
        return self.server.inject(Fault(self._matcher("write"), "lose_response", status=status))

    def stall(self, kind: Kind, seconds: float, times: int = 1) -> Any:
        """Hold the next reads or writes ``seconds`` before the store handles them."""
        if self.name == "s3":
            return self.server.inject(stall_s3(self._method(kind), seconds, times))
        return self.server.inject(stalling(self._matcher(kind), seconds, times))

    def heal(self) -> None:
        """Drop every pending fault."""
        self.server.reset()


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


def quick_retries(fs: Any, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the SDKs retry at once instead of backing off for seconds (test-only).

    S3 needs :data:`FAST_RETRY_OPTIONS` at mount time instead.
    """
    if name == "gcs":
        import gcsfs.retry

        sleep = asyncio.sleep

        async def no_wait(_seconds: float) -> None:
            await sleep(0)

        monkeypatch.setattr(gcsfs.retry, "asyncio", types.SimpleNamespace(sleep=no_wait))
    elif name == "azure":
        policy = fs.fs.service_client._config.retry_policy
        policy.initial_backoff = 0
        policy.increment_base = 0
        policy.random_jitter_range = 0
