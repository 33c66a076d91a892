"""pytest plugin: Azurite, a fresh container and a mounted workspace per test.

Loaded from the root ``conftest.py`` (``pytest_plugins``). Azurite starts once
per session on a free 127.0.0.1 port behind a
:class:`~fsseam.testing.emulators.proxy.RecordingProxy`; each test gets its
own container and a clean request log with no pending faults. Azurite is a
hard requirement: when it is not installed (``npm install`` in the repository
root) these fixtures fail loudly with that command rather than skip.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fsseam.backends import FsspecFileSystem
from fsseam.testing.emulators.azure import AzuriteServer, azurite_server
from fsseam.testing.emulators.proxied_fixtures import fixture_names, proxied_fixtures
from fsseam.testing.emulators.proxy import Recorded, RecordingProxy
from fsseam.testing.faults import ProxyFaults

__all__ = ["azure_faults", "is_azure_read", "is_azure_write", "quick_retries"]
__all__.extend(fixture_names("azure", "azure_container"))


# Bound to module names so pytest collects them as this plugin's fixtures.
(azure_server, azure_proxy, azure_container, azure_url, azure_fs, azure_wire) = proxied_fixtures(
    "azure", "azure_container", start=azurite_server, new_place=AzuriteServer.new_container
)


def is_azure_write(rec: Recorded) -> bool:
    """A Put Blob (block, list and property calls carry ``comp=``)."""
    return rec.method == "PUT" and "comp=" not in rec.query


def is_azure_read(rec: Recorded) -> bool:
    """A Get Blob (listings and properties carry ``comp=`` or ``restype=``)."""
    return rec.method == "GET" and "comp=" not in rec.query and "restype=" not in rec.query


def quick_retries(fs: FsspecFileSystem) -> None:
    """Make the storage SDK retry at once (its ExponentialRetry waits ~15 s first).

    Test-only: reaches into the SDK's client configuration, which adlfs
    offers no option for. Each ``azure_fs`` has its own adlfs instance.
    """
    policy = fs.fs.service_client._config.retry_policy
    policy.initial_backoff = 0
    policy.increment_base = 0
    policy.random_jitter_range = 0


@pytest.fixture
def azure_faults(azure_fs: FsspecFileSystem, azure_proxy: RecordingProxy) -> Iterator[ProxyFaults]:
    """Faults on the proxy's wire, with ``azure_fs``'s retries made quick.

    The storage SDK retries a 500, and gives up on a 501 at once.
    """
    quick_retries(azure_fs)
    faults = ProxyFaults(
        azure_proxy, is_write=is_azure_write, is_read=is_azure_read, final_status=501
    )
    yield faults
    faults.heal()
