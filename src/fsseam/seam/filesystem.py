"""The abstract file system every backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TypeVar

from fsseam.seam.conflicts import settle
from fsseam.seam.edits import EditResult, apply_edit, apply_edits
from fsseam.seam.errors import (
    FsError,
    FsErrorCode,
    FsMoveIncomplete,
    FsNotFound,
    FsSandboxDenied,
    FsStaleVersion,
    FsTooLarge,
)
from fsseam.seam.types import (
    FsCapabilities,
    FsDeleteOutcome,
    FsDirEntry,
    FsEditIntent,
    FsEditOutcome,
    FsEditRequest,
    FsInfo,
    FsMoveOutcome,
    FsPathInfo,
    FsTarget,
    FsVersion,
    FsWalkEntry,
    FsWriteIntent,
    FsWriteOutcome,
    RebaseIfClean,
    ReplaceIfVersion,
)

__all__ = [
    "EditBasis",
    "FileSystem",
    "FsTextStream",
    "move_incomplete",
    "same_file",
    "walk_order",
    "walk_tree",
]

_EDIT_RETRIES = 16

E = TypeVar("E")


@dataclass(frozen=True, slots=True)
class EditBasis:
    """What one edit attempt starts from (see :meth:`FileSystem._edit_basis`)."""

    text: str
    """The whole current text, BOM excluded."""
    version: FsVersion
    """The version of exactly that text."""
    commit: Callable[[str], Awaitable[FsVersion]]
    """Store the edited text guarded by ``version``; returns the new version.

    Raises ``FS_STALE_VERSION`` / ``FS_NOT_OBSERVED`` when the file moved on,
    ``FS_TOO_LARGE`` when the result is over ``max_edit_bytes``.
    """
    read: bool = True
    """False when the text came from memory, not from the store: the store may have
    moved on, so a failure to match (or a result too large) is only reported once
    the file has been read and found still at ``version``."""


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

    async def edit_text(
        self,
        target: FsTarget,
        edit: FsEditRequest,
        expected: FsEditIntent | None = None,
    ) -> FsEditOutcome:
        """Apply a literal replacement in one critical section.

        The version is checked before matching. Raises ``FS_STALE_VERSION``
        (changed, or deleted since ``expected`` was read), ``FS_NOT_FOUND``
        (missing, unguarded call), ``FS_EDIT_NOT_FOUND`` (empty or no match),
        ``FS_AMBIGUOUS_EDIT`` (several matches without ``replace_all``),
        ``FS_TOO_LARGE`` (file or result over ``max_edit_bytes``),
        ``FS_NOT_TEXT``.

        When the file moved past ``expected`` but its text is the one
        observed then (same bytes rewritten, ``touch``), the edit proceeds at
        the current version. :class:`~fsseam.seam.RebaseIfClean` also lets it
        land on top of a change it does not touch (``outcome.rebased``). A
        refusal carries the change when the observed text is known
        (:attr:`FsStaleVersion.change`). Both need the backend to remember
        the observed text (:meth:`_observed_text`); the default remembers
        nothing.

        The default is :meth:`edit_text_many`'s loop with one edit, worded as
        a single edit (no ``edit 1 of 1:``).
        """

        def apply(text: str, name: str) -> EditResult:
            return apply_edit(
                text, edit.old_string, edit.new_string, replace_all=edit.replace_all, name=name
            )

        return await self._edit_loop(target, expected, apply, (edit,))

    async def delete(self, target: FsTarget, expected: FsVersion | None = None) -> FsDeleteOutcome:
        """Delete the file, only while it is at ``expected`` (any version when ``None``).

        The check and the removal are one atomic step done by the store (S3
        ``DeleteObject`` with ``If-Match``, GCS ``ifGenerationMatch``, Azure
        ``If-Match``, the local lock and a re-check), so a change made since
        ``expected`` was read is never deleted. Raises ``FS_STALE_VERSION``
        (changed, or deleted, since ``expected`` was read), ``FS_NOT_FOUND``
        (missing, unguarded call), ``FS_NOT_REGULAR_FILE`` (a directory),
        ``FS_SANDBOX_DENIED`` (read-only, or a store that cannot guard a
        delete: fsseam refuses rather than delete unguarded).

        The default refuses: only the store can guard a delete.
        """
        raise FsSandboxDenied(
            f'cannot delete "{target.display_path}": {type(self).__name__} offers no '
            "guarded delete, and fsseam never deletes unguarded"
        )

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        expected: FsVersion | None = None,
        destination_intent: FsWriteIntent | None = None,
    ) -> FsMoveOutcome:
        """Move a file: write ``destination`` under ``destination_intent``, then delete ``source``.

        The source is read once (checked against ``expected`` before anything
        is written), its content written to the destination as
        :meth:`write_text` would (``CreateIfAbsent``: ``FS_NOT_OBSERVED`` when
        it exists; ``ReplaceIfVersion``: ``FS_STALE_VERSION`` when it moved on;
        ``None``: unconditional), and only then is the source deleted, guarded
        by the version read. A failure before the write changes nothing; a
        failure of the delete leaves both files and raises
        :class:`~fsseam.seam.FsMoveIncomplete` saying so — never neither.
        ``ValueError`` when both name the same file.

        The default moves text (a BOM is not kept) through :meth:`stream_text`,
        :meth:`write_text` and :meth:`delete`; backends move bytes.
        """
        same_file(source, destination)
        if type(self).delete is FileSystem.delete:
            await self.delete(source)  # refuses before anything is written
        try:
            async with self.stream_text(source) as stream:
                text = "".join([chunk async for chunk in stream])
                version = stream.info.version
        except FsNotFound:
            if expected is None:
                raise
            raise FsStaleVersion(f'"{source.display_path}" was deleted since it was read') from None
        if expected is not None and version != expected:
            raise FsStaleVersion(f'"{source.display_path}" was modified since it was read')
        written = await self.write_text(destination, text, destination_intent)
        try:
            await self.delete(source, version)
        except FsError as exc:
            raise move_incomplete(
                source, destination, exc, written.version, written.before_version
            ) from exc
        return FsMoveOutcome(written.version, version, written.before_version)

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

        async def children(_: str, entry: FsDirEntry | None) -> list[FsDirEntry]:
            return await self.list_dir(target if entry is None else entry.target)

        async def admit(entry: FsDirEntry) -> bool:
            try:
                await self.resolve(entry.target.display_path)
            except FsError as exc:
                if exc.code is FsErrorCode.FS_SANDBOX_DENIED:
                    return False  # denied, or a symlink leading out of the root
                raise
            return True

        async for path, entry in walk_tree(
            children,
            name=lambda entry: entry.name,
            is_directory=lambda entry: entry.type == "directory",
            max_depth=max_depth,
            admit=admit,
        ):
            yield FsWalkEntry(path, entry.type, entry.target, entry.version, entry.size)

    async def edit_text_many(
        self,
        target: FsTarget,
        edits: Sequence[FsEditRequest],
        expected: FsEditIntent | None = None,
    ) -> FsEditOutcome:
        """Apply several literal replacements in order, all or nothing, in one guarded write.

        Each edit applies to the text the previous ones produced; if any
        fails, nothing is written and the error names the edit (``edit 2 of
        3: ...``). Same codes as :meth:`edit_text`; ``replacements`` is the
        total. The default reads the text and its version once
        (:meth:`_edit_basis`), applies the edits in memory and commits guarded
        by that version; an unguarded call (``expected=None``) retries when it
        loses a race. A moved-on file is handled as in :meth:`edit_text`.
        """

        def apply(text: str, name: str) -> EditResult:
            return apply_edits(text, edits, name=name)

        return await self._edit_loop(target, expected, apply, tuple(edits))

    async def _observed_text(self, target: FsTarget, version: FsVersion) -> str | None:
        """The text ``target`` held at ``version``, if this file system remembers it.

        Never I/O, never a guess: only text known to be exactly that
        version's (a backend's content cache). ``None`` (the default): unknown,
        so a moved-on file is refused without its change, never rebased.
        """
        return None

    async def _edit_basis(self, target: FsTarget, expected: FsVersion | None = None) -> EditBasis:
        """Read what an edit starts from; ``FS_NOT_FOUND`` when nothing is there.

        ``expected`` is the version the caller guards by: a backend that
        holds exactly that version's text may return it without reading the
        store (its commit stays guarded by ``expected``, so the store refuses
        it if the file moved on). ``None``: read what is there now.

        The default streams the text (refusing files over ``max_edit_bytes``
        before reading them) and commits with ``write_text`` under
        ``ReplaceIfVersion``. A backend overrides it to read and write with
        fewer round trips; the loop around it stays the seam's.
        """
        name = target.display_path
        limit = self.max_edit_bytes
        async with self.stream_text(target) as stream:
            size = stream.info.size
            if limit is not None and size is not None and size > limit:
                raise FsTooLarge(
                    f'"{name}" is {size} bytes, over the {limit}-byte edit limit '
                    "(max_edit_bytes); rewrite it with write, or raise max_edit_bytes"
                )
            text = "".join([chunk async for chunk in stream])
            version = stream.info.version

        async def commit(edited: str) -> FsVersion:
            grown = len(edited.encode("utf-8", "surrogatepass"))
            if limit is not None and grown > limit:
                raise FsTooLarge(
                    f'editing "{name}" would make it {grown} bytes, over the '
                    f"{limit}-byte edit limit (max_edit_bytes)"
                )
            outcome = await self.write_text(target, edited, ReplaceIfVersion(version))
            return outcome.version

        return EditBasis(text, version, commit)

    async def _edit_loop(
        self,
        target: FsTarget,
        expected: FsEditIntent | None,
        apply: Callable[[str, str], EditResult],
        edits: Sequence[FsEditRequest],
    ) -> FsEditOutcome:
        """The one edit loop: read a basis, check ``expected``, ``apply(text, name)``, commit.

        A guarded call reports a missing file as deleted since it was read
        (``FS_STALE_VERSION``). A file at another version is judged by its
        text against the observed one (:func:`~fsseam.seam.conflicts.settle`):
        the same text proceeds at the current version, a clean rebase (when
        allowed) applies ``edits`` on top, anything else is refused with the
        change. A commit that loses a race reads the file again and judges
        anew. An unguarded call reports a missing file as ``FS_NOT_FOUND``
        (nothing was observed: it is simply not there) and re-reads and
        re-applies when it loses a race.
        """
        name = target.display_path
        rebase = isinstance(expected, RebaseIfClean)
        observed_version = expected.version if isinstance(expected, RebaseIfClean) else expected
        guard = observed_version
        observed: str | None = None
        looked = False
        fresh = False
        for _ in range(_EDIT_RETRIES):
            try:
                basis = await self._edit_basis(target, None if fresh else guard)
            except FsNotFound:
                if guard is None:
                    raise
                raise FsStaleVersion(f'"{name}" was deleted since it was read') from None
            fresh = False
            rebased: str | None = None
            if observed_version is not None and basis.version != guard:
                if not looked:
                    observed = await self._observed_text(target, observed_version)
                    looked = True
                verdict = await settle(
                    name, observed, basis.text, basis.version, edits if rebase else None
                )
                rebased = verdict.change
                guard = basis.version
            try:
                result = apply(basis.text, name)
                version = await basis.commit(result.text)
            except FsError as exc:
                if not basis.read and exc.code in _UNREAD_CODES:
                    # The version is checked before matching: read the file first.
                    fresh = True
                    continue
                if exc.code not in _RACE_CODES:
                    raise
                if observed_version is not None:
                    if not looked:
                        observed = await self._observed_text(target, observed_version)
                        looked = True
                    if observed is None:
                        raise  # nothing to judge the new text by: refused, as it always was
                fresh = True  # unguarded: re-apply; guarded: judge what is there now
                continue
            return FsEditOutcome(
                version, basis.text, result.text, result.replacements, basis.version, rebased
            )
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
_UNREAD_CODES = frozenset(
    {FsErrorCode.FS_EDIT_NOT_FOUND, FsErrorCode.FS_AMBIGUOUS_EDIT, FsErrorCode.FS_TOO_LARGE}
)
"""Refusals of an edit of text held in memory that wait for the file to be read."""


def same_file(source: FsTarget, destination: FsTarget) -> None:
    """``ValueError`` when a move's two targets are one file (any spelling)."""
    if source.target_key == destination.target_key:
        raise ValueError(
            f'cannot move "{source.display_path}" onto itself: source and destination '
            "name the same file"
        )


