"""S3 (s3fs): ETag versions, one-request reads, store-enforced conditional writes.

Version = the object's ETag exactly as S3 returns it (quoted, opaque). On
versioned buckets the ``VersionId`` rides along for reporting
(:attr:`S3Reader.version_id`, :attr:`S3StoredWrite.version_id`) and pins
resumed reads, but the guard is the ETag: ``PutObject`` cannot condition on a
VersionId.

Round trips (ordinary objects):

* read = one ``GetObject``; its response carries the ETag, so the version is
  that of exactly the bytes streamed (never HEAD + GET, which could race);
* create = one ``PutObject`` with ``If-None-Match: *``;
* replace and edit = one ``PutObject`` with ``If-Match: <etag>`` (after the
  caller's GET). Guarded writes are always a single PUT: s3fs's multipart
  path silently drops ``IfMatch`` (and moto ignores it on
  ``CompleteMultipartUpload``), which would turn a guard into an overwrite.

Lost responses: botocore and s3fs retry a PUT whose answer was lost; the
retry then meets its own write and fails the precondition (412). Every
guarded write therefore carries a unique token in the object's metadata
(``x-amz-meta-fsseam-write-token``). On a failed precondition the dialect
HEADs the object: its own token means the write landed (success, with that
ETag); anything else is a real conflict. Content equality and ETag-vs-MD5
are never used: two writers sending the same bytes from the same stale base
would both look successful and one update would vanish.

Reads stream in chunks of at most 1 MiB (bounded memory at any size). A
connection that breaks mid-body is resumed with a ranged GET pinned to the
version (``If-Match``, plus ``VersionId`` on versioned buckets).

s3fs coroutines are bound to the instance's own event loop (``fs.loop``);
every call goes through :func:`~fsseam.backends.dialects.base.on_loop`.
Listing and instance caches are never trusted for versions:
:meth:`S3Dialect.default_options` turns them off.

Directories are key prefixes: a "directory" exists while some key lies under
it, and writing needs no parent. Known limit: S3 lets an object ``a`` and
keys under ``a/`` coexist; a create (one PUT, no listing) does not look for a
same-named prefix.

Non-AWS endpoints: some S3-compatible servers accept ``If-Match`` and ignore
it. The first :class:`S3Dialect` built for an endpoint that is neither AWS nor
loopback (127.0.0.0/8, ``localhost``, ``::1`` -- where emulators and tests
run) emits one :class:`S3EndpointWarning` per process suggesting
``fsseam doctor URL``; silence it with
``warnings.filterwarnings("ignore", category=S3EndpointWarning)``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import mimetypes
import os
import threading
import uuid
import warnings
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, NoReturn
from urllib.parse import urlsplit

try:
    import s3fs  # noqa: F401  (the store this dialect serves; fail early with a hint)
    from botocore.exceptions import (
        ClientError,
        EndpointConnectionError,
        NoCredentialsError,
        PartialCredentialsError,
    )
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(f'S3 needs: pip install "fsseam[s3]" ({exc})') from exc

from fsseam.backends.dialects.base import (
    CHUNK_SIZE,
    Dialect,
    RawEntry,
    RawReader,
    StoredWrite,
    already_exists,
    check_size,
    not_a_file,
    not_found,
    on_loop,
    stale,
)
from fsseam.seam import (
    CreateIfAbsent,
    FsError,
    FsErrorCode,
    FsInfo,
    FsNotFound,
    FsVersion,
    FsWriteIntent,
    ReplaceIfVersion,
)

__all__ = ["S3Dialect", "S3EndpointWarning", "S3Reader", "S3StoredWrite"]

TOKEN_KEY = "fsseam-write-token"
"""User-metadata key of the per-write token (header ``x-amz-meta-fsseam-write-token``)."""

MAX_PUT_BYTES = 5 * 1024**3
"""S3's single-PUT limit; guarded writes are never multipart."""

_DIRECTORY = FsVersion("directory")
_CONFLICT_RETRIES = 4  # 409 ConditionalRequestConflict: S3 asks the client to retry
_RESUMES = 3  # broken GET bodies resumed per read
_CACHED_ATTRIBUTES = 1024

# Object attributes a replace carries over from the version it replaces: a PUT
# replaces the whole object, and an agent's edit must not turn a web page's
# text/html into binary/octet-stream or drop user metadata. ContentEncoding is
# deliberately not kept: the new bytes are plain text.
_KEPT = ("ContentType", "ContentLanguage", "ContentDisposition", "CacheControl")

