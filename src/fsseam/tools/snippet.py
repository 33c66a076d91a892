"""What a successful write or edit shows: a numbered snippet of the change, and a unified diff.

The snippet lets the model check its work without another read: the changed
lines of the new text with a few lines of context, numbered like read's
output (``N: text``), separate regions joined by ``...``, cut at
:data:`SNIPPET_MAX_LINES` lines or :data:`SNIPPET_MAX_BYTES` bytes. The diff
goes into the structured value only, cut at :data:`DIFF_MAX_BYTES`.

Both come from one line comparison. Common leading and trailing lines are
stripped first (linear time); :mod:`difflib` then runs only on the middle,
and only while that is at most :data:`EXACT_DIFF_MAX_LINES` lines a side, so
a large rewrite costs linear time and shows as one replaced block.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import overload

__all__ = [
    "CONTEXT_LINES",
    "DIFF_MAX_BYTES",
    "EXACT_DIFF_MAX_LINES",
    "SNIPPET_LINE_CHARS",
    "SNIPPET_MAX_BYTES",
    "SNIPPET_MAX_LINES",
    "ChangeReport",
    "change_report",
    "with_snippet",
]

CONTEXT_LINES = 3
"""Unchanged lines shown around each changed region."""
SNIPPET_MAX_LINES = 40
"""Lines a snippet shows at most."""
SNIPPET_MAX_BYTES = 4096
"""UTF-8 bytes a snippet takes at most."""
SNIPPET_LINE_CHARS = 300
"""Characters of one snippet line shown before it is cut."""
DIFF_MAX_BYTES = 32 * 1024
"""UTF-8 bytes of the unified diff in the structured value at most."""
EXACT_DIFF_MAX_LINES = 2000
"""Largest middle section (lines a side) compared line by line with difflib."""

_Opcode = tuple[str, int, int, int, int]


@dataclass(frozen=True, slots=True)
class ChangeReport:
    """The snippet for the model and the diff for the structured value."""

    snippet: str
    """Numbered lines of the new text around the change (empty when there are none)."""
    diff: str | None
    """Unified diff of old and new text; ``None`` when the old text is unknown."""


def with_snippet(first_line: str, report: ChangeReport) -> str:
    """The success text: DESIGN's first line, then a blank line and the snippet, if any."""
    return f"{first_line}\n\n{report.snippet}" if report.snippet else first_line


def change_report(
    path: str, before: str | None, after: str, *, created: bool = False, with_diff: bool = True
) -> ChangeReport:
    """Compare ``before`` with ``after``.

    ``created``: nothing existed before (the diff starts from ``/dev/null``).
    ``before=None`` on an update means the old text is unknown (binary, or
    too large to fetch): the snippet then shows the start of the new text and
    there is no diff. ``with_diff=False`` skips the diff (``diff`` is ``None``).
    """
    if before is None:
        new = _lines(after)
        groups = _grouped(_opcodes([], new), CONTEXT_LINES)
        snippet = _snippet(new, groups)
        diff = _unified(path, [], new, groups, True) if created and with_diff else None
        return ChangeReport(snippet, diff)
    old_w, new_w, ops = _windowed(before, after)
    groups = _grouped(ops, CONTEXT_LINES)
    diff = _unified(path, old_w, new_w, groups, created) if with_diff else None
    return ChangeReport(_snippet(new_w, groups), diff)


class _Window:
    """Some lines of a text, addressed by their line numbers in the whole text."""

    __slots__ = ("_first", "_lines")

    def __init__(self, lines: list[str], first: int) -> None:
        self._lines = lines
        self._first = first

    @overload
    def __getitem__(self, key: int) -> str: ...
    @overload
    def __getitem__(self, key: slice) -> list[str]: ...
    def __getitem__(self, key: int | slice) -> str | list[str]:
        first = self._first
        if isinstance(key, slice):
            return self._lines[key.start - first : key.stop - first]
        return self._lines[key - first]


_Lines = list[str] | _Window
_BLOCK = 1 << 16


def _prefix_length(a: str, b: str) -> int:
    """Length of the common prefix: slice comparisons (memcmp), one block at a time."""
    n = min(len(a), len(b))
    i = 0
    while i < n:
        j = min(n, i + _BLOCK)
        if a[i:j] != b[i:j]:
            while j - i > 1:  # a[i:j] differ somewhere: halve
                mid = (i + j) // 2
                if a[i:mid] == b[i:mid]:
                    i = mid
                else:
                    j = mid
            return i
        i = j
    return n


