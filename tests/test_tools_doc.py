"""docs/tools.md quotes what the tools really say: each quoted text is produced by the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsseam import open_fs
from fsseam.testing.harness import Harness, make_harness

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


def _shown(text: str, root: Path) -> str:
    """A tool text as docs/tools.md shows it in full: the root as ``/home/me/ws``."""
    return text.replace(str(root), "/home/me/ws")


def test_the_quoted_delete_and_move_texts_are_what_the_tools_say(tmp_path: Path) -> None:
    from fsseam.testing.harness import execution, tools_context

    root = tmp_path / "ws"
    root.mkdir()
    for name, text in {"notes.txt": "x\n", "a.txt": "a\n", "old.txt": "o\n"}.items():
        (root / name).write_text(text)
    (root / "src").mkdir()
    fs = open_fs(str(root))
    ctx = tools_context(fs, manage=True)
    alice, fresh = execution(), execution()

    def call(tool: str, args: dict[str, object], run: object = alice) -> str:
        return _shown(ctx.tools.execute_sync(tool, args, run).text, root)  # type: ignore[arg-type]

    move = {"source_path": "a.txt", "destination_path": "old.txt"}
    assert f"```\n{call('move', move, fresh)}\n" in DOC  # unread source
    for path in ("notes.txt", "a.txt"):
        call("read", {"file_path": path})
    (root / "notes.txt").write_text("changed elsewhere\n")
    assert f"```\n{call('delete', {'file_path': 'notes.txt'})}\n```" in DOC
    assert f"\n{call('move', move)}\n" in DOC  # unread existing destination
    same = call("move", {"source_path": "a.txt", "destination_path": "./a.txt"})
    assert f"\n{same}\n```" in DOC
    call("read", {"file_path": "nope.txt"})  # seen missing
    quoted = [
        call("delete", {"file_path": "a.txt"}, fresh),
        call("delete", {"file_path": "src"}),
        call("delete", {"file_path": "nope.txt"}),
    ]
    for text in quoted:
        message = text.split(": ", 1)[1].removesuffix(" — read the file, then retry")
        assert message.replace('"/home/me/ws/', '"…/') in DOC, message
    assert (
        call("delete", {"file_path": "a.txt"})
        == "The file /home/me/ws/a.txt has been deleted successfully."
    )
    assert "`The file {path} has been deleted successfully.`" in DOC


def test_the_quoted_move_outcomes_and_the_halfway_text_are_what_move_says(
    tmp_path: Path,
) -> None:
    from fsseam.testing.harness import execution, tools_context

    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    fs = open_fs(str(root))
    ctx = tools_context(fs, manage=True)
    alice = execution()
    for path in ("a.txt", "b.txt"):
        ctx.tools.execute_sync("read", {"file_path": path}, alice)
    moved = ctx.tools.execute_sync("move", {"source_path": "a.txt", "destination_path": "b.txt"})
    assert moved.is_error  # no session: nothing was read
    moved = ctx.tools.execute_sync(
        "move", {"source_path": "a.txt", "destination_path": "b.txt"}, alice
    )
    src, dst = root / "a.txt", root / "b.txt"
    assert moved.text == (
        f"The file {src} has been moved to {dst} successfully. It replaced the file that was there."
    )
    assert "`The file {source} has been moved to {destination} successfully. It replaced" in DOC

    # Someone else changes the source after the move read it, before its delete.
    (root / "c.txt").write_text("c\n")
    ctx.tools.execute_sync("read", {"file_path": "c.txt"}, alice)
    dialect = fs.dialect
    real_delete = dialect.delete

    async def changed_first(path: str, expected: object) -> None:
        (root / "c.txt").write_text("changed by someone else\n")
        await real_delete(path, expected)  # type: ignore[arg-type]

    dialect.delete = changed_first  # type: ignore[method-assign]
    half = ctx.tools.execute_sync(
        "move", {"source_path": "c.txt", "destination_path": "d.txt"}, alice
    )
    assert (root / "c.txt").read_text() == "changed by someone else\n"
    assert (root / "d.txt").read_text() == "c\n"
    message = half.text.removesuffix(" — re-read the file, then retry").split(": ", 1)[1]
    quoted = message.replace(f'"{root}/c.txt"', '"…/a.txt"').replace(f'"{root}/d.txt"', '"…/b.txt"')
    assert half.text.startswith("FS_STALE_VERSION: ")
    assert quoted in DOC, quoted
