"""SIGKILL a local write at every step of its path, in forked children of one fresh process.

Usage: ``python -m tests.hardening.crash_worker SPEC_JSON`` with the spec
``{"base": dir, "scenario": name}``. The worker first runs the scenario once
in a child with every OS call of the write path traced, to learn the steps;
then, for each step and each phase (``before`` the call, ``after`` it, and
``partial`` for a ``write`` that got half its bytes out), it prepares a fresh
directory, forks a child that SIGKILLs itself at exactly that point, and
waits for it. It prints one JSON list: ``[{"dir", "index", "call", "phase",
"signal", "publishes"}]``, where ``publishes`` marks a ``rename``/``link``
onto the target's own name (a link to fsseam's temp name publishes nothing).
The parent test inspects the directories.

Scenarios (``OLD``/``NEW`` are the file's bytes before and after):

- ``replace``: an unguarded write of ``f.txt``;
- ``guarded``: a write under ``ReplaceIfVersion`` of the version it read (the
  same OS calls as ``replace``, which the suite therefore skips);
- ``create``: a ``CreateIfAbsent`` write of a missing ``f.txt``;
- ``edit``: an edit of ``f.txt`` at the version it read;
- ``nested``: a create of ``sub/deeper/f.txt`` (parents created on the way);
- ``named-guarded``, ``named-create``: ``guarded`` and ``create`` where the
  file system offers no ``O_TMPFILE``, so the temp file has a name (created
  only under the directory's lock).
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from fsseam import open_fs
from fsseam.backends.dialects import local
from fsseam.seam import CreateIfAbsent, FsEditRequest, ReplaceIfVersion

OLD = b"old line 1\nold line 2\n" * 64
NEW = b"new line 1\nnew line 2\n" * 96
TRACED: dict[Any, tuple[str, ...]] = {
    os: (
        "open",
        "read",
        "write",
        "fsync",
        "fstat",
        "stat",
        "fchmod",
        "utime",
        "rename",
        "replace",
        "link",
        "unlink",
        "close",
        "mkdir",
    ),
    fcntl: ("flock",),
}
SCENARIOS = ("guarded", "create", "edit", "nested", "named-guarded", "named-create")


def target_of(scenario: str) -> str:
    return "sub/deeper/f.txt" if scenario == "nested" else "f.txt"


def creates(scenario: str) -> bool:
    """True when the scenario's file does not exist before the write."""
    return scenario.removeprefix("named-") in ("create", "nested")


def prepare(directory: str, scenario: str) -> None:
    os.makedirs(directory)
    if not creates(scenario):
        with open(os.path.join(directory, "f.txt"), "wb") as out:
            out.write(OLD)


async def operate(directory: str, scenario: str) -> None:
    if scenario.startswith("named-"):
        local._O_TMPFILE = 0  # as on a file system without O_TMPFILE
        scenario = scenario.removeprefix("named-")
    fs = open_fs(directory)
    target = await fs.resolve(target_of(scenario))
    text = NEW.decode()
    if scenario == "replace":
        await fs.write_text(target, text)
    elif scenario == "guarded":
        info = await fs.stat(target)
        assert info is not None
        await fs.write_text(target, text, ReplaceIfVersion(info.version))
    elif scenario in ("create", "nested"):
        await fs.write_text(target, text, CreateIfAbsent())
    else:
        info = await fs.stat(target)
        assert info is not None
        await fs.edit_text(target, FsEditRequest(OLD.decode(), text), info.version)


Hook = Callable[[int, str, str, tuple[Any, ...]], None]
REAL_WRITE = os.write


def install(on_call: Hook) -> None:
    """Wrap every traced OS function; ``on_call(index, name, phase, args)`` runs around each."""
    counter = [0]
    for module, names in TRACED.items():
        for name in names:
            original = getattr(module, name)

            def traced(*args: Any, _name: str = name, _orig: Any = original, **kw: Any) -> Any:
                index = counter[0]
                counter[0] += 1
                on_call(index, _name, "before", args)
                try:
                    return _orig(*args, **kw)
                finally:
                    on_call(index, _name, "after", args)

            setattr(module, name, traced)


def in_child(work: Callable[[], None]) -> int:
    """Run ``work`` in a forked child; the signal that ended it (0: exited)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            work()
        except BaseException:
            os._exit(3)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return os.WTERMSIG(status)
    code = os.WEXITSTATUS(status)
    if code:
        raise RuntimeError(f"child exited with status {code}")
    return 0


def publishes(name: str, args: tuple[Any, ...], scenario: str) -> bool:
    """True for a rename or link whose destination is the target's own name."""
    return (
        name in ("rename", "replace", "link")
        and len(args) > 1
        and os.path.basename(os.fspath(args[1])) == os.path.basename(target_of(scenario))
    )


def trace(base: str, scenario: str) -> list[tuple[str, bool]]:
    """The traced calls of one uninterrupted run, in order, each with :func:`publishes`."""
    directory = os.path.join(base, "trace")
    prepare(directory, scenario)
    read_end, write_end = os.pipe()

    def work() -> None:
        calls: list[tuple[str, bool]] = []

        def record(_: int, name: str, phase: str, args: tuple[Any, ...]) -> None:
            if phase == "before":
                calls.append((name, publishes(name, args, scenario)))

        install(record)
        asyncio.run(operate(directory, scenario))
        payload = json.dumps(calls).encode()
        os.close(read_end)
        with os.fdopen(write_end, "wb") as out:
            out.write(payload)

    in_child(work)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as source:
        calls: list[tuple[str, bool]] = [tuple(call) for call in json.loads(source.read())]
    return calls


def main(spec: dict[str, Any]) -> list[dict[str, Any]]:
    base, scenario = spec["base"], spec["scenario"]
    calls = trace(base, scenario)
    points = [
        (i, name, phase) for i, (name, _) in enumerate(calls) for phase in ("before", "after")
    ]
    points += [(i, name, "partial") for i, (name, _) in enumerate(calls) if name == "write"]
    report: list[dict[str, Any]] = []
    for index, name, phase in points:
        directory = os.path.join(base, f"k{index:03d}-{phase}")
        prepare(directory, scenario)

        def killer(
            at: int,
            _name: str,
            when: str,
            args: tuple[Any, ...],
            index: int = index,
            phase: str = phase,
        ) -> None:
            if at != index:
                return
            if phase == "partial" and when == "before":
                # Half the bytes reach the temp file, then the process dies.
                data = bytes(args[1])
                REAL_WRITE(args[0], data[: len(data) // 2])
                os.kill(os.getpid(), signal.SIGKILL)
            if when == phase:
                os.kill(os.getpid(), signal.SIGKILL)

        def work(directory: str = directory, killer: Any = killer) -> None:
            install(killer)
            asyncio.run(operate(directory, scenario))

        died = in_child(work)
        report.append(
            {
                "dir": directory,
                "index": index,
                "call": name,
                "phase": phase,
                "signal": died,
                "publishes": calls[index][1],
            }
        )
    return report


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))), flush=True)
