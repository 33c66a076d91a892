"""Helpers shared by the tool-level tests: mount a backend, run tools."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fsseam import Agent, Context, FileTools, ObservationPolicy, ToolExecution, ToolResult
from fsseam.seam import FileSystem


class Session:
    """A plain session object (weak-referenceable, identity-compared)."""


@dataclass
class Harness:
    """A Context with the policy and tools, plus a raw writer for 'someone else'."""

    ctx: Context
    put: Callable[[str, bytes], None]
    get: Callable[[str], bytes]
    root: str

    def run(self, session: object | None = None) -> ToolExecution:
        return ToolExecution(agent=Agent(session=session if session is not None else Session()))

    def call(self, tool: str, args: dict[str, Any], run: ToolExecution | None) -> ToolResult:
        return self.ctx.tools.execute_sync(tool, args, run)


def make_context(fs: FileSystem, *, policy: bool = True, **tool_options: int) -> Context:
    ctx = Context(fs)
    if policy:
        ctx.plugin(ObservationPolicy())
    ctx.plugin(FileTools(**tool_options))
    return ctx
