"""Property-based tests: edits and read windows against small reference models, and the policy.

- **edit**: the match is found on LF-normalised text and the replacement is
  spliced into the ORIGINAL bytes, so every untouched byte (BOM, CR, CRLF,
  LF, a missing final newline) is identical; checked through the seam on
  the memory store and on local disk, over random CRLF/LF/CR/BOM mixes.
- **read**: random texts, windows, line and byte caps, and store chunk sizes
  down to one byte (so a CRLF, a BOM or a multi-byte character is split
  between chunks), through the read tool, against a line-by-line model.
- **policy**: a state machine with several sessions and external writers
  interleaved at random; after every step the store holds exactly what the
  model says, so no write or edit a session's guard should have refused
  ever landed.

Hypothesis runs derandomised (a fixed seed per test), so CI is repeatable.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from fsseam import FsError, FsErrorCode, open_fs
from fsseam.backends import FsspecFileSystem
from fsseam.backends.dialects import base as dialect_base
from fsseam.backends.dialects import local as local_dialect
from fsseam.seam import FsEditRequest
from fsseam.testing.harness import call, execution, run, tools_context

BOM = b"\xef\xbb\xbf"
PIECES = ["a", "b", "ab", "\n", "\r\n", "\r", "é", "€", "\t", " ", "\ufeff", "🎉"]


def text_strategy(max_size: int = 24) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(PIECES), max_size=max_size).map("".join)


# -- edit reference model ----------------------------------------------------------


def units(text: str) -> list[tuple[str, int, int]]:
    """The text as (normalised char, original start, original end): CRLF is one LF unit."""
    out: list[tuple[str, int, int]] = []
    i = 0
    while i < len(text):
        if text.startswith("\r\n", i):
            out.append(("\n", i, i + 2))
            i += 2
        else:
            out.append((text[i], i, i + 1))
            i += 1
    return out


def reference_edit(
    stored: bytes, old: str, new: str, replace_all: bool
) -> tuple[bytes, int] | FsErrorCode:
    """What an edit must store (and how many replacements), or the error it must raise."""
    bom = stored.startswith(BOM)
    text = stored[3:].decode() if bom else stored.decode()
    needle = old.replace("\r\n", "\n")
    parts = units(text)
    normal = "".join(char for char, _, _ in parts)
    starts: list[int] = []
    at = normal.find(needle) if needle else -1
    while at != -1:
        starts.append(at)
        at = normal.find(needle, at + len(needle))
    if not starts:
        return FsErrorCode.FS_EDIT_NOT_FOUND
    if len(starts) > 1 and not replace_all:
        return FsErrorCode.FS_AMBIGUOUS_EDIT
    crlf = text.count("\r\n")
    newline = "\r\n" if crlf > text.count("\n") - crlf else "\n"
    replacement = new.replace("\r\n", "\n").replace("\n", newline)
    pieces: list[str] = []
    cursor = 0
    for start in starts:
        first, last = parts[start], parts[start + len(needle) - 1]
        pieces.append(text[cursor : first[1]])
        pieces.append(replacement)
        cursor = last[2]
    pieces.append(text[cursor:])
    result = "".join(pieces)
    return (BOM if bom else b"") + result.encode(), len(starts)


@st.composite
def edit_case(draw: st.DrawFn) -> tuple[bytes, str, str, bool]:
    text = draw(text_strategy())
    bom = draw(st.booleans())
    stored = (BOM if bom else b"") + text.encode()
    decoded = stored[3:].decode() if stored.startswith(BOM) else stored.decode()
    normal = decoded.replace("\r\n", "\n")
    if normal and draw(st.booleans()):
        # A piece of the file, its line breaks maybe spelled CRLF as a model would.
        start = draw(st.integers(0, len(normal) - 1))
        end = draw(st.integers(start + 1, min(len(normal), start + 8)))
        old = normal[start:end]
        if draw(st.booleans()):
            old = old.replace("\n", "\r\n")
    else:
        old = draw(text_strategy(4).filter(bool))
    new = draw(text_strategy(6))
    return stored, old, new, draw(st.booleans())


@pytest.fixture(params=["memory", "local"])
def seam(request: pytest.FixtureRequest, tmp_path: Any) -> FsspecFileSystem:
    if request.param == "local":
        return open_fs(str(tmp_path))
    return open_fs(f"memory://props-{uuid.uuid4().hex}")


def raw_put(fs: FsspecFileSystem, name: str, data: bytes) -> None:
    fs.fs.pipe_file(f"{fs.fs._strip_protocol(fs.root)}/{name}", data)


def raw_get(fs: FsspecFileSystem, name: str) -> bytes:
    data: bytes = fs.fs.cat_file(f"{fs.fs._strip_protocol(fs.root)}/{name}")
    return data


@settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(case=edit_case())
def test_edit_matches_the_splice_reference_model(
    seam: FsspecFileSystem, case: tuple[bytes, str, str, bool]
) -> None:
    stored, old, new, replace_all = case
    raw_put(seam, "f.txt", stored)
    expected = reference_edit(stored, old, new, replace_all)

    async def edit() -> Any:
        target = await seam.resolve("f.txt")
        return await seam.edit_text(target, FsEditRequest(old, new, replace_all))

    if isinstance(expected, FsErrorCode):
        with pytest.raises(FsError) as refused:
            run(edit())
        assert refused.value.code == expected, (stored, old, new, replace_all)
        assert raw_get(seam, "f.txt") == stored
        return
    outcome = run(edit())
    data, count = expected
    assert raw_get(seam, "f.txt") == data, (stored, old, new, replace_all)
    assert outcome.replacements == count


# -- read window reference model -----------------------------------------------------

MARK = "... (line truncated to {n} chars)"


@dataclass(frozen=True)
class Window:
    lines: list[str]
    total: int
    footer: str


def reference_window(
    stored: bytes, offset: int, limit: int, max_bytes: int, max_chars: int
) -> Window | None:
    """What read shows (``None``: the offset is past the end, FS_NOT_FOUND)."""
    text = (stored[3:] if stored.startswith(BOM) else stored).decode()
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    total = len(lines)
    if offset > total and not (offset == 1 and total == 0):
        return None
    shown: list[str] = []
    used = 0
    capped = False
    for raw in lines[offset - 1 : offset - 1 + limit]:
        line = raw.removesuffix("\r")
        cut = line[:max_chars]
        size = len(cut.encode()) + 1
        if shown and used + size > max_bytes:
            capped = True
            break
        used += size
        shown.append(cut + MARK.format(n=max_chars) if len(line) > max_chars else cut)
    last = offset + len(shown) - 1
    if capped:
        footer = (
            f"(Output capped. Showing lines {offset}-{last}. Use offset={last + 1} to continue.)"
        )
    elif last < total:
        footer = f"(Showing lines {offset}-{last} of {total}. Use offset={last + 1} to continue.)"
    else:
        footer = f"(End of file - total {total} lines)"
    if any(line.endswith(MARK.format(n=max_chars)) for line in shown):
        footer += (
            f"\n(Lines longer than {max_chars} chars were cut; read cannot show the rest of them.)"
        )
    return Window(shown, total, footer)


@settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    text=text_strategy(40),
    bom=st.booleans(),
    chunk=st.integers(1, 9),
    offset=st.integers(1, 12),
    limit=st.integers(1, 12),
    max_lines=st.integers(1, 12),
    max_bytes=st.integers(1, 40),
    max_chars=st.integers(1, 8),
)
def test_read_window_matches_the_line_reference_model(
    seam: FsspecFileSystem,
    text: str,
    bom: bool,
    chunk: int,
    offset: int,
    limit: int | None,
    max_lines: int,
    max_bytes: int,
    max_chars: int,
) -> None:
    stored = (BOM if bom else b"") + text.encode()
    raw_put(seam, "w.txt", stored)
    ctx = tools_context(seam, max_lines=max_lines, max_line_chars=max_chars, max_bytes=max_bytes)
    args: dict[str, Any] = {"file_path": "w.txt", "offset": offset, "limit": limit}
    with pytest.MonkeyPatch.context() as patch:
        # The stores hand out chunks this small: CRLF, BOM and UTF-8 split anywhere.
        patch.setattr(dialect_base, "CHUNK_SIZE", chunk)
        patch.setattr(local_dialect, "CHUNK_SIZE", chunk)
        result = call(ctx, "read", args, execution())
    expected = reference_window(stored, offset, limit, max_bytes, max_chars)
    if expected is None:
        assert result.error == {"name": "FsError", "code": "FS_NOT_FOUND"}, result.text
        return
    assert result.value is not None, result.text
    assert [line["text"] for line in result.value["lines"]] == expected.lines
    assert [line["number"] for line in result.value["lines"]] == list(
        range(offset, offset + len(expected.lines))
    )
    assert result.value["total_lines"] == expected.total
    assert result.text.endswith(f"{expected.footer}\n</content>"), result.text


# -- the policy under interleaved sessions and external writers --------------------------

FILES = ("a.txt", "b.txt")
SESSIONS = 3
WORDS = st.sampled_from(["x", "y", "xy", "x\n", "y\r\n", "z"])
CONTENT = st.lists(WORDS, min_size=1, max_size=5).map("".join)


@dataclass
class Stored:
    """The model's view of one file: its bytes and a generation bumped by every change."""

    data: bytes
    generation: int


