"""Text rules shared by every backend: decoding, line model, literal edits.

Pure functions and small state machines, no I/O. The line model:
lines are separated by ``\\n``; a final newline does not start another line;
an empty text has no lines; a ``\\r`` before the ``\\n`` is not part of the
shown line.
"""

from __future__ import annotations

import codecs
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from operator import add

from fsseam.seam.edits import EditResult, apply_edit, apply_edits, dominant_newline
from fsseam.seam.errors import FsNotText

__all__ = [
    "BOM",
    "EditResult",
    "LineWindow",
    "StreamDecoder",
    "TailWindow",
    "apply_edit",
    "apply_edits",
    "count_lines",
    "decode",
    "dominant_newline",
    "encode",
    "encode_content",
    "utf8_size",
    "utf8_size_over",
]

BOM = codecs.BOM_UTF8


def _not_text(name: str, why: str) -> FsNotText:
    return FsNotText(f'"{name}" is not UTF-8 text ({why}); only text files can be read or edited')


def decode(data: bytes, name: str = "file") -> tuple[str, bool]:
    """Decode strict UTF-8; return the text and whether a BOM was stripped.

    Raises ``FS_NOT_TEXT`` on a NUL byte or invalid UTF-8.
    """
    bom = data.startswith(BOM)
    if bom:
        data = data[3:]
    if b"\x00" in data:
        raise _not_text(name, "it contains NUL bytes, so it looks binary")
    try:
        return data.decode("utf-8"), bom
    except UnicodeDecodeError as exc:
        raise _not_text(name, f"invalid UTF-8 at byte {exc.start + (3 if bom else 0)}") from None


def encode(text: str, bom: bool) -> bytes:
    """Encode text as UTF-8, with a BOM in front when the file had one.

    The inverse of :func:`decode`: ``encode(*decode(data)) == data``, even
    for a file that starts with two BOMs, so an edit keeps every untouched
    byte. A whole new content goes through :func:`encode_content` instead.

    Raises ``FS_NOT_TEXT`` for an unpaired surrogate (valid in JSON, not in UTF-8).
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise FsNotText(
            f"the text to write contains an unpaired surrogate at character {exc.start}, "
            "which is not valid Unicode; nothing was written"
        ) from None
    return BOM + data if bom else data


def encode_content(content: str, bom: bool) -> bytes:
    """Encode a whole new content for a file that had a BOM (``bom``) or not.

    A content that starts with U+FEFF brings its own BOM, so the file's is
    not added again: writing ``"\ufeffx"`` over a file with a BOM stores one
    BOM, not two (which every later read would show as a stray U+FEFF).
    Raises ``FS_NOT_TEXT`` like :func:`encode`.
    """
    return encode(content, bom and not content.startswith("\ufeff"))


def utf8_size(text: str) -> int:
    """UTF-8 length of ``text``, in bounded memory (never one encoded copy of it all)."""
    if text.isascii():
        return len(text)
    step = 1 << 20
    return sum(
        len(text[i : i + step].encode("utf-8", "surrogatepass")) for i in range(0, len(text), step)
    )


def utf8_size_over(text: str, limit: int) -> int | None:
    """The UTF-8 length of ``text`` when it is over ``limit`` bytes, else ``None``."""
    if len(text) * 4 <= limit:  # no character takes more than 4 bytes
        return None
    size = utf8_size(text)
    return size if size > limit else None


class StreamDecoder:
    """Incremental strict UTF-8 decoder that strips a leading BOM.

    Memory stays bounded by the chunk size whatever the file size.
    """

    def __init__(self, name: str = "file") -> None:
        self._name = name
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._head = b""
        self._started = False
        self._offset = 0
        self.bom = False
        """True once a leading BOM was seen."""

    def feed(self, data: bytes, final: bool = False) -> str:
        """Decode the next bytes (``final`` flushes and checks for a truncated sequence)."""
        if not self._started:
            self._head += data
            if len(self._head) < 3 and not final and BOM.startswith(self._head):
                return ""
            data, self._head, self._started = self._head, b"", True
            if data.startswith(BOM):
                self.bom = True
                data = data[3:]
                self._offset = 3
        if b"\x00" in data:
            raise _not_text(self._name, "it contains NUL bytes, so it looks binary")
        try:
            text = self._decoder.decode(data, final)
        except UnicodeDecodeError as exc:
            raise _not_text(
                self._name, f"invalid UTF-8 near byte {self._offset + exc.start}"
            ) from None
        self._offset += len(data)
        return text


def count_lines(text: str) -> int:
    """Number of lines under the line model."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


