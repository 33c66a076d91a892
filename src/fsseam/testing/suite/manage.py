"""Delete and move through the seam: the store guards the delete, and a move never loses a file.

``FileSystem.delete(target, expected)`` removes the file only while it is at
``expected``, the check and the removal being one step the store performs;
``FileSystem.move`` writes the destination first and only then deletes the
source, guarded by the version it read, so a failure in between leaves both
files, never neither. Racing deletes and moves of one file: exactly one wins.

A store that ignores a delete's precondition declares ``guarded_delete``
False: every test here then proves that the delete or move is REFUSED
(``FS_SANDBOX_DENIED`` naming the quirk) with nothing deleted or written,
instead of skipping. The fault tests (lost answers) need the ``faults``
fixture, as :class:`~fsseam.testing.GuardedWriteSuite`'s do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import pytest

from fsseam.backends import FsspecFileSystem
from fsseam.seam import (
    CreateIfAbsent,
    FileSystem,
    FsDeleteOutcome,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsMoveIncomplete,
    FsMoveOutcome,
    FsTarget,
    FsVersion,
    ReplaceIfVersion,
)
from fsseam.testing._support import E, async_test, expect_error, result_or_error
from fsseam.testing.faults import ArmedFault, RequestLog, StoreFaults
from fsseam.testing.fixtures import RawStore
from fsseam.testing.suite._helpers import (
    Failures,
    assert_stored,
    assert_worded_as_on_local_disk,
    counted,
    exists,
    read,
    version,
    write,
)

__all__ = ["ManageSuite", "expect_refused_here", "expect_unless_refused"]

T = TypeVar("T")

QUIRK = "delete-precondition-ignored"
"""The quirk a store that ignores a delete's precondition is refused for."""


async def expect_refused_here(call: Awaitable[object]) -> FsError:
    """On a store declared ``guarded_delete=False``: the call is refused, naming the quirk."""
    error = await expect_error(E.FS_SANDBOX_DENIED, call)
    assert QUIRK in str(error), error
    return error


async def expect_unless_refused(
    code: FsErrorCode, call: Awaitable[object], guarded_delete: bool
) -> FsError:
    """``code`` from ``call`` where deletes are guarded; elsewhere the store's refusal."""
    if guarded_delete:
        return await expect_error(code, call)
    return await expect_refused_here(call)


async def _created(fs: FileSystem, path: str, text: str) -> tuple[FsTarget, FsVersion]:
    outcome = await write(fs, path, text, CreateIfAbsent())
    return await fs.resolve(path), outcome.version


async def _seen_then_changed(
    fs: FileSystem, raw: RawStore, path: str, change: bytes | None
) -> tuple[FsTarget, FsVersion]:
    """``path`` created and the version seen, then changed behind the seam's back.

    ``change`` is the bytes stored instead, or ``None`` for a delete.
    """
    target, seen = await _created(fs, path, "seen\n")
    if change is None:
        raw.delete(path)
    else:
        raw.write_bytes(path, change)
    return target, seen


async def _warm(fs: FileSystem) -> None:
    """One guarded delete, so a store's once-per-process delete probe has run."""
    target, current = await _created(fs, "warm.txt", "warm\n")
    try:
        await fs.delete(target, current)
    except FsError as exc:
        if exc.code is not E.FS_SANDBOX_DENIED:
            raise


def _arm(make: Callable[[], ArmedFault]) -> ArmedFault:
    try:
        return make()
    except NotImplementedError as exc:
        pytest.skip(str(exc))


async def _ready(fs: FileSystem, content: str) -> tuple[FsTarget, FsVersion]:
    """``a.txt`` created with ``content`` once the delete probe has run (no probe in a count)."""
    await _warm(fs)
    return await _created(fs, "a.txt", content)


async def _faulted(
    fs: FileSystem, content: str, arm: Callable[[], ArmedFault]
) -> tuple[FsTarget, FsVersion, ArmedFault]:
    """``a.txt`` created with ``content`` once the delete probe has run, then ``arm``'s fault."""
    target, current = await _ready(fs, content)
    return target, current, _arm(arm)


def _split(results: Sequence[T | FsError]) -> tuple[list[T], list[FsError]]:
    """Racing calls' results: the successes, and the errors."""
    won = [item for item in results if not isinstance(item, FsError)]
    return won, [item for item in results if isinstance(item, FsError)]


