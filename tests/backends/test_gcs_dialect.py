"""What only the GCS dialect does, against fake-gcs-server: the wire, tokens, gzip, ranges.

The contracts every backend shares (guards, lost answers, unknown outcomes,
reads broken or changed mid-stream, round trips, error wording) run in the
shipped suite (``tests/conformance/test_gcs.py``). These pin the GCS
specifics: ``ifGenerationMatch`` on multipart uploads, the write token in the
object's metadata, generation-pinned ranged reads, gzip-encoded objects,
folder placeholders, kept attributes and gcsfs's class and options. Every
request goes through the emulator's RecordingProxy.
"""

from __future__ import annotations

import gzip
import os
import time
from urllib.parse import parse_qs

import gcsfs.core
import pytest

from fsseam.backends import FsspecFileSystem, open_fs
from fsseam.backends.dialects.gcs import RANGE_SIZE, TOKEN_KEY, WHOLE_READ_LIMIT, GCSDialect
from fsseam.seam import (
    CreateIfAbsent,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsStaleVersion,
    ReplaceIfVersion,
)
from fsseam.testing.emulators.gcs import GCSBucket
from fsseam.testing.emulators.proxy import Fault, Recorded, RecordingProxy
from fsseam.testing.harness import run

pytestmark = pytest.mark.gcs


def query(rec: Recorded) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(rec.query, keep_blank_values=True).items()}


def is_upload(rec: Recorded) -> bool:
    return rec.method == "POST" and rec.path.startswith("/upload/")


def store_path(fs: FsspecFileSystem, name: str) -> str:
    return fs.root.removeprefix("gs://") + "/" + name


def test_options_and_class(gcs_fs: FsspecFileSystem) -> None:
    assert isinstance(gcs_fs.dialect, GCSDialect)
    assert gcs_fs.capabilities.atomic_conditional_write is True
    # The core class: the experimental one probes gRPC before every call.
    assert os.environ["GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT"] == "false"
    assert type(gcs_fs.fs) is gcsfs.core.GCSFileSystem
    assert gcs_fs.fs.dircache.use_listings_cache is False
    options = GCSDialect.default_options({"token": "anon", "use_listings_cache": True})
    assert options == {"token": "anon", "use_listings_cache": True, "skip_instance_cache": True}


def test_guard_reaches_the_wire(gcs_fs: FsspecFileSystem, gcs_proxy: RecordingProxy) -> None:
    async def scenario() -> None:
        target = await gcs_fs.resolve("a.txt")
        created = await gcs_fs.write_text(target, "one\n", CreateIfAbsent())
        await gcs_fs.write_text(target, "two\n", ReplaceIfVersion(created.version))

    run(scenario())
    uploads = [rec for rec in gcs_proxy.requests if is_upload(rec)]
    assert [query(rec)["uploadType"] for rec in uploads] == ["multipart", "multipart"]
    assert query(uploads[0])["ifGenerationMatch"] == "0"
    assert query(uploads[1])["ifGenerationMatch"] != "0"


def test_stale_replace_is_refused_by_the_store(
    gcs_fs: FsspecFileSystem, gcs_proxy: RecordingProxy
) -> None:
    dialect = gcs_fs.dialect
    path = store_path(gcs_fs, "a.txt")

    async def scenario() -> None:
        first = await dialect.put(path, b"base\n", CreateIfAbsent())
        await dialect.put(path, b"theirs\n", ReplaceIfVersion(first.version))
        gcs_proxy.reset()
        # Straight to the dialect: no read-side check, only the store's precondition.
        with pytest.raises(FsStaleVersion):
            await dialect.put(path, b"mine\n", ReplaceIfVersion(first.version))
        uploads = [rec for rec in gcs_proxy.requests if is_upload(rec)]
        assert [query(rec)["ifGenerationMatch"] for rec in uploads] == [first.version]
        with pytest.raises(FsError) as exists:
            await dialect.put(path, b"mine\n", CreateIfAbsent())
        assert exists.value.code is FsErrorCode.FS_NOT_OBSERVED
        data, _ = await dialect.read_bytes(path)
        assert data == b"theirs\n"

    run(scenario())


