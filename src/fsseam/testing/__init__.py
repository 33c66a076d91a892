"""The reusable conformance suite: run every seam contract line against a backend.

Ship-and-subclass, like ``fsspec/tests/abstract``::

    from fsseam.testing import ConformanceSuite, FileSystemFixtures

    class MyStoreFixtures(FileSystemFixtures):
        @pytest.fixture
        def fs(self):
            yield open_fs("mystore://bucket/" + uuid.uuid4().hex)

    class TestMyStore(ConformanceSuite, MyStoreFixtures):
        pass

Each concern is a class of its own (``WriteSuite``, ``ConcurrencySuite``...,
one module each under ``fsseam.testing.suite``) for a backend that wants a
subset. ``FileSystemFixtures`` documents the optional fixtures (``fs_spec`` for
cross-process tests, ``supports_symlinks``, ``native_root``, ``faults`` and
``wire`` for a store behind a network: see :mod:`fsseam.testing.faults`). A
capability a backend declares False skips only its own tests; the guard
semantics run on every store. :mod:`fsseam.testing.harness` has helpers for
tests above the seam (tools, sessions, a delegating ``FileSystem``, a
``Harness`` on every backend); :mod:`fsseam.testing.mounts` mounts every
shipped backend below its store's top with neighbours outside, and
:mod:`fsseam.testing.mount_faults` breaks such a mount's wire.
"""

import pytest

# Before the suite modules are imported, so their asserts explain themselves. A
# package name covers its submodules (every ``fsseam.testing.suite.*`` module).
pytest.register_assert_rewrite(
    "fsseam.testing.suite", "fsseam.testing.fixtures", "fsseam.testing._support"
)

from fsseam.testing import suite  # noqa: E402
from fsseam.testing.faults import (  # noqa: E402
    Answer,
    ArmedFault,
    Change,
    ProxyFaults,
    ProxyRequestLog,
    RequestLog,
    StoreFaults,
)
from fsseam.testing.fixtures import (  # noqa: E402
    FileSystemFixtures,
    FileSystemOpener,
    FsSpec,
    FsspecRawStore,
    RawStore,
    SymlinkMaker,
)
from fsseam.testing.harness import DelegatingFileSystem  # noqa: E402
from fsseam.testing.suite import *  # noqa: E402, F403

__all__ = [
    "Answer",
    "ArmedFault",
    "Change",
    "DelegatingFileSystem",
    "FileSystemFixtures",
    "FileSystemOpener",
    "FsSpec",
    "FsspecRawStore",
    "ProxyFaults",
    "ProxyRequestLog",
    "RawStore",
    "RequestLog",
    "StoreFaults",
    "SymlinkMaker",
]
# The suite classes are listed once, in ``fsseam.testing.suite``.
__all__ += suite.__all__
