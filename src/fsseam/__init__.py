"""fsseam: safe read / write / edit (and delete / move) tools for LLM agents over any fsspec store.

Quick start::

    from pathlib import Path

    from fsseam import (
        Agent, Context, DiscoveryTools, FileTools, ObservationPolicy, ToolExecution, open_fs,
    )

    Path("workspace").mkdir(exist_ok=True)  # a local root must exist
    ctx = Context(open_fs("./workspace"))
    ctx.plugin(ObservationPolicy())
    ctx.plugin(FileTools())                 # manage=True adds delete and move
    ctx.plugin(DiscoveryTools())            # optional: ls, glob, grep
    run = ToolExecution(agent=Agent(session="conversation-1"))  # any string id
    result = ctx.tools.execute_sync("read", {"file_path": "notes.txt"}, run)
    print(result.text)  # FS_NOT_FOUND: "…/workspace/notes.txt" does not exist; ...
"""

from fsseam.backends import DEFAULT_MAX_EDIT_BYTES, FsspecFileSystem, open_fs
from fsseam.host import Agent, Context, Plugin, Tool, ToolExecution, ToolRegistry, ToolResult
from fsseam.observations import (
    MemoryObservationStore,
    ObservationStore,
    RedisObservationStore,
    SqliteObservationStore,
    open_observations,
)
from fsseam.policy import ObservationPolicy
from fsseam.seam import (
    FS_COMMITTED,
    FS_EDIT_INTENT,
    FS_OBSERVED,
    FS_WRITE_INTENT,
    Absent,
    CreateIfAbsent,
    FileSystem,
    FsAborted,
    FsAmbiguousEdit,
    FsCapabilities,
    FsDeleteOutcome,
    FsDirEntry,
    FsEditIntent,
    FsEditNotFound,
    FsEditOutcome,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsInfo,
    FsIOError,
    FsMoveIncomplete,
    FsMoveOutcome,
    FsNotDirectory,
    FsNotFound,
    FsNotObserved,
    FsNotRegularFile,
    FsNotText,
    FsObservation,
    FsPathInfo,
    FsPermissionDenied,
    FsSandboxDenied,
    FsStaleVersion,
    FsTarget,
    FsTargetKey,
    FsTextStream,
    FsTooLarge,
    FsVersion,
    FsWalkEntry,
    FsWriteIntent,
    FsWriteOutcome,
    Present,
    RebaseIfClean,
    ReplaceIfVersion,
)
from fsseam.tools import DiscoveryTools, FileTools

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MAX_EDIT_BYTES",
    "FS_COMMITTED",
    "FS_EDIT_INTENT",
    "FS_OBSERVED",
    "FS_WRITE_INTENT",
    "Absent",
    "Agent",
    "Context",
    "CreateIfAbsent",
    "DiscoveryTools",
    "FileSystem",
    "FileTools",
    "FsAborted",
    "FsAmbiguousEdit",
    "FsCapabilities",
    "FsDeleteOutcome",
    "FsDirEntry",
    "FsEditIntent",
    "FsEditNotFound",
    "FsEditOutcome",
    "FsEditRequest",
    "FsError",
    "FsErrorCode",
    "FsIOError",
    "FsInfo",
    "FsMoveIncomplete",
    "FsMoveOutcome",
    "FsNotDirectory",
    "FsNotFound",
    "FsNotObserved",
    "FsNotRegularFile",
    "FsNotText",
    "FsObservation",
    "FsPathInfo",
    "FsPermissionDenied",
    "FsSandboxDenied",
    "FsStaleVersion",
    "FsTarget",
    "FsTargetKey",
    "FsTextStream",
    "FsTooLarge",
    "FsVersion",
    "FsWalkEntry",
    "FsWriteIntent",
    "FsWriteOutcome",
    "FsspecFileSystem",
    "MemoryObservationStore",
    "ObservationPolicy",
    "ObservationStore",
    "Plugin",
    "Present",
    "RebaseIfClean",
    "RedisObservationStore",
    "ReplaceIfVersion",
    "SqliteObservationStore",
    "Tool",
    "ToolExecution",
    "ToolRegistry",
    "ToolResult",
    "__version__",
    "open_fs",
    "open_observations",
]
