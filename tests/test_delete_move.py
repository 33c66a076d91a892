"""The guarded-delete protocol (``settle_delete``), what each store is sent, and the stores refused.

``settle_delete`` is THE lost-response decision for deletes; its table is
pinned here. The store tests run the real dialects against the emulators
(moto, fake-gcs-server, Azurite) and a real Ceph RGW, and check the requests
on the wire: the guard really reaches the store, in one request.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from fsseam import FsspecFileSystem, open_fs
from fsseam.backends.dialects import GuardedDialect
from fsseam.backends.dialects.base import (
    DELETE_PRECONDITION_IGNORED,
    QUIRKS,
    RESEND,
    GuardRefused,
    ObjectState,
    OutcomeUnknown,
    settle_delete,
)
from fsseam.seam import (
    CreateIfAbsent,
    FsError,
    FsErrorCode,
    FsIOError,
    FsMoveIncomplete,
    FsTarget,
    FsVersion,
    FsWriteIntent,
    FsWriteOutcome,
)
from fsseam.testing.emulators.gcs import GCSBucket, GCSEmulator
from fsseam.testing.emulators.proxy import RecordingProxy
from fsseam.testing.emulators.rgw import RGWCluster
from fsseam.testing.emulators.s3 import S3Emulator
from fsseam.testing.harness import DelegatingFileSystem
from tests.test_guarded_write_protocol import object_store_dialects

URL = "s3://b/k"
V1 = FsVersion('"v1"')
V2 = FsVersion('"v2"')


def unknown() -> OutcomeUnknown:
    return OutcomeUnknown(FsIOError(f'"{URL}": the connection was reset'), status=500)


def decided(outcome: GuardRefused | OutcomeUnknown, current: ObjectState | None) -> str:
    """What settle_delete decides, as a word: deleted, resend, or the error code."""
    try:
        verdict = settle_delete(URL, V1, outcome, current, may_resend=True)
    except FsError as exc:
        return exc.code.value
    return "resend" if verdict is RESEND else "deleted"


@pytest.mark.parametrize(
    ("outcome", "current", "expected"),
    [
        # Gone after an attempt that may have been applied: our delete, its answer lost.
        (GuardRefused("404", retried=True), None, "deleted"),
        (GuardRefused("412", retried=True), None, "deleted"),
        (unknown(), None, "deleted"),
        # Gone after a clean first refusal: someone else deleted it first.
        (GuardRefused("404"), None, "FS_STALE_VERSION"),
        (GuardRefused("412"), None, "FS_STALE_VERSION"),
        # Still there at another version: a change nobody saw, never deleted.
        (GuardRefused("412"), ObjectState(V2), "FS_STALE_VERSION"),
        (GuardRefused("412", retried=True), ObjectState(V2), "FS_STALE_VERSION"),
        (unknown(), ObjectState(V2), "FS_STALE_VERSION"),
        # Still there at the version seen: an unknown outcome did not land.
        (unknown(), ObjectState(V1), "FS_IO_ERROR"),
        # Refused although current: a quirk to learn once, then a conflict.
        (GuardRefused("412"), ObjectState(V1), "resend"),
    ],
)
def test_settle_delete_tells_a_lost_answer_from_a_conflict(
    outcome: GuardRefused | OutcomeUnknown, current: ObjectState | None, expected: str
) -> None:
    assert decided(outcome, current) == expected


def test_settle_delete_without_a_resend_makes_a_refusal_of_the_current_version_a_conflict() -> None:
    with pytest.raises(FsError) as caught:
        settle_delete(URL, V1, GuardRefused("412"), ObjectState(V1), may_resend=False)
    assert caught.value.code is FsErrorCode.FS_STALE_VERSION


def test_object_store_delete_is_the_protocol_and_cannot_be_overridden() -> None:
    """A dialect implements ``_send_delete``; ``delete`` is the base's, final."""
    assert getattr(GuardedDialect.delete, "__final__", False) is True
    for cls in object_store_dialects():
        assert cls.delete is GuardedDialect.delete, cls
        assert "_send_delete" in vars(cls), cls


# -- the seam's default move (backends without their own) ---------------------------------


