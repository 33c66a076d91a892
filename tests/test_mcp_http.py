"""MCP over streamable HTTP: real servers in subprocesses, the official client."""

from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from tests.mcp_http_support import (
    Served,
    call,
    client,
    env,
    raw_post,
    running,
    serve_http,
    text,
    tool_request,
)
from tests.redis_server import redis_server

HERE = Path(__file__).resolve().parent
ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef"


def tokens_file(directory: Path) -> Path:
    path = directory / "tokens"
    path.write_text(f"# principals of the team server\nalice {ALICE}\n\nbob   {BOB}\n")
    return path


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    """One team server for the module: tokens and an SQLite store, as docs/deploying.md says."""
    base = tmp_path_factory.mktemp("team")
    root = base / "ws"
    root.mkdir()
    flags = ["--tokens", str(tokens_file(base)), "--observations", f"sqlite://{base}/obs.db"]
    with serve_http(root, *flags, cwd=base) as served:
        yield served, root


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


# -- a team server: tokens --------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_principals_are_sessions_alice_edits_bob_is_refused(
    team: tuple[Served, Path], mode: str
) -> None:
    served, root = team
    name = f"principals-{mode}.txt"
    (root / name).write_text("one\ntwo\n")

    async def body() -> None:
        async with client(served.url, token=ALICE, mode=mode) as alice:
            assert not (await call(alice, "read", file_path=name)).is_error
            done = await call(alice, "edit", file_path=name, old_string="two", new_string="2")
            assert not done.is_error, text(done)
        async with client(served.url, token=BOB, mode=mode) as bob:
            blind = await call(bob, "edit", file_path=name, old_string="2", new_string="3")
            assert text(blind).startswith("FS_NOT_OBSERVED: "), text(blind)
            overwrite = await call(bob, "write", file_path=name, content="bob was here\n")
            assert text(overwrite).startswith("FS_NOT_OBSERVED: "), text(overwrite)

    anyio.run(body)
    assert (root / name).read_text() == "one\n2\n"
    assert served.wait_for(" POST /mcp 200 alice "), served.output()


def test_meta_sessions_of_one_principal_stay_apart(team: tuple[Served, Path]) -> None:
    served, root = team
    (root / "meta.txt").write_text("one\ntwo\n")

    async def body() -> None:
        async with client(served.url, token=ALICE) as alice:
            assert not (await call(alice, "read", session="t1", file_path="meta.txt")).is_error
            other = await call(alice, "edit", session="t2", file_path="meta.txt",
                               old_string="two", new_string="2")  # fmt: skip
            assert text(other).startswith("FS_NOT_OBSERVED: "), text(other)
            plain = await call(alice, "edit", file_path="meta.txt", old_string="two",
                               new_string="2")  # fmt: skip
            assert text(plain).startswith("FS_NOT_OBSERVED: "), text(plain)
            mine = await call(alice, "edit", session="t1", file_path="meta.txt",
                              old_string="two", new_string="2")  # fmt: skip
            assert not mine.is_error, text(mine)
            bad = await call(alice, "read", session="", file_path="meta.txt")
            assert text(bad).startswith('INVALID_ARGUMENTS: _meta["fsseam/session"]'), text(bad)

    anyio.run(body)
    assert (root / "meta.txt").read_text() == "one\n2\n"


def test_missing_or_unknown_token_is_401_and_touches_nothing(team: tuple[Served, Path]) -> None:
    served, root = team
    write = tool_request(1, "write", {"file_path": "intruder.txt", "content": "owned\n"})
    body = json.dumps(write).encode()
    for token in (None, "not-a-token-of-anyone", ALICE[:-1], ALICE + "x", "Bearer", "-"):
        response = raw_post(served.url, body, token=token, **{"Mcp-Name": "write"})
        assert response.status_code == 401, (token, response.text)
        assert response.headers["www-authenticate"].startswith("Bearer ")
    accepted = raw_post(served.url, body, token=ALICE, **{"Mcp-Name": "write"})
    assert accepted.status_code == 200, accepted.text  # the same request is otherwise valid
    assert (root / "intruder.txt").read_text() == "owned\n"
    (root / "intruder.txt").unlink()

    async def with_client() -> None:
        async with client(served.url, token="wrong-token-0123456789") as wrong:
            await call(wrong, "read", file_path="intruder.txt")

    before = len(served.lines)
    with pytest.raises(BaseException):  # noqa: B017, PT011 - the client reports a 401 its own way
        anyio.run(with_client)
    assert served.wait_for(" 401 ", since=before), served.output()
    # Lines of earlier requests may still arrive; none may be a success without a principal.
    assert not any(" 200 - " in line for line in served.lines), served.output()
    assert not (root / "intruder.txt").exists()


def test_host_header_of_another_site_is_refused(team: tuple[Served, Path]) -> None:
    served, _ = team
    body = json.dumps(tool_request(1, "read", {"file_path": "x.txt"})).encode()
    response = raw_post(
        served.url, body, token=ALICE, Host="evil.example:80", **{"Mcp-Name": "read"}
    )
    assert response.status_code == 421
    assert served.wait_for("add --allow-host evil.example:80"), served.output()


def test_every_http_request_gets_an_answer(team: tuple[Served, Path]) -> None:
    served, _ = team
    meta = json.dumps(tool_request(0, "read", {})["params"]["_meta"]).encode()
    cases = {
        "surrogate": b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read",'
        b'"arguments":{"file_path":"\\ud800.txt"},"_meta":' + meta + b"}}",
        "params list": b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1,2]}',
        "params string": b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"read"}',
        "deep": b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":'
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}}",
    }
    for case, body in cases.items():
        response = raw_post(served.url, body, token=ALICE, **{"Mcp-Name": "read"})
        answer = response.json()
        assert answer["jsonrpc"] == "2.0", case
        if case == "surrogate":
            assert response.status_code == 200, response.text
            assert answer["result"]["isError"] is True
            (block,) = answer["result"]["content"]
            assert block["text"].startswith("INVALID_ARGUMENTS: file_path contains an unpaired")
        else:
            assert response.status_code == 400, (case, response.text)
            assert answer["error"]["code"] in (-32700, -32600, -32602), (case, answer)


