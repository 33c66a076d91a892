"""The MCP adapter: the registered tools served over the Model Context Protocol.

``fsseam serve URL`` runs :func:`serve_stdio` (``--http`` runs
:func:`fsseam.mcp_http.serve_http`); embedders can call :func:`build_server`
on their own :class:`~fsseam.host.Context` and run it on any transport the
official SDK offers. The SDK (``mcp>=2,<3``, the ``fsseam[mcp]`` extra) is
imported here and in :mod:`fsseam.mcp_http` only.

What a client sees is what :class:`~fsseam.tools.FileTools` gives any other
adapter: the same names, descriptions and input schemas, and one text content
block that is exactly ``ToolResult.text`` (no ``structuredContent``: clients
that prefer it would show the model JSON instead of the text). A failed call
is a result with ``isError`` whose text is ``CODE: message — remedy``. Each
tool carries annotations derived from the ``effects`` it declares
(``readOnlyHint``, ``destructiveHint``); on a read-only mount only the tools
that change nothing are listed.

Sessions. Each request runs as one policy session, always a string:

- with an authenticated principal (a bearer token the HTTP server verified,
  through the SDK's auth context), the principal's name;
- else on HTTP, the transport's own session (``Mcp-Session-Id`` of the
  session-based streamable HTTP transport, or the SSE transport's session);
- else (stdio, in-memory: one server run per connection) the connection's
  session: ``build_server(session=NAME)``, or a fresh id per connection,
  forgotten (``fs/session-ended``) when the connection closes.

A request's ``_meta["fsseam/session"]`` string narrows that session (one
principal, many conversations: ``alice/thread-7``), or names one when the
request has none. A request with no session at all (a stateless HTTP request
without a token) can read but not write, create or edit; its error says how
to get a session. Every MCP session is thereby its own policy session — the
SDK's HTTP manager enters the server lifespan once for all clients, so the
lifespan is never used as the session of an HTTP request.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

from fsseam._extras import missing_extra

try:
    import anyio
    from mcp import types
    from mcp.server import Server, ServerRequestContext
    from mcp.server.auth.middleware.auth_context import get_access_token
    from mcp.shared.exceptions import MCPError
    from mcp.shared.message import SessionMessage
    from pydantic import ValidationError
except ImportError as exc:  # pragma: no cover - exercised by the CLI test in a subprocess
    raise missing_extra("the MCP server", "the MCP SDK", "mcp", exc) from exc

from fsseam import __version__
from fsseam._wire import MAX_DEPTH, clean_text, depth_exceeds, find_request_id, first_surrogate
from fsseam.host import FS_SESSION_ENDED, Agent, Context, ToolExecution, ToolResult

__all__ = [
    "SESSION_META_KEY",
    "McpSession",
    "build_server",
    "serve_stdio",
    "to_call_result",
]

SERVER_NAME = "fsseam"

SESSION_META_KEY: Final = "fsseam/session"
"""The ``_meta`` key whose string narrows (or names) a request's policy session."""

MAX_SESSION_CHARS: Final = 200
MAX_LINE_BYTES: Final = 64 * 1024 * 1024
"""Longest stdio message read (a 10 MiB write, JSON-escaped, fits)."""

log = logging.getLogger("fsseam.mcp")


class McpSession:
    """Kept for compatibility: sessions are now strings (see the module docstring)."""

    __slots__ = ("__weakref__",)


def to_call_result(result: ToolResult) -> types.CallToolResult:
    """An fsseam :class:`ToolResult` as an MCP ``CallToolResult``: one text block, exactly."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=clean_text(result.text))],
        is_error=result.is_error,
    )


def _refusal(code: str, message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=clean_text(f"{code}: {message}"))],
        is_error=True,
    )


def _annotations(ctx: Context, name: str) -> types.ToolAnnotations:
    effects = ctx.tools.effects(name)
    if effects.read_only:
        return types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    return types.ToolAnnotations(
        read_only_hint=False, destructive_hint=effects.destructive, open_world_hint=False
    )


# -- sessions -----------------------------------------------------------------------


class _BadSession(Exception):
    """A ``_meta["fsseam/session"]`` the server cannot use."""


def _meta_session(request: ServerRequestContext[Any]) -> str | None:
    meta: dict[str, Any] = dict(request.meta or {})
    if SESSION_META_KEY not in meta:
        return None
    value = meta[SESSION_META_KEY]
    if (
        not isinstance(value, str)
        or not 0 < len(value) <= MAX_SESSION_CHARS
        or not value.isprintable()
        or first_surrogate(value) is not None
    ):
        raise _BadSession(
            f'_meta["{SESSION_META_KEY}"] must be a string of 1 to {MAX_SESSION_CHARS} '
            "printable characters (a conversation id)"
        )
    return value


def _transport_session(http_request: Any) -> str | None:
    """The HTTP transport's own session id, which the SDK has already checked exists."""
    headers = getattr(http_request, "headers", None)
    if headers is not None:
        session_id = headers.get("mcp-session-id")
        if session_id:
            return f"mcp-session:{session_id}"
    query = getattr(http_request, "query_params", None)
    if query is not None and query.get("session_id"):
        return f"sse-session:{query.get('session_id')}"
    return None


