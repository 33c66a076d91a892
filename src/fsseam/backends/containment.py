"""Path rules every backend applies before touching the store (pure, no I/O).

- Refused syntax: empty paths, NUL bytes, a leading ``~``, backslashes, and
  components whose NFKC form differs dangerously (``．．`` is ``..``, ``／``
  is ``/``): a store or a later tool could normalise them into an escape.
- Length: a path longer than the store allows (4096 bytes for a local path,
  1024 for an object-store key) or with a component over 255 bytes is
  refused up front, naming the limit, before any other work on it.
- Deny patterns: glob patterns relative to the root (``**`` spans
  directories) naming files no tool may read or write, by default
  ``.git/**`` and ``**/.env``. Matching is linear in the path: a set of
  pattern positions advanced one component at a time, never a recursion.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from fnmatch import fnmatchcase

from fsseam._segments import match_segments

__all__ = [
    "DEFAULT_DENY",
    "KEY_LIMITS",
    "LOCAL_LIMITS",
    "DenyRules",
    "PathLimits",
    "contained",
    "relative_to",
    "syntax_problem",
]

DEFAULT_DENY: tuple[str, ...] = (".git/**", "**/.env")


@dataclass(frozen=True, slots=True)
class PathLimits:
    """The longest path and path component a store accepts, in UTF-8 bytes."""

    path_bytes: int
    """Longest whole path (local: the absolute path; object stores: the key)."""
    component_bytes: int = 255
    """Longest single name between two ``/``."""
    what: str = "path"
    """What ``path_bytes`` measures, for messages ("path", "object key")."""

    def problem(self, path: str, *, measured: str | None = None) -> str | None:
        """Why ``path`` is too long (``measured``: the spelling the store will see), or ``None``."""
        whole = path if measured is None else measured
        # Cheap bound first: a string of n code points is at most 4n UTF-8 bytes.
        if len(whole) * 4 > self.path_bytes or len(path) * 4 > self.component_bytes:
            size = len(whole.encode("utf-8", "surrogatepass"))
            if size > self.path_bytes:
                return (
                    f"is {size} bytes long as a {self.what}; this store allows at most "
                    f"{self.path_bytes} bytes"
                )
            for part in path.split("/"):
                length = len(part.encode("utf-8", "surrogatepass"))
                if length > self.component_bytes:
                    return (
                        f"has a name of {length} bytes ({part[:24]!r}...); each name between "
                        f"two / may have at most {self.component_bytes} bytes"
                    )
        return None


LOCAL_LIMITS = PathLimits(4095, 255, "local path")
"""Linux: ``PATH_MAX`` is 4096 bytes with the terminating NUL, ``NAME_MAX`` 255."""
KEY_LIMITS = PathLimits(1024, 255, "object key")
"""S3's key limit (GCS and Azure allow more; one limit keeps every store alike)."""


def contained(candidate: str, root: str) -> bool:
    """True when ``candidate`` is ``root`` or below it (never a sibling sharing its prefix)."""
    if candidate == root:
        return True
    prefix = root if root.endswith("/") else root + "/"
    return candidate.startswith(prefix)


def relative_to(root: str, path: str) -> str:
    """``path`` relative to ``root`` (which contains it), ``""`` for the root itself."""
    return path[len(root.rstrip("/")) :].lstrip("/")


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
        self._compiled = [
            tuple(part for part in _folded(p).strip("/").split("/") if part) for p in self.patterns
        ]

    def match(self, relative: str) -> str | None:
        """The first pattern matching ``relative`` (``a/b/c``), or ``None``.

        Case- and normalization-insensitive: on a case-insensitive file system
        ``.GIT/config`` is ``.git/config``, on macOS an NFD name is its NFC
        spelling, and refusing the other spellings costs nothing. Time is
        linear in the number of components (times the pattern length).
        """
        if not self._compiled or not relative:
            return None
        parts = [part for part in _folded(relative).split("/") if part]
        for pattern, segments in zip(self.patterns, self._compiled, strict=True):
            if _match(segments, parts):
                return pattern
        return None


def _folded(text: str) -> str:
    """``text`` case-folded, and NFC-normalized when it is not ASCII."""
    folded = text.casefold()
    return folded if folded.isascii() else unicodedata.normalize("NFC", folded)


def _match(pattern: tuple[str, ...], parts: list[str]) -> bool:
    """Glob match by components: ``**`` spans zero or more of them, other segments fnmatch one."""
    return match_segments(pattern, parts, lambda segment, part: fnmatchcase(part, segment))
