"""``fsseam serve`` driven by the official MCP client, as a real subprocess over stdio."""

from __future__ import annotations

import json
import subprocess
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

# stdio_client's errlog defaults to the sys.stderr of when mcp was imported, which
# may be a pytest capture without a descriptor: give the server the real one.
_ERRLOG = sys.__stderr__


@asynccontextmanager
async def serving(root: Path, *flags: str) -> AsyncIterator[ClientSession]:
    """``python -m fsseam serve ROOT FLAGS`` behind an initialized client session."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "fsseam", "serve", str(root), *flags],
        cwd=root,
        env=server_env(),
    )
    async with (
        stdio_client(params, errlog=_ERRLOG) as (read, write),
        ClientSession(read, write) as session,
    ):
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
                "read", "write", "edit", "multi_edit", "delete", "move", "ls", "glob", "grep",
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
            # The change is shown (lines as read shows them, no CR) and counts as read.
            assert text(stale).endswith(
                "What changed since you read it:\n@@ -1,3 +1,4 @@\n one\n two\n three\n+four"
            )
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
            with pytest.raises(MCPError, match="Unknown tool: 'shred'"):
                await session.call_tool("shred", {"file_path": "crlf.txt"})

    run(body)


# -- annotations, read-only listing ---------------------------------------------------------


def test_tools_carry_annotations_from_their_declared_effects(ws: Path) -> None:
    async def body() -> None:
        async with serving(ws) as session:
            listed = {tool.name: tool.annotations for tool in (await session.list_tools()).tools}
            for name in ("read", "ls", "glob", "grep"):
                hints = listed[name]
                assert hints is not None
                assert hints.read_only_hint is True, name
                assert hints.destructive_hint is not True, name
            for name in ("write", "edit", "multi_edit", "delete", "move"):
                hints = listed[name]
                assert hints is not None
                assert hints.read_only_hint is False, name
                assert hints.destructive_hint is True, name

    run(body)


def test_a_tool_without_declared_effects_is_annotated_as_destructive(ws: Path) -> None:
    """delete/move and third-party tools get hints by declaring effects, not by name."""
    from fsseam import ToolResult
    from fsseam.host import READ_ONLY

    class Shout:
        name = "shout"
        description = "Say something."
        parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012

        async def run(self, ctx: Context, args: Any, execution: Any) -> ToolResult:
            return ToolResult(False, "HI")

    class Peek(Shout):
        name = "peek"
        effects = READ_ONLY

    ctx = local_context(ws)
    ctx.tools.register(Shout())
    ctx.tools.register(Peek())

    async def body() -> None:
        async with connected(ctx) as session:
            listed = {tool.name: tool.annotations for tool in (await session.list_tools()).tools}
            assert listed["shout"] is not None
            assert (listed["shout"].read_only_hint, listed["shout"].destructive_hint) == (
                False,
                True,
            )
            assert listed["peek"] is not None
            assert listed["peek"].read_only_hint is True

    run(body)


def test_read_only_server_lists_only_tools_that_change_nothing(ws: Path) -> None:
    async def body() -> None:
        async with serving(ws, "--read-only") as session:
            names = [tool.name for tool in (await session.list_tools()).tools]
            assert names == ["read", "ls", "glob", "grep"]

    run(body)


def test_serve_offers_nine_tools_by_default_and_three_with_core_tools(ws: Path) -> None:
    async def body() -> None:
        async with serving(ws) as session:
            names = [tool.name for tool in (await session.list_tools()).tools]
            assert names == [
                "read", "write", "edit", "multi_edit", "delete", "move", "ls", "glob", "grep"
            ]  # fmt: skip
        async with serving(ws, "--core-tools") as session:
            names = [tool.name for tool in (await session.list_tools()).tools]
            assert names == ["read", "write", "edit"]

    run(body)


# -- every request gets an answer --------------------------------------------------------


def test_every_stdio_request_gets_an_answer(ws: Path) -> None:
    """Lone surrogates, params of the wrong type and deep nesting each get a reply."""
    init = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}},
    }  # fmt: skip
    deep = b"[" * 100_000 + b"]" * 100_000
    lines = [
        json.dumps(init).encode(),
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read",'
        b'"arguments":{"file_path":"\\ud800.txt"}}}',
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write",'
        b'"arguments":{"file_path":"b.txt","content":"x\\udc00y"}}}',
        b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":[1,2]}',
        b'{"jsonrpc":"2.0","id":"five","method":"tools/call","params":"read"}',
        b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read",'
        b'"arguments":{"file_path":"crlf.txt","x":' + deep + b"}}}",
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":' + b"[" * 70 + b"}",
        b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"\\ud800"}}',
        b"not json at all",
        b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read",'
        b'"arguments":{"file_path":"crlf.txt"}}}',
    ]
    done = subprocess.run(
        [sys.executable, "-m", "fsseam", "serve", str(ws)],
        input=b"\n".join(lines) + b"\n",
        capture_output=True,
        env=server_env(),
        timeout=60,
        cwd=ws,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = {reply["id"]: reply for reply in map(json.loads, done.stdout.splitlines())}
    assert set(answers) == {1, 2, 3, 4, "five", 6, 7, 8, None, 9}, answers
    for request_id in (2, 3):
        result = answers[request_id]["result"]
        assert result["isError"] is True
        assert result["content"][0]["text"].startswith("INVALID_ARGUMENTS: ")
        assert "unpaired surrogate" in result["content"][0]["text"]
    assert answers[4]["error"] == {"code": -32602, "message": "params must be an object, got list"}
    assert answers["five"]["error"]["code"] == -32602
    assert answers[6]["error"] == {"code": -32600, "message": "JSON nested deeper than 64 levels"}
    assert answers[7]["error"]["code"] == -32700
    assert "Unknown tool" in answers[8]["error"]["message"]
    assert answers[None]["error"]["code"] == -32700
    assert answers[9]["result"]["isError"] is False
    assert not (ws / "b.txt").exists()


# -- the root, named sessions -----------------------------------------------------------


def test_serve_never_mounts_root_or_home_without_being_asked(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    environment = {**server_env(), "HOME": str(home)}
    for cwd in (Path("/"), home):
        done = subprocess.run(
            [sys.executable, "-m", "fsseam", "serve"],
            input=b"", capture_output=True, env=environment, timeout=60, cwd=cwd, check=False,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert b"needs a workspace root" in done.stderr
        assert b"fsseam serve /path/to/project" in done.stderr
        assert done.stdout == b""
    inside = subprocess.run(
        [sys.executable, "-m", "fsseam", "serve"],
        input=b"", capture_output=True, env=environment, timeout=60, cwd=home / "project",
        check=False,
    )  # fmt: skip
    assert inside.returncode == 0, inside.stderr


def test_a_named_stdio_session_survives_a_restart(ws: Path, tmp_path: Path) -> None:
    store = ["--observations", f"sqlite://{tmp_path}/observations.db"]

    async def read_then_exit() -> None:
        async with serving(ws, "--session", "thread-7", *store) as session:
            assert not (await call(session, "read", file_path="crlf.txt")).is_error

    async def edit_after_restart() -> None:
        async with serving(ws, "--session", "thread-8", *store) as other:
            refused = await call(other, "edit", file_path="crlf.txt", old_string="two",
                                 new_string="2")  # fmt: skip
            assert text(refused).startswith("FS_NOT_OBSERVED: ")
        async with serving(ws, "--session", "thread-7", *store) as same:
            done = await call(same, "edit", file_path="crlf.txt", old_string="two",
                              new_string="2")  # fmt: skip
            assert not done.is_error, text(done)

    run(read_then_exit)
    run(edit_after_restart)
    assert (ws / "crlf.txt").read_bytes() == b"one\r\n2\r\nthree\r\n"
    unnamed = subprocess.run(
        [sys.executable, "-m", "fsseam", "serve", str(ws), *store],
        input=b"", capture_output=True, env=server_env(), timeout=60, check=False,
    )  # fmt: skip
    assert unnamed.returncode == 2
    assert b"add --session NAME" in unnamed.stderr


def test_the_mcp_adapter_uses_host_events_not_policy_or_backend_internals() -> None:
    """Issue 12: no isinstance on plugins, no policy or backend import; fs/session-ended instead."""
    import ast

    import fsseam

    root = Path(fsseam.__file__).parent
    for name in ("mcp.py", "mcp_http.py"):
        tree = ast.parse((root / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("fsseam.policy", "fsseam.backends")), name
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
                assert "plugin" not in ast.unparse(node), f"{name}: {ast.unparse(node)}"
        assert "ctx.plugins" not in (root / name).read_text()
