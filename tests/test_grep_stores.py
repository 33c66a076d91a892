"""grep, glob and ls on S3, GCS and Azure: the text of local disk, listing pages only, real RTTs.

Two kinds of test:

- the same small tree (binary, non-UTF-8, BOM, CRLF, long lines, nesting)
  on local disk and on each emulator must give byte-identical answers,
  caps included (the emulators the conformance tests use);
- 1,000 objects of about 6 KB behind a layer that delays every request by
  20 ms, as a real region does (``benchmarks/_latency.py``, in a process of
  its own so its threads do not share this process's GIL): grep costs one GET
  per object plus the listing pages and finishes well under the 20 s that
  waiting for the GETs one after another takes, and glob and ls cost listing
  pages only. Requests are counted where they reach the store. The issue's
  6 s on an otherwise idle machine is measured by ``benchmarks/latency.py``
  (docs/benchmarks.md, "Round-trip times"), not here: on a loaded CI machine
  the client SDK's CPU per GET, not the RTT, sets the time.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fsspec
import pytest

from fsseam import Context, DiscoveryTools, FsspecFileSystem, open_fs

REPO = Path(__file__).resolve().parents[1]


def _latency_module() -> Any:
    spec = importlib.util.spec_from_file_location(
        "fsseam_bench_latency", REPO / "benchmarks" / "_latency.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


latency = _latency_module()

SMALL_TREE = {
    "README.md": b"# needle in a tree\n",
    "a/one.txt": b"needle\nhay\nneedle again\n",
    "a/b/deep.txt": b"hay\r\nneedle with CRLF\r\n",
    "a/b/c/deeper.txt": b"no match here\n",
    "a-b.txt": b"needle sorts before a/\n",
    "bin/blob.bin": b"\x00needle\n",
    "enc/latin1.txt": b"needle caf\xe9\n",
    "enc/bom.txt": "\ufeffneedle after a BOM\n".encode(),
    "long/min.js": b"x" * 3000 + b"needle" + b"y" * 3000 + b"needle\n",
    "z/empty.txt": b"",
    ".git/config": b"needle in a denied directory\n",
    "a/.env": b"needle=secret\n",
}

QUERIES: list[tuple[str, dict[str, Any], dict[str, int]]] = [
    ("grep", {"pattern": "needle"}, {}),
    ("grep", {"pattern": "needle", "glob": "*.txt"}, {}),
    ("grep", {"pattern": "NEEDLE", "ignore_case": True, "path": "a"}, {}),
    ("grep", {"pattern": "needle"}, {"grep_limit": 3}),
    ("grep", {"pattern": "needle"}, {"max_grep_bytes": 50}),
    ("grep", {"pattern": "needle"}, {"max_grep_bytes": 6040}),
    ("grep", {"pattern": "needle"}, {"max_entries": 6}),
    ("grep", {"pattern": "^needle$"}, {}),
    ("glob", {"pattern": "**/*.txt"}, {}),
    ("glob", {"pattern": "a/**"}, {}),
    ("ls", {"path": "a"}, {}),
]


def answers(fs: FsspecFileSystem) -> list[str]:
    out = []
    for tool, args, limits in QUERIES:
        ctx = Context(fs)
        ctx.plugin(DiscoveryTools(**limits))
        out.append(ctx.tools.execute_sync(tool, args, None).text.replace(fs.root, "<ROOT>"))
    return out


def local_answers(tmp_path: Path, tree: dict[str, bytes]) -> list[str]:
    for rel, data in tree.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    return answers(open_fs(str(tmp_path)))


def _fill(fs: FsspecFileSystem, tree: dict[str, bytes]) -> None:
    root = fs.root.split("://", 1)[1]
    fs.fs.pipe({f"{root}/{rel}": data for rel, data in tree.items()})


@pytest.mark.s3
def test_grep_glob_ls_on_s3_equal_local_disk(s3_fs: FsspecFileSystem, tmp_path: Path) -> None:
    _fill(s3_fs, SMALL_TREE)
    assert answers(s3_fs) == local_answers(tmp_path, SMALL_TREE)


@pytest.mark.gcs
def test_grep_glob_ls_on_gcs_equal_local_disk(gcs_fs: FsspecFileSystem, tmp_path: Path) -> None:
    _fill(gcs_fs, SMALL_TREE)
    assert answers(gcs_fs) == local_answers(tmp_path, SMALL_TREE)


@pytest.mark.azure
def test_grep_glob_ls_on_azure_equal_local_disk(azure_fs: FsspecFileSystem, tmp_path: Path) -> None:
    _fill(azure_fs, SMALL_TREE)
    assert answers(azure_fs) == local_answers(tmp_path, SMALL_TREE)


# -- 1,000 objects at 20 ms per request ----------------------------------------------------

RTT_MS = 20
DIRECTORIES = 10
OBJECTS = 1000


def big_tree() -> dict[str, bytes]:
    tree = {}
    for i in range(OBJECTS):
        rows = [
            f"{i:04} row {n}: {'needle' if (i * 31 + n) % 997 == 0 else 'hay'}" for n in range(90)
        ]
        tree[f"d{i % DIRECTORIES}/f{i:04}.txt"] = ("\n".join(rows) + "\n").encode()
    return tree


@dataclass
class Remote:
    """A workspace of the big tree behind a delaying, counting layer."""

    url: str
    options: dict[str, Any]
    server: Any  # latency.LatencyS3 or latency.LatencyProxy
    is_listing: Callable[[str, str, str], bool]

    def mount(self) -> FsspecFileSystem:
        return open_fs(self.url, **self.options)


def _s3_remote() -> Iterator[Remote]:
    server = latency.LatencyS3(0)
    try:
        bucket = server.new_bucket()
        server.fill(bucket, big_tree())
        yield Remote(
            f"s3://{bucket}",
            server.storage_options(),
            server,
            lambda method, path, query: "list-type=2" in query,
        )
    finally:
        server.stop()


def _gcs_remote() -> Iterator[Remote]:
    from fsseam.testing.emulators.gcs import gcs_emulator

    emulator = gcs_emulator()
    made = emulator.new_bucket()
    name = made.url.removeprefix("gs://")
    direct = fsspec.filesystem(
        "gs",
        endpoint_url=emulator.direct_url,
        token="anon",
        project="test",
        skip_instance_cache=True,
    )
    direct.pipe({f"{name}/{rel}": data for rel, data in big_tree().items()})
    server = latency.LatencyProxy("127.0.0.1", emulator.port)
    try:
        options = {**made.storage_options, "endpoint_url": server.url}
        yield Remote(made.url, options, server, lambda m, path, q: path.endswith(f"/b/{name}/o"))
    finally:
        server.stop()


def _azure_remote() -> Iterator[Remote]:
    import shutil

    from fsseam.testing.emulators.azure import AzuriteServer, azurite_main, connection_string

    # An Azurite of its own: the session's one holds every blob the other tests
    # made, and its GETs slow down with them.
    node = shutil.which("node")
    assert node is not None, "Azurite needs Node.js on PATH"
    azurite = AzuriteServer(node, azurite_main())
    try:
        azurite.wait_ready()
        yield from _azure_on(azurite, connection_string)
    finally:
        azurite.stop()


def _azure_on(azurite: Any, connection_string: Callable[[int], str]) -> Iterator[Remote]:
    container = azurite.new_container()
    name = container.url.removeprefix("az://")
    direct = fsspec.filesystem(
        "az", connection_string=azurite.direct_connection_string, skip_instance_cache=True
    )
    direct.pipe({f"{name}/{rel}": data for rel, data in big_tree().items()})
    server = latency.LatencyProxy("127.0.0.1", azurite.port)
    try:
        port = int(server.url.rsplit(":", 1)[1])
        yield Remote(
            container.url,
            {"connection_string": connection_string(port)},
            server,
            lambda m, p, query: "comp=list" in query,
        )
    finally:
        server.stop()


_REMOTES = {"s3": _s3_remote, "gcs": _gcs_remote, "azure": _azure_remote}


@pytest.fixture(
    scope="module",
    params=[
        pytest.param("s3", marks=pytest.mark.s3),
        pytest.param("gcs", marks=pytest.mark.gcs),
        pytest.param("azure", marks=pytest.mark.azure),
    ],
)
def remote(request: pytest.FixtureRequest) -> Iterator[Remote]:
    yield from _REMOTES[request.param]()


@pytest.fixture(scope="module")
def big_local(tmp_path_factory: pytest.TempPathFactory) -> FsspecFileSystem:
    root = tmp_path_factory.mktemp("big-tree")
    for rel, data in big_tree().items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return open_fs(str(root))


def run_tool(fs: FsspecFileSystem, tool: str, args: dict[str, Any]) -> str:
    ctx = Context(fs)
    ctx.plugin(DiscoveryTools())
    result = ctx.tools.execute_sync(tool, args, None)
    assert not result.is_error, result.text
    return result.text.replace(fs.root, "<ROOT>")


def counted(remote: Remote, fs: FsspecFileSystem, tool: str, args: dict[str, Any]) -> Any:
    """Run ``tool`` at RTT_MS per request; ``(text, seconds, listing, other)``."""
    run_tool(fs, "ls", {})  # connect and warm the client off the clock
    remote.server.set_rtt(RTT_MS)
    remote.server.reset()
    try:
        started = time.perf_counter()
        text = run_tool(fs, tool, args)
        seconds = time.perf_counter() - started
        print(f"{tool} {args}: {seconds:.2f} s at {RTT_MS} ms per request")
    finally:
        remote.server.set_rtt(0)
    seen = remote.server.requests()
    listing = [r for r in seen if remote.is_listing(*r)]
    others = [r for r in seen if not remote.is_listing(*r)]
    return text, seconds, listing, others


def test_grep_over_1000_objects_at_20_ms_is_fast_with_one_get_each(
    remote: Remote, big_local: FsspecFileSystem
) -> None:
    fs = remote.mount()
    args = {"pattern": "needle"}
    for _ in range(3):
        text, seconds, listing, others = counted(remote, fs, "grep", args)
        if seconds < 6:
            break
        # Other work on a shared 2-core machine can starve a run (the client SDK's
        # CPU per GET is most of the time): try again. Request counts are checked
        # on the last run.
    assert text == run_tool(big_local, "grep", args)
    assert text.endswith("(Found 91 matches in 91 files.)")
    assert len(listing) == DIRECTORIES + 1  # one page per directory, root included
    assert len(others) == OBJECTS
    assert all(method == "GET" for method, _, _ in others)
    # One GET after another waits OBJECTS x RTT (20 s) at least: under 12 s is
    # concurrency however loaded the machine (the 6 s goal: benchmarks/latency.py).
    sequential = OBJECTS * RTT_MS / 1000
    assert seconds < 0.6 * sequential, f"{seconds:.1f} s for {OBJECTS} objects at {RTT_MS} ms"


def test_glob_and_ls_over_1000_objects_cost_listing_pages_only(
    remote: Remote, big_local: FsspecFileSystem
) -> None:
    fs = remote.mount()
    for tool, args, pages in (
        ("glob", {"pattern": "**/*.txt"}, DIRECTORIES + 1),
        ("glob", {"pattern": "d3/*.txt"}, 1),
        ("ls", {"path": "d3"}, 1),
    ):
        text, _, listing, others = counted(remote, fs, tool, args)
        assert text == run_tool(big_local, tool, args), (tool, args)
        assert (len(listing), others) == (pages, []), (tool, args)
