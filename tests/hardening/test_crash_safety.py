"""A writer SIGKILLed at any step leaves the old or the new file, never a mix; nothing sticks.

Local disk: ``crash_worker`` traces every OS call of a write (temp file,
data, fsync, lock, re-check, chmod, utime, rename or link, cleanup) and
kills a forked child before and after each one, and halfway through each
data write. For every kill point the file holds exactly the old bytes until
the publishing rename/link (the one onto the target's name) has happened and
exactly the new bytes after it; the only leftover is fsseam's temp file,
which listings hide; the dead writer's lock does not block the next guarded
write, and that write removes the dead writer's temp file: nothing is left.

S3: a writer killed while its PUT body is in flight leaves the object old or
new, whole.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fsseam import open_fs
from fsseam.seam import CreateIfAbsent, ReplaceIfVersion
from fsseam.testing.harness import run
from tests.hardening.crash_worker import NEW, OLD, SCENARIOS, creates, target_of

REPO = Path(__file__).resolve().parents[2]
TEMP_NAME = re.compile(r"^\.fsseam\.[0-9a-z]+\.tmp$")


def kill_everywhere(base: Path, scenario: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.hardening.crash_worker",
            json.dumps({"base": str(base), "scenario": scenario}),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: list[dict[str, Any]] = json.loads(done.stdout)
    return report


def leftovers(directory: Path, target: str) -> list[str]:
    """Every file under ``directory`` other than the target and fsseam's temp files."""
    out = []
    for path in directory.rglob("*"):
        rel = path.relative_to(directory).as_posix()
        if path.is_dir() or rel == target or TEMP_NAME.match(path.name):
            continue
        out.append(rel)
    return out


def follow_up_write(directory: Path, target: str) -> bytes:
    """A fresh guarded write of the file, in a thread that must finish (no stuck lock)."""
    fs = open_fs(str(directory))
    outcome: list[Any] = []

    async def write() -> None:
        resolved = await fs.resolve(target)
        info = await fs.stat(resolved)
        guard = CreateIfAbsent() if info is None else ReplaceIfVersion(info.version)
        outcome.append(await fs.write_text(resolved, "after the crash\n", guard))
        listed = await fs.list_dir(await fs.resolve(os.path.dirname(target) or "."))
        outcome.append([entry.name for entry in listed])

    worker = threading.Thread(target=lambda: run(write()))
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), f"{directory}: the next writer is stuck behind a dead lock"
    assert len(outcome) == 2, f"{directory}: the follow-up write failed"
    assert outcome[1] == [os.path.basename(target)], outcome[1]
    orphans = [p.name for p in directory.rglob(".fsseam.*")]
    assert orphans == [], f"{directory}: the next write left the crash's temp files {orphans}"
    return (directory / target).read_bytes()


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_writer_killed_at_any_step_leaves_old_or_new_and_nothing_stuck(
    tmp_path: Path, scenario: str
) -> None:
    report = kill_everywhere(tmp_path, scenario)
    target = target_of(scenario)
    publish = min(point["index"] for point in report if point["publishes"])
    old: bytes | None = None if creates(scenario) else OLD
    assert len(report) > 24, "too few steps traced: the worker did not see the write path"
    problems = []
    for point in report:
        directory = Path(point["dir"])
        where = f"kill {point['phase']} #{point['index']} {point['call']}"
        if point["signal"] != signal.SIGKILL:
            problems.append(f"{where}: the kill point was never reached")
            continue
        published = point["index"] > publish or (
            point["index"] == publish and point["phase"] == "after"
        )
        path = directory / target
        stored = path.read_bytes() if path.exists() else None
        expected = NEW if published else old
        if stored != expected:
            got = "absent" if stored is None else f"{len(stored)} bytes {stored[:20]!r}"
            problems.append(f"{where}: expected {'new' if published else 'old'}, got {got}")
        stray = leftovers(directory, target)
        if stray:
            problems.append(f"{where}: stray files {stray}")
        if follow_up_write(directory, target) != b"after the crash\n":
            problems.append(f"{where}: the follow-up write did not land")
    assert problems == []


# -- S3: the PUT body in flight --------------------------------------------------------


@pytest.mark.s3
def test_a_writer_killed_mid_upload_leaves_the_s3_object_old_or_new(
    s3_server: Any, s3_bucket: Any, tmp_path: Path
) -> None:
    from fsseam.testing.mount_faults import hold_s3

    size = 24 << 20
    old, new = b"o" * size, b"n" * size
    raw = s3_bucket_raw(s3_bucket)
    raw.pipe_file(f"{s3_bucket.name}/ws/big.txt", old)
    hold = hold_s3("PUT")
    s3_server.inject(hold)
    spec = {
        "url": f"{s3_bucket.url}/ws",
        "options": s3_bucket.storage_options,
        "warmup": None,
        "calls": [
            ["read", {"file_path": "big.txt", "limit": 1}],
            ["write", {"file_path": "big.txt", "content": new.decode()}],
        ],
    }
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec))
    writer = subprocess.Popen(
        [sys.executable, "-m", "tests.hardening.tool_worker", f"@{spec_file}"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert hold.arrived.wait(60), "the PUT never reached the emulator"
        time.sleep(0.2)  # let the client push what the socket buffers take
        writer.send_signal(signal.SIGKILL)
        writer.wait(30)
    finally:
        hold.release.set()
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    stored = fetch_when_settled(raw, f"{s3_bucket.name}/ws/big.txt", old, new)
    assert stored in (old, new), f"a mix: {len(stored)} bytes, {stored[:8]!r}...{stored[-8:]!r}"


def s3_bucket_raw(bucket: Any) -> Any:
    import fsspec

    return fsspec.filesystem(
        "s3", skip_instance_cache=True, use_listings_cache=False, **bucket.storage_options
    )


def fetch_when_settled(raw: Any, path: str, old: bytes, new: bytes) -> bytes:
    """The object once the emulator has finished with the dead writer's request."""
    deadline = time.monotonic() + 10
    data: bytes = raw.cat_file(path)
    while data not in (old, new) and time.monotonic() < deadline:
        time.sleep(0.1)
        data = raw.cat_file(path)
    return data
