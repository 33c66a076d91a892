"""The fixtures every emulator behind a :class:`RecordingProxy` offers, made once.

``azure_fixtures`` and ``gcs_fixtures`` differ only in how their emulator
starts and how it makes a fresh container or bucket; the chain from the
session's server to a mounted workspace and a request log is the same, so it
is built here under each store's own fixture names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol, TypeVar

import pytest

from fsseam.backends import FsspecFileSystem, open_fs
from fsseam.testing.emulators.proxy import RecordingProxy
from fsseam.testing.faults import ProxyRequestLog

__all__ = [
    "ProxiedEmulator",
    "ProxiedFixtures",
    "StorePlace",
    "fixture_names",
    "proxied_fixtures",
]


class ProxiedEmulator(Protocol):
    """An emulator whose clients all reach it through :attr:`proxy`."""

    proxy: RecordingProxy


class StorePlace(Protocol):
    """A fresh container or bucket: its root URL and the options that mount it."""

    @property
    def url(self) -> str: ...

    @property
    def storage_options(self) -> dict[str, Any]: ...


S = TypeVar("S", bound=ProxiedEmulator)


class ProxiedFixtures(NamedTuple):
    """The fixture functions of one store, to bind to module names pytest collects."""

    server: Any
    proxy: Any
    place: Any
    url: Any
    fs: Any
    wire: Any


def fixture_names(prefix: str, place: str) -> ProxiedFixtures:
    """The names :func:`proxied_fixtures` gives the fixtures, in its order."""
    server, proxy, url, fs, wire = (
        f"{prefix}_{kind}" for kind in ("server", "proxy", "url", "fs", "wire")
    )
    return ProxiedFixtures(server, proxy, place, url, fs, wire)


def proxied_fixtures(
    prefix: str,
    place: str,
    *,
    start: Callable[[], S],
    new_place: Callable[[S], StorePlace],
) -> ProxiedFixtures:
    """Fixtures ``{prefix}_server``, ``_proxy``, ``{place}``, ``_url``, ``_fs``, ``_wire``.

    ``start`` returns the session's emulator (stopped at interpreter exit),
    ``new_place`` a fresh, empty container or bucket on it, made off the
    record.
    """
    names = fixture_names(prefix, place)
    server_name, proxy_name = names.server, names.proxy

    @pytest.fixture(scope="session", name=server_name)
    def server() -> S:
        """The session's emulator (stopped at interpreter exit)."""
        return start()

    @pytest.fixture(name=proxy_name)
    def proxy(request: pytest.FixtureRequest) -> RecordingProxy:
        """The proxy every client request goes through, with its log and faults cleared."""
        emulator: S = request.getfixturevalue(server_name)
        emulator.proxy.reset()
        return emulator.proxy

    @pytest.fixture(name=place)
    def fresh(request: pytest.FixtureRequest) -> StorePlace:
        """A fresh, empty container or bucket: ``(url, storage_options)``; made off the record."""
        request.getfixturevalue(proxy_name)  # the log and faults are cleared first
        return new_place(request.getfixturevalue(server_name))

    @pytest.fixture(name=names.url)
    def url(request: pytest.FixtureRequest) -> str:
        """The root URL of a fresh container or bucket."""
        made: StorePlace = request.getfixturevalue(place)
        return made.url

    @pytest.fixture(name=names.fs)
    def fs(request: pytest.FixtureRequest) -> FsspecFileSystem:
        """An ``open_fs`` mount of a fresh container or bucket (it is the workspace root)."""
        made: StorePlace = request.getfixturevalue(place)
        return open_fs(made.url, **made.storage_options)

    @pytest.fixture(name=names.wire)
    def wire(request: pytest.FixtureRequest) -> ProxyRequestLog:
        """Counts the requests clients send through the proxy from now on."""
        return ProxyRequestLog(request.getfixturevalue(proxy_name))

    return ProxiedFixtures(server, proxy, fresh, url, fs, wire)
