"""What a backend provides to the conformance suite: fixtures and capability flags.

Subclass :class:`FileSystemFixtures`, override ``fs`` (and whatever else the
store can offer), then opt in to the tests::

    class TestMyStore(ConformanceSuite, MyStoreFixtures):
        pass

Every fixture below is function-scoped. The defaults are the most
conservative answers ("no second mount", "no symlinks", "not local disk"), so
a backend that provides nothing but ``fs`` still runs every guard test and
skips only what it has no means to exercise.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeAlias

import fsspec
import pytest

from fsseam.backends import DEFAULT_MAX_EDIT_BYTES, FsspecFileSystem, open_fs
from fsseam.seam import FileSystem
from fsseam.testing.faults import RequestLog, StoreFaults

__all__ = [
    "ROUND_TRIPS",
    "FileSystemFixtures",
    "FileSystemOpener",
    "FsSpec",
    "FsspecRawStore",
    "RawStore",
    "SymlinkMaker",
]

FsSpec: TypeAlias = tuple[str, dict[str, Any]]
"""``(url, storage_options)`` for :func:`fsseam.backends.open_fs`, picklable."""

ROUND_TRIPS: dict[str, int] = {
    "create": 1,
    "read_text": 1,
    "stream_text": 1,
    "stat": 1,
    "replace": 1,
    "write_unguarded": 2,
    "edit": 2,
    "list_dir": 1,
    "edit_after_read": 1,
    "multi_edit_after_read": 1,
    "replace_after_read": 1,
    "replace_cache_miss": 2,
    "edit_cache_miss": 2,
    "multi_edit_cache_miss": 2,
}
"""Requests per operation on an object store.

One each; a guarded replace or edit at a version the mount read or wrote is
the conditional write alone (its bytes are in the content cache), at a
version it never saw a read and the write; unguarded writes and edits read
first.
"""

SymlinkMaker: TypeAlias = Callable[[str, str], None]
"""``make_symlink(link, target)``: create ``link`` (relative to the root) pointing at
``target``, an absolute OS path or a path relative to the link's directory (as ``ln -s``)."""


class FileSystemOpener(Protocol):
    """Mount the root of the ``fs`` under test a second time, with other options."""

    def __call__(
        self, *, read_only: bool = False, max_edit_bytes: int = DEFAULT_MAX_EDIT_BYTES
    ) -> FileSystem:
        """A new :class:`FileSystem` on the very same root."""


class RawStore(ABC):
    """Byte-level access to the store behind the seam's back.

    The suite uses it to plant bytes the seam cannot write (invalid UTF-8), to
    check the exact bytes stored (BOM, line endings), to delete objects, and to
    list names the seam hides (temp files). Paths are relative to the root,
    with ``/`` as separator.
    """

    @abstractmethod
    def read_bytes(self, path: str) -> bytes:
        """The stored bytes; raises ``FileNotFoundError`` when absent."""

    @abstractmethod
    def write_bytes(self, path: str, data: bytes) -> None:
        """Store ``data``, creating parents as needed."""

    @abstractmethod
    def delete(self, path: str) -> None:
        """Remove one file."""

    @abstractmethod
    def names(self, directory: str = "") -> list[str]:
        """Every name directly under ``directory`` ("" is the root), hidden ones included."""


class FsspecRawStore(RawStore):
    """:class:`RawStore` over the fsspec instance an :class:`FsspecFileSystem` wraps."""

    def __init__(self, fs: fsspec.AbstractFileSystem, root: str) -> None:
        self._fs = fs
        self._root = root.rstrip("/")

    def _path(self, path: str) -> str:
        return f"{self._root}/{path}" if path else self._root

    def read_bytes(self, path: str) -> bytes:
        data: bytes = self._fs.cat_file(self._path(path))
        return data

    def write_bytes(self, path: str, data: bytes) -> None:
        full = self._path(path)
        parent = full.rsplit("/", 1)[0]
        if parent and parent != self._root:
            self._fs.makedirs(parent, exist_ok=True)
        self._fs.pipe_file(full, data)
        self._fs.invalidate_cache(parent)

    def delete(self, path: str) -> None:
        self._fs.rm_file(self._path(path))
        self._fs.invalidate_cache(self._path(path).rsplit("/", 1)[0])

    def names(self, directory: str = "") -> list[str]:
        full = self._path(directory)
        self._fs.invalidate_cache(full)
        listed = self._fs.ls(full, detail=False)
        return sorted(str(item).rstrip("/").rsplit("/", 1)[-1] for item in listed)


