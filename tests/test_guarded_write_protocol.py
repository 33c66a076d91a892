"""The guarded-write protocol written once (``dialects/base.py``) and what every store shares.

``settle`` is THE token-recovery decision; its table is pinned here. The
store-level tests run the real dialects against the emulators the suite
uses (moto, fake-gcs-server, Azurite).
"""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

import fsspec
import pytest

from fsseam.backends import FsspecFileSystem
from fsseam.backends.dialects import (
    GenericDialect,
    GuardedDialect,
    LocalDialect,
    ObjectStoreDialect,
    dialect_for,
)
from fsseam.backends.dialects.base import (
    LOSERS_GET_5XX,
    QUIRKS,
    RESEND,
    GuardRefused,
    ObjectState,
    OutcomeUnknown,
    settle,
)
from fsseam.seam import (
    CreateIfAbsent,
    FsError,
    FsErrorCode,
    FsIOError,
    FsVersion,
    FsWriteIntent,
    ReplaceIfVersion,
)
from fsseam.testing.emulators.s3 import S3Bucket, S3Emulator

URL = "s3://b/k"
TOKEN = "mine"
V1 = FsVersion('"v1"')
V2 = FsVersion('"v2"')
REFUSED = GuardRefused("412")
LOST = OSError("the connection was reset")


def unknown() -> OutcomeUnknown:
    return OutcomeUnknown(FsIOError(f'"{URL}": the connection was reset'), status=500)


def outcome_of(
    guard: FsWriteIntent | None,
    outcome: GuardRefused | OutcomeUnknown,
    current: ObjectState | None,
) -> str:
    """What settle decides, as a word: landed, resend, or the error code."""
    try:
        verdict = settle(URL, guard, TOKEN, outcome, current)
    except FsError as exc:
        return exc.code.value
    return "resend" if verdict is RESEND else "landed"


@pytest.mark.parametrize(
    ("guard", "outcome", "current", "decided"),
    [
        # Our token on the object: the write landed, whatever the answer said.
        (ReplaceIfVersion(V1), REFUSED, ObjectState(V2, TOKEN), "landed"),
        (CreateIfAbsent(), REFUSED, ObjectState(V1, TOKEN), "landed"),
        (ReplaceIfVersion(V1), unknown(), ObjectState(V2, TOKEN), "landed"),
        (None, unknown(), ObjectState(V2, TOKEN), "landed"),
        # Refused, someone else's write stands: a conflict.
        (ReplaceIfVersion(V1), REFUSED, ObjectState(V2, "theirs"), "FS_STALE_VERSION"),
        (ReplaceIfVersion(V1), REFUSED, None, "FS_STALE_VERSION"),
        (CreateIfAbsent(), REFUSED, ObjectState(V1, "theirs"), "FS_NOT_OBSERVED"),
        # Unknown outcome (5xx, reset) and the guard no longer holds: a conflict too.
        (ReplaceIfVersion(V1), unknown(), ObjectState(V2, "theirs"), "FS_STALE_VERSION"),
        (ReplaceIfVersion(V1), unknown(), None, "FS_STALE_VERSION"),
        (CreateIfAbsent(), unknown(), ObjectState(V1, None), "FS_NOT_OBSERVED"),
        # Unknown outcome and the guard still holds: it never landed, the failure stands.
        (ReplaceIfVersion(V1), unknown(), ObjectState(V1, "theirs"), "FS_IO_ERROR"),
        (CreateIfAbsent(), unknown(), None, "FS_IO_ERROR"),
        (None, unknown(), ObjectState(V1, "theirs"), "FS_IO_ERROR"),
        # Refused although the guard holds: the store refused its own current version.
        (ReplaceIfVersion(V1), REFUSED, ObjectState(V1, "theirs"), "resend"),
        (CreateIfAbsent(), REFUSED, None, "resend"),
    ],
)
def test_settle_decides_by_the_token_never_by_content(
    guard: FsWriteIntent | None,
    outcome: GuardRefused | OutcomeUnknown,
    current: ObjectState | None,
    decided: str,
) -> None:
    assert outcome_of(guard, outcome, current) == decided


def test_settle_without_a_resend_makes_a_refusal_at_the_current_version_a_conflict() -> None:
    with pytest.raises(FsError) as caught:
        settle(
            URL, ReplaceIfVersion(V1), TOKEN, REFUSED, ObjectState(V1, "theirs"), may_resend=False
        )
    assert caught.value.code is FsErrorCode.FS_STALE_VERSION


