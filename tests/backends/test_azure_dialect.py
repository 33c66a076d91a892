"""What only the Azure dialect does, against a real Azurite: the wire, ranges, errors.

The contracts every backend shares (guards, lost answers, unknown outcomes,
reads broken or changed mid-stream, round trips, error wording) run in the
shipped suite (``tests/conformance/test_azure.py``). These pin the Azure
specifics: which headers and write token reach the store, never
``If-Match: *``, ETag-pinned ranged reads, an empty blob's unsatisfiable
range, virtual directories, credentials and missing containers.
"""

from __future__ import annotations

import os

import pytest

from fsseam.backends import FsspecFileSystem, open_fs
from fsseam.backends.dialects.azure import TOKEN_KEY, AzureDialect
from fsseam.backends.dialects.base import CHUNK_SIZE
from fsseam.seam import (
    CreateIfAbsent,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsStaleVersion,
    FsTarget,
    FsVersion,
    ReplaceIfVersion,
)
from fsseam.testing.emulators.azure import AzureContainer, connection_string
from fsseam.testing.emulators.proxy import Recorded, RecordingProxy
from fsseam.testing.harness import run

pytestmark = pytest.mark.azure


def blob_path(fs: FsspecFileSystem, name: str) -> str:
    """The store path (``container/name``) the dialect works on."""
    return f"{fs.root.removeprefix('az://')}/{name}"


def put_raw(fs: FsspecFileSystem, name: str, data: bytes) -> None:
    """Someone else's unconditional write, through adlfs itself."""
    fs.fs.pipe_file(blob_path(fs, name), data)


def get_raw(fs: FsspecFileSystem, name: str) -> bytes:
    data: bytes = fs.fs.cat_file(blob_path(fs, name))
    return data


def calls(proxy: RecordingProxy) -> list[str]:
    """Recorded requests as ``METHOD`` strings, in order."""
    return [rec.method for rec in proxy.requests]


def is_put(rec: Recorded) -> bool:
    return rec.method == "PUT" and "comp=" not in rec.query


async def create(fs: FsspecFileSystem, name: str, text: str) -> tuple[FsTarget, FsVersion]:
    target = await fs.resolve(name)
    outcome = await fs.write_text(target, text, CreateIfAbsent())
    return target, outcome.version


# -- configuration -----------------------------------------------------------


def test_mount_uses_the_azure_dialect_without_caches(azure_fs: FsspecFileSystem) -> None:
    assert isinstance(azure_fs.dialect, AzureDialect)
    assert azure_fs.capabilities.atomic_conditional_write is True
    assert azure_fs.fs.dircache.use_listings_cache is False
    assert azure_fs.root.startswith("az://fsseam-")
    assert AzureDialect.default_options({"use_listings_cache": True}) == {
        "use_listings_cache": True,
        "skip_instance_cache": True,
    }


# -- the guard reaches the wire ----------------------------------------------


def test_guards_and_write_token_reach_the_wire(
    azure_fs: FsspecFileSystem, azure_proxy: RecordingProxy
) -> None:
    async def scenario() -> None:
        target, v1 = await create(azure_fs, "a.txt", "one\n")
        created = [rec for rec in azure_proxy.requests if is_put(rec)]
        assert len(created) == 1
        assert created[0].headers.get("if-none-match") == "*"
        assert "if-match" not in created[0].headers
        first_token = created[0].headers.get(f"x-ms-meta-{TOKEN_KEY}")
        assert first_token

        azure_proxy.reset()
        await azure_fs.write_text(target, "two\n", ReplaceIfVersion(v1))
        replaced = [rec for rec in azure_proxy.requests if is_put(rec)]
        assert len(replaced) == 1
        assert replaced[0].headers.get("if-match") == f'"{v1}"'
        assert "if-none-match" not in replaced[0].headers
        second_token = replaced[0].headers.get(f"x-ms-meta-{TOKEN_KEY}")
        assert second_token
        assert second_token != first_token

    run(scenario())


def test_stale_replace_and_create_leave_the_blob_unchanged(azure_fs: FsspecFileSystem) -> None:
    async def scenario() -> None:
        target, v1 = await create(azure_fs, "a.txt", "mine\n")
        put_raw(azure_fs, "a.txt", b"theirs\n")
        with pytest.raises(FsError) as stale:
            await azure_fs.write_text(target, "overwrite\n", ReplaceIfVersion(v1))
        assert stale.value.code is FsErrorCode.FS_STALE_VERSION
        with pytest.raises(FsError) as exists:
            await azure_fs.write_text(target, "overwrite\n", CreateIfAbsent())
        assert exists.value.code is FsErrorCode.FS_NOT_OBSERVED
        with pytest.raises(FsError) as edit:
            await azure_fs.edit_text(target, FsEditRequest("theirs", "x"), expected=v1)
        assert edit.value.code is FsErrorCode.FS_STALE_VERSION
        assert get_raw(azure_fs, "a.txt") == b"theirs\n"

        gone = await azure_fs.resolve("gone.txt")
        with pytest.raises(FsError) as missing:
            await azure_fs.dialect.put(blob_path(azure_fs, "gone.txt"), b"x", ReplaceIfVersion(v1))
        assert missing.value.code is FsErrorCode.FS_STALE_VERSION
        assert await azure_fs.stat(gone) is None

    run(scenario())


