"""Tool calls, grep and glob at real round-trip times (0 / 5 / 20 / 50 ms per request).

    python benchmarks/latency.py [--quick]              # this section alone, to stdout
    python benchmarks/latency.py [--quick] --write      # ...and into docs/benchmarks.md

Every request to a store waits the RTT first (``_latency.py``: moto in its own
process with a keep-alive server that sleeps before each request; fake-gcs-
server and Azurite behind a delaying RecordingProxy in its own process), and
requests wait concurrently, as on a network. At each RTT, side by side in one
run:

- ``read`` / ``edit`` / overwrite (``write`` of a file the session read) per
  tool call, vs the naive fsspec way (``round_trips.py``'s baselines);
- ``grep`` over 1,000 and 10,000 objects of about 6 KB (one match in a few
  percent of them) vs a naive ``s3fs`` ``find`` + ``cat`` (its bulk ``cat``
  fetches concurrently) + a Python regex per line, and vs ``rg`` on a local
  copy of the same tree (no store, no RTT: the floor). ``rg`` comes from the
  ``ripgrep`` package (``apt-get install ripgrep``); without it that column
  says so;
- ``glob`` over the same trees vs ``find`` + ``fnmatch``;
- GCS and Azure: grep and glob over 1,000 objects vs gcsfs / adlfs ``find`` +
  ``cat``.

Then the peak RSS of a grep over 1,000 objects of 1 MiB on S3 at 20 ms, in a
process of its own (``_grep_memory_probe.py``).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import round_trips
from _common import (
    BACKEND_LABELS,
    HERE,
    REPO,
    Goal,
    Mount,
    Options,
    Section,
    interleave,
    median_ms,
    progress,
    pyplot,
    save_figure,
    standalone,
    table,
)
from _latency import LatencyProxy, LatencyS3

from fsseam import Context, DiscoveryTools, FsspecFileSystem, open_fs

RTTS = (0, 5, 20, 50)
PATTERN = "needle"
CALLS = ("read", "edit", "replace")


def tree(count: int) -> dict[str, bytes]:
    """``count`` files of about 6 KB in directories of 100; ~0.4% hold the word.

    Rare enough that grep never reaches its 100-match cap, so every file of
    the 10,000 is fetched and searched."""
    files = {}
    for i in range(count):
        rows = [
            f"{i:05} row {n}: {'needle' if (i * 31 + n) % 20011 == 0 else 'hay and straw'}"
            for n in range(80)
        ]
        files[f"d{i // 100:03}/f{i:05}.txt"] = ("\n".join(rows) + "\n").encode()
    return files


def _grep_tool(fs: FsspecFileSystem, tool: str, args: dict[str, Any]) -> str:
    ctx = Context(fs)
    ctx.plugin(DiscoveryTools())
    result = ctx.tools.execute_sync(tool, args, None)
    if result.is_error:
        raise AssertionError(result.text)
    return result.text


def naive_grep(fs: Any, root: str, pattern: str) -> int:
    """What a script would do with plain fsspec: list everything, fetch everything, search."""
    regex = re.compile(pattern)
    paths = fs.find(root)
    contents = fs.cat(paths)
    hits = 0
    for path in sorted(contents):
        for line in contents[path].decode("utf-8", "replace").splitlines():
            if regex.search(line):
                hits += 1
    return hits


def naive_glob(fs: Any, root: str, pattern: str) -> int:
    start = len(root.rstrip("/")) + 1
    return sum(1 for path in fs.find(root) if fnmatch.fnmatch(path[start:], pattern))


def rg_seconds(local: str) -> float | None:
    if shutil.which("rg") is None:
        return None
    started = time.perf_counter()
    subprocess.run(["rg", "-c", PATTERN, local], capture_output=True, check=False)
    return time.perf_counter() - started


def _timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


class _Stores:
    """The latency servers of this section, each in its own process."""

    def __init__(self) -> None:
        self.s3 = LatencyS3(0)
        self.gcs: LatencyProxy | None = None
        self.azure: LatencyProxy | None = None
        self._gcs_direct = ""
        self._azure_port = 0

    def start_gcs(self) -> None:
        from fsseam.testing.emulators.gcs import gcs_emulator

        emulator = gcs_emulator()
        self._gcs_emulator = emulator
        self.gcs = LatencyProxy("127.0.0.1", emulator.port)

    def start_azure(self) -> None:
        from fsseam.testing.emulators.azure import azurite_server

        self._azurite = azurite_server()
        self.azure = LatencyProxy("127.0.0.1", self._azurite.port)

    def servers(self) -> list[Any]:
        return [server for server in (self.s3, self.gcs, self.azure) if server is not None]

    def set_rtt(self, ms: float) -> None:
        for server in self.servers():
            server.set_rtt(ms)

    def mount(self, backend: str, files: dict[str, bytes] | None = None) -> Mount:
        """A fresh workspace on ``backend`` behind its latency layer, holding ``files``."""
        files = files or {}
        if backend == "s3":
            bucket = self.s3.new_bucket()
            items = list(files.items())
            for start in range(0, len(items), 500):
                self.s3.fill(bucket, dict(items[start : start + 500]))
            return Mount("s3", f"s3://{bucket}", self.s3.storage_options(), bucket)
        if backend == "gcs":
            import fsspec

            assert self.gcs is not None
            made = self._gcs_emulator.new_bucket()
            name = made.url.removeprefix("gs://")
            direct = fsspec.filesystem(
                "gs",
                endpoint_url=self._gcs_emulator.direct_url,
                token="anon",
                project="test",
                skip_instance_cache=True,
            )
            if files:
                direct.pipe({f"{name}/{rel}": data for rel, data in files.items()})
            options = {**made.storage_options, "endpoint_url": self.gcs.url}
            return Mount("gcs", made.url, options, name)
        if backend == "azure":
            import fsspec

            from fsseam.testing.emulators.azure import connection_string

            assert self.azure is not None
            container = self._azurite.new_container()
            name = container.url.removeprefix("az://")
            if files:
                direct = fsspec.filesystem(
                    "az",
                    connection_string=self._azurite.direct_connection_string,
                    skip_instance_cache=True,
                )
                direct.pipe({f"{name}/{rel}": data for rel, data in files.items()})
            port = int(self.azure.url.rsplit(":", 1)[1])
            return Mount(
                "azure", container.url, {"connection_string": connection_string(port)}, name
            )
        raise ValueError(backend)

    def stop(self) -> None:
        for server in self.servers():
            server.stop()


def _per_call(stores: _Stores, rtts: tuple[int, ...], runs: int) -> dict[str, Any]:
    """Median ms per tool call and per naive call, per store, op and RTT."""
    out: dict[str, Any] = {}
    for backend in ("s3", "gcs", "azure"):
        mount = stores.mount(backend)
        stores.set_rtt(0)
        ops = round_trips._ops(mount)
        for ours, naive in ops.values():
            ours()
            naive()
        for rtt in rtts:
            stores.set_rtt(rtt)
            progress(f"latency: tool calls on {mount.label} at {rtt} ms")
            pairs = {op: ops[op] for op in CALLS}
            samples = interleave(pairs, runs)
            for op in CALLS:
                ours_ns, naive_ns = samples[op]
                out[f"{backend}/{op}/{rtt}"] = (median_ms(ours_ns), median_ms(naive_ns))
        stores.set_rtt(0)
    return out


def _search(
    stores: _Stores, backend: str, count: int, rtts: tuple[int, ...], scratch: str
) -> dict[str, Any]:
    """grep and glob times (s) per RTT on ``backend`` over ``count`` objects."""
    files = tree(count)
    progress(f"latency: {count} objects on {BACKEND_LABELS[backend]}: filling")
    mount = stores.mount(backend, files)
    local = Path(tempfile.mkdtemp(dir=scratch, prefix=f"tree-{count}-"))
    for rel, data in files.items():
        (local / rel).parent.mkdir(parents=True, exist_ok=True)
        (local / rel).write_bytes(data)
    local_fs = open_fs(str(local))
    expected = _grep_tool(local_fs, "grep", {"pattern": PATTERN})
    if "(Found " not in expected:
        raise AssertionError("the benchmark grep must not reach a cap: " + expected[-200:])
    matches = expected.rsplit(" in ", 1)[-1].split(" ", 1)[0]
    results: dict[str, Any] = {"matches": matches}
    repeats = 3 if count <= 1000 else 1
    stores.set_rtt(0)
    _grep_tool(mount.fsseam(), "ls", {})
    for rtt in rtts:
        stores.set_rtt(rtt)
        progress(f"latency: grep and glob over {count} objects on {mount.label} at {rtt} ms")
        fs = mount.fsseam()
        _grep_tool(fs, "ls", {})  # connect off the clock
        cells: dict[str, list[float]] = {"grep": [], "naive_grep": [], "glob": [], "naive_glob": []}
        for repeat in range(repeats):

            def ours(fs: FsspecFileSystem = fs) -> None:
                text = _grep_tool(fs, "grep", {"pattern": PATTERN})
                if text.replace(fs.root, "") != expected.replace(str(local), ""):
                    raise AssertionError(f"grep on {mount.label} differs from local disk")

            def naive() -> None:
                naive_grep(mount.naive(), mount.naive_root, PATTERN)

            pair = [("grep", ours), ("naive_grep", naive)]
            for name, fn in pair if repeat % 2 == 0 else pair[::-1]:
                cells[name].append(_timed(fn))
            globs = [
                ("glob", lambda fs=fs: _grep_tool(fs, "glob", {"pattern": "**/*.txt"})),
                ("naive_glob", lambda: naive_glob(mount.naive(), mount.naive_root, "*/*.txt")),
            ]
            for name, fn in globs if repeat % 2 == 0 else globs[::-1]:
                cells[name].append(_timed(fn))
        results[str(rtt)] = {name: statistics.median(times) for name, times in cells.items()}
    stores.set_rtt(0)
    local_grep = _timed(lambda: _grep_tool(local_fs, "grep", {"pattern": PATTERN}))
    results["local"] = local_grep
    results["rg"] = rg_seconds(str(local))
    return results


def _memory(stores: _Stores, objects: int) -> dict[str, Any]:
    """Peak RSS of a grep over ``objects`` objects of 1 MiB on S3 at 20 ms, in its own process."""
    row = b"".join(
        b"%07d plain text that matches nothing in particular\n" % n for n in range(20_000)
    )
    body = row[: 1 << 20]
    bucket = stores.s3.new_bucket()
    progress(f"latency: filling {objects} objects of 1 MiB on S3 for the memory probe")
    for start in range(0, objects, 32):
        batch = {
            f"m{i // 100:02}/o{i:04}.txt": body for i in range(start, min(objects, start + 32))
        }
        stores.s3.fill(bucket, batch)
    stores.s3.set_rtt(20)
    try:
        done = subprocess.run(
            [sys.executable, str(HERE / "_grep_memory_probe.py"), stores.s3.url, bucket],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        )
    finally:
        stores.s3.set_rtt(0)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if not result["text"].startswith("No matches") or result["files"] != objects:
        raise AssertionError(f"the memory probe did not search every object: {result}")
    return result


def _s(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def section(opts: Options) -> Section:
    quick = opts.quick
    rtts = (0, 20) if quick else RTTS
    sizes = (1000,) if quick else (1000, 10_000)
    runs = 4 if quick else 10
    memory_objects = 200 if quick else 1000
    stores = _Stores()
    scratch = tempfile.mkdtemp(prefix="fsseam-latency-")
    try:
        memory = _memory(stores, memory_objects)
        stores.start_gcs()
        stores.start_azure()
        calls = _per_call(stores, rtts, runs)
        search: dict[str, dict[int, Any]] = {"s3": {}, "gcs": {}, "azure": {}}
        for count in sizes:
            search["s3"][count] = _search(stores, "s3", count, rtts, scratch)
        for backend in ("gcs", "azure"):
            search[backend][1000] = _search(stores, backend, 1000, rtts, scratch)
    finally:
        stores.stop()
        shutil.rmtree(scratch, ignore_errors=True)

    call_rows = []
    for backend in ("s3", "gcs", "azure"):
        for op in CALLS:
            cells = []
            for rtt in rtts:
                ours, naive = calls[f"{backend}/{op}/{rtt}"]
                cells.append(f"{ours:.1f} / {naive:.1f} ({ours / naive:.2f}×)")
            label = "overwrite" if op == "replace" else op
            call_rows.append([BACKEND_LABELS[backend], label, *cells])

    search_rows = []
    for backend, by_size in search.items():
        for count, result in by_size.items():
            for kind in ("grep", "glob"):
                cells = []
                for rtt in rtts:
                    cell = result[str(rtt)]
                    ours, naive = cell[kind], cell[f"naive_{kind}"]
                    cells.append(f"{_s(ours)} / {_s(naive)} ({ours / naive:.2f}×)")
                floor = (
                    f"fsseam {_s(result['local'])}, rg {_s(result['rg'])}" if kind == "grep" else ""
                )
                search_rows.append([BACKEND_LABELS[backend], f"{kind} {count:,}", *cells, floor])

    goals = []
    for backend in ("s3", "gcs", "azure"):
        if 20 in rtts:
            seconds = search[backend][1000]["20"]["grep"]
            goals.append(
                Goal(
                    f"grep over 1,000 objects at 20 ms, {BACKEND_LABELS[backend]}",
                    "< 6 s (goal < 2 s)",
                    f"{seconds:.2f} s (naive find + cat "
                    f"{search[backend][1000]['20']['naive_grep']:.2f} s)",
                    seconds < 6,
                )
            )
    goals.append(
        Goal(
            f"peak RSS, grep over {memory_objects:,} objects of 1 MiB on S3 at 20 ms",
            "< 200 MiB",
            f"{memory['peak_mib']:.0f} MiB (baseline {memory['baseline_mib']:.0f} MiB, "
            f"{memory['seconds']:.1f} s)",
            memory["peak_mib"] < 200,
        )
    )

    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for count, style in zip(sizes, ("-", "--"), strict=False):
        result = search["s3"][count]
        axes[0].plot(
            rtts,
            [result[str(r)]["grep"] for r in rtts],
            "o" + style,
            label=f"fsseam grep, {count:,} objects",
        )
        axes[0].plot(
            rtts,
            [result[str(r)]["naive_grep"] for r in rtts],
            "s" + style,
            label=f"s3fs find + cat, {count:,}",
        )
        if result["rg"] is not None:
            axes[0].axhline(result["rg"], linestyle=":", color="gray")
    axes[0].set_title("grep on S3 (moto); dotted: rg on a local copy")
    axes[0].set_yscale("log")
    axes[0].set_xlabel("RTT per request (ms)")
    axes[0].set_ylabel("seconds")
    axes[0].legend(fontsize=7)
    for backend in ("s3", "gcs", "azure"):
        result = search[backend][1000]
        axes[1].plot(
            rtts,
            [result[str(r)]["grep"] for r in rtts],
            "o-",
            label=f"fsseam, {BACKEND_LABELS[backend]}",
        )
        axes[1].plot(
            rtts,
            [result[str(r)]["naive_grep"] for r in rtts],
            "s--",
            label=f"naive, {BACKEND_LABELS[backend]}",
        )
    axes[1].set_title("grep over 1,000 objects")
    axes[1].set_yscale("log")
    axes[1].set_xlabel("RTT per request (ms)")
    axes[1].legend(fontsize=7)
    for op in CALLS:
        label = "overwrite" if op == "replace" else op
        axes[2].plot(rtts, [calls[f"s3/{op}/{r}"][0] for r in rtts], "o-", label=f"fsseam {label}")
        axes[2].plot(rtts, [calls[f"s3/{op}/{r}"][1] for r in rtts], "s--", label=f"naive {label}")
    axes[2].set_title("one tool call on S3 (moto)")
    axes[2].set_xlabel("RTT per request (ms)")
    axes[2].set_ylabel("ms")
    axes[2].legend(fontsize=7)
    for ax in axes:
        ax.grid(alpha=0.3)
    image = save_figure(fig, opts, "latency.png")

    rtt_heads = [f"{rtt} ms" for rtt in rtts]
    body = "\n\n".join(
        [
            "Every request to the store waits the RTT before it is served, each on its own "
            "thread, as on a network (`benchmarks/_latency.py`: moto in its own process behind "
            "a keep-alive server that sleeps first; fake-gcs-server and Azurite behind a "
            "delaying keep-alive proxy in its own process). All cells of one table come from "
            "this one run, fsseam and its baseline side by side.",
            "**One tool call**, median ms, fsseam / naive fsspec (ratio), "
            f"{runs} interleaved calls each (4 KB files; naive as in section *Requests per "
            "tool call*: read = `info` + `cat_file`, edit = `info` + `cat_file` + "
            "`pipe_file`, overwrite = `info` + `pipe_file`):",
            table(["store", "call", *rtt_heads], call_rows, "ll" + "r" * len(rtts)),
            "**grep and glob**, seconds, fsseam / naive (ratio), median of 3 alternating runs "
            "(1 run for 10,000 objects). Objects of about 6 KB in "
            f"directories of 100; grep for `{PATTERN}` (found in "
            + ", ".join(f"{r['matches']} files of {c:,}" for c, r in search["s3"].items())
            + "). Naive grep = `find` + bulk `cat` (concurrent in s3fs, gcsfs and adlfs) + a "
            "Python regex per line; naive glob = `find` + `fnmatch`. The last column is the "
            "same grep on a local copy of the tree (fsseam on local disk, and `rg -c`, "
            "ripgrep 13): the floor without a store. fsseam's text on each store was checked "
            "equal to its text on the local copy.",
            table(
                ["store", "search", *rtt_heads, "local copy"],
                search_rows,
                "ll" + "r" * len(rtts) + "l",
            ),
            f"![time against RTT]({image})",
            "Reading the numbers: a grep over an object store costs one GET per file; "
            "fetched 32 at a time, the RTT is hidden and what is left is the client SDK's CPU "
            "per request (botocore and the Azure SDK take a few ms per GET, more than "
            "fsseam's own search), so the grep time hardly grows with the RTT. The naive "
            "`find` + bulk `cat` is concurrent too on S3 and GCS, but has no caps, no "
            "binary or denied-file skipping, no containment, and holds every file in memory "
            "at once; adlfs' bulk `cat` is not concurrent, hence its growth with the RTT. "
            "glob (and grep's walk) lists one page per directory (a delimited listing, "
            "directory by directory), where `find` lists the whole prefix flat, 1,000 keys a "
            "page: on a tree of many small directories `find` needs fewer requests.",
            f"**Memory.** A grep over {memory_objects:,} objects of 1 MiB on S3 at 20 ms, in a "
            f"process of its own: peak RSS {memory['peak_mib']:.0f} MiB (after mounting and "
            f"one listing: {memory['baseline_mib']:.0f} MiB), {memory['seconds']:.1f} s for "
            f"{memory['files']:,} files and {memory['bytes'] / 2**20:,.0f} MiB of text. "
            "(The probe lifts grep's 64 MiB byte cap, so every object is fetched and searched.) "
            "At most 32 files are in flight and at most 32 MiB of them by listed size "
            "(`DiscoveryTools(grep_concurrency=32, grep_buffer_bytes=32 MiB)`); "
            "`tests/test_grep.py` checks the same bound in CI on 48 files of 1 MiB.",
        ]
    )
    return Section("latency", "Round-trip times: tool calls, grep and glob", body, goals, [image])


if __name__ == "__main__":
    standalone(section, __doc__, "benchmarks/latency.py")
