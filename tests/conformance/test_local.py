"""The conformance suite on local disk: a fresh temporary directory per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsseam.backends import FsspecFileSystem, open_fs
from fsseam.testing import ConformanceSuite, FileSystemFixtures, FsSpec


class LocalFixtures(FileSystemFixtures):
    """Local disk: symlinks, file modes, and cross-process guards via the lock protocol."""

    @pytest.fixture
    def native_root(self, tmp_path: Path) -> Path:
        root = tmp_path / "root"
        root.mkdir()
        return root

    @pytest.fixture
    def fs(self, native_root: Path) -> FsspecFileSystem:
        return open_fs(str(native_root))

    @pytest.fixture
    def fs_spec(self, native_root: Path) -> FsSpec:
        return (str(native_root), {})

    @pytest.fixture
    def supports_symlinks(self) -> bool:
        return True

    @pytest.fixture
    def outside_dir(self, tmp_path: Path) -> Path:
        outside = tmp_path / "outside"
        outside.mkdir()
        return outside

    @pytest.fixture
    def expected_atomic_conditional_write(self) -> bool:
        return True


class TestLocal(ConformanceSuite, LocalFixtures):
    """Every seam contract line on local disk."""
