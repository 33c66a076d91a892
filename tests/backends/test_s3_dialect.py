"""What only the S3 dialect does, against a real moto server: the wire, errors, endpoints.

The contracts every backend shares (guards, lost answers, unknown outcomes,
reads broken or changed mid-stream, round trips, error wording) run in the
shipped suite (``tests/conformance/test_s3.py``). These pin the S3
specifics: the precondition headers and write token on each PUT, 409
ConditionalRequestConflict and 503 SlowDown retries, resumed reads pinned
with ``If-Match``, botocore error translation, kept attributes, VersionIds on
versioned buckets and the non-AWS endpoint warning. Every test gets a fresh
bucket on the session's emulator (see ``fsseam.testing.emulators.s3_fixtures``),
which records each request and injects faults at the HTTP layer.
"""

from __future__ import annotations

import asyncio
import errno
import tracemalloc
import warnings
from collections.abc import Coroutine
from typing import Any

import pytest
from botocore.exceptions import ClientError

from fsseam.backends import FsspecFileSystem, open_fs
from fsseam.backends.dialects.base import CHUNK_SIZE
from fsseam.backends.dialects.outcomes import Wording, boundary
from fsseam.backends.dialects.s3 import (
    S3Dialect,
    S3EndpointWarning,
    S3Reader,
    S3StoredWrite,
    _failure,
    _needs_proof,
)
from fsseam.seam import (
    CreateIfAbsent,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsVersion,
    ReplaceIfVersion,
)
from fsseam.testing.emulators.s3 import RecordedRequest, S3Bucket, S3Emulator
from fsseam.testing.harness import run

pytestmark = pytest.mark.s3


def ops(server: S3Emulator, bucket: S3Bucket) -> list[tuple[str, int]]:
    return [(item.method, item.status) for item in server.requests(bucket.name)]


def puts(server: S3Emulator, bucket: S3Bucket) -> list[RecordedRequest]:
    return [item for item in server.requests(bucket.name) if item.method == "PUT"]


async def expect(code: FsErrorCode, awaitable: Coroutine[Any, Any, Any]) -> FsError:
    with pytest.raises(FsError) as caught:
        await awaitable
    assert caught.value.code == code, caught.value
    return caught.value


def raw_get(fs: FsspecFileSystem, key: str) -> dict[str, Any]:
    bucket = fs.root.removeprefix("s3://")
    response: dict[str, Any] = fs.fs.call_s3("head_object", Bucket=bucket, Key=key)
    response["Data"] = fs.fs.cat_file(f"{bucket}/{key}")
    return response


# -- wiring ---------------------------------------------------------------------


def test_open_fs_mounts_the_s3_dialect(s3_fs: FsspecFileSystem) -> None:
    assert isinstance(s3_fs.dialect, S3Dialect)
    assert s3_fs.capabilities.atomic_conditional_write is True
    assert s3_fs.fs.dircache.use_listings_cache is False


def test_default_options_add_cache_safety_but_keep_explicit_choices() -> None:
    assert S3Dialect.default_options({"anon": True}) == {
        "anon": True,
        "use_listings_cache": False,
        "skip_instance_cache": True,
    }
    given = {"use_listings_cache": True, "skip_instance_cache": False}
    assert S3Dialect.default_options(given) == given


# -- the guard reaches the wire -------------------------------------------------------


def test_guards_reach_the_wire(
    s3_server: S3Emulator, s3_bucket: S3Bucket, s3_fs: FsspecFileSystem
) -> None:
    async def body() -> None:
        target = await s3_fs.resolve("notes/a.txt")
        created = await s3_fs.write_text(target, "one\n", CreateIfAbsent())
        replaced = await s3_fs.write_text(target, "two\n", ReplaceIfVersion(created.version))
        await s3_fs.edit_text(target, FsEditRequest("two", "three"), replaced.version)

        create, replace, edit = puts(s3_server, s3_bucket)
        assert create.headers["if_none_match"] == "*"
        assert "if_match" not in create.headers
        assert replace.headers["if_match"] == created.version
        assert edit.headers["if_match"] == replaced.version
        tokens = {item.headers["write_token"] for item in (create, replace, edit)}
        assert len(tokens) == 3  # a fresh token per write
        assert raw_get(s3_fs, "notes/a.txt")["Data"] == b"three\n"

    run(body())


