"""An audit log of every mutation the tools commit, as JSON lines.

    ctx.plugin(JsonlAuditLog("audit.jsonl"))

Each line: ``{"time", "session", "operation", "path", "before", "after"}`` —
``session`` is ``repr()`` of the calling agent's session object (or ``null``),
``operation`` one of ``create``, ``update``, ``edit``, ``delete``, ``move``,
``before``/``after`` the versions around the change (``before`` is ``null``
for a creation, ``after`` for a delete). A move is two lines, in order: the
source (``after`` ``null``: nothing is left there), then the destination
(``before``: the file it replaced, ``null`` when it was created).
"""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from typing import IO, Any

from fsseam.host import Context
from fsseam.seam import FS_COMMITTED, FsTarget, FsVersion

__all__ = ["JsonlAuditLog"]


class JsonlAuditLog:
    """Plugin appending one JSON object per committed write, edit and delete (two per move).

    ``sink`` is a path (opened in append mode, line-buffered) or a text
    stream. Lines are written whole under a lock, so threads never interleave.
    """

    def __init__(self, sink: str | os.PathLike[str] | IO[str]) -> None:
        if isinstance(sink, (str, os.PathLike)):
            self._stream: IO[str] = open(sink, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
            self._owned = True
        else:
            self._stream = sink
            self._owned = False
        self._lock = threading.Lock()

    def setup(self, ctx: Context) -> None:
        """Subscribe to ``fs/committed``."""
        ctx.on(FS_COMMITTED, self.record)

    def record(
        self,
        actor: Any,
        target: FsTarget,
        operation: str,
        before: FsVersion | None,
        after: FsVersion | None,
    ) -> None:
        """Append one line for one committed mutation."""
        session = getattr(getattr(actor, "agent", None), "session", None)
        line = json.dumps(
            {
                "time": datetime.now(UTC).isoformat(timespec="microseconds"),
                "session": None if session is None else repr(session),
                "operation": operation,
                "path": target.display_path,
                "before": before,
                "after": after,
            },
            ensure_ascii=False,
        )
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()

    def close(self) -> None:
        """Close the file this log opened (streams passed in are left open)."""
        if self._owned:
            self._stream.close()
