"""Concurrent writers: tasks, threads and processes lose no update."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable

import pytest

from fsseam.seam import (
    CreateIfAbsent,
    FileSystem,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsWriteIntent,
    ReplaceIfVersion,
)
from fsseam.testing._support import (
    E,
    async_test,
    expect_error,
    in_threads,
    increment_many_tasks,
    result_or_error,
    run,
    run_workers,
)
from fsseam.testing._worker import counter_value
from fsseam.testing.fixtures import FsSpec, RawStore
from fsseam.testing.suite._helpers import read, version, write, written

__all__ = ["ConcurrencySuite", "CrossProcessSuite"]


def _at_once(
    fs: FileSystem, path: str, write_of: Callable[[int], tuple[str, FsWriteIntent]]
) -> list[FsErrorCode | None]:
    """Four threads released together, each writing ``path``: the code each got (``None``: won).

    Thread ``i`` writes the content and guard ``write_of(i)`` gives.
    """
    barrier = threading.Barrier(4)

    async def attempt(i: int) -> FsErrorCode | None:
        target = await fs.resolve(path)
        content, guard = write_of(i)
        barrier.wait()
        error = await result_or_error(fs.write_text(target, content, guard))
        return error.code if isinstance(error, FsError) else None

    return in_threads(4, lambda i: asyncio.run(attempt(i)))


class ConcurrencySuite:
    """One ``FileSystem`` shared by tasks and threads: guards lose no update (every store)."""

    @pytest.mark.parametrize("via", ["edit", "write"])
    @async_test
    async def test_tasks_guarded_increments_are_exact(self, fs: FileSystem, via: str) -> None:
        target, _ = await written(fs, "counter.txt", "count=0\n")
        await increment_many_tasks(fs, target, tasks=8, times=3, via=via)
        assert counter_value(await fs.read_text(target)) == 24

    def test_threads_with_own_loops_sharing_one_filesystem_are_exact(self, fs: FileSystem) -> None:
        run(write(fs, "counter.txt", "count=0\n"))
        target = run(fs.resolve("counter.txt"))

        def work(i: int) -> None:
            via = "edit" if i % 2 == 0 else "write"
            asyncio.run(increment_many_tasks(fs, target, tasks=2, times=3, via=via))

        in_threads(4, work)
        assert counter_value(run(fs.read_text(target))) == 24

    @async_test
    async def test_two_writers_from_one_version_exactly_one_wins(self, fs: FileSystem) -> None:
        for content in ("same\n", None):
            base = await write(fs, "a.txt", "base\n")
            guard = ReplaceIfVersion(base.version)
            first = await write(fs, "a.txt", content or "first\n", guard)
            await expect_error(E.FS_STALE_VERSION, write(fs, "a.txt", content or "second\n", guard))
            assert await version(fs, "a.txt") == first.version
            assert await read(fs, "a.txt") == (content or "first\n")

    @async_test
    async def test_two_edits_from_one_version_exactly_one_wins(self, fs: FileSystem) -> None:
        target, base = await written(fs, "a.txt", "value=1\n")
        await fs.edit_text(target, FsEditRequest("value=1", "value=2"), base.version)
        await expect_error(
            E.FS_STALE_VERSION,
            fs.edit_text(target, FsEditRequest("value", "VALUE"), base.version),
        )
        assert await read(fs, "a.txt") == "value=2\n"

    def test_concurrent_writers_from_one_version_exactly_one_wins(self, fs: FileSystem) -> None:
        base = run(write(fs, "a.txt", "base\n"))
        # Identical bytes on purpose: success must never be decided by content.
        codes = _at_once(fs, "a.txt", lambda _: ("same\n", ReplaceIfVersion(base.version)))
        assert Counter(codes) == {None: 1, E.FS_STALE_VERSION: 3}, codes

    def test_concurrent_create_if_absent_exactly_one_wins(self, fs: FileSystem) -> None:
        codes = _at_once(fs, "new/a.txt", lambda i: (f"writer {i}\n", CreateIfAbsent()))
        assert Counter(codes) == {None: 1, E.FS_NOT_OBSERVED: 3}, codes
        assert run(read(fs, "new/a.txt")) == f"writer {codes.index(None)}\n"

    @async_test
    async def test_identical_creates_race_one_winner(self, fs: FileSystem) -> None:
        # The same bytes from every writer: a loser must not pass for the winner.
        target = await fs.resolve("a.txt")
        results = await asyncio.gather(
            *(fs.write_text(target, "same\n", CreateIfAbsent()) for _ in range(3)),
            return_exceptions=True,
        )
        losses = [item for item in results if isinstance(item, FsError)]
        assert len(losses) == 2, results
        assert {item.code for item in losses} == {FsErrorCode.FS_NOT_OBSERVED}

    def test_edits_from_threads_each_land_once(self, fs: FileSystem, raw: RawStore) -> None:
        # Unguarded edits of different lines: each retries its lost races, none is lost.
        names = [f"w{i}" for i in range(8)]
        run(write(fs, "list.txt", "".join(f"{n}=0\n" for n in names), CreateIfAbsent()))
        target = run(fs.resolve("list.txt"))

        def work(i: int) -> None:
            name = names[i]
            asyncio.run(fs.edit_text(target, FsEditRequest(f"{name}=0", f"{name}=1")))

        in_threads(len(names), work)
        assert raw.read_bytes("list.txt") == "".join(f"{n}=1\n" for n in names).encode()


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
