"""The pieces of issue 13 that need no store: the three-way check, the shown change, the cache.

The behaviour on every backend is in the shipped ``ConflictSuite``
(``fsseam.testing.suite.conflicts``); here are the rules themselves, checked
exhaustively or against a reference built from line lists.
"""

from __future__ import annotations

import asyncio
import pickle
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsseam import Agent, FsStaleVersion, ObservationPolicy, RebaseIfClean, ToolExecution, open_fs
from fsseam.backends.cache import ContentCache
from fsseam.seam import FsEditRequest, FsTargetKey, FsVersion, conflicts
from fsseam.seam.conflicts import clean_on_top
from fsseam.seam.edits import apply_edits
from fsseam.testing.harness import call, code_of, execution, tools_context
from fsseam.tools.conflict import CHANGE_MAX_BYTES, CHANGE_MAX_LINES, shown_change

# -- the three-way check ------------------------------------------------------------------------

LINES = [f"line {i}\n" for i in range(12)]
BASE = "".join(LINES)


def _touches(op: str, a: int, b: int, first: int, last: int) -> bool:
    """The rule: a changed or deleted line inside the match, or an insertion strictly inside."""
    if op == "insert":
        return first < a <= last
    return a <= last and b > first


@settings(max_examples=400, derandomize=True, deadline=None)
@given(
    op=st.sampled_from(["replace", "delete", "insert"]),
    a=st.integers(0, 11),
    width=st.integers(1, 3),
    first=st.integers(0, 11),
    span=st.integers(0, 2),
)
def test_clean_on_top_follows_the_line_rule(
    op: str, a: int, width: int, first: int, span: int
) -> None:
    b = min(a + width, 12) if op != "insert" else a
    last = min(first + span, 11)
    current = "".join(_apply_outside_to(LINES, op, a, b))
    old = "".join(LINES[first : last + 1])
    edit = FsEditRequest(old, "MINE\n")
    clean = clean_on_top(BASE, current, [edit])
    assert clean == (not _touches(op, a, b, first, last)), (op, a, b, first, last)
    if clean:
        # Applied on top: exactly the outside change plus the edit, disjoint in base lines,
        # each applied from the higher line down so the other's numbers still hold.
        def edited(lines: list[str]) -> list[str]:
            return [*lines[:first], "MINE\n", *lines[last + 1 :]]

        if a > last:
            expected = edited(_apply_outside_to(LINES, op, a, b))
        else:
            expected = _apply_outside_to(edited(LINES), op, a, b)
        assert apply_edits(current, [edit]).text == "".join(expected)


def _apply_outside_to(lines: list[str], op: str, a: int, b: int) -> list[str]:
    """``lines`` after one outside change of lines ``[a, b)`` (new lines are unique)."""
    if op == "replace":
        return lines[:a] + [f"changed {i}\n" for i in range(a, b)] + lines[b:]
    if op == "delete":
        return lines[:a] + lines[b:]
    return [*lines[:a], "inserted\n", "inserted too\n", *lines[a:]]  # insert at a


def test_clean_on_top_needs_the_same_matches_on_both_sides() -> None:
    base = "x = 1\nkeep\nx = 1\n"
    # The outside change removed one of the two occurrences a replace_all was meant for.
    current = "x = 1\nkeep\nx = 2\n"
    assert not clean_on_top(base, current, [FsEditRequest("x = 1", "y", replace_all=True)])
    # ...or added a second one where the edit expects one.
    assert not clean_on_top("a\nb\n", "a\nb\na\n", [FsEditRequest("a", "A")])
    # An edit that did not even match what was read is never rebased.
    assert not clean_on_top("a\nb\n", "a\nb\nc\n", [FsEditRequest("zzz", "A")])


def test_clean_on_top_judges_each_edit_of_a_sequence_on_the_text_before_it() -> None:
    base = "".join(LINES)
    current = base.replace("line 8\n", "line eight\n")
    first = FsEditRequest("line 1\n", "line 1\nadded by me\n")
    # The second edit spans a line the first one wrote: its own text, not the change.
    second = FsEditRequest("added by me\nline 2\n", "both\n")
    assert clean_on_top(base, current, [first, second])
    near = FsEditRequest("line 7\nline 8\n", "x\n")
    assert not clean_on_top(base, current, [first, near])


def test_clean_on_top_with_crlf_text_and_lf_old_strings() -> None:
    base = "a\r\nb\r\nc\r\nd\r\n"
    current = "a\r\nB\r\nc\r\nd\r\n"
    assert clean_on_top(base, current, [FsEditRequest("c\nd\n", "C\n")])
    assert not clean_on_top(base, current, [FsEditRequest("a\nb", "A")])


