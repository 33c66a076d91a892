"""Helpers for tests above the seam: drive the tools, wrap a :class:`FileSystem`.

The conformance suite tests a backend through the seam; tests of the tools,
the policy and the adapters need a little more, and every test tree used to
grow its own copy::

    ctx = tools_context(open_fs(root))          # policy + file tools
    alice = execution()                         # one agent session
    result = call(ctx, "read", {"file_path": "a.txt"}, alice)
    assert code_of(result) is None

A :class:`Harness` adds raw access to the store behind the tools' back, on
every shipped backend::

    @pytest.fixture(params=BACKENDS)            # from fsseam.testing.mounts
    def h(request, tmp_path):
        yield from harness_for(request, tmp_path)

:class:`DelegatingFileSystem` forwards to another file system, so a test can
override one method to build a misbehaving store (one that drops guards,
refuses every replace...) without a mock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fsspec
import pytest

from fsseam import (
    Agent,
    Context,
    DiscoveryTools,
    FileTools,
    ObservationPolicy,
    ToolExecution,
    ToolResult,
)
from fsseam.backends import FsspecFileSystem, open_fs
from fsseam.seam import (
    FileSystem,
    FsCapabilities,
    FsDirEntry,
    FsInfo,
    FsPathInfo,
    FsTarget,
    FsTextStream,
    FsWriteIntent,
    FsWriteOutcome,
)
from fsseam.testing._support import run
from fsseam.testing.mounts import put_local

__all__ = [
    "DelegatingFileSystem",
    "Harness",
    "Session",
    "call",
    "code_of",
    "execution",
    "harness_for",
    "make_context",
    "make_harness",
    "run",
    "tools_context",
]


class Session:
    """One agent conversation: a plain, weak-referenceable object compared by identity."""


def execution(session: object | None = None) -> ToolExecution:
    """A tool execution for ``session`` (a fresh :class:`Session` when ``None``)."""
    return ToolExecution(agent=Agent(session=session if session is not None else Session()))


def tools_context(fs: FileSystem, *, policy: bool = True, **tool_options: Any) -> Context:
    """A :class:`~fsseam.Context` on ``fs`` with the file tools.

    The read-before-write :class:`~fsseam.ObservationPolicy` is installed
    unless ``policy=False``; ``tool_options`` go to :class:`~fsseam.FileTools`.
    """
    ctx = Context(fs)
    if policy:
        ctx.plugin(ObservationPolicy())
    ctx.plugin(FileTools(**tool_options))
    return ctx


make_context = tools_context
"""Another name for :func:`tools_context` (the one the tool tests grew up with)."""


def call(ctx: Context, tool: str, args: dict[str, Any], run_: ToolExecution | None) -> ToolResult:
    """Run one tool call synchronously (``run_=None``: outside any session)."""
    return ctx.tools.execute_sync(tool, args, run_)


def code_of(result: ToolResult) -> str | None:
    """The error code of a tool result (``None`` on success)."""
    return None if result.error is None else result.error["code"]


@dataclass
class Harness:
    """A :class:`~fsseam.Context` with the tools, plus raw access for "someone else"."""

    ctx: Context
    """The context under test."""
    put: Callable[[str, bytes], None]
    """Store bytes at a path relative to the root, behind the tools' back."""
    get: Callable[[str], bytes]
    """The stored bytes at a path relative to the root."""
    root: str
    """The root, as the store spells it."""

    def run(self, session: object | None = None) -> ToolExecution:
        """A tool execution for ``session`` (a fresh one when ``None``)."""
        return execution(session)

    def call(self, tool: str, args: dict[str, Any], run: ToolExecution | None) -> ToolResult:
        """Run one tool call synchronously."""
        return call(self.ctx, tool, args, run)


def harness_for(
    request: pytest.FixtureRequest, tmp_path: Path, **options: Any
) -> Iterator[Harness]:
    """A :class:`Harness` on the store named by ``request.param`` (see ``mounts.BACKENDS``).

    Local disk and memory come from :func:`make_harness`; a cloud store's
    mount from its emulator plugin's ``<name>_fs`` fixture. ``options`` go
    to :class:`~fsseam.FileTools`.
    """
    kind = request.param
    if kind in ("local", "memory"):
        yield from make_harness(kind, tmp_path, **options)
        return
    mounted: FsspecFileSystem = request.getfixturevalue(f"{kind}_fs")
    raw = mounted.fs
    base = mounted.root.split("://", 1)[1].rstrip("/")
    yield Harness(
        make_context(mounted, **options),
        lambda rel, data: raw.pipe_file(f"{base}/{rel}", data),
        lambda rel: bytes(raw.cat_file(f"{base}/{rel}")),
        mounted.root.rstrip("/"),
    )


def make_harness(
    kind: str, tmp_path: Path, *, discovery: bool = False, **options: Any
) -> Iterator[Harness]:
    """Yield a :class:`Harness` on local disk (``"local"``) or the memory store (``"memory"``).

    The local root is ``tmp_path``; the memory root is named after it and
    removed afterwards. ``discovery=True`` adds the discovery tools.
    """
    if kind == "local":
        ctx = make_context(open_fs(str(tmp_path)), **options)
        if discovery:
            ctx.plugin(DiscoveryTools())
        yield Harness(
            ctx, put_local(tmp_path), lambda rel: (tmp_path / rel).read_bytes(), str(tmp_path)
        )
        return
    name = f"/tools-{tmp_path.name}"
    mem = fsspec.filesystem("memory")
    ctx = make_context(open_fs(f"memory://{name}"), **options)
    if discovery:
        ctx.plugin(DiscoveryTools())
    yield Harness(
        ctx,
        lambda rel, data: mem.pipe_file(f"{name}/{rel}", data),
        lambda rel: bytes(mem.cat_file(f"{name}/{rel}")),
        f"memory://{name}",
    )
    mem.rm(name, recursive=True)


class DelegatingFileSystem(FileSystem):
    """Forwards every abstract method to ``inner``; override one to change one behaviour.

    Only the abstract methods are forwarded, so ``walk``, ``edit_text`` and
    ``edit_text_many`` are the base class's defaults, built on the forwarded
    ones (which is how tests exercise those defaults).
    """

    def __init__(self, inner: FileSystem) -> None:
        self.inner = inner
        """The file system every call goes to."""

    @property
    def capabilities(self) -> FsCapabilities:
        """``inner``'s capabilities."""
        return self.inner.capabilities

    @property
    def max_edit_bytes(self) -> int | None:
        """``inner``'s edit limit."""
        return self.inner.max_edit_bytes

    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        """``inner.resolve``."""
        return await self.inner.resolve(path, cwd=cwd)

    async def stat(self, target: FsTarget) -> FsInfo | None:
        """``inner.stat``."""
        return await self.inner.stat(target)

    async def lstat(self, path: str, *, cwd: str | None = None) -> FsPathInfo | None:
        """``inner.lstat``."""
        return await self.inner.lstat(path, cwd=cwd)

    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[FsTextStream]:
        """``inner.stream_text``."""
        return self.inner.stream_text(target)

    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        """``inner.list_dir``."""
        return await self.inner.list_dir(target)

    async def write_text(
        self, target: FsTarget, content: str, expected: FsWriteIntent | None = None
    ) -> FsWriteOutcome:
        """``inner.write_text``."""
        return await self.inner.write_text(target, content, expected)
