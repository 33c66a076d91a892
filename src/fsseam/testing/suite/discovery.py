"""``walk``: every entry below a directory, in one stable order, never past the rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsseam.seam import FileSystem, FsEditRequest, FsError, FsWalkEntry, ReplaceIfVersion
from fsseam.testing._support import E, async_test, expect_error, run
from fsseam.testing.fixtures import RawStore, SymlinkMaker
from fsseam.testing.suite._helpers import linked_tree, names, write

__all__ = ["DiscoverySuite"]


async def walked(
    fs: FileSystem, path: str = ".", max_depth: int | None = None
) -> list[FsWalkEntry]:
    """Everything ``walk`` yields for ``path``."""
    return [entry async for entry in fs.walk(await fs.resolve(path), max_depth=max_depth)]


async def walked_paths(fs: FileSystem, path: str = ".", max_depth: int | None = None) -> list[str]:
    """``path`` of each walked entry, ``/`` appended to directories."""
    return [
        entry.path + ("/" if entry.type == "directory" else "")
        for entry in await walked(fs, path, max_depth)
    ]


async def refused(fs: FileSystem, path: str) -> bool:
    """True when ``resolve`` refuses ``path`` (denied, or leading out of the root)."""
    try:
        await fs.resolve(path)
    except FsError as exc:
        if exc.code is E.FS_SANDBOX_DENIED:
            return True
        raise
    return False


class DiscoverySuite:
    """``walk``: every entry below a directory, in one stable order, never past the rules."""

    def test_walk_of_fresh_root_is_empty(self, fs: FileSystem) -> None:
        assert run(walked(fs)) == []

    @async_test
    async def test_walk_lists_the_tree_with_relative_paths_and_types(self, fs: FileSystem) -> None:
        for path in ("z.txt", "dir/sub/c.txt", "a.txt", "dir/b.txt"):
            await write(fs, path, path)
        entries = await walked(fs)
        assert [(e.path, e.type) for e in entries] == [
            ("a.txt", "file"),
            ("dir", "directory"),
            ("dir/b.txt", "file"),
            ("dir/sub", "directory"),
            ("dir/sub/c.txt", "file"),
            ("z.txt", "file"),
        ]

    @async_test
    async def test_walk_order_counts_a_directory_as_its_path_plus_slash(
        self, fs: FileSystem
    ) -> None:
        # "-" < "." < "/" < "0": a directory's entries sort where "a/" does,
        # which is also the order an object store lists keys in.
        for path in ("a0.txt", "a/b.txt", "a.txt", "a-c.txt"):
            await write(fs, path, "x")
        assert await walked_paths(fs) == ["a-c.txt", "a.txt", "a/", "a/b.txt", "a0.txt"]

    @async_test
    async def test_walk_max_depth_bounds_the_levels(self, fs: FileSystem) -> None:
        for path in ("top.txt", "d1/mid.txt", "d1/d2/low.txt"):
            await write(fs, path, "x")
        assert await walked_paths(fs, max_depth=1) == ["d1/", "top.txt"]
        assert await walked_paths(fs, max_depth=2) == ["d1/", "d1/d2/", "d1/mid.txt", "top.txt"]
        assert [e.path for e in await walked(fs, max_depth=1)] == await names(fs)
        with pytest.raises(ValueError, match="max_depth"):
            await walked(fs, max_depth=0)

    @async_test
    async def test_walk_of_subdirectory_is_relative_to_it_with_usable_targets(
        self, fs: FileSystem
    ) -> None:
        contents = {"src/app.py": "app\n", "src/pkg/mod.py": "mod\n", "other.txt": "x"}
        for path, text in contents.items():
            await write(fs, path, text)
        entries = await walked(fs, "src")
        assert [(e.path, e.type) for e in entries] == [
            ("app.py", "file"),
            ("pkg", "directory"),
            ("pkg/mod.py", "file"),
        ]
        for entry in entries:
            resolved = await fs.resolve(f"src/{entry.path}")
            assert entry.target.target_key == resolved.target_key, entry.path
            again = await fs.resolve(entry.target.display_path)
            assert again.target_key == resolved.target_key, entry.path
            if entry.type == "file":
                assert await fs.read_text(entry.target) == contents[f"src/{entry.path}"]
                assert entry.size in (None, len(contents[f"src/{entry.path}"].encode()))

    @pytest.mark.parametrize(
        ("path", "code"),
        [("missing", E.FS_NOT_FOUND), ("a.txt", E.FS_NOT_DIRECTORY)],
        ids=["missing_directory_is_not_found", "on_a_file_is_not_directory"],
    )
    @async_test
    async def test_walk_of_what_is_not_a_directory_fails(
        self, fs: FileSystem, path: str, code: E
    ) -> None:
        await write(fs, "a.txt", "x")
        await expect_error(code, walked(fs, path))

    @async_test
    async def test_walk_leaves_out_every_path_resolve_refuses(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        planted = [".git/config", ".git/refs/main", ".env", "sub/.env", "sub/ok.txt", "ok.txt"]
        for path in planted:
            raw.write_bytes(path, b"planted\n")
        seen = await walked_paths(fs)
        denied = [path for path in [*planted, ".git"] if await refused(fs, path)]
        assert not set(denied) & {path.rstrip("/") for path in seen}, seen
        assert {"ok.txt", "sub/", "sub/ok.txt"} <= set(seen)
        for entry in await walked(fs):
            await fs.resolve(entry.target.display_path)  # never refused

    @async_test
    async def test_walk_never_shows_scratch_files(self, fs: FileSystem, raw: RawStore) -> None:
        outcome = await write(fs, "dir/a.txt", "1")
        await write(fs, "dir/a.txt", "2", ReplaceIfVersion(outcome.version))
        await fs.edit_text(await fs.resolve("dir/a.txt"), FsEditRequest("2", "3"))
        assert await walked_paths(fs) == ["dir/", "dir/a.txt"]

    @async_test
    async def test_walk_can_stop_early(self, fs: FileSystem) -> None:
        for index in range(5):
            await write(fs, f"d/f{index}.txt", "x")
        listing = fs.walk(await fs.resolve("."))
        first = [await anext(listing), await anext(listing)]
        assert [entry.path for entry in first] == ["d", "d/f0.txt"]
        assert len(await walked(fs)) == 6

    @async_test
    async def test_walk_reports_symlinks_without_entering_them(
        self, fs: FileSystem, make_symlink: SymlinkMaker
    ) -> None:
        await linked_tree(fs, make_symlink)
        assert await walked_paths(fs) == ["alias", "dir/", "dir/real.txt", "link.txt"]
        types = {e.path: e.type for e in await walked(fs)}
        assert types["alias"] == types["link.txt"] == "symlink"

    @async_test
    async def test_walk_leaves_out_symlinks_leading_outside(
        self, fs: FileSystem, make_symlink: SymlinkMaker, outside_dir: Path
    ) -> None:
        (outside_dir / "secret.txt").write_text("secret\n")
        await write(fs, "inside.txt", "x")
        make_symlink("out", str(outside_dir))
        make_symlink("leak.txt", str(outside_dir / "secret.txt"))
        make_symlink("dangling.txt", str(outside_dir / "later.txt"))
        make_symlink("sub/up", "../..")
        assert await walked_paths(fs) == ["inside.txt", "sub/"]
