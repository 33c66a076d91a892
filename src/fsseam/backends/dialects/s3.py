"""S3 and S3-compatible servers (s3fs): ETag versions, one-request reads and writes.

Version = the ETag exactly as S3 returns it (quoted, opaque). On versioned
buckets the ``VersionId`` is reported and pins resumed reads, but never
guards: ``PutObject`` cannot condition on it.

- **read**: one ``GetObject`` (its ETag is the version of exactly the body),
  streamed; a body that breaks resumes with a ranged GET pinned by
  ``If-Match`` (and ``VersionId``).
- **write**: one ``PutObject`` with ``If-None-Match: *`` or ``If-Match`` and
  the token as ``x-amz-meta-fsseam-write-token``; never multipart (s3fs's
  multipart path drops ``IfMatch``). ``409 ConditionalRequestConflict`` is
  retried, as S3 asks; a 5xx is an unknown outcome, settled by the token.

S3-compatible servers depart from AWS (measured on Ceph RGW 16.2); each quirk
is detected once per endpoint (``fsseam doctor``'s probe, or the first
refusal of an ETag that HEAD shows current, with no token of ours),
remembered, and worked around without weakening the guard:
:data:`IF_MATCH_UNQUOTED` (the quoted ETag refused, the bare one accepted:
sent bare), :data:`IF_MATCH_MISSING_412` (412 instead of 404: stale either
way), and ``base.LOSERS_GET_5XX``. A first mount of an endpoint that is
neither AWS nor loopback warns once (:class:`S3EndpointWarning`): some servers
accept ``If-Match`` and ignore it; ``fsseam doctor URL`` proves a server.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import threading
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import suppress
from typing import Any, ClassVar
from urllib.parse import urlsplit

try:
    import s3fs  # noqa: F401  (the store this dialect serves; fail early with a hint)
    from botocore.exceptions import (
        EndpointConnectionError,
        NoCredentialsError,
        PartialCredentialsError,
    )
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(f'S3 needs: pip install "fsseam[s3]" ({exc})') from exc

from fsseam.backends.dialects import base, messages
from fsseam.backends.dialects.base import TOKEN_KEY, ObjectState, Quirk, RawEntry, StoredWrite
from fsseam.backends.dialects.objects import Body, ObjectStoreDialect, Opened, PinnedReader
from fsseam.backends.dialects.outcomes import Failure, GuardRefused, Kind, OutcomeUnknown, Wording
from fsseam.seam import CreateIfAbsent, FsError, FsInfo, FsVersion, FsWriteIntent, ReplaceIfVersion

__all__ = [
    "IF_MATCH_MISSING_412",
    "IF_MATCH_UNQUOTED",
    "TOKEN_KEY",
    "S3Dialect",
    "S3EndpointWarning",
    "S3Reader",
    "S3StoredWrite",
]

S3StoredWrite = StoredWrite
"""What a PUT stored (kept name: ``StoredWrite`` carries the ``VersionId``)."""

MAX_PUT_BYTES = 5 * 1024**3
"""S3's single-PUT limit; guarded writes are never multipart."""

IF_MATCH_UNQUOTED = Quirk(
    "if-match-needs-unquoted-etag",
    'the server refuses If-Match: "<etag>" (quoted, as RFC 9110 and AWS write it) although '
    "the ETag is current, and accepts the bare ETag; fsseam sends it unquoted",
)
IF_MATCH_MISSING_412 = Quirk(
    "if-match-on-missing-key-is-412",
    "If-Match on a missing key is answered 412 (AWS: 404); fsseam reports either as a "
    "stale replace (FS_STALE_VERSION)",
)
IF_MATCH_REFUSED = Quirk(
    "if-match-refused-at-current-etag",
    "the server refuses If-Match with the current ETag, quoted or not: every replace "
    "and edit fails as stale",
)

_CONFLICT_RETRIES = 4  # 409 ConditionalRequestConflict: S3 asks the client to retry

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
_KINDS: dict[str, Kind] = {
    "PreconditionFailed": "refused",
    "ConditionalRequestConflict": "conflict",  # S3 asks the client to retry
    **dict.fromkeys(_NOT_FOUND, "missing"),
    "NoSuchBucket": "no_bucket",
    **dict.fromkeys(_DENIED, "denied"),
}
_AWS_SUFFIXES = (".amazonaws.com", ".amazonaws.com.cn", ".api.aws")


class S3EndpointWarning(UserWarning):
    """The endpoint is not AWS: prove it enforces preconditions with ``fsseam doctor URL``."""


