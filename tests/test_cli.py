"""The ``fsseam`` command line: outputs and exit statuses, in real processes and in process."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fsseam import (
    Context,
    FileTools,
    FsEditOutcome,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsTarget,
    FsVersion,
    FsWriteIntent,
    FsWriteOutcome,
    open_fs,
)
from fsseam.cli import EXIT_STATUS, doctor, main, parse_storage_option
from fsseam.testing.harness import DelegatingFileSystem

COMMANDS = ["serve", "read", "write", "edit", "ls", "schemas", "doctor"]


def fsseam(cwd: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    """Run ``python -m fsseam ARGS`` in ``cwd`` with ``stdin``; never raises on failure."""
    run = subprocess.run(
        [sys.executable, "-m", "fsseam", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env={**os.environ, "COLUMNS": "80"},
        check=False,
        timeout=60,
    )
    # Decode without newline translation, so CR bytes would show.
    return subprocess.CompletedProcess(
        run.args, run.returncode, run.stdout.decode(), run.stderr.decode()
    )


@dataclass(frozen=True)
class Ran:
    """An in-process run of :func:`fsseam.cli.main`."""

    status: int
    out: str
    err: str


Cli = Callable[..., Ran]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """Run ``main(args)`` in ``cwd`` in this process (same code path, no interpreter start-up)."""
    monkeypatch.setenv("COLUMNS", "80")

    def run(cwd: Path, *args: str, stdin: bytes = b"") -> Ran:
        monkeypatch.chdir(cwd)
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        try:
            status = main(list(args))
        except SystemExit as exc:  # argparse: --help, usage errors
            status = int(exc.code or 0)
        captured = capsys.readouterr()
        return Ran(status, captured.out, captured.err)

    return run


def version_of(path: Path) -> str:
    """The version fsseam reports for ``path`` (mounting its directory)."""

    async def stat() -> str:
        fs = open_fs(str(path.parent))
        info = await fs.stat(await fs.resolve(path.name))
        assert info is not None
        return info.version

    return asyncio.run(stat())


def render_read(path: Path) -> str:
    """What the read tool shows for ``path``."""
    ctx = Context(open_fs(str(path.parent)))
    ctx.plugin(FileTools())
    return ctx.tools.execute_sync("read", {"file_path": path.name}).text


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with a CRLF file, an LF file and a subdirectory."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_bytes(b"alpha\nbeta\ngamma\n")
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (root / "sub").mkdir()
    (root / "sub" / "deep.txt").write_bytes(b"deep\n")
    return root


# -- help ------------------------------------------------------------------------


def test_main_help_fits_one_screen_and_lists_every_exit_status(ws: Path) -> None:
    run = fsseam(ws, "--help")
    assert run.returncode == 0
    lines = run.stdout.splitlines()
    assert len(lines) <= 40
    assert max(len(line) for line in lines) <= 80
    for command in COMMANDS:
        assert f"    {command} " in run.stdout
    for status in EXIT_STATUS:
        assert any(line.lstrip().startswith(f"{status}  ") for line in lines), status
    assert "FS_STALE_VERSION" in run.stdout
    assert "mounted root" in run.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_help_fits_one_screen(cli: Cli, ws: Path, command: str) -> None:
    run = cli(ws, command, "--help")
    assert run.status == 0, run.err
    lines = run.out.splitlines()
    assert lines[0].startswith(f"usage: fsseam {command}")
    assert len(lines) <= 24
    assert max(len(line) for line in lines) <= 80
    assert len(lines[2]) > 20  # the description says what it does


def test_version_and_usage_errors(cli: Cli, ws: Path) -> None:
    version = fsseam(ws, "--version")
    assert (version.returncode, version.stdout) == (0, "fsseam 0.1.0\n")
    assert cli(ws).status == 2
    missing = cli(ws, "edit", "notes.txt", "--old", "a")
    assert missing.status == 2
    assert "--new" in missing.err
    assert cli(ws, "read", "notes.txt", "--offset", "0").status == 2
    both = cli(ws, "write", "notes.txt", "--content", "x", "--if-version", "v", "--create-only")
    assert both.status == 2


# -- read ------------------------------------------------------------------------


def test_read_prints_the_tool_rendering_and_the_version_on_stderr(ws: Path) -> None:
    run = fsseam(ws, "read", "notes.txt", "--show-version")
    assert run.returncode == 0, run.stderr
    path = ws / "notes.txt"
    assert run.stdout == (
        f"<path>{path}</path>\n<type>file</type>\n<content>\n"
        "1: alpha\n2: beta\n3: gamma\n\n(End of file - total 3 lines)\n</content>\n"
    )
    assert run.stdout == render_read(path) + "\n"
    assert run.stderr == version_of(path) + "\n"


def test_read_with_a_negative_offset_prints_the_last_lines(cli: Cli, ws: Path) -> None:
    (ws / "ten.txt").write_text("".join(f"l{i}\n" for i in range(1, 11)))
    run = cli(ws, "read", "ten.txt", "--offset", "-3")
    assert run.status == 0, run.err
    assert (
        "<content>\n8: l8\n9: l9\n10: l10\n\n(End of file - total 10 lines)\n</content>" in run.out
    )


def test_read_window_and_crlf(cli: Cli, ws: Path) -> None:
    run = cli(ws, "read", "./notes.txt", "--offset", "2", "--limit", "1")
    assert run.status == 0
    assert "2: beta\n\n(Showing lines 2-2 of 3. Use offset=3 to continue.)" in run.out
    crlf = cli(ws, "read", "crlf.txt")
    assert "1: one\n2: two\n" in crlf.out
    assert "\r" not in crlf.out


def test_read_below_and_above_the_current_directory(cli: Cli, ws: Path) -> None:
    inside = cli(ws, "read", "sub/deep.txt")
    assert inside.status == 0
    assert f"<path>{ws / 'sub' / 'deep.txt'}</path>" in inside.out
    outside = cli(ws / "sub", "read", "../notes.txt")
    assert outside.status == 0
    assert f"<path>{ws / 'notes.txt'}</path>" in outside.out


def test_read_error_in_a_real_process(ws: Path) -> None:
    run = fsseam(ws, "read", "missing.txt")
    assert run.returncode == 3
    assert run.stdout == ""
    assert run.stderr == (
        f'FS_NOT_FOUND: "{ws / "missing.txt"}" does not exist; '
        "check the path (write creates new files)\n"
    )


@pytest.mark.parametrize(
    ("args", "status", "code"),
    [
        (["read", "missing.txt"], 3, "FS_NOT_FOUND"),
        (["read", "notes.txt", "--offset", "9"], 3, "FS_NOT_FOUND"),
        (["read", "sub"], 4, "FS_NOT_REGULAR_FILE"),
        (["read", "binary.bin"], 4, "FS_NOT_TEXT"),
        (["read", "--root", "sub", "notes.txt"], 6, "FS_SANDBOX_DENIED"),
        (["read", "escape.txt"], 6, "FS_SANDBOX_DENIED"),
        (["read", "--root", "nowhere", "notes.txt"], 3, "FS_NOT_FOUND"),
        (["ls", "nothing"], 3, "FS_NOT_FOUND"),
        (["ls", "notes.txt"], 4, "FS_NOT_DIRECTORY"),
        (["edit", "notes.txt", "--old", "a", "--new", "A"], 5, "FS_AMBIGUOUS_EDIT"),
        (["edit", "notes.txt", "--old", "zeta", "--new", "Z"], 5, "FS_EDIT_NOT_FOUND"),
        (["edit", "notes.txt", "--old", "beta", "--new", "beta"], 2, "INVALID_ARGUMENTS"),
        (["edit", "notes.txt", "--old", "", "--new", "x"], 2, "INVALID_ARGUMENTS"),
        (["edit", "notes.txt", "--old", "a", "--new", "b", "--if-version", "v"], 5,
         "FS_STALE_VERSION"),
        (["write", "notes.txt", "--content", "x", "--if-version", "v"], 5, "FS_STALE_VERSION"),
        (["write", "notes.txt", "--content", "x", "--create-only"], 5, "FS_NOT_OBSERVED"),
        (["write", "sub", "--content", "x"], 4, "FS_NOT_REGULAR_FILE"),
        (["write", "escape.txt", "--content", "x"], 6, "FS_SANDBOX_DENIED"),
    ],
)  # fmt: skip
def test_error_families(cli: Cli, ws: Path, args: list[str], status: int, code: str) -> None:
    (ws / "binary.bin").write_bytes(b"\x00\x01\x02")
    outside = ws.parent / "outside.txt"
    outside.write_text("secret\n")
    (ws / "escape.txt").symlink_to(outside)
    run = cli(ws, *args)
    assert run.status == status
    assert run.out == ""
    assert run.err.startswith(f"{code}: ")
    assert run.err.endswith("\n")
    assert (ws / "notes.txt").read_bytes() == b"alpha\nbeta\ngamma\n"
    assert outside.read_bytes() == b"secret\n"


# -- write -------------------------------------------------------------------------


def test_write_creates_from_stdin_bytes_with_parents(ws: Path) -> None:
    run = fsseam(ws, "write", "new/dir/file.txt", stdin=b"x\r\ny\r\n")
    assert run.returncode == 0, run.stderr
    path = ws / "new" / "dir" / "file.txt"
    assert run.stdout == f"File created successfully at: {path}\n\n1: x\n2: y\n"
    assert run.stderr == ""
    assert path.read_bytes() == b"x\r\ny\r\n"


def test_write_replaces_unconditionally_without_a_guard(cli: Cli, ws: Path) -> None:
    run = cli(ws, "write", "notes.txt", "--content", "new\n", "--show-version")
    assert run.status == 0
    path = ws / "notes.txt"
    assert run.out == f"The file {path} has been updated successfully.\n\n1: new\n"
    assert path.read_bytes() == b"new\n"
    assert run.err == version_of(path) + "\n"


def test_write_create_only(ws: Path) -> None:
    refused = fsseam(ws, "write", "notes.txt", "--content", "x", "--create-only")
    assert refused.returncode == 5
    assert refused.stdout == ""
    assert refused.stderr.startswith("FS_NOT_OBSERVED: ")
    assert (ws / "notes.txt").read_bytes() == b"alpha\nbeta\ngamma\n"


def test_create_only_refusal_gives_a_remedy_a_shell_user_can_follow(cli: Cli, ws: Path) -> None:
    # The CLI has no session: "read the file, then retry" would refuse again.
    refused = cli(ws, "write", "notes.txt", "--content", "x", "--create-only")
    assert refused.status == 5
    assert refused.err == (
        f'FS_NOT_OBSERVED: "{ws / "notes.txt"}" already exists, and --create-only never '
        "replaces a file — drop --create-only to replace it, or pass --if-version V (V from "
        "fsseam read --show-version) to replace it only while it is unchanged\n"
    )
    assert "read the file" not in refused.err


def test_write_create_only_of_a_new_file(cli: Cli, ws: Path) -> None:
    created = cli(ws, "write", "fresh.txt", "--content", "x", "--create-only")
    assert created.status == 0
    assert (ws / "fresh.txt").read_bytes() == b"x"


def test_write_if_version(cli: Cli, ws: Path) -> None:
    path = ws / "notes.txt"
    before = version_of(path)
    ok = cli(ws, "write", "notes.txt", "--content", "v2\n", "--if-version", before)
    assert ok.status == 0, ok.err
    stale = cli(ws, "write", "notes.txt", "--content", "v3\n", "--if-version", before)
    assert stale.status == 5
    assert stale.err.startswith("FS_STALE_VERSION: ")
    assert stale.err.rstrip().endswith("then retry the write with that --if-version")
    assert path.read_bytes() == b"v2\n"


@pytest.mark.parametrize("spelling", ["as printed", "quoted"])
def test_if_version_takes_the_version_with_or_without_quotes_on_local_disk(
    cli: Cli, ws: Path, spelling: str
) -> None:
    path = ws / "notes.txt"
    version = version_of(path)
    given = version if spelling == "as printed" else f'"{version}"'
    ok = cli(ws, "edit", "notes.txt", "--old", "beta", "--new", "B", "--if-version", given)
    assert ok.status == 0, ok.err
    stale = cli(ws, "write", "notes.txt", "--content", "x\n", "--if-version", given)
    assert stale.status == 5
    assert stale.err.startswith("FS_STALE_VERSION: ")
    assert path.read_bytes() == b"alpha\nB\ngamma\n"


@pytest.mark.parametrize(
    "version",
    ["", " ", "two words", '"unbalanced', 'unbalanced"', 'in"side', "line\nbreak", '""'],
)
def test_malformed_version_is_a_usage_error_saying_what_a_version_looks_like(
    cli: Cli, ws: Path, version: str
) -> None:
    for command in (["edit", "notes.txt", "--old", "beta", "--new", "B"],
                    ["write", "notes.txt", "--content", "x"]):  # fmt: skip
        run = cli(ws, *command, "--if-version", version)
        assert run.status == 2, run.err
        assert "is not a version" in run.err
        assert "fsseam read --show-version" in run.err
    assert (ws / "notes.txt").read_bytes() == b"alpha\nbeta\ngamma\n"


def test_misspelt_storage_option_is_a_usage_error_naming_the_closest(cli: Cli, ws: Path) -> None:
    run = cli(ws, "ls", "s3://some-bucket/ws", "-o", "endpoint_ur=http://127.0.0.1:1")
    assert run.status == 2, run.err
    assert run.err.startswith("INVALID_ARGUMENTS: ")
    assert "'endpoint_ur'" in run.err
    assert "did you mean 'endpoint_url'?" in run.err


@pytest.mark.parametrize("command", [["read", "notes.txt"], ["ls"], ["write", "x.txt"],
                                     ["edit", "notes.txt", "--old", "a", "--new", "b"],
                                     ["doctor", "."], ["serve", "."]])  # fmt: skip
def test_storage_options_on_local_disk_are_a_usage_error(
    cli: Cli, ws: Path, command: list[str]
) -> None:
    # Local disk takes none; they used to be ignored without a word.
    run = cli(ws, *command, "-o", "anon=true", stdin=b"x")
    assert run.status == 2, run.err
    assert "unknown storage option 'anon': local disk takes no storage options" in run.err
    assert sorted(p.name for p in ws.iterdir()) == ["crlf.txt", "notes.txt", "sub"]
    assert (ws / "notes.txt").read_bytes() == b"alpha\nbeta\ngamma\n"


def test_write_refuses_non_utf8_stdin(cli: Cli, ws: Path) -> None:
    run = cli(ws, "write", "bad.txt", stdin=b"\xff\xfe bad")
    assert run.status == 4
    assert run.err.startswith("FS_NOT_TEXT: ")
    assert not (ws / "bad.txt").exists()


# -- edit --------------------------------------------------------------------------


def test_edit_unconditional_keeps_crlf(ws: Path) -> None:
    run = fsseam(ws, "edit", "crlf.txt", "--old", "two", "--new", "2\n2b")
    assert run.returncode == 0, run.stderr
    path = ws / "crlf.txt"
    assert run.stdout == (
        f"The file {path} has been updated successfully.\n\n1: one\n2: 2\n3: 2b\n"
    )
    assert path.read_bytes() == b"one\r\n2\r\n2b\r\n"


def test_edit_stale_in_a_real_process(ws: Path) -> None:
    run = fsseam(ws, "edit", "notes.txt", "--old", "beta", "--new", "B", "--if-version", "old")
    assert run.returncode == 5
    assert run.stdout == ""
    path = ws / "notes.txt"
    assert run.stderr == (
        f'FS_STALE_VERSION: "{path}" was modified since it was read — get its current '
        f'version with fsseam read "{path}" --show-version, then retry the edit with that '
        "--if-version\n"
    )


def test_edit_of_a_missing_file_is_not_found_not_a_conflict(ws: Path) -> None:
    # A typo is not a conflict: a script retrying on exit 5 would loop on it.
    run = fsseam(ws, "edit", "missing.txt", "--old", "a", "--new", "b")
    assert run.returncode == 3, run.stderr
    assert run.stdout == ""
    assert run.stderr.startswith(f'FS_NOT_FOUND: "{ws / "missing.txt"}"')
    assert not (ws / "missing.txt").exists()


def test_edit_replace_all_at_a_version(cli: Cli, ws: Path) -> None:
    path = ws / "notes.txt"
    run = cli(
        ws, "edit", "notes.txt", "--old", "a", "--new", "A", "--replace-all",
        "--if-version", version_of(path), "--show-version",
    )  # fmt: skip
    assert run.status == 0, run.err
    assert run.out == (
        f"The file {path} has been updated. All occurrences were successfully replaced.\n"
        "\n1: AlphA\n2: betA\n3: gAmmA\n"
    )
    assert path.read_bytes() == b"AlphA\nbetA\ngAmmA\n"
    assert run.err == version_of(path) + "\n"


# -- ls ----------------------------------------------------------------------------


def test_ls_lists_type_size_name(cli: Cli, ws: Path) -> None:
    run = fsseam(ws, "ls")
    assert run.returncode == 0, run.stderr
    assert run.stdout == (
        "file              10  crlf.txt\n"
        "file              17  notes.txt\n"
        "directory          -  sub/\n"
    )
    assert cli(ws, "ls", "sub").out == "file               5  deep.txt\n"
    assert cli(ws / "sub", "ls", "..").out == run.stdout
    assert cli(ws.parent, "ls", str(ws)).out == run.stdout


# -- schemas -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", [None, "openai", "anthropic", "mcp"])
def test_schemas(cli: Cli, ws: Path, fmt: str | None) -> None:
    args = ["schemas", *(["--format", fmt] if fmt else [])]
    run = fsseam(ws, *args) if fmt == "mcp" else cli(ws, *args)
    out = run.stdout if isinstance(run, subprocess.CompletedProcess) else run.out
    ctx = Context(open_fs(str(ws)))
    ctx.plugin(FileTools())
    assert json.loads(out) == ctx.tools.schemas(format=fmt)  # type: ignore[arg-type]


# -- serve startup -------------------------------------------------------------------


def test_serve_missing_root_fails_on_stderr_only(ws: Path) -> None:
    run = fsseam(ws, "serve", "does-not-exist")
    assert run.returncode == 3
    assert run.stdout == ""
    assert run.stderr.startswith("FS_NOT_FOUND: ")
    assert "does-not-exist" in run.stderr


def _without_mcp(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "from fsseam.cli import main\n"
        f"sys.exit(main({list(args)!r}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_serve_without_the_mcp_extra_says_how_to_install_it(ws: Path) -> None:
    run = _without_mcp(ws, "serve", ".")
    assert run.returncode == 2
    assert run.stdout == ""
    assert 'pip install "fsseam[mcp]"' in run.stderr
    read = _without_mcp(ws, "read", "notes.txt")
    assert read.returncode == 0
    assert "1: alpha" in read.stdout


def test_bad_storage_option_is_a_usage_error(cli: Cli, ws: Path) -> None:
    run = cli(ws, "ls", "-o", "no-equals-sign")
    assert run.status == 2
    assert "KEY=VALUE" in run.err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("anon=true", ("anon", True)),
        ("anon=False", ("anon", False)),
        ("retries=5", ("retries", 5)),
        ('client_kwargs={"region_name": "eu"}', ("client_kwargs", {"region_name": "eu"})),
        ("endpoint_url=http://127.0.0.1:9000", ("endpoint_url", "http://127.0.0.1:9000")),
        ("token=", ("token", "")),
        ("ratio=0.5", ("ratio", 0.5)),
        ("name=a=b", ("name", "a=b")),
    ],
)
def test_parse_storage_option(text: str, expected: tuple[str, Any]) -> None:
    assert parse_storage_option(text) == expected


# -- doctor --------------------------------------------------------------------------


def test_doctor_on_local_disk(ws: Path) -> None:
    run = fsseam(ws, "doctor", str(ws))
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert "dialect:      local" in out
    assert "atomic_conditional_write=True" in out
    assert "create-only write of an existing object: refused (FS_NOT_OBSERVED)" in out
    assert "replace at a stale version: refused (FS_STALE_VERSION)" in out
    assert "edit at a stale version: refused (FS_STALE_VERSION)" in out
    assert "8 concurrent replaces at one version: 1 accepted, 7 refused" in out
    assert "8 concurrent edits at one version: 1 accepted, 7 refused" in out
    assert "FAIL" not in out
    assert out.rstrip().endswith("result: ok, the store enforces its preconditions")
    scratch_line = next(line for line in out.splitlines() if line.startswith("scratch:"))
    scratch = Path(scratch_line.split(None, 1)[1])
    assert scratch.parent == ws
    assert scratch.name.startswith(".fsseam-doctor-")
    assert f"scratch removed: {scratch}" in out
    assert not scratch.exists()


def test_doctor_missing_root(cli: Cli, ws: Path) -> None:
    run = cli(ws, "doctor", str(ws / "nope"))
    assert run.status == 3
    assert run.err.startswith("FS_NOT_FOUND: ")


class _IgnoresGuards(DelegatingFileSystem):
    """A store that silently drops every precondition (what doctor must catch)."""

    async def write_text(
        self, target: FsTarget, content: str, expected: FsWriteIntent | None = None
    ) -> FsWriteOutcome:
        return await self.inner.write_text(target, content, None)

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: FsVersion | None = None
    ) -> FsEditOutcome:
        return await self.inner.edit_text(target, edit, None)


def test_doctor_flags_a_store_that_ignores_preconditions(tmp_path: Path) -> None:
    out = io.StringIO()
    status = asyncio.run(doctor(_IgnoresGuards(open_fs(str(tmp_path))), out))
    report = out.getvalue()
    assert status == 1, report
    assert "create-only write of an existing object: ACCEPTED" in report
    assert "replace at a stale version: ACCEPTED" in report
    assert "8 concurrent replaces at one version: 8 ACCEPTED" in report
    assert "edit at a stale version: ACCEPTED" in report
    assert "8 concurrent edits at one version: 8 ACCEPTED" in report
    assert "result: UNSAFE" in report


def test_doctor_passes_on_a_correct_store_in_process(tmp_path: Path) -> None:
    out = io.StringIO()
    assert asyncio.run(doctor(open_fs(str(tmp_path)), out, racers=4)) == 0, out.getvalue()


class _StripPreconditions:
    """WSGI middleware in front of the S3 emulator: an S3-compatible server ignoring If-Match."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        environ.pop("HTTP_IF_MATCH", None)
        environ.pop("HTTP_IF_NONE_MATCH", None)
        return self.app(environ, start_response)