_NOT_FOUND = frozenset({"NoSuchKey", "NoSuchBucket", "NoSuchVersion", "NotFound", "404"})
_DENIED = frozenset(
    {
        "AccessDenied",
        "403",
        "AllAccessDisabled",
        "AccountProblem",
        "ExpiredToken",
        "InvalidAccessKeyId",
        "InvalidToken",
        "SignatureDoesNotMatch",
        "RequestTimeTooSkewed",
    }
)
_AWS_SUFFIXES = (".amazonaws.com", ".amazonaws.com.cn", ".api.aws")
# Python's built-in table only (no /etc/mime.types): the same guess on every machine.
_MIME = mimetypes.MimeTypes()


class S3EndpointWarning(UserWarning):
    """The endpoint is not AWS: prove it enforces preconditions with ``fsseam doctor URL``."""


@dataclass(frozen=True, slots=True)
class S3StoredWrite(StoredWrite):
    """What a PUT stored, with the S3 ``VersionId`` on versioned buckets."""

    version_id: str | None = None
    """The new object version's id (versioned buckets), for reporting."""


class _GuardFailed(Exception):
    """A precondition failed (412) or conflicted (409); ``put`` decides what it means."""

    def __init__(self, code: str, *, retryable: bool) -> None:
        super().__init__(code)
        self.code = code
        self.retryable = retryable


def _split(path: str) -> tuple[str, str]:
    bucket, _, key = path.strip("/").partition("/")
    return bucket, key


def _client_error(exc: BaseException) -> tuple[str, int, str] | None:
    """(code, HTTP status, message) of the botocore error behind ``exc``.

    s3fs re-raises ClientErrors as built-in OSErrors (a failed If-Match is
    ``OSError(EINVAL)``, a failed If-None-Match ``FileExistsError``) with the
    original on ``__cause__``: the errno says nothing reliable, the cause does.
    """
    seen: BaseException | None = exc
    for _ in range(4):
        if seen is None:
            return None
        response = getattr(seen, "response", None)
        if isinstance(seen, ClientError) or isinstance(response, dict):
            error = (response or {}).get("Error", {})
            status = (response or {}).get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
            return str(error.get("Code", "")), int(status or 0), str(error.get("Message", ""))
        seen = seen.__cause__
    return None


def _raise(url: str, action: str, exc: BaseException, *, preconditions: bool) -> NoReturn:
    """The one mapping from botocore / s3fs failures to FsError codes."""
    found = _client_error(exc)
    code, status, message = found if found else ("", 0, "")
    if preconditions and (code == "PreconditionFailed" or status == 412):
        raise _GuardFailed(code or "412", retryable=False) from exc
    if preconditions and (
        code == "ConditionalRequestConflict" or (status == 409 and code in ("", "409"))
    ):
        raise _GuardFailed(code or "409", retryable=True) from exc
    if code in _NOT_FOUND or (found is None and isinstance(exc, FileNotFoundError)):
        if code == "NoSuchBucket":
            bucket = url.removeprefix("s3://").split("/", 1)[0]
            raise FsError(
                f'"{url}": the bucket "{bucket}" does not exist; check the URL',
                FsErrorCode.FS_NOT_FOUND,
            ) from exc
        raise not_found(url) from exc
    if (
        code in _DENIED
        or isinstance(exc, NoCredentialsError | PartialCredentialsError)
        or (found is None and isinstance(exc, PermissionError))
    ):
        cause = f"{code}: {message}" if code else f"{type(exc).__name__}: {exc}"
        raise FsError(
            f'"{url}": S3 refused to {action} ({cause}); check the credentials '
            "(key/secret, profile or role) and the bucket policy",
            FsErrorCode.FS_PERMISSION_DENIED,
        ) from exc
    if found is None and isinstance(exc, EndpointConnectionError | ConnectionError | TimeoutError):
        raise FsError(
            f'"{url}": could not reach S3 to {action} ({type(exc).__name__}: {exc}); '
            "check endpoint_url and the network, then retry",
            FsErrorCode.FS_IO_ERROR,
        ) from exc
    cause = f"{code} ({status}): {message}" if found else f"{type(exc).__name__}: {exc}"
    raise FsError(
        f'"{url}": could not {action} ({cause}); retry, or run `fsseam doctor {url}` '
        "to check the store",
        FsErrorCode.FS_IO_ERROR,
    ) from exc


