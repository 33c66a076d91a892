"""When a guarded edit finds the file moved on: same text, a clean rebase, or a conflict to show.

The seam's edit loop (:meth:`~fsseam.seam.FileSystem._edit_loop`) and a
backend's guarded ``write_text`` meet a file at a version other than the one
the caller observed. With the observed text at hand (a backend's content
cache) they decide, by content and never by timestamps:

- the current text is the observed text (``touch``, a formatter that changed
  nothing, an upload of the same bytes): proceed at the current version;
- :class:`~fsseam.seam.RebaseIfClean` and :func:`clean_on_top`: apply the
  edit to the current text, guarded by the current version;
- otherwise ``FS_STALE_VERSION`` carrying :func:`change_between` the two.

The line comparison is :mod:`fsseam.changes` (bounded: linear plus a fixed
budget, coarser past it); matching is linear. Callers on an event loop run
:func:`settle` (which offloads the comparison) rather than these directly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from fsseam.changes import Opcode, changed_lines, compare
from fsseam.seam.errors import FsStaleVersion
from fsseam.seam.types import FsEditRequest, FsVersion

__all__ = ["Verdict", "change_between", "clean_on_top", "settle", "stale"]


def change_between(name: str, observed: str, current: str) -> str:
    """The unified diff from ``observed`` to ``current`` (headers name ``name``), bounded."""
    diff = compare(name, observed, current).diff()
    assert diff is not None  # both texts are known
    return diff


def stale(
    name: str, *, change: str | None = None, current_version: FsVersion | None = None
) -> FsStaleVersion:
    """``FS_STALE_VERSION`` for a file modified since it was read, with what it knows."""
    return FsStaleVersion(
        f'"{name}" was modified since it was read', change=change, current_version=current_version
    )


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do with a guarded call whose file moved past the observed version."""

    change: str | None
    """``None``: the current text is the observed text (proceed as is); else the diff
    from the observed text to the current one, on top of which the edit is applied."""


async def settle(
    name: str,
    observed: str | None,
    current: str,
    current_version: FsVersion,
    edits: Sequence[FsEditRequest] | None,
) -> Verdict:
    """Proceed (same text, or a clean rebase when ``edits`` are given) or raise the conflict.

    ``observed`` is the text at the version the caller observed (``None``:
    unknown, so the error carries no change and nothing is rebased);
    ``current`` the text now stored at ``current_version``. ``edits`` is the
    edit sequence when a clean rebase is allowed. Raises
    :class:`~fsseam.seam.FsStaleVersion` with ``change`` and
    ``current_version`` otherwise. The comparison runs in a worker thread.
    """
    if observed is None:
        raise stale(name, current_version=current_version)
    if observed == current:
        return Verdict(None)

    def judge() -> tuple[str, bool]:
        change = change_between(name, observed, current)
        return change, edits is not None and clean_on_top(observed, current, edits)

    change, clean = await asyncio.to_thread(judge)
    if clean:
        return Verdict(change)
    raise stale(name, change=change, current_version=current_version)


# -- the three-way check ------------------------------------------------------------------


def clean_on_top(base: str, current: str, edits: Sequence[FsEditRequest]) -> bool:
    """True when ``edits``, written against ``base``, can be applied to ``current`` as they are.

    Judged by lines, on both sides of the change from ``base`` to
    ``current``: applied in order (each to the text the previous ones left,
    as :func:`~fsseam.seam.edits.apply_edits` does), no match of any edit
    may span a line the change touched — on the ``base`` side a line it
    changed or deleted, or a point where it inserted lines strictly inside
    the match; on the ``current`` side a line it changed or inserted, or a
    point where it deleted lines strictly inside the match — and each edit
    must match as many times in both (and be unique without
    ``replace_all``). Lines an earlier edit wrote are the edit's own and
    never count as touched. Linear in the texts and the matches, after
    :func:`~fsseam.changes.changed_lines` (bounded, coarser past its budget,
    so a huge change is judged more cautiously, never less).
    """
    regions = changed_lines(base, current)
    ours = _counts(base, edits, _marks(base, regions, old_side=True))
    if ours is None:
        return False
    return _counts(current, edits, _marks(current, regions, old_side=False)) == ours


def _marks(text: str, regions: list[Opcode], *, old_side: bool) -> list[tuple[int, int]]:
    """The touched places of one side, as sorted ``(a, b)`` character ranges of ``text``.

    Offsets are in the LF-normalized text (where matching happens; line
    numbers are the same). A touched line is ``[its start, the next line's
    start)``, its line break included; a point where lines were inserted
    (old side) or deleted (new side) is the empty range at the start of the
    line after it. A match ``[s, e)`` meets a mark when ``s < b and a < e``:
    for a point, when it falls strictly inside the match.
    """
    spans: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in regions:
        first, last = (i1, i2) if old_side else (j1, j2)
        point = tag == ("insert" if old_side else "delete")
        spans.append((first, first if point else last))
    starts = _line_starts(text.replace("\r\n", "\n"), sorted({n for span in spans for n in span}))
    return [(starts[a], starts[b]) for a, b in spans]


def _line_starts(text: str, numbers: list[int]) -> dict[int, int]:
    """Offsets of the starts of lines ``numbers`` (ascending) in one forward scan."""
    out: dict[int, int] = {}
    line, pos = 0, 0
    find = text.find
    for number in numbers:
        while line < number and pos < len(text):
            found = find("\n", pos)
            pos = len(text) if found == -1 else found + 1
            line += 1
        out[number] = pos if line == number else len(text)
    return out


def _counts(
    text: str, edits: Sequence[FsEditRequest], marks: list[tuple[int, int]]
) -> list[int] | None:
    """Matches per edit, applied in order, or ``None`` when one fails or meets a mark.

    Works on the LF-normalized text, moving the marks as each edit splices
    its replacements in (a mark never lies inside a match, so each one moves
    by the growth of the matches before it).
    """
    text = text.replace("\r\n", "\n")
    counts: list[int] = []
    for edit in edits:
        needle = edit.old_string.replace("\r\n", "\n")
        if not needle:
            return None
        found: list[int] = []
        at = text.find(needle)
        while at != -1:
            found.append(at)
            if not edit.replace_all and len(found) > 1:
                return None
            at = text.find(needle, at + len(needle))
        if not found:
            return None
        size = len(needle)
        index = 0
        for start in found:
            # Marks are sorted and disjoint: skip those wholly before this match
            # (they are before every later one too), then only the next can meet it.
            while index < len(marks) and marks[index][1] <= start:
                index += 1
            if index < len(marks) and marks[index][0] < start + size:
                return None
        replacement = edit.new_string.replace("\r\n", "\n")
        text, marks = _spliced(text, found, size, replacement, marks)
        counts.append(len(found))
    return counts


def _spliced(
    text: str, found: list[int], size: int, replacement: str, marks: list[tuple[int, int]]
) -> tuple[str, list[tuple[int, int]]]:
    """``text`` with ``replacement`` at each match, and the marks moved accordingly."""
    pieces: list[str] = []
    cursor = 0
    for start in found:
        pieces.append(text[cursor:start])
        pieces.append(replacement)
        cursor = start + size
    pieces.append(text[cursor:])
    grow = len(replacement) - size
    moved: list[tuple[int, int]] = []
    passed = 0
    for a, b in marks:
        while passed < len(found) and found[passed] + size <= a:
            passed += 1
        moved.append((a + passed * grow, b + passed * grow))
    return "".join(pieces), moved
