"""``fsseam read|write|edit|ls``: the seam for a person at a shell.

Every file command is its own process, so there is no policy session: ``write``
and ``edit`` are unconditional (still atomic) unless ``--if-version`` or
``--create-only`` hands the store a guard. They run through the same tools as
an agent, so what they print is byte for byte what a model would see.

Versions are accepted as ``read --show-version`` prints them or without their
quotes (S3 ETags are quoted; a person pasting one often drops them): a guarded
command looks the file's version up and uses the store's own spelling when the
two differ only by quotes. A refusal's remedy says what to do at a shell
(``--if-version``, ``--create-only``), not what a model would do.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fsseam.cli._common import (
    EXIT_OK,
    INVALID,
    Abort,
    Parents,
    flush_stdout,
    line_offset,
    locate,
    mount,
    positive,
    seam_errors,
)
from fsseam.host import Context
from fsseam.seam import (
    FS_EDIT_INTENT,
    FS_WRITE_INTENT,
    CreateIfAbsent,
    FileSystem,
    FsErrorCode,
    FsTarget,
    FsVersion,
    FsWriteIntent,
    ReplaceIfVersion,
)
from fsseam.tools import FileTools

__all__ = ["register", "version_argument"]

VERSION_SHAPE = (
    "a version is one word, as 'fsseam read --show-version' prints it, quotes optional: "
    "65024:1483140:23:1796033353056067265:1796033353056067265 (local disk), "
    '"f6736399904ad9999a5ea1b6a80f0930" (S3), 1712345678901234 (GCS), 0x8DC2A... (Azure)'
)
"""What a version looks like, for the usage error of a malformed ``--if-version``."""

# The model-facing remedies FileTools appends; a person at a shell gets a CLI one.
_TOOL_REMEDY = re.compile(r" — (?:re-)?read the file, then retry$", re.MULTILINE)


def version_argument(text: str) -> str:
    """``--if-version V``: one word, optionally in double quotes; else a usage error (exit 2)."""
    version = text.strip()
    bare = version[1:-1] if len(version) >= 2 and version[0] == version[-1] == '"' else version
    if not bare or '"' in bare or any(ch.isspace() or not ch.isprintable() for ch in bare):
        raise argparse.ArgumentTypeError(f"{text!r} is not a version; {VERSION_SHAPE}")
    return version


def register(parents: Parents) -> None:
    """Add ``read``, ``write``, ``edit`` and ``ls`` to the parser."""
    read = _file_command(
        parents,
        "read",
        "print a text file with numbered lines, as the read tool shows it",
        "Print PATH as the read tool renders it: numbered lines and a footer.",
    )
    read.add_argument(
        "--offset", type=line_offset, metavar="N", help="first line (1-based); -N: the last N lines"
    )
    read.add_argument("--limit", type=positive, metavar="N", help="at most N lines")
    _finish(read, _cmd_read, "print the file's version on stderr")

    write = _file_command(
        parents,
        "write",
        "create or replace a file (content from --content or stdin)",
        "Write PATH atomically with --content TEXT, or with stdin's bytes when\n"
        "--content is not given. Without a guard flag the write is unconditional.",
    )
    write.add_argument("--content", metavar="TEXT", help="the new content (default: stdin)")
    guard = write.add_mutually_exclusive_group()
    guard.add_argument(
        "--if-version",
        metavar="V",
        type=version_argument,
        help="replace only while the file is at version V (else exit 5)",
    )
    guard.add_argument(
        "--create-only", action="store_true", help="create only; refuse if the file exists"
    )
    _finish(write, _cmd_write, "print the new version on stderr")

    edit = _file_command(
        parents,
        "edit",
        "replace exact text in a file",
        "Replace the exact text --old with --new in PATH, atomically. --old must\n"
        "occur once unless --replace-all; the file's line endings are kept.",
    )
    edit.add_argument("--old", required=True, metavar="TEXT", help="exact text to replace")
    edit.add_argument("--new", required=True, metavar="TEXT", help="replacement text")
    edit.add_argument("--replace-all", action="store_true", help="replace every occurrence")
    edit.add_argument(
        "--if-version",
        metavar="V",
        type=version_argument,
        help="edit only while the file is at version V (else exit 5)",
    )
    _finish(edit, _cmd_edit, "print the new version on stderr")

    ls = parents.command(
        "ls",
        "list a directory: type, size, name",
        "List the direct children of PATH (default: the current directory), one per\n"
        "line: type, size in bytes (- when unknown or a directory), name; directory\n"
        "names end with /.",
        parents=[parents.located],
    )
    ls.add_argument("path", nargs="?", default=".", metavar="PATH", help="directory to list")
    ls.set_defaults(run=_cmd_ls)


def _file_command(
    parents: Parents, name: str, summary: str, description: str
) -> argparse.ArgumentParser:
    """A subcommand on one file: the mount options, then its PATH."""
    command = parents.command(name, summary, description, parents=[parents.located])
    command.add_argument("path", metavar="PATH", help="local path or URL of the file")
    return command


def _finish(
    command: argparse.ArgumentParser, run: Callable[[argparse.Namespace], int], shown: str
) -> None:
    """``--show-version`` (help ``shown``) last, and the function the subcommand runs."""
    command.add_argument("--show-version", action="store_true", help=shown)
    command.set_defaults(run=run)


@dataclass(frozen=True, slots=True)
class _Guard:
    """Plugin answering the write/edit intents with the guard given on the command line.

    ``if_version`` (as typed) guards a replace or an edit; ``create_only`` a create.
    """

    if_version: str | None = None
    create_only: bool = False

    def setup(self, ctx: Context) -> None:
        """Answer ``fs/write-intent`` and ``fs/edit-intent`` on ``ctx``."""
        given = self.if_version

        async def version(target: FsTarget) -> FsVersion | None:
            return None if given is None else await _as_stored(ctx.fs, target, given)

        async def write_intent(actor: object, target: FsTarget) -> FsWriteIntent | None:
            if self.create_only:
                return CreateIfAbsent()
            pinned = await version(target)
            return None if pinned is None else ReplaceIfVersion(pinned)

        async def edit_intent(actor: object, target: FsTarget) -> FsVersion | None:
            return await version(target)

        ctx.on(FS_WRITE_INTENT, write_intent)
        ctx.on(FS_EDIT_INTENT, edit_intent)


async def _as_stored(fs: FileSystem, target: FsTarget, given: str) -> FsVersion:
    """``given`` in the store's own spelling when it differs only by quotes, else as given.

    The store still decides: a version that no longer matches is refused by the
    conditional write itself (exit 5), whichever spelling was sent.
    """
    with seam_errors(f"cannot look up the version of {target.display_path}"):
        info = await fs.stat(target)
    if info is not None and info.version != given and info.version.strip('"') == given.strip('"'):
        return info.version
    return FsVersion(given)


def _cli_remedy(args: argparse.Namespace, tool: str, code: str, message: str, shown: str) -> str:
    """The tool's refusal, with a remedy a person at a shell can follow."""
    if code == FsErrorCode.FS_NOT_OBSERVED and getattr(args, "create_only", False):
        return (
            f'"{shown}" already exists, and --create-only never replaces a file — drop '
            "--create-only to replace it, or pass --if-version V (V from fsseam read "
            "--show-version) to replace it only while it is unchanged"
        )
    if code == FsErrorCode.FS_STALE_VERSION and getattr(args, "if_version", None) is not None:
        remedy = (
            f' — get its current version with fsseam read "{shown}" --show-version, '
            f"then retry the {tool} with that --if-version"
        )
        cut = _TOOL_REMEDY.sub(remedy, message, count=1)
        return cut if cut != message else message + remedy
    return message


