"""``fsseam grep`` and ``fsseam glob``: tool text on stdout, exit statuses, progress on stderr."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fsseam import Context, DiscoveryTools, open_fs
from fsseam.cli import main
from fsseam.cli.search import _Progress
from fsseam.tools.grep import GrepProgress


def tree(root: Path) -> Path:
    for rel, data in {
        "a.txt": b"hello\nneedle one\n",
        "src/b.py": b"x = 1  # needle two\n",
        "src/c.py": b"print('no')\n",
        "bin/d.bin": b"\x00needle\n",
        ".git/config": b"needle in git\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cwd: Path, *args: str
) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    try:
        status = main(list(args))
    except SystemExit as exc:
        status = int(exc.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def tool_text(root: Path, tool: str, args: dict[str, Any]) -> str:
    ctx = Context(open_fs(str(root)))
    ctx.plugin(DiscoveryTools())
    return ctx.tools.execute_sync(tool, args, None).text


def test_grep_and_glob_print_exactly_what_the_tools_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tree(tmp_path)
    status, out, err = run(capsys, monkeypatch, root, "grep", "needle")
    assert (status, err) == (0, "")  # stderr is not a terminal: no progress
    assert out == tool_text(root, "grep", {"pattern": "needle"}) + "\n"
    assert out == (
        "a.txt\n2: needle one\n\nsrc/b.py\n1: x = 1  # needle two\n\n"
        "(Found 2 matches in 2 files. Skipped 1 binary or non-UTF-8 file.)\n"
    )
    status, out, _ = run(capsys, monkeypatch, root, "grep", "NEEDLE", "src", "-i", "--glob", "*.py")
    assert (status, out) == (0, "src/b.py\n1: x = 1  # needle two\n\n(Found 1 match in 1 file.)\n")
    status, out, _ = run(capsys, monkeypatch, root, "grep", "-F", "print('", "src")
    assert out == "src/c.py\n1: print('no')\n\n(Found 1 match in 1 file.)\n"
    status, out, _ = run(capsys, monkeypatch, root, "grep", "zzz")
    assert (status, out) == (0, f"No matches under {root}. Skipped 1 binary or non-UTF-8 file.\n")
    status, out, _ = run(capsys, monkeypatch, root, "glob", "**/*.py")
    assert (status, out) == (0, "src/b.py\nsrc/c.py\n\n(Found 2 files.)\n")
    assert out == tool_text(root, "glob", {"pattern": "**/*.py"}) + "\n"
    status, out, _ = run(capsys, monkeypatch, root, "glob", "*.py", "src")
    assert out == "src/b.py\nsrc/c.py\n\n(Found 2 files.)\n"


@pytest.mark.parametrize(
    ("args", "status", "err"),
    [
        (
            ("grep", "(", "."),
            2,
            "INVALID_ARGUMENTS: pattern: is not a valid regular expression (missing ): (); "
            "RE2 syntax, so no look-around or backreferences (set literal to search for plain "
            "text)\n",
        ),
        (
            ("grep", "x", "nowhere"),
            3,
            'FS_NOT_FOUND: "{root}/nowhere" does not exist; check the '
            "path (write creates new files)\n",
        ),
        (("grep", "x", "bin/d.bin"), 4, None),
        (("grep", "needle", ".git"), 6, None),
        (
            ("glob", "*/" * 200),
            2,
            "INVALID_ARGUMENTS: pattern: has 200 path segments, over the limit of 128\n",
        ),
        (("glob", "*", "a.txt"), 4, None),
    ],
)
def test_search_commands_exit_with_the_documented_statuses(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    status: int,
    err: str | None,
) -> None:
    root = tree(tmp_path)
    got, out, stderr = run(capsys, monkeypatch, root, *args)
    assert (got, out) == (status, "")
    if err is not None:
        assert stderr == err.format(root=root)
    else:
        assert stderr.split(":", 1)[0].startswith("FS_")


def test_grep_progress_goes_to_stderr_only_when_asked_or_on_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path
    for i in range(3):
        (root / f"f{i}.txt").write_text("needle\n" * (i + 1))
    status, out, err = run(capsys, monkeypatch, root, "grep", "needle", "--progress")
    assert status == 0
    assert out.endswith("(Found 6 matches in 3 files.)\n")
    lines = err.splitlines()
    assert lines[0] == "grep: 1 file searched, 7 B, 1 match"
    assert lines[-1] == "grep: 3 files searched, 42 B, 6 matches"


def test_progress_on_a_terminal_rewrites_one_line_and_clears_it() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    progress = _Progress(screen)
    progress.update(GrepProgress(1, 2_500_000, 3))
    progress.close()
    assert screen.getvalue() == "\rgrep: 1 file searched, 2.5 MB, 3 matches\x1b[K\r\x1b[K"


def test_grep_shows_progress_when_stderr_is_a_terminal(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("needle\n")
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "fsseam", "grep", "needle"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=follower,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
            timeout=60,
            check=False,
        )
        os.close(follower)
        follower = -1
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    assert done.returncode == 0
    assert done.stdout == b"a.txt\n1: needle\n\n(Found 1 match in 1 file.)\n"
    assert b"grep: 1 file searched, 7 B, 1 match" in seen
    assert seen.endswith(b"\r\x1b[K")


@pytest.mark.s3
def test_grep_and_glob_search_a_bucket_by_url(
    s3_bucket: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    import fsspec

    raw = fsspec.filesystem("s3", **s3_bucket.storage_options, skip_instance_cache=True)
    raw.pipe({f"{s3_bucket.name}/src/a.py": b"needle = 1\n", f"{s3_bucket.name}/b.md": b"no\n"})
    options = [f"-o{key}={value}" for key, value in s3_bucket.storage_options.items()]
    status, out, _ = run(capsys, monkeypatch, tmp_path, "grep", "needle", s3_bucket.url, *options)
    assert (status, out) == (0, "src/a.py\n1: needle = 1\n\n(Found 1 match in 1 file.)\n")
    status, out, _ = run(
        capsys, monkeypatch, tmp_path, "glob", "**/*.py", f"{s3_bucket.url}/src", *options
    )
    assert (status, out) == (0, "src/a.py\n\n(Found 1 file.)\n")
