"""Worker process: N read→edit increments of counter.txt through the tools.

Usage: python -m tests.counter_worker ROOT N
Prints the number of stale retries it needed.
"""

from __future__ import annotations

import asyncio
import sys

from fsseam import Agent, Context, FileTools, ObservationPolicy, ToolExecution, open_fs


class Session:
    """One agent session."""


async def increment(ctx: Context, run: ToolExecution, times: int) -> int:
    """Increment the counter ``times`` times, retrying on FS_STALE_VERSION."""
    retries = 0
    done = 0
    while done < times:
        read = await ctx.tools.execute("read", {"file_path": "counter.txt"}, run)
        assert read.value is not None, read.text
        value = int(read.value["lines"][0]["text"])
        res = await ctx.tools.execute(
            "edit",
            {"file_path": "counter.txt", "old_string": str(value), "new_string": str(value + 1)},
            run,
        )
        if res.is_error:
            assert res.error is not None
            assert res.error["code"] == "FS_STALE_VERSION", res.text
            retries += 1
            continue
        done += 1
    return retries


def main() -> None:
    root, times = sys.argv[1], int(sys.argv[2])
    ctx = Context(open_fs(root))
    ctx.plugin(ObservationPolicy())
    ctx.plugin(FileTools())
    run = ToolExecution(agent=Agent(session=Session()))
    print(asyncio.run(increment(ctx, run, times)))


if __name__ == "__main__":
    main()
