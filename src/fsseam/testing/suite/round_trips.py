"""Round trips: how many requests each operation sends the store (stores with a ``wire``).

A tool call's latency on an object store is its number of round trips, so
they are a contract: a read is one request (its response carries the version
of exactly the bytes streamed), a create one conditional write, a replace or
an edit a read and one conditional write. The counts come from the backend's
``expected_round_trips`` fixture (default :data:`~fsseam.testing.fixtures.ROUND_TRIPS`).
"""

from __future__ import annotations

from collections.abc import Awaitable

import pytest

from fsseam.seam import (
    CreateIfAbsent,
    FileSystem,
    FsEditRequest,
    FsWriteOutcome,
    ReplaceIfVersion,
)
from fsseam.testing._support import run
from fsseam.testing._worker import read_versioned
from fsseam.testing.faults import RequestLog

__all__ = ["RoundTripSuite"]


class RoundTripSuite:
    """Requests per operation, counted on the wire."""

    @pytest.fixture
    def counted(self, wire: RequestLog | None) -> RequestLog:
        """The backend's ``wire``; skips the test when requests cannot be counted."""
        if wire is None:
            pytest.skip("the backend gives no `wire` fixture to count its store's requests")
        return wire

    def test_round_trips_per_operation(
        self, fs: FileSystem, counted: RequestLog, expected_round_trips: dict[str, int]
    ) -> None:
        async def body() -> dict[str, int]:
            seen: dict[str, int] = {}

            async def measure(name: str, call: Awaitable[object]) -> object:
                counted.clear()
                result = await call
                seen[name] = counted.count()
                return result

            target = await fs.resolve("dir/a.txt")
            created = await measure("create", fs.write_text(target, "a\n", CreateIfAbsent()))
            assert isinstance(created, FsWriteOutcome)
            await measure("read_text", fs.read_text(target))
            await measure("stream_text", read_versioned(fs, target))
            await measure("stat", fs.stat(target))
            await measure(
                "replace", fs.write_text(target, "b\n", ReplaceIfVersion(created.version))
            )
            await measure("write_unguarded", fs.write_text(target, "c\n"))
            await measure("edit", fs.edit_text(target, FsEditRequest("c", "d")))
            await measure("list_dir", fs.list_dir(await fs.resolve("dir")))
            return seen

        assert run(body()) == expected_round_trips
