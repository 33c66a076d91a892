"""The framework adapters, driven by each framework's own offline machinery.

pydantic-ai: a ``FunctionModel`` (and the built-in ``TestModel``) running a real
agent loop. OpenAI Agents SDK: ``FunctionTool.on_invoke_tool`` with a real
``ToolContext``, the schemas under the SDK's default strict mode. LangChain:
``tool.invoke`` / ``ainvoke`` with a ``thread_id`` config. In each, a read then
an edit in one conversation succeeds, and a second conversation's blind edit
is refused with fsseam's own text, exactly what ``ctx.tools.execute`` says.

Conversation ids are built fresh (``"".join(...)``) for every call, as a
framework parsing JSON or reading a config hands them out: equal ids must be
one session whatever object carries them.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fsseam import Context, DiscoveryTools, FileTools, ObservationPolicy, open_fs
from fsseam.host import Agent, ToolExecution
from fsseam.integrations._common import strict_schema, without_null_defaults

ORIGINAL = b"alpha\r\nbeta\r\ngamma\r\n"


def fresh(text: str) -> str:
    """An equal string that is a different object, as a framework would hand it out."""
    made = "".join(list(text))
    assert made == text
    return made


@pytest.fixture(params=["local", "memory"])
def ctx(request: pytest.FixtureRequest, tmp_path: Path) -> Context:
    """A policy-guarded Context with every tool, over a workspace holding notes.txt (CRLF)."""
    if request.param == "local":
        (tmp_path / "notes.txt").write_bytes(ORIGINAL)
        fs = open_fs(str(tmp_path))
    else:
        fs = open_fs(f"memory://integrations-{tmp_path.name}")
        asyncio.run(fs.write_text(asyncio.run(fs.resolve("notes.txt")), ORIGINAL.decode()))
    context = Context(fs)
    context.plugin(ObservationPolicy()).plugin(FileTools(multi_edit=True)).plugin(DiscoveryTools())
    return context


def stored(ctx: Context) -> str:
    async def read() -> str:
        return await ctx.fs.read_text(await ctx.fs.resolve("notes.txt"))

    return asyncio.run(read())


def blind_edit_text(ctx: Context) -> str:
    """What fsseam itself answers to an edit by a conversation that read nothing."""
    run = ToolExecution(agent=Agent(session="a conversation that read nothing"))
    args = {"file_path": "notes.txt", "old_string": "alpha", "new_string": "A"}
    result = ctx.tools.execute_sync("edit", args, run)
    assert result.is_error
    assert result.text.startswith("FS_NOT_OBSERVED: edit requires reading")
    assert result.text.endswith("— read the file, then retry")
    return result.text


# -- pydantic-ai ----------------------------------------------------------------------


def scripted(*responses: list[tuple[str, dict[str, Any]]]) -> tuple[Any, list[Any]]:
    """A FunctionModel answering each turn with the next list of tool calls, then "done"."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    pending = list(responses)
    returned: list[ToolReturnPart] = []

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        returned.extend(p for p in messages[-1].parts if isinstance(p, ToolReturnPart))
        if pending:
            calls = pending.pop(0)
            return ModelResponse(parts=[ToolCallPart(name, args) for name, args in calls])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(model), returned


