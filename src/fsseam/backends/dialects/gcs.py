"""Google Cloud Storage (gcsfs): version = generation, guards = ``ifGenerationMatch``.

The only module importing gcsfs. Everything goes through the JSON API with
gcsfs's authenticated, retrying session, on the loop gcsfs is bound to
(``fs.loop``; see :func:`~fsseam.backends.dialects.base.on_loop`):

- **read** — one media GET. Its ``X-Goog-Generation`` header is the version of
  exactly the bytes in the body. Objects up to 8 MiB are read whole in that
  request; for a larger one the first 8 MiB come from it and the rest from
  ranged GETs pinned with ``generation=``, so memory stays bounded and a
  concurrent replace can never splice two versions together. The first GET
  carries no ``Range`` header: a range starting at 0 is *unsatisfiable* on an
  empty object (HTTP 416, RFC 9110), which would cost empty files a second
  request. (gcsfs ``_call`` buffers whole bodies, hence the streamed first GET.)
- **write** — one multipart upload with ``ifGenerationMatch=0`` (create),
  ``=<generation>`` (replace) or none (unconditional). The store checks and
  publishes in one step. fake-gcs-server enforces the precondition on
  multipart uploads only, which is the upload type used here.
- **lost answers** — gcsfs retries 5xx, 408, 429 and dropped connections, so a
  guarded upload whose response was lost is retried into 412 although it was
  applied. Every write therefore stores a unique token in the object's
  metadata (``fsseam-write-token``); on 412 the current object is fetched and
  the write reports success when it carries this write's token, otherwise a
  conflict. Content equality is never the test: two writers storing identical
  bytes from the same stale base would both "win" and one update would vanish.
- **directories** are prefixes: a path is a directory when some object name
  starts with ``path/`` (a console-made ``path/`` placeholder counts).

Round trips for ordinary objects: read = 1, create = 1, replace = 1 (plus the
caller's read), stat = 1 (2 for a directory), list = 1 per 1000 entries. A
412 costs one metadata GET to tell a lost answer from a conflict.

A replace carries over ``Content-Type``, ``Cache-Control``,
``Content-Disposition`` and ``Content-Language`` from the read it is based on
(same mount, no extra request); a create guesses ``Content-Type`` from the
name. Known limits: custom ``x-goog-meta-*`` metadata is not carried over (the
media GET's header names lose the keys' case); an object ``a`` and objects
under ``a/`` may coexist, since a create (one upload, no listing) does not
look for a same-named prefix; objects stored with ``Content-Encoding: gzip``
are served decompressed and cannot be continued with ranges, so past 8 MiB
(stored) they are refused with ``FS_IO_ERROR``.

``GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT`` defaults to ``false`` here (set before
gcsfs is first imported, so ``fsspec.filesystem("gs")`` then builds the core
class). When it is on, ``gcsfs.GCSFileSystem`` is the experimental extended
class, which probes every bucket over gRPC (zonal / hierarchical namespace)
before ordinary calls; against an emulator each probe waits out timeouts (16
to 116 s measured). This dialect uses the JSON API alone, so it works with
either class; an explicit setting of the variable is respected. (When gcsfs
was imported before this module the variable was already read: the dialect
is unaffected, only gcsfs's own methods may probe.)
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import mimetypes
import os
import threading
import uuid
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Coroutine, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import Any, ClassVar, TypeVar

os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

try:
    import aiohttp
    import gcsfs  # noqa: F401 - registers the class fsspec builds for gs://
    from gcsfs.core import quote
    from gcsfs.retry import ChecksumError, HttpError, retry_request, validate_response
    from google.auth.exceptions import GoogleAuthError
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError('GCS needs: pip install "fsseam[gcs]"') from exc

from fsseam.backends.dialects.base import (
    CHUNK_SIZE,
    Dialect,
    RawEntry,
    RawReader,
    StoredWrite,
    already_exists,
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
    FsStaleVersion,
    FsVersion,
    FsWriteIntent,
    ReplaceIfVersion,
)

__all__ = ["TOKEN_KEY", "GCSDialect"]

T = TypeVar("T")

TOKEN_KEY = "fsseam-write-token"
"""Custom-metadata key holding the unique token of the write that stored an object."""

WHOLE_READ_LIMIT = 8 * 1024 * 1024
"""Objects up to this size are read in one request; larger ones stream."""

RANGE_SIZE = 8 * 1024 * 1024
"""Bytes per ranged GET when streaming a large object."""

_KEPT_HEADERS = {
    "Content-Type": "contentType",
    "Cache-Control": "cacheControl",
    "Content-Disposition": "contentDisposition",
    "Content-Language": "contentLanguage",
}
"""Object attributes a replace carries over from the read it is based on."""
_REMEMBERED = 1024
_DIRECTORY = FsVersion("directory")
_OBJECT_FIELDS = "name,generation,size,metadata"
_RETRIES = 6  # gcsfs's own default for _call


class _PreconditionFailed(FsStaleVersion):
    """HTTP 412 from a guarded upload; :meth:`GCSDialect.put` decides what it means."""


def _split(path: str) -> tuple[str, str]:
    bucket, _, key = path.partition("/")
    return bucket, key.rstrip("/")


def _generation(headers: Any) -> str:
    value = headers.get("X-Goog-Generation")
    if not value:
        raise HttpError({"code": 502, "message": "the response carries no X-Goog-Generation"})
    return str(value)


def _status_code(exc: BaseException) -> int | None:
    code = getattr(exc, "code", None)
    try:
        return int(code) if code is not None else None
    except (TypeError, ValueError):
        return None


@retry_request(retries=_RETRIES)  # type: ignore[untyped-decorator]
async def _first_get(fs: Any, url: str) -> tuple[Any, bytes, int]:
    """One media GET: headers, the first ``WHOLE_READ_LIMIT`` bytes, the total size.

    Streams the body instead of going through ``_call`` (which buffers it
    whole), reusing gcsfs's retry policy and error mapping; a body cut short
    raises ``ClientPayloadError`` and is retried like any dropped connection.
    """
    session = await fs._set_session()
    response = await session.get(
        url,
        params=fs._get_params({}),
        headers=fs._get_headers(None),
        timeout=fs.requests_timeout,
    )
    try:
        if response.status >= 400:
            validate_response(response.status, await response.read(), url)
        headers = response.headers
        length = headers.get("Content-Length") or headers.get("X-Goog-Stored-Content-Length")
        if length is None or int(length) <= WHOLE_READ_LIMIT:
            body = await response.read()
            return headers, body, len(body)
        try:
            head = await response.content.readexactly(WHOLE_READ_LIMIT)
        except asyncio.IncompleteReadError as exc:
            raise aiohttp.ClientPayloadError("the response body was cut short") from exc
        return headers, head, int(length)
    finally:
        # Closing mid-body drops the connection instead of draining the rest.
        response.close()


class _Attributes:
    """Recent (path, generation) -> attributes seen on a read, bounded and thread-safe.

    A multipart upload replaces the whole object resource, so a replace would
    reset ``Cache-Control`` or a hand-set ``Content-Type``; the read that the
    replace is based on already carried them in its headers, at no extra cost.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[str, str], dict[str, str]] = OrderedDict()

    def remember(self, path: str, generation: str, headers: Any) -> None:
        attrs = {
            field: str(headers[name]) for name, field in _KEPT_HEADERS.items() if headers.get(name)
        }
        with self._lock:
            self._items[(path, generation)] = attrs
            self._items.move_to_end((path, generation))
            while len(self._items) > _REMEMBERED:
                self._items.popitem(last=False)

    def get(self, path: str, generation: str) -> dict[str, str] | None:
        with self._lock:
            return self._items.get((path, generation))


