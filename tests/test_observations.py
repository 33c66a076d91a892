"""Sessions that outlive a process: string sessions, and the memory, SQLite and Redis stores.

The durable stores are real: SQLite files in a temporary directory, and a
``redis-server`` started on a free 127.0.0.1 port for this module.
"""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from fsseam import (
    Agent,
    Context,
    FileTools,
    FsTargetKey,
    FsVersion,
    MemoryObservationStore,
    ObservationPolicy,
    ObservationStore,
    Present,
    RedisObservationStore,
    SqliteObservationStore,
    ToolExecution,
    ToolResult,
    open_fs,
    open_observations,
)
from fsseam.host import FS_SESSION_ENDED
from fsseam.observations import SessionTypeError
from fsseam.seam import FS_OBSERVED
from tests.mcp_http_support import env
from tests.redis_server import redis_server

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("one\ntwo\n")
    return root


def store_url(kind: str, tmp_path: Path, redis_url: str) -> str:
    if kind == "sqlite":
        return f"sqlite://{tmp_path / 'observations.db'}"
    if kind == "redis":
        # One database per test: the module's server is shared.
        return redis_url.rsplit("/", 1)[0] + f"/{abs(hash(tmp_path)) % 15 + 1}"
    return "memory://"


def run(body: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(30):
            await body()

    asyncio.run(bounded())


@asynccontextmanager
async def mounted(root: Path, store: ObservationStore | None = None) -> AsyncIterator[Context]:
    ctx = Context(open_fs(str(root)))
    ctx.plugin(ObservationPolicy(store=store)).plugin(FileTools())
    try:
        yield ctx
    finally:
        if store is not None:
            await store.aclose()


async def call(ctx: Context, session: object, tool: str, **args: Any) -> ToolResult:
    return await ctx.tools.execute(tool, args, ToolExecution(agent=Agent(session=session)))


def edit_two(ctx: Context, session: object, new: str = "2") -> Awaitable[ToolResult]:
    return call(ctx, session, "edit", file_path="notes.txt", old_string="two", new_string=new)


# -- sessions by value ----------------------------------------------------------------


def test_equal_strings_are_one_session_and_objects_stay_apart(ws: Path) -> None:
    async def body() -> None:
        async with mounted(ws) as ctx:
            reader = "".join(["thread", "-42"])
            writer = "thread-4" + "2"
            assert reader == writer
            assert reader is not writer
            assert not (await call(ctx, reader, "read", file_path="notes.txt")).is_error
            other = await edit_two(ctx, "thread-43")
            assert other.text.startswith("FS_NOT_OBSERVED: "), other.text
            assert not (await edit_two(ctx, writer)).is_error

            first, second = object(), object()
            assert not (await call(ctx, first, "read", file_path="notes.txt")).is_error
            apart = await call(ctx, second, "edit", file_path="notes.txt", old_string="2",
                               new_string="3")  # fmt: skip
            assert apart.text.startswith("FS_NOT_OBSERVED: "), apart.text

    run(body)
    assert (ws / "notes.txt").read_text() == "one\n2\n"


def test_memory_store_drops_an_object_session_when_it_dies(ws: Path) -> None:
    class Conversation:
        pass

    store = MemoryObservationStore()

    async def body() -> None:
        async with mounted(ws, store) as ctx:
            conversation = Conversation()
            assert not (await call(ctx, conversation, "read", file_path="notes.txt")).is_error
            assert store.sessions() == 1
            del conversation
            gc.collect()
            assert store.sessions() == 0

    run(body)


def test_memory_store_bounds_idle_string_sessions(ws: Path) -> None:
    lru = MemoryObservationStore(max_sessions=2)
    timed = MemoryObservationStore(ttl=0.2)

    async def body() -> None:
        async with mounted(ws, lru) as ctx:
            for name in ("a", "b", "c"):
                assert not (await call(ctx, name, "read", file_path="notes.txt")).is_error
            assert lru.sessions() == 2
            evicted = await edit_two(ctx, "a")  # the least recently used went first
            assert evicted.text.startswith("FS_NOT_OBSERVED: "), evicted.text
        async with mounted(ws, timed) as ctx:
            assert not (await call(ctx, "t", "read", file_path="notes.txt")).is_error
            await asyncio.sleep(0.4)
            expired = await edit_two(ctx, "t")
            assert expired.text.startswith("FS_NOT_OBSERVED: "), expired.text

    run(body)
    assert (ws / "notes.txt").read_text() == "one\ntwo\n"


def test_session_ended_event_forgets_the_session(ws: Path) -> None:
    async def body() -> None:
        async with mounted(ws) as ctx:
            assert not (await call(ctx, "conn-1", "read", file_path="notes.txt")).is_error
            await ctx.notify(FS_SESSION_ENDED, "conn-1")
            gone = await edit_two(ctx, "conn-1")
            assert gone.text.startswith("FS_NOT_OBSERVED: "), gone.text

    run(body)


# -- across processes -----------------------------------------------------------------


def worker(root: Path, url: str, session: str, tool: str, **args: Any) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            str(HERE / "observation_worker.py"),
            str(root),
            url,
            session,
            tool,
            json.dumps(args),
        ],
        capture_output=True,
        text=True,
        env=env(),
        timeout=60,
        check=True,
    )
    return dict(json.loads(done.stdout))


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_a_read_in_one_process_authorises_an_edit_in_the_next(
    kind: str, ws: Path, tmp_path: Path, redis_url: str
) -> None:
    url = store_url(kind, tmp_path, redis_url)
    read = worker(ws, url, "s1", "read", file_path="notes.txt")
    assert not read["is_error"], read["text"]
    blind = worker(ws, url, "s2", "edit", file_path="notes.txt", old_string="two", new_string="2")
    assert blind["text"].startswith("FS_NOT_OBSERVED: "), blind["text"]
    edit = worker(ws, url, "s1", "edit", file_path="notes.txt", old_string="two", new_string="2")
    assert not edit["is_error"], edit["text"]
    assert (ws / "notes.txt").read_text() == "one\n2\n"


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
def test_ttl_forgets_an_idle_session(kind: str, ws: Path, tmp_path: Path, redis_url: str) -> None:
    store = open_observations(store_url(kind, tmp_path, redis_url), ttl=1)

    async def body() -> None:
        async with mounted(ws, store) as ctx:
            assert not (await call(ctx, "s1", "read", file_path="notes.txt")).is_error
            key = (await ctx.fs.resolve("notes.txt")).target_key
            assert isinstance(await store.get("s1", key), Present)
            await asyncio.sleep(2)
            assert await store.get("s1", key) is None
            gone = await edit_two(ctx, "s1")
            assert gone.text.startswith("FS_NOT_OBSERVED: "), gone.text

    run(body)
    assert (ws / "notes.txt").read_text() == "one\ntwo\n"