def test_a_wildcard_version_never_becomes_if_match_star(
    azure_fs: FsspecFileSystem, azure_proxy: RecordingProxy
) -> None:
    # Azurite even accepts If-Match: * on a missing blob; the dialect must not send it.
    with pytest.raises(FsStaleVersion):
        run(
            azure_fs.dialect.put(
                blob_path(azure_fs, "new.txt"), b"x", ReplaceIfVersion(FsVersion("*"))
            )
        )
    assert calls(azure_proxy) == []


# -- request shapes ------------------------------------------------------------


def test_an_8_mib_file_is_one_get_and_one_put(
    azure_fs: FsspecFileSystem, azure_proxy: RecordingProxy
) -> None:
    data = b"x" * (8 * 1024 * 1024)
    path = blob_path(azure_fs, "big.txt")
    run(azure_fs.dialect.put(path, data, CreateIfAbsent()))
    assert calls(azure_proxy) == ["PUT"]
    azure_proxy.reset()
    got, _ = run(azure_fs.dialect.read_bytes(path))
    assert got == data
    assert calls(azure_proxy) == ["GET"]


def test_an_empty_blob_reads_with_its_version(
    azure_fs: FsspecFileSystem, azure_proxy: RecordingProxy
) -> None:
    async def scenario() -> None:
        target, version = await create(azure_fs, "empty.txt", "")
        azure_proxy.reset()
        async with azure_fs.stream_text(target) as stream:
            assert stream.info.version == version
            assert stream.info.size == 0
            assert [chunk async for chunk in stream] == []
        # A range of an empty blob is unsatisfiable (416): its properties follow.
        assert calls(azure_proxy) == ["GET", "HEAD"]

    run(scenario())


# -- large blobs ---------------------------------------------------------------


def test_a_20_mib_blob_streams_in_bounded_chunks(
    azure_fs: FsspecFileSystem, azure_proxy: RecordingProxy
) -> None:
    data = os.urandom(20 * 1024 * 1024)
    path = blob_path(azure_fs, "big.bin")
    stored = run(azure_fs.dialect.put(path, data, None))
    azure_proxy.reset()

    async def stream() -> tuple[int, int, bytes]:
        count = largest = 0
        parts = []
        async with azure_fs.dialect.open_read(path) as reader:
            assert reader.info.version == stored.version
            assert reader.info.size == len(data)
            async for chunk in reader.chunks():
                count += 1
                largest = max(largest, len(chunk))
                parts.append(chunk)
        return count, largest, b"".join(parts)

    count, largest, got = run(stream())
    assert got == data
    assert count >= 20
    assert largest <= CHUNK_SIZE
    gets = azure_proxy.requests
    assert [rec.method for rec in gets] == ["GET"] * 4  # 8 MiB, then 4 MiB ranges
    assert "if-match" not in gets[0].headers
    for rec in gets[1:]:
        assert rec.headers.get("if-match") == f'"{stored.version}"'


# -- directories and errors ------------------------------------------------------


def test_directories_are_prefixes(azure_fs: FsspecFileSystem) -> None:
    put_raw(azure_fs, "d/x.txt", b"1")
    put_raw(azure_fs, "d/sub/y.txt", b"22")

    async def scenario() -> None:
        d = await azure_fs.resolve("d")
        info = await azure_fs.stat(d)
        assert info is not None
        assert info.type == "directory"
        entries = await azure_fs.list_dir(d)
        assert [(e.name, e.type, e.size) for e in entries] == [
            ("sub", "directory", None),
            ("x.txt", "file", 1),
        ]
        x = await azure_fs.stat(await azure_fs.resolve("d/x.txt"))
        assert x is not None
        assert entries[1].version == x.version
        for path, code in [
            ("d", FsErrorCode.FS_NOT_REGULAR_FILE),
            ("d/missing.txt", FsErrorCode.FS_NOT_FOUND),
        ]:
            with pytest.raises(FsError) as read:
                await azure_fs.read_text(await azure_fs.resolve(path))
            assert read.value.code is code, path
        for path, code in [
            ("d/x.txt", FsErrorCode.FS_NOT_DIRECTORY),
            ("nothing", FsErrorCode.FS_NOT_FOUND),
        ]:
            with pytest.raises(FsError) as listed:
                await azure_fs.list_dir(await azure_fs.resolve(path))
            assert listed.value.code is code, path
        assert await azure_fs.list_dir(await azure_fs.resolve(".")) != []

    run(scenario())


def test_a_wrong_key_is_permission_denied(azure_container: AzureContainer) -> None:
    options = dict(azure_container.storage_options)
    options["connection_string"] = options["connection_string"].replace(
        "AccountKey=Eby8", "AccountKey=AAAA"
    )
    assert options["connection_string"] != connection_string(0)
    fs = open_fs(azure_container.url, **options)
    target = run(fs.resolve("a.txt"))
    with pytest.raises(FsError) as denied:
        run(fs.read_text(target))
    assert denied.value.code is FsErrorCode.FS_PERMISSION_DENIED
    assert "az://" in str(denied.value)
    assert isinstance(denied.value.__cause__, Exception)


def test_a_missing_container_is_not_found(azure_container: AzureContainer) -> None:
    fs = open_fs(azure_container.url + "-missing", **azure_container.storage_options)
    target = run(fs.resolve("a.txt"))
    with pytest.raises(FsError) as missing:
        run(fs.read_text(target))
    assert missing.value.code is FsErrorCode.FS_NOT_FOUND
    assert "container" in str(missing.value)
    assert run(fs.stat(target)) is None
