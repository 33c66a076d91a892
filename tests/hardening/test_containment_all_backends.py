"""Nothing escapes the root, on every backend: hostile paths, symlinks, deny patterns, read-only.

Every backend is mounted at ``<top>/ws`` with secrets next to it (see
``helpers.Mount``). A hostile path must be refused with ``FS_SANDBOX_DENIED``
by read, write and edit alike, with the policy and without it, before any
call reaches the dialect or any request reaches the store; afterwards every
byte outside (and inside) the root is unchanged and no tool result carries
the secret.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsseam import FS_COMMITTED, FsError, FsErrorCode, FsSandboxDenied
from fsseam.seam import CreateIfAbsent, FsEditRequest, ReplaceIfVersion
from fsseam.testing.harness import call, code_of, execution, run, tools_context
from fsseam.testing.mounts import SECRET, DialectSpy, Mount, local_mount, walk
from tests.hardening.helpers import REFUSED_SYNTAX, outside_spellings, tool_calls

DENIED = {"name": "FsError", "code": "FS_SANDBOX_DENIED"}


def refusals(mount: Mount, paths: list[str], spy: DialectSpy, *, as_cwd: bool = True) -> list[str]:
    """Every way ``paths`` were NOT refused before any I/O, as readable lines.

    Each path goes to read, write and edit (with and without the policy), to
    ``resolve`` and ``lstat``, and (``as_cwd``) as the ``cwd`` of a resolve.
    """
    problems: list[str] = []
    contexts = {"policy": tools_context(mount.fs), "bare": tools_context(mount.fs, policy=False)}
    wire_before = mount.wire()
    for path in paths:
        for label, ctx in contexts.items():
            for tool, args in tool_calls(path):
                result = call(ctx, tool, args, execution())
                if result.error != DENIED:
                    problems.append(f"{label} {tool} {path!r}: {result.text[:200]}")
                if SECRET.decode().strip() in result.text:
                    problems.append(f"{label} {tool} {path!r} leaked the secret")
        seam_calls = [
            ("resolve", lambda p=path: mount.fs.resolve(p)),
            ("lstat", lambda p=path: mount.fs.lstat(p)),
        ]
        if as_cwd:
            seam_calls.append(("resolve with cwd", lambda p=path: mount.fs.resolve("x", cwd=p)))
        for what, attempt in seam_calls:
            try:
                got: Any = run(attempt())
            except FsError as exc:
                if exc.code is not FsErrorCode.FS_SANDBOX_DENIED:
                    problems.append(f"{what} {path!r}: {exc.code.value} {exc}")
            else:
                problems.append(f"{what} {path!r} was accepted: {got!r}")
        if spy.calls:
            problems.append(f"{path!r} reached the dialect: {spy.calls}")
            spy.clear()
    if mount.wire() != wire_before:
        problems.append(f"{mount.wire() - wire_before} requests reached the store")
    return problems


def test_paths_leading_outside_the_root_are_refused_before_any_io(
    mount: Mount, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = mount.snapshot()
    spy = DialectSpy(mount.fs, monkeypatch)
    assert refusals(mount, outside_spellings(mount), spy) == []
    assert mount.snapshot() == before


def test_refused_syntax_is_denied_as_written_and_never_reinterpreted(
    mount: Mount, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same tricks inside absolute and URL spellings of the root itself.
    spelled = [
        f"{top}/ws/{bad}"
        for top in (mount.abs_top, mount.url_tops[0])
        for bad in ("a\\b.txt", "a.txt\x00", "\uff0e\uff0e/secret.txt", "x/\u2100")
    ]
    before = mount.snapshot()
    spy = DialectSpy(mount.fs, monkeypatch)
    assert refusals(mount, REFUSED_SYNTAX + spelled, spy) == []
    assert mount.snapshot() == before


def test_very_long_names_are_refused_up_front_naming_the_limit(
    mount: Mount, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = tools_context(mount.fs, policy=False)
    before = mount.snapshot()
    spy = DialectSpy(mount.fs, monkeypatch)
    whole = "4095 bytes" if mount.name == "local" else "1024 bytes"
    cases = {
        "n" * 300 + ".txt": "255 bytes",  # one name over NAME_MAX
        "a/" + "é" * 200 + ".txt": "255 bytes",  # 404 bytes in UTF-8, 205 characters
        "d/" * 2100 + "x.txt": whole,  # the whole path over the store's limit
        "d/" * 50_000 + "x.txt": whole,  # 100 KB: once 10 s and 1.5 GB in the deny matcher
    }
    for path, limit in cases.items():
        for tool, args in tool_calls(path):
            started = time.monotonic()
            result = call(ctx, tool, args, None)
            assert time.monotonic() - started < 1.0, (tool, path[:12])
            assert result.error == DENIED, (tool, path[:12], result.text[:300])
            assert limit in result.text, (tool, path[:12], result.text[:300])
            assert len(result.text) < 1000, "the message quotes the whole path"
    assert spy.calls == []
    assert mount.snapshot() == before
    # Exactly at the limit is fine: a 255-byte name.
    assert not call(ctx, "write", {"file_path": "n" * 255, "content": "ok\n"}, None).is_error


ODD_NAMES = [
    "%2e%2e",
    "%2e%2e%2fsecret.txt",
    "..%2fsecret.txt",
    "a%2Fb",
    "a?b=..%2F..%2Fsecret.txt",
    "#frag",
    "?versionId=1",
    "....",
    "...",
    "..a",
    "a..",
    " ..",
    "\u2026",  # horizontal ellipsis: NFKC "...", a legal name
    "e\u0301.txt",
    "\u202etxt.exe",
    "a+b&c=d;e:f",
]


def test_encoded_and_odd_names_land_exactly_at_their_own_key(mount: Mount) -> None:
    ctx = tools_context(mount.fs, policy=False)
    before = mount.snapshot()
    for name in ODD_NAMES:
        result = call(ctx, "write", {"file_path": f"odd/{name}", "content": name}, None)
        assert not result.is_error, f"{name!r}: {result.text}"
        assert mount.get(f"ws/odd/{name}") == name.encode(), name
    after = mount.snapshot()
    new = {key for key in after if key not in before}
    assert len(new) >= len(ODD_NAMES)
    assert all("/ws/odd" in key for key in new), sorted(new)
    assert {key: value for key, value in after.items() if key in before} == before


SEGMENTS = st.sampled_from(
    [
        ".",
        "..",
        "",
        "a",
        "ws",
        "ws-sibling",
        "secret.txt",
        "~",
        "\\",
        "%2e%2e",
        "\uff0e\uff0e",
        "\u2025",
        "\u2100",
        "\x00",
        "x:",
        "?",
        "#",
    ]
)


@settings(
    max_examples=200,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    prefix=st.sampled_from(["", "/", "//", "top/", "top-url/", "other/", "other-url/", "./"]),
    parts=st.lists(SEGMENTS, min_size=1, max_size=8),
)
def test_resolve_either_refuses_or_stays_inside_the_root(
    mount: Mount, prefix: str, parts: list[str]
) -> None:
    lead = {
        "top/": mount.abs_top + "/",
        "top-url/": mount.url_tops[0] + "/",
        "other/": mount.abs_other + "/",
        "other-url/": mount.url_others[0] + "/",
    }.get(prefix, prefix)
    path = lead + "/".join(parts)
    try:
        target = run(mount.fs.resolve(path))
    except FsSandboxDenied:
        return
    root = mount.root
    for where in (target.display_path, target.target_key):
        assert where == root or where.startswith(root + "/"), (path, target)
    if mount.local_top is not None:
        real = os.path.realpath(target.target_key)
        assert real == root or real.startswith(root + "/"), (path, real)


# -- read-only ---------------------------------------------------------------------


def test_read_only_refuses_every_mutation_before_any_io(
    mount: Mount, monkeypatch: pytest.MonkeyPatch
) -> None:
    mount.put("ws/a.txt", b"keep me\n")
    ro = mount.reopen(read_only=True)
    ctx = tools_context(ro)
    bare = tools_context(ro, policy=False)
    committed: list[tuple[Any, ...]] = []
    ctx.on(FS_COMMITTED, lambda *args: committed.append(args))
    bare.on(FS_COMMITTED, lambda *args: committed.append(args))
    session = execution()
    read = call(ctx, "read", {"file_path": "a.txt"}, session)
    assert read.value is not None
    version = read.value["version"]
    before = mount.snapshot()
    spy = DialectSpy(ro, monkeypatch)
    wire = mount.wire()

    mutations = [
        (ctx, "write", {"file_path": "a.txt", "content": "x"}, session),
        (ctx, "write", {"file_path": "new/b.txt", "content": "x"}, session),
        (ctx, "edit", {"file_path": "a.txt", "old_string": "keep", "new_string": "x"}, session),
        (ctx, "edit", {"file_path": "a.txt", "old_string": "absent", "new_string": "x"}, session),
        (bare, "write", {"file_path": "a.txt", "content": "x"}, None),
        (bare, "write", {"file_path": "c.txt", "content": "x"}, None),
        (bare, "edit", {"file_path": "a.txt", "old_string": "e", "new_string": "x"}, None),
        (
            bare,
            "edit",
            {"file_path": "a.txt", "old_string": "e", "new_string": "x", "replace_all": True},
            None,
        ),
    ]
    for context, tool, args, who in mutations:
        result = call(context, tool, args, who)
        assert result.error == DENIED, (tool, args, result.text)
        assert "read-only" in result.text

    async def seam() -> None:
        existing = await ro.resolve("a.txt")
        fresh = await ro.resolve("d.txt")
        for attempt in (
            ro.write_text(existing, "x"),
            ro.write_text(existing, "x", ReplaceIfVersion(version)),
            ro.write_text(fresh, "x", CreateIfAbsent()),
            ro.edit_text(existing, FsEditRequest("keep", "x"), version),
            ro.edit_text(existing, FsEditRequest("keep", "x")),
        ):
            with pytest.raises(FsSandboxDenied):
                await attempt

    run(seam())
    assert spy.calls == []
    assert mount.wire() == wire
    assert committed == []
    assert mount.snapshot() == before


# -- deny patterns -----------------------------------------------------------------


def test_default_deny_patterns_hold_for_every_tool_and_spelling(
    mount: Mount, monkeypatch: pytest.MonkeyPatch
) -> None:
    mount.put("ws/.git/config", b"[core]\n")
    mount.put("ws/.env", b"API_KEY=secret\n")
    mount.put("ws/app/.env", b"DB=secret\n")
    root = mount.root
    spellings = [
        ".git/config",
        ".git",
        ".git/",
        ".git/hooks/pre-commit",
        "./.git/config",
        "a/../.git/config",
        ".git//config",
        f"{root}/.git/config",
        f"{root}/.git/hooks/post-checkout",
        ".env",
        "./.env",
        "app/.env",
        "app//.env",
        "app/../app/.env",
        "deep/er/still/.env",
        f"{root}/app/.env",
    ]
    before = mount.snapshot()
    spy = DialectSpy(mount.fs, monkeypatch)
    # (".env" as a cwd is a directory name the patterns do not cover: not tried.)
    assert refusals(mount, spellings, spy, as_cwd=False) == []
    assert mount.snapshot() == before

    async def via_listing() -> None:
        # A target handed out by list_dir is re-checked on use.
        listed = await mount.fs.list_dir(await mount.fs.resolve("."))
        env = next(entry for entry in listed if entry.name == ".env")
        for attempt in (
            mount.fs.read_text(env.target),
            mount.fs.stat(env.target),
            mount.fs.write_text(env.target, "x"),
            mount.fs.edit_text(env.target, FsEditRequest("API", "x")),
        ):
            with pytest.raises(FsSandboxDenied, match="deny pattern"):
                await attempt

    spy.clear()
    run(via_listing())
    assert [name for name, _ in spy.calls] == ["list_dir"]
    assert mount.snapshot() == before


def test_deny_patterns_are_configurable_per_mount(mount: Mount) -> None:
    mount.put("ws/.env", b"A=1\n")
    mount.put("ws/keys/deep/id.pem", b"KEY\n")
    mount.put("ws/top.pem", b"KEY\n")
    fs = mount.reopen(deny=("**/*.pem", "secrets/**"))
    ctx = tools_context(fs, policy=False)
    assert call(ctx, "read", {"file_path": ".env"}, None).value is not None
    for path in ("keys/deep/id.pem", "top.pem", "secrets/new.txt", "secrets"):
        for tool, args in tool_calls(path):
            assert call(ctx, tool, args, None).error == DENIED, (tool, path)
    open_all = tools_context(mount.reopen(deny=()), policy=False)
    assert call(open_all, "read", {"file_path": ".git/config"}, None).error == {
        "name": "FsError",
        "code": "FS_NOT_FOUND",
    }


# -- audit -------------------------------------------------------------------------


def test_every_committed_mutation_emits_exactly_one_event_with_its_versions(mount: Mount) -> None:
    ctx = tools_context(mount.fs)
    bare = tools_context(mount.fs, policy=False)
    events: list[tuple[Any, ...]] = []
    for context in (ctx, bare):
        context.on(FS_COMMITTED, lambda *args: events.append(args))
    alice, bob = execution(), execution()

    def version_now(path: str) -> str:
        info = run(mount.fs.stat(run(mount.fs.resolve(path))))
        assert info is not None
        return info.version

    created = call(ctx, "write", {"file_path": "a.txt", "content": "one two two\n"}, alice)
    updated = call(ctx, "write", {"file_path": "a.txt", "content": "one two two\n\n"}, alice)
    edited = call(
        ctx, "edit", {"file_path": "a.txt", "old_string": "one", "new_string": "1"}, alice
    )
    all_of = call(
        ctx,
        "edit",
        {"file_path": "a.txt", "old_string": "two", "new_string": "2", "replace_all": True},
        alice,
    )
    # Refused or failed: no event.
    assert call(ctx, "write", {"file_path": "a.txt", "content": "x"}, bob).is_error
    assert call(
        ctx, "edit", {"file_path": "a.txt", "old_string": "1", "new_string": "x"}, bob
    ).error
    assert call(
        ctx, "edit", {"file_path": "a.txt", "old_string": "zz", "new_string": "x"}, alice
    ).error
    assert call(ctx, "read", {"file_path": "a.txt"}, bob).value is not None
    unguarded = call(bare, "write", {"file_path": "a.txt", "content": "bare\n"}, None)
    results = [created, updated, edited, all_of, unguarded]
    assert [r.is_error for r in results] == [False] * 5
    versions = [r.value["version"] for r in results if r.value is not None]
    assert versions[-1] == version_now("a.txt")
    display = run(mount.fs.resolve("a.txt")).display_path
    assert [(e[1].display_path, e[2]) for e in events] == [
        (display, "create"),
        (display, "update"),
        (display, "edit"),
        (display, "edit"),
        (display, "update"),
    ]
    assert [e[3] for e in events] == [None, *versions[:-1]]
    assert [e[4] for e in events] == versions
    assert [e[0].agent.session if e[0] else None for e in events] == [
        alice.agent.session,
        alice.agent.session,
        alice.agent.session,
        alice.agent.session,
        None,
    ]


# -- local disk: symlinks, swaps and links ---------------------------------------------


@pytest.fixture
def local(tmp_path: Path) -> Mount:
    mounted = local_mount(tmp_path)
    mounted.plant_neighbours()
    return mounted


def outside_dir(local: Mount) -> Path:
    return Path(local.abs_other)


def test_symlinks_leading_out_are_refused_for_every_tool(local: Mount) -> None:
    root = Path(local.root)
    other = outside_dir(local)
    links = {
        "leak.txt": other / "secret.txt",  # a file
        "out": other,  # a directory
        "a/b/out": other,  # a directory, deep
        "rel": Path("../../other"),  # relative, climbing out
        "slash": Path("/"),  # the whole machine
        "hop1": Path("hop2"),  # a chain ending outside
        "hop2": Path("out/secret.txt"),
        "dangling": other / "created.txt",  # not there yet: a write would create it
        "danglingdir": other / "newdir",
    }
    for link, target in links.items():
        (root / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / link)
    paths = [
        "leak.txt",
        "out/secret.txt",
        "out/new.txt",
        "a/b/out/secret.txt",
        "a/b/out/sub/new.txt",
        "rel/secret.txt",
        "slash/etc/passwd",
        "hop1",
        "dangling",
        "danglingdir/new.txt",
        "out/../out/secret.txt",
        f"{root}/out/secret.txt",
        f"file://{root}/leak.txt",
    ]
    before = local.snapshot()
    ctx, bare = tools_context(local.fs), tools_context(local.fs, policy=False)
    problems = []
    for path in paths:
        for context in (ctx, bare):
            for tool, args in tool_calls(path):
                result = call(context, tool, args, execution())
                if result.error != DENIED or SECRET.decode().strip() in result.text:
                    problems.append(f"{tool} {path!r}: {result.text[:160]}")
    assert problems == []

    async def listing() -> None:
        # list_dir shows the links themselves; their targets cannot be listed or read.
        entries = {e.name: e for e in await local.fs.list_dir(await local.fs.resolve("."))}
        assert entries["out"].type == "symlink"
        for attempt in (
            local.fs.list_dir(entries["out"].target),
            local.fs.list_dir(entries["slash"].target),
            local.fs.read_text(entries["leak.txt"].target),
            local.fs.write_text(entries["dangling"].target, "pwned\n"),
        ):
            with pytest.raises(FsSandboxDenied):
                await attempt

    run(listing())
    assert local.snapshot() == before
    assert not (other / "created.txt").exists()
    assert not (other / "newdir").exists()


def test_a_symlink_loop_is_refused_without_hanging(local: Mount) -> None:
    root = Path(local.root)
    os.symlink("loop2", root / "loop1")
    os.symlink("loop1", root / "loop2")
    ctx = tools_context(local.fs, policy=False)
    for tool, args in tool_calls("loop1"):
        result = call(ctx, tool, args, None)
        assert result.error is not None
        assert result.error["name"] == "FsError", result.text
        assert code_of(result) in ("FS_SANDBOX_DENIED", "FS_IO_ERROR"), result.text
    assert os.path.islink(root / "loop1")
    assert os.path.islink(root / "loop2")


def swap_for_outside_link(root: Path, name: str, outside: Path) -> None:
    """Move ``root/name`` aside and put a symlink leading to ``outside`` in its place."""
    os.rename(root / name, root / f"{name}.moved")
    os.symlink(outside, root / name)


def test_parent_directory_swapped_for_an_outside_symlink_after_resolve(local: Mount) -> None:
    root = Path(local.root)
    other = outside_dir(local)
    (root / "sub").mkdir()
    (root / "sub" / "f.txt").write_text("inside\n")
    (other / "f.txt").write_bytes(SECRET)

    async def body() -> None:
        existing = await local.fs.resolve("sub/f.txt")
        fresh = await local.fs.resolve("sub/new.txt")
        swap_for_outside_link(root, "sub", other)
        attempts = [
            local.fs.read_text(existing),
            local.fs.stat(existing),
            local.fs.write_text(existing, "pwned\n"),
            local.fs.edit_text(existing, FsEditRequest("TOP", "pwned")),
            local.fs.write_text(fresh, "pwned\n"),
            local.fs.write_text(fresh, "pwned\n", CreateIfAbsent()),
            drain(local.fs.stream_text(existing)),
        ]
        for attempt in attempts:
            with pytest.raises(FsSandboxDenied):
                await attempt

    before = walk(other, "other")
    run(body())
    assert walk(other, "other") == before


def test_a_write_below_a_swapped_parent_creates_nothing_outside(local: Mount) -> None:
    root = Path(local.root)
    other = outside_dir(local)
    (root / "sub").mkdir()
    target = run(local.fs.resolve("sub/deeper/new.txt"))
    swap_for_outside_link(root, "sub", other)
    before = walk(other, "other")
    with pytest.raises(FsSandboxDenied):
        run(local.fs.write_text(target, "pwned\n"))
    assert walk(other, "other") == before


def test_a_symlink_swapped_in_at_the_instant_of_open_is_caught(
    local: Mount, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The swap happens inside the first os.open under the root, after every
    # path check fsseam makes: only validating the opened descriptor (or
    # O_NOFOLLOW on the last component) can catch it.
    root = Path(local.root)
    other = outside_dir(local)
    real_open = os.open

    def swap_on_first_open(victim: Path, outside: Path) -> Any:
        def hook(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if os.fspath(path).startswith(f"{root}/") and not victim.is_symlink():
                if victim.is_dir():
                    victim.rename(victim.with_name(victim.name + ".moved"))
                else:
                    victim.unlink()
                os.symlink(outside, victim)
            return real_open(path, flags, *args, **kwargs)

        return hook

    async def attempt(rel: str, action: str) -> None:
        target = await local.fs.resolve(rel)
        if action == "read":
            await local.fs.read_text(target)
        elif action == "write":
            await local.fs.write_text(target, "pwned\n")
        elif action == "create":
            await local.fs.write_text(target, "pwned\n", CreateIfAbsent())
        else:
            await local.fs.edit_text(target, FsEditRequest("inside", "pwned"))

    cases = [
        ("file.txt", "read", "file.txt", other / "secret.txt"),
        ("file.txt", "write", "file.txt", other / "secret.txt"),
        ("file.txt", "edit", "file.txt", other / "secret.txt"),
        ("dir/f.txt", "read", "dir", other),
        ("dir/f.txt", "write", "dir", other),
        ("dir/f.txt", "edit", "dir", other),
        ("dir/new.txt", "write", "dir", other),
        ("dir/new.txt", "create", "dir", other),
    ]
    (other / "f.txt").write_bytes(SECRET)  # what "dir/f.txt" names once "dir" leads out
    for rel, action, victim_rel, outside in cases:
        reset_tree(root)
        victim = root / victim_rel
        before = walk_outside(other)
        monkeypatch.setattr(os, "open", swap_on_first_open(victim, outside))
        try:
            with pytest.raises(FsSandboxDenied):
                run(attempt(rel, action))
        finally:
            monkeypatch.setattr(os, "open", real_open)
        assert victim.is_symlink(), (rel, action, "the swap never happened")
        assert walk_outside(other) == before, (rel, action)


async def drain(opened: Any) -> str:
    async with opened as stream:
        return "".join([chunk async for chunk in stream])


def reset_tree(root: Path) -> None:
    """``root`` holding only ``file.txt`` and ``dir/f.txt``, both "inside"."""
    for path in root.iterdir():
        if path.is_symlink() or path.is_file():
            path.unlink()
        else:
            for child in path.iterdir():
                child.unlink()
            path.rmdir()
    (root / "dir").mkdir()
    (root / "dir" / "f.txt").write_text("inside\n")
    (root / "file.txt").write_text("inside\n")


def walk_outside(other: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in other.iterdir() if p.is_file()}


def test_a_symlink_flipping_under_concurrent_tool_calls_never_leaks(local: Mount) -> None:
    root = Path(local.root)
    other = outside_dir(local)
    before = walk_outside(other)
    stop = threading.Event()
    flips = 0

    def flipper() -> None:
        nonlocal flips
        spare = root / ".flip"
        while not stop.is_set():
            # Atomically alternate "a.txt" between a real file and a link leading out.
            spare.unlink(missing_ok=True)
            if flips % 2:
                spare.write_text("inside\n")
            else:
                os.symlink(other / "secret.txt", spare)
            os.replace(spare, root / "a.txt")
            flips += 1

    thread = threading.Thread(target=flipper)
    thread.start()
    leaks: list[str] = []
    outcomes: set[str | None] = set()
    try:
        ctx = tools_context(local.fs, policy=False)
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            for tool, args in tool_calls("a.txt")[:3]:
                result = call(ctx, tool, args, None)
                outcomes.add(code_of(result))
                if SECRET.decode().strip() in result.text:
                    leaks.append(f"{tool}: {result.text[:120]}")
    finally:
        stop.set()
        thread.join()
    assert flips > 10
    assert leaks == []
    assert walk_outside(other) == before
    assert "FS_SANDBOX_DENIED" in outcomes  # the race was really run both ways
    assert outcomes & {None, "FS_EDIT_NOT_FOUND"}


def test_a_hard_link_to_an_outside_file_is_replaced_never_written_through(local: Mount) -> None:
    other = outside_dir(local)
    os.link(other / "secret.txt", Path(local.root) / "linked.txt")
    ctx = tools_context(local.fs)
    session = execution()
    assert call(ctx, "read", {"file_path": "linked.txt"}, session).value is not None
    assert not call(ctx, "write", {"file_path": "linked.txt", "content": "new\n"}, session).is_error
    assert (other / "secret.txt").read_bytes() == SECRET
    assert (Path(local.root) / "linked.txt").read_text() == "new\n"


def test_a_symlink_into_the_git_directory_is_denied(local: Mount) -> None:
    root = Path(local.root)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    os.symlink(".git", root / "gitdir")
    os.symlink(".git/config", root / "cfg")
    ctx = tools_context(local.fs, policy=False)
    for path in ("gitdir/config", "gitdir/hooks/pre-commit", "cfg"):
        for tool, args in tool_calls(path):
            result = call(ctx, tool, args, None)
            assert result.error == DENIED, (tool, path, result.text)
    assert sorted(p.name for p in (root / ".git").iterdir()) == ["config"]
