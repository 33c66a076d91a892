"""grep's scanner for one file: matching lines and long-line windows, from bytes (pure, no I/O).

:class:`FileScanner` takes a file's text as UTF-8 bytes in chunks of any
size and finds what grep shows, the same whatever the chunking (so every
store, which chunks differently, gives the same answer):

- a matching line of at most ``line_chars`` characters is shown whole
  (:class:`Match` with ``column=None``);
- a longer one shows a window of ``line_chars`` characters around each
  match, with the match's 1-based character column; a window starts up to a
  fifth of its width before its match, and a match inside the previous
  window is not shown again;
- a line longer than ``max_line_bytes`` is never held whole: it is searched
  in windows of ``max_line_bytes`` bytes that overlap by ``overlap`` bytes,
  so memory stays bounded, and a match is found unless it is longer than the
  overlap and straddles two windows;
- ``stop_at`` bytes into the file the scan stops, inside a line too (its
  head is searched), and :attr:`FileScanner.cut` says so;
- once more matches were found than ``bound()`` allows, it stops.

Positions inside a line are found with RE2's ``pos``/``endpos``, which keep
the surrounding text as context: ``^``, ``$`` and ``\\b`` never match at a
window or cut edge that is not a real line edge.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from fsseam.tools.patterns import LineSearcher

__all__ = ["DEFAULT_MAX_LINE_BYTES", "DEFAULT_OVERLAP", "FileScanner", "Match"]

DEFAULT_MAX_LINE_BYTES = 4 << 20
"""Longest line searched whole (bytes); longer ones are searched in windows."""
DEFAULT_OVERLAP = 1 << 20
"""Bytes two windows of a longer line share."""

_CONTINUATION = 0x80
_CONTINUATION_MASK = 0xC0


def _is_continuation(byte: int) -> bool:
    return byte & _CONTINUATION_MASK == _CONTINUATION


def _chars(data: bytes | bytearray | memoryview) -> int:
    """Characters in UTF-8 bytes (a partial character at either end is not counted)."""
    return len(bytes(data).decode("utf-8", "ignore"))


@dataclass(frozen=True, slots=True)
class Match:
    """One thing grep shows: a whole line, or a window around one match of a long line."""

    line: int
    """1-based line number."""
    column: int | None
    """1-based character column of the match, for a window; ``None`` for a whole line."""
    text: str
    """The line (without its line break), or the window with ``…`` where the line goes on."""


@dataclass(slots=True)
class _Cursor:
    """A byte position in the current line and the characters before it."""

    byte: int = 0
    chars: int = 0


@dataclass(slots=True)
class _LongLine:
    """Windows of one line longer than ``line_chars``, fed as the line arrives.

    Byte offsets are from the start of the line. ``buf[0]`` is line byte
    ``offset``; the next window starts at ``window``; matches before
    ``resume`` are inside a window already shown.
    """

    number: int
    offset: int = 0
    offset_chars: int = 0
    window: int = 0
    resume: int = 0
    cursor: _Cursor = field(default_factory=_Cursor)


class FileScanner:
    """Finds grep's matches in one file's UTF-8 bytes, fed in chunks (see the module doc)."""

    def __init__(
        self,
        searcher: LineSearcher,
        *,
        line_chars: int = 500,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        overlap: int = DEFAULT_OVERLAP,
        stop_at: int | None = None,
        bound: Callable[[], int] | None = None,
    ) -> None:
        if line_chars < 5:
            raise ValueError("line_chars must be 5 or more")
        self._context = 4 * line_chars  # bytes enough for line_chars characters
        if overlap < self._context or max_line_bytes < 2 * overlap:
            raise ValueError(
                "need overlap >= 4 * line_chars and max_line_bytes >= 2 * overlap "
                "(a window's text must fit in what two windows share)"
            )
        self._searcher = searcher
        self._chars = line_chars
        self._before = line_chars // 5
        self._limit = max_line_bytes
        self._step = max_line_bytes - overlap
        self._stop_at = stop_at
        self._bound = bound or (lambda: 1 << 62)
        self._buf = bytearray()
        self._line = 1  # number of the line at buf[0] (or the long line in progress)
        self._long: _LongLine | None = None
        self.found: list[Match] = []
        """What was found so far, in file order."""
        self.scanned = 0
        """Bytes of the file searched."""
        self.cut = False
        """True when ``stop_at`` stopped the scan before the end of the file."""
        self.full = False
        """True when more matches were found than ``bound()`` allows (the scan stopped)."""

    @property
    def done(self) -> bool:
        """True once nothing more will be searched."""
        return self.cut or self.full

    def feed(self, data: bytes) -> bool:
        """Search the next bytes of the file; False once :attr:`done` (stop feeding)."""
        if self.done:
            return False
        if not data:
            return True
        context = b""
        if self._stop_at is not None:
            room = self._stop_at - self.scanned
            if room <= 0:
                self.cut = True
                self._finish(data[:1], continues=True)
                return False
            if len(data) > room:
                data, context = data[:room], data[room : room + 1]
                self.cut = True
        self.scanned += len(data)
        start = len(self._buf)
        self._buf += data
        self._advance(start)
        if self.cut and not self.full:
            self._finish(context, continues=True)
        return not self.done

    def finish(self) -> None:
        """The file ended: search its last line (one without a line break)."""
        if not self.done:
            self._finish(b"", continues=False)

    def stop_here(self) -> None:
        """More of the file exists past ``stop_at`` (it could not be decoded, say): cut."""
        if not self.done:
            self.cut = True
            self._finish(b"", continues=True)

    # -- lines ------------------------------------------------------------------

    def _advance(self, fresh: int) -> None:
        """Search what the bytes from ``buf[fresh]`` on completed."""
        buf = self._buf
        while not self.full:
            if self._long is not None:
                newline = buf.find(b"\n", fresh)
                if newline == -1:
                    self._drop(self._long_windows(self._long, len(buf), final=False))
                    return
                self._long_windows(self._long, newline, final=True, continues=False)
                self._long = None
                del buf[: newline + 1]
                self._line += 1
                fresh = 0
                continue
            cut = buf.rfind(b"\n") + 1
            if cut:
                self._block(cut)
                if self.full:
                    return
                del buf[:cut]
            if len(buf) <= self._limit:
                return
            # A line longer than max_line_bytes in progress: search it in windows.
            self._long = _LongLine(self._line)
            fresh = len(buf)

    def _block(self, end: int) -> None:
        """Search the complete lines in ``buf[:end]``; each ends with ``\\n``."""
        buf = self._buf
        view = memoryview(buf)
        search = self._searcher.span
        counted = pos = 0
        while pos < end:
            span = search(buf, pos, end)
            if span is None or span[0] >= end:
                break  # (an empty match at ``end`` belongs to the next, unfinished line)
            begin = buf.rfind(b"\n", 0, span[0]) + 1
            stop = buf.find(b"\n", span[0], end)
            self._line += buf.count(b"\n", counted, begin)
            counted = begin
            self._line_found(view[begin:stop], continues=False)
            if self.full:
                break
            pos = stop + 1
        self._line += buf.count(b"\n", counted, end)
        view.release()

    def _finish(self, context: bytes, *, continues: bool) -> None:
        """Search the last, unterminated line; ``context`` is the byte after a cut."""
        end = len(self._buf)
        if self._long is not None:
            self._buf += context
            self._long_windows(self._long, end, final=True, continues=continues)
        elif end:
            self._buf += context
            view = memoryview(self._buf)
            if self._searcher.span(self._buf, 0, end) is not None:
                self._line_found(view[: end + len(context)], continues=continues, end=end)
            view.release()
        self._buf = bytearray()

    def _line_found(self, line: memoryview, *, continues: bool, end: int | None = None) -> None:
        """A line (bytes without its ``\\n``; ``end`` excludes trailing context) matched."""
        size = len(line) if end is None else end
        if size <= self._chars or (size <= self._limit and _chars(line[:size]) <= self._chars):
            text = bytes(line[:size]).decode("utf-8", "replace")
            if not continues:
                text = text.removesuffix("\r")
            self._add(Match(self._line, None, text))
            return
        # The same windows as if the line had streamed in: the answer must not
        # depend on how the store chunked it.
        long = _LongLine(self._line)
        saved, self._buf = self._buf, bytearray(line)
        try:
            self._long_windows(long, size, final=True, continues=continues)
        finally:
            self._buf = saved

    # -- long lines -------------------------------------------------------------

    def _long_windows(
        self, long: _LongLine, end: int, *, final: bool, continues: bool = True
    ) -> int:
        """Search the windows of ``long`` that ``buf[:end]`` completes; bytes to drop.

        A window is ``max_line_bytes`` long and reports the matches starting in
        its first ``max_line_bytes - overlap`` bytes; the last one (``final``)
        reports every match up to ``end``.
        """
        buf = self._buf
        while not self.full:
            start = long.window - long.offset
            if end - start > self._limit:
                step = self._step
                while _is_continuation(buf[start + step]):
                    step -= 1  # windows start on character boundaries
                self._window(long, start, start + self._limit, start + step, None)
                long.window += step
            elif final:
                self._window(long, start, end, end + 1, end if not continues else None)
                break
            else:
                break
        if final:
            return 0
        keep = max(0, long.window - long.offset - self._context)
        while keep and _is_continuation(buf[keep]):
            keep -= 1
        return keep

    def _drop(self, count: int) -> None:
        long = self._long
        if not count or long is None:
            return
        long.offset_chars += _chars(self._buf[:count])
        long.offset += count
        if long.cursor.byte < long.offset:
            long.cursor = _Cursor(long.offset, long.offset_chars)
        del self._buf[:count]

    def _window(
        self, long: _LongLine, start: int, end: int, report: int, line_end: int | None
    ) -> None:
        """Show the matches starting in ``buf[start:report]`` (searched up to ``end``).

        ``line_end`` is where the line ends when it ends in this buffer (and
        was not cut), so a window reaching it gets no closing ``…``.
        """
        buf = self._buf
        pos = max(start, long.resume - long.offset)
        while pos < report and not self.full:
            span = self._searcher.span(buf, pos, end)
            if span is None or span[0] >= report:
                break
            hit = span[0]
            column = self._column(long, hit)
            before = bytes(buf[max(0, hit - self._context) : hit]).decode("utf-8", "ignore")
            before = before[max(0, len(before) - self._before) :]
            room = self._chars - len(before)
            limit = end if line_end is None else line_end
            after = bytes(buf[hit : min(limit, hit + 4 * room)]).decode("utf-8", "ignore")[:room]
            shown_end = hit + len(after.encode("utf-8"))
            at_end = False
            if line_end is not None:
                text_end = line_end - (1 if buf[line_end - 1 : line_end] == b"\r" else 0)
                at_end = shown_end >= text_end
                if at_end:
                    after = after.removesuffix("\r")
            head = "…" if column - len(before) > 1 else ""
            tail = "" if at_end else "…"
            self._add(Match(long.number, column, f"{head}{before}{after}{tail}"))
            following = max(shown_end, hit + 1)
            while following < len(buf) and _is_continuation(buf[following]):
                following += 1
            long.resume = long.offset + following
            pos = following

    def _column(self, long: _LongLine, hit: int) -> int:
        """1-based character column of ``buf[hit]``; the cursor makes the total linear."""
        cursor = long.cursor
        at = cursor.byte - long.offset
        cursor.chars += _chars(self._buf[at:hit])
        cursor.byte = long.offset + hit
        return cursor.chars + 1

    def _add(self, match: Match) -> None:
        self.found.append(match)
        if len(self.found) > self._bound():
            self.full = True
