"""``edit_text``: one literal replacement under a version guard, line endings kept."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from fsseam.seam import FileSystem, FsEditRequest, FsTarget, FsVersion, ReplaceIfVersion
from fsseam.testing._support import BOM, E, async_test, expect_error, run
from fsseam.testing.fixtures import FileSystemOpener, RawStore
from fsseam.testing.suite._helpers import read, version, write, written

__all__ = ["BYTES_KEPT", "EditSuite", "missing_file_contract", "too_large_result_contract"]

SIZE_LIMITED: dict[str, tuple[str, FsEditRequest, str | None]] = {
    # case: (file text, edit, text after it; None: refused, FS_TOO_LARGE), max_edit_bytes=100
    "at_exactly_max_edit_bytes_succeeds": ("x" * 99 + "!", FsEditRequest("!", "?"), "x" * 99 + "?"),
    # The file's size counts, though the edit would bring it under the limit.
    "over_max_edit_bytes_is_too_large": ("x" * 100 + "\n", FsEditRequest("\n", ""), None),
}
"""Edits of files at and over the size limit of a mount."""

BYTES_KEPT: dict[str, tuple[bytes, FsEditRequest, bytes]] = {
    # case: (stored bytes, the edit, stored bytes after it)
    "crlf_kept": (b"one\r\ntwo\r\nthree\r\n", FsEditRequest("two", "2"), b"one\r\n2\r\nthree\r\n"),
    "mixed_line_endings_byte_identical": (
        b"a\r\nb\nc\r\nd\ne\r",
        FsEditRequest("c", "C"),
        b"a\r\nb\nC\r\nd\ne\r",
    ),
    "bom_kept": (BOM + b"key = old\n", FsEditRequest("old", "new"), BOM + b"key = new\n"),
    "final_newline_kept": (b"a\nb\n", FsEditRequest("b", "B"), b"a\nB\n"),
    "no_final_newline_kept": (b"a\nb", FsEditRequest("b", "B"), b"a\nB"),
    "new_string_line_breaks_take_crlf_in_crlf_file": (
        b"one\r\ntwo\r\nthree\n",
        FsEditRequest("two", "2a\n2b\r\n2c"),
        b"one\r\n2a\r\n2b\r\n2c\r\nthree\n",
    ),
    "new_string_line_breaks_take_lf_in_lf_file": (
        b"one\ntwo\nthree\r\n",
        FsEditRequest("two", "2a\r\n2b\n2c"),
        b"one\n2a\n2b\n2c\nthree\r\n",
    ),
    "old_string_with_crlf_matches_lf_file": (
        b"def f():\n    return 1\n",
        FsEditRequest("def f():\r\n    return 1", "def f():\r\n    return 2"),
        b"def f():\n    return 2\n",
    ),
    "old_string_with_lf_matches_crlf_file": (
        b"def f():\r\n    return 1\r\n",
        FsEditRequest("():\n    return 1", "():\n    return 2"),
        b"def f():\r\n    return 2\r\n",
    ),
}
"""Edits that must leave every byte outside the match as stored: line endings, BOM, last newline."""


async def missing_file_contract(
    fs: FileSystem, edit: Callable[[FsTarget, FsVersion | None], Awaitable[Any]]
) -> None:
    """An edit of a missing file: ``FS_NOT_FOUND`` unguarded, ``FS_STALE_VERSION`` guarded.

    Unguarded, nothing was observed: the file simply is not there (a typo
    must not look like a conflict). Guarded, it vanished since it was read.
    ``edit(target, expected)`` is the call under test; it must edit "x".
    """
    other = await write(fs, "other.txt", "x")
    target = await fs.resolve("missing.txt")
    await expect_error(E.FS_NOT_FOUND, edit(target, None))
    await expect_error(E.FS_STALE_VERSION, edit(target, other.version))
    assert await fs.stat(target) is None


async def too_large_result_contract(
    fs: FileSystem, small: FileSystem, edit: Callable[[FsTarget], Awaitable[Any]]
) -> None:
    """An edit whose result would pass ``max_edit_bytes=100`` on ``small``: refused, unchanged.

    ``edit(target)`` grows the 91-byte ``"x" * 90 + "!"`` past 100 bytes.
    """
    await write(fs, "a.txt", "x" * 90 + "!")
    before = await version(fs, "a.txt")
    await expect_error(E.FS_TOO_LARGE, edit(await small.resolve("a.txt")))
    assert await version(fs, "a.txt") == before
    assert await read(fs, "a.txt") == "x" * 90 + "!"


class EditSuite:
    """``edit_text``: literal replacement, version first, bytes outside the match untouched."""

    @async_test
    async def test_edit_replaces_one_occurrence(self, fs: FileSystem, raw: RawStore) -> None:
        await write(fs, "a.txt", "alpha\nbeta\ngamma\n")
        target = await fs.resolve("a.txt")
        outcome = await fs.edit_text(target, FsEditRequest("beta", "BETA"))
        assert outcome.replacements == 1
        assert outcome.before == "alpha\nbeta\ngamma\n"
        assert outcome.after == "alpha\nBETA\ngamma\n"
        assert outcome.version == await version(fs, "a.txt")
        assert raw.read_bytes("a.txt") == b"alpha\nBETA\ngamma\n"

    @async_test
    async def test_edit_with_current_version_succeeds(self, fs: FileSystem) -> None:
        target, created = await written(fs, "a.txt", "x = 1\n")
        outcome = await fs.edit_text(target, FsEditRequest("1", "2"), created.version)
        assert outcome.version != created.version
        assert await read(fs, "a.txt") == "x = 2\n"

    @async_test
    async def test_edit_checks_version_before_matching(self, fs: FileSystem) -> None:
        old = await write(fs, "a.txt", "one\n")
        target, current = await written(fs, "a.txt", "two\n")
        for request in (FsEditRequest("absent", "x"), FsEditRequest("", "x")):
            await expect_error(E.FS_STALE_VERSION, fs.edit_text(target, request, old.version))
        await write(fs, "b.txt", "dup dup\n")
        stale_b = await version(fs, "b.txt")
        await write(fs, "b.txt", "dup dup dup\n")
        ambiguous = FsEditRequest("dup", "x")
        await expect_error(
            E.FS_STALE_VERSION, fs.edit_text(await fs.resolve("b.txt"), ambiguous, stale_b)
        )
        assert await version(fs, "a.txt") == current.version

    @async_test
    async def test_edit_stale_version_leaves_file_unchanged(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        old = await write(fs, "a.txt", "one\n")
        target, current = await written(fs, "a.txt", "one two\n")
        request = FsEditRequest("one", "1")
        await expect_error(E.FS_STALE_VERSION, fs.edit_text(target, request, old.version))
        assert await version(fs, "a.txt") == current.version
        assert raw.read_bytes("a.txt") == b"one two\n"

    @async_test
    async def test_edit_empty_old_string_is_edit_not_found(self, fs: FileSystem) -> None:
        await write(fs, "a.txt", "text\n")
        target = await fs.resolve("a.txt")
        await expect_error(E.FS_EDIT_NOT_FOUND, fs.edit_text(target, FsEditRequest("", "x")))
        await write(fs, "empty.txt", "")
        empty = await fs.resolve("empty.txt")
        await expect_error(E.FS_EDIT_NOT_FOUND, fs.edit_text(empty, FsEditRequest("", "x")))
        assert await read(fs, "a.txt") == "text\n"

    @async_test
    async def test_edit_without_match_is_edit_not_found(self, fs: FileSystem) -> None:
        target, created = await written(fs, "a.txt", "Hello world\n")
        for missing in ("hello", "Hello  world", "world\n\n"):
            await expect_error(
                E.FS_EDIT_NOT_FOUND, fs.edit_text(target, FsEditRequest(missing, "x"))
            )
        assert await version(fs, "a.txt") == created.version

    @async_test
    async def test_edit_ambiguous_match_is_ambiguous_edit(self, fs: FileSystem) -> None:
        target, created = await written(fs, "a.txt", "x = 1\ny = 1\n")
        await expect_error(E.FS_AMBIGUOUS_EDIT, fs.edit_text(target, FsEditRequest("1", "2")))
        assert await version(fs, "a.txt") == created.version
        assert await read(fs, "a.txt") == "x = 1\ny = 1\n"

    @async_test
    async def test_edit_replace_all_replaces_every_occurrence(self, fs: FileSystem) -> None:
        await write(fs, "a.txt", "foo bar foo\nfoo\n")
        target = await fs.resolve("a.txt")
        outcome = await fs.edit_text(target, FsEditRequest("foo", "qux", replace_all=True))
        assert outcome.replacements == 3
        assert outcome.after == "qux bar qux\nqux\n"
        assert await read(fs, "a.txt") == "qux bar qux\nqux\n"
        once = await fs.edit_text(target, FsEditRequest("bar", "baz", replace_all=True))
        assert once.replacements == 1

    def test_edit_missing_file_is_not_found_unguarded_and_stale_guarded(
        self, fs: FileSystem
    ) -> None:
        request = FsEditRequest("x", "y")
        run(missing_file_contract(fs, lambda target, seen: fs.edit_text(target, request, seen)))

    @pytest.mark.parametrize("case", list(SIZE_LIMITED))
    @async_test
    async def test_edit_of_a_file_is_judged_by_its_size_against_max_edit_bytes(
        self, fs: FileSystem, reopen_fs: FileSystemOpener, case: str
    ) -> None:
        stored, request, expected = SIZE_LIMITED[case]
        small = reopen_fs(max_edit_bytes=100)
        await write(fs, "a.txt", stored)
        before = await version(fs, "a.txt")
        target = await small.resolve("a.txt")
        if expected is None:
            await expect_error(E.FS_TOO_LARGE, small.edit_text(target, request))
            assert await version(fs, "a.txt") == before
        else:
            assert (await small.edit_text(target, request)).after == expected

    def test_edit_result_over_max_edit_bytes_is_too_large(
        self, fs: FileSystem, reopen_fs: FileSystemOpener
    ) -> None:
        small = reopen_fs(max_edit_bytes=100)
        grow = FsEditRequest("!", "y" * 20)
        run(too_large_result_contract(fs, small, lambda target: small.edit_text(target, grow)))

    @pytest.mark.parametrize("case", list(BYTES_KEPT))
    def test_edit_keeps_line_endings_and_bom(
        self, fs: FileSystem, raw: RawStore, case: str
    ) -> None:
        stored, request, expected = BYTES_KEPT[case]
        raw.write_bytes("a.txt", stored)
        outcome = run(fs.edit_text(run(fs.resolve("a.txt")), request))
        assert outcome.replacements == 1
        assert outcome.before == stored.removeprefix(BOM).decode()
        assert outcome.after == expected.removeprefix(BOM).decode()
        assert raw.read_bytes("a.txt") == expected

    @async_test
    async def test_edit_binary_file_is_not_text(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("bin.dat", b"abc\x00def")
        target = await fs.resolve("bin.dat")
        await expect_error(E.FS_NOT_TEXT, fs.edit_text(target, FsEditRequest("abc", "x")))
        assert raw.read_bytes("bin.dat") == b"abc\x00def"

    @async_test
    async def test_edit_old_version_is_stale_after_an_edit(self, fs: FileSystem) -> None:
        target, created = await written(fs, "a.txt", "n=1\n")
        edited = await fs.edit_text(target, FsEditRequest("1", "2"), created.version)
        assert edited.version == await version(fs, "a.txt")
        again = FsEditRequest("2", "3")
        await expect_error(E.FS_STALE_VERSION, fs.edit_text(target, again, created.version))
        await expect_error(
            E.FS_STALE_VERSION,
            fs.write_text(target, "n=9\n", ReplaceIfVersion(created.version)),
        )
        assert await read(fs, "a.txt") == "n=2\n"
