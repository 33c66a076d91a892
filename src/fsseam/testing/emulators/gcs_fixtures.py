"""pytest plugin: fake-gcs-server, a fresh bucket and a mounted workspace per test.

Loaded from the root ``conftest.py`` (``pytest_plugins``). The emulator starts
once per session on a free 127.0.0.1 port behind a
:class:`~fsseam.testing.emulators.proxy.RecordingProxy`; each test gets its
own bucket and a clean request log with no pending faults. The emulator is a
hard requirement: when its binary is missing these fixtures fail loudly
rather than skip.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Iterator

import pytest

from fsseam.testing.emulators.gcs import GCSEmulator, gcs_emulator
from fsseam.testing.emulators.proxied_fixtures import fixture_names, proxied_fixtures
from fsseam.testing.emulators.proxy import Recorded, RecordingProxy
from fsseam.testing.faults import ProxyFaults

__all__ = ["gcs_faults", "is_gcs_read", "is_gcs_write", "quick_retries"]
__all__.extend(fixture_names("gcs", "gcs_bucket"))


# Bound to module names so pytest collects them as this plugin's fixtures.
(gcs_server, gcs_proxy, gcs_bucket, gcs_url, gcs_fs, gcs_wire) = proxied_fixtures(
    "gcs", "gcs_bucket", start=gcs_emulator, new_place=GCSEmulator.new_bucket
)


def is_gcs_write(rec: Recorded) -> bool:
    """An object upload (the GCS dialect sends one multipart upload per write)."""
    return rec.method == "POST" and rec.path.startswith("/upload/")


def is_gcs_read(rec: Recorded) -> bool:
    """A media download (an object's bytes)."""
    return rec.method == "GET" and "alt=media" in rec.query


def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make gcsfs retry at once instead of after 1-2 s, for every mount (test-only).

    gcsfs offers no option for its backoff; it sleeps through its retry
    module's ``asyncio`` name only, which ``monkeypatch`` restores after the test.
    """
    import gcsfs.retry

    sleep = asyncio.sleep

    async def no_wait(_seconds: float) -> None:
        await sleep(0)

    monkeypatch.setattr(gcsfs.retry, "asyncio", types.SimpleNamespace(sleep=no_wait))


@pytest.fixture
def gcs_faults(gcs_proxy: RecordingProxy, monkeypatch: pytest.MonkeyPatch) -> Iterator[ProxyFaults]:
    """Faults on the proxy's wire, with gcsfs's retries made quick (:func:`quick_retries`).

    gcsfs retries every status from 500 to 504 (503 here), and gives up on 507.
    """
    quick_retries(monkeypatch)
    faults = ProxyFaults(
        gcs_proxy,
        is_write=is_gcs_write,
        is_read=is_gcs_read,
        retried_status=503,
        final_status=507,
    )
    yield faults
    faults.heal()
