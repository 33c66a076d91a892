"""Where :class:`~fsseam.policy.ObservationPolicy` keeps what each session has observed.

A session is whatever ``Agent(session=...)`` holds. A ``str`` session is keyed
by its value, so a conversation identified by a thread id is one session in
every call, every process and every replica that shares the store; any other
object is keyed by identity, in memory only.

The store is a cache of knowledge, never the arbiter of a write: a missing or
old observation can only make the policy refuse (``FS_NOT_OBSERVED``,
``FS_STALE_VERSION``), and the store's conditional write still decides every
change. An unreachable store is ``FS_IO_ERROR`` naming it within ``timeout``
seconds, never a hang and never an answer that treats the session as having
seen nothing (which would let a write attempt a create).

``open_observations(url, **options)`` picks the store from a URL:

=============================  ==============================================
``memory://``                  :class:`MemoryObservationStore` (one process)
``sqlite:///ABSOLUTE/PATH``    :class:`SqliteObservationStore` (one host)
``sqlite://RELATIVE/PATH``     the same, relative to the current directory
``redis://HOST:PORT/DB``       :class:`RedisObservationStore` (a fleet;
                               ``rediss://`` for TLS; ``fsseam[redis]``)
=============================  ==============================================

``ttl`` (seconds, every store) bounds how long an idle session is kept: it
counts from the session's last recorded observation. The memory store also
keeps at most ``max_sessions`` sessions held by value (least recently used
go first); sessions held by identity go when their object dies.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import sqlite3
import threading
import time
import weakref
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Final, TypeVar
from urllib.parse import urlsplit, urlunsplit

from fsseam._extras import missing_extra
from fsseam.host import UsageError
from fsseam.seam import Absent, FsIOError, FsObservation, FsTargetKey, FsVersion, Present

__all__ = [
    "MemoryObservationStore",
    "ObservationStore",
    "RedisObservationStore",
    "SessionTypeError",
    "SqliteObservationStore",
    "open_observations",
]

T = TypeVar("T")

DEFAULT_TIMEOUT: Final = 5.0
"""Seconds a durable store may take to answer before the call fails with FS_IO_ERROR."""

DEFAULT_MAX_SESSIONS: Final = 10_000
"""Sessions held by value that the memory store keeps before dropping the least recent."""


class SessionTypeError(UsageError, TypeError):
    """A durable store was given a session that is not a string (a developer error)."""


class ObservationStore(ABC):
    """What each session last observed at each target: get, put and forget.

    Implementations are safe to share between asyncio tasks and between
    threads each running its own event loop, and never block the loop. A
    failure to reach the store raises :class:`~fsseam.seam.FsIOError` naming
    it (``name``); a session of a type the store cannot key raises
    :class:`SessionTypeError`.
    """

    name: str = "observation store"
    """How messages name the store (its URL, without credentials)."""

    @abstractmethod
    async def get(self, session: object, target: FsTargetKey) -> FsObservation | None:
        """What ``session`` last observed at ``target``; ``None`` when unseen (or expired)."""

    @abstractmethod
    async def put(self, session: object, target: FsTargetKey, observation: FsObservation) -> None:
        """Record ``observation``; visible to every later ``get`` once this returns."""

    @abstractmethod
    async def forget(self, session: object) -> None:
        """Drop everything ``session`` observed."""

    async def check(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Raise FsIOError if the store cannot be reached (servers call it at startup)."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release connections and threads."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


# -- encoding shared by the durable stores --------------------------------------


def _encode(observation: FsObservation) -> str:
    return "P" + observation.version if isinstance(observation, Present) else "A"


def _decode(raw: str | bytes | None) -> FsObservation | None:
    if raw is None:
        return None
    text = raw.decode() if isinstance(raw, bytes) else raw
    if text == "A":
        return Absent()
    if text.startswith("P"):
        return Present(FsVersion(text[1:]))
    return None  # not ours: unseen, so the policy refuses rather than guesses


def _string_session(store: ObservationStore, session: object) -> str:
    if isinstance(session, str):
        return str(session)
    raise SessionTypeError(
        f"the {store.name} observation store keys sessions by string id, got a "
        f"{type(session).__name__}; pass the conversation's id as a string, "
        'e.g. Agent(session="thread-42")'
    )


def _unreachable(store: ObservationStore, exc: BaseException) -> FsIOError:
    cause = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return FsIOError(
        f"observation store {store.name} is unreachable ({cause}); nothing was changed — "
        "check that the store is running and reachable, then retry"
    )


# -- memory ---------------------------------------------------------------------


class _Session:
    __slots__ = ("holder", "seen", "touched")

    def __init__(self, holder: object) -> None:
        self.holder = holder
        self.seen: dict[FsTargetKey, FsObservation] = {}
        self.touched = time.monotonic()


class MemoryObservationStore(ObservationStore):
    """Observations in this process's memory (the default store).

    Strings are keyed by value and held until ``ttl`` seconds pass without a
    new observation or ``max_sessions`` newer ones push them out. Other
    objects are keyed by identity: held weakly when they allow it (their
    observations go with them), else strongly and bounded like strings.
    """

    name = "memory://"

    def __init__(
        self, *, ttl: float | None = None, max_sessions: int = DEFAULT_MAX_SESSIONS
    ) -> None:
        if ttl is not None and ttl <= 0:
            raise ValueError(f"ttl must be a positive number of seconds, got {ttl!r}")
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be 1 or more, got {max_sessions!r}")
        self.ttl = ttl
        self.max_sessions = max_sessions
        # Reentrant: a weakref callback may fire (GC) while this thread holds it.
        self._lock = threading.RLock()
        self._weak: dict[int, _Session] = {}
        self._held: OrderedDict[Hashable, _Session] = OrderedDict()

    def _find(self, session: object, create: bool) -> _Session | None:
        if isinstance(session, str):
            return self._find_held(str(session), session, create)
        key = id(session)
        entry = self._weak.get(key)
        if entry is not None:
            holder = entry.holder
            if isinstance(holder, weakref.ref) and holder() is session:
                return entry
        held = self._find_held(("id", key), session, create=False)
        if held is not None and held.holder is session:
            return held
        if not create:
            return None
        try:
            entry = _Session(weakref.ref(session, self._gone_callback(key)))
        except TypeError:  # ints, tuples, object(): held strongly, bounded like strings
            return self._find_held(("id", key), session, create=True)
        self._weak[key] = entry
        return entry

    def _gone_callback(self, key: int) -> Callable[[weakref.ref[Any]], None]:
        def gone(ref: weakref.ref[Any]) -> None:
            with self._lock:
                entry = self._weak.get(key)
                if entry is not None and entry.holder is ref:
                    del self._weak[key]

        return gone

    def _find_held(self, key: Hashable, session: object, create: bool) -> _Session | None:
        entry = self._held.get(key)
        if (
            entry is not None
            and self.ttl is not None
            and time.monotonic() - entry.touched > self.ttl
        ):
            del self._held[key]
            entry = None
        if entry is not None:
            self._held.move_to_end(key)
            return entry
        if not create:
            return None
        entry = _Session(session)
        self._held[key] = entry
        while len(self._held) > self.max_sessions:
            self._held.popitem(last=False)
        return entry

    async def get(self, session: object, target: FsTargetKey) -> FsObservation | None:
        """What ``session`` last observed at ``target``."""
        with self._lock:
            entry = self._find(session, create=False)
            return None if entry is None else entry.seen.get(target)

    async def put(self, session: object, target: FsTargetKey, observation: FsObservation) -> None:
        """Record ``observation`` for ``session``."""
        with self._lock:
            entry = self._find(session, create=True)
            assert entry is not None
            entry.seen[target] = observation
            entry.touched = time.monotonic()

    async def forget(self, session: object) -> None:
        """Drop everything ``session`` observed."""
        with self._lock:
            if isinstance(session, str):
                self._held.pop(str(session), None)
                return
            key = id(session)
            entry = self._weak.get(key)
            holder = None if entry is None else entry.holder
            if isinstance(holder, weakref.ref) and holder() is session:
                del self._weak[key]
            held = self._held.get(("id", key))
            if held is not None and held.holder is session:
                del self._held[("id", key)]

    def sessions(self) -> int:
        """How many sessions are held right now (for tests and monitoring)."""
        with self._lock:
            return len(self._weak) + len(self._held)


# -- SQLite -----------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS fsseam_sessions (
    session TEXT PRIMARY KEY,
    touched REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fsseam_sessions_touched ON fsseam_sessions (touched);
CREATE TABLE IF NOT EXISTS fsseam_observations (
    session TEXT NOT NULL,
    target TEXT NOT NULL,
    seen TEXT NOT NULL,
    PRIMARY KEY (session, target)
) WITHOUT ROWID;
"""

