"""An embedder serving ``fsseam.mcp.build_server(ctx)`` over the SDK's streamable HTTP app.

``python tests/mcp_embedder_worker.py ROOT`` binds 127.0.0.1 on a free port,
prints ``PORT <n>`` on stdout, then serves until killed: exactly what a user
following the SDK's documentation would write, with no fsseam HTTP code.
"""

from __future__ import annotations

import socket
import sys

import uvicorn

from fsseam import Context, ObservationPolicy, open_fs
from fsseam.cli import add_tools
from fsseam.mcp import build_server


def main(root: str) -> None:
    ctx = Context(open_fs(root))
    ctx.plugin(ObservationPolicy())
    add_tools(ctx, core_only=False)
    app = build_server(ctx).streamable_http_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen()  # connections queue from now on, before uvicorn accepts them
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main(sys.argv[1])
