"""Finding files: ``ls``, ``glob`` and ``grep``, in the :class:`DiscoveryTools` plugin.

All three go through the seam (``resolve``, ``walk``, ``stream_text``), so
they work on every backend with the containment rules of read/write/edit:
hostile paths are refused, denied paths and symlinks leading out of the root
are never listed or searched, symlinked directories are not entered. Object
stores are listed under the narrowest prefix the arguments allow (the
literal directories at the front of a glob), never bucket-wide.

Every output is bounded: ``ls`` pages, ``glob`` caps its results and the
entries it walks, ``grep`` caps matches, bytes scanned, entries walked and
the length of a shown line, and streams each file in bounded memory.
Paths in results are relative to the workspace root, ready for ``read``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

from fsseam.host import READ_ONLY, Context, ToolEffects, ToolExecution, ToolResult
from fsseam.seam import (
    FileSystem,
    FsError,
    FsErrorCode,
    FsNotFound,
    FsTarget,
    FsWalkEntry,
)
from fsseam.tools.patterns import GlobPattern, LineSearcher, expand_braces, has_magic
from fsseam.tools.schemas import (
    GLOB_SCHEMA,
    GREP_SCHEMA,
    LS_SCHEMA,
    GlobArgs,
    GrepArgs,
    LsArgs,
    parse_args,
)

__all__ = ["DiscoveryTools", "GlobTool", "GrepTool", "LsTool"]

LS_DESCRIPTION = """\
List one directory of the workspace: names (directories end with "/"), file sizes \
in bytes, symlinks marked. Sorted by name and paged like read (offset, limit). Use \
glob to find files by name anywhere below a directory."""

GLOB_DESCRIPTION = """\
Find files by name pattern below a directory (default the workspace root), e.g. \
"**/*.py" or "src/**/test_*.ts". Returns matching file paths relative to the \
workspace root, sorted, ready for read. Directories and symlinks are not listed."""

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


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


class _Paths:
    """Shows display paths relative to the workspace root."""

    def __init__(self, root: FsTarget) -> None:
        self.root = root.display_path.rstrip("/")
        self._prefix = self.root + "/"

    @classmethod
    async def of(cls, fs: FileSystem) -> _Paths:
        return cls(await fs.resolve("."))

    def relative(self, target: FsTarget) -> str:
        display = target.display_path
        if display.rstrip("/") == self.root:
            return "."
        return display[len(self._prefix) :] if display.startswith(self._prefix) else display


async def _aclose(iterator: AsyncIterator[Any]) -> None:
    """Close an async generator now; left to the garbage collector, its close
    would be scheduled on a loop that may never run again."""
    close = getattr(iterator, "aclose", None)
    if close is not None:
        await close()


@asynccontextmanager
async def _walking(
    fs: FileSystem, target: FsTarget, max_depth: int | None = None
) -> AsyncIterator[AsyncIterator[FsWalkEntry]]:
    """``fs.walk`` closed on exit, so a listing stopped early releases its store pages now."""
    listing = fs.walk(target, max_depth=max_depth)
    try:
        yield listing
    finally:
        await _aclose(listing)


# -- ls ---------------------------------------------------------------------------------


def _ls_line(entry: FsWalkEntry) -> str:
    name = entry.path
    if entry.type == "directory":
        return name + "/"
    if entry.type == "symlink":
        return f"{name} (symlink)"
    if entry.type == "other":
        return f"{name} (other)"
    return name if entry.size is None else f"{name} ({_plural(entry.size, 'byte')})"


@dataclass(slots=True)
class LsTool:
    """``ls(path?, offset?, limit?)``: one directory level, paged."""

    limit: int = 200
    name: str = "ls"
    description: str = LS_DESCRIPTION
    parameters: dict[str, Any] = field(default_factory=lambda: LS_SCHEMA)
    effects: ClassVar[ToolEffects] = READ_ONLY

    async def run(
        self, ctx: Context, args: Mapping[str, Any], execution: ToolExecution | None
    ) -> ToolResult:
        """List the page of entries the arguments ask for."""
        parsed = parse_args(self.name, LsArgs, args)
        target = await ctx.fs.resolve(parsed.path)
        offset = parsed.offset or 1
        end = offset + (parsed.limit or self.limit)
        shown: list[FsWalkEntry] = []
        total = 0
        async with _walking(ctx.fs, target, max_depth=1) as listing:
            async for entry in listing:
                total += 1
                if offset <= total < end:
                    shown.append(entry)
        path = target.display_path
        if offset > total and not (offset == 1 and total == 0):
            raise FsNotFound(
                f'offset {offset} is past the end of "{path}" '
                f"({_plural(total, 'entry', 'entries')}); use an offset from 1 to {max(total, 1)}"
            )
        last = offset + len(shown) - 1
        if last < total:
            footer = (
                f"(Showing entries {offset}-{last} of {total}. Use offset={last + 1} to continue.)"
            )
        else:
            footer = f"(End of directory - total {total} entries)"
        body = "\n".join(map(_ls_line, shown))
        content = f"{body}\n\n{footer}" if shown else footer
        text = f"<path>{path}</path>\n<type>directory</type>\n<entries>\n{content}\n</entries>"
        value = {
            "path": path,
            "offset": offset,
            "entries": [{"name": e.path, "type": e.type, "size": e.size} for e in shown],
            "total_entries": total,
        }
        return ToolResult(False, text, value)


# -- glob -------------------------------------------------------------------------------


async def _glob_plan(fs: FileSystem, base: FsTarget, pattern: str) -> tuple[FsTarget, GlobPattern]:
    """Where to walk and what to match there.

    Each ``{a,b}`` alternative is resolved as a path first, so a pattern obeys
    the containment rules of every other path (``..``, ``~``, backslashes,
    denied names). The walk starts at the deepest directory all alternatives
    share before their first wildcard: on an object store that is the prefix
    listed, never the whole bucket.
    """
    alternatives = expand_braces(pattern)
    roots: list[list[str]] = []
    rests: list[list[str]] = []
    for alternative in alternatives:
        await fs.resolve(alternative, cwd=base.display_path)
        segments = alternative.split("/")
        literal = 0
        while literal < len(segments) - 1 and not has_magic(segments[literal]):
            literal += 1
        head = "/".join(segments[:literal]) or "."
        directory = await fs.resolve(head, cwd=base.display_path)
        roots.append(directory.display_path.split("/"))
        rests.append(segments[literal:])
    common = roots[0]
    for parts in roots[1:]:
        size = 0
        while size < min(len(common), len(parts)) and common[size] == parts[size]:
            size += 1
        common = common[:size]
    start = await fs.resolve("/".join(common) or "/")
    relative = [
        "/".join([*parts[len(common) :], *rest]) for parts, rest in zip(roots, rests, strict=True)
    ]
    return start, GlobPattern.of(relative)


@dataclass(slots=True)
class GlobTool:
    """``glob(pattern, path?)``: matching files, sorted, capped."""

    limit: int = 100
    max_entries: int = 100_000
    name: str = "glob"
    description: str = GLOB_DESCRIPTION
    parameters: dict[str, Any] = field(default_factory=lambda: GLOB_SCHEMA)
    effects: ClassVar[ToolEffects] = READ_ONLY

    async def run(
        self, ctx: Context, args: Mapping[str, Any], execution: ToolExecution | None
    ) -> ToolResult:
        """Walk from the pattern's literal directory and match each file."""
        parsed = parse_args(self.name, GlobArgs, args)
        fs = ctx.fs
        paths = await _Paths.of(fs)
        base = await fs.resolve(parsed.path)
        start, pattern = await _glob_plan(fs, base, parsed.pattern)
        shown: list[str] = []
        total = scanned = 0
        complete = True
        try:
            async with _walking(fs, start, pattern.max_depth) as listing:
                async for entry in listing:
                    scanned += 1
                    if scanned > self.max_entries:
                        complete = False
                        break
                    if entry.type == "file" and pattern.matches(entry.path):
                        total += 1
                        if len(shown) < self.limit:
                            shown.append(paths.relative(entry.target))
        except FsError as exc:
            # The pattern's literal directories may simply not exist: no match.
            missing = exc.code in (FsErrorCode.FS_NOT_FOUND, FsErrorCode.FS_NOT_DIRECTORY)
            if not missing or start.target_key == base.target_key:
                raise
        where = base.display_path
        walked = _plural(self.max_entries, "entry", "entries")
        if not total:
            text = f"No files match the pattern under {where}."
            if not complete:
                text = (
                    f"No files match the pattern in the first {walked} under {where}; "
                    "narrow the pattern or the path to search the rest."
                )
        else:
            if not complete:
                found = f"{_plural(total, 'file')} found in the first {walked} under {where}"
                head = (
                    f"Showing the first {len(shown)} of {found}"
                    if len(shown) < total
                    else f"Found {_plural(total, 'file')} in the first {walked} under {where}"
                )
                footer = f"({head}; there may be more. Narrow the pattern or the path.)"
            elif len(shown) < total:
                footer = (
                    f"(Showing the first {len(shown)} of {total} files. "
                    "Narrow the pattern or the path to see the rest.)"
                )
            else:
                footer = f"(Found {_plural(total, 'file')}.)"
            text = "\n".join(shown) + "\n\n" + footer
        value = {
            "path": where,
            "pattern": parsed.pattern,
            "files": shown,
            "total_files": total,
            "complete": complete,
        }
        return ToolResult(False, text, value)


