"""docs/tools.md quotes what the tools really say: each quoted text is produced by the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import Harness
from tests.tool_harness import make_harness

DOC = (Path(__file__).parents[1] / "docs" / "tools.md").read_text()


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    root = tmp_path / "ws"
    root.mkdir()
    return next(make_harness("local", root))


def _quoted(text: str, root: str) -> str:
    """A tool text as docs/tools.md quotes it: the workspace root shown as ``…``."""
    return text.replace(f'"{root}/', '"…/')


def test_every_quoted_error_text_is_what_the_tools_say(harness: Harness) -> None:
    harness.put("notes.txt", b"x\n")
    harness.put("src/inner.txt", b"x\n")
    harness.put("a.txt", b"y = 2\nx = 1\nx = 1\n")
    run = harness.run()
    harness.call("read", {"file_path": "a.txt"}, run)
    fresh = {"fresh": True}  # a session that has read nothing
    calls: list[tuple[str, dict[str, object], dict[str, bool]]] = [
        ("read", {"file_path": "nope.txt"}, {}),
        ("edit", {"file_path": "nope.txt", "old_string": "a", "new_string": "b"}, {}),
        ("read", {"file_path": "notes.txt/x"}, {}),
        ("read", {"file_path": "src"}, {}),
        ("read", {"file_path": "../x"}, {}),
        ("read", {"file_path": ".env"}, {}),
        ("write", {"file_path": "a.txt", "content": "x"}, fresh),
        ("edit", {"file_path": "a.txt", "old_string": "a", "new_string": "b"}, fresh),
        ("edit", {"file_path": "a.txt", "old_string": "x = 1", "new_string": "z"}, {}),
        ("read", {"file_path": "a.txt", "limit": True}, {}),
        ("read", {"file_path": "a.txt", "offset": 0}, {}),
        (
            "edit",
            {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": "yes"},
            {},
        ),
        ("read", {"file_path": "a.txt", "extra": 1}, {}),
    ]
    for tool, args, how in calls:
        text = harness.call(tool, args, harness.run() if how else run).text
        message = (
            _quoted(text, harness.root)
            .split(": ", 1)[1]
            .removesuffix(" — read the file, then retry")
        )
        assert message.replace(harness.root, "/home/me/ws") in DOC, (tool, args, message)


def test_the_quoted_read_footers_and_hints_are_the_codes(harness: Harness) -> None:
    from fsseam.tools.render import GREP_HINT, NO_GREP_HINT

    assert GREP_HINT.format(n=2000) in DOC
    assert NO_GREP_HINT.format(n=2000) in DOC
    harness.put("t.txt", "".join(f"l{i}\n" for i in range(1, 11)).encode())
    res = harness.call("read", {"file_path": "t.txt", "offset": -3}, harness.run())
    shown = res.text.split("<content>\n", 1)[1].removesuffix("\n</content>")
    assert f"<content>\n{shown}\n</content>" in DOC
