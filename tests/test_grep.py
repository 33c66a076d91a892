"""grep's scanner and pipeline: exact texts, long lines, the byte cap, concurrency, memory.

The scanner is pure, so its promises are checked directly (any chunking
gives the same answer; windows equal a naive reference); the pipeline is
checked through the tool on local disk and the memory store, against
itself run one file at a time.
"""

from __future__ import annotations

import asyncio
import re
import time
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import fsspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsseam import Context, DiscoveryTools, open_fs
from fsseam.seam import FileSystem, FsTarget, FsTextStream, FsWalkEntry
from fsseam.testing.harness import DelegatingFileSystem
from fsseam.tools import GrepTool
from fsseam.tools.grep import GrepProgress
from fsseam.tools.patterns import GlobPattern, LineSearcher
from fsseam.tools.scan import FileScanner, Match

# Windows small enough to exercise the long-line machinery with small data.
SMALL = {"line_chars": 40, "max_line_bytes": 1024, "overlap": 256}


def scan(data: bytes, pattern: str, chunk: int, **options: Any) -> tuple[list[Match], bool]:
    scanner = FileScanner(LineSearcher(pattern), **options)
    for start in range(0, len(data), chunk):
        if not scanner.feed(data[start : start + chunk]):
            break
    else:
        scanner.finish()
    return scanner.found, scanner.cut


# -- the scanner ------------------------------------------------------------------------

_PIECES = [b"foo", b"needle", b" ", b"\n", b"\r\n", "été".encode(), b"x" * 37, b"^", b"$"]


@settings(
    derandomize=True,
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    pieces=st.lists(st.sampled_from(_PIECES), max_size=400),
    giant=st.integers(min_value=0, max_value=3),
    chunk=st.integers(min_value=1, max_value=3000),
    pattern=st.sampled_from(["needle", "^foo", "o$", r"\bfoo\b", "é+", "x+", "^", "t.*n"]),
    stop_at=st.one_of(st.none(), st.integers(min_value=0, max_value=6000)),
)
def test_scan_is_the_same_whatever_the_chunking(
    pieces: list[bytes], giant: int, chunk: int, pattern: str, stop_at: int | None
) -> None:
    data = b"".join(pieces)
    if giant:  # a line longer than max_line_bytes, searched in windows
        cut = len(data) // 2
        data = data[:cut] + b"x" * (700 * giant) + b" needle " * giant + data[cut:]
    options = {**SMALL, "stop_at": stop_at}
    whole = scan(data, pattern, max(1, len(data)), **options)
    assert scan(data, pattern, chunk, **options) == whole
    assert scan(data, pattern, 1, **options) == whole


