"""pydantic-ai's own ``MCPToolset`` driving ``fsseam serve`` over stdio, with a ``FunctionModel``.

The model is pydantic-ai's offline test machinery running the real agent
loop: what it receives is exactly what a model would. The read must arrive
as the rendered text (not a JSON dump of structured content), and a refused
edit as fsseam's full ``CODE: message — remedy`` text.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastmcp")
pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.mcp_http_support import env


def test_mcp_toolset_model_sees_the_rendered_read_and_the_full_refusal(tmp_path: Path) -> None:
    from fastmcp.client.transports import StdioTransport

    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\nbeta\n")
    received: list[Any] = []
    plan = [
        ToolCallPart("edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "B"}),
        ToolCallPart("read", {"file_path": "notes.txt"}),
        ToolCallPart("edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "B"}),
    ]

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        received.extend(
            part for part in last.parts if isinstance(part, ToolReturnPart | RetryPromptPart)
        )
        if plan:
            return ModelResponse(parts=[plan.pop(0)])
        return ModelResponse(parts=[TextPart("done")])

    transport = StdioTransport(
        sys.executable, ["-m", "fsseam", "serve", str(root)], env=env(), cwd=str(root)
    )
    # The server is a fresh interpreter importing fsseam and the MCP SDK: on a busy
    # 2-core machine that takes longer than the toolset's default 5 s handshake timeout.
    agent = Agent(FunctionModel(model), toolsets=[MCPToolset(transport, init_timeout=60)])
    result = agent.run_sync("Change beta to B in notes.txt")
    assert result.output == "done"

    blind, read, edit = received
    # A refused call comes back for the model to retry (a retry prompt, or a
    # tool return marked retried, depending on the pydantic-ai version).
    assert isinstance(blind, RetryPromptPart | ToolReturnPart)
    assert isinstance(blind.content, str)
    assert blind.content.startswith("FS_NOT_OBSERVED: edit requires reading"), blind.content
    assert "— read the file, then retry" in blind.content
    assert isinstance(read, ToolReturnPart)
    assert read.content == (
        f"<path>{root / 'notes.txt'}</path>\n<type>file</type>\n<content>\n"
        "1: alpha\n2: beta\n\n(End of file - total 2 lines)\n</content>"
    )
    assert isinstance(edit, ToolReturnPart)
    assert str(edit.content).startswith(
        f"The file {root / 'notes.txt'} has been updated successfully."
    )
    assert (root / "notes.txt").read_text() == "alpha\nB\n"