@dataclass(slots=True)
class LineWindow:
    """Collects a window of lines from streamed text and counts every line.

    Feed decoded chunks in order, then call :meth:`finish`. Only the lines in
    the window are kept, each cut to ``max_line_chars``; the window also stops
    once the shown lines (UTF-8 bytes plus one newline each) would pass
    ``max_bytes`` (the first shown line always fits). Memory stays bounded
    whatever the size of the text. Whole runs of lines are handled with
    C-level string operations: this is the hot path of every read.
    """

    offset: int = 1
    limit: int = 2000
    max_bytes: int = 50 * 1024
    max_line_chars: int = 2000
    lines: list[str] = field(default_factory=list)
    """Shown lines, ``\\r`` stripped, cut to ``max_line_chars``."""
    truncated: set[int] = field(default_factory=set)
    """Indexes into ``lines`` of lines that were cut."""
    total: int = 0
    """Exact number of lines (valid after ``finish``)."""
    capped: bool = False
    """True when the byte cap, not the line limit, ended the window."""
    _used: int = 0
    _partial: list[str] = field(default_factory=list)
    _partial_len: int = 0
    _partial_cut: bool = False
    _has_partial: bool = False
    _done: bool = False

    @property
    def first(self) -> int:
        """Number of the first shown line."""
        return self.offset

    @property
    def last(self) -> int:
        """Number of the last shown line (``first - 1`` when none)."""
        return self.offset + len(self.lines) - 1

    @classmethod
    def of_lines(
        cls,
        first: int,
        lines: list[str],
        total: int,
        *,
        limit: int = 2000,
        max_bytes: int = 50 * 1024,
        max_line_chars: int = 2000,
    ) -> LineWindow:
        """The window that streaming would give from line ``first``, built from its lines.

        ``lines`` are lines ``first``.. of a text of ``total`` lines, line
        breaks removed; the limit, the byte cap and the line cut apply as
        for a streamed window. A line that was already cut must keep more
        than ``max_line_chars + 1`` characters, so that it is marked as cut.
        """
        window = cls(offset=first, limit=limit, max_bytes=max_bytes, max_line_chars=max_line_chars)
        window.total = first - 1
        if lines:
            window._take(lines, all(map(str.isascii, lines)), any("\r" in ln for ln in lines))
        window.total = total
        return window

    def feed(self, chunk: str) -> None:
        """Consume the next piece of text."""
        if not chunk:
            return
        newlines = chunk.count("\n") if self._done or self.offset > 1 else -1
        if self._done or (self.offset > 1 and self.total + newlines + 1 < self.offset):
            # Past the window, or wholly before it: only count (one scan per chunk).
            self.total += newlines
            self._has_partial = not chunk.endswith("\n")
            return
        parts = chunk.split("\n")
        if len(parts) == 1:
            self._extend_partial(chunk)
            self._has_partial = True
            return
        self._extend_partial(parts[0])
        self._complete_line()
        if len(parts) > 2:
            middle = parts[1:-1]
            if self._done:
                self.total += len(middle)
            else:
                self._take(middle, chunk.isascii(), "\r" in chunk)
        tail = parts[-1]
        self._has_partial = bool(tail)
        if tail:
            self._extend_partial(tail)

    def finish(self) -> None:
        """Account for a last line without a final newline."""
        if self._has_partial:
            self._complete_line()
            self._has_partial = False

    def _extend_partial(self, part: str) -> None:
        if not part or self._done or self.total + 1 < self.offset:
            return
        room = self.max_line_chars + 2 - self._partial_len
        if room <= 0:
            self._partial_cut = True
            return
        if len(part) > room:
            part = part[:room]
            self._partial_cut = True
        self._partial.append(part)
        self._partial_len += len(part)

    def _complete_line(self) -> None:
        self.total += 1
        if self.total < self.offset or self._done:
            return
        line = "".join(self._partial)
        cut = self._partial_cut
        self._partial.clear()
        self._partial_len = 0
        self._partial_cut = False
        if line.endswith("\r"):
            line = line[:-1]
        self._take([line], line.isascii(), False, cut)
        self.total -= 1  # _take counts it again

    def _take(self, lines: list[str], ascii_only: bool, has_cr: bool, cut: bool = False) -> None:
        """Add whole lines numbered from ``total + 1``; counts all of them."""
        count = len(lines)
        skip = self.offset - self.total - 1
        self.total += count
        if skip >= count:
            return
        shown = lines[skip:] if skip > 0 else lines
        room = self.limit - len(self.lines)
        if len(shown) > room:
            shown = shown[:room]
        if has_cr:
            shown = [line[:-1] if line.endswith("\r") else line for line in shown]
        base = len(self.lines)
        limit = self.max_line_chars
        lengths = list(map(len, shown))
        if cut or max(lengths) > limit:
            shown = list(shown)
            for i, line in enumerate(shown):
                if cut or lengths[i] > limit:
                    shown[i] = line[:limit]
                    self.truncated.add(base + i)
            lengths = list(map(len, shown))
        sizes = lengths if ascii_only else [len(line.encode()) for line in shown]
        room_bytes = self.max_bytes - self._used
        whole = sum(sizes) + len(sizes)
        if whole <= room_bytes:
            self._used += whole
        else:
            used = list(accumulate(map(add, sizes, repeat(1))))
            fits = bisect_right(used, room_bytes)
            if fits == 0 and not self.lines:
                fits = 1  # the first shown line always fits
            if fits < len(shown):
                self.capped = True
                self._done = True
                shown = shown[:fits]
                self.truncated = {i for i in self.truncated if i < base + fits}
            if fits:
                self._used += used[fits - 1]
        self.lines.extend(shown)
        if len(self.lines) >= self.limit:
            self._done = True


