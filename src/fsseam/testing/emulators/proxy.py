"""A small HTTP reverse proxy that counts requests and injects faults.

Put it in front of an emulator (fake-gcs-server, Azurite) so tests and
benchmarks see exactly what reached the wire, and can lose a response after
the store applied it, fail a request, or cut a body halfway — while the real
dialect code runs unchanged.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal
from urllib.parse import urlsplit

from fsseam.testing.emulators.journal import RequestJournal

__all__ = ["Fault", "FaultAction", "Recorded", "RecordingProxy"]

FaultAction = Literal["lose_response", "fail", "reset", "cut_body"]


@dataclass(frozen=True, slots=True)
class Recorded:
    """One request as it reached the proxy."""

    method: str
    path: str
    """Path without the query string."""
    query: str
    headers: dict[str, str]
    """Header names lower-cased."""


@dataclass(slots=True)
class Fault:
    """Apply ``action`` to the next ``times`` requests matching ``match``.

    - ``lose_response``: forward (the store applies it), then answer ``status``.
    - ``fail``: answer ``status`` without forwarding.
    - ``reset``: close the connection without answering.
    - ``cut_body``: forward, send the headers and half the body (or
      ``after_bytes`` of it), then close.
    """

    match: Callable[[Recorded], bool]
    action: FaultAction
    status: int = 500
    times: int = 1
    hits: int = field(default=0)
    after_bytes: int | None = None
    """For ``cut_body``: body bytes sent before the cut (``None``: half)."""


class RecordingProxy(RequestJournal[Recorded, Fault]):
    """Threaded reverse proxy on 127.0.0.1 forwarding to ``upstream`` (``host:port``).

    Its :class:`~fsseam.testing.emulators.journal.RequestJournal` gives
    ``seen``, ``reset``, ``clear_faults`` and ``inject``.
    """

    def __init__(
        self, upstream_host: str, upstream_port: int, *, preserve_host: bool = False
    ) -> None:
        super().__init__()
        self.upstream = (upstream_host, upstream_port)
        self.preserve_host = preserve_host
        """Forward the client's Host header (servers that build URLs from it
        then keep pointing clients at the proxy)."""
        self._serial = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; Nagle would hold the
            # second back ~40 ms waiting for the client's delayed ACK.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: object) -> None:
                return

            def _handle(self) -> None:
                proxy._serve(self)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = _handle  # noqa: N815

        self._server = _Server(("127.0.0.1", 0), Handler)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> RecordingProxy:
        """Start serving in a daemon thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()

    @property
    def requests(self) -> list[Recorded]:
        """A copy of the requests seen since the last :meth:`reset`."""
        return self._recorded()

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        headers = {k.lower(): v for k, v in handler.headers.items()}
        length = int(headers.get("content-length", "0") or 0)
        body = handler.rfile.read(length) if length else b""
        rec = Recorded(handler.command, parts.path, parts.query, headers)
        self._record(rec)
        fault = self._take_fault(lambda armed: armed.match(rec))
        if fault is not None and fault.action == "reset":
            _abort(handler)
            return
        if fault is not None and fault.action == "fail":
            _answer(handler, fault.status, b"injected failure")
            return
        with self._serial if self.exclusive(rec) else contextlib.nullcontext():
            refusal = self.precondition(rec)
            if refusal is not None and fault is not None and fault.action == "lose_response":
                _answer(handler, fault.status, b"injected failure after the store refused it")
                return
            if refusal is not None:
                _answer(handler, *refusal)
                return
            self._forward(handler, body, fault)

    def exclusive(self, rec: Recorded) -> bool:
        """Whether ``rec`` runs alone among exclusive requests (default: none does).

        A subclass that checks a precondition itself (:meth:`precondition`)
        makes the check and every write it could race with exclusive, so the
        emulator behind it stays atomic, as the real store is.
        """
        return False

    def precondition(self, rec: Recorded) -> tuple[int, bytes] | None:
        """``(status, body)`` to answer instead of forwarding ``rec`` (default: forward).

        For emulators that ignore a precondition the real store enforces; it
        runs after the faults, so a lost answer still follows a real change.
        """
        return None

    def _forward(self, handler: BaseHTTPRequestHandler, body: bytes, fault: Fault | None) -> None:
        conn = http.client.HTTPConnection(*self.upstream, timeout=60)
        try:
            out_headers = {k: v for k, v in handler.headers.items() if k.lower() != "host"}
            out_headers["Host"] = (
                handler.headers.get("Host", "")
                if self.preserve_host
                else f"{self.upstream[0]}:{self.upstream[1]}"
            )
            conn.request(handler.command, handler.path, body=body, headers=out_headers)
            resp = conn.getresponse()
            if fault is not None and fault.action == "lose_response":
                resp.read()
                _answer(handler, fault.status, b"injected failure after the store applied it")
                return
            cut = fault is not None and fault.action == "cut_body"
            self._relay(handler, resp, cut=cut, after=fault.after_bytes if fault else None)
        finally:
            conn.close()

    @staticmethod
    def _relay(
        handler: BaseHTTPRequestHandler,
        resp: http.client.HTTPResponse,
        *,
        cut: bool,
        after: int | None = None,
    ) -> None:
        """Stream the upstream answer back in chunks (bounded memory for big objects)."""
        declared = resp.getheader("Content-Length")
        data = b"" if declared is not None or handler.command == "HEAD" else resp.read()
        length = int(declared) if declared is not None else len(data)
        handler.send_response(resp.status, resp.reason)
        for key, value in resp.getheaders():
            if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                handler.send_header(key, value)
        # A HEAD answer has no body but keeps the object's Content-Length
        # (clients read the size from it).
        handler.send_header("Content-Length", str(length))
        handler.end_headers()
        if handler.command == "HEAD":
            return
        budget = (length // 2 if after is None else min(after, length)) if cut else length
        if data:
            handler.wfile.write(data[:budget])
        else:
            while budget > 0:
                chunk = resp.read(min(1 << 16, budget))
                if not chunk:
                    break
                handler.wfile.write(chunk)
                budget -= len(chunk)
        if cut:
            handler.wfile.flush()
            _abort(handler)


class _Server(ThreadingHTTPServer):
    # The default backlog of 5 overflows under concurrent clients, whose
    # dropped SYNs are only retried after a second.
    request_queue_size = 128
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        # Clients hanging up early (a streamed read stopped after its window,
        # an injected cut) are expected; anything else is still reported.
        exc = sys.exc_info()[1]
        if isinstance(exc, (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


def _answer(handler: BaseHTTPRequestHandler, status: int, body: bytes) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(body)


def _abort(handler: BaseHTTPRequestHandler) -> None:
    handler.close_connection = True
    with contextlib.suppress(OSError):
        handler.connection.shutdown(socket.SHUT_RDWR)