def test_token_is_stored_and_foreign_412_is_stale(gcs_fs: FsspecFileSystem) -> None:
    dialect = gcs_fs.dialect
    path = store_path(gcs_fs, "a.txt")

    async def scenario() -> None:
        base = await dialect.put(path, b"base\n", CreateIfAbsent())
        meta = gcs_fs.fs.info(path)["metadata"]
        assert len(meta[TOKEN_KEY]) == 32
        gcs_fs.fs.pipe_file(path, b"someone else\n")  # no token of ours
        with pytest.raises(FsStaleVersion, match="modified"):
            await dialect.put(path, b"mine\n", ReplaceIfVersion(base.version))
        gcs_fs.fs.rm_file(path)
        with pytest.raises(FsStaleVersion, match="deleted"):
            await dialect.put(path, b"mine\n", ReplaceIfVersion(base.version))
        with pytest.raises(FsStaleVersion):  # not a generation at all
            await dialect.put(path, b"mine\n", ReplaceIfVersion(base.version + "x"))  # type: ignore[arg-type]

    run(scenario())


def test_large_object_streams_pinned_to_its_generation(
    gcs_fs: FsspecFileSystem, gcs_proxy: RecordingProxy
) -> None:
    line = b"0123456789abcdef" * 4 + b"\n"
    data = line * (20 * 1024 * 1024 // len(line))
    path = store_path(gcs_fs, "big.txt")

    async def scenario() -> None:
        stored = await gcs_fs.dialect.put(path, data, CreateIfAbsent())
        target = await gcs_fs.resolve("big.txt")
        gcs_proxy.reset()
        chunks: list[str] = []
        async with gcs_fs.stream_text(target) as s:
            assert s.info.version == stored.version
            assert s.info.size == len(data)
            async for chunk in s:
                chunks.append(chunk)
        assert len(chunks) >= 20
        assert "".join(chunks).encode() == data
        gets = gcs_proxy.requests
        assert [rec.method for rec in gets] == ["GET"] * 3
        assert "range" not in gets[0].headers
        assert "generation" not in query(gets[0])
        ranges = [(query(rec)["generation"], rec.headers["range"]) for rec in gets[1:]]
        assert ranges == [
            (stored.version, f"bytes={WHOLE_READ_LIMIT}-{WHOLE_READ_LIMIT + RANGE_SIZE - 1}"),
            (stored.version, f"bytes={WHOLE_READ_LIMIT + RANGE_SIZE}-{len(data) - 1}"),
        ]

    run(scenario())


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (403, FsErrorCode.FS_PERMISSION_DENIED),
        (401, FsErrorCode.FS_PERMISSION_DENIED),
        (400, FsErrorCode.FS_IO_ERROR),
    ],
)
def test_http_errors_are_translated(
    gcs_fs: FsspecFileSystem, gcs_proxy: RecordingProxy, status: int, code: FsErrorCode
) -> None:
    async def scenario() -> None:
        target = await gcs_fs.resolve("a.txt")
        await gcs_fs.write_text(target, "x", CreateIfAbsent())
        gcs_proxy.inject(Fault(lambda rec: True, "fail", status=status, times=2))
        with pytest.raises(FsError) as read:
            await gcs_fs.read_text(target)
        assert read.value.code is code
        assert target.display_path in read.value.message
        with pytest.raises(FsError) as write:
            await gcs_fs.write_text(target, "y", ReplaceIfVersion("1"))  # type: ignore[arg-type]
        assert write.value.code in (code, FsErrorCode.FS_STALE_VERSION)

    run(scenario())


def test_directories_are_prefixes(gcs_fs: FsspecFileSystem) -> None:
    dialect = gcs_fs.dialect
    root = gcs_fs.root.removeprefix("gs://")

    async def scenario() -> None:
        for name in ("a", "b", "c/x", "d/y", "e", "f/z/w", "g"):
            await dialect.put(f"{root}/{name}", b"1", CreateIfAbsent())
        dialect.page_size = 2  # type: ignore[attr-defined]
        listed = await gcs_fs.list_dir(await gcs_fs.resolve("."))
        assert [(e.name, e.type) for e in listed] == [
            ("a", "file"),
            ("b", "file"),
            ("c", "directory"),
            ("d", "directory"),
            ("e", "file"),
            ("f", "directory"),
            ("g", "file"),
        ]
        assert all(e.version for e in listed if e.type == "file")
        info = await gcs_fs.stat(await gcs_fs.resolve("f/z"))
        assert info is not None
        assert info.type == "directory"
        assert await gcs_fs.stat(await gcs_fs.resolve("nope")) is None
        for name, code in (
            ("a", FsErrorCode.FS_NOT_DIRECTORY),
            ("nope", FsErrorCode.FS_NOT_FOUND),
        ):
            with pytest.raises(FsError) as listing:
                await gcs_fs.list_dir(await gcs_fs.resolve(name))
            assert listing.value.code is code
        with pytest.raises(FsError) as reading:
            await gcs_fs.read_text(await gcs_fs.resolve("f"))
        assert reading.value.code is FsErrorCode.FS_NOT_REGULAR_FILE
        # A console-made "folder/" placeholder object: an empty directory.
        gcs_fs.fs.pipe_file(f"{root}/empty/", b"")
        assert await gcs_fs.list_dir(await gcs_fs.resolve("empty")) == []
        info = await gcs_fs.stat(await gcs_fs.resolve("empty"))
        assert info is not None
        assert info.type == "directory"
        info = await gcs_fs.stat(await gcs_fs.resolve("."))
        assert info is not None
        assert info.type == "directory"
        assert await dialect.stat("fsseam-no-such-bucket") is None

    run(scenario())


