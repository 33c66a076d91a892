"""Real round-trip times on loopback: every request to a store waits a chosen RTT first.

Two servers, each in a process of its own (so their threads never share the
measured client's GIL), each printing ``READY http://127.0.0.1:PORT`` on
stdout and serving until its stdin closes:

    python benchmarks/_latency.py s3 [--rtt-ms 20]
        moto's S3 (fsseam's recording, serialising S3Emulator) served by a
        small threaded HTTP/1.1 server that sleeps the RTT before each request,
        outside moto's store lock, so requests wait concurrently, and keeps
        client connections alive, as S3 does.
    python benchmarks/_latency.py proxy HOST:PORT [--rtt-ms 20] [--preserve-host]
        a delaying, recording reverse proxy in front of any HTTP store
        (fake-gcs-server, Azurite), keeping connections alive on both sides.

Control routes under ``/_latency/`` are answered at once, never delayed or
recorded: ``POST /_latency/rtt?ms=N``, ``GET /_latency/requests`` (JSON
``[[method, path, query, status], ...]``; the proxy reports status 0),
``POST /_latency/reset`` (forget requests); on ``s3`` also
``POST /_latency/bucket`` (a fresh bucket's name) and
``POST /_latency/fill?bucket=NAME`` with a JSON body ``{"key": "text", ...}``
(stored straight into moto's backend: 1,000 objects in well under a second,
where 1,000 PUTs through s3fs take ten).

:class:`LatencyS3` and :class:`LatencyProxy` start and drive them. Both the
benchmark (``latency.py``) and the CI tests that hold grep to a deadline at
20 ms per request use this module.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import io
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

HERE = Path(__file__).resolve().parent
CONTROL = "/_latency/"

__all__ = ["LatencyProxy", "LatencyS3"]


# -- the client side (runs in the benchmark or test process) -----------------------------


class _Server:
    """A ``_latency.py`` subprocess and its control routes."""

    def __init__(self, *args: str) -> None:
        env = dict(os.environ)
        src = str(HERE.parent / "src")
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
        self._process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self._process.stdout is not None
        ready = self._process.stdout.readline().split()
        if len(ready) != 2 or ready[0] != "READY":
            self.stop()
            raise RuntimeError(f"_latency.py {' '.join(args)} did not start (said {ready!r})")
        self.url: str = ready[1]
        """Where clients connect."""

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self._process.pid

    def control(self, method: str, action: str, body: bytes | None = None) -> bytes:
        """Call a control route (``action`` may carry a query string)."""
        data = body if body is not None else (b"" if method == "POST" else None)
        request = urllib.request.Request(f"{self.url}{CONTROL}{action}", data=data, method=method)
        with urllib.request.urlopen(request, timeout=60) as response:
            answer: bytes = response.read()
            return answer

    def set_rtt(self, ms: float) -> None:
        """Delay every later request by ``ms`` milliseconds."""
        self.control("POST", f"rtt?ms={ms}")

    def requests(self) -> list[tuple[str, str, str]]:
        """``(method, path, query)`` of each request recorded since :meth:`reset`."""
        return [
            (str(m), str(p), str(q)) for m, p, q, _ in json.loads(self.control("GET", "requests"))
        ]

    def reset(self) -> None:
        """Forget the recorded requests."""
        self.control("POST", "reset")

    def stop(self) -> None:
        """Close its stdin (it exits), then make sure, by its pid."""
        with contextlib.suppress(OSError):
            if self._process.stdin is not None:
                self._process.stdin.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=5)


class LatencyS3(_Server):
    """moto's S3 in its own process, every request delayed by the RTT."""

    def __init__(self, rtt_ms: float = 0.0) -> None:
        super().__init__("s3", "--rtt-ms", str(rtt_ms))

    def new_bucket(self) -> str:
        """A fresh, empty bucket's name."""
        return self.control("POST", "bucket").decode()

    def fill(self, bucket: str, files: dict[str, bytes]) -> None:
        """Store ``files`` (key → bytes, UTF-8 text) in ``bucket``, off the record."""
        body = json.dumps({key: data.decode() for key, data in files.items()}).encode()
        self.control("POST", f"fill?bucket={bucket}", body)

    def storage_options(self) -> dict[str, Any]:
        """s3fs options for this server (explicit test credentials, no region)."""
        return {
            "endpoint_url": self.url,
            "key": "fsseam-test",
            "secret": "fsseam-test-secret",
            "anon": False,
        }


