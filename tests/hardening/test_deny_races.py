"""Deny patterns hold on what is actually opened, and whatever root the CLI picks.

A directory swapped for a symlink into ``.git`` between ``resolve`` and the
open stays inside the root, so containment alone lets it through: the deny
patterns must be checked on the descriptor's real path, for reads, grep's
streams and writes (the parent directory's descriptor plus the name). The
swap here happens inside ``os.open`` itself, after every path check. And
``fsseam read /abs/ws/.git/config`` run from outside the repository must be
refused although the CLI then mounts below ``ws``.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fsseam.seam import CreateIfAbsent, FsEditRequest, FsError, FsErrorCode, FsSandboxDenied
from fsseam.testing.harness import call, code_of, run, tools_context
from fsseam.testing.mounts import local_mount

GIT_SECRET = "[remote] url = https://token@example.com/repo.git"


def plant(root: Path) -> None:
    for path in list(root.iterdir()):
        if path.is_symlink() or path.is_file():
            path.unlink()
    git = root / ".git"
    (git / "hooks").mkdir(parents=True, exist_ok=True)
    (git / "config").write_text(GIT_SECRET + "\n")
    (root / "dir").mkdir(exist_ok=True)
    (root / "dir" / "config").write_text("harmless config\n")


def swap_dir_into_git_on_open(
    monkeypatch: pytest.MonkeyPatch, root: Path, when: str
) -> dict[str, int]:
    """At the first ``os.open`` of a path holding ``when``, make ``root/dir`` a link to ``.git``."""
    real_open = os.open
    swaps = {"done": 0}

    def hook(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if when in os.fspath(path) and not swaps["done"]:
            victim = root / "dir"
            victim.rename(root / "dir.moved")
            os.symlink(".git", victim)
            swaps["done"] += 1
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", hook)
    return swaps


@pytest.mark.parametrize("action", ["read", "stream", "stat", "write", "create", "new", "edit"])
def test_a_directory_swapped_into_git_after_resolve_is_denied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, action: str
) -> None:
    mount = local_mount(tmp_path)
    root = Path(mount.root)
    plant(root)
    fs = mount.fs
    rel = "dir/hooks/pre-commit" if action == "new" else "dir/config"
    target = run(fs.resolve(rel))
    swaps = swap_dir_into_git_on_open(monkeypatch, root, "/dir")

    async def attempt() -> Any:
        if action == "read":
            return await fs.read_text(target)
        if action == "stream":
            async with fs.stream_text(target) as stream:
                return "".join([chunk async for chunk in stream])
        if action == "stat":
            return await fs.stat(target)
        if action == "write":
            return await fs.write_text(target, "pwned\n")
        if action in ("create", "new"):
            return await fs.write_text(target, "#!/bin/sh\necho pwned\n", CreateIfAbsent())
        return await fs.edit_text(target, FsEditRequest("url", "pwned"))

    with pytest.raises(FsSandboxDenied, match="deny pattern"):
        run(attempt())
    assert swaps["done"] == 1, "the swap never happened"
    assert (root / ".git" / "config").read_text() == GIT_SECRET + "\n"
    assert sorted(p.name for p in (root / ".git" / "hooks").iterdir()) == []


def test_grep_never_streams_a_file_reached_through_a_swapped_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fsseam import DiscoveryTools

    mount = local_mount(tmp_path)
    root = Path(mount.root)
    plant(root)
    ctx = tools_context(mount.fs, policy=False)
    ctx.plugin(DiscoveryTools())
    # The walk lists dir/ first; the swap comes when grep opens dir/config.
    swaps = swap_dir_into_git_on_open(monkeypatch, root, "/dir/config")
    result = call(ctx, "grep", {"pattern": "url|config", "path": "dir"}, None)
    assert swaps["done"] == 1
    assert "token@" not in result.text, result.text


def test_a_raw_realpath_failure_in_a_race_is_a_clean_fs_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mount = local_mount(tmp_path)
    root = Path(mount.root)
    (root / "real").mkdir()
    (root / "real" / "f.txt").write_text("x\n")
    os.symlink("real", root / "link")

    def flipped(path: Any, *args: Any, **kwargs: Any) -> str:
        # What readlink says when the link was replaced by a file after lstat saw it.
        raise OSError(errno.EINVAL, "Invalid argument", os.fspath(path))

    monkeypatch.setattr(os, "readlink", flipped)
    with pytest.raises(FsError) as caught:
        run(mount.fs.resolve("link/f.txt"))
    assert caught.value.code is FsErrorCode.FS_IO_ERROR
    assert "kept changing" in caught.value.message
    ctx = tools_context(mount.fs, policy=False)
    result = call(ctx, "read", {"file_path": "link/f.txt"}, None)
    assert code_of(result) == "FS_IO_ERROR", result.text
    assert "unexpectedly" not in result.text, result.text


# -- the CLI picks the root: the deny patterns must not depend on it ------------------

REPO = Path(__file__).resolve().parents[2]


def fsseam(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fsseam", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


@pytest.mark.parametrize("where", ["outside", "above", "inside-git"])
def test_cli_deny_rules_hold_whatever_root_it_mounts(tmp_path: Path, where: str) -> None:
    ws = tmp_path / "abs" / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text(GIT_SECRET + "\n")
    (ws / "app").mkdir()
    (ws / "app" / ".env").write_text("KEY=secret\n")
    os.symlink(".git", ws / "gitlink")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cwd = {"outside": elsewhere, "above": tmp_path / "abs", "inside-git": ws / ".git"}[where]
    attempts = [
        ("read", str(ws / ".git" / "config")),
        ("read", str(ws / "gitlink" / "config")),
        ("read", str(ws / "app" / ".env")),
        ("ls", str(ws / ".git")),
        ("write", str(ws / ".git" / "hooks" / "pre-commit"), "--content", "echo pwned"),
        ("edit", str(ws / ".git" / "config"), "--old", "url", "--new", "pwned"),
    ]
    if where == "inside-git":
        attempts.append(("read", "config"))
    for command, *rest in attempts:
        done = fsseam(cwd, command, *rest)
        assert done.returncode == 6, (command, rest, done.stdout, done.stderr)
        assert done.stderr.startswith("FS_SANDBOX_DENIED"), done.stderr
        assert "token@" not in done.stdout + done.stderr
    assert sorted(p.name for p in (ws / ".git" / "hooks").iterdir()) == []
    assert (ws / ".git" / "config").read_text() == GIT_SECRET + "\n"
    # Ordinary files next to them still work from anywhere.
    (ws / "notes.txt").write_text("fine\n")
    ok = fsseam(cwd, "read", str(ws / "notes.txt"))
    assert ok.returncode == 0, ok.stderr
