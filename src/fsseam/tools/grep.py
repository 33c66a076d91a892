"""``grep``: search file contents concurrently, answer exactly as one file after another would.

On an object store every file grep opens is a GET, so files are fetched
and scanned concurrently while the walk is still listing: up to
``concurrency`` files in flight, and no more than ``buffer_bytes`` of them
(by their listed sizes) at once, so memory stays bounded whatever the file
sizes. Results are committed strictly in walk order, with the caps a
sequential search has:

- ``limit`` matches: each file in flight stops once it found more than the
  room left, and when a committed file fills the room everything after it
  is cancelled, GETs in flight included;
- ``max_bytes`` bytes of text searched: a file is fetched ahead only when
  the listed sizes say the budget cannot run out inside it; the file in
  which it would waits until everything before it is committed and is then
  searched exactly up to the budget, inside a line too;
- ``max_entries`` entries walked.

So the text is the same on every store for the same tree (paths aside).
Each file is read by one ``stream_text`` — one GET carrying the bytes and
their version. A file that is binary, not UTF-8 or unreadable is skipped the
same way everywhere and its bytes do not count against ``max_bytes``.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fsseam.host import READ_ONLY, Context, ToolExecution, ToolResult
from fsseam.seam import FileSystem, FsError, FsErrorCode, FsTarget
from fsseam.tools._walk import RelativePaths, aclose, plural, walking
from fsseam.tools.base import ModelTool, ToolSpec
from fsseam.tools.patterns import GlobPattern, LineSearcher
from fsseam.tools.scan import DEFAULT_MAX_LINE_BYTES, FileScanner, Match
from fsseam.tools.schemas import GREP_SCHEMA, GrepArgs

__all__ = ["GREP_DESCRIPTION", "GrepProgress", "GrepTool"]

GREP_DESCRIPTION = """\
Search the contents of text files for a regular expression (or plain text with \
literal). Shows each matching line as "N: text" under its file's path (relative to \
the workspace root), so read can open it at offset N. Binary and non-UTF-8 files are \
skipped; narrow big searches with path or glob."""

_SKIPPED_FILE_CODES = frozenset(
    {
        FsErrorCode.FS_NOT_FOUND,
        FsErrorCode.FS_NOT_REGULAR_FILE,
        FsErrorCode.FS_PERMISSION_DENIED,
        FsErrorCode.FS_SANDBOX_DENIED,
        FsErrorCode.FS_IO_ERROR,
    }
)
_MIN_RESERVE = 64 * 1024
"""Bytes of ``buffer_bytes`` a small file holds while in flight (buffers, a response)."""
_CHUNK_ALLOWANCE = 1 << 20
"""What a stream holds besides the line being searched: about one chunk."""


@dataclass(frozen=True, slots=True)
class GrepProgress:
    """Where a running grep is, for a progress display."""

    files: int
    """Files searched so far (skipped ones included)."""
    bytes: int
    """Bytes of text searched so far."""
    matches: int
    """Matches found so far."""


@dataclass(frozen=True, slots=True)
class _Candidate:
    target: FsTarget
    size: int | None
    explicit: bool  # the path named this file: say what is wrong with it


@dataclass(frozen=True, slots=True)
class _WalkEnd:
    stopped: str | None = None  # "100000 entries" when max_entries cut the walk
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class _Scanned:
    found: list[Match]
    scanned: int
    cut: bool
    error: FsError | None


@dataclass(slots=True)
class _Job:
    candidate: _Candidate
    reserve: int
    planned: int
    task: asyncio.Task[_Scanned]


@dataclass(slots=True)
class _State:
    limit: int
    max_bytes: int
    matches: list[tuple[str, Match]] = field(default_factory=list)
    files: int = 0  # files with a match
    searched: int = 0  # files searched, skipped ones included
    scanned_bytes: int = 0
    skipped: int = 0
    unreadable: int = 0
    capped: bool = False
    stopped: str | None = None

    @property
    def done(self) -> bool:
        return self.capped or self.stopped is not None

    @property
    def room(self) -> int:
        return self.limit - len(self.matches)