def test_stale_replace_leaves_the_object_unchanged(
    s3_server: S3Emulator, s3_bucket: S3Bucket, s3_fs: FsspecFileSystem
) -> None:
    async def body() -> None:
        target = await s3_fs.resolve("a.txt")
        first = await s3_fs.write_text(target, "A\n", CreateIfAbsent())
        second = await s3_fs.write_text(target, "B\n", ReplaceIfVersion(first.version))
        s3_server.reset()
        # Straight to the dialect: the PUT itself must carry and enforce the guard.
        path = target.display_path.removeprefix("s3://")
        await expect(
            FsErrorCode.FS_STALE_VERSION,
            s3_fs.dialect.put(path, b"C\n", ReplaceIfVersion(first.version)),
        )
        (put,) = puts(s3_server, s3_bucket)
        assert put.headers["if_match"] == first.version
        assert put.status == 412
        stored = raw_get(s3_fs, "a.txt")
        assert stored["Data"] == b"B\n"
        assert stored["ETag"] == second.version

    run(body())


def test_replace_of_a_deleted_object_is_stale(s3_fs: FsspecFileSystem) -> None:
    async def body() -> None:
        target = await s3_fs.resolve("a.txt")
        created = await s3_fs.write_text(target, "x\n", CreateIfAbsent())
        s3_fs.fs.rm_file(target.display_path)
        path = target.display_path.removeprefix("s3://")
        await expect(
            FsErrorCode.FS_STALE_VERSION,
            s3_fs.dialect.put(path, b"y\n", ReplaceIfVersion(created.version)),
        )

    run(body())


# -- genuine conflicts ---------------------------------------------------------------------


def test_conditional_request_conflict_is_retried(
    s3_server: S3Emulator, s3_bucket: S3Bucket, s3_fs: FsspecFileSystem
) -> None:
    async def body() -> None:
        target = await s3_fs.resolve("a.txt")
        created = await s3_fs.write_text(target, "a\n", CreateIfAbsent())
        s3_server.reset()
        s3_server.fail("409 Conflict", "ConditionalRequestConflict", method="PUT")
        await s3_fs.write_text(target, "b\n", ReplaceIfVersion(created.version))
        # The replaced version was written through this mount: no GET, its bytes are cached.
        assert ops(s3_server, s3_bucket) == [("PUT", 409), ("PUT", 200)]
        assert raw_get(s3_fs, "a.txt")["Data"] == b"b\n"

    run(body())


# -- the store loop -----------------------------------------------------------------------------


def test_reads_from_a_coroutine_running_on_the_store_loop(s3_fs: FsspecFileSystem) -> None:
    # Foreign loops and threads run in the suite; s3fs's own loop is S3's concern.
    target = run(s3_fs.resolve("a.txt"))
    run(s3_fs.write_text(target, "shared\n", CreateIfAbsent()))
    loop = s3_fs.fs.loop
    future = asyncio.run_coroutine_threadsafe(s3_fs.read_text(target), loop)
    assert future.result(30) == "shared\n"


# -- large objects and broken connections --------------------------------------------------


