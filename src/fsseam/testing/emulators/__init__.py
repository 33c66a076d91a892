"""Store emulators started on free 127.0.0.1 ports, for tests and benchmarks.

Each module starts one emulator once per process and hands out fresh buckets;
``fixtures`` modules expose them to pytest. Requests can be counted and faults
injected at the emulator's HTTP layer, so the real dialect code runs.
"""

from __future__ import annotations

import socket
import subprocess

__all__ = ["free_port", "stop_process"]


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now (the emulator binds it next)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def stop_process(
    process: subprocess.Popen[bytes] | subprocess.Popen[str], timeout: float = 10
) -> None:
    """Terminate ``process`` and wait for it; kill it if it has not exited within ``timeout``."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout)
