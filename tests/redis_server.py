"""The tests' real ``redis-server`` (:mod:`fsseam.testing.emulators.redis`).

A machine without it fails these tests with the install command instead of
skipping them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from fsseam.testing.emulators.redis import RedisNotStarted, free_port
from fsseam.testing.emulators.redis import redis_server as _started

__all__ = ["free_port", "redis_server"]


@contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """Start ``redis-server`` and yield its URL; a failure to start fails the test."""
    try:
        with _started(workdir) as url:
            yield url
    except RedisNotStarted as exc:
        pytest.fail(str(exc))
