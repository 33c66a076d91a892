"""Model-facing tools. They talk to the seam and the event bus, never to a backend."""

from __future__ import annotations

from dataclasses import dataclass

from fsseam.host import Context
from fsseam.tools.edit import EditTool
from fsseam.tools.read import ReadTool
from fsseam.tools.write import WriteTool

__all__ = ["EditTool", "FileTools", "ReadTool", "WriteTool"]


@dataclass(frozen=True, slots=True)
class FileTools:
    """Plugin registering ``read``, ``write`` and ``edit``.

    ``max_lines``, ``max_line_chars`` and ``max_bytes`` configure the read
    window (defaults 2000 lines, 2000 characters per line, 50 KiB).
    """

    max_lines: int = 2000
    max_line_chars: int = 2000
    max_bytes: int = 50 * 1024

    def setup(self, ctx: Context) -> None:
        """Register the three tools on ``ctx``."""
        ctx.tools.register(ReadTool(self.max_lines, self.max_line_chars, self.max_bytes))
        ctx.tools.register(WriteTool())
        ctx.tools.register(EditTool())
