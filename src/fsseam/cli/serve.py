"""``fsseam serve`` (the MCP server) and ``fsseam schemas`` (the tool definitions).

The MCP SDK is imported only when ``serve`` runs, so every other command works
without the ``mcp`` extra.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile

from fsseam.backends import open_fs
from fsseam.cli._common import EXIT_OK, INVALID, Abort, Parents, mount, probe
from fsseam.host import Context
from fsseam.policy import ObservationPolicy
from fsseam.tools import DiscoveryTools, FileTools

__all__ = ["add_tools", "register", "register_schemas"]


def register(parents: Parents) -> None:
    """Add ``serve`` and ``schemas`` to the parser."""
    serve = parents.command(
        "serve",
        "serve the file tools to one MCP client over stdio",
        "Serve read, write, edit, multi_edit, ls, glob and grep over MCP on stdio, at URL\n"
        "(default: the current directory). The client connection is one session:\n"
        "edits and overwrites need an earlier read of the same file in it. Startup\n"
        "errors go to stderr; stdout carries the protocol only.",
        parents=[parents.storage],
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


def register_schemas(parents: Parents) -> None:
    """Add ``schemas`` to the parser."""
    schemas = parents.command(
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
        raise Abort(INVALID, f"fsseam serve: {exc}") from exc
    import logging

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    fs = mount(args.url, args.options, read_only=args.read_only)
    ctx = Context(fs)
    ctx.plugin(ObservationPolicy())
    add_tools(ctx, core_only=args.core_tools)

    async def serve() -> None:
        # One loop for the probe and the server: a store's loop-bound state stays valid.
        await probe(fs, args.url)
        await fsseam_mcp.serve_stdio(ctx)

    asyncio.run(serve())
    return EXIT_OK
