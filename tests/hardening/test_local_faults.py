"""Local disk faults: a full disk, I/O errors, a read-only mount, a user the OS says no to.

Where the machine allows it (CI runs as root in a container that may or may
not let it mount), the disk really is full (a 256 KiB tmpfs) or read-only
(the tmpfs remounted ``ro``), and the permission errors come from a
subprocess running as ``nobody``. The same failures are also injected at
the OS-call boundary, so they are tested everywhere. Every outcome: a clean
``FsError`` (``FS_IO_ERROR`` or ``FS_PERMISSION_DENIED``), the old file
intact, no temp file left behind, no ``fs/committed`` event, and the
failed call never counts as an observation.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fsseam import FS_COMMITTED, open_fs
from fsseam.testing.harness import call, code_of, execution, tools_context

REPO = Path(__file__).resolve().parents[2]
OLD = b"the old content\n" * 100
EDIT_ALL = {"file_path": "f.txt", "old_string": "old", "new_string": "new", "replace_all": True}


def mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs (skips where mounting is not permitted)."""
    where = tmp_path / "disk"
    if shutil.which("mount") is None or not mount_tmpfs(where, "256k"):
        pytest.skip("cannot mount a tmpfs here; the injected ENOSPC test covers this")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def names(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def test_a_full_disk_fails_writes_cleanly_and_keeps_the_old_file(small_disk: Path) -> None:
    root = small_disk / "ws"
    root.mkdir()
    (root / "f.txt").write_bytes(OLD)
    ctx = tools_context(open_fs(str(root)))
    events: list[Any] = []
    ctx.on(FS_COMMITTED, lambda *args: events.append(args))
    session = execution()
    assert call(ctx, "read", {"file_path": "f.txt"}, session).value is not None
    too_big = "x" * (400 * 1024)
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("write", {"file_path": "f.txt", "content": too_big}),
        ("edit", {"file_path": "f.txt", "old_string": OLD.decode(), "new_string": too_big}),
        ("write", {"file_path": "new.txt", "content": too_big}),
    ]
    for tool, args in attempts:
        result = call(ctx, tool, args, session)
        assert code_of(result) == "FS_IO_ERROR", (tool, result.text[:200])
        assert "No space left on device" in result.text
        assert (root / "f.txt").read_bytes() == OLD
        assert names(root) == ["f.txt"]  # the partial temp file was removed
    assert events == []
    # The space came back with the temp files: a small write goes through.
    fits = call(ctx, "write", {"file_path": "f.txt", "content": "small\n"}, session)
    assert not fits.is_error, fits.text
    assert (root / "f.txt").read_bytes() == b"small\n"


def test_a_read_only_mount_refuses_writes_with_permission_denied(small_disk: Path) -> None:
    root = small_disk / "ws"
    root.mkdir()
    (root / "f.txt").write_bytes(OLD)
    remounted = subprocess.run(
        ["mount", "-o", "remount,ro", str(small_disk)], capture_output=True, check=False
    )
    if remounted.returncode != 0:
        pytest.skip("cannot remount read-only here")
    ctx = tools_context(open_fs(str(root)))
    session = execution()
    assert call(ctx, "read", {"file_path": "f.txt"}, session).value is not None
    for tool, args in [
        ("write", {"file_path": "f.txt", "content": "x"}),
        ("edit", EDIT_ALL),
        ("write", {"file_path": "sub/new.txt", "content": "x"}),
    ]:
        result = call(ctx, tool, args, session)
        assert code_of(result) == "FS_PERMISSION_DENIED", (tool, result.text)
    assert (root / "f.txt").read_bytes() == OLD
    assert names(root) == ["f.txt"]


# -- the same failures, injected at the OS-call boundary -------------------------------


def failing(
    real: Callable[..., Any], error: int, *, when: Callable[..., bool]
) -> Callable[..., Any]:
    """``real``, except that calls for which ``when(*args)`` holds raise ``OSError(error)``."""

    def call_or_fail(*args: Any, **kwargs: Any) -> Any:
        if when(*args):
            raise OSError(error, os.strerror(error))
        return real(*args, **kwargs)

    return call_or_fail


def under(root: Path) -> Callable[..., bool]:
    """True for calls whose first argument is a descriptor of a file inside ``root``."""

    def check(fd: Any, *_: Any) -> bool:
        try:
            return isinstance(fd, int) and os.readlink(f"/proc/self/fd/{fd}").startswith(f"{root}/")
        except OSError:
            return False

    return check


INJECTED = [
    ("write", errno.ENOSPC, "FS_IO_ERROR"),
    ("write", errno.EIO, "FS_IO_ERROR"),
    ("write", errno.EDQUOT, "FS_IO_ERROR"),
    ("fsync", errno.EIO, "FS_IO_ERROR"),
    ("fsync", errno.ENOSPC, "FS_IO_ERROR"),
    ("fchmod", errno.EPERM, "FS_PERMISSION_DENIED"),
    ("rename", errno.EIO, "FS_IO_ERROR"),
    ("rename", errno.EACCES, "FS_PERMISSION_DENIED"),
]


