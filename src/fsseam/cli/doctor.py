"""``fsseam doctor URL``: prove, with a scratch object, that a store enforces its guards."""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import TextIO, TypeVar

from fsseam.cli._common import (
    EXIT_OK,
    EXIT_UNSAFE,
    Parents,
    exit_status,
    mount,
    probe,
    seam_errors,
)
from fsseam.seam import (
    CreateIfAbsent,
    FileSystem,
    FsEditOutcome,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsTarget,
    FsVersion,
    FsWriteIntent,
    FsWriteOutcome,
    ReplaceIfVersion,
)

__all__ = ["doctor", "register"]

T = TypeVar("T")


def register(parents: Parents) -> None:
    """Add ``doctor`` to the parser."""
    doc = parents.command(
        "doctor",
        "check that a store enforces conditional writes",
        "With a scratch object .fsseam-doctor-<random> under URL, check that the\n"
        "store refuses a second create-only write and writes at a stale version,\n"
        "including concurrent ones, and report dialect, capabilities, versions\n"
        "and timings. Exit 1 when a precondition was not enforced. The scratch\n"
        "object is removed afterwards.",
        parents=[parents.storage],
    )
    doc.add_argument("url", metavar="URL", help="workspace root to check")
    doc.set_defaults(run=_cmd_doctor)


_CONFLICTS = frozenset(
    {FsErrorCode.FS_STALE_VERSION, FsErrorCode.FS_NOT_OBSERVED, FsErrorCode.FS_AMBIGUOUS_EDIT}
)
"""Refusals that mean "a guard held" (anything else is an error, not a verdict)."""

_Outcome = FsWriteOutcome | FsEditOutcome
OutcomeT = TypeVar("OutcomeT", FsWriteOutcome, FsEditOutcome)


@dataclass(slots=True)
class _Report:
    """What the doctor saw, printed as it goes."""

    out: TextIO
    failed: list[str] = field(default_factory=list)
    errors: list[FsError] = field(default_factory=list)
    versions: list[FsVersion] = field(default_factory=list)

    def seen(self, version: FsVersion) -> FsVersion:
        if version not in self.versions:
            self.versions.append(version)
        return version

    def line(self, status: str, text: str, ms: float) -> None:
        print(f"  {status:<5} {text}  ({ms:.1f} ms)", file=self.out)

    def ok(self, text: str, ms: float) -> None:
        self.line("ok", text, ms)

    def fail(self, text: str, ms: float) -> None:
        self.failed.append(text)
        self.line("FAIL", text, ms)

    def error(self, text: str, exc: FsError, ms: float) -> None:
        self.errors.append(exc)
        self.line("ERROR", f"{text}: {exc.code.value}: {exc.message}", ms)

    def refused(self, label: str, result: _Outcome | FsError, ms: float, unsafe: str) -> None:
        """A guarded write that must be refused with a conflict."""
        if not isinstance(result, FsError):
            self.seen(result.version)
            self.fail(f"{label}: ACCEPTED ({unsafe})", ms)
        elif result.code in _CONFLICTS:
            self.ok(f"{label}: refused ({result.code.value})", ms)
        else:
            self.error(label, result, ms)

    def race(self, label: str, results: Sequence[OutcomeT | FsError], ms: float) -> OutcomeT | None:
        """Concurrent guarded writes at one version: exactly one must win."""
        winners: list[OutcomeT] = [item for item in results if not isinstance(item, FsError)]
        losers = [item for item in results if isinstance(item, FsError)]
        for item in winners:
            self.seen(item.version)
        label = f"{len(results)} concurrent {label} at one version"
        unexpected = [exc for exc in losers if exc.code not in _CONFLICTS]
        if unexpected:
            self.error(label, unexpected[0], ms)
        elif len(winners) == 1:
            self.ok(f"{label}: 1 accepted, {len(losers)} refused", ms)
            return winners[0]
        elif winners:
            self.fail(f"{label}: {len(winners)} ACCEPTED (the store ignores If-Match)", ms)
        else:
            self.fail(f"{label}: all refused, none won", ms)
        return None

    def verdict(self, scratch: str | None, *, removed: bool = False) -> int:
        print("versions seen:", file=self.out)
        for version in self.versions:
            print(f"  {version}", file=self.out)
        if scratch is not None and removed:
            print(f"scratch removed: {scratch}", file=self.out)
        elif scratch is not None:
            print(
                f"scratch left: {scratch} (could not remove it; remove it by hand)", file=self.out
            )
        if self.failed:
            print("result: UNSAFE, the store did not enforce a precondition", file=self.out)
            return EXIT_UNSAFE
        if self.errors:
            print("result: incomplete, a check could not run", file=self.out)
            return exit_status(self.errors[0].code.value)
        print("result: ok, the store enforces its preconditions", file=self.out)
        return EXIT_OK


async def _timed(coro: Awaitable[T]) -> tuple[T | FsError, float]:
    """Await ``coro``; an FsError is returned, not raised, with the elapsed milliseconds."""
    start = time.perf_counter()
    try:
        value: T | FsError = await coro
    except FsError as exc:
        value = exc
    return value, (time.perf_counter() - start) * 1000


async def _gather_timed(coros: list[Awaitable[T]]) -> tuple[list[T | FsError], float]:
    start = time.perf_counter()
    timed = await asyncio.gather(*[_timed(coro) for coro in coros])
    return [value for value, _ in timed], (time.perf_counter() - start) * 1000


