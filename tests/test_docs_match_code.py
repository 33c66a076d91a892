"""The docs (README.md, docs/*.md) name only CLI flags, tools and error texts the code has.

- **Flags.** Every option in an ``fsseam ...`` command (code blocks, ``$``
  transcripts, synopses, inline code) is an option of that subcommand, and a
  bare flag in inline code (`` `--core-tools` ``) is an option of some
  subcommand (or of a foreign tool listed in :data:`FOREIGN_FLAGS`).
  Conversely, docs/cli.md's section of each command names every option the
  command has.
- **Tools.** A tool named in ``execute("name", ...)`` is registered by
  ``FileTools(multi_edit=True, manage=True)`` + ``DiscoveryTools()``, and a list of three or
  more tool names ("read, write, edit and grep") names only real tools.
- **Error texts.** Quoting an error means writing ``CODE: text`` (paraphrase
  mentions the code without a colon); the code must be one fsseam has, and
  the text must be what the code says: each run of words between the parts
  that vary (quoted paths and values, ``…``, absolute paths, URLs, numbers,
  lists of names, parenthesised asides), split where fsseam joins a message to its remedy (`` — ``)
  or a field to its problem (``: ``), occurs in one string literal under
  ``src/fsseam``, where an f-string field may stand for some of its words. The same
  holds for the quoted messages of docs/tools.md's error-code table.
"""

from __future__ import annotations

import argparse
import ast
import re
from functools import cache
from pathlib import Path

import pytest

from fsseam import Context, DiscoveryTools, FileTools, FsErrorCode, open_fs
from fsseam.cli import build_parser
from tests.docblocks import (
    DOCS,
    REPO,
    blocks,
    fsseam_invocations,
    inline_code,
    prose,
    shell_lines,
    shell_words,
)

FOREIGN_FLAGS = {
    "--scope": "claude mcp add",
    "--from": "uvx",
    "--retry": "curl",
    "--retry-connrefused": "curl",
    "--retry-delay": "curl",
    "--transport": "claude mcp add",
}
"""Flags of other programs the docs show, and the program."""

REGISTRY_CODES = {"INVALID_ARGUMENTS", "UNKNOWN_TOOL"}
_FLAG = re.compile(r"(?<![\w-])(--[a-z][\w-]*|-[a-zA-Z])(?![\w-])")
_CODE_TEXT = re.compile(r"\b((?:FS|INVALID|UNKNOWN)_[A-Z_]+): (.+)")


def _doc_ids(paths: list[Path]) -> list[str]:
    return [str(path.relative_to(REPO)) for path in paths]


# -- flags ---------------------------------------------------------------------------


@cache
def _options() -> dict[str | None, frozenset[str]]:
    """Option strings per subcommand (``None``: the top-level parser)."""
    parser = build_parser()
    found: dict[str | None, frozenset[str]] = {None: frozenset(parser._option_string_actions)}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[name] = frozenset(sub._option_string_actions)
    return found


def _commands_in(path: Path) -> list[list[str]]:
    """The argument lists of every fsseam command the page shows."""
    found: list[list[str]] = []
    texts = [b.text for b in blocks(path)]
    texts += [span for span in inline_code(path) if "fsseam" in span]
    for text in texts:
        for line in shell_lines(text):
            if _CODE_TEXT.search(line):
                continue  # an error's text, which may name a command to run next
            # Synopses bracket their options: [--read-only] [-o KEY=VALUE ...].
            words = shell_words(re.sub(r"[\[\]]", " ", line.removeprefix("$ ")))
            found.extend(fsseam_invocations(words))
    return found


@pytest.mark.parametrize("path", DOCS, ids=_doc_ids(DOCS))
def test_documented_fsseam_flags_exist(path: Path) -> None:
    options = _options()
    everything = frozenset().union(*options.values())
    for args in _commands_in(path):
        command = next((a for a in args if a in options), None)
        valid = options[command] | options[None] if command else everything
        for flag in _FLAG.findall(" ".join(a for a in args if a.startswith("-"))):
            assert flag in valid, f"{path.name}: fsseam {command or ''} has no {flag}: {args}"


@pytest.mark.parametrize("path", DOCS, ids=_doc_ids(DOCS))
def test_flags_in_inline_code_exist(path: Path) -> None:
    everything = frozenset().union(*_options().values())
    for span in inline_code(path):
        match = re.fullmatch(r"(--[a-z][\w-]*)(?: [A-Z]+| \w+)?", span)
        if match and "fsseam" not in span:
            flag = match.group(1)
            assert flag in everything or flag in FOREIGN_FLAGS, f"{path.name}: `{span}`"


