"""What changed between two texts: one bounded line comparison, rendered as a snippet or a diff.

Pure (no I/O, nothing above the seam), so the tools' change snippets, the
seam's stale-version errors and its rebase check share one comparison
(:mod:`fsseam.tools.snippet` builds the tool results on it).

The snippet lets the model check its work without another read: the changed
lines of the new text with a few lines of context, numbered like read's
output (``N: text``), separate regions joined by ``...``, cut at
:data:`SNIPPET_MAX_LINES` lines or :data:`SNIPPET_MAX_BYTES` bytes. A line
longer than :data:`SNIPPET_LINE_CHARS` is cut; when its change lies past
the part that would show, it shows a window around the change instead,
with the change's 1-based column: ``N:COL: …text…``. The unified diff is
cut at :data:`DIFF_MAX_BYTES`; :func:`changed_lines` gives the changed
regions themselves, without context.

All of them come from one line comparison (:func:`compare`), whose cost is
linear in the size of the texts plus a fixed budget, whatever they hold (a
``replace_all`` of a frequent word once took difflib minutes):

- common leading and trailing lines are found by comparing characters
  (memcmp speed, no line list);
- a changed middle of at most :data:`COMPARE_MAX_LINES` lines and
  :data:`COMPARE_MAX_CHARS` characters is compared line by line: lines found
  on one side only are set aside (they can never match), and Myers'
  algorithm finds a shortest edit script of the rest within
  :data:`COMPARE_BUDGET` steps;
- past a limit or the budget the diff is coarser: the middle's lines paired
  one to one when both sides have as many, else one replaced block (coarser
  regions are wider, never narrower: a caller judging overlaps by them only
  gets more cautious).

No list of all the lines of a big text is ever built: lines are found by
scanning from known line starts, and only the lines shown are copied, so a
200 MiB write costs the snippet a few kilobytes.
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from collections.abc import Hashable, Iterator
from dataclasses import dataclass

__all__ = [
    "COMPARE_BUDGET",
    "COMPARE_MAX_CHARS",
    "COMPARE_MAX_LINES",
    "CONTEXT_LINES",
    "DIFF_MAX_BYTES",
    "LONG_LINE_LEAD",
    "SNIPPET_LINE_CHARS",
    "SNIPPET_MAX_BYTES",
    "SNIPPET_MAX_LINES",
    "Change",
    "Opcode",
    "changed_lines",
    "compare",
]

CONTEXT_LINES = 3
"""Unchanged lines shown around each changed region."""
SNIPPET_MAX_LINES = 40
"""Lines a snippet shows at most."""
SNIPPET_MAX_BYTES = 4096
"""UTF-8 bytes a snippet takes at most."""
SNIPPET_LINE_CHARS = 300
"""Characters of one snippet line shown before it is cut."""
LONG_LINE_LEAD = 50
"""Characters shown before the change in the window of a long changed line."""
DIFF_MAX_BYTES = 32 * 1024
"""UTF-8 bytes of the unified diff in the structured value at most."""
COMPARE_MAX_LINES = 50_000
"""Largest changed middle (lines, both sides together) compared line by line."""
COMPARE_MAX_CHARS = 4 * 1024 * 1024
"""Largest changed middle (characters, both sides together) compared line by line."""
COMPARE_BUDGET = 300_000
"""Steps Myers' algorithm may take (about 0.1 s) before the coarser diff is used."""

Opcode = tuple[str, int, int, int, int]
"""``(tag, i1, i2, j1, j2)`` as difflib's: lines ``i1:i2`` of the old text became ``j1:j2``."""
_BLOCK = 1 << 16