def test_clean_on_top_of_a_huge_change_is_bounded_and_judged_by_its_coarse_block() -> None:
    # Past COMPARE_MAX_LINES the change is one replaced block: wider, never narrower.
    base = "".join(f"old {i}\n" for i in range(60_000)) + "tail\n"
    current = "".join(f"new {i}\n" for i in range(60_000)) + "tail\n"
    started = time.perf_counter()
    assert clean_on_top(base, current, [FsEditRequest("tail\n", "end\n")])
    assert not clean_on_top(base, current, [FsEditRequest("old 17\n", "x\n")])
    assert time.perf_counter() - started < 5


# -- the change as the model sees it -------------------------------------------------------------


def test_shown_change_drops_headers_and_trailing_cr() -> None:
    diff = "--- p\n+++ p\n@@ -1 +1 @@\n-a\r\n+b\r\n"
    shown = shown_change(diff)
    assert shown.complete
    assert shown.text == "@@ -1 +1 @@\n-a\n+b"


def test_shown_change_is_cut_at_sixty_lines_or_six_kib() -> None:
    many = "--- p\n+++ p\n@@ -1,0 +1,100 @@\n" + "".join(f"+{i}\n" for i in range(100))
    shown = shown_change(many)
    assert not shown.complete
    lines = shown.text.split("\n")
    assert len(lines) == CHANGE_MAX_LINES + 1
    assert lines[-1] == "... (41 more lines of the change not shown; read the file to see them)"
    wide = "@@ -1 +1,3 @@\n" + "".join("+" + "x" * 3000 + "\n" for _ in range(3))
    cut = shown_change(wide)
    assert not cut.complete
    assert len(cut.text.encode()) < CHANGE_MAX_BYTES + 100
    cut_upstream = "@@ -1 +1 @@\n-a\n... (diff cut at 32768 bytes; 5 more lines not shown)\n"
    assert not shown_change(cut_upstream).complete


# -- the error itself ---------------------------------------------------------------------------


def test_stale_version_keeps_its_change_across_pickling() -> None:
    exc = FsStaleVersion("moved", change="@@ -1 +1 @@\n-a\n+b\n", current_version=FsVersion("v2"))
    back = pickle.loads(pickle.dumps(exc))
    assert isinstance(back, FsStaleVersion)
    assert (back.message, back.change, back.current_version) == (exc.message, exc.change, "v2")
    assert FsStaleVersion("plain").change is None


def test_the_judgement_runs_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    real = conflicts.change_between

    def slow(*args: Any) -> str:
        time.sleep(0.5)
        return real(*args)

    monkeypatch.setattr(conflicts, "change_between", slow)

    async def body() -> float:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.create_task(tick())
        with pytest.raises(FsStaleVersion):
            await conflicts.settle("p", "a\n", "b\n", FsVersion("v2"), None)
        ticker.cancel()
        return ticks

    assert asyncio.run(body()) >= 10  # the loop kept turning while the diff was made


# -- the policy's intent --------------------------------------------------------------------------


