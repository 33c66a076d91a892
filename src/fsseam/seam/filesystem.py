"""The abstract file system every backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager

from fsseam.seam.errors import FsError, FsErrorCode, FsStaleVersion, FsTooLarge
from fsseam.seam.types import (
    FsCapabilities,
    FsDirEntry,
    FsEditOutcome,
    FsEditRequest,
    FsInfo,
    FsPathInfo,
    FsTarget,
    FsVersion,
    FsWalkEntry,
    FsWriteIntent,
    FsWriteOutcome,
    ReplaceIfVersion,
)

__all__ = ["FileSystem", "FsTextStream", "walk_order"]

_EDIT_RETRIES = 16


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

    @property
    def max_edit_bytes(self) -> int | None:
        """Largest file, and edit result, the edit methods accept (``None``: no limit)."""
        return None

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

    async def walk(
        self, target: FsTarget, *, max_depth: int | None = None
    ) -> AsyncIterator[FsWalkEntry]:
        """Every entry below the directory ``target``, lazily, in a stable order.

        Order: sorted by path, a directory counting as its path plus ``/``
        (:func:`walk_order`), so every store lists the same tree the same way
        and a directory's entries follow it. ``max_depth=1`` is the directory's
        own children. Symlinked directories are reported, never entered. Only
        entries :meth:`resolve` accepts are yielded: denied paths and symlinks
        leading out of the root are left out, and a denied directory is not
        entered. Stop iterating whenever enough was seen; nothing more is
        listed.

        Raises ``FS_NOT_FOUND`` or ``FS_NOT_DIRECTORY`` for ``target`` itself;
        a subdirectory that vanishes or refuses listing midway is skipped.

        The default recurses with :meth:`list_dir` and checks each entry with
        :meth:`resolve`; backends override it with something cheaper (one
        recursive prefix listing on an object store).
        """
        if max_depth is not None and max_depth < 1:
            raise ValueError("max_depth must be 1 or more (or None for no limit)")
        stack: list[tuple[str, list[FsDirEntry]]] = [
            ("", sorted(await self.list_dir(target), key=_entry_key, reverse=True))
        ]
        while stack:
            prefix, pending = stack[-1]
            if not pending:
                stack.pop()
                continue
            entry = pending.pop()
            path = prefix + entry.name
            try:
                await self.resolve(entry.target.display_path)
            except FsError as exc:
                if exc.code is FsErrorCode.FS_SANDBOX_DENIED:
                    continue  # denied, or a symlink leading out of the root
                raise
            yield FsWalkEntry(path, entry.type, entry.target, entry.version, entry.size)
            depth = path.count("/") + 1
            if entry.type != "directory" or (max_depth is not None and depth >= max_depth):
                continue
            try:
                children = await self.list_dir(entry.target)
            except FsError as exc:
                if exc.code in _SKIPPED_DIRECTORY_CODES:
                    continue
                raise
            stack.append((path + "/", sorted(children, key=_entry_key, reverse=True)))

    async def edit_text_many(
        self,
        target: FsTarget,
        edits: Sequence[FsEditRequest],
        expected: FsVersion | None = None,
    ) -> FsEditOutcome:
        """Apply several literal replacements in order, all or nothing, in one guarded write.

        Each edit applies to the text the previous ones produced; if any
        fails, nothing is written and the error names the edit (``edit 2 of
        3: ...``). Same codes as :meth:`edit_text`; ``replacements`` is the
        total. The default reads the text and its version from one stream,
        applies the edits in memory and writes with ``ReplaceIfVersion``; an
        unguarded call (``expected=None``) retries when it loses a race.
        """
        from fsseam.text import apply_edits  # text imports the seam: import late

        name = target.display_path
        limit = self.max_edit_bytes
        for _ in range(_EDIT_RETRIES):
            try:
                async with self.stream_text(target) as stream:
                    size = stream.info.size
                    if limit is not None and size is not None and size > limit:
                        raise FsTooLarge(
                            f'"{name}" is {size} bytes, over the {limit}-byte edit limit '
                            "(max_edit_bytes); rewrite it with write, or raise max_edit_bytes"
                        )
                    before = "".join([chunk async for chunk in stream])
                    version = stream.info.version
            except FsError as exc:
                if exc.code is FsErrorCode.FS_NOT_FOUND:
                    raise FsStaleVersion(
                        f'"{name}" does not exist (deleted since it was read, or never '
                        "created); create it with write"
                    ) from None
                raise
            if expected is not None and version != expected:
                raise FsStaleVersion(f'"{name}" was modified since it was read')
            result = apply_edits(before, edits, name=name)
            grown = len(result.text.encode("utf-8", "surrogatepass"))
            if limit is not None and grown > limit:
                raise FsTooLarge(
                    f'editing "{name}" would make it {grown} bytes, over the '
                    f"{limit}-byte edit limit (max_edit_bytes)"
                )
            try:
                outcome = await self.write_text(target, result.text, ReplaceIfVersion(version))
            except FsError as exc:
                if expected is None and exc.code in _RACE_CODES:
                    continue
                raise
            return FsEditOutcome(outcome.version, before, result.text, result.replacements, version)
        raise FsStaleVersion(
            f'"{name}" kept changing during {_EDIT_RETRIES} edit attempts; try again'
        )


_SKIPPED_DIRECTORY_CODES = frozenset(
    {
        FsErrorCode.FS_NOT_FOUND,
        FsErrorCode.FS_NOT_DIRECTORY,
        FsErrorCode.FS_PERMISSION_DENIED,
        FsErrorCode.FS_SANDBOX_DENIED,
    }
)
_RACE_CODES = frozenset({FsErrorCode.FS_STALE_VERSION, FsErrorCode.FS_NOT_OBSERVED})


def walk_order(path: str, is_directory: bool) -> str:
    """The sort key of :meth:`FileSystem.walk`: the path, plus ``/`` for a directory.

    Sorting siblings by it and entering each directory right after it lists a
    tree in the order of its full key strings, which is also the order an
    object store lists keys under a prefix (UTF-8 byte order equals code-point
    order).
    """
    return path + "/" if is_directory else path


def _entry_key(entry: FsDirEntry) -> str:
    return walk_order(entry.name, entry.type == "directory")
