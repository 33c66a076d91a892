"""Every Python and shell block of README.md and docs/cli.md runs as written on a fresh machine,
and so does each docs/ page's quickstart.

What "runs as written on a fresh machine" means here:

- A block runs in a fresh, empty directory that is also its ``HOME``, with no
  ``AWS_*`` / ``AZURE_*`` / ``GOOGLE_*`` / ``OPENAI_*`` variables, and with this
  checkout's fsseam installed: the interpreter's ``bin`` directory first on
  ``PATH`` (as an activated virtualenv gives, so ``fsseam`` and
  ``moto_server`` resolve) and ``src/`` on ``PYTHONPATH``.
- ``python`` blocks run as scripts and must exit 0.
- ``sh`` blocks run under ``bash -e -o pipefail`` and must exit 0: a command
  shown failing says so itself, ``|| echo "exit $?"  # ... exit N``, and must
  exit with that N. Whatever a block starts in
  the background is stopped with its process group afterwards. Fixed ports
  (``-p 5555``, ``127.0.0.1:5555``) are replaced with free ones, so parallel
  runs cannot collide; nothing else is rewritten.
- A shell block that installs packages or runs the CI (``pip``,
  ``python3 -m venv``, ``uvx``, ``npm``, ``git clone``, ``bash .ci/run``,
  ``claude mcp add``) is not executed: it needs the network and minutes, or a
  program fsseam does not ship. It is checked instead: every
  ``fsseam[extra]`` it names is an extra of pyproject.toml, every repository
  file it names exists, and every fsseam command in it parses with fsseam's
  own argument parser.
- ``json`` blocks are MCP client configurations: each parses as JSON, and the
  fsseam arguments of each server (``command`` fsseam, or uvx running fsseam)
  parse with fsseam's own argument parser.
- In the other docs/*.md pages, a page's quickstart is its first Python block
  that starts with an import; it runs as above. The page's other blocks
  continue from it or show one call.
- The quick start in ``fsseam``'s module docstring (what ``help(fsseam)``
  shows) runs the same way.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from contextlib import suppress
from pathlib import Path

import pytest

from fsseam.cli import build_parser
from tests.docblocks import (
    REPO,
    Block,
    blocks,
    extras,
    fsseam_invocations,
    shell_lines,
    shell_words,
)

OWNED = [REPO / "README.md", REPO / "docs" / "cli.md"]
_SETUP = re.compile(
    r"(^|[\s/])(pip install|python3? -m venv|uvx |uv tool|npm (install|ci)|git clone|"
    r"bash \.ci/run|claude mcp add)"
)
_SECRETS = ("AWS_", "AZURE_", "GOOGLE_", "GCLOUD", "OPENAI_", "ANTHROPIC_", "CLOUDSDK_")


def _runnable(block: Block) -> bool:
    return block.language in ("python", "sh") and not (
        block.language == "sh" and _SETUP.search(block.text)
    )


def _quickstart(path: Path) -> list[Block]:
    for block in blocks(path):
        if block.language == "python" and re.match(r"(from|import) \w", block.text):
            return [block]
    return []


RUN = [b for path in OWNED for b in blocks(path) if _runnable(b)] + [
    b for path in sorted((REPO / "docs").glob("*.md")) if path not in OWNED
    for b in _quickstart(path)
]  # fmt: skip
SETUP = [b for path in OWNED for b in blocks(path) if b.language == "sh" and not _runnable(b)]
CONFIGS = [b for path in OWNED for b in blocks(path) if b.language == "json"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _with_free_ports(text: str) -> str:
    for port in set(re.findall(r"(?:127\.0\.0\.1:|-p )(\d{4,5})\b", text)):
        text = re.sub(rf"\b{port}\b", str(_free_port()), text)
    return text


def _fresh_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SECRETS)}
    bindir = str(Path(sys.executable).parent)
    env.update(
        HOME=str(home),
        PATH=os.pathsep.join([bindir, "/usr/local/bin", "/usr/bin", "/bin"]),
        PYTHONPATH=str(REPO / "src"),
        COLUMNS="80",
    )
    env.pop("VIRTUAL_ENV", None)
    return env


def _parses(args: list[str], where: str) -> None:
    try:
        build_parser().parse_args(args)
    except SystemExit as exc:
        pytest.fail(f"{where}: `fsseam {' '.join(args)}` does not parse (exit {exc.code})")


@pytest.mark.parametrize("block", RUN, ids=[b.id for b in RUN])
def test_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    env = _fresh_env(tmp_path)
    if block.language == "python":
        script = tmp_path / "block.py"
        script.write_text(block.text, encoding="utf-8")
        command = [sys.executable, str(script)]
    else:
        assert (Path(sys.executable).parent / "fsseam").exists(), "fsseam is not installed"
        script = tmp_path / "block.sh"
        script.write_text(_with_free_ports(block.text), encoding="utf-8")
        command = ["bash", "-e", "-o", "pipefail", str(script)]
    proc = subprocess.Popen(
        command,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        # The block's background jobs (an emulator) share its process group.
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    assert proc.returncode == 0, f"{block.id} failed:\n{out}\n{err}"
    assert "Traceback" not in err, f"{block.id}:\n{err}"
    if block.language == "sh":
        assert re.findall(r"^exit (\d+)$", out, re.MULTILINE) == _documented_exits(block), out


def _documented_exits(block: Block) -> list[str]:
    """The exit statuses the block's ``|| echo "exit $?"`` lines say they end with."""
    found = []
    for line in shell_lines(block.text):
        if '|| echo "exit $?"' in line:
            said = re.search(r"#.*\bexit (\d+)\s*$", line)
            assert said, f"{block.id}: say which exit status: {line}"
            found.append(said.group(1))
    return found


