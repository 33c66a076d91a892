"""Read-modify-write loops shared by the suite's threads, tasks and worker processes.

A job is a dict with ``url``, ``options``, ``op`` and the op's arguments,
sent as one line (base64 pickle). For each job a worker mounts the root with
:func:`~fsseam.backends.open_fs`, prints ``ready``, waits for one line on
stdin (so that every worker starts at once), runs the op and prints its result
as one JSON line. Two ways to run it:

* ``python -m fsseam.testing._worker --serve``: jobs one after another, each
  answered ``{"result": ...}`` or ``{"error": traceback}``, until stdin
  closes. The suite keeps a few such workers for the whole session, so a
  cross-process test does not pay for importing the store's SDK four times.
* ``python -m fsseam.testing._worker PAYLOAD``: one job, then exit (the
  ``crash_on_publish`` op kills its process on purpose).

Kept free of pytest so a worker starts fast.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import pickle
import sys
import traceback
from collections.abc import Awaitable
from typing import Any

from fsseam.backends import open_fs
from fsseam.seam import (
    CreateIfAbsent,
    FileSystem,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsTarget,
    FsVersion,
    ReplaceIfVersion,
)

__all__ = [
    "CRASH_EXIT",
    "MAX_ATTEMPTS",
    "STALLED_ATTEMPTS",
    "CounterStalled",
    "counter_value",
    "decode_payload",
    "encode_payload",
    "increment",
    "main",
    "read_versioned",
    "serve",
]

CRASH_EXIT = 86
"""Exit status of a worker killed on purpose just before it publishes a write."""

STALLED_ATTEMPTS = 5
"""Refusals in a row, with the counter unchanged, after which an increment gives up.

A ``FS_STALE_VERSION`` means someone else's write landed since the read, and
every write here raises the counter, so the next read shows a higher value.
Refusals while the value stands still mean nobody is winning: the store
refuses replaces at the version it just returned."""

MAX_ATTEMPTS = 200
"""Attempts per increment, whatever happens: a backstop that keeps a run finite."""


class CounterStalled(AssertionError):
    """An increment found no way through: the store refused guarded replaces it should accept."""


async def read_versioned(fs: FileSystem, target: FsTarget) -> tuple[str, FsVersion]:
    """The text and the version of exactly those bytes (one open, no separate stat)."""
    async with fs.stream_text(target) as stream:
        text = "".join([chunk async for chunk in stream])
        return text, stream.info.version


def counter_value(text: str) -> int:
    """The number in a counter file (``count=N``)."""
    return int(text.strip().removeprefix("count="))


async def increment(
    fs: FileSystem, target: FsTarget, times: int, *, via: str = "edit", pause: bool = True
) -> int:
    """Add ``times`` to the counter at ``target`` with guarded read->write cycles.

    Each cycle reads the text and its version, then edits (``via="edit"``) or
    rewrites (``via="write"``) under that version, retrying on
    ``FS_STALE_VERSION``. ``pause`` yields to the loop between read and write
    so concurrent tasks interleave. Returns how many cycles lost a race.
    """
    conflicts = 0
    for _ in range(times):
        stalled = 0
        last: int | None = None
        for attempt in range(1, MAX_ATTEMPTS + 1):
            text, version = await read_versioned(fs, target)
            value = counter_value(text)
            stalled = stalled + 1 if value == last else 1
            last = value
            if pause:
                await asyncio.sleep(0)
            try:
                if via == "edit":
                    edit = FsEditRequest(f"count={value}\n", f"count={value + 1}\n")
                    await fs.edit_text(target, edit, version)
                else:
                    await fs.write_text(target, f"count={value + 1}\n", ReplaceIfVersion(version))
            except FsError as exc:
                if exc.code != FsErrorCode.FS_STALE_VERSION:
                    raise
                conflicts += 1
                if stalled >= STALLED_ATTEMPTS or attempt == MAX_ATTEMPTS:
                    raise CounterStalled(
                        _stalled_message(target, via, value, attempt, stalled, exc)
                    ) from exc
                continue
            break
    return conflicts


def _stalled_message(
    target: FsTarget, via: str, value: int, attempts: int, stalled: int, exc: FsError
) -> str:
    where = f'no guarded {via} of "{target.display_path}" landed in {attempts} attempts'
    if stalled >= STALLED_ATTEMPTS:
        return (
            f"{where}: the last {stalled} were refused as FS_STALE_VERSION while the counter "
            f"stayed at count={value}, so no writer is winning: the store refuses a replace "
            f"at the version it just returned (last refusal: {exc}); check that it honours "
            "conditional writes (`fsseam doctor URL`)"
        )
    return (
        f"{where}: every one lost a race (FS_STALE_VERSION) although the counter moved on "
        f"(now count={value}); one writer is starved (last refusal: {exc})"
    )


async def _attempt(call: Awaitable[Any]) -> dict[str, Any]:
    try:
        await call
    except FsError as exc:
        return {"ok": False, "code": exc.code.value}
    return {"ok": True, "code": None}


async def _run_op(fs: FileSystem, payload: dict[str, Any]) -> dict[str, Any]:
    op = payload["op"]
    target = await fs.resolve(payload["path"])
    if op == "increment":
        conflicts = await increment(fs, target, payload["times"], via=payload.get("via", "edit"))
        return {"ok": True, "conflicts": conflicts}
    if op == "write_if_version":
        guard = ReplaceIfVersion(FsVersion(payload["version"]))
        return await _attempt(fs.write_text(target, payload["content"], guard))
    if op == "create":
        return await _attempt(fs.write_text(target, payload["content"], CreateIfAbsent()))
    if op == "crash_on_publish":

        def crash(*_args: Any, **_kwargs: Any) -> None:
            os._exit(CRASH_EXIT)

        # Everything up to the publishing rename/link runs for real.
        os.rename = os.replace = os.link = crash
        intent = CreateIfAbsent() if payload.get("create") else None
        await fs.write_text(target, payload["content"], intent)
        return {"ok": True, "code": None}
    raise ValueError(f"unknown op {op!r}")


def encode_payload(payload: dict[str, Any]) -> str:
    """The command-line form of a worker payload."""
    return base64.b64encode(pickle.dumps(payload)).decode("ascii")


def decode_payload(line: str) -> dict[str, Any]:
    """The job a parent sent with :func:`encode_payload`."""
    payload: dict[str, Any] = pickle.loads(base64.b64decode(line))  # our own parent wrote it
    return payload


def serve() -> None:
    """Run jobs from stdin until it closes (see the module docstring)."""
    while line := sys.stdin.readline().strip():
        try:
            payload = decode_payload(line)
            fs = open_fs(payload["url"], **payload["options"])
        except Exception:
            print(json.dumps({"error": traceback.format_exc()}), flush=True)
            continue
        print("ready", flush=True)
        if not sys.stdin.readline():
            return
        try:
            result = asyncio.run(_run_op(fs, payload))
        except Exception:
            print(json.dumps({"error": traceback.format_exc()}), flush=True)
        else:
            print(json.dumps({"result": result}), flush=True)


def main(argv: list[str] | None = None) -> None:
    """Worker process entry point (see the module docstring)."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--serve"]:
        serve()
        return
    payload = decode_payload(args[0])
    fs = open_fs(payload["url"], **payload["options"])
    print("ready", flush=True)
    sys.stdin.readline()
    result = asyncio.run(_run_op(fs, payload))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