def _response(exc: BaseException) -> dict[str, Any] | None:
    """The botocore error response behind ``exc``.

    s3fs re-raises ClientErrors as built-in OSErrors (a failed If-Match is
    ``OSError(EINVAL)``, a failed If-None-Match ``FileExistsError``) with the
    original on ``__cause__``: the errno says nothing reliable, the cause does.
    """
    seen: BaseException | None = exc
    for _ in range(4):
        if seen is None:
            return None
        response = getattr(seen, "response", None)
        if isinstance(response, dict):
            return response
        seen = seen.__cause__
    return None


def _retried(exc: BaseException) -> bool:
    """Whether botocore retried the request behind ``exc`` (``RetryAttempts`` > 0)."""
    metadata = (_response(exc) or {}).get("ResponseMetadata", {})
    return int(metadata.get("RetryAttempts") or 0) > 0


def _failure(exc: Exception) -> Failure:
    """How botocore / s3fs said that a request failed."""
    response = _response(exc)
    if response is None:
        kind: Kind = "failed"
        if isinstance(exc, FileNotFoundError):
            kind = "missing"
        elif isinstance(exc, NoCredentialsError | PartialCredentialsError | PermissionError):
            kind = "denied"
        elif isinstance(exc, EndpointConnectionError | ConnectionError | TimeoutError):
            kind = "unreachable"
        return Failure(kind, messages.describe(exc))
    error = response.get("Error", {})
    code, message = str(error.get("Code", "")), str(error.get("Message", ""))
    status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
    found = _KINDS.get(code)
    if found is None and status == 412:
        found = "refused"
    elif found is None and status == 409 and code in ("", "409"):
        found = "conflict"  # other 409s (BucketNotEmpty...) are no preconditions
    return Failure(found or "failed", f"{code} ({status}): {message}", status or None)


# -- endpoint warning ---------------------------------------------------------

_WARNED: set[str] = set()
_WARNED_LOCK = threading.Lock()


def _endpoint(fs: Any) -> str | None:
    candidates = (
        getattr(fs, "endpoint_url", None),
        (getattr(fs, "client_kwargs", None) or {}).get("endpoint_url"),
        os.environ.get("AWS_ENDPOINT_URL_S3"),
        os.environ.get("AWS_ENDPOINT_URL"),
    )
    return next((str(found) for found in candidates if found), None)


def _needs_proof(endpoint: str) -> bool:
    """True for endpoints that are neither AWS nor loopback."""
    host = (urlsplit(endpoint if "://" in endpoint else "//" + endpoint).hostname or "").lower()
    if not host or host in {"localhost", "amazonaws.com"} or host.endswith(_AWS_SUFFIXES):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


def _warn_endpoint(endpoint: str | None) -> None:
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
        stacklevel=3,
    )


# -- the dialect ---------------------------------------------------------------


class S3Reader(PinnedReader):
    """One GetObject being streamed; ``info.version`` is that response's ETag."""

    @property
    def version_id(self) -> str | None:
        """The S3 VersionId of the bytes read (versioned buckets), for reporting."""
        version_id: str | None = self.pin[1]
        return version_id


def _remembered(response: dict[str, Any]) -> dict[str, Any]:
    """The attributes of a GET / HEAD answer that a replace carries over."""
    attrs: dict[str, Any] = {name: response[name] for name in _KEPT if response.get(name)}
    metadata = {k: v for k, v in (response.get("Metadata") or {}).items() if k != TOKEN_KEY}
    if metadata:
        attrs["Metadata"] = metadata
    return attrs


def _info(response: dict[str, Any]) -> FsInfo:
    return FsInfo(FsVersion(str(response["ETag"])), "file", int(response.get("ContentLength", 0)))


