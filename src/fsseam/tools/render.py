"""The exact text the model sees for a read (pinned by tests)."""

from __future__ import annotations

import threading
from operator import add

from fsseam.text import LineWindow

__all__ = ["TRUNCATION_MARK", "render_lines", "render_read", "truncation_hint"]

TRUNCATION_MARK = "... (line truncated to {n} chars)"
GREP_HINT = (
    "(Lines longer than {n} chars were cut. To see the rest of one, grep this file for "
    "text in it: each match shows with its column.)"
)
NO_GREP_HINT = "(Lines longer than {n} chars were cut; read cannot show the rest of them.)"


def render_lines(window: LineWindow) -> list[str]:
    """Shown lines with the truncation mark where a line was cut."""
    if not window.truncated:
        return window.lines
    mark = TRUNCATION_MARK.format(n=window.max_line_chars)
    return [line + mark if i in window.truncated else line for i, line in enumerate(window.lines)]


def truncation_hint(window: LineWindow, *, grep: bool) -> str | None:
    """The footer's extra line when a shown line was cut: how to see the rest (grep)."""
    if not window.truncated:
        return None
    return (GREP_HINT if grep else NO_GREP_HINT).format(n=window.max_line_chars)


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


def render_read(
    display_path: str, window: LineWindow, shown: list[str], hint: str | None = None
) -> str:
    """The read envelope: path, type, numbered lines and the footer (``hint`` on its own line)."""
    body = "\n".join(map(add, _number_prefixes(window.first, len(shown)), shown))
    end = footer(window) if hint is None else f"{footer(window)}\n{hint}"
    content = f"{body}\n\n{end}" if shown else end
    return f"<path>{display_path}</path>\n<type>file</type>\n<content>\n{content}\n</content>"