def request_session(request: ServerRequestContext[Any], connection: str) -> str | None:
    """The policy session a request runs as (see the module docstring); ``None``: none.

    Raises ``_BadSession`` for an unusable ``_meta["fsseam/session"]``.
    """
    meta = _meta_session(request)
    token = get_access_token()
    base: str | None
    if token is not None:
        base = token.client_id
    elif request.request is not None:
        base = _transport_session(request.request)
    else:
        base = connection
    if meta is None:
        return base
    return f"{base}/{meta}" if base is not None else f"anonymous:{meta}"


_NO_SESSION = (
    "{tool} changes files, and this request has no session to remember what it "
    "read (a stateless HTTP request without a bearer token), so the server only "
    "lets it read. Send a session: open a session-based MCP connection "
    '(initialize, then send its Mcp-Session-Id), or put {{"{key}": "<conversation id>"}} '
    "in the request's _meta, or connect with a bearer token from the server's "
    "--tokens file; then read the file and retry"
)


# -- the server -----------------------------------------------------------------------


def build_server(
    ctx: Context, *, name: str = SERVER_NAME, session: str | None = None
) -> Server[str]:
    """A low-level MCP server exposing ``ctx``'s tools, one policy session per MCP session.

    ``session`` names the session of connections that carry no identity of
    their own (stdio, in-memory) so that a restarted server keeps what the
    conversation read; by default each connection gets a fresh id, forgotten
    when it closes. HTTP requests never fall back to it. An unknown tool name
    is a protocol error (``INVALID_PARAMS``), as the MCP specification asks;
    everything else, invalid arguments included, is a result the model can
    act on.
    """

    @asynccontextmanager
    async def connection(_: Server[str]) -> AsyncIterator[str]:
        minted = session is None
        current = session if session is not None else f"mcp-{uuid.uuid4().hex}"
        try:
            yield current
        finally:
            if minted:
                await ctx.notify(FS_SESSION_ENDED, current)

    async def list_tools(
        _: ServerRequestContext[str], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        read_only = ctx.fs.capabilities.read_only
        tools = [
            types.Tool(
                name=spec["name"],
                description=spec["description"],
                input_schema=spec["inputSchema"],
                annotations=_annotations(ctx, spec["name"]),
            )
            for spec in ctx.tools.schemas(format="mcp")
            if not read_only or ctx.tools.effects(spec["name"]).read_only
        ]
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        request: ServerRequestContext[str], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = params.name
        if ctx.tools.get(tool) is None:
            known = ", ".join(ctx.tools.names()) or "none"
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {tool!r} (available: {known})")
        try:
            current = request_session(request, request.lifespan_context)
        except _BadSession as exc:
            return _refusal("INVALID_ARGUMENTS", str(exc))
        where = first_surrogate(params.arguments or {})
        if where is not None:
            return _refusal(
                "INVALID_ARGUMENTS",
                f"{where} contains an unpaired surrogate (\\ud800-\\udfff), which is not "
                "text; send it as valid Unicode",
            )
        if current is None and not ctx.tools.effects(tool).read_only:
            return _refusal(
                "FS_SANDBOX_DENIED", _NO_SESSION.format(tool=tool, key=SESSION_META_KEY)
            )
        execution = ToolExecution(agent=Agent(session=current))
        result = await ctx.tools.execute(tool, params.arguments, execution)
        return to_call_result(result)

    return Server(
        name,
        version=__version__,
        lifespan=connection,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


# -- stdio ----------------------------------------------------------------------------


async def serve_stdio(ctx: Context, *, session: str | None = None) -> None:
    """Serve ``ctx``'s tools to one client over this process's stdin and stdout.

    ``session`` as for :func:`build_server`. Every request gets an answer:
    a line that is not JSON, nests deeper than 64 levels, or is not a valid
    JSON-RPC message gets a JSON-RPC error naming its ``id`` when one can be
    found. While serving, stray writes to file descriptor 1 go to stderr, so
    only the protocol reaches stdout.
    """
    server = build_server(ctx, session=session)
    async with _stdio_streams() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


_DRAIN_SECONDS: Final = 60.0
"""How long the server keeps answering requests after its client closed stdin."""


def _error_line(request_id: int | str | None, code: int, message: str) -> bytes:
    error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(error, ensure_ascii=False).encode() + b"\n"


def _parse(line: bytes) -> SessionMessage | bytes | None:
    """A line as the message to serve, or the error line to answer it with (``None``: drop)."""
    if len(line) > MAX_LINE_BYTES:
        return _error_line(
            find_request_id(line), types.INVALID_REQUEST, f"message over {MAX_LINE_BYTES} bytes"
        )
    try:
        value = json.loads(line)
    except RecursionError:
        return _error_line(
            find_request_id(line),
            types.INVALID_REQUEST,
            f"JSON nested deeper than {MAX_DEPTH} levels",
        )
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        return _error_line(find_request_id(line), types.PARSE_ERROR, f"Parse error: {exc}")
    if not isinstance(value, dict):
        return _error_line(None, types.INVALID_REQUEST, "a message must be a JSON object")
    request_id = value.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        request_id = None
    if depth_exceeds(value):
        if request_id is None:
            return None
        return _error_line(
            request_id, types.INVALID_REQUEST, f"JSON nested deeper than {MAX_DEPTH} levels"
        )
    try:
        message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError:
        if request_id is None or "method" not in value:
            log.warning("dropped a message that is not JSON-RPC 2.0")
            return None
        params = value.get("params")
        if "params" in value and not isinstance(params, dict):
            kind = type(params).__name__ if params is not None else "null"
            return _error_line(
                request_id, types.INVALID_PARAMS, f"params must be an object, got {kind}"
            )
        return _error_line(request_id, types.INVALID_REQUEST, "not a valid JSON-RPC 2.0 request")
    return SessionMessage(message)


def _dump(message: SessionMessage) -> bytes:
    try:
        text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
    except Exception:  # a string with an unpaired surrogate cannot be UTF-8: replace it
        dumped = message.message.model_dump(by_alias=True, exclude_unset=True, mode="json")
        text = clean_text(json.dumps(dumped, ensure_ascii=False))
    return text.encode() + b"\n"


@asynccontextmanager
async def _stdio_streams() -> AsyncIterator[tuple[Any, Any]]:
    """The server's streams over fds 0 and 1, with fd 1 diverted to stderr meanwhile."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    reader = os.fdopen(wire_in, "rb", buffering=1 << 16)
    writer = os.fdopen(wire_out, "wb", buffering=0)
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    lock = anyio.Lock()
    eof = anyio.Event()
    # Requests read but not yet answered. A client that writes its requests and
    # closes stdin (a pipe, a script) still gets every answer: the server's
    # input is closed only once they are all written, since the SDK answers
    # whatever is pending when its input ends with "Connection closed".
    pending: set[int | str] = set()
    answered = anyio.Event()

    async def write(data: bytes) -> None:
        async with lock:
            await anyio.to_thread.run_sync(writer.write, data)

    async def read_lines() -> None:
        async with to_server:
            while True:
                line = await anyio.to_thread.run_sync(
                    reader.readline, MAX_LINE_BYTES + 1, abandon_on_cancel=True
                )
                if not line:
                    eof.set()
                    if pending:
                        with anyio.move_on_after(_DRAIN_SECONDS):
                            await answered.wait()
                    return
                if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                    while True:  # skip the rest of an oversized line
                        more = await anyio.to_thread.run_sync(
                            reader.readline, 1 << 20, abandon_on_cancel=True
                        )
                        if not more or more.endswith(b"\n"):
                            break
                if not line.strip():
                    continue
                parsed = _parse(line)
                if isinstance(parsed, bytes):
                    await write(parsed)
                elif parsed is not None:
                    if isinstance(parsed.message, types.JSONRPCRequest):
                        pending.add(parsed.message.id)
                    await to_server.send(parsed)

    async def write_messages() -> None:
        async with from_server:
            async for message in from_server:
                await write(_dump(message))
                if isinstance(message.message, types.JSONRPCResponse | types.JSONRPCError):
                    pending.discard(message.message.id)
                    if eof.is_set() and not pending:
                        answered.set()

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read_lines)
            tasks.start_soon(write_messages)
            async with server_reads, server_writes:
                yield server_reads, server_writes
            tasks.cancel_scope.cancel()
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        writer.close()
        if eof.is_set():
            # Otherwise a worker thread may still block in readline, and closing
            # the reader would wait for it: leave it to the process exit.
            reader.close()