def test_cli_md_documents_every_option_of_every_command() -> None:
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    sections = dict(re.findall(r"^## (\w+)\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL))
    for command, options in _options().items():
        if command is None:
            continue
        assert command in sections, f"docs/cli.md has no section for {command}"
        for option in sorted(o for o in options if o.startswith("--") and o != "--help"):
            assert option in sections[command], f"docs/cli.md ## {command} omits {option}"
        assert "-o" not in options or "-o KEY=VALUE" in sections[command], command


def test_the_flag_check_catches_a_flag_that_does_not_exist(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```sh\nfsseam serve --no-such-flag .\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="no --no-such-flag"):
        test_documented_fsseam_flags_exist(page)


# -- tools ----------------------------------------------------------------------------


@cache
def _tools() -> frozenset[str]:
    ctx = Context(open_fs(str(REPO), read_only=True))
    ctx.plugin(FileTools(multi_edit=True, manage=True)).plugin(DiscoveryTools())
    return frozenset(ctx.tools.names())


def _list_patterns() -> list[re.Pattern[str]]:
    # A list is all in backticks or all plain, and ends "…, X and Y" or is "X / Y / Z".
    patterns = []
    for item in (r"`[a-z_]+`", r"(?<![\w`])[a-z_]+(?![\w`])"):
        patterns.append(re.compile(rf"{item}(?:, {item})*,? (?:and|or) {item}"))
        patterns.append(re.compile(rf"{item}(?: / {item}){{2,}}"))
    return patterns


_LISTS = _list_patterns()


def _tool_lists(text: str) -> list[list[str]]:
    lists = []
    for pattern in _LISTS:
        for match in pattern.finditer(text):
            words = re.sub(r",? (?:and|or) |, | / ", " ", match.group(0)).split()
            items = [word.strip("`") for word in words]
            if len(items) >= 3 and len([i for i in items if i in _tools()]) >= 3:
                lists.append(items)
    return lists


@pytest.mark.parametrize("path", DOCS, ids=_doc_ids(DOCS))
def test_documented_tool_names_exist(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for name in re.findall(r"execute(?:_sync)?\(\s*\"(\w+)\"", text):
        assert name in _tools(), f"{path.name}: no tool {name!r}"
    for items in _tool_lists(text):
        unknown = [item for item in items if item not in _tools()]
        assert not unknown, f"{path.name}: {', '.join(items)} names no tool {unknown}"


def test_the_tool_check_catches_a_renamed_tool() -> None:
    assert _tool_lists("it serves `read`, `write`, `edit` and `search`") == [
        ["read", "write", "edit", "search"]
    ]
    assert _tool_lists("it runs local, memory and S3") == []


# -- error texts -------------------------------------------------------------------------


@cache
def _templates() -> str:
    """Every string literal under src/fsseam; an f-string's fields become U+0001."""
    found: list[str] = []
    for source in sorted((REPO / "src" / "fsseam").rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr):
                found.append(
                    "".join(
                        part.value
                        if isinstance(part, ast.Constant) and isinstance(part.value, str)
                        else "\x01"
                        for part in node.values
                    )
                )
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.append(node.value)
    return "\n".join(" ".join(text.split()) for text in found)


_VARYING = re.compile(
    r"\"[^\"]*\"|'[^']*'|“[^”]*”|…|<[^>]*>|\{[^}]*\}|\w+://\S*|(?<![\w.])/[\w./-]+|\d+"
    r"|\w+(?:, \w+){2,}"  # a list of names (the parameters of a tool)
    r"|\([^()]*\)"  # an aside, often the reason filled in
)


def _fixed_runs(text: str) -> list[str]:
    """The runs of words of a quoted error text that the code must say word for word."""
    runs = []
    for piece in _VARYING.split(text):
        for part in re.split(r" — |: ", piece):
            run = " ".join(part.split()).strip(" ,;:.()[]`")
            if len(run.split()) >= 2:
                runs.append(run)
    return runs


def _said(run: str) -> bool:
    """Whether some literal says ``run``, where an f-string field may stand for some of its words.

    Each word matches itself, a field (U+0001), or nothing right after a field
    (the field spans it too); at least half the words, and two, must match
    themselves, so a field cannot stand for the whole run.
    """
    parts = []
    for index, word in enumerate(run.split()):
        lead, core, tail = (re.escape(p) for p in re.fullmatch(r"(\W*)(.*?)(\W*)", word).groups())  # type: ignore[union-attr]
        space = " " if index else ""
        absorbed = f"|(?<=\x01){tail}" if index else ""
        parts.append(f"(?:{space}{lead}({core}){tail}|{space}{lead}\x01{tail}{absorbed})")
    needed = max(2, (len(parts) + 1) // 2)
    pattern = re.compile("".join(parts))
    for match in pattern.finditer(_templates()):
        if sum(group is not None for group in match.groups()) >= needed:
            return True
    return False


def _quoted_errors(path: Path) -> list[tuple[str, str]]:
    """``(code, text)`` of every error the page quotes."""
    found: list[tuple[str, str]] = []
    texts = [b.text for b in blocks(path)] + inline_code(path)
    for text in texts:
        for line in text.splitlines():
            shown = line.split("  ← ")[0]  # transcripts mark stderr with "← stderr"
            found.extend((m.group(1), m.group(2)) for m in _CODE_TEXT.finditer(shown))
    for row in re.findall(r"^\| `((?:FS|INVALID|UNKNOWN)_[A-Z_]+)` \|(.*)$", prose(path), re.M):
        code, cells = row
        for span in re.findall(r"`([^`]+)`", cells):
            if '"' in span:
                found.extend((code, part) for part in span.split(" · "))
    return found


@pytest.mark.parametrize("path", DOCS, ids=_doc_ids(DOCS))
def test_quoted_error_texts_are_what_the_code_says(path: Path) -> None:
    codes = {code.value for code in FsErrorCode} | REGISTRY_CODES
    for code, text in _quoted_errors(path):
        assert code in codes, f"{path.name}: no error code {code}"
        for run in _fixed_runs(text):
            assert _said(run), f"{path.name}: the code never says {run!r} (quoted: {code}: {text})"


def test_the_error_check_catches_a_reworded_message() -> None:
    runs = _fixed_runs('"…/src" is a directory; only regular files can be read or written')
    assert runs == ["is a directory; only regular files can be read or written"]
    assert not _said(runs[0])
    real = _fixed_runs('"/x/a.txt" was modified since it was read — re-read the file, then retry')
    assert real == ["was modified since it was read", "re-read the file, then retry"]
    assert all(_said(run) for run in real)
    assert _said("is not a parameter of read (parameters")  # {tool} is a field
    assert _said("resolves outside the workspace; paths must stay inside")  # {why} is a field
