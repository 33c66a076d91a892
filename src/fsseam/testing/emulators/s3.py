"""An S3 emulator for tests and benchmarks: moto in server mode on 127.0.0.1.

moto runs in this process, in a daemon thread, behind a small WSGI middleware
(:class:`S3Emulator`) that

* serialises every request with one lock, so the emulator is atomic like S3:
  moto's ``put_object`` checks ``If-Match`` and stores without a lock of its
  own, and two contested conditional PUTs can otherwise both win;
* records every request (method, path, query, the precondition headers, the
  fsseam write token) in a thread-safe log, so tests can prove a guard
  really reached the wire and count round trips;
* injects faults at the HTTP layer, so the real s3fs / botocore / dialect code
  runs: a lost response (store, then answer 500), a connection reset in the
  middle of a GET body, and ``503 SlowDown`` throttling.

moto's in-process ``mock_aws`` does not work with s3fs (aiobotocore awaits a
plain botocore response), hence server mode. Buckets are cheap: every test
gets a fresh one from :meth:`S3Emulator.new_bucket`.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

try:
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import BaseWSGIServer, make_server
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f'the S3 emulator needs moto in server mode: pip install "moto[server]" werkzeug ({exc})'
    ) from exc

from fsseam.testing.emulators.journal import RequestJournal
from fsseam.testing.faults import Answer, Change, RequestLog, StoreFaults

__all__ = [
    "Fault",
    "RecordedRequest",
    "S3Bucket",
    "S3Emulator",
    "S3EmulatorFaults",
    "S3RequestLog",
    "s3_emulator",
]

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

_INTERNAL_HEADER = "HTTP_X_FSSEAM_EMULATOR_INTERNAL"
_RECORDED_HEADERS = {
    "if_match": "HTTP_IF_MATCH",
    "if_none_match": "HTTP_IF_NONE_MATCH",
    "range": "HTTP_RANGE",
    "write_token": "HTTP_X_AMZ_META_FSSEAM_WRITE_TOKEN",
}


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One HTTP request as the emulator received it."""

    method: str
    """``GET``, ``HEAD``, ``PUT``, ``POST`` or ``DELETE``."""
    path: str
    """The URL path, ``/bucket/key`` (path-style addressing)."""
    query: dict[str, str]
    """Query parameters (``list-type``, ``prefix``, ``delimiter``...)."""
    headers: dict[str, str]
    """Selected headers, present only when sent: ``if_match``, ``if_none_match``,
    ``range``, ``write_token`` (``x-amz-meta-fsseam-write-token``)."""
    status: int = 0
    """The status the client was answered with (0 when the connection was cut)."""

    @property
    def bucket(self) -> str:
        """The bucket addressed (path-style)."""
        return self.path.lstrip("/").split("/", 1)[0]

    @property
    def key(self) -> str:
        """The object key addressed, ``""`` for bucket-level requests."""
        parts = self.path.lstrip("/").split("/", 1)
        return parts[1] if len(parts) > 1 else ""


@dataclass(slots=True)
class Fault:
    """A fault to inject into the next matching requests.

    ``kind`` is ``"lose_response"`` (let moto handle the request, then answer
    ``status`` / ``code``, by default 500 InternalError: the change is stored
    but the client never hears of it),
    ``"reset_body"`` (send the headers and the first ``after_bytes`` of the
    body, then cut the connection) or ``"error"`` (answer ``status`` with the
    S3 error ``code`` without touching moto: 503 SlowDown, 409
    ConditionalRequestConflict...).
    """

    kind: str
    method: str | None = None
    """Only requests with this method (any when ``None``)."""
    key: str | None = None
    """Only requests for this object key (any when ``None``)."""
    times: int = 1
    """How many matching requests to hit."""
    after_bytes: int = 0
    """For ``reset_body``: body bytes sent before the cut."""
    status: str = ""
    """For ``error`` and ``lose_response``: the HTTP status line, e.g. ``"503 Slow Down"``."""
    code: str = ""
    """For ``error`` and ``lose_response``: the S3 error code, e.g. ``"SlowDown"``."""
    hits: int = field(default=0)
    """How many requests it hit so far."""

    def matches(self, method: str, key: str) -> bool:
        """True when this fault applies to a request and has hits left."""
        if self.hits >= self.times:
            return False
        if self.method is not None and self.method != method:
            return False
        return self.key is None or self.key == key


@dataclass(frozen=True, slots=True)
class S3Bucket:
    """A fresh bucket on the emulator, ready for ``open_fs(url, **storage_options)``."""

    name: str
    """The bucket name."""
    url: str
    """``s3://name``."""
    storage_options: dict[str, Any]
    """s3fs options: endpoint, credentials (no region: see :meth:`S3Emulator.storage_options`)."""


