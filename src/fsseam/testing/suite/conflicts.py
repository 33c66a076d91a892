"""Conflicts: what changed, shown once; the same bytes are no conflict; clean rebases land.

A backend that remembers what it read (``FsspecFileSystem``'s content cache;
the ``remembers_reads`` fixture) turns conflicts into one request and one
turn:

* a guarded edit of a file changed since the read is refused with the change
  (``FsStaleVersion.change``, ``current_version``); the tool shows it, the
  session counts it as read, and the same edit sent again lands on top;
* a new version holding the very bytes that were read (``touch``, a rewrite
  of the same bytes) is no conflict; a real change always is;
* with ``ObservationPolicy(rebase=True)`` an edit that does not touch the
  change lands on top of it; one that does is refused; a write never is
  rebased;
* under contention no update is lost, the cache notwithstanding.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fsseam import Context, ObservationPolicy, ToolExecution
from fsseam.backends import FsspecFileSystem
from fsseam.seam import (
    FileSystem,
    FsEditRequest,
    FsStaleVersion,
    FsTarget,
    FsVersion,
    Present,
    ReplaceIfVersion,
)
from fsseam.testing._support import E, expect_error, in_threads, run
from fsseam.testing._worker import counter_value, increment, read_versioned
from fsseam.testing.faults import RequestLog
from fsseam.testing.fixtures import RawStore
from fsseam.testing.harness import call, code_of, execution, tools_context
from fsseam.testing.suite._helpers import read, version, write, written

__all__ = ["ConflictSuite"]

TEXT = "".join(f"line {i}\n" for i in range(1, 13))
"""Twelve numbered lines: the outside change is on line 3, the session's edit on line 10."""
OUTSIDE = TEXT.replace("line 3\n", "line three, changed outside\n")
EDIT = {"file_path": "f.txt", "old_string": "line 10\n", "new_string": "line ten\n"}
BOTH = OUTSIDE.replace("line 10\n", "line ten\n")