_PURGE_EVERY: Final = 1000
"""Puts between two sweeps of expired sessions (a sweep is one indexed DELETE)."""


class SqliteObservationStore(ObservationStore):
    """Observations in an SQLite database file: several processes on one host, restarts.

    The database runs in WAL mode, so readers never wait for a writer and
    every process sharing the file sees a put once it returns. All SQLite
    work happens on one worker thread per store, never on the event loop. A
    file that stays locked longer than ``timeout`` seconds (or cannot be
    opened) is ``FS_IO_ERROR`` naming it. Losing the file only makes the
    policy refuse until the session reads again: it decides nothing.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        ttl: float | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        if ttl is not None and ttl <= 0:
            raise ValueError(f"ttl must be a positive number of seconds, got {ttl!r}")
        self.path = os.fspath(path)
        if not self.path:
            raise ValueError("the SQLite observation store needs a file path")
        self.ttl = ttl
        self.timeout = timeout
        self.name = f"sqlite:///{os.path.abspath(self.path).lstrip('/')}"
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="fsseam-sqlite"
        )
        self._db: sqlite3.Connection | None = None
        self._puts = 0

    # Everything below ``_connection`` runs on the worker thread only.

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            db = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
            try:
                db.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
                db.execute("PRAGMA journal_mode = WAL")
                # WAL + NORMAL survives a crashed process; a power cut may lose the
                # last observations, which only makes the policy ask for a re-read.
                db.execute("PRAGMA synchronous = NORMAL")
                db.executescript(_SCHEMA)
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db

    def _expired_before(self) -> float:
        return 0.0 if self.ttl is None else time.time() - self.ttl

    def _get(self, session: str, target: str) -> str | None:
        row = (
            self._connection()
            .execute(
                "SELECT o.seen FROM fsseam_observations o JOIN fsseam_sessions s"
                " ON s.session = o.session"
                " WHERE o.session = ? AND o.target = ? AND s.touched >= ?",
                (session, target, self._expired_before()),
            )
            .fetchone()
        )
        return None if row is None else str(row[0])

    def _put(self, session: str, target: str, seen: str) -> None:
        db = self._connection()
        now = time.time()
        db.execute("BEGIN IMMEDIATE")
        try:
            expired = db.execute(
                "SELECT 1 FROM fsseam_sessions WHERE session = ? AND touched < ?",
                (session, self._expired_before()),
            ).fetchone()
            if expired is not None:  # an expired session starts afresh, not from its old reads
                db.execute("DELETE FROM fsseam_observations WHERE session = ?", (session,))
            db.execute(
                "INSERT INTO fsseam_sessions (session, touched) VALUES (?, ?)"
                " ON CONFLICT (session) DO UPDATE SET touched = excluded.touched",
                (session, now),
            )
            db.execute(
                "INSERT INTO fsseam_observations (session, target, seen) VALUES (?, ?, ?)"
                " ON CONFLICT (session, target) DO UPDATE SET seen = excluded.seen",
                (session, target, seen),
            )
            self._puts += 1
            if self.ttl is not None and self._puts % _PURGE_EVERY == 0:
                self._purge(db)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _purge(self, db: sqlite3.Connection) -> None:
        cutoff = self._expired_before()
        db.execute(
            "DELETE FROM fsseam_observations WHERE session IN"
            " (SELECT session FROM fsseam_sessions WHERE touched < ?)",
            (cutoff,),
        )
        db.execute("DELETE FROM fsseam_sessions WHERE touched < ?", (cutoff,))

    def _forget(self, session: str) -> None:
        db = self._connection()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("DELETE FROM fsseam_observations WHERE session = ?", (session,))
            db.execute("DELETE FROM fsseam_sessions WHERE session = ?", (session,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.timeout + 1.0):
                return await loop.run_in_executor(self._executor, fn, *args)
        except (sqlite3.Error, OSError, TimeoutError, RuntimeError) as exc:
            raise _unreachable(self, exc) from exc

    async def get(self, session: object, target: FsTargetKey) -> FsObservation | None:
        """What ``session`` last observed at ``target`` (``None`` once ``ttl`` has passed)."""
        key = _string_session(self, session)
        return _decode(await self._call(self._get, key, str(target)))

    async def put(self, session: object, target: FsTargetKey, observation: FsObservation) -> None:
        """Record ``observation``; committed (visible to other processes) when this returns."""
        key = _string_session(self, session)
        await self._call(self._put, key, str(target), _encode(observation))

    async def forget(self, session: object) -> None:
        """Delete the session's rows."""
        await self._call(self._forget, _string_session(self, session))

    async def check(self) -> None:
        """Open the database (creating it and its tables) or raise FsIOError."""
        await self._call(self._connection)

    async def aclose(self) -> None:
        """Close the database and stop the worker thread."""
        try:
            await asyncio.get_running_loop().run_in_executor(self._executor, self._close)
        finally:
            self._executor.shutdown(wait=False)


