"""Round trips: how many requests each operation sends the store (stores with a ``wire``).

A tool call's latency on an object store is its number of round trips, so
they are a contract: a read is one request (its response carries the version
of exactly the bytes streamed), a create one conditional write. A guarded
replace or edit at a version whose bytes the mount already holds (it read or
wrote them) is the conditional write alone; at a version it never saw (a
cache miss: the version came from elsewhere), a read and the write. Unguarded
writes and edits read first, to retry a lost race. The counts come from the
backend's ``expected_round_trips`` fixture (default
:data:`~fsseam.testing.fixtures.ROUND_TRIPS`).
"""

from __future__ import annotations

from collections.abc import Awaitable

from fsseam.seam import (
    CreateIfAbsent,
    FileSystem,
    FsEditOutcome,
    FsEditRequest,
    FsWriteOutcome,
    ReplaceIfVersion,
)
from fsseam.testing._support import async_test
from fsseam.testing._worker import read_versioned
from fsseam.testing.faults import RequestLog
from fsseam.testing.fixtures import RawStore
from fsseam.testing.suite._helpers import counted, version

__all__ = ["RoundTripSuite"]

SOURCE = "".join(f"line {i:04d}: some ordinary source text, about sixty bytes\n" for i in range(70))
"""An ordinary ~4 KB text file."""


class RoundTripSuite:
    """Requests per operation, counted on the wire."""

    @async_test
    async def test_round_trips_per_operation(
        self,
        fs: FileSystem,
        raw: RawStore,
        wire: RequestLog | None,
        expected_round_trips: dict[str, int],
    ) -> None:
        requests = counted(wire)
        seen: dict[str, int] = {}

        async def measure(name: str, call: Awaitable[object]) -> object:
            requests.clear()
            result = await call
            seen[name] = requests.count()
            return result

        target = await fs.resolve("dir/a.txt")
        created = await measure("create", fs.write_text(target, "a\n", CreateIfAbsent()))
        assert isinstance(created, FsWriteOutcome)
        await measure("read_text", fs.read_text(target))
        await measure("stream_text", read_versioned(fs, target))
        await measure("stat", fs.stat(target))
        await measure("replace", fs.write_text(target, "b\n", ReplaceIfVersion(created.version)))
        await measure("write_unguarded", fs.write_text(target, "c\n"))
        await measure("edit", fs.edit_text(target, FsEditRequest("c", "d")))
        await measure("list_dir", fs.list_dir(await fs.resolve("dir")))

        # A session's read of a 4 KB file, then guarded changes at that version.
        source = await fs.resolve("src.txt")
        await fs.write_text(source, SOURCE)
        _, read_at = await read_versioned(fs, source)
        edited = await measure(
            "edit_after_read",
            fs.edit_text(source, FsEditRequest("line 0010", "LINE 0010"), read_at),
        )
        assert isinstance(edited, FsEditOutcome)
        many = await measure(
            "multi_edit_after_read",
            fs.edit_text_many(
                source,
                [FsEditRequest("line 0020", "LINE 0020"), FsEditRequest("line 0030", "X")],
                edited.version,
            ),
        )
        assert isinstance(many, FsEditOutcome)
        await measure(
            "replace_after_read",
            fs.write_text(source, SOURCE, ReplaceIfVersion(many.version)),
        )

        # Versions this mount never saw the bytes of (they come from elsewhere).
        for name, call in (
            ("replace_cache_miss", None),
            ("edit_cache_miss", FsEditRequest("line 0040", "LINE 0040")),
            ("multi_edit_cache_miss", [FsEditRequest("line 0050", "LINE 0050")]),
        ):
            raw.write_bytes(f"{name}.txt", SOURCE.encode())
            other = await fs.resolve(f"{name}.txt")
            at = await version(fs, f"{name}.txt")
            if call is None:
                work: Awaitable[object] = fs.write_text(other, "new\n", ReplaceIfVersion(at))
            elif isinstance(call, list):
                work = fs.edit_text_many(other, call, at)
            else:
                work = fs.edit_text(other, call, at)
            await measure(name, work)
        assert seen == expected_round_trips
