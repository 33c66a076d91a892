"""The ``fsseam`` command line: an MCP server, the seam for a person at a shell, a doctor.

Every file command is its own process, so there is no policy session: ``write``
and ``edit`` are unconditional (still atomic) unless ``--if-version`` or
``--create-only`` hands the store a guard. They run through the same tools as
an agent, so what they print is byte for byte what a model would see.

Where a location is mounted (the workspace root, nothing outside it can be
touched):

- a local path inside the current directory mounts the current directory;
- any other local path mounts the file's directory (its nearest existing
  ancestor, so ``write`` can create missing directories), or for ``ls`` the
  listed directory itself;
- a URL (``s3://bucket/key``, ``gs://…``, ``az://container/…``) mounts its
  bucket (or container);
- ``--root ROOT`` mounts ROOT instead; a relative PATH is then taken from the
  current directory when ROOT is local, and from ROOT when it is a URL.

Rendered output goes to stdout, ``CODE: message`` to stderr, and the exit
status tells the error family (:data:`EXIT_STATUS`). The MCP SDK is imported
only by ``serve``, so every other command works without the ``mcp`` extra.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import sys
import tempfile
import textwrap
import time
from collections.abc import Awaitable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, TextIO, TypeVar

from fsseam import __version__
from fsseam.backends import open_fs
from fsseam.host import Context
from fsseam.policy import ObservationPolicy
from fsseam.seam import (
    FS_EDIT_INTENT,
    FS_WRITE_INTENT,
    CreateIfAbsent,
    FileSystem,
    FsEditOutcome,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsTarget,
    FsVersion,
    FsWriteIntent,
    FsWriteOutcome,
    ReplaceIfVersion,
)
from fsseam.tools import DiscoveryTools, FileTools

__all__ = ["EXIT_STATUS", "build_parser", "doctor", "exit_status", "main", "parse_storage_option"]

T = TypeVar("T")

EXIT_OK = 0
EXIT_UNSAFE = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_NOT_TEXT = 4
EXIT_CONFLICT = 5
EXIT_DENIED = 6
EXIT_IO = 7
EXIT_INTERRUPTED = 130

EXIT_STATUS: dict[int, str] = {
    EXIT_OK: "ok",
    EXIT_UNSAFE: "doctor: the store did not enforce a precondition",
    EXIT_USAGE: "invalid arguments: INVALID_ARGUMENTS, bad -o option, missing extra",
    EXIT_NOT_FOUND: "not found: FS_NOT_FOUND",
    EXIT_NOT_TEXT: "wrong kind: FS_NOT_TEXT, FS_NOT_REGULAR_FILE, FS_NOT_DIRECTORY, FS_TOO_LARGE",
    EXIT_CONFLICT: "conflict: FS_STALE_VERSION, FS_NOT_OBSERVED, FS_AMBIGUOUS_EDIT, "
    "FS_EDIT_NOT_FOUND",
    EXIT_DENIED: "denied: FS_SANDBOX_DENIED (outside the root, read-only), FS_PERMISSION_DENIED",
    EXIT_IO: "I/O: FS_IO_ERROR, FS_ABORTED, store unreachable",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}
"""Exit status of every command, one per error family."""

_BY_CODE: dict[str, int] = {
    FsErrorCode.FS_NOT_FOUND: EXIT_NOT_FOUND,
    FsErrorCode.FS_NOT_TEXT: EXIT_NOT_TEXT,
    FsErrorCode.FS_NOT_REGULAR_FILE: EXIT_NOT_TEXT,
    FsErrorCode.FS_NOT_DIRECTORY: EXIT_NOT_TEXT,
    FsErrorCode.FS_TOO_LARGE: EXIT_NOT_TEXT,
    FsErrorCode.FS_STALE_VERSION: EXIT_CONFLICT,
    FsErrorCode.FS_NOT_OBSERVED: EXIT_CONFLICT,
    FsErrorCode.FS_AMBIGUOUS_EDIT: EXIT_CONFLICT,
    FsErrorCode.FS_EDIT_NOT_FOUND: EXIT_CONFLICT,
    FsErrorCode.FS_SANDBOX_DENIED: EXIT_DENIED,
    FsErrorCode.FS_PERMISSION_DENIED: EXIT_DENIED,
    FsErrorCode.FS_IO_ERROR: EXIT_IO,
    FsErrorCode.FS_ABORTED: EXIT_IO,
    "INVALID_ARGUMENTS": EXIT_USAGE,
    "UNKNOWN_TOOL": EXIT_USAGE,
}

_INVALID = "INVALID_ARGUMENTS"
_PROBE_TIMEOUT = 30.0
"""Seconds a store may take to answer the startup listing of ``serve`` and ``doctor``."""


def exit_status(code: str) -> int:
    """The exit status for an error code (``FS_…`` or ``INVALID_ARGUMENTS``); 7 if unknown."""
    return _BY_CODE.get(code, EXIT_IO)


class _Abort(Exception):
    """Stop the command: print ``CODE: message`` on stderr and exit with ``status``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = exit_status(code)


