"""The exported tool schemas are accepted verbatim by the vendors' own SDK types.

"Verbatim" is checked, not assumed: each definition validates strictly against
the SDK's request parameter type, and dumping the validated value gives back
exactly what fsseam produced (nothing dropped as an unknown key, nothing
coerced).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import TypeAdapter

from fsseam import Context, FileTools, open_fs

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

from anthropic.types import ToolParam  # noqa: E402
from openai.types.chat import ChatCompletionToolParam  # noqa: E402
from openai.types.shared_params import FunctionDefinition  # noqa: E402


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> Context:
    context = Context(open_fs(str(tmp_path_factory.mktemp("ws"))))
    context.plugin(FileTools())
    return context


def accepted_verbatim(sdk_type: Any, definition: object) -> None:
    """Strictly valid for ``sdk_type``, and dumped back unchanged (no key dropped or coerced)."""
    adapter: TypeAdapter[Any] = TypeAdapter(sdk_type)
    validated = adapter.validate_python(definition, strict=True)
    assert adapter.dump_python(validated, mode="json") == definition


def test_openai_chat_completions_tools(ctx: Context) -> None:
    tools = ctx.tools.schemas(format="openai")
    assert [tool["function"]["name"] for tool in tools] == ["read", "write", "edit"]
    for tool in tools:
        accepted_verbatim(ChatCompletionToolParam, tool)
        accepted_verbatim(FunctionDefinition, tool["function"])
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", tool["function"]["name"])
        assert tool["function"]["parameters"]["type"] == "object"
    accepted_verbatim(list[ChatCompletionToolParam], tools)


def test_anthropic_messages_tools(ctx: Context) -> None:
    tools = ctx.tools.schemas(format="anthropic")
    assert [tool["name"] for tool in tools] == ["read", "write", "edit"]
    for tool in tools:
        accepted_verbatim(ToolParam, tool)
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,128}", tool["name"])
        assert tool["input_schema"]["type"] == "object"
    accepted_verbatim(list[ToolParam], tools)


def test_mcp_tools(ctx: Context) -> None:
    mcp_types = pytest.importorskip("mcp.types")
    from mcp.shared.tool_name_validation import validate_tool_name

    for tool in ctx.tools.schemas(format="mcp"):
        model = mcp_types.Tool.model_validate(tool, strict=True)
        assert model.model_dump(by_alias=True, exclude_none=True, mode="json") == tool
        assert validate_tool_name(tool["name"]).is_valid


def test_the_sdks_would_reject_a_wrong_shape(ctx: Context) -> None:
    """The checks above can fail: a definition in the other vendor's shape is refused."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        TypeAdapter(ChatCompletionToolParam).validate_python(
            ctx.tools.schemas(format="anthropic")[0], strict=True
        )
    with pytest.raises(ValidationError):
        TypeAdapter(ToolParam).validate_python(ctx.tools.schemas(format="openai")[0], strict=True)