class ManageSuite:
    """``delete`` and ``move`` on the seam, on every store, racing and under faults."""

    # -- delete -------------------------------------------------------------------

    @async_test
    async def test_a_delete_at_the_current_version_removes_the_file(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        target, current = await _created(fs, "d/a.txt", "bye\n")
        if guarded_delete:
            assert await fs.delete(target, current) == FsDeleteOutcome(current)
            assert await fs.stat(target) is None
        else:
            await expect_refused_here(fs.delete(target, current))
        assert exists(raw, "d/a.txt") is not guarded_delete

    @pytest.mark.parametrize(
        ("change", "said"),
        [
            (b"changed by someone else\n", "was modified since it was read"),
            (None, "was deleted since it was read"),
        ],
        ids=["modified", "deleted"],
    )
    @async_test
    async def test_a_guarded_delete_of_a_file_changed_since_it_was_read_is_stale(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool, change: bytes | None, said: str
    ) -> None:
        target, seen = await _seen_then_changed(fs, raw, "a.txt", change)
        error = await expect_unless_refused(
            E.FS_STALE_VERSION, fs.delete(target, seen), guarded_delete
        )
        assert not guarded_delete or said in str(error)
        assert_stored(raw, {"a.txt": change})  # the change is kept

    @async_test
    async def test_an_unguarded_delete_removes_what_is_there_and_refuses_what_is_not_a_file(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        target, _ = await _seen_then_changed(fs, raw, "d/a.txt", b"two\n")
        if not guarded_delete:
            await expect_refused_here(fs.delete(target))
            return
        # No version given: the one stored now, read first, guards the delete.
        outcome = await fs.delete(target)
        assert isinstance(outcome, FsDeleteOutcome)
        await expect_error(E.FS_NOT_FOUND, fs.delete(target))
        await write(fs, "d/b.txt", "keeps d a directory\n")
        for directory in ("d", "d/", "."):
            await expect_error(E.FS_NOT_REGULAR_FILE, fs.delete(await fs.resolve(directory)))
        assert_stored(raw, {"d/a.txt": None, "d/b.txt": b"keeps d a directory\n"})

    @async_test
    async def test_racing_deletes_at_one_version_exactly_one_wins(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        target, seen = await _ready(fs, "contested\n")
        results = await asyncio.gather(
            *(result_or_error(fs.delete(target, seen)) for _ in range(4))
        )
        won, lost = _split(results)
        if not guarded_delete:
            assert not won
            assert all(item.code is E.FS_SANDBOX_DENIED for item in lost), lost
            assert exists(raw, "a.txt")
            return
        assert len(won) == 1, f"{len(won)} deletes won: {results}"
        assert all(item.code in (E.FS_STALE_VERSION, E.FS_NOT_FOUND) for item in lost), lost
        assert not exists(raw, "a.txt")

    # -- move -------------------------------------------------------------------------

    @async_test
    async def test_a_move_writes_the_destination_byte_for_byte_then_deletes_the_source(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        stored = b"\xef\xbb\xbfline one\r\nline two\r\n"
        raw.write_bytes("src/a.txt", stored)
        source = await fs.resolve("src/a.txt")
        seen = await version(fs, "src/a.txt")
        destination = await fs.resolve("new/dir/b.txt")
        call = fs.move(source, destination, seen, CreateIfAbsent())
        if not guarded_delete:
            await expect_refused_here(call)
            assert_stored(raw, {"src/a.txt": stored, "new/dir/b.txt": None})
            return
        outcome = await call
        assert isinstance(outcome, FsMoveOutcome)
        assert (outcome.before_version, outcome.replaced_version) == (seen, None)
        assert outcome.version == await version(fs, "new/dir/b.txt")
        assert await fs.stat(source) is None
        assert_stored(raw, {"new/dir/b.txt": stored, "src/a.txt": None})  # BOM and CRLF kept

    @async_test
    async def test_a_move_onto_an_unseen_existing_file_is_refused_and_changes_nothing(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        source, seen = await _created(fs, "a.txt", "source\n")
        await write(fs, "b.txt", "destination\n")
        call = fs.move(source, await fs.resolve("b.txt"), seen, CreateIfAbsent())
        await expect_unless_refused(E.FS_NOT_OBSERVED, call, guarded_delete)
        assert_stored(raw, {"a.txt": b"source\n", "b.txt": b"destination\n"})

    @async_test
    async def test_a_move_replaces_a_destination_only_at_the_version_seen(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        source, seen = await _created(fs, "a.txt", "source\n")
        destination, old = await _created(fs, "b.txt", "old destination\n")
        if not guarded_delete:
            await expect_refused_here(fs.move(source, destination, seen, ReplaceIfVersion(old)))
            return
        raw.write_bytes("b.txt", b"destination changed\n")
        await expect_error(
            E.FS_STALE_VERSION, fs.move(source, destination, seen, ReplaceIfVersion(old))
        )
        assert raw.read_bytes("a.txt") == b"source\n"
        current = await version(fs, "b.txt")
        outcome = await fs.move(source, destination, seen, ReplaceIfVersion(current))
        assert outcome.replaced_version == current
        assert await read(fs, "b.txt") == "source\n"

    @async_test
    async def test_a_move_of_a_file_changed_since_it_was_read_writes_nothing(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        source, seen = await _seen_then_changed(fs, raw, "a.txt", b"changed\n")
        call = fs.move(source, await fs.resolve("b.txt"), seen, CreateIfAbsent())
        await expect_unless_refused(E.FS_STALE_VERSION, call, guarded_delete)
        assert_stored(raw, {"a.txt": b"changed\n", "b.txt": None})

    @async_test
    async def test_a_move_whose_source_changes_before_its_delete_keeps_both(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        if not isinstance(fs, FsspecFileSystem):
            pytest.skip("needs an FsspecFileSystem to change the source between the two steps")
        dialect = fs.dialect
        real_put = dialect.put

        async def put_then_someone_writes(path: str, data: bytes, guard: object) -> object:
            stored = await real_put(path, data, guard)  # type: ignore[arg-type]
            raw.write_bytes("a.txt", b"changed in between\n")
            return stored

        source, seen = await _created(fs, "a.txt", "seen\n")
        destination = await fs.resolve("b.txt")
        dialect.put = put_then_someone_writes  # type: ignore[method-assign,assignment]
        try:
            call = fs.move(source, destination, seen, CreateIfAbsent())
            if not guarded_delete:
                await expect_refused_here(call)
                assert_stored(raw, {"a.txt": b"seen\n", "b.txt": None})
                return
            error = await expect_error(E.FS_STALE_VERSION, call)
        finally:
            del dialect.put
        assert isinstance(error, FsMoveIncomplete)
        assert "stopped halfway" in str(error)
        assert "nothing was lost" in str(error)
        assert error.version == await version(fs, "b.txt")
        assert_stored(raw, {"a.txt": b"changed in between\n", "b.txt": b"seen\n"})

    @async_test
    async def test_racing_moves_of_one_file_one_wins_and_nothing_is_lost(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        source, seen = await _ready(fs, "moving\n")
        same = await fs.resolve("same.txt")
        elsewhere = [await fs.resolve(f"to/{i}.txt") for i in range(2)]
        moves = [fs.move(source, same, seen, CreateIfAbsent()) for _ in range(2)]
        moves += [fs.move(source, there, seen, CreateIfAbsent()) for there in elsewhere]
        results = await asyncio.gather(*(result_or_error(move) for move in moves))
        won, lost = _split(results)
        if not guarded_delete:
            assert not won
            assert raw.read_bytes("a.txt") == b"moving\n"
            return
        assert len(won) == 1, f"{len(won)} moves won: {results}"
        assert not exists(raw, "a.txt")
        for item in lost:
            # Refused before writing, or half done: its destination keeps a copy.
            assert item.code in (E.FS_STALE_VERSION, E.FS_NOT_OBSERVED), item
        copies = [path for path in ("same.txt", "to/0.txt", "to/1.txt") if exists(raw, path)]
        assert copies, "the moved file is nowhere"
        assert all(raw.read_bytes(path) == b"moving\n" for path in copies)

    # -- mounts, paths ----------------------------------------------------------------

    @async_test
    async def test_read_only_refuses_delete_and_move(
        self, fs: FileSystem, fs_read_only: FileSystem, raw: RawStore
    ) -> None:
        _, seen = await _created(fs, "a.txt", "keep\n")
        ro = fs_read_only
        source = await ro.resolve("a.txt")
        await expect_error(E.FS_SANDBOX_DENIED, ro.delete(source, seen))
        await expect_error(E.FS_SANDBOX_DENIED, ro.delete(source))
        await expect_error(
            E.FS_SANDBOX_DENIED,
            ro.move(source, await ro.resolve("b.txt"), seen, CreateIfAbsent()),
        )
        assert_stored(raw, {"a.txt": b"keep\n", "b.txt": None})

    @async_test
    async def test_delete_and_move_stay_inside_the_root_and_off_denied_paths(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        source, seen = await _created(fs, "a.txt", "keep\n")
        for path in ("../outside.txt", ".env", ".git/config", "d\\a.txt"):
            await expect_error(E.FS_SANDBOX_DENIED, fs.resolve(path))
        with pytest.raises(ValueError, match="onto itself"):
            await fs.move(source, await fs.resolve("./a.txt"), seen, CreateIfAbsent())
        root = await fs.resolve(".")
        await expect_error(E.FS_NOT_REGULAR_FILE, fs.move(source, root, seen))
        assert raw.read_bytes("a.txt") == b"keep\n"

    # -- one request, one wording -----------------------------------------------------

    @async_test
    async def test_a_guarded_delete_is_one_request(
        self, fs: FileSystem, wire: RequestLog | None, guarded_delete: bool
    ) -> None:
        requests = counted(wire)
        target, current = await _ready(fs, "x\n")
        requests.clear()
        await result_or_error(fs.delete(target, current))
        # Refused on a store that ignores the precondition: no request at all.
        assert requests.count() == (1 if guarded_delete else 0)

    @async_test
    async def test_an_edit_of_the_destination_right_after_a_move_is_one_request(
        self, fs: FileSystem, wire: RequestLog | None, guarded_delete: bool
    ) -> None:
        requests = counted(wire)
        if not guarded_delete:
            pytest.skip("this store refuses delete and move (proven by the other tests)")
        await _warm(fs)
        source, current = await _created(fs, "from.txt", "one\n")
        destination = await fs.resolve("to.txt")
        moved = await fs.move(source, destination, current, CreateIfAbsent())
        requests.clear()
        await fs.edit_text(destination, FsEditRequest("one", "two"), moved.version)
        # The moved bytes are known at their new version, as after a write: no GET.
        assert requests.count() == 1

    @async_test
    async def test_delete_and_move_errors_match_the_local_reference_but_for_the_path(
        self, fs: FileSystem, raw: RawStore, reference_fs: FsspecFileSystem, guarded_delete: bool
    ) -> None:
        if not guarded_delete:
            pytest.skip("this store refuses delete and move (proven by the other tests)")
        await assert_worded_as_on_local_disk(_failures, fs, raw, reference_fs)

    # -- lost answers -----------------------------------------------------------------

    @pytest.mark.parametrize(
        "arm",
        ["lose_delete_answer", "fail_delete_after_landing"],
        ids=["lost_answer", "unknown_outcome"],
    )
    @async_test
    async def test_a_delete_that_landed_reports_success_once(
        self, fs: FileSystem, faults: StoreFaults, raw: RawStore, wire: RequestLog | None, arm: str
    ) -> None:
        target, current, fault = await _faulted(fs, "bye\n", getattr(faults, arm))
        if wire is not None:
            wire.clear()
        assert await fs.delete(target, current) == FsDeleteOutcome(current)
        assert fault.hits == 1, "the fault never fired"
        if wire is not None and arm == "lose_delete_answer":
            # The delete, the client's retry, one look at the object.
            assert wire.count() <= 3, wire.count()
        await expect_error(E.FS_STALE_VERSION, fs.delete(target, current))
        assert not exists(raw, "a.txt")

    @async_test
    async def test_a_delete_that_never_landed_is_an_io_error_and_keeps_the_file(
        self, fs: FileSystem, faults: StoreFaults, raw: RawStore
    ) -> None:
        target, current, fault = await _faulted(fs, "keep\n", faults.fail_delete)
        error = await expect_error(E.FS_IO_ERROR, fs.delete(target, current))
        assert fault.hits == 1, "the fault never fired"
        assert target.display_path in str(error)
        assert await version(fs, "a.txt") == current
        faults.heal()
        await fs.delete(target, current)  # nothing was poisoned
        assert not exists(raw, "a.txt")

    @async_test
    async def test_a_lost_answer_to_a_refused_delete_is_still_a_conflict(
        self, fs: FileSystem, faults: StoreFaults, raw: RawStore
    ) -> None:
        """Someone replaced the file: the refusal, retried, must not pass for our own delete."""
        await _warm(fs)
        replaced = b"replaced by someone else\n"
        target, seen = await _seen_then_changed(fs, raw, "a.txt", replaced)
        fault = _arm(faults.lose_delete_answer)
        await expect_error(E.FS_STALE_VERSION, fs.delete(target, seen))
        assert fault.hits == 1, "the fault never fired"
        assert raw.read_bytes("a.txt") == replaced


async def _failures(fs: FileSystem, raw: RawStore) -> Failures:
    """Failures of deletes and moves, each set up on ``fs``."""
    a, first = await _created(fs, "d/a.txt", "one\n")
    second = (await fs.write_text(a, "two\n", ReplaceIfVersion(first))).version
    gone, gone_version = await _seen_then_changed(fs, raw, "d/gone.txt", None)
    b, _ = await _created(fs, "b.txt", "b\n")
    missing = await fs.resolve("missing.txt")
    directory = await fs.resolve("d")
    return {
        "delete at a stale version": lambda: fs.delete(a, first),
        "delete a deleted file": lambda: fs.delete(gone, gone_version),
        "delete a missing file": lambda: fs.delete(missing),
        "delete a directory": lambda: fs.delete(directory),
        "move onto an unseen file": lambda: fs.move(a, b, second, CreateIfAbsent()),
        "move a changed file": lambda: fs.move(a, missing, first, CreateIfAbsent()),
        "move a deleted file": lambda: fs.move(gone, missing, gone_version, CreateIfAbsent()),
        "move onto a directory": lambda: fs.move(a, directory, second),
    }