@pytest.mark.s3
def test_doctor_on_s3_proves_the_guards_and_catches_a_server_that_ignores_them(
    s3_server: Any, s3_bucket: Any
) -> None:
    import threading

    from werkzeug.serving import make_server

    honest = io.StringIO()
    options = dict(s3_bucket.storage_options)
    status = asyncio.run(doctor(open_fs(s3_bucket.url + "/ws", **options), honest))
    assert status == 0, honest.getvalue()
    assert "dialect:      s3" in honest.getvalue()

    liar = make_server("127.0.0.1", 0, _StripPreconditions(s3_server), threaded=True)
    thread = threading.Thread(target=liar.serve_forever, daemon=True)
    thread.start()
    try:
        options["endpoint_url"] = f"http://127.0.0.1:{liar.server_port}"
        lied = io.StringIO()
        status = asyncio.run(doctor(open_fs(s3_bucket.url + "/lied", **options), lied))
    finally:
        liar.shutdown()
        thread.join(5)
    report = lied.getvalue()
    assert status == 1, report
    assert "create-only write of an existing object: ACCEPTED" in report
    assert "result: UNSAFE" in report


@pytest.mark.s3
def test_missing_bucket_is_not_found_while_an_empty_prefix_lists_empty(
    s3_server: Any, s3_bucket: Any
) -> None:
    options = dict(s3_bucket.storage_options)

    async def listing(url: str) -> list[object]:
        fs = open_fs(url, **options)
        return list(await fs.list_dir(await fs.resolve(".")))

    assert asyncio.run(listing(s3_bucket.url + "/empty-prefix")) == []
    with pytest.raises(FsError) as caught:
        asyncio.run(listing("s3://no-such-bucket-fsseam/ws"))
    assert caught.value.code is FsErrorCode.FS_NOT_FOUND


