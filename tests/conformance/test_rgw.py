"""Ceph RGW, a real S3-compatible server: the conformance suite, the doctor, many processes.

The server (``fsseam.testing.emulators.rgw``) starts once per session, a
fresh prefix per test. Without Ceph installed these tests ERROR with the
install command; ``.ci/run`` installs it.
"""

from __future__ import annotations

import asyncio

import pytest

from fsseam.backends import FsspecFileSystem, open_fs
from fsseam.testing import ConformanceSuite, FileSystemFixtures, FsSpec
from fsseam.testing._support import run_workers
from fsseam.testing._worker import counter_value
from fsseam.testing.emulators.rgw import RGWCluster

pytestmark = pytest.mark.rgw


class RGWFixtures(FileSystemFixtures):
    """S3 on Ceph RGW: ETags, If-Match / If-None-Match enforced by the server."""

    @pytest.fixture
    def fs_spec(self, rgw_server: RGWCluster, rgw_url: str) -> FsSpec:
        return (rgw_url, dict(rgw_server.storage_options))

    @pytest.fixture
    def fs(self, fs_spec: FsSpec, rgw_server: RGWCluster) -> FsspecFileSystem:
        return open_fs(fs_spec[0], **rgw_server.mount_options())

    @pytest.fixture
    def unique_versions_per_write(self) -> bool:
        return False  # single-part ETags are the MD5 of the bytes, as on AWS

    @pytest.fixture
    def expected_atomic_conditional_write(self) -> bool:
        return True


class TestRGW(ConformanceSuite, RGWFixtures):
    """Every seam contract line on Ceph RGW."""


def test_eight_processes_incrementing_one_counter_lose_nothing(
    rgw_server: RGWCluster, rgw_url: str
) -> None:
    """8 OS processes x 25 guarded read->edit increments end at exactly 200."""
    spec = (rgw_url, dict(rgw_server.storage_options))
    fs = open_fs(rgw_url, **rgw_server.mount_options())
    counter = asyncio.run(fs.resolve("counter.txt"))
    asyncio.run(fs.write_text(counter, "count=0\n"))
    job = {"op": "increment", "path": "counter.txt", "times": 25, "via": "edit"}
    results = run_workers(spec, [job] * 8, timeout=120)
    for result in results:
        assert result.returncode == 0, result.stderr
    assert counter_value(asyncio.run(fs.read_text(counter))) == 200
