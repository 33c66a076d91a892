"""Why a literal edit did not apply: the details of ``FS_EDIT_NOT_FOUND`` and ``FS_AMBIGUOUS_EDIT``.

Pure functions, no I/O. They only ever *explain*; nothing here decides what
to replace, so a near miss is never applied.

- :func:`match_places` names the lines of every match of an ambiguous edit.
- :func:`explain_not_found` finds the closest region of the file to a
  missing ``old_string`` and names what differs: read's ``N:`` line-number
  prefixes, indentation, tabs vs spaces, trailing whitespace, line endings,
  quote style, spacing inside lines.

Time stays linear in the size of the file: the search normalises the whole
text a few times with C-level string operations, votes for candidate regions
with one dictionary lookup per line, and compares lines only in the chosen
region; the character-level similarity fallback compares only the lines
holding the needle's longest words (at most :data:`FUZZY_WORD_HITS` each),
or else the first :data:`FUZZY_MAX_LINES` lines, at most
:data:`FUZZY_LINE_CHARS` characters each, and runs the full (quadratic)
similarity on at most :data:`FUZZY_MAX_RATIOS` of them after at most
:data:`FUZZY_MAX_QUICK` cheap bounds, so a file whose every line looks
alike (a two-letter alphabet) costs what any other does.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import accumulate

__all__ = [
    "FUZZY_MAX_LINES",
    "FUZZY_MAX_QUICK",
    "FUZZY_MAX_RATIOS",
    "MAX_EXCERPT_LINES",
    "MAX_LISTED_MATCHES",
    "NearMiss",
    "explain_not_found",
    "find_near_miss",
    "match_places",
]

MAX_LISTED_MATCHES = 20
"""Line numbers an ambiguous-edit message lists before summarising the rest."""
MAX_EXCERPT_LINES = 12
"""File lines a near-miss excerpt shows."""
EXCERPT_LINE_CHARS = 200
"""Characters of one excerpt line shown before it is cut."""
FUZZY_MAX_LINES = 5_000
"""File lines the character-similarity fallback may look at."""
FUZZY_LINE_CHARS = 200
"""Characters of a line the similarity fallback compares."""
FUZZY_MIN_RATIO = 0.6
"""Similarity below which the fallback reports nothing."""
FUZZY_WORD_HITS = 100
"""Occurrences of each probe word the similarity fallback looks at."""
FUZZY_MAX_RATIOS = 25
"""Full (quadratic) similarity computations the fallback makes at most."""
FUZZY_MAX_QUICK = 1000
"""Candidate lines whose similarity bound (linear, pure Python) the fallback computes at most."""

_SPACE = " \t\f\v\u00a0"
_QUOTE_CHARS = "'\"`‘’‚‛“”„‟′″«»"
_QUOTES = str.maketrans(dict.fromkeys(_QUOTE_CHARS, "'"))
_QUOTES_NO_CR = str.maketrans({**dict.fromkeys(_QUOTE_CHARS, "'"), "\r": None})
_QUOTES_NO_SPACE = str.maketrans(
    {**dict.fromkeys(_QUOTE_CHARS, "'"), **dict.fromkeys(_SPACE + "\r", None)}
)
_ANY_SPACE = re.compile(f"[{_SPACE}]+")
_WORD = re.compile(r"\w{4,}")
_NUMBER_PREFIX = re.compile(r"^\s*(\d+):(?: |$)")


def match_places(haystack: str, needle: str, limit: int = MAX_LISTED_MATCHES) -> str:
    """``lines 3, 17 and 42``: where ``needle`` starts in ``haystack`` (distinct lines).

    Past ``limit`` lines the rest is summarised (``... and 15 more``).
    """
    lines: list[int] = []
    more = 0
    line = 1
    scanned = 0
    at = haystack.find(needle)
    while at != -1:
        line += haystack.count("\n", scanned, at)
        scanned = at
        if not lines or lines[-1] != line:
            if len(lines) < limit:
                lines.append(line)
            else:
                more += 1
        at = haystack.find(needle, at + len(needle))
    shown = [str(n) for n in lines]
    if more:
        return f"lines {', '.join(shown)} and {more} more"
    if len(shown) == 1:
        return f"line {shown[0]}"
    return f"lines {', '.join(shown[:-1])} and {shown[-1]}"


@dataclass(frozen=True, slots=True)
class NearMiss:
    """The region of the file closest to a missing ``old_string``."""

    first: int
    """Number of its first line (1-based)."""
    lines: list[str]
    """The file's lines there, as stored (LF-normalized, no line break)."""
    differences: list[str]
    """What differs, one phrase each (``indentation (line 3: ...)``)."""


