"""Literal edits: the one replacement rule every backend and tool shares (pure, no I/O).

Matching happens on LF-normalized text (a CRLF counts as LF in both the file
and ``old_string``); the replacement is spliced into the original, so every
untouched character (other line endings, a BOM kept outside the text) stays
identical, and line breaks inside ``new_string`` take the file's dominant
ending. :func:`apply_edit` is one edit; :func:`apply_edits` applies several in
order, all or nothing. Time is linear in the text: C-level ``find``/``count``/
``replace``, and a bisect per match to map positions back across CRLFs.

This module lives in the seam so that the seam's edit loop needs nothing
above it; :mod:`fsseam.text` re-exports these names.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

from fsseam.diagnostics import explain_not_found, match_places
from fsseam.seam.errors import FsAmbiguousEdit, FsEditNotFound, FsError
from fsseam.seam.types import FsEditRequest

__all__ = ["EditResult", "apply_edit", "apply_edits", "dominant_newline"]


def dominant_newline(text: str) -> str:
    """``\\r\\n`` when CRLF line breaks outnumber bare LF ones, else ``\\n``."""
    if "\r" not in text:  # memchr; counting "\r\n" scans ~70x slower than this
        return "\n"
    crlf = text.count("\r\n")
    return "\r\n" if crlf > text.count("\n") - crlf else "\n"


@dataclass(frozen=True, slots=True)
class EditResult:
    """The text after a literal edit and how many replacements were made."""

    text: str
    replacements: int


def apply_edit(
    text: str,
    old_string: str,
    new_string: str,
    *,
    replace_all: bool = False,
    name: str = "file",
) -> EditResult:
    """Replace ``old_string`` with ``new_string`` in ``text``.

    Matching happens on LF-normalized text (CRLF counts as LF in both the file
    and ``old_string``); the replacement is spliced into the original so every
    untouched character, including other line endings, stays identical. Line
    breaks in ``new_string`` take the file's dominant ending.

    Raises ``FS_EDIT_NOT_FOUND`` (empty or missing) and ``FS_AMBIGUOUS_EDIT``.
    """
    needle = old_string.replace("\r\n", "\n")
    if not needle:
        raise FsEditNotFound(f'old_string is empty; nothing to find in "{name}"')
    crlf_at = _crlf_positions(text)
    haystack = text.replace("\r\n", "\n") if crlf_at else text
    # One scan settles the common case (one match) instead of count() + replace().
    first = haystack.find(needle)
    if first == -1:
        count = 0
    elif not replace_all and haystack.find(needle, first + len(needle)) == -1:
        count = 1
    else:
        count = haystack.count(needle, first)
    if count == 0:
        raise FsEditNotFound(
            f'old_string was not found in "{name}"; it must match the file exactly '
            "(whitespace and indentation included) — read the file and copy the text.\n"
            + explain_not_found(haystack, needle)
        )
    if count > 1 and not replace_all:
        raise FsAmbiguousEdit(
            f'old_string matches {count} places in "{name}" ({match_places(haystack, needle)}); '
            "include more surrounding lines to make it unique, or set replace_all to "
            "replace every occurrence"
        )
    newline = dominant_newline(text)
    replacement = new_string.replace("\r\n", "\n")
    if newline != "\n":
        replacement = replacement.replace("\n", newline)
    if not crlf_at:
        if count == 1:
            end = first + len(needle)
            return EditResult(text[:first] + replacement + text[end:], 1)
        return EditResult(text.replace(needle, replacement), count)
    # Normalized index n maps back to n + (CRLFs that collapsed before n).
    collapsed = [pos - i for i, pos in enumerate(crlf_at)]
    pieces: list[str] = []
    cursor = 0
    start = haystack.find(needle)
    while start != -1:
        end = start + len(needle)
        orig_start = start + bisect_left(collapsed, start)
        orig_end = end + bisect_left(collapsed, end)
        pieces.append(text[cursor:orig_start])
        pieces.append(replacement)
        cursor = orig_end
        start = haystack.find(needle, end)
    pieces.append(text[cursor:])
    return EditResult("".join(pieces), count)


def apply_edits(text: str, edits: Sequence[FsEditRequest], *, name: str = "file") -> EditResult:
    """Apply ``edits`` in order, each to the text the previous ones produced.

    All or nothing: the first edit that fails raises its error, prefixed with
    ``edit {i} of {n}: `` and followed by a line saying that none was
    applied; ``replacements`` is the total. Raises ``FS_EDIT_NOT_FOUND`` for an
    empty list.
    """
    total = len(edits)
    if not total:
        raise FsEditNotFound(f'no edits were given for "{name}"; pass at least one')
    replacements = 0
    for index, edit in enumerate(edits, start=1):
        try:
            result = apply_edit(
                text, edit.old_string, edit.new_string, replace_all=edit.replace_all, name=name
            )
        except FsError as exc:
            where = ""
            if index > 1:
                earlier = "edit 1" if index == 2 else f"edits 1-{index - 1}"
                where = f"Line numbers are those of the text after {earlier}. "
            raise FsError(
                f"edit {index} of {total}: {exc.message}\n{where}None of the edits was applied.",
                exc.code,
            ) from None
        text = result.text
        replacements += result.replacements
    return EditResult(text, replacements)


def _crlf_positions(text: str) -> list[int]:
    if "\r" not in text:  # memchr; a two-character find() is ~70x slower on CR-free text
        return []
    positions: list[int] = []
    find = text.find
    at = find("\r\n")
    while at != -1:
        positions.append(at)
        at = find("\r\n", at + 2)
    return positions
