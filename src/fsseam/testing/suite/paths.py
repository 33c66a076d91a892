"""``resolve``: containment, refused syntax, and the spellings of one object."""

from __future__ import annotations

import pytest

from fsseam.seam import FileSystem
from fsseam.testing._support import E, absolute_spelling, async_test, expect_error, url_spelling
from fsseam.testing.suite._helpers import names, read, version, write

__all__ = ["REFUSED_PATHS", "ResolveSuite"]

REFUSED_PATHS: dict[str, tuple[str, ...]] = {
    "dotdot_outside_root": ("..", "../x.txt", "a/../../x.txt", "a/b/../../../x.txt"),
    "leading_tilde": ("~", "~/a.txt", "~root/a.txt"),
    "backslash": ("dir\\a.txt", "..\\x.txt", "a.txt\\"),
    "nul_byte": ("a\x00b.txt", "\x00", "a.txt\x00.png"),
}
"""Paths ``resolve`` refuses on every store (outside the root, refused syntax), by case."""


class ResolveSuite:
    """``resolve``: containment, refused syntax, spellings of one object."""

    @async_test
    async def test_resolve_relative_path_lands_under_root(self, fs: FileSystem) -> None:
        root = (await fs.resolve(".")).display_path.rstrip("/")
        target = await fs.resolve("dir/a.txt")
        assert target.display_path == f"{root}/dir/a.txt"
        await fs.write_text(target, "x")
        assert await names(fs) == ["dir"]
        assert await names(fs, "dir") == ["a.txt"]

    @async_test
    async def test_resolve_relative_path_against_cwd(self, fs: FileSystem) -> None:
        expected = (await fs.resolve("dir/b.txt")).target_key
        directory = await fs.resolve("dir")
        assert (await fs.resolve("b.txt", cwd="dir")).target_key == expected
        assert (await fs.resolve("b.txt", cwd=directory.display_path)).target_key == expected
        assert (await fs.resolve("../dir/b.txt", cwd="dir")).target_key == expected
        top = (await fs.resolve("top.txt")).target_key
        assert (await fs.resolve("../top.txt", cwd="dir")).target_key == top

    @async_test
    async def test_resolve_cwd_outside_root_is_sandbox_denied(self, fs: FileSystem) -> None:
        await expect_error(E.FS_SANDBOX_DENIED, fs.resolve("a.txt", cwd=".."))
        await expect_error(E.FS_SANDBOX_DENIED, fs.resolve("../../a.txt", cwd="dir"))
        await expect_error(E.FS_SANDBOX_DENIED, fs.resolve("a.txt", cwd="~"))

    @async_test
    async def test_resolve_absolute_path_inside_root(self, fs: FileSystem) -> None:
        target = await fs.resolve("dir/a.txt")
        spelled = absolute_spelling(target.display_path)
        assert spelled.startswith("/")
        assert (await fs.resolve(spelled)).target_key == target.target_key

    @async_test
    async def test_resolve_full_url_of_same_store(self, fs: FileSystem) -> None:
        target = await fs.resolve("dir/a.txt")
        url = url_spelling(target.display_path)
        assert (await fs.resolve(url)).target_key == target.target_key

    @async_test
    async def test_resolve_display_path_round_trips(self, fs: FileSystem) -> None:
        await write(fs, "dir/a.txt", "x")
        for path in (".", "dir", "dir/a.txt", "missing/new.txt"):
            target = await fs.resolve(path)
            again = await fs.resolve(target.display_path)
            assert again == target, path

    @async_test
    async def test_resolve_spellings_of_one_object_share_target_key(self, fs: FileSystem) -> None:
        await write(fs, "dir/a.txt", "x")
        target = await fs.resolve("dir/a.txt")
        spellings = [
            "./dir/a.txt",
            "dir//a.txt",
            "dir/./a.txt",
            "other/../dir/a.txt",
            absolute_spelling(target.display_path),
            url_spelling(target.display_path),
        ]
        for spelling in spellings:
            assert (await fs.resolve(spelling)).target_key == target.target_key, spelling
        assert (await fs.resolve("a.txt", cwd="dir")).target_key == target.target_key
        directory = (await fs.resolve("dir")).target_key
        assert (await fs.resolve("dir/")).target_key == directory
        assert (await fs.resolve("./dir/.")).target_key == directory

    @async_test
    async def test_resolve_different_objects_have_different_keys(self, fs: FileSystem) -> None:
        keys = {(await fs.resolve(p)).target_key for p in ("a.txt", "b.txt", "dir/a.txt")}
        assert len(keys) == 3

    @async_test
    async def test_unusual_file_names_round_trip(self, fs: FileSystem) -> None:
        unusual = [
            "with space.txt",
            "ünï©ødé 世界.txt",
            "hash#1.txt",
            "query?x=1.txt",
            "pct%20.txt",
            "glob[1]*.txt",
            "semi;colon,comma.txt",
        ]
        for name in unusual:
            outcome = await write(fs, f"dir/{name}", name)
            assert await read(fs, f"dir/{name}") == name
            assert await version(fs, f"dir/{name}") == outcome.version
        entries = await fs.list_dir(await fs.resolve("dir"))
        assert [e.name for e in entries] == sorted(unusual)
        for entry in entries:
            assert await fs.read_text(entry.target) == entry.name

    @async_test
    async def test_resolve_dotdot_staying_inside_root_is_allowed(self, fs: FileSystem) -> None:
        expected = (await fs.resolve("b.txt")).target_key
        assert (await fs.resolve("a/../b.txt")).target_key == expected

    @async_test
    async def test_resolve_absolute_path_outside_root_is_sandbox_denied(
        self, fs: FileSystem
    ) -> None:
        root = (await fs.resolve(".")).display_path.rstrip("/")
        outside = [f"{root}-sibling/x.txt", f"{root}/../x.txt"]
        parent = root.rsplit("/", 1)[0]
        if parent and not parent.endswith(":/"):
            outside.append(f"{parent}/elsewhere.txt")
        for path in outside:
            for spelling in (path, absolute_spelling(path), url_spelling(path)):
                await expect_error(E.FS_SANDBOX_DENIED, fs.resolve(spelling))

    @pytest.mark.parametrize("case", list(REFUSED_PATHS))
    @async_test
    async def test_resolve_refused_path_is_sandbox_denied(self, fs: FileSystem, case: str) -> None:
        for path in REFUSED_PATHS[case]:
            await expect_error(E.FS_SANDBOX_DENIED, fs.resolve(path))

    @async_test
    async def test_resolve_other_store_url_is_sandbox_denied(self, fs: FileSystem) -> None:
        root = (await fs.resolve(".")).display_path
        others = ["https://example.com/a.txt"]
        others.append("gs://other-bucket/a.txt" if root.startswith("s3") else "s3://other/a.txt")
        others.append(
            "file:///etc/passwd" if root.startswith("memory://") else "memory://other/a.txt"
        )
        for path in others:
            await expect_error(E.FS_SANDBOX_DENIED, fs.resolve(path))
