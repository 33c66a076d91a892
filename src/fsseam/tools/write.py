"""The ``write`` tool: create a file, or replace one this session has read."""

from __future__ import annotations

from dataclasses import dataclass

from fsseam.host import Context, ToolExecution, ToolResult
from fsseam.seam import (
    FS_COMMITTED,
    FS_OBSERVED,
    FS_WRITE_INTENT,
    FsStaleVersion,
    FsTooLarge,
    Present,
)
from fsseam.text import utf8_size_over
from fsseam.tools.base import ModelTool, ToolSpec
from fsseam.tools.conflict import stale_result
from fsseam.tools.schemas import WRITE_SCHEMA, WriteArgs
from fsseam.tools.snippet import success

__all__ = ["DEFAULT_MAX_WRITE_BYTES", "WriteTool"]

DESCRIPTION = """\
Write a file in the workspace, creating it (and missing parent directories) or \
replacing its whole content. An existing file must be read first; if it changed \
since, the write is refused and the file must be read again. Prefer edit for \
changing part of an existing file."""


DEFAULT_MAX_WRITE_BYTES = 256 * 1024 * 1024
"""The largest content one ``write`` accepts by default (UTF-8 bytes)."""


@dataclass(slots=True)
class WriteTool(ModelTool[WriteArgs]):
    """``write(file_path, content)``, guarded by the policy's write intent.

    The success text is DESIGN's first line, then (``snippets``) a numbered
    snippet of the changed region; the value carries a unified ``diff``
    (``None`` when the old text is unknown). A stale file's refusal shows what
    changed since the read (:mod:`fsseam.tools.conflict`). Content over
    ``max_write_bytes`` UTF-8 bytes is refused with ``FS_TOO_LARGE`` before
    anything is sent to the store.
    """

    spec = ToolSpec("write", DESCRIPTION, WRITE_SCHEMA, WriteArgs)

    snippets: bool = True
    max_write_bytes: int = DEFAULT_MAX_WRITE_BYTES

    async def call(
        self, ctx: Context, args: WriteArgs, execution: ToolExecution | None
    ) -> ToolResult:
        """Write under the guard the policy chose (none without a policy)."""
        target = await ctx.fs.resolve(args.file_path)
        size = utf8_size_over(args.content, self.max_write_bytes)
        if size is not None:
            raise FsTooLarge(
                f'the content for "{target.display_path}" is {size} bytes, over the '
                f"{self.max_write_bytes}-byte limit of one write (FileTools max_write_bytes); "
                "nothing was written — write less per file"
            )
        intent = await ctx.waterfall(FS_WRITE_INTENT, execution, target, default=lambda: None)
        try:
            outcome = await ctx.fs.write_text(target, args.content, intent)
        except FsStaleVersion as exc:
            # Never rebased: the content was written against the old text.
            return stale_result(ctx, execution, target, exc, kind="write")
        ctx.emit(FS_OBSERVED, execution, target, Present(outcome.version))
        ctx.emit(
            FS_COMMITTED,
            execution,
            target,
            outcome.operation,
            outcome.before_version,
            outcome.version,
        )
        path = target.display_path
        created = outcome.operation == "create"
        if created:
            text = f"File created successfully at: {path}"
        else:
            text = f"The file {path} has been updated successfully."
        value = {"path": path, "operation": outcome.operation, "version": outcome.version}
        return await success(
            text,
            path,
            outcome.before,
            outcome.after,
            value,
            created=created,
            snippets=self.snippets,
        )
