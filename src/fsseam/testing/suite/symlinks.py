"""Symlinks (stores that have them): followed inside the root, refused leading out."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsseam.seam import CreateIfAbsent, FileSystem, FsEditRequest, FsPathInfo, ReplaceIfVersion
from fsseam.testing._support import E, async_test, expect_error
from fsseam.testing.fixtures import RawStore, SymlinkMaker
from fsseam.testing.suite._helpers import linked_tree, lstat_of, read, stat_of, version, write

__all__ = ["SymlinkSuite"]


class SymlinkSuite:
    """Symlinks (stores that have them): followed inside the root, refused leading out."""

    @async_test
    async def test_symlink_inside_root_read_follows_link(
        self, fs: FileSystem, make_symlink: SymlinkMaker
    ) -> None:
        await _linked(fs, make_symlink, "real\n")
        make_symlink("sub/up.txt", "../real.txt")
        assert await read(fs, "link.txt") == "real\n"
        assert await read(fs, "sub/up.txt") == "real\n"
        assert await version(fs, "link.txt") == await version(fs, "real.txt")

    @async_test
    async def test_symlink_inside_root_shares_target_key(
        self, fs: FileSystem, make_symlink: SymlinkMaker
    ) -> None:
        await linked_tree(fs, make_symlink)
        key = (await fs.resolve("dir/real.txt")).target_key
        assert (await fs.resolve("link.txt")).target_key == key
        assert (await fs.resolve("alias/real.txt")).target_key == key

    @pytest.mark.parametrize("change", ["write", "edit", "create_through_a_dangling_link"])
    @async_test
    async def test_a_change_through_a_symlink_lands_on_the_target_and_the_link_stays(
        self, fs: FileSystem, make_symlink: SymlinkMaker, change: str
    ) -> None:
        if change == "create_through_a_dangling_link":
            make_symlink("link.txt", "real.txt")
        else:
            await _linked(fs, make_symlink, "x = 1\n")
        link = await fs.resolve("link.txt")
        if change == "write":
            current = await stat_of(fs, link)
            await fs.write_text(link, "x = 2\n", ReplaceIfVersion(current.version))
        elif change == "edit":
            await fs.edit_text(link, FsEditRequest("1", "2"))
        else:
            await fs.write_text(link, "x = 2\n", CreateIfAbsent())
        assert await read(fs, "real.txt") == "x = 2\n"
        await _still_a_symlink(fs, "link.txt")

    @async_test
    async def test_lstat_and_list_dir_report_symlink_without_following(
        self, fs: FileSystem, make_symlink: SymlinkMaker
    ) -> None:
        await _linked(fs, make_symlink, "real\n")
        info = await _still_a_symlink(fs, "link.txt")
        assert info.version != await version(fs, "link.txt")
        entries = {e.name: e.type for e in await fs.list_dir(await fs.resolve("."))}
        assert entries == {"link.txt": "symlink", "real.txt": "file"}

    @async_test
    async def test_symlink_to_file_outside_root_is_sandbox_denied(
        self, fs: FileSystem, make_symlink: SymlinkMaker, outside_dir: Path
    ) -> None:
        secret = outside_dir / "secret.txt"
        secret.write_text("secret\n")
        make_symlink("leak.txt", str(secret))
        await expect_error(E.FS_SANDBOX_DENIED, fs.resolve("leak.txt"))
        [entry] = await fs.list_dir(await fs.resolve("."))
        assert (entry.name, entry.type) == ("leak.txt", "symlink")
        await expect_error(E.FS_SANDBOX_DENIED, fs.read_text(entry.target))
        await expect_error(E.FS_SANDBOX_DENIED, fs.write_text(entry.target, "pwned\n"))
        assert secret.read_text() == "secret\n"

    @async_test
    async def test_symlinked_directory_outside_root_is_sandbox_denied(
        self, fs: FileSystem, make_symlink: SymlinkMaker, outside_dir: Path
    ) -> None:
        (outside_dir / "secret.txt").write_text("secret\n")
        make_symlink("out", str(outside_dir))
        for path in ("out", "out/secret.txt", "out/new.txt", "out/deep/new.txt"):
            await expect_error(E.FS_SANDBOX_DENIED, fs.resolve(path))
        # lstat("out") describes the link itself, inside the root; below it is outside.
        for path in ("out/secret.txt", "out/new.txt"):
            await expect_error(E.FS_SANDBOX_DENIED, fs.lstat(path))
        assert sorted(p.name for p in outside_dir.iterdir()) == ["secret.txt"]

    @async_test
    async def test_dangling_symlink_leading_outside_is_sandbox_denied(
        self, fs: FileSystem, make_symlink: SymlinkMaker, outside_dir: Path
    ) -> None:
        make_symlink("escape.txt", str(outside_dir / "created.txt"))
        await expect_error(E.FS_SANDBOX_DENIED, fs.resolve("escape.txt"))
        assert list(outside_dir.iterdir()) == []

    @async_test
    async def test_path_swapped_for_outside_symlink_after_resolve_is_sandbox_denied(
        self, fs: FileSystem, make_symlink: SymlinkMaker, outside_dir: Path, raw: RawStore
    ) -> None:
        secret = outside_dir / "secret.txt"
        secret.write_text("secret\n")
        await write(fs, "a.txt", "inside\n")
        target = await fs.resolve("a.txt")
        raw.delete("a.txt")
        make_symlink("a.txt", str(secret))
        await expect_error(E.FS_SANDBOX_DENIED, fs.stat(target))
        await expect_error(E.FS_SANDBOX_DENIED, fs.read_text(target))
        await expect_error(E.FS_SANDBOX_DENIED, fs.write_text(target, "pwned\n"))
        await expect_error(E.FS_SANDBOX_DENIED, fs.edit_text(target, FsEditRequest("s", "p")))
        assert secret.read_text() == "secret\n"


async def _linked(fs: FileSystem, make_symlink: SymlinkMaker, content: str) -> None:
    """``real.txt`` holding ``content``, and ``link.txt`` pointing at it."""
    await write(fs, "real.txt", content)
    make_symlink("link.txt", "real.txt")


async def _still_a_symlink(fs: FileSystem, path: str) -> FsPathInfo:
    info = await lstat_of(fs, path)
    assert info.type == "symlink", f"{path} is no longer a symlink"
    return info
