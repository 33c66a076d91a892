"""``fsseam serve --http``: throughput and latency by store, observation store and clients.

Six real servers run at once — local disk and S3 (moto, in its own process)
× memory, SQLite and Redis observation stores — each a ``fsseam serve URL
--http 127.0.0.1:0 --tokens FILE --observations STORE`` subprocess. A load
generator sends 2026-07-28 ``tools/call`` POSTs (one principal, one
``_meta`` session per client, each client on its own file: read, then edit
it, repeatedly) with 1, 8 and 32 concurrent clients. Rounds are interleaved
across the six servers in a shuffled order, so load on the machine falls on
every configuration alike and the ratios hold; absolute times move with it.

    python benchmarks/http_serve.py            # the full run (a few minutes)
    python benchmarks/http_serve.py --quick    # fewer rounds

Prints a Markdown table: calls per second, p50 and p99 per call, and each
configuration's throughput relative to the memory store on the same backend.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "src"))

import httpx2  # noqa: E402 - after the path set-up, like the other benchmarks
from _common import RemoteS3  # noqa: E402

from fsseam.testing.emulators import stop_process  # noqa: E402
from fsseam.testing.emulators.redis import redis_server  # noqa: E402

TOKEN = "bench-token-0123456789abcdef"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
CONCURRENCY = (1, 8, 32)


@dataclass
class Server:
    """One ``fsseam serve --http`` process and what it measured."""

    backend: str
    store: str
    url: str
    process: subprocess.Popen[str]
    samples: dict[int, list[float]] = field(default_factory=dict)
    busy: dict[int, float] = field(default_factory=dict)
    """Wall seconds spent in rounds at each concurrency (for throughput)."""
    calls: dict[int, int] = field(default_factory=dict)


@contextmanager
def serve(root: str, options: list[str], store: str, tokens: Path, cwd: Path) -> Iterator[str]:
    """Start one server; yield its URL; stop it by PID."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    command = [sys.executable, "-m", "fsseam", "serve", root, *options, "--http", "127.0.0.1:0",
               "--tokens", str(tokens), "--observations", store]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    url: list[str] = []
    first = process.stderr.readline()
    match = re.search(r"listening on (\S+)", first)
    if match is None:
        process.kill()
        raise SystemExit(f"server did not start: {first}{process.stderr.read()}")
    url.append(match.group(1))
    # Drain the access log so the pipe never fills.
    threading.Thread(target=lambda: [None for _ in process.stderr or ()], daemon=True).start()
    try:
        yield url[0]
    finally:
        stop_process(process)


async def tool_call(
    http: httpx2.AsyncClient, url: str, name: str, args: dict[str, Any], session: str
) -> tuple[float, str]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": args, "_meta": {**META, "fsseam/session": session}},
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
        "Authorization": f"Bearer {TOKEN}",
    }
    started = time.perf_counter()
    response = await http.post(url, content=json.dumps(body), headers=headers)
    elapsed = time.perf_counter() - started
    answer = response.json()
    if response.status_code != 200 or answer["result"]["isError"]:
        raise RuntimeError(f"{name} failed: {response.status_code} {response.text[:300]}")
    return elapsed, answer["result"]["content"][0]["text"]


