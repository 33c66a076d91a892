"""The conformance suite: every line of the seam contract (DESIGN.md), as tests.

A backend opts in by combining :class:`ConformanceSuite` with its fixtures::

    class TestMyStore(ConformanceSuite, MyStoreFixtures):
        pass

Each section is also a class of its own (``EditSuite``, ``ConcurrencySuite``...)
for a backend that wants to run a part. No class here is named ``Test*``, so
pytest collects them only through a backend's subclass.

Tests are plain synchronous functions; each drives its coroutines with one
``asyncio.run`` and never assumes which loop a store's client lives on.
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from fsseam.seam import (
    CreateIfAbsent,
    FileSystem,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsTarget,
    FsVersion,
    FsWalkEntry,
    FsWriteOutcome,
    ReplaceIfVersion,
)
from fsseam.testing._support import (
    BOM,
    absolute_spelling,
    expect_error,
    in_threads,
    increment_many_tasks,
    names,
    read,
    run,
    run_workers,
    url_spelling,
    version,
    write,
)
from fsseam.testing._worker import CRASH_EXIT, counter_value, read_versioned
from fsseam.testing.fixtures import (
    FileSystemOpener,
    FsSpec,
    RawStore,
    SymlinkMaker,
)

__all__ = [
    "CapabilitySuite",
    "ConcurrencySuite",
    "ConformanceSuite",
    "CrossProcessSuite",
    "DiscoverySuite",
    "EditSuite",
    "ListDirSuite",
    "LocalDiskSuite",
    "MultiEditSuite",
    "ReadOnlySuite",
    "ReadSuite",
    "ResolveSuite",
    "StatSuite",
    "StreamSuite",
    "SymlinkSuite",
    "WriteSuite",
]

E = FsErrorCode

MIXED_TEXT = "ascii é ß € 世界 🎉 \u0301\n"
"""Characters of every UTF-8 length (1 to 4 bytes), so any chunk boundary may split one."""


class ResolveSuite:
    """``resolve``: containment, refused syntax, spellings of one object."""

    def test_resolve_relative_path_lands_under_root(self, fs: FileSystem) -> None:
        async def body() -> None:
            root = (await fs.resolve(".")).display_path.rstrip("/")
            target = await fs.resolve("dir/a.txt")
            assert target.display_path == f"{root}/dir/a.txt"
            await fs.write_text(target, "x")
            assert await names(fs) == ["dir"]
            assert await names(fs, "dir") == ["a.txt"]

        run(body())

    def test_resolve_relative_path_against_cwd(self, fs: FileSystem) -> None:
        async def body() -> None:
            expected = (await fs.resolve("dir/b.txt")).target_key
            directory = await fs.resolve("dir")
            assert (await fs.resolve("b.txt", cwd="dir")).target_key == expected
            assert (await fs.resolve("b.txt", cwd=directory.display_path)).target_key == expected
            assert (await fs.resolve("../dir/b.txt", cwd="dir")).target_key == expected
            top = (await fs.resolve("top.txt")).target_key
            assert (await fs.resolve("../top.txt", cwd="dir")).target_key == top

        run(body())

    def test_resolve_cwd_outside_root_is_sandbox_denied(self, fs: FileSystem) -> None:
        async def body() -> None:
            await expect_error(E.FS_SANDBOX_DENIED, fs.resolve("a.txt", cwd=".."))
            await expect_error(E.FS_SANDBOX_DENIED, fs.resolve("../../a.txt", cwd="dir"))
            await expect_error(E.FS_SANDBOX_DENIED, fs.resolve("a.txt", cwd="~"))

        run(body())

    def test_resolve_absolute_path_inside_root(self, fs: FileSystem) -> None:
        async def body() -> None:
            target = await fs.resolve("dir/a.txt")
            spelled = absolute_spelling(target.display_path)
            assert spelled.startswith("/")
            assert (await fs.resolve(spelled)).target_key == target.target_key

        run(body())

    def test_resolve_full_url_of_same_store(self, fs: FileSystem) -> None:
        async def body() -> None:
            target = await fs.resolve("dir/a.txt")
            url = url_spelling(target.display_path)
            assert (await fs.resolve(url)).target_key == target.target_key

        run(body())

    def test_resolve_display_path_round_trips(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "dir/a.txt", "x")
            for path in (".", "dir", "dir/a.txt", "missing/new.txt"):
                target = await fs.resolve(path)
                again = await fs.resolve(target.display_path)
                assert again == target, path

        run(body())

    def test_resolve_spellings_of_one_object_share_target_key(self, fs: FileSystem) -> None:
        async def body() -> None:
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

        run(body())

    def test_resolve_different_objects_have_different_keys(self, fs: FileSystem) -> None:
        async def body() -> None:
            keys = {(await fs.resolve(p)).target_key for p in ("a.txt", "b.txt", "dir/a.txt")}
            assert len(keys) == 3

        run(body())

    def test_unusual_file_names_round_trip(self, fs: FileSystem) -> None:
        unusual = [
            "with space.txt",
            "ünï©ødé 世界.txt",
            "hash#1.txt",
            "query?x=1.txt",
            "pct%20.txt",
            "glob[1]*.txt",
            "semi;colon,comma.txt",
        ]

        async def body() -> None:
            for name in unusual:
                outcome = await write(fs, f"dir/{name}", name)
                assert await read(fs, f"dir/{name}") == name
                assert await version(fs, f"dir/{name}") == outcome.version
            entries = await fs.list_dir(await fs.resolve("dir"))
            assert [e.name for e in entries] == sorted(unusual)
            for entry in entries:
                assert await fs.read_text(entry.target) == entry.name

        run(body())

    def test_resolve_dotdot_outside_root_is_sandbox_denied(self, fs: FileSystem) -> None:
        async def body() -> None:
            for path in ("..", "../x.txt", "a/../../x.txt", "a/b/../../../x.txt"):
                await expect_error(E.FS_SANDBOX_DENIED, fs.resolve(path))

        run(body())

    def test_resolve_dotdot_staying_inside_root_is_allowed(self, fs: FileSystem) -> None:
        async def body() -> None:
            expected = (await fs.resolve("b.txt")).target_key
            assert (await fs.resolve("a/../b.txt")).target_key == expected

        run(body())

    def test_resolve_absolute_path_outside_root_is_sandbox_denied(self, fs: FileSystem) -> None:
        async def body() -> None:
            root = (await fs.resolve(".")).display_path.rstrip("/")
            outside = [f"{root}-sibling/x.txt", f"{root}/../x.txt"]
            parent = root.rsplit("/", 1)[0]
            if parent and not parent.endswith(":/"):
                outside.append(f"{parent}/elsewhere.txt")
            for path in outside:
                for spelling in (path, absolute_spelling(path), url_spelling(path)):
                    await expect_error(E.FS_SANDBOX_DENIED, fs.resolve(spelling))

        run(body())

    def test_resolve_leading_tilde_is_sandbox_denied(self, fs: FileSystem) -> None:
        async def body() -> None:
            for path in ("~", "~/a.txt", "~root/a.txt"):
                await expect_error(E.FS_SANDBOX_DENIED, fs.resolve(path))

        run(body())

    def test_resolve_backslash_is_sandbox_denied(self, fs: FileSystem) -> None:
        async def body() -> None:
            for path in ("dir\\a.txt", "..\\x.txt", "a.txt\\"):
                await expect_error(E.FS_SANDBOX_DENIED, fs.resolve(path))

        run(body())

    def test_resolve_nul_byte_is_sandbox_denied(self, fs: FileSystem) -> None:
        async def body() -> None:
            for path in ("a\x00b.txt", "\x00", "a.txt\x00.png"):
                await expect_error(E.FS_SANDBOX_DENIED, fs.resolve(path))

        run(body())

    def test_resolve_other_store_url_is_sandbox_denied(self, fs: FileSystem) -> None:
        async def body() -> None:
            root = (await fs.resolve(".")).display_path
            others = ["https://example.com/a.txt"]
            others.append(
                "gs://other-bucket/a.txt" if root.startswith("s3") else "s3://other/a.txt"
            )
            others.append(
                "file:///etc/passwd" if root.startswith("memory://") else "memory://other/a.txt"
            )
            for path in others:
                await expect_error(E.FS_SANDBOX_DENIED, fs.resolve(path))

        run(body())


class StatSuite:
    """``stat`` and ``lstat``: metadata only, ``None`` when absent."""

    def test_stat_absent_is_none(self, fs: FileSystem) -> None:
        async def body() -> None:
            assert await fs.stat(await fs.resolve("missing.txt")) is None
            assert await fs.stat(await fs.resolve("missing/deeper.txt")) is None

        run(body())

    def test_stat_file_reports_type_size_and_version(self, fs: FileSystem) -> None:
        async def body() -> None:
            outcome = await write(fs, "a.txt", "héllo\n")
            info = await fs.stat(await fs.resolve("a.txt"))
            assert info is not None
            assert info.type == "file"
            assert info.size == len("héllo\n".encode())
            assert info.version == outcome.version

        run(body())

    def test_stat_directory_reports_directory(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "dir/sub/a.txt", "x")
            for path in ("dir", "dir/sub"):
                info = await fs.stat(await fs.resolve(path))
                assert info is not None, path
                assert info.type == "directory", path

        run(body())

    def test_stat_version_is_stable_while_file_is_unchanged(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "a.txt", "x")
            first = await version(fs, "a.txt")
            await read(fs, "a.txt")
            await names(fs)
            assert await version(fs, "a.txt") == first

        run(body())

    def test_stat_below_a_file_is_none(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "a.txt", "x")
            assert await fs.stat(await fs.resolve("a.txt/child.txt")) is None
            assert await fs.lstat("a.txt/child.txt") is None

        run(body())

    def test_lstat_absent_is_none(self, fs: FileSystem) -> None:
        async def body() -> None:
            assert await fs.lstat("missing.txt") is None

        run(body())

    def test_lstat_regular_file_matches_stat(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "dir/a.txt", "abc")
            info = await fs.lstat("dir/a.txt")
            assert info is not None
            assert (info.type, info.size) == ("file", 3)
            assert info.version == await version(fs, "dir/a.txt")
            same = await fs.lstat("a.txt", cwd="dir")
            assert same == info

        run(body())

    def test_lstat_directory(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "dir/a.txt", "abc")
            info = await fs.lstat("dir")
            assert info is not None
            assert info.type == "directory"

        run(body())

    def test_lstat_outside_root_is_sandbox_denied(self, fs: FileSystem) -> None:
        async def body() -> None:
            await expect_error(E.FS_SANDBOX_DENIED, fs.lstat("../x.txt"))
            await expect_error(E.FS_SANDBOX_DENIED, fs.lstat("~/x.txt"))

        run(body())


class ReadSuite:
    """``read_text``: strict UTF-8, BOM excluded, precise failure codes."""

    def test_read_text_returns_utf8_text(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "a.txt", MIXED_TEXT)
            assert await read(fs, "a.txt") == MIXED_TEXT

        run(body())

    def test_read_text_of_empty_file_is_empty(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "empty.txt", "")
            assert await read(fs, "empty.txt") == ""

        run(body())

    def test_read_text_excludes_bom(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("bom.txt", BOM + "héllo\n".encode())
        raw.write_bytes("only-bom.txt", BOM)

        async def body() -> None:
            assert await read(fs, "bom.txt") == "héllo\n"
            assert await read(fs, "only-bom.txt") == ""

        run(body())

    def test_read_text_keeps_line_endings(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("crlf.txt", b"a\r\nb\nc\r\n")

        async def body() -> None:
            assert await read(fs, "crlf.txt") == "a\r\nb\nc\r\n"

        run(body())

    def test_read_text_nul_byte_is_not_text(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("bin.dat", b"abc\x00def")

        async def body() -> None:
            await expect_error(E.FS_NOT_TEXT, read(fs, "bin.dat"))

        run(body())

    def test_read_text_invalid_utf8_is_not_text(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("latin1.txt", "café".encode("latin-1"))
        raw.write_bytes("cut.txt", "ab€".encode()[:-1])

        async def body() -> None:
            await expect_error(E.FS_NOT_TEXT, read(fs, "latin1.txt"))
            await expect_error(E.FS_NOT_TEXT, read(fs, "cut.txt"))

        run(body())

    def test_read_text_directory_is_not_regular_file(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "dir/a.txt", "x")
            await expect_error(E.FS_NOT_REGULAR_FILE, read(fs, "dir"))

        run(body())

    def test_read_text_missing_is_not_found(self, fs: FileSystem) -> None:
        async def body() -> None:
            error = await expect_error(E.FS_NOT_FOUND, read(fs, "missing.txt"))
            assert isinstance(error, FileNotFoundError)
            await expect_error(E.FS_NOT_FOUND, read(fs, "missing/deeper.txt"))

        run(body())


class StreamSuite:
    """``stream_text``: the info of exactly the streamed bytes, text in bounded chunks."""

    def test_stream_info_version_equals_stat_version(self, fs: FileSystem) -> None:
        async def body() -> None:
            outcome = await write(fs, "a.txt", "héllo\n")
            target = await fs.resolve("a.txt")
            async with fs.stream_text(target) as stream:
                info = stream.info
                text = "".join([chunk async for chunk in stream])
            assert text == "héllo\n"
            assert info.type == "file"
            assert info.size == len("héllo\n".encode())
            assert info.version == outcome.version
            assert info.version == await version(fs, "a.txt")

        run(body())

    def test_stream_chunks_join_to_the_text(self, fs: FileSystem) -> None:
        async def body() -> None:
            content = MIXED_TEXT * 50
            await write(fs, "a.txt", content)
            text, streamed_version = await read_versioned(fs, await fs.resolve("a.txt"))
            assert text == content
            assert streamed_version == await version(fs, "a.txt")

        run(body())

    def test_stream_multi_mib_file_in_several_chunks(self, fs: FileSystem) -> None:
        content = "x" + MIXED_TEXT * (3 * 1024 * 1024 // len(MIXED_TEXT.encode()))

        async def body() -> None:
            await write(fs, "big.txt", content)
            async with fs.stream_text(await fs.resolve("big.txt")) as stream:
                chunks = [chunk async for chunk in stream]
                size = stream.info.size
            assert len(chunks) >= 2, "a multi-MiB file must stream in several chunks"
            assert max(len(chunk) for chunk in chunks) < len(content)
            assert "".join(chunks) == content
            assert size == len(content.encode())

        run(body())

    def test_stream_excludes_bom(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("bom.txt", BOM + b"abc")

        async def body() -> None:
            text, _ = await read_versioned(fs, await fs.resolve("bom.txt"))
            assert text == "abc"

        run(body())

    def test_stream_missing_is_not_found(self, fs: FileSystem) -> None:
        async def body() -> None:
            await expect_error(E.FS_NOT_FOUND, read_versioned(fs, await fs.resolve("nope.txt")))

        run(body())

    def test_stream_directory_is_not_regular_file(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "dir/a.txt", "x")
            await expect_error(E.FS_NOT_REGULAR_FILE, read_versioned(fs, await fs.resolve("dir")))

        run(body())

    def test_stream_binary_is_not_text(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("bin.dat", b"abc\x00def")
        raw.write_bytes("latin1.txt", "café".encode("latin-1"))

        async def body() -> None:
            for path in ("bin.dat", "latin1.txt"):
                await expect_error(E.FS_NOT_TEXT, read_versioned(fs, await fs.resolve(path)))

        run(body())


class ListDirSuite:
    """``list_dir``: direct children, sorted, typed; scratch files never shown."""

    def test_list_dir_of_fresh_root_is_empty(self, fs: FileSystem) -> None:
        async def body() -> None:
            assert await fs.list_dir(await fs.resolve(".")) == []

        run(body())

    def test_list_dir_direct_children_sorted_with_types(self, fs: FileSystem) -> None:
        async def body() -> None:
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

        run(body())

    def test_list_dir_entries_carry_resolvable_targets(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "dir/a.txt", "héllo")
            await write(fs, "dir/sub/b.txt", "b")
            for entry in await fs.list_dir(await fs.resolve("dir")):
                by_name = await fs.resolve(f"dir/{entry.name}")
                assert entry.target.target_key == by_name.target_key
                assert (await fs.resolve(entry.target.display_path)) == entry.target
                if entry.type == "file":
                    info = await fs.stat(entry.target)
                    assert info is not None
                    assert entry.version in (None, info.version)
                    assert entry.size in (None, len("héllo".encode()))

        run(body())

    def test_list_dir_missing_is_not_found(self, fs: FileSystem) -> None:
        async def body() -> None:
            await expect_error(E.FS_NOT_FOUND, fs.list_dir(await fs.resolve("missing")))

        run(body())

    def test_list_dir_on_file_is_not_directory(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "a.txt", "x")
            await expect_error(E.FS_NOT_DIRECTORY, fs.list_dir(await fs.resolve("a.txt")))

        run(body())

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

    def test_writes_leave_no_stray_files_in_the_store(self, fs: FileSystem, raw: RawStore) -> None:
        async def body() -> None:
            outcome = await write(fs, "dir/a.txt", "1")
            await write(fs, "dir/a.txt", "2", ReplaceIfVersion(outcome.version))
            await write(fs, "dir/b.txt", "3", CreateIfAbsent())
            await fs.edit_text(await fs.resolve("dir/b.txt"), FsEditRequest("3", "4"))
            await expect_error(E.FS_NOT_OBSERVED, write(fs, "dir/b.txt", "5", CreateIfAbsent()))
            stale = ReplaceIfVersion(outcome.version)
            await expect_error(E.FS_STALE_VERSION, write(fs, "dir/a.txt", "6", stale))

        run(body())
        assert raw.names("") == ["dir"]
        assert raw.names("dir") == ["a.txt", "b.txt"]


class WriteSuite:
    """``write_text``: atomic create-or-replace under a store-checked guard."""

    def test_write_creates_file(self, fs: FileSystem, raw: RawStore) -> None:
        async def body() -> None:
            outcome = await write(fs, "a.txt", MIXED_TEXT)
            assert outcome.operation == "create"
            assert outcome.before is None
            assert outcome.after == MIXED_TEXT
            assert await read(fs, "a.txt") == MIXED_TEXT

        run(body())
        assert raw.read_bytes("a.txt") == MIXED_TEXT.encode()

    def test_write_creates_missing_parent_directories(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "a/b/c/d.txt", "deep")
            assert await read(fs, "a/b/c/d.txt") == "deep"
            for path in ("a", "a/b", "a/b/c"):
                info = await fs.stat(await fs.resolve(path))
                assert info is not None
                assert info.type == "directory"

        run(body())

    def test_write_unconditional_replaces_existing_file(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "a.txt", "old")
            outcome = await write(fs, "a.txt", "new content")
            assert outcome.operation == "update"
            assert outcome.before == "old"
            assert outcome.after == "new content"
            assert await read(fs, "a.txt") == "new content"

        run(body())

    def test_write_create_if_absent_creates_missing_file(self, fs: FileSystem) -> None:
        async def body() -> None:
            outcome = await write(fs, "dir/a.txt", "new", CreateIfAbsent())
            assert outcome.operation == "create"
            assert outcome.before is None
            assert outcome.version == await version(fs, "dir/a.txt")
            assert await read(fs, "dir/a.txt") == "new"

        run(body())

    def test_write_create_if_absent_on_existing_is_not_observed(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        async def body() -> FsVersion:
            await write(fs, "a.txt", "original")
            before = await version(fs, "a.txt")
            await expect_error(E.FS_NOT_OBSERVED, write(fs, "a.txt", "clobber", CreateIfAbsent()))
            assert await version(fs, "a.txt") == before
            return before

        run(body())
        assert raw.read_bytes("a.txt") == b"original"

    def test_write_replace_if_version_current_succeeds(self, fs: FileSystem) -> None:
        async def body() -> None:
            created = await write(fs, "a.txt", "one")
            outcome = await write(fs, "a.txt", "two", ReplaceIfVersion(created.version))
            assert outcome.operation == "update"
            assert outcome.before == "one"
            assert outcome.version != created.version
            assert await read(fs, "a.txt") == "two"

        run(body())

    def test_write_replace_if_version_stale_is_stale_version(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        async def body() -> None:
            first = await write(fs, "a.txt", "one")
            second = await write(fs, "a.txt", "two")
            guard = ReplaceIfVersion(first.version)
            await expect_error(E.FS_STALE_VERSION, write(fs, "a.txt", "three", guard))
            assert await version(fs, "a.txt") == second.version

        run(body())
        assert raw.read_bytes("a.txt") == b"two"

    def test_write_replace_if_version_of_missing_file_is_stale_version(
        self, fs: FileSystem
    ) -> None:
        async def body() -> None:
            other = await write(fs, "other.txt", "x")
            guard = ReplaceIfVersion(other.version)
            await expect_error(E.FS_STALE_VERSION, write(fs, "missing.txt", "x", guard))
            assert await fs.stat(await fs.resolve("missing.txt")) is None

        run(body())

    def test_write_replace_if_version_of_deleted_file_is_stale_version(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        created = run(write(fs, "a.txt", "one"))
        raw.delete("a.txt")

        async def body() -> None:
            guard = ReplaceIfVersion(created.version)
            await expect_error(E.FS_STALE_VERSION, write(fs, "a.txt", "two", guard))
            assert await fs.stat(await fs.resolve("a.txt")) is None

        run(body())

    def test_write_returns_version_equal_to_later_stat(self, fs: FileSystem) -> None:
        async def check(outcome: FsWriteOutcome) -> FsVersion:
            assert outcome.version == await version(fs, "a.txt")
            _, streamed = await read_versioned(fs, await fs.resolve("a.txt"))
            assert outcome.version == streamed
            return outcome.version

        async def body() -> None:
            await check(await write(fs, "a.txt", "one", CreateIfAbsent()))
            current = await check(await write(fs, "a.txt", "two"))
            await check(await write(fs, "a.txt", "three", ReplaceIfVersion(current)))

        run(body())

    def test_write_new_content_of_same_size_changes_version(self, fs: FileSystem) -> None:
        async def body() -> None:
            seen = [(await write(fs, "a.txt", text)).version for text in ("aaaa", "bbbb", "cccc")]
            assert len(set(seen)) == 3

        run(body())

    def test_write_identical_content_still_changes_version(
        self, fs: FileSystem, unique_versions_per_write: bool
    ) -> None:
        if not unique_versions_per_write:
            pytest.skip("versions are derived from content on this store")

        async def body() -> None:
            seen = [(await write(fs, "a.txt", "same")).version for _ in range(5)]
            assert len(set(seen)) == 5, f"a rewrite of identical bytes repeated a version: {seen}"
            stale = ReplaceIfVersion(seen[0])
            await expect_error(E.FS_STALE_VERSION, write(fs, "a.txt", "same", stale))

        run(body())

    def test_write_outcome_before_is_none_or_whole_previous_text(
        self, fs: FileSystem, reopen_fs: FileSystemOpener
    ) -> None:
        small = reopen_fs(max_edit_bytes=64)
        old = "0123456789" * 20

        async def body() -> None:
            await write(small, "big.txt", old)
            outcome = await write(small, "big.txt", "new")
            assert outcome.operation == "update"
            assert outcome.before in (None, old), f"before is a fragment: {outcome.before!r}"
            assert await read(fs, "big.txt") == "new"

        run(body())

    def test_write_preserves_bom_on_overwrite(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("bom.txt", BOM + b"old\n")

        async def body() -> None:
            outcome = await write(fs, "bom.txt", "new\n")
            assert outcome.before == "old\n"
            assert await read(fs, "bom.txt") == "new\n"

        run(body())
        assert raw.read_bytes("bom.txt") == BOM + b"new\n"

    def test_write_does_not_add_bom_to_new_file(self, fs: FileSystem, raw: RawStore) -> None:
        run(write(fs, "plain.txt", "plain\n"))
        assert raw.read_bytes("plain.txt") == b"plain\n"

    def test_write_stores_line_endings_byte_for_byte(self, fs: FileSystem, raw: RawStore) -> None:
        content = "a\r\nb\nc\rd\r\n\r\n"
        run(write(fs, "a.txt", content))
        assert raw.read_bytes("a.txt") == content.encode()

    def test_write_onto_directory_is_not_regular_file(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "dir/a.txt", "x")
            await expect_error(E.FS_NOT_REGULAR_FILE, write(fs, "dir", "clobber"))
            assert await names(fs, "dir") == ["a.txt"]

        run(body())

    def test_write_below_a_file_is_not_directory(self, fs: FileSystem, raw: RawStore) -> None:
        async def body() -> None:
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

        run(body())
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


class EditSuite:
    """``edit_text``: literal replacement, version first, bytes outside the match untouched."""

    def test_edit_replaces_one_occurrence(self, fs: FileSystem, raw: RawStore) -> None:
        async def body() -> None:
            await write(fs, "a.txt", "alpha\nbeta\ngamma\n")
            target = await fs.resolve("a.txt")
            outcome = await fs.edit_text(target, FsEditRequest("beta", "BETA"))
            assert outcome.replacements == 1
            assert outcome.before == "alpha\nbeta\ngamma\n"
            assert outcome.after == "alpha\nBETA\ngamma\n"
            assert outcome.version == await version(fs, "a.txt")

        run(body())
        assert raw.read_bytes("a.txt") == b"alpha\nBETA\ngamma\n"

    def test_edit_with_current_version_succeeds(self, fs: FileSystem) -> None:
        async def body() -> None:
            created = await write(fs, "a.txt", "x = 1\n")
            target = await fs.resolve("a.txt")
            outcome = await fs.edit_text(target, FsEditRequest("1", "2"), created.version)
            assert outcome.version != created.version
            assert await read(fs, "a.txt") == "x = 2\n"

        run(body())

    def test_edit_checks_version_before_matching(self, fs: FileSystem) -> None:
        async def body() -> None:
            old = await write(fs, "a.txt", "one\n")
            current = await write(fs, "a.txt", "two\n")
            target = await fs.resolve("a.txt")
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

        run(body())

    def test_edit_stale_version_leaves_file_unchanged(self, fs: FileSystem, raw: RawStore) -> None:
        async def body() -> None:
            old = await write(fs, "a.txt", "one\n")
            current = await write(fs, "a.txt", "one two\n")
            target = await fs.resolve("a.txt")
            request = FsEditRequest("one", "1")
            await expect_error(E.FS_STALE_VERSION, fs.edit_text(target, request, old.version))
            assert await version(fs, "a.txt") == current.version

        run(body())
        assert raw.read_bytes("a.txt") == b"one two\n"

    def test_edit_empty_old_string_is_edit_not_found(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "a.txt", "text\n")
            target = await fs.resolve("a.txt")
            await expect_error(E.FS_EDIT_NOT_FOUND, fs.edit_text(target, FsEditRequest("", "x")))
            await write(fs, "empty.txt", "")
            empty = await fs.resolve("empty.txt")
            await expect_error(E.FS_EDIT_NOT_FOUND, fs.edit_text(empty, FsEditRequest("", "x")))
            assert await read(fs, "a.txt") == "text\n"

        run(body())

    def test_edit_without_match_is_edit_not_found(self, fs: FileSystem) -> None:
        async def body() -> None:
            created = await write(fs, "a.txt", "Hello world\n")
            target = await fs.resolve("a.txt")
            for missing in ("hello", "Hello  world", "world\n\n"):
                await expect_error(
                    E.FS_EDIT_NOT_FOUND, fs.edit_text(target, FsEditRequest(missing, "x"))
                )
            assert await version(fs, "a.txt") == created.version

        run(body())

    def test_edit_ambiguous_match_is_ambiguous_edit(self, fs: FileSystem) -> None:
        async def body() -> None:
            created = await write(fs, "a.txt", "x = 1\ny = 1\n")
            target = await fs.resolve("a.txt")
            await expect_error(E.FS_AMBIGUOUS_EDIT, fs.edit_text(target, FsEditRequest("1", "2")))
            assert await version(fs, "a.txt") == created.version
            assert await read(fs, "a.txt") == "x = 1\ny = 1\n"

        run(body())

    def test_edit_replace_all_replaces_every_occurrence(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "a.txt", "foo bar foo\nfoo\n")
            target = await fs.resolve("a.txt")
            outcome = await fs.edit_text(target, FsEditRequest("foo", "qux", replace_all=True))
            assert outcome.replacements == 3
            assert outcome.after == "qux bar qux\nqux\n"
            assert await read(fs, "a.txt") == "qux bar qux\nqux\n"
            once = await fs.edit_text(target, FsEditRequest("bar", "baz", replace_all=True))
            assert once.replacements == 1

        run(body())

    def test_edit_missing_file_is_stale_version(self, fs: FileSystem) -> None:
        async def body() -> None:
            other = await write(fs, "other.txt", "x")
            target = await fs.resolve("missing.txt")
            request = FsEditRequest("x", "y")
            await expect_error(E.FS_STALE_VERSION, fs.edit_text(target, request))
            await expect_error(E.FS_STALE_VERSION, fs.edit_text(target, request, other.version))
            assert await fs.stat(target) is None

        run(body())

    def test_edit_file_over_max_edit_bytes_is_too_large(
        self, fs: FileSystem, reopen_fs: FileSystemOpener
    ) -> None:
        small = reopen_fs(max_edit_bytes=100)

        async def body() -> None:
            await write(fs, "a.txt", "x" * 100 + "\n")
            before = await version(fs, "a.txt")
            target = await small.resolve("a.txt")
            await expect_error(E.FS_TOO_LARGE, small.edit_text(target, FsEditRequest("\n", "")))
            assert await version(fs, "a.txt") == before

        run(body())

    def test_edit_result_over_max_edit_bytes_is_too_large(
        self, fs: FileSystem, reopen_fs: FileSystemOpener
    ) -> None:
        small = reopen_fs(max_edit_bytes=100)

        async def body() -> None:
            await write(fs, "a.txt", "x" * 90 + "!")
            before = await version(fs, "a.txt")
            target = await small.resolve("a.txt")
            grow = FsEditRequest("!", "y" * 20)
            await expect_error(E.FS_TOO_LARGE, small.edit_text(target, grow))
            assert await version(fs, "a.txt") == before
            assert await read(fs, "a.txt") == "x" * 90 + "!"

        run(body())

    def test_edit_at_exactly_max_edit_bytes_succeeds(
        self, fs: FileSystem, reopen_fs: FileSystemOpener
    ) -> None:
        small = reopen_fs(max_edit_bytes=100)

        async def body() -> None:
            await write(fs, "a.txt", "x" * 99 + "!")
            target = await small.resolve("a.txt")
            outcome = await small.edit_text(target, FsEditRequest("!", "?"))
            assert outcome.after == "x" * 99 + "?"

        run(body())

    def test_edit_preserves_crlf(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("a.txt", b"one\r\ntwo\r\nthree\r\n")

        async def body() -> None:
            outcome = await fs.edit_text(await fs.resolve("a.txt"), FsEditRequest("two", "2"))
            assert outcome.after == "one\r\n2\r\nthree\r\n"

        run(body())
        assert raw.read_bytes("a.txt") == b"one\r\n2\r\nthree\r\n"

    def test_edit_leaves_mixed_line_endings_byte_identical(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        raw.write_bytes("a.txt", b"a\r\nb\nc\r\nd\ne\r")

        async def body() -> None:
            await fs.edit_text(await fs.resolve("a.txt"), FsEditRequest("c", "C"))

        run(body())
        assert raw.read_bytes("a.txt") == b"a\r\nb\nC\r\nd\ne\r"

    def test_edit_preserves_bom(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("a.txt", BOM + b"key = old\n")

        async def body() -> None:
            outcome = await fs.edit_text(await fs.resolve("a.txt"), FsEditRequest("old", "new"))
            assert outcome.before == "key = old\n"
            assert outcome.after == "key = new\n"

        run(body())
        assert raw.read_bytes("a.txt") == BOM + b"key = new\n"

    def test_edit_preserves_final_newline(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("with.txt", b"a\nb\n")
        raw.write_bytes("without.txt", b"a\nb")

        async def body() -> None:
            await fs.edit_text(await fs.resolve("with.txt"), FsEditRequest("b", "B"))
            await fs.edit_text(await fs.resolve("without.txt"), FsEditRequest("b", "B"))

        run(body())
        assert raw.read_bytes("with.txt") == b"a\nB\n"
        assert raw.read_bytes("without.txt") == b"a\nB"

    def test_edit_new_string_line_breaks_take_crlf_in_crlf_file(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        raw.write_bytes("a.txt", b"one\r\ntwo\r\nthree\n")

        async def body() -> None:
            request = FsEditRequest("two", "2a\n2b\r\n2c")
            await fs.edit_text(await fs.resolve("a.txt"), request)

        run(body())
        assert raw.read_bytes("a.txt") == b"one\r\n2a\r\n2b\r\n2c\r\nthree\n"

    def test_edit_new_string_line_breaks_take_lf_in_lf_file(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        raw.write_bytes("a.txt", b"one\ntwo\nthree\r\n")

        async def body() -> None:
            request = FsEditRequest("two", "2a\r\n2b\n2c")
            await fs.edit_text(await fs.resolve("a.txt"), request)

        run(body())
        assert raw.read_bytes("a.txt") == b"one\n2a\n2b\n2c\nthree\r\n"

    def test_edit_old_string_with_crlf_matches_lf_file(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("a.txt", b"def f():\n    return 1\n")

        async def body() -> None:
            request = FsEditRequest("def f():\r\n    return 1", "def f():\r\n    return 2")
            outcome = await fs.edit_text(await fs.resolve("a.txt"), request)
            assert outcome.replacements == 1

        run(body())
        assert raw.read_bytes("a.txt") == b"def f():\n    return 2\n"

    def test_edit_old_string_with_lf_matches_crlf_file(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("a.txt", b"def f():\r\n    return 1\r\n")

        async def body() -> None:
            request = FsEditRequest("():\n    return 1", "():\n    return 2")
            await fs.edit_text(await fs.resolve("a.txt"), request)

        run(body())
        assert raw.read_bytes("a.txt") == b"def f():\r\n    return 2\r\n"

    def test_edit_binary_file_is_not_text(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("bin.dat", b"abc\x00def")

        async def body() -> None:
            target = await fs.resolve("bin.dat")
            await expect_error(E.FS_NOT_TEXT, fs.edit_text(target, FsEditRequest("abc", "x")))

        run(body())
        assert raw.read_bytes("bin.dat") == b"abc\x00def"

    def test_edit_old_version_is_stale_after_an_edit(self, fs: FileSystem) -> None:
        async def body() -> None:
            created = await write(fs, "a.txt", "n=1\n")
            target = await fs.resolve("a.txt")
            edited = await fs.edit_text(target, FsEditRequest("1", "2"), created.version)
            assert edited.version == await version(fs, "a.txt")
            again = FsEditRequest("2", "3")
            await expect_error(E.FS_STALE_VERSION, fs.edit_text(target, again, created.version))
            await expect_error(
                E.FS_STALE_VERSION,
                fs.write_text(target, "n=9\n", ReplaceIfVersion(created.version)),
            )
            assert await read(fs, "a.txt") == "n=2\n"

        run(body())


class ReadOnlySuite:
    """Read-only mode: every mutation is ``FS_SANDBOX_DENIED`` and changes nothing."""

    def test_read_only_capability_is_declared(
        self, fs: FileSystem, fs_read_only: FileSystem
    ) -> None:
        assert fs_read_only.capabilities.read_only is True
        assert fs.capabilities.read_only is False

    def test_read_only_still_reads(self, fs: FileSystem, fs_read_only: FileSystem) -> None:
        async def body() -> None:
            outcome = await write(fs, "dir/a.txt", "hello\n")
            ro = fs_read_only
            assert await read(ro, "dir/a.txt") == "hello\n"
            assert await version(ro, "dir/a.txt") == outcome.version
            assert await names(ro, "dir") == ["a.txt"]
            info = await ro.lstat("dir/a.txt")
            assert info is not None
            _, streamed = await read_versioned(ro, await ro.resolve("dir/a.txt"))
            assert streamed == outcome.version

        run(body())

    def test_read_only_refuses_every_mutation(
        self, fs: FileSystem, fs_read_only: FileSystem, raw: RawStore
    ) -> None:
        async def body() -> None:
            current = (await write(fs, "a.txt", "keep\n")).version
            ro = fs_read_only
            existing = await ro.resolve("a.txt")
            fresh = await ro.resolve("new/b.txt")
            edit = FsEditRequest("keep", "x")
            attempts: dict[str, Callable[[], Awaitable[object]]] = {
                "write": lambda: ro.write_text(existing, "x"),
                "write existing CreateIfAbsent": lambda: ro.write_text(
                    existing, "x", CreateIfAbsent()
                ),
                "write ReplaceIfVersion": lambda: ro.write_text(
                    existing, "x", ReplaceIfVersion(current)
                ),
                "write new file": lambda: ro.write_text(fresh, "x"),
                "write new CreateIfAbsent": lambda: ro.write_text(fresh, "x", CreateIfAbsent()),
                "edit": lambda: ro.edit_text(existing, edit),
                "edit guarded": lambda: ro.edit_text(existing, edit, current),
                "edit without match": lambda: ro.edit_text(existing, FsEditRequest("?", "x")),
            }
            for label, attempt in attempts.items():
                try:
                    await expect_error(E.FS_SANDBOX_DENIED, attempt())
                except AssertionError as exc:
                    raise AssertionError(f"{label}: {exc}") from exc
            assert await version(fs, "a.txt") == current
            assert await fs.stat(fresh) is None
            assert await names(fs) == ["a.txt"]

        run(body())
        assert raw.read_bytes("a.txt") == b"keep\n"


class CapabilitySuite:
    """``capabilities``: declared flags, and what they promise."""

    def test_capabilities_are_booleans_and_writable_by_default(self, fs: FileSystem) -> None:
        caps = fs.capabilities
        assert isinstance(caps.atomic_conditional_write, bool)
        assert caps.read_only is False

    def test_capabilities_atomic_conditional_write_as_declared(
        self, fs: FileSystem, expected_atomic_conditional_write: bool | None
    ) -> None:
        if expected_atomic_conditional_write is None:
            pytest.skip("the backend does not pin expected_atomic_conditional_write")
        assert fs.capabilities.atomic_conditional_write is expected_atomic_conditional_write


class ConcurrencySuite:
    """One ``FileSystem`` shared by tasks and threads: guards lose no update (every store)."""

    def test_tasks_guarded_edit_increments_are_exact(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "counter.txt", "count=0\n")
            target = await fs.resolve("counter.txt")
            await increment_many_tasks(fs, target, tasks=8, times=3, via="edit")
            assert counter_value(await fs.read_text(target)) == 24

        run(body())

    def test_tasks_guarded_write_increments_are_exact(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "counter.txt", "count=0\n")
            target = await fs.resolve("counter.txt")
            await increment_many_tasks(fs, target, tasks=8, times=3, via="write")
            assert counter_value(await fs.read_text(target)) == 24

        run(body())

    def test_threads_with_own_loops_sharing_one_filesystem_are_exact(self, fs: FileSystem) -> None:
        run(write(fs, "counter.txt", "count=0\n"))
        target = run(fs.resolve("counter.txt"))

        def work(i: int) -> None:
            via = "edit" if i % 2 == 0 else "write"
            asyncio.run(increment_many_tasks(fs, target, tasks=2, times=3, via=via))

        in_threads(4, work)
        assert counter_value(run(fs.read_text(target))) == 24

    def test_two_writers_from_one_version_exactly_one_wins(self, fs: FileSystem) -> None:
        async def body() -> None:
            for content in ("same\n", None):
                base = await write(fs, "a.txt", "base\n")
                guard = ReplaceIfVersion(base.version)
                first = await write(fs, "a.txt", content or "first\n", guard)
                await expect_error(
                    E.FS_STALE_VERSION, write(fs, "a.txt", content or "second\n", guard)
                )
                assert await version(fs, "a.txt") == first.version
                assert await read(fs, "a.txt") == (content or "first\n")

        run(body())

    def test_two_edits_from_one_version_exactly_one_wins(self, fs: FileSystem) -> None:
        async def body() -> None:
            base = await write(fs, "a.txt", "value=1\n")
            target = await fs.resolve("a.txt")
            await fs.edit_text(target, FsEditRequest("value=1", "value=2"), base.version)
            await expect_error(
                E.FS_STALE_VERSION,
                fs.edit_text(target, FsEditRequest("value", "VALUE"), base.version),
            )
            assert await read(fs, "a.txt") == "value=2\n"

        run(body())

    def test_concurrent_writers_from_one_version_exactly_one_wins(self, fs: FileSystem) -> None:
        base = run(write(fs, "a.txt", "base\n"))
        barrier = threading.Barrier(4)

        def attempt(i: int) -> FsErrorCode | None:
            # Identical bytes on purpose: success must never be decided by content.
            async def body() -> FsErrorCode | None:
                target = await fs.resolve("a.txt")
                barrier.wait()
                try:
                    await fs.write_text(target, "same\n", ReplaceIfVersion(base.version))
                except FsError as exc:
                    return exc.code
                return None

            return asyncio.run(body())

        codes = in_threads(4, attempt)
        assert Counter(codes) == {None: 1, E.FS_STALE_VERSION: 3}, codes

    def test_concurrent_create_if_absent_exactly_one_wins(self, fs: FileSystem) -> None:
        barrier = threading.Barrier(4)

        def attempt(i: int) -> FsErrorCode | None:
            async def body() -> FsErrorCode | None:
                target = await fs.resolve("new/a.txt")
                barrier.wait()
                try:
                    await fs.write_text(target, f"writer {i}\n", CreateIfAbsent())
                except FsError as exc:
                    return exc.code
                return None

            return asyncio.run(body())

        codes = in_threads(4, attempt)
        assert Counter(codes) == {None: 1, E.FS_NOT_OBSERVED: 3}, codes
        assert run(read(fs, "new/a.txt")) == f"writer {codes.index(None)}\n"


class CrossProcessSuite:
    """Separate processes: the store's conditional write is the only arbiter.

    Runs only where ``capabilities.atomic_conditional_write`` is True and the
    backend gives an ``fs_spec`` another process can mount.
    """

    @pytest.fixture
    def shared_spec(self, fs: FileSystem, fs_spec: FsSpec | None) -> FsSpec:
        """The spec worker processes mount; skips unless cross-process guards are promised."""
        if not fs.capabilities.atomic_conditional_write:
            pytest.skip("atomic_conditional_write is False: no cross-process promise")
        if fs_spec is None:
            pytest.skip("the backend gives no fs_spec for other processes")
        return fs_spec

    def test_processes_guarded_edit_increments_are_exact(
        self, fs: FileSystem, shared_spec: FsSpec
    ) -> None:
        run(write(fs, "counter.txt", "count=0\n"))
        job = {"op": "increment", "path": "counter.txt", "times": 8, "via": "edit"}
        results = run_workers(shared_spec, [job] * 4)
        for result in results:
            assert result.returncode == 0, result.stderr
        assert counter_value(run(read(fs, "counter.txt"))) == 32

    def test_processes_writing_from_one_version_exactly_one_wins(
        self, fs: FileSystem, shared_spec: FsSpec
    ) -> None:
        base = run(write(fs, "a.txt", "base\n"))
        job = {"op": "write_if_version", "path": "a.txt", "content": "same\n"}
        results = run_workers(shared_spec, [{**job, "version": base.version}] * 4)
        outcomes = [result.result for result in results]
        assert all(outcome is not None for outcome in outcomes), [r.stderr for r in results]
        assert sum(1 for o in outcomes if o and o["ok"]) == 1, outcomes
        assert {o["code"] for o in outcomes if o and not o["ok"]} == {E.FS_STALE_VERSION.value}
        assert run(read(fs, "a.txt")) == "same\n"

    def test_processes_create_if_absent_exactly_one_wins(
        self, fs: FileSystem, shared_spec: FsSpec
    ) -> None:
        jobs = [{"op": "create", "path": "new.txt", "content": f"writer {i}\n"} for i in range(4)]
        results = run_workers(shared_spec, jobs)
        outcomes = [result.result for result in results]
        assert all(outcome is not None for outcome in outcomes), [r.stderr for r in results]
        winners = [i for i, o in enumerate(outcomes) if o and o["ok"]]
        assert len(winners) == 1, outcomes
        assert {o["code"] for o in outcomes if o and not o["ok"]} == {E.FS_NOT_OBSERVED.value}
        assert run(read(fs, "new.txt")) == f"writer {winners[0]}\n"


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


class LocalDiskSuite:
    """Local disk only (``native_root`` given): file modes, and a writer killed mid-write."""

    @pytest.fixture
    def local_root(self, native_root: Path | None) -> Path:
        """The OS directory of the root; skips on stores that are not local disk."""
        if native_root is None:
            pytest.skip("not local disk (native_root is None)")
        return native_root

    def test_write_preserves_file_mode(self, fs: FileSystem, local_root: Path) -> None:
        run(write(fs, "script.sh", "#!/bin/sh\n"))
        (local_root / "script.sh").chmod(0o751)

        async def body() -> None:
            await write(fs, "script.sh", "#!/bin/sh\necho hi\n")
            await fs.edit_text(await fs.resolve("script.sh"), FsEditRequest("hi", "ho"))

        run(body())
        assert stat.S_IMODE((local_root / "script.sh").stat().st_mode) == 0o751

    def test_fifo_is_other_and_never_opened_for_reading(
        self, fs: FileSystem, local_root: Path
    ) -> None:
        os.mkfifo(local_root / "pipe")

        async def body() -> None:
            target = await fs.resolve("pipe")
            info = await fs.stat(target)
            assert info is not None
            assert info.type == "other"
            assert [(e.name, e.type) for e in await fs.list_dir(await fs.resolve("."))] == [
                ("pipe", "other")
            ]
            await expect_error(E.FS_NOT_REGULAR_FILE, fs.read_text(target))
            await expect_error(E.FS_NOT_REGULAR_FILE, fs.write_text(target, "x"))

        run(body())
        assert stat.S_ISFIFO((local_root / "pipe").lstat().st_mode)

    def test_writer_killed_before_rename_leaves_old_file(
        self, fs: FileSystem, local_root: Path, fs_spec: FsSpec | None
    ) -> None:
        if fs_spec is None:
            pytest.skip("no fs_spec for the writer process")
        before = run(write(fs, "keep.txt", "old content\n"))
        job = {"op": "crash_on_publish", "path": "keep.txt", "content": "new content\n"}
        [result] = run_workers(fs_spec, [job])
        assert result.returncode == CRASH_EXIT, (
            f"the writer never reached its publishing rename: {result}"
        )

        async def body() -> None:
            assert await read(fs, "keep.txt") == "old content\n"
            assert await version(fs, "keep.txt") == before.version
            assert await names(fs) == ["keep.txt"]
            # The dead writer's lock died with it: a guarded write goes through.
            await write(fs, "keep.txt", "next\n", ReplaceIfVersion(before.version))

        run(body())
        assert (local_root / "keep.txt").read_bytes() == b"next\n"

    def test_creator_killed_before_link_creates_nothing(
        self, fs: FileSystem, local_root: Path, fs_spec: FsSpec | None
    ) -> None:
        if fs_spec is None:
            pytest.skip("no fs_spec for the writer process")
        job = {"op": "crash_on_publish", "path": "new.txt", "content": "x\n", "create": True}
        [result] = run_workers(fs_spec, [job])
        assert result.returncode == CRASH_EXIT, f"the creator never reached its link: {result}"

        async def body() -> None:
            assert await fs.stat(await fs.resolve("new.txt")) is None
            assert await names(fs) == []
            await write(fs, "new.txt", "made\n", CreateIfAbsent())

        run(body())
        assert os.path.exists(local_root / "new.txt")


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

    def test_walk_lists_the_tree_with_relative_paths_and_types(self, fs: FileSystem) -> None:
        async def body() -> None:
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

        run(body())

    def test_walk_order_counts_a_directory_as_its_path_plus_slash(self, fs: FileSystem) -> None:
        # "-" < "." < "/" < "0": a directory's entries sort where "a/" does,
        # which is also the order an object store lists keys in.
        async def body() -> None:
            for path in ("a0.txt", "a/b.txt", "a.txt", "a-c.txt"):
                await write(fs, path, "x")
            assert await walked_paths(fs) == ["a-c.txt", "a.txt", "a/", "a/b.txt", "a0.txt"]

        run(body())

    def test_walk_max_depth_bounds_the_levels(self, fs: FileSystem) -> None:
        async def body() -> None:
            for path in ("top.txt", "d1/mid.txt", "d1/d2/low.txt"):
                await write(fs, path, "x")
            assert await walked_paths(fs, max_depth=1) == ["d1/", "top.txt"]
            assert await walked_paths(fs, max_depth=2) == ["d1/", "d1/d2/", "d1/mid.txt", "top.txt"]
            assert [e.path for e in await walked(fs, max_depth=1)] == await names(fs)
            with pytest.raises(ValueError, match="max_depth"):
                await walked(fs, max_depth=0)

        run(body())

    def test_walk_of_subdirectory_is_relative_to_it_with_usable_targets(
        self, fs: FileSystem
    ) -> None:
        async def body() -> None:
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

        run(body())

    def test_walk_missing_directory_is_not_found(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "present.txt", "x")
            await expect_error(E.FS_NOT_FOUND, walked(fs, "missing"))

        run(body())

    def test_walk_on_a_file_is_not_directory(self, fs: FileSystem) -> None:
        async def body() -> None:
            await write(fs, "a.txt", "x")
            await expect_error(E.FS_NOT_DIRECTORY, walked(fs, "a.txt"))

        run(body())

    def test_walk_leaves_out_every_path_resolve_refuses(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        planted = [".git/config", ".git/refs/main", ".env", "sub/.env", "sub/ok.txt", "ok.txt"]
        for path in planted:
            raw.write_bytes(path, b"planted\n")

        async def body() -> None:
            seen = await walked_paths(fs)
            denied = [path for path in [*planted, ".git"] if await refused(fs, path)]
            assert not set(denied) & {path.rstrip("/") for path in seen}, seen
            assert {"ok.txt", "sub/", "sub/ok.txt"} <= set(seen)
            for entry in await walked(fs):
                await fs.resolve(entry.target.display_path)  # never refused

        run(body())

    def test_walk_never_shows_scratch_files(self, fs: FileSystem, raw: RawStore) -> None:
        async def body() -> None:
            outcome = await write(fs, "dir/a.txt", "1")
            await write(fs, "dir/a.txt", "2", ReplaceIfVersion(outcome.version))
            await fs.edit_text(await fs.resolve("dir/a.txt"), FsEditRequest("2", "3"))
            assert await walked_paths(fs) == ["dir/", "dir/a.txt"]

        run(body())

    def test_walk_can_stop_early(self, fs: FileSystem) -> None:
        async def body() -> None:
            for index in range(5):
                await write(fs, f"d/f{index}.txt", "x")
            listing = fs.walk(await fs.resolve("."))
            first = [await anext(listing), await anext(listing)]
            assert [entry.path for entry in first] == ["d", "d/f0.txt"]
            assert len(await walked(fs)) == 6

        run(body())

    def test_walk_reports_symlinks_without_entering_them(
        self, fs: FileSystem, make_symlink: SymlinkMaker
    ) -> None:
        run(write(fs, "real/file.txt", "x"))
        make_symlink("alias", "real")
        make_symlink("link.txt", "real/file.txt")

        async def body() -> None:
            assert await walked_paths(fs) == ["alias", "link.txt", "real/", "real/file.txt"]
            types = {e.path: e.type for e in await walked(fs)}
            assert types["alias"] == types["link.txt"] == "symlink"

        run(body())

    def test_walk_leaves_out_symlinks_leading_outside(
        self, fs: FileSystem, make_symlink: SymlinkMaker, outside_dir: Path
    ) -> None:
        (outside_dir / "secret.txt").write_text("secret\n")
        run(write(fs, "inside.txt", "x"))
        make_symlink("out", str(outside_dir))
        make_symlink("leak.txt", str(outside_dir / "secret.txt"))
        make_symlink("dangling.txt", str(outside_dir / "later.txt"))
        make_symlink("sub/up", "../..")

        async def body() -> None:
            assert await walked_paths(fs) == ["inside.txt", "sub/"]

        run(body())


class MultiEditSuite:
    """``edit_text_many``: several literal edits, in order, all or nothing, one guarded write."""

    @staticmethod
    async def many(
        fs: FileSystem, path: str, edits: list[FsEditRequest], expected: FsVersion | None = None
    ) -> tuple[FsTarget, str]:
        target = await fs.resolve(path)
        outcome = await fs.edit_text_many(target, edits, expected)
        return target, outcome.after

    def test_edits_apply_in_order_each_to_the_previous_result(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        async def body() -> None:
            base = await write(fs, "a.txt", "alpha beta gamma\n")
            target = await fs.resolve("a.txt")
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

        run(body())
        assert raw.read_bytes("a.txt") == b"AB g4mm4\n"

    def test_a_failing_edit_applies_none_and_names_itself(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        async def body() -> None:
            base = await write(fs, "a.txt", "one two three\n")
            target = await fs.resolve("a.txt")
            missing = [FsEditRequest("one", "1"), FsEditRequest("four", "4")]
            error = await expect_error(E.FS_EDIT_NOT_FOUND, fs.edit_text_many(target, missing))
            assert str(error).startswith("edit 2 of 2: old_string was not found")
            ambiguous = [FsEditRequest("t", "T"), FsEditRequest("one", "1")]
            error = await expect_error(E.FS_AMBIGUOUS_EDIT, fs.edit_text_many(target, ambiguous))
            assert str(error).startswith("edit 1 of 2: old_string matches 2 places")
            await expect_error(E.FS_EDIT_NOT_FOUND, fs.edit_text_many(target, []))
            assert await version(fs, "a.txt") == base.version

        run(body())
        assert raw.read_bytes("a.txt") == b"one two three\n"

    def test_version_is_checked_before_matching(self, fs: FileSystem) -> None:
        async def body() -> None:
            old = await write(fs, "a.txt", "v1\n")
            await write(fs, "a.txt", "v2 and more\n", ReplaceIfVersion(old.version))
            target = await fs.resolve("a.txt")
            nowhere = [FsEditRequest("nowhere", "x")]
            await expect_error(E.FS_STALE_VERSION, fs.edit_text_many(target, nowhere, old.version))
            assert await read(fs, "a.txt") == "v2 and more\n"

        run(body())

    def test_missing_file_is_stale_version(self, fs: FileSystem) -> None:
        async def body() -> None:
            target = await fs.resolve("missing.txt")
            edits = [FsEditRequest("x", "y")]
            await expect_error(E.FS_STALE_VERSION, fs.edit_text_many(target, edits))
            assert await fs.stat(target) is None

        run(body())

    def test_line_endings_and_bom_are_kept(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("a.txt", BOM + b"one\r\ntwo\r\nthree\r\n")

        async def body() -> None:
            edits = [FsEditRequest("one\n", "1\n"), FsEditRequest("two", "2\n2b")]
            _, after = await self.many(fs, "a.txt", edits)
            assert after == "1\r\n2\r\n2b\r\nthree\r\n"

        run(body())
        assert raw.read_bytes("a.txt") == BOM + b"1\r\n2\r\n2b\r\nthree\r\n"

    def test_result_over_max_edit_bytes_is_too_large(
        self, fs: FileSystem, reopen_fs: FileSystemOpener
    ) -> None:
        small = reopen_fs(max_edit_bytes=100)

        async def body() -> None:
            await write(fs, "a.txt", "x" * 90 + "!")
            before = await version(fs, "a.txt")
            target = await small.resolve("a.txt")
            grow = [FsEditRequest("!", "?"), FsEditRequest("?", "y" * 20)]
            await expect_error(E.FS_TOO_LARGE, small.edit_text_many(target, grow))
            assert await version(fs, "a.txt") == before

        run(body())

    def test_read_only_refuses(
        self, fs: FileSystem, fs_read_only: FileSystem, raw: RawStore
    ) -> None:
        run(write(fs, "a.txt", "x\n"))

        async def body() -> None:
            target = await fs_read_only.resolve("a.txt")
            edits = [FsEditRequest("x", "y")]
            await expect_error(E.FS_SANDBOX_DENIED, fs_read_only.edit_text_many(target, edits))

        run(body())
        assert raw.read_bytes("a.txt") == b"x\n"

    def test_two_multi_edits_from_one_version_exactly_one_wins(self, fs: FileSystem) -> None:
        async def body() -> None:
            base = await write(fs, "a.txt", "a=1\nb=1\n")
            target = await fs.resolve("a.txt")
            first = [FsEditRequest("a=1", "a=2"), FsEditRequest("b=1", "b=2")]
            await fs.edit_text_many(target, first, base.version)
            second = [FsEditRequest("a", "A"), FsEditRequest("b", "B")]
            await expect_error(E.FS_STALE_VERSION, fs.edit_text_many(target, second, base.version))
            assert await read(fs, "a.txt") == "a=2\nb=2\n"

        run(body())


class ConformanceSuite(
    ResolveSuite,
    StatSuite,
    ReadSuite,
    StreamSuite,
    ListDirSuite,
    WriteSuite,
    EditSuite,
    ReadOnlySuite,
    CapabilitySuite,
    ConcurrencySuite,
    CrossProcessSuite,
    SymlinkSuite,
    LocalDiskSuite,
    DiscoverySuite,
    MultiEditSuite,
):
    """Every contract line of the seam, for one backend.

    Combine it with a :class:`~fsseam.testing.FileSystemFixtures` subclass;
    the fixtures' flags decide which store-specific sections run.
    """
