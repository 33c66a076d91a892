"""``fsseam serve`` (the MCP server) and ``fsseam schemas`` (the tool definitions).

The MCP SDK is imported only when ``serve`` runs, so every other command works
without the ``mcp`` extra.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from typing import Any

from fsseam.backends import open_fs
from fsseam.cli._common import EXIT_OK, INVALID, Abort, Parents, mount, positive, probe
from fsseam.host import Context
from fsseam.observations import ObservationStore, open_observations
from fsseam.policy import ObservationPolicy
from fsseam.seam import FsError
from fsseam.tools import DiscoveryTools, FileTools

__all__ = ["add_tools", "default_root", "register", "register_schemas"]


def register(parents: Parents) -> None:
    """Add ``serve`` to the parser."""
    serve = parents.command(
        "serve",
        "serve the file tools over MCP (stdio, or streamable HTTP with --http)",
        "Serve the file tools over MCP at URL (default: the current directory, never / or\n"
        "$HOME). Sessions, tokens, replicas: docs/deploying.md. Logs go to stderr.",
        parents=[parents.storage],
        usage="fsseam serve [URL] [options]",
    )
    serve.add_argument("url", nargs="?", default=None, metavar="URL", help="workspace root")
    serve.add_argument("--read-only", action="store_true", help="offer only read, ls, glob, grep")
    serve.add_argument("--core-tools", action="store_true", help="offer only read, write and edit")
    serve.add_argument("--session", metavar="NAME", help="stdio: the session's name")
    serve.add_argument(
        "--observations",
        metavar="STORE",
        help="memory:// (default), sqlite:///PATH, redis://HOST/DB",
    )
    serve.add_argument(
        "--ttl", type=positive, metavar="SECONDS", help="forget a session idle this long"
    )
    serve.add_argument("--http", metavar="HOST:PORT", help="serve at http://HOST:PORT/mcp")
    serve.add_argument("--tokens", metavar="FILE", help="--http: NAME TOKEN per line")
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="--http: another Host clients use",
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
        "--all",
        action="store_true",
        help="also multi_edit, delete, move, ls, glob and grep (as serve has)",
    )
    schemas.set_defaults(run=_cmd_schemas)


def add_tools(ctx: Context, *, core_only: bool) -> Context:
    """Register the tools ``serve`` exposes: read/write/edit, plus the extras unless core_only.

    The extras: multi_edit, delete and move, ls, glob and grep. A read-only
    mount lists only the tools that change nothing (their declared effects).
    """
    if core_only:
        return ctx.plugin(FileTools())
    return ctx.plugin(FileTools(multi_edit=True, manage=True)).plugin(DiscoveryTools())


def _cmd_schemas(args: argparse.Namespace) -> int:
    # Schemas never touch the store; any mounted directory will do.
    ctx = Context(open_fs(tempfile.gettempdir(), read_only=True))
    add_tools(ctx, core_only=not args.all)
    print(json.dumps(ctx.tools.schemas(format=args.format), indent=2, ensure_ascii=False))
    return EXIT_OK


# -- serve -------------------------------------------------------------------------


def default_root(cwd: str | None = None, home: str | None = None) -> str:
    """The root ``serve`` uses without a URL: the current directory, never ``/`` or ``$HOME``."""
    here = os.path.realpath(cwd if cwd is not None else os.getcwd())
    home = home if home is not None else os.environ.get("HOME") or os.path.expanduser("~")
    refused = {os.path.realpath(os.sep)}
    if home and home != "~":
        refused.add(os.path.realpath(home))
    if here in refused:
        what = "the file system root" if here == os.path.realpath(os.sep) else "your home directory"
        raise Abort(
            INVALID,
            f"fsseam serve needs a workspace root: the current directory ({here}) is {what}, "
            "which serve never mounts by default. Name the project to serve, e.g. "
            "fsseam serve /path/to/project (or a URL such as s3://bucket/prefix)",
        )
    return here


def _cmd_serve(args: argparse.Namespace) -> int:
    try:
        from fsseam import mcp as fsseam_mcp
    except ImportError as exc:
        raise Abort(INVALID, f"fsseam serve: {exc}") from exc
    import logging

    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="fsseam: %(levelname)s %(message)s"
    )
    http = _http_options(args)
    if http is None and args.observations and not args.session:
        raise Abort(
            INVALID,
            "--observations on stdio keeps one named session: add --session NAME "
            "(the conversation to keep across restarts)",
        )
    root = args.url if args.url is not None else default_root()
    store = _observations(args)
    fs = mount(root, args.options, read_only=args.read_only)
    ctx = Context(fs)
    ctx.plugin(ObservationPolicy(store=store))
    add_tools(ctx, core_only=args.core_tools)

    async def serve() -> None:
        # One loop for the probes and the server: a store's loop-bound state stays valid.
        await probe(fs, root)
        await _check_store(store)
        try:
            if http is None:
                await fsseam_mcp.serve_stdio(ctx, session=args.session)
            else:
                await _serve_http(ctx, root, store, http)
        finally:
            await store.aclose()

    asyncio.run(serve())
    return EXIT_OK


def _observations(args: argparse.Namespace) -> ObservationStore:
    options = {"ttl": args.ttl} if args.ttl else {}
    try:
        return open_observations(args.observations or "memory://", **options)
    except (ValueError, ImportError) as exc:
        raise Abort(INVALID, f"--observations: {exc}") from exc


async def _check_store(store: ObservationStore) -> None:
    try:
        await store.check()
    except FsError as exc:
        raise Abort(exc.code.value, exc.message) from exc


def _http_options(args: argparse.Namespace) -> Any:
    if args.http is None:
        for flag, value in (("--tokens", args.tokens), ("--allow-host", args.allow_host)):
            if value:
                raise Abort(INVALID, f"{flag} applies to --http only")
        return None
    try:
        from fsseam import mcp_http
    except ImportError as exc:
        raise Abort(INVALID, f"fsseam serve --http: {exc}") from exc
    if args.session:
        raise Abort(
            INVALID,
            "--session applies to stdio; over --http each principal of --tokens is a "
            'session, narrowed by a request\'s _meta "fsseam/session"',
        )
    try:
        host, port = mcp_http.parse_address(args.http)
        tokens = mcp_http.TokenFile.load(args.tokens) if args.tokens else None
        # Before anything listens: a public address without tokens is refused.
        mcp_http.check_bind(host, tokens=tokens)
    except ValueError as exc:
        raise Abort(INVALID, f"fsseam serve --http: {exc}") from exc
    return host, port, tokens, args.allow_host


async def _serve_http(ctx: Context, root: str, store: ObservationStore, http: Any) -> None:
    import logging

    from fsseam import mcp_http

    host, port, tokens, allow_hosts = http
    logging.getLogger("fsseam.http").setLevel(logging.INFO)
    who = f"{len(tokens.names)} principals from {tokens.source}" if tokens else "no tokens"

    def ready(url: str) -> None:
        print(
            f"fsseam: listening on {url} — root {root}, {who}, observations {store.name}",
            file=sys.stderr,
            flush=True,
        )

    await mcp_http.serve_http(
        ctx, host=host, port=port, tokens=tokens, allow_hosts=allow_hosts, ready=ready
    )
