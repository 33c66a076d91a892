"""The conformance suite on fsspec's in-memory store (generic dialect)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from fsseam.backends import DEFAULT_MAX_EDIT_BYTES, FsspecFileSystem, open_fs
from fsseam.seam import FileSystem
from fsseam.testing import ConformanceSuite, FileSystemFixtures, FileSystemOpener


class MemoryFixtures(FileSystemFixtures):
    """fsspec ``memory://``: one process only, versions are content hashes."""

    @pytest.fixture
    def fs(self) -> Iterator[FsspecFileSystem]:
        mounted = open_fs(f"memory://fsseam-conformance/{uuid.uuid4().hex}")
        yield mounted
        mounted.fs.rm(mounted.root, recursive=True)

    @pytest.fixture
    def reopen_fs(self, fs: FsspecFileSystem) -> FileSystemOpener:
        # The memory store is process-global: a second mount sees the same objects,
        # but no other process can (so fs_spec stays None).
        def reopen(
            *, read_only: bool = False, max_edit_bytes: int = DEFAULT_MAX_EDIT_BYTES
        ) -> FileSystem:
            return open_fs(fs.root, read_only=read_only, max_edit_bytes=max_edit_bytes)

        return reopen

    @pytest.fixture
    def unique_versions_per_write(self) -> bool:
        return False

    @pytest.fixture
    def expected_atomic_conditional_write(self) -> bool:
        return False


class TestMemory(ConformanceSuite, MemoryFixtures):
    """Every seam contract line on the memory store."""
