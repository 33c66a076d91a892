"""The conformance suite: every line of the seam contract (DESIGN.md), as tests.

A backend opts in by combining :class:`ConformanceSuite` with its fixtures::

    class TestMyStore(ConformanceSuite, MyStoreFixtures):
        pass

The suite is split per concern, like ``fsspec/tests/abstract``: one module
each for paths, stat, reads, listing, writes, edits, multi-edits, read-only
mounts, concurrency, symlinks, local disk, discovery, round trips on the wire,
guarded writes under faults, conflicts (the change shown, the same bytes,
clean rebases), and delete and move. Each concern is a class of its own
(``EditSuite``, ``GuardedWriteSuite``...) for a backend that wants to run a
part. No class here is named ``Test*``, so pytest collects them only through a
backend's subclass.

Tests are plain synchronous functions to pytest: most are written ``async
def`` under :func:`~fsseam.testing._support.async_test`, which drives each
with one ``asyncio.run``, so no async plugin is needed and no test assumes
which loop a store's client lives on.
"""

from fsseam.testing.suite.concurrency import ConcurrencySuite, CrossProcessSuite
from fsseam.testing.suite.conflicts import ConflictSuite
from fsseam.testing.suite.discovery import DiscoverySuite
from fsseam.testing.suite.edits import EditSuite
from fsseam.testing.suite.guards import GuardedWriteSuite
from fsseam.testing.suite.listing import ListDirSuite
from fsseam.testing.suite.local_disk import LocalDiskSuite
from fsseam.testing.suite.manage import ManageSuite
from fsseam.testing.suite.manage_tools import ManageToolSuite
from fsseam.testing.suite.multi_edit import MultiEditSuite
from fsseam.testing.suite.paths import ResolveSuite
from fsseam.testing.suite.read_only import CapabilitySuite, ReadOnlySuite
from fsseam.testing.suite.reads import ReadSuite, StreamSuite
from fsseam.testing.suite.round_trips import RoundTripSuite
from fsseam.testing.suite.stats import StatSuite
from fsseam.testing.suite.symlinks import SymlinkSuite
from fsseam.testing.suite.writes import WriteSuite

__all__ = [
    "CapabilitySuite",
    "ConcurrencySuite",
    "ConflictSuite",
    "ConformanceSuite",
    "CrossProcessSuite",
    "DiscoverySuite",
    "EditSuite",
    "GuardedWriteSuite",
    "ListDirSuite",
    "LocalDiskSuite",
    "ManageSuite",
    "ManageToolSuite",
    "MultiEditSuite",
    "ReadOnlySuite",
    "ReadSuite",
    "ResolveSuite",
    "RoundTripSuite",
    "StatSuite",
    "StreamSuite",
    "SymlinkSuite",
    "WriteSuite",
]


class ConformanceSuite(
    ResolveSuite,
    StatSuite,
    ReadSuite,
    StreamSuite,
    ListDirSuite,
    WriteSuite,
    EditSuite,
    ReadOnlySuite,
    CapabilitySuite,
    ConcurrencySuite,
    CrossProcessSuite,
    SymlinkSuite,
    LocalDiskSuite,
    DiscoverySuite,
    MultiEditSuite,
    GuardedWriteSuite,
    RoundTripSuite,
    ManageSuite,
    ManageToolSuite,
    ConflictSuite,
):
    """Every contract line of the seam, for one backend.

    Combine it with a :class:`~fsseam.testing.FileSystemFixtures` subclass;
    the fixtures' flags decide which store-specific sections run.
    """