TAIL_MAX_CHARS = 8 * 1024 * 1024
"""Characters :class:`TailWindow` may hold before it gives up (``overflowed``)."""


@dataclass(slots=True)
class TailWindow:
    """Keeps the last ``count`` lines of streamed text in one pass, and counts every line.

    Feed decoded chunks in order, then call :meth:`window`. The text is kept
    as it arrives (no per-line work while streaming: a tail read costs what
    counting the lines costs) and trimmed to what the last ``count`` lines
    need; a line is kept to ``max_line_chars + 2`` characters at most, so a
    giant line costs no more than a short one. Memory stays under
    :data:`TAIL_MAX_CHARS` characters plus one chunk; past that (very many
    very long lines) ``overflowed`` is set and only the count goes on: the
    caller then reads the window from line :attr:`first` in a second pass.
    """

    count: int
    """How many lines from the end (N of ``offset=-N``)."""
    max_line_chars: int = 2000
    max_chars: int = TAIL_MAX_CHARS
    total: int = 0
    """Exact number of lines (valid after :meth:`window`)."""
    overflowed: bool = False
    """True when the lines were too many and too long to keep."""
    _pieces: list[tuple[str, int]] = field(default_factory=list)
    _newlines: int = 0
    _chars: int = 0
    _open: int = 0  # characters kept of the line still open (after the last "\n")
    _finished: bool = False

    @property
    def first(self) -> int:
        """Number of the first of the last ``count`` lines (valid after :meth:`window`)."""
        return max(1, self.total - self.count + 1)

    def feed(self, chunk: str) -> None:
        """Consume the next piece of text."""
        if not chunk:
            return
        newlines = chunk.count("\n")
        self.total += newlines
        if self.overflowed:
            self._open = len(chunk) - 1 - chunk.rfind("\n") if newlines else self._open + len(chunk)
            return
        keep = self.max_line_chars + 2
        if not newlines:
            room = keep - self._open
            if room > 0:
                piece = chunk if len(chunk) <= room else chunk[:room]
                self._add(piece, 0)
                self._open += len(piece)
            return
        first = chunk.find("\n")
        room = keep - self._open
        if first > room:  # the open line is longer than anyone will see: cut it
            if room > 0:
                self._add(chunk[:room], 0)
            self._add(chunk[first:], newlines)
        else:
            self._add(chunk, newlines)
        self._open = len(chunk) - 1 - chunk.rfind("\n")
        self._trim()
        if self._chars > self.max_chars:
            self._compact()

    def _add(self, piece: str, newlines: int) -> None:
        self._pieces.append((piece, newlines))
        self._newlines += newlines
        self._chars += len(piece)

    def _trim(self) -> None:
        """Drop pieces the last ``count`` lines cannot reach (count + 1 line breaks stay)."""
        need = self.count + 1
        drop = 0
        newlines, chars = self._newlines, self._chars
        for piece, count in self._pieces:
            if newlines - count < need:
                break
            newlines -= count
            chars -= len(piece)
            drop += 1
        if drop:
            del self._pieces[:drop]
            self._newlines, self._chars = newlines, chars

    def _compact(self) -> None:
        """Cut the long lines in what is kept; give up when even that is too much."""
        keep = self.max_line_chars + 2
        lines = "".join(piece for piece, _ in self._pieces).split("\n")
        text = "\n".join(line if len(line) <= keep else line[:keep] for line in lines)
        self._pieces.clear()
        self._newlines = self._chars = 0
        self._add(text, len(lines) - 1)
        self._trim()
        if self._chars > self.max_chars:
            self.overflowed = True
            self._pieces.clear()
            self._newlines = self._chars = 0

    def window(self, *, limit: int = 2000, max_bytes: int = 50 * 1024) -> LineWindow | None:
        """The window from line :attr:`first`; ``None`` when ``overflowed`` (read it again)."""
        if not self._finished:
            self._finished = True
            if self._open:
                self.total += 1  # a last line without a final newline
        if self.overflowed:
            return None
        keep = self.max_line_chars + 2
        parts = "".join(piece for piece, _ in self._pieces).split("\n")
        if not parts[-1]:
            parts.pop()  # the text ended with a line break (or was empty)
        wanted = parts[-self.count :] if len(parts) > self.count else parts
        lines = [line if len(line) <= keep else line[:keep] for line in wanted]
        return LineWindow.of_lines(
            self.first,
            lines[: self.total - self.first + 1],
            self.total,
            limit=limit,
            max_bytes=max_bytes,
            max_line_chars=self.max_line_chars,
        )
