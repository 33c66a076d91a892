"""Finding files: ``ls``, ``glob`` and ``grep``, in the :class:`DiscoveryTools` plugin.

All three go through the seam (``resolve``, ``walk``, ``stream_text``), so
they work on every backend with the containment rules of read/write/edit:
hostile paths are refused, denied paths and symlinks leading out of the root
are never listed or searched, symlinked directories are not entered. Object
stores are listed under the narrowest prefix the arguments allow (the
literal directories at the front of a glob), never bucket-wide.

Every output is bounded: ``ls`` pages, ``glob`` caps its results and the
entries it walks, ``grep`` caps matches, bytes scanned, entries walked and
the length of a shown line (a long line shows a window around each match),
and streams files concurrently in bounded memory (:mod:`fsseam.tools.grep`).
Paths in results are relative to the workspace root, ready for ``read``.
"""

from __future__ import annotations

from dataclasses import dataclass

from fsseam.host import READ_ONLY, Context, ToolExecution, ToolResult
from fsseam.seam import FileSystem, FsError, FsErrorCode, FsNotFound, FsTarget, FsWalkEntry
from fsseam.tools._walk import RelativePaths, plural, walking
from fsseam.tools.base import ModelTool, ToolSpec
from fsseam.tools.grep import GrepProgress, GrepTool
from fsseam.tools.patterns import GlobPattern, check_glob, has_magic
from fsseam.tools.schemas import GLOB_SCHEMA, LS_SCHEMA, GlobArgs, LsArgs

__all__ = ["DiscoveryTools", "GlobTool", "GrepProgress", "GrepTool", "LsTool"]

LS_DESCRIPTION = """\
List one directory of the workspace: names (directories end with "/"), file sizes \
in bytes, symlinks marked. Sorted by name and paged like read (offset, limit). Use \
glob to find files by name anywhere below a directory."""

GLOB_DESCRIPTION = """\
Find files by name pattern below a directory (default the workspace root), e.g. \
"**/*.py" or "src/**/test_*.ts". Returns matching file paths relative to the \
workspace root, sorted, ready for read. Directories and symlinks are not listed."""

# -- ls ---------------------------------------------------------------------------------


def _ls_line(entry: FsWalkEntry) -> str:
    name = entry.path
    if entry.type == "directory":
        return name + "/"
    if entry.type == "symlink":
        return f"{name} (symlink)"
    if entry.type == "other":
        return f"{name} (other)"
    return name if entry.size is None else f"{name} ({plural(entry.size, 'byte')})"


@dataclass(slots=True)
class LsTool(ModelTool[LsArgs]):
    """``ls(path?, offset?, limit?)``: one directory level, paged."""

    spec = ToolSpec("ls", LS_DESCRIPTION, LS_SCHEMA, LsArgs, READ_ONLY)

    limit: int = 200

    async def call(self, ctx: Context, args: LsArgs, execution: ToolExecution | None) -> ToolResult:
        """List the page of entries the arguments ask for."""
        target = await ctx.fs.resolve(args.path)
        offset = args.offset or 1
        end = offset + (args.limit or self.limit)
        shown: list[FsWalkEntry] = []
        total = 0
        async with walking(ctx.fs, target, max_depth=1) as listing:
            async for entry in listing:
                total += 1
                if offset <= total < end:
                    shown.append(entry)
        path = target.display_path
        if offset > total and not (offset == 1 and total == 0):
            raise FsNotFound(
                f'offset {offset} is past the end of "{path}" '
                f"({plural(total, 'entry', 'entries')}); use an offset from 1 to {max(total, 1)}"
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
    alternatives = check_glob(pattern)
    roots: list[list[str]] = []
    rests: list[list[str]] = []
    for alternative in alternatives:
        segments = alternative.split("/")
        # A run of "**" matches what one does: resolve the short spelling, so a
        # deep pattern is not refused as a path longer than the store allows.
        probe = [
            s for i, s in enumerate(segments) if not (s == "**" and segments[i - 1 : i] == ["**"])
        ]
        await fs.resolve("/".join(probe), cwd=base.display_path)
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
class GlobTool(ModelTool[GlobArgs]):
    """``glob(pattern, path?)``: matching files, sorted, capped."""

    spec = ToolSpec("glob", GLOB_DESCRIPTION, GLOB_SCHEMA, GlobArgs, READ_ONLY)

    limit: int = 100
    max_entries: int = 100_000

    async def call(
        self, ctx: Context, args: GlobArgs, execution: ToolExecution | None
    ) -> ToolResult:
        """Walk from the pattern's literal directory and match each file."""
        fs = ctx.fs
        paths = await RelativePaths.of(fs)
        base = await fs.resolve(args.path)
        start, pattern = await _glob_plan(fs, base, args.pattern)
        shown: list[str] = []
        total = scanned = 0
        complete = True
        try:
            async with walking(fs, start, pattern.max_depth) as listing:
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
        walked = plural(self.max_entries, "entry", "entries")
        if not total:
            text = f"No files match the pattern under {where}."
            if not complete:
                text = (
                    f"No files match the pattern in the first {walked} under {where}; "
                    "narrow the pattern or the path to search the rest."
                )
        else:
            if not complete:
                found = f"{plural(total, 'file')} found in the first {walked} under {where}"
                head = (
                    f"Showing the first {len(shown)} of {found}"
                    if len(shown) < total
                    else f"Found {plural(total, 'file')} in the first {walked} under {where}"
                )
                footer = f"({head}; there may be more. Narrow the pattern or the path.)"
            elif len(shown) < total:
                footer = (
                    f"(Showing the first {len(shown)} of {total} files. "
                    "Narrow the pattern or the path to see the rest.)"
                )
            else:
                footer = f"(Found {plural(total, 'file')}.)"
            text = "\n".join(shown) + "\n\n" + footer
        value = {
            "path": where,
            "pattern": args.pattern,
            "files": shown,
            "total_files": total,
            "complete": complete,
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
    scans (64 MiB). ``grep_concurrency`` files one grep has in flight (32)
    and ``grep_buffer_bytes`` the listed bytes of those files (32 MiB): on an
    object store each is a GET, so this is what hides the round trips while
    keeping memory bounded (see :mod:`fsseam.tools.grep`).
    """

    ls_limit: int = 200
    glob_limit: int = 100
    grep_limit: int = 100
    grep_line_chars: int = 500
    max_entries: int = 100_000
    max_grep_bytes: int = 64 * 1024 * 1024
    grep_concurrency: int = 32
    grep_buffer_bytes: int = 32 * 1024 * 1024

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
                concurrency=self.grep_concurrency,
                buffer_bytes=self.grep_buffer_bytes,
            )
        )
