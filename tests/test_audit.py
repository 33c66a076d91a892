"""fs/committed fires after every mutation; the JSON-lines audit log records it."""

from __future__ import annotations

import io
import json
from pathlib import Path

from fsseam import FS_COMMITTED, Agent, ToolExecution, open_fs
from fsseam.audit import JsonlAuditLog
from fsseam.testing.harness import make_context


class Named:
    def __repr__(self) -> str:
        return "<session alice>"


def test_audit_log_records_each_mutation_with_versions(tmp_path: Path) -> None:
    ctx = make_context(open_fs(str(tmp_path)))
    sink = io.StringIO()
    ctx.plugin(JsonlAuditLog(sink))
    events: list[tuple[object, ...]] = []
    ctx.on(FS_COMMITTED, lambda *args: events.append(args))
    run = ToolExecution(agent=Agent(session=Named()))
    created = ctx.tools.execute_sync("write", {"file_path": "a.txt", "content": "1"}, run)
    updated = ctx.tools.execute_sync("write", {"file_path": "a.txt", "content": "2"}, run)
    edited = ctx.tools.execute_sync(
        "edit", {"file_path": "a.txt", "old_string": "2", "new_string": "3"}, run
    )
    refused = ctx.tools.execute_sync("write", {"file_path": "b.txt", "content": "x"}, None)
    assert not refused.is_error
    lines = [json.loads(line) for line in sink.getvalue().splitlines()]
    assert [line["operation"] for line in lines] == ["create", "update", "edit", "create"]
    assert lines[0]["before"] is None
    assert created.value is not None
    assert updated.value is not None
    assert edited.value is not None
    assert lines[0]["after"] == created.value["version"]
    assert lines[1]["before"] == created.value["version"]
    assert lines[1]["after"] == updated.value["version"]
    assert lines[2]["before"] == updated.value["version"]
    assert lines[2]["after"] == edited.value["version"]
    assert lines[0]["session"] == "<session alice>"
    assert lines[3]["session"] is None
    assert lines[0]["path"] == str(tmp_path / "a.txt")
    assert len(events) == 4


def test_failed_mutation_is_not_audited(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("theirs")
    ctx = make_context(open_fs(str(tmp_path)))
    sink = io.StringIO()
    ctx.plugin(JsonlAuditLog(sink))
    res = ctx.tools.execute_sync("write", {"file_path": "x.txt", "content": "mine"}, None)
    assert res.is_error
    assert sink.getvalue() == ""


def test_audit_log_appends_to_a_file(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    ctx = make_context(open_fs(str(tmp_path / "ws")))
    log = JsonlAuditLog(tmp_path / "audit.jsonl")
    ctx.plugin(log)
    ctx.tools.execute_sync("write", {"file_path": "a.txt", "content": "1"}, None)
    log.close()
    assert len((tmp_path / "audit.jsonl").read_text().splitlines()) == 1
