"""Helpers shared by the tool-level tests: mount a backend, run tools."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from fsseam import Agent, Context, FileTools, ObservationPolicy, ToolExecution, ToolResult
from fsseam.seam import (
    FileSystem,
    FsCapabilities,
    FsDirEntry,
    FsEditOutcome,
    FsEditRequest,
    FsInfo,
    FsPathInfo,
    FsTarget,
    FsTextStream,
    FsVersion,
    FsWriteIntent,
    FsWriteOutcome,
)


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


class DelegatingFileSystem(FileSystem):
    """Forwards the abstract methods only, so ``walk``/``edit_text_many`` are the defaults."""

    def __init__(self, inner: FileSystem) -> None:
        self.inner = inner

    @property
    def capabilities(self) -> FsCapabilities:
        return self.inner.capabilities

    @property
    def max_edit_bytes(self) -> int | None:
        return self.inner.max_edit_bytes

    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        return await self.inner.resolve(path, cwd=cwd)

    async def stat(self, target: FsTarget) -> FsInfo | None:
        return await self.inner.stat(target)

    async def lstat(self, path: str, *, cwd: str | None = None) -> FsPathInfo | None:
        return await self.inner.lstat(path, cwd=cwd)

    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[FsTextStream]:
        return self.inner.stream_text(target)

    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        return await self.inner.list_dir(target)

    async def write_text(
        self, target: FsTarget, content: str, expected: FsWriteIntent | None = None
    ) -> FsWriteOutcome:
        return await self.inner.write_text(target, content, expected)

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: FsVersion | None = None
    ) -> FsEditOutcome:
        return await self.inner.edit_text(target, edit, expected)
