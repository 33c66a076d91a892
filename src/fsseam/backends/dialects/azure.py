"""Azure Blob Storage (adlfs): version = ETag (unquoted), guards = ``If-Match`` / ``If-None-Match``.

Everything goes through adlfs's async blob client (``fs.service_client``),
never its file helpers: they drop conditions (``cat_file``), overwrite their
own ``metadata=`` (``pipe_file``) or serve sizes from a stale listing cache.

- **read**: one ranged GET of the first 8 MiB carries content, ETag and total
  size; larger blobs continue with 4 MiB ranges pinned by ``If-Match``.
- **write**: one ``Put Blob`` with ``If-None-Match: *`` or ``If-Match:
  "<etag>"`` and the token in its metadata. Directories are prefixes plus
  ADLS Gen2 / adlfs folder-marker blobs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, ClassVar

try:
    from azure.core import MatchConditions
    from azure.core.exceptions import (
        AzureError,
        ClientAuthenticationError,
        HttpResponseError,
        ResourceExistsError,
        ResourceModifiedError,
        ResourceNotFoundError,
    )
    from azure.storage.blob import ContentSettings
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError('Azure Blob Storage needs: pip install "fsseam[azure]"') from exc

from fsseam.backends.dialects import base, messages
from fsseam.backends.dialects.base import DIRECTORY, GuardRefused, ObjectState, RawEntry
from fsseam.backends.dialects.objects import Body, MemoryBody, ObjectStoreDialect, Opened
from fsseam.backends.dialects.outcomes import Failure, Kind, Wording
from fsseam.seam import CreateIfAbsent, FsInfo, FsVersion, FsWriteIntent, ReplaceIfVersion

__all__ = ["TOKEN_KEY", "AzureDialect"]

TOKEN_KEY = base.TOKEN_KEY.replace("-", "_")
"""Metadata name of a guarded write's unique token (a C# identifier, as Azure requires)."""

_FIRST_RANGE = 8 * 1024 * 1024
"""Bytes asked for by a read's first GET: ordinary files (up to 8 MiB) arrive whole in it."""
_NEXT_RANGE = 4 * 1024 * 1024
"""Bytes per later ranged GET of a larger blob (the SDK's own chunk size)."""
_EMPTY_RETRIES = 8
_KEPT = ("content_type", "content_language", "content_disposition", "cache_control")
"""Content settings a replace carries over from the read it is based on."""
_OURS = frozenset({TOKEN_KEY, "is_directory", "hdi_isfolder"})


def _etag(raw: str) -> FsVersion:
    """Versions are ETags without quotes (headers quote them, listings do not)."""
    return FsVersion(raw.strip().strip('"'))


def _is_folder(metadata: dict[str, str] | None) -> bool:
    """Folder-marker blobs: ADLS Gen2 (``hdi_isfolder``) and adlfs (``is_directory``)."""
    if not metadata:
        return False
    lowered = {key.lower(): value for key, value in metadata.items()}
    return lowered.get("hdi_isfolder") == "true" or lowered.get("is_directory") == "true"


def _code(exc: HttpResponseError) -> str:
    """The storage error code (``BlobNotFound``, ``ConditionNotMet``...) or ``""``."""
    # azure-storage sets ``error_code``; a bare HEAD 404 only has the header.
    code: Any = getattr(exc, "error_code", None)
    if code is None and exc.response is not None:
        code = getattr(exc.response, "headers", {}).get("x-ms-error-code")
    return str(getattr(code, "value", code) or "")


def _is_precondition_failure(exc: Exception) -> bool:
    """The store refused a guarded write because its condition did not hold."""
    if isinstance(exc, ResourceModifiedError):
        return True
    if isinstance(exc, ResourceExistsError):
        # If-None-Match: * on an existing blob; other 409s (leases, archive tier) are not guards.
        return _code(exc) in ("BlobAlreadyExists", "")
    if isinstance(exc, HttpResponseError):
        return exc.status_code == 412 and _code(exc) in ("ConditionNotMet", "")
    return False