# -- grep -------------------------------------------------------------------------------


@dataclass(slots=True)
class _GrepState:
    limit: int
    max_bytes: int
    matches: list[tuple[str, int, str]] = field(default_factory=list)
    files: int = 0
    scanned_bytes: int = 0
    skipped: int = 0
    unreadable: int = 0
    capped: bool = False
    stopped: str | None = None

    @property
    def done(self) -> bool:
        return self.capped or self.stopped is not None


@dataclass(slots=True)
class GrepTool:
    """``grep(pattern, path?, glob?, ignore_case?, literal?)`` on RE2, bounded everywhere."""

    limit: int = 100
    max_line_chars: int = 500
    max_bytes: int = 64 * 1024 * 1024
    max_entries: int = 100_000
    max_scan_line_bytes: int = 256 * 1024
    name: str = "grep"
    description: str = GREP_DESCRIPTION
    parameters: dict[str, Any] = field(default_factory=lambda: GREP_SCHEMA)
    effects: ClassVar[ToolEffects] = READ_ONLY

    async def run(
        self, ctx: Context, args: Mapping[str, Any], execution: ToolExecution | None
    ) -> ToolResult:
        """Search each text file below ``path`` (or ``path`` itself) in walk order."""
        parsed = parse_args(self.name, GrepArgs, args)
        searcher = LineSearcher(
            parsed.pattern, ignore_case=parsed.ignore_case, literal=parsed.literal
        )
        only = GlobPattern.parse(parsed.glob, "glob") if parsed.glob else None
        fs = ctx.fs
        paths = await _Paths.of(fs)
        base = await fs.resolve(parsed.path)
        state = _GrepState(self.limit, self.max_bytes)
        async with aclosing(self._files(fs, base, only, state)) as files:
            async for target, explicit in files:
                try:
                    await self._search(fs, target, paths.relative(target), searcher, state)
                except FsError as exc:
                    if explicit:
                        raise  # the path named a file: say what is wrong with it
                    if exc.code is FsErrorCode.FS_NOT_TEXT:
                        state.skipped += 1
                    elif exc.code in _SKIPPED_FILE_CODES:
                        state.unreadable += 1
                    else:
                        raise
                if state.done:
                    break
        return self._result(base.display_path, state)

    async def _files(
        self, fs: FileSystem, base: FsTarget, only: GlobPattern | None, state: _GrepState
    ) -> AsyncGenerator[tuple[FsTarget, bool], None]:
        """The files to search: ``(target, named explicitly)``, in walk order."""
        async with _walking(fs, base) as listing:
            try:
                entry = await anext(listing, None)
            except FsError as exc:
                if exc.code is not FsErrorCode.FS_NOT_DIRECTORY:
                    raise
                entry, named = None, True  # path names a file
            else:
                named = False
            scanned = 0
            while entry is not None:
                scanned += 1
                if scanned > self.max_entries:
                    state.stopped = _plural(self.max_entries, "entry", "entries")
                    return
                if entry.type == "file" and (only is None or only.matches_name(entry.path)):
                    yield entry.target, False
                entry = await anext(listing, None)
        if named:
            yield base, True

    async def _search(
        self,
        fs: FileSystem,
        target: FsTarget,
        shown_path: str,
        searcher: LineSearcher,
        state: _GrepState,
    ) -> None:
        """Stream one file and record its matching lines (all of them, or none if binary)."""
        found: list[tuple[str, int, str]] = []
        room = state.limit - len(state.matches)
        lines = 0  # complete lines before the pending bytes
        pending = b""
        skipping = False  # inside a line longer than max_scan_line_bytes

        def scan(block: bytes, first: int) -> None:
            for index, line in searcher.search(block):
                if len(found) >= room:
                    state.capped = True
                    return
                text = line.decode("utf-8", "replace").removesuffix("\r")
                if len(text) > self.max_line_chars:
                    text = (
                        text[: self.max_line_chars]
                        + f"... (line truncated to {self.max_line_chars} chars)"
                    )
                found.append((shown_path, first + index + 1, text))

        async with fs.stream_text(target) as stream:
            chunks = aiter(stream)
            try:
                async for chunk in chunks:
                    data = chunk.encode()
                    state.scanned_bytes += len(data)
                    if skipping:
                        newline = data.find(b"\n")
                        if newline == -1:
                            continue
                        data, skipping, lines = data[newline + 1 :], False, lines + 1
                    data = pending + data
                    cut = data.rfind(b"\n") + 1
                    block, pending = data[:cut], data[cut:]
                    scan(block, lines)
                    lines += block.count(b"\n")
                    if len(pending) > self.max_scan_line_bytes:
                        # Match the head of a giant line (minified code) and skip its
                        # rest: memory stays bounded whatever the file holds.
                        scan(pending[: self.max_scan_line_bytes], lines)
                        pending, skipping = b"", True
                    if state.capped:
                        break
                    if state.scanned_bytes >= state.max_bytes:
                        state.stopped = _plural(state.max_bytes, "byte")
                        break
                else:
                    if pending and not skipping:
                        scan(pending, lines)
            finally:
                await _aclose(chunks)  # stopped early: release the stream now, on this loop
        if found:
            state.files += 1
            state.matches.extend(found)

    @staticmethod
    def _result(where: str, state: _GrepState) -> ToolResult:
        notes = []
        if state.skipped:
            notes.append(f"Skipped {_plural(state.skipped, 'binary or non-UTF-8 file')}.")
        if state.unreadable:
            notes.append(f"Could not read {_plural(state.unreadable, 'file')}.")
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
                    f"Showing the first {_plural(count, 'match', 'matches')}, in "
                    f"{_plural(files, 'file')}; there are more. "
                    "Narrow the pattern, the path or the glob."
                )
            elif state.stopped:
                head = (
                    f"Found {_plural(count, 'match', 'matches')} in {_plural(files, 'file')}, "
                    f"but the search stopped after {state.stopped}; {narrow}."
                )
            else:
                head = f"Found {_plural(count, 'match', 'matches')} in {_plural(files, 'file')}."
            blocks: list[str] = []
            current = None
            for path, number, line in state.matches:
                if path != current:
                    blocks.append(f"\n{path}" if blocks else path)
                    current = path
                blocks.append(f"{number}: {line}")
            text = "\n".join(blocks) + "\n\n(" + " ".join([head, *notes]) + ")"
        value = {
            "path": where,
            "matches": [
                {"path": path, "line": number, "text": line} for path, number, line in state.matches
            ],
            "files": files,
            "complete": not state.capped and state.stopped is None,
        }
        return ToolResult(False, text, value)


# -- plugin -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DiscoveryTools:
    """Plugin registering ``ls``, ``glob`` and ``grep``.

    Separate from :class:`~fsseam.tools.FileTools` so adding it never changes
    the read/write/edit schemas. Limits: ``ls_limit`` entries per page (200),
    ``glob_limit`` files shown (100), ``grep_limit`` matches (100),
    ``grep_line_chars`` characters per shown line (500), ``max_entries``
    entries one glob or grep walks (100,000), ``max_grep_bytes`` bytes one grep
    scans (64 MiB).
    """

    ls_limit: int = 200
    glob_limit: int = 100
    grep_limit: int = 100
    grep_line_chars: int = 500
    max_entries: int = 100_000
    max_grep_bytes: int = 64 * 1024 * 1024

    def setup(self, ctx: Context) -> None:
        """Register the three tools on ``ctx``."""
        ctx.tools.register(LsTool(self.ls_limit))
        ctx.tools.register(GlobTool(self.glob_limit, self.max_entries))
        ctx.tools.register(
            GrepTool(
                self.grep_limit,
                self.grep_line_chars,
                self.max_grep_bytes,
                self.max_entries,
            )
        )
