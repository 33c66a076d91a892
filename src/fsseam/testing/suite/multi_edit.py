"""``edit_text_many``: several edits applied in order, all or none, under one guard."""

from __future__ import annotations

from fsseam.seam import FileSystem, FsEditRequest, FsTarget, FsVersion, ReplaceIfVersion
from fsseam.testing._support import BOM, E, async_test, expect_error, run
from fsseam.testing.fixtures import FileSystemOpener, RawStore
from fsseam.testing.suite._helpers import read, version, write, written
from fsseam.testing.suite.edits import missing_file_contract, too_large_result_contract

__all__ = ["MultiEditSuite"]


class MultiEditSuite:
    """``edit_text_many``: several literal edits, in order, all or nothing, one guarded write."""

    @staticmethod
    async def many(
        fs: FileSystem, path: str, edits: list[FsEditRequest], expected: FsVersion | None = None
    ) -> tuple[FsTarget, str]:
        target = await fs.resolve(path)
        outcome = await fs.edit_text_many(target, edits, expected)
        return target, outcome.after

    @async_test
    async def test_edits_apply_in_order_each_to_the_previous_result(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        target, base = await written(fs, "a.txt", "alpha beta gamma\n")
        edits = [
            FsEditRequest("alpha", "ALPHA"),
            FsEditRequest("ALPHA beta", "AB"),
            FsEditRequest("a", "4", replace_all=True),
        ]
        outcome = await fs.edit_text_many(target, edits, base.version)
        assert outcome.before == "alpha beta gamma\n"
        assert outcome.after == "AB g4mm4\n"
        assert outcome.replacements == 4
        assert outcome.before_version in (None, base.version)
        assert outcome.version == await version(fs, "a.txt")
        assert raw.read_bytes("a.txt") == b"AB g4mm4\n"

    @async_test
    async def test_a_failing_edit_applies_none_and_names_itself(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        target, base = await written(fs, "a.txt", "one two three\n")
        missing = [FsEditRequest("one", "1"), FsEditRequest("four", "4")]
        error = await expect_error(E.FS_EDIT_NOT_FOUND, fs.edit_text_many(target, missing))
        assert str(error).startswith("edit 2 of 2: old_string was not found")
        ambiguous = [FsEditRequest("t", "T"), FsEditRequest("one", "1")]
        error = await expect_error(E.FS_AMBIGUOUS_EDIT, fs.edit_text_many(target, ambiguous))
        assert str(error).startswith("edit 1 of 2: old_string matches 2 places")
        await expect_error(E.FS_EDIT_NOT_FOUND, fs.edit_text_many(target, []))
        assert await version(fs, "a.txt") == base.version
        assert raw.read_bytes("a.txt") == b"one two three\n"

    @async_test
    async def test_version_is_checked_before_matching(self, fs: FileSystem) -> None:
        old = await write(fs, "a.txt", "v1\n")
        await write(fs, "a.txt", "v2 and more\n", ReplaceIfVersion(old.version))
        target = await fs.resolve("a.txt")
        nowhere = [FsEditRequest("nowhere", "x")]
        await expect_error(E.FS_STALE_VERSION, fs.edit_text_many(target, nowhere, old.version))
        assert await read(fs, "a.txt") == "v2 and more\n"

    def test_missing_file_is_not_found_unguarded_and_stale_guarded(self, fs: FileSystem) -> None:
        edits = [FsEditRequest("x", "y")]
        run(missing_file_contract(fs, lambda target, seen: fs.edit_text_many(target, edits, seen)))

    @async_test
    async def test_line_endings_and_bom_are_kept(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("a.txt", BOM + b"one\r\ntwo\r\nthree\r\n")
        edits = [FsEditRequest("one\n", "1\n"), FsEditRequest("two", "2\n2b")]
        _, after = await self.many(fs, "a.txt", edits)
        assert after == "1\r\n2\r\n2b\r\nthree\r\n"
        assert raw.read_bytes("a.txt") == BOM + b"1\r\n2\r\n2b\r\nthree\r\n"

    def test_result_over_max_edit_bytes_is_too_large(
        self, fs: FileSystem, reopen_fs: FileSystemOpener
    ) -> None:
        small = reopen_fs(max_edit_bytes=100)
        grow = [FsEditRequest("!", "?"), FsEditRequest("?", "y" * 20)]
        run(too_large_result_contract(fs, small, lambda target: small.edit_text_many(target, grow)))

    @async_test
    async def test_read_only_refuses(
        self, fs: FileSystem, fs_read_only: FileSystem, raw: RawStore
    ) -> None:
        await write(fs, "a.txt", "x\n")
        target = await fs_read_only.resolve("a.txt")
        edits = [FsEditRequest("x", "y")]
        await expect_error(E.FS_SANDBOX_DENIED, fs_read_only.edit_text_many(target, edits))
        assert raw.read_bytes("a.txt") == b"x\n"

    @async_test
    async def test_two_multi_edits_from_one_version_exactly_one_wins(self, fs: FileSystem) -> None:
        target, base = await written(fs, "a.txt", "a=1\nb=1\n")
        first = [FsEditRequest("a=1", "a=2"), FsEditRequest("b=1", "b=2")]
        await fs.edit_text_many(target, first, base.version)
        second = [FsEditRequest("a", "A"), FsEditRequest("b", "B")]
        await expect_error(E.FS_STALE_VERSION, fs.edit_text_many(target, second, base.version))
        assert await read(fs, "a.txt") == "a=2\nb=2\n"
