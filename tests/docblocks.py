"""Reading the code blocks and commands out of the Markdown docs (for the doc tests)."""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_OPERATORS = {"&&", "||", "|", ";", "&", ">", ">>", "<", "2>&1", "(", ")"}


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced code block of a Markdown file."""

    path: Path
    """The Markdown file."""
    line: int
    """The line of its opening fence (1-based)."""
    language: str
    """The fence's info string (``python``, ``sh``, ``json``, or empty)."""
    text: str
    """The block's content."""

    @property
    def id(self) -> str:
        """``README.md:42``, for test ids and messages."""
        return f"{self.path.relative_to(REPO)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """Every fenced code block of ``path``, in order."""
    text = path.read_text(encoding="utf-8")
    return [
        Block(path, text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2))
        for m in _FENCE.finditer(text)
    ]


def prose(path: Path) -> str:
    """``path`` without its fenced blocks (inline code spans stay)."""
    return _FENCE.sub("", path.read_text(encoding="utf-8"))


def inline_code(path: Path) -> list[str]:
    """The inline code spans of ``path``'s prose."""
    return re.findall(r"`([^`\n]+)`", prose(path))


def shell_words(line: str) -> list[str]:
    """A shell line's words, operators apart and comments dropped (``[]`` if unparsable)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:
        return []


def shell_lines(text: str) -> Iterator[str]:
    """Logical lines of a shell block (backslash continuations joined)."""
    pending = ""
    for raw in text.splitlines():
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        yield pending + raw
        pending = ""
    if pending:
        yield pending


_PREFIXES = frozenset({"sudo", "exec", "time", "nohup", "env", "uvx"})


def _in_command_position(words: list[str], index: int) -> bool:
    """True when ``words[index]`` is the program a shell would run, not an argument.

    ``claude mcp add --transport http fsseam URL`` names a server "fsseam";
    ``FOO=1 fsseam read``, ``a && fsseam ls`` and ``uvx --from 'fsseam[mcp]'
    fsseam serve`` run it.
    """
    j = index - 1
    while j >= 0:
        token = words[j]
        if token in _OPERATORS:
            return True
        if token in _PREFIXES or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", token):
            j -= 1
        elif j >= 1 and words[j - 1] == "--from":
            j -= 2
        else:
            return False
    return True


def fsseam_invocations(words: list[str]) -> Iterator[list[str]]:
    """The argument lists of every ``fsseam ...`` (or ``python -m fsseam ...``) in ``words``."""
    for index, word in enumerate(words):
        after: list[str] | None = None
        if os.path.basename(word) == "fsseam" and _in_command_position(words, index):
            after = words[index + 1 :]
        elif word == "-m" and index + 1 < len(words) and words[index + 1] == "fsseam":
            after = words[index + 2 :]
        if after is None:
            continue
        args: list[str] = []
        for token in after:
            if token in _OPERATORS or token.startswith(">"):
                break
            args.append(token)
        yield args


def extras() -> set[str]:
    """The optional-dependency extras ``pyproject.toml`` declares."""
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return set(data["project"]["optional-dependencies"])
