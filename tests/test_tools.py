"""What the model sees: exact texts, values, errors and schemas of read/write/edit.

Every test runs on local disk and on the memory store; swapping the backend
must not change a byte of the output except paths.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest

from fsseam import Agent, ToolExecution, open_fs
from fsseam.testing.harness import Harness, Session, make_context


@pytest.fixture(params=["local", "memory"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    if request.param == "local":
        fs = open_fs(str(tmp_path))

        def put(rel: str, data: bytes) -> None:
            path = tmp_path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

        def get(rel: str) -> bytes:
            return (tmp_path / rel).read_bytes()

        yield Harness(make_context(fs), put, get, str(tmp_path))
    else:
        name = f"/tools-{tmp_path.name}"
        fs = open_fs(f"memory://{name}")
        mem = fsspec.filesystem("memory")
        yield Harness(
            make_context(fs),
            lambda rel, data: mem.pipe_file(f"{name}/{rel}", data),
            lambda rel: bytes(mem.cat_file(f"{name}/{rel}")),
            f"memory://{name}",
        )
        mem.rm(name, recursive=True)


def path_of(h: Harness, rel: str) -> str:
    return f"{h.root}/{rel}"


def test_read_renders_exact_envelope(harness: Harness) -> None:
    harness.put("a.txt", b"first line\nsecond line\n")
    res = harness.call("read", {"file_path": "a.txt"}, harness.run())
    assert not res.is_error
    assert res.text == (
        f"<path>{path_of(harness, 'a.txt')}</path>\n<type>file</type>\n<content>\n"
        "1: first line\n2: second line\n\n(End of file - total 2 lines)\n</content>"
    )
    assert res.value is not None
    assert res.value["lines"] == [
        {"number": 1, "text": "first line"},
        {"number": 2, "text": "second line"},
    ]
    assert res.value["total_lines"] == 2
    assert res.value["offset"] == 1
    assert res.value["path"] == path_of(harness, "a.txt")
    assert set(res.value) == {"path", "offset", "lines", "total_lines", "version"}


def test_read_empty_file_is_footer_alone(harness: Harness) -> None:
    harness.put("e.txt", b"")
    res = harness.call("read", {"file_path": "e.txt"}, harness.run())
    assert res.text == (
        f"<path>{path_of(harness, 'e.txt')}</path>\n<type>file</type>\n<content>\n"
        "(End of file - total 0 lines)\n</content>"
    )
    res = harness.call("read", {"file_path": "e.txt", "offset": 1}, harness.run())
    assert not res.is_error


def test_read_hides_trailing_cr_and_bom(harness: Harness) -> None:
    harness.put("w.txt", b"\xef\xbb\xbfone\r\ntwo\r\n")
    res = harness.call("read", {"file_path": "w.txt"}, harness.run())
    assert "\n1: one\n2: two\n\n(End of file - total 2 lines)\n" in res.text


def test_read_line_limit_footer(harness: Harness) -> None:
    harness.put("n.txt", "".join(f"l{i}\n" for i in range(1, 11)).encode())
    res = harness.call("read", {"file_path": "n.txt", "offset": 3, "limit": 2}, harness.run())
    assert res.text.endswith(
        "3: l3\n4: l4\n\n(Showing lines 3-4 of 10. Use offset=5 to continue.)\n</content>"
    )
    assert res.value is not None
    assert res.value["total_lines"] == 10


def test_read_default_limit_is_2000_lines(harness: Harness) -> None:
    harness.put("big.txt", "".join(f"{i}\n" for i in range(3000)).encode())
    res = harness.call("read", {"file_path": "big.txt"}, harness.run())
    assert res.text.endswith(
        "(Showing lines 1-2000 of 3000. Use offset=2001 to continue.)\n</content>"
    )


def test_read_byte_cap_footer(harness: Harness) -> None:
    line = "z" * 999  # 1000 bytes with its newline
    harness.put("wide.txt", (line + "\n").encode() * 60)
    res = harness.call("read", {"file_path": "wide.txt"}, harness.run())
    assert res.text.endswith(
        "(Output capped. Showing lines 1-51. Use offset=52 to continue.)\n</content>"
    )
    assert res.value is not None
    assert res.value["total_lines"] == 60


def test_read_truncates_long_lines(harness: Harness) -> None:
    harness.put("long.txt", b"a" * 2500 + b"\nshort\n")
    res = harness.call("read", {"file_path": "long.txt"}, harness.run())
    assert f"\n1: {'a' * 2000}... (line truncated to 2000 chars)\n2: short\n" in res.text


def test_read_offset_past_end_is_not_found(harness: Harness) -> None:
    harness.put("s.txt", b"one\ntwo\n")
    res = harness.call("read", {"file_path": "s.txt", "offset": 3}, harness.run())
    assert res.is_error
    assert res.error == {"name": "FsError", "code": "FS_NOT_FOUND"}
    assert res.text == (
        f'FS_NOT_FOUND: offset 3 is past the end of "{path_of(harness, "s.txt")}" '
        "(2 lines); use an offset from 1 to 2"
    )


@pytest.mark.parametrize(
    ("data", "code"),
    [(b"\x00\x01binary", "FS_NOT_TEXT"), (b"caf\xe9", "FS_NOT_TEXT")],
)
def test_read_refuses_non_text(harness: Harness, data: bytes, code: str) -> None:
    harness.put("bin.dat", data)
    res = harness.call("read", {"file_path": "bin.dat"}, harness.run())
    assert res.is_error
    assert res.error == {"name": "FsError", "code": code}


def test_read_directory_is_not_regular_file(harness: Harness) -> None:
    harness.put("dir/inner.txt", b"x")
    res = harness.call("read", {"file_path": "dir"}, harness.run())
    assert res.error == {"name": "FsError", "code": "FS_NOT_REGULAR_FILE"}


@pytest.mark.parametrize("bad", ["../outside.txt", "~/x", "a\\b", "a\x00b", "/etc/passwd"])
def test_paths_outside_or_malformed_are_sandbox_denied(harness: Harness, bad: str) -> None:
    for tool, args in [
        ("read", {"file_path": bad}),
        ("write", {"file_path": bad, "content": "x"}),
        ("edit", {"file_path": bad, "old_string": "a", "new_string": "b"}),
    ]:
        res = harness.call(tool, args, harness.run())
        assert res.error == {"name": "FsError", "code": "FS_SANDBOX_DENIED"}, (tool, res.text)


def test_write_create_then_update_texts(harness: Harness) -> None:
    run = harness.run()
    path = path_of(harness, "new/file.txt")
    res = harness.call("write", {"file_path": "new/file.txt", "content": "v1\n"}, run)
    assert res.text == f"File created successfully at: {path}\n\n1: v1"
    assert res.value is not None
    assert res.value["operation"] == "create"
    assert set(res.value) == {"path", "operation", "version", "diff"}
    assert res.value["diff"] == f"--- /dev/null\n+++ {path}\n@@ -0,0 +1 @@\n+v1\n"
    res = harness.call("write", {"file_path": "new/file.txt", "content": "v2\n"}, run)
    assert res.text == f"The file {path} has been updated successfully.\n\n1: v2"
    assert res.value is not None
    assert res.value["operation"] == "update"
    assert res.value["diff"] == f"--- {path}\n+++ {path}\n@@ -1 +1 @@\n-v1\n+v2\n"
    assert harness.get("new/file.txt") == b"v2\n"


def test_success_texts_without_snippets_are_designs_first_lines(harness: Harness) -> None:
    ctx = make_context(harness.ctx.fs, snippets=False)
    run = harness.run()
    path = path_of(harness, "plain.txt")
    res = ctx.tools.execute_sync("write", {"file_path": "plain.txt", "content": "a a\n"}, run)
    assert res.text == f"File created successfully at: {path}"
    res = ctx.tools.execute_sync("write", {"file_path": "plain.txt", "content": "a b a\n"}, run)
    assert res.text == f"The file {path} has been updated successfully."
    assert res.value is not None
    assert res.value["diff"] == f"--- {path}\n+++ {path}\n@@ -1 +1 @@\n-a a\n+a b a\n"
    edit = {"file_path": "plain.txt", "old_string": "b", "new_string": "B"}
    assert ctx.tools.execute_sync("edit", edit, run).text == (
        f"The file {path} has been updated successfully."
    )
    edit = {"file_path": "plain.txt", "old_string": "a", "new_string": "A", "replace_all": True}
    assert ctx.tools.execute_sync("edit", edit, run).text == (
        f"The file {path} has been updated. All occurrences were successfully replaced."
    )


def test_edit_snippet_shows_the_changed_region_with_context(harness: Harness) -> None:
    harness.put("long.py", "".join(f"line {i}\n" for i in range(1, 31)).encode())
    run = harness.run()
    harness.call("read", {"file_path": "long.py"}, run)
    path = path_of(harness, "long.py")
    res = harness.call(
        "edit", {"file_path": "long.py", "old_string": "line 15\n", "new_string": "fifteen\n"}, run
    )
    assert res.text == (
        f"The file {path} has been updated successfully.\n\n"
        "12: line 12\n13: line 13\n14: line 14\n15: fifteen\n16: line 16\n17: line 17\n"
        "18: line 18"
    )
    assert res.value is not None
    assert res.value["diff"] == (
        f"--- {path}\n+++ {path}\n@@ -12,7 +12,7 @@\n line 12\n line 13\n line 14\n"
        "-line 15\n+fifteen\n line 16\n line 17\n line 18\n"
    )


def test_edit_snippet_separates_regions_and_caps_its_length(harness: Harness) -> None:
    harness.put("r.txt", "".join(f"x{i % 10} {i}\n" for i in range(1, 201)).encode())
    run = harness.run()
    harness.call("read", {"file_path": "r.txt"}, run)
    path = path_of(harness, "r.txt")
    res = harness.call(
        "edit",
        {"file_path": "r.txt", "old_string": "x3 ", "new_string": "X3 ", "replace_all": True},
        run,
    )
    head = f"The file {path} has been updated. All occurrences were successfully replaced.\n\n"
    assert res.text.startswith(
        head + "1: x1 1\n2: x2 2\n3: X3 3\n4: x4 4\n5: x5 5\n6: x6 6\n...\n"
        "10: x0 10\n11: x1 11\n12: x2 12\n13: X3 13\n"
    )
    lines = res.text[len(head) :].split("\n")
    assert len(lines) == 41
    assert lines[-1] == "... (104 more lines not shown; read the file to see them)"


def test_write_snippet_when_the_old_text_is_unknown_or_unchanged(harness: Harness) -> None:
    harness.put("bin.dat", b"\x00\x01")
    harness.put("same.txt", b"same\n")
    run = harness.run()
    path = path_of(harness, "bin.dat")
    harness.call("read", {"file_path": "bin.dat"}, run)  # FS_NOT_TEXT: not observed
    ctx = make_context(harness.ctx.fs, policy=False)
    res = ctx.tools.execute_sync("write", {"file_path": "bin.dat", "content": "now text\n"}, None)
    assert res.text == f"The file {path} has been updated successfully.\n\n1: now text"
    assert res.value is not None
    assert res.value["diff"] is None
    harness.call("read", {"file_path": "same.txt"}, run)
    res = harness.call("write", {"file_path": "same.txt", "content": "same\n"}, run)
    assert res.text == f"The file {path_of(harness, 'same.txt')} has been updated successfully."
    assert res.value is not None
    assert res.value["diff"] == ""


def test_write_over_unread_file_is_refused(harness: Harness) -> None:
    harness.put("x.txt", b"theirs")
    res = harness.call("write", {"file_path": "x.txt", "content": "mine"}, harness.run())
    assert res.error == {"name": "FsError", "code": "FS_NOT_OBSERVED"}
    assert res.text.endswith(" — read the file, then retry")
    assert harness.get("x.txt") == b"theirs"


def test_write_after_foreign_change_is_stale_and_shows_the_change(harness: Harness) -> None:
    harness.put("x.txt", b"v1\n")
    run = harness.run()
    harness.call("read", {"file_path": "x.txt"}, run)
    harness.put("x.txt", b"v2 by someone else\n")
    res = harness.call("write", {"file_path": "x.txt", "content": "mine\n"}, run)
    assert res.error == {"name": "FsError", "code": "FS_STALE_VERSION"}
    assert res.text == (
        f'FS_STALE_VERSION: "{path_of(harness, "x.txt")}" was modified since it was read'
        " — what changed is shown below and now counts as read: write again with content "
        "that keeps that change (no need to read the file)\n"
        "What changed since you read it:\n@@ -1 +1 @@\n-v1\n+v2 by someone else"
    )
    assert harness.get("x.txt") == b"v2 by someone else\n"
    # The change was shown, so the session's next write needs no read.
    mine = "v2 by someone else, mine\n"
    again = harness.call("write", {"file_path": "x.txt", "content": mine}, run)
    assert not again.is_error, again.text
    assert harness.get("x.txt") == b"v2 by someone else, mine\n"


def test_write_after_a_change_this_mount_never_saw_the_base_of_says_re_read(
    harness: Harness,
) -> None:
    # A mount without a content cache does not know what the session read: no
    # change to show, so the remedy is to read, and nothing counts as read.
    ctx = make_context(open_fs(harness.root, cache_bytes=0))
    harness.put("x.txt", b"v1\n")
    run = harness.run()
    ctx.tools.execute_sync("read", {"file_path": "x.txt"}, run)
    harness.put("x.txt", b"v2\n")
    res = ctx.tools.execute_sync("write", {"file_path": "x.txt", "content": "mine\n"}, run)
    assert res.text == (
        f'FS_STALE_VERSION: "{path_of(harness, "x.txt")}" was modified since it was read'
        " — re-read the file, then retry"
    )
    again = ctx.tools.execute_sync("write", {"file_path": "x.txt", "content": "mine\n"}, run)
    assert again.error == {"name": "FsError", "code": "FS_STALE_VERSION"}
    assert harness.get("x.txt") == b"v2\n"


def test_edit_before_read_is_not_observed(harness: Harness) -> None:
    harness.put("e.txt", b"hello")
    res = harness.call(
        "edit", {"file_path": "e.txt", "old_string": "hello", "new_string": "bye"}, harness.run()
    )
    assert res.text == (
        f'FS_NOT_OBSERVED: edit requires reading "{path_of(harness, "e.txt")}" first'
        " — read the file, then retry"
    )
    assert harness.get("e.txt") == b"hello"


def test_edit_texts_and_value(harness: Harness) -> None:
    harness.put("e.txt", b"a b a\n")
    run = harness.run()
    harness.call("read", {"file_path": "e.txt"}, run)
    path = path_of(harness, "e.txt")
    res = harness.call("edit", {"file_path": "e.txt", "old_string": "b", "new_string": "B"}, run)
    assert res.text == f"The file {path} has been updated successfully.\n\n1: a B a"
    assert res.value is not None
    assert res.value["replacements"] == 1
    assert set(res.value) == {"path", "replacements", "version", "diff"}
    res = harness.call(
        "edit",
        {"file_path": "e.txt", "old_string": "a", "new_string": "A", "replace_all": True},
        run,
    )
    assert res.text == (
        f"The file {path} has been updated. All occurrences were successfully replaced.\n\n1: A B A"
    )
    assert res.value is not None
    assert res.value["replacements"] == 2
    assert harness.get("e.txt") == b"A B A\n"


def test_edit_after_foreign_change_is_stale_then_recovers(harness: Harness) -> None:
    harness.put("c.txt", b"one\r\ntwo\r\n")
    run = harness.run()
    harness.call("read", {"file_path": "c.txt"}, run)
    harness.put("c.txt", b"one\r\ntwo\r\nthree\r\n")
    args = {"file_path": "c.txt", "old_string": "two\n", "new_string": "2\n"}
    assert harness.call("edit", args, run).error == {"name": "FsError", "code": "FS_STALE_VERSION"}
    harness.call("read", {"file_path": "c.txt"}, run)
    assert not harness.call("edit", args, run).is_error
    assert harness.get("c.txt") == b"one\r\n2\r\nthree\r\n"


def test_edit_of_file_read_as_absent_is_not_found(harness: Harness) -> None:
    run = harness.run()
    assert harness.call("read", {"file_path": "gone.txt"}, run).error == {
        "name": "FsError",
        "code": "FS_NOT_FOUND",
    }
    res = harness.call("edit", {"file_path": "gone.txt", "old_string": "a", "new_string": "b"}, run)
    assert res.error == {"name": "FsError", "code": "FS_NOT_FOUND"}


def test_read_as_absent_then_write_creates(harness: Harness) -> None:
    run = harness.run()
    harness.call("read", {"file_path": "fresh.txt"}, run)
    res = harness.call("write", {"file_path": "fresh.txt", "content": "x"}, run)
    assert res.value is not None
    assert res.value["operation"] == "create"


def test_windowed_read_authorises_edit(harness: Harness) -> None:
    harness.put("w.txt", "".join(f"{i}\n" for i in range(100)).encode())
    run = harness.run()
    harness.call("read", {"file_path": "w.txt", "offset": 90, "limit": 1}, run)
    res = harness.call(
        "edit", {"file_path": "w.txt", "old_string": "\n42\n", "new_string": "\nforty-two\n"}, run
    )
    assert not res.is_error, res.text


def test_sessions_are_separate(harness: Harness) -> None:
    harness.put("s.txt", b"x")
    alice, bob = harness.run(Session()), harness.run(Session())
    harness.call("read", {"file_path": "s.txt"}, alice)
    res = harness.call("edit", {"file_path": "s.txt", "old_string": "x", "new_string": "y"}, bob)
    assert res.error == {"name": "FsError", "code": "FS_NOT_OBSERVED"}


def test_no_session_reads_but_cannot_overwrite_or_edit(harness: Harness) -> None:
    harness.put("n.txt", b"x")
    assert not harness.call("read", {"file_path": "n.txt"}, None).is_error
    edit = harness.call("edit", {"file_path": "n.txt", "old_string": "x", "new_string": "y"}, None)
    assert edit.error == {"name": "FsError", "code": "FS_NOT_OBSERVED"}
    write = harness.call("write", {"file_path": "n.txt", "content": "y"}, None)
    assert write.error == {"name": "FsError", "code": "FS_NOT_OBSERVED"}
    assert not harness.call("write", {"file_path": "brand-new.txt", "content": "y"}, None).is_error
    assert harness.get("n.txt") == b"x"


def test_tools_work_unguarded_without_policy(harness: Harness) -> None:
    ctx = make_context(harness.ctx.fs, policy=False)
    harness.put("u.txt", b"old")
    res = ctx.tools.execute_sync(
        "edit", {"file_path": "u.txt", "old_string": "old", "new_string": "new"}, None
    )
    assert not res.is_error, res.text
    res = ctx.tools.execute_sync("write", {"file_path": "u.txt", "content": "over"}, None)
    assert not res.is_error, res.text
    assert harness.get("u.txt") == b"over"


@pytest.mark.parametrize(
    ("tool", "args", "text"),
    [
        ("read", {}, "INVALID_ARGUMENTS: file_path: is required"),
        ("read", {"file_path": 3}, "INVALID_ARGUMENTS: file_path: must be a string"),
        (
            "read",
            {"file_path": "a", "offset": 0},
            "INVALID_ARGUMENTS: offset: must not be 0 "
            "(1 is the first line; -N starts N lines before the end)",
        ),
        (
            "read",
            {"file_path": "a", "limit": "many"},
            "INVALID_ARGUMENTS: limit: must be an integer",
        ),
        ("write", {"file_path": "a"}, "INVALID_ARGUMENTS: content: is required"),
        (
            "edit",
            {"file_path": "a", "old_string": "", "new_string": "x"},
            "INVALID_ARGUMENTS: old_string: must not be empty",
        ),
        (
            "edit",
            {"file_path": "a", "old_string": "x", "new_string": "x"},
            "INVALID_ARGUMENTS: new_string: must differ from old_string "
            "(the edit would change nothing)",
        ),
        (
            "edit",
            {"file_path": "a", "old_string": "x", "new_string": "y", "replace_al": True},
            "INVALID_ARGUMENTS: replace_al: is not a parameter of edit "
            "(parameters: file_path, old_string, new_string, replace_all)",
        ),
    ],
)
def test_invalid_arguments_name_the_field(
    harness: Harness, tool: str, args: dict[str, object], text: str
) -> None:
    res = harness.call(tool, args, harness.run())
    assert res.is_error
    assert res.error == {"name": "ValidationError", "code": "INVALID_ARGUMENTS"}
    assert res.text == text


def test_execute_never_raises_for_model_input(harness: Harness) -> None:
    for tool, args in [
        ("nope", {}),
        ("read", None),
        ("read", ["x"]),
        ("edit", {"file_path": None}),
    ]:
        res = harness.ctx.tools.execute_sync(tool, args, None)  # type: ignore[arg-type]
        assert res.is_error


def test_read_output_is_identical_across_backends(tmp_path: Path) -> None:
    content = b"\xef\xbb\xbfalpha\r\nbeta\n\n" + b"g" * 2100 + b"\nlast"
    outputs = []
    local_fs = open_fs(str(tmp_path))
    (tmp_path / "f.txt").write_bytes(content)
    mem = fsspec.filesystem("memory")
    mem.pipe_file("/same-bytes/f.txt", content)
    for fs in (local_fs, open_fs("memory://same-bytes")):
        ctx = make_context(fs)
        res = ctx.tools.execute_sync("read", {"file_path": "f.txt"}, None)
        outputs.append(res.text.replace(fs.root, "<ROOT>"))  # type: ignore[attr-defined]
    assert outputs[0] == outputs[1]


def test_schemas_are_pinned(harness: Harness) -> None:
    schemas = harness.ctx.tools.schemas()
    assert [s["name"] for s in schemas] == ["read", "write", "edit"]
    pinned = Path(__file__).with_name("tool_schemas.json")
    assert json.loads(pinned.read_text()) == schemas


def test_schema_formats_wrap_the_same_parameters(harness: Harness) -> None:
    plain = harness.ctx.tools.schemas()
    openai = harness.ctx.tools.schemas(format="openai")
    anthropic = harness.ctx.tools.schemas(format="anthropic")
    mcp = harness.ctx.tools.schemas(format="mcp")
    for p, o, a, m in zip(plain, openai, anthropic, mcp, strict=True):
        assert o == {"type": "function", "function": p}
        assert a == {
            "name": p["name"],
            "description": p["description"],
            "input_schema": p["parameters"],
        }
        assert m == {
            "name": p["name"],
            "description": p["description"],
            "inputSchema": p["parameters"],
        }


def test_schema_fields_match_validation_models() -> None:
    from fsseam.tools.schemas import (
        EDIT_SCHEMA,
        READ_SCHEMA,
        WRITE_SCHEMA,
        EditArgs,
        ReadArgs,
        WriteArgs,
    )

    for schema, model in [
        (READ_SCHEMA, ReadArgs),
        (WRITE_SCHEMA, WriteArgs),
        (EDIT_SCHEMA, EditArgs),
    ]:
        assert list(schema["properties"]) == list(model.model_fields)
        required = [name for name, f in model.model_fields.items() if f.is_required()]
        assert schema["required"] == required


def test_edit_not_found_names_the_near_miss(harness: Harness) -> None:
    harness.put("n.py", b"def f():\n\treturn 1\n")
    run = harness.run()
    harness.call("read", {"file_path": "n.py"}, run)
    path = path_of(harness, "n.py")
    args = {"file_path": "n.py", "old_string": "def f():\n    return 1\n", "new_string": "x"}
    res = harness.call("edit", args, run)
    assert res.error == {"name": "FsError", "code": "FS_EDIT_NOT_FOUND"}
    assert res.text == (
        f'FS_EDIT_NOT_FOUND: old_string was not found in "{path}"; it must match the file '
        "exactly (whitespace and indentation included) — read the file and copy the text.\n"
        "The closest text is at lines 1-2, which differs in tabs vs spaces "
        "(line 2: 1 tab in the file, 4 spaces in old_string):\n"
        "1: def f():\n2: \treturn 1"
    )
    assert harness.get("n.py") == b"def f():\n\treturn 1\n"


def test_edit_ambiguous_lists_every_match_line(harness: Harness) -> None:
    harness.put("a.txt", b"x = 1\ny = 2\nx = 1\n\nx = 1\n")
    run = harness.run()
    harness.call("read", {"file_path": "a.txt"}, run)
    res = harness.call(
        "edit", {"file_path": "a.txt", "old_string": "x = 1", "new_string": "z"}, run
    )
    assert res.error == {"name": "FsError", "code": "FS_AMBIGUOUS_EDIT"}
    assert res.text == (
        f'FS_AMBIGUOUS_EDIT: old_string matches 3 places in "{path_of(harness, "a.txt")}" '
        "(lines 1, 3 and 5); include more surrounding lines to make it unique, or set "
        "replace_all to replace every occurrence"
    )
    assert harness.get("a.txt") == b"x = 1\ny = 2\nx = 1\n\nx = 1\n"


def test_snippet_cuts_long_lines_and_the_diff_says_when_it_is_cut(harness: Harness) -> None:
    run = harness.run()
    path = path_of(harness, "wide.txt")
    wide = "w" * 400
    res = harness.call("write", {"file_path": "wide.txt", "content": wide + "\n"}, run)
    assert res.text == (
        f"File created successfully at: {path}\n\n1: {'w' * 300}... (line truncated to 300 chars)"
    )
    many = "".join(f"{i:05d} " + "z" * 94 + "\n" for i in range(1000))  # 100 KB
    res = harness.call("write", {"file_path": "wide.txt", "content": many}, run)
    assert res.value is not None
    diff = res.value["diff"]
    assert len(diff.encode()) <= 32 * 1024 + 100
    lines = diff.splitlines()  # 2 file headers, then 1 hunk header + 1001 lines, cut
    shown = len(lines) - 3
    assert lines[-1] == f"... (diff cut at 32768 bytes; {1002 - shown} more lines not shown)"
    assert diff.startswith(f"--- {path}\n+++ {path}\n@@ -1 +1,1000 @@\n-{wide}\n+00000 ")


def test_error_texts_are_identical_across_backends(tmp_path: Path) -> None:
    texts = []
    for fs in (open_fs(str(tmp_path)), open_fs(f"memory://errors-{tmp_path.name}")):
        ctx = make_context(fs)
        run = ToolExecution(agent=Agent(session=Session()))
        call = ctx.tools.execute_sync
        call("write", {"file_path": "d/f.txt", "content": "v1\n"}, None)
        results = [
            call("read", {"file_path": "missing.txt"}, run),
            call("read", {"file_path": "d"}, run),
            call("write", {"file_path": "d/f.txt", "content": "x"}, run),
        ]
        call("read", {"file_path": "d/f.txt"}, run)
        other = ToolExecution(agent=Agent(session=Session()))
        call("read", {"file_path": "d/f.txt"}, other)
        call("edit", {"file_path": "d/f.txt", "old_string": "v1", "new_string": "v2"}, other)
        results.append(
            call("edit", {"file_path": "d/f.txt", "old_string": "v1", "new_string": "v3"}, run)
        )
        texts.append([r.text.replace(fs.root, "<ROOT>") for r in results])
    assert texts[0] == texts[1]
