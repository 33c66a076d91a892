"""The ``mount`` fixture: every backend, mounted at ``<top>/ws`` with neighbours outside."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fsseam.testing.mounts import BACKENDS, Mount, mount_backend


@pytest.fixture(params=BACKENDS)
def mount(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Mount]:
    """A fresh workspace on each backend, its neighbours planted (see ``Mount``)."""
    for mounted in mount_backend(request, tmp_path, request.param):
        mounted.plant_neighbours()
        yield mounted
