"""Conflicts (issue 13): the content cache, the change in the refusal, no false conflicts.

    python benchmarks/conflicts.py [--quick]           # this section, to stdout
    python benchmarks/conflicts.py [--quick] --write   # ...and into docs/benchmarks.md

Everything side by side in one run, *before* being the same code with the
content cache off (``open_fs(..., cache_bytes=0)``, which is how fsseam
behaved before it had one) and *after* the default mount:

1. requests per tool call after a read on S3, GCS and Azure (counted at the
   emulator), interleaved, and what a cache miss costs (the session read
   through another mount sharing its observation store, as replicas do);
2. a scripted two-agent conflict: A reads, B edits elsewhere in the file, A
   edits; the model-visible calls and the characters of tool results A
   needs to land its edit (before: refused, re-read, edit; with the change
   in the refusal: refused, edit; with ``ObservationPolicy(rebase=True)``:
   one edit);
3. contention: 1-16 agents × M increments of one file (``contention.py``'s
   loop) before and after, plus an agent that retries from the change in
   the refusal without reading again;
4. false conflicts: touch, an identical rewrite and a formatter that changed
   nothing, between A's read and A's edit, on every backend.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Callable
from typing import Any

import contention
from _common import (
    BACKEND_LABELS,
    CLOUD,
    Goal,
    Mount,
    Options,
    Section,
    make_text,
    median_ms,
    progress,
    run_async,
    standalone,
    table,
    timed,
)

from fsseam import Agent, Context, FileTools, ObservationPolicy, ToolExecution, ToolResult
from fsseam.observations import MemoryObservationStore

MODES = ("before", "after")
OPS = ("read", "create", "replace", "edit", "multi_edit")
TODAY = {"read": 1, "create": 1, "replace": 2, "edit": 2, "multi_edit": 2}
BACKENDS = ("local", "memory", "s3", "gcs", "azure")


def _context(fs: Any, *, rebase: bool = False, store: Any = None) -> Context:
    ctx = Context(fs)
    ctx.plugin(ObservationPolicy(store=store, rebase=rebase))
    ctx.plugin(FileTools(multi_edit=True))
    return ctx


def _mount_fs(mount: Mount, mode: str) -> Any:
    return mount.fsseam(cache_bytes=0) if mode == "before" else mount.fsseam()


def _code(result: ToolResult) -> str | None:
    return None if result.error is None else result.error["code"]


def _ok(result: ToolResult) -> ToolResult:
    if result.is_error:
        raise AssertionError(result.text)
    return result


# -- 1. requests per tool call ------------------------------------------------------------------

SOURCE = make_text(4000) + "marker alpha\n"
"""An ordinary ~4 KB file; its last line flips between ``marker alpha`` and ``marker beta``."""


class _Side:
    """One session on one mount, with the files it changes and their marker state."""

    def __init__(self, ctx: Context, session: str, prefix: str) -> None:
        self.ctx = ctx
        self.run = ToolExecution(agent=Agent(session=session))
        self.prefix = prefix
        self._markers: dict[str, str] = {}

    def call(self, tool: str, args: dict[str, Any]) -> ToolResult:
        return _ok(self.ctx.tools.execute_sync(tool, args, self.run))

    def path(self, name: str) -> str:
        return f"{self.prefix}{name}.txt"

    def create(self, name: str) -> None:
        self.call("write", {"file_path": self.path(name), "content": SOURCE})
        self._markers[name] = "alpha"

    def flip(self, name: str) -> tuple[str, str]:
        """``(marker now, marker next)`` of file ``name``, flipping it."""
        old = self._markers[name]
        self._markers[name] = "beta" if old == "alpha" else "alpha"
        return f"marker {old}", f"marker {self._markers[name]}"


def _op(side: _Side, op: str, i: int) -> tuple[Callable[[], object], Callable[[], ToolResult]]:
    """``(off the record: the session's read, the measured call)`` for ``op``."""
    if op == "read":
        return (lambda: None), (lambda: side.call("read", {"file_path": side.path("r")}))
    if op == "create":
        args = {"file_path": side.path(f"new-{i}"), "content": SOURCE}
        return (lambda: None), (lambda: side.call("write", args))
    name = {"replace": "w", "edit": "e", "multi_edit": "m"}[op]
    file = side.path(name)
    old, new = side.flip(name)
    if op == "replace":
        args = {"file_path": file, "content": SOURCE.replace("marker alpha", new)}
        tool = "write"
    elif op == "edit":
        args, tool = {"file_path": file, "old_string": old, "new_string": new}, "edit"
    else:
        edits = [{"old_string": old, "new_string": new}]
        args, tool = {"file_path": file, "edits": edits}, "multi_edit"
    return (lambda: side.call("read", {"file_path": file})), (lambda: side.call(tool, args))


def _miss(
    editor: _Side, reader: _Side, i: int
) -> tuple[Callable[[], object], Callable[[], ToolResult]]:
    """An edit through ``editor`` of a version only ``reader``'s mount wrote and read."""
    file = editor.path("e")
    old, new = editor.flip("e")
    # Content never written before: S3 ETags follow the bytes, so a repeat would be cached.
    content = SOURCE.replace("marker alpha", old) + f"round {i}\n"

    def prepare() -> None:
        reader.call("write", {"file_path": file, "content": content})
        reader.call("read", {"file_path": file})

    args = {"file_path": file, "old_string": old, "new_string": new}
    return prepare, lambda: editor.call("edit", args)


def _requests(opts: Options) -> tuple[str, list[Goal]]:
    runs = 5 if opts.quick else 20
    rows: list[list[str]] = []
    goals: list[Goal] = []
    for backend in CLOUD:
        mount = opts.stores.mount(backend)
        progress(f"conflicts: requests per call, {mount.label}, {runs} interleaved runs")
        sides = {mode: _Side(_context(_mount_fs(mount, mode)), mode, f"{mode}/") for mode in MODES}
        for side in sides.values():
            for name in ("r", "w", "e", "m"):
                side.create(name)
        # A cache miss: the session read through another mount (a replica) sharing its store.
        shared = MemoryObservationStore()
        editor = _Side(_context(mount.fsseam(), store=shared), "replica", "miss/")
        reader = _Side(_context(mount.fsseam(), store=shared), "replica", "miss/")
        editor.create("e")
        counts: dict[tuple[str, str], list[int]] = {}
        times: dict[tuple[str, str], list[float]] = {}

        def measure(
            key: tuple[str, str],
            prepare: Callable[[], object],
            call: Callable[[], object],
            mount: Mount = mount,
            counts: dict[tuple[str, str], list[int]] = counts,
            times: dict[tuple[str, str], list[float]] = times,
        ) -> None:
            prepare()
            mount.reset()
            times.setdefault(key, []).append(timed(call))
            counts.setdefault(key, []).append(len(mount.requests()))

        for i in range(runs):
            for op in OPS:
                for mode in MODES if i % 2 == 0 else MODES[::-1]:
                    measure((op, mode), *_op(sides[mode], op, i))
            measure(("edit", "miss"), *_miss(editor, reader, i))
        summary = []
        for op in OPS:
            before_n, after_n = counts[(op, "before")], counts[(op, "after")]
            b_ms, a_ms = median_ms(times[(op, "before")]), median_ms(times[(op, "after")])
            rows.append(
                [
                    BACKEND_LABELS[backend],
                    op,
                    _span(before_n),
                    f"**{_span(after_n)}**",
                    f"{b_ms:.1f}",
                    f"{a_ms:.1f}",
                    f"{a_ms / b_ms:.2f}×",
                ]
            )
            summary.append(f"{op} {_span(after_n)}")
        miss = counts[("edit", "miss")]
        rows.append(
            [
                BACKEND_LABELS[backend],
                "edit, cache miss",
                "",
                _span(miss),
                "",
                f"{median_ms(times[('edit', 'miss')]):.1f}",
                "",
            ]
        )
        goals.append(
            Goal(
                f"requests per tool call after a read, {BACKEND_LABELS[backend]}",
                "read 1, create 1, replace 1, edit 1, multi_edit 1 (before: 1/1/2/2/2)",
                ", ".join(summary) + f"; a cache miss {_span(miss)}",
                all(max(counts[(op, "after")]) == 1 for op in OPS),
            )
        )
    body = "\n\n".join(
        [
            "Requests that reached the emulator for one tool call after the session read the "
            f"file (~4 KB), {runs} interleaved calls of each kind per side; ms are medians. "
            "*Before*: the same mount with `cache_bytes=0`. A *cache miss* is an edit whose "
            "session read the file through another mount (two replicas sharing one "
            "observation store): that mount has never held those bytes, so it reads them "
            "first, as every edit did before.",
            table(
                ["store", "call", "before", "after", "before ms", "after ms", "time ratio"],
                rows,
                "llrrrrr",
            ),
        ]
    )
    return body, goals


def _span(values: list[int]) -> str:
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}–{high}"


