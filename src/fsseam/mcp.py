"""The MCP adapter: the registered tools served over the Model Context Protocol.

``fsseam serve URL`` runs :func:`serve_stdio`; embedders can call
:func:`build_server` on their own :class:`~fsseam.host.Context` and run it on
any transport the official SDK offers. The SDK (``mcp>=2,<3``, the
``fsseam[mcp]`` extra) is imported here and nowhere else.

What a client sees is exactly what :class:`~fsseam.tools.FileTools` gives any
other adapter: the same names, descriptions and input schemas
(``ctx.tools.schemas(format="mcp")``), the rendered ``text`` as the only
content block, the structured ``value`` as ``structuredContent``. A failed call
is a tool result with ``isError`` set, whose text is ``CODE: message`` plus the
remedy, and whose ``structuredContent`` is ``{"error": {"name", "code"}}``.

One client connection is one policy session: :meth:`Server.run` enters the
server lifespan once per connection, and the lifespan yields a fresh session
object that every call on that connection passes as
``ToolExecution(agent=Agent(session=...))``. Observations are dropped when the
connection closes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

try:
    from mcp import types
    from mcp.server import Server, ServerRequestContext
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError
except ImportError as exc:  # pragma: no cover - exercised by the CLI test in a subprocess
    raise ImportError(
        f'the MCP server needs the MCP SDK: pip install "fsseam[mcp]" ({exc})'
    ) from exc

from fsseam import __version__
from fsseam.host import Agent, Context, ToolExecution, ToolResult
from fsseam.policy import ObservationPolicy

__all__ = ["McpSession", "build_server", "serve_stdio", "to_call_result"]

SERVER_NAME = "fsseam"


class McpSession:
    """The policy owner of one MCP client connection (identity is all that matters)."""

    __slots__ = ("__weakref__",)


def to_call_result(result: ToolResult) -> types.CallToolResult:
    """An fsseam :class:`ToolResult` as an MCP ``CallToolResult``."""
    structured: dict[str, Any] | None
    if result.is_error:
        structured = {"error": dict(result.error)} if result.error else None
    else:
        structured = result.value
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=result.text)],
        structured_content=structured,
        is_error=result.is_error,
    )


def build_server(ctx: Context, *, name: str = SERVER_NAME) -> Server[McpSession]:
    """A low-level MCP server exposing ``ctx``'s tools, one policy session per connection.

    The tools and their schemas are read from ``ctx.tools`` on every
    ``tools/list``. An unknown tool name is a protocol error
    (``INVALID_PARAMS``), as the MCP specification asks; everything else,
    invalid arguments included, is a tool result the model can act on.
    """

    @asynccontextmanager
    async def connection(_: Server[McpSession]) -> AsyncIterator[McpSession]:
        session = McpSession()
        try:
            yield session
        finally:
            for plugin in ctx.plugins:
                if isinstance(plugin, ObservationPolicy):
                    plugin.forget(session)

    async def list_tools(
        _: ServerRequestContext[McpSession], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = [
            types.Tool(
                name=spec["name"], description=spec["description"], input_schema=spec["inputSchema"]
            )
            for spec in ctx.tools.schemas(format="mcp")
        ]
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        request: ServerRequestContext[McpSession], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if ctx.tools.get(params.name) is None:
            known = ", ".join(ctx.tools.names()) or "none"
            raise MCPError(
                types.INVALID_PARAMS, f"Unknown tool: {params.name!r} (available: {known})"
            )
        execution = ToolExecution(agent=Agent(session=request.lifespan_context))
        result = await ctx.tools.execute(params.name, params.arguments, execution)
        return to_call_result(result)

    return Server(
        name,
        version=__version__,
        lifespan=connection,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(ctx: Context) -> None:
    """Serve ``ctx``'s tools to one client over this process's stdin and stdout."""
    server = build_server(ctx)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
