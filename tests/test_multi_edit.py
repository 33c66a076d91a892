"""The ``multi_edit`` tool: exact texts, all-or-nothing, the policy guard, hostile paths."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fsspec
import pytest

from fsseam import Context, FileTools, ObservationPolicy, open_fs
from fsseam.seam import FileSystem
from fsseam.testing.harness import Harness


def multi_context(fs: FileSystem, *, policy: bool = True, snippets: bool = True) -> Context:
    ctx = Context(fs)
    if policy:
        ctx.plugin(ObservationPolicy())
    ctx.plugin(FileTools(multi_edit=True, snippets=snippets))
    return ctx


@pytest.fixture(params=["local", "memory"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    if request.param == "local":

        def put(rel: str, data: bytes) -> None:
            path = tmp_path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

        yield Harness(
            multi_context(open_fs(str(tmp_path))),
            put,
            lambda rel: (tmp_path / rel).read_bytes(),
            str(tmp_path),
        )
    else:
        name = f"/multi-{tmp_path.name}"
        mem = fsspec.filesystem("memory")
        yield Harness(
            multi_context(open_fs(f"memory://{name}")),
            lambda rel, data: mem.pipe_file(f"{name}/{rel}", data),
            lambda rel: bytes(mem.cat_file(f"{name}/{rel}")),
            f"memory://{name}",
        )
        mem.rm(name, recursive=True)


def edits(*pairs: tuple[str, str] | tuple[str, str, bool]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for pair in pairs:
        item: dict[str, Any] = {"old_string": pair[0], "new_string": pair[1]}
        if len(pair) == 3:
            item["replace_all"] = pair[2]
        out.append(item)
    return out


def test_multi_edit_applies_all_in_order_in_one_write(harness: Harness) -> None:
    harness.put("m.py", b"import os\n\ndef f():\n    return os.sep\n")
    run = harness.run()
    harness.call("read", {"file_path": "m.py"}, run)
    path = f"{harness.root}/m.py"
    res = harness.call(
        "multi_edit",
        {
            "file_path": "m.py",
            "edits": edits(
                ("import os", "import sys"), ("os.sep", "sys.platform"), ("def f", "def g")
            ),
        },
        run,
    )
    assert not res.is_error, res.text
    assert res.text == (
        f"The file {path} has been updated successfully (3 edits applied).\n\n"
        "1: import sys\n2: \n3: def g():\n4:     return sys.platform"
    )
    assert res.value is not None
    assert set(res.value) == {"path", "edits", "replacements", "version", "diff"}
    assert (res.value["edits"], res.value["replacements"]) == (3, 3)
    assert res.value["diff"] == (
        f"--- {path}\n+++ {path}\n@@ -1,4 +1,4 @@\n-import os\n+import sys\n \n"
        "-def f():\n-    return os.sep\n+def g():\n+    return sys.platform\n"
    )
    assert harness.get("m.py") == b"import sys\n\ndef g():\n    return sys.platform\n"
    # The write was observed: a later edit needs no new read.
    again = harness.call("multi_edit", {"file_path": "m.py", "edits": edits(("g()", "h()"))}, run)
    assert again.text.startswith(f"The file {path} has been updated successfully (1 edit applied).")


def test_multi_edit_failure_applies_nothing_and_names_the_edit(harness: Harness) -> None:
    harness.put("m.txt", b"one\ntwo\nthree\n")
    run = harness.run()
    harness.call("read", {"file_path": "m.txt"}, run)
    path = f"{harness.root}/m.txt"
    res = harness.call(
        "multi_edit",
        {"file_path": "m.txt", "edits": edits(("one", "1"), ("  two", "2"), ("three", "3"))},
        run,
    )
    assert res.error == {"name": "FsError", "code": "FS_EDIT_NOT_FOUND"}
    assert res.text == (
        f'FS_EDIT_NOT_FOUND: edit 2 of 3: old_string was not found in "{path}"; it must match '
        "the file exactly (whitespace and indentation included) — read the file and copy the "
        "text.\nThe closest text is at line 2, which differs in indentation (line 2: no "
        "indentation in the file, 2 spaces in old_string):\n2: two\n"
        "Line numbers are those of the text after edit 1. None of the edits was applied."
    )
    ambiguous = harness.call(
        "multi_edit", {"file_path": "m.txt", "edits": edits(("o", "0"), ("one", "1"))}, run
    )
    assert ambiguous.error == {"name": "FsError", "code": "FS_AMBIGUOUS_EDIT"}
    assert ambiguous.text == (
        f'FS_AMBIGUOUS_EDIT: edit 1 of 2: old_string matches 2 places in "{path}" (lines 1 '
        "and 2); include more surrounding lines to make it unique, or set replace_all to "
        "replace every occurrence\nNone of the edits was applied."
    )
    assert harness.get("m.txt") == b"one\ntwo\nthree\n"


def test_multi_edit_is_guarded_like_edit(harness: Harness) -> None:
    harness.put("g.txt", b"a\n")
    run = harness.run()
    unseen = harness.call("multi_edit", {"file_path": "g.txt", "edits": edits(("a", "b"))}, run)
    assert unseen.text == (
        f'FS_NOT_OBSERVED: edit requires reading "{harness.root}/g.txt" first'
        " — read the file, then retry"
    )
    harness.call("read", {"file_path": "g.txt"}, run)
    harness.put("g.txt", b"a\nby someone else\n")
    stale = harness.call("multi_edit", {"file_path": "g.txt", "edits": edits(("a", "b"))}, run)
    assert stale.error == {"name": "FsError", "code": "FS_STALE_VERSION"}
    assert stale.text == (
        f'FS_STALE_VERSION: "{harness.root}/g.txt" was modified since it was read'
        " — what changed is shown below and now counts as read: retry the edit, adjusted to "
        "that change if needed (no need to read the file)\n"
        "What changed since you read it:\n@@ -1 +1,2 @@\n a\n+by someone else"
    )
    assert harness.get("g.txt") == b"a\nby someone else\n"
    missing = harness.call("multi_edit", {"file_path": "no.txt", "edits": edits(("a", "b"))}, run)
    assert missing.error == {"name": "FsError", "code": "FS_NOT_OBSERVED"}


def test_multi_edit_without_policy_or_snippets(harness: Harness) -> None:
    ctx = multi_context(harness.ctx.fs, policy=False, snippets=False)
    harness.put("u.txt", b"x y\r\nz\r\n")
    res = ctx.tools.execute_sync(
        "multi_edit",
        {"file_path": "u.txt", "edits": edits(("x", "X"), ("z", "1\n2", False))},
        None,
    )
    assert res.text == (
        f"The file {harness.root}/u.txt has been updated successfully (2 edits applied)."
    )
    assert res.value is not None
    assert res.value["diff"].startswith(f"--- {harness.root}/u.txt\n")
    assert harness.get("u.txt") == b"X y\r\n1\r\n2\r\n"


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ({"file_path": "a"}, "INVALID_ARGUMENTS: edits: is required"),
        ({"file_path": "a", "edits": []}, "INVALID_ARGUMENTS: edits: must not be empty"),
        ({"file_path": "a", "edits": "x"}, "INVALID_ARGUMENTS: edits: must be a list"),
        ({"file_path": "a", "edits": ["x"]}, "INVALID_ARGUMENTS: edit 1: must be an object"),
        (
            {"file_path": "a", "edits": edits(("a", "b"), ("", "c"))},
            "INVALID_ARGUMENTS: edit 2: old_string: must not be empty",
        ),
        (
            {"file_path": "a", "edits": edits(("a", "b"), ("c", "c"))},
            "INVALID_ARGUMENTS: edit 2: new_string: must differ from old_string "
            "(the edit would change nothing)",
        ),
        (
            {"file_path": "a", "edits": [{"old_string": "a"}]},
            "INVALID_ARGUMENTS: edit 1: new_string: is required",
        ),
        (
            {"file_path": "a", "edits": [{"old_string": "a", "new_string": "b", "all": True}]},
            "INVALID_ARGUMENTS: edit 1: all: is not a field of an edit",
        ),
        (
            {"file_path": "a", "edits": edits(("a", "b")), "replace_all": True},
            "INVALID_ARGUMENTS: replace_all: is not a parameter of multi_edit "
            "(parameters: file_path, edits)",
        ),
    ],
)
def test_multi_edit_invalid_arguments(harness: Harness, args: dict[str, Any], text: str) -> None:
    res = harness.call("multi_edit", args, harness.run())
    assert res.error == {"name": "ValidationError", "code": "INVALID_ARGUMENTS"}
    assert res.text == text


@pytest.mark.parametrize("bad", ["../outside.txt", "~/x", "a\\b", "a\x00b", "/etc/passwd", ".env"])
def test_multi_edit_hostile_paths_are_sandbox_denied(harness: Harness, bad: str) -> None:
    res = harness.call("multi_edit", {"file_path": bad, "edits": edits(("a", "b"))}, harness.run())
    assert res.error == {"name": "FsError", "code": "FS_SANDBOX_DENIED"}, res.text


def test_multi_edit_through_outside_symlink_is_sandbox_denied(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (root / "leak.txt").symlink_to(outside / "secret.txt")
    ctx = multi_context(open_fs(str(root)), policy=False)
    res = ctx.tools.execute_sync(
        "multi_edit", {"file_path": "leak.txt", "edits": edits(("secret", "pwned"))}, None
    )
    assert res.error == {"name": "FsError", "code": "FS_SANDBOX_DENIED"}
    assert (outside / "secret.txt").read_text() == "secret\n"


def test_file_tools_schemas_stay_pinned_and_multi_edit_is_opt_in(harness: Harness) -> None:
    plain = Context(harness.ctx.fs)
    plain.plugin(FileTools())
    assert [s["name"] for s in plain.tools.schemas()] == ["read", "write", "edit"]
    schemas = harness.ctx.tools.schemas()
    assert [s["name"] for s in schemas] == ["read", "write", "edit", "multi_edit"]
    pinned = json.loads(Path(__file__).with_name("tool_schemas.json").read_text())
    assert schemas[:3] == pinned
    extra = json.loads(Path(__file__).with_name("extra_tool_schemas.json").read_text())
    assert schemas[3] == extra[0]


def test_multi_edit_schema_matches_its_model() -> None:
    from fsseam.tools.schemas import MULTI_EDIT_SCHEMA, EditItem, MultiEditArgs

    assert list(MULTI_EDIT_SCHEMA["properties"]) == list(MultiEditArgs.model_fields)
    item = MULTI_EDIT_SCHEMA["properties"]["edits"]["items"]
    assert list(item["properties"]) == list(EditItem.model_fields)
    assert item["required"] == [n for n, f in EditItem.model_fields.items() if f.is_required()]
