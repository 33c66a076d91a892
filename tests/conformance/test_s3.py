"""The conformance suite on S3: moto in server mode, a fresh bucket per test."""

from __future__ import annotations

import pytest

from fsseam.backends import FsspecFileSystem
from fsseam.testing import ConformanceSuite, FileSystemFixtures, FsSpec, RequestLog, StoreFaults
from fsseam.testing.emulators.s3 import S3Bucket

pytestmark = pytest.mark.s3


class S3Fixtures(FileSystemFixtures):
    """S3: ETags as versions, If-Match / If-None-Match enforced by the store."""

    @pytest.fixture
    def fs(self, s3_fs: FsspecFileSystem) -> FsspecFileSystem:
        return s3_fs

    @pytest.fixture
    def fs_spec(self, s3_bucket: S3Bucket) -> FsSpec:
        return (s3_bucket.url, dict(s3_bucket.storage_options))

    @pytest.fixture
    def unique_versions_per_write(self) -> bool:
        # A single-part ETag is the MD5 of the bytes: rewriting identical
        # content yields the same version (harmless for whole-object CAS).
        return False

    @pytest.fixture
    def expected_atomic_conditional_write(self) -> bool:
        return True

    @pytest.fixture
    def faults(self, s3_faults: StoreFaults) -> StoreFaults:
        return s3_faults

    @pytest.fixture
    def wire(self, s3_wire: RequestLog) -> RequestLog:
        return s3_wire

    @pytest.fixture
    def cache_contention(self) -> tuple[int, int]:
        # Issue 13: 6 threads x 20 increments through the content cache end at 120.
        return (6, 20)


class TestS3(ConformanceSuite, S3Fixtures):
    """Every seam contract line on S3."""
