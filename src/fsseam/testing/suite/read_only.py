"""Read-only mounts and declared ``capabilities``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from fsseam.seam import CreateIfAbsent, FileSystem, FsEditRequest, ReplaceIfVersion
from fsseam.testing._support import E, async_test, expect_error
from fsseam.testing._worker import read_versioned
from fsseam.testing.fixtures import RawStore
from fsseam.testing.suite._helpers import names, read, version, write

__all__ = ["CapabilitySuite", "ReadOnlySuite"]


class ReadOnlySuite:
    """Read-only mode: every mutation is ``FS_SANDBOX_DENIED`` and changes nothing."""

    def test_read_only_capability_is_declared(
        self, fs: FileSystem, fs_read_only: FileSystem
    ) -> None:
        assert fs_read_only.capabilities.read_only is True
        assert fs.capabilities.read_only is False

    @async_test
    async def test_read_only_still_reads(self, fs: FileSystem, fs_read_only: FileSystem) -> None:
        outcome = await write(fs, "dir/a.txt", "hello\n")
        ro = fs_read_only
        assert await read(ro, "dir/a.txt") == "hello\n"
        assert await version(ro, "dir/a.txt") == outcome.version
        assert await names(ro, "dir") == ["a.txt"]
        info = await ro.lstat("dir/a.txt")
        assert info is not None
        _, streamed = await read_versioned(ro, await ro.resolve("dir/a.txt"))
        assert streamed == outcome.version

    @async_test
    async def test_read_only_refuses_every_mutation(
        self, fs: FileSystem, fs_read_only: FileSystem, raw: RawStore
    ) -> None:
        current = (await write(fs, "a.txt", "keep\n")).version
        ro = fs_read_only
        existing = await ro.resolve("a.txt")
        fresh = await ro.resolve("new/b.txt")
        edit = FsEditRequest("keep", "x")
        attempts: dict[str, Callable[[], Awaitable[object]]] = {
            "write": lambda: ro.write_text(existing, "x"),
            "write existing CreateIfAbsent": lambda: ro.write_text(existing, "x", CreateIfAbsent()),
            "write ReplaceIfVersion": lambda: ro.write_text(
                existing, "x", ReplaceIfVersion(current)
            ),
            "write new file": lambda: ro.write_text(fresh, "x"),
            "write new CreateIfAbsent": lambda: ro.write_text(fresh, "x", CreateIfAbsent()),
            "edit": lambda: ro.edit_text(existing, edit),
            "edit guarded": lambda: ro.edit_text(existing, edit, current),
            "edit without match": lambda: ro.edit_text(existing, FsEditRequest("?", "x")),
        }
        for label, attempt in attempts.items():
            try:
                await expect_error(E.FS_SANDBOX_DENIED, attempt())
            except AssertionError as exc:
                raise AssertionError(f"{label}: {exc}") from exc
        assert await version(fs, "a.txt") == current
        assert await fs.stat(fresh) is None
        assert await names(fs) == ["a.txt"]
        assert raw.read_bytes("a.txt") == b"keep\n"


class CapabilitySuite:
    """``capabilities``: declared flags, and what they promise."""

    def test_capabilities_are_booleans_and_writable_by_default(self, fs: FileSystem) -> None:
        caps = fs.capabilities
        assert isinstance(caps.atomic_conditional_write, bool)
        assert caps.read_only is False

    def test_capabilities_atomic_conditional_write_as_declared(
        self, fs: FileSystem, expected_atomic_conditional_write: bool | None
    ) -> None:
        if expected_atomic_conditional_write is None:
            pytest.skip("the backend does not pin expected_atomic_conditional_write")
        assert fs.capabilities.atomic_conditional_write is expected_atomic_conditional_write
