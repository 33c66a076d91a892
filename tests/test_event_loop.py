"""No call stalls another: a pathological edit must not delay an unrelated read.

A ``replace_all`` of a token on every other line of a 4 KB file once took
~50 s in difflib, on the server's event loop, and an unrelated read sent
right after waited just as long.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from fsseam import Agent, ToolExecution, open_fs
from fsseam.testing.harness import Session, make_context
from fsseam.tools import snippet

# stdio_client's errlog defaults to the sys.stderr of when mcp was imported, which
# may be a pytest capture without a descriptor: give the server the real one.
_ERRLOG = sys.__stderr__

PATHOLOGICAL = "x\nt\n" * 1000  # 4 KB
EDIT = {"file_path": "p.txt", "old_string": "t", "new_string": "u", "replace_all": True}


def test_read_answers_while_a_pathological_edit_runs_in_process(tmp_path: Path) -> None:
    (tmp_path / "p.txt").write_text(PATHOLOGICAL)
    (tmp_path / "small.txt").write_text("hello\n")
    ctx = make_context(open_fs(str(tmp_path)))
    run = ToolExecution(agent=Agent(session=Session()))

    async def body() -> float:
        await ctx.tools.execute("read", {"file_path": "p.txt"}, run)
        started = time.perf_counter()
        edit = asyncio.create_task(ctx.tools.execute("edit", EDIT, run))
        await asyncio.sleep(0.2)  # the edit is under way
        read = await ctx.tools.execute("read", {"file_path": "small.txt"}, run)
        latency = time.perf_counter() - started - 0.2
        assert not read.is_error
        result = await asyncio.wait_for(edit, 30)
        assert not result.is_error, result.text
        return latency

    assert asyncio.run(body()) < 1.0
    assert (tmp_path / "p.txt").read_text() == "x\nu\n" * 1000


@pytest.mark.parametrize("tool", ["write", "edit", "multi_edit"])
def test_the_change_snippet_is_computed_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str
) -> None:
    """Even a comparison slower than any real one (the budget bounds it) leaves the loop free."""
    real = snippet.compare

    def slow_compare(*args: Any, **kwargs: Any) -> snippet.Change:
        time.sleep(1.5)
        return real(*args, **kwargs)

    monkeypatch.setattr(snippet, "compare", slow_compare)
    (tmp_path / "p.txt").write_text("one\n")
    (tmp_path / "small.txt").write_text("hello\n")
    ctx = make_context(open_fs(str(tmp_path)), multi_edit=True)
    run = ToolExecution(agent=Agent(session=Session()))
    args = {
        "write": {"file_path": "p.txt", "content": "two\n"},
        "edit": {"file_path": "p.txt", "old_string": "one", "new_string": "two"},
        "multi_edit": {
            "file_path": "p.txt",
            "edits": [{"old_string": "one", "new_string": "two"}],
        },
    }[tool]

    async def body() -> float:
        await ctx.tools.execute("read", {"file_path": "p.txt"}, run)
        started = time.perf_counter()
        change = asyncio.create_task(ctx.tools.execute(tool, args, run))
        await asyncio.sleep(0.3)  # the change is committed and being compared
        await ctx.tools.execute("read", {"file_path": "small.txt"}, run)
        latency = time.perf_counter() - started - 0.3
        result = await change
        assert result.text.endswith("\n\n1: two"), result.text
        return latency

    assert asyncio.run(body()) < 1.0


def test_over_mcp_a_small_read_answers_in_under_a_second_during_the_edit(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters, stdio_client, types

    root = tmp_path / "ws"
    root.mkdir()
    (root / "p.txt").write_text(PATHOLOGICAL)
    (root / "small.txt").write_text("hello\n")
    # The SDK passes the server only a few environment variables: pass them all,
    # so the server imports the same fsseam (PYTHONPATH) as this test.
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "fsseam", "serve", str(root)],
        cwd=root,
        env=dict(os.environ),
    )
    timings: dict[str, float] = {}

    async def body() -> None:
        async with (
            stdio_client(params, errlog=_ERRLOG) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.call_tool("read", {"file_path": "p.txt"})
            results: dict[str, types.CallToolResult] = {}

            async def edit() -> None:
                results["edit"] = await session.call_tool("edit", EDIT)

            async with anyio.create_task_group() as group:
                group.start_soon(edit)
                await anyio.sleep(0.2)  # the server is working on the edit
                started = time.perf_counter()
                with anyio.fail_after(5):
                    results["read"] = await session.call_tool("read", {"file_path": "small.txt"})
                timings["read"] = time.perf_counter() - started
            assert not results["read"].is_error
            assert not results["edit"].is_error, results["edit"].content

    async def bounded() -> None:
        with anyio.fail_after(60):
            await body()

    anyio.run(bounded)
    assert timings["read"] < 1.0, timings
    assert (root / "p.txt").read_text() == "x\nu\n" * 1000
