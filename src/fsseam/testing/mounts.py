"""A workspace mounted BELOW a store's top, with neighbours, on every shipped backend.

The containment and fault tests need "outside the root" to hold something
worth protecting, so every backend is mounted at ``<top>/ws`` next to
``<top>/secret.txt``, a sibling prefix ``<top>/ws-sibling/x.txt`` (a
containment check written as a bare ``startswith(root)`` would let it
through) and a second bucket, container or directory ``<other>`` holding
``secret.txt``::

    @pytest.fixture(params=BACKENDS)
    def mount(request, tmp_path):
        for mounted in mount_backend(request, tmp_path, request.param):
            mounted.plant_neighbours()
            yield mounted

:meth:`Mount.snapshot` returns every byte of all of it, so a test proves that
nothing outside changed; :attr:`Mount.wire` counts the requests that reached
a cloud store, and :class:`DialectSpy` the calls that reached the dialect, so
a test proves that a refusal happened before any I/O. The cloud mounts come
from the emulator plugins' fixtures (``s3_bucket``, ``gcs_proxy``...), pulled
in only when a cloud backend is asked for.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import fsspec
import fsspec.asyn
import pytest

from fsseam.backends import FsspecFileSystem, open_fs

__all__ = [
    "BACKENDS",
    "SECRET",
    "DialectSpy",
    "Mount",
    "local_mount",
    "mount_backend",
    "put_local",
    "walk",
]

SECRET = b"TOP-SECRET outside the root\n"
"""Content of every file outside the root; must never show up in a tool result."""

BACKENDS = [
    pytest.param("local", id="local"),
    pytest.param("memory", id="memory"),
    pytest.param("s3", id="s3", marks=pytest.mark.s3),
    pytest.param("gcs", id="gcs", marks=pytest.mark.gcs),
    pytest.param("azure", id="azure", marks=pytest.mark.azure),
]
"""Every backend the project ships, as pytest ``params`` (cloud ones carry their marker).

The values are the names :func:`mount_backend` and
:func:`fsseam.testing.harness.harness_for` take.
"""


# -- spies -------------------------------------------------------------------------

_DIALECT_METHODS = ("stat", "lstat", "open_read", "read_bytes", "put", "list_dir")


class DialectSpy:
    """Records every call that reaches a mount's dialect (the layer that does store I/O)."""

    def __init__(self, fs: FsspecFileSystem, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, str]] = []
        """``(method, path)`` of each call, in order."""
        dialect = fs.dialect
        for name in _DIALECT_METHODS:
            original = getattr(dialect, name)
            monkeypatch.setattr(dialect, name, self._wrap(name, original))

    def _wrap(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def spy(path: str, *args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, path))
            return original(path, *args, **kwargs)

        return spy

    def clear(self) -> None:
        """Forget the calls recorded so far."""
        self.calls.clear()


# -- mounts ------------------------------------------------------------------------


def _no_wire() -> int:
    return 0


@dataclass(frozen=True, slots=True)
class Mount:
    """A workspace at ``<top>/ws`` on one backend, with neighbours outside it."""

    name: str
    """The backend's name, as in :data:`BACKENDS`."""
    fs: FsspecFileSystem
    """The workspace, mounted with default options."""
    abs_top: str
    """``<top>`` as an absolute path: ``/tmp/.../top`` or ``/bucket``."""
    url_tops: list[str]
    """``<top>`` as full URLs, one per protocol the store answers to."""
    abs_other: str
    """The other bucket / container / directory, as an absolute path."""
    url_others: list[str]
    """The same, as full URLs."""
    put: Callable[[str, bytes], None]
    """Store raw bytes at a path relative to ``<top>`` (behind fsseam's back)."""
    get: Callable[[str], bytes]
    """Raw bytes at a path relative to ``<top>``; ``FileNotFoundError`` when absent."""
    snapshot: Callable[[], dict[str, bytes]]
    """Every object (or file, directory, symlink) under ``<top>`` and ``<other>``."""
    reopen: Callable[..., FsspecFileSystem]
    """Mount the same root again with other options (``read_only``, ``deny``...)."""
    wire: Callable[[], int] = _no_wire
    """Requests that reached the store so far (always 0 off the network)."""
    local_top: Path | None = None
    """``<top>`` as an OS directory (local disk only)."""

    @property
    def root(self) -> str:
        """The root's display path."""
        return self.fs.root

    def plant_neighbours(self) -> None:
        """Put the secrets outside the root and one file inside it."""
        self.put("secret.txt", SECRET)
        self.put("ws-sibling/x.txt", SECRET)
        self.put("ws/inside.txt", b"inside\n")


