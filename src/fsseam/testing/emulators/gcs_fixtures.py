"""pytest plugin: fake-gcs-server, a fresh bucket and a mounted workspace per test.

Loaded from the root ``conftest.py`` (``pytest_plugins``). The emulator starts
once per session on a free 127.0.0.1 port behind a
:class:`~fsseam.testing.emulators.proxy.RecordingProxy`; each test gets its
own bucket and a clean request log with no pending faults. The emulator is a
hard requirement: when its binary is missing these fixtures fail loudly
rather than skip.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Iterator

import pytest

from fsseam.backends import FsspecFileSystem, open_fs
from fsseam.testing.emulators.gcs import GCSBucket, GCSEmulator, gcs_emulator
from fsseam.testing.emulators.proxy import Recorded, RecordingProxy
from fsseam.testing.faults import ProxyFaults, ProxyRequestLog

__all__ = [
    "gcs_bucket",
    "gcs_faults",
    "gcs_fs",
    "gcs_proxy",
    "gcs_server",
    "gcs_url",
    "gcs_wire",
    "is_gcs_read",
    "is_gcs_write",
]


@pytest.fixture(scope="session")
def gcs_server() -> GCSEmulator:
    """The session's fake-gcs-server (stopped at interpreter exit)."""
    return gcs_emulator()


@pytest.fixture
def gcs_proxy(gcs_server: GCSEmulator) -> RecordingProxy:
    """The proxy every client request goes through, with its log and faults cleared."""
    gcs_server.proxy.reset()
    return gcs_server.proxy


@pytest.fixture
def gcs_bucket(gcs_server: GCSEmulator, gcs_proxy: RecordingProxy) -> GCSBucket:
    """A fresh, empty bucket: ``(url, storage_options)``; set up off the record."""
    return gcs_server.new_bucket()


@pytest.fixture
def gcs_url(gcs_bucket: GCSBucket) -> str:
    """``gs://<fresh bucket>``."""
    return gcs_bucket.url


@pytest.fixture
def gcs_fs(gcs_bucket: GCSBucket) -> FsspecFileSystem:
    """An ``open_fs`` mount of a fresh bucket (the bucket is the workspace root)."""
    return open_fs(gcs_bucket.url, **gcs_bucket.storage_options)


def is_gcs_write(rec: Recorded) -> bool:
    """An object upload (the GCS dialect sends one multipart upload per write)."""
    return rec.method == "POST" and rec.path.startswith("/upload/")


def is_gcs_read(rec: Recorded) -> bool:
    """A media download (an object's bytes)."""
    return rec.method == "GET" and "alt=media" in rec.query


@pytest.fixture
def gcs_faults(gcs_proxy: RecordingProxy, monkeypatch: pytest.MonkeyPatch) -> Iterator[ProxyFaults]:
    """Faults on the proxy's wire; gcsfs retries at once instead of after 1-2 s (test-only).

    gcsfs retries every status from 500 to 504 (503 here), and gives up on 507.
    """
    import gcsfs.retry

    sleep = asyncio.sleep

    async def no_wait(_seconds: float) -> None:
        await sleep(0)

    # gcsfs.retry sleeps through its module's ``asyncio`` name only.
    monkeypatch.setattr(gcsfs.retry, "asyncio", types.SimpleNamespace(sleep=no_wait))
    faults = ProxyFaults(
        gcs_proxy,
        is_write=is_gcs_write,
        is_read=is_gcs_read,
        retried_status=503,
        final_status=507,
    )
    yield faults
    faults.heal()


@pytest.fixture
def gcs_wire(gcs_proxy: RecordingProxy) -> ProxyRequestLog:
    """Counts the requests clients send through the proxy from now on."""
    return ProxyRequestLog(gcs_proxy)
