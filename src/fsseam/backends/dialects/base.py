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

Its ``delete`` is final too, the guarded-delete protocol: refuse on a store
known to ignore a delete's precondition (probed once per store with a
scratch object, never a user's file: :data:`~.quirks.DELETE_PRECONDITION_IGNORED`),
then ONE conditional delete (``_send_delete``) and, after a refused or
unknown outcome, one look at the object and :func:`settle_delete`. A delete
carries no token: what tells a lost answer from a real conflict is whether an
earlier attempt of the same request may have been applied (an unknown
outcome, or a refusal answered to an SDK retry). Absent after such an
attempt is success; absent after a clean first refusal is someone else's
delete; present at another version is a change that is never deleted.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar, TypeVar, final

from fsseam.backends.dialects.messages import (
    already_exists,
    cannot_guard_delete,
    check_size,
    not_a_file,
    not_found,
    stale,
)
from fsseam.backends.dialects.outcomes import GuardRefused, Outcome, OutcomeUnknown
from fsseam.backends.dialects.quirks import DELETE_PRECONDITION_IGNORED, QUIRKS, Quirk

# Re-exported for the local dialect, which words these failures like every store.
from fsseam.backends.dialects.values import (
    CHUNK_SIZE,
    DIRECTORY,
    TOKEN_KEY,
    BytesReader,
    ObjectState,
    RawEntry,
    RawReader,
    StoredWrite,
    content_type,
    content_version,
    new_token,
    on_loop,
)
from fsseam.seam import (
    CreateIfAbsent,
    FsError,
    FsInfo,
    FsIOError,
    FsNotFound,
    FsPathInfo,
    FsTooLarge,
    FsVersion,
    FsWriteIntent,
    ReplaceIfVersion,
)
from fsseam.seam.filesystem import walk_tree

__all__ = [
    "CHUNK_SIZE",
    "DELETE_PRECONDITION_IGNORED",
    "DIRECTORY",
    "QUIRKS",
    "TOKEN_KEY",
    "BytesReader",
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
    "cannot_guard_delete",
    "check_size",
    "content_type",
    "content_version",
    "new_token",
    "not_a_file",
    "not_found",
    "on_loop",
    "or_none",
    "protocols",
    "settle",
    "settle_delete",
    "stale",
]

T = TypeVar("T")