@pytest.mark.s3
@pytest.mark.parametrize("spelling", ["as printed", "without quotes"])
def test_s3_if_version_takes_the_etag_with_or_without_its_quotes(
    cli: Cli, tmp_path: Path, s3_bucket: Any, spelling: str
) -> None:
    options = [f"{k}={v}" for k, v in s3_bucket.storage_options.items()]
    o = [arg for option in options for arg in ("-o", option)]
    url = s3_bucket.url + "/notes.txt"
    assert cli(tmp_path, "write", url, "--content", "alpha\nbeta\n", *o).status == 0
    read = cli(tmp_path, "read", url, "--show-version", *o)
    printed = read.err.strip()
    assert printed.startswith('"')
    assert printed.endswith('"')  # S3 ETags are quoted
    given = printed if spelling == "as printed" else printed.strip('"')
    edit = cli(tmp_path, "edit", url, "--old", "beta", "--new", "B", "--if-version", given, *o)
    assert edit.status == 0, edit.err
    stale = cli(tmp_path, "write", url, "--content", "x", "--if-version", given, *o)
    assert stale.status == 5, stale.err
    assert stale.err.startswith("FS_STALE_VERSION: ")
    assert "1: alpha\n2: B\n" in cli(tmp_path, "read", url, *o).out