# -- 2. a scripted two-agent conflict --------------------------------------------------------------

CHANGE_SHOWN = "What changed since you read it:"


def _two_agents(mount: Mount, mode: str, lines: int) -> dict[str, int]:
    """A reads, B edits line 3, A edits line ``lines - 10``: what A spends to land its edit."""
    fs = mount.fsseam(cache_bytes=0) if mode == "before" else mount.fsseam()
    ctx = _context(fs, rebase=mode == "rebase")
    name = f"{mode}-{lines}.txt"
    text = "".join(
        f"{i:04d}: the quick brown fox jumps over the lazy dog, line {i}\n"
        for i in range(1, lines + 1)
    )
    setup = ToolExecution(agent=Agent(session=f"setup-{mode}"))
    _ok(ctx.tools.execute_sync("write", {"file_path": name, "content": text}, setup))
    a = ToolExecution(agent=Agent(session=f"a-{mode}"))
    b = ToolExecution(agent=Agent(session=f"b-{mode}"))
    _ok(ctx.tools.execute_sync("read", {"file_path": name}, a))
    _ok(ctx.tools.execute_sync("read", {"file_path": name}, b))
    _ok(
        ctx.tools.execute_sync(
            "edit", {"file_path": name, "old_string": "line 3\n", "new_string": "line three\n"}, b
        )
    )
    target = lines - 10
    edit = {
        "file_path": name,
        "old_string": f"line {target}\n",
        "new_string": f"line {target}, edited by A\n",
    }
    spent = {"calls": 0, "received": 0, "sent": 0, "requests": 0}

    def call(tool: str, args: dict[str, Any]) -> ToolResult:
        if mount.backend in CLOUD:
            mount.reset()
        result = ctx.tools.execute_sync(tool, args, a)
        spent["calls"] += 1
        spent["received"] += len(result.text)
        spent["sent"] += len(repr(args))
        if mount.backend in CLOUD:
            spent["requests"] += len(mount.requests())
        return result

    result = call("edit", edit)
    while _code(result) == "FS_STALE_VERSION":
        if CHANGE_SHOWN not in result.text:
            call("read", {"file_path": name})  # the remedy: read it again
        result = call("edit", edit)
    _ok(result)
    final = run_async(_text(fs, name))
    assert "line three\n" in final, "B's change was lost"
    assert f"line {target}, edited by A\n" in final, "A's change was lost"
    return spent


