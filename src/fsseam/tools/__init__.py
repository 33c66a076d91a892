"""Model-facing tools. They talk to the seam and the event bus, never to a backend."""

from __future__ import annotations

from dataclasses import dataclass

from fsseam.host import Context
from fsseam.tools.discovery import DiscoveryTools, GlobTool, GrepTool, LsTool
from fsseam.tools.edit import EditTool
from fsseam.tools.manage import DeleteTool, MoveTool
from fsseam.tools.multi_edit import MultiEditTool
from fsseam.tools.read import ReadTool
from fsseam.tools.write import DEFAULT_MAX_WRITE_BYTES, WriteTool

__all__ = [
    "DeleteTool",
    "DiscoveryTools",
    "EditTool",
    "FileTools",
    "GlobTool",
    "GrepTool",
    "LsTool",
    "MoveTool",
    "MultiEditTool",
    "ReadTool",
    "WriteTool",
]


@dataclass(frozen=True, slots=True)
class FileTools:
    """Plugin registering ``read``, ``write`` and ``edit`` (``multi_edit``, ``delete``, ``move``
    on request).

    ``max_lines``, ``max_line_chars`` and ``max_bytes`` configure the read
    window (defaults 2000 lines, 2000 characters per line, 50 KiB).
    ``snippets`` (default on) adds a numbered snippet of the changed region to
    the success text of write, edit and multi_edit; the value's ``diff`` is
    there either way. ``multi_edit`` also registers the ``multi_edit`` tool
    (off by default, so the three schemas stay as they are). ``manage`` also
    registers ``delete`` and ``move``, guarded like ``edit`` (off by default).
    ``max_write_bytes`` (default 256 MiB) is the largest content one
    ``write`` accepts, in UTF-8 bytes; larger ones are ``FS_TOO_LARGE``.
    """

    max_lines: int = 2000
    max_line_chars: int = 2000
    max_bytes: int = 50 * 1024
    snippets: bool = True
    multi_edit: bool = False
    manage: bool = False
    max_write_bytes: int = DEFAULT_MAX_WRITE_BYTES

    def setup(self, ctx: Context) -> None:
        """Register the tools on ``ctx``."""
        ctx.tools.register(ReadTool(self.max_lines, self.max_line_chars, self.max_bytes))
        ctx.tools.register(WriteTool(snippets=self.snippets, max_write_bytes=self.max_write_bytes))
        ctx.tools.register(EditTool(snippets=self.snippets))
        if self.multi_edit:
            ctx.tools.register(MultiEditTool(snippets=self.snippets))
        if self.manage:
            ctx.tools.register(DeleteTool())
            ctx.tools.register(MoveTool())