class ConflictSuite:
    """Conflicts in one request and one turn, on a backend that remembers what it read."""

    @pytest.fixture
    def remembers_reads(self, fs: FileSystem) -> bool:
        """True when ``fs`` keeps what it read (the conflict tests need it); else they skip.

        Detected for ``FsspecFileSystem`` with its content cache on; another
        backend with such a memory overrides this fixture to return True.
        """
        return isinstance(fs, FsspecFileSystem) and fs.cache.max_bytes > 0

    @pytest.fixture
    def remembering(self, fs: FileSystem, remembers_reads: bool) -> FileSystem:
        """``fs``, or a skip when it does not remember what it read."""
        if not remembers_reads:
            pytest.skip("the backend does not remember what it read (remembers_reads is False)")
        return fs

    # -- the change inside the stale error --------------------------------------------------

    def test_a_stale_edit_shows_the_change_and_the_same_edit_then_lands(
        self, remembering: FileSystem, raw: RawStore
    ) -> None:
        ctx, alice = _stale_session(remembering, raw)
        refused = call(ctx, "edit", EDIT, alice)
        assert code_of(refused) == "FS_STALE_VERSION", refused.text
        assert "\nWhat changed since you read it:\n" in refused.text, refused.text
        assert "\n-line 3\n+line three, changed outside\n" in refused.text, refused.text
        assert "re-read" not in refused.text
        landed = call(ctx, "edit", EDIT, alice)  # no read in between
        assert code_of(landed) is None, landed.text
        assert raw.read_bytes("f.txt") == BOTH.encode()

    def test_the_stale_error_carries_the_change_and_the_current_version(
        self, remembering: FileSystem, raw: RawStore
    ) -> None:
        fs = remembering

        async def body() -> None:
            target, seen = await _seen_then_changed(fs, raw, OUTSIDE.encode())
            request = FsEditRequest("line 10\n", "line ten\n")
            error = await expect_error(E.FS_STALE_VERSION, fs.edit_text(target, request, seen))
            assert isinstance(error, FsStaleVersion)
            current = await version(fs, "f.txt")
            assert error.current_version == current
            assert error.change is not None
            assert "\n-line 3\n+line three, changed outside\n" in error.change
            assert error.change.startswith(f"--- {target.display_path}\n")
            # The error's version is a guard that holds: the edit lands on top.
            outcome = await fs.edit_text(target, request, error.current_version)
            assert outcome.before == OUTSIDE
            assert outcome.before_version == current
            for stale_write in (
                fs.write_text(target, "mine\n", ReplaceIfVersion(seen)),
                fs.edit_text_many(target, [request], seen),
            ):
                error = await expect_error(E.FS_STALE_VERSION, stale_write)
                assert isinstance(error, FsStaleVersion)
                assert error.current_version == outcome.version

        run(body())
        assert raw.read_bytes("f.txt") == BOTH.encode()

    def test_a_deleted_file_carries_no_change(self, remembering: FileSystem, raw: RawStore) -> None:
        fs = remembering

        async def body() -> None:
            target, seen = await _seen_then_changed(fs, raw, None)
            for call_ in (
                fs.edit_text(target, FsEditRequest("line 1\n", "x\n"), seen),
                fs.write_text(target, "x\n", ReplaceIfVersion(seen)),
            ):
                error = await expect_error(E.FS_STALE_VERSION, call_)
                assert "deleted" in str(error)
                assert isinstance(error, FsStaleVersion)
                assert error.change is None

        run(body())

    def test_a_write_refused_shows_the_change_and_counts_it_as_read(
        self, remembering: FileSystem, raw: RawStore
    ) -> None:
        ctx, alice = _stale_session(remembering, raw)
        refused = call(ctx, "write", {"file_path": "f.txt", "content": "mine\n"}, alice)
        assert code_of(refused) == "FS_STALE_VERSION"
        assert "+line three, changed outside" in refused.text
        assert raw.read_bytes("f.txt") == OUTSIDE.encode()
        keeps = OUTSIDE + "mine\n"
        again = call(ctx, "write", {"file_path": "f.txt", "content": keeps}, alice)
        assert code_of(again) is None, again.text
        assert raw.read_bytes("f.txt") == keeps.encode()

    def test_a_change_too_long_to_show_whole_is_cut_and_not_counted_as_read(
        self, remembering: FileSystem, raw: RawStore
    ) -> None:
        ctx = tools_context(remembering)
        alice = execution()
        raw.write_bytes("f.txt", TEXT.encode())
        call(ctx, "read", {"file_path": "f.txt"}, alice)
        long = "".join(f"new line {i}\n" for i in range(200))
        raw.write_bytes("f.txt", (TEXT + long).encode())
        refused = call(ctx, "edit", EDIT, alice)
        assert code_of(refused) == "FS_STALE_VERSION"
        assert "— re-read the file, then retry (the change is too long" in refused.text
        assert refused.text.count("\n+new line ") < 60
        assert "more lines of the change not shown; read the file to see them)" in refused.text
        again = call(ctx, "edit", EDIT, alice)
        assert code_of(again) == "FS_STALE_VERSION", again.text
        assert raw.read_bytes("f.txt") == (TEXT + long).encode()

    # -- round trips of a conflict ---------------------------------------------------------

    def test_a_conflict_costs_its_refused_write_and_one_read_and_the_retry_one_request(
        self, remembering: FileSystem, raw: RawStore, wire: RequestLog | None
    ) -> None:
        if wire is None:
            pytest.skip("the backend gives no `wire` fixture to count its store's requests")
        fs = remembering

        async def body() -> tuple[int, int]:
            target, seen = await _seen_then_changed(fs, raw, OUTSIDE.encode())
            request = FsEditRequest("line 10\n", "line ten\n")
            wire.clear()
            error = await expect_error(E.FS_STALE_VERSION, fs.edit_text(target, request, seen))
            conflict = wire.count()
            assert isinstance(error, FsStaleVersion)
            assert error.current_version is not None
            wire.clear()
            await fs.edit_text(target, request, error.current_version)
            return conflict, wire.count()

        conflict, retry = run(body())
        # The refused write, the dialect's one look at its write token, one GET of the
        # new bytes and version.
        assert conflict <= 3, conflict
        assert retry == 1, retry

    # -- the same bytes are no conflict -----------------------------------------------------

    def test_the_same_bytes_rewritten_are_no_conflict_and_a_real_change_is(
        self,
        remembering: FileSystem,
        raw: RawStore,
        native_root: Path | None,
        unique_versions_per_write: bool,
    ) -> None:
        ctx = tools_context(remembering)

        def rewrite(data: bytes) -> None:
            raw.write_bytes("f.txt", data)

        rewrites: dict[str, Callable[[bytes], None]] = {"the same bytes uploaded again": rewrite}
        if native_root is not None:
            file = native_root / "f.txt"

            def touch(_: bytes) -> None:
                os.utime(file, ns=(time.time_ns(), time.time_ns() + 10**6))

            def renamed(data: bytes) -> None:  # a formatter that changed nothing
                spare = native_root / "f.txt.formatted"
                spare.write_bytes(data)
                os.replace(spare, file)

            rewrites |= {"touch": touch, "the same bytes renamed over it": renamed}
        edited = TEXT.replace("line 10\n", "line ten\n")
        for what, again in rewrites.items():
            raw.write_bytes("f.txt", TEXT.encode())
            alice = execution()
            assert code_of(call(ctx, "read", {"file_path": "f.txt"}, alice)) is None
            before = run(version(remembering, "f.txt"))
            again(TEXT.encode())
            if unique_versions_per_write or what != "the same bytes uploaded again":
                assert run(version(remembering, "f.txt")) != before, f"{what}: same version"
            done = call(ctx, "edit", EDIT, alice)
            assert code_of(done) is None, f"{what}: {done.text}"
            assert raw.read_bytes("f.txt") == edited.encode()
            again(edited.encode())
            written = call(ctx, "write", {"file_path": "f.txt", "content": "mine\n"}, alice)
            assert code_of(written) is None, f"{what}, then a write: {written.text}"
            # A real change is refused, whatever came before it.
            raw.write_bytes("f.txt", b"theirs\n")
            refused = call(ctx, "write", {"file_path": "f.txt", "content": "mine again\n"}, alice)
            assert code_of(refused) == "FS_STALE_VERSION", f"{what}: {refused.text}"
            assert raw.read_bytes("f.txt") == b"theirs\n"

    def test_two_writers_from_one_base_still_one_wins_when_one_rewrote_the_same_bytes(
        self, remembering: FileSystem
    ) -> None:
        fs = remembering

        async def body() -> None:
            target, base = await written(fs, "a.txt", "base\n")
            guard = ReplaceIfVersion(base.version)
            same = await fs.write_text(target, "base\n", guard)  # identical bytes, new version
            first = await fs.write_text(target, "first\n", guard)  # the same text: proceeds
            assert first.before_version == same.version
            await expect_error(E.FS_STALE_VERSION, fs.write_text(target, "second\n", guard))
            assert await read(fs, "a.txt") == "first\n"

        run(body())

    # -- clean rebase (opt-in) ----------------------------------------------------------------

    def test_with_rebase_an_edit_elsewhere_lands_on_top_of_the_change(
        self, remembering: FileSystem, raw: RawStore
    ) -> None:
        ctx, alice = _stale_session(remembering, raw, rebase=True)
        done = call(ctx, "edit", EDIT, alice)
        assert code_of(done) is None, done.text
        first, _, rest = done.text.partition("\n\n")
        assert first.endswith("has been updated successfully.")
        assert rest.startswith("Applied on top of a change made since you read the file:\n@@ "), (
            done.text
        )
        assert "\n-line 3\n+line three, changed outside\n" in rest
        assert raw.read_bytes("f.txt") == BOTH.encode()
        # The session has seen the result: its next edit needs no read.
        more = {"file_path": "f.txt", "old_string": "line 11\n", "new_string": "line 11!\n"}
        assert code_of(call(ctx, "edit", more, alice)) is None

    def test_with_rebase_an_overlapping_edit_is_refused_and_nothing_is_lost(
        self, remembering: FileSystem, raw: RawStore
    ) -> None:
        ctx = _tools(remembering, rebase=True)
        raw.write_bytes("f.txt", TEXT.encode())
        cases = {
            # the outside change on a line the edit spans
            "line 3 changed": ("line 2\nline 3\n", TEXT.replace("line 3\n", "line III\n")),
            # a line inserted inside the edit's match
            "a line inserted inside": (
                "line 4\nline 5\n",
                TEXT.replace("line 4\n", "line 4\ninserted\n"),
            ),
            # a line deleted inside the edit's match
            "a line deleted inside": ("line 4\nline 5\nline 6\n", TEXT.replace("line 5\n", "")),
            # the same line edited by both
            "the same line": ("line 7\n", TEXT.replace("line 7\n", "line seven\n")),
        }
        for what, (old, outside) in cases.items():
            raw.write_bytes("f.txt", TEXT.encode())
            alice = execution()
            call(ctx, "read", {"file_path": "f.txt"}, alice)
            raw.write_bytes("f.txt", outside.encode())
            args = {"file_path": "f.txt", "old_string": old, "new_string": "MINE\n"}
            refused = call(ctx, "edit", args, alice)
            assert code_of(refused) == "FS_STALE_VERSION", f"{what}: {refused.text}"
            assert raw.read_bytes("f.txt") == outside.encode(), what

    def test_with_rebase_a_multi_edit_lands_only_when_no_edit_touches_the_change(
        self, remembering: FileSystem, raw: RawStore
    ) -> None:
        ctx, alice = _stale_session(remembering, raw, rebase=True, multi_edit=True)
        edits = [
            {"old_string": "line 1\n", "new_string": "line one\n"},
            {"old_string": "line 10\n", "new_string": "line ten\n"},
        ]
        done = call(ctx, "multi_edit", {"file_path": "f.txt", "edits": edits}, alice)
        assert code_of(done) is None, done.text
        assert raw.read_bytes("f.txt") == BOTH.replace("line 1\n", "line one\n").encode()
        raw.write_bytes("f.txt", BOTH.replace("line 12\n", "line twelve\n").encode())
        touching = [{"old_string": "line 11\nline 12\n", "new_string": "end\n"}]
        refused = call(ctx, "multi_edit", {"file_path": "f.txt", "edits": touching}, alice)
        assert code_of(refused) == "FS_STALE_VERSION", refused.text

    def test_with_rebase_a_write_on_a_stale_file_is_refused(
        self, remembering: FileSystem, raw: RawStore
    ) -> None:
        ctx, alice = _stale_session(remembering, raw, rebase=True)
        refused = call(ctx, "write", {"file_path": "f.txt", "content": "mine\n"}, alice)
        assert code_of(refused) == "FS_STALE_VERSION"
        assert raw.read_bytes("f.txt") == OUTSIDE.encode()

    def test_without_rebase_a_clean_stale_edit_is_still_refused(
        self, remembering: FileSystem, raw: RawStore
    ) -> None:
        ctx, alice = _stale_session(remembering, raw)
        assert code_of(call(ctx, "edit", EDIT, alice)) == "FS_STALE_VERSION"
        assert raw.read_bytes("f.txt") == OUTSIDE.encode()

    # -- contention through the cache -----------------------------------------------------------

    @pytest.fixture
    def cache_contention(self) -> tuple[int, int]:
        """``(threads, increments each)`` for the contention test through the cache.

        Small by default, to keep the suite fast; the project's S3 run asks
        for 6 × 20.
        """
        return (4, 5)

    def test_threads_incrementing_through_the_cache_lose_nothing(
        self, remembering: FileSystem, cache_contention: tuple[int, int]
    ) -> None:
        fs = remembering
        threads, times = cache_contention
        run(write(fs, "counter.txt", "count=0\n"))
        target = run(fs.resolve("counter.txt"))

        def work(_: int) -> int:
            # read_versioned fills the cache; each edit at that version is one request.
            return asyncio.run(increment(fs, target, times, via="edit"))

        conflicts = in_threads(threads, work)
        assert counter_value(run(read(fs, "counter.txt"))) == threads * times, conflicts

    def test_a_session_that_read_records_the_version_the_change_moved_it_to(
        self, remembering: FileSystem, raw: RawStore
    ) -> None:
        ctx, alice = _stale_session(remembering, raw)
        policy = next(p for p in ctx.plugins if isinstance(p, ObservationPolicy))
        call(ctx, "edit", EDIT, alice)
        target = run(remembering.resolve("f.txt"))
        seen = run(policy.observation(alice.agent.session, target))
        assert seen == Present(run(version(remembering, "f.txt")))


