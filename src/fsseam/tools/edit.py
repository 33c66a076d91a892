"""The ``edit`` tool: an exact literal replacement in a file this session has read."""

from __future__ import annotations

from dataclasses import dataclass

from fsseam.seam import FileSystem, FsEditIntent, FsEditOutcome, FsEditRequest, FsTarget
from fsseam.tools.base import ToolSpec
from fsseam.tools.intent import GuardedEditTool
from fsseam.tools.schemas import EDIT_SCHEMA, EditArgs

__all__ = ["EditTool"]

DESCRIPTION = """\
Replace exact text in a file. old_string must match the file exactly (whitespace \
and indentation included, without the "N: " line-number prefix of read) and occur \
once, unless replace_all is true. The file must have been read first and must not \
have changed since; line endings (LF or CRLF) are kept as the file has them."""


@dataclass(slots=True)
class EditTool(GuardedEditTool[EditArgs]):
    """``edit(file_path, old_string, new_string, replace_all?)``, guarded by version.

    The success text is DESIGN's first line, then (``snippets``) a numbered
    snippet of the changed region; the value carries a unified ``diff``. A
    stale file's refusal shows what changed since the read
    (:mod:`fsseam.tools.conflict`); an edit rebased on top of it shows it too.
    """

    spec = ToolSpec("edit", DESCRIPTION, EDIT_SCHEMA, EditArgs)

    async def apply(
        self, fs: FileSystem, target: FsTarget, args: EditArgs, expected: FsEditIntent | None
    ) -> FsEditOutcome:
        """One literal replacement (every occurrence with ``replace_all``)."""
        request = FsEditRequest(args.old_string, args.new_string, args.replace_all)
        return await fs.edit_text(target, request, expected)

    def first_line(self, path: str, args: EditArgs) -> str:
        """DESIGN's line, which says when every occurrence was replaced."""
        if args.replace_all:
            return f"The file {path} has been updated. All occurrences were successfully replaced."
        return f"The file {path} has been updated successfully."
