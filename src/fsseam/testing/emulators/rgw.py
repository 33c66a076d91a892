"""A real S3-compatible server for tests: a single-node Ceph cluster with the RADOS Gateway.

Emulators hid a real incompatibility once (Ceph RGW refuses a quoted
``If-Match`` although current); this module runs the real server. One
cluster per test session, in a scratch directory, on free 127.0.0.1 ports:

1 monitor, 1 OSD on ``memstore`` (RAM, nothing on disk but logs), and
``radosgw`` with the beast frontend; ``auth … required = none``, which also
needs every ``ms … mode = crc`` (else radosgw loops on EACCES). No manager
daemon: S3 does not need it. Each daemon runs in the foreground as a child of
this process and is stopped by its PID (and killed by the kernel should this
process die first: ``PR_SET_PDEATHSIG``). From nothing to a bucket takes about
3 s on two cores (~150 MB RSS): a short Paxos propose interval lets the monitor
commit radosgw's pool creations at once instead of once a second.

Needs the Debian packages ``ceph`` and ``radosgw`` (16.2 measured; ``.ci/run``
installs them). When they are missing, :func:`start_rgw` raises
:class:`RGWUnavailable` with the install command: the tests using it error,
they never skip.

Pytest plugin (loaded from the root ``conftest.py``): ``rgw_server`` (the
session's cluster) and ``rgw_url`` (a fresh, empty prefix per test).
"""

from __future__ import annotations

import contextlib
import ctypes
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fsseam.testing.emulators import free_port

__all__ = ["RGWCluster", "RGWUnavailable", "rgw_server", "rgw_url", "start_rgw"]

_BINARIES = (
    "ceph",
    "ceph-mon",
    "ceph-osd",
    "ceph-authtool",
    "monmaptool",
    "radosgw",
    "radosgw-admin",
)
_INSTALL_HINT = (
    "the Ceph RGW tests need the Debian packages ceph and radosgw: "
    "sudo apt-get update && sudo apt-get install -y ceph radosgw (bash .ci/run does this)"
)
ACCESS_KEY = "fsseam-test-access"
SECRET_KEY = "fsseam-test-secret-0123456789abcdef"
BUCKET = "fsseam-rgw"

_CONF = """\
[global]
fsid = {fsid}
mon initial members = a
mon host = [v2:127.0.0.1:{mon2},v1:127.0.0.1:{mon1}]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
ms client mode = crc
ms cluster mode = crc
ms service mode = crc
ms mon cluster mode = crc
ms mon service mode = crc
osd objectstore = memstore
memstore device bytes = 3221225472
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
osd pool default pg num = 1
osd pool default pgp num = 1
osd pool default pg autoscale mode = off
mon max pg per osd = 1000
osd crush chooseleaf type = 0
paxos propose interval = 0.01
paxos min wait = 0.001
run dir = {dir}/run
log file = {dir}/log/$name.log
admin socket = {dir}/run/$name.asok
mon data = {dir}/mon/$cluster-$id
osd data = {dir}/osd/$cluster-$id
keyring = {dir}/keyring
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:{rgw} tcp_nodelay=1
rgw data = {dir}/rgw
"""


class RGWUnavailable(RuntimeError):
    """Ceph is not installed, or the cluster did not come up (the message says which)."""


_PR_SET_PDEATHSIG = 1
# Resolved here, in the parent: the child between fork and exec only calls it
# (no dlopen, no allocation worth a lock), which keeps preexec_fn safe with threads.
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl


def _die_with_parent() -> None:
    """In the child, before exec: be killed when the test process dies (even by SIGKILL)."""
    _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass
class RGWCluster:
    """A running single-node cluster; :meth:`stop` ends its daemons by PID."""

    directory: Path
    endpoint: str
    """``http://127.0.0.1:PORT`` of radosgw."""
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    _session: Any = None

    @property
    def storage_options(self) -> dict[str, Any]:
        """s3fs options for this server (a user created for the tests)."""
        return {"endpoint_url": self.endpoint, "key": ACCESS_KEY, "secret": SECRET_KEY}

    def mount_options(self) -> dict[str, Any]:
        """:attr:`storage_options` plus one aiobotocore session shared by this process's mounts.

        A new session parses botocore's S3 model again (a few tenths of a
        second per mount); clients, connections and caches stay per mount.
        """
        if self._session is None:
            import aiobotocore.session  # installed with s3fs

            self._session = aiobotocore.session.AioSession()
        return {**self.storage_options, "session": self._session}

    def new_url(self) -> str:
        """``s3://BUCKET/<fresh prefix>``: an empty workspace root."""
        return f"s3://{BUCKET}/{uuid.uuid4().hex}"

    def stop(self) -> None:
        """Kill the daemons by PID and remove the scratch directory.

        SIGKILL: the OSD keeps everything in RAM, so nothing is lost, and a
        radosgw asked to stop can wait a long time for a monitor that is going.
        """
        for proc in reversed(self.processes):
            if proc.poll() is None:
                proc.kill()
        for proc in self.processes:
            proc.wait()
        self.processes.clear()
        shutil.rmtree(self.directory, ignore_errors=True)


