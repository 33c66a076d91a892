"""Path rules every backend applies before touching the store (pure, no I/O).

- Refused syntax: empty paths, NUL bytes, a leading ``~``, backslashes, and
  components whose NFKC form differs dangerously (``．．`` is ``..``, ``／``
  is ``/``): a store or a later tool could normalise them into an escape.
- Deny patterns: glob patterns relative to the root (``**`` spans
  directories) naming files no tool may read or write, by default
  ``.git/**`` and ``**/.env``.
"""

from __future__ import annotations

import unicodedata
from fnmatch import fnmatchcase
from functools import lru_cache

__all__ = ["DEFAULT_DENY", "DenyRules", "syntax_problem"]

DEFAULT_DENY: tuple[str, ...] = (".git/**", "**/.env")


def syntax_problem(path: str) -> str | None:
    """Why ``path`` is refused as written, or ``None`` when its syntax is fine."""
    if not path:
        return "is empty"
    if "\x00" in path:
        return "contains a NUL byte"
    if path.startswith("~"):
        return "starts with ~ (home directories are not expanded)"
    if "\\" in path:
        return "contains a backslash (use / as the separator)"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "contains an unpaired surrogate code point (not valid Unicode)"
    if not path.isascii():
        for part in path.split("/"):
            folded = unicodedata.normalize("NFKC", part)
            if folded != part and (
                "/" in folded or "\\" in folded or folded in (".", "..") or "\x00" in folded
            ):
                return f"has a component {part!r} that Unicode normalisation turns into {folded!r}"
    return None


class DenyRules:
    """Glob patterns relative to the root that no tool may read or write."""

    def __init__(self, patterns: tuple[str, ...] | list[str] = DEFAULT_DENY) -> None:
        self.patterns = tuple(patterns)
        self._compiled = [tuple(p.casefold().strip("/").split("/")) for p in self.patterns]

    def match(self, relative: str) -> str | None:
        """The first pattern matching ``relative`` (``a/b/c``), or ``None``.

        Case-insensitive: on a case-insensitive file system ``.GIT/config`` is
        ``.git/config``, and refusing the other spelling costs nothing.
        """
        if not self._compiled or not relative:
            return None
        parts = tuple(part.casefold() for part in relative.split("/") if part)
        for pattern, segments in zip(self.patterns, self._compiled, strict=True):
            if _match(segments, parts):
                return pattern
        return None


@lru_cache(maxsize=4096)
def _match(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_match(rest, parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], head) and _match(rest, parts[1:])
