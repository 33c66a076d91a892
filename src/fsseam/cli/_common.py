"""What every ``fsseam`` command shares: exit statuses, aborting, mounting a location.

A command mounts a root with :func:`mount`, turns seam failures into
:class:`Abort` with :func:`seam_errors`, and returns an exit status from
:data:`EXIT_STATUS`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from fsseam.backends import DEFAULT_DENY, open_fs
from fsseam.backends.containment import DenyRules
from fsseam.seam import FileSystem, FsError, FsErrorCode

__all__ = [
    "EXIT_CONFLICT",
    "EXIT_DENIED",
    "EXIT_INTERRUPTED",
    "EXIT_IO",
    "EXIT_NOT_FOUND",
    "EXIT_NOT_TEXT",
    "EXIT_OK",
    "EXIT_STATUS",
    "EXIT_UNSAFE",
    "EXIT_USAGE",
    "INVALID",
    "Abort",
    "Parents",
    "check_denied",
    "exit_status",
    "flush_stdout",
    "locate",
    "mount",
    "parse_storage_option",
    "positive",
    "probe",
    "seam_errors",
]

EXIT_OK = 0
EXIT_UNSAFE = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_NOT_TEXT = 4
EXIT_CONFLICT = 5
EXIT_DENIED = 6
EXIT_IO = 7
EXIT_INTERRUPTED = 130

EXIT_STATUS: dict[int, str] = {
    EXIT_OK: "ok",
    EXIT_UNSAFE: "doctor: a precondition was not enforced, or guards hold in-process only",
    EXIT_USAGE: "invalid arguments: INVALID_ARGUMENTS, bad -o option, missing extra",
    EXIT_NOT_FOUND: "not found: FS_NOT_FOUND",
    EXIT_NOT_TEXT: "wrong kind: FS_NOT_TEXT, FS_NOT_REGULAR_FILE, FS_NOT_DIRECTORY, FS_TOO_LARGE",
    EXIT_CONFLICT: "conflict: FS_STALE_VERSION, FS_NOT_OBSERVED, FS_AMBIGUOUS_EDIT, "
    "FS_EDIT_NOT_FOUND",
    EXIT_DENIED: "denied: FS_SANDBOX_DENIED (outside the root, read-only), FS_PERMISSION_DENIED",
    EXIT_IO: "I/O: FS_IO_ERROR, FS_ABORTED, store unreachable",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}
"""Exit status of every command, one per error family."""

_BY_CODE: dict[str, int] = {
    FsErrorCode.FS_NOT_FOUND: EXIT_NOT_FOUND,
    FsErrorCode.FS_NOT_TEXT: EXIT_NOT_TEXT,
    FsErrorCode.FS_NOT_REGULAR_FILE: EXIT_NOT_TEXT,
    FsErrorCode.FS_NOT_DIRECTORY: EXIT_NOT_TEXT,
    FsErrorCode.FS_TOO_LARGE: EXIT_NOT_TEXT,
    FsErrorCode.FS_STALE_VERSION: EXIT_CONFLICT,
    FsErrorCode.FS_NOT_OBSERVED: EXIT_CONFLICT,
    FsErrorCode.FS_AMBIGUOUS_EDIT: EXIT_CONFLICT,
    FsErrorCode.FS_EDIT_NOT_FOUND: EXIT_CONFLICT,
    FsErrorCode.FS_SANDBOX_DENIED: EXIT_DENIED,
    FsErrorCode.FS_PERMISSION_DENIED: EXIT_DENIED,
    FsErrorCode.FS_IO_ERROR: EXIT_IO,
    FsErrorCode.FS_ABORTED: EXIT_IO,
    "INVALID_ARGUMENTS": EXIT_USAGE,
    "UNKNOWN_TOOL": EXIT_USAGE,
}

INVALID = "INVALID_ARGUMENTS"
PROBE_TIMEOUT = 30.0
"""Seconds a store may take to answer the startup listing of ``serve`` and ``doctor``."""


def exit_status(code: str) -> int:
    """The exit status for an error code (``FS_…`` or ``INVALID_ARGUMENTS``); 7 if unknown."""
    return _BY_CODE.get(code, EXIT_IO)


class Abort(Exception):
    """Stop the command: print ``CODE: message`` on stderr and exit with ``status``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = exit_status(code)


# -- arguments -----------------------------------------------------------------


