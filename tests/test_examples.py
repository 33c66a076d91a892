"""The examples run, and end with the file both agents meant to write."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load_agent_loop() -> object:
    spec = importlib.util.spec_from_file_location("agent_loop", EXAMPLES / "agent_loop.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["agent_loop"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("where", ["local", "memory"])
def test_agent_loop_loses_no_update_and_keeps_crlf(
    tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    module = load_agent_loop()
    url = str(tmp_path) if where == "local" else f"memory://example-{tmp_path.name}"
    final = module.main(url)  # type: ignore[attr-defined]
    assert final == b"[net]\r\ntimeout = 60\r\nretries = 5\r\n"
    out = capsys.readouterr().out
    assert "FS_STALE_VERSION" in out
    assert "What changed since you read it:\n@@ -1,3 +1,3 @@\n [net]\n-timeout = 30\n" in out
    assert out.count("alice calls read(") == 1  # the change was shown: no second read
    if where == "local":
        assert (tmp_path / "app/config.ini").read_bytes() == final


def test_agent_loop_runs_as_a_script() -> None:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "agent_loop.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "3: retries = 5" in proc.stdout