def put_local(base: Path) -> Callable[[str, bytes], None]:
    """``put(rel, data)`` storing bytes at ``base / rel``, creating its parents."""

    def put(rel: str, data: bytes) -> None:
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    return put


def local_mount(tmp_path: Path) -> Mount:
    """The local-disk :class:`Mount` under ``tmp_path`` (neighbours not planted yet)."""
    top = tmp_path / "top"
    other = tmp_path / "other"
    (top / "ws").mkdir(parents=True)
    other.mkdir()
    (other / "secret.txt").write_bytes(SECRET)

    def snapshot() -> dict[str, bytes]:
        return {**walk(top, "top"), **walk(other, "other")}

    return Mount(
        "local",
        open_fs(str(top / "ws")),
        abs_top=str(top),
        url_tops=[f"file://{top}"],
        abs_other=str(other),
        url_others=[f"file://{other}"],
        put=put_local(top),
        get=lambda rel: (top / rel).read_bytes(),
        snapshot=snapshot,
        reopen=lambda **kw: open_fs(str(top / "ws"), **kw),
        local_top=top,
    )


def walk(base: Path, label: str) -> dict[str, bytes]:
    """Every entry under ``base``: file bytes, ``<dir>``, or ``-> target`` for a symlink."""
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            key = f"{label}/{os.path.relpath(full, base)}"
            if os.path.islink(full):
                out[key] = b"-> " + os.fsencode(os.readlink(full))
            elif os.path.isdir(full):
                out[key] = b"<dir>"
            else:
                out[key] = Path(full).read_bytes()
    return out


def _memory() -> Iterator[Mount]:
    name = f"hard-{uuid.uuid4().hex[:12]}"
    other = f"{name}-other"
    mem = fsspec.filesystem("memory")
    mem.pipe_file(f"/{other}/secret.txt", SECRET)

    def put(rel: str, data: bytes) -> None:
        mem.pipe_file(f"/{name}/{rel}", data)

    def snapshot() -> dict[str, bytes]:
        files = {key: bytes(value.getvalue()) for key, value in mem.store.items()}
        return {**files, **{f"{key}/": b"<dir>" for key in mem.pseudo_dirs}}

    yield Mount(
        "memory",
        open_fs(f"memory://{name}/ws"),
        abs_top=f"/{name}",
        url_tops=[f"memory://{name}", f"memory:///{name}"],
        abs_other=f"/{other}",
        url_others=[f"memory://{other}"],
        put=put,
        get=lambda rel: bytes(mem.cat_file(f"/{name}/{rel}")),
        snapshot=snapshot,
        reopen=lambda **kw: open_fs(f"memory://{name}/ws", **kw),
    )
    for base in (name, other):
        if mem.exists(f"/{base}"):
            mem.rm(f"/{base}", recursive=True)


def _cloud(
    name: str,
    schemes: list[str],
    bucket: str,
    other: str,
    options: dict[str, Any],
    raw: fsspec.AbstractFileSystem,
    wire: Callable[[], int],
    fetch: Callable[[str], bytes] | None = None,
) -> Mount:
    """A cloud mount; ``fetch(bucket/key)`` reads one object without fsspec path parsing."""
    get_path: Callable[[str], bytes] = fetch or raw.cat_file
    raw.pipe_file(f"{other}/secret.txt", SECRET)

    def put(rel: str, data: bytes) -> None:
        raw.pipe_file(f"{bucket}/{rel}", data)

    def get(rel: str) -> bytes:
        return get_path(f"{bucket}/{rel}")

    def snapshot() -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for base in (bucket, other):
            raw.invalidate_cache()
            for key in raw.find(base):
                out[key] = get_path(key)
        return out

    url = f"{schemes[0]}://{bucket}/ws"
    return Mount(
        name,
        open_fs(url, **options),
        abs_top=f"/{bucket}",
        url_tops=[f"{scheme}://{bucket}" for scheme in schemes],
        abs_other=f"/{other}",
        url_others=[f"{scheme}://{other}" for scheme in schemes],
        put=put,
        get=get,
        snapshot=snapshot,
        reopen=lambda **kw: open_fs(url, **options, **kw),
        wire=wire,
    )


