"""Contention: N agents × M read→edit increments of one file, per backend.

    python benchmarks/run.py --only contention [--quick]   # into docs/benchmarks.md
    python benchmarks/contention.py [--quick]              # this section alone, to stdout

Each agent is a thread running its own event loop and its own policy session,
all sharing one ``Context`` (one workspace). An agent reads ``counter.txt``
with the ``read`` tool, then asks the ``edit`` tool to turn ``count=N`` into
``count=N+1``; on ``FS_STALE_VERSION`` it reads again and retries, until it
has made M increments. At the end the counter must equal agents × M: anything
less is a lost update.

The naive loop does the same with plain fsspec, as an agent framework without
versions would: read = ``cat_file``; edit = ``cat_file``, check that
``old_string`` is still there (else re-read and retry, like a failed edit),
``str.replace``, ``pipe_file``. That check narrows the race but cannot close
it, so it loses updates.

Agents 1, 2, 4, 8, 16 × M = 25 on local disk, memory, S3 (moto in its own
process), GCS (fake-gcs-server) and Azure (Azurite); ``--quick`` runs
1, 4, 8 and 16 agents × M = 3.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass

from _common import (
    BACKEND_LABELS,
    CLOUD,
    Goal,
    Mount,
    Options,
    Section,
    make_context,
    new_run,
    progress,
    pyplot,
    run_async,
    save_figure,
    standalone,
    table,
)

from fsseam import ToolResult

BACKENDS = ("local", "memory", "s3", "gcs", "azure")
FILE = "counter.txt"


@dataclass
class Outcome:
    """One (backend, agents, loop) run."""

    agents: int
    edits: int
    final: int
    seconds: float
    retries: int
    torn: int = 0
    errors: int = 0

    @property
    def expected(self) -> int:
        return self.agents * self.edits

    @property
    def lost(self) -> int:
        return self.expected - self.final

    @property
    def throughput(self) -> float:
        return self.expected / self.seconds

    @property
    def retries_per_success(self) -> float:
        return self.retries / self.expected


def _parse(text: str) -> int | None:
    text = text.strip()
    if not text.startswith("count="):
        return None
    try:
        return int(text.removeprefix("count="))
    except ValueError:
        return None


def _io_error(result: ToolResult, errors: list[int], i: int) -> bool:
    """True (and counted) when a call failed with FS_IO_ERROR: the agent reads again.

    A busy emulator can time out; an agent retries such a call like a stale one.
    Anything else unexpected stops the benchmark.
    """
    if not result.is_error:
        return False
    if result.error and result.error["code"] == "FS_IO_ERROR":
        errors[i] += 1
        return True
    raise AssertionError(result.text)


def _threads(agents: int, body: object) -> float:
    """Start ``agents`` threads running ``body(i)`` together; wall seconds until all end."""
    barrier = threading.Barrier(agents + 1)
    failures: list[BaseException] = []

    def target(i: int) -> None:
        barrier.wait()
        try:
            body(i)  # type: ignore[operator]
        except BaseException as exc:  # re-raised below
            failures.append(exc)

    threads = [threading.Thread(target=target, args=(i,)) for i in range(agents)]
    for thread in threads:
        thread.start()
    barrier.wait()
    t0 = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - t0
    if failures:
        raise failures[0]
    return elapsed


def fsseam_loop(
    mount: Mount, agents: int, edits: int, name: str, *, cache_bytes: int | None = None
) -> Outcome:
    """``agents`` threads × ``edits`` read→edit increments through the tools.

    ``cache_bytes=0`` mounts without the content cache (each edit then reads
    before its conditional write); ``None`` keeps the default cache.
    """
    fs = mount.fsseam() if cache_bytes is None else mount.fsseam(cache_bytes=cache_bytes)
    ctx = make_context(fs)

    async def setup() -> None:
        await fs.write_text(await fs.resolve(name), "count=0\n")

    run_async(setup())
    retries = [0] * agents
    errors = [0] * agents

    async def agent(i: int) -> None:
        run = new_run()
        done = 0
        while done < edits:
            read = await ctx.tools.execute("read", {"file_path": name}, run)
            if _io_error(read, errors, i):
                continue
            assert read.value is not None, read.text
            value = _parse(read.value["lines"][0]["text"])
            assert value is not None, read.text
            res = await ctx.tools.execute(
                "edit",
                {
                    "file_path": name,
                    "old_string": f"count={value}",
                    "new_string": f"count={value + 1}",
                },
                run,
            )
            if not res.is_error:
                done += 1
            elif res.error and res.error["code"] == "FS_STALE_VERSION":
                retries[i] += 1
            elif not _io_error(res, errors, i):
                raise AssertionError(res.text)

    seconds = _threads(agents, lambda i: asyncio.run(agent(i)))

    async def final() -> str:
        return await fs.read_text(await fs.resolve(name))

    value = _parse(run_async(final()))
    assert value is not None
    return Outcome(agents, edits, value, seconds, sum(retries), errors=sum(errors))


def naive_loop(mount: Mount, agents: int, edits: int, name: str) -> Outcome:
    """The same loop in plain fsspec ``cat_file`` / ``pipe_file`` (no versions)."""
    fs = mount.naive()
    path = mount.naive_path(name)
    fs.pipe_file(path, b"count=0\n")
    retries = [0] * agents
    torn = [0] * agents

    def agent(i: int) -> None:
        done = 0
        while done < edits:
            value = _parse(fs.cat_file(path).decode())
            if value is None:  # a half-written file (local pipe_file truncates first)
                torn[i] += 1
                continue
            current = fs.cat_file(path).decode()
            old, new = f"count={value}", f"count={value + 1}"
            if old not in current:  # the edit tool's "old_string not found": re-read
                retries[i] += 1
                continue
            fs.pipe_file(path, current.replace(old, new, 1).encode())
            done += 1

    seconds = _threads(agents, agent)
    final = None
    while final is None:
        final = _parse(fs.cat_file(path).decode())
    return Outcome(agents, edits, final, seconds, sum(retries), torn=sum(torn))


def measure(
    opts: Options, backends: tuple[str, ...], agent_counts: tuple[int, ...], edits: int
) -> dict[str, dict[str, list[Outcome]]]:
    out: dict[str, dict[str, list[Outcome]]] = {}
    for backend in backends:
        mount = opts.stores.mount(backend)
        out[backend] = {"fsseam": [], "naive": []}
        for agents in agent_counts:
            ours = fsseam_loop(mount, agents, edits, f"fsseam-{agents}.txt")
            naive = naive_loop(mount, agents, edits, f"naive-{agents}.txt")
            out[backend]["fsseam"].append(ours)
            out[backend]["naive"].append(naive)
            progress(
                f"contention: {mount.label}, {agents:2d} agents × {edits}: fsseam "
                f"{ours.final}/{ours.expected} ({ours.retries} retries, {ours.seconds:.1f} s), "
                f"naive {naive.final}/{naive.expected} ({naive.seconds:.1f} s)"
            )
    return out


def section(opts: Options) -> Section:
    agent_counts = (1, 4, 8, 16) if opts.quick else (1, 2, 4, 8, 16)
    edits = 3 if opts.quick else 25
    results = measure(opts, BACKENDS, agent_counts, edits)

    rows = []
    for backend in BACKENDS:
        for ours, naive in zip(results[backend]["fsseam"], results[backend]["naive"], strict=True):
            rows.append(
                [
                    BACKEND_LABELS[backend],
                    f"{ours.agents} × {ours.edits}",
                    f"**{ours.final}** / {ours.expected}",
                    f"**{ours.lost}**",
                    f"{ours.retries_per_success:.2f}",
                    f"{ours.throughput:.0f}",
                    f"{naive.final} / {naive.expected}",
                    f"{naive.lost}",
                    f"{naive.throughput:.0f}",
                ]
            )
    goals: list[Goal] = []
    lost_total = sum(o.lost for b in BACKENDS for o in results[b]["fsseam"])
    runs_total = sum(len(results[b]["fsseam"]) for b in BACKENDS)
    goals.append(
        Goal(
            "lost updates through fsseam, every backend and agent count",
            "0",
            f"{lost_total} lost in {runs_total} runs",
            lost_total == 0,
        )
    )
    if 8 in agent_counts:
        for backend in CLOUD:
            ours = next(o for o in results[backend]["fsseam"] if o.agents == 8)
            naive = next(o for o in results[backend]["naive"] if o.agents == 8)
            goals.append(
                Goal(
                    f"8 agents × {edits} increments, {BACKEND_LABELS[backend]}",
                    f"exactly {8 * edits}; naive loses some",
                    f"fsseam {ours.final}, naive fsspec {naive.final} ({naive.lost} lost)",
                    ours.final == 8 * edits and naive.lost > 0,
                )
            )

    errored = {
        BACKEND_LABELS[b]: sum(o.errors for o in results[b]["fsseam"])
        for b in BACKENDS
        if any(o.errors for o in results[b]["fsseam"])
    }
    error_note = (
        "Calls that failed with `FS_IO_ERROR` (the emulator did not answer in time) and "
        "were retried by the agent: "
        + ", ".join(f"{label} {count}" for label, count in errored.items())
        + "."
        if errored
        else ""
    )
    torn = {
        BACKEND_LABELS[b]: sum(o.torn for o in results[b]["naive"])
        for b in BACKENDS
        if any(o.torn for o in results[b]["naive"])
    }
    torn_note = (
        "Torn reads in the naive loop (`cat_file` saw a half-written file and had to read "
        "again; `pipe_file` on local disk truncates, then writes): "
        + ", ".join(f"{label} {count}" for label, count in torn.items())
        + ". fsseam's writes are atomic renames and object PUTs, so its reads never see one."
        if torn
        else ""
    )

    plt = pyplot()
    fig, (left, mid, right) = plt.subplots(1, 3, figsize=(14, 3.8))
    for backend in BACKENDS:
        ours_runs = results[backend]["fsseam"]
        naive_runs = results[backend]["naive"]
        xs = [o.agents for o in ours_runs]
        (line,) = left.plot(
            xs, [o.throughput for o in ours_runs], marker="o", label=BACKEND_LABELS[backend]
        )
        mid.plot(xs, [o.retries_per_success for o in ours_runs], marker="o", color=line.get_color())
        right.plot(
            xs,
            [100 * o.lost / o.expected for o in naive_runs],
            marker="x",
            linestyle="--",
            color=line.get_color(),
            label=f"naive, {BACKEND_LABELS[backend]}",
        )
        right.plot(
            xs, [100 * o.lost / o.expected for o in ours_runs], marker="o", color=line.get_color()
        )
    for ax in (left, mid, right):
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(agent_counts), [str(a) for a in agent_counts])
        ax.set_xlabel("agents")
        ax.grid(alpha=0.3)
    left.set_yscale("log")
    left.set_ylabel("successful edits / s")
    left.set_title("fsseam throughput")
    left.legend(fontsize=7)
    mid.set_ylabel("stale-version retries per success")
    mid.set_title("fsseam retries")
    right.set_ylabel("% of increments lost")
    right.set_title("lost updates: naive (dashed) vs fsseam (solid, 0)")
    right.legend(fontsize=6)
    image = save_figure(fig, opts, "contention.png")

    body = "\n\n".join(
        [
            f"Agents × {edits} read→edit increments of one counter file; each agent is a thread "
            "with its own event loop and its own policy session, all sharing one `Context`. "
            "fsseam agents retry on `FS_STALE_VERSION`. The naive loop is plain fsspec: "
            '`cat_file` to read, then `cat_file` + "is old_string still there?" + '
            "`str.replace` + `pipe_file` to edit (re-reading when old_string is gone). "
            "*Lost* = expected − final counter. Throughput = successful increments per second "
            "over the whole run (all agents).",
            table(
                [
                    "store",
                    "agents × edits",
                    "fsseam final",
                    "fsseam lost",
                    "retries / success",
                    "fsseam edits/s",
                    "naive final",
                    "naive lost",
                    "naive edits/s",
                ],
                rows,
                "llrrrrrrr",
            ),
            f"![contention]({image})",
            "Retries per success grow with the number of agents because an increment can "
            "only be made by an agent that read the latest version: with N agents racing, "
            "most attempts find the file changed and read again. That is the price of never "
            "losing an update. The naive loop never retries on a lost race, so it finishes "
            "sooner; its throughput counts increments that another agent then overwrote. "
            "On the emulators the ceiling is the emulator itself (moto runs every request "
            "under one lock; a failed fsseam attempt is 4 requests: the read's GET, the "
            "refused PUT, the HEAD that tells a lost race from a lost response, and the GET "
            "that brings the change for the error; a successful edit after a read is one "
            "PUT, its bytes being in the content cache; `benchmarks/conflicts.py` compares "
            "with the cache off). "
            "The memory store's calls take microseconds and run inline, so a thread often "
            "finishes a whole increment within one GIL time slice and races are rarer.",
            *([torn_note] if torn_note else []),
            *([error_note] if error_note else []),
        ]
    )
    return Section("contention", "Contention: agents editing one file", body, goals, [image])


if __name__ == "__main__":
    standalone(section, __doc__)