# -- arguments -----------------------------------------------------------------


def parse_storage_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` → ``(key, value)``; true/false, integers and JSON parse, else a string."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    lowered = raw.strip().lower()
    if lowered in ("true", "false"):
        return key, lowered == "true"
    try:
        return key, int(raw)
    except ValueError:
        pass
    try:
        return key, json.loads(raw)
    except ValueError:
        return key, raw


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


_MAIN_EPILOG = """\
mounted root: the current directory for a local path inside it, else the
file's directory; the bucket of s3://, gs://, az:// URLs; or --root ROOT.
Storage options: -o KEY=VALUE (JSON values parsed) and the usual environment.

exit status:
{table}"""

_MAIN_DESCRIPTION = """\
Read, write and edit text files on local disk, S3, GCS or Azure Blob, every
change guarded by the store's own version check, nothing outside the root."""


def _exit_table() -> str:
    return "\n".join(
        textwrap.fill(text, 79, initial_indent=f"  {status:>3}  ", subsequent_indent=" " * 7)
        for status, text in EXIT_STATUS.items()
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``fsseam`` argument parser (subcommands carry their runner as ``run``)."""
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="fsseam",
        description=_MAIN_DESCRIPTION,
        epilog=_MAIN_EPILOG.format(table=_exit_table()),
        formatter_class=raw,
    )
    parser.add_argument("--version", action="version", version=f"fsseam {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

    storage = argparse.ArgumentParser(add_help=False)
    storage.add_argument(
        "-o",
        dest="options",
        metavar="KEY=VALUE",
        action="append",
        type=parse_storage_option,
        default=[],
        help="storage option for fsspec (repeatable)",
    )
    located = argparse.ArgumentParser(add_help=False, parents=[storage])
    located.add_argument(
        "--root",
        metavar="ROOT",
        help="mount ROOT (default: cwd, the file's directory or its bucket)",
    )

    def command(name: str, summary: str, description: str, **kwargs: Any) -> Any:
        return commands.add_parser(
            name,
            help=summary,
            description=description,
            formatter_class=raw,
            **kwargs,
        )

    serve = command(
        "serve",
        "serve the file tools to one MCP client over stdio",
        "Serve read, write, edit, multi_edit, ls, glob and grep over MCP on stdio, at URL\n"
        "(default: the current directory). The client connection is one session:\n"
        "edits and overwrites need an earlier read of the same file in it. Startup\n"
        "errors go to stderr; stdout carries the protocol only.",
        parents=[storage],
    )
    serve.add_argument("url", nargs="?", default=".", metavar="URL", help="workspace root")
    serve.add_argument(
        "--read-only", action="store_true", help="refuse write and edit (FS_SANDBOX_DENIED)"
    )
    serve.add_argument(
        "--core-tools",
        action="store_true",
        help="serve only read, write and edit (default adds multi_edit, ls, glob, grep)",
    )
    serve.set_defaults(run=_cmd_serve)

    read = command(
        "read",
        "print a text file with numbered lines, as the read tool shows it",
        "Print PATH as the read tool renders it: numbered lines and a footer.",
        parents=[located],
    )
    read.add_argument("path", metavar="PATH", help="local path or URL of the file")
    read.add_argument("--offset", type=_positive, metavar="N", help="first line (1-based)")
    read.add_argument("--limit", type=_positive, metavar="N", help="at most N lines")
    read.add_argument(
        "--show-version", action="store_true", help="print the file's version on stderr"
    )
    read.set_defaults(run=_cmd_read)

    write = command(
        "write",
        "create or replace a file (content from --content or stdin)",
        "Write PATH atomically with --content TEXT, or with stdin's bytes when\n"
        "--content is not given. Without a guard flag the write is unconditional.",
        parents=[located],
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

    edit = command(
        "edit",
        "replace exact text in a file",
        "Replace the exact text --old with --new in PATH, atomically. --old must\n"
        "occur once unless --replace-all; the file's line endings are kept.",
        parents=[located],
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

    ls = command(
        "ls",
        "list a directory: type, size, name",
        "List the direct children of PATH (default: the current directory), one per\n"
        "line: type, size in bytes (- when unknown or a directory), name; directory\n"
        "names end with /.",
        parents=[located],
    )
    ls.add_argument("path", nargs="?", default=".", metavar="PATH", help="directory to list")
    ls.set_defaults(run=_cmd_ls)

    schemas = command(
        "schemas",
        "print the tool schemas as JSON",
        "Print the read/write/edit tool definitions as JSON: neutral by default,\n"
        "or shaped for OpenAI Chat Completions, Anthropic Messages or MCP.",
    )
    schemas.add_argument("--format", choices=["openai", "anthropic", "mcp"], help="target API")
    schemas.add_argument(
        "--all", action="store_true", help="also multi_edit, ls, glob and grep (as serve has)"
    )
    schemas.set_defaults(run=_cmd_schemas)

    doc = command(
        "doctor",
        "check that a store enforces conditional writes",
        "With a scratch object .fsseam-doctor-<random> under URL, check that the\n"
        "store refuses a second create-only write and writes at a stale version,\n"
        "including concurrent ones, and report dialect, capabilities, versions\n"
        "and timings. Exit 1 when a precondition was not enforced. The scratch\n"
        "object is removed afterwards.",
        parents=[storage],
    )
    doc.add_argument("url", metavar="URL", help="workspace root to check")
    doc.set_defaults(run=_cmd_doctor)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``fsseam`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except _Abort as exc:
        _flush_stdout()
        print(f"{exc.code}: {exc.message}", file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``fsseam read big.txt | head``): exit quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    return status


