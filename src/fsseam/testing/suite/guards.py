"""Guarded writes when the wire fails: lost answers, unknown outcomes, broken reads, one wording.

A conditional write over a network ends in one of three ways: the store
applied it, refused it, or nobody knows. The backend must settle the third
by looking for its own write (a token stored with the object), never by
comparing content, and must report what really happened exactly once:

* a lost answer whose retry meets its own write (a 412) is a success;
* an unknown outcome (a 5xx the client gave up on) whose write landed is a
  success, and one whose write never landed is ``FS_IO_ERROR`` with the file
  unchanged;
* a read broken mid-stream yields exactly the bytes of one version, or
  ``FS_IO_ERROR``: never the start of one version spliced onto another.

The fault tests need the ``faults`` fixture (a
:class:`~fsseam.testing.faults.StoreFaults`) and skip without it; the
mid-stream change and the error wording run on every store.
"""

from __future__ import annotations

import pytest

from fsseam.backends import FsspecFileSystem
from fsseam.seam import (
    CreateIfAbsent,
    FileSystem,
    FsEditRequest,
    FsError,
    FsWriteIntent,
    ReplaceIfVersion,
)
from fsseam.testing._support import E, async_test, expect_error, result_or_error
from fsseam.testing._worker import read_versioned
from fsseam.testing.faults import RequestLog, StoreFaults
from fsseam.testing.fixtures import RawStore
from fsseam.testing.suite._helpers import (
    Failures,
    assert_worded_as_on_local_disk,
    read,
    version,
    write,
    written,
)

__all__ = ["GuardedWriteSuite"]

CHUNK = 1 << 20
LINE = "0123456789abcdef" * 4 + "\n"


def big_text(size: int) -> str:
    """About ``size`` bytes of numbered ASCII lines (a splice shows as a wrong line)."""
    count = size // (len(LINE) + 8)
    return "".join(f"{i:07d} {LINE}" for i in range(count))


RECOVERY_REQUESTS = 3
"""Most requests a write whose answer was lost may cost: the write, the client's
retry, and one read of the write token. The recovery happens once."""


async def _stream_across_a_replace(fs: FileSystem, path: str, replacement: str) -> str:
    """Read ``path`` in chunks, replacing it after the first; returns what was streamed."""
    target = await fs.resolve(path)
    parts: list[str] = []
    async with fs.stream_text(target) as stream:
        chunks = aiter(stream)
        parts.append(await anext(chunks))
        await fs.write_text(target, replacement)
        parts.extend([chunk async for chunk in chunks])
    return "".join(parts)


async def _assert_one_version_or_failed(fs: FileSystem, text: str) -> None:
    """A stream of ``big.txt`` (``text``) across a replace: all of ``text``, or an IO error."""
    got = await result_or_error(_stream_across_a_replace(fs, "big.txt", "replaced\n"))
    if isinstance(got, FsError):
        assert got.code is E.FS_IO_ERROR, got
        assert "changed while it was being read" in str(got), got
    else:
        assert got == text, "the read spliced two versions"
    assert await read(fs, "big.txt") == "replaced\n"


async def _replacing_old(fs: FileSystem) -> ReplaceIfVersion:
    """``a.txt`` created as ``old``, and the guard of a replace of that version."""
    created = await write(fs, "a.txt", "old\n", CreateIfAbsent())
    return ReplaceIfVersion(created.version)


async def _guard_to(fs: FileSystem, operation: str) -> FsWriteIntent:
    """The guard of a write of ``a.txt`` that is ``operation``: a create, or an update of "old"."""
    return CreateIfAbsent() if operation == "create" else await _replacing_old(fs)