def naive_windows(line: str, word: str, width: int) -> list[tuple[int, str]]:
    """What a long line shows, computed the obvious way."""
    shown: list[tuple[int, str]] = []
    end = 0
    for found in re.finditer(re.escape(word), line):
        if found.start() < end:
            continue  # inside the previous window
        start = max(0, found.start() - width // 5)
        before = line[start : found.start()]
        stop = min(len(line), found.start() + width - len(before))
        text = ("…" if start else "") + line[start:stop] + ("…" if stop < len(line) else "")
        shown.append((found.start() + 1, text))
        end = stop
    return shown


@settings(derandomize=True, max_examples=100, deadline=None)
@given(words=st.lists(st.sampled_from(["ab", "needle", "é", "日本", " ", "x" * 30]), max_size=200))
def test_scan_windows_equal_a_naive_reference(words: list[str]) -> None:
    line = "".join(words) + "needle"
    found, _ = scan(line.encode() + b"\n", "needle", 7, line_chars=40)
    if len(line) <= 40:
        assert found == [Match(1, None, line)]
    else:
        assert [(m.column, m.text) for m in found] == naive_windows(line, "needle", 40)
        assert all(m.line == 1 for m in found)


@settings(derandomize=True, max_examples=100, deadline=None)
@given(
    lines=st.lists(
        st.sampled_from(["", "foo", "needle", "a needle b", "fo", "oof", "é"]), max_size=60
    ),
    pattern=st.sampled_from(["needle", "^foo$", "o+f", "^$", "é|^a"]),
    chunk=st.integers(min_value=1, max_value=50),
    final_newline=st.booleans(),
)
def test_scan_short_lines_equal_a_line_by_line_reference(
    lines: list[str], pattern: str, chunk: int, final_newline: bool
) -> None:
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    found, _ = scan(text.encode(), pattern, chunk, line_chars=40)
    rows = text.split("\n") if text else []  # an empty file has no lines
    if text.endswith("\n"):
        rows = rows[:-1]  # a final newline does not start another line
    expected = [
        Match(number, None, row) for number, row in enumerate(rows, 1) if re.search(pattern, row)
    ]
    assert found == expected


def test_scan_anchors_never_match_at_a_window_or_cut_edge() -> None:
    giant = b"x" * 5000  # five windows of SMALL's 1024 bytes
    found, _ = scan(giant + b"\n", "^x", 100, **SMALL)
    assert [m.column for m in found] == [1]
    found, _ = scan(giant + b"\n", "x$", 100, **SMALL)
    assert [m.column for m in found] == [5000]
    found, cut = scan(giant + b"\n", "x$", 100, **SMALL, stop_at=2500)
    assert (found, cut) == ([], True)
    found, _ = scan(giant + b"\n", r"\bx", 100, **SMALL)
    assert [m.column for m in found] == [1]


def test_scan_finds_a_match_straddling_two_windows() -> None:
    # SMALL windows start every 768 bytes; put "needle" across the first edge.
    data = b"x" * 765 + b"needle" + b"x" * 3000 + b"\n"
    found, _ = scan(data, "needle", 64, **SMALL)
    assert [(m.column, m.text) for m in found] == [(766, f"…{'x' * 8}needle{'x' * 26}…")]


def test_scan_crlf_multibyte_columns_and_window_edges() -> None:
    line = "é" * 60 + "needle" + "é" * 10 + "\r\n"
    found, _ = scan(line.encode(), "needle", 5, line_chars=40)
    assert found == [Match(1, 61, f"…{'é' * 8}needle{'é' * 10}")]
    found, _ = scan(("needle" + "a" * 60 + "\n").encode(), "needle", 3, line_chars=40)
    assert found == [Match(1, 1, "needle" + "a" * 34 + "…")]


# -- exact texts through the tool --------------------------------------------------------


@pytest.fixture(params=["local", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[FileSystem, Any]]:
    """A fresh workspace and ``put(rel, data)`` writing into it behind fsseam's back."""
    if request.param == "local":

        def put(rel: str, data: bytes) -> None:
            path = tmp_path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

        yield open_fs(str(tmp_path)), put
    else:
        mem = fsspec.filesystem("memory")
        name = f"/grep-{tmp_path.name}"
        yield open_fs(f"memory://{name}"), lambda rel, data: mem.pipe_file(f"{name}/{rel}", data)
        if mem.exists(name):
            mem.rm(name, recursive=True)


def grep(fs: FileSystem, **args: Any) -> Any:
    options = args.pop("options", {})
    ctx = Context(fs)
    ctx.plugin(DiscoveryTools(**options))
    return ctx.tools.execute_sync("grep", args, None)


def test_grep_shows_the_word_at_column_600000_of_a_1_mb_line(
    store: tuple[FileSystem, Any],
) -> None:
    fs, put = store
    line = "a" * 599_999 + "unicorn" + "b" * 400_000
    put("bundle.min.js", f"first line\n{line}\nlast line\n".encode())
    res = grep(fs, pattern="unicorn")
    assert res.text == (
        f"bundle.min.js\n2:600000: …{'a' * 100}unicorn{'b' * 393}…\n\n(Found 1 match in 1 file.)"
    )
    assert res.value["matches"] == [
        {
            "path": "bundle.min.js",
            "line": 2,
            "column": 600_000,
            "text": f"…{'a' * 100}unicorn{'b' * 393}…",
        }
    ]


def test_grep_finds_a_match_at_byte_2_000_000_of_a_3_mb_line(
    store: tuple[FileSystem, Any],
) -> None:
    # Issue 10 item 8: the old scan matched the first 256 KiB of a giant line,
    # skipped the rest and still said the search was complete.
    fs, put = store
    put("data.csv", b"y" * 2_000_000 + b"MARKER" + b"z" * 1_000_000 + b"\n")
    res = grep(fs, pattern="MARKER")
    assert res.text == (
        f"data.csv\n1:2000001: …{'y' * 100}MARKER{'z' * 394}…\n\n(Found 1 match in 1 file.)"
    )
    assert res.value["complete"] is True


class Counting(DelegatingFileSystem):
    """Counts opens and bytes streamed; forwards the store's own walk."""

    def __init__(self, inner: FileSystem, latency: float = 0.0) -> None:
        super().__init__(inner)
        self.latency = latency
        """Seconds each open waits, like a GET (local and memory reads never yield)."""
        self.opened: list[str] = []
        self.streamed = 0
        self.open_now = 0
        self.most_open = 0
        self.listed_now = 0
        self.most_listed = 0
        self.sizes: dict[str, int] = {}

    def walk(self, target: FsTarget, *, max_depth: int | None = None) -> AsyncIterator[FsWalkEntry]:
        async def entries() -> AsyncIterator[FsWalkEntry]:
            async for entry in self.inner.walk(target, max_depth=max_depth):
                if entry.size is not None:
                    self.sizes[entry.target.display_path] = entry.size
                yield entry

        return entries()

    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[FsTextStream]:
        outer = self

        @asynccontextmanager
        async def opened() -> AsyncIterator[FsTextStream]:
            outer.opened.append(target.display_path)
            size = outer.sizes.get(target.display_path, 0)
            outer.open_now += 1
            outer.listed_now += size
            outer.most_open = max(outer.most_open, outer.open_now)
            outer.most_listed = max(outer.most_listed, outer.listed_now)
            try:
                if outer.latency:
                    await asyncio.sleep(outer.latency)
                async with outer.inner.stream_text(target) as stream:
                    yield _CountedStream(stream, outer)
            finally:
                outer.open_now -= 1
                outer.listed_now -= size

        return opened()


class _CountedStream(FsTextStream):
    def __init__(self, inner: FsTextStream, owner: Counting) -> None:
        self._inner = inner
        self._owner = owner
        self.info = inner.info

    async def __aiter__(self) -> AsyncIterator[str]:
        async for chunk in self._inner:
            if self._owner.latency:
                await asyncio.sleep(self._owner.latency)  # holding the chunk, like a GET body
            self._owner.streamed += len(chunk)
            yield chunk


def test_grep_byte_cap_cuts_a_single_line_file_and_says_so(
    store: tuple[FileSystem, Any],
) -> None:
    # Issue 10 item 8: a 2 GB single-line file was read in full and reported
    # complete. Now the cap applies inside the line, and the answer says so.
    fs, put = store
    put("one-line.txt", b"needle " + b"q" * (6 << 20) + b" needle")  # no line break at all
    counting = Counting(fs)
    res = grep(counting, pattern="needle", options={"max_grep_bytes": 2 << 20})
    assert res.text == (
        f"one-line.txt\n1:1: needle {'q' * 493}…\n\n"
        "(Found 1 match in 1 file, but the search stopped after 2097152 bytes; "
        "narrow the path or the glob to search the rest.)"
    )
    assert res.value["complete"] is False
    assert counting.streamed <= 3 << 20  # the cap, plus at most one chunk read ahead


# -- glob limits (issue 10 item 13) --------------------------------------------------------


def test_glob_with_thousands_of_globstars_is_invalid_arguments(
    store: tuple[FileSystem, Any],
) -> None:
    fs, put = store
    put("a.txt", b"x\n")
    ctx = Context(fs)
    ctx.plugin(DiscoveryTools())
    # The pattern: a RecursionError, shown as a generic I/O error, before.
    res = ctx.tools.execute_sync("glob", {"pattern": "**/" * 2000}, None)
    assert res.error == {"name": "ValidationError", "code": "INVALID_ARGUMENTS"}
    assert res.text == (
        "INVALID_ARGUMENTS: pattern: is 6000 characters long, over the limit of 4096"
    )
    res = ctx.tools.execute_sync("glob", {"pattern": "*/" * 200}, None)
    assert res.text == "INVALID_ARGUMENTS: pattern: has 200 path segments, over the limit of 128"
    res = ctx.tools.execute_sync("grep", {"pattern": "x", "glob": "*/" * 200 + "*"}, None)
    assert res.text == "INVALID_ARGUMENTS: glob: has 201 path segments, over the limit of 128"
    # A run of "**" is one segment: deep patterns answer (no recursion to run out of).
    assert ctx.tools.execute_sync("glob", {"pattern": "**/" * 1000 + "*.txt"}, None).text == (
        "a.txt\n\n(Found 1 file.)"
    )
    res = ctx.tools.execute_sync("glob", {"pattern": "{" * 5000}, None)
    assert res.text == (
        "INVALID_ARGUMENTS: pattern: is 5000 characters long, over the limit of 4096"
    )


def test_glob_matching_takes_linear_time_without_recursion() -> None:
    pattern = GlobPattern.parse("/".join(["**", "d"] * 60) + "/*.py")
    deep = "/".join(["d"] * 120) + "/x.py"
    started = time.perf_counter()
    assert pattern.matches(deep)
    assert not pattern.matches("/".join(["d"] * 59) + "/x.py")
    assert GlobPattern.parse("**/**/**/a/**/*.txt").matches("a/b/c.txt")
    assert GlobPattern.parse("**/**/**/a/**/*.txt").alternatives == (("**", "a", "**", "*.txt"),)
    assert time.perf_counter() - started < 1.0


def test_unclosed_braces_expand_in_linear_time() -> None:
    started = time.perf_counter()
    assert GlobPattern.parse("{" * 4000).alternatives == (("{" * 4000,),)
    assert GlobPattern.parse("{a,{b,c}}/{x}").alternatives == (
        ("a", "{x}"),
        ("b", "{x}"),
        ("c", "{x}"),
    )
    assert time.perf_counter() - started < 1.0


# -- the pipeline -----------------------------------------------------------------------


def make_tree(put: Any) -> None:
    for d in range(6):
        for f in range(25):
            body = "".join(
                f"line {n} of {d}/{f}: {'hit' if (n * 7 + f + d) % 11 == 0 else 'miss'}\n"
                for n in range(1, 1 + (f * 13 + d * 5) % 40)
            )
            put(f"d{d}/f{f:02}.txt", body.encode())
    put("d2/blob.bin", b"\x00hit\n")
    put("d3/latin.txt", b"hit caf\xe9\n")
    put("d4/long.txt", ("hit " + "w" * 3000 + " hit\n").encode())
    put("d5/bom.txt", "\ufeffhit with a BOM\n".encode())


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"grep_limit": 1},
        {"grep_limit": 37},
        {"max_grep_bytes": 1},
        {"max_grep_bytes": 5_000},
        {"max_grep_bytes": 31_337},
        {"max_grep_bytes": 60_000},
        {"max_entries": 50},
        {"grep_limit": 20, "max_grep_bytes": 9_000},
    ],
)
def test_grep_in_flight_answers_exactly_as_one_file_at_a_time(
    store: tuple[FileSystem, Any], options: dict[str, int]
) -> None:
    fs, put = store
    make_tree(put)
    sequential = grep(fs, pattern="hit", options={**options, "grep_concurrency": 1})
    for concurrency, buffer in ((32, 32 << 20), (7, 8 << 10), (3, 1)):
        res = grep(
            fs,
            pattern="hit",
            options={**options, "grep_concurrency": concurrency, "grep_buffer_bytes": buffer},
        )
        assert res.text == sequential.text, (concurrency, buffer)
        assert res.value == sequential.value