class S3Dialect(ObjectStoreDialect):
    """s3fs ``S3FileSystem``: ETags, single GETs and single conditional PUTs."""

    name: ClassVar[str] = "s3"
    scheme: ClassVar[str] = "s3"
    max_put_bytes: ClassVar[int | None] = MAX_PUT_BYTES
    single_put: ClassVar[str] = "S3 PUT"

    def __init__(self, fs: Any, root: str | None = None) -> None:
        super().__init__(fs, root)
        self._params_checked = False
        self._endpoint = _endpoint(fs)
        _warn_endpoint(self._endpoint)
        self._wording = Wording(
            "S3",
            "the credentials (key/secret, profile or role) and the bucket policy",
            self._endpoint or "AWS",
        )

    def url(self, path: str) -> str:
        return str(self.fs.unstrip_protocol(path))

    def store_id(self) -> str:
        return f"s3:{self._endpoint or 'aws'}"

    def wording(self) -> Wording:
        return self._wording

    _failure = staticmethod(_failure)

    async def _request(self, action: str, path: str, method: str, **kwargs: Any) -> Any:
        with self._errors(path, action):
            return await self.fs._call_s3(method, **kwargs)

    async def _guarded(
        self, path: str, action: str, call: Callable[[], Awaitable[Any]], *, pinned: bool
    ) -> Any:
        """``call()``, one guarded request, sent again while S3 answers 409 (as it asks)."""
        attempt = 0
        while True:
            try:
                with self._errors(path, action, guarded=True, pinned=pinned):
                    return await call()
            except GuardRefused as refused:
                if not refused.retryable or attempt == _CONFLICT_RETRIES:
                    raise
            await asyncio.sleep(0.05 * 2**attempt)
            attempt += 1

    # -- metadata --------------------------------------------------------------

    async def _head_response(self, path: str) -> dict[str, Any] | None:
        bucket, key = self.split(path)
        call = self._request("stat", path, "head_object", Bucket=bucket, Key=key)
        head: dict[str, Any] | None = await base.or_none(call)
        return head

    async def _head(self, path: str) -> FsInfo | None:
        head = await self._head_response(path)
        if head is None:
            return None
        self._attributes.remember(path, str(head["ETag"]), _remembered(head))
        return _info(head)

    async def _token_of(self, path: str) -> ObjectState | None:
        head = await self._head_response(path)
        if head is None:
            return None
        token = (head.get("Metadata") or {}).get(TOKEN_KEY)
        return ObjectState(FsVersion(str(head["ETag"])), token, head.get("VersionId"))

    async def _bucket_exists(self, bucket: str) -> bool:
        call = self._request("look up the bucket", bucket, "head_bucket", Bucket=bucket)
        return await base.or_none(call) is not None

    async def _has_children(self, path: str) -> bool:
        bucket, key = self.split(path)
        call = self._request(
            "list", path, "list_objects_v2", Bucket=bucket, Prefix=key + "/", MaxKeys=1
        )
        listing = await base.or_none(call) or {}
        return bool(listing.get("KeyCount") or listing.get("Contents"))

    async def _children(self, path: str) -> AsyncIterator[RawEntry]:
        bucket, key = self.split(path)
        prefix = key + "/" if key else ""
        request: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "Delimiter": "/"}
        while True:
            page = await self._request("list", path, "list_objects_v2", **request)
            for common in page.get("CommonPrefixes") or ():
                name = str(common["Prefix"])[len(prefix) :].rstrip("/")
                yield RawEntry(name or "/", "directory", None, None)  # "a//": not a name
            for item in page.get("Contents") or ():
                etag = item.get("ETag")
                version = FsVersion(str(etag)) if etag else None
                name = str(item["Key"])[len(prefix) :]
                yield RawEntry(name, "file", version, int(item.get("Size", 0)))
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return
            request["ContinuationToken"] = token

    # -- reads -------------------------------------------------------------------

    async def _get(self, path: str) -> Opened:
        bucket, key = self.split(path)
        response = await self._request("read", path, "get_object", Bucket=bucket, Key=key)
        info = _info(response)
        pin = (info.version, response.get("VersionId"))
        body: Body = response["Body"]
        return Opened(info, body, info.size or 0, pin, _remembered(response))

    def _reader(self, path: str, opened: Opened) -> PinnedReader:
        return S3Reader(self, path, opened)

    async def _get_range(self, path: str, pin: Any, start: int, end: int) -> Body:
        bucket, key = self.split(path)
        url = self.url(path)
        etag, version_id = pin
        extra: dict[str, Any] = {"VersionId": version_id} if version_id else {}
        try:
            with self._errors(path, "read", guarded=True, pinned=True):
                response = await self.fs._call_s3(
                    "get_object",
                    Bucket=bucket,
                    Key=key,
                    Range=f"bytes={start}-",
                    IfMatch=etag,
                    **extra,
                )
        except GuardRefused as gone:
            raise messages.changed_while_reading(url) from gone
        except OutcomeUnknown as failed:
            raise failed.error from failed
        if not str(response.get("ContentRange", "")).startswith(f"bytes {start}-"):
            response["Body"].close()
            # A server that ignored Range would resend the start: never splice that in.
            why = "could not be resumed: the store ignored a Range request; read it again"
            raise messages.io_error(url, why)
        resumed: Body = response["Body"]
        return resumed

    # -- writes ------------------------------------------------------------------

    def _if_match(self, version: FsVersion) -> str:
        if IF_MATCH_UNQUOTED in self.quirks:
            return version.strip('"')
        return str(version)

    async def _send(
        self, path: str, data: bytes, guard: FsWriteIntent | None, token: str
    ) -> ObjectState:
        bucket, key = self.split(path)
        await self._check_params(path)
        kept = self.kept_attributes(path, guard)
        if kept is None:
            guessed = base.content_type(key)
            kept = {"ContentType": guessed} if guessed else {}
        kwargs = {**kept, "Metadata": {**kept.get("Metadata", {}), TOKEN_KEY: token}}
        if isinstance(guard, CreateIfAbsent):
            kwargs["IfNoneMatch"] = "*"
        elif isinstance(guard, ReplaceIfVersion):
            kwargs["IfMatch"] = self._if_match(guard.version)
        response = await self._guarded(
            path,
            "write",
            lambda: self.fs._call_s3("put_object", Bucket=bucket, Key=key, Body=data, **kwargs),
            pinned=isinstance(guard, ReplaceIfVersion),  # If-Match on a missing key: 404
        )
        etag = FsVersion(str(response["ETag"]))
        return ObjectState(etag, token, response.get("VersionId"), kept)

    async def _send_delete(self, path: str, version: FsVersion | None) -> None:
        bucket, key = self.split(path)
        condition = {} if version is None else {"IfMatch": self._if_match(version)}
        with self._errors(path, "connect"):
            await self.fs.set_session()
            client = await self.fs.get_s3(bucket)
            # The client itself, not s3fs's _call_s3: s3fs retries dropped
            # connections on its own, where no RetryAttempts shows that an
            # earlier attempt may have deleted the object; and it would drop an
            # IfMatch its botocore does not know without a word.
            kwargs = self.fs._get_s3_method_kwargs(
                client.delete_object, Bucket=bucket, Key=key, **condition
            )
        if condition and "IfMatch" not in kwargs:
            raise messages.cannot_guard_delete(
                self.url(path),
                "this botocore does not know DeleteObject's IfMatch (pip install -U botocore)",
            )
        try:
            call = lambda: client.delete_object(**kwargs)  # noqa: E731
            await self._guarded(path, "delete", call, pinned=version is not None)
        except GuardRefused as refused:  # 412, or 404 NoSuchKey for If-Match on a missing key
            refused.retried = _retried(refused)
            raise

    async def _refused_while_holding(self, path: str, guard: FsWriteIntent | None) -> bool:
        # Ceph RGW compares If-Match to the bare ETag: "x" (quoted) is never current there.
        if (
            isinstance(guard, ReplaceIfVersion)
            and guard.version.startswith('"')
            and IF_MATCH_UNQUOTED not in self.quirks
        ):
            self.note_quirk(IF_MATCH_UNQUOTED)
            return True
        return False

    async def _check_params(self, path: str) -> None:
        """Refuse to write if botocore does not know the guard parameters.

        s3fs drops every keyword its botocore's model lacks, silently: with an
        old botocore, ``IfMatch`` would vanish and the write would overwrite.
        """
        if self._params_checked:
            return
        with self._errors(path, "connect"):
            await self.fs.set_session()
            model = self.fs.s3.meta.service_model.operation_model("PutObject")
        missing = {"IfMatch", "IfNoneMatch", "Metadata"} - set(model.input_shape.members)
        if missing:
            raise messages.io_error(
                self.url(path),
                f"was not written: this botocore does not know PutObject {sorted(missing)}, so "
                "s3fs would drop the guard and overwrite unconditionally; upgrade: "
                "pip install -U botocore aiobotocore s3fs",
            )
        self._params_checked = True

    # -- quirks ------------------------------------------------------------------

    async def probe_quirks(self, url: str) -> tuple[Quirk, ...]:
        """Raw conditional PUTs on the scratch key ``url`` (and ``url`` + ``.missing``).

        Then the conditional-delete probe every guarded store runs.
        """
        await self._io(self._probe(str(self.fs._strip_protocol(url))))
        return await super().probe_quirks(url)

    async def _probe(self, path: str) -> tuple[Quirk, ...]:
        bucket, key = self.split(path)
        await self._check_params(path)

        async def put(name: str, **guard: str) -> int:
            try:
                with self._errors(path, "probe", guarded=True, pinned="IfMatch" in guard):
                    await self.fs._call_s3("put_object", Bucket=bucket, Key=name, Body=b"", **guard)
            except GuardRefused as refused:
                return refused.status or 412
            return 200

        try:
            await put(key)
            etag = str(
                (await self._request("probe", path, "head_object", Bucket=bucket, Key=key))["ETag"]
            )
            if await put(key, IfMatch=etag) != 200:
                bare = await put(key, IfMatch=etag.strip('"'))
                self.note_quirk(IF_MATCH_UNQUOTED if bare == 200 else IF_MATCH_REFUSED)
            if await put(key + ".missing", IfMatch=etag) == 412:
                self.note_quirk(IF_MATCH_MISSING_412)
        finally:
            for name in (key, key + ".missing"):
                with suppress(FsError):
                    await self._request("remove", path, "delete_object", Bucket=bucket, Key=name)
        return self.quirks