@contextmanager
def _errors(url: str, action: str, *, preconditions: bool = False) -> Iterator[None]:
    """Translate foreign failures at one boundary (``raise ... from exc``).

    With ``preconditions``, a 412 / 409 surfaces as :class:`_GuardFailed` for
    the caller to settle; elsewhere it is an I/O error.
    """
    try:
        yield
    except (FsError, _GuardFailed):
        raise
    except Exception as exc:
        _raise(url, action, exc, preconditions=preconditions)


# -- endpoint warning ---------------------------------------------------------

_WARNED: set[str] = set()
_WARNED_LOCK = threading.Lock()


def _endpoint(fs: Any) -> str | None:
    client_kwargs = getattr(fs, "client_kwargs", None) or {}
    for candidate in (
        getattr(fs, "endpoint_url", None),
        client_kwargs.get("endpoint_url"),
        os.environ.get("AWS_ENDPOINT_URL_S3"),
        os.environ.get("AWS_ENDPOINT_URL"),
    ):
        if candidate:
            return str(candidate)
    return None


def _needs_proof(endpoint: str) -> bool:
    """True for endpoints that are neither AWS nor loopback."""
    host = (urlsplit(endpoint if "://" in endpoint else "//" + endpoint).hostname or "").lower()
    if not host or host in {"localhost", "amazonaws.com"} or host.endswith(_AWS_SUFFIXES):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


def _warn_endpoint(fs: Any) -> None:
    endpoint = _endpoint(fs)
    if endpoint is None or not _needs_proof(endpoint):
        return
    with _WARNED_LOCK:
        if endpoint in _WARNED:
            return
        _WARNED.add(endpoint)
    warnings.warn(
        f"fsseam: {endpoint} is not AWS S3. Some S3-compatible servers accept "
        "If-Match / If-None-Match and ignore them, which makes guarded writes "
        "unconditional. Run `fsseam doctor s3://BUCKET` against it once to prove it "
        "enforces them (silence with warnings.filterwarnings('ignore', "
        "category=fsseam.backends.dialects.s3.S3EndpointWarning)).",
        S3EndpointWarning,
        stacklevel=2,
    )


# -- attributes carried over by a replace -----------------------------------


class _Attributes:
    """Recent (path, ETag) -> object attributes seen on GET / HEAD, bounded."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()

    def remember(self, path: str, response: dict[str, Any]) -> None:
        etag = response.get("ETag")
        if not etag:
            return
        attrs: dict[str, Any] = {name: response[name] for name in _KEPT if response.get(name)}
        metadata = {k: v for k, v in (response.get("Metadata") or {}).items() if k != TOKEN_KEY}
        if metadata:
            attrs["Metadata"] = metadata
        with self._lock:
            self._items[(path, str(etag))] = attrs
            self._items.move_to_end((path, str(etag)))
            while len(self._items) > _CACHED_ATTRIBUTES:
                self._items.popitem(last=False)

    def get(self, path: str, etag: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._items.get((path, etag))
            return dict(found) if found is not None else None


# -- reads ---------------------------------------------------------------------


class S3Reader(RawReader):
    """One GetObject being streamed; ``info.version`` is that response's ETag."""

    def __init__(
        self, dialect: S3Dialect, path: str, response: dict[str, Any], info: FsInfo
    ) -> None:
        self._dialect = dialect
        self._path = path
        self._body: Any = response["Body"]
        self._pos = 0
        self._resumes = 0
        self.info = info
        self.version_id: str | None = response.get("VersionId")
        """The S3 VersionId of the bytes read (versioned buckets), for reporting."""

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        loop = self._dialect.fs.loop
        while True:
            chunk = await on_loop(loop, self.read_chunk())
            if not chunk:
                return
            yield chunk

    async def read_chunk(self) -> bytes:
        """Up to :data:`CHUNK_SIZE` bytes (``b""`` at the end); runs on ``fs.loop``."""
        size = self.info.size or 0
        parts: list[bytes] = []
        got = 0
        while got < CHUNK_SIZE and self._pos < size:
            try:
                data: bytes = await self._body.read(CHUNK_SIZE - got)
            except Exception as exc:  # the connection broke mid-body
                await self._resume(exc)
                continue
            if not data:
                await self._resume(None)
                continue
            parts.append(data)
            got += len(data)
            self._pos += len(data)
        return b"".join(parts)

    async def _resume(self, exc: BaseException | None) -> None:
        """Continue a broken body with a ranged GET pinned to the same version."""
        url = self._dialect.url(self._path)
        self._resumes += 1
        if self._resumes > _RESUMES:
            why = f"{type(exc).__name__}: {exc}" if exc else "the body ended early"
            raise FsError(
                f'"{url}": the connection kept breaking while reading ({why}); try again',
                FsErrorCode.FS_IO_ERROR,
            ) from exc
        await self.close()
        bucket, key = _split(self._path)
        pin: dict[str, Any] = {"IfMatch": self.info.version}
        if self.version_id:
            pin["VersionId"] = self.version_id  # the exact bytes, even if replaced since
        try:
            with _errors(url, "read", preconditions=True):
                response = await self._dialect.fs._call_s3(
                    "get_object", Bucket=bucket, Key=key, Range=f"bytes={self._pos}-", **pin
                )
        except _GuardFailed as failed:
            raise FsError(
                f'"{url}" changed while it was being read; read it again',
                FsErrorCode.FS_IO_ERROR,
            ) from failed
        except FsNotFound as gone:
            raise FsError(
                f'"{url}" was deleted while it was being read; read it again',
                FsErrorCode.FS_IO_ERROR,
            ) from gone
        self._body = response["Body"]
        if not str(response.get("ContentRange", "")).startswith(f"bytes {self._pos}-"):
            # A server that ignored Range would resend the start: never splice that in.
            raise FsError(
                f'"{url}": the store ignored a Range request while resuming a broken read; '
                "read it again",
                FsErrorCode.FS_IO_ERROR,
            )

    async def close(self) -> None:
        """Release the HTTP response (drops the connection when unread); on ``fs.loop``."""
        body, self._body = self._body, None
        if body is not None:
            body.close()


