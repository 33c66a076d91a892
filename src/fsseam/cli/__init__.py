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

Each command lives in its own module: ``files`` (read, write, edit, ls),
``serve`` (serve, schemas), ``doctor``; ``_common`` holds what they share.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from fsseam import __version__
from fsseam.cli import doctor as _doctor_cli
from fsseam.cli import files as _files_cli
from fsseam.cli import search as _search_cli
from fsseam.cli import serve as _serve_cli
from fsseam.cli._common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_STATUS,
    Abort,
    Parents,
    exit_status,
    flush_stdout,
    parse_storage_option,
)
from fsseam.cli.doctor import doctor
from fsseam.cli.serve import add_tools

__all__ = [
    "EXIT_STATUS",
    "add_tools",
    "build_parser",
    "doctor",
    "exit_status",
    "main",
    "parse_storage_option",
]

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

    parents = Parents(storage=storage, located=located, command=command)
    _serve_cli.register(parents)
    _files_cli.register(parents)
    _search_cli.register(parents)
    _serve_cli.register_schemas(parents)
    _doctor_cli.register(parents)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``fsseam`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except Abort as exc:
        flush_stdout()
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
