"""Shared helpers of the benchmark sections: stores, sessions, timing, tables.

Not a benchmark itself; see ``benchmarks/run.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

# gcsfs's experimental class probes every bucket over gRPC, which the emulator
# does not speak; the GCS dialect sets the same default.
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

import fsspec

from fsseam import (
    Agent,
    Context,
    FileTools,
    FsspecFileSystem,
    ObservationPolicy,
    ToolExecution,
    ToolResult,
    open_fs,
)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BACKEND_LABELS = {
    "local": "local disk",
    "memory": "memory",
    "s3": "S3 (moto)",
    "gcs": "GCS (fake-gcs-server)",
    "azure": "Azure (Azurite)",
}
CLOUD = ("s3", "gcs", "azure")

_T0 = time.monotonic()


def progress(message: str) -> None:
    """One progress line on stderr, with the time since the run started."""
    print(f"[{time.monotonic() - _T0:6.1f}s] {message}", file=sys.stderr, flush=True)


# -- sessions and tools ----------------------------------------------------------


class Session:
    """One agent conversation (the policy's owner)."""


def make_context(fs: FsspecFileSystem) -> Context:
    """A Context with the observation policy and the three tools."""
    ctx = Context(fs)
    ctx.plugin(ObservationPolicy())
    ctx.plugin(FileTools())
    return ctx


def new_run() -> ToolExecution:
    """A tool execution for a fresh agent session."""
    return ToolExecution(agent=Agent(session=Session()))


def ok(result: ToolResult) -> ToolResult:
    """``result``, or an AssertionError with its text."""
    if result.is_error:
        raise AssertionError(result.text)
    return result


# -- content ---------------------------------------------------------------------


def line(i: int, width: int = 100) -> str:
    """Line ``i`` (1-based) of a synthetic source file, ``width`` bytes with its newline."""
    head = f"{i:09d} = value({i % 97}) # "
    return head + "x" * (width - len(head) - 1) + "\n"


def make_text(size: int, width: int = 100) -> str:
    """About ``size`` bytes of ``width``-byte lines (at least one line)."""
    return "".join(line(i, width) for i in range(1, max(1, size // width) + 1))


def human(n: float) -> str:
    """``1.5 MB`` style sizes (decimal units, as in the issue)."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" or n >= 100 else f"{n:.3g} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


# -- timing ----------------------------------------------------------------------


def median_ms(samples: Sequence[float]) -> float:
    """Median of nanosecond samples, in milliseconds."""
    return statistics.median(samples) / 1e6


def timed(fn: Callable[[], object]) -> float:
    """Wall time of one call, in nanoseconds."""
    t0 = time.perf_counter_ns()
    fn()
    return float(time.perf_counter_ns() - t0)


def interleave(
    pairs: dict[str, tuple[Callable[[], object], Callable[[], object]]],
    runs: int,
    *,
    label: str = "",
) -> dict[str, tuple[list[float], list[float]]]:
    """Run each (ours, baseline) pair ``runs`` times, alternating which goes first.

    Returns nanosecond samples per pair. Side by side in one loop, so load
    spikes on a shared machine hit both sides alike.
    """
    samples: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in pairs}
    step = max(1, runs // 5)
    for i in range(runs):
        for name, (ours, base) in pairs.items():
            order = ((0, ours), (1, base)) if i % 2 == 0 else ((1, base), (0, ours))
            for slot, fn in order:
                samples[name][slot].append(timed(fn))
        if label and (i + 1) % step == 0:
            progress(f"  {label}: {i + 1}/{runs} rounds")
    return samples


# -- results ---------------------------------------------------------------------


@dataclass
class Goal:
    """One goal of the issue and what this run measured."""

    goal: str
    target: str
    measured: str
    met: bool


@dataclass
class Section:
    """What a benchmark section produced: markdown, charts and goals."""

    key: str
    title: str
    markdown: str
    goals: list[Goal] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    seconds: float = 0.0


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], align: str = "") -> str:
    """A markdown table; ``align`` is one letter per column (``l`` or ``r``, default l then r)."""
    if not align:
        align = "l" + "r" * (len(headers) - 1)
    marks = ["---:" if a == "r" else "---" for a in align]
    out = ["| " + " | ".join(headers) + " |", "| " + " | ".join(marks) + " |"]
    out.extend("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows)
    return "\n".join(out)


@dataclass
class Options:
    """How a section runs: quick or full, where charts go."""

    quick: bool
    img_dir: Path
    stores: Stores


def save_figure(fig: Any, opts: Options, name: str) -> str:
    """Save a matplotlib figure as ``img_dir/name``; returns the doc-relative path."""
    opts.img_dir.mkdir(parents=True, exist_ok=True)
    fig.savefig(opts.img_dir / name, dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return f"img/{name}"


def pyplot() -> Any:
    """matplotlib.pyplot with the non-interactive backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# -- stores ----------------------------------------------------------------------


class RemoteS3:
    """The moto emulator of ``_emulator_server.py``, running in its own process."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, str(HERE / "_emulator_server.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        assert self._process.stdout is not None
        ready = self._process.stdout.readline().split()
        if len(ready) != 2 or ready[0] != "READY":
            self.stop()
            raise RuntimeError(f"the S3 emulator did not start (said {ready!r})")
        self.endpoint_url = ready[1]

    @property
    def pid(self) -> int:
        """The emulator's process id."""
        return self._process.pid

    def _control(self, method: str, action: str, query: str = "") -> bytes:
        url = f"{self.endpoint_url}/_fsseam/{action}" + (f"?{query}" if query else "")
        request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(request, timeout=30) as response:
            data: bytes = response.read()
            return data

    def new_bucket(self) -> str:
        """A fresh bucket's name."""
        return self._control("POST", "bucket").decode()

    def requests(self, bucket: str) -> list[tuple[str, str, dict[str, str], int]]:
        """``(method, path, query, status)`` of each request recorded for ``bucket``."""
        raw = json.loads(self._control("GET", "requests", f"bucket={bucket}"))
        return [(str(m), str(p), dict(q), int(s)) for m, p, q, s in raw]

    def reset(self) -> None:
        """Forget the recorded requests."""
        self._control("POST", "reset")

    def storage_options(self) -> dict[str, Any]:
        """s3fs options (explicit test credentials; no region: see the emulator module)."""
        return {
            "endpoint_url": self.endpoint_url,
            "key": "fsseam-test",
            "secret": "fsseam-test-secret",
            "anon": False,
        }

    def stop(self) -> None:
        """Close its stdin (it exits), then make sure."""
        with contextlib.suppress(OSError):
            if self._process.stdin is not None:
                self._process.stdin.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.terminate()
            self._process.wait(timeout=5)


@dataclass
class Mount:
    """A fresh workspace on one backend, with a request counter where there is an emulator."""

    backend: str
    url: str
    """The workspace root URL (or local path)."""
    options: dict[str, Any]
    """Storage options for ``open_fs`` and for the naive fsspec instance."""
    naive_root: str
    """The root as a path of the naive fsspec instance."""
    _count: Callable[[], list[str]] | None = None
    _reset: Callable[[], None] | None = None

    @property
    def label(self) -> str:
        return BACKEND_LABELS[self.backend]

    def fsseam(self, **kwargs: Any) -> FsspecFileSystem:
        """``open_fs`` on this workspace."""
        return open_fs(self.url, **self.options, **kwargs)

    def naive(self) -> fsspec.AbstractFileSystem:
        """A plain fsspec instance on this store, default caches and all."""
        if self.backend == "local":
            return fsspec.filesystem("file")
        protocol = {"s3": "s3", "gcs": "gs", "azure": "az", "memory": "memory"}[self.backend]
        options = dict(self.options)
        if protocol != "memory":
            options["skip_instance_cache"] = True  # a fresh client; listing cache left on
        return fsspec.filesystem(protocol, **options)

    def naive_path(self, relative: str) -> str:
        """``relative`` as a path of the naive instance."""
        return f"{self.naive_root.rstrip('/')}/{relative}"

    def reset(self) -> None:
        """Forget the requests recorded so far."""
        if self._reset is not None:
            self._reset()

    def requests(self) -> list[str]:
        """``METHOD path`` of each request recorded since :meth:`reset`."""
        if self._count is None:
            raise RuntimeError(f"{self.backend} has no request counter")
        return self._count()


def _proxied(request: Any) -> str:
    """``METHOD path?query`` of a request the recording proxy saw."""
    return f"{request.method} {request.path}" + (f"?{request.query}" if request.query else "")


class Stores:
    """Starts the emulators on first use and hands out fresh workspaces."""

    def __init__(self) -> None:
        self._s3: RemoteS3 | None = None
        self._tmp = tempfile.mkdtemp(prefix="fsseam-bench-")

    @property
    def tmp(self) -> str:
        """A scratch directory removed by :meth:`close`."""
        return self._tmp

    def s3(self) -> RemoteS3:
        """The out-of-process moto server."""
        if self._s3 is None:
            progress("starting the S3 emulator (moto, own process)")
            self._s3 = RemoteS3()
        return self._s3

    def mount(self, backend: str) -> Mount:
        """A fresh, empty workspace on ``backend``."""
        if backend == "local":
            root = tempfile.mkdtemp(dir=self._tmp, prefix="ws-")
            return Mount("local", root, {}, root)
        if backend == "memory":
            name = f"bench-{uuid.uuid4().hex[:12]}"
            return Mount("memory", f"memory://{name}", {}, f"/{name}")
        if backend == "s3":
            server = self.s3()
            bucket = server.new_bucket()

            def s3_requests() -> list[str]:
                return [
                    f"{m} {p}" + (f"?{urlencode(q)}" if q else "") + f" → {status}"
                    for m, p, q, status in server.requests(bucket)
                ]

            return Mount(
                "s3", f"s3://{bucket}", server.storage_options(), bucket, s3_requests, server.reset
            )
        if backend == "gcs":
            from fsseam.testing.emulators.gcs import gcs_emulator

            if not hasattr(self, "_gcs_started"):
                progress("starting the GCS emulator (fake-gcs-server)")
                self._gcs_started = True
            gcs = gcs_emulator()
            made = gcs.new_bucket()
            name = made.url.removeprefix("gs://")
            return Mount(
                "gcs",
                made.url,
                dict(made.storage_options),
                name,
                lambda: [_proxied(r) for r in gcs.proxy.requests],
                gcs.proxy.reset,
            )
        if backend == "azure":
            from fsseam.testing.emulators.azure import azurite_server

            if not hasattr(self, "_azure_started"):
                progress("starting the Azure emulator (Azurite)")
                self._azure_started = True
            azure = azurite_server()
            container = azure.new_container()
            name = container.url.removeprefix("az://")
            return Mount(
                "azure",
                container.url,
                dict(container.storage_options),
                name,
                lambda: [_proxied(r) for r in azure.proxy.requests],
                azure.proxy.reset,
            )
        raise ValueError(f"unknown backend {backend!r}")

    def close(self) -> None:
        """Stop the S3 emulator and remove scratch files (GCS/Azure stop at exit)."""
        if self._s3 is not None:
            self._s3.stop()
            self._s3 = None
        shutil.rmtree(self._tmp, ignore_errors=True)


@contextlib.contextmanager
def stores() -> Iterator[Stores]:
    """A :class:`Stores` closed on exit."""
    made = Stores()
    try:
        yield made
    finally:
        made.close()


def run_async(coro: Any) -> Any:
    """``asyncio.run`` for one coroutine."""
    return asyncio.run(coro)


DOC = REPO / "docs" / "benchmarks.md"

_BLOCK = re.compile(r"<!-- (?P<name>[\w-]+): [^\n]*? -->\n.*?<!-- /(?P=name) -->", re.DOTALL)
"""A section a script writes on its own; ``run.py`` keeps these as they are."""


def standalone_blocks(text: str) -> list[str]:
    """The standalone sections of a benchmarks.md text, in order."""
    return [match.group(0) for match in _BLOCK.finditer(text)]


def write_block(result: Section, script: str, command: str, started: dt.datetime) -> Path:
    """Put ``result`` into docs/benchmarks.md between its markers (appended the first time)."""
    name = Path(script).stem
    begin = f"<!-- {name}: generated by {script} --write -->"
    end = f"<!-- /{name} -->"
    goals = "\n".join(
        f"- {'✅ met' if g.met else '❌ **missed**'}: {g.goal}, target {g.target}: {g.measured}"
        for g in result.goals
    )
    block = (
        f"{begin}\n## {result.title}\n\n"
        f"Run on its own: `{command}`, {started:%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f} at the end, in {result.seconds:.0f} s.\n\n"
        f"{goals}\n\n{result.markdown}\n{end}"
    )
    text = DOC.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip("\n") + "\n\n" + block
    DOC.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    return DOC


def standalone(
    section: Callable[[Options], Section], doc: str | None, script: str | None = None
) -> None:
    """``main()`` of a section module: run it alone and print it.

    A section that ``run.py`` does not run (``script`` given) can also ``--write``
    itself into docs/benchmarks.md, between markers ``run.py`` keeps.
    """
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer runs")
    if script is not None:
        parser.add_argument(
            "--write", action="store_true", help="put the section into docs/benchmarks.md"
        )
    parser.add_argument(
        "--img-dir", type=Path, default=None, help="where charts go (default: a temporary dir)"
    )
    args = parser.parse_args()
    writing = script is not None and args.write
    img_dir = args.img_dir or (
        DOC.parent / "img" if writing else Path(tempfile.mkdtemp(prefix="fsseam-bench-img-"))
    )
    started = dt.datetime.now(dt.UTC)
    t0 = time.monotonic()
    with stores() as made:
        result = section(Options(args.quick, img_dir, made))
    result.seconds = time.monotonic() - t0
    if writing:
        assert script is not None
        command = f"python {script}" + (" --quick" if args.quick else "") + " --write"
        progress(f"wrote {write_block(result, script, command, started)}")
        return
    print(f"## {result.title}\n\n{result.markdown}")
    for goal in result.goals:
        print(f"- {'MET' if goal.met else 'MISSED'}: {goal.goal} — {goal.measured}")
    print(f"\n(charts in {img_dir})", file=sys.stderr)


def profile(fn: Callable[[], object], calls: int, *, title: str) -> str:
    """A pyinstrument profile of ``calls`` calls of ``fn``, as markdown (tree and flat list).

    Used by sections to explain a missed goal in the document itself.
    """
    try:
        from pyinstrument import Profiler
    except ImportError:
        return f"*(no profile of {title}: pip install pyinstrument)*"
    profiler = Profiler(interval=0.0002)
    profiler.start()
    for _ in range(calls):
        fn()
    profiler.stop()
    percent = {"time": "percent_of_total"}
    tree = profiler.output_text(unicode=True, **percent).splitlines()  # type: ignore[arg-type]
    flat = profiler.output_text(unicode=True, flat=True, **percent).splitlines()  # type: ignore[arg-type]
    start = next((i for i, line in enumerate(tree) if line.startswith("100")), 0)
    body = [line for line in tree[start:] if line.strip()]
    flat_body = [line for line in flat if "%" in line][:15]
    session = profiler.last_session
    split = []
    if session is not None:
        from pyinstrument import processors

        root = session.root_frame()
        for step in (processors.aggregate_repeated_calls, processors.merge_consecutive_self_time):
            root = step(root, options={})
        split = _breakdown(root)
    return (
        (f"Where the time of {title} goes:\n\n" + "\n".join(split) + "\n\n" if split else "")
        + f"<details><summary>pyinstrument profile of {title} ({calls} calls)</summary>\n\n"
        "Call tree (share of total time):\n\n```\n"
        + "\n".join(body[:60])
        + "\n```\n\nHottest functions by own time:\n\n```\n"
        + "\n".join(flat_body)
        + "\n```\n\n</details>"
    )


def _frame_name(frame: Any) -> str:
    if frame.function == "[self]":
        return "its own code"
    owner = f"{frame.class_name}." if frame.class_name else ""
    path = str(frame.file_path or "")
    where = path.split("/src/", 1)[-1] if "/src/" in path else os.path.basename(path)
    return f"`{owner}{frame.function}` ({where}:{frame.line_no})"


def _through_wrappers(frame: Any) -> Any:
    """Follow a chain of frames that hand nearly all their time to one child."""
    while True:
        big = [c for c in frame.children if c.time >= 0.9 * frame.time]
        if len(big) != 1:
            return frame
        frame = big[0]


def _breakdown(root: Any) -> list[str]:
    """Bullets: the parts of the tool's ``run`` frame, with their shares of the total."""
    total = root.time or 1.0
    stack = [root]
    run = None
    while stack:
        frame = stack.pop()
        if frame.function == "run" and "fsseam/tools" in str(frame.file_path or ""):
            run = frame
            break
        stack.extend(frame.children)
    if run is None:
        return []
    out = []
    for child in sorted(run.children, key=lambda c: c.time, reverse=True):
        if child.time / total < 0.03:
            continue
        inner = _through_wrappers(child)
        subs = [
            f"{_frame_name(sub)} {sub.time / total:.0%}"
            for sub in sorted(inner.children, key=lambda c: c.time, reverse=True)
            if sub.time / total >= 0.03
        ][:4]
        out.append(
            f"- {_frame_name(child)}: **{child.time / total:.0%}**"
            + (f" — of which {', '.join(subs)}" if subs else "")
        )
    return out
