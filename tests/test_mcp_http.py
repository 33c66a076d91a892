"""MCP over streamable HTTP: real servers in subprocesses, the official client."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from tests.mcp_http_support import call, client, running, text

HERE = Path(__file__).resolve().parent


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("one\ntwo\n")
    return root


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_embedded_http_manager_keeps_every_client_its_own_session(ws: Path, mode: str) -> None:
    """build_server(ctx) behind the SDK's streamable_http_app: one client's read isn't another's.

    The session-based transport ("legacy") keeps each Mcp-Session-Id apart; the
    2026-07-28 stateless requests ("auto") have no connection, so they name
    their conversations in ``_meta``.
    """
    worker = str(HERE / "mcp_embedder_worker.py")
    first_id, second_id = ("a", "b") if mode == "auto" else (None, None)

    async def body(url: str) -> None:
        async with client(url, mode=mode) as first, client(url, mode=mode) as second:
            seen = await call(first, "read", session=first_id, file_path="notes.txt")
            assert not seen.is_error, text(seen)
            blind = await call(second, "edit", session=second_id, file_path="notes.txt",
                               old_string="two", new_string="2")  # fmt: skip
            assert blind.is_error, text(blind)
            assert text(blind).startswith("FS_NOT_OBSERVED: "), text(blind)
            mine = await call(first, "edit", session=first_id, file_path="notes.txt",
                              old_string="two", new_string="2")  # fmt: skip
            assert not mine.is_error, text(mine)

    with running([worker, str(ws)], cwd=ws) as served:
        anyio.run(body, served.url)
    assert (ws / "notes.txt").read_text() == "one\n2\n"
