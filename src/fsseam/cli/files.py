"""``fsseam read|write|edit|ls``: the seam for a person at a shell.

Every file command is its own process, so there is no policy session: ``write``
and ``edit`` are unconditional (still atomic) unless ``--if-version`` or
``--create-only`` hands the store a guard. They run through the same tools as
an agent, so what they print is byte for byte what a model would see.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass
from typing import Any

from fsseam.cli._common import (
    EXIT_OK,
    INVALID,
    Abort,
    Parents,
    flush_stdout,
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
    FsErrorCode,
    FsVersion,
    FsWriteIntent,
    ReplaceIfVersion,
)
from fsseam.tools import FileTools

__all__ = ["register"]


def register(parents: Parents) -> None:
    """Add ``read``, ``write``, ``edit`` and ``ls`` to the parser."""
    read = parents.command(
        "read",
        "print a text file with numbered lines, as the read tool shows it",
        "Print PATH as the read tool renders it: numbered lines and a footer.",
        parents=[parents.located],
    )
    read.add_argument("path", metavar="PATH", help="local path or URL of the file")
    read.add_argument("--offset", type=positive, metavar="N", help="first line (1-based)")
    read.add_argument("--limit", type=positive, metavar="N", help="at most N lines")
    read.add_argument(
        "--show-version", action="store_true", help="print the file's version on stderr"
    )
    read.set_defaults(run=_cmd_read)

    write = parents.command(
        "write",
        "create or replace a file (content from --content or stdin)",
        "Write PATH atomically with --content TEXT, or with stdin's bytes when\n"
        "--content is not given. Without a guard flag the write is unconditional.",
        parents=[parents.located],
    )
    write.add_argument("path", metavar="PATH", help="local path or URL of the file")
    write.add_argument("--content", metavar="TEXT", help="the new content (default: stdin)")
    guard = write.add_mutually_exclusive_group()
    guard.add_argument(
        "--if-version",
        metavar="V",
        help="replace only while the file is at version V (else exit 5)",
    )
    guard.add_argument(
        "--create-only", action="store_true", help="create only; refuse if the file exists"
    )
    write.add_argument(
        "--show-version", action="store_true", help="print the new version on stderr"
    )
    write.set_defaults(run=_cmd_write)

    edit = parents.command(
        "edit",
        "replace exact text in a file",
        "Replace the exact text --old with --new in PATH, atomically. --old must\n"
        "occur once unless --replace-all; the file's line endings are kept.",
        parents=[parents.located],
    )
    edit.add_argument("path", metavar="PATH", help="local path or URL of the file")
    edit.add_argument("--old", required=True, metavar="TEXT", help="exact text to replace")
    edit.add_argument("--new", required=True, metavar="TEXT", help="replacement text")
    edit.add_argument("--replace-all", action="store_true", help="replace every occurrence")
    edit.add_argument(
        "--if-version", metavar="V", help="edit only while the file is at version V (else exit 5)"
    )
    edit.add_argument("--show-version", action="store_true", help="print the new version on stderr")
    edit.set_defaults(run=_cmd_edit)

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


@dataclass(frozen=True, slots=True)
class _Guard:
    """Plugin answering the write/edit intents with the guard given on the command line."""

    write: FsWriteIntent | None = None
    edit: FsVersion | None = None

    def setup(self, ctx: Context) -> None:
        """Answer ``fs/write-intent`` and ``fs/edit-intent`` on ``ctx``."""
        ctx.on(FS_WRITE_INTENT, lambda actor, target: self.write)
        ctx.on(FS_EDIT_INTENT, lambda actor, target: self.edit)


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
    result = asyncio.run(ctx.tools.execute(tool, {"file_path": path, **call}))
    if result.is_error:
        code = (result.error or {}).get("code", FsErrorCode.FS_IO_ERROR.value)
        raise Abort(code, result.text.removeprefix(f"{code}: "))
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
    if args.if_version is not None:
        guard = _Guard(write=ReplaceIfVersion(FsVersion(args.if_version)))
    elif args.create_only:
        guard = _Guard(write=CreateIfAbsent())
    return _run_tool(args, "write", {"content": content}, read_only=False, guard=guard)


def _cmd_edit(args: argparse.Namespace) -> int:
    call = {"old_string": args.old, "new_string": args.new, "replace_all": args.replace_all}
    guard = None if args.if_version is None else _Guard(edit=FsVersion(args.if_version))
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
