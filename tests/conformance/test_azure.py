"""The conformance suite on Azure Blob Storage: Azurite, a fresh container per test."""

from __future__ import annotations

import pytest

from fsseam.backends import FsspecFileSystem
from fsseam.testing import ConformanceSuite, FileSystemFixtures, FsSpec, RequestLog, StoreFaults
from fsseam.testing.emulators.azure import AzureContainer

pytestmark = pytest.mark.azure


class AzureFixtures(FileSystemFixtures):
    """Azure: ETags as versions, enforced by the store across processes."""

    @pytest.fixture
    def fs(self, azure_fs: FsspecFileSystem) -> FsspecFileSystem:
        return azure_fs

    @pytest.fixture
    def fs_spec(self, azure_container: AzureContainer) -> FsSpec:
        return (azure_container.url, dict(azure_container.storage_options))

    @pytest.fixture
    def expected_atomic_conditional_write(self) -> bool:
        return True

    @pytest.fixture
    def faults(self, azure_faults: StoreFaults) -> StoreFaults:
        return azure_faults

    @pytest.fixture
    def wire(self, azure_wire: RequestLog) -> RequestLog:
        return azure_wire


class TestAzure(ConformanceSuite, AzureFixtures):
    """Every seam contract line on Azure Blob Storage."""