class LatencyProxy(_Server):
    """A delaying, recording reverse proxy in its own process, in front of ``host:port``."""

    def __init__(
        self, host: str, port: int, rtt_ms: float = 0.0, *, preserve_host: bool = False
    ) -> None:
        args = ["proxy", f"{host}:{port}", "--rtt-ms", str(rtt_ms)]
        super().__init__(*args, *(["--preserve-host"] if preserve_host else []))


# -- the server side (runs in the subprocess) --------------------------------------------


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default 5 drops SYNs under concurrent clients

    def handle_error(self, request: object, client_address: object) -> None:
        # A client closing a kept-alive connection (or hanging up on a body it
        # no longer wants) is normal; anything else is still reported.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


def _serve_s3(rtt_ms: float) -> None:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.moto_server.werkzeug_app import create_backend_app
    from moto.s3.models import s3_backends

    from fsseam.testing.emulators.s3 import S3Emulator

    emulator = S3Emulator()
    # moto's DomainDispatcherApplication finds the service for every request by
    # scanning its package directory (some 180 stat calls, ~40% of a GET's
    # server time); this server only speaks S3.
    emulator._app = create_backend_app("s3")
    emulator.start()
    host, port = emulator.endpoint_url.removeprefix("http://").rsplit(":", 1)

    def control(action: str, query: dict[str, list[str]], body: bytes) -> bytes | None:
        if action == "bucket":
            return emulator.new_bucket().name.encode()
        if action == "fill":
            backend = s3_backends[DEFAULT_ACCOUNT_ID]["global"]
            bucket = query["bucket"][0]
            for key, text in json.loads(body).items():
                backend.put_object(bucket, key, text.encode())
            return b"ok"
        if action == "requests":
            rows = [[r.method, r.path, _query(r.query), r.status] for r in emulator.requests()]
            return json.dumps(rows).encode()
        if action == "reset":
            emulator.reset()
            return b"ok"
        return None

    # werkzeug closes the connection after every answer; S3 keeps it open. So
    # clients get a small keep-alive HTTP/1.1 server calling the emulator's WSGI
    # app in this process: no TCP set-up per request, no second hop.
    delay = [rtt_ms / 1000]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: object) -> None:
            return

        def _handle(self) -> None:
            target, _, raw = self.path.partition("?")
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if target.startswith(CONTROL):
                action = target[len(CONTROL) :]
                if action == "rtt":
                    delay[0] = float(parse_qs(raw)["ms"][0]) / 1000
                    answer: bytes | None = b"ok"
                else:
                    answer = control(action, parse_qs(raw), body)
                self._reply("200 OK", [], answer or b"")
                return
            if delay[0] > 0:
                time.sleep(delay[0])  # this request's thread only: they wait concurrently
            environ = {
                "REQUEST_METHOD": self.command,
                "PATH_INFO": urllib.parse.unquote(target),
                "RAW_URI": self.path,
                "QUERY_STRING": raw,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(length),
                "SERVER_NAME": host,
                "SERVER_PORT": port,
                "SERVER_PROTOCOL": "HTTP/1.1",
                "REMOTE_ADDR": "127.0.0.1",
                "wsgi.version": (1, 0),
                "wsgi.url_scheme": "http",
                "wsgi.input": io.BytesIO(body),
                "wsgi.errors": sys.stderr,
                "wsgi.multithread": True,
                "wsgi.multiprocess": False,
                "wsgi.run_once": False,
            }
            for key, value in self.headers.items():
                name = key.upper().replace("-", "_")
                if name not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                    environ[f"HTTP_{name}"] = value
            started: list[Any] = []

            def start_response(status: str, headers: list[tuple[str, str]], exc: Any = None) -> Any:
                started[:] = [status, headers]
                return lambda data: None

            result = emulator(environ, start_response)
            data = b"".join(result)
            self._reply(started[0], started[1], data)

        def _reply(self, status: str, headers: list[tuple[str, str]], data: bytes) -> None:
            code, _, reason = status.partition(" ")
            self.send_response(int(code), reason)
            for key, value in headers:
                if key.lower() not in ("content-length", "connection", "transfer-encoding"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle  # noqa: N815

    server = _HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"READY http://127.0.0.1:{server.server_address[1]}", flush=True)


