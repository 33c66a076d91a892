"""``fsseam grep`` and ``fsseam glob``: search a directory or a bucket from a shell.

They run the ``grep`` and ``glob`` tools, so stdout is byte for byte what a
model would see (paths relative to the mounted root). A long grep shows its
progress on stderr — files searched, bytes, matches — when stderr is a
terminal or with ``--progress``; stdout stays clean for pipes. The exit
status is 0 whether or not anything matched; errors exit with their family's
status (:data:`~fsseam.cli._common.EXIT_STATUS`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any, TextIO

from fsseam.cli._common import EXIT_OK, Abort, Parents, flush_stdout, locate, mount
from fsseam.host import Context
from fsseam.seam import FsErrorCode
from fsseam.tools import GlobTool, GrepTool
from fsseam.tools.grep import GrepProgress

__all__ = ["register"]


def register(parents: Parents) -> None:
    """Add ``grep`` and ``glob`` to the parser."""
    grep = _search_command(
        parents,
        "grep",
        "search file contents for a regular expression (RE2), as the grep tool does",
        "Search the text files below PATH (default: the current directory) for\n"
        "PATTERN and print the grep tool's answer: each file's path, then N: line\n"
        "(N:COL: …window… inside a long line). Binary and non-UTF-8 files are\n"
        "skipped. On object stores files are fetched concurrently. Exit status 0\n"
        "whether or not anything matched.",
        pattern="RE2 regular expression",
        path="directory or file to search",
    )
    grep.add_argument("--glob", metavar="GLOB", help='only files matching GLOB, e.g. "*.py"')
    grep.add_argument("-i", "--ignore-case", action="store_true", help="case-insensitive")
    grep.add_argument(
        "-F", "--literal", action="store_true", help="PATTERN is plain text, not a regex"
    )
    grep.add_argument(
        "--progress",
        action="store_true",
        help="show progress on stderr even when it is not a terminal",
    )
    grep.set_defaults(run=_cmd_grep)

    glob = _search_command(
        parents,
        "glob",
        "find files by name pattern, as the glob tool does",
        "Print the files below PATH (default: the current directory) matching\n"
        'PATTERN ("**/*.py", "src/**/test_*.{ts,tsx}"), sorted, relative to the\n'
        "mounted root. On object stores only listing pages are requested.",
        pattern="glob pattern (* ? [] ** {a,b})",
        path="directory to search below",
    )
    glob.set_defaults(run=_cmd_glob)


def _search_command(
    parents: Parents, name: str, summary: str, description: str, *, pattern: str, path: str
) -> argparse.ArgumentParser:
    """A subcommand that searches below a directory: the mount options, PATTERN, PATH."""
    command = parents.command(name, summary, description, parents=[parents.located])
    command.add_argument("pattern", metavar="PATTERN", help=pattern)
    command.add_argument("path", nargs="?", default=".", metavar="PATH", help=path)
    return command


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


class _Progress:
    """Progress lines on stderr: rewritten in place on a terminal, else one a second."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._tty = stream.isatty()
        self._every = 0.1 if self._tty else 1.0
        self._last = 0.0
        self._latest: GrepProgress | None = None
        self._shown = False

    def update(self, progress: GrepProgress) -> None:
        self._latest = progress
        now = time.monotonic()
        if now - self._last >= self._every:
            self._last = now
            self._show(progress)

    def _show(self, progress: GrepProgress) -> None:
        files = f"{progress.files} file{'' if progress.files == 1 else 's'}"
        matches = f"{progress.matches} match{'' if progress.matches == 1 else 'es'}"
        line = f"grep: {files} searched, {_human(progress.bytes)}, {matches}"
        if self._tty:
            self._stream.write(f"\r{line}\x1b[K")
        else:
            self._stream.write(line + "\n")
        self._stream.flush()
        self._shown = True

    def close(self) -> None:
        """The final count (a terminal line is then cleared)."""
        if self._latest is None:
            return
        if self._tty:
            if self._shown:
                self._stream.write("\r\x1b[K")
                self._stream.flush()
        else:
            self._show(self._latest)


def _run(
    args: argparse.Namespace, tool: Any, call: dict[str, Any], progress: _Progress | None = None
) -> int:
    root, path = locate(args.path, args.root, listing=True)
    ctx = Context(mount(root, args.options, read_only=True))
    ctx.tools.register(tool)
    try:
        result = asyncio.run(ctx.tools.execute(tool.name, {**call, "path": path}))
    finally:
        if progress is not None:
            progress.close()  # before the answer, which may share the terminal
    if result.is_error:
        code = (result.error or {}).get("code", FsErrorCode.FS_IO_ERROR.value)
        raise Abort(code, result.text.removeprefix(f"{code}: "))
    flush_stdout()
    print(result.text)
    return EXIT_OK


def _cmd_grep(args: argparse.Namespace) -> int:
    progress = _Progress(sys.stderr) if args.progress or sys.stderr.isatty() else None
    call: dict[str, Any] = {"pattern": args.pattern}
    if args.glob is not None:
        call["glob"] = args.glob
    if args.ignore_case:
        call["ignore_case"] = True
    if args.literal:
        call["literal"] = True
    tool = GrepTool(progress=progress.update if progress is not None else None)
    return _run(args, tool, call, progress)


def _cmd_glob(args: argparse.Namespace) -> int:
    return _run(args, GlobTool(), {"pattern": args.pattern})
