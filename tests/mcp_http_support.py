"""Real MCP servers over streamable HTTP, as subprocesses, for the tests.

Each server is started on a free 127.0.0.1 port, its output is drained by a
thread (so an access log can never fill a pipe), and it is stopped by PID.
The official MCP client drives it, with a bearer token and ``_meta`` when the
test asks for them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client

from fsseam.testing.emulators import stop_process

SRC = str(Path(__file__).resolve().parents[1] / "src")
READY = re.compile(r"(?:listening on (http://\S+)|^PORT (\d+)$)")


@dataclass
class Served:
    """A running server process: its ``/mcp`` URL and everything it printed."""

    process: subprocess.Popen[str]
    url: str
    lines: list[str] = field(default_factory=list)

    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, fragment: str, *, since: int = 0, timeout: float = 10.0) -> bool:
        """Whether a line containing ``fragment`` arrives (access lines follow the response)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(fragment in line for line in self.lines[since:]):
                return True
            time.sleep(0.02)
        return False


def env() -> dict[str, str]:
    """The environment for a server subprocess: this checkout's ``src`` first."""
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join([SRC, *filter(None, [out.get("PYTHONPATH")])])
    return out


@contextmanager
def running(args: Sequence[str], *, cwd: Path, timeout: float = 20.0) -> Iterator[Served]:
    """Start ``python ARGS``, wait for its ready line, yield it, then stop it by PID."""
    process = subprocess.Popen(
        [sys.executable, *args],
        cwd=cwd,
        env=env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    found: list[str] = []
    ready = threading.Event()

    def drain() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            line = raw.rstrip("\n")
            lines.append(line)
            match = READY.search(line)
            if match and not found:
                url = match.group(1) or f"http://127.0.0.1:{match.group(2)}/mcp"
                found.append(url)
                ready.set()
        ready.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + timeout
        while not ready.wait(0.05):
            if time.monotonic() > deadline:
                raise AssertionError(f"server did not start: {' '.join(args)}\n" + "\n".join(lines))
        if not found:
            raise AssertionError(f"server exited ({process.poll()}):\n" + "\n".join(lines))
        yield Served(process, found[0], lines)
    finally:
        stop_process(process)
        reader.join(5)


def serve_http(root: Path | str, *flags: str, cwd: Path) -> Any:
    """``fsseam serve ROOT --http 127.0.0.1:0 FLAGS`` as a running server."""
    return running(["-m", "fsseam", "serve", str(root), "--http", "127.0.0.1:0", *flags], cwd=cwd)


@asynccontextmanager
async def client(
    url: str, *, token: str | None = None, mode: str = "auto", headers: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    """The official MCP client on ``url`` (``mode="legacy"``: the session-based transport)."""
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    async with httpx2.AsyncClient(headers=sent, timeout=30) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode) as connected:
            yield connected


async def call(
    connected: Client, tool: str, *, session: str | None = None, **args: Any
) -> types.CallToolResult:
    """Call ``tool``; ``session`` goes to ``_meta["fsseam/session"]``."""
    meta = {"fsseam/session": session} if session is not None else None
    return await connected.call_tool(tool, args, meta=meta)  # type: ignore[arg-type]


def text(result: types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def tool_request(request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 ``tools/call`` request body."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": MODERN_META},
    }


def raw_post(url: str, body: bytes, *, token: str | None = None, **headers: str) -> httpx2.Response:
    """One POST of ``body`` to ``url`` with the headers a 2026-07-28 ``tools/call`` carries."""
    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        **headers,
    }
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    return httpx2.post(url, content=body, headers=sent, timeout=30)
