"""Shared test configuration: how ``scripts/test.sh`` splits the suite across xdist workers.

The conformance suite's modules register themselves for assertion rewriting
when ``fsseam.testing`` is imported. Under ``--dist loadgroup`` every worker
starts its own session emulators (free ports, own scratch directories), so
tests spread freely, except where a start is costly enough to do once:

- every test on the Ceph RGW cluster (``rgw_server``) shares one worker, so
  one cluster starts, not one per worker;
- the tests sharing a module-scoped fixture (a team MCP server, a Redis, an
  emulator seeded with 1,000 objects) share a worker, so it starts once per
  fixture value, as in a serial run.
"""

from __future__ import annotations

import pytest


def _group(item: pytest.Item) -> str | None:
    names = getattr(item, "fixturenames", ())
    if "rgw_server" in names:
        return "rgw"
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    params = getattr(getattr(item, "callspec", None), "params", {})
    shared = sorted(
        f"{name}={params[name]}" if name in params else name
        for name in names
        if any(d.scope == "module" for d in info.name2fixturedefs.get(name, ()))
    )
    if not shared:
        return None
    return f"{item.module.__name__ if item.module else item.nodeid}[{','.join(shared)}]"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that must share a worker (see the module docstring)."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        group = _group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
