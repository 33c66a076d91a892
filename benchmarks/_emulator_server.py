"""The moto S3 emulator in a process of its own, for benchmarks.

    python benchmarks/_emulator_server.py

Starts :class:`fsseam.testing.emulators.s3.S3Emulator` (moto behind fsseam's
serialising, recording middleware) on a free 127.0.0.1 port, prints
``READY http://127.0.0.1:PORT`` on stdout and serves until its stdin closes
(so it never outlives the benchmark that started it) or it is killed.

Keeping the emulator out of the measured process matters twice: the big-file
probe's peak RSS must not include moto's copy of the object, and the client
threads of the contention benchmark must not share a GIL with the server.

A few control routes sit next to the S3 API (never recorded, never faulted):

- ``POST /_fsseam/bucket`` creates a fresh bucket and answers its name;
- ``GET /_fsseam/requests?bucket=NAME`` answers the requests recorded for that
  bucket as JSON ``[[method, path, query, status], ...]``;
- ``POST /_fsseam/reset`` forgets the recorded requests.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any
from urllib.parse import parse_qs

from moto.moto_server.werkzeug_app import MotoRequestHandler
from werkzeug.serving import make_server

from fsseam.testing.emulators.s3 import S3Emulator

CONTROL = "/_fsseam/"


class _QuietHandler(MotoRequestHandler):
    """No log line per request."""

    def log_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _app(emulator: S3Emulator) -> Any:
    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        path = str(environ.get("PATH_INFO", ""))
        if not path.startswith(CONTROL):
            return emulator(environ, start_response)  # type: ignore[return-value]
        action = path[len(CONTROL) :]
        if action == "bucket":
            body = emulator.new_bucket().name.encode()
        elif action == "requests":
            query = parse_qs(str(environ.get("QUERY_STRING", "")))
            bucket = query.get("bucket", [None])[0]
            body = json.dumps(
                [
                    [item.method, item.path, item.query, item.status]
                    for item in emulator.requests(bucket)
                ]
            ).encode()
        elif action == "reset":
            emulator.reset()
            body = b"ok"
        else:
            start_response("404 Not Found", [("Content-Length", "0")])
            return [b""]
        start_response("200 OK", [("Content-Length", str(len(body)))])
        return [body]

    return app


def main() -> None:
    emulator = S3Emulator()
    server = make_server(
        "127.0.0.1", 0, _app(emulator), threaded=True, request_handler=_QuietHandler
    )
    emulator.endpoint_url = f"http://127.0.0.1:{server.server_port}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"READY {emulator.endpoint_url}", flush=True)
    sys.stdin.read()  # returns when the parent closes the pipe or exits
    os._exit(0)


if __name__ == "__main__":
    main()