class _ForwardsDelete(DelegatingFileSystem):
    """A backend with a guarded delete but the base class's text move."""

    async def delete(self, target: FsTarget, expected: FsVersion | None = None) -> Any:
        return await self.inner.delete(target, expected)


def test_the_default_move_writes_first_then_deletes_guarded(tmp_path: Path) -> None:
    fs = _ForwardsDelete(open_fs(str(tmp_path)))

    async def body() -> None:
        source = await fs.resolve("a.txt")
        written = await fs.write_text(source, "text\n", CreateIfAbsent())
        outcome = await fs.move(source, await fs.resolve("b.txt"), written.version)
        assert outcome.before_version == written.version
        assert await fs.stat(source) is None

    asyncio.run(body())
    assert (tmp_path / "b.txt").read_text() == "text\n"


def test_the_default_move_keeps_both_when_the_source_changes_in_between(tmp_path: Path) -> None:
    class ChangesTheSource(_ForwardsDelete):
        async def write_text(
            self, target: FsTarget, content: str, expected: FsWriteIntent | None = None
        ) -> FsWriteOutcome:
            written = await self.inner.write_text(target, content, expected)
            (tmp_path / "a.txt").write_text("someone else's change\n")
            return written

    fs = ChangesTheSource(open_fs(str(tmp_path)))

    async def body() -> None:
        source = await fs.resolve("a.txt")
        written = await fs.inner.write_text(source, "seen\n", CreateIfAbsent())
        with pytest.raises(FsMoveIncomplete) as half:
            await fs.move(source, await fs.resolve("b.txt"), written.version, CreateIfAbsent())
        assert half.value.code is FsErrorCode.FS_STALE_VERSION
        assert "nothing was lost" in str(half.value)

    asyncio.run(body())
    assert (tmp_path / "a.txt").read_text() == "someone else's change\n"
    assert (tmp_path / "b.txt").read_text() == "seen\n"


def test_the_default_move_on_a_backend_without_delete_writes_nothing(tmp_path: Path) -> None:
    fs = DelegatingFileSystem(open_fs(str(tmp_path)))

    async def body() -> None:
        source = await fs.resolve("a.txt")
        written = await fs.write_text(source, "x\n", CreateIfAbsent())
        with pytest.raises(FsError) as refused:
            await fs.move(source, await fs.resolve("b.txt"), written.version)
        assert refused.value.code is FsErrorCode.FS_SANDBOX_DENIED

    asyncio.run(body())
    assert not (tmp_path / "b.txt").exists()


# -- local disk: what is opened is checked -------------------------------------------------


def test_a_local_delete_refuses_a_directory_swapped_for_a_link_leading_out(
    tmp_path: Path,
) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    (outside / "a.txt").write_text("not yours\n")
    fs = open_fs(str(root))

    async def body() -> None:
        target = await fs.resolve("d/a.txt")
        written = await fs.write_text(target, "mine\n", CreateIfAbsent())
        os.rename(root / "d", root / "d.old")
        os.symlink(outside, root / "d")  # after resolve: the race a check on paths misses
        for call in (fs.delete(target, written.version), fs.delete(target)):
            with pytest.raises(FsError) as refused:
                await call
            assert refused.value.code is FsErrorCode.FS_SANDBOX_DENIED, refused.value

    asyncio.run(body())
    assert (outside / "a.txt").read_text() == "not yours\n"


def test_a_local_delete_refuses_a_link_swapped_into_a_denied_directory(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "a.txt").write_text("denied\n")
    fs = open_fs(str(root))

    async def body() -> None:
        target = await fs.resolve("d/a.txt")
        written = await fs.write_text(target, "mine\n", CreateIfAbsent())
        os.rename(root / "d", root / "d.old")
        os.symlink(root / ".git", root / "d")
        with pytest.raises(FsError) as refused:
            await fs.delete(target, written.version)
        assert refused.value.code is FsErrorCode.FS_SANDBOX_DENIED
        assert ".git/**" in str(refused.value)

    asyncio.run(body())
    assert (root / ".git" / "a.txt").read_text() == "denied\n"


# -- on the wire: the guard reaches the store, in one request ------------------------------


