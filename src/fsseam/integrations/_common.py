"""What the framework adapters share: string sessions, strict schemas, null-as-default.

No framework is imported here; each adapter module imports its own.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from fsseam.host import Agent, Context, ToolExecution, ToolResult

__all__ = [
    "chosen_session",
    "execution_for",
    "run_tool",
    "run_tool_sync",
    "session_string",
    "strict_schema",
    "tool_specs",
    "without_null_defaults",
]

C = TypeVar("C")


def session_string(value: object, *, source: str) -> str:
    """``value`` as the policy session: a non-empty string (the policy keys it by value).

    Frameworks hand out a fresh ``str`` object for the same conversation id on
    every call (parsed from JSON, read from a config dict); equal ids are one
    session. ``source`` names where the value came from, for the error.
    """
    if not isinstance(value, str) or not value:
        raise TypeError(
            f"fsseam needs the session (conversation id) as a non-empty string; {source} "
            f"gave {value!r}"
        )
    return value


def execution_for(session: str) -> ToolExecution:
    """The :class:`ToolExecution` of one call in conversation ``session``."""
    return ToolExecution(agent=Agent(session=session))


def chosen_session(
    session: str | Callable[[C], str] | None,
    context: C,
    *,
    owner: str,
    default: Callable[[C], tuple[object, str]],
) -> str:
    """The session of one call: what ``owner`` was given, else the framework's conversation id.

    ``session`` is a string or a callable taking the framework's ``context``;
    ``default(context)`` gives ``(conversation id, where it came from)``, or
    raises the framework's own error when the run names no conversation.
    """
    whose = f"{owner}'" if owner.endswith("s") else f"{owner}'s"
    if isinstance(session, str):
        return session_string(session, source=f"{owner}(session=...)")
    if session is not None:
        return session_string(session(context), source=f"{whose} session callable")
    value, source = default(context)
    return session_string(value, source=source)


async def run_tool(
    ctx: Context, name: str, schema: Mapping[str, Any], arguments: Any, session: str
) -> ToolResult:
    """Run tool ``name`` in conversation ``session``; a ``null`` optional argument: its default."""
    args = without_null_defaults(schema, arguments)
    return await ctx.tools.execute(name, args, execution_for(session))


def run_tool_sync(
    ctx: Context, name: str, schema: Mapping[str, Any], arguments: Any, session: str
) -> ToolResult:
    """:func:`run_tool` for a framework that calls tools synchronously."""
    args = without_null_defaults(schema, arguments)
    return ctx.tools.execute_sync(name, args, execution_for(session))


def tool_specs(ctx: Context) -> list[dict[str, Any]]:
    """``[{"name", "description", "parameters"}, ...]`` of the tools registered on ``ctx``."""
    return ctx.tools.schemas()


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]}
    if isinstance(kind, list):
        return schema if "null" in kind else {**schema, "type": [*kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` in OpenAI strict form: every property required, optional ones nullable.

    Objects list every property in ``required`` and forbid others; a property
    that was optional accepts ``null``, which :func:`without_null_defaults`
    turns back into "not given" (the tool's default). Nested objects (the
    items of ``multi_edit``'s ``edits``) are converted the same way.
    """
    out = copy.deepcopy(dict(schema))
    properties = out.get("properties")
    if isinstance(properties, dict):
        required = set(out.get("required", ()))
        converted: dict[str, Any] = {}
        for name, prop in properties.items():
            strict = strict_schema(prop) if isinstance(prop, Mapping) else prop
            converted[name] = strict if name in required else _nullable(strict)
        out["properties"] = converted
        out["required"] = list(converted)
        out["additionalProperties"] = False
    items = out.get("items")
    if isinstance(items, Mapping):
        out["items"] = strict_schema(items)
    return out


def without_null_defaults(schema: Mapping[str, Any], value: Any) -> Any:
    """``value`` with every ``null`` given for an optional property left out (null = default).

    A ``null`` for a required property is kept, so the tool's own validation
    names it. Arrays of objects are cleaned item by item.
    """
    if isinstance(value, Mapping):
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return dict(value)
        required = set(schema.get("required", ()))
        cleaned: dict[str, Any] = {}
        for name, item in value.items():
            if item is None and name in properties and name not in required:
                continue
            prop = properties.get(name)
            cleaned[name] = without_null_defaults(prop, item) if isinstance(prop, Mapping) else item
        return cleaned
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            return [without_null_defaults(items, item) for item in value]
    return value
