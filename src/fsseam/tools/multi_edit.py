"""The ``multi_edit`` tool: several exact replacements in one file, all or nothing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fsseam.host import Context, ToolExecution, ToolResult
from fsseam.seam import (
    FS_COMMITTED,
    FS_OBSERVED,
    FsEditRequest,
    FsStaleVersion,
    Present,
)
from fsseam.tools.conflict import applied_on_top, stale_result
from fsseam.tools.intent import edit_intent
from fsseam.tools.schemas import MULTI_EDIT_SCHEMA, MultiEditArgs, parse_args
from fsseam.tools.snippet import success

__all__ = ["MultiEditTool"]

DESCRIPTION = """\
Make several exact text replacements in one file in a single step. Each edit \
works like edit (old_string must match the file exactly, whitespace included, and \
occur once unless replace_all is true) and applies to the text the previous edits \
left. Either every edit is applied, in one write, or none is. The file must have \
been read first and must not have changed since."""


@dataclass(slots=True)
class MultiEditTool:
    """``multi_edit(file_path, edits)``: one guarded write for all the edits.

    Guarded like ``edit`` (the ``fs/edit-intent`` version; a stale refusal or a
    rebase shows the change as ``edit`` does); an error names the failing
    edit (``edit 2 of 3: ...``) and nothing is written. Success: a first
    line, then (``snippets``) the numbered changed regions; the value carries
    the unified ``diff``.
    """

    name: str = "multi_edit"
    description: str = DESCRIPTION
    parameters: dict[str, Any] = field(default_factory=lambda: MULTI_EDIT_SCHEMA)
    snippets: bool = True

    async def run(
        self, ctx: Context, args: Mapping[str, Any], execution: ToolExecution | None
    ) -> ToolResult:
        """Apply every edit at the version the policy expects (any version without one)."""
        parsed = parse_args(self.name, MultiEditArgs, args)
        target = await ctx.fs.resolve(parsed.file_path)
        expected = await edit_intent(ctx, execution, target, "edit")
        requests = [FsEditRequest(e.old_string, e.new_string, e.replace_all) for e in parsed.edits]
        try:
            outcome = await ctx.fs.edit_text_many(target, requests, expected)
        except FsStaleVersion as exc:
            return stale_result(ctx, execution, target, exc, kind="edit")
        path = target.display_path
        count = len(requests)
        text = (
            f"The file {path} has been updated successfully "
            f"({count} edit{'s' if count != 1 else ''} applied)."
        )
        whole = True
        if outcome.rebased is not None:
            text, whole = applied_on_top(text, outcome.rebased)
        if whole:
            ctx.emit(FS_OBSERVED, execution, target, Present(outcome.version))
        ctx.emit(FS_COMMITTED, execution, target, "edit", outcome.before_version, outcome.version)
        value = {
            "path": path,
            "edits": count,
            "replacements": outcome.replacements,
            "version": outcome.version,
        }
        return await success(
            text, path, outcome.before, outcome.after, value, snippets=self.snippets
        )
