"""Probes only the hardening tests use: outside spellings, refused syntax, tool calls.

The harness itself (a :class:`~fsseam.testing.mounts.Mount` below a store's
top, with neighbours, on every backend; faults on its wire; the tool-level
helpers) ships in :mod:`fsseam.testing`.
"""

from __future__ import annotations

from typing import Any

from fsseam.testing.mounts import BACKENDS, Mount

LOCAL_AND_S3 = [BACKENDS[0], BACKENDS[2]]
"""The backends that run the big-file cases (CI's time budget: local and one object store)."""

LOCAL_MEMORY_S3 = BACKENDS[:3]
"""The backends that run the heavier content cases (multi-MiB edits)."""


def tool_calls(path: str) -> list[tuple[str, dict[str, Any]]]:
    """One read, one write and one edit of ``path``."""
    return [
        ("read", {"file_path": path}),
        ("write", {"file_path": path, "content": "pwned\n"}),
        ("edit", {"file_path": path, "old_string": "TOP-SECRET", "new_string": "pwned"}),
        ("edit", {"file_path": path, "old_string": "S", "new_string": "p", "replace_all": True}),
    ]


def outside_spellings(mount: Mount) -> list[str]:
    """Paths naming something outside the root, in every spelling the seam accepts."""
    relative = [
        "..",
        "../",
        "../secret.txt",
        "../../secret.txt",
        "a/../../secret.txt",
        "./../secret.txt",
        "a/./b/../../../secret.txt",
        "a/b/c/../../../../secret.txt",
        "..//secret.txt",
        "../ws-sibling/x.txt",
        "../ws/../secret.txt",
        "../" * 40 + "etc/passwd",
    ]
    tops = [mount.abs_top, *mount.url_tops]
    under_top = [
        suffix
        for top in tops
        for suffix in (
            top,
            f"{top}/",
            f"{top}/secret.txt",
            f"{top}/ws-sibling/x.txt",
            f"{top}/ws-sibling",
            f"{top}/ws/../secret.txt",
            f"{top}/ws/a/../../secret.txt",
            f"{top}/./secret.txt",
        )
    ]
    others = [
        spelling
        for top in [mount.abs_other, *mount.url_others]
        for spelling in (top, f"{top}/secret.txt")
    ]
    schemes = {url.split("://", 1)[0] for url in mount.url_tops}
    shouting = [
        url.replace(scheme, scheme.upper(), 1)
        for url in mount.url_tops
        for scheme in schemes
        if url.startswith(scheme)
    ]
    foreign = [
        "/",
        "/etc/passwd",
        "//etc/passwd",
        "file:///etc/passwd",
        "https://example.com/a.txt",
        "http://127.0.0.1:1/a.txt",
        "ftp://example.com/a.txt",
    ]
    for scheme, url in (
        ("s3", "s3://other-bucket/a.txt"),
        ("gs", "gs://other-bucket/a.txt"),
        ("az", "az://other-container/a.txt"),
        ("memory", "memory://elsewhere/a.txt"),
    ):
        if scheme not in schemes:
            foreign.append(url)
    return relative + under_top + others + [f"{u}/secret.txt" for u in shouting] + foreign


REFUSED_SYNTAX = [
    "~",
    "~/x.txt",
    "~root/.ssh/id_rsa",
    "~/../secret.txt",
    "..\\secret.txt",
    "a\\..\\..\\secret.txt",
    "\\etc\\passwd",
    "C:\\Windows\\win.ini",
    "a.txt\\",
    "a.txt\x00",
    "\x00",
    "a\x00/../../secret.txt",
    "../\x00",
    "\uff0e\uff0e/secret.txt",  # fullwidth full stops: NFKC ".."
    "\u2025/secret.txt",  # two dot leader: NFKC ".."
    "\u2024\u2024/secret.txt",  # one dot leaders: NFKC ".."
    "a/\uff0e\uff0e/\uff0e\uff0e/secret.txt",
    "\uff0e/secret.txt",  # NFKC "."
    "\ufe52",  # small full stop: NFKC "."
    "..\uff0fsecret.txt",  # fullwidth solidus: NFKC "/"
    "\uff3c",  # fullwidth reverse solidus: NFKC "\\"
    "a\ufe68b",  # small reverse solidus: NFKC "\\"
    "\u2100",  # account of: NFKC "a/c"
    "\u2101/x.txt",  # addressed to the subject: NFKC "a/s"
]
"""Paths whose syntax is refused as written (``~``, ``\\``, NUL, dangerous NFKC forms)."""