async def _text(fs: Any, name: str) -> str:
    return str(await fs.read_text(await fs.resolve(name)))


def _conflict(opts: Options) -> tuple[str, list[Goal]]:
    sizes = (40, 400)
    modes = ("before", "change", "rebase")
    label = {
        "before": "before: refused, re-read, edit",
        "change": "the change in the refusal: refused, edit",
        "rebase": "`rebase=True`: edit",
    }
    spent: dict[tuple[str, int, str], dict[str, int]] = {}
    for backend in ("local", *CLOUD):
        mount = opts.stores.mount(backend)
        progress(f"conflicts: two agents, {mount.label}")
        for lines in sizes:
            for mode in modes:
                spent[(backend, lines, mode)] = _two_agents(mount, mode, lines)
    rows = []
    for lines in sizes:
        for mode in modes:
            local = spent[("local", lines, mode)]
            rows.append(
                [
                    f"{lines} lines (~{lines * 60 // 1000} KB)",
                    label[mode],
                    f"**{local['calls']}**",
                    f"{local['received']:,}",
                    f"{local['sent']:,}",
                    *(str(spent[(b, lines, mode)]["requests"]) for b in CLOUD),
                ]
            )
    calls = {mode: spent[("local", 400, mode)]["calls"] for mode in modes}
    goals = [
        Goal(
            "model calls for A to land its edit after B's change elsewhere",
            "before 3 (with a full re-read), with the change 2 (the diff only), with rebase 1",
            f"{calls['before']}, {calls['change']}, {calls['rebase']}",
            (calls["before"], calls["change"], calls["rebase"]) == (3, 2, 1),
        )
    ]
    body = "\n\n".join(
        [
            "Agent A reads a file; agent B (another session) edits line 3; A edits line "
            "N − 10 with the same `edit` it would have sent anyway. A follows the remedy it "
            "is given: when the refusal shows the change it sends the edit again, otherwise "
            "it reads the file first. Counted from A's first edit until it lands: A's tool "
            "calls, the characters of the tool results A receives (the model's input), of "
            "the arguments it sends, and the store requests on each cloud. Both edits end up "
            "in the file in every row.",
            table(
                [
                    "file",
                    "A's way",
                    "A's calls",
                    "chars received",
                    "chars sent",
                    *(f"requests, {BACKEND_LABELS[b]}" for b in CLOUD),
                ],
                rows,
                "llrrrrrr",
            ),
        ]
    )
    return body, goals