def _failure(exc: Exception) -> Failure:
    """How azure-core / the transport said that a request failed."""
    if not isinstance(exc, HttpResponseError):
        # ServiceRequestError, ServiceResponseError...: no answer was read.
        unreachable = isinstance(exc, AzureError | OSError | TimeoutError)
        return Failure("unreachable" if unreachable else "failed", messages.describe(exc))
    status, code = exc.status_code, _code(exc)
    cause = f"HTTP {status} {code}".rstrip()
    kind: Kind = "failed"
    if isinstance(exc, ResourceNotFoundError) or status == 404:
        kind = "no_bucket" if code == "ContainerNotFound" else "missing"
    elif isinstance(exc, ClientAuthenticationError) or status in (401, 403):
        kind = "denied"
    elif _is_precondition_failure(exc):
        kind = "refused"
    return Failure(kind, cause, status)


def _attributes(props: Any) -> dict[str, Any]:
    """What a replace carries over: content settings and the owner's metadata."""
    settings = props.content_settings
    kept: dict[str, Any] = {name: getattr(settings, name) for name in _KEPT}
    metadata = {k: v for k, v in (props.metadata or {}).items() if k.lower() not in _OURS}
    return {"content_settings": {k: v for k, v in kept.items() if v}, "metadata": metadata}