def _s3(request: pytest.FixtureRequest) -> Mount:
    server = request.getfixturevalue("s3_server")
    bucket = request.getfixturevalue("s3_bucket")
    other = server.new_bucket()
    options = dict(bucket.storage_options)
    raw = fsspec.filesystem("s3", skip_instance_cache=True, use_listings_cache=False, **options)

    def fetch(path: str) -> bytes:
        # s3fs would cut a key at "?versionId=": ask botocore for the literal key.
        name, _, key = path.partition("/")

        async def get_object() -> bytes:
            response = await raw._call_s3("get_object", Bucket=name, Key=key)
            async with response["Body"] as body:
                data: bytes = await body.read()
                return data

        data: bytes = fsspec.asyn.sync(raw.loop, get_object)
        return data

    return _cloud(
        "s3",
        ["s3", "s3a"],
        bucket.name,
        other.name,
        options,
        raw,
        lambda: len(server.requests()),
        fetch,
    )


class _ProxiedStore(NamedTuple):
    """How to mount a store whose emulator sits behind a recording proxy."""

    schemes: list[str]
    """Every protocol the store answers to, the fsspec one first."""
    place: str
    """The fixture giving a fresh, empty bucket or container."""
    new_place: Callable[[Any], Any]
    """A second fresh bucket or container on the emulator (the ``<other>`` one)."""
    direct: Callable[[Any], dict[str, Any]]
    """fsspec options reaching the emulator directly, off the proxy's record."""


_PROXIED = {
    "gcs": _ProxiedStore(
        ["gs", "gcs"],
        "gcs_bucket",
        lambda server: server.new_bucket(),
        lambda server: {"endpoint_url": server.direct_url, "token": "anon", "project": "test"},
    ),
    "azure": _ProxiedStore(
        ["az", "abfs", "abfss"],
        "azure_container",
        lambda server: server.new_container(),
        lambda server: {"connection_string": server.direct_connection_string},
    ),
}


def _proxied(request: pytest.FixtureRequest, name: str) -> Mount:
    store = _PROXIED[name]
    server = request.getfixturevalue(f"{name}_server")
    proxy = request.getfixturevalue(f"{name}_proxy")
    place = request.getfixturevalue(store.place)
    other = store.new_place(server)
    scheme = store.schemes[0]
    raw = fsspec.filesystem(
        scheme, skip_instance_cache=True, use_listings_cache=False, **store.direct(server)
    )
    return _cloud(
        name,
        store.schemes,
        place.url.removeprefix(f"{scheme}://"),
        other.url.removeprefix(f"{scheme}://"),
        dict(place.storage_options),
        raw,
        lambda: len(proxy.requests),
    )


def mount_backend(request: pytest.FixtureRequest, tmp_path: Path, name: str) -> Iterator[Mount]:
    """Yield the :class:`Mount` for backend ``name``, then clean up (neighbours not planted).

    The cloud ones are built on the emulator plugins' fixtures, requested
    from ``request`` only when ``name`` needs them.
    """
    if name == "local":
        yield local_mount(tmp_path)
    elif name == "memory":
        yield from _memory()
    elif name == "s3":
        yield _s3(request)
    elif name in _PROXIED:
        yield _proxied(request, name)
    else:  # pragma: no cover - a typo in a parametrisation
        raise ValueError(f"no backend named {name!r}: use one of local, memory, s3, gcs, azure")
