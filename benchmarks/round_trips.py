"""Requests per tool call on S3, GCS and Azure, counted at the emulator, next to naive fsspec.

    python benchmarks/run.py --only requests [--quick]   # into docs/benchmarks.md
    python benchmarks/round_trips.py [--quick]           # this section alone, to stdout

Each tool call (``read``, ``write`` creating a file, ``write`` replacing a file
the session has read, ``edit``) runs through ``ctx.tools.execute`` with the
observation policy, against moto (own process), fake-gcs-server and Azurite
(behind fsseam's recording proxy). The emulator's request log is cleared
before the call and counted after it. Next to it, the same job done the way an
agent framework typically does it with plain fsspec:

- read: ``info`` (exists? size?) + ``cat_file``, then split and number lines;
- create: ``info`` (must be absent) + ``pipe_file``;
- replace: ``info`` + ``pipe_file``;
- edit: ``info`` + ``cat_file`` + ``str.replace`` + ``pipe_file``.

The two are interleaved, so their median latencies are measured side by side.
(Not named ``requests.py``: run as a script, that would shadow the ``requests``
package the cloud SDKs import.)
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from _common import (
    BACKEND_LABELS,
    CLOUD,
    Goal,
    Mount,
    Options,
    Section,
    make_context,
    make_text,
    median_ms,
    new_run,
    ok,
    progress,
    pyplot,
    save_figure,
    standalone,
    table,
    timed,
)

OPS = ("read", "create", "replace", "edit")
GOALS = {"read": 1, "create": 1, "replace": 1, "edit": 1}
GOAL_TEXT = {"read": "= 1", "create": "= 1", "replace": "= 1", "edit": "= 1"}
NAIVE_CODE = {
    "read": "info + cat_file",
    "create": "info + pipe_file",
    "replace": "info + pipe_file",
    "edit": "info + cat_file + pipe_file",
}

Op = Callable[[], object]


def _ops(mount: Mount) -> dict[str, tuple[Op, Op]]:
    """(fsseam, naive) callables per operation, on files prepared here (off the record)."""
    fs = mount.fsseam()
    ctx = make_context(fs)
    run = new_run()

    def call(name: str, args: dict[str, object]) -> object:
        return ok(ctx.tools.execute_sync(name, args, run))

    text = make_text(4000)  # an ordinary 4 KB source file
    for name in ("r.txt", "w.txt", "e.txt"):
        call("write", {"file_path": name, "content": text + "marker alpha\n"})
        call("read", {"file_path": name})
    naive = mount.naive()
    data = (text + "marker alpha\n").encode()
    for name in ("r.txt", "w.txt", "e.txt"):
        naive.pipe_file(mount.naive_path("naive/" + name), data)
    counter = itertools.count()
    state = {"ours": "alpha", "naive": "alpha"}

    def flip(side: str) -> tuple[str, str]:
        old = state[side]
        state[side] = "beta" if old == "alpha" else "alpha"
        return f"marker {old}", f"marker {state[side]}"

    def ours_edit() -> object:
        old, new = flip("ours")
        return call("edit", {"file_path": "e.txt", "old_string": old, "new_string": new})

    def naive_read() -> object:
        path = mount.naive_path("naive/r.txt")
        naive.info(path)
        lines = naive.cat_file(path).decode("utf-8").split("\n")
        return "\n".join(f"{i + 1}: {line}" for i, line in enumerate(lines[:2000]))

    def naive_create() -> object:
        path = mount.naive_path(f"naive/c{next(counter)}.txt")
        try:
            naive.info(path)
        except FileNotFoundError:
            pass
        else:
            raise AssertionError(f"{path} exists")
        return naive.pipe_file(path, data)

    def naive_replace() -> object:
        path = mount.naive_path("naive/w.txt")
        naive.info(path)
        return naive.pipe_file(path, data)

    def naive_edit() -> object:
        path = mount.naive_path("naive/e.txt")
        old, new = flip("naive")
        naive.info(path)
        current = naive.cat_file(path).decode("utf-8")
        if old not in current:
            raise AssertionError("naive edit: old_string not found")
        return naive.pipe_file(path, current.replace(old, new, 1).encode())

    creates = itertools.count()
    return {
        "read": (lambda: call("read", {"file_path": "r.txt"}), naive_read),
        "create": (
            lambda: call("write", {"file_path": f"new/c{next(creates)}.txt", "content": text}),
            naive_create,
        ),
        "replace": (
            lambda: call("write", {"file_path": "w.txt", "content": text + "marker alpha\n"}),
            naive_replace,
        ),
        "edit": (ours_edit, naive_edit),
    }


@dataclass
class Calls:
    """The calls of one operation on one side."""

    counts: list[int] = field(default_factory=list)
    """Requests recorded for each call."""
    ns: list[float] = field(default_factory=list)
    """Wall time of each call."""
    log: list[str] = field(default_factory=list)
    """Request methods of the first call."""
    odd: list[list[str]] = field(default_factory=list)
    """Full request logs of calls that made more requests than the first one."""


def _settled(mount: Mount) -> list[str]:
    """The request log once it stops growing.

    gcsfs's ``info`` races a GET of the object against a listing and returns
    with the first answer: the other request can reach the emulator after the
    call returned. Waiting until the log is quiet keeps every request with the
    call that sent it.
    """
    log = mount.requests()
    for _ in range(50):
        time.sleep(0.015)
        again = mount.requests()
        if len(again) == len(log):
            return again
        log = again
    return log


def measure(mount: Mount, runs: int) -> dict[str, dict[str, Calls]]:
    """Per op and side: request counts of every run, the first run's request log, times."""
    ops = _ops(mount)
    for ours, naive in ops.values():  # warm connections, sessions, caches
        ours()
        naive()
    out = {op: {"fsseam": Calls(), "naive": Calls()} for op in OPS}
    for i in range(runs):
        for op in OPS:
            pair = (("fsseam", ops[op][0]), ("naive", ops[op][1]))
            for side, fn in pair if i % 2 == 0 else pair[::-1]:
                mount.reset()
                elapsed = timed(fn)
                log = _settled(mount)
                calls = out[op][side]
                calls.counts.append(len(log))
                calls.ns.append(elapsed)
                if len(calls.counts) == 1:
                    calls.log = [entry.split(" ", 1)[0] for entry in log]
                elif len(log) > calls.counts[0] and len(calls.odd) < 3:
                    calls.odd.append(log)
    return out


