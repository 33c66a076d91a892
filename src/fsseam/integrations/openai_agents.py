"""fsseam's tools as OpenAI Agents SDK ``FunctionTool``s: ``Agent(..., tools=fsseam_tools(ctx))``.

The SDK's default strict mode makes every property required; the schemas
here are already strict (every property listed in ``required``, the optional
ones nullable), so the SDK keeps them as they are, and a ``null`` means "use
the default". Each call returns exactly ``ToolResult.text``; a refused call
returns its text too, which is how a function tool reports a failure the
model should see (an exception would end the run).

The session is the conversation the calls belong to: a string, a callable
taking the :class:`~agents.tool_context.ToolContext`, or by default the run's
``RunConfig.group_id`` (the SDK's id linking the runs of one conversation).

The SDK is imported here and nowhere else (``pip install "fsseam[openai-agents]"``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from fsseam._extras import missing_extra

try:
    from agents import FunctionTool
    from agents.exceptions import UserError
    from agents.tool_context import ToolContext
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise missing_extra(__name__, "the OpenAI Agents SDK", "openai-agents", exc) from exc

from fsseam.host import Context
from fsseam.integrations._common import chosen_session, run_tool, strict_schema, tool_specs

__all__ = ["fsseam_tools"]

Session = str | Callable[[ToolContext[Any]], str] | None


def _session_of(session: Session, context: ToolContext[Any]) -> str:
    return chosen_session(session, context, owner="fsseam_tools", default=_group_id)


def _group_id(context: ToolContext[Any]) -> tuple[object, str]:
    group = context.run_config.group_id if context.run_config is not None else None
    if group is None:
        raise UserError(
            "fsseam_tools needs to know the conversation: pass fsseam_tools(ctx, session=...) "
            "(a string, or a callable taking the ToolContext), or run with "
            "RunConfig(group_id=CONVERSATION_ID)"
        )
    return group, "RunConfig.group_id"


def _invoker(
    ctx: Context, name: str, schema: Mapping[str, Any], session: Session
) -> Callable[[ToolContext[Any], str], Awaitable[str]]:
    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        owner = _session_of(session, context)
        try:
            parsed: Any = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return f"INVALID_ARGUMENTS: {name} arguments are not valid JSON ({exc})"
        return (await run_tool(ctx, name, schema, parsed, owner)).text

    return invoke


def fsseam_tools(ctx: Context, session: Session = None) -> list[FunctionTool]:
    """One strict ``FunctionTool`` per tool registered on ``ctx`` (read, write, edit, …)."""
    tools: list[FunctionTool] = []
    for spec in tool_specs(ctx):
        schema = strict_schema(spec["parameters"])
        tools.append(
            FunctionTool(
                name=spec["name"],
                description=spec["description"],
                params_json_schema=schema,
                on_invoke_tool=_invoker(ctx, spec["name"], spec["parameters"], session),
                strict_json_schema=True,
            )
        )
    return tools