async def _finish(fs: FileSystem, target: FsTarget, report: _Report) -> int:
    """Remove the scratch object when the file system can, then give the verdict."""
    remove = getattr(fs, "remove", None)
    removed = False
    if callable(remove):
        try:
            await remove(target)
            removed = True
        except FsError:
            removed = False
    return report.verdict(target.display_path, removed=removed)


async def doctor(fs: FileSystem, out: TextIO, *, racers: int = 8) -> int:
    """Prove with a scratch object that ``fs`` enforces its write guards; returns the exit status.

    Creates ``.fsseam-doctor-<random>`` under the root and checks, through the
    seam only: a second create-only write is refused; a replace at the current
    version is accepted and changes the version; a replace and an edit at a
    stale version are refused; of ``racers`` concurrent replaces (then edits)
    at one version exactly one wins (all of them may pass the seam's early
    version check, so only the store's conditional write stops the others);
    reads and ``stat`` report the version the winning write returned.

    Returns 0, 1 (:data:`EXIT_UNSAFE`) when a precondition was not enforced,
    or the error family's status when a check could not run. The scratch
    object is removed afterwards where the file system offers ``remove``
    (:class:`~fsseam.backends.FsspecFileSystem` does); otherwise its path is printed.
    """
    report = _Report(out)
    caps = fs.capabilities
    print(f"root:         {(await fs.resolve('.')).display_path}", file=out)
    print(
        f"dialect:      {getattr(getattr(fs, 'dialect', None), 'name', type(fs).__name__)}",
        file=out,
    )
    print(
        f"capabilities: atomic_conditional_write={caps.atomic_conditional_write}"
        f" read_only={caps.read_only}",
        file=out,
    )
    if not caps.atomic_conditional_write:
        print("  note  guards hold within this process only, not across processes", file=out)
    target = await fs.resolve(f".fsseam-doctor-{secrets.token_hex(6)}")
    print(f"scratch:      {target.display_path}", file=out)

    def write(text: str, guard: FsWriteIntent) -> Awaitable[FsWriteOutcome]:
        return fs.write_text(target, text, guard)

    def edit(old: str, new: str, version: FsVersion) -> Awaitable[FsEditOutcome]:
        return fs.edit_text(target, FsEditRequest(old, new), version)

    async def read_back() -> tuple[str, FsVersion]:
        async with fs.stream_text(target) as stream:
            return "".join([chunk async for chunk in stream]), stream.info.version

    created, ms = await _timed(write("fsseam doctor\n", CreateIfAbsent()))
    if isinstance(created, FsError):
        report.error("create-only write of a new object", created, ms)
        return report.verdict(None)
    v1 = report.seen(created.version)
    report.ok("create-only write of a new object: accepted", ms)
    again, ms = await _timed(write("fsseam doctor: twice\n", CreateIfAbsent()))
    report.refused("create-only write of an existing object", again, ms, "If-None-Match ignored")
    if not isinstance(again, FsError):
        v1 = again.version  # keep going from what is stored, to check the other guards too

    replaced, ms = await _timed(write("fsseam doctor: replaced\n", ReplaceIfVersion(v1)))
    if isinstance(replaced, FsError):
        report.error("replace at the current version", replaced, ms)
        return await _finish(fs, target, report)
    v2 = report.seen(replaced.version)
    if v2 == v1:
        report.fail("replace at the current version: accepted, but the version is unchanged", ms)
    else:
        report.ok("replace at the current version: accepted, new version", ms)
    stale, ms = await _timed(write("fsseam doctor: stale\n", ReplaceIfVersion(v1)))
    report.refused("replace at a stale version", stale, ms, "a lost update")

    base = v2 if isinstance(stale, FsError) else stale.version
    results, ms = await _gather_timed(
        [write(f"fsseam doctor: racer {i}\n", ReplaceIfVersion(base)) for i in range(racers)]
    )
    winner = report.race("replaces", results, ms)

    stored, ms = await _timed(read_back())
    if isinstance(stored, FsError):
        report.error("read back", stored, ms)
        return await _finish(fs, target, report)
    text, version = stored
    report.seen(version)
    if winner is not None:
        if (text, version) == (winner.after, winner.version):
            report.ok("read back: the winner's content and version", ms)
        else:
            report.fail("read back: not the content or version the winning write returned", ms)

    # new_string keeps old_string, so every racer still matches whatever won before it.
    stale_edit, ms = await _timed(edit("racer", "racer, stale edit,", v1))
    report.refused("edit at a stale version", stale_edit, ms, "a lost update")
    base = version if isinstance(stale_edit, FsError) else stale_edit.version
    edits, ms = await _gather_timed(
        [edit("racer", f"racer, edited by {i},", base) for i in range(racers)]
    )
    edited = report.race("edits", edits, ms)
    if edited is not None:
        info, ms = await _timed(fs.stat(target))
        if isinstance(info, FsError):
            report.error("stat", info, ms)
        elif info is not None and report.seen(info.version) == edited.version:
            report.ok("stat: the version the winning edit returned", ms)
        else:
            report.fail("stat: not the version the winning edit returned", ms)
    return await _finish(fs, target, report)


def _cmd_doctor(args: argparse.Namespace) -> int:
    fs = mount(args.url, args.options, read_only=False)

    async def run() -> int:
        await probe(fs, args.url)
        with seam_errors("doctor"):
            return await doctor(fs, sys.stdout)

    return asyncio.run(run())
