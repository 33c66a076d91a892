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
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import translate
from functools import lru_cache
from itertools import pairwise

import re2  # type: ignore[import-untyped]

from fsseam.host import ToolArgumentsError

__all__ = [
    "MAX_ALTERNATIVES",
    "GlobPattern",
    "LineSearcher",
    "expand_braces",
    "has_magic",
]

MAX_ALTERNATIVES = 64
"""``{a,b}`` alternatives one pattern may expand to."""
REGEX_MAX_MEM = 8 << 20
"""Memory RE2 may use for one compiled pattern (its default)."""

_MAGIC = re.compile(r"[*?\[{]")


def has_magic(segment: str) -> bool:
    """True when a path segment holds glob syntax (``* ? [ {``)."""
    return _MAGIC.search(segment) is not None


def expand_braces(pattern: str, field: str = "pattern") -> list[str]:
    """``a/{b,c}/*.{py,pyi}`` as its alternatives (nested braces allowed).

    Raises ToolArgumentsError past :data:`MAX_ALTERNATIVES`.
    """
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
    """The first ``{...}`` holding a top-level comma: its span and options."""
    for start, char in enumerate(text):
        if char != "{":
            continue
        depth, cuts = 0, [start]
        for index in range(start, len(text)):
            if text[index] == "{":
                depth += 1
            elif text[index] == "}":
                depth -= 1
                if depth == 0:
                    if len(cuts) == 1:
                        break  # "{x}": no alternatives, literal braces
                    cuts.append(index)
                    options = [text[a + 1 : b] for a, b in pairwise(cuts)]
                    return start, index, options
            elif text[index] == "," and depth == 1:
                cuts.append(index)
    return None


@lru_cache(maxsize=1024)
def _segment_regex(segment: str) -> re.Pattern[str]:
    return re.compile(translate(segment))


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
        """A pattern from alternatives already expanded (no ``{a,b}`` left to expand)."""
        parsed: list[tuple[str, ...]] = []
        for alternative in alternatives:
            segments = tuple(part for part in alternative.split("/") if part not in ("", "."))
            if ".." in segments:
                raise ToolArgumentsError(
                    f'{field}: ".." may only come before the first wildcard '
                    "(use the path parameter to search elsewhere)"
                )
            parsed.append(segments)
        return cls(tuple(parsed))

    @property
    def max_depth(self) -> int | None:
        """How deep a match can lie (``None``: any depth, the pattern has ``**``)."""
        if any("**" in alternative for alternative in self.alternatives):
            return None
        return max((len(alternative) for alternative in self.alternatives), default=0) or None

    def matches(self, path: str) -> bool:
        """True when the relative path ``a/b/c`` matches one alternative."""
        parts = tuple(path.split("/"))
        return any(_match(alternative, parts) for alternative in self.alternatives)

    def matches_name(self, path: str) -> bool:
        """Like :meth:`matches`; a one-segment pattern matches the last segment alone."""
        if all(len(alternative) == 1 for alternative in self.alternatives):
            return self.matches(path.rsplit("/", 1)[-1])
        return self.matches(path)


@lru_cache(maxsize=8192)
def _match(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_match(rest, parts[i:]) for i in range(len(parts) + 1))
    if not parts or _segment_regex(head).match(parts[0]) is None:
        return False
    return _match(rest, parts[1:])


class LineSearcher:
    """Finds the lines of UTF-8 text that match a pattern, block by block.

    ``search(block)`` takes whole lines (bytes ending with ``\\n``, except at
    the end of a file) and yields ``(line index in the block, line bytes)``.
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

    def search(self, block: bytes) -> Iterator[tuple[int, bytes]]:
        """Matching lines of ``block``: ``(0-based line index within it, the line)``."""
        search = self._regex.search
        line = 0
        counted = 0
        pos = 0
        size = len(block)
        while pos < size:
            found = search(block, pos)
            if found is None:
                return
            start = found.start()
            begin = block.rfind(b"\n", 0, start) + 1
            end = block.find(b"\n", start)
            if end == -1:
                end = size
            line += block.count(b"\n", counted, begin)
            counted = begin
            yield line, block[begin:end]
            pos = end + 1