def test_pydantic_ai_read_then_edit_and_a_blind_edit_refused(ctx: Context) -> None:
    from pydantic_ai import Agent as PydanticAgent

    from fsseam.integrations.pydantic_ai import FsseamToolset

    model, returned = scripted(
        [("read", {"file_path": "notes.txt"})],
        [("edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "B"})],
    )
    agent = PydanticAgent(model, toolsets=[FsseamToolset(ctx)])
    run = agent.run_sync("fix notes.txt", conversation_id=fresh("ticket-1"))
    assert run.output == "done"
    read, edit = returned
    assert read.outcome == "success"
    assert read.content.startswith("<path>")
    assert "1: alpha\n2: beta\n3: gamma\n" in read.content
    assert edit.outcome == "success"
    assert edit.content.startswith("The file ")
    assert stored(ctx) == "alpha\r\nB\r\ngamma\r\n"  # CRLF kept

    model, returned = scripted(
        [("edit", {"file_path": "notes.txt", "old_string": "alpha", "new_string": "A"})]
    )
    run = PydanticAgent(model, toolsets=[FsseamToolset(ctx)]).run_sync(
        "fix notes.txt", conversation_id=fresh("ticket-2")
    )
    assert run.output == "done"  # the refusal is a tool result, the run goes on
    (blind,) = returned
    assert blind.outcome == "failed"
    assert blind.content == blind_edit_text(ctx)
    assert stored(ctx) == "alpha\r\nB\r\ngamma\r\n"


def test_pydantic_ai_conversation_continues_across_runs(ctx: Context) -> None:
    from pydantic_ai import Agent as PydanticAgent

    from fsseam.integrations.pydantic_ai import FsseamToolset

    toolset: FsseamToolset[None] = FsseamToolset(ctx)
    model, _ = scripted([("read", {"file_path": "notes.txt"})])
    first = PydanticAgent(model, toolsets=[toolset]).run_sync("read", conversation_id=fresh("t"))
    model, returned = scripted(
        [("edit", {"file_path": "notes.txt", "old_string": "gamma", "new_string": "G",
                   "replace_all": None})]  # null means the default
    )  # fmt: skip
    # The message history carries the conversation id into the next run.
    PydanticAgent(model, toolsets=[toolset]).run_sync("edit", message_history=first.all_messages())
    (edit,) = returned
    assert edit.outcome == "success", edit.content
    assert stored(ctx) == "alpha\r\nbeta\r\nG\r\n"


def test_pydantic_ai_read_and_edit_in_one_response_run_in_order(ctx: Context) -> None:
    from pydantic_ai import Agent as PydanticAgent

    from fsseam.integrations.pydantic_ai import FsseamToolset

    model, returned = scripted(
        [
            ("read", {"file_path": "notes.txt"}),
            ("edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "B"}),
        ]
    )
    PydanticAgent(model, toolsets=[FsseamToolset(ctx)]).run_sync("go", conversation_id="c")
    # edit may write, so it is a sequential barrier: the read before it finishes first.
    assert [part.outcome for part in returned] == ["success", "success"]
    assert stored(ctx) == "alpha\r\nB\r\ngamma\r\n"


def test_pydantic_ai_session_callable_takes_the_run_context(ctx: Context) -> None:
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai import RunContext

    from fsseam.integrations.pydantic_ai import FsseamToolset

    def by_user(run: RunContext[dict[str, str]]) -> str:
        return fresh(run.deps["user"])

    toolset: FsseamToolset[dict[str, str]] = FsseamToolset(ctx, session=by_user)
    model, _ = scripted([("read", {"file_path": "notes.txt"})])
    PydanticAgent(model, deps_type=dict, toolsets=[toolset]).run_sync("r", deps={"user": "ann"})
    edit = [("edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "B"})]
    model, returned = scripted(edit)
    PydanticAgent(model, deps_type=dict, toolsets=[toolset]).run_sync("e", deps={"user": "bob"})
    assert returned[0].outcome == "failed"
    model, returned = scripted(edit)
    PydanticAgent(model, deps_type=dict, toolsets=[toolset]).run_sync("e", deps={"user": "ann"})
    assert returned[0].outcome == "success", returned[0].content


def test_pydantic_ai_test_model_calls_every_tool_through_the_schemas(ctx: Context) -> None:
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai.messages import ToolReturnPart

    from fsseam.integrations.pydantic_ai import FsseamToolset

    run = PydanticAgent("test", toolsets=[FsseamToolset(ctx)]).run_sync("anything")
    parts = [p for m in run.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    assert {p.tool_name for p in parts} == set(ctx.tools.names())
    # Whatever TestModel made up, each answer is fsseam's text (an error code or a result).
    for part in parts:
        assert isinstance(part.content, str)
        assert part.content
        if part.outcome == "failed":
            assert part.content.split(":", 1)[0].isupper()


# -- OpenAI Agents SDK ------------------------------------------------------------------


def invoke(tool: Any, arguments: dict[str, Any] | str, **context: Any) -> str:
    """``tool.on_invoke_tool`` with a real ToolContext, as the SDK's runner calls it."""
    from agents.tool_context import ToolContext

    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    tool_context = ToolContext(
        context.pop("context", None),
        tool_name=tool.name,
        tool_call_id="call-1",
        tool_arguments=raw,
        **context,
    )
    result: str = asyncio.run(tool.on_invoke_tool(tool_context, raw))
    return result


def test_openai_agents_schemas_pass_the_sdk_strict_mode_unchanged(ctx: Context) -> None:
    from agents.strict_schema import ensure_strict_json_schema

    from fsseam.integrations.openai_agents import fsseam_tools

    tools = fsseam_tools(ctx, session="s")
    assert [t.name for t in tools] == ctx.tools.names()
    for tool, spec in zip(tools, ctx.tools.schemas(), strict=True):
        assert tool.strict_json_schema is True
        assert tool.params_json_schema == strict_schema(spec["parameters"])
        assert ensure_strict_json_schema(json.loads(json.dumps(tool.params_json_schema))) == (
            tool.params_json_schema
        )
        schema = tool.params_json_schema
        assert schema["required"] == list(schema["properties"])
        for name, prop in schema["properties"].items():
            optional = name not in spec["parameters"]["required"]
            assert ("null" in prop["type"]) is optional, (tool.name, name)
    edit = next(t for t in tools if t.name == "multi_edit").params_json_schema
    item = edit["properties"]["edits"]["items"]
    assert item["required"] == ["old_string", "new_string", "replace_all"]
    assert item["properties"]["replace_all"]["type"] == ["boolean", "null"]


def test_openai_agents_read_then_edit_and_a_blind_edit_refused(ctx: Context) -> None:
    from fsseam.integrations.openai_agents import fsseam_tools

    tools = {t.name: t for t in fsseam_tools(ctx, session=lambda tc: fresh(tc.context["conv"]))}
    read = invoke(tools["read"], {"file_path": "notes.txt", "offset": None, "limit": None},
                  context={"conv": "c1"})  # fmt: skip
    assert "1: alpha\n2: beta\n3: gamma\n" in read
    strict_args = {"file_path": "notes.txt", "old_string": "beta", "new_string": "B",
                   "replace_all": None}  # fmt: skip
    edited = invoke(tools["edit"], strict_args, context={"conv": "c1"})
    assert edited.startswith("The file "), edited
    assert stored(ctx) == "alpha\r\nB\r\ngamma\r\n"
    blind = {"file_path": "notes.txt", "old_string": "alpha", "new_string": "A",
             "replace_all": None}  # fmt: skip
    assert invoke(tools["edit"], blind, context={"conv": "c2"}) == blind_edit_text(ctx)
    assert stored(ctx) == "alpha\r\nB\r\ngamma\r\n"


def test_openai_agents_default_session_is_the_run_config_group_id(ctx: Context) -> None:
    from agents import RunConfig
    from agents.exceptions import UserError

    from fsseam.integrations.openai_agents import fsseam_tools

    tools = {t.name: t for t in fsseam_tools(ctx)}
    args = {"file_path": "notes.txt", "offset": None, "limit": None}
    invoke(tools["read"], args, run_config=RunConfig(group_id=fresh("thread-9")))
    edit = {"file_path": "notes.txt", "old_string": "beta", "new_string": "B", "replace_all": True}
    done = invoke(tools["edit"], edit, run_config=RunConfig(group_id=fresh("thread-9")))
    assert "All occurrences were successfully replaced" in done
    with pytest.raises(UserError, match="RunConfig\\(group_id="):
        invoke(tools["read"], args)


def test_openai_agents_arguments_that_are_not_json_are_invalid_arguments(ctx: Context) -> None:
    from fsseam.integrations.openai_agents import fsseam_tools

    (read, *_) = fsseam_tools(ctx, session="s")
    assert invoke(read, "{not json").startswith("INVALID_ARGUMENTS: read arguments are not")
    assert invoke(read, "[1]").startswith("INVALID_ARGUMENTS: read arguments must be")
    missing = invoke(read, {"offset": None, "limit": None})
    assert missing.startswith("INVALID_ARGUMENTS: file_path")


# -- LangChain --------------------------------------------------------------------------


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": fresh(name)}}


def tool_call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_call", "id": f"call-{name}", "name": name, "args": args}


def test_langchain_read_then_edit_and_a_blind_edit_refused(ctx: Context) -> None:
    from langchain_core.messages import ToolMessage

    from fsseam.integrations.langchain import fsseam_tools

    tools = {t.name: t for t in fsseam_tools(ctx)}
    read = tools["read"].invoke({"file_path": "notes.txt"}, config=thread("t1"))
    assert "1: alpha\n2: beta\n3: gamma\n" in read
    edit = tool_call("edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "B"})
    done = tools["edit"].invoke(edit, config=thread("t1"))
    assert isinstance(done, ToolMessage)
    assert done.status == "success"
    assert done.content.startswith("The file ")
    blind = tool_call("edit", {"file_path": "notes.txt", "old_string": "alpha", "new_string": "A"})
    refused = tools["edit"].invoke(blind, config=thread("t2"))
    assert isinstance(refused, ToolMessage)
    assert refused.status == "error"
    assert refused.content == blind_edit_text(ctx)
    assert refused.tool_call_id == "call-edit"
    assert stored(ctx) == "alpha\r\nB\r\ngamma\r\n"


def test_langchain_ainvoke_shares_the_thread_with_invoke(ctx: Context) -> None:
    from fsseam.integrations.langchain import fsseam_tools

    tools = {t.name: t for t in fsseam_tools(ctx)}

    async def conversation() -> str:
        await tools["read"].ainvoke({"file_path": "notes.txt"}, config=thread("t3"))
        edit = {"file_path": "notes.txt", "old_string": "gamma", "new_string": "G",
                "replace_all": None}  # fmt: skip
        text: str = await tools["edit"].ainvoke(edit, config=thread("t3"))
        return text

    assert asyncio.run(conversation()).startswith("The file ")
    more = {"file_path": "notes.txt", "old_string": "alpha", "new_string": "A"}
    assert tools["edit"].invoke(more, config=thread("t3")).startswith("The file ")
    assert stored(ctx) == "A\r\nbeta\r\nG\r\n"


def test_langchain_without_a_thread_id_says_how_to_give_one(ctx: Context) -> None:
    from fsseam.integrations.langchain import fsseam_tools

    (read, *_) = fsseam_tools(ctx)
    with pytest.raises(ValueError, match="thread_id"):
        read.invoke({"file_path": "notes.txt"})
    (fixed, *_) = fsseam_tools(ctx, session="fixed")
    assert "1: alpha" in fixed.invoke({"file_path": "notes.txt"})


def test_langchain_tools_expose_fsseam_schemas(ctx: Context) -> None:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from fsseam.integrations.langchain import fsseam_tools

    for tool, spec in zip(fsseam_tools(ctx), ctx.tools.schemas(format="openai"), strict=True):
        assert convert_to_openai_tool(tool) == spec


# -- shared ------------------------------------------------------------------------------


def test_null_means_the_default_for_every_optional_argument(ctx: Context) -> None:
    run = ToolExecution(agent=Agent(session="nulls"))
    calls = {
        "read": {"file_path": "notes.txt", "offset": None, "limit": None},
        "edit": {"file_path": "notes.txt", "old_string": "beta", "new_string": "B",
                 "replace_all": None},
        "multi_edit": {"file_path": "notes.txt",
                       "edits": [{"old_string": "B", "new_string": "b", "replace_all": None}]},
        "ls": {"path": None, "offset": None, "limit": None},
        "glob": {"pattern": "*.txt", "path": None},
        "grep": {"pattern": "alpha", "path": None, "glob": None, "ignore_case": None,
                 "literal": None},
    }  # fmt: skip
    for spec in ctx.tools.schemas():
        if spec["name"] not in calls:
            continue
        args = without_null_defaults(spec["parameters"], calls[spec["name"]])
        assert None not in args.values()
        result = ctx.tools.execute_sync(spec["name"], args, run)
        assert not result.is_error, (spec["name"], result.text)
    required_null = without_null_defaults(ctx.tools.schemas()[0]["parameters"], {"file_path": None})
    assert required_null == {"file_path": None}  # left for the tool to name


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("pydantic_ai", "pydantic_ai", "pydantic-ai"),
        ("openai_agents", "agents", "openai-agents"),
        ("langchain", "langchain_core", "langchain"),
    ],
)
def test_missing_framework_says_which_extra_to_install(
    module: str, framework: str, extra: str
) -> None:
    code = (
        f"import sys; sys.modules[{framework!r}] = None\n"
        "import fsseam.integrations\n"  # the package itself imports no framework
        f"import fsseam.integrations.{module}\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert run.returncode == 1
    assert f'pip install "fsseam[{extra}]"' in run.stderr
