"""Small helpers the suite's tests share: running coroutines, expecting codes, workers.

The one-call shorthands over a ``FileSystem`` (``write``, ``read``...) are in
:mod:`fsseam.testing.suite._helpers`.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import json
import queue
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import IO, Any, ParamSpec, TypeVar

import pytest

from fsseam.seam import (
    FileSystem,
    FsError,
    FsErrorCode,
    FsTarget,
)
from fsseam.testing._worker import encode_payload, increment
from fsseam.testing.fixtures import FsSpec

T = TypeVar("T")
P = ParamSpec("P")

E = FsErrorCode
"""Short alias the suite's modules use for error codes."""

BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte order mark."""

MIXED_TEXT = "ascii é ß € 世界 🎉 \u0301\n"
"""Characters of every UTF-8 length (1 to 4 bytes), so any chunk boundary may split one."""


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Drive one test body on a fresh event loop (no loop is ever assumed)."""
    return asyncio.run(coro)


def async_test(test: Callable[P, Coroutine[Any, Any, None]]) -> Callable[P, None]:
    """An ``async def`` test as the plain synchronous test pytest collects.

    The wrapper runs the whole test, arrange to last assert, on one fresh loop
    with :func:`run`, so a backend's test run needs no async plugin
    (pytest-asyncio, anyio) and the suite never assumes which loop a store's
    client lives on. Fixtures and marks work as on the ``async def``.
    """

    @functools.wraps(test)
    def sync_test(*args: P.args, **kwargs: P.kwargs) -> None:
        run(test(*args, **kwargs))

    return sync_test


async def expect_error(code: FsErrorCode, call: Awaitable[Any]) -> FsError:
    """Await ``call`` and require an :class:`FsError` with exactly ``code``."""
    try:
        result = await call
    except FsError as exc:
        error = exc
    else:
        pytest.fail(f"expected FsError {code.value}, but the call returned {result!r}")
    assert error.code == code, f"expected {code.value}, got {error.code.value}: {error}"
    return error


async def result_or_error(call: Awaitable[T]) -> T | FsError:
    """What ``call`` returned, or the :class:`FsError` it raised."""
    try:
        return await call
    except FsError as exc:
        return exc


def absolute_spelling(display_path: str) -> str:
    """``display_path`` without its scheme: the absolute path, or ``/bucket/key``."""
    if "://" not in display_path:
        return display_path
    return "/" + display_path.split("://", 1)[1].lstrip("/")


def url_spelling(display_path: str) -> str:
    """``display_path`` as a full URL (``file://`` for a local path)."""
    return display_path if "://" in display_path else "file://" + display_path


def in_threads(count: int, work: Callable[[int], T]) -> list[T]:
    """Run ``work(i)`` in ``count`` threads at once; re-raise the first failure."""
    with ThreadPoolExecutor(count) as pool:
        futures = [pool.submit(work, i) for i in range(count)]
        return [future.result(timeout=120) for future in futures]


async def increment_many_tasks(
    fs: FileSystem, target: FsTarget, tasks: int, times: int, via: str
) -> None:
    """``tasks`` asyncio tasks, each adding ``times`` to the counter."""
    await asyncio.gather(*(increment(fs, target, times, via=via) for _ in range(tasks)))


@dataclass(frozen=True, slots=True)
class WorkerResult:
    """How one worker's job ended."""

    returncode: int
    """0 when the job ran to its end; otherwise non-zero (the process's exit status)."""
    result: dict[str, Any] | None
    """The job's result (``None`` unless ``returncode`` is 0)."""
    stderr: str
    """What went wrong: the job's traceback, or the tail of the worker's stderr."""


_EOF = ""


class _Worker:
    """One ``python -m fsseam.testing._worker --serve`` process, read by two daemon threads."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fsseam.testing._worker", "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._lines: queue.Queue[str] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=200)
        assert self.proc.stdout is not None
        assert self.proc.stderr is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()
        threading.Thread(target=self._stderr.extend, args=(self.proc.stderr,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(_EOF)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def receive(self, deadline: float) -> str:
        """The next line, or ``""`` when the worker died or ``deadline`` passed."""
        try:
            return self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return _EOF

    def stderr(self) -> str:
        return "".join(self._stderr)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


_IDLE: list[_Worker] = []
_IDLE_LOCK = threading.Lock()


def _take_workers(count: int) -> list[_Worker]:
    with _IDLE_LOCK:
        alive = [worker for worker in _IDLE if worker.proc.poll() is None]
        taken, _IDLE[:] = alive[:count], alive[count:]
    return taken + [_Worker() for _ in range(count - len(taken))]


def _release_workers(workers: list[_Worker]) -> None:
    with _IDLE_LOCK:
        _IDLE.extend(workers)


@atexit.register
def _stop_idle_workers() -> None:
    with _IDLE_LOCK:
        workers, _IDLE[:] = list(_IDLE), []
    for worker in workers:
        worker.kill()


def run_workers(
    spec: FsSpec, payloads: list[dict[str, Any]], timeout: float = 90, *, fresh: bool = False
) -> list[WorkerResult]:
    """Run one job per payload in its own process, released together; collect the results.

    The processes are kept for the next call (importing a store's SDK takes a
    second or more); ``fresh=True`` starts new ones that exit after their job,
    for jobs that kill their process.
    """
    if fresh:
        return _run_fresh(spec, payloads, timeout)
    url, options = spec
    workers = _take_workers(len(payloads))
    healthy: list[_Worker] = []
    deadline = time.monotonic() + timeout
    try:
        for worker, payload in zip(workers, payloads, strict=True):
            worker.send(encode_payload({"url": url, "options": options, **payload}))
        for worker in workers:
            line = worker.receive(deadline)
            if line != "ready":
                pytest.fail(f"worker failed to start: {line!r}\n{worker.stderr()}")
        for worker in workers:
            worker.send("go")
        results: list[WorkerResult] = []
        for worker in workers:
            line = worker.receive(deadline)
            if not line:
                results.append(
                    WorkerResult(-1, None, f"no answer in {timeout} s\n{worker.stderr()}")
                )
                continue
            answer = json.loads(line)
            if "error" in answer:
                results.append(WorkerResult(1, None, answer["error"]))
            else:
                results.append(WorkerResult(0, answer["result"], ""))
            healthy.append(worker)
        return results
    finally:
        for worker in workers:
            if worker not in healthy:
                worker.kill()
        _release_workers(healthy)


def _run_fresh(spec: FsSpec, payloads: list[dict[str, Any]], timeout: float) -> list[WorkerResult]:
    url, options = spec
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fsseam.testing._worker",
                encode_payload({"url": url, "options": options, **payload}),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for payload in payloads
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if line.strip() != "ready":
                _, err = proc.communicate(timeout=timeout)
                pytest.fail(f"worker failed to start: {line!r}\n{err}")
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results: list[WorkerResult] = []
        for proc in procs:
            out, err = proc.communicate(timeout=timeout)
            lines = out.strip().splitlines()
            parsed = json.loads(lines[-1]) if proc.returncode == 0 and lines else None
            results.append(WorkerResult(proc.returncode, parsed, err))
        return results
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
