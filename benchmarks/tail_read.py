"""A tail read (``read`` with ``offset=-N``) against a forward read of the same big file.

Both scan the whole file once (the footer's total is exact), so a tail read
should cost what a forward read costs. The calls go through
``ctx.tools.execute`` (arguments, policy, rendering included), interleaved
round by round so the machine's load hits both alike; medians are reported
with the tail/forward ratio.

    PYTHONPATH=src python benchmarks/tail_read.py                 # 50 MB, local + memory
    PYTHONPATH=src python benchmarks/tail_read.py --mb 200 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import fsspec

from fsseam import Agent, Context, FileTools, ObservationPolicy, ToolExecution, open_fs

CASES = [
    ("forward (offset 1)", {}),
    ("tail -50", {"offset": -50}),
    ("tail -2000", {"offset": -2000}),
    ("forward from the last 50", None),  # a positive offset for the same lines
]


def _content(megabytes: int) -> bytes:
    line = b"2026-01-01T00:00:00Z INFO request served in 12 ms, path=/api/items/000000 ok\n"
    count = megabytes * 1_000_000 // len(line)
    return line * count


async def _measure(ctx: Context, rounds: int, lines: int) -> dict[str, list[float]]:
    run = ToolExecution(agent=Agent(session="bench"))
    times: dict[str, list[float]] = {name: [] for name, _ in CASES}
    for _ in range(rounds):
        for name, extra in CASES:
            args = {"file_path": "big.log", **(extra or {"offset": lines - 49})}
            started = time.perf_counter()
            res = await ctx.tools.execute("read", args, run)
            times[name].append(time.perf_counter() - started)
            assert not res.is_error, res.text
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=50, help="file size in MB (default 50)")
    parser.add_argument("--rounds", type=int, default=9, help="rounds per case (default 9)")
    args = parser.parse_args()
    data = _content(args.mb)
    lines = data.count(b"\n")
    tmp = Path(tempfile.mkdtemp(prefix="fsseam-tail-"))
    name = f"/bench-tail-{uuid.uuid4().hex}"
    memory = fsspec.filesystem("memory")
    try:
        (tmp / "big.log").write_bytes(data)
        memory.pipe_file(f"{name}/big.log", data)
        size = len(data) / 1e6
        print(f"{size:.0f} MB, {lines} lines, median of {args.rounds} interleaved rounds")
        for store, url in (("local", str(tmp)), ("memory", f"memory://{name}")):
            ctx = Context(open_fs(url))
            ctx.plugin(ObservationPolicy())
            ctx.plugin(FileTools())
            times = asyncio.run(_measure(ctx, args.rounds, lines))
            base = statistics.median(times[CASES[0][0]])
            for case, values in times.items():
                median = statistics.median(values)
                print(f"  {store:<7} {case:<26} {median * 1000:8.1f} ms  {median / base:5.2f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if memory.exists(name):
            memory.rm(name, recursive=True)


if __name__ == "__main__":
    main()
