"""What the model sees when a file moved on since it read it: the change, capped, and what to do.

A guarded ``write``, ``edit`` or ``multi_edit`` refused with
``FS_STALE_VERSION`` whose error carries the change
(:attr:`fsseam.seam.FsStaleVersion.change`) shows it under ``What changed
since you read it:``. When it is shown in full (at most
:data:`CHANGE_MAX_LINES` lines and :data:`CHANGE_MAX_BYTES` bytes), the tool
records the current version as observed (``fs/observed``), so the model's
next call can succeed without a read, and the remedy says so; when it is
cut, nothing is recorded and the remedy is to read the file. An edit applied
on top of such a change (``ObservationPolicy(rebase=True)``) shows it the
same way, after ``Applied on top of a change made since you read the
file:``.

The rule behind both: a session's observation only moves past a change the
model was shown whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from fsseam.host import Context, ToolExecution, ToolResult
from fsseam.seam import FS_OBSERVED, FsStaleVersion, FsTarget, Present

__all__ = [
    "APPLIED_ON_TOP",
    "CHANGE_MAX_BYTES",
    "CHANGE_MAX_LINES",
    "WHAT_CHANGED",
    "ShownChange",
    "applied_on_top",
    "shown_change",
    "stale_result",
]

CHANGE_MAX_LINES: Final = 60
"""Lines of a change shown at most."""
CHANGE_MAX_BYTES: Final = 6 * 1024
"""UTF-8 bytes of a change shown at most."""

WHAT_CHANGED: Final = "What changed since you read it:"
APPLIED_ON_TOP: Final = "Applied on top of a change made since you read the file:"

_RETRY = {
    "edit": "retry the edit, adjusted to that change if needed (no need to read the file)",
    "write": "write again with content that keeps that change (no need to read the file)",
}
_SHOWN = " — what changed is shown below and now counts as read: "
_CUT = " — re-read the file, then retry (the change is too long to show here in full)"


@dataclass(frozen=True, slots=True)
class ShownChange:
    """A change as the model sees it: the diff's hunks, capped."""

    text: str
    """The hunks shown, ending with a note when cut."""
    complete: bool
    """True when nothing was cut."""


def shown_change(diff: str, *, cut_note: str = "read the file to see them") -> ShownChange:
    """The hunks of a unified diff (its ``---``/``+++`` headers dropped), capped.

    Lines are shown as ``read`` shows them, without a trailing ``\\r``.

    At most :data:`CHANGE_MAX_LINES` lines and :data:`CHANGE_MAX_BYTES`
    UTF-8 bytes; past them the text ends ``... (N more lines of the change
    not shown; {cut_note})``. A diff already cut upstream is never complete.
    Linear in what is shown, not in the diff.
    """
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) >= 2 and lines[0].startswith("--- ") and lines[1].startswith("+++ "):
        lines = lines[2:]
    shown: list[str] = []
    used = 0
    cut_upstream = bool(lines) and lines[-1].startswith("... (diff cut at ")
    if cut_upstream:
        lines.pop()
    for index, raw in enumerate(lines):
        line = raw[:-1] if raw.endswith("\r") else raw  # as read shows lines: no trailing CR
        size = len(line.encode("utf-8", "surrogatepass")) + 1
        if index >= CHANGE_MAX_LINES or used + size > CHANGE_MAX_BYTES:
            rest = len(lines) - index
            shown.append(
                f"... ({rest} more line{'s' if rest != 1 else ''} of the change not shown; "
                f"{cut_note})"
            )
            return ShownChange("\n".join(shown), False)
        shown.append(line)
        used += size
    if cut_upstream:
        shown.append(f"... (the rest of the change is not shown; {cut_note})")
    return ShownChange("\n".join(shown), not cut_upstream)


def stale_result(
    ctx: Context,
    execution: ToolExecution | None,
    target: FsTarget,
    exc: FsStaleVersion,
    *,
    kind: str,
) -> ToolResult:
    """The failure for a stale ``kind`` call (``"edit"`` or ``"write"``), its change included.

    Records ``Present(exc.current_version)`` for the session when the change
    is shown whole; a refusal without a change is worded as any error.
    """
    if exc.change is None or exc.current_version is None:
        return ToolResult.failure(exc)
    shown = shown_change(exc.change)
    if shown.complete:
        ctx.emit(FS_OBSERVED, execution, target, Present(exc.current_version))
        remedy = _SHOWN + _RETRY[kind]
    else:
        remedy = _CUT
    return ToolResult.failure(exc, remedy=remedy, detail=f"\n{WHAT_CHANGED}\n{shown.text}")


def applied_on_top(first_line: str, change: str) -> tuple[str, bool]:
    """A rebased edit's first lines (the success line, then the change), and whether it is whole.

    When the change is cut, the session's observation must not move past
    it: the caller records nothing, and the text says to read the file
    before the next change.
    """
    shown = shown_change(change, cut_note="read the file before changing it again")
    return f"{first_line}\n\n{APPLIED_ON_TOP}\n{shown.text}", shown.complete
