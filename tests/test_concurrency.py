"""No lost update through the tools: processes, threads and tasks sharing one file."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from fsseam import Agent, ToolExecution, open_fs
from fsseam.testing.harness import make_context
from tests.counter_worker import Session, increment

REPO = Path(__file__).resolve().parents[1]


def test_four_processes_increment_local_counter_exactly(tmp_path: Path) -> None:
    (tmp_path / "counter.txt").write_text("0\n")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.counter_worker", str(tmp_path), "15"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        assert int(out.strip()) >= 0
    assert (tmp_path / "counter.txt").read_text() == "60\n"


@pytest.mark.parametrize("backend", ["local", "memory"])
def test_threads_with_own_loops_and_tasks_share_one_context(tmp_path: Path, backend: str) -> None:
    url = str(tmp_path) if backend == "local" else f"memory://threads-{tmp_path.name}"
    fs = open_fs(url)
    ctx = make_context(fs)
    ctx.tools.execute_sync("write", {"file_path": "counter.txt", "content": "0\n"}, None)
    errors: list[BaseException] = []

    def worker() -> None:
        async def both() -> None:
            runs = [ToolExecution(agent=Agent(session=Session())) for _ in range(2)]
            await asyncio.gather(*(increment(ctx, run, 10) for run in runs))

        try:
            asyncio.run(both())
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    res = ctx.tools.execute_sync("read", {"file_path": "counter.txt"}, None)
    assert res.value is not None
    assert res.value["lines"][0]["text"] == "60"