def test_grep_stops_fetching_once_the_match_cap_is_reached(
    store: tuple[FileSystem, Any],
) -> None:
    fs, put = store
    for i in range(300):
        put(f"many/{i:03}.txt", b"hit\nhit\n")
    counting = Counting(fs)
    res = grep(counting, pattern="hit", options={"grep_limit": 5, "grep_concurrency": 8})
    assert res.text.endswith(
        "(Showing the first 5 matches, in 3 files; there are more. "
        "Narrow the pattern, the path or the glob.)"
    )
    assert len(counting.opened) <= 3 + 8  # what was committed, plus one window in flight


class Hanging(Counting):
    """Files after the first never deliver a byte until cancelled."""

    def __init__(self, inner: FileSystem) -> None:
        super().__init__(inner)
        self.cancelled = 0

    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[FsTextStream]:
        if target.display_path.endswith("000.txt"):
            return self.inner.stream_text(target)
        owner = self

        @asynccontextmanager
        async def stuck() -> AsyncIterator[FsTextStream]:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                owner.cancelled += 1
                raise
            yield  # type: ignore[misc]  # never reached

        return stuck()


def test_grep_cancels_the_reads_in_flight_when_capped(store: tuple[FileSystem, Any]) -> None:
    fs, put = store
    for i in range(20):
        put(f"slow/{i:03}.txt", b"hit\nhit\nhit\n")
    hanging = Hanging(fs)
    started = time.perf_counter()
    res = grep(hanging, pattern="hit", options={"grep_limit": 2, "grep_concurrency": 8})
    assert time.perf_counter() - started < 5
    assert res.text.startswith("slow/000.txt\n1: hit\n2: hit\n\n(Showing the first 2 matches")
    assert hanging.cancelled == 7  # the seven other files in flight


