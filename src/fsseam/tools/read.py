"""The ``read`` tool: a numbered window of a text file, streamed in bounded memory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from fsseam.host import READ_ONLY, Context, ToolEffects, ToolExecution, ToolResult
from fsseam.seam import FS_OBSERVED, Absent, FsNotFound, Present
from fsseam.text import LineWindow
from fsseam.tools.render import render_lines, render_read
from fsseam.tools.schemas import READ_SCHEMA, ReadArgs, parse_args

__all__ = ["ReadTool"]

DESCRIPTION = """\
Read a text file from the workspace. Output lines are numbered "N: text" starting at 1 \
(the "N: " prefix is not part of the file). By default up to 2000 lines are shown; \
use offset and limit to page through larger files, as the footer says. \
Reading a file is required before editing or overwriting it."""


@dataclass(slots=True)
class ReadTool:
    """``read(file_path, offset?, limit?)`` with DESIGN.md's exact envelope and footers."""

    max_lines: int = 2000
    max_line_chars: int = 2000
    max_bytes: int = 50 * 1024
    name: str = "read"
    description: str = DESCRIPTION
    parameters: dict[str, Any] = None  # type: ignore[assignment]
    effects: ClassVar[ToolEffects] = READ_ONLY

    def __post_init__(self) -> None:
        if self.parameters is None:
            self.parameters = READ_SCHEMA

    async def run(
        self, ctx: Context, args: Mapping[str, Any], execution: ToolExecution | None
    ) -> ToolResult:
        """Read the window and record the observation."""
        parsed = parse_args(self.name, ReadArgs, args)
        fs = ctx.fs
        target = await fs.resolve(parsed.file_path)
        offset = parsed.offset or 1
        window = LineWindow(
            offset=offset,
            limit=parsed.limit or self.max_lines,
            max_bytes=self.max_bytes,
            max_line_chars=self.max_line_chars,
        )
        try:
            async with fs.stream_text(target) as stream:
                async for chunk in stream:
                    window.feed(chunk)
                window.finish()
                version = stream.info.version
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
        text = render_read(target.display_path, window, shown)
        path = target.display_path

        def value() -> dict[str, Any]:
            lines = [{"number": offset + i, "text": line} for i, line in enumerate(shown)]
            return {
                "path": path,
                "offset": offset,
                "lines": lines,
                "total_lines": total,
                "version": version,
            }

        return ToolResult(False, text, lazy_value=value)