# -- the interface -------------------------------------------------------------


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

    async def is_directory(self, path: str) -> bool:
        """Whether ``path`` is a directory (a prefix with something under it, on object stores)."""
        info = await self.stat(path)
        return info is not None and info.type == "directory"

    async def delete(self, path: str, expected: FsVersion) -> None:
        """Delete the file ``path`` only while it is at ``expected``, check and removal atomic.

        ``FS_STALE_VERSION`` when it changed or is gone (never deleted then),
        ``FS_NOT_REGULAR_FILE`` for a directory, ``FS_SANDBOX_DENIED`` where the
        store cannot guard a delete. The default refuses: a dialect whose store
        (or lock protocol) can check the version implements it.
        """
        raise cannot_guard_delete(self.url(path), f"the {self.name} dialect has no guarded delete")

    async def check_guarded_delete(self, path: str) -> None:
        """Refuse (``FS_SANDBOX_DENIED``) before anything changes if a delete of ``path``
        cannot be guarded here. ``move`` calls it before writing its destination."""
        return

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

        The default is the seam's :func:`~fsseam.seam.filesystem.walk_tree`, one
        listing per directory (:meth:`list_walked` below the start).
        """
        base = path.rstrip("/") + "/"

        async def children(relative: str, entry: RawEntry | None) -> list[RawEntry]:
            if entry is None:
                return await self.list_dir(path)
            return await self.list_walked(base + relative)

        def enter(relative: str, entry: RawEntry) -> bool:
            return descend is None or descend(base + relative)

        async for item in walk_tree(
            children,
            name=lambda entry: entry.name,
            is_directory=lambda entry: entry.type == "directory",
            max_depth=max_depth,
            enter=enter,
        ):
            yield item

    async def list_walked(self, path: str) -> list[RawEntry]:
        """A directory :meth:`walk` found below its start, listed (default :meth:`list_dir`)."""
        return await self.list_dir(path)


def protocols(fs: Any) -> tuple[str, ...]:
    """The protocol names an fsspec instance answers to."""
    proto = fs.protocol
    return (proto,) if isinstance(proto, str) else tuple(proto)


# -- the guarded-write protocol --------------------------------------------------


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
    outcome: Outcome,
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


def settle_delete(
    url: str,
    expected: FsVersion,
    outcome: Outcome,
    current: ObjectState | None,
    *,
    may_resend: bool,
) -> _Resend | None:
    """THE lost-response decision for a guarded delete, for every store: gone, or kept?

    ``current`` is the object as ``_token_of`` found it after the refused or
    unknown outcome (``None``: absent). ``None`` returned means success.

    - Absent, after an attempt that may have been applied (an unknown outcome,
      or a refusal answered to an SDK retry): the delete happened and only its
      answer was lost. Nothing newer was removed (a refused precondition never
      deletes), so this is success, even when another session's delete of the
      same version came first.
    - Absent after a clean first refusal: someone else deleted it first:
      ``FS_STALE_VERSION`` (deleted since it was read).
    - Present at ``expected``: an unknown outcome did not land, so its error
      stands (retrying is safe); a refusal of the current version is
      :data:`RESEND` while ``may_resend`` (a quirk to learn), else a conflict.
    - Present at another version: a change this session has not seen, kept:
      ``FS_STALE_VERSION``.
    """
    if current is None:
        if isinstance(outcome, OutcomeUnknown) or outcome.retried:
            return None
        raise stale(url, deleted=True)
    if current.version == expected:
        if isinstance(outcome, OutcomeUnknown):
            raise outcome.error
        if may_resend:
            return RESEND
    raise stale(url)


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
        :class:`~fsseam.seam.FsError` (denied, bad request...). Boundaries
        built on :func:`~.outcomes.boundary` raise exactly these.
        """

    @abstractmethod
    async def _token_of(self, path: str) -> ObjectState | None:
        """The object's current version and write token (one metadata request); ``None``: absent."""

    def is_version(self, version: FsVersion) -> bool:
        """Whether this store could have produced ``version`` (default: not a directory's).

        One that could not is never current: a replace or delete guarded by
        it is ``FS_STALE_VERSION``, unsent, and never turns into the
        ``If-Match: *`` wildcard.
        """
        return bool(version) and version != DIRECTORY and "*" not in version

    async def _refused_while_holding(self, path: str, guard: FsWriteIntent | None) -> bool:
        """The store refused a precondition that holds: learn a quirk and resend once?

        Return True only when the next ``_send`` will do something different
        (the quirk is remembered); the default, False, makes it a conflict.
        """
        return False

    async def _send_delete(self, path: str, version: FsVersion | None) -> None:
        """ONE delete of ``path``, conditional on ``version`` (``None``: unconditional).

        Its error boundary raises :class:`GuardRefused` when the store refused
        the precondition or found nothing to delete (412, 404), with
        ``retried=True`` when that answered an SDK retry of this request;
        :class:`OutcomeUnknown` when it may have been applied (5xx, timeout,
        reset); or an ordinary :class:`~fsseam.seam.FsError`. The default
        refuses every delete (a store without conditional deletes).
        """
        raise cannot_guard_delete(
            self.url(path), f"the {self.name} dialect has no conditional delete"
        )

    @final
    async def delete(self, path: str, expected: FsVersion) -> None:
        """The guarded-delete protocol (module docstring): one conditional delete, one recovery."""
        url = self.url(path)
        if not self.split(path)[1]:
            raise not_a_file(url)  # a bucket is a directory
        if not self.is_version(expected):
            raise stale(url)
        await self.check_guarded_delete(path)
        await self._io(self._delete(path, url, expected))

    async def _delete(self, path: str, url: str, expected: FsVersion) -> None:
        may_resend = True
        while True:
            try:
                await self._send_delete(path, expected)
                return
            except (GuardRefused, OutcomeUnknown) as outcome:
                try:
                    current = await self._token_of(path)
                except FsError:
                    if isinstance(outcome, OutcomeUnknown):
                        raise outcome.error from None
                    raise
                try:
                    verdict = settle_delete(url, expected, outcome, current, may_resend=may_resend)
                    if isinstance(verdict, _Resend):
                        if await self._refused_while_holding(path, ReplaceIfVersion(expected)):
                            may_resend = False
                            continue
                        settle_delete(url, expected, outcome, current, may_resend=False)
                except FsError as exc:
                    if exc.__cause__ is None:
                        exc.__cause__ = outcome
                    raise
                return

    async def check_guarded_delete(self, path: str) -> None:
        """Probe once per store whether it enforces a delete's precondition; refuse if not."""
        if not QUIRKS.probed(self.store_id(), "delete"):
            directory = path.rstrip("/").rsplit("/", 1)[0]
            await self._io(self._probe_delete(directory))
        if DELETE_PRECONDITION_IGNORED in self.quirks:
            raise cannot_guard_delete(
                self.url(path),
                f"this store ignores a delete's precondition "
                f"(quirk {DELETE_PRECONDITION_IGNORED.name}, found by probing a scratch object)",
            )

    async def probe_quirks(self, url: str) -> tuple[Quirk, ...]:
        """Probe conditional deletes with the scratch object ``url`` (created, then removed)."""
        path = str(self.fs._strip_protocol(url))
        await self._io(self._probe_delete(path, exact=True))
        return self.quirks

    async def _probe_delete(self, where: str, *, exact: bool = False) -> None:
        """Two writes of a scratch object, then a delete conditional on the first version.

        A store that deletes it anyway ignores the precondition. The scratch
        object is ``where`` itself (``exact``) or a fresh name in the directory
        ``where``; it is removed afterwards whatever happens.
        """
        scratch = where if exact else f"{where}/.fsseam-probe-{new_token()[:12]}"
        try:
            first = await self._send(scratch, b"fsseam probe 1\n", None, new_token())
            await self._send(scratch, b"fsseam probe 2\n", None, new_token())
            try:
                await self._send_delete(scratch, first.version)
            except GuardRefused:
                pass  # refused, as it must be
            else:
                self.note_quirk(DELETE_PRECONDITION_IGNORED)
        except OutcomeUnknown as failed:
            raise failed.error from failed
        except GuardRefused as failed:
            raise FsIOError(
                f'"{self.url(scratch)}": the store refused an unconditional write while '
                "fsseam probed its conditional deletes; retry, or check it with fsseam doctor"
            ) from failed
        finally:
            with contextlib.suppress(FsError, GuardRefused, OutcomeUnknown):
                await self._send_delete(scratch, None)
        QUIRKS.mark_probed(self.store_id(), "delete")

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
        if isinstance(guard, ReplaceIfVersion) and not self.is_version(guard.version):
            raise stale(url)
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
            self._stored(path, state)
            return StoredWrite(state.version, isinstance(guard, CreateIfAbsent), state.version_id)

    def _stored(self, path: str, state: ObjectState) -> None:
        """A guarded write of ``path`` ended in ``state`` (a hook; the default does nothing)."""

    async def _recover(
        self,
        path: str,
        url: str,
        guard: FsWriteIntent | None,
        token: str,
        outcome: Outcome,
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
