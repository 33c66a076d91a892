"""Backends: the seam over fsspec, one dialect per store family."""

from fsseam.backends.fsspec import (
    DEFAULT_DENY,
    DEFAULT_MAX_EDIT_BYTES,
    FsspecFileSystem,
    open_fs,
)

__all__ = ["DEFAULT_DENY", "DEFAULT_MAX_EDIT_BYTES", "FsspecFileSystem", "open_fs"]
