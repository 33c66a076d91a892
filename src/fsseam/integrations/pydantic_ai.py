"""fsseam's tools as a pydantic-ai toolset: ``Agent(model, toolsets=[FsseamToolset(ctx)])``.

Each tool call runs ``ctx.tools.execute`` in the session of the run's
conversation (``RunContext.conversation_id`` unless ``session`` says
otherwise) and returns exactly ``ToolResult.text``. A refused call raises
pydantic-ai's :class:`~pydantic_ai.exceptions.ToolFailed` with that text: the
model sees a failed tool result it can act on ("read the file, then retry"),
the run goes on, and no retry budget is spent. Tools that may write
(everything but read/ls/glob/grep) are ``sequential`` barriers, so a read the
model emitted before an edit in the same response finishes first.

pydantic-ai is imported here and nowhere else (``pip install "fsseam[pydantic-ai]"``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fsseam._extras import missing_extra

try:
    from pydantic_ai import RunContext, ToolDefinition
    from pydantic_ai.exceptions import ToolFailed
    from pydantic_ai.tools import AgentDepsT
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
    from pydantic_core import SchemaValidator, core_schema
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise missing_extra(__name__, "pydantic-ai", "pydantic-ai", exc) from exc

from fsseam.host import Context
from fsseam.integrations._common import chosen_session, run_tool, tool_specs

__all__ = ["FsseamToolset"]

# fsseam validates its own arguments and answers a bad one with INVALID_ARGUMENTS
# text, so the toolset only checks that the model sent an object.
_ARGUMENTS = SchemaValidator(
    schema=core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema())
)

Session = str | Callable[[RunContext[Any]], str] | None


class FsseamToolset(AbstractToolset[AgentDepsT]):
    """The tools registered on ``ctx`` (read, write, edit, …) as a pydantic-ai toolset.

    ``session``: the conversation the calls belong to — a string, or a
    callable taking the :class:`~pydantic_ai.RunContext` and returning one;
    by default the run's ``conversation_id`` (pass ``conversation_id=`` to
    ``agent.run`` to continue a conversation across runs, or keep the message
    history, which carries it). ``id`` names the toolset for durable execution.
    """

    def __init__(
        self,
        ctx: Context,
        session: Session = None,
        *,
        id: str | None = None,
        max_retries: int | None = None,
    ) -> None:
        self._ctx = ctx
        self._session = session
        self._id = id
        self._max_retries = max_retries

    @property
    def id(self) -> str | None:
        """The id given at construction (``None``: pydantic-ai names it by position)."""
        return self._id

    def _session_of(self, run: RunContext[AgentDepsT]) -> str:
        return chosen_session(self._session, run, owner="FsseamToolset", default=_conversation_id)

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """One tool per tool registered on the fsseam Context, schemas unchanged."""
        retries = self._max_retries if self._max_retries is not None else ctx.max_retries
        tools: dict[str, ToolsetTool[AgentDepsT]] = {}
        for spec in tool_specs(self._ctx):
            name = spec["name"]
            read_only = self._ctx.tools.effects(name).read_only
            definition = ToolDefinition(
                name=name,
                description=spec["description"],
                parameters_json_schema=spec["parameters"],
                sequential=not read_only,
                metadata={"fsseam": {"read_only": read_only}},
            )
            tools[name] = ToolsetTool(
                toolset=self, tool_def=definition, max_retries=retries, args_validator=_ARGUMENTS
            )
        return tools

    async def call_tool(
        self,
        name: str,
        tool_args: dict[str, Any],
        ctx: RunContext[AgentDepsT],
        tool: ToolsetTool[AgentDepsT],
    ) -> str:
        """Run ``name``; the model gets ``ToolResult.text``, a refusal as ``ToolFailed``."""
        schema = tool.tool_def.parameters_json_schema
        result = await run_tool(self._ctx, name, schema, tool_args, self._session_of(ctx))
        if result.is_error:
            raise ToolFailed(result.text)
        return result.text


def _conversation_id(run: RunContext[Any]) -> tuple[object, str]:
    return run.conversation_id, "RunContext.conversation_id"
