"""Local disk only: file modes, FIFOs, and writers killed before they publish."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from fsseam.seam import CreateIfAbsent, FileSystem, FsEditRequest, ReplaceIfVersion
from fsseam.testing._support import E, async_test, expect_error, run_workers
from fsseam.testing._worker import CRASH_EXIT
from fsseam.testing.fixtures import FsSpec
from fsseam.testing.suite._helpers import given, names, read, stat_of, version, write

__all__ = ["LocalDiskSuite"]


class LocalDiskSuite:
    """Local disk only (``native_root`` given): file modes, and a writer killed mid-write."""

    @pytest.fixture
    def local_root(self, native_root: Path | None) -> Path:
        """The OS directory of the root; skips on stores that are not local disk."""
        return given(native_root, "not local disk (native_root is None)")

    @async_test
    async def test_write_preserves_file_mode(self, fs: FileSystem, local_root: Path) -> None:
        await write(fs, "script.sh", "#!/bin/sh\n")
        (local_root / "script.sh").chmod(0o751)
        await write(fs, "script.sh", "#!/bin/sh\necho hi\n")
        await fs.edit_text(await fs.resolve("script.sh"), FsEditRequest("hi", "ho"))
        assert stat.S_IMODE((local_root / "script.sh").stat().st_mode) == 0o751

    @async_test
    async def test_fifo_is_other_and_never_opened_for_reading(
        self, fs: FileSystem, local_root: Path
    ) -> None:
        os.mkfifo(local_root / "pipe")
        target = await fs.resolve("pipe")
        info = await stat_of(fs, target)
        assert info.type == "other"
        assert [(e.name, e.type) for e in await fs.list_dir(await fs.resolve("."))] == [
            ("pipe", "other")
        ]
        await expect_error(E.FS_NOT_REGULAR_FILE, fs.read_text(target))
        await expect_error(E.FS_NOT_REGULAR_FILE, fs.write_text(target, "x"))
        assert stat.S_ISFIFO((local_root / "pipe").lstat().st_mode)

    @async_test
    async def test_writer_killed_before_rename_leaves_old_file(
        self, fs: FileSystem, local_root: Path, fs_spec: FsSpec | None
    ) -> None:
        spec = given(fs_spec, "no fs_spec for the writer process")
        before = await write(fs, "keep.txt", "old content\n")
        job = {"op": "crash_on_publish", "path": "keep.txt", "content": "new content\n"}
        [result] = run_workers(spec, [job], fresh=True)
        assert result.returncode == CRASH_EXIT, (
            f"the writer never reached its publishing rename: {result}"
        )
        assert await read(fs, "keep.txt") == "old content\n"
        assert await version(fs, "keep.txt") == before.version
        assert await names(fs) == ["keep.txt"]
        # The dead writer's lock died with it: a guarded write goes through.
        await write(fs, "keep.txt", "next\n", ReplaceIfVersion(before.version))
        assert (local_root / "keep.txt").read_bytes() == b"next\n"

    @async_test
    async def test_creator_killed_before_link_creates_nothing(
        self, fs: FileSystem, local_root: Path, fs_spec: FsSpec | None
    ) -> None:
        spec = given(fs_spec, "no fs_spec for the writer process")
        job = {"op": "crash_on_publish", "path": "new.txt", "content": "x\n", "create": True}
        [result] = run_workers(spec, [job], fresh=True)
        assert result.returncode == CRASH_EXIT, f"the creator never reached its link: {result}"
        assert await fs.stat(await fs.resolve("new.txt")) is None
        assert await names(fs) == []
        await write(fs, "new.txt", "made\n", CreateIfAbsent())
        assert os.path.exists(local_root / "new.txt")
