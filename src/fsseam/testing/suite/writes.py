"""``write_text``: creates, replaces, guards, versions, BOMs and bytes stored."""

from __future__ import annotations

import asyncio
import threading

import pytest

from fsseam.seam import (
    CreateIfAbsent,
    FileSystem,
    FsError,
    FsVersion,
    FsWriteOutcome,
    ReplaceIfVersion,
)
from fsseam.testing._support import BOM, MIXED_TEXT, E, async_test, expect_error, in_threads, run
from fsseam.testing._worker import read_versioned
from fsseam.testing.fixtures import FileSystemOpener, RawStore
from fsseam.testing.suite._helpers import names, read, stat_of, version, write

__all__ = ["WriteSuite"]


class WriteSuite:
    """``write_text``: atomic create-or-replace under a store-checked guard."""

    @async_test
    async def test_write_creates_file(self, fs: FileSystem, raw: RawStore) -> None:
        outcome = await write(fs, "a.txt", MIXED_TEXT)
        assert outcome.operation == "create"
        assert outcome.before is None
        assert outcome.after == MIXED_TEXT
        assert await read(fs, "a.txt") == MIXED_TEXT
        assert raw.read_bytes("a.txt") == MIXED_TEXT.encode()

    @async_test
    async def test_write_creates_missing_parent_directories(self, fs: FileSystem) -> None:
        await write(fs, "a/b/c/d.txt", "deep")
        assert await read(fs, "a/b/c/d.txt") == "deep"
        for path in ("a", "a/b", "a/b/c"):
            info = await stat_of(fs, await fs.resolve(path))
            assert info.type == "directory"

    @async_test
    async def test_write_unconditional_replaces_existing_file(self, fs: FileSystem) -> None:
        await write(fs, "a.txt", "old")
        outcome = await write(fs, "a.txt", "new content")
        assert outcome.operation == "update"
        assert outcome.before == "old"
        assert outcome.after == "new content"
        assert await read(fs, "a.txt") == "new content"

    @async_test
    async def test_write_create_if_absent_creates_missing_file(self, fs: FileSystem) -> None:
        outcome = await write(fs, "dir/a.txt", "new", CreateIfAbsent())
        assert outcome.operation == "create"
        assert outcome.before is None
        assert outcome.version == await version(fs, "dir/a.txt")
        assert await read(fs, "dir/a.txt") == "new"

    @async_test
    async def test_write_create_if_absent_on_existing_is_not_observed(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        await write(fs, "a.txt", "original")
        before = await version(fs, "a.txt")
        await expect_error(E.FS_NOT_OBSERVED, write(fs, "a.txt", "clobber", CreateIfAbsent()))
        assert await version(fs, "a.txt") == before
        assert raw.read_bytes("a.txt") == b"original"

    @async_test
    async def test_write_replace_if_version_current_succeeds(self, fs: FileSystem) -> None:
        created = await write(fs, "a.txt", "one")
        outcome = await write(fs, "a.txt", "two", ReplaceIfVersion(created.version))
        assert outcome.operation == "update"
        assert outcome.before == "one"
        assert outcome.version != created.version
        assert await read(fs, "a.txt") == "two"

    @async_test
    async def test_write_replace_if_version_stale_is_stale_version(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        first = await write(fs, "a.txt", "one")
        second = await write(fs, "a.txt", "two")
        guard = ReplaceIfVersion(first.version)
        await expect_error(E.FS_STALE_VERSION, write(fs, "a.txt", "three", guard))
        assert await version(fs, "a.txt") == second.version
        assert raw.read_bytes("a.txt") == b"two"

    @async_test
    async def test_write_replace_if_version_of_missing_file_is_stale_version(
        self, fs: FileSystem
    ) -> None:
        other = await write(fs, "other.txt", "x")
        guard = ReplaceIfVersion(other.version)
        await expect_error(E.FS_STALE_VERSION, write(fs, "missing.txt", "x", guard))
        assert await fs.stat(await fs.resolve("missing.txt")) is None

    @async_test
    async def test_write_replace_if_version_of_deleted_file_is_stale_version(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        created = await write(fs, "a.txt", "one")
        raw.delete("a.txt")
        guard = ReplaceIfVersion(created.version)
        await expect_error(E.FS_STALE_VERSION, write(fs, "a.txt", "two", guard))
        assert await fs.stat(await fs.resolve("a.txt")) is None

    @async_test
    async def test_write_returns_version_equal_to_later_stat(self, fs: FileSystem) -> None:
        async def check(outcome: FsWriteOutcome) -> FsVersion:
            assert outcome.version == await version(fs, "a.txt")
            _, streamed = await read_versioned(fs, await fs.resolve("a.txt"))
            assert outcome.version == streamed
            return outcome.version

        await check(await write(fs, "a.txt", "one", CreateIfAbsent()))
        current = await check(await write(fs, "a.txt", "two"))
        await check(await write(fs, "a.txt", "three", ReplaceIfVersion(current)))

    @async_test
    async def test_write_new_content_of_same_size_changes_version(self, fs: FileSystem) -> None:
        seen = [(await write(fs, "a.txt", text)).version for text in ("aaaa", "bbbb", "cccc")]
        assert len(set(seen)) == 3

    @async_test
    async def test_write_identical_content_still_changes_version(
        self, fs: FileSystem, unique_versions_per_write: bool
    ) -> None:
        if not unique_versions_per_write:
            pytest.skip("versions are derived from content on this store")
        seen = [(await write(fs, "a.txt", "same")).version for _ in range(5)]
        assert len(set(seen)) == 5, f"a rewrite of identical bytes repeated a version: {seen}"
        # Identical bytes under a new version may pass a guard (ConflictSuite); a
        # real change since never does.
        await write(fs, "a.txt", "changed")
        stale = ReplaceIfVersion(seen[0])
        await expect_error(E.FS_STALE_VERSION, write(fs, "a.txt", "same", stale))

    @async_test
    async def test_write_outcome_before_is_none_or_whole_previous_text(
        self, fs: FileSystem, reopen_fs: FileSystemOpener
    ) -> None:
        small = reopen_fs(max_edit_bytes=64)
        old = "0123456789" * 20
        await write(small, "big.txt", old)
        outcome = await write(small, "big.txt", "new")
        assert outcome.operation == "update"
        assert outcome.before in (None, old), f"before is a fragment: {outcome.before!r}"
        assert await read(fs, "big.txt") == "new"

    @async_test
    async def test_write_preserves_bom_on_overwrite(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("bom.txt", BOM + b"old\n")
        outcome = await write(fs, "bom.txt", "new\n")
        assert outcome.before == "old\n"
        assert await read(fs, "bom.txt") == "new\n"
        assert raw.read_bytes("bom.txt") == BOM + b"new\n"

    def test_write_does_not_add_bom_to_new_file(self, fs: FileSystem, raw: RawStore) -> None:
        run(write(fs, "plain.txt", "plain\n"))
        assert raw.read_bytes("plain.txt") == b"plain\n"

    def test_write_stores_line_endings_byte_for_byte(self, fs: FileSystem, raw: RawStore) -> None:
        content = "a\r\nb\nc\rd\r\n\r\n"
        run(write(fs, "a.txt", content))
        assert raw.read_bytes("a.txt") == content.encode()

    @async_test
    async def test_write_onto_directory_is_not_regular_file(self, fs: FileSystem) -> None:
        await write(fs, "dir/a.txt", "x")
        await expect_error(E.FS_NOT_REGULAR_FILE, write(fs, "dir", "clobber"))
        assert await names(fs, "dir") == ["a.txt"]

    @async_test
    async def test_write_below_a_file_is_not_directory(self, fs: FileSystem, raw: RawStore) -> None:
        await write(fs, "a.txt", "keep")
        # A flat object store may store both keys; a file tree refuses with
        # FS_NOT_DIRECTORY. Either way the file in the way is untouched.
        try:
            await write(fs, "a.txt/child.txt", "x")
        except FsError as exc:
            failure: FsError | None = exc
        else:
            failure = None
        assert failure is None or failure.code == E.FS_NOT_DIRECTORY, repr(failure)
        assert await read(fs, "a.txt") == "keep"
        assert raw.read_bytes("a.txt") == b"keep"

    def test_write_readers_see_old_or_new_never_a_mix(self, fs: FileSystem) -> None:
        versions = ["a" * 300 * 1024, "b" * 300 * 1024]
        run(write(fs, "a.txt", versions[0]))
        done = threading.Event()

        async def write_many() -> int:
            try:
                for i in range(1, 20):
                    await write(fs, "a.txt", versions[i % 2])
            finally:
                done.set()
            return 0

        async def read_meanwhile() -> int:
            reads = 0
            while not done.is_set() or reads == 0:
                text = await read(fs, "a.txt")
                assert text in versions, f"a torn read: {len(text)} chars"
                reads += 1
            return reads

        jobs = [write_many, read_meanwhile]
        in_threads(2, lambda i: asyncio.run(jobs[i]()))