# -- 3. contention ---------------------------------------------------------------------------


def change_aware_loop(
    mount: Mount, agents: int, edits: int, name: str
) -> tuple[contention.Outcome, int]:
    """``contention.fsseam_loop``'s agents, but retrying from the change in the refusal.

    An agent reads once; after a refusal that shows the change it takes the
    counter's new value from the change (``+count=N``) and edits again at
    once; only a refusal without the change sends it back to ``read``.
    Returns the outcome and the total tool calls.
    """
    fs = mount.fsseam()
    ctx = _context(fs)
    run_async(_write(fs, name, "count=0\n"))
    retries = [0] * agents
    errors = [0] * agents
    calls = [0] * agents

    async def agent(i: int) -> None:
        run = ToolExecution(agent=Agent(session=f"agent-{i}-{name}"))
        value: int | None = None
        done = 0
        while done < edits:
            if value is None:
                calls[i] += 1
                read = await ctx.tools.execute("read", {"file_path": name}, run)
                if contention._io_error(read, errors, i):
                    continue
                assert read.value is not None, read.text
                value = contention._parse(read.value["lines"][0]["text"])
                assert value is not None, read.text
            calls[i] += 1
            args = {
                "file_path": name,
                "old_string": f"count={value}",
                "new_string": f"count={value + 1}",
            }
            res = await ctx.tools.execute("edit", args, run)
            if not res.is_error:
                done += 1
                value += 1
            elif _code(res) == "FS_STALE_VERSION":
                retries[i] += 1
                seen = re.findall(r"^\+count=(\d+)$", res.text, re.MULTILINE)
                value = int(seen[-1]) if seen and CHANGE_SHOWN in res.text else None
            elif not contention._io_error(res, errors, i):
                raise AssertionError(res.text)
            else:
                value = None

    seconds = contention._threads(agents, lambda i: asyncio.run(agent(i)))
    final = contention._parse(run_async(_text(fs, name)))
    assert final is not None
    outcome = contention.Outcome(agents, edits, final, seconds, sum(retries), errors=sum(errors))
    return outcome, sum(calls)


async def _write(fs: Any, name: str, content: str) -> None:
    await fs.write_text(await fs.resolve(name), content)


