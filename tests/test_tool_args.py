"""Strict arguments for every tool, ``null`` as the default, and the write path's own limits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fsseam import FileTools
from fsseam.testing.harness import Harness, make_harness
from fsseam.tools.schemas import (
    EDIT_SCHEMA,
    GLOB_SCHEMA,
    GREP_SCHEMA,
    LS_SCHEMA,
    MULTI_EDIT_SCHEMA,
    READ_SCHEMA,
    WRITE_SCHEMA,
    EditArgs,
    EditItem,
    GlobArgs,
    GrepArgs,
    LsArgs,
    MultiEditArgs,
    ReadArgs,
    WriteArgs,
)
from fsseam.tools.write import DEFAULT_MAX_WRITE_BYTES


@pytest.fixture(params=["local", "memory"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    yield from make_harness(request.param, tmp_path, discovery=True, multi_edit=True)


@pytest.mark.parametrize(
    ("tool", "args", "text"),
    [
        ("read", {"file_path": "a.txt", "limit": True}, "limit: must be an integer"),
        ("read", {"file_path": "a.txt", "offset": False}, "offset: must be an integer"),
        ("read", {"file_path": "a.txt", "offset": 2.0}, "offset: must be an integer"),
        ("read", {"file_path": "a.txt", "limit": "10"}, "limit: must be an integer"),
        ("read", {"file_path": ["a.txt"]}, "file_path: must be a string"),
        ("write", {"file_path": "a.txt", "content": 5}, "content: must be a string"),
        (
            "edit",
            {"file_path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": "yes"},
            "replace_all: must be true or false",
        ),
        (
            "edit",
            {"file_path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": 1},
            "replace_all: must be true or false",
        ),
        (
            "edit",
            {"file_path": "a.txt", "old_string": 1, "new_string": "b"},
            "old_string: must be a string",
        ),
        (
            "multi_edit",
            {
                "file_path": "a.txt",
                "edits": [{"old_string": "a", "new_string": "b", "replace_all": "true"}],
            },
            "edit 1: replace_all: must be true or false",
        ),
        ("ls", {"offset": True}, "offset: must be an integer"),
        ("ls", {"path": 1}, "path: must be a string"),
        ("glob", {"pattern": "*", "path": False}, "path: must be a string"),
        ("grep", {"pattern": "a", "ignore_case": "yes"}, "ignore_case: must be true or false"),
        ("grep", {"pattern": "a", "literal": 0}, "literal: must be true or false"),
        ("grep", {"pattern": 3}, "pattern: must be a string"),
    ],
)
def test_arguments_of_the_wrong_type_are_refused_naming_the_field(
    harness: Harness, tool: str, args: dict[str, Any], text: str
) -> None:
    harness.put("a.txt", b"a\n")
    res = harness.call(tool, args, harness.run())
    assert res.error == {"name": "ValidationError", "code": "INVALID_ARGUMENTS"}
    assert res.text == f"INVALID_ARGUMENTS: {text}"
    assert harness.get("a.txt") == b"a\n"


def _strict_mode(schema: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """``args`` as a strict-mode client sends them: every property present, unset ones null."""
    out = {name: args.get(name) for name in schema["properties"]}
    items = schema["properties"].get("edits", {}).get("items")
    if items and "edits" in args:
        out["edits"] = [_strict_mode(items, edit) for edit in args["edits"]]
    return out


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read", {"file_path": "a.txt"}),
    ("ls", {}),
    ("glob", {"pattern": "*.txt"}),
    ("grep", {"pattern": "b"}),
    ("edit", {"file_path": "a.txt", "old_string": "b", "new_string": "B"}),
    ("multi_edit", {"file_path": "a.txt", "edits": [{"old_string": "B", "new_string": "b"}]}),
    ("write", {"file_path": "a.txt", "content": "a b c\n"}),
]


def test_null_means_the_default_in_every_tool(harness: Harness) -> None:
    schemas = {s["name"]: s["parameters"] for s in harness.ctx.tools.schemas()}
    assert sorted(schemas) == sorted(name for name, _ in CALLS)
    results = []
    for args_of in (lambda name, args: args, lambda name, args: _strict_mode(schemas[name], args)):
        run = harness.run()
        harness.put("a.txt", b"a b c\n")
        texts = []
        for name, args in CALLS:
            res = harness.call(name, args_of(name, args), run)
            assert not res.is_error, (name, res.text)
            texts.append(res.text)
        results.append(texts)
    assert results[0] == results[1]
    assert any(None in _strict_mode(schemas[name], args).values() for name, args in CALLS)


def test_null_for_a_required_field_is_refused(harness: Harness) -> None:
    res = harness.call("edit", {"file_path": "a.txt", "old_string": None, "new_string": "x"}, None)
    assert res.text == "INVALID_ARGUMENTS: old_string: must be a string"


@pytest.mark.parametrize(
    ("schema", "model"),
    [
        (READ_SCHEMA, ReadArgs),
        (WRITE_SCHEMA, WriteArgs),
        (EDIT_SCHEMA, EditArgs),
        (MULTI_EDIT_SCHEMA, MultiEditArgs),
        (MULTI_EDIT_SCHEMA["properties"]["edits"]["items"], EditItem),
        (LS_SCHEMA, LsArgs),
        (GLOB_SCHEMA, GlobArgs),
        (GREP_SCHEMA, GrepArgs),
    ],
)
def test_every_schema_lists_exactly_its_models_fields(
    schema: dict[str, Any], model: type[Any]
) -> None:
    assert list(schema["properties"]) == list(model.model_fields)
    required = [name for name, f in model.model_fields.items() if f.is_required()]
    assert schema["required"] == required


def test_write_over_max_write_bytes_is_too_large_and_writes_nothing(tmp_path: Path) -> None:
    assert FileTools().max_write_bytes == DEFAULT_MAX_WRITE_BYTES == 256 * 1024 * 1024
    for h in make_harness("local", tmp_path, max_write_bytes=10):
        path = f"{h.root}/big.txt"
        res = h.call("write", {"file_path": "big.txt", "content": "é" * 6}, h.run())  # 12 bytes
        assert res.error == {"name": "FsError", "code": "FS_TOO_LARGE"}
        assert res.text == (
            f'FS_TOO_LARGE: the content for "{path}" is 12 bytes, over the 10-byte limit of '
            "one write (FileTools max_write_bytes); nothing was written — write less per file"
        )
        assert not (tmp_path / "big.txt").exists()
        assert not h.call("write", {"file_path": "ok.txt", "content": "é" * 5}, h.run()).is_error


def test_content_starting_with_a_bom_character_never_stores_two(harness: Harness) -> None:
    harness.put("b.txt", b"\xef\xbb\xbfold\n")
    run = harness.run()
    harness.call("read", {"file_path": "b.txt"}, run)
    res = harness.call("write", {"file_path": "b.txt", "content": "\ufeffnew\n"}, run)
    assert not res.is_error, res.text
    assert harness.get("b.txt") == b"\xef\xbb\xbfnew\n"
    res = harness.call("write", {"file_path": "n.txt", "content": "\ufeffnew\n"}, run)
    assert harness.get("n.txt") == b"\xef\xbb\xbfnew\n"
    read = harness.call("read", {"file_path": "b.txt"}, run)
    assert "\n1: new\n" in read.text
