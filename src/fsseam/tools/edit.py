"""The ``edit`` tool: an exact literal replacement in a file this session has read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fsseam.host import Context, ToolExecution, ToolResult
from fsseam.seam import FsEditRequest
from fsseam.tools.intent import guarded_edit
from fsseam.tools.schemas import EDIT_SCHEMA, EditArgs, parse_args

__all__ = ["EditTool"]

DESCRIPTION = """\
Replace exact text in a file. old_string must match the file exactly (whitespace \
and indentation included, without the "N: " line-number prefix of read) and occur \
once, unless replace_all is true. The file must have been read first and must not \
have changed since; line endings (LF or CRLF) are kept as the file has them."""


@dataclass(slots=True)
class EditTool:
    """``edit(file_path, old_string, new_string, replace_all?)``, guarded by version.

    The success text is DESIGN's first line, then (``snippets``) a numbered
    snippet of the changed region; the value carries a unified ``diff``. A
    stale file's refusal shows what changed since the read
    (:mod:`fsseam.tools.conflict`); an edit rebased on top of it shows it too.
    """

    name: str = "edit"
    description: str = DESCRIPTION
    parameters: dict[str, Any] = field(default_factory=lambda: EDIT_SCHEMA)
    snippets: bool = True

    async def run(
        self, ctx: Context, args: Mapping[str, Any], execution: ToolExecution | None
    ) -> ToolResult:
        """Edit at the version the policy expects (any version without a policy)."""
        parsed = parse_args(self.name, EditArgs, args)
        target = await ctx.fs.resolve(parsed.file_path)
        request = FsEditRequest(parsed.old_string, parsed.new_string, parsed.replace_all)
        path = target.display_path
        if parsed.replace_all:
            text = f"The file {path} has been updated. All occurrences were successfully replaced."
        else:
            text = f"The file {path} has been updated successfully."
        return await guarded_edit(
            ctx,
            execution,
            target,
            lambda expected: ctx.fs.edit_text(target, request, expected),
            first_line=text,
            value={},
            snippets=self.snippets,
        )
