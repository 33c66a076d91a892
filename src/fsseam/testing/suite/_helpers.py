"""One-call shorthands over a ``FileSystem``, and checks of the store, the suite's tests share."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

import pytest

from fsseam.backends import FsspecFileSystem
from fsseam.seam import (
    FileSystem,
    FsError,
    FsInfo,
    FsPathInfo,
    FsTarget,
    FsVersion,
    FsWriteIntent,
    FsWriteOutcome,
)
from fsseam.testing.faults import RequestLog
from fsseam.testing.fixtures import FsspecRawStore, RawStore, SymlinkMaker

T = TypeVar("T")


async def write(
    fs: FileSystem, path: str, content: str, expected: FsWriteIntent | None = None
) -> FsWriteOutcome:
    """Resolve ``path`` and write ``content`` to it."""
    return await fs.write_text(await fs.resolve(path), content, expected)


async def written(
    fs: FileSystem, path: str, content: str, expected: FsWriteIntent | None = None
) -> tuple[FsTarget, FsWriteOutcome]:
    """Write ``content`` to ``path``, then resolve it: the target and the write's outcome."""
    outcome = await write(fs, path, content, expected)
    return await fs.resolve(path), outcome


async def stat_of(fs: FileSystem, target: FsTarget) -> FsInfo:
    """``fs.stat(target)`` of a file that must exist."""
    info = await fs.stat(target)
    assert info is not None, f"{target.display_path} does not exist"
    return info


async def lstat_of(fs: FileSystem, path: str, *, cwd: str | None = None) -> FsPathInfo:
    """``fs.lstat(path)`` of a path that must exist."""
    info = await fs.lstat(path, cwd=cwd)
    assert info is not None, f"{path} does not exist"
    return info


async def read(fs: FileSystem, path: str) -> str:
    """Resolve ``path`` and read its text."""
    return await fs.read_text(await fs.resolve(path))


async def version(fs: FileSystem, path: str) -> FsVersion:
    """The current version of the file at ``path`` (which must exist)."""
    info = await fs.stat(await fs.resolve(path))
    assert info is not None, f"{path} should exist"
    return info.version


async def names(fs: FileSystem, path: str = ".") -> list[str]:
    """Names ``list_dir`` reports for ``path``."""
    return [entry.name for entry in await fs.list_dir(await fs.resolve(path))]


async def linked_tree(fs: FileSystem, make_symlink: SymlinkMaker) -> None:
    """``dir/real.txt``, with ``link.txt`` pointing at it and ``alias`` pointing at ``dir``."""
    await write(fs, "dir/real.txt", "real\n")
    make_symlink("link.txt", "dir/real.txt")
    make_symlink("alias", "dir")


def given(value: T | None, missing: str) -> T:
    """``value``, an optional fixture of the backend; skips the test when it is ``None``.

    ``missing`` says what the backend lacks, for the skip reason.
    """
    if value is None:
        pytest.skip(missing)
    return value


def exists(raw: RawStore, path: str) -> bool:
    """Whether the store holds ``path`` (behind the seam's back)."""
    try:
        raw.read_bytes(path)
    except FileNotFoundError:
        return False
    return True


def assert_stored(raw: RawStore, files: Mapping[str, bytes | None]) -> None:
    """The store holds exactly these bytes at these paths (``None``: the path is absent)."""
    for path, data in files.items():
        if data is None:
            assert not exists(raw, path), f"{path} should not exist"
        else:
            assert raw.read_bytes(path) == data, path


Failures = dict[str, Callable[[], Awaitable[object]]]
"""Calls that must each fail, by what they try (``"read a missing file"``)."""


async def failure_texts(fs: FileSystem, failures: Failures) -> list[tuple[str, str]]:
    """``(what, "CODE: message")`` of each failure on ``fs``, the root spelled ``<ROOT>``.

    Fails the test if one of the calls succeeds.
    """
    root = (await fs.resolve(".")).display_path.rstrip("/")
    texts: list[tuple[str, str]] = []
    for label, failure in failures.items():
        try:
            await failure()
        except FsError as exc:
            texts.append((label, f"{exc.code.value}: {exc}".replace(root, "<ROOT>")))
        else:
            pytest.fail(f"{label} succeeded on {root}")
    return texts


async def assert_worded_as_on_local_disk(
    setup: Callable[[FileSystem, RawStore], Awaitable[Failures]],
    fs: FileSystem,
    raw: RawStore,
    reference_fs: FsspecFileSystem,
) -> None:
    """The failures ``setup`` arranges read as on local disk, but for the path."""
    reference_raw = FsspecRawStore(reference_fs.fs, reference_fs.root)
    reference = await failure_texts(reference_fs, await setup(reference_fs, reference_raw))
    ours = await failure_texts(fs, await setup(fs, raw))
    for (label, expected), (_, got) in zip(reference, ours, strict=True):
        assert got == expected, f"{label}: {got!r} differs from local disk's {expected!r}"


def counted(wire: RequestLog | None) -> RequestLog:
    """The backend's ``wire``; skips the test when the store's requests cannot be counted."""
    return given(wire, "the backend gives no `wire` fixture to count its store's requests")
