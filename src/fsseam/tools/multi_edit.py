"""The ``multi_edit`` tool: several exact replacements in one file, all or nothing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fsseam.host import Context, ToolExecution, ToolResult
from fsseam.seam import FsEditRequest
from fsseam.tools.intent import guarded_edit
from fsseam.tools.schemas import MULTI_EDIT_SCHEMA, MultiEditArgs, parse_args

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
        requests = [FsEditRequest(e.old_string, e.new_string, e.replace_all) for e in parsed.edits]
        count = len(requests)
        text = (
            f"The file {target.display_path} has been updated successfully "
            f"({count} edit{'s' if count != 1 else ''} applied)."
        )
        return await guarded_edit(
            ctx,
            execution,
            target,
            lambda expected: ctx.fs.edit_text_many(target, requests, expected),
            first_line=text,
            value={"edits": count},
            snippets=self.snippets,
        )
