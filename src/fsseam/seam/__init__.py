"""The seam: value types, errors and the abstract file system (no fsspec here)."""

# Each submodule's ``__all__`` is the one list of its public names; the
# package re-exports them rather than repeating them.
from fsseam.seam import errors, events, types
from fsseam.seam.errors import *  # noqa: F403
from fsseam.seam.events import *  # noqa: F403
from fsseam.seam.filesystem import FileSystem, FsTextStream
from fsseam.seam.types import *  # noqa: F403

__all__ = ["FileSystem", "FsTextStream"]
__all__ += errors.__all__
__all__ += events.__all__
__all__ += types.__all__