def _flush_stdout() -> None:
    with suppress(BrokenPipeError, ValueError):
        sys.stdout.flush()


# -- mounting --------------------------------------------------------------------


def _is_store_url(location: str) -> bool:
    return "://" in location and not location.startswith("file://")


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _existing_dir(path: str) -> str:
    while not os.path.isdir(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def _locate(location: str, root: str | None, *, listing: bool) -> tuple[str, str]:
    """``(root to mount, path to resolve)`` for a location a person typed."""
    if root is not None:
        if _is_store_url(root) or _is_store_url(location):
            return root, location
        local = location.removeprefix("file://")
        return root, os.path.abspath(local)
    if _is_store_url(location):
        protocol, rest = location.split("://", 1)
        bucket = rest.lstrip("/").split("/", 1)[0]
        if not bucket:
            raise _Abort(_INVALID, f"{location!r} names no bucket; use {protocol}://BUCKET/KEY")
        return f"{protocol}://{bucket}", location
    absolute = os.path.abspath(location.removeprefix("file://"))
    cwd = os.getcwd()
    if _inside(absolute, cwd):
        return cwd, absolute
    return _existing_dir(absolute if listing else os.path.dirname(absolute)), absolute


def _mount(root: str, options: list[tuple[str, Any]], *, read_only: bool) -> FileSystem:
    """Open ``root``, turning every failure into an :class:`_Abort` a person can act on."""
    storage = dict(options)
    try:
        return open_fs(root, read_only=read_only, **storage)
    except FsError as exc:
        raise _Abort(exc.code.value, exc.message) from exc
    except ImportError as exc:
        raise _Abort(_INVALID, str(exc)) from exc
    except FileNotFoundError as exc:
        raise _Abort(FsErrorCode.FS_NOT_FOUND.value, str(exc)) from exc
    except PermissionError as exc:
        raise _Abort(FsErrorCode.FS_PERMISSION_DENIED.value, f"{root}: {exc}") from exc
    except (TypeError, ValueError) as exc:
        given = ", ".join(key for key, _ in options) or "none"
        raise _Abort(_INVALID, f"cannot open {root!r} (storage options: {given}): {exc}") from exc
    except Exception as exc:
        raise _Abort(FsErrorCode.FS_IO_ERROR.value, f"cannot open {root!r}: {exc}") from exc


@contextmanager
def _seam_errors(what: str) -> Iterator[None]:
    """Map failures of direct seam calls to ``CODE: message``."""
    try:
        yield
    except _Abort:
        raise
    except FsError as exc:
        raise _Abort(exc.code.value, exc.message) from exc
    except Exception as exc:
        raise _Abort(FsErrorCode.FS_IO_ERROR.value, f"{what}: {type(exc).__name__}: {exc}") from exc


async def _probe(fs: FileSystem, root: str) -> None:
    """Fail fast on a missing root, bad credentials or an unreachable store."""
    with _seam_errors(f"cannot list {root}"):
        try:
            await asyncio.wait_for(fs.list_dir(await fs.resolve(".")), _PROBE_TIMEOUT)
        except TimeoutError:
            raise _Abort(
                FsErrorCode.FS_IO_ERROR.value,
                f"cannot list {root}: the store did not answer within {_PROBE_TIMEOUT:.0f} s",
            ) from None


# -- file commands -----------------------------------------------------------------


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
    root, path = _locate(args.path, args.root, listing=False)
    ctx = Context(_mount(root, args.options, read_only=read_only))
    ctx.plugin(FileTools())
    if guard is not None:
        ctx.plugin(guard)
    result = asyncio.run(ctx.tools.execute(tool, {"file_path": path, **call}))
    if result.is_error:
        code = (result.error or {}).get("code", FsErrorCode.FS_IO_ERROR.value)
        raise _Abort(code, result.text.removeprefix(f"{code}: "))
    print(result.text)
    if getattr(args, "show_version", False) and result.value:
        _flush_stdout()
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
        raise _Abort(_INVALID, "give the content with --content TEXT or pipe it on stdin")
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Abort(FsErrorCode.FS_NOT_TEXT.value, f"stdin is not UTF-8 text ({exc})") from exc


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
    root, path = _locate(args.path, args.root, listing=True)
    fs = _mount(root, args.options, read_only=True)

    async def listing() -> list[str]:
        with _seam_errors(f"cannot list {path}"):
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


def add_tools(ctx: Context, *, core_only: bool) -> Context:
    """Register the tools ``serve`` exposes: read/write/edit, plus the extras unless core_only."""
    if core_only:
        return ctx.plugin(FileTools())
    return ctx.plugin(FileTools(multi_edit=True)).plugin(DiscoveryTools())


def _cmd_schemas(args: argparse.Namespace) -> int:
    # Schemas never touch the store; any mounted directory will do.
    ctx = Context(open_fs(tempfile.gettempdir(), read_only=True))
    add_tools(ctx, core_only=not args.all)
    print(json.dumps(ctx.tools.schemas(format=args.format), indent=2, ensure_ascii=False))
    return EXIT_OK


# -- serve -------------------------------------------------------------------------


def _cmd_serve(args: argparse.Namespace) -> int:
    try:
        from fsseam import mcp as fsseam_mcp
    except ImportError as exc:
        raise _Abort(_INVALID, f"fsseam serve: {exc}") from exc
    import logging

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    fs = _mount(args.url, args.options, read_only=args.read_only)
    ctx = Context(fs)
    ctx.plugin(ObservationPolicy())
    add_tools(ctx, core_only=args.core_tools)

    async def serve() -> None:
        # One loop for the probe and the server: a store's loop-bound state stays valid.
        await _probe(fs, args.url)
        await fsseam_mcp.serve_stdio(ctx)

    asyncio.run(serve())
    return EXIT_OK


# -- doctor ------------------------------------------------------------------------

_CONFLICTS = frozenset(
    {FsErrorCode.FS_STALE_VERSION, FsErrorCode.FS_NOT_OBSERVED, FsErrorCode.FS_AMBIGUOUS_EDIT}
)
"""Refusals that mean "a guard held" (anything else is an error, not a verdict)."""

_Outcome = FsWriteOutcome | FsEditOutcome
OutcomeT = TypeVar("OutcomeT", FsWriteOutcome, FsEditOutcome)


@dataclass(slots=True)
class _Report:
    """What the doctor saw, printed as it goes."""

    out: TextIO
    failed: list[str] = field(default_factory=list)
    errors: list[FsError] = field(default_factory=list)
    versions: list[FsVersion] = field(default_factory=list)

    def seen(self, version: FsVersion) -> FsVersion:
        if version not in self.versions:
            self.versions.append(version)
        return version

    def line(self, status: str, text: str, ms: float) -> None:
        print(f"  {status:<5} {text}  ({ms:.1f} ms)", file=self.out)

    def ok(self, text: str, ms: float) -> None:
        self.line("ok", text, ms)

    def fail(self, text: str, ms: float) -> None:
        self.failed.append(text)
        self.line("FAIL", text, ms)

    def error(self, text: str, exc: FsError, ms: float) -> None:
        self.errors.append(exc)
        self.line("ERROR", f"{text}: {exc.code.value}: {exc.message}", ms)

    def refused(self, label: str, result: _Outcome | FsError, ms: float, unsafe: str) -> None:
        """A guarded write that must be refused with a conflict."""
        if not isinstance(result, FsError):
            self.seen(result.version)
            self.fail(f"{label}: ACCEPTED ({unsafe})", ms)
        elif result.code in _CONFLICTS:
            self.ok(f"{label}: refused ({result.code.value})", ms)
        else:
            self.error(label, result, ms)

    def race(self, label: str, results: Sequence[OutcomeT | FsError], ms: float) -> OutcomeT | None:
        """Concurrent guarded writes at one version: exactly one must win."""
        winners: list[OutcomeT] = [item for item in results if not isinstance(item, FsError)]
        losers = [item for item in results if isinstance(item, FsError)]
        for item in winners:
            self.seen(item.version)
        label = f"{len(results)} concurrent {label} at one version"
        unexpected = [exc for exc in losers if exc.code not in _CONFLICTS]
        if unexpected:
            self.error(label, unexpected[0], ms)
        elif len(winners) == 1:
            self.ok(f"{label}: 1 accepted, {len(losers)} refused", ms)
            return winners[0]
        elif winners:
            self.fail(f"{label}: {len(winners)} ACCEPTED (the store ignores If-Match)", ms)
        else:
            self.fail(f"{label}: all refused, none won", ms)
        return None

    def verdict(self, scratch: str | None, *, removed: bool = False) -> int:
        print("versions seen:", file=self.out)
        for version in self.versions:
            print(f"  {version}", file=self.out)
        if scratch is not None and removed:
            print(f"scratch removed: {scratch}", file=self.out)
        elif scratch is not None:
            print(
                f"scratch left: {scratch} (could not remove it; remove it by hand)", file=self.out
            )
        if self.failed:
            print("result: UNSAFE, the store did not enforce a precondition", file=self.out)
            return EXIT_UNSAFE
        if self.errors:
            print("result: incomplete, a check could not run", file=self.out)
            return exit_status(self.errors[0].code.value)
        print("result: ok, the store enforces its preconditions", file=self.out)
        return EXIT_OK


async def _timed(coro: Awaitable[T]) -> tuple[T | FsError, float]:
    """Await ``coro``; an FsError is returned, not raised, with the elapsed milliseconds."""
    start = time.perf_counter()
    try:
        value: T | FsError = await coro
    except FsError as exc:
        value = exc
    return value, (time.perf_counter() - start) * 1000


async def _gather_timed(coros: list[Awaitable[T]]) -> tuple[list[T | FsError], float]:
    start = time.perf_counter()
    timed = await asyncio.gather(*[_timed(coro) for coro in coros])
    return [value for value, _ in timed], (time.perf_counter() - start) * 1000


async def _finish(fs: FileSystem, target: FsTarget, report: _Report) -> int:
    """Remove the scratch object when the file system can, then give the verdict."""
    remove = getattr(fs, "remove", None)
    removed = False
    if callable(remove):
        try:
            await remove(target)
            removed = True
        except FsError:
            removed = False
    return report.verdict(target.display_path, removed=removed)


async def doctor(fs: FileSystem, out: TextIO, *, racers: int = 8) -> int:
    """Prove with a scratch object that ``fs`` enforces its write guards; returns the exit status.

    Creates ``.fsseam-doctor-<random>`` under the root and checks, through the
    seam only: a second create-only write is refused; a replace at the current
    version is accepted and changes the version; a replace and an edit at a
    stale version are refused; of ``racers`` concurrent replaces (then edits)
    at one version exactly one wins (all of them may pass the seam's early
    version check, so only the store's conditional write stops the others);
    reads and ``stat`` report the version the winning write returned.

    Returns 0, 1 (:data:`EXIT_UNSAFE`) when a precondition was not enforced,
    or the error family's status when a check could not run. The scratch
    object is removed afterwards where the file system offers ``remove``
    (:class:`~fsseam.backends.FsspecFileSystem` does); otherwise its path is printed.
    """
    report = _Report(out)
    caps = fs.capabilities
    print(f"root:         {(await fs.resolve('.')).display_path}", file=out)
    print(
        f"dialect:      {getattr(getattr(fs, 'dialect', None), 'name', type(fs).__name__)}",
        file=out,
    )
    print(
        f"capabilities: atomic_conditional_write={caps.atomic_conditional_write}"
        f" read_only={caps.read_only}",
        file=out,
    )
    if not caps.atomic_conditional_write:
        print("  note  guards hold within this process only, not across processes", file=out)
    target = await fs.resolve(f".fsseam-doctor-{secrets.token_hex(6)}")
    print(f"scratch:      {target.display_path}", file=out)

    def write(text: str, guard: FsWriteIntent) -> Awaitable[FsWriteOutcome]:
        return fs.write_text(target, text, guard)

    def edit(old: str, new: str, version: FsVersion) -> Awaitable[FsEditOutcome]:
        return fs.edit_text(target, FsEditRequest(old, new), version)

    async def read_back() -> tuple[str, FsVersion]:
        async with fs.stream_text(target) as stream:
            return "".join([chunk async for chunk in stream]), stream.info.version

    created, ms = await _timed(write("fsseam doctor\n", CreateIfAbsent()))
    if isinstance(created, FsError):
        report.error("create-only write of a new object", created, ms)
        return report.verdict(None)
    v1 = report.seen(created.version)
    report.ok("create-only write of a new object: accepted", ms)
    again, ms = await _timed(write("fsseam doctor: twice\n", CreateIfAbsent()))
    report.refused("create-only write of an existing object", again, ms, "If-None-Match ignored")
    if not isinstance(again, FsError):
        v1 = again.version  # keep going from what is stored, to check the other guards too

    replaced, ms = await _timed(write("fsseam doctor: replaced\n", ReplaceIfVersion(v1)))
    if isinstance(replaced, FsError):
        report.error("replace at the current version", replaced, ms)
        return await _finish(fs, target, report)
    v2 = report.seen(replaced.version)
    if v2 == v1:
        report.fail("replace at the current version: accepted, but the version is unchanged", ms)
    else:
        report.ok("replace at the current version: accepted, new version", ms)
    stale, ms = await _timed(write("fsseam doctor: stale\n", ReplaceIfVersion(v1)))
    report.refused("replace at a stale version", stale, ms, "a lost update")

    base = v2 if isinstance(stale, FsError) else stale.version
    results, ms = await _gather_timed(
        [write(f"fsseam doctor: racer {i}\n", ReplaceIfVersion(base)) for i in range(racers)]
    )
    winner = report.race("replaces", results, ms)

    stored, ms = await _timed(read_back())
    if isinstance(stored, FsError):
        report.error("read back", stored, ms)
        return await _finish(fs, target, report)
    text, version = stored
    report.seen(version)
    if winner is not None:
        if (text, version) == (winner.after, winner.version):
            report.ok("read back: the winner's content and version", ms)
        else:
            report.fail("read back: not the content or version the winning write returned", ms)

    # new_string keeps old_string, so every racer still matches whatever won before it.
    stale_edit, ms = await _timed(edit("racer", "racer, stale edit,", v1))
    report.refused("edit at a stale version", stale_edit, ms, "a lost update")
    base = version if isinstance(stale_edit, FsError) else stale_edit.version
    edits, ms = await _gather_timed(
        [edit("racer", f"racer, edited by {i},", base) for i in range(racers)]
    )
    edited = report.race("edits", edits, ms)
    if edited is not None:
        info, ms = await _timed(fs.stat(target))
        if isinstance(info, FsError):
            report.error("stat", info, ms)
        elif info is not None and report.seen(info.version) == edited.version:
            report.ok("stat: the version the winning edit returned", ms)
        else:
            report.fail("stat: not the version the winning edit returned", ms)
    return await _finish(fs, target, report)


def _cmd_doctor(args: argparse.Namespace) -> int:
    fs = _mount(args.url, args.options, read_only=False)

    async def run() -> int:
        await _probe(fs, args.url)
        with _seam_errors("doctor"):
            return await doctor(fs, sys.stdout)

    return asyncio.run(run())