def _tools(fs: FileSystem, *, rebase: bool, **tool_options: Any) -> Context:
    """The file tools over ``fs`` under ``ObservationPolicy(rebase=rebase)``."""
    ctx = tools_context(fs, policy=False, **tool_options)
    ctx.plugin(ObservationPolicy(rebase=rebase))
    return ctx


def _stale_session(
    fs: FileSystem, raw: RawStore, *, rebase: bool = False, **tool_options: Any
) -> tuple[Context, ToolExecution]:
    """Tools, and a session that read ``TEXT`` in f.txt, which has since become ``OUTSIDE``."""
    ctx = _tools(fs, rebase=rebase, **tool_options)
    alice = execution()
    raw.write_bytes("f.txt", TEXT.encode())
    assert code_of(call(ctx, "read", {"file_path": "f.txt"}, alice)) is None
    raw.write_bytes("f.txt", OUTSIDE.encode())
    return ctx, alice


async def _seen_then_changed(
    fs: FileSystem, raw: RawStore, outside: bytes | None
) -> tuple[FsTarget, FsVersion]:
    """f.txt read at ``TEXT`` through ``fs``, then rewritten to ``outside`` (None: deleted)."""
    raw.write_bytes("f.txt", TEXT.encode())
    target = await fs.resolve("f.txt")
    _, seen = await read_versioned(fs, target)
    if outside is None:
        raw.delete("f.txt")
    else:
        raw.write_bytes("f.txt", outside)
    return target, seen
