"""JSON-RPC input a server must still answer: nesting, ids of unparsable lines, surrogates.

Pure functions, no SDK: :mod:`fsseam.mcp` uses them so that every request
gets an answer — a line too deep or malformed to parse still has its ``id``
found (in linear time, without recursion) so the error can name it, and a
string holding an unpaired surrogate (valid JSON, not valid Unicode text) is
refused with the place where it occurs instead of crashing the writer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Final

__all__ = [
    "MAX_DEPTH",
    "clean_text",
    "depth_exceeds",
    "find_request_id",
    "first_surrogate",
]

MAX_DEPTH: Final = 64
"""Deepest nesting of arrays and objects accepted in one message (MCP needs under 10)."""

_STRUCTURE = re.compile(rb'["\\{}\[\]:,]')
_SURROGATE = re.compile("[\ud800-\udfff]")


def find_request_id(line: bytes) -> int | str | None:
    """The top-level ``"id"`` of a JSON-RPC line that may not parse as a whole.

    Scans once, left to right, tracking strings and nesting; stops at the
    top-level ``id`` member. ``None`` when there is none, or it is not a
    number or a string (JSON-RPC's only id types).
    """
    depth = 0
    in_string = False
    skip_at = -1  # the character after a backslash is escaped
    string_start = -1
    key: tuple[int, int] | None = None  # the last string closed outside any other token
    for match in _STRUCTURE.finditer(line):
        char, pos = match.group(), match.start()
        if in_string:
            if pos == skip_at:
                continue
            if char == b"\\":
                skip_at = pos + 1
            elif char == b'"':
                in_string = False
                key = (string_start, pos + 1)
            continue
        if char == b'"':
            in_string, string_start = True, pos
            continue
        if char == b":" and depth == 1 and key is not None:
            if line[key[0] : key[1]] == b'"id"':
                return _scalar_id(line, pos + 1)
        elif char in b"{[":
            depth += 1
        elif char in b"}]":
            depth -= 1
        key = None
    return None


def _scalar_id(line: bytes, start: int) -> int | str | None:
    rest = line[start:].lstrip()
    if rest.startswith(b'"'):
        end = re.match(rb'"(?:[^"\\]|\\.)*"', rest)
        raw = end.group() if end else b""
    else:
        number = re.match(rb"-?\d+", rest)
        raw = number.group() if number else b""
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    return value


def _walk(value: Any) -> Iterator[tuple[int, str, Any]]:
    """Every value with its depth and a path such as ``arguments.edits[0]``, iteratively."""
    stack: list[tuple[int, str, Any]] = [(0, "", value)]
    while stack:
        depth, path, item = stack.pop()
        yield depth, path, item
        if isinstance(item, dict):
            for key, child in item.items():
                stack.append((depth + 1, f"{path}.{key}" if path else str(key), child))
                if isinstance(key, str):
                    stack.append((depth + 1, f"{path} (a key)", key))
        elif isinstance(item, list):
            for index, child in enumerate(item):
                stack.append((depth + 1, f"{path}[{index}]", child))


def depth_exceeds(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects nest deeper than ``limit`` in ``value``."""
    return any(depth > limit for depth, _, _ in _walk(value))


def first_surrogate(value: Any) -> str | None:
    """Where the first string holding an unpaired surrogate is (a path), else ``None``."""
    for _, path, item in _walk(value):
        if isinstance(item, str) and not item.isascii() and _SURROGATE.search(item):
            return path or "(the value)"
    return None


def clean_text(text: str) -> str:
    """``text`` with unpaired surrogates replaced by U+FFFD, so it can be sent as UTF-8."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text
