"""``fsseam.doctor`` as a library, and ``fsseam doctor``'s verdicts and exit statuses."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
from pathlib import Path

import pytest

from fsseam.backends import open_fs
from fsseam.cli import main
from fsseam.doctor import Maintainable, Verdict, diagnose
from fsseam.seam import (
    FsEditOutcome,
    FsEditRequest,
    FsTarget,
    FsVersion,
    FsWriteIntent,
    FsWriteOutcome,
)
from fsseam.testing.harness import DelegatingFileSystem


class _IgnoresGuards(DelegatingFileSystem):
    """A store that silently drops every precondition."""

    async def write_text(
        self, target: FsTarget, content: str, expected: FsWriteIntent | None = None
    ) -> FsWriteOutcome:
        return await self.inner.write_text(target, content, None)

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: FsVersion | None = None
    ) -> FsEditOutcome:
        return await self.inner.edit_text(target, edit, None)


def test_doctor_on_memory_ends_with_the_in_process_verdict_not_ok(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(["doctor", "memory://doctor-in-process"])
    out = capsys.readouterr().out
    last = out.rstrip().splitlines()[-1]
    assert status == 1, out
    assert last.startswith("result: in-process only, every check passed but the guards hold")
    assert "atomic_conditional_write=False" in last
    assert "result: ok" not in out


def test_the_verdict_names_the_check_that_failed(tmp_path: Path) -> None:
    lines: list[str] = []
    report = asyncio.run(diagnose(_IgnoresGuards(open_fs(str(tmp_path))), emit=lines.append))
    assert report.verdict is Verdict.UNSAFE
    assert report.reason.startswith("UNSAFE, the store did not enforce a precondition (")
    assert "create-only write of an existing object: ACCEPTED (If-None-Match ignored)" in (
        report.reason
    )
    assert lines[-1] == report.result_line
    failed = [check.label for check in report.checks if check.status == "FAIL"]
    assert "replace at a stale version" in failed


def test_a_local_report_lists_each_check_and_removes_its_scratch(tmp_path: Path) -> None:
    fs = open_fs(str(tmp_path))
    assert isinstance(fs, Maintainable)
    report = asyncio.run(diagnose(fs, racers=4))
    assert report.verdict is Verdict.OK
    assert report.dialect == "local"
    assert [check.status for check in report.checks] == ["ok"] * len(report.checks)
    assert report.checks[0].label == "quirk probe"
    assert report.scratch is not None
    assert report.scratch_removed
    assert list(tmp_path.iterdir()) == []
    assert report.error is None


def test_a_check_that_cannot_run_is_incomplete_with_its_error(tmp_path: Path) -> None:
    fs = open_fs(str(tmp_path), read_only=True)
    out = io.StringIO()
    report = asyncio.run(diagnose(fs, emit=lambda line: print(line, file=out)))
    assert report.verdict is Verdict.INCOMPLETE
    assert report.error is not None
    assert report.reason.startswith("incomplete, a check could not run (create-only write")
    assert "FS_SANDBOX_DENIED" in report.reason


def test_the_doctor_library_does_not_import_the_command_line() -> None:
    code = (
        "import sys, fsseam.doctor; "
        "bad = [m for m in sys.modules if m.startswith('fsseam.cli')]; "
        "assert not bad, bad"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
