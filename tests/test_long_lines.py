"""Long lines the model can check: the change inside a long line, and how to see a cut read line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fsseam.testing.harness import Harness, harness_for, make_harness
from fsseam.testing.mounts import BACKENDS as STORES


@pytest.fixture(params=STORES)
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    yield from harness_for(request, tmp_path)


def _row(width: int, word_at: int, word: str) -> str:
    """``width`` characters of CSV-like filler with ``word`` at 0-based column ``word_at``."""
    filler = ("abc,def," * (width // 8 + 1))[:width]
    return filler[:word_at] + word + filler[word_at + len(word) :]


def test_edit_deep_in_a_1_mb_line_shows_the_new_text_with_its_column(harness: Harness) -> None:
    line = _row(1_000_000, 600_000, "UNIQUEWORD")
    harness.put("row.csv", f"header\n{line}\nfooter\n".encode())
    run = harness.run()
    harness.call("read", {"file_path": "row.csv"}, run)
    res = harness.call(
        "edit", {"file_path": "row.csv", "old_string": "UNIQUEWORD", "new_string": "REPLACED"}, run
    )
    path = f"{harness.root}/row.csv"
    new_line = line.replace("UNIQUEWORD", "REPLACED")
    window = new_line[600_000 - 50 : 600_000 + 250]
    assert res.text == (
        f"The file {path} has been updated successfully.\n\n"
        f"1: header\n2:600001: …{window}…\n3: footer"
    )
    assert "REPLACED" in window
    assert harness.get("row.csv") == f"header\n{new_line}\nfooter\n".encode()


def test_a_change_near_the_start_of_a_long_line_keeps_the_plain_cut(harness: Harness) -> None:
    line = _row(5000, 100, "EARLY")
    harness.put("r.txt", f"{line}\n".encode())
    run = harness.run()
    harness.call("read", {"file_path": "r.txt"}, run)
    res = harness.call(
        "edit", {"file_path": "r.txt", "old_string": "EARLY", "new_string": "LATE!"}, run
    )
    shown = line.replace("EARLY", "LATE!")[:300]
    assert res.text.endswith(f"\n\n1: {shown}... (line truncated to 300 chars)")


def test_write_of_a_long_line_shows_the_changed_part(harness: Harness) -> None:
    run = harness.run()
    old = "x" * 3000 + "\n"
    harness.call("write", {"file_path": "w.txt", "content": old}, run)
    res = harness.call("write", {"file_path": "w.txt", "content": "x" * 2000 + "NEW\n"}, run)
    assert res.text.endswith(f"\n\n1:2001: …{'x' * 50}NEW")


def test_cut_read_line_keeps_its_marker_and_the_footer_says_to_grep(
    tmp_path: Path,
) -> None:
    for h in make_harness("local", tmp_path, discovery=True):
        h.put("min.js", b"var a=1;\n" + b"f();" * 1000 + b"\n")
        res = h.call("read", {"file_path": "min.js"}, h.run())
        assert res.text.endswith(
            f"\n2: {'f();' * 500}... (line truncated to 2000 chars)\n\n"
            "(End of file - total 2 lines)\n"
            "(Lines longer than 2000 chars were cut. To see the rest of one, grep this file "
            "for text in it: each match shows with its column.)\n</content>"
        )
        assert res.value is not None
        assert res.value["lines"][1]["text"].endswith("... (line truncated to 2000 chars)")


def test_without_grep_the_footer_says_read_cannot_show_the_rest(harness: Harness) -> None:
    harness.put("min.js", b"f();" * 1000)
    res = harness.call("read", {"file_path": "min.js"}, harness.run())
    assert res.text.endswith(
        "... (line truncated to 2000 chars)\n\n(End of file - total 1 lines)\n"
        "(Lines longer than 2000 chars were cut; read cannot show the rest of them.)\n</content>"
    )


def test_no_hint_when_no_shown_line_was_cut(harness: Harness) -> None:
    harness.put("a.txt", b"short\n" + b"y" * 3000 + b"\n")
    res = harness.call("read", {"file_path": "a.txt", "limit": 1}, harness.run())
    assert res.text.endswith("(Showing lines 1-1 of 2. Use offset=2 to continue.)\n</content>")