class _Side:
    """The lines of one text, found by scanning forward from known line starts.

    Line numbers are 0-based over the whole text. Access is cheap when it
    moves forward from an anchor or from the last line looked up, which is
    how the snippet and the diff read.
    """

    __slots__ = ("_anchors", "_cursor", "text")

    def __init__(self, text: str, anchors: list[tuple[int, int]]) -> None:
        self.text = text
        self._anchors = sorted(anchors)
        self._cursor = self._anchors[0]

    def start(self, number: int) -> int:
        """Offset of the first character of line ``number``."""
        line, pos = self._cursor
        anchor = self._anchors[bisect_right(self._anchors, (number, sys.maxsize)) - 1]
        if not anchor[0] <= line <= number:
            line, pos = anchor
        find = self.text.find
        while line < number:
            pos = find("\n", pos) + 1
            line += 1
        self._cursor = (line, pos)
        return pos

    def span(self, number: int) -> tuple[int, int]:
        """``(start, end)`` of line ``number``, its line break excluded."""
        start = self.start(number)
        end = self.text.find("\n", start)
        return start, len(self.text) if end == -1 else end


@dataclass(frozen=True, slots=True)
class Change:
    """One comparison of the old and new text, rendered on demand as snippet or diff."""

    path: str
    """The display path the diff's headers name."""
    created: bool
    """Nothing existed before: the diff starts from ``/dev/null``."""
    old: _Side
    """The old text (empty when unknown)."""
    new: _Side
    """The new text."""
    groups: list[list[Opcode]]
    """Changed regions, difflib-style opcodes with context."""
    diffable: bool
    """False when the old text is unknown, so there is no diff."""

    def snippet(self) -> str:
        """The numbered new side of each region; ``...`` between regions; cut when too long."""
        return _snippet(self)

    def diff(self) -> str | None:
        """The unified diff (``""`` when nothing changed, ``None`` when the old text is unknown)."""
        return _unified(self) if self.diffable else None


def compare(path: str, before: str | None, after: str, *, created: bool = False) -> Change:
    """Compare ``before`` with ``after`` in linear time plus :data:`COMPARE_BUDGET`.

    ``created``: nothing existed before (the diff starts from ``/dev/null``).
    ``before=None`` on an update means the old text is unknown (binary, or
    too large to fetch): the snippet then shows the start of the new text
    and there is no diff.
    """
    if before is None:
        lines = _count_lines(after, 0)
        ops: list[Opcode] = [("insert", 0, 0, 0, lines)] if lines else []
        return Change(
            path, created, _Side("", [(0, 0)]), _Side(after, [(0, 0)]), _grouped(ops), created
        )
    old, new, ops = _compared(before, after)
    return Change(path, created, old, new, _grouped(ops), True)


def changed_lines(before: str, after: str) -> list[Opcode]:
    """The regions where ``after`` differs from ``before``, as opcodes without context.

    Tags are ``replace``, ``delete`` and ``insert`` (no ``equal``), in order;
    line numbers are 0-based, under read's line model. Same cost and bounds
    as :func:`compare`; past them the regions are coarser (wider), never
    narrower.
    """
    return [op for op in _compared(before, after)[2] if op[0] != "equal"]


def _compared(before: str, after: str) -> tuple[_Side, _Side, list[Opcode]]:
    """Both sides, anchored where the snippet and the diff will look, and every opcode."""
    n_old, n_new = _count_lines(before, 0), _count_lines(after, 0)
    p = _prefix_length(before, 0, after, 0, min(len(before), len(after)))
    if p == len(before) == len(after):
        return _Side(before, [(0, 0)]), _Side(after, [(0, 0)]), []
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
    old_end, new_end = n_old - tail, n_new - tail
    lo = start
    for _ in range(min(head, CONTEXT_LINES)):
        lo = before.rfind("\n", 0, lo - 1) + 1
    first = head - min(head, CONTEXT_LINES)
    old = _Side(before, [(first, lo), (head, start), (old_end, b_tail)])
    new = _Side(after, [(first, lo), (head, start), (new_end, a_tail)])
    ops: list[Opcode] = []
    if head:
        ops.append(("equal", 0, head, 0, head))
    ops.extend(_middle(before, b_tail, after, a_tail, start, head, old_end, new_end))
    if tail:
        ops.append(("equal", old_end, n_old, new_end, n_new))
    return old, new, ops