def _prepared(fs: FsspecFileSystem) -> tuple[FsTarget, FsVersion]:
    async def body() -> tuple[FsTarget, FsVersion]:
        warm = await fs.resolve("warm.txt")
        await fs.delete(warm, (await fs.write_text(warm, "w\n", CreateIfAbsent())).version)
        target = await fs.resolve("a.txt")
        return target, (await fs.write_text(target, "x\n", CreateIfAbsent())).version

    return asyncio.run(body())


@pytest.mark.s3
def test_an_s3_delete_is_one_delete_object_with_if_match(
    s3_server: S3Emulator, s3_fs: FsspecFileSystem
) -> None:
    target, current = _prepared(s3_fs)
    s3_server.reset()
    asyncio.run(s3_fs.delete(target, current))
    sent = s3_server.requests()
    assert [(r.method, r.key) for r in sent] == [("DELETE", "a.txt")]
    assert sent[0].headers["if_match"] == current


@pytest.mark.gcs
def test_a_gcs_delete_is_one_delete_with_if_generation_match_and_no_generation(
    gcs_proxy: RecordingProxy, gcs_fs: FsspecFileSystem
) -> None:
    target, current = _prepared(gcs_fs)
    gcs_proxy.reset()
    asyncio.run(gcs_fs.delete(target, current))
    sent = gcs_proxy.requests
    assert [r.method for r in sent] == ["DELETE"]
    assert f"ifGenerationMatch={current}" in sent[0].query
    # generation= would delete exactly that generation on a versioned bucket, even
    # when it is no longer the live one: never sent.
    assert "generation=" not in sent[0].query.replace("ifGenerationMatch=", "")


@pytest.mark.azure
def test_an_azure_delete_is_one_delete_blob_with_if_match(
    azure_proxy: RecordingProxy, azure_fs: FsspecFileSystem
) -> None:
    target, current = _prepared(azure_fs)
    azure_proxy.reset()
    asyncio.run(azure_fs.delete(target, current))
    sent = azure_proxy.requests
    assert [r.method for r in sent] == ["DELETE"]
    assert sent[0].headers["if-match"] == f'"{current}"'


# -- stores that ignore a delete's precondition are refused --------------------------------


def _assert_refused_and_untouched(fs: FsspecFileSystem) -> None:
    async def body() -> None:
        target = await fs.resolve("dir/a.txt")
        written = await fs.write_text(target, "precious\n", CreateIfAbsent())
        destination = await fs.resolve("dir/b.txt")
        calls = [
            fs.delete(target, written.version),
            fs.delete(target),
            fs.move(target, destination, written.version, CreateIfAbsent()),
        ]
        for call in calls:
            with pytest.raises(FsError) as refused:
                await call
            assert refused.value.code is FsErrorCode.FS_SANDBOX_DENIED
            message = str(refused.value)
            assert target.display_path in message
            assert DELETE_PRECONDITION_IGNORED.name in message
            assert "fsseam refuses delete and move on this store" in message
        assert DELETE_PRECONDITION_IGNORED in fs.dialect.quirks
        assert await fs.read_text(target) == "precious\n"
        assert await fs.stat(destination) is None
        # The probe used a scratch object of its own and removed it.
        names = [entry.name for entry in await fs.list_dir(await fs.resolve("dir"))]
        assert names == ["a.txt"]

    asyncio.run(body())


@pytest.mark.rgw
def test_rgw_ignores_if_match_on_delete_so_delete_and_move_are_refused(
    rgw_server: RGWCluster, rgw_url: str
) -> None:
    fs = open_fs(rgw_url, **rgw_server.mount_options())
    QUIRKS.forget(fs.dialect.store_id())  # found afresh, by the first delete's probe
    _assert_refused_and_untouched(fs)


@pytest.mark.gcs
def test_fake_gcs_server_itself_ignores_delete_preconditions_so_deletes_are_refused(
    gcs_server: GCSEmulator, gcs_bucket: GCSBucket
) -> None:
    """Straight to the emulator, past the harness proxy that enforces them as GCS does."""
    options = {**gcs_bucket.storage_options, "endpoint_url": gcs_server.direct_url}
    fs = open_fs(gcs_bucket.url, **options)
    QUIRKS.forget(fs.dialect.store_id())
    _assert_refused_and_untouched(fs)