def _error_body(code: str, message: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message>"
        f"<RequestId>{uuid.uuid4().hex}</RequestId></Error>"
    ).encode()


class _QuietHandler(MotoRequestHandler):
    """moto's request handler without one log line per request."""

    def log_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class S3Emulator(RequestJournal[RecordedRequest, Fault]):
    """moto's S3 behind a serialising, recording, fault-injecting WSGI middleware.

    Start one per process with :func:`s3_emulator`; it serves until the
    process exits (daemon thread) or :meth:`stop`. Its
    :class:`~fsseam.testing.emulators.journal.RequestJournal` gives ``seen``,
    ``reset``, ``clear_faults`` and ``inject``.
    """

    def __init__(self) -> None:
        super().__init__()
        self._app: WSGIApp = DomainDispatcherApplication(create_backend_app)
        self._store_lock = threading.Lock()
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None
        self._names = itertools.count()
        self.endpoint_url = ""

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> S3Emulator:
        """Serve on a free 127.0.0.1 port in a daemon thread; returns ``self``."""
        if self._server is not None:
            return self
        server = make_server("127.0.0.1", 0, self, threaded=True, request_handler=_QuietHandler)
        self._server = server
        self.endpoint_url = f"http://127.0.0.1:{server.server_port}"
        self._thread = threading.Thread(
            target=server.serve_forever, name="fsseam-s3-emulator", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (the moto state is dropped with the process)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    # -- buckets -----------------------------------------------------------------

    def storage_options(self) -> dict[str, Any]:
        """s3fs options for this emulator.

        No ``region_name`` in ``client_kwargs``: with one, s3fs sends a
        ``LocationConstraint`` on bucket creation that moto refuses for
        us-east-1. Credentials are explicit so the host's AWS profile is
        never consulted.
        """
        return {
            "endpoint_url": self.endpoint_url,
            "key": "fsseam-test",
            "secret": "fsseam-test-secret",
            "anon": False,
        }

    def new_bucket(self, *, versioned: bool = False) -> S3Bucket:
        """Create a bucket with a unique name (optionally versioned)."""
        name = f"fsseam-{next(self._names)}-{uuid.uuid4().hex[:12]}"
        self._internal("PUT", f"/{name}")
        if versioned:
            body = (
                b'<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                b"<Status>Enabled</Status></VersioningConfiguration>"
            )
            self._internal("PUT", f"/{name}?versioning", body)
        return S3Bucket(name, f"s3://{name}", self.storage_options())

    def _internal(self, method: str, path: str, body: bytes | None = None) -> bytes:
        """A set-up request that bypasses the log and the faults."""
        headers = {"X-Fsseam-Emulator-Internal": "1"}
        if body is not None:
            # urllib's default form content type makes moto route the request away.
            headers["Content-Type"] = "application/xml"
        request = urllib.request.Request(
            self.endpoint_url + path, data=body, method=method, headers=headers
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            data: bytes = response.read()
            return data

    # -- request log ---------------------------------------------------------------

    def requests(self, bucket: str | None = None) -> list[RecordedRequest]:
        """The requests received so far (optionally only those for ``bucket``)."""
        out = self._recorded()
        if bucket is not None:
            out = [item for item in out if item.bucket == bucket]
        return out

    # -- faults ------------------------------------------------------------------

    def lose_response(
        self,
        *,
        method: str = "PUT",
        key: str | None = None,
        times: int = 1,
        status: str = "500 Internal Server Error",
        code: str = "InternalError",
    ) -> Fault:
        """Store the next matching request, then answer ``status`` (a lost response).

        botocore retries the default 500; a ``"501 Not Implemented"`` it
        gives up on at once, so the outcome stays unknown to the client.
        """
        return self.inject(Fault("lose_response", method, key, times, status=status, code=code))

    def reset_body(
        self, *, after_bytes: int, key: str | None = None, method: str = "GET", times: int = 1
    ) -> Fault:
        """Cut the connection after ``after_bytes`` of the next matching response body."""
        return self.inject(Fault("reset_body", method, key, times, after_bytes))

    def fail(
        self,
        status: str,
        code: str,
        *,
        times: int = 1,
        method: str | None = None,
        key: str | None = None,
    ) -> Fault:
        """Answer the next ``times`` matching requests with an S3 error, storing nothing."""
        return self.inject(Fault("error", method, key, times, status=status, code=code))

    def slow_down(self, *, times: int, method: str | None = None, key: str | None = None) -> Fault:
        """Answer the next ``times`` matching requests with 503 SlowDown."""
        return self.fail("503 Slow Down", "SlowDown", times=times, method=method, key=key)

    # -- WSGI ----------------------------------------------------------------------

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        """The middleware: record, maybe inject a fault, else forward to moto under the lock."""
        if environ.get(_INTERNAL_HEADER):
            status, headers, body = self._forward(environ)
            start_response(status, headers)
            return [body]
        method = str(environ.get("REQUEST_METHOD", "GET"))
        path = str(environ.get("PATH_INFO", "/"))
        query = dict(parse_qsl(str(environ.get("QUERY_STRING", "")), keep_blank_values=True))
        headers_seen = {
            name: str(environ[key]) for name, key in _RECORDED_HEADERS.items() if key in environ
        }
        key = path.lstrip("/").split("/", 1)[1] if "/" in path.lstrip("/") else ""
        fault = self._take_fault(lambda armed: armed.matches(method, key))

        def record(status: int) -> None:
            self._record(RecordedRequest(method, path, query, headers_seen, status))

        if fault is not None and fault.kind == "error":
            self._drain(environ)
            record(int(fault.status.split(" ", 1)[0]))
            return self._error(
                start_response, fault.status, fault.code, "Injected by the emulator."
            )
        status, headers, body = self._forward(environ)
        if fault is not None and fault.kind == "lose_response":
            line = fault.status or "500 Internal Server Error"
            record(int(line.split(" ", 1)[0]))
            return self._error(
                start_response,
                line,
                fault.code or "InternalError",
                "We encountered an internal error. Please try again.",
            )
        if fault is not None and fault.kind == "reset_body":
            record(0)
            start_response(status, headers)
            return self._cut(environ, body, fault.after_bytes)
        record(int(status.split(" ", 1)[0]))
        start_response(status, headers)
        return [body]

    def _forward(self, environ: dict[str, Any]) -> tuple[str, list[tuple[str, str]], bytes]:
        """Run moto on the request, whole, under the store lock (S3 is atomic; moto is not)."""
        captured: dict[str, Any] = {}

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            captured["status"] = status
            captured["headers"] = headers
            return lambda data: None

        with self._store_lock:
            result = self._app(environ, capture)
            try:
                body = b"".join(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
        return str(captured["status"]), list(captured["headers"]), body

    @staticmethod
    def _drain(environ: dict[str, Any]) -> None:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        if length:
            environ["wsgi.input"].read(length)

    @staticmethod
    def _error(start_response: StartResponse, status: str, code: str, message: str) -> list[bytes]:
        body = _error_body(code, message)
        start_response(
            status,
            [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))],
        )
        return [body]

    @staticmethod
    def _cut(environ: dict[str, Any], body: bytes, after: int) -> Iterator[bytes]:
        """Send part of the body, then drop the connection like a network reset."""
        if after:
            yield body[:after]
        sock = environ.get("werkzeug.socket")
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        # werkzeug treats ConnectionError from the app as a dropped connection (no log).
        raise ConnectionResetError("fsseam emulator: injected reset")


_FINAL = ("501 Not Implemented", "NotImplemented")
"""The status and error code botocore gives up on at once (it retries a 500)."""

_ANSWERS: dict[Answer, tuple[str, str, str]] = {
    "retried": ("lose_response", "500 Internal Server Error", "InternalError"),
    "unknown": ("lose_response", *_FINAL),
    "refused": ("error", *_FINAL),
}
"""Each answer as a middleware fault: its kind, status line and S3 error code."""

_METHODS: dict[Change, str] = {"write": "PUT", "delete": "DELETE"}


class S3EmulatorFaults(StoreFaults):
    """:class:`~fsseam.testing.faults.StoreFaults` on the moto middleware, for one bucket.

    Writes are ``PUT`` requests, reads ``GET`` requests, deletes ``DELETE``
    requests. botocore retries the lost 500; it gives up on a 501 at once.
    """

    def __init__(self, server: S3Emulator) -> None:
        self.server = server

    def arm(self, change: Change, answer: Answer) -> Fault:
        kind, status, code = _ANSWERS[answer]
        return self.server.inject(Fault(kind, _METHODS[change], status=status, code=code))

    def cut_read(self, after_bytes: int) -> Fault:
        return self.server.reset_body(after_bytes=after_bytes)

    def heal(self) -> None:
        self.server.clear_faults()


class S3RequestLog(RequestLog):
    """:class:`~fsseam.testing.faults.RequestLog` of the requests the emulator received."""


_EMULATOR: S3Emulator | None = None
_EMULATOR_LOCK = threading.Lock()


def s3_emulator() -> S3Emulator:
    """The process-wide S3 emulator, started on first use."""
    global _EMULATOR
    with _EMULATOR_LOCK:
        if _EMULATOR is None:
            _EMULATOR = S3Emulator().start()
        return _EMULATOR
