"""Google Cloud Storage (gcsfs): version = generation, guards = ``ifGenerationMatch``.

Everything goes through the JSON API with gcsfs's authenticated, retrying
session (``fs._call``), on gcsfs's loop:

- **read**: one media GET, whose ``X-Goog-Generation`` is the version of
  exactly its body; up to 8 MiB whole, beyond that the rest in ranged GETs
  pinned with ``generation=``. The first GET has no ``Range``: a range from 0
  of an empty object is unsatisfiable (416). Objects stored with
  ``Content-Encoding: gzip`` are served decompressed, so past 8 MiB they are
  refused (ranges cannot continue them).
- **write**: one multipart upload with ``ifGenerationMatch=0`` (create) or
  ``=<generation>`` (replace), the write token in its metadata and the body's
  ``md5Hash``; fake-gcs-server enforces preconditions on multipart uploads
  only, the type used here. A replace keeps ``Content-Type``,
  ``Cache-Control``, ``Content-Disposition``, ``Content-Language`` of the read
  it is based on (custom ``x-goog-meta-*`` is not kept: the media GET's
  header names lose the keys' case).

``GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT`` defaults to ``false`` (set before gcsfs
is imported; an explicit setting is respected): the experimental class probes
every bucket over gRPC, 16 to 116 s of timeouts against an emulator.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any, ClassVar

os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

try:
    import aiohttp
    import gcsfs  # noqa: F401 - registers the class fsspec builds for gs://
    from gcsfs.core import quote
    from gcsfs.retry import ChecksumError, HttpError, retry_request, validate_response
    from google.auth.exceptions import GoogleAuthError
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError('GCS needs: pip install "fsseam[gcs]"') from exc

from fsseam.backends.dialects import base, messages
from fsseam.backends.dialects.base import TOKEN_KEY, GuardRefused, ObjectState, RawEntry
from fsseam.backends.dialects.objects import Body, MemoryBody, ObjectStoreDialect, Opened
from fsseam.backends.dialects.outcomes import Failure, Wording
from fsseam.seam import (
    CreateIfAbsent,
    FsInfo,
    FsNotFound,
    FsVersion,
    FsWriteIntent,
    ReplaceIfVersion,
)

__all__ = ["RANGE_SIZE", "TOKEN_KEY", "WHOLE_READ_LIMIT", "GCSDialect"]

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
_OBJECT_FIELDS = "name,generation,size,metadata"
_RETRIES = 6  # gcsfs's own default for _call
_AMBIGUOUS = frozenset({408, 429})  # besides 5xx: the upload may have been applied


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


def _failure(exc: Exception) -> Failure:
    """How gcsfs / aiohttp / google-auth said that a request failed."""
    if isinstance(exc, FileNotFoundError):  # gcsfs: HTTP 404
        return Failure("missing", messages.describe(exc), 404)
    if isinstance(exc, FileExistsError):  # gcsfs: HTTP 412, whatever the precondition
        return Failure("refused", "HTTP 412: a generation precondition", 412)
    if isinstance(exc, GoogleAuthError):
        return Failure("denied", messages.describe(exc))
    if isinstance(exc, HttpError):
        code = _status_code(exc)
        if code in (401, 403):
            return Failure("denied", f"HTTP {code}", code)
        return Failure("failed", f"HTTP {code}: {exc.message}", code)
    if isinstance(exc, aiohttp.ClientError | ChecksumError | TimeoutError):
        return Failure("unreachable", messages.describe(exc))
    # gcsfs raises OSError("Forbidden: ...") for a 403 and ValueError("Bad
    # Request: ...") for a 400 whose message says "invalid".
    if str(exc).startswith("Forbidden"):
        return Failure("denied", "HTTP 403", 403)
    return Failure("failed", messages.describe(exc), 400 if isinstance(exc, ValueError) else None)


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


@retry_request(retries=_RETRIES)  # type: ignore[untyped-decorator]
async def _delete_attempts(fs: Any, url: str, params: dict[str, str], sent: list[int]) -> None:
    """One objects.delete under gcsfs's retry policy; ``sent`` counts the attempts.

    A 404 or 412 answered to the second attempt may follow a first one that
    deleted the object: the count is what tells a lost answer from a conflict.
    """
    sent.append(1)
    session = await fs._set_session()
    async with session.delete(
        url,
        params=fs._get_params(params),
        headers=fs._get_headers(None),
        timeout=fs.requests_timeout,
    ) as response:
        validate_response(response.status, await response.read(), url)


class GCSDialect(ObjectStoreDialect):
    """``gcsfs.GCSFileSystem``: generations as versions, ``ifGenerationMatch`` guards."""

    name: ClassVar[str] = "gcs"
    scheme: ClassVar[str] = "gs"
    range_size: ClassVar[int | None] = RANGE_SIZE
    page_size: int = 1000
    """Entries per listing request (the JSON API's maximum)."""

    def store_id(self) -> str:
        return f"gcs:{self._endpoint()}"

    def _endpoint(self) -> str:
        return str(getattr(self.fs, "_location", "the storage endpoint"))

    def wording(self) -> Wording:
        return Wording(
            "Google Cloud Storage",
            "the credentials (token, GOOGLE_APPLICATION_CREDENTIALS) and the bucket's IAM",
            self._endpoint(),
        )

    _failure = staticmethod(_failure)

    def is_version(self, version: FsVersion) -> bool:
        return version.isdigit() and version != "0"  # a generation

    # -- metadata ------------------------------------------------------------

    async def _json(self, path: str, *args: Any, **params: Any) -> dict[str, Any]:
        """One JSON API GET (``args`` fill the URL template) through the error boundary."""
        with self._errors(path):
            found: dict[str, Any] = await self.fs._call("GET", *args, json_out=True, **params)
            return found

    async def _object(self, path: str) -> dict[str, Any] | None:
        """The object's JSON resource, or ``None`` when absent."""
        bucket, key = self.split(path)
        return await base.or_none(self._json(path, "b/{}/o/{}", bucket, key, fields=_OBJECT_FIELDS))

    async def _head(self, path: str) -> FsInfo | None:
        obj = await self._object(path)
        if obj is None:
            return None
        return FsInfo(FsVersion(str(obj["generation"])), "file", int(obj.get("size", 0)))

    async def _token_of(self, path: str) -> ObjectState | None:
        obj = await self._object(path)
        if obj is None:
            return None
        token = (obj.get("metadata") or {}).get(TOKEN_KEY)
        return ObjectState(FsVersion(str(obj["generation"])), token)

    async def _list_page(self, path: str, **params: Any) -> dict[str, Any] | None:
        """One objects.list page, ``None`` when the bucket is missing."""
        return await base.or_none(self._json(path, "b/{}/o", self.split(path)[0], **params))

    async def _has_children(self, path: str) -> bool:
        key = self.split(path)[1]
        page = await self._list_page(
            path, prefix=key + "/", maxResults=1, fields="items(name),prefixes"
        )
        return page is not None and bool(page.get("items") or page.get("prefixes"))

    async def _bucket_exists(self, bucket: str) -> bool:
        # objects.list, not buckets.get: object-level roles often lack the latter.
        return await self._list_page(bucket, maxResults=1, fields="items(name)") is not None

    async def _children(self, path: str) -> AsyncIterator[RawEntry]:
        bucket, key = self.split(path)
        prefix = key + "/" if key else ""
        page_token: str | None = None
        while True:
            page = await self._json(
                path,
                "b/{}/o",
                bucket,
                prefix=prefix,
                delimiter="/",
                maxResults=self.page_size,
                pageToken=page_token,
                fields="items(name,generation,size),prefixes,nextPageToken",
            )
            for item in page.get("items") or ():
                generation = FsVersion(str(item["generation"]))
                name = str(item["name"])[len(prefix) :]
                yield RawEntry(name, "file", generation, int(item.get("size", 0)))
            for sub in page.get("prefixes") or ():
                yield RawEntry(str(sub)[len(prefix) :].rstrip("/") or "/", "directory", None, None)
            page_token = page.get("nextPageToken")
            if not page_token:
                return

    # -- reads ---------------------------------------------------------------

    async def _get(self, path: str) -> Opened:
        url = self.url(path)
        with self._errors(path):
            headers, head, size = await _first_get(self.fs, self.fs.url(path))
            version = FsVersion(_generation(headers))
        encoding = headers.get("X-Goog-Stored-Content-Encoding", "identity")
        if size > len(head) and encoding != "identity":
            # Served decompressed: ranges of the stored bytes cannot continue it.
            raise messages.io_error(
                url,
                f"is stored with Content-Encoding: {encoding} and is over "
                f"{WHOLE_READ_LIMIT} bytes; fsseam reads such objects only whole",
            )
        attrs = {
            field: str(headers[name]) for name, field in _KEPT_HEADERS.items() if headers.get(name)
        }
        return Opened(FsInfo(version, "file", size), MemoryBody(head), len(head), None, attrs)

    async def _get_range(self, path: str, pin: Any, start: int, end: int) -> Body:
        url = self.url(path)
        try:
            with self._errors(path):
                headers, data = await self.fs._call(
                    "GET",
                    self.fs.url(path, generation=pin),
                    headers={"Range": f"bytes={start}-{end - 1}"},
                )
        except FsNotFound as gone:  # the pinned generation was replaced or deleted
            raise messages.changed_while_reading(url) from gone
        want = end - start
        if headers.get("X-Goog-Generation", pin) != pin or len(data) != want:
            why = f"got {len(data)} bytes for a {want}-byte range of generation {pin}"
            raise messages.io_error(url, f"{why}; read it again")
        return MemoryBody(data)

    # -- writes --------------------------------------------------------------

    async def _send(
        self, path: str, data: bytes, guard: FsWriteIntent | None, token: str
    ) -> ObjectState:
        bucket, key = self.split(path)
        params: dict[str, str] = {}
        if isinstance(guard, CreateIfAbsent):
            params["ifGenerationMatch"] = "0"
        elif isinstance(guard, ReplaceIfVersion):
            params["ifGenerationMatch"] = guard.version
        attrs = self.kept_attributes(path, guard) or {}
        if "contentType" not in attrs:
            attrs = {"contentType": base.content_type(key) or "application/octet-stream"}
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
        # One multipart upload: the only upload type fake-gcs-server guards.
        with self._errors(path, guarded=True):
            stored: dict[str, Any] = await self.fs._call(
                "POST",
                f"{self.fs._location}/upload/storage/v1/b/{quote(bucket)}/o",
                uploadType="multipart",
                headers={"Content-Type": f'multipart/related; boundary="{boundary}"'},
                data=body,
                json_out=True,
                **params,
            )
        return ObjectState(FsVersion(str(stored["generation"])), token, kept=attrs)

    async def _send_delete(self, path: str, version: FsVersion | None) -> None:
        bucket, key = self.split(path)
        params: dict[str, str] = {}
        if version is not None:
            # ifGenerationMatch alone: GCS checks it against the LIVE generation,
            # atomically. Never generation=: on a versioned bucket that would
            # delete exactly the (now noncurrent) generation named, and succeed.
            params["ifGenerationMatch"] = version
        sent: list[int] = []
        url = self.fs._format_path("b/{}/o/{}", (bucket, key))
        try:
            with self._errors(path, guarded=True, pinned=version is not None):
                await _delete_attempts(self.fs, url, params, sent)
        except GuardRefused as refused:  # 412, or 404: nothing at that generation
            refused.retried = len(sent) > 1
            raise
