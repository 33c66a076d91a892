"""The doctor as a library: prove, with a scratch object, that a store enforces its guards.

:func:`diagnose` writes ``.fsseam-doctor-<random>`` under the root and checks,
through the seam only, that the store refuses what it must refuse (a second
create-only write, stale replaces, edits and deletes, all but one of several
concurrent guarded writes and deletes), then returns a :class:`DoctorReport`: one
:class:`Check` per step saying what the store did, the quirks the store
showed (named, with what fsseam does about them), and a :class:`Verdict`
whose reason names the check that failed. ``fsseam doctor`` (``fsseam.cli``)
prints it and maps the verdict to its exit status; this module knows nothing
of the command line.

Beyond the seam the doctor uses, when the file system offers it, the
:class:`Maintainable` protocol (``FsspecFileSystem`` does): the dialect's
name and quirk probe, and ``remove`` for the scratch object.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, Protocol, TypeVar, runtime_checkable

from fsseam.seam import (
    CreateIfAbsent,
    FileSystem,
    FsCapabilities,
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

__all__ = [
    "Check",
    "DoctorReport",
    "Maintainable",
    "StoreQuirk",
    "Verdict",
    "diagnose",
]

T = TypeVar("T")
OutcomeT = TypeVar("OutcomeT", FsWriteOutcome, FsEditOutcome)


class StoreQuirk(Protocol):
    """A store's departure from its protocol, as a dialect names it."""

    @property
    def name(self) -> str:
        """A stable identifier (``if-match-needs-unquoted-etag``)."""

    @property
    def description(self) -> str:
        """What the store does and what fsseam does about it."""


class StoreDialect(Protocol):
    """The parts of a dialect the doctor reports."""

    @property
    def name(self) -> str:
        """The dialect's name (``s3``, ``local``...)."""

    @property
    def quirks(self) -> tuple[StoreQuirk, ...]:
        """Quirks detected so far for this store, in this process."""

    async def probe_quirks(self, url: str) -> tuple[StoreQuirk, ...]:
        """Detect quirks with raw requests on the scratch object ``url`` (removed after)."""


@runtime_checkable
class Maintainable(Protocol):
    """What the doctor uses beyond the seam, when a file system offers it."""

    @property
    def dialect(self) -> StoreDialect:
        """The dialect serving the mount."""

    async def remove(self, target: FsTarget) -> None:
        """Delete one file unconditionally (the scratch object)."""


class Verdict(StrEnum):
    """The doctor's conclusion."""

    OK = "ok"
    """Every check passed, and the guards hold across processes."""
    UNSAFE = "unsafe"
    """The store accepted a write it had to refuse: guards do not hold."""
    IN_PROCESS = "in-process"
    """Every check passed, but the guards hold within this process only."""
    INCOMPLETE = "incomplete"
    """A check could not run (an error, not a verdict on the store)."""


@dataclass(frozen=True, slots=True)
class Check:
    """One step of the doctor and what the store did."""

    status: Literal["ok", "FAIL", "ERROR"]
    """``ok``: as required; ``FAIL``: the store accepted what it must refuse (or
    misreported); ``ERROR``: the step could not run."""
    label: str
    """What was checked (``replace at a stale version``)."""
    detail: str
    """What the store did (``refused (FS_STALE_VERSION)``, ``8 ACCEPTED ...``)."""
    ms: float
    """How long the step took."""
    error: FsError | None = None
    """The failure that stopped an ``ERROR`` step."""

    @property
    def line(self) -> str:
        """The report line, e.g. ``  ok    replace at a stale version: refused (…)  (3.1 ms)``."""
        return f"  {self.status:<5} {self.label}: {self.detail}  ({self.ms:.1f} ms)"


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """Everything :func:`diagnose` found."""

    root: str
    dialect: str
    capabilities: FsCapabilities
    scratch: str | None
    """The scratch object's display path (``None``: none was created)."""
    scratch_removed: bool
    checks: tuple[Check, ...]
    versions: tuple[FsVersion, ...]
    """Every distinct version seen, in order."""
    quirks: tuple[StoreQuirk, ...]
    verdict: Verdict
    reason: str
    """Why: the verdict's sentence, naming the failed check when one failed."""

    @property
    def error(self) -> FsError | None:
        """The first error that stopped a check (``INCOMPLETE``)."""
        return next((check.error for check in self.checks if check.error is not None), None)

    @property
    def result_line(self) -> str:
        """The last line of the report: ``result: …``."""
        return f"result: {self.reason}"


