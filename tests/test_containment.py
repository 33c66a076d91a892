"""Path rules applied before any I/O: refused syntax and deny patterns."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fsseam import FsSandboxDenied, open_fs
from fsseam.backends.containment import DenyRules, syntax_problem


@pytest.mark.parametrize(
    "path",
    [
        "",
        "a\x00b",
        "~/x",
        "~root/x",
        "a\\b",
        "a\ud800b",
        "\uff0e\uff0e/etc",
        "a/\uff0e\uff0e/b",
        "x\uff0fy",
        "\ufe52",
    ],
)
def test_refused_syntax(path: str) -> None:
    assert syntax_problem(path) is not None


@pytest.mark.parametrize("path", ["a.txt", "dir/sub/f", "café/naïve.txt", "ℌello", "./a", "a/../b"])
def test_ordinary_paths_pass(path: str) -> None:
    assert syntax_problem(path) is None


@pytest.mark.parametrize(
    ("relative", "pattern"),
    [
        (".git", ".git/**"),
        (".git/config", ".git/**"),
        (".git/objects/ab/cd", ".git/**"),
        (".env", "**/.env"),
        ("app/.env", "**/.env"),
        ("a/b/c/.env", "**/.env"),
        (".GIT/config", ".git/**"),
        ("app/.ENV", "**/.env"),
    ],
)
def test_default_deny_patterns_match(relative: str, pattern: str) -> None:
    assert DenyRules().match(relative) == pattern


@pytest.mark.parametrize(
    "relative", ["git/config", "a/.git-keep", ".envrc", "env", "app/.env.example"]
)
def test_default_deny_patterns_leave_others(relative: str) -> None:
    assert DenyRules().match(relative) is None


@pytest.mark.parametrize("url", ["local", "memory"])
def test_denied_paths_cannot_be_resolved(tmp_path: Path, url: str) -> None:
    fs = open_fs(str(tmp_path) if url == "local" else f"memory://deny-{tmp_path.name}")

    async def go() -> None:
        for path in [".git/config", "sub/.env", ".env", "./.git/HEAD", "x/../.env"]:
            with pytest.raises(FsSandboxDenied, match="deny pattern"):
                await fs.resolve(path)

    asyncio.run(go())


def test_symlink_to_denied_file_is_denied(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("SECRET=1")
    (tmp_path / "notes").symlink_to(tmp_path / ".env")
    fs = open_fs(str(tmp_path))
    with pytest.raises(FsSandboxDenied, match="deny pattern"):
        asyncio.run(fs.resolve("notes"))


def test_deny_patterns_are_configurable(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("A=1")
    fs = open_fs(str(tmp_path), deny=("secrets/**",))

    async def go() -> None:
        target = await fs.resolve(".env")
        assert await fs.read_text(target) == "A=1"
        with pytest.raises(FsSandboxDenied):
            await fs.resolve("secrets/key.pem")

    asyncio.run(go())


def test_deny_patterns_match_any_normalization_and_double_star_anywhere() -> None:
    import unicodedata

    rules = DenyRules(("sécret/**", "**/build/**/*.key"))
    for form in ("NFC", "NFD"):
        assert rules.match(unicodedata.normalize(form, "sécret/a")) == "sécret/**"
    assert rules.match("build/x.key") == "**/build/**/*.key"
    assert rules.match("a/b/build/c/d/x.key") == "**/build/**/*.key"
    assert rules.match("a/b/build/c/d/x.pem") is None


@pytest.mark.parametrize(
    ("path", "limit"),
    [("n" * 256, "255 bytes"), ("é" * 128, "255 bytes"), ("d/" * 2048 + "x", "4095 bytes")],
)
def test_path_limits_name_the_limit(path: str, limit: str) -> None:
    from fsseam.backends.containment import LOCAL_LIMITS

    problem = LOCAL_LIMITS.problem(path)
    assert problem is not None
    assert limit in problem


def test_path_limits_accept_what_fits() -> None:
    from fsseam.backends.containment import KEY_LIMITS, LOCAL_LIMITS

    assert LOCAL_LIMITS.problem("n" * 255) is None
    assert LOCAL_LIMITS.problem("d/" * 2000) is None
    assert KEY_LIMITS.problem("k" * 200, measured="bucket-free/" + "k" * 1000) is None
    assert KEY_LIMITS.problem("k", measured="k" * 1025) is not None


def test_containment_is_by_component_never_by_prefix() -> None:
    from fsseam.backends.containment import contained

    assert contained("/ws", "/ws")
    assert contained("/ws/a", "/ws")
    assert not contained("/ws-sibling/a", "/ws")
    assert contained("bucket/ws/a", "bucket/ws/")
