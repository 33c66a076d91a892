"""``list_dir``: direct children, sorted and typed, never a temp file."""

from __future__ import annotations

import asyncio
import threading

from fsseam.seam import CreateIfAbsent, FileSystem, FsEditRequest, ReplaceIfVersion
from fsseam.testing._support import E, async_test, expect_error, in_threads, run
from fsseam.testing.fixtures import RawStore
from fsseam.testing.suite._helpers import names, stat_of, write

__all__ = ["ListDirSuite"]


class ListDirSuite:
    """``list_dir``: direct children, sorted, typed; scratch files never shown."""

    @async_test
    async def test_list_dir_of_fresh_root_is_empty(self, fs: FileSystem) -> None:
        assert await fs.list_dir(await fs.resolve(".")) == []

    @async_test
    async def test_list_dir_direct_children_sorted_with_types(self, fs: FileSystem) -> None:
        for path in ("b.txt", "a.txt", "Z.txt", "sub/c.txt", "sub/deep/d.txt", "_x.md"):
            await write(fs, path, path)
        entries = await fs.list_dir(await fs.resolve("."))
        assert [(e.name, e.type) for e in entries] == [
            ("Z.txt", "file"),
            ("_x.md", "file"),
            ("a.txt", "file"),
            ("b.txt", "file"),
            ("sub", "directory"),
        ]
        sub = await fs.list_dir(await fs.resolve("sub"))
        assert [(e.name, e.type) for e in sub] == [("c.txt", "file"), ("deep", "directory")]

    @async_test
    async def test_list_dir_entries_carry_resolvable_targets(self, fs: FileSystem) -> None:
        await write(fs, "dir/a.txt", "héllo")
        await write(fs, "dir/sub/b.txt", "b")
        for entry in await fs.list_dir(await fs.resolve("dir")):
            by_name = await fs.resolve(f"dir/{entry.name}")
            assert entry.target.target_key == by_name.target_key
            assert (await fs.resolve(entry.target.display_path)) == entry.target
            if entry.type == "file":
                info = await stat_of(fs, entry.target)
                assert entry.version in (None, info.version)
                assert entry.size in (None, len("héllo".encode()))

    @async_test
    async def test_list_dir_missing_is_not_found(self, fs: FileSystem) -> None:
        await expect_error(E.FS_NOT_FOUND, fs.list_dir(await fs.resolve("missing")))

    @async_test
    async def test_list_dir_on_file_is_not_directory(self, fs: FileSystem) -> None:
        await write(fs, "a.txt", "x")
        await expect_error(E.FS_NOT_DIRECTORY, fs.list_dir(await fs.resolve("a.txt")))

    def test_list_dir_never_shows_temp_files_during_writes(self, fs: FileSystem) -> None:
        expected = {"big.txt", "other.txt"}
        content = ["a" * 256 * 1024, "b" * 256 * 1024]
        run(write(fs, "other.txt", "x"))
        done = threading.Event()

        async def write_many() -> list[str]:
            try:
                for i in range(24):
                    await write(fs, "big.txt", content[i % 2])
            finally:
                done.set()
            return []

        async def list_meanwhile() -> list[str]:
            seen: list[str] = []
            while not done.is_set():
                seen.extend(await names(fs))
            return seen

        jobs = [write_many, list_meanwhile]
        results = in_threads(2, lambda i: asyncio.run(jobs[i]()))
        seen = set(results[1])
        assert seen <= expected, f"list_dir showed scratch files: {seen - expected}"
        assert run(names(fs)) == sorted(expected)

    @async_test
    async def test_writes_leave_no_stray_files_in_the_store(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        outcome = await write(fs, "dir/a.txt", "1")
        await write(fs, "dir/a.txt", "2", ReplaceIfVersion(outcome.version))
        await write(fs, "dir/b.txt", "3", CreateIfAbsent())
        await fs.edit_text(await fs.resolve("dir/b.txt"), FsEditRequest("3", "4"))
        await expect_error(E.FS_NOT_OBSERVED, write(fs, "dir/b.txt", "5", CreateIfAbsent()))
        stale = ReplaceIfVersion(outcome.version)
        await expect_error(E.FS_STALE_VERSION, write(fs, "dir/a.txt", "6", stale))
        assert raw.names("") == ["dir"]
        assert raw.names("dir") == ["a.txt", "b.txt"]
