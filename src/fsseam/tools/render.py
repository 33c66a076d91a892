"""The exact text the model sees for a read (pinned by tests)."""

from __future__ import annotations

import threading
from operator import add

from fsseam.text import LineWindow

__all__ = ["TRUNCATION_MARK", "render_lines", "render_read"]

TRUNCATION_MARK = "... (line truncated to {n} chars)"


def render_lines(window: LineWindow) -> list[str]:
    """Shown lines with the truncation mark where a line was cut."""
    if not window.truncated:
        return window.lines
    mark = TRUNCATION_MARK.format(n=window.max_line_chars)
    return [line + mark if i in window.truncated else line for i, line in enumerate(window.lines)]


def footer(window: LineWindow) -> str:
    """The last line of the content block."""
    first, last, total = window.first, window.last, window.total
    if window.capped and last < total:
        return f"(Output capped. Showing lines {first}-{last}. Use offset={last + 1} to continue.)"
    if last < total:
        return f"(Showing lines {first}-{last} of {total}. Use offset={last + 1} to continue.)"
    return f"(End of file - total {total} lines)"


_PREFIX_CACHE = 20_000
_prefixes: list[str] = []
_prefix_lock = threading.Lock()


def _number_prefixes(first: int, count: int) -> list[str]:
    """``"N: "`` for each shown line; the common low numbers are built once."""
    end = first + count - 1
    if end > _PREFIX_CACHE:
        return [f"{n}: " for n in range(first, end + 1)]
    if len(_prefixes) < end:
        with _prefix_lock:
            _prefixes.extend([f"{n}: " for n in range(len(_prefixes) + 1, end + 1)])
    return _prefixes[first - 1 : end]


def render_read(display_path: str, window: LineWindow, shown: list[str]) -> str:
    """The read envelope: path, type, numbered lines and the footer."""
    body = "\n".join(map(add, _number_prefixes(window.first, len(shown)), shown))
    end = footer(window)
    content = f"{body}\n\n{end}" if shown else end
    return f"<path>{display_path}</path>\n<type>file</type>\n<content>\n{content}\n</content>"