def _run(conf: Path, *args: str, timeout: float = 30) -> str:
    done = subprocess.run(
        [*args[:1], "-c", str(conf), *args[1:]],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RGWUnavailable(f"{' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def _until(what: str, check: Any, deadline: float, cluster: RGWCluster) -> Any:
    """Poll ``check()`` until it returns something truthy; fail with the logs' tail."""
    while time.monotonic() < deadline:
        for proc in cluster.processes:
            if proc.poll() is not None:
                raise RGWUnavailable(f"{proc.args!r} exited with {proc.returncode} while {what}")
        with contextlib.suppress(RGWUnavailable, subprocess.TimeoutExpired, OSError):
            found = check()
            if found:
                return found
        time.sleep(0.2)
    raise RGWUnavailable(f"timed out while {what}; logs in {cluster.directory}/log")


def _answers(endpoint: str) -> bool:
    try:
        with urllib.request.urlopen(endpoint, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True  # any HTTP answer: the frontend is up
    except OSError:
        return False


def start_rgw(timeout: float = 90) -> RGWCluster:
    """Start a cluster from nothing; returns once the test bucket accepts requests."""
    missing = [name for name in _BINARIES if shutil.which(name) is None]
    if missing:
        raise RGWUnavailable(f"{_INSTALL_HINT} (missing: {', '.join(missing)})")
    directory = Path(tempfile.mkdtemp(prefix="fsseam-rgw-"))
    for sub in ("run", "log", "mon", "osd", "rgw"):
        (directory / sub).mkdir()
    mon2, mon1, port = free_port(), free_port(), free_port()
    fsid = str(uuid.uuid4())
    conf = directory / "ceph.conf"
    conf.write_text(_CONF.format(fsid=fsid, mon2=mon2, mon1=mon1, rgw=port, dir=directory))
    cluster = RGWCluster(directory, f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + timeout

    def daemon(*args: str) -> None:
        log = (directory / "log" / f"{args[0]}.out").open("wb")
        with log:
            cluster.processes.append(
                subprocess.Popen(
                    [args[0], "-c", str(conf), "-f", *args[1:]],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    preexec_fn=_die_with_parent,  # noqa: PLW1509 - see _PRCTL
                )
            )

    try:
        # mkfs wants a keyring even with auth off.
        keyring = str(directory / "keyring")
        _run(conf, "ceph-authtool", "--create-keyring", keyring, "--gen-key", "-n", "mon.")
        monmap = str(directory / "monmap")
        addrs = f"[v2:127.0.0.1:{mon2},v1:127.0.0.1:{mon1}]"
        subprocess.run(
            ["monmaptool", "--create", "--fsid", fsid, "--addv", "a", addrs, monmap],
            capture_output=True,
            check=True,
            timeout=30,
        )
        _run(conf, "ceph-mon", "--mkfs", "-i", "a", "--monmap", monmap, "--keyring", keyring)
        daemon("ceph-mon", "-i", "a")
        osd_uuid = str(uuid.uuid4())
        osd_id = _until(
            "waiting for the monitor",
            lambda: _run(conf, "ceph", "--connect-timeout", "5", "osd", "new", osd_uuid).strip(),
            deadline,
            cluster,
        )
        (directory / "osd" / f"ceph-{osd_id}").mkdir()
        _run(conf, "ceph-osd", "-i", osd_id, "--mkfs", "--osd-uuid", osd_uuid)
        daemon("ceph-osd", "-i", osd_id)
        # radosgw waits for the OSD by itself: starting both at once saves seconds.
        daemon("radosgw", "-n", "client.rgw.a")
        _until("waiting for radosgw", lambda: _answers(cluster.endpoint), deadline, cluster)
        _run(
            conf,
            "radosgw-admin",
            "user",
            "create",
            "--uid=fsseam",
            "--display-name=fsseam tests",
            f"--access-key={ACCESS_KEY}",
            f"--secret={SECRET_KEY}",
        )
        _until("creating the bucket", lambda: _create_bucket(cluster), deadline, cluster)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _create_bucket(cluster: RGWCluster) -> bool:
    import botocore.session  # installed with s3fs

    client = botocore.session.get_session().create_client(
        "s3",
        endpoint_url=cluster.endpoint,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        region_name="us-east-1",
    )
    with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
        client.create_bucket(Bucket=BUCKET)
    return True


@pytest.fixture(scope="session")
def rgw_server() -> Iterator[RGWCluster]:
    """The session's Ceph RGW cluster; errors with an install hint when Ceph is missing."""
    cluster = start_rgw()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def rgw_url(rgw_server: RGWCluster) -> str:
    """``s3://fsseam-rgw/<fresh prefix>``: an empty workspace root on the server."""
    return rgw_server.new_url()