class AzureDialect(ObjectStoreDialect):
    """adlfs ``AzureBlobFileSystem`` (``az://``, ``abfs://``, ``abfss://``) via its blob client."""

    name: ClassVar[str] = "azure"
    scheme: ClassVar[str] = "az"
    token_key: ClassVar[str] = TOKEN_KEY
    range_size: ClassVar[int | None] = _NEXT_RANGE

    def store_id(self) -> str:
        return f"azure:{getattr(self.fs.service_client, 'url', '')}"

    def _blob(self, path: str) -> Any:
        container, blob = self.split(path)
        return self.fs.service_client.get_blob_client(container=container, blob=blob)

    def _container(self, container: str) -> Any:
        return self.fs.service_client.get_container_client(container)

    def wording(self) -> Wording:
        return Wording(
            "Azure Blob Storage",
            "the credentials (connection_string, account_key, sas_token) and the roles",
            str(getattr(self.fs.service_client, "url", "the account")),
            bucket="container",
        )

    _failure = staticmethod(_failure)

    def is_version(self, version: FsVersion) -> bool:
        return super().is_version(version) and '"' not in version  # an unquoted ETag

    def _request_kwargs(self) -> dict[str, Any]:
        # adlfs' own timeout settings (timeout=, connection_timeout=, read_timeout=).
        return dict(getattr(self.fs, "_timeout_kwargs", None) or {})

    # -- metadata ------------------------------------------------------------

    async def _properties(self, path: str) -> Any | None:
        with self._errors(path):
            async with self._blob(path) as client:
                try:
                    return await client.get_blob_properties(**self._request_kwargs())
                except ResourceNotFoundError:
                    return None

    async def _head(self, path: str) -> FsInfo | None:
        props = await self._properties(path)
        if props is None:
            return None
        if _is_folder(props.metadata):
            return FsInfo(DIRECTORY, "directory", None)
        return FsInfo(_etag(props.etag), "file", int(props.size))

    async def _token_of(self, path: str) -> ObjectState | None:
        props = await self._properties(path)
        if props is None:
            return None
        metadata = {key.lower(): value for key, value in (props.metadata or {}).items()}
        return ObjectState(_etag(props.etag), metadata.get(TOKEN_KEY))

    async def _has_children(self, path: str) -> bool:
        container, blob = self.split(path)
        with self._errors(path):
            async with self._container(container) as client:
                try:
                    async for _ in client.list_blobs(
                        name_starts_with=f"{blob}/", results_per_page=1, **self._request_kwargs()
                    ):
                        return True
                except ResourceNotFoundError:
                    return False
        return False

    async def _bucket_exists(self, bucket: str) -> bool:
        with self._errors(bucket):
            async with self._container(bucket) as client:
                try:
                    await client.get_container_properties(**self._request_kwargs())
                except ResourceNotFoundError:
                    return False
        return True

    async def _children(self, path: str) -> AsyncIterator[RawEntry]:
        container, blob = self.split(path)
        prefix = f"{blob}/" if blob else ""
        with self._errors(path):
            async with self._container(container) as client:
                async for item in client.walk_blobs(
                    name_starts_with=prefix,
                    include=["metadata"],
                    delimiter="/",
                    **self._request_kwargs(),
                ):
                    name = str(item.name)[len(prefix) :]
                    if name.endswith("/"):
                        yield RawEntry(name.rstrip("/") or "/", "directory", None, None)
                    elif _is_folder(getattr(item, "metadata", None)):
                        yield RawEntry(name, "directory", None, None)
                    else:
                        yield RawEntry(name, "file", _etag(str(item.etag)), int(item.size))

    # -- reads ---------------------------------------------------------------

    async def _get(self, path: str) -> Opened:
        """One GET for content, ETag and total size."""
        url = self.url(path)
        with self._errors(path):
            async with self._blob(path) as client:
                for _ in range(_EMPTY_RETRIES):
                    try:
                        download = await client.download_blob(
                            offset=0, length=_FIRST_RANGE, **self._request_kwargs()
                        )
                    except HttpResponseError as exc:
                        if exc.status_code != 416:
                            raise
                        # A range of an empty blob is unsatisfiable (416, no ETag); its
                        # properties give the ETag, valid only if it is still empty.
                        props = await client.get_blob_properties(**self._request_kwargs())
                        if int(props.size) != 0:
                            continue  # written in between: read again
                        data, total = b"", 0
                    else:
                        props = download.properties
                        data = await download.readall()
                        # ``props.size`` is the range's; the total is after "/" in Content-Range.
                        total = int(str(props.content_range).rsplit("/", 1)[-1])
                    if _is_folder(props.metadata):
                        raise messages.not_a_file(url)
                    info = FsInfo(_etag(props.etag), "file", total)
                    return Opened(info, MemoryBody(data), len(data), None, _attributes(props))
        raise messages.io_error(url, "kept changing while being read; try again")

    async def _get_range(self, path: str, pin: Any, start: int, end: int) -> Body:
        url = self.url(path)
        with self._errors(path):
            async with self._blob(path) as client:
                try:
                    download = await client.download_blob(
                        offset=start,
                        length=end - start,
                        etag=f'"{pin}"',
                        match_condition=MatchConditions.IfNotModified,
                        **self._request_kwargs(),
                    )
                except (ResourceModifiedError, ResourceNotFoundError) as gone:
                    raise messages.changed_while_reading(url) from gone
                data: bytes = await download.readall()
        return MemoryBody(data)

    # -- writes --------------------------------------------------------------

    async def _send(
        self, path: str, data: bytes, guard: FsWriteIntent | None, token: str
    ) -> ObjectState:
        conditions: dict[str, Any] = {}
        # overwrite=False makes the SDK send If-None-Match: * (etag="*" with IfMissing
        # is refused by the SDK itself). With overwrite=False the SDK would report a
        # failed If-Match as "already exists": the condition alone must decide a replace.
        overwrite = not isinstance(guard, CreateIfAbsent)
        if isinstance(guard, ReplaceIfVersion):
            conditions = {
                "etag": f'"{guard.version}"',
                "match_condition": MatchConditions.IfNotModified,
            }
        kept = self.kept_attributes(path, guard) or {}
        settings = kept.get("content_settings") or {"content_type": base.content_type(path)}
        # is_directory=false: what adlfs writes, so its listings agree.
        metadata = {**kept.get("metadata", {}), "is_directory": "false", TOKEN_KEY: token}
        # If-Match on a deleted blob: Azurite answers 412, the service may answer 404.
        with self._errors(path, guarded=True, pinned=isinstance(guard, ReplaceIfVersion)):
            async with self._blob(path) as client:
                result = await client.upload_blob(
                    data,
                    length=len(data),
                    overwrite=overwrite,
                    metadata=metadata,
                    content_settings=ContentSettings(**settings),
                    max_concurrency=getattr(self.fs, "max_concurrency", None) or 1,
                    **conditions,
                    **self._request_kwargs(),
                )
        remembered = {"content_settings": settings, "metadata": kept.get("metadata", {})}
        return ObjectState(_etag(str(result["etag"])), token, kept=remembered)

    async def _send_delete(self, path: str, version: FsVersion | None) -> None:
        conditions: dict[str, Any] = {}
        if version is not None:
            conditions = {"etag": f'"{version}"', "match_condition": MatchConditions.IfNotModified}
        retries: list[int] = []

        def retried(**_: Any) -> None:
            # The SDK calls this before each retry: an earlier attempt may have landed.
            retries.append(1)

        try:
            with self._errors(path, guarded=True, pinned=version is not None):
                async with self._blob(path) as client:
                    await client.delete_blob(
                        retry_hook=retried, **conditions, **self._request_kwargs()
                    )
        except GuardRefused as refused:
            refused.retried = bool(retries)
            raise
