"""pytest plugin: Azurite, a fresh container and a mounted workspace per test.

Loaded from the root ``conftest.py`` (``pytest_plugins``). Azurite starts once
per session on a free 127.0.0.1 port behind a
:class:`~fsseam.testing.emulators.proxy.RecordingProxy`; each test gets its
own container and a clean request log with no pending faults. Azurite is a
hard requirement: when it is not installed (``npm install`` in the repository
root) these fixtures fail loudly with that command rather than skip.
"""

from __future__ import annotations

import pytest

from fsseam.backends import FsspecFileSystem, open_fs
from fsseam.testing.emulators.azure import AzureContainer, AzuriteServer, azurite_server
from fsseam.testing.emulators.proxy import RecordingProxy

__all__ = ["azure_container", "azure_fs", "azure_proxy", "azure_server", "azure_url"]


@pytest.fixture(scope="session")
def azure_server() -> AzuriteServer:
    """The session's Azurite server (stopped at interpreter exit)."""
    return azurite_server()


@pytest.fixture
def azure_proxy(azure_server: AzuriteServer) -> RecordingProxy:
    """The proxy every client request goes through, with its log and faults cleared."""
    azure_server.proxy.reset()
    return azure_server.proxy


@pytest.fixture
def azure_container(azure_server: AzuriteServer, azure_proxy: RecordingProxy) -> AzureContainer:
    """A fresh, empty container: ``(url, storage_options)``; created off the record."""
    return azure_server.new_container()


@pytest.fixture
def azure_url(azure_container: AzureContainer) -> str:
    """``az://<fresh container>``."""
    return azure_container.url


@pytest.fixture
def azure_fs(azure_container: AzureContainer) -> FsspecFileSystem:
    """An ``open_fs`` mount of a fresh container (the container is the workspace root)."""
    return open_fs(azure_container.url, **azure_container.storage_options)