# -- without tokens: loopback, and what has no session --------------------------------


def test_a_request_without_session_reads_but_cannot_write(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("one\ntwo\n")

    async def body(url: str) -> None:
        async with client(url) as stateless:
            assert not (await call(stateless, "read", file_path="notes.txt")).is_error
            for tool, args in [
                ("write", {"file_path": "new.txt", "content": "new\n"}),
                ("edit", {"file_path": "notes.txt", "old_string": "two", "new_string": "2"}),
            ]:
                refused = await call(stateless, tool, **args)
                assert text(refused).startswith(f"FS_SANDBOX_DENIED: {tool} changes files"), text(
                    refused
                )
                assert '"fsseam/session"' in text(refused)
                assert "Mcp-Session-Id" in text(refused)
                assert "--tokens" in text(refused)
            named = await call(stateless, "write", session="c1", file_path="new.txt",
                               content="new\n")  # fmt: skip
            assert not named.is_error, text(named)
        async with client(url, mode="legacy") as session_based:
            created = await call(session_based, "write", file_path="other.txt", content="x\n")
            assert not created.is_error, text(created)

    with serve_http(root, cwd=tmp_path) as served:
        anyio.run(body, served.url)
    assert (root / "notes.txt").read_text() == "one\ntwo\n"
    assert (root / "new.txt").read_text() == "new\n"


def _port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def test_a_public_bind_without_tokens_exits_2_before_listening(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    for address in (f"0.0.0.0:{port}", f"[::]:{port}"):
        done = subprocess.run(
            [sys.executable, "-m", "fsseam", "serve", str(tmp_path), "--http", address],
            capture_output=True, text=True, env=env(), timeout=60, cwd=tmp_path, check=False,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert "without --tokens" in done.stderr
        assert "listening" not in done.stderr
        assert _port_is_free(port)


# -- a fleet: replicas sharing Redis ----------------------------------------------------


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[Served], Path]]:
    """Two replicas of one workspace with the same tokens and one Redis store."""
    base = tmp_path_factory.mktemp("fleet")
    root = base / "ws"
    root.mkdir()
    tokens = tokens_file(base)
    with redis_server(base) as redis_url:
        flags = ["--tokens", str(tokens), "--observations", redis_url]
        with serve_http(root, *flags, cwd=base) as one, serve_http(root, *flags, cwd=base) as two:
            yield [one, two], root


def test_replicas_sharing_redis_let_a_session_read_on_one_and_edit_on_another(
    fleet: tuple[list[Served], Path],
) -> None:
    (one, two), root = fleet
    (root / "replicas.txt").write_text("one\ntwo\n")

    async def body() -> None:
        async with client(one.url, token=ALICE) as on_one, client(two.url, token=ALICE) as on_two:
            assert not (await call(on_one, "read", file_path="replicas.txt")).is_error
            done = await call(on_two, "edit", file_path="replicas.txt", old_string="two",
                              new_string="2")  # fmt: skip
            assert not done.is_error, text(done)
        async with client(two.url, token=BOB) as bob:
            blind = await call(bob, "edit", file_path="replicas.txt", old_string="2",
                               new_string="3")  # fmt: skip
            assert text(blind).startswith("FS_NOT_OBSERVED: "), text(blind)

    anyio.run(body)
    assert (root / "replicas.txt").read_text() == "one\n2\n"


def test_eight_http_clients_times_fifteen_increments_end_at_120(
    fleet: tuple[list[Served], Path],
) -> None:
    """Each client reads on one replica and edits on either; conflicts retry, none are lost.

    The issue's numbers (8 x 15 = 120). All eight start at once, so the rounds
    collide from the first; the test checks that some edits were refused as
    stale and retried, so a run without a race cannot pass as proof.
    """
    replicas, root = fleet
    (root / "counter.txt").write_text("0\n")
    rng = random.Random(11)
    successes = stale = 0

    async def worker(index: int) -> None:
        nonlocal successes, stale
        conversation = f"counter-{index}"
        async with (
            client(replicas[0].url, token=ALICE) as a,
            client(replicas[1].url, token=ALICE) as b,
        ):
            pair = (a, b)
            done = 0
            while done < 15:
                seen = await call(rng.choice(pair), "read", session=conversation,
                                  file_path="counter.txt")  # fmt: skip
                value = int(text(seen).split("1: ", 1)[1].split("\n", 1)[0])
                edit = await call(rng.choice(pair), "edit", session=conversation,
                                  file_path="counter.txt", old_string=f"{value}\n",
                                  new_string=f"{value + 1}\n")  # fmt: skip
                if not edit.is_error:
                    done += 1
                    successes += 1
                else:
                    assert text(edit).startswith("FS_STALE_VERSION: "), text(edit)
                    stale += 1
                    await anyio.sleep(rng.random() * 0.02)  # back off, as a real agent would

    async def body() -> None:
        with anyio.fail_after(120):
            async with anyio.create_task_group() as tasks:
                for index in range(8):
                    tasks.start_soon(worker, index)

    anyio.run(body)
    assert successes == 120
    assert (root / "counter.txt").read_text() == "120\n"
    assert stale > 0, "the eight clients never collided: the test proved nothing"