def test_second_mount_sees_the_same_bucket(gcs_bucket: GCSBucket) -> None:
    first = open_fs(gcs_bucket.url, **gcs_bucket.storage_options)
    second = open_fs(gcs_bucket.url, **gcs_bucket.storage_options)
    assert first.fs is not second.fs  # skip_instance_cache: no shared state

    async def scenario() -> None:
        a = await first.resolve("a.txt")
        created = await first.write_text(a, "1", CreateIfAbsent())
        b = await second.resolve("a.txt")
        replaced = await second.write_text(b, "2", ReplaceIfVersion(created.version))
        with pytest.raises(FsStaleVersion):
            await first.edit_text(a, FsEditRequest("1", "3"), created.version)
        info = await first.stat(a)
        assert info is not None
        assert info.version == replaced.version

    run(scenario())


def test_experimental_gcsfs_class_works_without_grpc(gcs_bucket: GCSBucket) -> None:
    """Whoever imported gcsfs first may have got the extended class: the JSON API still serves."""
    from gcsfs.extended_gcsfs import ExtendedGcsFileSystem

    options = GCSDialect.default_options(dict(gcs_bucket.storage_options))
    fs = FsspecFileSystem(ExtendedGcsFileSystem(**options), gcs_bucket.url)
    assert isinstance(fs.dialect, GCSDialect)

    async def scenario() -> None:
        target = await fs.resolve("a.txt")
        created = await fs.write_text(target, "a", CreateIfAbsent())
        await fs.edit_text(target, FsEditRequest("a", "b"), created.version)
        assert await fs.read_text(target) == "b"
        assert [e.name for e in await fs.list_dir(await fs.resolve("."))] == ["a.txt"]

    started = time.monotonic()
    run(scenario())
    assert time.monotonic() - started < 5  # a gRPC probe would wait 16 s or more


def test_replace_keeps_the_attributes_of_the_version_it_read(gcs_fs: FsspecFileSystem) -> None:
    path = store_path(gcs_fs, "page.txt")
    gcs_fs.fs.pipe_file(
        path,
        b"<p>hi</p>\n",
        content_type="text/html; charset=utf-8",
        fixed_key_metadata={"cache_control": "no-store"},
    )

    async def scenario() -> None:
        target = await gcs_fs.resolve("page.txt")
        await gcs_fs.edit_text(target, FsEditRequest("hi", "hello"))
        created = await gcs_fs.write_text(await gcs_fs.resolve("new.html"), "x", CreateIfAbsent())
        assert created.operation == "create"

    run(scenario())
    info = gcs_fs.fs.info(path)
    assert info["contentType"] == "text/html; charset=utf-8"
    assert info["cacheControl"] == "no-store"
    assert gcs_fs.fs.info(store_path(gcs_fs, "new.html"))["contentType"] == "text/html"


def test_gzip_stored_objects(gcs_fs: FsspecFileSystem) -> None:
    """GCS serves them decompressed: whole when small, refused (not spliced) when large."""
    small = store_path(gcs_fs, "small.txt")
    large = store_path(gcs_fs, "large.bin")
    gzip_meta = {"content_encoding": "gzip"}
    gcs_fs.fs.pipe_file(small, gzip.compress(b"hello\n"), fixed_key_metadata=gzip_meta)
    noise = os.urandom(WHOLE_READ_LIMIT + 1024)  # incompressible: stays over the limit
    gcs_fs.fs.pipe_file(large, gzip.compress(noise), fixed_key_metadata=gzip_meta)

    async def scenario() -> None:
        assert await gcs_fs.read_text(await gcs_fs.resolve("small.txt")) == "hello\n"
        with pytest.raises(FsError, match="Content-Encoding: gzip") as refused:
            await gcs_fs.dialect.read_bytes(large)
        assert refused.value.code is FsErrorCode.FS_IO_ERROR

    run(scenario())