def explain_not_found(haystack: str, needle: str) -> str:
    """The lines appended to an ``FS_EDIT_NOT_FOUND`` message: the near miss, or that none exists.

    ``haystack`` and ``needle`` are LF-normalized (CRLF already collapsed).
    """
    miss = find_near_miss(haystack, needle)
    if miss is None:
        return "No similar text was found either; check that this is the right file."
    last = miss.first + len(miss.lines) - 1
    where = f"line {miss.first}" if last == miss.first else f"lines {miss.first}-{last}"
    shown = miss.lines[:MAX_EXCERPT_LINES]
    excerpt = [f"{miss.first + i}: {_cut(line)}" for i, line in enumerate(shown)]
    if len(miss.lines) > len(shown):
        excerpt.append(f"... ({len(miss.lines) - len(shown)} more lines)")
    differs = "; ".join(miss.differences)
    return f"The closest text is at {where}, which differs in {differs}:\n" + "\n".join(excerpt)


def find_near_miss(haystack: str, needle: str) -> NearMiss | None:
    """The closest region of ``haystack`` to ``needle`` and what differs, or ``None``."""
    if not needle.strip():
        return None
    file_lines = haystack.split("\n")
    if haystack.endswith("\n"):
        file_lines.pop()  # a final newline does not start another line
    needle_lines = needle.split("\n")
    ends_with_newline = needle.endswith("\n")
    if ends_with_newline:
        needle_lines.pop()

    prefixed = _without_number_prefixes(needle_lines)
    if prefixed is not None:
        stripped = "\n".join(prefixed) + ("\n" if ends_with_newline else "")
        at = haystack.find(stripped)
        if at != -1:
            first = haystack.count("\n", 0, at)
            return NearMiss(
                first + 1,
                file_lines[first : first + len(prefixed)],
                [
                    'line-number prefixes (old_string starts its lines with read\'s "N: ", '
                    "which is not part of the file)"
                ],
            )

    if ends_with_newline and not haystack.endswith("\n"):
        body = needle[:-1]
        if body and haystack.endswith(body):
            first = haystack.count("\n", 0, len(haystack) - len(body))
            return NearMiss(
                first + 1,
                file_lines[first:],
                [
                    f"line endings (old_string ends with a line break, but line "
                    f"{len(file_lines)}, the last of the file, has none)"
                ],
            )

    if "\r" in haystack:
        at = haystack.replace("\r", "\n").find(needle)  # same length: offsets carry over
        if at != -1:
            first = haystack.count("\n", 0, at)
            end = at + len(needle) - (1 if ends_with_newline else 0)
            return NearMiss(
                first + 1,
                file_lines[first : first + 1 + haystack.count("\n", at, end)],
                [
                    "line endings (the file separates these lines with bare carriage "
                    "returns (\\r), old_string with line breaks)"
                ],
            )

    normalised = _Normalised(haystack)
    for normalise in (_loose, _looser):
        start = _find_normalised(normalised, needle, normalise)
        if start is not None:
            window = file_lines[start : start + len(needle_lines)]
            return NearMiss(
                start + 1, window, _differences(window, needle_lines, start, ends_with_newline)
            )

    start = _best_anchored_window(normalised.get(_looser).split("\n"), needle_lines)
    if start is None:
        start = _most_similar_line(haystack, file_lines, needle_lines)
        if start is None:
            return None
    window = file_lines[start : start + len(needle_lines)]
    return NearMiss(start + 1, window, _differences(window, needle_lines, start, ends_with_newline))


# -- normalised search -----------------------------------------------------------


def _loose(text: str) -> str:
    """No CRs, one kind of quote, no whitespace at either end of a line; line count kept."""
    return "\n".join(line.strip(_SPACE) for line in text.translate(_QUOTES_NO_CR).split("\n"))


def _looser(text: str) -> str:
    """:func:`_loose` without any whitespace inside lines either."""
    return text.translate(_QUOTES_NO_SPACE)


class _Normalised:
    """The haystack normalised each way, computed once, on first use."""

    def __init__(self, haystack: str) -> None:
        self._haystack = haystack
        self._cache: dict[Callable[[str], str], str] = {}

    def get(self, normalise: Callable[[str], str]) -> str:
        if normalise not in self._cache:
            self._cache[normalise] = normalise(self._haystack)
        return self._cache[normalise]