def parse_storage_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` → ``(key, value)``; true/false, integers and JSON parse, else a string."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    lowered = raw.strip().lower()
    if lowered in ("true", "false"):
        return key, lowered == "true"
    try:
        return key, int(raw)
    except ValueError:
        pass
    try:
        return key, json.loads(raw)
    except ValueError:
        return key, raw


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def line_offset(text: str) -> int:
    """``--offset``: a 1-based line, or ``-N`` for the last N lines (the read tool's rule)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value == 0:
        raise argparse.ArgumentTypeError("must be 1 or more, or -N for the last N lines, got 0")
    return value


@dataclass(frozen=True, slots=True)
class Parents:
    """What a command module needs to add its subcommands to the ``fsseam`` parser."""

    storage: argparse.ArgumentParser
    """Parent parser with ``-o KEY=VALUE`` storage options."""
    located: argparse.ArgumentParser
    """Parent parser with the storage options and ``--root ROOT``."""
    command: Callable[..., argparse.ArgumentParser]
    """``command(name, summary, description, **kwargs)``: add a subcommand."""


def flush_stdout() -> None:
    """Flush stdout before writing to stderr, ignoring a reader that went away."""
    with suppress(BrokenPipeError, ValueError):
        sys.stdout.flush()


def _is_store_url(location: str) -> bool:
    return "://" in location and not location.startswith("file://")


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _existing_dir(path: str) -> str:
    while not os.path.isdir(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def _components(location: str) -> list[list[str]]:
    """The spellings of a location to check, each as path components.

    A local path counts as written and as its real path (a link into ``.git``
    is ``.git``); a store URL counts from below its bucket.
    """
    if _is_store_url(location):
        rest = location.split("://", 1)[1].lstrip("/")
        return [[part for part in rest.split("/")[1:] if part]]
    absolute = os.path.abspath(location.removeprefix("file://"))
    spellings = [absolute]
    real = os.path.realpath(absolute)
    if real != absolute:
        spellings.append(real)
    return [[part for part in spelled.split(os.sep) if part] for spelled in spellings]


def check_denied(location: str, deny: tuple[str, ...] = DEFAULT_DENY) -> None:
    """Refuse a location that a deny pattern matches below ANY directory of its path.

    A mount applies its patterns relative to its root, and the CLI picks the
    root (the current directory, or the path's own parent): from outside a
    repository, ``/abs/ws/.git/config`` would be ``config`` under a root
    ``/abs/ws/.git``. Matching every tail of the path makes the answer the
    same whatever root is chosen, and keeps ``.git`` from ever being mounted.
    """
    rules = DenyRules(deny)
    for parts in _components(location):
        for start in range(len(parts)):
            tail = "/".join(parts[start:])
            pattern = rules.match(tail)
            if pattern is not None:
                raise Abort(
                    FsErrorCode.FS_SANDBOX_DENIED.value,
                    f'"{location}" matches the deny pattern "{pattern}" (as "{tail}"); '
                    "fsseam never reads or writes it",
                )


def locate(location: str, root: str | None, *, listing: bool) -> tuple[str, str]:
    """``(root to mount, path to resolve)`` for a location a person typed.

    A location a deny pattern covers (below whatever directory) is refused
    first, so the root chosen here never changes what is denied.
    """
    if root is not None:
        if _is_store_url(location):
            check_denied(location)
            return root, location
        if _is_store_url(root):
            check_denied(f"{root.rstrip('/')}/{location}")
            return root, location
        local = location.removeprefix("file://")
        check_denied(local)
        return root, os.path.abspath(local)
    check_denied(location)
    if _is_store_url(location):
        protocol, rest = location.split("://", 1)
        bucket = rest.lstrip("/").split("/", 1)[0]
        if not bucket:
            raise Abort(INVALID, f"{location!r} names no bucket; use {protocol}://BUCKET/KEY")
        return f"{protocol}://{bucket}", location
    absolute = os.path.abspath(location.removeprefix("file://"))
    cwd = os.getcwd()
    if _inside(absolute, cwd):
        return cwd, absolute
    return _existing_dir(absolute if listing else os.path.dirname(absolute)), absolute


def mount(root: str, options: list[tuple[str, Any]], *, read_only: bool) -> FileSystem:
    """Open ``root``, turning every failure into an :class:`Abort` a person can act on.

    A root inside a denied place (a ``.git`` directory) is refused: mounted,
    everything in it would be relative to it and escape the patterns.
    """
    check_denied(root)
    storage = dict(options)
    try:
        return open_fs(root, read_only=read_only, **storage)
    except FsError as exc:
        raise Abort(exc.code.value, exc.message) from exc
    except ImportError as exc:
        raise Abort(INVALID, str(exc)) from exc
    except FileNotFoundError as exc:
        raise Abort(FsErrorCode.FS_NOT_FOUND.value, str(exc)) from exc
    except PermissionError as exc:
        raise Abort(FsErrorCode.FS_PERMISSION_DENIED.value, f"{root}: {exc}") from exc
    except (TypeError, ValueError) as exc:
        given = ", ".join(key for key, _ in options) or "none"
        raise Abort(INVALID, f"cannot open {root!r} (storage options: {given}): {exc}") from exc
    except Exception as exc:
        raise Abort(FsErrorCode.FS_IO_ERROR.value, f"cannot open {root!r}: {exc}") from exc


@contextmanager
def seam_errors(what: str) -> Iterator[None]:
    """Map failures of direct seam calls to ``CODE: message``."""
    try:
        yield
    except Abort:
        raise
    except FsError as exc:
        raise Abort(exc.code.value, exc.message) from exc
    except Exception as exc:
        raise Abort(FsErrorCode.FS_IO_ERROR.value, f"{what}: {type(exc).__name__}: {exc}") from exc


async def probe(fs: FileSystem, root: str) -> None:
    """Fail fast on a missing root, bad credentials or an unreachable store."""
    with seam_errors(f"cannot list {root}"):
        try:
            await asyncio.wait_for(fs.list_dir(await fs.resolve(".")), PROBE_TIMEOUT)
        except TimeoutError:
            raise Abort(
                FsErrorCode.FS_IO_ERROR.value,
                f"cannot list {root}: the store did not answer within {PROBE_TIMEOUT:.0f} s",
            ) from None
