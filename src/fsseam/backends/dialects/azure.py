"""Azure Blob Storage (adlfs): version = ETag, guards = ``If-Match`` / ``If-None-Match: *``.

Everything goes through the async blob client adlfs already holds
(``fs.service_client``), never through adlfs' file-level helpers: those drop
condition arguments (``cat_file``), overwrite their own ``metadata=``
(``pipe_file``) or serve sizes from a listing cache that can truncate reads.
The client belongs to adlfs' event loop (``fs.loop``), so every coroutine is
submitted there with :func:`~fsseam.backends.dialects.base.on_loop`.

- Read: one ranged GET (the first :data:`_FIRST_RANGE` bytes) carries the
  content, the ETag and the total size, so an ordinary file costs one
  request; larger blobs continue with ranged GETs pinned to that ETag
  (``If-Match``), in bounded memory.
- Write: one ``Put Blob`` (up to the SDK's ``max_single_put_size``, 64 MiB)
  with ``If-None-Match: *`` (create) or ``If-Match: <etag>`` (replace). Each
  guarded write stores a unique token in the blob's metadata; when its answer
  is lost and the SDK's retry meets the precondition it already satisfied,
  the token on the current blob tells "mine, landed" from "someone else's".
- Directories are prefixes (plus ADLS Gen2 / adlfs folder-marker blobs).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Coroutine, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, NoReturn, TypeVar

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
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError('Azure Blob Storage needs: pip install "fsseam[azure]"') from exc

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
    FsNotRegularFile,
    FsVersion,
    FsWriteIntent,
    ReplaceIfVersion,
)

__all__ = ["TOKEN_KEY", "AzureDialect"]

T = TypeVar("T")

TOKEN_KEY = "fsseam_write_token"
"""Metadata name of a guarded write's unique token (a C# identifier, as Azure requires)."""

_FIRST_RANGE = 8 * 1024 * 1024
"""Bytes asked for by a read's first GET: ordinary files (up to 8 MiB) arrive whole in it."""
_NEXT_RANGE = 4 * 1024 * 1024
"""Bytes per later ranged GET of a larger blob (the SDK's own chunk size)."""
_EMPTY_RETRIES = 8
_DIRECTORY_VERSION = FsVersion("directory")


def _etag(raw: str) -> FsVersion:
    """Versions are ETags without quotes (headers quote them, listings do not)."""
    return FsVersion(raw.strip().strip('"'))


def _quoted(version: FsVersion) -> str:
    return f'"{version}"'


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


def _is_ambiguous(exc: Exception) -> bool:
    """The write may or may not have landed (timeouts, dropped connections, 5xx, 408)."""
    if isinstance(exc, HttpResponseError):
        status = exc.status_code or 0
        return status >= 500 or status == 408
    return isinstance(exc, AzureError | OSError | TimeoutError)


def _raise(url: str, exc: Exception) -> NoReturn:
    """The one translation from azure-core / transport failures to ``FsError``."""
    if isinstance(exc, ResourceNotFoundError) or (
        isinstance(exc, HttpResponseError) and exc.status_code == 404
    ):
        code = _code(exc)
        if code == "ContainerNotFound":
            container = url.split("://", 1)[-1].split("/", 1)[0]
            why = f'the container "{container}" does not exist; create it or fix the URL'
            raise FsError(f'"{url}": {why}', FsErrorCode.FS_NOT_FOUND) from exc
        raise not_found(url) from exc
    if isinstance(exc, ClientAuthenticationError) or (
        isinstance(exc, HttpResponseError) and exc.status_code in (401, 403)
    ):
        raise FsError(
            f'"{url}": Azure refused access ({_code(exc) or exc.status_code}); check the '
            "credentials (connection_string, account_key, sas_token) and the role assignments",
            FsErrorCode.FS_PERMISSION_DENIED,
        ) from exc
    if _is_precondition_failure(exc):
        raise FsError(
            f'"{url}" changed while it was in use; read it again', FsErrorCode.FS_STALE_VERSION
        ) from exc
    if isinstance(exc, HttpResponseError):
        detail = f"HTTP {exc.status_code} {_code(exc)}".rstrip()
    else:
        detail = f"{type(exc).__name__}: {exc}"
    raise FsError(
        f'"{url}": Azure Blob Storage request failed ({detail}); retry later',
        FsErrorCode.FS_IO_ERROR,
    ) from exc


