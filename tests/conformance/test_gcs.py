"""The conformance suite on Google Cloud Storage: fake-gcs-server, a fresh bucket per test."""

from __future__ import annotations

import pytest

from fsseam.backends import FsspecFileSystem
from fsseam.testing import ConformanceSuite, FileSystemFixtures, FsSpec, RequestLog, StoreFaults
from fsseam.testing.emulators.gcs import GCSBucket

pytestmark = pytest.mark.gcs


class GCSFixtures(FileSystemFixtures):
    """GCS: generations as versions, enforced by the store across processes."""

    @pytest.fixture
    def fs(self, gcs_fs: FsspecFileSystem) -> FsspecFileSystem:
        return gcs_fs

    @pytest.fixture
    def fs_spec(self, gcs_bucket: GCSBucket) -> FsSpec:
        return (gcs_bucket.url, dict(gcs_bucket.storage_options))

    @pytest.fixture
    def expected_atomic_conditional_write(self) -> bool:
        return True

    @pytest.fixture
    def faults(self, gcs_faults: StoreFaults) -> StoreFaults:
        return gcs_faults

    @pytest.fixture
    def wire(self, gcs_wire: RequestLog) -> RequestLog:
        return gcs_wire


class TestGCS(ConformanceSuite, GCSFixtures):
    """Every seam contract line on GCS."""