def test_redis_keeps_one_hash_per_session_with_its_expiry(
    ws: Path, tmp_path: Path, redis_url: str
) -> None:
    import redis

    url = store_url("redis", tmp_path, redis_url)
    store = RedisObservationStore(url, ttl=60)

    async def body() -> None:
        async with mounted(ws, store) as ctx:
            assert not (await call(ctx, "alice/t1", "read", file_path="notes.txt")).is_error
            await call(ctx, "alice/t1", "read", file_path="missing.txt")

    run(body)
    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        assert client.keys("fsseam:obs:*") == ["fsseam:obs:alice/t1"]
        fields = client.hgetall("fsseam:obs:alice/t1")
        assert sorted(fields.values())[0] == "A"  # missing.txt: seen absent
        assert sorted(fields.values())[1].startswith("P")
        assert 0 < client.ttl("fsseam:obs:alice/t1") <= 60
    finally:
        client.close()


# -- the store never decides ---------------------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
@pytest.mark.parametrize("store_says", ["what was read", "an older version", "nothing"])
def test_a_stale_edit_is_refused_whatever_the_store_says(
    kind: str, store_says: str, ws: Path, tmp_path: Path, redis_url: str
) -> None:
    store = open_observations(store_url(kind, tmp_path, redis_url))

    async def body() -> None:
        async with mounted(ws, store) as ctx:
            assert not (await call(ctx, "s1", "read", file_path="notes.txt")).is_error
            (ws / "notes.txt").write_text("one\ntwo\nthree\n")  # someone else changes it
            key = (await ctx.fs.resolve("notes.txt")).target_key
            if store_says == "an older version":
                await store.put("s1", key, Present(FsVersion("1:2:3:4:5")))
            elif store_says == "nothing":
                await store.forget("s1")
            refused = await edit_two(ctx, "s1")
            assert refused.is_error
            code = "FS_NOT_OBSERVED" if store_says == "nothing" else "FS_STALE_VERSION"
            assert refused.text.startswith(f"{code}: "), refused.text
            # Only a refusal that showed the model the change (the mount knows what the
            # recorded version held) counts as a read of the current version.
            shown = "\nWhat changed since you read it:\n" in refused.text
            assert shown == (store_says == "what was read"), refused.text
            overwrite = await call(ctx, "s1", "write", file_path="notes.txt", content="mine\n")
            assert overwrite.is_error != shown, overwrite.text

    run(body)
    expected = "mine\n" if store_says == "what was read" else "one\ntwo\nthree\n"
    assert (ws / "notes.txt").read_text() == expected