def _query(query: dict[str, str]) -> str:
    return "&".join(f"{key}={value}" for key, value in query.items())


def _serve_proxy(upstream: str, rtt_ms: float, preserve_host: bool) -> None:
    """A delaying, recording reverse proxy that keeps connections alive on both sides.

    fsseam's RecordingProxy opens a connection upstream per request; Node's
    HTTP server (Azurite) pays about as much for that as for the request, so
    here each client connection keeps its own upstream connection.
    """
    upstream_host, upstream_port = upstream.rsplit(":", 1)
    delay = [rtt_ms / 1000]
    lock = threading.Lock()
    seen: list[list[Any]] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True
        _upstream: http.client.HTTPConnection | None = None

        def log_message(self, format: str, *args: object) -> None:
            return

        def _handle(self) -> None:
            target, _, raw = self.path.partition("?")
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if target.startswith(CONTROL):
                self._control(target[len(CONTROL) :], parse_qs(raw))
                return
            with lock:
                seen.append([self.command, target, raw, 0])
            if delay[0] > 0:
                time.sleep(delay[0])  # this connection's thread only: they wait concurrently
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
            headers["Host"] = self.headers.get("Host", "") if preserve_host else upstream
            for attempt in range(2):
                if self._upstream is None:
                    self._upstream = http.client.HTTPConnection(
                        upstream_host, int(upstream_port), timeout=60
                    )
                try:
                    self._upstream.request(self.command, self.path, body=body, headers=headers)
                    response = self._upstream.getresponse()
                    data = response.read()
                    break
                except (ConnectionError, http.client.HTTPException):
                    self._upstream.close()
                    self._upstream = None  # the server closed a kept connection: once more
                    if attempt:
                        raise
            self.send_response(response.status, response.reason)
            for key, value in response.getheaders():
                if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(key, value)
            declared = response.getheader("Content-Length")
            head = self.command == "HEAD" and declared is not None
            self.send_header("Content-Length", declared if head else str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            if response.will_close:
                self._upstream.close()
                self._upstream = None

        def _control(self, action: str, query: dict[str, list[str]]) -> None:
            answer = b"ok"
            if action == "rtt":
                delay[0] = float(query["ms"][0]) / 1000
            elif action == "requests":
                with lock:
                    answer = json.dumps(seen).encode()
            elif action == "reset":
                with lock:
                    seen.clear()
            self.send_response(200)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = do_PATCH = _handle  # noqa: N815

    server = _HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"READY http://127.0.0.1:{server.server_address[1]}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    sub = parser.add_subparsers(dest="kind", required=True)
    s3 = sub.add_parser("s3")
    s3.add_argument("--rtt-ms", type=float, default=0.0)
    proxy = sub.add_parser("proxy")
    proxy.add_argument("upstream", metavar="HOST:PORT")
    proxy.add_argument("--rtt-ms", type=float, default=0.0)
    proxy.add_argument("--preserve-host", action="store_true")
    args = parser.parse_args()
    if args.kind == "s3":
        _serve_s3(args.rtt_ms)
    else:
        _serve_proxy(args.upstream, args.rtt_ms, args.preserve_host)
    sys.stdin.read()  # returns when the parent closes the pipe or exits
    os._exit(0)


if __name__ == "__main__":
    main()
