"""``fsseam serve`` driven by the official MCP client, as a real subprocess over stdio."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client, types
from mcp.shared.exceptions import MCPError
from mcp.shared.memory import create_client_server_memory_streams

from fsseam import Context, ObservationPolicy, open_fs
from fsseam.cli import add_tools
from fsseam.mcp import build_server
from tests.mcp_http_support import env as server_env


@asynccontextmanager
async def serving(root: Path, *flags: str) -> AsyncIterator[ClientSession]:
    """``python -m fsseam serve ROOT FLAGS`` behind an initialized client session."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "fsseam", "serve", str(root), *flags],
        cwd=root,
        env=server_env(),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def run(test: Callable[[], Awaitable[None]]) -> None:
    """Drive an async test body (no pytest-asyncio here), bounded in time."""

    async def bounded() -> None:
        with anyio.fail_after(30):
            await test()

    anyio.run(bounded)


async def call(session: ClientSession, tool: str, **args: Any) -> types.CallToolResult:
    result = await session.call_tool(tool, args)
    assert isinstance(result, types.CallToolResult)
    return result


def text(result: types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def local_context(root: Path, *, read_only: bool = False) -> Context:
    ctx = Context(open_fs(str(root), read_only=read_only))
    ctx.plugin(ObservationPolicy())
    return add_tools(ctx, core_only=False)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (tmp_path / "secret.txt").write_bytes(b"outside\n")
    return root


def test_tools_listed_rendered_and_sandboxed_like_file_tools(ws: Path) -> None:
    ctx = local_context(ws)

    async def body() -> None:
        async with serving(ws) as session:
            listed = await session.list_tools()
            dumped = [
                tool.model_dump(by_alias=True, exclude_none=True, mode="json")
                for tool in listed.tools
            ]
            for tool in dumped:
                tool.pop("annotations")
            assert dumped == ctx.tools.schemas(format="mcp")
            assert [tool.name for tool in listed.tools] == [
                "read", "write", "edit", "multi_edit", "ls", "glob", "grep",
            ]  # fmt: skip
            assert "offset" in listed.tools[0].input_schema["properties"]

            read = await call(session, "read", file_path="crlf.txt")
            assert not read.is_error
            expected = ctx.tools.execute_sync("read", {"file_path": "crlf.txt"})
            assert text(read) == expected.text
            assert read.structured_content is None

            bad = await call(session, "read", file_path="crlf.txt", offset=0)
            assert bad.is_error
            assert text(bad).startswith("INVALID_ARGUMENTS: offset")

            for tool, args in [
                ("read", {"file_path": "../secret.txt"}),
                ("write", {"file_path": "../secret.txt", "content": "owned"}),
                ("write", {"file_path": "../new.txt", "content": "owned"}),
                ("read", {"file_path": str(ws.parent / "secret.txt")}),
            ]:
                result = await call(session, tool, **args)
                assert result.is_error
                assert text(result).startswith("FS_SANDBOX_DENIED: "), text(result)
                assert result.structured_content is None

    run(body)
    assert (ws.parent / "secret.txt").read_bytes() == b"outside\n"
    assert not (ws.parent / "new.txt").exists()


def test_edit_needs_a_read_in_this_session_and_an_unchanged_file(ws: Path) -> None:
    path = ws / "crlf.txt"

    async def body() -> None:
        async with serving(ws) as session:
            unseen = await call(session, "edit", file_path="crlf.txt", old_string="two",
                                new_string="2")  # fmt: skip
            assert unseen.is_error
            assert text(unseen) == (
                f'FS_NOT_OBSERVED: edit requires reading "{path}" first — read the file, then retry'
            )
            assert unseen.structured_content is None

            assert not (await call(session, "read", file_path="crlf.txt")).is_error
            path.write_bytes(b"one\r\ntwo\r\nthree\r\nfour\r\n")  # someone else changes it
            stale = await call(session, "edit", file_path="crlf.txt", old_string="two",
                               new_string="2")  # fmt: skip
            assert stale.is_error
            assert text(stale).startswith("FS_STALE_VERSION: ")
            assert text(stale).endswith("— re-read the file, then retry")
            assert path.read_bytes() == b"one\r\ntwo\r\nthree\r\nfour\r\n"

            assert not (await call(session, "read", file_path="crlf.txt")).is_error
            done = await call(session, "edit", file_path="crlf.txt", old_string="two",
                              new_string="2\nand a half")  # fmt: skip
            assert not done.is_error, text(done)
            assert text(done) == (
                f"The file {path} has been updated successfully.\n\n"
                "1: one\n2: 2\n3: and a half\n4: three\n5: four"
            )
            assert done.structured_content is None
            assert path.read_bytes() == b"one\r\n2\r\nand a half\r\nthree\r\nfour\r\n"

    run(body)


def test_read_only_server_changes_nothing(ws: Path) -> None:
    before = {p.name: p.read_bytes() for p in ws.iterdir()}

    async def body() -> None:
        async with serving(ws, "--read-only") as session:
            assert not (await call(session, "read", file_path="crlf.txt")).is_error
            for tool, args in [
                ("edit", {"file_path": "crlf.txt", "old_string": "two", "new_string": "2"}),
                ("write", {"file_path": "crlf.txt", "content": "gone"}),
                ("write", {"file_path": "new.txt", "content": "new"}),
            ]:
                result = await call(session, tool, **args)
                assert result.is_error
                assert text(result).startswith("FS_SANDBOX_DENIED: "), text(result)

    run(body)
    assert {p.name: p.read_bytes() for p in ws.iterdir()} == before


def test_each_client_connection_is_its_own_session(ws: Path) -> None:
    async def body() -> None:
        async with serving(ws) as first, serving(ws) as second:
            assert not (await call(first, "read", file_path="crlf.txt")).is_error
            other = await call(second, "edit", file_path="crlf.txt", old_string="two",
                               new_string="2")  # fmt: skip
            assert other.is_error
            assert text(other).startswith("FS_NOT_OBSERVED: ")
            mine = await call(first, "edit", file_path="crlf.txt", old_string="two",
                              new_string="2")  # fmt: skip
            assert not mine.is_error, text(mine)

    run(body)
    assert (ws / "crlf.txt").read_bytes() == b"one\r\n2\r\nthree\r\n"


# -- in process: one server, several connections --------------------------------------


@asynccontextmanager
async def connected(ctx: Context) -> AsyncIterator[ClientSession]:
    """A client connected to ``build_server(ctx)`` through in-memory streams."""
    server = build_server(ctx)
    async with (
        create_client_server_memory_streams() as (client_streams, server_streams),
        anyio.create_task_group() as tasks,
    ):
        tasks.start_soon(
            lambda: server.run(*server_streams, server.create_initialization_options())
        )
        async with ClientSession(*client_streams) as session:
            await session.initialize()
            yield session
        tasks.cancel_scope.cancel()


def test_connections_to_one_server_are_separate_sessions(ws: Path) -> None:
    ctx = local_context(ws)

    async def body() -> None:
        async with connected(ctx) as first, connected(ctx) as second:
            assert not (await call(first, "read", file_path="crlf.txt")).is_error
            refused = await call(second, "edit", file_path="crlf.txt", old_string="two",
                                 new_string="2")  # fmt: skip
            assert text(refused).startswith("FS_NOT_OBSERVED: ")
            accepted = await call(first, "edit", file_path="crlf.txt", old_string="two",
                                  new_string="2")  # fmt: skip
            assert not accepted.is_error

    run(body)


def test_unknown_tool_is_a_protocol_error(ws: Path) -> None:
    async def body() -> None:
        async with connected(local_context(ws)) as session:
            with pytest.raises(MCPError, match="Unknown tool: 'delete'"):
                await session.call_tool("delete", {"file_path": "crlf.txt"})

    run(body)
