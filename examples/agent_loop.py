"""A minimal agent loop driving fsseam's tools with a scripted fake model.

    python examples/agent_loop.py [WORKSPACE_URL]

No network and no API key: ``ScriptedModel`` plays the LLM, answering each
tool result with the next tool call, the way a real model would. Two agents
share one workspace (a temp folder by default, or any URL: ``memory://demo``,
``s3://bucket/prefix``...). Alice reads a config file; Bob changes it behind
her back; Alice's edit is refused as stale, and the refusal shows her Bob's
change, so she sends her edit again without reading the file (had the change
not been shown, she would read first). Nothing Bob wrote is lost.

Swap ``ScriptedModel`` for your model client: give it ``ctx.tools.schemas(
format="openai")`` (or "anthropic"), and feed ``result.text`` back as the tool
message.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from fsseam import Agent, Context, FileTools, ObservationPolicy, ToolExecution, ToolResult, open_fs

ToolCall = tuple[str, dict[str, Any]]


@dataclass
class ScriptedModel:
    """Stands in for an LLM: each turn looks at the last tool result and picks a call."""

    name: str
    script: Callable[[ToolResult | None], Iterator[ToolCall]]


def alice(_: ToolResult | None) -> Iterator[ToolCall]:
    """Read, try an edit (which Bob's change makes stale), then edit again."""
    edit = {"file_path": "app/config.ini", "old_string": "retries = 3", "new_string": "retries = 5"}
    result = yield ("read", {"file_path": "app/config.ini"})
    result = yield ("edit", edit)
    if result is not None and result.error and result.error["code"] == "FS_STALE_VERSION":
        if "What changed since you read it:" not in result.text:
            yield ("read", {"file_path": "app/config.ini"})  # the change was not shown
        yield ("edit", edit)  # Bob's change is elsewhere: the same edit still applies


def bob(_: ToolResult | None) -> Iterator[ToolCall]:
    """Read, then change the timeout while Alice is thinking."""
    yield ("read", {"file_path": "app/config.ini"})
    yield (
        "edit",
        {"file_path": "app/config.ini", "old_string": "timeout = 30", "new_string": "timeout = 60"},
    )


class Session:
    """One conversation; the policy remembers what each session has read."""


def drive(ctx: Context, model: ScriptedModel, steps: int, state: dict[str, Any]) -> None:
    """Run ``steps`` turns of ``model``, printing what the model would see."""
    run: ToolExecution = state.setdefault(model.name, ToolExecution(agent=Agent(session=Session())))
    gen = state.setdefault(model.name + ":gen", model.script(None))
    last: ToolResult | None = state.get(model.name + ":last")
    for _ in range(steps):
        try:
            name, args = gen.send(last) if last is not None else next(gen)
        except StopIteration:
            return
        last = ctx.tools.execute_sync(name, args, run)
        state[model.name + ":last"] = last
        status = "error" if last.is_error else "ok"
        print(f"--- {model.name} calls {name}({args}) -> {status}")
        print(last.text)


def main(url: str | None = None) -> bytes:
    """Run the demo; returns the final bytes of the config file."""
    workspace = url or tempfile.mkdtemp(prefix="fsseam-demo-")
    ctx = Context(open_fs(workspace))
    ctx.plugin(ObservationPolicy())
    ctx.plugin(FileTools())
    setup = ToolExecution(agent=Agent(session=Session()))
    ctx.tools.execute_sync(
        "write",
        {"file_path": "app/config.ini", "content": "[net]\r\ntimeout = 30\r\nretries = 3\r\n"},
        setup,
    )
    print(f"workspace: {workspace}\n")
    state: dict[str, Any] = {}
    a, b = ScriptedModel("alice", alice), ScriptedModel("bob", bob)
    drive(ctx, a, 1, state)  # alice reads
    drive(ctx, b, 2, state)  # bob reads and edits
    drive(ctx, a, 3, state)  # alice's edit is stale, Bob's change shown; she edits again
    final = ctx.tools.execute_sync("read", {"file_path": "app/config.ini"}, None)
    print("\n--- final file")
    print(final.text)
    return _raw_bytes(ctx)


def _raw_bytes(ctx: Context) -> bytes:
    import asyncio

    async def grab() -> bytes:
        target = await ctx.fs.resolve("app/config.ini")
        text = await ctx.fs.read_text(target)
        return text.encode()

    return asyncio.run(grab())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