# -- finding the common ends ---------------------------------------------------------


def _prefix_length(a: str, a0: int, b: str, b0: int, n: int) -> int:
    """Length of the common prefix of ``a[a0:a0+n]`` and ``b[b0:b0+n]``.

    Slice comparisons (memcmp), one block at a time, so no copy is bigger
    than a block.
    """
    i = 0
    while i < n:
        j = min(n, i + _BLOCK)
        if a[a0 + i : a0 + j] != b[b0 + i : b0 + j]:
            while j - i > 1:  # the blocks differ somewhere: halve
                mid = (i + j) // 2
                if a[a0 + i : a0 + mid] == b[b0 + i : b0 + mid]:
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


# -- comparing the changed middle ------------------------------------------------------


def _middle(
    before: str,
    b_tail: int,
    after: str,
    a_tail: int,
    start: int,
    head: int,
    old_end: int,
    new_end: int,
) -> list[Opcode]:
    """Opcodes of the changed middle: lines ``head``.. of each side, from ``start`` to the tails."""
    m_old, m_new = old_end - head, new_end - head
    if not m_new:
        return [("delete", head, old_end, head, head)] if m_old else []
    if not m_old:
        return [("insert", head, head, head, new_end)]
    block: list[Opcode] = [("replace", head, old_end, head, new_end)]
    chars = (b_tail - start) + (a_tail - start)
    if m_old + m_new > COMPARE_MAX_LINES or chars > COMPARE_MAX_CHARS:
        return block  # sliced only below these limits: a huge middle is never copied
    a, b = _line_ids(before[start:b_tail], after[start:a_tail])
    pairs = _matched_pairs(a, b)
    if pairs is None:
        if m_old != m_new:
            return block
        pairs = [(i, i) for i in range(m_old) if a[i] == b[i]]
    return _opcodes(pairs, head, m_old, m_new)


def _line_ids(old: str, new: str) -> tuple[list[int], list[int]]:
    """Each line as a small int, equal lines alike (a last line without a break is distinct)."""
    table: dict[Hashable, int] = {}

    def ids(text: str) -> list[int]:
        parts = text.split("\n")
        last = parts.pop()  # "" when the text ends with a line break
        keys: list[Hashable] = list(parts)
        if last:
            keys.append((last,))  # a tuple never equals a str: "x" != "x\n"
        return [table.setdefault(key, len(table)) for key in keys]

    return ids(old), ids(new)


def _matched_pairs(a: list[int], b: list[int]) -> list[tuple[int, int]] | None:
    """Index pairs of a longest common subsequence of ``a`` and ``b``; ``None`` past the budget.

    Lines present on one side only cannot be matched: setting them aside
    first keeps the result exact and turns the common "every changed line
    is new" case (a ``replace_all``) into a linear walk.
    """
    in_a, in_b = set(a), set(b)
    keep_a = [i for i, line in enumerate(a) if line in in_b]
    keep_b = [j for j, line in enumerate(b) if line in in_a]
    pairs = _myers([a[i] for i in keep_a], [b[j] for j in keep_b], COMPARE_BUDGET)
    if pairs is None:
        return None
    return [(keep_a[x], keep_b[y]) for x, y in pairs]


def _myers(a: list[int], b: list[int], budget: int) -> list[tuple[int, int]] | None:
    """Myers' O((N+M)D) shortest edit script, as matched pairs; ``None`` past ``budget`` steps."""
    n, m = len(a), len(b)
    head = 0
    while head < n and head < m and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and a[n - 1 - tail] == b[m - 1 - tail]:
        tail += 1
    pairs = [(i, i) for i in range(head)]
    core_a, core_b = a[head : n - tail], b[head : m - tail]
    middle = _myers_core(core_a, core_b, budget)
    if middle is None:
        return None
    pairs.extend((x + head, y + head) for x, y in middle)
    pairs.extend((n - tail + i, m - tail + i) for i in range(tail))
    return pairs


