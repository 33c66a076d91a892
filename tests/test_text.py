"""The pure text rules: decoding, the line model, literal edits, the read window."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsseam.seam import FsAmbiguousEdit, FsEditNotFound, FsNotText
from fsseam.text import (
    BOM,
    LineWindow,
    StreamDecoder,
    apply_edit,
    count_lines,
    decode,
    dominant_newline,
    encode,
    encode_content,
)


def window_of(text: str, chunk: int = 7, **kwargs: int) -> LineWindow:
    window = LineWindow(**kwargs)
    for start in range(0, len(text), chunk):
        window.feed(text[start : start + chunk])
    window.finish()
    return window


def test_decode_strips_bom_and_reports_it() -> None:
    assert decode(BOM + b"hi") == ("hi", True)
    assert decode(b"hi") == ("hi", False)


@pytest.mark.parametrize("data", [b"a\x00b", b"\xff\xfe", b"ok \xc3"])
def test_decode_refuses_binary_and_invalid_utf8(data: bytes) -> None:
    with pytest.raises(FsNotText):
        decode(data, "x.bin")


def test_encode_restores_bom() -> None:
    assert encode("hi", True) == BOM + b"hi"
    assert encode("hi", False) == b"hi"


def test_stream_decoder_handles_split_bom_and_multibyte_chars() -> None:
    data = BOM + "héllo wörld €".encode()
    decoder = StreamDecoder()
    out = "".join(decoder.feed(data[i : i + 1]) for i in range(len(data)))
    out += decoder.feed(b"", final=True)
    assert out == "héllo wörld €"
    assert decoder.bom


def test_stream_decoder_refuses_truncated_sequence_at_end() -> None:
    decoder = StreamDecoder()
    decoder.feed(b"abc\xe2\x82")
    with pytest.raises(FsNotText):
        decoder.feed(b"", final=True)


def test_stream_decoder_refuses_nul_in_a_later_chunk() -> None:
    decoder = StreamDecoder()
    decoder.feed(b"text " * 10)
    with pytest.raises(FsNotText):
        decoder.feed(b"more\x00")


@pytest.mark.parametrize(
    ("text", "lines"),
    [("", 0), ("a", 1), ("a\n", 1), ("a\nb", 2), ("a\n\n", 2), ("\n", 1), ("a\r\nb\r\n", 2)],
)
def test_count_lines_final_newline_starts_no_line(text: str, lines: int) -> None:
    assert count_lines(text) == lines
    assert window_of(text).total == lines


def test_dominant_newline_counts_crlf_against_bare_lf() -> None:
    assert dominant_newline("a\r\nb\r\nc\n") == "\r\n"
    assert dominant_newline("a\r\nb\nc\n") == "\n"
    assert dominant_newline("no breaks") == "\n"


def test_edit_preserves_crlf() -> None:
    result = apply_edit("one\r\ntwo\r\nthree\r\n", "two", "2")
    assert result.text == "one\r\n2\r\nthree\r\n"


def test_edit_matches_across_crlf_with_lf_old_string() -> None:
    result = apply_edit("one\r\ntwo\r\nthree\r\n", "one\ntwo\n", "uno\ndos\n")
    assert result.text == "uno\r\ndos\r\nthree\r\n"


def test_edit_old_string_with_crlf_matches_lf_file() -> None:
    assert apply_edit("a\nb\nc\n", "a\r\nb", "x").text == "x\nc\n"


def test_edit_leaves_mixed_endings_untouched_outside_the_match() -> None:
    text = "a\r\nb\nc\r\nd\n"
    assert apply_edit(text, "c", "C").text == "a\r\nb\nC\r\nd\n"


def test_edit_new_string_takes_dominant_ending() -> None:
    assert apply_edit("a\r\nb\r\n", "b", "b\nc").text == "a\r\nb\r\nc\r\n"
    assert apply_edit("a\nb\n", "b", "b\r\nc").text == "a\nb\nc\n"


def test_edit_keeps_missing_final_newline() -> None:
    assert apply_edit("a\r\nb", "b", "B").text == "a\r\nB"


def test_edit_replace_all_counts_every_occurrence() -> None:
    result = apply_edit("x\r\ny x\r\nx", "x", "z", replace_all=True)
    assert result == type(result)("z\r\ny z\r\nz", 3)


def test_edit_ambiguous_without_replace_all() -> None:
    with pytest.raises(FsAmbiguousEdit, match="matches 2 places"):
        apply_edit("x x", "x", "y")


@pytest.mark.parametrize("old", ["", "missing"])
def test_edit_empty_or_missing_old_string_is_not_found(old: str) -> None:
    with pytest.raises(FsEditNotFound):
        apply_edit("text", old, "y")


def test_edit_match_ending_at_crlf_consumes_both_bytes() -> None:
    assert apply_edit("a\r\nb\r\n", "a\n", "").text == "b\r\n"


def test_window_strips_trailing_cr_and_truncates_long_lines() -> None:
    window = window_of("ab\r\n" + "x" * 30 + "\n", max_line_chars=10)
    assert window.lines == ["ab", "x" * 10]
    assert window.truncated == {1}


def test_window_offset_and_limit_with_exact_total() -> None:
    text = "".join(f"{i}\n" for i in range(1, 101))
    window = window_of(text, offset=50, limit=3)
    assert window.lines == ["50", "51", "52"]
    assert (window.first, window.last, window.total) == (50, 52, 100)
    assert not window.capped


def test_window_byte_cap_stops_but_counts_on() -> None:
    text = "".join(f"{i:04d}\n" for i in range(1000))  # 5 bytes per line with newline
    window = window_of(text, chunk=64, max_bytes=50)
    assert len(window.lines) == 10
    assert window.capped
    assert window.total == 1000


def test_window_always_shows_one_line_even_over_the_cap() -> None:
    window = window_of("y" * 100 + "\nz\n", max_bytes=10)
    assert window.lines == ["y" * 100]
    assert window.capped


def test_window_of_huge_single_line_keeps_memory_bounded() -> None:
    window = LineWindow(max_line_chars=2000)
    chunk = "q" * (1 << 20)
    for _ in range(64):  # 64 MiB of one line
        window.feed(chunk)
    window.finish()
    assert window.total == 1
    assert window.lines == ["q" * 2000]
    assert sum(len(part) for part in window._partial) == 0


def reference_window(
    text: str, offset: int, limit: int, max_bytes: int, max_chars: int
) -> tuple[list[str], int, bool]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    shown: list[str] = []
    used = 0
    capped = False
    for raw in lines[offset - 1 : offset - 1 + limit]:
        line = raw.removesuffix("\r")[:max_chars]
        size = len(line.encode()) + 1
        if shown and used + size > max_bytes:
            capped = True
            break
        used += size
        shown.append(line)
    return shown, len(lines), capped


@settings(max_examples=400, derandomize=True, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from("ab\r\né€ \t"), max_size=300),
    chunk=st.integers(1, 40),
    offset=st.integers(1, 30),
    limit=st.integers(1, 30),
    max_bytes=st.integers(1, 80),
    max_chars=st.integers(1, 12),
)
def test_window_matches_reference_model(
    text: str, chunk: int, offset: int, limit: int, max_bytes: int, max_chars: int
) -> None:
    window = window_of(
        text, chunk, offset=offset, limit=limit, max_bytes=max_bytes, max_line_chars=max_chars
    )
    shown, total, capped = reference_window(text, offset, limit, max_bytes, max_chars)
    assert window.lines == shown
    assert window.total == total
    assert window.capped == capped


def test_encode_content_never_writes_two_boms_and_encode_inverts_decode() -> None:
    assert encode_content("\ufeffx", True) == BOM + b"x"
    assert encode_content("\ufeffx", False) == BOM + b"x"
    assert encode_content("x", True) == BOM + b"x"
    assert encode(*decode(BOM + BOM + b"x")) == BOM + BOM + b"x"  # edits keep every byte
