"""Symlinks (stores that have them): followed inside the root, refused leading out."""

from __future__ import annotations

from pathlib import Path

from fsseam.seam import CreateIfAbsent, FileSystem, FsEditRequest, ReplaceIfVersion
from fsseam.testing._support import E, expect_error, read, run, version, write
from fsseam.testing.fixtures import RawStore, SymlinkMaker

__all__ = ["SymlinkSuite"]


class SymlinkSuite:
    """Symlinks (stores that have them): followed inside the root, refused leading out."""

    def test_symlink_inside_root_read_follows_link(
        self, fs: FileSystem, make_symlink: SymlinkMaker
    ) -> None:
        run(write(fs, "real.txt", "real\n"))
        make_symlink("link.txt", "real.txt")
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

    def test_symlink_write_lands_on_target_and_link_stays(
        self, fs: FileSystem, make_symlink: SymlinkMaker
    ) -> None:
        run(write(fs, "real.txt", "old\n"))
        make_symlink("link.txt", "real.txt")

        async def body() -> None:
            link = await fs.resolve("link.txt")
            current = await fs.stat(link)
            assert current is not None
            await fs.write_text(link, "new\n", ReplaceIfVersion(current.version))
            assert await read(fs, "real.txt") == "new\n"
            info = await fs.lstat("link.txt")
            assert info is not None
            assert info.type == "symlink"

        run(body())

    def test_symlink_edit_lands_on_target_and_link_stays(
        self, fs: FileSystem, make_symlink: SymlinkMaker
    ) -> None:
        run(write(fs, "real.txt", "x = 1\n"))
        make_symlink("link.txt", "real.txt")

        async def body() -> None:
            await fs.edit_text(await fs.resolve("link.txt"), FsEditRequest("1", "2"))
            assert await read(fs, "real.txt") == "x = 2\n"
            info = await fs.lstat("link.txt")
            assert info is not None
            assert info.type == "symlink"

        run(body())

    def test_dangling_symlink_inside_root_write_creates_target(
        self, fs: FileSystem, make_symlink: SymlinkMaker
    ) -> None:
        make_symlink("link.txt", "later.txt")

        async def body() -> None:
            await fs.write_text(await fs.resolve("link.txt"), "made\n", CreateIfAbsent())
            assert await read(fs, "later.txt") == "made\n"
            info = await fs.lstat("link.txt")
            assert info is not None
            assert info.type == "symlink"

        run(body())

    def test_lstat_and_list_dir_report_symlink_without_following(
        self, fs: FileSystem, make_symlink: SymlinkMaker
    ) -> None:
        run(write(fs, "real.txt", "real\n"))
        make_symlink("link.txt", "real.txt")

        async def body() -> None:
            info = await fs.lstat("link.txt")
            assert info is not None
            assert info.type == "symlink"
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