def _myers_core(a: list[int], b: list[int], budget: int) -> list[tuple[int, int]] | None:
    n, m = len(a), len(b)
    if not n or not m:
        return []
    max_d = n + m
    offset = max_d + 1
    v = [0] * (2 * max_d + 3)
    trace: list[list[int]] = []
    work = 0
    for d in range(max_d + 1):
        # v for diagonals -d-1..d+1 as left by step d-1: what backtracking needs.
        trace.append(v[offset - d - 1 : offset + d + 2])
        work += 2 * d + 3
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]  # down: an insertion
            else:
                x = v[offset + k - 1] + 1  # right: a deletion
            y = x - k
            x0 = x
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            work += 1 + x - x0
            v[offset + k] = x
            if x >= n and y >= m:
                return _backtrack(trace, n, m)
        if work > budget:
            return None
    return None  # pragma: no cover - d = n + m always reaches the end


def _backtrack(trace: list[list[int]], n: int, m: int) -> list[tuple[int, int]]:
    pairs: list[tuple[int, int]] = []
    x, y = n, m
    for d in range(len(trace) - 1, -1, -1):
        v = trace[d]
        base = d + 1  # v[k + base] is diagonal k
        k = x - y
        down = k == -d or (k != d and v[k - 1 + base] < v[k + 1 + base])
        prev_k = k + 1 if down else k - 1
        prev_x = v[prev_k + base]
        prev_y = prev_x - prev_k
        while x > prev_x and y > prev_y:
            x -= 1
            y -= 1
            pairs.append((x, y))
        x, y = prev_x, prev_y
    pairs.reverse()
    return pairs


def _opcodes(pairs: list[tuple[int, int]], head: int, m_old: int, m_new: int) -> list[Opcode]:
    """difflib-style opcodes from matched pairs (increasing in both), shifted by ``head``."""
    ops: list[Opcode] = []
    i = j = 0
    index = 0
    while index <= len(pairs):
        if index < len(pairs):
            x, y = pairs[index]
            length = 1
            while (
                index + length < len(pairs)
                and pairs[index + length][0] == x + length
                and pairs[index + length][1] == y + length
            ):
                length += 1
        else:
            x, y, length = m_old, m_new, 0
        if i < x or j < y:
            tag = "replace" if i < x and j < y else "delete" if i < x else "insert"
            ops.append((tag, head + i, head + x, head + j, head + y))
        if length:
            ops.append(("equal", head + x, head + x + length, head + y, head + y + length))
        i, j = x + length, y + length
        index += max(length, 1)
    return ops


def _grouped(ops: list[Opcode], context: int = CONTEXT_LINES) -> list[list[Opcode]]:
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
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
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


# -- the snippet -------------------------------------------------------------------------


def _utf8_size(text: str) -> int:
    # surrogatepass: a size must never fail, whatever a caller put in the text.
    return len(text.encode("utf-8", "surrogatepass"))


def _shown_span(side: _Side, number: int) -> tuple[int, int]:
    """Line ``number`` as read shows it: no line break, no trailing CR."""
    start, end = side.span(number)
    if end > start and side.text[end - 1] == "\r":
        end -= 1
    return start, end


