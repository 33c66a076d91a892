"""pytest plugin: the moto S3 emulator, a fresh bucket and a mounted workspace per test.

Loaded from the root ``conftest.py`` (``pytest_plugins``). The emulator starts
once per session on a free 127.0.0.1 port; each test gets its own bucket and
a clean request log with no pending faults. moto is a hard requirement here:
when it is missing, every test using these fixtures errors with an install
hint (never a skip). moto is imported on first use, so sessions that run no
S3 test neither pay for it nor need it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from fsseam.backends import FsspecFileSystem, open_fs

if TYPE_CHECKING:
    from fsseam.testing.emulators.s3 import S3Bucket, S3Emulator, S3EmulatorFaults, S3RequestLog

__all__ = ["s3_bucket", "s3_faults", "s3_fs", "s3_server", "s3_url", "s3_wire"]


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Emulator]:
    """The session's S3 emulator (moto server mode behind the fsseam middleware)."""
    from fsseam.testing.emulators.s3 import s3_emulator  # raises ImportError with a hint

    server = s3_emulator()
    yield server
    server.reset()


@pytest.fixture
def s3_bucket(s3_server: S3Emulator) -> S3Bucket:
    """A fresh, empty bucket; the request log and faults are reset first."""
    s3_server.reset()
    return s3_server.new_bucket()


@pytest.fixture
def s3_url(s3_bucket: S3Bucket) -> str:
    """``s3://<fresh bucket>``."""
    return s3_bucket.url


_SESSION: dict[str, Any] = {}


@pytest.fixture
def s3_fs(s3_bucket: S3Bucket) -> FsspecFileSystem:
    """An ``open_fs`` mount of a fresh bucket (the bucket is the workspace root).

    Mounts share one aiobotocore session (s3fs's ``session`` option), taken
    from the first mount: a new session parses botocore's S3 model again,
    about 0.1 s per test. Clients, connections and caches stay per mount.
    """
    options = dict(s3_bucket.storage_options)
    if "session" in _SESSION:
        options["session"] = _SESSION["session"]
    mounted = open_fs(s3_bucket.url, **options)
    if "session" not in _SESSION:
        mounted.fs.connect()
        _SESSION["session"] = mounted.fs.session
    return mounted


@pytest.fixture
def s3_faults(s3_server: S3Emulator, s3_bucket: S3Bucket) -> Iterator[S3EmulatorFaults]:
    """Faults on the emulator's wire (:class:`~fsseam.testing.faults.StoreFaults`), healed after."""
    from fsseam.testing.emulators.s3 import S3EmulatorFaults

    faults = S3EmulatorFaults(s3_server)
    yield faults
    faults.heal()


@pytest.fixture
def s3_wire(s3_server: S3Emulator, s3_bucket: S3Bucket) -> S3RequestLog:
    """Counts the requests the emulator receives from now on."""
    from fsseam.testing.emulators.s3 import S3RequestLog

    return S3RequestLog(s3_server)
