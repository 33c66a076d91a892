"""One tool call in its own process: ``python observation_worker.py ROOT STORE SESSION TOOL ARGS``.

Mounts ROOT with an ``ObservationPolicy`` on the store URL, runs TOOL with the
JSON ARGS as SESSION, prints ``{"is_error", "text"}`` and exits: the process
that read is gone by the time another one edits.
"""

from __future__ import annotations

import asyncio
import json
import sys

from fsseam import (
    Agent,
    Context,
    FileTools,
    ObservationPolicy,
    ToolExecution,
    open_fs,
    open_observations,
)


async def main(root: str, store_url: str, session: str, tool: str, args: str) -> None:
    store = open_observations(store_url)
    ctx = Context(open_fs(root)).plugin(ObservationPolicy(store=store)).plugin(FileTools())
    try:
        run = ToolExecution(agent=Agent(session=session))
        result = await ctx.tools.execute(tool, json.loads(args), run)
    finally:
        await store.aclose()
    print(json.dumps({"is_error": result.is_error, "text": result.text}))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
