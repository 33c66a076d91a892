"""What a tool that changes an existing file works against: the policy's edit intent.

The policy knows only what the session read; asked about a path that was never
read, it says "read it first". For a directory that advice cannot help (``read``
refuses a directory too), so the store is asked what the path is before the
refusal goes out.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, TypeVar

from fsseam.host import Context, ToolExecution, ToolResult
from fsseam.seam import (
    FS_COMMITTED,
    FS_EDIT_INTENT,
    FS_OBSERVED,
    FileSystem,
    FsEditIntent,
    FsEditOutcome,
    FsError,
    FsNotObserved,
    FsNotRegularFile,
    FsStaleVersion,
    FsTarget,
    Present,
)
from fsseam.tools.base import ModelTool
from fsseam.tools.conflict import applied_on_top, stale_result
from fsseam.tools.schemas import _FileArgs
from fsseam.tools.snippet import success

__all__ = ["GuardedEditTool", "edit_intent"]


async def edit_intent(
    ctx: Context, execution: ToolExecution | None, target: FsTarget, verb: str
) -> Any:
    """The ``fs/edit-intent`` answer for ``target`` (``None`` without a policy).

    ``FS_NOT_REGULAR_FILE`` instead of the policy's ``FS_NOT_OBSERVED`` when the
    target is a directory; any other refusal propagates as the policy raised it.
    """
    try:
        return await ctx.waterfall(FS_EDIT_INTENT, execution, target, default=lambda: None)
    except FsNotObserved as refused:
        try:
            info = await ctx.fs.stat(target)
        except FsError:
            info = None  # the session's refusal stands; the store's trouble shows on retry
        if info is None or info.type != "directory":
            raise refused from None
        root = await ctx.fs.resolve(".")
        shown = target.display_path.rstrip("/") or target.display_path
        is_root = target.target_key == root.target_key
        what = "the workspace root, a directory" if is_root else "a directory"
        raise FsNotRegularFile(
            f'"{shown}" is {what}, not a file; {verb} a file inside it (ls lists them)'
        ) from None


E = TypeVar("E", bound=_FileArgs)


@dataclass(slots=True)
class GuardedEditTool(ModelTool[E]):
    """Base of ``edit`` and ``multi_edit``: :meth:`apply` at the edit intent, then the result.

    A stale refusal shows the change (:func:`~fsseam.tools.conflict.stale_result`);
    a rebased edit shows the change it landed on, and the session observes the
    new version only when that change was shown whole. The success text is
    :meth:`first_line`, then (``snippets``) the numbered changed regions; the
    value is ``path``, then :meth:`value`, then ``replacements`` and
    ``version``, and carries the unified ``diff``.
    """

    snippets: bool = True

    async def call(self, ctx: Context, args: E, execution: ToolExecution | None) -> ToolResult:
        """Edit at the version the policy expects (any version without a policy)."""
        target = await ctx.fs.resolve(args.file_path)
        expected = await edit_intent(ctx, execution, target, "edit")
        try:
            outcome = await self.apply(ctx.fs, target, args, expected)
        except FsStaleVersion as exc:
            return stale_result(ctx, execution, target, exc, kind="edit")
        path = target.display_path
        text, whole = self.first_line(path, args), True
        if outcome.rebased is not None:
            text, whole = applied_on_top(text, outcome.rebased)
        if whole:
            ctx.emit(FS_OBSERVED, execution, target, Present(outcome.version))
        ctx.emit(FS_COMMITTED, execution, target, "edit", outcome.before_version, outcome.version)
        result = {"path": path, **self.value(args)}
        result |= {"replacements": outcome.replacements, "version": outcome.version}
        return await success(
            text, path, outcome.before, outcome.after, result, snippets=self.snippets
        )

    @abstractmethod
    async def apply(
        self, fs: FileSystem, target: FsTarget, args: E, expected: FsEditIntent | None
    ) -> FsEditOutcome:
        """The seam call that edits ``target`` guarded by ``expected``."""

    @abstractmethod
    def first_line(self, path: str, args: E) -> str:
        """The first line of the success text (DESIGN's exact wording)."""

    def value(self, args: E) -> dict[str, Any]:
        """What the result value carries besides path, replacements and version."""
        return {}