def _suffix_length(a: str, b: str, limit: int) -> int:
    """Length of the common suffix, at most ``limit``."""
    la, lb = len(a), len(b)
    i = 0
    while i < limit:
        j = min(limit, i + _BLOCK)
        if a[la - j : la - i] != b[lb - j : lb - i]:
            while j - i > 1:
                mid = (i + j) // 2
                if a[la - mid : la - i] == b[lb - mid : lb - i]:
                    i = mid
                else:
                    j = mid
            return i
        i = j
    return limit


def _count_lines(text: str, start: int) -> int:
    """Lines of ``text[start:]`` under read's line model."""
    if start >= len(text):
        return 0
    return text.count("\n", start) + (0 if text.endswith("\n") else 1)


def _windowed(before: str, after: str) -> tuple[_Window, _Window, list[_Opcode]]:
    """:func:`_opcodes` of the two texts, splitting only the changed middle and its context.

    Equal leading and trailing lines are found by comparing characters (C
    speed, no line list); the result is the same as comparing lines.
    """
    n_old, n_new = _count_lines(before, 0), _count_lines(after, 0)
    p = _prefix_length(before, after)
    if p == len(before) == len(after):
        return _Window([], 0), _Window([], 0), [("equal", 0, n_old, 0, n_new)]
    start = before.rfind("\n", 0, p) + 1  # the first line that differs starts here
    head = before.count("\n", 0, start)
    s = _suffix_length(before, after, min(len(before), len(after)) - start)
    a_from, b_from = len(after) - s, len(before) - s
    if (a_from == 0 or after[a_from - 1] == "\n") and (b_from == 0 or before[b_from - 1] == "\n"):
        a_tail = a_from  # the common suffix starts on a line start in both texts
    else:
        k = after.find("\n", a_from)  # lines after a shared line break are whole and equal
        a_tail = len(after) if k == -1 else k + 1
    tail = _count_lines(after, a_tail)
    b_tail = a_tail - len(after) + len(before)
    # Characters of CONTEXT_LINES lines before the change and after it.
    lo = start
    for _ in range(min(head, CONTEXT_LINES)):
        lo = before.rfind("\n", 0, lo - 1) + 1
    first = head - min(head, CONTEXT_LINES)
    extra = min(tail, CONTEXT_LINES)
    a_hi, b_hi = a_tail, b_tail
    for _ in range(extra):
        k = after.find("\n", a_hi)
        step = len(after) - a_hi if k == -1 else k + 1 - a_hi
        a_hi, b_hi = a_hi + step, b_hi + step
    old_w = _Window(_lines(before[lo:b_hi]), first)
    new_w = _Window(_lines(after[lo:a_hi]), first)
    ops: list[_Opcode] = []
    if head:
        ops.append(("equal", 0, head, 0, head))
    old_end, new_end = n_old - tail, n_new - tail
    ops.extend(_middle(head, old_w[head:old_end], new_w[head:new_end], old_end, new_end))
    if tail:
        ops.append(("equal", old_end, n_old, new_end, n_new))
    return old_w, new_w, ops


