"""fsseam's tools as LangChain ``StructuredTool``s: ``model.bind_tools(fsseam_tools(ctx))``.

Each tool takes fsseam's own JSON Schema, runs synchronously (``invoke``) or
asynchronously (``ainvoke``) and returns exactly ``ToolResult.text``. A
refused call raises :class:`~langchain_core.tools.ToolException` with that
text, handled by the tool: invoked with a tool call, it comes back as a
``ToolMessage`` with ``status="error"``; invoked with plain arguments, as the
text.

The session is the conversation the calls belong to: by default the run
config's ``configurable["thread_id"]`` (LangGraph's conversation id), or a
string, or a callable taking the ``RunnableConfig``.

langchain-core is imported here and nowhere else (``pip install "fsseam[langchain]"``).
"""

# No ``from __future__ import annotations``: LangChain finds the RunnableConfig
# parameter of a tool function by its evaluated annotation.

from collections.abc import Callable, Mapping
from typing import Any

from fsseam._extras import missing_extra

try:
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import StructuredTool, ToolException
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise missing_extra(__name__, "langchain-core", "langchain", exc) from exc

from fsseam.host import Context, ToolResult
from fsseam.integrations._common import chosen_session, run_tool, run_tool_sync, tool_specs

__all__ = ["fsseam_tools"]

Session = str | Callable[[RunnableConfig], str] | None


def _session_of(session: Session, config: RunnableConfig) -> str:
    return chosen_session(session, config, owner="fsseam_tools", default=_thread_id)


def _thread_id(config: RunnableConfig) -> tuple[object, str]:
    thread = (config.get("configurable") or {}).get("thread_id")
    if thread is None:
        raise ValueError(
            "fsseam tools need to know the conversation: invoke them with "
            'config={"configurable": {"thread_id": CONVERSATION_ID}} (LangGraph does), '
            "or build them with fsseam_tools(ctx, session=...)"
        )
    # LangGraph accepts any thread id and keys checkpoints by its string form.
    return str(thread), 'configurable["thread_id"]'


def _text(result: ToolResult) -> str:
    if result.is_error:
        raise ToolException(result.text)
    return result.text


def _tool(ctx: Context, spec: Mapping[str, Any], session: Session) -> StructuredTool:
    name: str = spec["name"]
    schema: dict[str, Any] = spec["parameters"]

    def run(config: RunnableConfig, **arguments: Any) -> str:
        owner = _session_of(session, config)
        return _text(run_tool_sync(ctx, name, schema, arguments, owner))

    async def arun(config: RunnableConfig, **arguments: Any) -> str:
        owner = _session_of(session, config)
        return _text(await run_tool(ctx, name, schema, arguments, owner))

    return StructuredTool(
        name=name,
        description=spec["description"],
        args_schema=schema,
        func=run,
        coroutine=arun,
        handle_tool_error=True,
    )


def fsseam_tools(ctx: Context, session: Session = None) -> list[StructuredTool]:
    """One ``StructuredTool`` per tool registered on ``ctx`` (read, write, edit, …)."""
    return [_tool(ctx, spec, session) for spec in tool_specs(ctx)]
