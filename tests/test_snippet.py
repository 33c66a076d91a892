"""The change comparison behind write/edit snippets and diffs: exact, bounded, linear.

Unit tests of :mod:`fsseam.tools.snippet`; the tool-level texts are pinned in
``tests/test_tools.py`` and ``tests/test_long_lines.py``.
"""

from __future__ import annotations

import re
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsseam import changes
from fsseam.text import apply_edit
from fsseam.tools.snippet import change_report, compare


def _apply_unified(old: str, diff: str) -> str:
    """Apply a unified diff made by :func:`compare` to ``old`` (a test's own patch tool)."""
    old_lines = _lines(old)
    lines = _lines(diff)[2:]
    out: list[str] = []
    cursor = 0
    index = 0
    while index < len(lines):
        header = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", lines[index])
        assert header, lines[index]
        start = int(header[1]) - (0 if header[2] == "0" else 1)
        out.extend(old_lines[cursor:start])
        cursor = start
        index += 1
        while index < len(lines) and not lines[index].startswith("@@"):
            line = lines[index]
            mark, body = line[0], line[1:]
            no_newline = index + 1 < len(lines) and lines[index + 1].startswith("\\")
            if no_newline:
                body = body.removesuffix("\n")
                index += 1
            if mark in " -":
                assert old_lines[cursor] == body, (old_lines[cursor], body)
                cursor += 1
            if mark in " +":
                out.append(body)
            index += 1
    out.extend(old_lines[cursor:])
    return "".join(out)


