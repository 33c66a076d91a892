"""Azurite (the Azure Blob emulator) on a free 127.0.0.1 port, behind a :class:`RecordingProxy`.

Azurite is a Node package, so the project installs it with npm next to
``pyproject.toml`` (``npm install``) and this module runs its blob server
directly with ``node``; ``npx`` would leave the server orphaned when killed.
Set ``FSSEAM_AZURITE_DIR`` to a directory holding ``node_modules/azurite`` to
use another installation.

::

    server = azurite_server()                  # once per process
    url, options = server.new_container()      # fresh, empty container (AzureContainer)
    fs = open_fs(url, **options)
    server.proxy.requests                      # what reached the wire
"""

from __future__ import annotations

import atexit
import contextlib
import http.client
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, NamedTuple

import fsspec

from fsseam.testing.emulators import free_port
from fsseam.testing.emulators.proxy import RecordingProxy

__all__ = [
    "ACCOUNT_KEY",
    "ACCOUNT_NAME",
    "AzureContainer",
    "AzuriteServer",
    "azurite_main",
    "azurite_server",
    "connection_string",
]

ACCOUNT_NAME = "devstoreaccount1"
"""Azurite's well-known development account."""
ACCOUNT_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
"""Azurite's well-known (public) development account key."""

_MAIN = Path("node_modules", "azurite", "dist", "src", "blob", "main.js")
_ENV_DIR = "FSSEAM_AZURITE_DIR"
_START_TIMEOUT = 60.0
_INSTALL_HINT = (
    "Azurite is not installed. From the repository root (the directory with pyproject.toml) "
    "run:  npm install   (or: npm install azurite), or point FSSEAM_AZURITE_DIR at a "
    "directory that contains node_modules/azurite"
)


class AzureContainer(NamedTuple):
    """A fresh container: the root URL and the storage options that mount it."""

    url: str
    """``az://<container>``."""
    storage_options: dict[str, Any]
    """Options for ``open_fs`` / ``adlfs.AzureBlobFileSystem`` (endpoint is the proxy)."""


def connection_string(port: int) -> str:
    """A connection string for the development account served on ``127.0.0.1:port``."""
    return (
        "DefaultEndpointsProtocol=http;"
        f"AccountName={ACCOUNT_NAME};AccountKey={ACCOUNT_KEY};"
        f"BlobEndpoint=http://127.0.0.1:{port}/{ACCOUNT_NAME};"
    )


def _repo_root() -> Path | None:
    """The nearest directory above this module holding ``pyproject.toml``."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "pyproject.toml").is_file():
            return parent
    return None


def azurite_main() -> Path:
    """Path of Azurite's blob server script; raises with the install command when missing."""
    candidates: list[Path] = []
    override = os.environ.get(_ENV_DIR)
    if override:
        candidates.append(Path(override).expanduser())
    root = _repo_root()
    if root is not None:
        candidates.append(root)
    candidates.append(Path.cwd())
    for base in candidates:
        main = base / _MAIN
        if main.is_file():
            return main
    looked = ", ".join(str(base / _MAIN) for base in candidates)
    raise RuntimeError(f"{_INSTALL_HINT} (looked for {looked})")


def _answers_http(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        conn.request("GET", f"/{ACCOUNT_NAME}?comp=list")
        conn.getresponse().read()
    except OSError:
        return False
    finally:
        conn.close()
    return True


class AzuriteServer:
    """A running Azurite blob server (in-memory) with a counting proxy in front.

    ``connection_string`` points at the proxy, so every request the code under
    test makes is recorded in ``proxy.requests`` and can be faulted with
    ``proxy.inject``. Containers are created directly on Azurite, unrecorded.
    """

    def __init__(self, node: str, main: Path) -> None:
        self._log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the server
            prefix="fsseam-azurite-", suffix=".log", delete=False
        )
        self.port = free_port()
        """Azurite's own port (unrecorded)."""
        self._process = subprocess.Popen(
            [
                node,
                str(main),
                "--silent",
                "--inMemoryPersistence",
                "--disableTelemetry",
                "--loose",
                "--skipApiVersionCheck",
                "--blobHost",
                "127.0.0.1",
                "--blobPort",
                str(self.port),
            ],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            # Its own process group, so stop() also reaches anything node spawned.
            start_new_session=True,
        )
        atexit.register(self.stop)
        self.proxy = RecordingProxy("127.0.0.1", self.port)
        """The recording, fault-injecting proxy every client goes through."""
        self._admin: Any = None
        self._proxy_started = False
        self._stopped = False
        self._lock = threading.Lock()

    @property
    def connection_string(self) -> str:
        """Connection string through the recording proxy."""
        return connection_string(self.proxy.port)

    @property
    def direct_connection_string(self) -> str:
        """Connection string straight to Azurite (bypasses recording and faults)."""
        return connection_string(self.port)

    def storage_options(self) -> dict[str, Any]:
        """``open_fs`` storage options reaching this server through the proxy."""
        return {"connection_string": self.connection_string}

    def _log_tail(self) -> str:
        try:
            return Path(self._log.name).read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def wait_ready(self, timeout: float = _START_TIMEOUT) -> None:
        """Block until Azurite answers HTTP; raise with its log if it dies or stalls."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"Azurite exited with status {self._process.returncode} before it was "
                    f"ready; its output:\n{self._log_tail()}"
                )
            if _answers_http(self.port):
                self.proxy.start()
                self._proxy_started = True
                return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(
            f"Azurite did not answer on 127.0.0.1:{self.port} within {timeout:.0f} s; "
            f"its output:\n{self._log_tail()}"
        )

    def new_container(self, prefix: str = "fsseam") -> AzureContainer:
        """Create a fresh, empty container: ``("az://name", storage_options)``.

        Names are unique, lowercase and 3-63 characters long (Azure's rule;
        a bad name only fails later, on the first write).
        """
        name = f"{prefix}-{uuid.uuid4().hex}"[:63].lower()
        with self._lock:
            if self._admin is None:
                self._admin = fsspec.filesystem(
                    "az",
                    connection_string=self.direct_connection_string,
                    skip_instance_cache=True,
                    use_listings_cache=False,
                )
            admin = self._admin
        admin.mkdir(name)
        return AzureContainer(f"az://{name}", self.storage_options())

    def stop(self) -> None:
        """Stop the proxy and Azurite's whole process group; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        if self._proxy_started:  # shutdown() would wait forever on a proxy never served
            self.proxy.stop()
        if self._process.poll() is None:
            try:
                os.killpg(self._process.pid, signal.SIGTERM)
                self._process.wait(timeout=5)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                os.killpg(self._process.pid, signal.SIGKILL)
                self._process.wait(timeout=5)
        self._log.close()
        with contextlib.suppress(OSError):
            os.unlink(self._log.name)


_server: AzuriteServer | None = None
_server_lock = threading.Lock()


def _start() -> AzuriteServer:
    node = shutil.which("node")
    if node is None:
        raise RuntimeError(
            "Azurite needs Node.js on PATH (apt-get install nodejs npm); "
            "then run npm install in the repository root"
        )
    main = azurite_main()
    for _ in range(2):
        server = AzuriteServer(node, main)
        try:
            server.wait_ready()
        except RuntimeError:
            server.stop()
            continue  # most likely the free port was taken meanwhile: try another
        return server
    server = AzuriteServer(node, main)
    server.wait_ready()
    return server


def azurite_server() -> AzuriteServer:
    """The process-wide Azurite server, started on first use (stopped at exit)."""
    global _server
    with _server_lock:
        if _server is None or _server._stopped:
            _server = _start()
        return _server