# -- the dialect ---------------------------------------------------------------


class S3Dialect(Dialect):
    """s3fs ``S3FileSystem``: ETags, single GETs and single conditional PUTs."""

    name: ClassVar[str] = "s3"
    atomic_conditional_write: ClassVar[bool] = True

    def __init__(self, fs: Any) -> None:
        super().__init__(fs)
        self._attributes = _Attributes()
        self._params_checked = False
        _warn_endpoint(fs)

    @classmethod
    def default_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        """Turn off the listing cache and the shared instance cache unless given.

        A dircache entry can be stale (and can even truncate ``cat_file``),
        and cached instances share state across mounts; neither may decide a
        version.
        """
        out = dict(options)
        out.setdefault("use_listings_cache", False)
        out.setdefault("skip_instance_cache", True)
        return out

    async def _on_loop(self, coro: Any) -> Any:
        return await on_loop(self.fs.loop, coro)

    # -- stat ------------------------------------------------------------------

    async def stat(self, path: str) -> FsInfo | None:
        return await self._on_loop(self._stat(path))  # type: ignore[no-any-return]

    async def _stat(self, path: str) -> FsInfo | None:
        bucket, key = _split(path)
        url = self.url(path)
        if not key:
            return (
                FsInfo(_DIRECTORY, "directory", None)
                if await self._bucket_exists(bucket, url)
                else None
            )
        try:
            with _errors(url, "stat"):
                head = await self.fs._call_s3("head_object", Bucket=bucket, Key=key)
        except FsNotFound:
            if await self._is_prefix(bucket, key, url):
                return FsInfo(_DIRECTORY, "directory", None)
            return None
        self._attributes.remember(path, head)
        return FsInfo(FsVersion(str(head["ETag"])), "file", int(head.get("ContentLength", 0)))

    async def _bucket_exists(self, bucket: str, url: str) -> bool:
        try:
            with _errors(url, "look up the bucket"):
                await self.fs._call_s3("head_bucket", Bucket=bucket)
        except FsNotFound:
            return False
        return True

    async def _is_prefix(self, bucket: str, key: str, url: str) -> bool:
        """True when some key lies under ``key/`` (a "directory")."""
        try:
            with _errors(url, "list"):
                listing = await self.fs._call_s3(
                    "list_objects_v2", Bucket=bucket, Prefix=key.rstrip("/") + "/", MaxKeys=1
                )
        except FsNotFound:
            return False
        return bool(listing.get("KeyCount") or listing.get("Contents"))

    # -- reads -------------------------------------------------------------------

    def open_read(self, path: str) -> AbstractAsyncContextManager[RawReader]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[RawReader]:
            reader: S3Reader = await self._on_loop(self._open(path))
            try:
                yield reader
            finally:
                await self._on_loop(reader.close())

        return opened()

    async def _open(self, path: str) -> S3Reader:
        bucket, key = _split(path)
        url = self.url(path)
        if not key:
            if await self._bucket_exists(bucket, url):
                raise self._is_directory(url)
            raise FsError(f'"{url}": the bucket does not exist', FsErrorCode.FS_NOT_FOUND)
        try:
            with _errors(url, "read"):
                response = await self.fs._call_s3("get_object", Bucket=bucket, Key=key)
        except FsNotFound:
            if await self._is_prefix(bucket, key, url):
                raise self._is_directory(url) from None
            raise
        self._attributes.remember(path, response)
        info = FsInfo(
            FsVersion(str(response["ETag"])), "file", int(response.get("ContentLength", 0))
        )
        return S3Reader(self, path, response, info)

    @staticmethod
    def _is_directory(url: str) -> FsError:
        return not_a_file(url)

    async def read_bytes(self, path: str, limit: int | None = None) -> tuple[bytes, FsInfo]:
        # The whole GET on fs.loop in one hop, instead of one hop per chunk.
        return await self._on_loop(self._read_all(path, limit))  # type: ignore[no-any-return]

    async def _read_all(self, path: str, limit: int | None) -> tuple[bytes, FsInfo]:
        reader = await self._open(path)
        try:
            check_size(self.url(path), reader.info.size, limit)
            parts: list[bytes] = []
            while chunk := await reader.read_chunk():
                parts.append(chunk)
            return b"".join(parts), reader.info
        finally:
            await reader.close()

    # -- writes ------------------------------------------------------------------

    async def put(self, path: str, data: bytes, guard: FsWriteIntent | None) -> StoredWrite:
        return await self._on_loop(self._put(path, data, guard))  # type: ignore[no-any-return]

    async def _put(self, path: str, data: bytes, guard: FsWriteIntent | None) -> S3StoredWrite:
        bucket, key = _split(path)
        url = self.url(path)
        if not key:
            raise self._is_directory(url)
        if len(data) > MAX_PUT_BYTES:
            raise FsError(
                f'"{url}": {len(data)} bytes is over the {MAX_PUT_BYTES}-byte limit of one '
                "S3 PUT (guarded writes are never multipart)",
                FsErrorCode.FS_TOO_LARGE,
            )
        await self._check_params(url)
        token = uuid.uuid4().hex
        kwargs: dict[str, Any] = self._attributes_for(path, key, guard)
        kwargs["Metadata"] = {**kwargs.get("Metadata", {}), TOKEN_KEY: token}
        if isinstance(guard, CreateIfAbsent):
            kwargs["IfNoneMatch"] = "*"
        elif isinstance(guard, ReplaceIfVersion):
            kwargs["IfMatch"] = str(guard.version)
        for attempt in range(_CONFLICT_RETRIES + 1):
            try:
                with _errors(url, "write", preconditions=True):
                    response = await self.fs._call_s3(
                        "put_object", Bucket=bucket, Key=key, Body=data, **kwargs
                    )
            except _GuardFailed as failed:
                if failed.retryable and attempt < _CONFLICT_RETRIES:
                    await asyncio.sleep(0.05 * 2**attempt)
                    continue
                return await self._settle(path, token, guard, failed)
            except FsNotFound as missing:
                if isinstance(guard, ReplaceIfVersion):  # If-Match on a missing key: 404
                    raise self._stale(url, "deleted") from missing
                raise
            except FsError as failed:
                # A 5xx botocore gave up on, or a dropped connection: the PUT may
                # have landed. Only the token can tell; never guess from content.
                if failed.code is not FsErrorCode.FS_IO_ERROR or guard is None:
                    raise
                try:
                    head = await self._head(path)
                except FsError:
                    head = None
                ours = self._if_ours(head, token, guard)
                if ours is None:
                    raise
                return ours
            # The next replace may start from the content cache, with no GET: keep what it carries.
            self._attributes.remember(path, {**kwargs, "ETag": response["ETag"]})
            return S3StoredWrite(
                FsVersion(str(response["ETag"])),
                created=isinstance(guard, CreateIfAbsent),
                version_id=response.get("VersionId"),
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def _attributes_for(self, path: str, key: str, guard: FsWriteIntent | None) -> dict[str, Any]:
        if isinstance(guard, ReplaceIfVersion):
            kept = self._attributes.get(path, str(guard.version))
            if kept is not None:
                return kept
        guessed, _ = _MIME.guess_type(key)
        return {"ContentType": guessed} if guessed else {}

    async def _head(self, path: str) -> dict[str, Any] | None:
        """The object's HEAD, ``None`` when it is absent."""
        bucket, key = _split(path)
        try:
            with _errors(self.url(path), "check the write"):
                head: dict[str, Any] = await self.fs._call_s3("head_object", Bucket=bucket, Key=key)
        except FsNotFound:
            return None
        return head

    @staticmethod
    def _if_ours(
        head: dict[str, Any] | None, token: str, guard: FsWriteIntent | None
    ) -> S3StoredWrite | None:
        """The stored write, if the object carries this write's token (it landed)."""
        if head is None or (head.get("Metadata") or {}).get(TOKEN_KEY) != token:
            return None
        return S3StoredWrite(
            FsVersion(str(head["ETag"])),
            created=isinstance(guard, CreateIfAbsent),
            version_id=head.get("VersionId"),
        )

    async def _settle(
        self, path: str, token: str, guard: FsWriteIntent | None, failed: _GuardFailed
    ) -> S3StoredWrite:
        """A precondition failed: did this very write land (lost response) or lose?"""
        url = self.url(path)
        head = await self._head(path)
        ours = self._if_ours(head, token, guard)
        if ours is not None:
            # Our own write answered by a retry: it landed, only the answer was lost.
            return ours
        if isinstance(guard, CreateIfAbsent):
            raise already_exists(url) from failed
        raise self._stale(url, "deleted" if head is None else "modified") from failed

    @staticmethod
    def _stale(url: str, what: str) -> FsError:
        return stale(url, deleted=what == "deleted")

    async def _check_params(self, url: str) -> None:
        """Refuse to write if botocore does not know the guard parameters.

        s3fs drops every keyword its botocore's model lacks, silently: with an
        old botocore, ``IfMatch`` would vanish and the write would overwrite.
        """
        if self._params_checked:
            return
        with _errors(url, "connect"):
            await self.fs.set_session()
            model = self.fs.s3.meta.service_model.operation_model("PutObject")
        missing = {"IfMatch", "IfNoneMatch", "Metadata"} - set(model.input_shape.members)
        if missing:
            raise FsError(
                f'"{url}": this botocore does not know PutObject {sorted(missing)}, so s3fs '
                "would drop the guard and overwrite unconditionally; upgrade: "
                "pip install -U botocore aiobotocore s3fs",
                FsErrorCode.FS_IO_ERROR,
            )
        self._params_checked = True

    # -- listing -------------------------------------------------------------------

    async def list_dir(self, path: str) -> list[RawEntry]:
        return await self._on_loop(self._list_dir(path))  # type: ignore[no-any-return]

    async def _list_dir(self, path: str) -> list[RawEntry]:
        bucket, key = _split(path)
        url = self.url(path)
        prefix = key + "/" if key else ""
        entries: list[RawEntry] = []
        marker = False  # a "key/" directory-marker object (console, s3fs mkdir)
        request: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "Delimiter": "/"}
        while True:
            with _errors(url, "list"):
                page = await self.fs._call_s3("list_objects_v2", **request)
            for common in page.get("CommonPrefixes") or ():
                name = str(common["Prefix"])[len(prefix) :].rstrip("/")
                if _plain(name):
                    entries.append(RawEntry(name, "directory", None, None))
            for item in page.get("Contents") or ():
                name = str(item["Key"])[len(prefix) :]
                if not name:
                    marker = True
                elif _plain(name):
                    etag = item.get("ETag")
                    version = FsVersion(str(etag)) if etag else None
                    entries.append(RawEntry(name, "file", version, int(item.get("Size", 0))))
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                break
            request["ContinuationToken"] = token
        if entries or marker or not key:
            return entries
        try:
            with _errors(url, "stat"):
                await self.fs._call_s3("head_object", Bucket=bucket, Key=key)
        except FsNotFound:
            raise FsError(f'"{url}": no such directory', FsErrorCode.FS_NOT_FOUND) from None
        raise FsError(f'"{url}" is a file, not a directory', FsErrorCode.FS_NOT_DIRECTORY)


def _plain(name: str) -> bool:
    """A name a listing can show (S3 keys may hold ``//``, ``.`` and ``..`` segments)."""
    return bool(name) and name not in (".", "..") and "/" not in name
