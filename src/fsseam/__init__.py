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

# The seam's names are listed once, in its submodules' ``__all__``.
from fsseam import seam
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
from fsseam.seam import *  # noqa: F403
from fsseam.tools import DiscoveryTools, FileTools

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MAX_EDIT_BYTES",
    "Agent",
    "Context",
    "DiscoveryTools",
    "FileTools",
    "FsspecFileSystem",
    "MemoryObservationStore",
    "ObservationPolicy",
    "ObservationStore",
    "Plugin",
    "RedisObservationStore",
    "SqliteObservationStore",
    "Tool",
    "ToolExecution",
    "ToolRegistry",
    "ToolResult",
    "__version__",
    "open_fs",
    "open_observations",
]
__all__ += seam.__all__