def _contention(opts: Options) -> tuple[str, list[Goal]]:
    agent_counts = (1, 4, 16) if opts.quick else (1, 2, 4, 8, 16)
    edits = 3 if opts.quick else 25
    rows = []
    lost = 0
    runs = 0
    for backend in BACKENDS:
        mount = opts.stores.mount(backend)
        for agents in agent_counts:
            before = contention.fsseam_loop(
                mount, agents, edits, f"before-{agents}.txt", cache_bytes=0
            )
            after = contention.fsseam_loop(mount, agents, edits, f"after-{agents}.txt")
            aware, calls = change_aware_loop(mount, agents, edits, f"aware-{agents}.txt")
            lost += before.lost + after.lost + aware.lost
            runs += 3
            progress(
                f"conflicts: contention, {mount.label}, {agents:2d} × {edits}: before "
                f"{before.throughput:.0f}/s, after {after.throughput:.0f}/s, from the change "
                f"{aware.throughput:.0f}/s; lost {before.lost}/{after.lost}/{aware.lost}"
            )
            expected = agents * edits
            rows.append(
                [
                    BACKEND_LABELS[backend],
                    f"{agents} × {edits}",
                    f"{before.final} / {after.final} / **{aware.final}** of {expected}",
                    f"{before.retries_per_success:.2f}",
                    f"{after.retries_per_success:.2f}",
                    f"{aware.retries_per_success:.2f}",
                    f"{before.throughput:.0f}",
                    f"{after.throughput:.0f}",
                    f"{aware.throughput:.0f}",
                    f"{2 * (before.retries + expected) / expected:.1f}",
                    f"{calls / expected:.1f}",
                ]
            )
    goals = [
        Goal(
            "lost updates under contention, cache on and off, every backend",
            "0",
            f"{lost} lost in {runs} runs",
            lost == 0,
        )
    ]
    body = "\n\n".join(
        [
            f"`contention.py`'s loop (agents × {edits} read→edit increments of one counter, "
            "each agent a thread with its own loop and session, one shared `Context`), run "
            "three ways side by side: *before* with `cache_bytes=0`, *after* with the "
            "default cache (the same agents: on `FS_STALE_VERSION` they read again), and "
            "*from the change*: agents that, refused with the change shown, take the new "
            "count from it and edit again without reading. Model calls per success: "
            "read + edit per attempt before; edits plus the reads needed from the change.",
            table(
                [
                    "store",
                    "agents × edits",
                    "final (before / after / from the change)",
                    "retries / success, before",
                    "after",
                    "from the change",
                    "edits/s, before",
                    "after",
                    "from the change",
                    "calls / success, before",
                    "from the change",
                ],
                rows,
                "llrrrrrrrrr",
            ),
        ]
    )
    return body, goals


# -- 4. false conflicts ----------------------------------------------------------------------------


def _events(mount: Mount, name: str) -> dict[str, Callable[[bytes], str | None]]:
    """Ways to give ``name`` a new version with the very same bytes; each may say why not."""
    naive = mount.naive()
    path = mount.naive_path(name)

    def rewrite(data: bytes) -> str | None:
        naive.pipe_file(path, data)
        return None

    def touch(_: bytes) -> str | None:
        if mount.backend == "local":
            now = time.time_ns()
            os.utime(path, ns=(now, now + 1_000_000))
        elif mount.backend == "s3":
            naive.setxattr(path, touched=str(time.time_ns()))  # a copy onto itself
        elif mount.backend in ("gcs", "azure"):
            try:
                naive.setxattrs(path, touched=str(time.time_ns()))  # a metadata update
            except Exception as exc:  # fake-gcs-server may not implement the PATCH
                return f"not supported here ({type(exc).__name__})"
        else:
            return "n/a (no touch on this store)"
        return None

    def formatter(data: bytes) -> str | None:
        if mount.backend == "local":
            spare = f"{path}.formatted"  # write a temp file, rename it over: a new inode
            with open(spare, "wb") as out:
                out.write(data)
            os.replace(spare, path)
            return None
        # Another agent (its own mount and session) reads the file and writes it back as is.
        other = _context(mount.fsseam())
        run = ToolExecution(agent=Agent(session="formatter"))
        _ok(other.tools.execute_sync("read", {"file_path": name}, run))
        _ok(other.tools.execute_sync("write", {"file_path": name, "content": data.decode()}, run))
        return None

    return {"touch": touch, "identical rewrite": rewrite, "formatter no-op": formatter}


