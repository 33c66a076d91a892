"""Run tool calls on a mounted workspace in a FRESH process (maybe as another user).

Usage: ``python -m tests.hardening.tool_worker SPEC_JSON`` (or ``@FILE`` holding
it, for specs too large for a command line) where the spec is
``{"url", "options", "warmup": path or null, "calls": [[tool, args], ...],
"drop_to": uid or null}``. With ``drop_to`` the worker (started as root)
first exercises every tool on a scratch directory, so that all lazy imports
are done, then becomes that user and group for good: the interpreter itself
may live where the user cannot read.
The worker mounts the root, runs the warm-up read (so every lazy import,
client and buffer exists), takes ``VmHWM`` from ``/proc/self/status`` as the
baseline, then runs each call (one policy session for all) and records
``VmHWM`` after it. It prints one JSON object: ``{"baseline_kib", "results":
[{"error", "head", "tail", "total_lines", "hwm_kib", "seconds"}]}``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from typing import Any

from fsseam import Agent, Context, FileTools, ObservationPolicy, ToolExecution, open_fs


def vm_hwm_kib() -> int:
    """Peak resident set size of this process so far (Linux), in KiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


class Session:
    """The worker's one agent session."""


def become(uid: int) -> None:
    """Exercise the tools as root once, then drop to ``uid`` (and its group) for good."""
    with tempfile.TemporaryDirectory() as scratch:
        ctx = Context(open_fs(scratch))
        ctx.plugin(ObservationPolicy())
        ctx.plugin(FileTools())
        run = ToolExecution(agent=Agent(session=Session()))
        for tool, args in [
            ("write", {"file_path": "a/b.txt", "content": "x\n"}),
            ("read", {"file_path": "a/b.txt"}),
            ("edit", {"file_path": "a/b.txt", "old_string": "x", "new_string": "y"}),
            ("read", {"file_path": "missing"}),
            ("write", {"file_path": "bad", "old": 1}),
        ]:
            ctx.tools.execute_sync(tool, args, run)
    vm_hwm_kib()
    json.dumps({"warm": [None, 1.5]})
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def main(spec: dict[str, Any]) -> dict[str, Any]:
    if spec.get("drop_to") is not None:
        become(int(spec["drop_to"]))
    ctx = Context(open_fs(spec["url"], **spec.get("options", {})))
    ctx.plugin(ObservationPolicy())
    ctx.plugin(FileTools())
    run = ToolExecution(agent=Agent(session=Session()))
    if spec.get("warmup"):
        warm = ctx.tools.execute_sync("read", {"file_path": spec["warmup"]}, run)
        if warm.is_error:
            raise RuntimeError(warm.text)
    baseline = vm_hwm_kib()
    results: list[dict[str, Any]] = []
    for tool, args in spec["calls"]:
        started = time.perf_counter()
        result = ctx.tools.execute_sync(tool, args, run)
        seconds = time.perf_counter() - started
        value = None if result.is_error else result.value
        results.append(
            {
                "error": result.error,
                "head": result.text[:4200],
                "tail": result.text[-400:],
                "total_lines": value.get("total_lines") if value else None,
                "hwm_kib": vm_hwm_kib(),
                "seconds": round(seconds, 3),
            }
        )
    return {"baseline_kib": baseline, "results": results}


def load(argument: str) -> dict[str, Any]:
    if argument.startswith("@"):
        with open(argument[1:], encoding="utf-8") as source:
            spec: dict[str, Any] = json.load(source)
            return spec
    loaded: dict[str, Any] = json.loads(argument)
    return loaded


if __name__ == "__main__":
    print(json.dumps(main(load(sys.argv[1]))), flush=True)