def test_rebase_is_opt_in_and_the_intent_stays_a_version_by_default(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    fs = open_fs(str(tmp_path))
    plain, rebasing = ObservationPolicy(), ObservationPolicy(rebase=True)
    for policy, expected in ((plain, str), (rebasing, RebaseIfClean)):
        ctx = tools_context(fs, policy=False)
        ctx.plugin(policy)
        run = execution()
        call(ctx, "read", {"file_path": "a.txt"}, run)
        target = asyncio.run(fs.resolve("a.txt"))
        intent = asyncio.run(policy.edit_intent(run, target))
        assert isinstance(intent, expected)


def test_an_old_listener_returning_a_plain_version_still_guards_edits(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    fs = open_fs(str(tmp_path))
    ctx = tools_context(fs, policy=False)
    seen: dict[str, FsVersion] = {}

    async def stat_version() -> FsVersion:
        info = await fs.stat(await fs.resolve("a.txt"))
        assert info is not None
        return info.version

    seen["v"] = asyncio.run(stat_version())
    ctx.on("fs/edit-intent", lambda actor, target: seen["v"])
    (tmp_path / "a.txt").write_text("b\n")
    run = ToolExecution(agent=Agent(session="s"))
    args = {"file_path": "a.txt", "old_string": "b", "new_string": "c"}
    assert code_of(call(ctx, "edit", args, run)) == "FS_STALE_VERSION"
    assert (tmp_path / "a.txt").read_text() == "b\n"


# -- the cache ----------------------------------------------------------------------------------


def _key(name: str) -> FsTargetKey:
    return FsTargetKey(name)


def test_cache_is_lru_by_bytes_with_an_entry_limit() -> None:
    cache = ContentCache(100)
    assert cache.entry_limit == 25
    cache.put(_key("a"), FsVersion("1"), "a", b"x" * 20)
    cache.put(_key("b"), FsVersion("1"), "b", b"y" * 20)
    cache.put(_key("big"), FsVersion("1"), "big", b"z" * 26)  # over the entry limit
    assert cache.get(_key("big"), FsVersion("1")) is None
    cache.get(_key("a"), FsVersion("1"))  # a is now the most recent
    for i in range(4):
        cache.put(_key(f"c{i}"), FsVersion("1"), "c", b"w" * 20)
    assert cache.size <= 100
    assert cache.get(_key("a"), FsVersion("1")) is not None
    assert cache.get(_key("b"), FsVersion("1")) is None  # the least recent went first
    assert cache.get(_key("a"), FsVersion("2")) is None  # never another version's bytes


def test_cache_bytes_zero_keeps_nothing(tmp_path: Path) -> None:
    cache = ContentCache(0)
    cache.put(_key("a"), FsVersion("1"), "a", b"x")
    assert cache.get(_key("a"), FsVersion("1")) is None
    assert len(cache) == 0
    (tmp_path / "a.txt").write_text("a\n")
    fs = open_fs(str(tmp_path), cache_bytes=0)
    ctx = tools_context(fs)
    call(ctx, "read", {"file_path": "a.txt"}, execution())
    assert len(fs.cache) == 0
    with pytest.raises(ValueError, match="cache_bytes"):
        open_fs(str(tmp_path), cache_bytes=-1)


def test_cache_is_safe_across_threads() -> None:
    cache = ContentCache(10_000)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(2000):
                key = _key(f"k{(n * 7 + i) % 50}")
                cache.put(key, FsVersion(str(i % 3)), "p", bytes([n]) * (i % 400))
                found = cache.get(key, FsVersion(str(i % 3)))
                assert found is None or len(found.data) <= cache.entry_limit
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert 0 < cache.size <= 10_000


def test_a_read_fills_the_cache_only_when_streamed_to_its_end(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    fs = open_fs(str(tmp_path))

    async def body() -> None:
        target = await fs.resolve("a.txt")
        async with fs.stream_text(target) as stream:
            version = stream.info.version
            async for _ in stream:
                break  # stopped early: nothing is known of the whole file
        assert fs.cache.get(target.target_key, version) is None
        async with fs.stream_text(target) as stream:
            text = "".join([chunk async for chunk in stream])
        cached = fs.cache.get(target.target_key, version)
        assert cached is not None
        assert cached.data == text.encode()

    asyncio.run(body())


# -- docs/tools.md quotes what the tools say ----------------------------------------------------

INI = (
    "[server]\nhost = example.org\nport = 8080\ntimeout = 30\n\n"
    "[client]\nretries = 3\nbackoff = 2\n"
)


def test_docs_quote_the_conflict_texts_the_tools_produce(tmp_path: Path) -> None:
    doc = (Path(__file__).parents[1] / "docs" / "tools.md").read_text()
    ini = tmp_path / "app.ini"
    ini.write_text(INI)
    fs = open_fs(str(tmp_path))
    ctx = tools_context(fs)
    rebasing = tools_context(fs, policy=False)
    rebasing.plugin(ObservationPolicy(rebase=True))

    def shown(text: str) -> str:
        return text.replace(str(tmp_path), "/home/me/ws")

    alice = execution()
    call(ctx, "read", {"file_path": "app.ini"}, alice)
    ini.write_text(INI.replace("port = 8080", "port = 9090"))
    edit = {"file_path": "app.ini", "old_string": "retries = 3", "new_string": "retries = 5"}
    refused = shown(call(ctx, "edit", edit, alice).text)
    assert f"```\n{refused}\n```" in doc
    assert code_of(call(ctx, "edit", edit, alice)) is None
    bob = execution()
    call(ctx, "read", {"file_path": "app.ini"}, bob)
    ini.write_text(ini.read_text().replace("timeout = 30", "timeout = 60"))
    write = shown(call(ctx, "write", {"file_path": "app.ini", "content": "x"}, bob).text)
    remedy = write.split("\n", 1)[0].split(" was modified since it was read", 1)[1]
    assert f"`{remedy}`" in doc.replace("\n", " "), remedy  # quoted inline, across lines
    carol = execution()
    call(rebasing, "read", {"file_path": "app.ini"}, carol)
    ini.write_text(ini.read_text().replace("host = example.org", "host = example.net"))
    backoff = {"file_path": "app.ini", "old_string": "backoff = 2", "new_string": "backoff = 4"}
    rebased = shown(call(rebasing, "edit", backoff, carol).text)
    assert f"```\n{rebased}\n```" in doc
