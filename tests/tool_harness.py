"""The local + memory harness of the tool-level tests, for test modules that need it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import fsspec

from fsseam import DiscoveryTools, open_fs
from tests.support import Harness, make_context


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
