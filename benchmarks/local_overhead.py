"""fsseam's overhead on local disk against the plain-Python way, side by side.

    python benchmarks/local_overhead.py [--runs 200] [--quick]

Interleaves each fsseam call with its baseline in one process and reports the
medians and their ratio:

- read: the ``read`` tool on a 2000-line, ~36 KB file vs
  ``open().read().split("\\n")`` plus numbering the first 2000 lines;
- edit: the ``edit`` tool (session already read the file) vs read the text,
  ``str.replace`` once, write a ``tempfile.mkstemp`` in the same directory,
  ``fsync``, ``os.replace``;
- create and replace: the ``write`` tool vs mkstemp + fsync + ``os.replace``.

Also reports the absolute per-call cost on the memory store.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from fsseam import Agent, Context, FileTools, ObservationPolicy, ToolExecution, open_fs


class _Session:
    pass


def make_text(lines: int = 2000) -> str:
    # 20 bytes per line with its newline: 2000 lines is 40 KB, under the 50 KiB cap.
    return "".join(f"    value_{i:05d} = c\n" for i in range(lines))


def baseline_read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    return "\n".join(f"{i + 1}: {line}" for i, line in enumerate(lines[:2000]))


def baseline_write(path: str, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def baseline_edit(path: str, old: str, new: str) -> None:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    baseline_write(path, text.replace(old, new, 1))


def interleave(
    pairs: dict[str, tuple[Callable[[], object], Callable[[], object]]], runs: int, progress: bool
) -> dict[str, tuple[float, float]]:
    samples: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in pairs}
    for i in range(runs):
        for name, (ours, base) in pairs.items():
            order = ((0, ours), (1, base)) if i % 2 == 0 else ((1, base), (0, ours))
            for slot, fn in order:
                t0 = time.perf_counter_ns()
                fn()
                samples[name][slot].append(time.perf_counter_ns() - t0)
        if progress and (i + 1) % max(1, runs // 10) == 0:
            print(f"  {i + 1}/{runs} rounds", file=sys.stderr)
    return {
        k: (statistics.median(a) / 1e3, statistics.median(b) / 1e3) for k, (a, b) in samples.items()
    }


def run(runs: int, progress: bool = True) -> dict[str, tuple[float, float]]:
    with tempfile.TemporaryDirectory() as root:
        text = make_text()
        Path(root, "read.txt").write_text(text)
        Path(root, "base_read.txt").write_text(text)
        Path(root, "edit.txt").write_text(text + "marker alpha\n")
        Path(root, "base_edit.txt").write_text(text + "marker alpha\n")
        ctx = Context(open_fs(root))
        ctx.plugin(ObservationPolicy())
        ctx.plugin(FileTools())
        session = ToolExecution(agent=Agent(session=_Session()))
        execute = ctx.tools.execute_sync
        assert not execute("read", {"file_path": "edit.txt"}, session).is_error
        state = {"ours": "alpha", "base": "alpha"}

        def ours_edit() -> None:
            old = state["ours"]
            new = "beta" if old == "alpha" else "alpha"
            res = execute(
                "edit",
                {
                    "file_path": "edit.txt",
                    "old_string": f"marker {old}",
                    "new_string": f"marker {new}",
                },
                session,
            )
            assert not res.is_error, res.text
            state["ours"] = new

        def base_edit() -> None:
            old = state["base"]
            new = "beta" if old == "alpha" else "alpha"
            baseline_edit(os.path.join(root, "base_edit.txt"), f"marker {old}", f"marker {new}")
            state["base"] = new

        counter = {"n": 0}

        def ours_create() -> None:
            counter["n"] += 1
            res = execute(
                "write", {"file_path": f"new/c{counter['n']}.txt", "content": text}, session
            )
            assert not res.is_error, res.text

        def base_create() -> None:
            os.makedirs(os.path.join(root, "bnew"), exist_ok=True)
            baseline_write(os.path.join(root, "bnew", f"c{counter['n']}.txt"), text)

        execute("write", {"file_path": "replace.txt", "content": text}, session)

        def ours_replace() -> None:
            res = execute("write", {"file_path": "replace.txt", "content": text}, session)
            assert not res.is_error, res.text

        def base_replace() -> None:
            baseline_write(os.path.join(root, "base_replace.txt"), text)

        pairs = {
            "read (2000 lines, ~36 KB)": (
                lambda: execute("read", {"file_path": "read.txt"}, session),
                lambda: baseline_read(os.path.join(root, "base_read.txt")),
            ),
            "edit": (ours_edit, base_edit),
            "write (create)": (ours_create, base_create),
            "write (replace)": (ours_replace, base_replace),
        }
        for _ in range(5):  # warm caches and imports
            for ours, base in pairs.values():
                ours()
                base()
        return interleave(pairs, runs, progress)


def memory_costs(runs: int) -> dict[str, float]:
    ctx = Context(open_fs(f"memory://bench-{os.getpid()}"))
    ctx.plugin(ObservationPolicy())
    ctx.plugin(FileTools())
    session = ToolExecution(agent=Agent(session=_Session()))
    execute = ctx.tools.execute_sync
    text = make_text() + "marker alpha\n"
    execute("write", {"file_path": "m.txt", "content": text}, session)
    out: dict[str, list[float]] = {"read": [], "edit": [], "write (replace)": []}
    word = "alpha"
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        execute("read", {"file_path": "m.txt"}, session)
        t1 = time.perf_counter_ns()
        new = "beta" if word == "alpha" else "alpha"
        execute(
            "edit",
            {"file_path": "m.txt", "old_string": f"marker {word}", "new_string": f"marker {new}"},
            session,
        )
        word = new
        t2 = time.perf_counter_ns()
        execute("write", {"file_path": "m.txt", "content": text}, session)
        word = "alpha"
        t3 = time.perf_counter_ns()
        out["read"].append(t1 - t0)
        out["edit"].append(t2 - t1)
        out["write (replace)"].append(t3 - t2)
    return {k: statistics.median(v) / 1e3 for k, v in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="100 runs")
    args = parser.parse_args()
    runs = 100 if args.quick else args.runs
    print(f"local overhead, {runs} interleaved runs, medians (µs)", file=sys.stderr)
    results = run(runs)
    print("| operation | fsseam (µs) | baseline (µs) | ratio |")
    print("|---|---:|---:|---:|")
    for name, (ours, base) in results.items():
        print(f"| {name} | {ours:.0f} | {base:.0f} | {ours / base:.2f}× |")
    print()
    print("memory store, absolute per call (µs):")
    for name, cost in memory_costs(runs).items():
        print(f"- {name}: {cost:.0f}")


if __name__ == "__main__":
    main()
