"""What a tool that changes an existing file works against: the policy's edit intent.

The policy knows only what the session read; asked about a path that was never
read, it says "read it first". For a directory that advice cannot help (``read``
refuses a directory too), so the store is asked what the path is before the
refusal goes out.
"""

from __future__ import annotations

from typing import Any

from fsseam.host import Context, ToolExecution
from fsseam.seam import FS_EDIT_INTENT, FsError, FsNotObserved, FsNotRegularFile, FsTarget

__all__ = ["edit_intent"]


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
