"""The abstract file system every backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager

from fsseam.seam.types import (
    FsCapabilities,
    FsDirEntry,
    FsEditOutcome,
    FsEditRequest,
    FsInfo,
    FsPathInfo,
    FsTarget,
    FsVersion,
    FsWriteIntent,
    FsWriteOutcome,
)

__all__ = ["FileSystem", "FsTextStream"]


class FsTextStream(ABC):
    """Decoded text of one file, streamed in bounded memory.

    ``info`` describes exactly the bytes being streamed (taken from the same
    response or descriptor, never a separate stat that could race).
    Iterating raises ``FS_NOT_TEXT`` as soon as a NUL byte or invalid UTF-8
    shows up.
    """

    info: FsInfo

    @abstractmethod
    def __aiter__(self) -> AsyncIterator[str]:
        """Yield the text in chunks (a leading BOM is not part of it)."""


class FileSystem(ABC):
    """A workspace rooted somewhere in a store, with guarded text operations.

    All methods are coroutines. Paths outside the root, a leading ``~``,
    backslashes and NUL bytes raise ``FS_SANDBOX_DENIED``.
    """

    @property
    @abstractmethod
    def capabilities(self) -> FsCapabilities:
        """What this store promises (cross-process guards, read-only)."""

    @abstractmethod
    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        """Resolve ``path`` (relative to ``cwd``, default the root) to a contained target.

        Accepts relative paths, absolute local paths or full URLs of this store
        inside the root, and ``/bucket/key`` on object stores. Never a network
        round trip on object stores. Raises ``FS_SANDBOX_DENIED``.
        """

    @abstractmethod
    async def stat(self, target: FsTarget) -> FsInfo | None:
        """Metadata of the target (following symlinks), ``None`` when absent."""

    @abstractmethod
    async def lstat(self, path: str, *, cwd: str | None = None) -> FsPathInfo | None:
        """Metadata of the path itself (a final symlink is not followed), ``None`` when absent."""

    @abstractmethod
    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[FsTextStream]:
        """Open the target for streaming decoded text.

        ``async with fs.stream_text(t) as s:`` raises ``FS_NOT_FOUND`` or
        ``FS_NOT_REGULAR_FILE`` on entry; ``s.info`` is the version of the
        streamed bytes.
        """

    async def read_text(self, target: FsTarget) -> str:
        """The whole UTF-8 text (BOM excluded).

        Raises ``FS_NOT_FOUND``, ``FS_NOT_REGULAR_FILE``, ``FS_NOT_TEXT``.
        """
        async with self.stream_text(target) as stream:
            return "".join([chunk async for chunk in stream])

    @abstractmethod
    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        """Direct children sorted by name; contents are never read.

        Raises ``FS_NOT_FOUND`` or ``FS_NOT_DIRECTORY``.
        """

    @abstractmethod
    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: FsWriteIntent | None = None,
    ) -> FsWriteOutcome:
        """Atomically create or replace the file; missing parents are created.

        ``CreateIfAbsent`` on an existing file raises ``FS_NOT_OBSERVED``;
        ``ReplaceIfVersion`` on a changed or missing file raises
        ``FS_STALE_VERSION``. The check and the publication are one atomic
        step where ``capabilities.atomic_conditional_write`` is true.
        """

    @abstractmethod
    async def edit_text(
        self,
        target: FsTarget,
        edit: FsEditRequest,
        expected: FsVersion | None = None,
    ) -> FsEditOutcome:
        """Apply a literal replacement in one critical section.

        The version is checked before matching. Raises ``FS_STALE_VERSION``
        (changed or missing), ``FS_EDIT_NOT_FOUND`` (empty or no match),
        ``FS_AMBIGUOUS_EDIT`` (several matches without ``replace_all``),
        ``FS_TOO_LARGE`` (file or result over ``max_edit_bytes``),
        ``FS_NOT_TEXT``.
        """
