"""Symlinks (stores that have them): followed inside the root, refused leading out."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsseam.seam import CreateIfAbsent, FileSystem, FsEditRequest, FsPathInfo, ReplaceIfVersion
from fsseam.testing._support import E, expect_error, lstat_of, read, run, stat_of, version, write
from fsseam.testing.fixtures import RawStore, SymlinkMaker

__all__ = ["SymlinkSuite"]


class SymlinkSuite:
    """Symlinks (stores that have them): followed inside the root, refused leading out."""

    def test_symlink_inside_root_read_follows_link(
        self, fs: FileSystem, make_symlink: SymlinkMaker
    ) -> None:
        _linked(fs, make_symlink, "real\n")
        make_symlink("sub/up.txt", "../real.txt")

        async def body() -> None:
            assert await read(fs, "link.txt") == "real\n"
            assert await read(fs, "sub/up.txt") == "real\n"
            assert await version(fs, "link.txt") == await version(fs, "real.txt")

        run(body())

    def test_symlink_inside_root_shares_target_key(
        self, fs: FileSystem, make_symlink: SymlinkMaker
    ) -> None:
        run(write(fs, "dir/real.txt", "real\n"))
        make_symlink("link.txt", "dir/real.txt")
        make_symlink("alias", "dir")

        async def body() -> None:
            key = (await fs.resolve("dir/real.txt")).target_key
            assert (await fs.resolve("link.txt")).target_key == key
            assert (await fs.resolve("alias/real.txt")).target_key == key

        run(body())

    @pytest.mark.parametrize("change", ["write", "edit", "create_through_a_dangling_link"])
    def test_a_change_through_a_symlink_lands_on_the_target_and_the_link_stays(
        self, fs: FileSystem, make_symlink: SymlinkMaker, change: str
    ) -> None:
        if change == "create_through_a_dangling_link":
            make_symlink("link.txt", "real.txt")
        else:
            _linked(fs, make_symlink, "x = 1\n")

        async def body() -> None:
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

        run(body())

    def test_lstat_and_list_dir_report_symlink_without_following(
        self, fs: FileSystem, make_symlink: SymlinkMaker
    ) -> None:
        _linked(fs, make_symlink, "real\n")

        async def body() -> None:
            info = await _still_a_symlink(fs, "link.txt")
            assert info.version != await version(fs, "link.txt")
            entries = {e.name: e.type for e in await fs.list_dir(await fs.resolve("."))}
            assert entries == {"link.txt": "symlink", "real.txt": "file"}

        run(body())

    def test_symlink_to_file_outside_root_is_sandbox_denied(
        self, fs: FileSystem, make_symlink: SymlinkMaker, outside_dir: Path
    ) -> None:
        secret = outside_dir / "secret.txt"
        secret.write_text("secret\n")
        make_symlink("leak.txt", str(secret))

        async def body() -> None:
            await expect_error(E.FS_SANDBOX_DENIED, fs.resolve("leak.txt"))
            [entry] = await fs.list_dir(await fs.resolve("."))
            assert (entry.name, entry.type) == ("leak.txt", "symlink")
            await expect_error(E.FS_SANDBOX_DENIED, fs.read_text(entry.target))
            await expect_error(E.FS_SANDBOX_DENIED, fs.write_text(entry.target, "pwned\n"))

        run(body())
        assert secret.read_text() == "secret\n"

    def test_symlinked_directory_outside_root_is_sandbox_denied(
        self, fs: FileSystem, make_symlink: SymlinkMaker, outside_dir: Path
    ) -> None:
        (outside_dir / "secret.txt").write_text("secret\n")
        make_symlink("out", str(outside_dir))

        async def body() -> None:
            for path in ("out", "out/secret.txt", "out/new.txt", "out/deep/new.txt"):
                await expect_error(E.FS_SANDBOX_DENIED, fs.resolve(path))
            # lstat("out") describes the link itself, inside the root; below it is outside.
            for path in ("out/secret.txt", "out/new.txt"):
                await expect_error(E.FS_SANDBOX_DENIED, fs.lstat(path))

        run(body())
        assert sorted(p.name for p in outside_dir.iterdir()) == ["secret.txt"]

    def test_dangling_symlink_leading_outside_is_sandbox_denied(
        self, fs: FileSystem, make_symlink: SymlinkMaker, outside_dir: Path
    ) -> None:
        make_symlink("escape.txt", str(outside_dir / "created.txt"))

        async def body() -> None:
            await expect_error(E.FS_SANDBOX_DENIED, fs.resolve("escape.txt"))

        run(body())
        assert list(outside_dir.iterdir()) == []

    def test_path_swapped_for_outside_symlink_after_resolve_is_sandbox_denied(
        self, fs: FileSystem, make_symlink: SymlinkMaker, outside_dir: Path, raw: RawStore
    ) -> None:
        secret = outside_dir / "secret.txt"
        secret.write_text("secret\n")
        run(write(fs, "a.txt", "inside\n"))
        target = run(fs.resolve("a.txt"))
        raw.delete("a.txt")
        make_symlink("a.txt", str(secret))

        async def body() -> None:
            await expect_error(E.FS_SANDBOX_DENIED, fs.stat(target))
            await expect_error(E.FS_SANDBOX_DENIED, fs.read_text(target))
            await expect_error(E.FS_SANDBOX_DENIED, fs.write_text(target, "pwned\n"))
            await expect_error(E.FS_SANDBOX_DENIED, fs.edit_text(target, FsEditRequest("s", "p")))

        run(body())
        assert secret.read_text() == "secret\n"


def _linked(fs: FileSystem, make_symlink: SymlinkMaker, content: str) -> None:
    """``real.txt`` holding ``content``, and ``link.txt`` pointing at it."""
    run(write(fs, "real.txt", content))
    make_symlink("link.txt", "real.txt")


async def _still_a_symlink(fs: FileSystem, path: str) -> FsPathInfo:
    info = await lstat_of(fs, path)
    assert info.type == "symlink", f"{path} is no longer a symlink"
    return info
