"""``fsseam doctor URL``: print :func:`fsseam.doctor.diagnose`'s report, exit by its verdict."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TextIO

from fsseam.cli._common import EXIT_OK, EXIT_UNSAFE, Parents, exit_status, mount, probe, seam_errors
from fsseam.doctor import Verdict, diagnose
from fsseam.seam import FileSystem

__all__ = ["doctor", "register"]

_DESCRIPTION = """\
With a scratch object .fsseam-doctor-<random> under URL, check that the
store refuses a second create-only write, and writes and deletes at a stale
version, including concurrent ones, and report dialect, capabilities, the
store's quirks (each named, with what fsseam does about it), versions and
timings. The scratch object is removed afterwards. A store that ignores a
delete's precondition is named (quirk delete-precondition-ignored): fsseam
refuses delete and move on it.

exit status:
  0  every check passed and the guards hold across processes
  1  UNSAFE: the store accepted a write it had to refuse; or in-process
     only: the checks passed but the guards hold within one process only
     (memory://, fsspec stores without a dialect), so other processes or
     machines writing there can lose updates
  3-7  a check could not run: the status of its error (see fsseam --help)"""


def register(parents: Parents) -> None:
    """Add ``doctor`` to the parser."""
    doc = parents.command(
        "doctor",
        "check that a store enforces conditional writes and deletes",
        _DESCRIPTION,
        parents=[parents.storage],
    )
    doc.add_argument("url", metavar="URL", help="workspace root to check")
    doc.set_defaults(run=_cmd_doctor)


async def doctor(fs: FileSystem, out: TextIO, *, racers: int = 8) -> int:
    """Print the doctor's report for ``fs`` on ``out``; returns the exit status.

    0 (ok), 1 (:data:`EXIT_UNSAFE`: a precondition was not enforced, or the
    guards hold only within this process), or the error family's status when
    a check could not run. See :func:`fsseam.doctor.diagnose`.
    """
    report = await diagnose(fs, racers=racers, emit=lambda line: print(line, file=out))
    if report.verdict is Verdict.OK:
        return EXIT_OK
    if report.verdict is Verdict.INCOMPLETE and report.error is not None:
        return exit_status(report.error.code.value)
    return EXIT_UNSAFE


def _cmd_doctor(args: argparse.Namespace) -> int:
    fs = mount(args.url, args.options, read_only=False)

    async def run() -> int:
        await probe(fs, args.url)
        with seam_errors("doctor"):
            return await doctor(fs, sys.stdout)

    return asyncio.run(run())