async def client_round(
    http: httpx2.AsyncClient, server: Server, client: int, calls: int, samples: list[float]
) -> None:
    """``calls`` calls on this client's own file: read, then edit its counter, and again."""
    session = f"bench-{client}"
    path = f"clients/c{client}.txt"
    for _ in range(calls // 2):
        elapsed, text = await tool_call(http, server.url, "read", {"file_path": path}, session)
        samples.append(elapsed)
        value = int(text.split("\n1: ", 1)[1].split("\n", 1)[0])
        args = {"file_path": path, "old_string": f"{value}\n", "new_string": f"{value + 1}\n"}
        elapsed, _ = await tool_call(http, server.url, "edit", args, session)
        samples.append(elapsed)


async def prepare(http: httpx2.AsyncClient, server: Server, clients: int) -> None:
    for client in range(clients):
        args = {"file_path": f"clients/c{client}.txt", "content": "0\n"}
        await tool_call(http, server.url, "write", args, f"setup-{client}")


async def measure(servers: list[Server], rounds: int, per_client: dict[int, int]) -> None:
    limits = httpx2.Limits(max_connections=256, max_keepalive_connections=256)
    async with httpx2.AsyncClient(timeout=120, limits=limits) as http:
        for server in servers:
            await prepare(http, server, max(CONCURRENCY))
        rng = random.Random(7)
        for clients in CONCURRENCY:
            for _ in range(rounds):
                order = servers[:]
                rng.shuffle(order)
                for server in order:
                    samples = server.samples.setdefault(clients, [])
                    started = time.perf_counter()
                    await asyncio.gather(
                        *(
                            client_round(http, server, client, per_client[clients], samples)
                            for client in range(clients)
                        )
                    )
                    server.busy[clients] = server.busy.get(clients, 0.0) + (
                        time.perf_counter() - started
                    )
                    server.calls[clients] = server.calls.get(clients, 0) + (
                        clients * (per_client[clients] // 2) * 2
                    )
            print(f"  {clients} client(s) done", file=sys.stderr, flush=True)


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index] * 1000


def report(servers: list[Server], duration: float, load: tuple[float, float]) -> str:
    rows = [
        "| backend | observation store | clients | calls/s | p50 ms | p99 ms | "
        "throughput vs memory |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    by_key = {(s.backend, s.store, c): s for s in servers for c in CONCURRENCY}
    for backend in ("local", "s3"):
        for clients in CONCURRENCY:
            base = by_key[(backend, "memory", clients)]
            base_rate = base.calls[clients] / base.busy[clients]
            for store in ("memory", "sqlite", "redis"):
                server = by_key[(backend, store, clients)]
                rate = server.calls[clients] / server.busy[clients]
                samples = server.samples[clients]
                rows.append(
                    f"| {backend} | {store} | {clients} | {rate:.0f} | "
                    f"{percentile(samples, 0.5):.1f} | {percentile(samples, 0.99):.1f} | "
                    f"{rate / base_rate:.2f}× |"
                )
    header = (
        f"`python benchmarks/http_serve.py` — {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; {duration:.0f} s; "
        f"load average {load[0]:.1f} at start, {load[1]:.1f} at end. Each call is one "
        "2026-07-28 `tools/call` POST with a bearer token (read or edit of the client's own "
        "file); rounds interleaved across the six servers."
    )
    return header + "\n\n" + "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="one round per cell")
    parser.add_argument("--out", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    rounds = 1 if args.quick else 4
    per_client = {1: 60, 8: 12, 32: 4}
    started = time.monotonic()
    load_start = os.getloadavg()[0]
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="fsseam-bench-")))
        tokens = work / "tokens"
        tokens.write_text(f"bench {TOKEN}\n")
        redis_url = stack.enter_context(redis_server(work))
        s3 = RemoteS3()
        stack.callback(s3.stop)
        options = s3.storage_options()
        s3_options: list[str] = []
        for key, value in options.items():
            s3_options += ["-o", f"{key}={json.dumps(value) if isinstance(value, bool) else value}"]
        servers: list[Server] = []
        for backend in ("local", "s3"):
            for store in ("memory", "sqlite", "redis"):
                if backend == "local":
                    root_dir = work / f"ws-{store}"
                    root_dir.mkdir()
                    root, extra = str(root_dir), []
                else:
                    root, extra = f"s3://{s3.new_bucket()}/ws", s3_options
                store_url = {
                    "memory": "memory://",
                    "sqlite": f"sqlite://{work}/obs-{backend}.db",
                    "redis": redis_url.rsplit("/", 1)[0] + f"/{1 if backend == 'local' else 2}",
                }[store]
                url = stack.enter_context(serve(root, extra, store_url, tokens, work))
                servers.append(Server(backend, store, url, process=None))  # type: ignore[arg-type]
        print(f"6 servers up in {time.monotonic() - started:.1f} s", file=sys.stderr)
        asyncio.run(measure(servers, rounds, per_client))
    table = report(servers, time.monotonic() - started, (load_start, os.getloadavg()[0]))
    print(table)
    if args.out:
        args.out.write_text(table + "\n")
    everything = [x for s in servers for v in s.samples.values() for x in v]
    print(f"median call across all cells: {statistics.median(everything) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