_CONFLICTS = frozenset(
    {FsErrorCode.FS_STALE_VERSION, FsErrorCode.FS_NOT_OBSERVED, FsErrorCode.FS_AMBIGUOUS_EDIT}
)
"""Refusals that mean "a guard held" (anything else is an error, not a verdict)."""


@dataclass(slots=True)
class _Run:
    """The report being built; every line goes to ``emit`` as soon as it is known."""

    emit: Callable[[str], None]
    checks: list[Check] = field(default_factory=list)
    versions: list[FsVersion] = field(default_factory=list)
    deleted: bool = False
    """The scratch object is gone (the delete checks removed it)."""
    deletes_refused: bool = False
    """fsseam refuses guarded deletes on this store (it ignores their precondition)."""

    def seen(self, version: FsVersion) -> FsVersion:
        if version not in self.versions:
            self.versions.append(version)
        return version

    def add(self, check: Check) -> None:
        self.checks.append(check)
        self.emit(check.line)

    def ok(self, label: str, detail: str, ms: float) -> None:
        self.add(Check("ok", label, detail, ms))

    def fail(self, label: str, detail: str, ms: float) -> None:
        self.add(Check("FAIL", label, detail, ms))

    def error(self, label: str, exc: FsError, ms: float) -> None:
        self.add(Check("ERROR", label, f"{exc.code.value}: {exc.message}", ms, exc))

    def refused(self, label: str, result: object, ms: float, unsafe: str) -> None:
        """A guarded write that must be refused with a conflict."""
        if not isinstance(result, FsError):
            if isinstance(result, FsWriteOutcome | FsEditOutcome):
                self.seen(result.version)
            self.fail(label, f"ACCEPTED ({unsafe})", ms)
        elif result.code in _CONFLICTS:
            self.ok(label, f"refused ({result.code.value})", ms)
        else:
            self.error(label, result, ms)

    def race(self, what: str, results: Sequence[OutcomeT | FsError], ms: float) -> OutcomeT | None:
        """Concurrent guarded writes at one version: exactly one must win."""
        winners: list[OutcomeT] = [item for item in results if not isinstance(item, FsError)]
        losers = [item for item in results if isinstance(item, FsError)]
        for item in winners:
            self.seen(item.version)
        label = f"{len(results)} concurrent {what} at one version"
        unexpected = [exc for exc in losers if exc.code not in _CONFLICTS]
        if unexpected:
            self.error(label, unexpected[0], ms)
        elif len(winners) == 1:
            self.ok(label, f"1 accepted, {len(losers)} refused", ms)
            return winners[0]
        elif winners:
            self.fail(label, f"{len(winners)} ACCEPTED (the store ignores If-Match)", ms)
        else:
            self.fail(label, "all refused, none won", ms)
        return None


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


