"""The conformance suite against REAL buckets, off by default.

Emulators have gaps only a real store closes (Azurite accepts ``If-Match: *``
on a missing blob; fake-gcs-server enforces preconditions on multipart uploads
only). Point the suite at a scratch location with environment variables; each
test gets a fresh random prefix under it, removed afterwards:

    FSSEAM_TEST_S3_URL=s3://my-scratch-bucket/fsseam-ci \\
    FSSEAM_TEST_S3_OPTIONS='{"profile": "ci"}' \\
    bash scripts/test.sh tests/conformance/test_real_stores.py

Likewise ``FSSEAM_TEST_GCS_URL`` / ``FSSEAM_TEST_GCS_OPTIONS`` and
``FSSEAM_TEST_AZURE_URL`` / ``FSSEAM_TEST_AZURE_OPTIONS``. Credentials come
from the usual environment (AWS profiles, ADC, ``AZURE_STORAGE_*``) or the
JSON options. Without the variables no class is defined: nothing is collected,
nothing is skipped.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from fsseam.backends import FsspecFileSystem, open_fs
from fsseam.testing import ConformanceSuite, FileSystemFixtures, FsSpec


def _configured(store: str) -> tuple[str, dict[str, Any]] | None:
    url = os.environ.get(f"FSSEAM_TEST_{store}_URL")
    if not url:
        return None
    options = json.loads(os.environ.get(f"FSSEAM_TEST_{store}_OPTIONS", "{}"))
    return url.rstrip("/"), options


def _fixtures_for(url: str, options: dict[str, Any]) -> type[FileSystemFixtures]:
    class RealStoreFixtures(FileSystemFixtures):
        @pytest.fixture
        def fs_spec(self) -> Iterator[FsSpec]:
            root = f"{url}/{uuid.uuid4().hex}"
            yield (root, dict(options))
            fs = open_fs(root, **options).fs
            stripped = fs._strip_protocol(root)
            if fs.exists(stripped):
                fs.rm(stripped, recursive=True)

        @pytest.fixture
        def fs(self, fs_spec: FsSpec) -> FsspecFileSystem:
            return open_fs(fs_spec[0], **fs_spec[1])

        @pytest.fixture
        def unique_versions_per_write(self) -> bool:
            return not url.startswith("s3")  # S3 single-part ETags are content MD5s

        @pytest.fixture
        def expected_atomic_conditional_write(self) -> bool:
            return True

    return RealStoreFixtures


if (_s3 := _configured("S3")) is not None:

    class TestRealS3(ConformanceSuite, _fixtures_for(*_s3)):  # type: ignore[misc]
        """Every seam contract line on a real S3 bucket."""


if (_gcs := _configured("GCS")) is not None:

    class TestRealGCS(ConformanceSuite, _fixtures_for(*_gcs)):  # type: ignore[misc]
        """Every seam contract line on a real GCS bucket."""


if (_azure := _configured("AZURE")) is not None:

    class TestRealAzure(ConformanceSuite, _fixtures_for(*_azure)):  # type: ignore[misc]
        """Every seam contract line on a real Azure container."""