class _GCSReader(RawReader):
    """The bytes of one generation: the first GET's body, then pinned ranged GETs."""

    def __init__(
        self, dialect: GCSDialect, path: str, head: bytes, size: int, info: FsInfo
    ) -> None:
        self._dialect = dialect
        self._path = path
        self._head = head
        self._size = size
        self.info = info

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        head, self._head = self._head, b""
        offset = len(head)
        for start in range(0, len(head), CHUNK_SIZE):
            yield head[start : start + CHUNK_SIZE]
        del head
        while offset < self._size:
            end = min(offset + RANGE_SIZE, self._size)
            data = await self._dialect._range(self._path, self.info.version, offset, end)
            offset += len(data)
            for start in range(0, len(data), CHUNK_SIZE):
                yield data[start : start + CHUNK_SIZE]


class GCSDialect(Dialect):
    """``gcsfs.GCSFileSystem``: generations as versions, ``ifGenerationMatch`` guards."""

    name: ClassVar[str] = "gcs"
    atomic_conditional_write: ClassVar[bool] = True
    page_size: int = 1000
    """Entries per listing request (the JSON API's maximum)."""

    def __init__(self, fs: Any) -> None:
        super().__init__(fs)
        self._attributes = _Attributes()

    @classmethod
    def default_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        """Never trust listing caches or a cached instance for versions."""
        out = dict(options)
        out.setdefault("use_listings_cache", False)
        out.setdefault("skip_instance_cache", True)
        return out

    def url(self, path: str) -> str:
        return f"gs://{path}"

    # -- plumbing ------------------------------------------------------------

    async def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return await on_loop(getattr(self.fs, "loop", None), coro)

    @contextmanager
    def _errors(self, path: str) -> Iterator[None]:
        """The one boundary where gcsfs / aiohttp / google-auth errors become FsError."""
        url = self.url(path)
        try:
            yield
        except FsError:
            raise
        except FileNotFoundError as exc:  # gcsfs: HTTP 404
            raise not_found(url) from exc
        except FileExistsError as exc:  # gcsfs: HTTP 412, whatever the precondition
            raise _PreconditionFailed(
                f'"{url}" changed since it was read (generation precondition failed)'
            ) from exc
        except GoogleAuthError as exc:
            raise FsError(
                f'"{url}": Google credentials could not be obtained or refreshed ({exc}); '
                "check the token / GOOGLE_APPLICATION_CREDENTIALS storage options",
                FsErrorCode.FS_PERMISSION_DENIED,
            ) from exc
        except HttpError as exc:
            code = _status_code(exc)
            if code in (401, 403):
                raise self._denied(url, code) from exc
            raise FsError(
                f'"{url}": Google Cloud Storage answered HTTP {code}: {exc.message}; '
                "retry later, or check the bucket and endpoint",
                FsErrorCode.FS_IO_ERROR,
            ) from exc
        except (aiohttp.ClientError, ChecksumError, TimeoutError) as exc:
            raise FsError(
                f'"{url}": could not reach Google Cloud Storage at {self._endpoint()} '
                f"({type(exc).__name__}: {exc}); check the network and endpoint_url, then retry",
                FsErrorCode.FS_IO_ERROR,
            ) from exc
        except (OSError, ValueError) as exc:
            # gcsfs raises OSError("Forbidden: ...") for 403 and ValueError("Bad
            # Request: ...") for a 400 whose message says "invalid".
            if str(exc).startswith("Forbidden"):
                raise self._denied(url, 403) from exc
            raise FsError(f'"{url}": {type(exc).__name__}: {exc}', FsErrorCode.FS_IO_ERROR) from exc

    @staticmethod
    def _denied(url: str, status: int | None) -> FsError:
        return FsError(
            f'"{url}": access denied by Google Cloud Storage (HTTP {status}); '
            "check the credentials and the bucket's IAM permissions",
            FsErrorCode.FS_PERMISSION_DENIED,
        )

    def _endpoint(self) -> str:
        return str(getattr(self.fs, "_location", "the storage endpoint"))

    async def _object(self, path: str) -> dict[str, Any] | None:
        """The object's JSON resource, or ``None`` when absent (must run in ``_errors``)."""
        bucket, key = _split(path)
        if not key:
            return None
        try:
            found: dict[str, Any] = await self._run(
                self.fs._call("GET", "b/{}/o/{}", bucket, key, json_out=True, fields=_OBJECT_FIELDS)
            )
        except FileNotFoundError:
            return None
        return found

    async def _has_children(self, path: str) -> bool:
        """True when ``path`` names a bucket or a non-empty prefix (must run in ``_errors``)."""
        bucket, key = _split(path)
        try:
            # objects.list, not buckets.get: object-level roles often lack the latter.
            page = await self._run(
                self.fs._call(
                    "GET",
                    "b/{}/o",
                    bucket,
                    json_out=True,
                    prefix=key + "/" if key else None,
                    maxResults=1,
                    fields="items(name),prefixes",
                )
            )
        except FileNotFoundError:  # no such bucket
            return False
        return not key or bool(page.get("items") or page.get("prefixes"))

    # -- reads ---------------------------------------------------------------

    async def stat(self, path: str) -> FsInfo | None:
        with self._errors(path):
            obj = await self._object(path)
            if obj is not None:
                return FsInfo(FsVersion(str(obj["generation"])), "file", int(obj.get("size", 0)))
            if await self._has_children(path):
                return FsInfo(_DIRECTORY, "directory", None)
        return None

    def open_read(self, path: str) -> AbstractAsyncContextManager[RawReader]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[RawReader]:
            url = self.url(path)
            if not _split(path)[1]:
                raise FsError(
                    f'"{url}" is a bucket; only objects can be read',
                    FsErrorCode.FS_NOT_REGULAR_FILE,
                )
            try:
                with self._errors(path):
                    headers, head, size = await self._run(_first_get(self.fs, self.fs.url(path)))
                    version = FsVersion(_generation(headers))
                    self._attributes.remember(path, version, headers)
                encoding = headers.get("X-Goog-Stored-Content-Encoding", "identity")
                if size > len(head) and encoding != "identity":
                    # Served decompressed: ranges of the stored bytes cannot continue it.
                    raise FsError(
                        f'"{url}" is stored with Content-Encoding: {encoding} and is over '
                        f"{WHOLE_READ_LIMIT} bytes; fsseam reads such objects only whole",
                        FsErrorCode.FS_IO_ERROR,
                    )
            except FsError as exc:
                if exc.code == FsErrorCode.FS_NOT_FOUND:
                    with self._errors(path):
                        is_dir = await self._has_children(path)
                    if is_dir:
                        raise not_a_file(url) from None
                raise
            yield _GCSReader(self, path, head, size, FsInfo(version, "file", size))

        return opened()

    async def _range(self, path: str, version: FsVersion, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of exactly generation ``version``."""
        url = self.url(path)
        try:
            with self._errors(path):
                headers, data = await self._run(
                    self.fs._call(
                        "GET",
                        self.fs.url(path, generation=version),
                        headers={"Range": f"bytes={start}-{end - 1}"},
                    )
                )
        except FsError as exc:
            if exc.code == FsErrorCode.FS_NOT_FOUND:
                # The pinned generation is gone: replaced or deleted mid-stream.
                # (An I/O error, not a conflict: the reader holds no guard.)
                raise FsError(
                    f'"{url}" changed while it was being read; read it again',
                    FsErrorCode.FS_IO_ERROR,
                ) from exc
            raise
        want = end - start
        if headers.get("X-Goog-Generation", version) != version or len(data) != want:
            raise FsError(
                f'"{url}": the store answered {len(data)} bytes for a {want}-byte range '
                f"of generation {version}; read it again",
                FsErrorCode.FS_IO_ERROR,
            )
        data_bytes: bytes = data
        return data_bytes

    # -- writes --------------------------------------------------------------

    async def put(self, path: str, data: bytes, guard: FsWriteIntent | None) -> StoredWrite:
        bucket, key = _split(path)
        url = self.url(path)
        if not key:
            raise FsError(f'"{url}" is a bucket, not an object', FsErrorCode.FS_NOT_REGULAR_FILE)
        params: dict[str, str] = {}
        if isinstance(guard, CreateIfAbsent):
            params["ifGenerationMatch"] = "0"
        elif isinstance(guard, ReplaceIfVersion):
            if not guard.version.isdigit() or guard.version == "0":
                # Not a generation (a directory, another store's token): never current.
                raise stale(url)
            params["ifGenerationMatch"] = guard.version
        token = uuid.uuid4().hex
        try:
            with self._errors(path):
                attrs = self._attributes_for(path, key, guard)
                stored = await self._run(self._upload(bucket, key, data, token, params, attrs))
        except _PreconditionFailed:
            return await self._after_conflict(path, guard, token)
        except FsError as failed:
            # A 5xx gcsfs did not retry, or a dropped connection: the upload may
            # have landed. Only the token can tell; never guess from content.
            if failed.code is not FsErrorCode.FS_IO_ERROR or guard is None:
                raise
            try:
                with self._errors(path):
                    current = await self._object(path)
            except FsError:
                current = None
            ours = _if_ours(current, token, guard)
            if ours is None:
                raise
            return ours
        # The next replace may start from the content cache, with no GET: keep what it carries.
        kept = {name: attrs[field] for name, field in _KEPT_HEADERS.items() if field in attrs}
        self._attributes.remember(path, str(stored["generation"]), kept)
        return StoredWrite(
            FsVersion(str(stored["generation"])), created=isinstance(guard, CreateIfAbsent)
        )

    def _attributes_for(self, path: str, key: str, guard: FsWriteIntent | None) -> dict[str, str]:
        if isinstance(guard, ReplaceIfVersion):
            kept = self._attributes.get(path, guard.version)
            if kept is not None and "contentType" in kept:
                return kept
        return {"contentType": mimetypes.guess_type(key)[0] or "application/octet-stream"}

    async def _upload(
        self,
        bucket: str,
        key: str,
        data: bytes,
        token: str,
        params: dict[str, str],
        attrs: dict[str, str],
    ) -> dict[str, Any]:
        """One multipart upload (the only upload type fake-gcs-server guards)."""
        resource = {
            **attrs,
            "name": key,
            "metadata": {TOKEN_KEY: token},
            # GCS recomputes the MD5 and refuses a body that does not match
            # (integrity across proxies; fake-gcs-server does not check it).
            "md5Hash": base64.b64encode(hashlib.md5(data, usedforsecurity=False).digest()).decode(),
        }
        boundary = "fsseam-" + uuid.uuid4().hex
        body = b"".join(
            (
                f"--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n".encode(),
                json.dumps(resource).encode(),
                f"\r\n--{boundary}\r\nContent-Type: {resource['contentType']}\r\n\r\n".encode(),
                data,
                f"\r\n--{boundary}--\r\n".encode(),
            )
        )
        stored: dict[str, Any] = await self.fs._call(
            "POST",
            f"{self.fs._location}/upload/storage/v1/b/{quote(bucket)}/o",
            uploadType="multipart",
            headers={"Content-Type": f'multipart/related; boundary="{boundary}"'},
            data=body,
            json_out=True,
            **params,
        )
        return stored

    async def _after_conflict(
        self, path: str, guard: FsWriteIntent | None, token: str
    ) -> StoredWrite:
        """412: our own retried write landed (token matches), or someone else's did."""
        url = self.url(path)
        with self._errors(path):
            current = await self._object(path)
        ours = _if_ours(current, token, guard)
        if ours is not None:
            return ours
        if isinstance(guard, CreateIfAbsent):
            raise already_exists(url)
        raise stale(url, deleted=current is None)

    # -- listing -------------------------------------------------------------

    async def list_dir(self, path: str) -> list[RawEntry]:
        bucket, key = _split(path)
        prefix = key + "/" if key else ""
        entries: list[RawEntry] = []
        directories: set[str] = set()
        seen_any = False
        page_token: str | None = None
        with self._errors(path):
            while True:
                page = await self._run(
                    self.fs._call(
                        "GET",
                        "b/{}/o",
                        bucket,
                        json_out=True,
                        prefix=prefix,
                        delimiter="/",
                        maxResults=self.page_size,
                        pageToken=page_token,
                        fields="items(name,generation,size),prefixes,nextPageToken",
                    )
                )
                for item in page.get("items") or ():
                    seen_any = True
                    name = str(item["name"])[len(prefix) :]
                    if name:  # "" is a "folder/" placeholder object, not a child
                        entries.append(
                            RawEntry(
                                name,
                                "file",
                                FsVersion(str(item["generation"])),
                                int(item.get("size", 0)),
                            )
                        )
                for sub in page.get("prefixes") or ():
                    seen_any = True
                    name = str(sub)[len(prefix) :].rstrip("/")
                    # A prefix can come back on several pages (fake-gcs-server does it).
                    if name and name not in directories:
                        directories.add(name)
                        entries.append(RawEntry(name, "directory", None, None))
                page_token = page.get("nextPageToken")
                if not page_token:
                    break
            if not seen_any and key:
                if await self._object(path) is not None:
                    raise FsError(
                        f'"{self.url(path)}" is a file, not a directory',
                        FsErrorCode.FS_NOT_DIRECTORY,
                    )
                raise not_found(self.url(path))
        return entries


def _if_ours(
    current: dict[str, Any] | None, token: str, guard: FsWriteIntent | None
) -> StoredWrite | None:
    """The stored write, if the object carries this write's token (it landed)."""
    if current is None or (current.get("metadata") or {}).get(TOKEN_KEY) != token:
        return None
    return StoredWrite(
        FsVersion(str(current["generation"])), created=isinstance(guard, CreateIfAbsent)
    )
