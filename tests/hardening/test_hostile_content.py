"""Hostile content, each with one defined outcome, on every backend (big files: local and S3).

- binary (NUL bytes), invalid UTF-8 (overlong "/", CESU surrogates, a cut
  sequence), UTF-16/32 with a BOM: read and edit are FS_NOT_TEXT, the bytes
  stay, and under the policy the file cannot be overwritten unread;
- CR-only breaks: one line, inner CRs kept; mixed endings and tabs: exact
  lines (a trailing CR hidden), untouched bytes identical after an edit;
- a 300 MiB single line: read in bounded memory, the line cut at 2000
  characters; edit is FS_TOO_LARGE before any download; a write over it
  stays bounded too;
- 10 million lines: a window anywhere, with the exact total.

A failed read is not an observation: it never authorises a later write.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fsspec
import pytest

from fsseam import FS_COMMITTED, open_fs
from fsseam.testing.harness import call, code_of, execution, tools_context
from fsseam.testing.mounts import Mount
from tests.hardening.helpers import LOCAL_AND_S3, LOCAL_MEMORY_S3

REPO = Path(__file__).resolve().parents[2]
NOT_TEXT = {"name": "FsError", "code": "FS_NOT_TEXT"}

HOSTILE_BYTES = {
    "png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
    "nul in text": b"hello\nwor\x00ld\n",
    "latin-1": "caf\xe9 cr\xe8me\n".encode("latin-1"),
    "overlong slash": b"a\xc0\xafb\n",  # "/" encoded in two bytes: must never decode
    "cesu surrogate": b"x\xed\xa0\x80y\n",
    "cut sequence at end": "price: 10 €".encode()[:-1],
    "utf-16-le bom": "\ufeffhello\n".encode("utf-16-le"),
    "utf-16-be bom": "\ufeffhello\n".encode("utf-16-be"),
    "utf-16 bom, no nul": "\ufeff世界".encode("utf-16-le"),
    "utf-32 bom": "\ufeffhi\n".encode("utf-32"),
    "bad byte after 1 MiB": b"a" * (1 << 20) + b"\xff\n",
}


def test_non_text_is_refused_unchanged_and_never_counts_as_read(mount: Mount) -> None:
    ctx, bare = tools_context(mount.fs), tools_context(mount.fs, policy=False)
    for kind, data in HOSTILE_BYTES.items():
        name = f"{kind.replace(' ', '-')}.bin"
        mount.put(f"ws/{name}", data)
        session = execution()
        read = call(ctx, "read", {"file_path": name}, session)
        assert read.error == NOT_TEXT, (kind, read.text)
        assert "not UTF-8 text" in read.text
        # The failed read observed nothing: the session may neither edit nor overwrite.
        edit = {"file_path": name, "old_string": "hello", "new_string": "x"}
        assert code_of(call(ctx, "edit", edit, session)) == "FS_NOT_OBSERVED", kind
        write = {"file_path": name, "content": "text now\n"}
        assert code_of(call(ctx, "write", write, session)) == "FS_NOT_OBSERVED", kind
        # Without a policy an edit still needs text; a whole-file write may replace it.
        assert call(bare, "edit", edit, None).error == NOT_TEXT, kind
        assert mount.get(f"ws/{name}") == data, kind
        replaced = call(bare, "write", write, None)
        assert not replaced.is_error, (kind, replaced.text)
        assert mount.get(f"ws/{name}") == b"text now\n", kind


def test_invalid_utf8_error_names_the_byte_offset(mount: Mount) -> None:
    mount.put("ws/bad.txt", b"abc\ndef\xffg\n")
    result = call(tools_context(mount.fs), "read", {"file_path": "bad.txt"}, execution())
    assert result.error == NOT_TEXT
    assert "byte 7" in result.text


@dataclass(frozen=True)
class Shape:
    """Stored bytes, the lines read shows, an edit and the exact bytes it must leave."""

    stored: bytes
    lines: list[str]
    old: str
    new: str
    after: bytes


SHAPES = {
    "cr only": Shape(
        b"one\rtwo\rthree\r",
        ["one\rtwo\rthree"],  # \r is not a line break; only the trailing one is hidden
        "two",
        "2\n2",  # no CRLF in the file: new line breaks are LF
        b"one\r2\n2\rthree\r",
    ),
    "mixed endings": Shape(
        b"a\r\nb\nc\rd\r\ne",
        ["a", "b", "c\rd", "e"],
        "b\nc",
        "B\nC",
        b"a\r\nB\r\nC\rd\r\ne",  # CRLF is dominant (2 vs 1): the new break is CRLF
    ),
    "tabs": Shape(
        b"def f():\n\treturn 1\n    return 2\n",
        ["def f():", "\treturn 1", "    return 2"],
        "\treturn 1",
        "\treturn 0",
        b"def f():\n\treturn 0\n    return 2\n",
    ),
    "bom and crlf": Shape(
        b"\xef\xbb\xbfx\r\ny\r\n",
        ["x", "y"],
        "x\ny",
        "z",
        b"\xef\xbb\xbfz\r\n",
    ),
    "crlf split by an lf edit": Shape(
        b"k=1\r\nk=2\r\n",
        ["k=1", "k=2"],
        "1\n",  # matches "1\r\n": both bytes are consumed
        "9 ",
        b"k=9 k=2\r\n",
    ),
    "only a bom": Shape(b"\xef\xbb\xbf", [], "", "", b"\xef\xbb\xbf"),
    "only line breaks": Shape(b"\r\n\n\r\n", ["", "", ""], "", "", b"\r\n\n\r\n"),
}


def test_line_ending_and_whitespace_shapes_read_and_edit_exactly(mount: Mount) -> None:
    ctx = tools_context(mount.fs)
    for shape, case in SHAPES.items():
        name = f"{shape.replace(' ', '-')}.txt"
        mount.put(f"ws/{name}", case.stored)
        session = execution()
        read = call(ctx, "read", {"file_path": name}, session)
        assert read.value is not None, (shape, read.text)
        assert [line["text"] for line in read.value["lines"]] == case.lines, shape
        assert read.value["total_lines"] == len(case.lines), shape
        if case.old:
            edit = {"file_path": name, "old_string": case.old, "new_string": case.new}
            result = call(ctx, "edit", edit, session)
            assert not result.is_error, (shape, result.text)
        assert mount.get(f"ws/{name}") == case.after, shape


def test_tabs_and_spaces_never_match_each_other(mount: Mount) -> None:
    mount.put("ws/f.py", b"\tx = 1\n")
    ctx = tools_context(mount.fs)
    session = execution()
    call(ctx, "read", {"file_path": "f.py"}, session)
    edit = {"file_path": "f.py", "old_string": "    x = 1", "new_string": "    x = 2"}
    assert code_of(call(ctx, "edit", edit, session)) == "FS_EDIT_NOT_FOUND"
    assert mount.get("ws/f.py") == b"\tx = 1\n"


@pytest.mark.parametrize("mount", LOCAL_MEMORY_S3, indirect=True)
def test_a_huge_old_string_matches_whole_or_not_at_all(mount: Mount) -> None:
    body = "".join(f"line {i:07d} of a large file\n" for i in range(120_000))  # ~3.4 MiB
    mount.put("ws/big.txt", body.encode())
    ctx = tools_context(mount.fs)
    session = execution()
    assert call(ctx, "read", {"file_path": "big.txt", "limit": 1}, session).value is not None
    started = time.perf_counter()
    missing = {"file_path": "big.txt", "old_string": body + "x", "new_string": "y"}
    assert code_of(call(ctx, "edit", missing, session)) == "FS_EDIT_NOT_FOUND"
    whole = {"file_path": "big.txt", "old_string": body, "new_string": "replaced\n"}
    result = call(ctx, "edit", whole, session)
    assert not result.is_error, result.text[:300]
    assert mount.get("ws/big.txt") == b"replaced\n"
    assert time.perf_counter() - started < 30  # linear work, not quadratic


@pytest.mark.parametrize("mount", LOCAL_MEMORY_S3, indirect=True)
def test_replace_all_with_thousands_of_matches_is_exact(mount: Mount) -> None:
    lines = [f"item {i} = TODO" for i in range(20_000)]
    stored = ("\r\n".join(lines) + "\r\n").encode()
    mount.put("ws/list.txt", stored)
    ctx = tools_context(mount.fs)
    session = execution()
    assert call(ctx, "read", {"file_path": "list.txt", "limit": 1}, session).value is not None
    events: list[tuple[Any, ...]] = []
    ctx.on(FS_COMMITTED, lambda *args: events.append(args))
    edit = {
        "file_path": "list.txt",
        "old_string": "= TODO\n",  # LF in old_string matches the file's CRLF
        "new_string": "= done\n#\n",
        "replace_all": True,
    }
    started = time.perf_counter()
    result = call(ctx, "edit", edit, session)
    assert not result.is_error, result.text[:300]
    assert result.value is not None
    assert result.value["replacements"] == 20_000
    expected = "".join(f"item {i} = done\r\n#\r\n" for i in range(20_000)).encode()
    assert mount.get("ws/list.txt") == expected
    assert len(events) == 1
    assert time.perf_counter() - started < 30


def test_an_edit_growing_past_max_edit_bytes_is_too_large_and_changes_nothing(
    mount: Mount,
) -> None:
    limit = 1000
    fs = mount.reopen(max_edit_bytes=limit)
    stored = b"\xef\xbb\xbf" + b"ab\n" * 298 + b"en\n"  # 900 bytes, BOM included
    mount.put("ws/f.txt", stored)
    ctx = tools_context(fs)
    events: list[tuple[Any, ...]] = []
    ctx.on(FS_COMMITTED, lambda *args: events.append(args))
    session = execution()
    assert call(ctx, "read", {"file_path": "f.txt"}, session).value is not None
    # 298 matches, +1 byte each: 1198 bytes.
    grow = {"file_path": "f.txt", "old_string": "b", "new_string": "bb", "replace_all": True}
    result = call(ctx, "edit", grow, session)
    assert code_of(result) == "FS_TOO_LARGE", result.text
    assert "max_edit_bytes" in result.text
    assert mount.get("ws/f.txt") == stored
    assert events == []
    # Exactly at the limit, the BOM counted: 900 + 100 = 1000 bytes.
    exact = {"file_path": "f.txt", "old_string": "en\n", "new_string": "en\n" + "x" * 100}
    result = call(ctx, "edit", exact, session)
    assert not result.is_error, result.text
    assert len(mount.get("ws/f.txt")) == limit
    one_more = {"file_path": "f.txt", "old_string": "en", "new_string": "enn"}
    assert code_of(call(ctx, "edit", one_more, session)) == "FS_TOO_LARGE"
    assert len(events) == 1


def test_content_with_a_nul_byte_is_stored_exactly_and_then_reads_as_binary(mount: Mount) -> None:
    ctx = tools_context(mount.fs)
    session = execution()
    result = call(ctx, "write", {"file_path": "n.txt", "content": "a\x00b\n"}, session)
    assert not result.is_error, result.text
    assert mount.get("ws/n.txt") == b"a\x00b\n"
    assert call(ctx, "read", {"file_path": "n.txt"}, session).error == NOT_TEXT


def test_lone_surrogates_are_refused_cleanly_and_change_nothing(mount: Mount) -> None:
    mount.put("ws/e.txt", b"hello\n")
    ctx = tools_context(mount.fs, policy=False)
    before = mount.snapshot()
    calls = [
        ("write", {"file_path": "s.txt", "content": "a\ud800b"}),
        ("edit", {"file_path": "e.txt", "old_string": "hello", "new_string": "\udc80"}),
        ("write", {"file_path": "a\udcff.txt", "content": "x"}),
        ("write", {"file_path": "a\ud800.txt", "content": "x"}),
    ]
    for tool, args in calls:
        result = call(ctx, tool, args, None)
        assert result.error is not None
        assert result.error["name"] in ("FsError", "ValidationError"), (tool, result.text)
    assert mount.snapshot() == before


def test_a_device_file_inside_the_root_is_never_read(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    try:
        os.mknod(root / "zero", 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero
    except PermissionError:
        pytest.skip("mknod needs CAP_MKNOD")
    ctx = tools_context(open_fs(str(root)), policy=False)
    for tool, args in [
        ("read", {"file_path": "zero"}),
        ("edit", {"file_path": "zero", "old_string": "\x00", "new_string": "x"}),
        ("write", {"file_path": "zero", "content": "x"}),
    ]:
        result = call(ctx, tool, args, None)
        assert code_of(result) == "FS_NOT_REGULAR_FILE", (tool, result.text)
    assert stat.S_ISCHR((root / "zero").lstat().st_mode)


# -- big files (local and S3 only: CI's time budget) ---------------------------------

MIB = 1 << 20
HEAD = "0123456789" * 200  # the 2000 characters a truncated line shows


@dataclass
class BigStore:
    """A root for the big-file cases: where a fresh process mounts it, how to upload."""

    url: str
    options: dict[str, Any]
    upload: Callable[[str, Path], None]
    """Move a local file into the root under a relative name."""


@pytest.fixture(params=LOCAL_AND_S3)
def big_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BigStore]:
    if request.param == "local":
        root = tmp_path / "ws"
        root.mkdir()

        def move(rel: str, source: Path) -> None:
            os.replace(source, root / rel)

        yield BigStore(str(root), {}, move)
    else:
        bucket = request.getfixturevalue("s3_bucket")
        raw = fsspec.filesystem(
            "s3", skip_instance_cache=True, use_listings_cache=False, **bucket.storage_options
        )

        def put(rel: str, source: Path) -> None:
            raw.put_file(str(source), f"{bucket.name}/ws/{rel}")
            source.unlink()

        yield BigStore(f"{bucket.url}/ws", dict(bucket.storage_options), put)


def in_fresh_process(store: BigStore, calls: list[list[Any]], tmp_path: Path) -> dict[str, Any]:
    """Run ``calls`` in a new interpreter; returns the worker's report (peak memory)."""
    tiny = tmp_path / "tiny.txt"
    tiny.write_bytes(b"warm up\n")
    store.upload("tiny.txt", tiny)
    spec = {"url": store.url, "options": store.options, "warmup": "tiny.txt", "calls": calls}
    done = subprocess.run(
        [sys.executable, "-m", "tests.hardening.tool_worker", json.dumps(spec)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def peak_growth_mib(report: dict[str, Any]) -> float:
    return (max(r["hwm_kib"] for r in report["results"]) - report["baseline_kib"]) / 1024


def test_a_300_mib_single_line_reads_in_bounded_memory_truncated(
    big_store: BigStore, tmp_path: Path
) -> None:
    source = tmp_path / "line.txt"
    with source.open("wb") as out:
        out.write(HEAD.encode())
        block = b"z" * MIB
        for _ in range(300):
            out.write(block)
    store_size = source.stat().st_size
    big_store.upload("line.txt", source)
    report = in_fresh_process(
        big_store,
        [
            ["read", {"file_path": "line.txt"}],
            ["edit", {"file_path": "line.txt", "old_string": "z", "new_string": "y"}],
            ["write", {"file_path": "line.txt", "content": "small\n"}],
        ],
        tmp_path,
    )
    read, edit, write = report["results"]
    assert read["error"] is None
    assert f"1: {HEAD}... (line truncated to 2000 chars)\n" in read["head"]
    assert read["tail"].endswith(
        "\n\n(End of file - total 1 lines)\n"
        "(Lines longer than 2000 chars were cut; read cannot show the rest of them.)\n</content>"
    )
    assert read["total_lines"] == 1
    assert edit["error"] == {"name": "FsError", "code": "FS_TOO_LARGE"}
    assert str(store_size) in edit["head"]
    assert write["error"] is None  # the read authorised it; the old bytes were never loaded
    assert peak_growth_mib(report) < 100, report


def test_a_10_million_line_file_windows_at_the_end_with_an_exact_total(
    big_store: BigStore, tmp_path: Path
) -> None:
    lines = 10_000_000
    source = tmp_path / "lines.txt"
    with source.open("wb") as out:
        block = b"x\n" * 1_000_000
        for _ in range(9):
            out.write(block)
        out.write(b"x\n" * (1_000_000 - 3))
        out.write(b"line 9999998\nline 9999999\r\nline 10000000\n")
    big_store.upload("lines.txt", source)
    report = in_fresh_process(
        big_store,
        [
            ["read", {"file_path": "lines.txt", "offset": lines - 2}],
            ["read", {"file_path": "lines.txt"}],
            ["read", {"file_path": "lines.txt", "offset": lines + 1}],
            ["read", {"file_path": "lines.txt", "offset": 5_000_000, "limit": 2}],
        ],
        tmp_path,
    )
    end, start, past, middle = report["results"]
    assert end["error"] is None
    assert end["head"].endswith(
        "<content>\n9999998: line 9999998\n9999999: line 9999999\n10000000: line 10000000\n\n"
        "(End of file - total 10000000 lines)\n</content>"
    )
    assert start["total_lines"] == lines
    assert start["tail"].endswith(
        "2000: x\n\n(Showing lines 1-2000 of 10000000. Use offset=2001 to continue.)\n</content>"
    )
    assert past["error"] == {"name": "FsError", "code": "FS_NOT_FOUND"}
    assert "10000000 lines" in past["head"]
    assert "5000000: x\n5000001: x\n\n(Showing lines 5000000-5000001 of 10000000." in middle["head"]
    assert peak_growth_mib(report) < 100, report