def _run_tool(
    args: argparse.Namespace,
    tool: str,
    call: dict[str, Any],
    *,
    read_only: bool,
    guard: _Guard | None = None,
) -> int:
    root, path = locate(args.path, args.root, listing=False)
    ctx = Context(mount(root, args.options, read_only=read_only))
    ctx.plugin(FileTools())
    if guard is not None:
        ctx.plugin(guard)

    async def run() -> tuple[Any, str]:
        result = await ctx.tools.execute(tool, {"file_path": path, **call})
        shown = path
        if result.is_error:
            # Only a refusal's remedy needs the path as the store shows it.
            with seam_errors(f"cannot resolve {path}"):
                shown = (await ctx.fs.resolve(path)).display_path
        return result, shown

    result, shown = asyncio.run(run())
    if result.is_error:
        code = (result.error or {}).get("code", FsErrorCode.FS_IO_ERROR.value)
        message = result.text.removeprefix(f"{code}: ")
        raise Abort(code, _cli_remedy(args, tool, code, message, shown))
    print(result.text)
    if getattr(args, "show_version", False) and result.value:
        flush_stdout()
        print(result.value["version"], file=sys.stderr)
    return EXIT_OK


def _cmd_read(args: argparse.Namespace) -> int:
    call: dict[str, Any] = {}
    if args.offset is not None:
        call["offset"] = args.offset
    if args.limit is not None:
        call["limit"] = args.limit
    return _run_tool(args, "read", call, read_only=True)


def _stdin_text() -> str:
    if sys.stdin is None or sys.stdin.isatty():
        raise Abort(INVALID, "give the content with --content TEXT or pipe it on stdin")
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Abort(FsErrorCode.FS_NOT_TEXT.value, f"stdin is not UTF-8 text ({exc})") from exc


def _cmd_write(args: argparse.Namespace) -> int:
    content = args.content if args.content is not None else _stdin_text()
    guard: _Guard | None = None
    if args.if_version is not None or args.create_only:
        guard = _Guard(if_version=args.if_version, create_only=args.create_only)
    return _run_tool(args, "write", {"content": content}, read_only=False, guard=guard)


def _cmd_edit(args: argparse.Namespace) -> int:
    call = {"old_string": args.old, "new_string": args.new, "replace_all": args.replace_all}
    guard = None if args.if_version is None else _Guard(if_version=args.if_version)
    return _run_tool(args, "edit", call, read_only=False, guard=guard)


def _cmd_ls(args: argparse.Namespace) -> int:
    root, path = locate(args.path, args.root, listing=True)
    fs = mount(root, args.options, read_only=True)

    async def listing() -> list[str]:
        with seam_errors(f"cannot list {path}"):
            entries = await fs.list_dir(await fs.resolve(path))
        lines = []
        for entry in entries:
            directory = entry.type == "directory"
            size = "-" if directory or entry.size is None else str(entry.size)
            name = entry.name + ("/" if directory else "")
            lines.append(f"{entry.type:<9} {size:>10}  {name}")
        return lines

    for line in asyncio.run(listing()):
        print(line)
    return EXIT_OK
