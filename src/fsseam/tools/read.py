"""The ``read`` tool: a numbered window of a text file, streamed in bounded memory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fsseam import text as textmod
from fsseam.host import READ_ONLY, Context, ToolExecution, ToolResult
from fsseam.seam import (
    FS_OBSERVED,
    Absent,
    FileSystem,
    FsNotFound,
    FsTarget,
    FsVersion,
    Present,
)
from fsseam.text import LineWindow, TailWindow
from fsseam.tools.base import ModelTool, ToolSpec
from fsseam.tools.render import render_lines, render_read, truncation_hint
from fsseam.tools.schemas import READ_SCHEMA, ReadArgs

__all__ = ["ReadTool"]

DESCRIPTION = """\
Read a text file from the workspace. Output lines are numbered "N: text" starting at 1 \
(the "N: " prefix is not part of the file). By default up to 2000 lines are shown; \
use offset and limit to page through larger files, as the footer says. \
Reading a file is required before editing or overwriting it."""


@dataclass(slots=True)
class ReadTool(ModelTool[ReadArgs]):
    """``read(file_path, offset?, limit?)`` with DESIGN.md's exact envelope and footers."""

    spec = ToolSpec("read", DESCRIPTION, READ_SCHEMA, ReadArgs, READ_ONLY)

    max_lines: int = 2000
    max_line_chars: int = 2000
    max_bytes: int = 50 * 1024

    async def call(
        self, ctx: Context, args: ReadArgs, execution: ToolExecution | None
    ) -> ToolResult:
        """Read the window and record the observation."""
        fs = ctx.fs
        target = await fs.resolve(args.file_path)
        offset = args.offset or 1
        limit = args.limit or self.max_lines
        try:
            if offset > 0:
                window, version = await self._forward(fs, target, offset, limit)
            else:
                window, version = await self._tail(fs, target, -offset, limit)
        except FsNotFound:
            ctx.emit(FS_OBSERVED, execution, target, Absent())
            raise
        total = window.total
        if offset > total and not (offset == 1 and total == 0):
            raise FsNotFound(
                f'offset {offset} is past the end of "{target.display_path}" '
                f"({total} lines); use an offset from 1 to {max(total, 1)}"
            )
        ctx.emit(FS_OBSERVED, execution, target, Present(version))
        shown = render_lines(window)
        hint = truncation_hint(window, grep=ctx.tools.get("grep") is not None)
        text = render_read(target.display_path, window, shown, hint)
        path, first = target.display_path, window.first

        def value() -> dict[str, Any]:
            lines = [{"number": first + i, "text": line} for i, line in enumerate(shown)]
            return {
                "path": path,
                "offset": first,
                "lines": lines,
                "total_lines": total,
                "version": version,
            }

        return ToolResult(False, text, lazy_value=value)

    async def _forward(
        self, fs: FileSystem, target: FsTarget, offset: int, limit: int
    ) -> tuple[LineWindow, FsVersion]:
        """The window from line ``offset``, in one streamed pass."""
        window = LineWindow(
            offset=offset,
            limit=limit,
            max_bytes=self.max_bytes,
            max_line_chars=self.max_line_chars,
        )
        async with fs.stream_text(target) as stream:
            async for chunk in stream:
                window.feed(chunk)
            window.finish()
            return window, stream.info.version

    async def _tail(
        self, fs: FileSystem, target: FsTarget, count: int, limit: int
    ) -> tuple[LineWindow, FsVersion]:
        """The window from ``count`` lines before the end, in one streamed pass.

        Only when the last lines are too many and too long to keep
        (:class:`TailWindow` overflowed) is the file streamed a second time,
        from the line the first pass found; that pass's window, total and
        version belong together, whatever happened in between.
        """
        tail = TailWindow(
            count=count, max_line_chars=self.max_line_chars, max_chars=textmod.TAIL_MAX_CHARS
        )
        async with fs.stream_text(target) as stream:
            async for chunk in stream:
                tail.feed(chunk)
            version = stream.info.version
        window = tail.window(limit=limit, max_bytes=self.max_bytes)
        if window is None:
            return await self._forward(fs, target, tail.first, limit)
        return window, version
