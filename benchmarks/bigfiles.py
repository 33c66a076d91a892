"""Big files: first and last window of a 300 MB, 3-million-line file; a 10 MB edit.

    python benchmarks/run.py --only bigfiles [--quick]   # into docs/benchmarks.md
    python benchmarks/bigfiles.py [--quick]              # this section alone, to stdout

Every measurement runs in a fresh subprocess (``_bigfile_probe.py``) that does
nothing else: it warms up on a small file, takes its resident set as the
baseline, resets the kernel's peak-RSS mark, runs one operation and reports
time and peak RSS. On S3 the emulator (moto) runs in yet another process, so
the object's server-side copy is not in the number. Measured, on local disk
and S3:

- ``read`` of the first window (offset 1) and of the last window (the last
  512 lines: the 50 KiB cap holds 512 of these lines): the tool streams the
  whole file to count its lines, so both report MB/s against ``cat_file``'s,
  the plain fsspec download;
- the naive agent-framework read (``info`` + ``cat_file``, decode, split,
  number 2000 lines), for its memory;
- ``edit`` of a 10 MB file (the session read it first) vs naive ``info`` +
  ``cat_file`` + ``str.replace`` + ``pipe_file``.

Goal: the windows stay under 100 MiB above the baseline whatever the size.
``--quick`` uses a 30 MB, 300 000-line file and one run per measurement.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from _common import (
    BACKEND_LABELS,
    HERE,
    Goal,
    Mount,
    Options,
    Section,
    human,
    line,
    progress,
    pyplot,
    save_figure,
    standalone,
    table,
)

RSS_GOAL_MIB = 100
EDIT_LINES = 100_000  # 10 MB of 100-byte lines
BACKENDS = ("local", "s3")
OPS = ("first_window", "last_window", "cat_file", "naive_window")
SHORT_LABELS = {
    "first_window": "read,\nfirst window",
    "last_window": "read,\nlast window",
    "cat_file": "cat_file\n(reference)",
    "naive_window": "naive read\n(cat_file+split)",
    "edit": "edit\n10 MB",
    "naive_edit": "naive edit\n10 MB",
}
OP_LABELS = {
    "first_window": "read, first window",
    "last_window": "read, last window",
    "cat_file": "fsspec `cat_file` (reference)",
    "naive_window": "naive read (`cat_file` + split)",
    "edit": "edit (10 MB)",
    "naive_edit": "naive edit (10 MB)",
}


def write_lines(path: Path, lines: int, marker_at: int | None = None) -> int:
    """Write ``lines`` 100-byte lines (one marker line at ``marker_at``); returns bytes."""
    with open(path, "w", encoding="utf-8") as f:
        for start in range(1, lines + 1, 10_000):
            stop = min(lines, start + 9_999)
            block = [line(i) for i in range(start, stop + 1)]
            if marker_at is not None and start <= marker_at <= stop:
                block[marker_at - start] = "marker alpha".ljust(99, ".") + "\n"
            f.write("".join(block))
    return path.stat().st_size


def probe(mount: Mount, op: str, file: str, **extra: Any) -> dict[str, Any]:
    """Run one measurement in a fresh subprocess."""
    spec = {
        "backend": mount.backend,
        "url": mount.url,
        "options": mount.options,
        "naive_root": mount.naive_root,
        "op": op,
        "file": file,
        "warm": "warm.txt",
        **extra,
    }
    done = subprocess.run(
        [sys.executable, str(HERE / "_bigfile_probe.py"), json.dumps(spec)],
        capture_output=True,
        text=True,
        check=False,
        cwd=HERE,
    )
    if done.returncode != 0:
        raise RuntimeError(f"probe {op} on {mount.backend} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _prepare(opts: Options, lines: int) -> tuple[dict[str, Mount], int, int]:
    """Workspaces on local disk and S3 holding big.txt, edit.txt, naive_edit.txt, warm.txt."""
    local = opts.stores.mount("local")
    root = Path(local.url)
    progress(f"bigfiles: writing a {lines:,}-line file")
    size = write_lines(root / "big.txt", lines)
    edit_size = write_lines(root / "edit.txt", EDIT_LINES, marker_at=EDIT_LINES // 2)
    write_lines(root / "naive_edit.txt", EDIT_LINES, marker_at=EDIT_LINES // 2)
    write_lines(root / "warm.txt", 10)
    s3 = opts.stores.mount("s3")
    naive = s3.naive()
    progress(f"bigfiles: uploading {human(size)} to S3 (multipart, setup only)")
    for name in ("big.txt", "edit.txt", "naive_edit.txt", "warm.txt"):
        naive.put_file(str(root / name), s3.naive_path(name))
    return {"local": local, "s3": s3}, size, edit_size


def section(opts: Options) -> Section:
    lines = 300_000 if opts.quick else 3_000_000
    reps = 1 if opts.quick else 3
    mounts, size, edit_size = _prepare(opts, lines)
    # The read tool's 50 KiB cap holds 512 of these 100-byte lines: the last
    # window starts where it ends exactly on the last line.
    window = 50 * 1024 // 100
    offset = lines - window + 1
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for backend in BACKENDS:
        mount = mounts[backend]
        results[backend] = {op: [] for op in (*OPS, "edit", "naive_edit")}
        marker = {"edit": "alpha", "naive_edit": "alpha"}
        for rep in range(reps):
            for op in OPS:
                progress(f"bigfiles: {mount.label}, {OP_LABELS[op]} ({rep + 1}/{reps})")
                extra = {"offset": offset} if op == "last_window" else {}
                results[backend][op].append(probe(mount, op, "big.txt", **extra))
            for op, file in (("edit", "edit.txt"), ("naive_edit", "naive_edit.txt")):
                old = marker[op]
                new = "beta" if old == "alpha" else "alpha"
                progress(f"bigfiles: {mount.label}, {OP_LABELS[op]} ({rep + 1}/{reps})")
                results[backend][op].append(
                    probe(mount, op, file, old=f"marker {old}", new=f"marker {new}")
                )
                marker[op] = new
        first = results[backend]["first_window"][0]["check"]
        last = results[backend]["last_window"][0]["check"]
        if first != [1, window, lines] or last != [offset, lines, lines]:
            raise AssertionError(f"unexpected windows on {backend}: {first}, {last}")

    def seconds(backend: str, op: str) -> float:
        return float(statistics.median(r["seconds"] for r in results[backend][op]))

    def peak_mib(backend: str, op: str) -> float:
        return max(float(r["peak_kib"] - r["baseline_kib"]) / 1024 for r in results[backend][op])

    def baseline_mib(backend: str, op: str) -> float:
        return float(statistics.median(r["baseline_kib"] / 1024 for r in results[backend][op]))

    rows = []
    goals: list[Goal] = []
    for backend in BACKENDS:
        cat_rate = size / seconds(backend, "cat_file") / 1e6
        for op in (*OPS, "edit", "naive_edit"):
            nbytes = edit_size if "edit" in op else size
            rate = nbytes / seconds(backend, op) / 1e6
            vs_cat = f"{rate / cat_rate:.2f}×" if "edit" not in op else ""
            rows.append(
                [
                    BACKEND_LABELS[backend],
                    OP_LABELS[op],
                    f"{seconds(backend, op):.2f}",
                    f"{rate:.0f}",
                    vs_cat,
                    f"**{peak_mib(backend, op):.0f}**"
                    if op in ("first_window", "last_window")
                    else f"{peak_mib(backend, op):.0f}",
                    f"{baseline_mib(backend, op):.0f}",
                ]
            )
        for op in ("first_window", "last_window"):
            delta = peak_mib(backend, op)
            goals.append(
                Goal(
                    f"peak RSS, {OP_LABELS[op]} of {human(size)}, {BACKEND_LABELS[backend]}",
                    f"< {RSS_GOAL_MIB} MiB above baseline",
                    f"+{delta:.0f} MiB, {size / seconds(backend, op) / 1e6:.0f} MB/s "
                    f"({size / seconds(backend, op) / 1e6 / cat_rate:.2f}× cat_file)",
                    delta < RSS_GOAL_MIB,
                )
            )

    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 3.8))
    ops = (*OPS, "edit", "naive_edit")
    xs = range(len(ops))
    for k, backend in enumerate(BACKENDS):
        shift = -0.2 if k == 0 else 0.2
        left.bar(
            [x + shift for x in xs],
            [peak_mib(backend, op) for op in ops],
            0.4,
            label=BACKEND_LABELS[backend],
        )
        right.bar(
            [x + shift for x in range(3)],
            [size / seconds(backend, op) / 1e6 for op in OPS[:3]],
            0.4,
            label=BACKEND_LABELS[backend],
        )
    left.axhline(RSS_GOAL_MIB, color="red", linestyle="--", linewidth=1, label="goal (100 MiB)")
    left.set_yscale("log")
    left.set_xticks(list(xs), [SHORT_LABELS[op] for op in ops], fontsize=7)
    left.set_ylabel("peak RSS above baseline (MiB)")
    left.set_title(f"Memory: {human(size)} file, 10 MB edit")
    left.legend(fontsize=8)
    right.set_xticks(
        range(3),
        [SHORT_LABELS[op] for op in OPS[:3]],
        fontsize=8,
    )
    right.set_ylabel("MB/s")
    right.set_title(f"Throughput over the whole {human(size)}")
    right.legend(fontsize=8)
    for ax in (left, right):
        ax.grid(axis="y", alpha=0.3)
    image = save_figure(fig, opts, "bigfiles.png")

    body = "\n\n".join(
        [
            f"A {human(size)}, {lines:,}-line file (100-byte lines) and a {human(edit_size)} file "
            f"for the edits. Each row is a fresh subprocess doing only that operation "
            f"(median time of {reps} run{'s' if reps > 1 else ''}; the largest peak). *Peak* "
            "is the kernel's high-water mark (VmHWM) minus the resident set just before the "
            "call, after a warm-up read of a small file; *baseline* is that resident set "
            "(interpreter, fsseam, s3fs/botocore). On S3 the moto server is another process. "
            "The read tool streams the whole file to report an exact line count, so either "
            "window costs a full pass over the file (here the last window took "
            + " and ".join(
                f"{seconds(b, 'last_window') / seconds(b, 'first_window'):.2f}× the first "
                f"window's time on {BACKEND_LABELS[b]}"
                for b in BACKENDS
            )
            + "); MB/s is the file size over the call's time, *vs cat_file* compares it with "
            "fsspec's `cat_file` of the same file.",
            table(
                [
                    "store",
                    "operation",
                    "seconds",
                    "MB/s",
                    "vs cat_file",
                    "peak MiB",
                    "baseline MiB",
                ],
                rows,
                "llrrrrr",
            ),
            f"![big files]({image})",
        ]
    )
    return Section("bigfiles", "Big files", body, goals, [image])


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    standalone(section, __doc__)
