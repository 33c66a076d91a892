"""``read_text`` and ``stream_text``: UTF-8 text, BOMs, line endings, versions of the bytes read."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from fsseam.seam import FileSystem, FsErrorCode, FsTarget
from fsseam.testing._support import BOM, MIXED_TEXT, E, async_test, expect_error
from fsseam.testing._worker import read_versioned
from fsseam.testing.fixtures import RawStore
from fsseam.testing.suite._helpers import read, version, write, written

__all__ = ["ReadSuite", "StreamSuite"]

UNREADABLE: dict[str, tuple[dict[str, bytes], str, FsErrorCode]] = {
    # case: (bytes stored first, the path read, the code the read fails with)
    "nul_byte_is_not_text": ({"bin.dat": b"abc\x00def"}, "bin.dat", E.FS_NOT_TEXT),
    "latin1_is_not_text": ({"latin1.txt": "café".encode("latin-1")}, "latin1.txt", E.FS_NOT_TEXT),
    "cut_utf8_is_not_text": ({"cut.txt": "ab€".encode()[:-1]}, "cut.txt", E.FS_NOT_TEXT),
    "directory_is_not_regular_file": ({"dir/a.txt": b"x"}, "dir", E.FS_NOT_REGULAR_FILE),
    "missing_is_not_found": ({}, "missing.txt", E.FS_NOT_FOUND),
    "missing_below_a_missing_directory_is_not_found": ({}, "missing/deeper.txt", E.FS_NOT_FOUND),
}
"""What ``read_text`` and ``stream_text`` refuse, and how."""


class ReadSuite:
    """``read_text``: strict UTF-8, BOM excluded, precise failure codes."""

    @async_test
    async def test_read_text_returns_utf8_text(self, fs: FileSystem) -> None:
        await write(fs, "a.txt", MIXED_TEXT)
        assert await read(fs, "a.txt") == MIXED_TEXT

    @async_test
    async def test_read_text_of_empty_file_is_empty(self, fs: FileSystem) -> None:
        await write(fs, "empty.txt", "")
        assert await read(fs, "empty.txt") == ""

    @async_test
    async def test_read_text_excludes_bom(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("bom.txt", BOM + "héllo\n".encode())
        raw.write_bytes("only-bom.txt", BOM)
        assert await read(fs, "bom.txt") == "héllo\n"
        assert await read(fs, "only-bom.txt") == ""

    @async_test
    async def test_read_text_keeps_line_endings(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("crlf.txt", b"a\r\nb\nc\r\n")
        assert await read(fs, "crlf.txt") == "a\r\nb\nc\r\n"

    @pytest.mark.parametrize("case", list(UNREADABLE))
    @async_test
    async def test_read_text_refuses_what_is_not_a_text_file(
        self, fs: FileSystem, raw: RawStore, case: str
    ) -> None:
        await _refuses(fs, raw, case, fs.read_text)


class StreamSuite:
    """``stream_text``: the info of exactly the streamed bytes, text in bounded chunks."""

    @pytest.mark.parametrize("case", list(UNREADABLE))
    @async_test
    async def test_stream_text_refuses_what_is_not_a_text_file(
        self, fs: FileSystem, raw: RawStore, case: str
    ) -> None:
        await _refuses(fs, raw, case, lambda target: read_versioned(fs, target))

    @async_test
    async def test_stream_info_version_equals_stat_version(self, fs: FileSystem) -> None:
        target, outcome = await written(fs, "a.txt", "héllo\n")
        async with fs.stream_text(target) as stream:
            info = stream.info
            text = "".join([chunk async for chunk in stream])
        assert text == "héllo\n"
        assert info.type == "file"
        assert info.size == len("héllo\n".encode())
        assert info.version == outcome.version
        assert info.version == await version(fs, "a.txt")

    @async_test
    async def test_stream_chunks_join_to_the_text(self, fs: FileSystem) -> None:
        content = MIXED_TEXT * 50
        await write(fs, "a.txt", content)
        text, streamed_version = await read_versioned(fs, await fs.resolve("a.txt"))
        assert text == content
        assert streamed_version == await version(fs, "a.txt")

    @async_test
    async def test_stream_multi_mib_file_in_several_chunks(self, fs: FileSystem) -> None:
        content = "x" + MIXED_TEXT * (3 * 1024 * 1024 // len(MIXED_TEXT.encode()))
        await write(fs, "big.txt", content)
        async with fs.stream_text(await fs.resolve("big.txt")) as stream:
            chunks = [chunk async for chunk in stream]
            size = stream.info.size
        assert len(chunks) >= 2, "a multi-MiB file must stream in several chunks"
        assert max(len(chunk) for chunk in chunks) < len(content)
        assert "".join(chunks) == content
        assert size == len(content.encode())

    @async_test
    async def test_stream_excludes_bom(self, fs: FileSystem, raw: RawStore) -> None:
        raw.write_bytes("bom.txt", BOM + b"abc")
        text, _ = await read_versioned(fs, await fs.resolve("bom.txt"))
        assert text == "abc"


async def _refuses(
    fs: FileSystem, raw: RawStore, case: str, reader: Callable[[FsTarget], Awaitable[object]]
) -> None:
    """``reader`` fails on :data:`UNREADABLE`'s ``case`` with its code (a not-found one as
    ``FileNotFoundError`` too)."""
    stored, path, code = UNREADABLE[case]
    for stored_path, data in stored.items():
        raw.write_bytes(stored_path, data)
    error = await expect_error(code, reader(await fs.resolve(path)))
    assert code is not E.FS_NOT_FOUND or isinstance(error, FileNotFoundError)