def _false_conflicts(opts: Options) -> tuple[str, list[Goal]]:
    rows = []
    refused_after = 0
    real_refused = 0
    checked = 0
    for backend in BACKENDS:
        mount = opts.stores.mount(backend)
        progress(f"conflicts: false conflicts, {mount.label}")
        for event in ("touch", "identical rewrite", "formatter no-op"):
            cells: dict[str, str] = {}
            moved = ""
            for mode in MODES:
                name = f"{mode}-{event.replace(' ', '-')}.txt"
                fs = _mount_fs(mount, mode)
                ctx = _context(fs)
                run = ToolExecution(agent=Agent(session=f"a-{mode}-{event}"))
                text = "".join(f"line {i}\n" for i in range(1, 21))
                _ok(ctx.tools.execute_sync("write", {"file_path": name, "content": text}, run))
                _ok(ctx.tools.execute_sync("read", {"file_path": name}, run))
                seen = run_async(_version(fs, name))
                why = _events(mount, name)[event](text.encode())
                if why is not None:
                    cells[mode] = why
                    continue
                now = run_async(_version(fs, name))
                moved = "yes" if now != seen else "no"
                args = {"file_path": name, "old_string": "line 10\n", "new_string": "line ten\n"}
                result = ctx.tools.execute_sync("edit", args, run)
                code = _code(result)
                cells[mode] = "edited" if code is None else f"refused ({code})"
                if mode == "after" and code is not None:
                    refused_after += 1
                # A real change since the read is still refused.
                _ok(ctx.tools.execute_sync("read", {"file_path": name}, run))
                mount.naive().pipe_file(mount.naive_path(name), b"someone else's change\n")
                again = ctx.tools.execute_sync("edit", {**args, "old_string": "line 11\n"}, run)
                if mode == "after":
                    checked += 1
                    real_refused += _code(again) == "FS_STALE_VERSION"
            rows.append(
                [BACKEND_LABELS[backend], event, moved, cells["before"], f"**{cells['after']}**"]
            )
    goals = [
        Goal(
            "false conflicts after a read (touch, identical rewrite, formatter no-op)",
            "none; a real change still refused",
            f"{refused_after} refused after; {real_refused} of {checked} real changes refused",
            refused_after == 0 and real_refused == checked,
        )
    ]
    body = "\n\n".join(
        [
            "A reads a file; then something gives it a new version without changing a byte; "
            "then A edits it. *touch*: `os.utime` on local disk, a copy of the object onto "
            "itself with new metadata on S3 (s3fs `setxattr`), a metadata update on GCS and "
            "Azure (`setxattrs`). *Identical rewrite*: an upload of the same bytes (plain "
            "fsspec `pipe_file`; in place on local disk). *Formatter no-op*: on local disk "
            "a temp file renamed over the file (a new inode); elsewhere another agent, on "
            "its own mount, reading the file and writing it back unchanged. *New version?* "
            "says whether the store's version moved (S3 ETags and the memory store's hashes "
            "follow the content, so the same bytes keep their version there; a GCS "
            "metadata update moves the metageneration, not the generation). After each "
            "row, a real change by someone else is made and A's next edit must be refused: "
            "it was, on every backend.",
            table(["store", "event", "new version?", "A's edit, before", "after"], rows, "lllll"),
        ]
    )
    return body, goals


async def _version(fs: Any, name: str) -> str:
    info = await fs.stat(await fs.resolve(name))
    assert info is not None
    return str(info.version)


# -- the section ----------------------------------------------------------------------------


def section(opts: Options) -> Section:
    parts = []
    goals: list[Goal] = []
    for title, part in (
        ("Requests per tool call after a read", _requests),
        ("Two agents, one file: what A spends to land its edit", _conflict),
        ("No false conflicts", _false_conflicts),
        ("Contention with the cache", _contention),
    ):
        body, found = part(opts)
        parts.append(f"### {title}\n\n{body}")
        goals.extend(found)
    return Section(
        "conflicts", "Conflicts: one request, one turn (issue 13)", "\n\n".join(parts), goals
    )


def main() -> None:
    """Run the section; print it, or with ``--write`` put it into docs/benchmarks.md."""
    standalone(section, __doc__, "benchmarks/conflicts.py")


if __name__ == "__main__":
    main()
