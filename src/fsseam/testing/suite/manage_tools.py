"""The ``delete`` and ``move`` tools on every store: read first, never lose a change.

What the model sees is pinned here, on every backend: a delete or move of a
file the session has not read is ``FS_NOT_OBSERVED``; of a file changed since
it was read, ``FS_STALE_VERSION`` with the file kept; a move never overwrites
a destination the session has not read. Two sessions racing to delete or move
one file: exactly one wins, the other is told, nothing is lost. A store
declared ``guarded_delete=False`` must refuse both tools instead
(``FS_SANDBOX_DENIED``), with nothing changed.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable
from typing import Any

from fsseam.audit import JsonlAuditLog
from fsseam.host import Context, ToolExecution, ToolResult
from fsseam.seam import FS_COMMITTED, FileSystem
from fsseam.testing._support import async_test
from fsseam.testing.fixtures import RawStore
from fsseam.testing.harness import code_of, execution, tools_context
from fsseam.testing.suite._helpers import assert_stored, exists
from fsseam.testing.suite.manage import QUIRK

__all__ = ["ManageToolSuite"]

STALE_REMEDY = " — re-read the file, then retry"
READ_REMEDY = " — read the file, then retry"


def _context(fs: FileSystem, raw: RawStore, files: dict[str, bytes]) -> Context:
    """The file tools with ``manage=True`` over ``fs``, after ``raw`` has written ``files``."""
    for path, data in files.items():
        raw.write_bytes(path, data)
    return tools_context(fs, manage=True)


async def _call(ctx: Context, tool: str, args: dict[str, Any], session: Any) -> ToolResult:
    return await ctx.tools.execute(tool, args, session)


async def _read_by(ctx: Context, *paths: str) -> ToolExecution:
    """A fresh session that has read each of ``paths`` through the tools."""
    session = execution()
    for path in paths:
        read = await _call(ctx, "read", {"file_path": path}, session)
        assert code_of(read) is None, read.text
    return session


def _move(source: str, destination: str) -> dict[str, str]:
    return {"source_path": source, "destination_path": destination}


async def _race(
    fs: FileSystem, raw: RawStore, tool: str, args: Callable[[int], dict[str, str]]
) -> list[ToolResult]:
    """Two sessions read a.txt, then session ``i`` sends ``tool`` with ``args(i)``, all at once."""
    ctx = _context(fs, raw, {"a.txt": b"contested\n"})
    sessions = [await _read_by(ctx, "a.txt") for _ in range(2)]
    calls = [_call(ctx, tool, args(i), session) for i, session in enumerate(sessions)]
    return list(await asyncio.gather(*calls))


def _refused_here(result: ToolResult, guarded_delete: bool) -> bool:
    """On a store without guarded deletes, check that ``result`` is the refusal; True there."""
    if guarded_delete:
        return False
    assert code_of(result) == "FS_SANDBOX_DENIED", result.text
    assert QUIRK in result.text, result.text
    return True


class ManageToolSuite:
    """``FileTools(manage=True)``: ``delete`` and ``move`` through the policy, on this store."""

    @async_test
    async def test_delete_without_a_read_is_not_observed(
        self, fs: FileSystem, raw: RawStore
    ) -> None:
        ctx = _context(fs, raw, {"a.txt": b"keep\n"})
        path = (await fs.resolve("a.txt")).display_path
        result = await _call(ctx, "delete", {"file_path": "a.txt"}, execution())
        assert result.text == (
            f'FS_NOT_OBSERVED: delete requires reading "{path}" first{READ_REMEDY}'
        )
        moved = await _call(ctx, "move", _move("a.txt", "b.txt"), execution())
        assert moved.text == f'FS_NOT_OBSERVED: move requires reading "{path}" first{READ_REMEDY}'
        assert_stored(raw, {"a.txt": b"keep\n", "b.txt": None})

    @async_test
    async def test_read_then_outside_change_then_delete_is_stale_and_keeps_the_file(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        ctx = _context(fs, raw, {"a.txt": b"seen\n"})
        path = (await fs.resolve("a.txt")).display_path
        alice = await _read_by(ctx, "a.txt")
        raw.write_bytes("a.txt", b"changed by someone else\n")
        result = await _call(ctx, "delete", {"file_path": "a.txt"}, alice)
        if not _refused_here(result, guarded_delete):
            assert result.text.startswith(f'FS_STALE_VERSION: "{path}" was modified since it')
            assert result.text.endswith(STALE_REMEDY)
        assert raw.read_bytes("a.txt") == b"changed by someone else\n"

    @async_test
    async def test_read_then_delete_removes_the_file_and_the_session_sees_it_gone(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        ctx = _context(fs, raw, {"d/a.txt": b"bye\n"})
        audit = io.StringIO()
        ctx.plugin(JsonlAuditLog(audit))
        path = (await fs.resolve("d/a.txt")).display_path
        alice = await _read_by(ctx, "d/a.txt")
        result = await _call(ctx, "delete", {"file_path": "d/a.txt"}, alice)
        if _refused_here(result, guarded_delete):
            assert raw.read_bytes("d/a.txt") == b"bye\n"
            return
        assert result.text == f"The file {path} has been deleted successfully."
        assert result.value is not None
        assert result.value["path"] == path
        again = await _call(ctx, "delete", {"file_path": "d/a.txt"}, alice)
        assert again.text == (
            f'FS_NOT_FOUND: "{path}" did not exist when it was last read, so there was '
            "nothing to delete; read it again if it exists now"
        )
        # The session saw it gone: creating it again needs no read.
        created = await _call(ctx, "write", {"file_path": "d/a.txt", "content": "new\n"}, alice)
        assert code_of(created) is None, created.text
        line = json.loads(audit.getvalue().splitlines()[0])
        assert (line["operation"], line["after"]) == ("delete", None)
        assert line["before"] is not None
        assert raw.read_bytes("d/a.txt") == b"new\n"

    @async_test
    async def test_move_onto_an_unseen_existing_file_is_refused_and_keeps_both(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        files = {"a.txt": b"source\n", "b.txt": b"destination\n"}
        ctx = _context(fs, raw, files)
        destination = (await fs.resolve("b.txt")).display_path
        alice = await _read_by(ctx, "a.txt")
        result = await _call(ctx, "move", _move("a.txt", "b.txt"), alice)
        if not _refused_here(result, guarded_delete):
            assert result.text == (
                f'FS_NOT_OBSERVED: "{destination}" already exists and was not read before this '
                f"move (to keep it, choose another destination_path){READ_REMEDY}"
            )
        assert_stored(raw, files)

    @async_test
    async def test_read_then_move_puts_the_content_at_the_destination_and_removes_the_source(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        ctx = _context(fs, raw, {"a.txt": b"one\r\ntwo\r\n"})
        events: list[tuple[str, str, bool, bool]] = []
        ctx.on(
            FS_COMMITTED,
            lambda _actor, target, operation, before, after: events.append(
                (operation, target.display_path, before is not None, after is not None)
            ),
        )
        src = (await fs.resolve("a.txt")).display_path
        dst = (await fs.resolve("moved/b.txt")).display_path
        alice = await _read_by(ctx, "a.txt")
        result = await _call(ctx, "move", _move("a.txt", "moved/b.txt"), alice)
        if _refused_here(result, guarded_delete):
            assert_stored(raw, {"a.txt": b"one\r\ntwo\r\n", "moved/b.txt": None})
            return
        assert result.text == f"The file {src} has been moved to {dst} successfully."
        assert events == [("move", src, True, False), ("move", dst, False, True)]
        # The session saw both outcomes: the destination is editable at once...
        edit = {"file_path": "moved/b.txt", "old_string": "two", "new_string": "2"}
        edited = await _call(ctx, "edit", edit, alice)
        assert code_of(edited) is None, edited.text
        # ...and the source is known to be gone.
        gone = await _call(ctx, "delete", {"file_path": "a.txt"}, alice)
        assert code_of(gone) == "FS_NOT_FOUND", gone.text
        assert_stored(raw, {"moved/b.txt": b"one\r\n2\r\n", "a.txt": None})

    @async_test
    async def test_move_replaces_a_destination_the_session_read(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        ctx = _context(fs, raw, {"a.txt": b"new content\n", "b.txt": b"old content\n"})
        src = (await fs.resolve("a.txt")).display_path
        dst = (await fs.resolve("b.txt")).display_path
        alice = await _read_by(ctx, "a.txt", "b.txt")
        result = await _call(ctx, "move", _move("a.txt", "b.txt"), alice)
        if _refused_here(result, guarded_delete):
            return
        assert result.text == (
            f"The file {src} has been moved to {dst} successfully. "
            "It replaced the file that was there."
        )
        assert_stored(raw, {"b.txt": b"new content\n", "a.txt": None})

    @async_test
    async def test_move_onto_itself_is_invalid(self, fs: FileSystem, raw: RawStore) -> None:
        ctx = _context(fs, raw, {"a.txt": b"x\n"})
        result = await _call(ctx, "move", _move("a.txt", "./a.txt"), execution())
        assert result.text == (
            "INVALID_ARGUMENTS: destination_path: names the same file as source_path; "
            "nothing to move"
        )
        assert raw.read_bytes("a.txt") == b"x\n"

    @async_test
    async def test_read_only_mount_refuses_delete_and_move(
        self, fs_read_only: FileSystem, raw: RawStore
    ) -> None:
        ctx = _context(fs_read_only, raw, {"a.txt": b"keep\n"})
        alice = await _read_by(ctx, "a.txt")
        deleted = await _call(ctx, "delete", {"file_path": "a.txt"}, alice)
        moved = await _call(ctx, "move", _move("a.txt", "b.txt"), alice)
        for result in (deleted, moved):
            assert code_of(result) == "FS_SANDBOX_DENIED", result.text
            assert "is read-only" in result.text
        assert_stored(raw, {"a.txt": b"keep\n", "b.txt": None})

    @async_test
    async def test_two_sessions_racing_to_delete_one_file_exactly_one_wins(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        results = await _race(fs, raw, "delete", lambda _: {"file_path": "a.txt"})
        codes = sorted(str(code_of(result)) for result in results)
        if not guarded_delete:
            assert codes == ["FS_SANDBOX_DENIED"] * 2, [r.text for r in results]
            assert exists(raw, "a.txt")
            return
        assert codes[1] == "None", [r.text for r in results]  # exactly one success...
        assert codes[0] in ("FS_NOT_FOUND", "FS_STALE_VERSION"), [r.text for r in results]
        assert not exists(raw, "a.txt")

    @async_test
    async def test_two_sessions_racing_to_move_one_file_exactly_one_wins_and_nothing_is_lost(
        self, fs: FileSystem, raw: RawStore, guarded_delete: bool
    ) -> None:
        results = await _race(fs, raw, "move", lambda i: _move("a.txt", f"{i}.txt"))
        won = [result for result in results if not result.is_error]
        if not guarded_delete:
            assert not won
            assert raw.read_bytes("a.txt") == b"contested\n"
            return
        assert len(won) == 1, [r.text for r in results]
        lost = next(result for result in results if result.is_error)
        assert code_of(lost) == "FS_STALE_VERSION", lost.text
        assert not exists(raw, "a.txt")
        copies = [path for path in ("0.txt", "1.txt") if exists(raw, path)]
        assert copies, "the moved file is nowhere"
        assert all(raw.read_bytes(path) == b"contested\n" for path in copies)