class PolicyMachine(RuleBasedStateMachine):
    """Sessions read, write and edit through the tools; others write behind their backs.

    The model predicts each tool outcome from what the session last observed:
    a write replaces only what was seen and creates only what is absent; an
    edit needs a read of the current version, or of the very same bytes under
    another version (``same_text``: a rewrite of identical bytes is no
    conflict). A refusal shows the change since the read (the files are
    small), so the session has then seen the current state.
    """

    backend = "memory"

    def __init__(self) -> None:
        super().__init__()
        self.tmp: str | None = None
        if self.backend == "local":
            self.tmp = tempfile.mkdtemp(prefix="fsseam-policy-")
            url = self.tmp
        else:
            url = f"memory://policy-{uuid.uuid4().hex}"
        self.fs = open_fs(url)
        self.other = open_fs(url)  # another writer using fsseam, with no policy
        self.ctx = tools_context(self.fs)
        self.sessions = [execution() for _ in range(SESSIONS)]
        self.model: dict[str, Stored] = {}
        self.seen: dict[tuple[int, str], Stored | None] = {}
        self.generations = 0

    def teardown(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            root = self.fs.fs._strip_protocol(self.fs.root)
            if self.fs.fs.exists(root):
                self.fs.fs.rm(root, recursive=True)

    # -- helpers -------------------------------------------------------------

    def _path(self, name: str) -> str:
        return f"{self.fs.fs._strip_protocol(self.fs.root)}/{name}"

    def _bump(self, name: str, data: bytes) -> Stored:
        self.generations += 1
        stored = Stored(data, self.generations)
        self.model[name] = stored
        return stored

    @staticmethod
    def same_text(seen: Stored, now: Stored) -> bool:
        """True when a guard on ``seen`` lets a change through to ``now``: the same bytes."""
        return seen.data == now.data

    def _call(self, session: int, tool: str, args: dict[str, Any]) -> str | None:
        result = call(self.ctx, tool, args, self.sessions[session])
        return None if result.error is None else result.error["code"]

    # -- the agents ------------------------------------------------------------

    @rule(session=st.integers(0, SESSIONS - 1), name=st.sampled_from(FILES), window=st.booleans())
    def read(self, session: int, name: str, window: bool) -> None:
        args: dict[str, Any] = {"file_path": name}
        if window:
            args["limit"] = 1  # any window authorises later writes
        code = self._call(session, "read", args)
        now = self.model.get(name)
        if now is None:
            assert code == "FS_NOT_FOUND"
            self.seen[(session, name)] = None
        else:
            assert code is None
            self.seen[(session, name)] = now

    @rule(session=st.integers(0, SESSIONS - 1), name=st.sampled_from(FILES), content=CONTENT)
    def write(self, session: int, name: str, content: str) -> None:
        code = self._call(session, "write", {"file_path": name, "content": content})
        seen = self.seen.get((session, name))
        now = self.model.get(name)
        if seen is not None:
            expected = None if now is not None and self.same_text(seen, now) else "STALE"
        else:
            expected = None if now is None else "FS_NOT_OBSERVED"
        if expected == "STALE":
            expected = "FS_STALE_VERSION"
            if now is not None:
                self.seen[(session, name)] = now  # the refusal showed the change
        assert code == expected, (session, name, seen, now)
        if code is None:
            self.seen[(session, name)] = self._bump(name, content.encode())

    @rule(
        session=st.integers(0, SESSIONS - 1),
        name=st.sampled_from(FILES),
        old=WORDS,
        new=WORDS,
        replace_all=st.booleans(),
    )
    def edit(self, session: int, name: str, old: str, new: str, replace_all: bool) -> None:
        if old == new:
            return  # INVALID_ARGUMENTS, tested elsewhere
        args = {"file_path": name, "old_string": old, "new_string": new, "replace_all": replace_all}
        code = self._call(session, "edit", args)
        key = (session, name)
        now = self.model.get(name)
        if key not in self.seen:
            assert code == "FS_NOT_OBSERVED"
            return
        seen = self.seen[key]
        if seen is None:
            assert code == "FS_NOT_FOUND"
            return
        if now is None or not self.same_text(seen, now):
            assert code == "FS_STALE_VERSION", (seen, now)
            if now is not None:
                self.seen[key] = now  # the refusal showed the change
            return
        expected = reference_edit(now.data, old, new, replace_all)
        if isinstance(expected, FsErrorCode):
            assert code == expected.value
            return
        assert code is None
        self.seen[key] = self._bump(name, expected[0])

    # -- everyone else -----------------------------------------------------------

    @rule(name=st.sampled_from(FILES), content=CONTENT)
    def external_write(self, name: str, content: str) -> None:
        data = content.encode()
        if self.backend == "local":
            # An editor's save: a new file renamed over the old one, with a
            # fine-grained mtime (a coarse clock could repeat a version; see
            # docs/security.md, "what is not guaranteed").
            assert self.tmp is not None
            spare = os.path.join(self.tmp, ".editor-save")
            with open(spare, "wb") as out:
                out.write(data)
            stamp = time.time_ns()
            os.utime(spare, ns=(stamp, stamp))
            os.replace(spare, os.path.join(self.tmp, name))
        else:
            self.fs.fs.pipe_file(self._path(name), data)
        self._bump(name, data)

    @rule(name=st.sampled_from(FILES), content=CONTENT)
    def other_fsseam_writer(self, name: str, content: str) -> None:
        async def write() -> None:
            await self.other.write_text(await self.other.resolve(name), content)

        run(write())
        self._bump(name, content.encode())

    @precondition(lambda self: bool(self.model))
    @rule(name=st.sampled_from(FILES))
    def external_delete(self, name: str) -> None:
        if name not in self.model:
            return
        if self.backend == "local":
            assert self.tmp is not None
            os.unlink(os.path.join(self.tmp, name))
        else:
            self.fs.fs.rm_file(self._path(name))
        del self.model[name]

    # -- the invariant ------------------------------------------------------------

    @invariant()
    def store_matches_the_model(self) -> None:
        for name in FILES:
            expected = self.model.get(name)
            try:
                actual: bytes | None = bytes(self.fs.fs.cat_file(self._path(name)))
            except FileNotFoundError:
                actual = None
            assert actual == (expected.data if expected else None), name


class LocalPolicyMachine(PolicyMachine):
    backend = "local"


_POLICY_SETTINGS = settings(
    max_examples=60, stateful_step_count=30, derandomize=True, deadline=None
)
TestPolicyOnMemory = PolicyMachine.TestCase
TestPolicyOnMemory.settings = _POLICY_SETTINGS
TestPolicyOnLocalDisk = LocalPolicyMachine.TestCase
TestPolicyOnLocalDisk.settings = _POLICY_SETTINGS
