"""What a successful write or edit shows: a numbered snippet of the change, and a unified diff.

The comparison itself (bounded, linear, pure) is :mod:`fsseam.changes`,
shared with the seam's stale-version errors; this module turns it into tool
results. Its names are re-exported here, where the tools always found them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fsseam import changes
from fsseam.changes import *  # noqa: F403  (re-exported: see above)
from fsseam.changes import Change, compare
from fsseam.host import ToolResult

__all__ = ["ChangeReport", "change_report", "success", "with_snippet"]
__all__ += changes.__all__


@dataclass(frozen=True, slots=True)
class ChangeReport:
    """The snippet for the model and the diff for the structured value."""

    snippet: str
    """Numbered lines of the new text around the change (empty when there are none)."""
    diff: str | None
    """Unified diff of old and new text; ``None`` when the old text is unknown."""


def with_snippet(first_line: str, snippet: str) -> str:
    """The success text: DESIGN's first line, then a blank line and the snippet, if any."""
    return f"{first_line}\n\n{snippet}" if snippet else first_line


async def success(
    first_line: str,
    path: str,
    before: str | None,
    after: str,
    value: dict[str, Any],
    *,
    created: bool = False,
    snippets: bool = True,
) -> ToolResult:
    """The result of a write or edit: the text (with the snippet) and a value with its diff.

    The comparison and the snippet run in a worker thread, so a huge or
    pathological change never holds up the event loop; the diff is
    rendered only if someone reads ``value`` (bounded work: the comparison
    is already done, and the diff is cut at :data:`DIFF_MAX_BYTES`).
    """

    def lazy_value(change: Change | None) -> Callable[[], dict[str, Any]]:
        def build() -> dict[str, Any]:
            found = change or compare(path, before, after, created=created)
            return {**value, "diff": found.diff()}

        return build

    if not snippets:
        return ToolResult(False, first_line, lazy_value=lazy_value(None))

    def prepare() -> tuple[Change, str]:
        change = compare(path, before, after, created=created)
        return change, change.snippet()

    change, snippet = await asyncio.to_thread(prepare)
    return ToolResult(False, with_snippet(first_line, snippet), lazy_value=lazy_value(change))


def change_report(
    path: str, before: str | None, after: str, *, created: bool = False, with_diff: bool = True
) -> ChangeReport:
    """:func:`compare`, then the snippet and (``with_diff``) the diff, in one value."""
    change = compare(path, before, after, created=created)
    return ChangeReport(change.snippet(), change.diff() if with_diff else None)