@contextmanager
def _azure_errors(url: str) -> Iterator[None]:
    """Map every foreign exception raised inside to an ``FsError`` naming ``url``."""
    try:
        yield
    except FsError:
        raise
    except Exception as exc:  # the SDK also raises ValueError/TypeError on odd answers
        _raise(url, exc)


@dataclass(frozen=True, slots=True)
class _FirstRange:
    """What a read's first GET returned."""

    data: bytes
    etag: FsVersion
    size: int
    """Total size of the blob (not of the range)."""
    folder: bool


class _BlobReader(RawReader):
    """The first range in memory, the rest fetched on demand with ``If-Match``."""

    def __init__(self, dialect: AzureDialect, path: str, first: _FirstRange) -> None:
        self._dialect = dialect
        self._path = path
        self._first = first.data
        self.info = FsInfo(first.etag, "file", first.size)

    async def _ranges(self) -> AsyncIterator[bytes]:
        first, self._first = self._first, b""  # release it as soon as it is consumed
        yield first
        size = self.info.size or 0
        offset = len(first)
        while offset < size:
            length = min(_NEXT_RANGE, size - offset)
            data = await self._dialect._range(self._path, offset, length, self.info.version)
            if len(data) != length:
                raise FsError(
                    f'"{self._dialect.url(self._path)}": the store returned {len(data)} of '
                    f"{length} bytes at offset {offset}; read it again",
                    FsErrorCode.FS_IO_ERROR,
                )
            yield data
            offset += length

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        async for data in self._ranges():
            if len(data) <= CHUNK_SIZE:
                if data:
                    yield data
                continue
            view = memoryview(data)
            for start in range(0, len(data), CHUNK_SIZE):
                yield bytes(view[start : start + CHUNK_SIZE])

    async def read_all(self, limit: int | None) -> bytes:
        parts: list[bytes] = []
        total = 0
        async for data in self._ranges():
            total += len(data)
            check_size(self._dialect.url(self._path), total, limit)
            parts.append(data)
        return parts[0] if len(parts) == 1 else b"".join(parts)