def move_incomplete(
    source: FsTarget,
    destination: FsTarget,
    cause: FsError,
    version: FsVersion,
    replaced: FsVersion | None,
) -> FsMoveIncomplete:
    """The error of a move whose destination was written but whose source was not deleted."""
    return FsMoveIncomplete(
        f'moving "{source.display_path}" to "{destination.display_path}" stopped halfway: '
        f'"{destination.display_path}" was written, but this move did not delete '
        f'"{source.display_path}" ({cause.message}); nothing was lost, check both',
        cause.code,
        version=version,
        replaced_version=replaced,
    )


def walk_order(path: str, is_directory: bool) -> str:
    """The sort key of :meth:`FileSystem.walk`: the path, plus ``/`` for a directory.

    Sorting siblings by it and entering each directory right after it lists a
    tree in the order of its full key strings, which is also the order an
    object store lists keys under a prefix (UTF-8 byte order equals code-point
    order).
    """
    return path + "/" if is_directory else path


async def walk_tree(
    children: Callable[[str, E | None], Awaitable[list[E]]],
    *,
    name: Callable[[E], str],
    is_directory: Callable[[E], bool],
    max_depth: int | None = None,
    admit: Callable[[E], Awaitable[bool]] | None = None,
    enter: Callable[[str, E], bool] | None = None,
) -> AsyncIterator[tuple[str, E]]:
    """The one depth-first walk: ``(relative path, entry)`` in :func:`walk_order`.

    ``children("", None)`` lists the top (its errors propagate);
    ``children(path, entry)`` a directory below it, skipped when it vanished
    or refuses listing
    (``FS_NOT_FOUND``, ``FS_NOT_DIRECTORY``, ``FS_PERMISSION_DENIED``,
    ``FS_SANDBOX_DENIED``). ``admit(entry)`` false leaves an entry out (and
    does not enter it); ``enter(path, entry)`` false lists a directory but
    does not descend into it. ``max_depth=1`` is the top's own children.
    Only one directory's listing is held per level, so memory follows the
    depth and the widest directory, never the whole tree.
    """

    def ordered(entries: list[E]) -> list[E]:
        # Reverse walk order, so pop() yields them in order.
        return sorted(entries, key=lambda e: walk_order(name(e), is_directory(e)), reverse=True)

    stack: list[tuple[str, list[E]]] = [("", ordered(await children("", None)))]
    while stack:
        prefix, pending = stack[-1]
        if not pending:
            stack.pop()
            continue
        entry = pending.pop()
        if admit is not None and not await admit(entry):
            continue
        path = prefix + name(entry)
        yield path, entry
        if not is_directory(entry):
            continue
        if max_depth is not None and path.count("/") + 1 >= max_depth:
            continue
        if enter is not None and not enter(path, entry):
            continue
        try:
            below = await children(path, entry)
        except FsError as exc:
            if exc.code in _SKIPPED_DIRECTORY_CODES:
                continue
            raise
        stack.append((path + "/", ordered(below)))
