"""The shipped suite itself: its layout, and that it catches broken stores quickly.

A conformance suite earns its keep by failing on a store that breaks the
contract. These tests run parts of it against deliberately broken file
systems (:class:`~fsseam.testing.harness.DelegatingFileSystem` wrappers over
the memory store) and pin that the failure is prompt and says what is wrong.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from _pytest.assertion.rewrite import AssertionRewritingHook

import fsseam.testing
import fsseam.testing.suite
from fsseam.backends import open_fs
from fsseam.seam import (
    FileSystem,
    FsEditOutcome,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsTarget,
    FsVersion,
    FsWriteIntent,
    FsWriteOutcome,
    ReplaceIfVersion,
)
from fsseam.testing import ConcurrencySuite, ConformanceSuite, FsSpec, _support
from fsseam.testing._support import run_workers
from fsseam.testing._worker import STALLED_ATTEMPTS, CounterStalled
from fsseam.testing.harness import DelegatingFileSystem


class RefusesEveryReplace(DelegatingFileSystem):
    """A store whose guarded replaces always fail as stale (what a broken If-Match does)."""

    def __init__(self, inner: FileSystem) -> None:
        super().__init__(inner)
        self._lock = threading.Lock()
        self.refused = 0

    def _refuse(self, target: FsTarget) -> FsError:
        with self._lock:
            self.refused += 1
        return FsError(
            f'"{target.display_path}" was modified since it was read', FsErrorCode.FS_STALE_VERSION
        )

    async def write_text(
        self, target: FsTarget, content: str, expected: FsWriteIntent | None = None
    ) -> FsWriteOutcome:
        if isinstance(expected, ReplaceIfVersion):
            raise self._refuse(target)
        return await self.inner.write_text(target, content, expected)

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: FsVersion | None = None
    ) -> FsEditOutcome:
        if expected is not None:
            raise self._refuse(target)
        return await self.inner.edit_text(target, edit, expected)


@pytest.fixture
def refusing() -> Iterator[RefusesEveryReplace]:
    inner = open_fs(f"memory://fsseam-suite-itself/{uuid.uuid4().hex}")
    yield RefusesEveryReplace(inner)
    inner.fs.rm(inner.root, recursive=True)


COUNTER_TESTS = [
    # (test, its parameters, concurrent writers)
    ("test_tasks_guarded_increments_are_exact", {"via": "edit"}, 8),
    ("test_tasks_guarded_increments_are_exact", {"via": "write"}, 8),
    ("test_threads_with_own_loops_sharing_one_filesystem_are_exact", {}, 8),
]


@pytest.mark.parametrize(
    ("name", "params", "writers"), COUNTER_TESTS, ids=["tasks-edit", "tasks-write", "threads"]
)
def test_counter_tests_fail_fast_on_a_store_that_refuses_every_replace(
    refusing: RefusesEveryReplace, name: str, params: dict[str, str], writers: int
) -> None:
    test = getattr(ConcurrencySuite(), name)
    started = time.monotonic()
    with pytest.raises(CounterStalled) as stalled:
        test(refusing, **params)
    elapsed = time.monotonic() - started
    assert isinstance(stalled.value, AssertionError)  # pytest reports a failure, not an error
    message = str(stalled.value)
    assert "refuses a replace at the version it just returned" in message
    assert "counter.txt" in message
    assert "count=0" in message
    # Each writer gives up after STALLED_ATTEMPTS refusals at an unchanged counter.
    assert refusing.refused <= writers * STALLED_ATTEMPTS, refusing.refused
    assert elapsed < 10, f"{name} took {elapsed:.1f} s to fail"


def _suite_modules() -> list[str]:
    package = fsseam.testing.suite
    return [f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__)]


def test_every_suite_module_is_rewritten_for_assertion_messages() -> None:
    for name in [*_suite_modules(), "fsseam.testing.fixtures", "fsseam.testing._support"]:
        module = importlib.import_module(name)
        assert isinstance(module.__loader__, AssertionRewritingHook), name


def test_conformance_suite_composes_every_concern_and_none_is_collected_alone() -> None:
    concerns = {
        obj
        for name in _suite_modules()
        for _, obj in inspect.getmembers(sys.modules[name], inspect.isclass)
        if obj.__module__ == name and obj.__name__.endswith("Suite")
    }
    assert concerns <= set(ConformanceSuite.__mro__)
    for concern in concerns:
        assert not concern.__name__.startswith("Test"), concern
        assert getattr(fsseam.testing, concern.__name__) is concern
        assert concern.__name__ in fsseam.testing.__all__


def test_a_failing_worker_job_reports_its_traceback_and_the_workers_carry_on(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "counter.txt").write_text("count=0\n")
    spec: FsSpec = (str(root), {})
    job = {"op": "increment", "path": "counter.txt", "times": 2, "via": "edit"}
    failed, *_ = run_workers(spec, [{**job, "path": "missing.txt"}, job])
    assert failed.returncode != 0
    assert failed.result is None
    assert "FS_NOT_FOUND" in failed.stderr or "does not exist" in failed.stderr, failed.stderr
    kept = {worker.proc.pid for worker in _support._IDLE}
    assert len(kept) >= 2  # a failed job does not cost its process
    again = run_workers(spec, [job, job])
    assert [result.returncode for result in again] == [0, 0], [r.stderr for r in again]
    assert kept <= {worker.proc.pid for worker in _support._IDLE}
    assert (root / "counter.txt").read_text() == "count=6\n"