def _lcs_length(a: list[str], b: list[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, start=1):
            keep = row[j]
            row[j] = prev + 1 if x == y else max(row[j], row[j - 1])
            prev = keep
    return row[-1]


def _text(lines: list[str], final_newline: bool) -> str:
    text = "\n".join(lines)
    return text + "\n" if lines and final_newline else text


_line = st.sampled_from(["a", "b", "c", "", "x y", "\r", "a\r"])


@settings(max_examples=400, derandomize=True, deadline=None)
@given(
    st.lists(_line, max_size=25),
    st.lists(_line, max_size=25),
    st.booleans(),
    st.booleans(),
)
def test_diff_reproduces_the_new_text_with_fewest_changed_lines(
    old_lines: list[str], new_lines: list[str], old_nl: bool, new_nl: bool
) -> None:
    old, new = _text(old_lines, old_nl), _text(new_lines, new_nl)
    diff = compare("f", old, new).diff()
    assert diff is not None
    assert _apply_unified(old, diff) == new
    # Within its budget Myers is exact: the unchanged lines are a longest common subsequence.
    a, b = _lines(old), _lines(new)
    if a and b:
        ops = changes._middle(old, len(old), new, len(new), 0, 0, len(a), len(b))
        assert sum(i2 - i1 for tag, i1, i2, _, _ in ops if tag == "equal") == _lcs_length(a, b)


def _lines(text: str) -> list[str]:
    """Lines under read's model, each with its line break (the last may have none)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def _pathological(pairs: int) -> tuple[str, str]:
    """A replace_all of a token on every other line: difflib's quadratic case."""
    before = "x\nt\n" * pairs
    return before, apply_edit(before, "t", "u", replace_all=True).text


def test_replace_all_of_a_frequent_token_is_compared_in_linear_time() -> None:
    before, after = _pathological(1000)  # 4 KB: difflib took ~50 s here
    started = time.perf_counter()
    report = change_report("p.txt", before, after)
    assert time.perf_counter() - started < 1.0
    assert report.snippet.startswith("1: x\n2: u\n3: x\n4: u\n")
    assert report.diff is not None
    assert report.diff.startswith("--- p.txt\n+++ p.txt\n@@ -1,2000 +1,2000 @@\n x\n-t\n+u\n x\n")


def test_many_scattered_changes_stay_bounded_and_exact_when_line_counts_match() -> None:
    # Lines that survive on both sides defeat the set-aside step; the budget
    # then runs out and lines are paired one to one.
    before = "".join(f"{'tu'[i % 2]}\n" if i % 3 else "x\n" for i in range(30_000))
    after = before.replace("t\n", "u\n")
    started = time.perf_counter()
    change = compare("p", before, after)
    assert time.perf_counter() - started < 2.0
    diff = change.diff()
    assert diff is not None
    assert diff.endswith("more lines not shown)\n")
    assert change.snippet().startswith("1: x\n2: u\n3: u\n4: x\n")


def test_over_the_budget_line_counts_that_differ_give_one_replaced_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(changes, "COMPARE_BUDGET", 10)
    before = "".join(f"{i % 3}\n" for i in range(60))
    after = "".join(f"{i * 2 % 3}\n" for i in range(61))
    change = compare("p", before, after)
    assert [[op[0] for op in group] for group in change.groups] == [["equal", "replace"]]
    diff = change.diff()
    assert diff is not None
    assert _apply_unified(before, diff) == after


def test_over_the_budget_equal_line_counts_are_paired_one_to_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(changes, "COMPARE_BUDGET", 10)
    before = "".join(f"{i % 7}\n" for i in range(60))
    after = before.replace("3\n", "three\n").replace("5\n", "3\n")
    change = compare("p", before, after)
    diff = change.diff()
    assert diff is not None
    assert _apply_unified(before, diff) == after
    assert change.snippet().startswith("1: 0\n2: 1\n3: 2\n4: three\n5: 4\n6: 3\n7: 6\n")


def test_a_huge_middle_is_one_block_and_never_split() -> None:
    before = "".join(f"old {i}\n" for i in range(200_000))
    after = "".join(f"new {i}\n" for i in range(200_000))
    change = compare("p", before, after)
    assert [[op[0] for op in group] for group in change.groups] == [["replace"]]
    assert change.snippet().endswith("(199960 more lines not shown; read the file to see them)")


@pytest.mark.parametrize("case", ["create", "update", "unknown"])
def test_snippet_and_diff_of_a_big_write_take_kilobytes_not_the_content(case: str) -> None:
    content = "".join(f"line {i}\n" for i in range(2_000_000))  # 25 MB of short lines
    before = {"create": None, "unknown": None, "update": "a\n" + content[2:]}[case]
    tracemalloc.start()
    try:
        change = compare("p", before, content, created=case == "create")
        change.snippet()
        change.diff()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024, peak  # splitting the content took over 150 MB here


def test_created_diff_counts_what_it_cuts() -> None:
    content = "".join(f"{i:05d} {'z' * 94}\n" for i in range(1000))
    diff = compare("p", None, content, created=True).diff()
    assert diff is not None
    lines = diff.splitlines()
    shown = len(lines) - 3
    assert diff.startswith("--- /dev/null\n+++ p\n@@ -0,0 +1,1000 @@\n+00000 ")
    assert lines[-1] == f"... (diff cut at 32768 bytes; {1001 - shown} more lines not shown)"


def test_unknown_old_text_has_no_diff_and_shows_the_start() -> None:
    change = compare("p", None, "a\nb\n")
    assert change.diff() is None
    assert change.snippet() == "1: a\n2: b"


def test_a_last_line_without_newline_differs_from_one_with_it() -> None:
    change = compare("p", "a\nb", "a\nb\n")
    assert (
        change.diff() == "--- p\n+++ p\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
    )
    assert change.snippet() == "1: a\n2: b"


def test_the_long_line_window_documented_in_tools_md() -> None:
    line = "ab," * 200
    new = line[:450] + "NEW" + line[452:]
    report = change_report("row.csv", f"header\n{line}\nfooter\n", f"header\n{new}\nfooter\n")
    assert report.snippet == f"1: header\n2:451: …{new[400:]}\n3: footer"
    docs = (Path(__file__).parents[1] / "docs" / "tools.md").read_text()
    assert f"\n{report.snippet}\n```" in docs