class FileSystemFixtures:
    """Fixtures a backend overrides to run :class:`~fsseam.testing.ConformanceSuite`.

    Only ``fs`` is mandatory. The rest describe what the store can do, so the
    suite knows which tests apply; a flag left at its default skips only the
    tests of that one ability, never the guard semantics.
    """

    @pytest.fixture
    def fs(self) -> FileSystem:
        """A FRESH :class:`FileSystem` whose root is empty (override this)."""
        raise NotImplementedError(
            "override the `fs` fixture to yield a FileSystem on a fresh, empty root"
        )

    @pytest.fixture
    def fs_spec(self) -> FsSpec | None:
        """``(url, storage_options)`` another PROCESS can pass to ``open_fs`` to mount the root.

        ``None`` (the default) skips the cross-process tests: an in-memory store
        cannot be shared with a subprocess.
        """
        return None

    @pytest.fixture
    def reopen_fs(self, fs: FileSystem, fs_spec: FsSpec | None) -> FileSystemOpener:
        """Mount the root of ``fs`` again (read-only, another ``max_edit_bytes``).

        Built from ``fs_spec`` by default; skips the test when there is none.
        Stores that cannot be reached from another process but can be mounted
        twice in this one (the memory store) override this instead.
        """
        if fs_spec is None:
            pytest.skip("the backend gives no fs_spec (nor reopen_fs) to mount its root again")
        url, options = fs_spec

        def reopen(
            *, read_only: bool = False, max_edit_bytes: int = DEFAULT_MAX_EDIT_BYTES
        ) -> FileSystem:
            return open_fs(url, read_only=read_only, max_edit_bytes=max_edit_bytes, **options)

        return reopen

    @pytest.fixture
    def fs_read_only(self, reopen_fs: FileSystemOpener) -> FileSystem:
        """A read-only :class:`FileSystem` on the same root as ``fs``."""
        return reopen_fs(read_only=True)

    @pytest.fixture
    def raw(self, fs: FileSystem) -> RawStore:
        """Byte-level access to the root of ``fs``; built for any ``FsspecFileSystem``."""
        if not isinstance(fs, FsspecFileSystem):
            pytest.skip("override the `raw` fixture to give byte-level access to this store")
        return FsspecRawStore(fs.fs, fs.root)

    @pytest.fixture
    def native_root(self) -> Path | None:
        """The root as an OS directory when the store IS local disk, else ``None``.

        Enables the local-only tests: file modes and a writer killed before
        its rename.
        """
        return None

    @pytest.fixture
    def supports_symlinks(self) -> bool:
        """True when the store has symlinks (local disk); enables the symlink tests."""
        return False

    @pytest.fixture
    def make_symlink(self, supports_symlinks: bool, native_root: Path | None) -> SymlinkMaker:
        """Create a symlink inside the root (see :data:`SymlinkMaker`).

        Skips the test when ``supports_symlinks`` is False; works out of the
        box when ``native_root`` is given.
        """
        if not supports_symlinks:
            pytest.skip("the backend declares no symlinks (supports_symlinks is False)")
        if native_root is None:
            raise NotImplementedError(
                "supports_symlinks is True: give `native_root` or override `make_symlink`"
            )
        root = native_root

        def make(link: str, target: str) -> None:
            where = root / link
            where.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, where)

        return make

    @pytest.fixture
    def outside_dir(self) -> Path:
        """An empty OS directory OUTSIDE the root, for symlinks that lead out of it."""
        pytest.skip("the backend gives no outside_dir")

    @pytest.fixture
    def unique_versions_per_write(self) -> bool:
        """True when every write yields a new version, even of identical bytes.

        Holds for local stat identity, GCS generations and Azure ETags; a store
        whose version is derived from content (the generic dialect's hash, an
        unversioned S3 ETag) declares False and skips only that test.
        """
        return True

    @pytest.fixture
    def guarded_delete(self) -> bool:
        """True when the store enforces a delete's precondition, so delete and move work.

        A store that ignores it (Ceph RGW before 20: its dialect's probe finds
        the ``delete-precondition-ignored`` quirk) declares False: the
        :class:`~fsseam.testing.ManageSuite` then proves that every delete and
        move is refused (``FS_SANDBOX_DENIED``) with nothing deleted or written,
        instead of proving that they work.
        """
        return True

    @pytest.fixture
    def faults(self) -> StoreFaults:
        """Faults on the wire between ``fs`` and its store (see :mod:`fsseam.testing.faults`).

        Enables the lost-answer, unknown-outcome and cut-read tests of
        :class:`~fsseam.testing.GuardedWriteSuite`. Skips them by default: a
        store with no network (local disk, memory) has no answer to lose.
        """
        pytest.skip(
            "the backend gives no `faults` fixture (a fsseam.testing.faults.StoreFaults, "
            "e.g. ProxyFaults over a RecordingProxy in front of the store)"
        )

    @pytest.fixture
    def wire(self) -> RequestLog | None:
        """Counts the requests ``fs`` sends its store; ``None`` skips the round-trip tests."""
        return None

    @pytest.fixture
    def expected_round_trips(self) -> dict[str, int]:
        """Requests each operation may cost when ``wire`` counts them (see ``RoundTripSuite``)."""
        return dict(ROUND_TRIPS)

    @pytest.fixture
    def reference_fs(self, tmp_path_factory: pytest.TempPathFactory) -> FsspecFileSystem:
        """A fresh local-disk root whose error texts every store must match, path aside."""
        return open_fs(str(tmp_path_factory.mktemp("reference")))

    @pytest.fixture
    def expected_atomic_conditional_write(self) -> bool | None:
        """What ``fs.capabilities.atomic_conditional_write`` must be (``None``: not checked).

        Pinning it stops a regression to False from silently skipping the
        cross-process tests.
        """
        return None
