"""``read`` with a negative offset: the last N lines, exact totals, bounded memory, one pass."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsseam import text as textmod
from fsseam.testing.harness import Harness, harness_for
from fsseam.testing.mounts import BACKENDS as STORES
from fsseam.text import LineWindow, TailWindow


@pytest.fixture(params=STORES)
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    yield from harness_for(request, tmp_path)


def envelope(h: Harness, rel: str, content: str) -> str:
    return f"<path>{h.root}/{rel}</path>\n<type>file</type>\n<content>\n{content}\n</content>"


TEN = "".join(f"l{i}\n" for i in range(1, 11)).encode()


def test_negative_offset_shows_the_last_lines(harness: Harness) -> None:
    harness.put("n.txt", TEN)
    res = harness.call("read", {"file_path": "n.txt", "offset": -3}, harness.run())
    assert res.text == envelope(
        harness, "n.txt", "8: l8\n9: l9\n10: l10\n\n(End of file - total 10 lines)"
    )
    assert res.value is not None
    assert res.value["offset"] == 8
    assert res.value["total_lines"] == 10
    assert [line["number"] for line in res.value["lines"]] == [8, 9, 10]


def test_negative_offset_beyond_the_start_reads_the_whole_file(harness: Harness) -> None:
    harness.put("n.txt", b"a\r\nb\r\nc")  # CRLF, no final newline
    res = harness.call("read", {"file_path": "n.txt", "offset": -50}, harness.run())
    assert res.text == envelope(
        harness, "n.txt", "1: a\n2: b\n3: c\n\n(End of file - total 3 lines)"
    )


def test_negative_offset_of_an_empty_file_is_the_footer_alone(harness: Harness) -> None:
    harness.put("e.txt", b"\xef\xbb\xbf")
    res = harness.call("read", {"file_path": "e.txt", "offset": -1}, harness.run())
    assert res.text == envelope(harness, "e.txt", "(End of file - total 0 lines)")


def test_negative_offset_with_a_limit_pages_forward(harness: Harness) -> None:
    harness.put("n.txt", TEN)
    res = harness.call("read", {"file_path": "n.txt", "offset": -5, "limit": 2}, harness.run())
    assert res.text == envelope(
        harness, "n.txt", "6: l6\n7: l7\n\n(Showing lines 6-7 of 10. Use offset=8 to continue.)"
    )


def test_last_lines_over_the_byte_cap_show_from_their_start_with_the_capped_footer(
    harness: Harness,
) -> None:
    line = "z" * 999  # 1000 bytes with its newline: 51 fit in 50 KiB
    harness.put("wide.txt", ("".join(f"{line}\n" for _ in range(100))).encode())
    res = harness.call("read", {"file_path": "wide.txt", "offset": -60}, harness.run())
    assert res.text.endswith(
        "\n\n(Output capped. Showing lines 41-91. Use offset=92 to continue.)\n</content>"
    )
    assert res.text.count("\n41: z") == 1


def test_tail_read_counts_as_observing_the_file(harness: Harness) -> None:
    harness.put("n.txt", TEN)
    run = harness.run()
    harness.call("read", {"file_path": "n.txt", "offset": -1}, run)
    res = harness.call(
        "edit", {"file_path": "n.txt", "old_string": "l2\n", "new_string": "two\n"}, run
    )
    assert not res.is_error, res.text


def test_tail_read_of_a_missing_file_is_not_found(harness: Harness) -> None:
    res = harness.call("read", {"file_path": "gone.txt", "offset": -3}, harness.run())
    assert res.error == {"name": "FsError", "code": "FS_NOT_FOUND"}


def test_tail_read_keeps_the_truncation_mark_of_long_lines(harness: Harness) -> None:
    harness.put("long.txt", b"head\n" + b"y" * 5000 + b"\nend\n")
    res = harness.call("read", {"file_path": "long.txt", "offset": -2}, harness.run())
    assert f"\n2: {'y' * 2000}... (line truncated to 2000 chars)\n3: end\n\n" in res.text


def test_too_many_long_last_lines_are_read_in_a_second_pass(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(textmod, "TAIL_MAX_CHARS", 10_000)
    content = "".join(f"{i}:{'w' * 3000}\n" for i in range(1, 21))
    harness.put("w.txt", content.encode())
    res = harness.call("read", {"file_path": "w.txt", "offset": -15}, harness.run())
    mark = "... (line truncated to 2000 chars)"
    shown = "\n".join(f"{i}: {i}:{'w' * (1999 - len(str(i)))}{mark}" for i in range(6, 21))
    assert res.text == envelope(
        harness,
        "w.txt",
        f"{shown}\n\n(End of file - total 20 lines)\n"
        "(Lines longer than 2000 chars were cut; read cannot show the rest of them.)",
    )


def _reference(text: str, count: int, limit: int, max_bytes: int, cut: int) -> LineWindow:
    total = textmod.count_lines(text)
    window = LineWindow(
        offset=max(1, total - count + 1), limit=limit, max_bytes=max_bytes, max_line_chars=cut
    )
    window.feed(text)
    window.finish()
    return window


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "bb", "\n", "\r\n", "é", "x" * 30, "\n\n"]), max_size=40),
    st.integers(1, 12),
    st.integers(1, 8),
    st.integers(1, 12),
    st.sampled_from([4, 40, 100_000]),
)
def test_tail_window_equals_a_forward_window_from_the_same_line(
    pieces: list[str], count: int, limit: int, step: int, max_chars: int
) -> None:
    text = "".join(pieces)
    tail = TailWindow(count=count, max_line_chars=5, max_chars=max_chars)
    for start in range(0, len(text), step):
        tail.feed(text[start : start + step])
    window = tail.window(limit=limit, max_bytes=60)
    expected = _reference(text, count, limit, 60, 5)
    assert tail.total == expected.total
    if window is None:  # overflowed: the caller reads from tail.first again
        assert max_chars < 100_000
        assert tail.first == expected.first
        return
    assert (window.first, window.lines, window.truncated, window.capped, window.total) == (
        expected.first,
        expected.lines,
        expected.truncated,
        expected.capped,
        expected.total,
    )


def test_tail_window_memory_is_bounded_by_the_lines_kept() -> None:
    tail = TailWindow(count=3)
    chunk = "".join(f"line {i}\n" for i in range(100_000))  # ~1 MB, like a store's chunk
    for _ in range(20):
        tail.feed(chunk)
    assert sum(len(piece) for piece, _ in tail._pieces) <= 2 * len(chunk)
    giant = TailWindow(count=2)
    for _ in range(50):
        giant.feed("g" * 1_000_000)  # one 50 MB line
    assert sum(len(piece) for piece, _ in giant._pieces) == 2002
    window = giant.window()
    assert window is not None
    assert window.total == 1
    assert window.truncated == {0}