@pytest.mark.parametrize(("call_name", "error", "code"), INJECTED)
def test_an_injected_failure_in_the_write_path_fails_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call_name: str, error: int, code: str
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "f.txt").write_bytes(OLD)
    ctx = tools_context(open_fs(str(root)))
    events: list[Any] = []
    ctx.on(FS_COMMITTED, lambda *args: events.append(args))
    session = execution()
    assert call(ctx, "read", {"file_path": "f.txt"}, session).value is not None
    when = (lambda *_: True) if call_name == "rename" else under(root)
    monkeypatch.setattr(os, call_name, failing(getattr(os, call_name), error, when=when))
    results = [
        call(ctx, "write", {"file_path": "f.txt", "content": "new\n"}, session),
        call(ctx, "edit", EDIT_ALL, session),
    ]
    monkeypatch.undo()
    for result in results:
        assert result.error == {"name": "FsError", "code": code}, result.text
    assert (root / "f.txt").read_bytes() == OLD
    assert names(root) == ["f.txt"]
    assert events == []
    # Nothing was observed or poisoned: the session's guarded write now goes through.
    retry = call(ctx, "write", {"file_path": "f.txt", "content": "new\n"}, session)
    assert not retry.is_error, retry.text


def test_an_io_error_while_reading_is_not_an_observation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "f.txt").write_bytes(OLD)
    ctx = tools_context(open_fs(str(root)))
    session = execution()
    monkeypatch.setattr(os, "read", failing(os.read, errno.EIO, when=under(root)))
    failed = call(ctx, "read", {"file_path": "f.txt"}, session)
    monkeypatch.undo()
    assert failed.error == {"name": "FsError", "code": "FS_IO_ERROR"}, failed.text
    overwrite = call(ctx, "write", {"file_path": "f.txt", "content": "x"}, session)
    assert code_of(overwrite) == "FS_NOT_OBSERVED"
    assert (root / "f.txt").read_bytes() == OLD


# -- permission errors, from a process the OS really says no to ---------------------------

NOBODY = 65534


@pytest.fixture
def shared_tree() -> Iterator[Path]:
    """A root-owned tree under /tmp that ``nobody`` can traverse (pytest's tmp is 0700)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run a subprocess as another user")
    top = Path(tempfile.mkdtemp(prefix="fsseam-perm-"))
    top.chmod(0o755)
    try:
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


def run_as_nobody(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Run the tool worker, which drops to ``nobody`` before it touches the workspace."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.hardening.tool_worker", json.dumps(spec)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results: list[dict[str, Any]] = json.loads(done.stdout)["results"]
    return results


def test_eacces_from_the_os_is_permission_denied_and_changes_nothing(shared_tree: Path) -> None:
    root = shared_tree / "ws"
    root.mkdir(mode=0o755)
    (root / "private.txt").write_bytes(b"root only\n")
    (root / "private.txt").chmod(0o600)
    (root / "public.txt").write_bytes(OLD)
    (root / "public.txt").chmod(0o644)
    (root / "locked").mkdir(mode=0o700)
    (root / "locked" / "inner.txt").write_bytes(b"inner\n")
    (root / "mine").mkdir()
    os.chown(root / "mine", NOBODY, NOBODY)
    before = {p: p.read_bytes() for p in root.rglob("*.txt")}
    results = run_as_nobody(
        {
            "url": str(root),
            "options": {},
            "warmup": None,
            "drop_to": NOBODY,
            "calls": [
                ["read", {"file_path": "private.txt"}],
                ["read", {"file_path": "locked/inner.txt"}],
                ["read", {"file_path": "public.txt"}],
                ["edit", {**EDIT_ALL, "file_path": "public.txt"}],
                ["write", {"file_path": "public.txt", "content": "x"}],
                ["write", {"file_path": "new.txt", "content": "x"}],
                ["write", {"file_path": "mine/new.txt", "content": "allowed\n"}],
            ],
        }
    )
    codes = [None if r["error"] is None else r["error"]["code"] for r in results]
    assert codes == [
        "FS_PERMISSION_DENIED",
        "FS_PERMISSION_DENIED",
        None,
        "FS_PERMISSION_DENIED",
        "FS_PERMISSION_DENIED",
        "FS_PERMISSION_DENIED",
        None,  # the control: where the OS allows it, nobody may write
    ], [r["head"][:160] for r in results]
    assert {p: p.read_bytes() for p in before} == before
    assert sorted(p.name for p in root.iterdir()) == ["locked", "mine", "private.txt", "public.txt"]
    assert (root / "mine" / "new.txt").read_bytes() == b"allowed\n"
