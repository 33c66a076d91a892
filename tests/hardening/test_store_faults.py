"""Store faults injected at the emulators' HTTP layer: nothing is lost, nothing is mixed.

S3 (moto middleware), GCS and Azure (recording proxy): the real SDKs and
dialects meet connections cut mid-body, throttling and 5xx answers (retried,
or given up on), a guarded write whose answer is lost, and requests stalled
past the client's timeout. Through the tools and the policy, every outcome
is one of: the exact result, or a clean ``FS_IO_ERROR`` with the store as
it was (or holding the complete new content of a write whose answer never
came back, which the next guarded write then refuses as stale). A failed
read never counts as an observation; a failed write never updates one.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fsseam import FS_COMMITTED
from fsseam.backends import FsspecFileSystem
from fsseam.testing.harness import call, code_of, execution, run, tools_context
from fsseam.testing.mount_faults import (
    FAST_RETRY_OPTIONS,
    TIMEOUT_OPTIONS,
    MountFaults,
    mount_faults,
    quick_retries,
)
from fsseam.testing.mounts import BACKENDS, mount_backend

CLOUDS = BACKENDS[2:]
LINES = 250_000  # ~2.4 MiB: several chunks, ranged resumes on S3
TEXT = "".join(f"{i:08d}\n" for i in range(LINES))
LAST = f"{LINES - 1:08d}"


@pytest.fixture(params=CLOUDS)
def store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[MountFaults]:
    for mount in mount_backend(request, tmp_path, request.param):
        faulty = mount_faults(request, mount)
        quick_retries(mount.fs, request.param, monkeypatch)
        yield faulty
        faulty.heal()


def committed_log(ctx: Any) -> list[tuple[Any, ...]]:
    events: list[tuple[Any, ...]] = []
    ctx.on(FS_COMMITTED, lambda *args: events.append(args))
    return events


def current_version(fs: FsspecFileSystem, name: str) -> str:
    info = run(fs.stat(run(fs.resolve(name))))
    assert info is not None
    return info.version


def test_a_connection_cut_mid_read_gives_the_exact_window_or_an_io_error(
    store: MountFaults,
) -> None:
    store.mount.put("ws/big.txt", TEXT.encode())
    ctx = tools_context(store.mount.fs)
    window = {"file_path": "big.txt", "offset": LINES - 1}
    store.cut_read(times=1)
    once = call(ctx, "read", window, execution())
    if once.is_error:
        assert code_of(once) == "FS_IO_ERROR", once.text
    else:
        assert once.value is not None
        assert [line["text"] for line in once.value["lines"]] == [f"{LINES - 2:08d}", LAST]
        assert once.value["total_lines"] == LINES
    store.heal()
    # Cut every time: the retries run out, and the failed read observed nothing.
    session = execution()
    store.cut_read(times=1000)
    failed = call(ctx, "read", window, session)
    assert code_of(failed) == "FS_IO_ERROR", failed.text
    store.heal()
    overwrite = call(ctx, "write", {"file_path": "big.txt", "content": "x\n"}, session)
    assert code_of(overwrite) == "FS_NOT_OBSERVED", overwrite.text
    assert store.mount.get("ws/big.txt") == TEXT.encode()


def test_a_connection_cut_during_an_edit_never_stores_a_truncated_file(
    store: MountFaults, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.mount.put("ws/big.txt", TEXT.encode())
    # Without the content cache, so that the edit reads its basis (the GET that is cut).
    cold = store.mount.reopen(cache_bytes=0)
    quick_retries(cold, store.name, monkeypatch)
    ctx = tools_context(cold)
    events = committed_log(ctx)
    session = execution()
    assert call(ctx, "read", {"file_path": "big.txt", "limit": 1}, session).value is not None
    edit = {"file_path": "big.txt", "old_string": f"{LAST}\n", "new_string": "the end\n"}
    edited = TEXT.replace(f"{LAST}\n", "the end\n").encode()
    store.cut_read(times=1000)
    failed = call(ctx, "edit", edit, session)
    assert code_of(failed) == "FS_IO_ERROR", failed.text
    store.heal()
    assert store.mount.get("ws/big.txt") == TEXT.encode()
    assert events == []
    store.cut_read(times=1)
    result = call(ctx, "edit", edit, session)
    store.heal()
    stored = store.mount.get("ws/big.txt")
    if result.is_error:
        assert code_of(result) == "FS_IO_ERROR", result.text
        assert stored == TEXT.encode()
    else:
        assert stored == edited
        assert len(events) == 1


def test_throttling_is_retried_and_a_guarded_edit_lands_exactly_once(
    store: MountFaults, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.mount.put("ws/a.txt", b"count=1\n")
    fast = store.mount.reopen(**FAST_RETRY_OPTIONS[store.name])
    quick_retries(fast, store.name, monkeypatch)
    ctx = tools_context(fast)
    events = committed_log(ctx)
    session = execution()
    store.fail("read", times=2)
    read = call(ctx, "read", {"file_path": "a.txt"}, session)
    assert read.value is not None, read.text
    store.fail("write", times=2)
    edit = {"file_path": "a.txt", "old_string": "count=1", "new_string": "count=2"}
    result = call(ctx, "edit", edit, session)
    assert not result.is_error, result.text
    assert store.mount.get("ws/a.txt") == b"count=2\n"
    assert result.value is not None
    assert result.value["version"] == current_version(fast, "a.txt")
    assert len(events) == 1


def test_persistent_server_errors_fail_cleanly_and_poison_nothing(
    store: MountFaults, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.mount.put("ws/a.txt", b"count=1\n")
    # An edit after a read is one PUT (the content cache); a read fault needs an edit
    # that reads its basis: a mount without the cache.
    mounts = {
        "cached": store.mount.reopen(**FAST_RETRY_OPTIONS[store.name]),
        "cold": store.mount.reopen(**FAST_RETRY_OPTIONS[store.name], cache_bytes=0),
    }
    contexts = {}
    for name, fs in mounts.items():
        quick_retries(fs, store.name, monkeypatch)
        contexts[name] = tools_context(fs)
    events = [committed_log(ctx) for ctx in contexts.values()]
    session = execution()
    for ctx in contexts.values():
        assert call(ctx, "read", {"file_path": "a.txt"}, session).value is not None
    edit = {"file_path": "a.txt", "old_string": "count=1", "new_string": "count=2"}
    for kind, status, mount in (
        ("write", 503, "cached"),
        ("write", 500, "cached"),
        ("write", 503, "cold"),
        ("read", 500, "cold"),
    ):
        store.fail(kind, times=1000, status=status)
        started = time.monotonic()
        failed = call(contexts[mount], "edit", edit, session)
        assert code_of(failed) == "FS_IO_ERROR", (kind, status, mount, failed.text)
        assert time.monotonic() - started < 30
        store.heal()
        assert store.mount.get("ws/a.txt") == b"count=1\n"
        assert events == [[], []]
    # The session's observation survived the failures: its edit now goes through.
    assert not call(contexts["cached"], "edit", edit, session).is_error
    assert store.mount.get("ws/a.txt") == b"count=2\n"


def test_a_lost_answer_to_a_guarded_edit_reports_success_once_and_keeps_sessions_in_step(
    store: MountFaults,
) -> None:
    store.mount.put("ws/a.txt", b"count=1\n")
    ctx = tools_context(store.mount.fs)
    events = committed_log(ctx)
    alice, bob = execution(), execution()
    for who in (alice, bob):
        assert call(ctx, "read", {"file_path": "a.txt"}, who).value is not None
    store.lose_write_response()
    first = {"file_path": "a.txt", "old_string": "count=1", "new_string": "count=2"}
    result = call(ctx, "edit", first, alice)
    assert not result.is_error, result.text
    assert store.mount.get("ws/a.txt") == b"count=2\n"
    assert result.value is not None
    assert result.value["version"] == current_version(store.mount.fs, "a.txt")
    # Alice's observation is the version her write produced: she edits on, unread.
    second = {"file_path": "a.txt", "old_string": "count=2", "new_string": "count=3"}
    assert not call(ctx, "edit", second, alice).is_error
    # Bob read count=1: his write is refused, showing him count=3...
    stale = call(ctx, "write", {"file_path": "a.txt", "content": "x"}, bob)
    assert code_of(stale) == "FS_STALE_VERSION"
    assert "\n-count=1\n+count=3" in stale.text
    # ...so his edit of count=1 matches nothing any more.
    assert code_of(call(ctx, "edit", first, bob)) == "FS_EDIT_NOT_FOUND"
    assert store.mount.get("ws/a.txt") == b"count=3\n"
    assert [event[2] for event in events] == ["edit", "edit"]


def test_a_request_stalled_past_the_timeout_never_mixes_or_loses_an_update(
    store: MountFaults, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = store.mount.reopen(**TIMEOUT_OPTIONS[store.name])
    quick_retries(fs, store.name, monkeypatch)
    store.mount.put("ws/a.txt", b"count=1\n")
    ctx = tools_context(fs)
    alice, bob = execution(), execution()
    store.stall("read", seconds=1.0)
    read = call(ctx, "read", {"file_path": "a.txt"}, alice)
    if read.is_error:  # the client gave up; its retry (if any) queued behind the stall
        assert code_of(read) == "FS_IO_ERROR", read.text
        time.sleep(1.0)
        assert call(ctx, "read", {"file_path": "a.txt"}, alice).value is not None
    else:
        assert read.value is not None
        assert read.value["lines"] == [{"number": 1, "text": "count=1"}]
    assert call(ctx, "read", {"file_path": "a.txt"}, bob).value is not None
    store.stall("write", seconds=1.0)
    edit = {"file_path": "a.txt", "old_string": "count=1", "new_string": "count=2"}
    result = call(ctx, "edit", edit, alice)
    time.sleep(1.2)  # the stalled request reaches the store after the client gave up
    stored = store.mount.get("ws/a.txt")
    assert stored in (b"count=1\n", b"count=2\n")
    if result.is_error:
        assert code_of(result) == "FS_IO_ERROR", result.text
    else:
        assert stored == b"count=2\n"
    # Bob read count=1: if anything landed, his guard refuses him.
    bob_edit = {"file_path": "a.txt", "old_string": "count=1", "new_string": "count=9"}
    bob_result = call(ctx, "edit", bob_edit, bob)
    if stored == b"count=2\n":
        assert code_of(bob_result) == "FS_STALE_VERSION", bob_result.text
        # Alice, told of an error, learns of her own landed write by a stale refusal.
        again = {"file_path": "a.txt", "old_string": "count=2", "new_string": "count=3"}
        expected = None if not result.is_error else "FS_STALE_VERSION"
        assert code_of(call(ctx, "edit", again, alice)) == expected
    else:
        assert not bob_result.is_error, bob_result.text


def test_a_lost_answer_the_sdk_does_not_retry_is_still_recognised_by_the_write_token(
    store: MountFaults, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.mount.put("ws/a.txt", b"count=1\n")
    fs = store.mount.reopen(**FAST_RETRY_OPTIONS[store.name])
    quick_retries(fs, store.name, monkeypatch)
    ctx = tools_context(fs)
    events = committed_log(ctx)
    session = execution()
    assert call(ctx, "read", {"file_path": "a.txt"}, session).value is not None
    # 500 with botocore retries off (S3); a 5xx gcsfs and the Azure SDK do not retry.
    store.lose_write_response(status=507)
    edit = {"file_path": "a.txt", "old_string": "count=1", "new_string": "count=2"}
    result = call(ctx, "edit", edit, session)
    assert store.mount.get("ws/a.txt") == b"count=2\n"  # it landed
    assert not result.is_error, result.text
    assert len(events) == 1
