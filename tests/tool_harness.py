"""The harness of the tool-level tests: local disk, memory, and (by fixture) the cloud stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest

from fsseam import DiscoveryTools, FsspecFileSystem, open_fs
from tests.support import Harness, make_context

STORES = [
    "local",
    "memory",
    pytest.param("s3", marks=pytest.mark.s3),
    pytest.param("gcs", marks=pytest.mark.gcs),
    pytest.param("azure", marks=pytest.mark.azure),
]
"""``params`` for a harness fixture on every store (the cloud ones through their emulators)."""


def harness_for(
    request: pytest.FixtureRequest, tmp_path: Path, **options: int
) -> Iterator[Harness]:
    """:func:`make_harness` for ``request.param``; a cloud store's mount comes from its fixture."""
    kind = request.param
    if kind in ("local", "memory"):
        yield from make_harness(kind, tmp_path, **options)
        return
    mounted: FsspecFileSystem = request.getfixturevalue(f"{kind}_fs")
    raw = mounted.fs
    base = mounted.root.split("://", 1)[1].rstrip("/")
    yield Harness(
        make_context(mounted, **options),
        lambda rel, data: raw.pipe_file(f"{base}/{rel}", data),
        lambda rel: bytes(raw.cat_file(f"{base}/{rel}")),
        mounted.root.rstrip("/"),
    )


def make_harness(
    kind: str, tmp_path: Path, *, discovery: bool = False, **options: int
) -> Iterator[Harness]:
    """Yield a :class:`Harness` on local disk (``"local"``) or the memory store (``"memory"``)."""
    if kind == "local":
        fs = open_fs(str(tmp_path))

        def put(rel: str, data: bytes) -> None:
            path = tmp_path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

        def get(rel: str) -> bytes:
            return (tmp_path / rel).read_bytes()

        ctx = make_context(fs, **options)
        if discovery:
            ctx.plugin(DiscoveryTools())
        yield Harness(ctx, put, get, str(tmp_path))
        return
    name = f"/tools-{tmp_path.name}"
    fs = open_fs(f"memory://{name}")
    mem = fsspec.filesystem("memory")
    ctx = make_context(fs, **options)
    if discovery:
        ctx.plugin(DiscoveryTools())
    yield Harness(
        ctx,
        lambda rel, data: mem.pipe_file(f"{name}/{rel}", data),
        lambda rel: bytes(mem.cat_file(f"{name}/{rel}")),
        f"memory://{name}",
    )
    mem.rm(name, recursive=True)