def _find_normalised(
    haystack: _Normalised, needle: str, normalise: Callable[[str], str]
) -> int | None:
    """0-based line where the normalised needle starts in the normalised haystack."""
    loose_needle = normalise(needle)
    core = loose_needle.strip("\n")
    if not core:
        return None
    loose_haystack = haystack.get(normalise)
    at = loose_haystack.find(core)
    if at == -1:
        return None
    # Normalising never adds or removes a "\n", so line numbers carry over;
    # line breaks stripped from the needle's front move its start up.
    leading = len(loose_needle) - len(loose_needle.lstrip("\n"))
    return max(0, loose_haystack.count("\n", 0, at) - leading)


def _without_number_prefixes(lines: list[str]) -> list[str] | None:
    """The lines without read's ``N: `` prefixes, if every line has one."""
    if not lines:
        return None
    out: list[str] = []
    for line in lines:
        match = _NUMBER_PREFIX.match(line)
        if match is None:
            return None
        out.append(line[match.end() :])
    return out


# -- candidate regions ------------------------------------------------------------


def _best_anchored_window(loose_lines: list[str], needle_lines: list[str]) -> int | None:
    """Start of the window where most needle lines match file lines loosely, if any.

    ``loose_lines`` are the file's lines through :func:`_looser`.
    """
    wanted: dict[str, list[int]] = {}
    for index, line in enumerate(needle_lines):
        key = _looser(line)
        if len(key) >= 3:  # "}" or "" would anchor everywhere and say nothing
            wanted.setdefault(key, []).append(index)
    if not wanted:
        return None
    votes: Counter[int] = Counter()
    for number, line in enumerate(loose_lines):
        indexes = wanted.get(line)
        if indexes:
            for index in indexes:
                if number >= index:
                    votes[number - index] += 1
    if not votes:
        return None
    best = max(votes.values())
    if best * 3 < len(wanted):
        return None  # a stray common line, not the region the edit meant
    return min(start for start, count in votes.items() if count == best)


def _most_similar_line(haystack: str, file_lines: list[str], needle_lines: list[str]) -> int | None:
    """Start of the window whose line looks most like the needle's longest line.

    Candidates are the lines holding one of the probe's longest words (found
    with ``str.find`` over the whole text, so a match deep in a big file is
    seen), else the first :data:`FUZZY_MAX_LINES` lines.
    """
    probe_index = max(range(len(needle_lines)), key=lambda i: len(needle_lines[i].strip()))
    probe = needle_lines[probe_index].strip()[:FUZZY_LINE_CHARS]
    if len(probe) < 3:
        return None
    candidates: Sequence[int] = _lines_with_words(haystack, file_lines, probe)
    if not candidates:
        candidates = range(min(len(file_lines), FUZZY_MAX_LINES))
    matcher = SequenceMatcher(autojunk=False)
    matcher.set_seq2(probe)  # seq2 is the side SequenceMatcher indexes once
    best, best_ratio = None, FUZZY_MIN_RATIO
    budget, quick = FUZZY_MAX_RATIOS, FUZZY_MAX_QUICK
    for number in candidates:
        candidate = file_lines[number].strip()[:FUZZY_LINE_CHARS]
        if not candidate:
            continue
        matcher.set_seq1(candidate)
        if matcher.real_quick_ratio() <= best_ratio:
            continue
        if not (budget and quick):
            break  # a hint, not a search: the best so far will do
        quick -= 1
        if matcher.quick_ratio() <= best_ratio:
            continue
        budget -= 1
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best, best_ratio = number, ratio
    if best is None:
        return None
    return max(0, best - probe_index)


def _lines_with_words(haystack: str, file_lines: list[str], probe: str) -> list[int]:
    """Lines (0-based, sorted) holding one of the probe's three longest words."""
    words = sorted(set(_WORD.findall(probe)), key=lambda word: (-len(word), word))[:3]
    if not words:
        return []
    starts = list(accumulate((len(line) + 1 for line in file_lines), initial=0))
    found: set[int] = set()
    for word in words:
        at = haystack.find(word)
        hits = 0
        while at != -1 and hits < FUZZY_WORD_HITS:
            found.add(bisect_right(starts, at) - 1)
            hits += 1
            at = haystack.find(word, at + len(word))
    return sorted(number for number in found if number < len(file_lines))


# -- naming the differences ------------------------------------------------------------


