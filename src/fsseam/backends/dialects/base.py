"""What a dialect provides, and the guarded-write protocol, written once.

A dialect works on *store paths* (what fsspec calls a stripped path) that
:class:`~fsseam.backends.fsspec.FsspecFileSystem` has already contained in the
root. Text, edits and path policy live above it; it only moves bytes and
decides versions. :class:`Dialect` is the interface (local disk and the
generic dialect implement it directly: their guard is a lock protocol).

:class:`GuardedDialect` is the base of every store whose conditional write is
one request (S3, GCS, Azure, through ``objects.ObjectStoreDialect``). Its
``put`` is final; the protocol, for every such store:

1. refuse data over the store's single-request limit (``FS_TOO_LARGE``);
2. mint a unique write token, stored in the object's metadata;
3. ``_send``: ONE conditional request, whose single error boundary ends in
   the new version, :class:`GuardRefused` (412, "already exists"),
   :class:`OutcomeUnknown` (5xx, timeout, reset: it may have landed), or an
   ordinary :class:`~fsseam.seam.FsError`, passed through;
4. after a refused or unknown outcome, recover ONCE: read the token back
   (``_token_of``) and let :func:`settle` decide. Our token: the write
   landed and only its answer was lost (SDKs retry internally), success.
   Otherwise a conflict, unless the guard still holds, which leaves an
   unknown outcome the I/O error it was. Content equality never decides:
   two writers of the same bytes from one stale base would both "win".
"""

from __future__ import annotations

import asyncio
import hashlib
import mimetypes
import threading
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar, final

# Re-exported for the local dialect, which words these failures like every store.
from fsseam.backends.dialects.messages import (
    already_exists,
    check_size,
    not_a_file,
    not_found,
    stale,
)
from fsseam.seam import (
    CreateIfAbsent,
    FsError,
    FsErrorCode,
    FsInfo,
    FsIOError,
    FsNotFound,
    FsPathInfo,
    FsTooLarge,
    FsVersion,
    FsWriteIntent,
    ReplaceIfVersion,
)
from fsseam.seam.filesystem import walk_order
from fsseam.seam.types import PathType

__all__ = [
    "CHUNK_SIZE",
    "DIRECTORY",
    "TOKEN_KEY",
    "Dialect",
    "GuardRefused",
    "GuardedDialect",
    "ObjectState",
    "OutcomeUnknown",
    "Quirk",
    "RawEntry",
    "RawReader",
    "StoredWrite",
    "already_exists",
    "check_size",
    "content_type",
    "content_version",
    "not_a_file",
    "not_found",
    "on_loop",
    "or_none",
    "protocols",
    "settle",
    "stale",
]

T = TypeVar("T")

CHUNK_SIZE = 1 << 20
"""Bytes per chunk when streaming."""

DIRECTORY = FsVersion("directory")
"""The version of every directory (prefix) on stores without directory versions."""

TOKEN_KEY = "fsseam-write-token"
"""Metadata key of a guarded write's unique token (Azure spells it with ``_``)."""


def content_version(data: bytes) -> FsVersion:
    """A version derived from content, for stores with no change token."""
    return FsVersion("sha256:" + hashlib.sha256(data).hexdigest()[:32])


# Python's built-in table only (no /etc/mime.types): the same guess on every machine.
_MIME = mimetypes.MimeTypes()


def content_type(name: str) -> str | None:
    """The MIME type a new object named ``name`` is stored with (``None``: unknown)."""
    return _MIME.guess_type(name)[0]


def new_token() -> str:
    """A unique write token (32 hex digits)."""
    return uuid.uuid4().hex


