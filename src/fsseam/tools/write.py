"""The ``write`` tool: create a file, or replace one this session has read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fsseam.host import Context, ToolExecution, ToolResult
from fsseam.seam import FS_COMMITTED, FS_OBSERVED, FS_WRITE_INTENT, Present
from fsseam.tools.schemas import WRITE_SCHEMA, WriteArgs, parse_args
from fsseam.tools.snippet import ChangeReport, change_report, with_snippet

__all__ = ["WriteTool"]

DESCRIPTION = """\
Write a file in the workspace, creating it (and missing parent directories) or \
replacing its whole content. An existing file must be read first; if it changed \
since, the write is refused and the file must be read again. Prefer edit for \
changing part of an existing file."""


@dataclass(slots=True)
class WriteTool:
    """``write(file_path, content)``, guarded by the policy's write intent.

    The success text is DESIGN's first line, then (``snippets``) a numbered
    snippet of the changed region; the value carries a unified ``diff``
    (``None`` when the old text is unknown).
    """

    name: str = "write"
    description: str = DESCRIPTION
    parameters: dict[str, Any] = field(default_factory=lambda: WRITE_SCHEMA)
    snippets: bool = True

    async def run(
        self, ctx: Context, args: Mapping[str, Any], execution: ToolExecution | None
    ) -> ToolResult:
        """Write under the guard the policy chose (none without a policy)."""
        parsed = parse_args(self.name, WriteArgs, args)
        target = await ctx.fs.resolve(parsed.file_path)
        intent = await ctx.waterfall(FS_WRITE_INTENT, execution, target, default=lambda: None)
        outcome = await ctx.fs.write_text(target, parsed.content, intent)
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
        operation, version = outcome.operation, outcome.version

        def report(diff: bool = True) -> ChangeReport:
            return change_report(
                path, outcome.before, outcome.after, created=created, with_diff=diff
            )

        def value(diff: str | None) -> dict[str, Any]:
            return {"path": path, "operation": operation, "version": version, "diff": diff}

        if not self.snippets:
            return ToolResult(False, text, lazy_value=lambda: value(report().diff))
        # The snippet now; the diff only if someone reads the value.
        shown = with_snippet(text, report(diff=False))
        return ToolResult(False, shown, lazy_value=lambda: value(report().diff))