def _differences(
    window: list[str], needle_lines: list[str], start: int, ends_with_newline: bool
) -> list[str]:
    """One phrase per kind of difference, each naming the first line where it occurs."""
    found: dict[str, str] = {}
    last = len(needle_lines) - 1
    for index, wanted in enumerate(needle_lines):
        number = start + index + 1
        if index >= len(window):
            found.setdefault(
                "length",
                f"length (old_string has {len(needle_lines)} lines, but the file ends "
                f"at line {start + len(window)})",
            )
            break
        have = window[index]
        if have == wanted:
            continue
        for kind, detail in _line_differences(
            have, wanted, index == 0, index == last and not ends_with_newline
        ):
            found.setdefault(kind, f"{kind} (line {number}: {detail})")
    if not found:
        return ["whitespace (the lines match once spaces are ignored)"]
    return list(found.values())


def _line_differences(have: str, wanted: str, first: bool, last: bool) -> list[tuple[str, str]]:
    """``(kind, detail)`` pairs for one file line against one old_string line.

    ``first``/``last``: the line opens or closes old_string, which may start
    or end mid-line there, so missing edge whitespace in old_string is no
    difference and only part of the file's line has to match.
    """
    out: list[tuple[str, str]] = []
    if ("\r" in have) != ("\r" in wanted):
        where, other = ("the file", "old_string") if "\r" in have else ("old_string", "the file")
        out.append(("line endings", f"a carriage return (\\r) in {where}, none in {other}"))
        have, wanted = have.replace("\r", ""), wanted.replace("\r", "")
    have_lead, wanted_lead = _leading(have), _leading(wanted)
    have_trail, wanted_trail = _trailing(have), _trailing(wanted)
    open_start = first and not wanted_lead
    open_end = last and not wanted_trail
    if have_lead != wanted_lead and not open_start:
        kind = "indentation"
        if have_lead and wanted_lead and _indent_kinds(have_lead) != _indent_kinds(wanted_lead):
            kind = "tabs vs spaces"
        out.append(
            (kind, f"{_describe(have_lead)} in the file, {_describe(wanted_lead)} in old_string")
        )
    if have_trail != wanted_trail and not open_end:
        out.append(
            (
                "trailing whitespace",
                f"{_describe(have_trail, 'trailing ')} in the file, "
                f"{_describe(wanted_trail, 'trailing ')} in old_string",
            )
        )
    have_core, wanted_core = have.strip(_SPACE), wanted.strip(_SPACE)

    def same(a: str, b: str) -> bool:
        if open_start and open_end:
            return b in a
        if open_start:
            return a.endswith(b)
        if open_end:
            return a.startswith(b)
        return a == b

    if same(have_core, wanted_core):
        return out
    have_tight, wanted_tight = _ANY_SPACE.sub("", have_core), _ANY_SPACE.sub("", wanted_core)
    if not same(have_tight.translate(_QUOTES), wanted_tight.translate(_QUOTES)):
        out.append(
            ("other text", f"{_quote(have_core)} in the file, {_quote(wanted_core)} in old_string")
        )
        return out
    if not same(have_tight, wanted_tight):
        theirs = "".join(sorted({c for c in have_core if c in _QUOTE_CHARS} - set(wanted_core)))
        ours = "".join(sorted({c for c in wanted_core if c in _QUOTE_CHARS} - set(have_core)))
        detail = (
            f"{theirs} in the file, {ours} in old_string"
            if theirs and ours
            else "the same quote characters in other places"
        )
        out.append(("quote style", detail))
    if not same(have_core.translate(_QUOTES), wanted_core.translate(_QUOTES)):
        out.append(("spacing inside lines", "spaces between words or symbols differ"))
    return out


def _leading(line: str) -> str:
    return line[: len(line) - len(line.lstrip(_SPACE))]


def _trailing(line: str) -> str:
    return line[len(line.rstrip(_SPACE)) :]


def _indent_kinds(space: str) -> frozenset[str]:
    return frozenset("tab" if c == "\t" else "space" for c in space)


def _describe(space: str, adjective: str = "") -> str:
    """``4 spaces``, ``1 tab``, ``2 tabs and 1 space``, ``no indentation``."""
    if not space:
        return "no trailing whitespace" if adjective else "no indentation"
    tabs = space.count("\t")
    spaces = len(space) - tabs
    parts = []
    if tabs:
        parts.append(f"{tabs} {adjective}tab{'s' if tabs != 1 else ''}")
        adjective = ""
    if spaces:
        parts.append(f"{spaces} {adjective}space{'s' if spaces != 1 else ''}")
    return " and ".join(parts)


def _quote(text: str, limit: int = 60) -> str:
    shown = text if len(text) <= limit else text[:limit] + "..."
    return f'"{shown}"'


def _cut(line: str) -> str:
    line = line.removesuffix("\r")
    if len(line) <= EXCERPT_LINE_CHARS:
        return line
    return line[:EXCERPT_LINE_CHARS] + "..."
