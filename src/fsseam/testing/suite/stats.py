"""``stat`` and ``lstat``: types, sizes, versions, absence."""

from __future__ import annotations

from fsseam.seam import FileSystem
from fsseam.testing._support import E, async_test, expect_error
from fsseam.testing.suite._helpers import lstat_of, names, read, stat_of, version, write

__all__ = ["StatSuite"]


class StatSuite:
    """``stat`` and ``lstat``: metadata only, ``None`` when absent."""

    @async_test
    async def test_stat_absent_is_none(self, fs: FileSystem) -> None:
        assert await fs.stat(await fs.resolve("missing.txt")) is None
        assert await fs.stat(await fs.resolve("missing/deeper.txt")) is None

    @async_test
    async def test_stat_file_reports_type_size_and_version(self, fs: FileSystem) -> None:
        outcome = await write(fs, "a.txt", "héllo\n")
        info = await stat_of(fs, await fs.resolve("a.txt"))
        assert info.type == "file"
        assert info.size == len("héllo\n".encode())
        assert info.version == outcome.version

    @async_test
    async def test_stat_directory_reports_directory(self, fs: FileSystem) -> None:
        await write(fs, "dir/sub/a.txt", "x")
        for path in ("dir", "dir/sub"):
            info = await fs.stat(await fs.resolve(path))
            assert info is not None, path
            assert info.type == "directory", path

    @async_test
    async def test_stat_version_is_stable_while_file_is_unchanged(self, fs: FileSystem) -> None:
        await write(fs, "a.txt", "x")
        first = await version(fs, "a.txt")
        await read(fs, "a.txt")
        await names(fs)
        assert await version(fs, "a.txt") == first

    @async_test
    async def test_stat_below_a_file_is_none(self, fs: FileSystem) -> None:
        await write(fs, "a.txt", "x")
        assert await fs.stat(await fs.resolve("a.txt/child.txt")) is None
        assert await fs.lstat("a.txt/child.txt") is None

    @async_test
    async def test_lstat_absent_is_none(self, fs: FileSystem) -> None:
        assert await fs.lstat("missing.txt") is None

    @async_test
    async def test_lstat_regular_file_matches_stat(self, fs: FileSystem) -> None:
        await write(fs, "dir/a.txt", "abc")
        info = await lstat_of(fs, "dir/a.txt")
        assert (info.type, info.size) == ("file", 3)
        assert info.version == await version(fs, "dir/a.txt")
        same = await fs.lstat("a.txt", cwd="dir")
        assert same == info

    @async_test
    async def test_lstat_directory(self, fs: FileSystem) -> None:
        await write(fs, "dir/a.txt", "abc")
        info = await lstat_of(fs, "dir")
        assert info.type == "directory"

    @async_test
    async def test_lstat_outside_root_is_sandbox_denied(self, fs: FileSystem) -> None:
        await expect_error(E.FS_SANDBOX_DENIED, fs.lstat("../x.txt"))
        await expect_error(E.FS_SANDBOX_DENIED, fs.lstat("~/x.txt"))