class AzureDialect(Dialect):
    """adlfs ``AzureBlobFileSystem`` (``az://``, ``abfs://``, ``abfss://``) via its blob client."""

    name: ClassVar[str] = "azure"
    atomic_conditional_write: ClassVar[bool] = True

    @classmethod
    def default_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        """Never trust adlfs' caches: its listing cache was seen serving stale sizes
        (truncated reads), and a shared instance would leak that between mounts."""
        merged = dict(options)
        merged.setdefault("use_listings_cache", False)
        merged.setdefault("skip_instance_cache", True)
        return merged

    def url(self, path: str) -> str:
        return f"az://{path.lstrip('/')}"

    # -- plumbing ------------------------------------------------------------

    @staticmethod
    def _split(path: str) -> tuple[str, str]:
        container, _, blob = path.strip("/").partition("/")
        return container, blob.rstrip("/")

    def _blob(self, container: str, blob: str) -> Any:
        return self.fs.service_client.get_blob_client(container=container, blob=blob)

    def _container(self, container: str) -> Any:
        return self.fs.service_client.get_container_client(container)

    def _request_kwargs(self) -> dict[str, Any]:
        # adlfs' own timeout settings (timeout=, connection_timeout=, read_timeout=).
        return dict(getattr(self.fs, "_timeout_kwargs", None) or {})

    async def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on adlfs' loop, from whatever loop or thread we are on."""
        return await on_loop(self.fs.loop, coro)

    # -- stat ----------------------------------------------------------------

    async def _properties(self, container: str, blob: str) -> Any | None:
        async with self._blob(container, blob) as client:
            try:
                return await client.get_blob_properties(**self._request_kwargs())
            except ResourceNotFoundError:
                return None

    async def _has_children(self, container: str, blob: str) -> bool:
        prefix = f"{blob}/" if blob else ""
        async with self._container(container) as client:
            try:
                async for _ in client.list_blobs(
                    name_starts_with=prefix, results_per_page=1, **self._request_kwargs()
                ):
                    return True
            except ResourceNotFoundError:
                return False
        return False

    async def _container_exists(self, container: str) -> bool:
        async with self._container(container) as client:
            try:
                await client.get_container_properties(**self._request_kwargs())
            except ResourceNotFoundError:
                return False
        return True

    async def _stat(self, container: str, blob: str) -> FsInfo | None:
        if not blob:
            if await self._container_exists(container):
                return FsInfo(_DIRECTORY_VERSION, "directory", None)
            return None
        props = await self._properties(container, blob)
        if props is not None and not _is_folder(props.metadata):
            return FsInfo(_etag(props.etag), "file", int(props.size))
        if props is not None or await self._has_children(container, blob):
            return FsInfo(_DIRECTORY_VERSION, "directory", None)
        return None

    async def stat(self, path: str) -> FsInfo | None:
        with _azure_errors(self.url(path)):
            return await self._call(self._stat(*self._split(path)))

    # -- reads ---------------------------------------------------------------

    def _not_regular(self, path: str) -> FsNotRegularFile:
        return not_a_file(self.url(path))

    async def _first_range(self, container: str, blob: str) -> _FirstRange | None:
        """One GET for content, ETag and total size; ``None`` when the blob is missing."""
        async with self._blob(container, blob) as client:
            for _ in range(_EMPTY_RETRIES):
                try:
                    download = await client.download_blob(
                        offset=0, length=_FIRST_RANGE, **self._request_kwargs()
                    )
                except ResourceNotFoundError as exc:
                    if _code(exc) == "ContainerNotFound":
                        raise
                    return None
                except HttpResponseError as exc:
                    if exc.status_code != 416:
                        raise
                    # A range of an empty blob is unsatisfiable (416, no ETag); its
                    # properties give the ETag, valid only if it is still empty.
                    try:
                        props = await client.get_blob_properties(**self._request_kwargs())
                    except ResourceNotFoundError:
                        return None
                    if int(props.size) == 0:
                        return _FirstRange(b"", _etag(props.etag), 0, _is_folder(props.metadata))
                    continue  # written in between: read again
                props = download.properties
                data: bytes = await download.readall()
                # ``properties.size`` is the range's; the total is after "/" in Content-Range.
                total = int(str(props.content_range).rsplit("/", 1)[-1])
                return _FirstRange(data, _etag(props.etag), total, _is_folder(props.metadata))
        raise FsError(
            f'"{self.url(container + "/" + blob)}" kept changing while being read; try again',
            FsErrorCode.FS_IO_ERROR,
        )

    async def _range(self, path: str, offset: int, length: int, version: FsVersion) -> bytes:
        """Bytes ``[offset, offset+length)`` of exactly ``version`` (412 if it changed)."""
        container, blob = self._split(path)

        async def fetch() -> bytes:
            async with self._blob(container, blob) as client:
                download = await client.download_blob(
                    offset=offset,
                    length=length,
                    etag=_quoted(version),
                    match_condition=MatchConditions.IfNotModified,
                    **self._request_kwargs(),
                )
                data: bytes = await download.readall()
                return data

        with _azure_errors(self.url(path)):
            try:
                return await self._call(fetch())
            except (ResourceModifiedError, ResourceNotFoundError) as exc:
                # Same code as S3 and GCS for the same event: the model must see
                # one answer whatever the store.
                raise FsError(
                    f'"{self.url(path)}" changed while it was being read; read it again',
                    FsErrorCode.FS_IO_ERROR,
                ) from exc

    async def _open(self, path: str) -> _BlobReader:
        container, blob = self._split(path)
        if not blob:
            raise self._not_regular(path)
        with _azure_errors(self.url(path)):
            first = await self._call(self._first_range(container, blob))
            if first is None:
                if await self._call(self._has_children(container, blob)):
                    raise self._not_regular(path)
                raise not_found(self.url(path))
        if first.folder:
            raise self._not_regular(path)
        return _BlobReader(self, path, first)

    def open_read(self, path: str) -> AbstractAsyncContextManager[RawReader]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[RawReader]:
            yield await self._open(path)

        return opened()

    async def read_bytes(self, path: str, limit: int | None = None) -> tuple[bytes, FsInfo]:
        reader = await self._open(path)
        check_size(self.url(path), reader.info.size, limit)
        return await reader.read_all(limit), reader.info

    # -- writes --------------------------------------------------------------

    async def _upload(
        self, container: str, blob: str, data: bytes, guard: FsWriteIntent | None, token: str
    ) -> FsVersion:
        conditions: dict[str, Any] = {}
        if isinstance(guard, CreateIfAbsent):
            # overwrite=False makes the SDK send If-None-Match: * (etag="*" with
            # IfMissing is refused by the SDK itself).
            overwrite = False
        else:
            # With overwrite=False the SDK would report a failed If-Match as
            # "already exists"; the condition alone must decide.
            overwrite = True
            if isinstance(guard, ReplaceIfVersion):
                conditions = {
                    "etag": _quoted(guard.version),
                    "match_condition": MatchConditions.IfNotModified,
                }
        async with self._blob(container, blob) as client:
            result = await client.upload_blob(
                data,
                length=len(data),
                overwrite=overwrite,
                # is_directory=false: what adlfs writes, so its listings agree.
                metadata={"is_directory": "false", TOKEN_KEY: token},
                max_concurrency=getattr(self.fs, "max_concurrency", None) or 1,
                **conditions,
                **self._request_kwargs(),
            )
        return _etag(str(result["etag"]))

    async def _landed(self, container: str, blob: str, token: str) -> FsVersion | None:
        """The current ETag if the current blob is this write's (its token), else ``None``."""
        props = await self._properties(container, blob)
        if props is None:
            return None
        metadata = {key.lower(): value for key, value in (props.metadata or {}).items()}
        if metadata.get(TOKEN_KEY) != token:
            return None
        return _etag(props.etag)

    async def put(self, path: str, data: bytes, guard: FsWriteIntent | None) -> StoredWrite:
        url = self.url(path)
        container, blob = self._split(path)
        if not blob:
            raise self._not_regular(path)
        if isinstance(guard, ReplaceIfVersion) and (
            not guard.version or any(ch in guard.version for ch in '*"')
        ):
            # Never let a version turn into the If-Match wildcard.
            raise stale(url)
        created = isinstance(guard, CreateIfAbsent)
        token = uuid.uuid4().hex
        with _azure_errors(url):
            try:
                version = await self._call(self._upload(container, blob, data, guard, token))
            except (AzureError, OSError, TimeoutError) as exc:
                guarded = guard is not None
                refused = guarded and _is_precondition_failure(exc)
                if isinstance(guard, ReplaceIfVersion) and isinstance(exc, ResourceNotFoundError):
                    # If-Match on a deleted blob (Azurite answers 412, the service may 404).
                    refused = _code(exc) != "ContainerNotFound"
                if not (refused or (guarded and _is_ambiguous(exc))):
                    raise
                # A lost answer is not a conflict: the SDK retried a write that had
                # already landed, or gave up on one whose answer never came back.
                # Only this write's token on the current blob proves it landed;
                # equal content would not (two writers of the same bytes).
                try:
                    mine = await self._call(self._landed(container, blob, token))
                except (AzureError, OSError, TimeoutError):
                    if refused:
                        raise
                    raise exc from None  # the store is unreachable: report the first failure
                if mine is not None:
                    return StoredWrite(mine, created)
                if not refused:
                    raise
                if isinstance(guard, CreateIfAbsent):
                    raise already_exists(url) from exc
                raise stale(url) from exc
        return StoredWrite(version, created)

    # -- listing -------------------------------------------------------------

    async def _walk(self, container: str, blob: str) -> list[RawEntry] | None:
        prefix = f"{blob}/" if blob else ""
        entries: dict[str, RawEntry] = {}
        seen = False
        async with self._container(container) as client:
            async for item in client.walk_blobs(
                name_starts_with=prefix,
                include=["metadata"],
                delimiter="/",
                **self._request_kwargs(),
            ):
                seen = True
                name = str(item.name)[len(prefix) :]
                if not name or name == "/":
                    continue  # the directory's own marker blob ("dir/")
                if name.endswith("/"):
                    child = name.rstrip("/")
                    entries[child] = RawEntry(child, "directory", None, None)
                    continue
                if _is_folder(getattr(item, "metadata", None)):
                    entries.setdefault(name, RawEntry(name, "directory", None, None))
                    continue
                if name in entries and entries[name].type == "directory":
                    continue  # "a" and "a/..." both exist: the directory wins
                entries[name] = RawEntry(name, "file", _etag(str(item.etag)), int(item.size))
        if not seen:
            return None
        return list(entries.values())

    async def _list(self, path: str) -> list[RawEntry]:
        container, blob = self._split(path)
        listed = await self._walk(container, blob)
        if listed is not None:
            return listed
        # Nothing under the prefix: an empty container or folder marker, a file, or nothing.
        if not blob:
            if await self._container_exists(container):
                return []
            raise FsError(
                f'"{self.url(path)}": the container "{container}" does not exist',
                FsErrorCode.FS_NOT_FOUND,
            )
        props = await self._properties(container, blob)
        if props is None:
            raise not_found(self.url(path))
        if _is_folder(props.metadata):
            return []
        raise FsError(
            f'"{self.url(path)}" is a file, not a directory', FsErrorCode.FS_NOT_DIRECTORY
        )

    async def list_dir(self, path: str) -> list[RawEntry]:
        with _azure_errors(self.url(path)):
            return await self._call(self._list(path))
