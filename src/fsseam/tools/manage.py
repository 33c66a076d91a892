"""The ``delete`` and ``move`` tools: remove or rename a file this session has read.

Both are guarded like ``edit``: the policy's ``fs/edit-intent`` gives the
version the session read (unseen: ``FS_NOT_OBSERVED``), and the store
refuses the delete if the file moved on since. ``move`` writes its
destination under the policy's ``fs/write-intent`` (create-if-absent unless
the session read the destination too) before it deletes the source, so a
failure in between leaves both files and says so, never neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import StrictStr

from fsseam.host import Context, ToolArgumentsError, ToolExecution, ToolResult
from fsseam.seam import (
    FS_COMMITTED,
    FS_OBSERVED,
    FS_WRITE_INTENT,
    Absent,
    FsMoveIncomplete,
    FsNotFound,
    FsNotObserved,
    FsTarget,
    FsVersion,
    Present,
)
from fsseam.tools.base import ModelTool, ToolSpec
from fsseam.tools.intent import edit_intent
from fsseam.tools.schemas import _FILE_PATH, _Args

__all__ = ["DELETE_SCHEMA", "MOVE_SCHEMA", "DeleteArgs", "DeleteTool", "MoveArgs", "MoveTool"]

DELETE_DESCRIPTION = """\
Delete a file (not a directory). The file must have been read first and must not \
have changed since."""

MOVE_DESCRIPTION = """\
Move or rename a file. The file must have been read first and must not have \
changed since. An existing file at destination_path is replaced only if it was \
read too; missing parent directories are created."""


class DeleteArgs(_Args):
    """Arguments of ``delete``."""

    file_path: StrictStr


class MoveArgs(_Args):
    """Arguments of ``move``."""

    source_path: StrictStr
    destination_path: StrictStr


DELETE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"file_path": _FILE_PATH},
    "required": ["file_path"],
    "additionalProperties": False,
}

MOVE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "source_path": {
            "type": "string",
            "description": (
                "Path of the file to move, relative to the workspace root (or absolute inside it)."
            ),
        },
        "destination_path": {
            "type": "string",
            "description": "Its new path, relative to the workspace root (or absolute inside it).",
        },
    },
    "required": ["source_path", "destination_path"],
    "additionalProperties": False,
}


async def _read_version(
    ctx: Context, execution: ToolExecution | None, target: FsTarget, verb: str
) -> FsVersion | None:
    """The version the session read (the policy's edit intent), worded for ``verb``."""
    try:
        version: FsVersion | None = await edit_intent(ctx, execution, target, verb)
    except FsNotObserved:
        raise FsNotObserved(f'{verb} requires reading "{target.display_path}" first') from None
    except FsNotFound:
        raise FsNotFound(
            f'"{target.display_path}" did not exist when it was last read, so there was nothing '
            f"to {verb}; read it again if it exists now"
        ) from None
    return version


@dataclass(slots=True)
class DeleteTool(ModelTool[DeleteArgs]):
    """``delete(file_path)``: a guarded delete of a file the session read at its current version.

    Success: ``The file {path} has been deleted successfully.``; the value is
    ``{"path", "before_version"}``. The session then observes the file as absent.
    """

    spec = ToolSpec("delete", DELETE_DESCRIPTION, DELETE_SCHEMA, DeleteArgs)

    async def call(
        self, ctx: Context, args: DeleteArgs, execution: ToolExecution | None
    ) -> ToolResult:
        """Delete at the version the session read (any version without a policy)."""
        target = await ctx.fs.resolve(args.file_path)
        expected = await _read_version(ctx, execution, target, "delete")
        outcome = await ctx.fs.delete(target, expected)
        ctx.emit(FS_OBSERVED, execution, target, Absent())
        ctx.emit(FS_COMMITTED, execution, target, "delete", outcome.before_version, None)
        path = target.display_path
        return ToolResult(
            False,
            f"The file {path} has been deleted successfully.",
            {"path": path, "before_version": outcome.before_version},
        )


@dataclass(slots=True)
class MoveTool(ModelTool[MoveArgs]):
    """``move(source_path, destination_path)``: guarded like ``edit`` and, for the destination,
    like ``write``.

    Success: ``The file {source} has been moved to {destination} successfully.``
    (plus `` It replaced the file that was there.`` when it did); the value is
    ``{"path", "source", "version"}`` (``path``: the destination). The session
    then observes the source as absent and the destination at its new version;
    after a half-done move (the error says so), the destination at its new
    version.
    """

    spec = ToolSpec("move", MOVE_DESCRIPTION, MOVE_SCHEMA, MoveArgs)

    async def call(
        self, ctx: Context, args: MoveArgs, execution: ToolExecution | None
    ) -> ToolResult:
        """Move under the guards the policy gives (none without a policy)."""
        source = await ctx.fs.resolve(args.source_path)
        destination = await ctx.fs.resolve(args.destination_path)
        if source.target_key == destination.target_key:
            raise ToolArgumentsError(
                "destination_path: names the same file as source_path; nothing to move"
            )
        expected = await _read_version(ctx, execution, source, "move")
        intent = await ctx.waterfall(FS_WRITE_INTENT, execution, destination, default=lambda: None)
        src, dst = source.display_path, destination.display_path
        try:
            outcome = await ctx.fs.move(source, destination, expected, intent)
        except FsMoveIncomplete as half:
            if half.version is not None:
                operation = "create" if half.replaced_version is None else "update"
                ctx.emit(FS_OBSERVED, execution, destination, Present(half.version))
                ctx.emit(
                    FS_COMMITTED,
                    execution,
                    destination,
                    operation,
                    half.replaced_version,
                    half.version,
                )
            raise
        except FsNotObserved:
            raise FsNotObserved(
                f'"{dst}" already exists and was not read before this move (to keep it, '
                "choose another destination_path)"
            ) from None
        ctx.emit(FS_OBSERVED, execution, source, Absent())
        ctx.emit(FS_OBSERVED, execution, destination, Present(outcome.version))
        ctx.emit(FS_COMMITTED, execution, source, "move", outcome.before_version, None)
        ctx.emit(
            FS_COMMITTED, execution, destination, "move", outcome.replaced_version, outcome.version
        )
        text = f"The file {src} has been moved to {dst} successfully."
        if outcome.replaced_version is not None:
            text += " It replaced the file that was there."
        return ToolResult(False, text, {"path": dst, "source": src, "version": outcome.version})