async def _checks(fs: FileSystem, target: FsTarget, run: _Run, racers: int) -> None:
    """The checks, in order; stops early where nothing later can be judged."""

    def write(text: str, guard: FsWriteIntent) -> Awaitable[FsWriteOutcome]:
        return fs.write_text(target, text, guard)

    def edit(old: str, new: str, version: FsVersion) -> Awaitable[FsEditOutcome]:
        return fs.edit_text(target, FsEditRequest(old, new), version)

    async def read_back() -> tuple[str, FsVersion]:
        async with fs.stream_text(target) as stream:
            return "".join([chunk async for chunk in stream]), stream.info.version

    created, ms = await _timed(write("fsseam doctor\n", CreateIfAbsent()))
    if isinstance(created, FsError):
        run.error("create-only write of a new object", created, ms)
        return
    v1 = run.seen(created.version)
    run.ok("create-only write of a new object", "accepted", ms)
    again, ms = await _timed(write("fsseam doctor: twice\n", CreateIfAbsent()))
    run.refused("create-only write of an existing object", again, ms, "If-None-Match ignored")
    if not isinstance(again, FsError):
        v1 = again.version  # keep going from what is stored, to check the other guards too

    replaced, ms = await _timed(write("fsseam doctor: replaced\n", ReplaceIfVersion(v1)))
    if isinstance(replaced, FsError):
        run.error("replace at the current version", replaced, ms)
        return
    v2 = run.seen(replaced.version)
    if v2 == v1:
        run.fail("replace at the current version", "accepted, but the version is unchanged", ms)
    else:
        run.ok("replace at the current version", "accepted, new version", ms)
    stale, ms = await _timed(write("fsseam doctor: stale\n", ReplaceIfVersion(v1)))
    run.refused("replace at a stale version", stale, ms, "a lost update")

    base = v2 if isinstance(stale, FsError) else stale.version
    results, ms = await _gather_timed(
        [write(f"fsseam doctor: racer {i}\n", ReplaceIfVersion(base)) for i in range(racers)]
    )
    winner = run.race("replaces", results, ms)

    stored, ms = await _timed(read_back())
    if isinstance(stored, FsError):
        run.error("read back", stored, ms)
        return
    text, version = stored
    run.seen(version)
    if winner is not None:
        if (text, version) == (winner.after, winner.version):
            run.ok("read back", "the winner's content and version", ms)
        else:
            run.fail("read back", "not the content or version the winning write returned", ms)

    # new_string keeps old_string, so every racer still matches whatever won before it.
    stale_edit, ms = await _timed(edit("racer", "racer, stale edit,", v1))
    run.refused("edit at a stale version", stale_edit, ms, "a lost update")
    base = version if isinstance(stale_edit, FsError) else stale_edit.version
    edits, ms = await _gather_timed(
        [edit("racer", f"racer, edited by {i},", base) for i in range(racers)]
    )
    edited = run.race("edits", edits, ms)
    if edited is not None:
        info, ms = await _timed(fs.stat(target))
        if isinstance(info, FsError):
            run.error("stat", info, ms)
        elif info is not None and run.seen(info.version) == edited.version:
            run.ok("stat", "the version the winning edit returned", ms)
        else:
            run.fail("stat", "not the version the winning edit returned", ms)


async def _delete_checks(fs: FileSystem, target: FsTarget, run: _Run, racers: int) -> None:
    """A delete at a stale version is refused; of concurrent ones at the current version,
    exactly one is accepted and the object is gone."""
    info, ms = await _timed(fs.stat(target))
    if isinstance(info, FsError) or info is None:
        run.error(
            "stat before deleting",
            info or FsError("the scratch object vanished", "FS_NOT_FOUND"),
            ms,
        )
        return
    current = run.seen(info.version)
    stale = next((v for v in run.versions if v != current), None)
    if stale is not None:
        result, ms = await _timed(fs.delete(target, stale))
        if isinstance(result, FsError) and result.code is FsErrorCode.FS_SANDBOX_DENIED:
            run.deletes_refused = True
            run.ok(
                "delete at a stale version",
                "refused by fsseam: the store ignores a delete's precondition, so delete "
                "and move are refused on it (nothing is ever deleted unguarded)",
                ms,
            )
            return
        if not isinstance(result, FsError):
            run.deleted = True
        run.refused("delete at a stale version", result, ms, "a delete of a change not seen")
        if run.deleted:
            return
    results, ms = await _gather_timed([fs.delete(target, current) for _ in range(racers)])
    won = [item for item in results if not isinstance(item, FsError)]
    lost = [item for item in results if isinstance(item, FsError)]
    label = f"{racers} concurrent deletes at one version"
    unexpected = [exc for exc in lost if exc.code not in _DELETE_LOSSES]
    if won:
        run.deleted = True
    if unexpected:
        run.error(label, unexpected[0], ms)
    elif len(won) == 1:
        run.ok(label, f"1 accepted, {len(lost)} refused", ms)
    elif won:
        run.fail(label, f"{len(won)} ACCEPTED (the store ignores a delete's precondition)", ms)
    else:
        run.fail(label, "all refused, none won", ms)
    if won:
        gone, ms = await _timed(fs.stat(target))
        if isinstance(gone, FsError):
            run.error("stat after the delete", gone, ms)
        elif gone is None:
            run.ok("stat after the delete", "gone", ms)
        else:
            run.deleted = False
            run.fail("stat after the delete", "still there after an accepted delete", ms)


_DELETE_LOSSES = frozenset({FsErrorCode.FS_STALE_VERSION, FsErrorCode.FS_NOT_FOUND})


