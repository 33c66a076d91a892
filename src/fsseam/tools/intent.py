"""What a tool that changes an existing file works against: the policy's edit intent.

The policy knows only what the session read; asked about a path that was never
read, it says "read it first". For a directory that advice cannot help (``read``
refuses a directory too), so the store is asked what the path is before the
refusal goes out.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fsseam.host import Context, ToolExecution, ToolResult
from fsseam.seam import (
    FS_COMMITTED,
    FS_EDIT_INTENT,
    FS_OBSERVED,
    FsEditOutcome,
    FsError,
    FsNotObserved,
    FsNotRegularFile,
    FsStaleVersion,
    FsTarget,
    FsVersion,
    Present,
)
from fsseam.tools.conflict import applied_on_top, stale_result
from fsseam.tools.snippet import success

__all__ = ["edit_intent", "guarded_edit"]


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


async def guarded_edit(
    ctx: Context,
    execution: ToolExecution | None,
    target: FsTarget,
    apply: Callable[[FsVersion | None], Awaitable[FsEditOutcome]],
    *,
    first_line: str,
    value: dict[str, Any],
    snippets: bool,
) -> ToolResult:
    """``edit`` and ``multi_edit`` after parsing: ``apply`` at the edit intent, then the result.

    A stale refusal shows the change (:func:`~fsseam.tools.conflict.stale_result`);
    a rebased edit shows the change it landed on, and the session observes the
    new version only when that change was shown whole. ``value`` goes between
    the result's ``path`` and its ``replacements`` and ``version``.
    """
    expected = await edit_intent(ctx, execution, target, "edit")
    try:
        outcome = await apply(expected)
    except FsStaleVersion as exc:
        return stale_result(ctx, execution, target, exc, kind="edit")
    text, whole = first_line, True
    if outcome.rebased is not None:
        text, whole = applied_on_top(text, outcome.rebased)
    if whole:
        ctx.emit(FS_OBSERVED, execution, target, Present(outcome.version))
    ctx.emit(FS_COMMITTED, execution, target, "edit", outcome.before_version, outcome.version)
    path = target.display_path
    result = {"path": path, **value}
    result |= {"replacements": outcome.replacements, "version": outcome.version}
    return await success(text, path, outcome.before, outcome.after, result, snippets=snippets)