def object_store_dialects() -> list[type[ObjectStoreDialect]]:
    """The S3, GCS and Azure dialect classes, found in their modules."""
    found = []
    for name in ("s3", "gcs", "azure"):
        module = importlib.import_module(f"fsseam.backends.dialects.{name}")
        found.append(
            next(
                value
                for value in vars(module).values()
                if isinstance(value, type)
                and issubclass(value, ObjectStoreDialect)
                and value is not ObjectStoreDialect
            )
        )
    return found


def test_object_store_put_is_the_protocol_and_cannot_be_overridden() -> None:
    """A new dialect implements ``_send`` / ``_token_of``; ``put`` is the base's, final."""
    assert getattr(GuardedDialect.put, "__final__", False) is True
    for cls in object_store_dialects():
        assert cls.put is GuardedDialect.put, cls
        assert "_send" in vars(cls), cls
        assert "_token_of" in vars(cls), cls


def test_dialects_take_the_root_at_construction() -> None:
    memory = fsspec.filesystem("memory")
    assert isinstance(dialect_for(memory, root="/ws"), GenericDialect)
    assert dialect_for(memory, root="/ws").root == "/ws"
    assert dialect_for(memory).root is None
    local = dialect_for(fsspec.filesystem("file"), root="/tmp")
    assert isinstance(local, LocalDialect)
    assert local.root == "/tmp"


# -- on the stores --------------------------------------------------------------------


@pytest.fixture
def quick_s3_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore retries a 500 four times, waiting up to 1+2+4+8 s: keep the tries, not the waits.

    Test-only: the outcome depends on what each try is answered, never on the wait.
    """
    from aiobotocore.endpoint import AioEndpoint

    async def no_wait(_self: Any, _seconds: float) -> None:
        await asyncio.sleep(0)

    monkeypatch.setattr(AioEndpoint, "_sleep", no_wait)


@pytest.mark.s3
def test_a_5xx_answered_to_a_conditional_write_that_lost_is_a_conflict(
    s3_server: S3Emulator, s3_bucket: S3Bucket, s3_fs: FsspecFileSystem, quick_s3_retries: None
) -> None:
    """Ceph RGW answers losers of concurrent PUTs 500: unknown outcome, settled by the token."""
    QUIRKS.forget(s3_fs.dialect.store_id())

    async def body() -> None:
        target = await s3_fs.resolve("a.txt")
        first = await s3_fs.write_text(target, "one\n")
        await s3_fs.write_text(target, "theirs\n")  # someone else's write wins
        s3_server.fail("500 Internal Server Error", "UnknownError", method="PUT", times=20)
        path = target.display_path.removeprefix("s3://")
        with pytest.raises(FsError) as lost:
            await s3_fs.dialect.put(path, b"mine\n", ReplaceIfVersion(first.version))
        assert lost.value.code is FsErrorCode.FS_STALE_VERSION
        assert LOSERS_GET_5XX in s3_fs.dialect.quirks
        assert await s3_fs.read_text(target) == "theirs\n"

    asyncio.run(body())


@pytest.mark.s3
def test_a_5xx_answered_to_a_conditional_write_whose_guard_holds_stays_an_io_error(
    s3_server: S3Emulator, s3_fs: FsspecFileSystem, quick_s3_retries: None
) -> None:
    async def body() -> None:
        target = await s3_fs.resolve("a.txt")
        first = await s3_fs.write_text(target, "one\n")
        s3_server.fail("500 Internal Server Error", "UnknownError", method="PUT", times=20)
        with pytest.raises(FsError) as failed:
            await s3_fs.write_text(target, "two\n", ReplaceIfVersion(first.version))
        assert failed.value.code is FsErrorCode.FS_IO_ERROR
        assert await s3_fs.read_text(target) == "one\n"

    asyncio.run(body())


def _plant(fs: FsspecFileSystem, key: str, data: bytes) -> None:
    """Store ``key`` verbatim behind the seam's back (fsspec's own write)."""
    fs.fs.pipe_file(f"{fs.root.split('://', 1)[1]}/{key}", data)


@pytest.fixture(params=["s3", "gcs"])  # Azure cannot store such names (signatures break)
def object_fs(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(f"{request.param}_fs")


def test_keys_with_dot_segments_are_skipped_never_reinterpreted(
    object_fs: FsspecFileSystem,
) -> None:
    """GCS and S3 store ``a/../b.txt`` verbatim; it must not show up as ``b.txt`` again."""
    fs = object_fs
    _plant(fs, "b.txt", b"real\n")
    _plant(fs, "a/../b.txt", b"impostor\n")
    _plant(fs, "a/./c.txt", b"dot\n")
    _plant(fs, "a/d.txt", b"plain\n")

    async def body() -> list[str]:
        root = await fs.resolve(".")
        return [entry.path async for entry in fs.walk(root)]

    walked = asyncio.run(body())
    assert walked == ["a", "a/d.txt", "b.txt"]