def _count_text(counts: list[int]) -> str:
    low, high = min(counts), max(counts)
    return str(low) if low == high else f"{low}–{high}"


def section(opts: Options) -> Section:
    runs = 6 if opts.quick else 30
    results: dict[str, dict[str, dict[str, Calls]]] = {}
    for backend in CLOUD:
        mount = opts.stores.mount(backend)
        progress(f"requests: {mount.label}, {runs} interleaved runs per operation")
        results[backend] = measure(mount, runs)

    goals: list[Goal] = []
    rows = []
    odd_notes: list[str] = []
    for backend in CLOUD:
        ours_all: list[str] = []
        naive_all: list[str] = []
        met = True
        for op in OPS:
            ours = results[backend][op]["fsseam"]
            naive = results[backend][op]["naive"]
            ours_counts, naive_counts = ours.counts, naive.counts
            ours_ms, naive_ms = median_ms(ours.ns), median_ms(naive.ns)
            met = met and min(ours_counts) >= 1 and max(ours_counts) <= GOALS[op]
            ours_all.append(f"{op} {_count_text(ours_counts)}")
            for log in ours.odd:
                odd_notes.append(
                    f"- {BACKEND_LABELS[backend]}, fsseam {op} "
                    f"({len(log)} requests instead of {ours.counts[0]}): "
                    + "; ".join(f"`{entry[:160]}`" for entry in log)
                )
            naive_all.append(_count_text(naive_counts))
            rows.append(
                [
                    BACKEND_LABELS[backend],
                    op,
                    f"**{_count_text(ours_counts)}** ({' + '.join(ours.log)})",
                    GOAL_TEXT[op],
                    f"{_count_text(naive_counts)} ({' + '.join(naive.log)})",
                    f"{ours_ms:.1f}",
                    f"{naive_ms:.1f}",
                    f"{ours_ms / naive_ms:.2f}×",
                ]
            )
        goals.append(
            Goal(
                f"requests per tool call, {BACKEND_LABELS[backend]}",
                "read 1, create 1, replace 1, edit 1",
                f"{', '.join(ours_all)} (naive fsspec: {', '.join(naive_all)})",
                met,
            )
        )

    plt = pyplot()
    fig, axes = plt.subplots(1, len(CLOUD), figsize=(12, 3.6), sharey=True)
    for ax, backend in zip(axes, CLOUD, strict=True):
        xs = range(len(OPS))
        ours_vals = [max(results[backend][op]["fsseam"].counts) for op in OPS]
        naive_vals = [max(results[backend][op]["naive"].counts) for op in OPS]
        ax.bar([x - 0.2 for x in xs], ours_vals, 0.4, label="fsseam tool call")
        ax.bar([x + 0.2 for x in xs], naive_vals, 0.4, label="naive fsspec")
        ax.set_xticks(list(xs), OPS)
        ax.set_title(BACKEND_LABELS[backend])
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("HTTP requests per call")
    axes[0].legend()
    image = save_figure(fig, opts, "requests.png")

    body = "\n\n".join(
        [
            "Requests that reached the emulator for one tool call (the log is cleared before "
            f"the call and read after it), over {runs} calls of each kind; the request "
            "methods of the first call in brackets. moto records them in its own middleware; "
            "fake-gcs-server and Azurite sit behind fsseam's recording proxy. *Naive* is the "
            "same job in plain fsspec as an agent framework writes it: read = `info` + "
            "`cat_file`, create and replace = `info` + `pipe_file`, edit = `info` + "
            "`cat_file` + `str.replace` + `pipe_file` (default fsspec options). Files are "
            "~4 KB. The session has read each file (or written it since), so fsseam's replace "
            "and edit find the bytes of the version they are guarded by in the mount's content "
            "cache and send only the conditional write (`benchmarks/conflicts.py` compares "
            "with the cache off and measures a cache miss). Times are medians of the "
            "interleaved calls on loopback to an emulator, so they show the client-side "
            "cost of each extra request; against a real store "
            "every request is a network round trip. The same counts are asserted by "
            "`tests/backends/test_{s3,gcs,azure}_dialect.py`. After each call the log is "
            "read once it stops growing: gcsfs's `info` races an object GET against a "
            "listing and returns with the first answer, so the naive GCS counts vary with "
            "whether the losing request went out.",
            table(
                [
                    "store",
                    "call",
                    "fsseam requests",
                    "goal",
                    "naive fsspec requests",
                    "fsseam ms",
                    "naive ms",
                    "time ratio",
                ],
                rows,
                "lllllrrr",
            ),
            f"![requests per call]({image})",
            *(
                [
                    "fsseam calls that made more requests than the first call of their kind "
                    "(full request logs, at most 3 per kind):",
                    "\n".join(odd_notes),
                ]
                if odd_notes
                else []
            ),
        ]
    )
    return Section("requests", "Requests per tool call", body, goals, [image])


if __name__ == "__main__":
    standalone(section, __doc__)