def _lines(text: str) -> list[str]:
    """Lines under read's line model, each keeping its ``\\n`` (the last may have none)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _opcodes(old: list[str], new: list[str]) -> list[_Opcode]:
    """difflib-style opcodes over the whole texts, difflib run on the changed middle only."""
    limit = min(len(old), len(new))
    head = 0
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    old_end, new_end = len(old) - tail, len(new) - tail
    ops: list[_Opcode] = []
    if head:
        ops.append(("equal", 0, head, 0, head))
    ops.extend(_middle(head, old[head:old_end], new[head:new_end], old_end, new_end))
    if tail:
        ops.append(("equal", old_end, len(old), new_end, len(new)))
    return ops


def _middle(
    head: int, middle_old: list[str], middle_new: list[str], old_end: int, new_end: int
) -> list[_Opcode]:
    """Opcodes of the changed middle (difflib while it is small, else one block)."""
    if not (middle_old or middle_new):
        return []
    if middle_old and middle_new and max(len(middle_old), len(middle_new)) <= EXACT_DIFF_MAX_LINES:
        matcher = SequenceMatcher(None, middle_old, middle_new, autojunk=False)
        return [
            (tag, a1 + head, a2 + head, b1 + head, b2 + head)
            for tag, a1, a2, b1, b2 in matcher.get_opcodes()
        ]
    tag = "replace" if middle_old and middle_new else "delete" if middle_old else "insert"
    return [(tag, head, old_end, head, new_end)]


def _grouped(ops: list[_Opcode], context: int) -> list[list[_Opcode]]:
    """Changed regions with ``context`` equal lines around them (difflib's hunk grouping)."""
    if not any(tag != "equal" for tag, *_ in ops):
        return []
    ops = list(ops)
    tag, a1, a2, b1, b2 = ops[0]
    if tag == "equal":
        ops[0] = (tag, max(a1, a2 - context), a2, max(b1, b2 - context), b2)
    tag, a1, a2, b1, b2 = ops[-1]
    if tag == "equal":
        ops[-1] = (tag, a1, min(a2, a1 + context), b1, min(b2, b1 + context))
    groups: list[list[_Opcode]] = []
    group: list[_Opcode] = []
    for tag, a1, a2, b1, b2 in ops:
        start_a, start_b = a1, b1
        if tag == "equal" and a2 - a1 > 2 * context:
            group.append((tag, a1, min(a2, a1 + context), b1, min(b2, b1 + context)))
            groups.append(group)
            group = []
            start_a, start_b = max(a1, a2 - context), max(b1, b2 - context)
        group.append((tag, start_a, a2, start_b, b2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups


def _utf8_size(text: str) -> int:
    # surrogatepass: a size must never fail, whatever a caller put in the text.
    return len(text.encode("utf-8", "surrogatepass"))


def _shown(line: str) -> str:
    """A line as read shows it: no line break, no trailing CR, cut when very long."""
    text = line.removesuffix("\n").removesuffix("\r")
    if len(text) > SNIPPET_LINE_CHARS:
        return text[:SNIPPET_LINE_CHARS] + f"... (line truncated to {SNIPPET_LINE_CHARS} chars)"
    return text


def _snippet(new: _Lines, groups: list[list[_Opcode]]) -> str:
    """The new side of each region, numbered; ``...`` between regions; cut when too long."""
    ranges = [(group[0][3], group[-1][4]) for group in groups]
    ranges = [(start, end) for start, end in ranges if end > start]
    out: list[str] = []
    used = 0
    remaining = sum(end - start for start, end in ranges)
    for index, (start, end) in enumerate(ranges):
        if index:
            out.append("...")
            used += 4
        for number in range(start, end):
            line = f"{number + 1}: {_shown(new[number])}"
            size = _utf8_size(line) + 1
            if len(out) >= SNIPPET_MAX_LINES or (out and used + size > SNIPPET_MAX_BYTES):
                out.append(
                    f"... ({remaining} more line{'s' if remaining != 1 else ''} "
                    "not shown; read the file to see them)"
                )
                return "\n".join(out)
            out.append(line)
            used += size
            remaining -= 1
    return "\n".join(out)


def _range(start: int, end: int) -> str:
    """A unified-diff range: ``start,count`` (1-based), difflib's conventions."""
    length = end - start
    if length == 1:
        return str(start + 1)
    if not length:
        return f"{start},0"
    return f"{start + 1},{length}"


def _unified(
    path: str, old: _Lines, new: _Lines, groups: list[list[_Opcode]], created: bool
) -> str:
    """A unified diff (empty when nothing changed), cut at :data:`DIFF_MAX_BYTES`."""
    if not groups:
        return ""
    out = ["--- /dev/null\n" if created else f"--- {path}\n", f"+++ {path}\n"]
    used = sum(map(_utf8_size, out))
    lines = _diff_lines(old, new, groups)
    for line in lines:
        size = _utf8_size(line)
        if used + size > DIFF_MAX_BYTES:
            rest = 1 + sum(1 for _ in lines)  # counted, never kept: memory stays bounded
            out.append(f"... (diff cut at {DIFF_MAX_BYTES} bytes; {rest} more lines not shown)\n")
            break
        out.append(line)
        used += size
    return "".join(out)


def _diff_lines(old: _Lines, new: _Lines, groups: list[list[_Opcode]]) -> Iterator[str]:
    for group in groups:
        a1, a2, b1, b2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        yield f"@@ -{_range(a1, a2)} +{_range(b1, b2)} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in old[i1:i2]:
                    yield _diff_line(" ", line)
                continue
            if tag in ("replace", "delete"):
                for line in old[i1:i2]:
                    yield _diff_line("-", line)
            if tag in ("replace", "insert"):
                for line in new[j1:j2]:
                    yield _diff_line("+", line)


def _diff_line(mark: str, line: str) -> str:
    if line.endswith("\n"):
        return mark + line
    return f"{mark}{line}\n\\ No newline at end of file\n"