# -- Redis ------------------------------------------------------------------------


class RedisObservationStore(ObservationStore):
    """Observations in Redis, shared by every process and replica: one hash per session.

    Each session is the hash ``{prefix}{session}`` mapping target keys to
    observations; every put refreshes its expiry when ``ttl`` is set. redis-py's
    asyncio client is used (one connection pool per event loop, since its
    connections belong to the loop that made them). Each call is bounded by
    ``timeout`` seconds, after which it fails with ``FS_IO_ERROR`` naming the
    server. Needs ``pip install "fsseam[redis]"``.
    """

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        ttl: float | None = None,
        prefix: str = "fsseam:obs:",
        timeout: float = DEFAULT_TIMEOUT,
        **client_options: Any,
    ) -> None:
        try:
            import redis.asyncio  # noqa: F401 - fail at construction, with the hint
        except ImportError as exc:
            raise missing_extra("the Redis observation store", "redis-py", "redis", exc) from exc
        if ttl is not None and ttl <= 0:
            raise ValueError(f"ttl must be a positive number of seconds, got {ttl!r}")
        self.url = url
        self.ttl = ttl
        self.prefix = prefix
        self.timeout = timeout
        self.name = _without_password(url)
        self._options = client_options
        self._lock = threading.Lock()
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )

    def _client(self) -> Any:
        from redis.asyncio import Redis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._clients.get(loop)
            if client is None:
                options: dict[str, Any] = {
                    "socket_timeout": self.timeout,
                    "socket_connect_timeout": self.timeout,
                    # One quick retry covers a pooled connection the server closed.
                    "retry": Retry(NoBackoff(), 1),
                    "health_check_interval": 30,
                }
                options.update(self._options)
                client = Redis.from_url(self.url, **options)
                self._clients[loop] = client
            return client

    async def _call(self, op: Callable[[Any], Any]) -> Any:
        from redis.exceptions import RedisError

        try:
            async with asyncio.timeout(self.timeout):
                return await op(self._client())
        except (RedisError, OSError, TimeoutError) as exc:
            raise _unreachable(self, exc) from exc

    def _key(self, session: object) -> str:
        return self.prefix + _string_session(self, session)

    async def get(self, session: object, target: FsTargetKey) -> FsObservation | None:
        """``HGET`` the session's hash."""
        key = self._key(session)
        raw = await self._call(lambda client: client.hget(key, str(target)))
        return _decode(raw)

    async def put(self, session: object, target: FsTargetKey, observation: FsObservation) -> None:
        """``HSET`` and, with a ``ttl``, ``PEXPIRE`` the hash, in one transaction."""
        key = self._key(session)
        value = _encode(observation)

        async def op(client: Any) -> None:
            async with client.pipeline(transaction=True) as pipe:
                pipe.hset(key, str(target), value)
                if self.ttl is not None:
                    pipe.pexpire(key, max(1, int(self.ttl * 1000)))
                await pipe.execute()

        await self._call(op)

    async def forget(self, session: object) -> None:
        """``DEL`` the session's hash."""
        key = self._key(session)
        await self._call(lambda client: client.delete(key))

    async def check(self) -> None:
        """``PING`` the server or raise FsIOError."""
        await self._call(lambda client: client.ping())

    async def aclose(self) -> None:
        """Close this event loop's connection pool."""
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._clients.pop(loop, None)
        if client is not None:
            await client.aclose()


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    netloc = f"{user}:***@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


