"""Ceph RGW, a real S3-compatible server: the conformance suite, the doctor, many processes.

The server (``fsseam.testing.emulators.rgw``) starts once per session, a
fresh prefix per test. Without Ceph installed these tests ERROR with the
install command; ``.ci/run`` installs it.
"""

from __future__ import annotations

import asyncio
import io

import pytest

from fsseam.backends import FsspecFileSystem, open_fs
from fsseam.backends.dialects.base import DELETE_PRECONDITION_IGNORED, QUIRKS
from fsseam.backends.dialects.s3 import IF_MATCH_MISSING_412, IF_MATCH_UNQUOTED
from fsseam.cli import doctor
from fsseam.seam import CreateIfAbsent, FsEditRequest, FsError, FsErrorCode, ReplaceIfVersion
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

    @pytest.fixture
    def guarded_delete(self) -> bool:
        # RGW 16 ignores If-Match on DeleteObject: the dialect's probe finds it and
        # refuses delete and move; the suite proves that refusal instead.
        return False


class TestRGW(ConformanceSuite, RGWFixtures):
    """Every seam contract line on Ceph RGW."""


def test_eight_processes_incrementing_one_counter_lose_nothing(
    rgw_server: RGWCluster, rgw_url: str
) -> None:
    """8 OS processes x 25 guarded read->edit increments end at exactly 200 (the issue's numbers).

    The workers start together, so the rounds collide; the test checks that
    races were lost and retried, not just that the sum is right.
    """
    spec = (rgw_url, dict(rgw_server.storage_options))
    fs = open_fs(rgw_url, **rgw_server.mount_options())
    counter = asyncio.run(fs.resolve("counter.txt"))
    asyncio.run(fs.write_text(counter, "count=0\n"))
    job = {"op": "increment", "path": "counter.txt", "times": 25, "via": "edit"}
    results = run_workers(spec, [job] * 8, timeout=120)
    for result in results:
        assert result.returncode == 0, result.stderr
    assert counter_value(asyncio.run(fs.read_text(counter))) == 200
    lost = sum(result.result["conflicts"] for result in results if result.result)
    assert lost > 0, "the eight workers never collided: the test proved nothing"


def _forget_quirks(fs: FsspecFileSystem) -> None:
    QUIRKS.forget(fs.dialect.store_id())


def test_doctor_passes_on_rgw_and_names_its_quirks(rgw_server: RGWCluster, rgw_url: str) -> None:
    fs = open_fs(rgw_url, **rgw_server.mount_options())
    _forget_quirks(fs)  # the doctor's own probe must find them
    out = io.StringIO()
    status = asyncio.run(doctor(fs, out))
    report = out.getvalue()
    assert status == 0, report
    assert f"quirk:        {IF_MATCH_UNQUOTED.name}: " in report
    assert f"quirk:        {IF_MATCH_MISSING_412.name}: " in report
    assert "8 concurrent replaces at one version: 1 accepted, 7 refused" in report
    assert "8 concurrent edits at one version: 1 accepted, 7 refused" in report
    assert f"quirk:        {DELETE_PRECONDITION_IGNORED.name}: " in report
    assert "delete at a stale version: refused by fsseam: the store ignores" in report
    assert report.rstrip().endswith(
        "result: ok, the store enforces its preconditions; it ignores a delete's "
        "precondition, so fsseam refuses delete and move on it"
    )


def test_a_quoted_if_match_refused_at_the_current_etag_is_learned_once(
    rgw_server: RGWCluster, rgw_url: str
) -> None:
    """RGW refuses If-Match: "<etag>" although current; the first replace learns it."""
    fs = open_fs(rgw_url, **rgw_server.mount_options())
    _forget_quirks(fs)

    async def body() -> None:
        target = await fs.resolve("a.txt")
        created = await fs.write_text(target, "one\n", CreateIfAbsent())
        replaced = await fs.write_text(target, "two\n", ReplaceIfVersion(created.version))
        assert IF_MATCH_UNQUOTED in fs.dialect.quirks
        edited = await fs.edit_text(target, FsEditRequest("two", "three"), replaced.version)
        assert await fs.read_text(target) == "three\n"
        # Still a guard: a stale version is refused in the learned (bare) form too.
        with pytest.raises(FsError) as stale:
            await fs.dialect.put(
                target.display_path.removeprefix("s3://"), b"x", ReplaceIfVersion(created.version)
            )
        assert stale.value.code is FsErrorCode.FS_STALE_VERSION
        assert (await fs.stat(target)).version == edited.version  # type: ignore[union-attr]

    asyncio.run(body())