def _snippet_line(change: Change, number: int, paired: int | None) -> str:
    """Line ``number`` of the new text, numbered; a long one cut, or windowed on its change."""
    text = change.new.text
    start, end = _shown_span(change.new, number)
    length = end - start
    if length <= SNIPPET_LINE_CHARS:
        return f"{number + 1}: {text[start:end]}"
    if paired is not None:
        old_start, old_end = _shown_span(change.old, paired)
        column = _prefix_length(
            text, start, change.old.text, old_start, min(length, old_end - old_start)
        )
        if column > SNIPPET_LINE_CHARS - LONG_LINE_LEAD:
            first = column - LONG_LINE_LEAD
            last = min(length, first + SNIPPET_LINE_CHARS)
            more = "…" if last < length else ""
            return f"{number + 1}:{column + 1}: …{text[start + first : start + last]}{more}"
    cut = text[start : start + SNIPPET_LINE_CHARS]
    return f"{number + 1}: {cut}... (line truncated to {SNIPPET_LINE_CHARS} chars)"


def _snippet_lines(group: list[Opcode]) -> Iterator[tuple[int, int | None]]:
    """New-side line numbers of a region, each with its old line when it replaced one."""
    for tag, i1, i2, j1, j2 in group:
        for j in range(j1, j2):
            paired = i1 + j - j1 if tag == "replace" and i1 + j - j1 < i2 else None
            yield j, paired


def _snippet(change: Change) -> str:
    groups = [g for g in change.groups if g[-1][4] > g[0][3]]
    out: list[str] = []
    used = 0
    remaining = sum(group[-1][4] - group[0][3] for group in groups)
    for index, group in enumerate(groups):
        if index:
            out.append("...")
            used += 4
        for number, paired in _snippet_lines(group):
            line = _snippet_line(change, number, paired)
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


# -- the diff ------------------------------------------------------------------------------


def _range(start: int, end: int) -> str:
    """A unified-diff range: ``start,count`` (1-based), difflib's conventions."""
    length = end - start
    if length == 1:
        return str(start + 1)
    if not length:
        return f"{start},0"
    return f"{start + 1},{length}"


def _diff_items(change: Change) -> Iterator[tuple[str, _Side | None, int]]:
    """Hunk headers ``(header, None, 0)`` and lines ``(mark, side, number)``, in order."""
    for group in change.groups:
        a1, a2, b1, b2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        yield f"@@ -{_range(a1, a2)} +{_range(b1, b2)} @@\n", None, 0
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for number in range(i1, i2):
                    yield " ", change.old, number
                continue
            if tag in ("replace", "delete"):
                for number in range(i1, i2):
                    yield "-", change.old, number
            if tag in ("replace", "insert"):
                for number in range(j1, j2):
                    yield "+", change.new, number


def _item_count(change: Change) -> int:
    total = 0
    for group in change.groups:
        total += 1
        for tag, i1, i2, j1, j2 in group:
            total += (i2 - i1) if tag == "equal" else (i2 - i1) + (j2 - j1)
    return total


def _diff_line(mark: str, side: _Side, number: int, room: int) -> str | None:
    """One diff line, or ``None`` when it cannot fit in ``room`` bytes (then it is never copied)."""
    start, end = side.span(number)
    if end - start + 2 > room:  # a character takes at least one byte
        return None
    line = mark + side.text[start : end + 1]
    if end == len(side.text):
        line += "\n\\ No newline at end of file\n"
    return line


def _unified(change: Change) -> str:
    """A unified diff (empty when nothing changed), cut at :data:`DIFF_MAX_BYTES`."""
    if not change.groups:
        return ""
    path = change.path
    out = ["--- /dev/null\n" if change.created else f"--- {path}\n", f"+++ {path}\n"]
    used = sum(map(_utf8_size, out))
    for emitted, (mark, side, number) in enumerate(_diff_items(change)):
        line = mark if side is None else _diff_line(mark, side, number, DIFF_MAX_BYTES - used)
        size = DIFF_MAX_BYTES + 1 if line is None else _utf8_size(line)
        if line is None or used + size > DIFF_MAX_BYTES:
            rest = _item_count(change) - emitted
            out.append(f"... (diff cut at {DIFF_MAX_BYTES} bytes; {rest} more lines not shown)\n")
            break
        out.append(line)
        used += size
    return "".join(out)