def test_grep_keeps_the_listed_bytes_in_flight_within_the_buffer(
    store: tuple[FileSystem, Any],
) -> None:
    fs, put = store
    for i in range(40):
        put(f"big/{i:02}.txt", (f"row {i}\n" * 40_000).encode()[: 256 * 1024])
    counting = Counting(fs, latency=0.002)
    options = {"grep_buffer_bytes": 1 << 20, "grep_concurrency": 32}
    res = grep(counting, pattern="row 39$", options=options)
    assert res.text.startswith("big/39.txt\n1: row 39\n")
    assert 2 <= counting.most_open <= 4
    assert counting.most_listed <= 1 << 20


def peak_memory_of_grep(fs: FileSystem, buffer: int) -> int:
    ctx = Context(Counting(fs, latency=0.001))
    ctx.plugin(DiscoveryTools(grep_buffer_bytes=buffer))
    tracemalloc.start()
    try:
        res = ctx.tools.execute_sync("grep", {"pattern": "nothing like it"}, None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert res.text.startswith("No matches")
    return peak


def test_grep_memory_stays_bounded_by_the_buffer(store: tuple[FileSystem, Any]) -> None:
    # The CI-sized check of the byte budget; benchmarks/latency.py measures the
    # peak RSS of a grep over 1,000 objects of 1 MiB on S3.
    fs, put = store
    block = b"".join(b"%07d some ordinary text to search through\n" % n for n in range(24_000))
    for i in range(48):  # 48 files of 1 MiB
        put(f"mb/{i:02}.txt", block[: 1 << 20])
    # grep's own buffer, without the content cache: a file streamed to its end
    # is kept there too (up to cache_bytes, 64 MiB, an LRU bounded on its own).
    fs = open_fs(fs.root, cache_bytes=0)
    bounded = peak_memory_of_grep(fs, 4 << 20)
    unbounded = peak_memory_of_grep(fs, 1 << 40)  # only the 32 in flight limit it
    # 4 files of 1 MiB in flight, each held as its chunk, text and encoded copy.
    assert bounded < 24 << 20, bounded
    assert unbounded > 2 * bounded, (bounded, unbounded)


def test_grep_reports_progress_after_each_file(store: tuple[FileSystem, Any]) -> None:
    fs, put = store
    for i in range(5):
        put(f"p/{i}.txt", b"hit\n" * (i + 1))
    seen: list[GrepProgress] = []
    ctx = Context(fs)
    ctx.tools.register(GrepTool(progress=seen.append))
    ctx.tools.execute_sync("grep", {"pattern": "hit"}, None)
    assert seen == [
        GrepProgress(files=n, bytes=4 * n * (n + 1) // 2, matches=n * (n + 1) // 2)
        for n in range(1, 6)
    ]
