"""The ``multi_edit`` tool: several exact replacements in one file, all or nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fsseam.seam import FileSystem, FsEditIntent, FsEditOutcome, FsEditRequest, FsTarget
from fsseam.tools.base import ToolSpec
from fsseam.tools.intent import GuardedEditTool
from fsseam.tools.schemas import MULTI_EDIT_SCHEMA, MultiEditArgs

__all__ = ["MultiEditTool"]

DESCRIPTION = """\
Make several exact text replacements in one file in a single step. Each edit \
works like edit (old_string must match the file exactly, whitespace included, and \
occur once unless replace_all is true) and applies to the text the previous edits \
left. Either every edit is applied, in one write, or none is. The file must have \
been read first and must not have changed since."""


@dataclass(slots=True)
class MultiEditTool(GuardedEditTool[MultiEditArgs]):
    """``multi_edit(file_path, edits)``: one guarded write for all the edits.

    Guarded like ``edit`` (the ``fs/edit-intent`` version; a stale refusal or a
    rebase shows the change as ``edit`` does); an error names the failing
    edit (``edit 2 of 3: ...``) and nothing is written. Success: a first
    line, then (``snippets``) the numbered changed regions; the value carries
    the unified ``diff``.
    """

    spec = ToolSpec("multi_edit", DESCRIPTION, MULTI_EDIT_SCHEMA, MultiEditArgs)

    async def apply(
        self, fs: FileSystem, target: FsTarget, args: MultiEditArgs, expected: FsEditIntent | None
    ) -> FsEditOutcome:
        """Every edit in order, in one guarded write."""
        requests = [FsEditRequest(e.old_string, e.new_string, e.replace_all) for e in args.edits]
        return await fs.edit_text_many(target, requests, expected)

    def first_line(self, path: str, args: MultiEditArgs) -> str:
        """DESIGN's line, with the number of edits applied."""
        count = len(args.edits)
        return (
            f"The file {path} has been updated successfully "
            f"({count} edit{'s' if count != 1 else ''} applied)."
        )

    def value(self, args: MultiEditArgs) -> dict[str, Any]:
        """The number of edits applied."""
        return {"edits": len(args.edits)}
