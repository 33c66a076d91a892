"""A real ``redis-server`` on a free 127.0.0.1 port: no persistence, stopped by PID.

For the observation-store tests and ``benchmarks/http_serve.py``. ``.ci/run``
installs Debian's ``redis-server``; without it :func:`redis_server` raises
with the install command rather than letting a caller skip the store.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fsseam.testing.emulators import free_port, stop_process

__all__ = ["RedisNotStarted", "free_port", "redis_server"]


class RedisNotStarted(RuntimeError):
    """``redis-server`` is missing or did not answer within the start deadline."""


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextmanager
def redis_server(workdir: Path, *, start_seconds: float = 10.0) -> Iterator[str]:
    """Start ``redis-server`` in ``workdir`` and yield its ``redis://127.0.0.1:PORT/0`` URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RedisNotStarted("redis-server is not installed: apt-get install -y redis-server")
    port = free_port()
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--dir", str(workdir), "--loglevel", "warning"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + start_seconds
        while not _answers(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RedisNotStarted(f"redis-server did not start on port {port}")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop_process(process)
