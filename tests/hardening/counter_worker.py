"""One writer of the cross-process counter test: read→edit increments through the tools.

Usage: ``python -m tests.hardening.counter_worker SPEC_JSON`` with the spec
``{"root", "attempts", "ready", "go", "drop_to": uid or null}``. The worker
warms up (and, with ``drop_to``, becomes that user: see
``tool_worker.become``), reads the counter once, creates the file ``ready``,
waits until the file ``go`` exists so that every worker starts at once, then makes
``attempts`` read→edit attempts on ``counter.txt``, each reading the value and
replacing it by value + 1 under the policy's guard. It prints
``{"edits": successful guarded edits, "stale": refusals, "ms": time taken}``; any other
outcome is a failure (exit status 1, the tool text on stderr).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from fsseam import Agent, Context, FileTools, ObservationPolicy, ToolExecution, open_fs
from tests.hardening.tool_worker import Session, become


def main(spec: dict[str, Any]) -> dict[str, int]:
    if spec.get("drop_to") is not None:
        become(int(spec["drop_to"]))
    ctx = Context(open_fs(spec["root"]))
    ctx.plugin(ObservationPolicy())
    ctx.plugin(FileTools())
    run = ToolExecution(agent=Agent(session=Session()))
    if ctx.tools.execute_sync("read", {"file_path": "counter.txt"}, run).is_error:
        raise SystemExit("cannot read the counter")
    with open(spec["ready"], "w"):
        pass
    deadline = time.monotonic() + 60
    while not os.path.exists(spec["go"]):
        if time.monotonic() > deadline:
            raise SystemExit("the go file never appeared")
        time.sleep(0.005)
    edits = stale = 0
    started = time.monotonic()
    for _ in range(int(spec["attempts"])):
        read = ctx.tools.execute_sync("read", {"file_path": "counter.txt"}, run)
        if read.value is None:
            raise SystemExit(f"read failed: {read.text}")
        value = int(read.value["lines"][0]["text"])
        args = {"file_path": "counter.txt", "old_string": str(value), "new_string": str(value + 1)}
        result = ctx.tools.execute_sync("edit", args, run)
        if not result.is_error:
            edits += 1
        elif result.error is not None and result.error["code"] == "FS_STALE_VERSION":
            stale += 1
        else:
            raise SystemExit(f"edit failed: {result.text}")
    return {"edits": edits, "stale": stale, "ms": round((time.monotonic() - started) * 1000)}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))), flush=True)