async def on_loop(loop: asyncio.AbstractEventLoop | None, coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on ``loop``, the loop an fsspec async store is bound to.

    s3fs, gcsfs and adlfs sessions belong to their own loop; driven from any
    other loop they fail in ways that look like network errors (and s3fs
    retries them). Running on that loop already, await directly.
    """
    if loop is None:
        return await coro
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:  # pragma: no cover - called from sync code
        running = None
    if running is loop:
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))


# -- values --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StoredWrite:
    """What a dialect's guarded put stored."""

    version: FsVersion
    """Version of the stored content."""
    created: bool
    """True when nothing existed before (a ``CreateIfAbsent`` write)."""
    version_id: str | None = None
    """The store's own id of the new object version, where it has one (S3
    ``VersionId`` on versioned buckets), for reporting; never a guard."""


@dataclass(frozen=True, slots=True)
class ObjectState:
    """An object as the store reports it: its version and the write token it carries."""

    version: FsVersion
    """The store's version (ETag, generation)."""
    token: str | None = None
    """The fsseam write token in its metadata (``None``: not written by fsseam)."""
    version_id: str | None = None
    """The store's object-version id, where it has one (S3 ``VersionId``)."""


@dataclass(frozen=True, slots=True)
class RawEntry:
    """A directory child as the store lists it."""

    name: str
    type: PathType
    version: FsVersion | None
    size: int | None


@dataclass(frozen=True, slots=True)
class Quirk:
    """A way a store departs from the protocol it claims, detected and worked around.

    Shown by ``fsseam doctor``; the dialect remembers each quirk per store
    (endpoint) for the life of the process.
    """

    name: str
    """A stable identifier, e.g. ``if-match-needs-unquoted-etag``."""
    description: str
    """What the store does, and what fsseam does about it."""


class RawReader(ABC):
    """An open read: ``info`` is the version of exactly the bytes ``chunks`` yields."""

    info: FsInfo

    @abstractmethod
    def chunks(self) -> AsyncGenerator[bytes, None]:
        """The content, in chunks of at most :data:`CHUNK_SIZE` bytes."""


class BytesReader(RawReader):
    """A reader over bytes already in memory."""

    def __init__(self, data: bytes, info: FsInfo) -> None:
        self._data = data
        self.info = info

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        data = self._data
        for start in range(0, len(data), CHUNK_SIZE):
            yield data[start : start + CHUNK_SIZE]


# -- the interface -------------------------------------------------------------


class _QuirkBook:
    """Quirks seen per store, process-wide: a second mount of a store need not rediscover."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[str, dict[str, Quirk]] = {}

    def note(self, store: str, quirk: Quirk) -> bool:
        """Remember ``quirk`` for ``store``; True when it is new."""
        with self._lock:
            known = self._seen.setdefault(store, {})
            if quirk.name in known:
                return False
            known[quirk.name] = quirk
            return True

    def forget(self, store: str) -> None:
        """Forget what was learned about ``store`` (tests, or a server upgraded in place)."""
        with self._lock:
            self._seen.pop(store, None)

    def of(self, store: str) -> tuple[Quirk, ...]:
        with self._lock:
            return tuple(self._seen.get(store, {}).values())


QUIRKS = _QuirkBook()
"""Every quirk detected in this process, by store."""


class Dialect(ABC):
    """Versions, raw reads and guarded writes for one family of fsspec stores.

    Every method raises :class:`~fsseam.seam.FsError` only; each dialect maps
    its SDK's exceptions at one boundary.
    """

    name: ClassVar[str] = "abstract"
    atomic_conditional_write: ClassVar[bool] = False
    local_paths: ClassVar[bool] = False
    """True when store paths are OS paths (symlinks, realpath)."""

    def __init__(self, fs: Any, root: str | None = None) -> None:
        self.fs = fs
        self.root: str | None = root
        """The workspace root as a store path (given here, or set by the file system)."""

    @classmethod
    def default_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        """Storage options for ``open_fs``, with this store's safe defaults added."""
        return options

    def url(self, path: str) -> str:
        """The full URL (or local path) people use for ``path``."""
        return str(self.fs.unstrip_protocol(path))

    async def _io(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` on the loop the fsspec store is bound to (``fs.loop``), if any.

        The one bridge between the caller's loop (or thread) and an async
        store's own loop; see :func:`on_loop`.
        """
        return await on_loop(getattr(self.fs, "loop", None), coro)

    # -- quirks ---------------------------------------------------------------

    def store_id(self) -> str:
        """What identifies the store for quirk memory (an endpoint; default: the dialect)."""
        return self.name

    @property
    def quirks(self) -> tuple[Quirk, ...]:
        """The quirks detected so far for this store, in this process."""
        return QUIRKS.of(self.store_id())

    def note_quirk(self, quirk: Quirk) -> None:
        """Remember a quirk of this store."""
        QUIRKS.note(self.store_id(), quirk)

    async def probe_quirks(self, url: str) -> tuple[Quirk, ...]:
        """Detect the store's quirks with raw requests on the scratch object ``url``.

        For ``fsseam doctor``: the object may be created, overwritten and is
        removed afterwards. Returns :attr:`quirks` afterwards; the default
        probes nothing.
        """
        return self.quirks

    # -- the operations -------------------------------------------------------

    @abstractmethod
    async def stat(self, path: str) -> FsInfo | None:
        """Metadata following symlinks; ``None`` when absent."""

    async def lstat(self, path: str) -> FsPathInfo | None:
        """Metadata of the path itself; object stores have no symlinks."""
        info = await self.stat(path)
        if info is None:
            return None
        return FsPathInfo(info.version, info.type, info.size)

    @abstractmethod
    def open_read(self, path: str) -> AbstractAsyncContextManager[RawReader]:
        """Open ``path`` for reading; raises ``FS_NOT_FOUND`` / ``FS_NOT_REGULAR_FILE``."""

    async def read_bytes(self, path: str, limit: int | None = None) -> tuple[bytes, FsInfo]:
        """The whole content and its version; ``FS_TOO_LARGE`` past ``limit`` bytes."""
        async with self.open_read(path) as reader:
            check_size(self.url(path), reader.info.size, limit)
            parts: list[bytes] = []
            total = 0
            async for chunk in reader.chunks():
                total += len(chunk)
                check_size(self.url(path), total, limit)
                parts.append(chunk)
            return b"".join(parts), reader.info

    @abstractmethod
    async def put(self, path: str, data: bytes, guard: FsWriteIntent | None) -> StoredWrite:
        """Atomically store ``data`` at ``path`` under ``guard`` (one atomic step).

        Missing parent directories are created. ``CreateIfAbsent`` on an
        existing object raises ``FS_NOT_OBSERVED``; ``ReplaceIfVersion`` on a
        changed or missing one raises ``FS_STALE_VERSION``. Object stores get
        this from :class:`ObjectStoreDialect` (the token protocol).
        """

    @abstractmethod
    async def list_dir(self, path: str) -> list[RawEntry]:
        """Direct children (any order); ``FS_NOT_FOUND`` / ``FS_NOT_DIRECTORY``."""

    async def remove(self, path: str) -> None:
        """Delete one file (unconditionally); ``FS_NOT_FOUND`` when absent.

        Not part of the model-facing seam: maintenance code (``fsseam doctor``
        cleaning its scratch object) uses it.
        """
        try:
            await asyncio.to_thread(self.fs.rm_file, path)
        except FileNotFoundError as exc:
            raise not_found(self.url(path)) from exc
        except OSError as exc:
            raise FsIOError(f'"{self.url(path)}": {exc}') from exc

    async def bucket_exists(self, path: str) -> bool:
        """Whether the bucket / container holding ``path`` exists (object stores)."""
        if self.fs.root_marker:  # a tree, not buckets (memory://, local)
            return True
        bucket = path.lstrip("/").split("/", 1)[0]
        return bool(await asyncio.to_thread(self.fs.exists, bucket))

    def is_internal(self, name: str) -> bool:
        """True for the dialect's own scratch names, hidden from listings."""
        return False

    async def walk(
        self,
        path: str,
        *,
        max_depth: int | None = None,
        descend: Callable[[str], bool] | None = None,
    ) -> AsyncIterator[tuple[str, RawEntry]]:
        """Every entry below the directory ``path``, as ``(relative path, entry)``.

        Order: sorted by relative path, a directory counting as its path plus
        ``/`` (:func:`~fsseam.seam.filesystem.walk_order`); that is the order
        an object store lists keys under a prefix. ``max_depth=1`` is the
        direct children. Symlinks are reported, never entered. A directory is
        entered only when ``descend(store_path)`` is true (the file system
        prunes denied and swapped directories with it). Errors on ``path``
        itself propagate; a subdirectory that vanishes or refuses listing is
        skipped.

        The default recurses with :meth:`list_dir`, one listing per directory.
        """
        base = path.rstrip("/") + "/"
        stack = [("", _walk_sorted(await self.list_dir(path)))]
        while stack:
            prefix, pending = stack[-1]
            if not pending:
                stack.pop()
                continue
            entry = pending.pop()
            relative = prefix + entry.name
            yield relative, entry
            if entry.type != "directory":
                continue
            if max_depth is not None and relative.count("/") + 1 >= max_depth:
                continue
            child = base + relative
            if descend is not None and not descend(child):
                continue
            try:
                children = await self.list_dir(child)
            except FsError as exc:
                if exc.code in _SKIPPED_DIRECTORY_CODES:
                    continue
                raise
            stack.append((relative + "/", _walk_sorted(children)))


_SKIPPED_DIRECTORY_CODES = frozenset(
    {
        FsErrorCode.FS_NOT_FOUND,
        FsErrorCode.FS_NOT_DIRECTORY,
        FsErrorCode.FS_PERMISSION_DENIED,
        FsErrorCode.FS_SANDBOX_DENIED,
    }
)


def _walk_sorted(entries: list[RawEntry]) -> list[RawEntry]:
    """Entries in reverse walk order, so ``pop()`` yields them in order."""
    return sorted(
        entries, key=lambda entry: walk_order(entry.name, entry.type == "directory"), reverse=True
    )


def protocols(fs: Any) -> tuple[str, ...]:
    """The protocol names an fsspec instance answers to."""
    proto = fs.protocol
    return (proto,) if isinstance(proto, str) else tuple(proto)


# -- the guarded-write protocol --------------------------------------------------


class GuardRefused(Exception):
    """Outcome of ``_send``: the store refused the write's precondition (it did not land...

    ...unless an SDK retry of a write that had landed met its own precondition:
    :func:`settle` tells by the token).
    """


class OutcomeUnknown(Exception):
    """Outcome of ``_send``: the write may or may not have landed (5xx, timeout, reset).

    ``error`` is what the caller gets when the token shows it did not land
    while the guard still holds.
    """

    def __init__(self, error: FsError, *, status: int | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.status = status
        """The HTTP status, when the store answered one (5xx)."""


class _Resend:
    """:func:`settle`'s answer for "refused although the guard holds": maybe resend."""


RESEND = _Resend()

LOSERS_GET_5XX = Quirk(
    "conditional-loser-gets-5xx",
    "a conditional write that lost a race was answered with a 5xx instead of 412; "
    "fsseam treats a 5xx on a conditional write as an unknown outcome and settles it "
    "by the write token",
)


def settle(
    url: str,
    guard: FsWriteIntent | None,
    token: str,
    outcome: GuardRefused | OutcomeUnknown,
    current: ObjectState | None,
    *,
    may_resend: bool = True,
) -> ObjectState | _Resend:
    """THE token-recovery decision, for every store: did this write land, or lose?

    ``current`` is the object as ``_token_of`` found it after the refused or
    unknown outcome (``None``: absent).

    - It carries ``token``: this very write landed; only its answer was lost
      (the SDK retried into its own precondition, or gave up): success.
    - The outcome was unknown and the guard still holds (nothing there for a
      create; the guarded version for a replace; always for an unguarded
      write): the write did not land and nothing conflicts, so the original
      failure stands (an I/O error; retrying is safe).
    - Refused although the guard holds (the store refused a version that is
      current): :data:`RESEND` while ``may_resend``, for the dialect to learn a
      quirk and resend once; else a conflict, conservatively.
    - Otherwise someone else's write stands where ours would be: a conflict,
      ``FS_NOT_OBSERVED`` for a create, ``FS_STALE_VERSION`` for a replace.
    """
    if current is not None and current.token == token:
        return current
    holds = (
        guard is None
        or (isinstance(guard, CreateIfAbsent) and current is None)
        or (
            isinstance(guard, ReplaceIfVersion)
            and current is not None
            and current.version == guard.version
        )
    )
    if isinstance(outcome, OutcomeUnknown):
        if holds:
            raise outcome.error
    elif holds and may_resend:
        return RESEND
    if isinstance(guard, CreateIfAbsent):
        raise already_exists(url)
    if isinstance(guard, ReplaceIfVersion):
        raise stale(url, deleted=current is None)
    raise FsIOError(f'"{url}": the store refused an unconditional write; retry')


class GuardedDialect(Dialect):
    """A store that checks a write's precondition in ONE request: ``put`` is the protocol.

    :meth:`put` is final: a store implements :meth:`_send` (one conditional
    write) and :meth:`_token_of` (one metadata read) and gets the size check,
    the write token and the recovery after refused or unknown outcomes
    (:func:`settle`) for free. Both hooks run on the store's loop.
    """

    atomic_conditional_write: ClassVar[bool] = True
    token_key: ClassVar[str] = TOKEN_KEY
    """The metadata key of the write token on this store."""
    max_put_bytes: ClassVar[int | None] = None
    """The largest body one conditional request may carry (``None``: no limit of ours)."""
    single_put: ClassVar[str] = "upload"
    """How the store calls that one request, for the ``FS_TOO_LARGE`` message."""

    @staticmethod
    def split(path: str) -> tuple[str, str]:
        """``(bucket, key)`` of a store path; the key has no trailing ``/``."""
        bucket, _, key = path.strip("/").partition("/")
        return bucket, key.rstrip("/")

    @abstractmethod
    async def _send(
        self, path: str, data: bytes, guard: FsWriteIntent | None, token: str
    ) -> ObjectState:
        """ONE conditional write of ``data`` carrying ``token`` in its metadata.

        Returns the stored object's state. Its single error boundary raises
        :class:`GuardRefused` when the precondition failed (a replace of a
        missing object included), :class:`OutcomeUnknown` when the write may
        have landed (5xx, timeout, dropped connection), or an ordinary
        :class:`~fsseam.seam.FsError` (denied, bad request...). A version that
        can never be current here (another store's token) is refused as
        ``FS_STALE_VERSION`` before sending.
        """

    @abstractmethod
    async def _token_of(self, path: str) -> ObjectState | None:
        """The object's current version and write token (one metadata request); ``None``: absent."""

    async def _refused_while_holding(self, path: str, guard: FsWriteIntent | None) -> bool:
        """The store refused a precondition that holds: learn a quirk and resend once?

        Return True only when the next ``_send`` will do something different
        (the quirk is remembered); the default, False, makes it a conflict.
        """
        return False

    @final
    async def put(self, path: str, data: bytes, guard: FsWriteIntent | None) -> StoredWrite:
        """The guarded-write protocol (module docstring): size, token, one send, one recovery."""
        url = self.url(path)
        if not self.split(path)[1]:
            raise not_a_file(url)  # a bucket is a directory
        limit = self.max_put_bytes
        if limit is not None and len(data) > limit:
            raise FsTooLarge(
                f'"{url}": {len(data)} bytes is over the {limit}-byte limit of one '
                f"{self.single_put} (a guarded write is one request, never multipart)"
            )
        return await self._io(self._put(path, url, data, guard))

    async def _put(
        self, path: str, url: str, data: bytes, guard: FsWriteIntent | None
    ) -> StoredWrite:
        token = new_token()
        may_resend = True
        while True:
            try:
                state = await self._send(path, data, guard, token)
            except (GuardRefused, OutcomeUnknown) as outcome:
                recovered = await self._recover(path, url, guard, token, outcome, may_resend)
                if recovered is None:
                    may_resend = False
                    continue
                state = recovered
            return StoredWrite(state.version, isinstance(guard, CreateIfAbsent), state.version_id)

    async def _recover(
        self,
        path: str,
        url: str,
        guard: FsWriteIntent | None,
        token: str,
        outcome: GuardRefused | OutcomeUnknown,
        may_resend: bool,
    ) -> ObjectState | None:
        """Read the token back once and :func:`settle`; ``None``: resend."""
        try:
            current = await self._token_of(path)
        except FsError:
            if isinstance(outcome, OutcomeUnknown):
                raise outcome.error from None  # unreachable store: report the first failure
            raise
        try:
            verdict = settle(url, guard, token, outcome, current, may_resend=may_resend)
            if isinstance(verdict, _Resend):
                if await self._refused_while_holding(path, guard):
                    return None
                verdict = settle(url, guard, token, outcome, current, may_resend=False)
        except FsError as exc:
            if isinstance(outcome, OutcomeUnknown) and exc is not outcome.error:
                if (outcome.status or 0) >= 500:
                    self.note_quirk(LOSERS_GET_5XX)
                raise exc from outcome.error
            if exc.__cause__ is None:
                exc.__cause__ = outcome
            raise
        assert isinstance(verdict, ObjectState)
        return verdict


async def or_none(call: Awaitable[T]) -> T | None:
    """``await call``, or ``None`` when it raises ``FS_NOT_FOUND`` (an absent object)."""
    try:
        return await call
    except FsNotFound:
        return None


async def run_blocking(inline: bool, fn: Callable[[], T]) -> T:
    """Run a blocking function inline (fast, in-memory stores) or in a worker thread."""
    if inline:
        return fn()
    return await asyncio.to_thread(fn)