@dataclass(slots=True)
class GrepTool(ModelTool[GrepArgs]):
    """``grep(pattern, path?, glob?, ignore_case?, literal?)`` on RE2, bounded everywhere.

    ``limit`` matches shown (100); ``max_line_chars`` characters of a line,
    or of the window around a match in a longer line (500); ``max_bytes``
    bytes of text searched (64 MiB); ``max_entries`` entries walked
    (100,000); ``max_scan_line_bytes`` the longest line held whole (4 MiB;
    longer ones are searched in overlapping windows); ``concurrency`` files
    in flight (32); ``buffer_bytes`` listed bytes of the files in flight
    (32 MiB); ``progress`` is called after each file with a
    :class:`GrepProgress`.
    """

    spec = ToolSpec("grep", GREP_DESCRIPTION, GREP_SCHEMA, GrepArgs, READ_ONLY)

    limit: int = 100
    max_line_chars: int = 500
    max_bytes: int = 64 * 1024 * 1024
    max_entries: int = 100_000
    max_scan_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    concurrency: int = 32
    buffer_bytes: int = 32 * 1024 * 1024
    progress: Callable[[GrepProgress], None] | None = None

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("concurrency must be 1 or more")
        if self.max_scan_line_bytes < 2 * self._overlap:
            raise ValueError("max_scan_line_bytes must be at least 8 * max_line_chars")

    @property
    def _overlap(self) -> int:
        # A window's text must fit in what two windows share (see FileScanner).
        return max(self.max_scan_line_bytes // 4, 4 * self.max_line_chars)

    async def call(
        self, ctx: Context, args: GrepArgs, execution: ToolExecution | None
    ) -> ToolResult:
        """Search each text file below ``path`` (or ``path`` itself), in walk order."""
        searcher = LineSearcher(args.pattern, ignore_case=args.ignore_case, literal=args.literal)
        only = GlobPattern.parse(args.glob, "glob") if args.glob else None
        fs = ctx.fs
        paths = await RelativePaths.of(fs)
        base = await fs.resolve(args.path)
        state = _State(self.limit, self.max_bytes)
        await self._search(fs, base, only, searcher, paths, state)
        return self._result(base.display_path, state)

    # -- the pipeline ------------------------------------------------------------------

    async def _search(
        self,
        fs: FileSystem,
        base: FsTarget,
        only: GlobPattern | None,
        searcher: LineSearcher,
        paths: RelativePaths,
        state: _State,
    ) -> None:
        queue: asyncio.Queue[_Candidate | _WalkEnd] = asyncio.Queue(self.concurrency * 8)
        walker = asyncio.create_task(self._walk(fs, base, only, queue))
        inflight: deque[_Job] = deque()
        held: _Candidate | None = None
        end: _WalkEnd | None = None
        used = planned = 0  # buffer_bytes reserved; listed bytes of the jobs in flight
        try:
            while not state.done:
                while len(inflight) < self.concurrency:
                    if held is None:
                        if end is not None or (inflight and queue.empty()):
                            break  # commit what is ready rather than wait on the listing
                        item = await queue.get()
                        if isinstance(item, _WalkEnd):
                            end = item
                            break
                        held = item
                    if not inflight and state.max_bytes <= state.scanned_bytes:
                        state.stopped = plural(state.max_bytes, "byte")  # a file is left over
                        break
                    job = self._dispatch(fs, held, searcher, state, inflight, used, planned)
                    if job is None:
                        break  # it waits for the jobs ahead of it
                    held = None
                    inflight.append(job)
                    used += job.reserve
                    planned += job.planned
                if state.done:
                    break
                if inflight:
                    job = inflight.popleft()
                    used -= job.reserve
                    planned -= job.planned
                    self._commit(job.candidate, await job.task, paths, state)
                elif end is not None:
                    if end.error is not None:
                        raise end.error
                    if end.stopped is not None:
                        state.stopped = end.stopped
                    break
        finally:
            # Capped, stopped or failed: cancel what is in flight (GETs included)
            # and wait, so no stream outlives the call or closes on a dead loop.
            tasks: list[asyncio.Task[Any]] = [walker, *(job.task for job in inflight)]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def _dispatch(
        self,
        fs: FileSystem,
        candidate: _Candidate,
        searcher: LineSearcher,
        state: _State,
        inflight: deque[_Job],
        used: int,
        planned: int,
    ) -> _Job | None:
        """Start searching ``candidate``, or ``None`` when it must wait for the jobs ahead."""
        size = candidate.size
        left = state.max_bytes - state.scanned_bytes - planned
        fits = size is not None and left > 0 and size <= left
        per_file = self.max_scan_line_bytes + _CHUNK_ALLOWANCE
        reserve = min(max(size or per_file, _MIN_RESERVE), per_file)
        if inflight and (not fits or used + reserve > self.buffer_bytes):
            return None
        # A file that fits is cut only if it grew since it was listed; the one
        # where the budget runs out is alone in flight, so its cut is exact.
        stop_at = left
        listed = size if fits and size is not None else max(left, 0)
        task = asyncio.create_task(self._scan(fs, candidate.target, searcher, stop_at, state))
        return _Job(candidate, reserve, listed, task)

    async def _walk(
        self,
        fs: FileSystem,
        base: FsTarget,
        only: GlobPattern | None,
        queue: asyncio.Queue[_Candidate | _WalkEnd],
    ) -> None:
        """List the files to search into ``queue``, in walk order, then a :class:`_WalkEnd`."""
        try:
            named = False
            async with walking(fs, base) as listing:
                try:
                    entry = await anext(listing, None)
                except FsError as exc:
                    if exc.code is not FsErrorCode.FS_NOT_DIRECTORY:
                        raise
                    entry, named = None, True  # path names a file
                walked = 0
                while entry is not None:
                    walked += 1
                    if walked > self.max_entries:
                        await queue.put(_WalkEnd(plural(self.max_entries, "entry", "entries")))
                        return
                    if entry.type == "file" and (only is None or only.matches_name(entry.path)):
                        await queue.put(_Candidate(entry.target, entry.size, False))
                    entry = await anext(listing, None)
            if named:
                await queue.put(_Candidate(base, None, True))
            await queue.put(_WalkEnd())
        except Exception as exc:  # handed to the consumer, which raises it in order
            await queue.put(_WalkEnd(error=exc))

    async def _scan(
        self,
        fs: FileSystem,
        target: FsTarget,
        searcher: LineSearcher,
        stop_at: int,
        state: _State,
    ) -> _Scanned:
        """Stream one file through a :class:`FileScanner`; failures are returned, not raised."""
        scanner = FileScanner(
            searcher,
            line_chars=self.max_line_chars,
            max_line_bytes=self.max_scan_line_bytes,
            overlap=self._overlap,
            stop_at=stop_at,
            bound=lambda: state.room,
        )
        error: FsError | None = None
        try:
            async with fs.stream_text(target) as stream:
                chunks = aiter(stream)
                try:
                    async for chunk in chunks:
                        if not scanner.feed(chunk.encode()):
                            break
                    else:
                        scanner.finish()
                finally:
                    await aclose(chunks)  # stopped early: release the stream now, on this loop
        except FsError as exc:
            if scanner.scanned >= stop_at:
                scanner.stop_here()  # the budget ran out before the bad bytes
            else:
                error = exc
        return _Scanned(scanner.found, scanner.scanned, scanner.cut, error)

    def _commit(
        self, candidate: _Candidate, scanned: _Scanned, paths: RelativePaths, state: _State
    ) -> None:
        """Apply one file's result exactly as a sequential search would."""
        room = state.room
        state.searched += 1
        if scanned.error is not None and len(scanned.found) <= room:
            # (With more matches than room, the cap came before the bad bytes.)
            error = scanned.error
            if candidate.explicit:
                raise error
            if error.code is FsErrorCode.FS_NOT_TEXT:
                state.skipped += 1
            elif error.code in _SKIPPED_FILE_CODES:
                state.unreadable += 1
            else:
                raise error
        else:
            shown = paths.relative(candidate.target)
            taken = scanned.found[:room]
            if taken:
                state.files += 1
                state.matches.extend((shown, match) for match in taken)
            state.scanned_bytes += scanned.scanned
            if len(scanned.found) > room:
                state.capped = True
            elif scanned.cut:
                state.stopped = plural(state.max_bytes, "byte")
        if self.progress is not None:
            self.progress(GrepProgress(state.searched, state.scanned_bytes, len(state.matches)))

    # -- the answer --------------------------------------------------------------------

    @staticmethod
    def _result(where: str, state: _State) -> ToolResult:
        notes = []
        if state.skipped:
            notes.append(f"Skipped {plural(state.skipped, 'binary or non-UTF-8 file')}.")
        if state.unreadable:
            notes.append(f"Could not read {plural(state.unreadable, 'file')}.")
        count, files = len(state.matches), state.files
        narrow = "narrow the path or the glob to search the rest"
        if not count:
            head = f"No matches under {where}."
            if state.stopped:
                head = (
                    f"No matches under {where}, but the search stopped after "
                    f"{state.stopped}; {narrow}."
                )
            text = " ".join([head, *notes])
        else:
            if state.capped:
                head = (
                    f"Showing the first {plural(count, 'match', 'matches')}, in "
                    f"{plural(files, 'file')}; there are more. "
                    "Narrow the pattern, the path or the glob."
                )
            elif state.stopped:
                head = (
                    f"Found {plural(count, 'match', 'matches')} in {plural(files, 'file')}, "
                    f"but the search stopped after {state.stopped}; {narrow}."
                )
            else:
                head = f"Found {plural(count, 'match', 'matches')} in {plural(files, 'file')}."
            blocks: list[str] = []
            current = None
            for path, match in state.matches:
                if path != current:
                    blocks.append(f"\n{path}" if blocks else path)
                    current = path
                where_in = (
                    f"{match.line}" if match.column is None else (f"{match.line}:{match.column}")
                )
                blocks.append(f"{where_in}: {match.text}")
            text = "\n".join(blocks) + "\n\n(" + " ".join([head, *notes]) + ")"
        value = {
            "path": where,
            "matches": [_match_value(path, match) for path, match in state.matches],
            "files": files,
            "complete": not state.capped and state.stopped is None,
        }
        return ToolResult(False, text, value)


def _match_value(path: str, match: Match) -> dict[str, Any]:
    value: dict[str, Any] = {"path": path, "line": match.line, "text": match.text}
    if match.column is not None:
        value["column"] = match.column
    return value