def _big_text(size: int) -> str:
    line = "0123456789abcdef" * 8 + "\n"
    return line * (size // len(line))


def test_large_object_streams_in_bounded_memory(
    s3_server: S3Emulator, s3_bucket: S3Bucket, s3_fs: FsspecFileSystem
) -> None:
    size = 32 * 1024 * 1024
    text = _big_text(size)
    target = run(s3_fs.resolve("big.txt"))
    run(s3_fs.write_text(target, text, CreateIfAbsent()))
    s3_server.reset()
    del text

    async def body() -> tuple[int, int, int, int]:
        chunks = total = largest = 0
        async with s3_fs.stream_text(target) as opened:
            # The GET's headers are in: the emulator already built its response, so
            # from here on allocations are the client's (buffers, chunks, text).
            tracemalloc.start()
            try:
                async for chunk in opened:
                    chunks += 1
                    total += len(chunk)
                    largest = max(largest, len(chunk))
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
        return chunks, total, largest, peak

    chunks, total, largest, peak = run(body())
    assert total == size // 129 * 129
    assert chunks >= 32
    assert largest <= CHUNK_SIZE
    # Holding the object would take >= 32 MiB; streaming measures ~4-6 MiB (aiohttp's
    # buffer, one chunk, its text). The margin absorbs a loaded machine.
    assert peak < size // 2, f"the client held {peak} bytes while streaming"
    assert ops(s3_server, s3_bucket) == [("GET", 200)]


def test_a_body_cut_mid_read_resumes_pinned_to_the_version(
    s3_server: S3Emulator, s3_bucket: S3Bucket, s3_fs: FsspecFileSystem
) -> None:
    text = _big_text(3 * 1024 * 1024)
    target = run(s3_fs.resolve("big.txt"))
    written = run(s3_fs.write_text(target, text, CreateIfAbsent()))
    s3_server.reset()
    s3_server.reset_body(after_bytes=CHUNK_SIZE + 12345)
    assert run(s3_fs.read_text(target)) == text
    first, resumed = s3_server.requests(s3_bucket.name)
    assert (first.method, first.status) == ("GET", 0)
    assert (resumed.method, resumed.status) == ("GET", 206)
    assert resumed.headers["if_match"] == written.version
    assert resumed.headers["range"].startswith("bytes=")


def test_slow_down_is_retried(
    s3_server: S3Emulator, s3_bucket: S3Bucket, s3_fs: FsspecFileSystem
) -> None:
    target = run(s3_fs.resolve("a.txt"))
    run(s3_fs.write_text(target, "a\n", CreateIfAbsent()))
    s3_server.reset()
    s3_server.slow_down(times=1, method="GET")
    assert run(s3_fs.read_text(target)) == "a\n"
    assert ops(s3_server, s3_bucket) == [("GET", 503), ("GET", 200)]


def test_unguarded_put_carries_no_precondition(
    s3_server: S3Emulator, s3_bucket: S3Bucket, s3_fs: FsspecFileSystem
) -> None:
    async def body() -> None:
        path = f"{s3_bucket.name}/a.txt"
        await s3_fs.dialect.put(path, b"1\n", None)
        await s3_fs.dialect.put(path, b"2\n", None)
        for put in puts(s3_server, s3_bucket):
            assert "if_match" not in put.headers
            assert "if_none_match" not in put.headers
            assert put.headers["write_token"]
        assert await s3_fs.list_dir(await s3_fs.resolve(".")) != []

    run(body())


def test_read_bytes_refuses_an_oversized_object_before_downloading(s3_fs: FsspecFileSystem) -> None:
    async def body() -> None:
        target = await s3_fs.resolve("a.txt")
        await s3_fs.write_text(target, "x" * 5000, CreateIfAbsent())
        path = target.display_path.removeprefix("s3://")
        await expect(FsErrorCode.FS_TOO_LARGE, s3_fs.dialect.read_bytes(path, 100))
        data, info = await s3_fs.dialect.read_bytes(path, 5000)
        assert len(data) == 5000
        assert info.size == 5000

    run(body())


# -- prefixes as directories, and errors --------------------------------------------------------


def test_prefixes_are_directories(s3_fs: FsspecFileSystem) -> None:
    async def body() -> None:
        await s3_fs.write_text(await s3_fs.resolve("d/e/f.txt"), "f\n", CreateIfAbsent())
        await s3_fs.write_text(await s3_fs.resolve("d/g.txt"), "g\n", CreateIfAbsent())
        bucket = s3_fs.root.removeprefix("s3://")
        s3_fs.fs.pipe_file(f"{bucket}/marker/", b"")  # a console-style directory marker

        directory = await s3_fs.stat(await s3_fs.resolve("d"))
        assert directory is not None
        assert directory.type == "directory"
        root = await s3_fs.stat(await s3_fs.resolve("."))
        assert root is not None
        assert root.type == "directory"
        assert await s3_fs.stat(await s3_fs.resolve("nothing")) is None
        marker = await s3_fs.stat(await s3_fs.resolve("marker"))
        assert marker is not None
        assert marker.type == "directory"

        listed = await s3_fs.list_dir(await s3_fs.resolve("d"))
        assert [(item.name, item.type) for item in listed] == [
            ("e", "directory"),
            ("g.txt", "file"),
        ]
        g_info = await s3_fs.stat(await s3_fs.resolve("d/g.txt"))
        assert g_info is not None
        assert listed[1].version == g_info.version  # listing, HEAD and GET agree
        assert listed[1].size == 2
        assert await s3_fs.list_dir(await s3_fs.resolve("marker")) == []

        await expect(FsErrorCode.FS_NOT_REGULAR_FILE, s3_fs.read_text(await s3_fs.resolve("d")))
        await expect(FsErrorCode.FS_NOT_DIRECTORY, s3_fs.list_dir(await s3_fs.resolve("d/g.txt")))
        await expect(FsErrorCode.FS_NOT_FOUND, s3_fs.list_dir(await s3_fs.resolve("nothing")))
        await expect(FsErrorCode.FS_NOT_FOUND, s3_fs.read_text(await s3_fs.resolve("nothing")))

    run(body())


def test_a_missing_bucket_is_not_found(s3_server: S3Emulator) -> None:
    fs = open_fs("s3://fsseam-no-such-bucket-here", **s3_server.storage_options())

    async def body() -> None:
        target = await fs.resolve("a.txt")
        error = await expect(FsErrorCode.FS_NOT_FOUND, fs.read_text(target))
        assert 'bucket "fsseam-no-such-bucket-here" does not exist' in str(error)
        assert await fs.stat(target) is None

    run(body())


def _client_error(code: str, status: int, condition: str = "") -> ClientError:
    error: dict[str, Any] = {"Code": code, "Message": "msg"}
    if condition:
        error["Condition"] = condition
    return ClientError(
        {"Error": error, "ResponseMetadata": {"HTTPStatusCode": status}}, "PutObject"
    )


def _wrapped(cause: ClientError, exc: OSError) -> OSError:
    exc.__cause__ = cause
    return exc


@pytest.mark.parametrize(
    ("raised", "code"),
    [
        (
            _wrapped(_client_error("NoSuchKey", 404), FileNotFoundError("x")),
            FsErrorCode.FS_NOT_FOUND,
        ),
        (_client_error("404", 404), FsErrorCode.FS_NOT_FOUND),
        (
            _wrapped(_client_error("AccessDenied", 403), PermissionError("x")),
            FsErrorCode.FS_PERMISSION_DENIED,
        ),
        (_client_error("InternalError", 500), FsErrorCode.FS_IO_ERROR),
        (ConnectionResetError("reset"), FsErrorCode.FS_IO_ERROR),
        # Outside a guarded write, a 412 is just an I/O failure.
        (
            _wrapped(_client_error("PreconditionFailed", 412), OSError(errno.EINVAL, "x")),
            FsErrorCode.FS_IO_ERROR,
        ),
    ],
)
def test_error_translation(raised: Exception, code: FsErrorCode) -> None:
    wording = Wording("S3", "the credentials", "AWS")
    with pytest.raises(FsError) as caught, boundary("s3://b/k", wording, _failure):
        raise raised
    assert caught.value.code is code
    assert "s3://b/k" in str(caught.value)
    assert caught.value.__cause__ is raised


@pytest.mark.parametrize(
    ("raised", "kind"),
    [
        # s3fs: a failed If-Match is OSError(EINVAL), a failed If-None-Match FileExistsError.
        (
            _wrapped(
                _client_error("PreconditionFailed", 412, "If-Match"), OSError(errno.EINVAL, "x")
            ),
            "refused",
        ),
        (
            _wrapped(
                _client_error("PreconditionFailed", 412, "If-None-Match"), FileExistsError("x")
            ),
            "refused",
        ),
        (
            _wrapped(_client_error("ConditionalRequestConflict", 409), OSError(errno.EBUSY, "x")),
            "conflict",
        ),
    ],
)
def test_guard_failures_are_recognised_from_the_cause(raised: Exception, kind: str) -> None:
    assert _failure(raised).kind == kind


# -- attributes, versions, endpoints -----------------------------------------------------------


def test_a_replace_keeps_content_type_and_user_metadata(s3_fs: FsspecFileSystem) -> None:
    async def body() -> None:
        bucket = s3_fs.root.removeprefix("s3://")
        s3_fs.fs.call_s3(
            "put_object",
            Bucket=bucket,
            Key="index.html",
            Body=b"<p>hi</p>\n",
            ContentType="text/html; charset=utf-8",
            Metadata={"owner": "web"},
        )
        target = await s3_fs.resolve("index.html")
        await s3_fs.edit_text(target, FsEditRequest("hi", "hello"))
        stored = raw_get(s3_fs, "index.html")
        assert stored["Data"] == b"<p>hello</p>\n"
        assert stored["ContentType"] == "text/html; charset=utf-8"
        assert stored["Metadata"]["owner"] == "web"
        await s3_fs.write_text(await s3_fs.resolve("new.json"), "{}\n", CreateIfAbsent())
        assert raw_get(s3_fs, "new.json")["ContentType"] == "application/json"

    run(body())


def test_versioned_buckets_report_version_ids(s3_server: S3Emulator) -> None:
    bucket = s3_server.new_bucket(versioned=True)
    fs = open_fs(bucket.url, **bucket.storage_options)

    async def body() -> None:
        path = f"{bucket.name}/a.txt"
        first = await fs.dialect.put(path, b"a\n", CreateIfAbsent())
        assert isinstance(first, S3StoredWrite)
        second = await fs.dialect.put(path, b"b\n", ReplaceIfVersion(first.version))
        assert isinstance(second, S3StoredWrite)
        assert first.version_id
        assert second.version_id
        assert first.version_id != second.version_id
        assert second.version == FsVersion('"3b5d5c3712955042212316173ccf37be"')  # the ETag
        async with fs.dialect.open_read(path) as reader:
            assert isinstance(reader, S3Reader)
            assert reader.version_id == second.version_id
            assert reader.info.version == second.version

    run(body())


@pytest.mark.parametrize(
    ("endpoint", "warns"),
    [
        ("https://s3.eu-west-1.amazonaws.com", False),
        ("https://bucket.s3.dualstack.us-east-1.amazonaws.com", False),
        ("http://127.0.0.1:9000", False),
        ("http://localhost:9000", False),
        ("http://[::1]:9000", False),
        ("https://minio.example.internal:9000", True),
        ("https://storage.googleapis.com", True),
        ("http://10.0.0.7:9000", True),
    ],
)
def test_endpoints_that_need_proof(endpoint: str, warns: bool) -> None:
    assert _needs_proof(endpoint) is warns


def test_a_foreign_endpoint_warns_once() -> None:
    import s3fs

    endpoint = "https://s3-compatible.example.invalid:9443"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            S3Dialect(s3fs.S3FileSystem(endpoint_url=endpoint, anon=True, skip_instance_cache=True))
    relevant = [item for item in caught if issubclass(item.category, S3EndpointWarning)]
    assert len(relevant) == 1
    assert "fsseam doctor" in str(relevant[0].message)