# -- an unreachable store -------------------------------------------------------------


def _silent_server() -> tuple[socket.socket, int]:
    """A TCP port that accepts connections and never answers (a hung server)."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    return listener, int(listener.getsockname()[1])


@pytest.mark.parametrize("failure", ["refused", "silent", "sqlite in no directory", "not sqlite"])
def test_an_unreachable_store_is_an_io_error_naming_it_never_a_create(
    failure: str, ws: Path, tmp_path: Path
) -> None:
    listener: socket.socket | None = None
    if failure == "refused":
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        store: ObservationStore = RedisObservationStore(f"redis://127.0.0.1:{port}/0", timeout=1)
        named = f"redis://127.0.0.1:{port}/0"
    elif failure == "silent":
        listener, port = _silent_server()
        store = RedisObservationStore(f"redis://127.0.0.1:{port}/0", timeout=1)
        named = f"redis://127.0.0.1:{port}/0"
    elif failure == "not sqlite":
        (tmp_path / "garbage.db").write_bytes(b"this is not an SQLite database" * 100)
        store = SqliteObservationStore(tmp_path / "garbage.db", timeout=1)
        named = str(tmp_path / "garbage.db")
    else:
        store = SqliteObservationStore(tmp_path / "missing" / "o.db", timeout=1)
        named = str(tmp_path / "missing" / "o.db")

    async def body() -> None:
        async with mounted(ws, store) as ctx:
            for tool, args in [
                ("write", {"file_path": "notes.txt", "content": "lost?\n"}),
                ("write", {"file_path": "new.txt", "content": "new\n"}),
                ("edit", {"file_path": "notes.txt", "old_string": "two", "new_string": "2"}),
                ("read", {"file_path": "notes.txt"}),
            ]:
                started = time.monotonic()
                result = await call(ctx, "s1", tool, **args)
                assert time.monotonic() - started < 10
                assert result.is_error
                assert result.text.startswith("FS_IO_ERROR: observation store "), result.text
                assert named in result.text, result.text

    try:
        run(body)
    finally:
        if listener is not None:
            listener.close()
    assert (ws / "notes.txt").read_text() == "one\ntwo\n"
    assert not (ws / "new.txt").exists()


def test_a_database_locked_by_another_process_fails_the_record_in_time(
    ws: Path, tmp_path: Path
) -> None:
    """WAL readers never wait, so a lock shows at the put: the read says what happened."""
    db = tmp_path / "locked.db"
    asyncio.run(SqliteObservationStore(db).check())
    locker = sqlite3.connect(db, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    store = SqliteObservationStore(db, timeout=1)

    async def body() -> None:
        async with mounted(ws, store) as ctx:
            started = time.monotonic()
            result = await call(ctx, "s1", "read", file_path="notes.txt")
            assert time.monotonic() - started < 10
            assert result.text.startswith("FS_IO_ERROR: observation store sqlite:///"), result.text
            assert str(db) in result.text
            assert result.text.endswith("(the read call itself completed, but what it saw was "
                                        "not recorded)")  # fmt: skip
            refused = await edit_two(ctx, "s1")
            assert refused.text.startswith("FS_NOT_OBSERVED: "), refused.text

    try:
        run(body)
    finally:
        locker.close()
    assert (ws / "notes.txt").read_text() == "one\ntwo\n"


def test_a_failed_record_after_a_read_says_the_read_itself_completed(ws: Path) -> None:
    async def body() -> None:
        async with mounted(ws) as ctx:

            async def broken(*_: object) -> None:
                from fsseam import FsIOError

                raise FsIOError("observation store test:// is unreachable")

            ctx.on(FS_OBSERVED, broken)
            result = await call(ctx, "s1", "read", file_path="notes.txt")
            assert result.text == (
                "FS_IO_ERROR: observation store test:// is unreachable (the read call "
                "itself completed, but what it saw was not recorded)"
            )

    run(body)


# -- developer errors and URLs --------------------------------------------------------


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_a_durable_store_refuses_a_non_string_session_out_of_execute(
    kind: str, ws: Path, tmp_path: Path, redis_url: str
) -> None:
    store = open_observations(store_url(kind, tmp_path, redis_url))

    async def body() -> None:
        async with mounted(ws, store) as ctx:
            for tool, args in [
                ("read", {"file_path": "notes.txt"}),
                ("edit", {"file_path": "notes.txt", "old_string": "two", "new_string": "2"}),
            ]:
                with pytest.raises(TypeError, match="pass the conversation's id as a string"):
                    await call(ctx, object(), tool, **args)
            assert issubclass(SessionTypeError, TypeError)

    run(body)


def test_open_observations_reads_each_url_form(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    assert isinstance(open_observations("memory://"), MemoryObservationStore)
    assert str(tmp_path).startswith("/")
    for spelling in (f"sqlite://{tmp_path}/a.db", f"sqlite:///{tmp_path}/a.db"):
        absolute = open_observations(spelling)
        assert isinstance(absolute, SqliteObservationStore)
        assert absolute.path == f"{tmp_path}/a.db"
        assert absolute.name == f"sqlite://{tmp_path}/a.db"
    relative = open_observations("sqlite://state/b.db", ttl=5)
    assert isinstance(relative, SqliteObservationStore)
    assert relative.path == "state/b.db"
    assert relative.name == f"sqlite:///{str(tmp_path).lstrip('/')}/state/b.db"
    for url in ("redis://127.0.0.1:1/0", "rediss://h:2/1"):
        assert isinstance(open_observations(url), RedisObservationStore)
    secret = open_observations("redis://user:hunter2@h:6379/0")
    assert "hunter2" not in secret.name
    assert "hunter2" not in repr(secret)
    for bad in ("ftp://x", "sqlite://", "memory://x", "nothing"):
        with pytest.raises(ValueError, match=r"observation store|names no database|no path"):
            open_observations(bad)


def test_sqlite_store_survives_a_restart(tmp_path: Path) -> None:
    key = FsTargetKey("k")

    async def write() -> None:
        store = SqliteObservationStore(tmp_path / "o.db")
        await store.put("s", key, Present(FsVersion("v1")))
        await store.aclose()

    async def read() -> None:
        store = SqliteObservationStore(tmp_path / "o.db")
        assert await store.get("s", key) == Present(FsVersion("v1"))
        assert await store.get("other", key) is None
        await store.forget("s")
        assert await store.get("s", key) is None
        await store.aclose()

    asyncio.run(write())
    asyncio.run(read())
    mode = sqlite3.connect(tmp_path / "o.db").execute("PRAGMA journal_mode").fetchone()
    assert mode == ("wal",)