def _verdict(checks: Sequence[Check], caps: FsCapabilities) -> tuple[Verdict, str]:
    failed = [check for check in checks if check.status == "FAIL"]
    if failed:
        why = "; ".join(f"{check.label}: {check.detail}" for check in failed)
        return Verdict.UNSAFE, f"UNSAFE, the store did not enforce a precondition ({why})"
    errors = [check for check in checks if check.status == "ERROR"]
    if errors:
        first = errors[0]
        return (
            Verdict.INCOMPLETE,
            f"incomplete, a check could not run ({first.label}: {first.detail})",
        )
    if not caps.atomic_conditional_write:
        return Verdict.IN_PROCESS, (
            "in-process only, every check passed but the guards hold within this process "
            "only (atomic_conditional_write=False): other processes or machines writing "
            "here can overwrite each other's changes"
        )
    return Verdict.OK, "ok, the store enforces its preconditions"


async def diagnose(
    fs: FileSystem, *, racers: int = 8, emit: Callable[[str], None] | None = None
) -> DoctorReport:
    """Prove with a scratch object that ``fs`` enforces its write guards.

    Checks, through the seam only: a second create-only write is refused; a
    replace at the current version is accepted and changes the version; a
    replace and an edit at a stale version are refused; of ``racers``
    concurrent replaces (then edits) at one version exactly one wins (all of
    them may pass the seam's early version check, so only the store's
    conditional write stops the others); reads and ``stat`` report the
    version the winning write returned; a delete at a stale version is
    refused, and of ``racers`` concurrent deletes at the current version
    exactly one is accepted, after which the object is gone. On a store that
    ignores a delete's precondition fsseam refuses deletes, which the report
    says (the verdict still judges the write guards). Where ``fs`` is :class:`Maintainable`,
    the store is first probed for quirks with its own scratch object, and the
    scratch objects are removed afterwards.

    ``emit`` receives each line of the report as soon as it is known (the
    CLI prints them). Raises :class:`~fsseam.seam.FsError` only when the root
    itself cannot be resolved.
    """
    out = emit if emit is not None else (lambda _line: None)
    run = _Run(out)
    caps = fs.capabilities
    maintained = fs if isinstance(fs, Maintainable) else None
    root = (await fs.resolve(".")).display_path
    dialect = maintained.dialect.name if maintained is not None else type(fs).__name__
    out(f"root:         {root}")
    out(f"dialect:      {dialect}")
    out(
        f"capabilities: atomic_conditional_write={caps.atomic_conditional_write}"
        f" read_only={caps.read_only}"
    )
    if not caps.atomic_conditional_write:
        out("  note  guards hold within this process only, not across processes")
    name = f".fsseam-doctor-{secrets.token_hex(6)}"
    target = await fs.resolve(name)
    out(f"scratch:      {target.display_path}")
    if maintained is not None:
        probe = await fs.resolve(name + ".probe")
        found, ms = await _timed(maintained.dialect.probe_quirks(probe.display_path))
        if isinstance(found, FsError):
            run.error("quirk probe", found, ms)
        else:
            names = ", ".join(quirk.name for quirk in found) or "none found"
            run.ok("quirk probe", names, ms)
    if not run.checks or run.checks[-1].status == "ok":
        await _checks(fs, target, run, racers)
        if all(check.status == "ok" for check in run.checks):
            await _delete_checks(fs, target, run, racers)
    created = any(
        check.label == "create-only write of a new object" and check.status == "ok"
        for check in run.checks
    )
    removed = run.deleted
    if maintained is not None and created and not run.deleted:
        try:
            await maintained.remove(target)
            removed = True
        except FsError:
            removed = False
    quirks = maintained.dialect.quirks if maintained is not None else ()
    for quirk in quirks:
        out(f"quirk:        {quirk.name}: {quirk.description}")
    out("versions seen:")
    for version in run.versions:
        out(f"  {version}")
    scratch = target.display_path if created else None
    if scratch is not None and removed:
        out(f"scratch removed: {scratch}")
    elif scratch is not None:
        out(f"scratch left: {scratch} (could not remove it; remove it by hand)")
    verdict, reason = _verdict(run.checks, caps)
    if run.deletes_refused and verdict in (Verdict.OK, Verdict.IN_PROCESS):
        reason += "; it ignores a delete's precondition, so fsseam refuses delete and move on it"
    report = DoctorReport(
        root=root,
        dialect=dialect,
        capabilities=caps,
        scratch=scratch,
        scratch_removed=removed,
        checks=tuple(run.checks),
        versions=tuple(run.versions),
        quirks=tuple(quirks),
        verdict=verdict,
        reason=reason,
    )
    out(report.result_line)
    return report
