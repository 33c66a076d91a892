"""Why an edit did not apply: exact near-miss and ambiguity texts, bounded time, never applied."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsseam import diagnostics
from fsseam.diagnostics import explain_not_found, find_near_miss, match_places
from fsseam.seam import FsAmbiguousEdit, FsEditNotFound, FsEditRequest
from fsseam.text import apply_edit, apply_edits

HEAD = (
    'old_string was not found in "f.py"; it must match the file exactly '
    "(whitespace and indentation included) — read the file and copy the text.\n"
)


def not_found(text: str, old: str) -> str:
    with pytest.raises(FsEditNotFound) as caught:
        apply_edit(text, old, "REPLACED", name="f.py")
    message = caught.value.message
    assert message.startswith(HEAD)
    return message[len(HEAD) :]


@pytest.mark.parametrize(
    ("text", "old", "explained"),
    [
        (
            "def f():\n\treturn 1\n",
            "def f():\n    return 1\n",
            "The closest text is at lines 1-2, which differs in tabs vs spaces "
            "(line 2: 1 tab in the file, 4 spaces in old_string):\n1: def f():\n2: \treturn 1",
        ),
        (
            "class A:\n    def f(self):\n        return 1\n",
            "    def f(self):\n    return 1\n",
            "The closest text is at lines 2-3, which differs in indentation "
            "(line 3: 8 spaces in the file, 4 spaces in old_string):\n"
            "2:     def f(self):\n3:         return 1",
        ),
        (
            "x = 1  \ny = 2\n",
            "x = 1\ny = 2\n",
            "The closest text is at lines 1-2, which differs in trailing whitespace "
            "(line 1: 2 trailing spaces in the file, no trailing whitespace in old_string):\n"
            "1: x = 1  \n2: y = 2",
        ),
        (
            "a\nlast",
            "last\n",
            "The closest text is at line 2, which differs in line endings (old_string ends "
            "with a line break, but line 2, the last of the file, has none):\n2: last",
        ),
        (
            "top\none\rtwo\n",
            "one\ntwo\n",
            "The closest text is at line 2, which differs in line endings (the file separates "
            "these lines with bare carriage returns (\\r), old_string with line breaks):\n"
            "2: one\rtwo",
        ),
        (
            'print("hi")\n',
            "print('hi')",
            "The closest text is at line 1, which differs in quote style "
            '(line 1: " in the file, \' in old_string):\n1: print("hi")',
        ),
        (
            "msg = “hello”\n",
            'msg = "hello"\n',
            "The closest text is at line 1, which differs in quote style "
            '(line 1: “” in the file, " in old_string):\n1: msg = “hello”',
        ),
        (
            "x = foo(a,b)\n",
            "x = foo(a, b)",
            "The closest text is at line 1, which differs in spacing inside lines "
            "(line 1: spaces between words or symbols differ):\n1: x = foo(a,b)",
        ),
        (
            "alpha\nbeta\ngamma\n",
            "2: beta\n3: gamma\n",
            "The closest text is at lines 2-3, which differs in line-number prefixes "
            '(old_string starts its lines with read\'s "N: ", which is not part of the file):\n'
            "2: beta\n3: gamma",
        ),
        (
            "def f(self):\n    x = compute()\n    return x\n",
            "def f(self):\n    x = compute_all()\n    return x\n",
            "The closest text is at lines 1-3, which differs in other text (line 2: "
            '"x = compute()" in the file, "x = compute_all()" in old_string):\n'
            "1: def f(self):\n2:     x = compute()\n3:     return x",
        ),
        (
            "def compute_total(items):\n    return sum(items)\n",
            "def compute_totals(items):",
            "The closest text is at line 1, which differs in other text (line 1: "
            '"def compute_total(items):" in the file, "def compute_totals(items):" in '
            "old_string):\n1: def compute_total(items):",
        ),
        (
            "if x:\n\tcall(“a”)  \n",
            "if x:\n    call('a')\n",
            "The closest text is at lines 1-2, which differs in tabs vs spaces (line 2: 1 tab "
            "in the file, 4 spaces in old_string); trailing whitespace (line 2: 2 trailing "
            "spaces in the file, no trailing whitespace in old_string); quote style (line 2: "
            "“” in the file, ' in old_string):\n1: if x:\n2: \tcall(“a”)  ",
        ),
        (
            "x\ndef f():\n    pass",
            "def f():\n    pass\n    return 1\n",
            "The closest text is at lines 2-3, which differs in length (old_string has 3 "
            "lines, but the file ends at line 3):\n2: def f():\n3:     pass",
        ),
        (
            "s = 'a' + \"b\"\n",
            "s = \"a\" + 'b'\n",
            "The closest text is at line 1, which differs in quote style (line 1: the same "
            "quote characters in other places):\n1: s = 'a' + \"b\"",
        ),
        (
            'aa \n a "“ ""\ta',
            '“"',
            "The closest text is at line 2, which differs in whitespace (the lines match once "
            'spaces are ignored):\n2:  a "“ ""\ta',
        ),
        (
            "hello world\n",
            "zzz qqq",
            "No similar text was found either; check that this is the right file.",
        ),
    ],
    ids=[
        "tabs",
        "indentation",
        "trailing",
        "final-newline",
        "bare-cr",
        "quotes",
        "curly-quotes",
        "spacing",
        "number-prefixes",
        "other-text",
        "similar-line",
        "several",
        "length",
        "swapped-quotes",
        "whitespace",
        "nothing",
    ],
)
def test_not_found_names_the_near_miss(text: str, old: str, explained: str) -> None:
    assert not_found(text, old) == explained


def test_near_miss_excerpt_is_capped_and_long_lines_cut() -> None:
    text = "".join(f"\tline {i} " + "y" * 300 + "\n" for i in range(20))
    old = text.replace("\t", "  ")
    explained = not_found(text, old)
    lines = explained.split("\n")
    assert lines[0] == (
        "The closest text is at lines 1-20, which differs in tabs vs spaces "
        "(line 1: 1 tab in the file, 2 spaces in old_string):"
    )
    assert lines[1] == "1: \tline 0 " + "y" * 192 + "..."
    assert len(lines) == 1 + 12 + 1
    assert lines[-1] == "... (8 more lines)"


def test_crlf_files_are_diagnosed_on_their_lines() -> None:
    text = "one\r\n    two\r\nthree\r\n"
    assert not_found(text, "one\n  two\n") == (
        "The closest text is at lines 1-2, which differs in indentation "
        "(line 2: 4 spaces in the file, 2 spaces in old_string):\n1: one\n2:     two"
    )


@pytest.mark.parametrize(
    ("text", "needle", "places"),
    [
        ("a\na\n", "a", "lines 1 and 2"),
        ("a a\nb\na\n", "a", "lines 1 and 3"),
        ("ab ab ab", "ab", "line 1"),
        ("".join("x\n" for _ in range(30)), "x", "lines " + ", ".join(map(str, range(1, 21)))
         + " and 10 more"),
    ],
)  # fmt: skip
def test_match_places_lists_distinct_lines(text: str, needle: str, places: str) -> None:
    assert match_places(text, needle) == places


def test_ambiguous_message_lists_the_lines() -> None:
    with pytest.raises(FsAmbiguousEdit) as caught:
        apply_edit("x\ny\nx\n", "x", "z", name="f.py")
    assert caught.value.message == (
        'old_string matches 2 places in "f.py" (lines 1 and 3); include more surrounding '
        "lines to make it unique, or set replace_all to replace every occurrence"
    )


def test_multi_edit_errors_name_the_edit_and_say_none_applied() -> None:
    with pytest.raises(FsEditNotFound) as caught:
        apply_edits("a b\n", [FsEditRequest("a", "A"), FsEditRequest("c", "C")], name="f.py")
    assert caught.value.message == (
        'edit 2 of 2: old_string was not found in "f.py"; it must match the file exactly '
        "(whitespace and indentation included) — read the file and copy the text.\n"
        "No similar text was found either; check that this is the right file.\n"
        "Line numbers are those of the text after edit 1. None of the edits was applied."
    )
    with pytest.raises(FsAmbiguousEdit) as ambiguous:
        apply_edits(
            "a\nb\na\n",
            [FsEditRequest("b", "B"), FsEditRequest("B", "b"), FsEditRequest("a", "c")],
            name="f.py",
        )
    assert ambiguous.value.message == (
        'edit 3 of 3: old_string matches 2 places in "f.py" (lines 1 and 3); include more '
        "surrounding lines to make it unique, or set replace_all to replace every occurrence\n"
        "Line numbers are those of the text after edits 1-2. None of the edits was applied."
    )
    with pytest.raises(FsEditNotFound) as first:
        apply_edits("a\n", [FsEditRequest("q", "Q")], name="f.py")
    assert first.value.message.endswith(
        "check that this is the right file.\nNone of the edits was applied."
    )
    with pytest.raises(FsEditNotFound) as empty:
        apply_edits("a\n", [], name="f.py")
    assert empty.value.message == 'no edits were given for "f.py"; pass at least one'


def test_diagnosis_of_a_big_file_takes_bounded_time() -> None:
    lines = [f"    value_{i} = compute({i}, 'x')  # comment {i}" for i in range(200_000)]
    text = "\n".join(lines) + "\n"  # about 10 MB
    old = "value_123456 = compute(123456, 'y')\n    value_123457"
    started = time.perf_counter()
    explained = not_found(text, old)
    assert time.perf_counter() - started < 5
    assert explained.startswith("The closest text is at lines 123457-123458")
    started = time.perf_counter()
    not_found(text, "nothing like this anywhere at all ~~~")
    assert time.perf_counter() - started < 5


def test_diagnosis_of_lines_that_all_look_alike_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every line passes the cheapest similarity bound, so each would cost the
    # pure-Python ones: 5,000 such lines took 1.7 s on the event loop.
    calls = {"quick_ratio": 0, "ratio": 0}

    class Counted(diagnostics.SequenceMatcher):  # the real matcher, its calls counted
        def quick_ratio(self) -> float:
            calls["quick_ratio"] += 1
            return super().quick_ratio()

        def ratio(self) -> float:
            calls["ratio"] += 1
            return super().ratio()

    monkeypatch.setattr(diagnostics, "SequenceMatcher", Counted)
    rng = random.Random(1)
    rows = ["".join(rng.choice("ab ") for _ in range(200)) for _ in range(6000)]
    old = "".join(rng.choice("ab ") for _ in range(200)) + "\nzzz\n"
    assert not_found("\n".join(rows) + "\n", old)
    assert calls["quick_ratio"] <= diagnostics.FUZZY_MAX_QUICK
    assert calls["ratio"] <= diagnostics.FUZZY_MAX_RATIOS


def test_find_near_miss_ignores_blank_needles() -> None:
    assert find_near_miss("a\n", "  \n") is None
    assert explain_not_found("a\n", "\n\n").startswith("No similar text")


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet=" \t\n\r'\"“”abc", max_size=60),
    old=st.text(alphabet=" \t\n\r'\"“”abc", min_size=1, max_size=12),
)
def test_a_near_miss_is_never_applied(text: str, old: str) -> None:
    if old.replace("\r\n", "\n") in text.replace("\r\n", "\n"):
        return
    with pytest.raises(FsEditNotFound):
        apply_edit(text, old, "NEW")
