"""Glob patterns and the grep line searcher (pure: no I/O).

Glob patterns are ``fnmatch``-style per path segment (``*``, ``?``,
``[abc]``), with ``**`` spanning any number of directories and ``{a,b}``
alternatives; matching is case-sensitive on every store, and ``*`` matches
names starting with a dot.

grep runs on RE2 (``google-re2``): matching time is linear in the text, so
no pattern can backtrack catastrophically, and a match never crosses a line
break. This is the only module that imports ``re2``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import translate
from functools import lru_cache
from itertools import pairwise

import re2  # type: ignore[import-untyped]

from fsseam._segments import match_segments
from fsseam.host import ToolArgumentsError

__all__ = [
    "MAX_ALTERNATIVES",
    "MAX_PATTERN_CHARS",
    "MAX_SEGMENTS",
    "GlobPattern",
    "LineSearcher",
    "check_glob",
    "expand_braces",
    "has_magic",
]

MAX_ALTERNATIVES = 64
"""``{a,b}`` alternatives one pattern may expand to."""
MAX_SEGMENTS = 128
"""Path segments one alternative of a glob pattern may have."""
MAX_PATTERN_CHARS = 4096
"""Characters a glob pattern may have (the longest local path)."""
REGEX_MAX_MEM = 8 << 20
"""Memory RE2 may use for one compiled pattern (its default)."""

_MAGIC = re.compile(r"[*?\[{]")


def has_magic(segment: str) -> bool:
    """True when a path segment holds glob syntax (``* ? [ {``)."""
    return _MAGIC.search(segment) is not None


def expand_braces(pattern: str, field: str = "pattern") -> list[str]:
    """``a/{b,c}/*.{py,pyi}`` as its alternatives (nested braces allowed).

    Raises ToolArgumentsError past :data:`MAX_ALTERNATIVES` alternatives or
    :data:`MAX_PATTERN_CHARS` characters.
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolArgumentsError(
            f"{field}: is {len(pattern)} characters long, over the limit of {MAX_PATTERN_CHARS}"
        )
    out: list[str] = []
    todo = [pattern]
    while todo:
        current = todo.pop()
        span = _first_group(current)
        if span is None:
            out.append(current)
        else:
            start, end, options = span
            todo.extend(
                current[:start] + option + current[end + 1 :] for option in reversed(options)
            )
        if len(out) + len(todo) > MAX_ALTERNATIVES:
            raise ToolArgumentsError(
                f"{field}: expands to more than {MAX_ALTERNATIVES} {{a,b}} alternatives"
            )
    return out


def _first_group(text: str) -> tuple[int, int, list[str]] | None:
    """The leftmost ``{...}`` holding a top-level comma: its span and options.

    One pass with a stack of open braces, so a pattern of many unclosed
    ``{`` costs linear time, not quadratic. An unclosed ``{`` and a group
    without a comma (``{x}``) are literal text.
    """
    stack: list[list[int]] = []  # per open brace: its position, then its top-level commas
    best: tuple[int, int, list[int]] | None = None
    for index, char in enumerate(text):
        if char == "{":
            stack.append([index])
        elif char == "," and stack:
            stack[-1].append(index)
        elif char == "}" and stack:
            cuts = stack.pop()
            if len(cuts) > 1 and (best is None or cuts[0] < best[0]):
                best = (cuts[0], index, cuts)
    if best is None:
        return None
    start, end, cuts = best
    bounds = [*cuts, end]
    return start, end, [text[a + 1 : b] for a, b in pairwise(bounds)]


@lru_cache(maxsize=1024)
def _segment_regex(segment: str) -> re.Pattern[str]:
    return re.compile(translate(segment))


def _segments(alternative: str, field: str) -> tuple[str, ...]:
    """The segments of one alternative, ``**`` runs collapsed, within the limits."""
    segments: list[str] = []
    for part in alternative.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            raise ToolArgumentsError(
                f'{field}: ".." may only come before the first wildcard '
                "(use the path parameter to search elsewhere)"
            )
        if part == "**" and segments and segments[-1] == "**":
            continue  # "**/**" matches what "**" matches
        segments.append(part)
    if len(segments) > MAX_SEGMENTS:
        raise ToolArgumentsError(
            f"{field}: has {len(segments)} path segments, over the limit of {MAX_SEGMENTS}"
        )
    return tuple(segments)


def check_glob(pattern: str, field: str = "pattern") -> list[str]:
    """The ``{a,b}`` alternatives of ``pattern``, each within the limits.

    For a pattern that is resolved as a path afterwards (``glob``'s literal
    head may hold ``..``): only the length, the alternatives and the number of
    segments (a run of ``**`` counting once) are checked here, before any
    path is looked at, so an absurd pattern gets ``INVALID_ARGUMENTS`` rather
    than a path error.
    """
    alternatives = expand_braces(pattern, field)
    for alternative in alternatives:
        parts = [part for part in alternative.split("/") if part not in ("", ".")]
        count = sum(1 for i, part in enumerate(parts) if part != "**" or parts[i - 1 : i] != ["**"])
        if count > MAX_SEGMENTS:
            raise ToolArgumentsError(
                f"{field}: has {count} path segments, over the limit of {MAX_SEGMENTS}"
            )
    return alternatives


@dataclass(frozen=True, slots=True)
class GlobPattern:
    """Several alternatives of ``/``-separated segments, matched against relative paths."""

    alternatives: tuple[tuple[str, ...], ...]
    """Each alternative's segments; ``**`` spans directories."""

    @classmethod
    def parse(cls, pattern: str, field: str = "pattern") -> GlobPattern:
        """Parse a relative pattern; ``..`` is refused (it would leave the directory)."""
        return cls.of(expand_braces(pattern, field), field)

    @classmethod
    def of(cls, alternatives: list[str], field: str = "pattern") -> GlobPattern:
        """A pattern from alternatives already expanded (no ``{a,b}`` left to expand).

        Raises ToolArgumentsError for ``..`` or more than :data:`MAX_SEGMENTS`
        segments in an alternative.
        """
        return cls(tuple(_segments(alternative, field) for alternative in alternatives))

    @property
    def max_depth(self) -> int | None:
        """How deep a match can lie (``None``: any depth, the pattern has ``**``)."""
        if any("**" in alternative for alternative in self.alternatives):
            return None
        return max((len(alternative) for alternative in self.alternatives), default=0) or None

    def matches(self, path: str) -> bool:
        """True when the relative path ``a/b/c`` matches one alternative."""
        parts = path.split("/")
        return any(_match(alternative, parts) for alternative in self.alternatives)

    def matches_name(self, path: str) -> bool:
        """Like :meth:`matches`; a one-segment pattern matches the last segment alone."""
        if all(len(alternative) == 1 for alternative in self.alternatives):
            return self.matches(path.rsplit("/", 1)[-1])
        return self.matches(path)


def _match(pattern: tuple[str, ...], parts: list[str]) -> bool:
    """Segment matching (:func:`~fsseam._segments.match_segments`), each segment a glob regex."""
    return match_segments(
        pattern, parts, lambda segment, part: _segment_regex(segment).match(part) is not None
    )


class LineSearcher:
    """Finds where a pattern matches in UTF-8 text, never across a line break.

    ``span(text, pos, endpos)`` searches ``text[pos:endpos]`` with the rest of
    ``text`` as context, so ``^``, ``$`` and ``\\b`` see the real neighbours
    of a window's edges.
    """

    def __init__(self, pattern: str, *, ignore_case: bool = False, literal: bool = False) -> None:
        options = re2.Options()
        options.case_sensitive = not ignore_case
        options.literal = literal
        options.never_nl = True  # a match never spans lines
        options.log_errors = False
        options.max_mem = REGEX_MAX_MEM
        source = pattern.encode("utf-8", "surrogatepass")
        try:
            self._regex = re2.compile(source, options)  # alone first: errors quote it as given
            if not literal:
                self._regex = re2.compile(b"(?m)" + source, options)  # ^ and $ at every line
        except re2.error as exc:
            why = exc.args[0] if exc.args else exc
            if isinstance(why, bytes):
                why = why.decode("utf-8", "replace")
            raise ToolArgumentsError(
                f"pattern: is not a valid regular expression ({why}); RE2 syntax, so no "
                "look-around or backreferences (set literal to search for plain text)"
            ) from None

    def span(
        self, text: bytes | bytearray | memoryview, pos: int, endpos: int
    ) -> tuple[int, int] | None:
        """The leftmost match starting in ``text[pos:endpos]`` and ending by ``endpos``."""
        found = self._regex.search(text, pos, endpos)
        if found is None:
            return None
        start, end = found.span()
        return int(start), int(end)
