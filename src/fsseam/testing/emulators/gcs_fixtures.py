"""pytest plugin: fake-gcs-server, a fresh bucket and a mounted workspace per test.

Loaded from the root ``conftest.py`` (``pytest_plugins``). The emulator starts
once per session on a free 127.0.0.1 port behind a
:class:`~fsseam.testing.emulators.proxy.RecordingProxy`; each test gets its
own bucket and a clean request log with no pending faults. The emulator is a
hard requirement: when its binary is missing these fixtures fail loudly
rather than skip.
"""

from __future__ import annotations

import pytest

from fsseam.backends import FsspecFileSystem, open_fs
from fsseam.testing.emulators.gcs import GCSBucket, GCSEmulator, gcs_emulator
from fsseam.testing.emulators.proxy import RecordingProxy

__all__ = ["gcs_bucket", "gcs_fs", "gcs_proxy", "gcs_server", "gcs_url"]


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