@pytest.mark.parametrize("block", SETUP, ids=[b.id for b in SETUP])
def test_setup_block_names_real_extras_files_and_commands(block: Block) -> None:
    known = extras()
    for named in re.findall(r"fsseam\[([^\]]+)\]", block.text):
        for extra in named.split(","):
            assert extra.strip() in known, f"{block.id}: no extra {extra!r} in pyproject.toml"
    for line in shell_lines(block.text):
        words = shell_words(line)
        for word in words:
            if re.fullmatch(r"\.?[\w-]+(/[\w.-]+)+", word) and not word.startswith(".venv"):
                assert (REPO / word).exists(), f"{block.id}: {word} is not in the repository"
        for args in fsseam_invocations(words):
            _parses(args, block.id)


def _servers(config: dict[str, object]) -> dict[str, dict[str, object]]:
    section = config.get("mcpServers", config.get("servers"))
    assert isinstance(section, dict), "no mcpServers / servers section"
    return section


@pytest.mark.parametrize("block", CONFIGS, ids=[b.id for b in CONFIGS])
def test_mcp_client_config_runs_fsseam_with_valid_arguments(block: Block) -> None:
    config = json.loads(block.text)
    for name, server in _servers(config).items():
        command = str(server["command"])
        args = [str(arg) for arg in server.get("args", [])]  # type: ignore[attr-defined]
        if command == "uvx":
            assert "fsseam" in args, f"{block.id}: {name} does not run fsseam"
            args = args[args.index("fsseam") + 1 :]
        else:
            assert os.path.basename(command) == "fsseam", f"{block.id}: {name}: {command}"
        assert args[:1] == ["serve"], f"{block.id}: {name} does not serve"
        _parses(args, f"{block.id} ({name})")
        env = server.get("env", {})
        assert isinstance(env, dict)
        assert all(isinstance(value, str) for value in env.values())


def test_every_owned_block_is_run_or_checked() -> None:
    # A block in another language would escape both checks unnoticed.
    for path in OWNED:
        for block in blocks(path):
            assert block.language in ("python", "sh", "json", ""), block.id
    assert any(b.path.name == "README.md" and b.language == "python" for b in RUN)
    assert any(b.path.name == "README.md" and b.language == "sh" for b in RUN)
    assert SETUP
    assert CONFIGS


def _docstring_quickstart() -> str:
    """The quick start in ``fsseam``'s module docstring, dedented."""
    import textwrap

    import fsseam

    doc = fsseam.__doc__ or ""
    assert "Quick start::\n" in doc, "fsseam's docstring has no quick start"
    body = doc.split("Quick start::\n", 1)[1]
    return textwrap.dedent(body).strip() + "\n"


def test_the_module_docstring_quickstart_runs_as_written(tmp_path: Path) -> None:
    script = tmp_path / "quickstart.py"
    script.write_text(_docstring_quickstart(), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=_fresh_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout.startswith('FS_NOT_FOUND: "'), done.stdout