class GuardedWriteSuite:
    """Guarded writes under faults, pinned reads under change, and one error wording."""

    # -- lost answers ------------------------------------------------------------

    @pytest.mark.parametrize(
        ("operation", "repeated"), [("create", E.FS_NOT_OBSERVED), ("update", E.FS_STALE_VERSION)]
    )
    @async_test
    async def test_a_lost_answer_to_a_write_reports_success_once(
        self,
        fs: FileSystem,
        faults: StoreFaults,
        raw: RawStore,
        wire: RequestLog | None,
        operation: str,
        repeated: E,
    ) -> None:
        guard = await _guard_to(fs, operation)
        # An update reads the old text first: one more request.
        budget = RECOVERY_REQUESTS + (operation == "update")
        fault = faults.lose_write_answer()
        if wire is not None:
            wire.clear()
        outcome = await write(fs, "a.txt", "new\n", guard)
        assert fault.hits == 1, "the fault never fired"
        if wire is not None:
            assert wire.count() <= budget, wire.count()
        assert outcome.operation == operation
        assert outcome.version == await version(fs, "a.txt")
        # Applied once: the same guarded write again is refused.
        await expect_error(repeated, write(fs, "a.txt", "again\n", guard))
        assert raw.read_bytes("a.txt") == b"new\n"

    @async_test
    async def test_a_lost_answer_to_a_guarded_edit_reports_success_once(
        self, fs: FileSystem, faults: StoreFaults, raw: RawStore
    ) -> None:
        target, created = await written(fs, "a.txt", "count=1\n", CreateIfAbsent())
        fault = faults.lose_write_answer()
        edit = FsEditRequest("count=1", "count=2")
        outcome = await fs.edit_text(target, edit, created.version)
        assert fault.hits == 1, "the fault never fired"
        assert outcome.version == await version(fs, "a.txt")
        assert outcome.after == "count=2\n"
        await expect_error(E.FS_STALE_VERSION, fs.edit_text(target, edit, created.version))
        assert raw.read_bytes("a.txt") == b"count=2\n"

    # -- unknown outcomes ----------------------------------------------------------

    @pytest.mark.parametrize("operation", ["update", "create"])
    @async_test
    async def test_an_unknown_outcome_whose_write_landed_reports_success(
        self, fs: FileSystem, faults: StoreFaults, raw: RawStore, operation: str
    ) -> None:
        guard = await _guard_to(fs, operation)
        fault = faults.fail_after_landing()
        outcome = await write(fs, "a.txt", "new\n", guard)
        assert fault.hits == 1, "the fault never fired"
        assert outcome.operation == operation
        assert outcome.version == await version(fs, "a.txt")
        assert raw.read_bytes("a.txt") == b"new\n"

    @async_test
    async def test_a_write_that_never_landed_is_an_io_error_and_changes_nothing(
        self, fs: FileSystem, faults: StoreFaults, raw: RawStore
    ) -> None:
        guard = await _replacing_old(fs)
        target = await fs.resolve("a.txt")
        fault = faults.fail_write()
        error = await expect_error(E.FS_IO_ERROR, fs.write_text(target, "two\n", guard))
        assert fault.hits == 1, "the fault never fired"
        assert target.display_path in str(error)
        assert await version(fs, "a.txt") == guard.version
        faults.heal()
        # Nothing was poisoned: the same guarded write now goes through.
        await write(fs, "a.txt", "two\n", guard)
        assert raw.read_bytes("a.txt") == b"two\n"

    # -- pinned reads ------------------------------------------------------------------

    @async_test
    async def test_a_read_cut_mid_body_gives_the_exact_text_or_an_io_error(
        self, fs: FileSystem, faults: StoreFaults
    ) -> None:
        text = big_text(3 * CHUNK)
        target, stored = await written(fs, "big.txt", text, CreateIfAbsent())
        fault = faults.cut_read(after_bytes=CHUNK + 12345)
        got = await result_or_error(read_versioned(fs, target))
        if isinstance(got, FsError):
            assert got.code is E.FS_IO_ERROR, got
        else:
            assert got == (text, stored.version), "not the text written, or its version"
        assert fault.hits == 1, "the fault never fired"

    @async_test
    async def test_a_read_cut_after_the_file_changed_fails_instead_of_mixing(
        self, fs: FileSystem, faults: StoreFaults
    ) -> None:
        text = big_text(3 * CHUNK)
        await write(fs, "big.txt", text, CreateIfAbsent())
        fault = faults.cut_read(after_bytes=CHUNK + 12345)
        await _assert_one_version_or_failed(fs, text)
        assert fault.hits == 1, "the fault never fired"

    @async_test
    async def test_a_file_replaced_mid_stream_reads_one_version_or_fails(
        self, fs: FileSystem
    ) -> None:
        # Over 8 MiB: more than one request on stores that read in ranges.
        text = big_text(9 * CHUNK)
        await write(fs, "big.txt", text, CreateIfAbsent())
        await _assert_one_version_or_failed(fs, text)

    # -- one wording on every store ------------------------------------------------------

    @async_test
    async def test_error_texts_match_the_local_reference_but_for_the_path(
        self, fs: FileSystem, raw: RawStore, reference_fs: FsspecFileSystem
    ) -> None:
        await assert_worded_as_on_local_disk(_failures, fs, raw, reference_fs)


async def _failures(fs: FileSystem, raw: RawStore) -> Failures:
    """Failures of reads, writes, edits, listings and resolves, each set up on ``fs``."""
    first = await write(fs, "d/f.txt", "v1\n")
    second = await write(fs, "d/f.txt", "v2\n", ReplaceIfVersion(first.version))
    await write(fs, "d/gone.txt", "x\n")
    gone = await version(fs, "d/gone.txt")
    raw.delete("d/gone.txt")
    await write(fs, "twice.txt", "a a\n")
    raw.write_bytes("binary.bin", b"\x00\x01")
    f = await fs.resolve("d/f.txt")
    missing = await fs.resolve("missing.txt")
    directory = await fs.resolve("d")
    deleted = await fs.resolve("d/gone.txt")
    twice = await fs.resolve("twice.txt")
    binary = await fs.resolve("binary.bin")
    return {
        "read a missing file": lambda: fs.read_text(missing),
        "read a directory": lambda: fs.read_text(directory),
        "create over an existing file": lambda: fs.write_text(f, "x", CreateIfAbsent()),
        "replace at a stale version": lambda: fs.write_text(
            f, "x", ReplaceIfVersion(first.version)
        ),
        "replace a deleted file": lambda: fs.write_text(deleted, "x", ReplaceIfVersion(gone)),
        "edit at a stale version": lambda: fs.edit_text(
            f, FsEditRequest("v2", "v3"), first.version
        ),
        "edit without a match": lambda: fs.edit_text(f, FsEditRequest("nope", "x"), second.version),
        "edit with two matches": lambda: fs.edit_text(twice, FsEditRequest("a", "b")),
        "edit a missing file": lambda: fs.edit_text(missing, FsEditRequest("a", "b")),
        "read a binary file": lambda: fs.read_text(binary),
        "write onto a directory": lambda: fs.write_text(directory, "x"),
        "edit a directory": lambda: fs.edit_text(directory, FsEditRequest("a", "b")),
        "list a missing directory": lambda: fs.list_dir(missing),
        "list a file": lambda: fs.list_dir(f),
        "resolve outside the root": lambda: fs.resolve("../outside.txt"),
        "resolve a backslash": lambda: fs.resolve("d\\f.txt"),
    }