# -- URLs ---------------------------------------------------------------------------


def open_observations(url: str, **options: Any) -> ObservationStore:
    """The observation store a URL names (see the module docstring for the forms).

    ``options`` go to the store's constructor (``ttl=``, ``timeout=``, and for
    Redis any redis-py client option). Raises ``ValueError`` for a URL of
    another scheme, ``ImportError`` (with the install hint) when Redis is
    named but redis-py is missing.
    """
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep:
        raise ValueError(_usage(url))
    if scheme == "memory":
        if rest.strip("/"):
            raise ValueError(f"memory:// takes no path, got {url!r}")
        return MemoryObservationStore(**options)
    if scheme == "sqlite":
        if not rest:
            raise ValueError(f"{url!r} names no database file; use sqlite:///ABSOLUTE/PATH")
        # sqlite:////abs (SQLAlchemy's spelling) is the same absolute path.
        path = "/" + rest.lstrip("/") if rest.startswith("/") else rest
        return SqliteObservationStore(path, **options)
    if scheme in ("redis", "rediss"):
        return RedisObservationStore(url, **options)
    raise ValueError(_usage(url))


def _usage(url: str) -> str:
    return (
        f"unknown observation store {url!r}; use memory://, sqlite:///ABSOLUTE/PATH, "
        "sqlite://RELATIVE/PATH, redis://HOST:PORT/DB or rediss://HOST:PORT/DB"
    )
