"""Local disk: stat-identity versions, atomic publication, a lock the file system itself holds.

Version = ``dev:ino:size:mtime_ns:ctime_ns`` taken by ``fstat`` on the very
descriptor the content came from.

A guarded write checks the version and publishes under an exclusive
``flock`` on the descriptor of the file's parent directory, which the writer
holds open anyway. The lock lives in the kernel, on that directory's inode:
every fsseam writer of the file agrees on it whatever its ``TMPDIR``, uid,
mount namespace or container, and there is no lock file anywhere for
another user to plant or squat. The wait is bounded (:data:`LOCK_WAIT`), then
``FS_IO_ERROR`` names the directory. The critical section is a stat, a
chmod, a utime and a rename or link: microseconds, so sharing one lock per
directory costs nothing measurable.

The new content is written to an anonymous ``O_TMPFILE`` inode in the same
directory, outside the lock, and fsync'ed. Creation links it to its name
(``linkat`` never replaces, so a racing creator is never clobbered); a
replace links it under :data:`PUBLISH_NAME` and renames that over the file,
both inside the lock. A named temp file therefore exists only while its
writer holds the directory's lock, so a writer holding it that finds one
knows it is an orphan of a crash and removes it: the next write in the
directory cleans up after a ``kill -9``, at the cost of one ``unlink``, never
a directory scan. Where ``O_TMPFILE`` is unsupported (some network and FUSE
file systems) the temp file is created under that name inside the lock and
renamed into place, a create included (its name was checked absent under the
lock; only a lock-free writer could slip in, as for any replace).

Every operation re-validates what it opened (``/proc/self/fd``): the real
path of the descriptor must lie inside the root and match no deny pattern,
so a symlink swapped in after ``resolve`` is caught on what is actually read,
listed or written. Each operation runs in ONE worker-thread hop (open, read
and close; the whole guarded put), never on the event loop.

Known limit: a writer that takes no lock (a text editor) can still slip in
between the final version check and the rename.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
import stat
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import Any, ClassVar, NoReturn, TypeVar

from fsseam.backends.containment import DenyRules, contained, relative_to
from fsseam.backends.dialects import messages
from fsseam.backends.dialects.base import (
    CHUNK_SIZE,
    Dialect,
    RawEntry,
    RawReader,
    StoredWrite,
    already_exists,
    check_size,
    not_a_file,
    stale,
)
from fsseam.seam import (
    CreateIfAbsent,
    FsError,
    FsErrorCode,
    FsInfo,
    FsIOError,
    FsPathInfo,
    FsSandboxDenied,
    FsVersion,
    FsWriteIntent,
    ReplaceIfVersion,
)
from fsseam.seam.types import FileType, PathType

__all__ = ["LOCK_WAIT", "PUBLISH_NAME", "LocalDialect"]

T = TypeVar("T")

LOCK_WAIT = 5.0
"""Seconds a guarded write waits for its directory's lock before ``FS_IO_ERROR``."""
PUBLISH_NAME = ".fsseam.publish.tmp"
"""The one temp name, used only under the directory's lock (hidden from listings)."""
_TMP_PREFIX = ".fsseam."
_TMP_SUFFIX = ".tmp"
_UMASK = os.umask(0)
os.umask(_UMASK)
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_O_PATH = getattr(os, "O_PATH", 0)
_O_TMPFILE = getattr(os, "O_TMPFILE", 0)
_PROC_FD = os.path.isdir("/proc/self/fd")
# O_TMPFILE unsupported by this file system (or by an old kernel, which reads
# the flag as O_DIRECTORY): fall back to a named temp file under the lock.
_NO_TMPFILE = (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOTSUP)


def _version(st: os.stat_result) -> FsVersion:
    return FsVersion(f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}")


def _file_type(mode: int) -> FileType:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    return "other"


def _path_type(mode: int) -> PathType:
    return "symlink" if stat.S_ISLNK(mode) else _file_type(mode)


_ERRNO_CODES = {
    errno.ENOENT: FsErrorCode.FS_NOT_FOUND,
    errno.ENOTDIR: FsErrorCode.FS_NOT_DIRECTORY,
    errno.EISDIR: FsErrorCode.FS_NOT_REGULAR_FILE,
    errno.EACCES: FsErrorCode.FS_PERMISSION_DENIED,
    errno.EPERM: FsErrorCode.FS_PERMISSION_DENIED,
    errno.EROFS: FsErrorCode.FS_PERMISSION_DENIED,
    errno.ELOOP: FsErrorCode.FS_SANDBOX_DENIED,
}

_ERRNO_MESSAGES = {
    FsErrorCode.FS_NOT_FOUND: '"{path}" does not exist; check the path (write creates new files)',
    FsErrorCode.FS_NOT_DIRECTORY: '"{path}": a component of the path is not a directory',
    FsErrorCode.FS_NOT_REGULAR_FILE: '"{path}" is a directory, not a file',
    FsErrorCode.FS_PERMISSION_DENIED: '"{path}": the operating system denied access ({why})',
    FsErrorCode.FS_SANDBOX_DENIED: '"{path}" became a symlink after it was resolved; try again',
}


def _raise_os(path: str, exc: OSError) -> NoReturn:
    code = _ERRNO_CODES.get(exc.errno or 0, FsErrorCode.FS_IO_ERROR)
    why = exc.strerror or str(exc)
    template = _ERRNO_MESSAGES.get(code, '"{path}": {why}')
    raise FsError(template.format(path=path, why=why), code) from exc


@contextmanager
def _os_errors(path: str) -> Iterator[None]:
    """The one boundary where OSError becomes FsError for this dialect."""
    try:
        yield
    except FsError:
        raise
    except OSError as exc:
        _raise_os(path, exc)


def _not_regular(path: str, mode: int) -> FsError:
    if stat.S_ISDIR(mode):
        return not_a_file(path)
    return FsError(
        f'"{path}" is not a regular file (a device, FIFO or socket); only regular files '
        "can be read or written",
        FsErrorCode.FS_NOT_REGULAR_FILE,
    )


def _fd_path(fd: int, path: str) -> str:
    """The real path of an open descriptor: the kernel's (``/proc``), else by identity.

    Without ``/proc``, the descriptor counts as being at ``realpath(path)``
    only when that names the same inode; otherwise ``""`` (outside everything).
    """
    if _PROC_FD:
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    fst = os.fstat(fd)
    real = os.path.realpath(path)
    try:
        pst = os.stat(real)
    except OSError:
        return ""
    return real if (pst.st_dev, pst.st_ino) == (fst.st_dev, fst.st_ino) else ""


async def _in_thread(fn: Callable[[], T], release: Callable[[T], None] | None = None) -> T:
    """Run ``fn`` in a worker thread; if the caller is cancelled meanwhile, ``release`` its result.

    A thread cannot be stopped: a descriptor it opens for a caller that has
    gone must still be closed when it finishes.
    """
    future = asyncio.get_running_loop().run_in_executor(None, fn)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        if release is not None:

            def cleanup(done: asyncio.Future[T]) -> None:
                if not done.cancelled() and done.exception() is None:
                    release(done.result())

            future.add_done_callback(cleanup)
        raise


class _FdReader(RawReader):
    """An open local file: its first chunks came with the open, in the same thread hop."""

    def __init__(self, fd: int, info: FsInfo, path: str, head: list[bytes]) -> None:
        self._fd = fd
        self.info = info
        self._path = path
        self._head = head
        self._reading: asyncio.Future[bytes] | None = None

    def _read(self, fd: int) -> bytes:
        with _os_errors(self._path):
            return os.read(fd, CHUNK_SIZE)

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        for chunk in self._head:
            yield chunk
        while self._fd >= 0:
            self._reading = asyncio.get_running_loop().run_in_executor(None, self._read, self._fd)
            data = await asyncio.shield(self._reading)
            self._reading = None
            if not data:
                return
            yield data

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        if fd < 0:
            return
        reading = self._reading
        if reading is not None and not reading.done():
            # A cancelled reader's thread is still in os.read: closing now
            # could hand the number to another open file mid-read.
            reading.add_done_callback(lambda _: os.close(fd))
            return
        os.close(fd)


class LocalDialect(Dialect):
    """fsspec ``LocalFileSystem``: the OS file APIs directly, for speed and identity.

    ``root`` is the real root directory (required before use) and ``deny``
    the patterns checked on every opened descriptor;
    :class:`~fsseam.backends.fsspec.FsspecFileSystem` passes both.
    """

    name: ClassVar[str] = "local"
    atomic_conditional_write: ClassVar[bool] = True
    local_paths: ClassVar[bool] = True

    def __init__(self, fs: Any, root: str | None = None, *, deny: DenyRules | None = None) -> None:
        super().__init__(fs, root)
        self.deny = deny if deny is not None else DenyRules(())
        """Deny patterns, relative to the root, refused on what is actually opened."""

    def url(self, path: str) -> str:
        return path

    # -- what was actually opened ----------------------------------------------------

    def _fence(self, real: str, path: str) -> None:
        """Refuse a descriptor whose real path is outside the root or denied."""
        root = self.root
        if root is None:
            # Never skip the check: a dialect without a root is a wiring bug.
            raise RuntimeError(
                "LocalDialect.root is not set: mount the directory with FsspecFileSystem "
                "(or open_fs), which sets it, before any I/O"
            )
        if not contained(real, root):
            raise FsSandboxDenied(
                f'"{path}" now leads outside the workspace (a symlink was swapped in after '
                "it was resolved); nothing was read or written"
            )
        pattern = self.deny.match(relative_to(root, real))
        if pattern is not None:
            raise FsSandboxDenied(
                f'"{path}" now leads to "{real}", which matches the deny pattern "{pattern}" '
                "(a symlink was swapped in after it was resolved); nothing was read or written"
            )

    def _check_fd(self, fd: int, path: str) -> str:
        real = _fd_path(fd, path)
        self._fence(real, path)
        return real

    # -- reads -------------------------------------------------------------------------

    def _stat(self, path: str, *, follow: bool) -> os.stat_result | None:
        if not _O_PATH:  # pragma: no cover - not Linux
            with _os_errors(path):
                self._fence(os.path.realpath(path) if follow else path, path)
            try:
                return os.stat(path) if follow else os.lstat(path)
            except (FileNotFoundError, NotADirectoryError):
                return None
            except OSError as exc:
                _raise_os(path, exc)
        flags = _O_PATH | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
        try:
            fd = os.open(path, flags)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            _raise_os(path, exc)
        try:
            with _os_errors(path):
                self._check_fd(fd, path)
                return os.fstat(fd)
        finally:
            os.close(fd)

    async def stat(self, path: str) -> FsInfo | None:
        st = await _in_thread(lambda: self._stat(path, follow=True))
        return None if st is None else FsInfo(_version(st), _file_type(st.st_mode), st.st_size)

    async def lstat(self, path: str) -> FsPathInfo | None:
        st = await _in_thread(lambda: self._stat(path, follow=False))
        return None if st is None else FsPathInfo(_version(st), _path_type(st.st_mode), st.st_size)

    def _open(self, path: str) -> tuple[int, FsInfo]:
        with _os_errors(path):
            # Opening a device or FIFO can have side effects (a tape rewinds, a
            # FIFO's writer wakes): refuse what stat already shows is not a
            # regular file. The fstat below still decides after the open.
            pre = os.lstat(path)
            if not stat.S_ISREG(pre.st_mode) and not stat.S_ISLNK(pre.st_mode):
                raise _not_regular(path, pre.st_mode)
            fd = os.open(path, _OPEN_FLAGS)
        try:
            with _os_errors(path):
                self._check_fd(fd, path)
                st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise _not_regular(path, st.st_mode)
        except BaseException:
            os.close(fd)
            raise
        return fd, FsInfo(_version(st), "file", st.st_size)

    def _open_reader(self, path: str) -> _FdReader:
        """Open, validate and read the first chunk: all of a small file, closed again."""
        fd, info = self._open(path)
        try:
            size = info.size or 0
            with _os_errors(path):
                # The +1 notices growth since fstat; a second read confirms the end.
                head = [os.read(fd, size + 1 if size < CHUNK_SIZE else CHUNK_SIZE)]
                if len(head[0]) <= size and len(head[0]) < CHUNK_SIZE:
                    more = os.read(fd, CHUNK_SIZE)
                    if not more:
                        os.close(fd)
                        fd = -1
                    else:
                        head.append(more)
        except BaseException:
            if fd >= 0:
                os.close(fd)
            raise
        return _FdReader(fd, info, path, [chunk for chunk in head if chunk])

    def open_read(self, path: str) -> AbstractAsyncContextManager[RawReader]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[RawReader]:
            reader = await _in_thread(lambda: self._open_reader(path), _FdReader.close)
            try:
                yield reader
            finally:
                reader.close()

        return opened()

    def _read_all(self, path: str, limit: int | None) -> tuple[bytes, FsInfo]:
        fd, info = self._open(path)
        try:
            check_size(path, info.size, limit)
            size = info.size or 0
            with _os_errors(path):
                data = os.read(fd, size + 1)
                if len(data) > size:
                    # Grew since fstat: keep reading, but the version is still
                    # the one of the descriptor, so a later guard will refuse.
                    rest = [data]
                    while chunk := os.read(fd, CHUNK_SIZE):
                        rest.append(chunk)
                    data = b"".join(rest)
                    check_size(path, len(data), limit)
            return data, info
        finally:
            os.close(fd)

    async def read_bytes(self, path: str, limit: int | None = None) -> tuple[bytes, FsInfo]:
        return await _in_thread(lambda: self._read_all(path, limit))

    def _list(self, path: str, *, exact: bool = False) -> list[RawEntry]:
        """The children of the directory ``path``, listed through a validated descriptor.

        ``exact``: the directory must BE ``path`` (no symlink anywhere on the
        way), so a walk never enters a directory swapped for a link.
        """
        try:
            fd = os.open(path, _DIR_FLAGS | (os.O_NOFOLLOW if exact else 0))
        except NotADirectoryError as exc:
            if os.path.lexists(path):  # the path itself, not a component of it: as every store
                raise messages.not_a_directory(path) from exc
            _raise_os(path, exc)
        except OSError as exc:
            _raise_os(path, exc)
        try:
            with _os_errors(path):
                real = self._check_fd(fd, path)
                if exact and real != path:
                    raise FsSandboxDenied(
                        f'"{path}" was replaced by a symlink while it was walked; not entered'
                    )
                entries: list[RawEntry] = []
                with os.scandir(fd) as it:
                    for entry in it:
                        if self.is_internal(entry.name):
                            continue
                        try:
                            st = entry.stat(follow_symlinks=False)
                        except FileNotFoundError:
                            continue
                        kind = _path_type(st.st_mode)
                        size = st.st_size if kind == "file" else None
                        entries.append(RawEntry(entry.name, kind, _version(st), size))
            return entries
        finally:
            os.close(fd)

    async def list_dir(self, path: str) -> list[RawEntry]:
        return await _in_thread(lambda: self._list(path))

    async def list_walked(self, path: str) -> list[RawEntry]:
        # Exact: a directory swapped for a symlink while it is walked is not entered.
        return await _in_thread(lambda: self._list(path, exact=True))

    def is_internal(self, name: str) -> bool:
        return name.startswith(_TMP_PREFIX) and name.endswith(_TMP_SUFFIX)

    # -- writes ------------------------------------------------------------------------

    @contextmanager
    def _locked(self, dir_fd: int, path: str) -> Iterator[None]:
        """Exclusive ``flock`` on the directory ``dir_fd``, waiting at most :data:`LOCK_WAIT`.

        Polled with a growing sleep (a thread blocked in ``flock`` could not
        be given up on); the critical sections it waits for are microseconds.
        """
        directory = os.path.dirname(path)
        deadline: float | None = None
        pause = 0.0002
        while True:
            try:
                fcntl.flock(dir_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                now = time.monotonic()
                if deadline is None:
                    deadline = now + LOCK_WAIT
                elif now >= deadline:
                    raise FsIOError(
                        f'"{path}" was not written: the lock on its directory "{directory}" '
                        f"(an flock every fsseam writer takes) has been held by another process "
                        f"for over {LOCK_WAIT:g} s. Find it with `fuser -v {directory}` or "
                        f"`lsof +d {directory}`, end it if it is stuck, then retry"
                    ) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.01)
            except OSError as exc:
                raise FsIOError(
                    f'"{path}" was not written: its directory "{directory}" cannot be locked '
                    f"({exc.strerror or exc}); guarded writes need flock on directories, which "
                    "this file system does not offer"
                ) from exc
        try:
            yield
        finally:
            fcntl.flock(dir_fd, fcntl.LOCK_UN)

    def _open_parent(self, path: str, *, create: bool) -> int:
        """A validated descriptor of ``path``'s directory, created if missing (``create``).

        Every later step (temp file, check, rename, link) is relative to it, so
        a directory swapped for a symlink after resolve cannot redirect the
        write. The nearest existing ancestor is validated first (its real
        path, with the names still to create and the file's own name, must be
        inside the root and allowed); missing directories are then created one
        by one, each entered with ``O_NOFOLLOW``: nothing is created outside
        the root, or in a denied place, even through a swapped link.
        """
        current = os.path.dirname(path)
        missing: list[str] = []
        with _os_errors(path):
            while True:
                try:
                    dir_fd = os.open(current, _DIR_FLAGS)
                    break
                except FileNotFoundError:
                    current, name = os.path.split(current)
                    if not name or not create:
                        raise
                    missing.append(name)
        try:
            with _os_errors(path):
                real = self._check_fd(dir_fd, current)
                self._fence(os.path.join(real, *reversed(missing), os.path.basename(path)), path)
                for name in reversed(missing):
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, 0o777, dir_fd=dir_fd)
                    child = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=dir_fd)
                    os.close(dir_fd)
                    dir_fd = child
        except BaseException:
            os.close(dir_fd)
            raise
        return dir_fd

    def _put(self, path: str, data: bytes, guard: FsWriteIntent | None) -> StoredWrite:
        name = os.path.basename(path)
        dir_fd = self._open_parent(path, create=True)
        fd = -1
        named = False
        published = False
        try:
            with _os_errors(path):
                fd = self._anonymous(dir_fd)
                if fd >= 0:
                    _write_all(fd, data)  # outside the lock: the slow part
            with self._locked(dir_fd, path), _os_errors(path):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(PUBLISH_NAME, dir_fd=dir_fd)  # a crashed writer's
                try:
                    old: os.stat_result | None = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                except FileNotFoundError:
                    old = None
                _check_kind(path, old)
                _check_guard(path, old, guard)
                if fd < 0:
                    fd = os.open(
                        PUBLISH_NAME,
                        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                        0o600,
                        dir_fd=dir_fd,
                    )
                    named = True
                    _write_all(fd, data)
                os.fchmod(fd, (old.st_mode & 0o7777) if old else (0o666 & ~_UMASK))
                # A reused inode with a coarse clock must never repeat a version.
                now = time.time_ns()
                mtime = max(now, old.st_mtime_ns + 1) if old else now
                os.utime(fd, ns=(mtime, mtime))
                if isinstance(guard, CreateIfAbsent) and not named:
                    try:
                        self._link(fd, name, dir_fd)
                    except FileExistsError:
                        raise already_exists(path) from None
                else:
                    # A named temp file is renamed even for a create (the name
                    # was checked absent under the lock): linking it and then
                    # unlinking the temp name could leave, after a crash, a
                    # second name whose removal changes the file's ctime.
                    if not named:
                        self._link(fd, PUBLISH_NAME, dir_fd)
                        named = True
                    os.rename(PUBLISH_NAME, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                published = True
                named = False
                version = _version(os.fstat(fd))
            return StoredWrite(version, created=old is None)
        finally:
            if named and not published:
                with contextlib.suppress(OSError):
                    os.unlink(PUBLISH_NAME, dir_fd=dir_fd)
            if fd >= 0:
                os.close(fd)
            os.close(dir_fd)

    @staticmethod
    def _anonymous(dir_fd: int) -> int:
        """An unnamed ``O_TMPFILE`` inode in the directory, or -1 where that is unsupported.

        A crash before it is linked leaves nothing behind: the kernel frees it.
        """
        if not (_O_TMPFILE and _PROC_FD):
            return -1
        try:
            return os.open(".", _O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in _NO_TMPFILE:
                return -1
            raise

    @staticmethod
    def _link(fd: int, name: str, dir_fd: int) -> None:
        """Give the anonymous new content ``name`` (``FileExistsError`` if taken)."""
        # linkat(AT_SYMLINK_FOLLOW) on /proc/self/fd: how an O_TMPFILE file gets a name.
        os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)

    async def put(self, path: str, data: bytes, guard: FsWriteIntent | None) -> StoredWrite:
        return await _in_thread(lambda: self._put(path, data, guard))

    def _remove(self, path: str, expected: FsVersion | None = None) -> None:
        """Unlink ``path`` under its directory's lock; with ``expected``, only at that version.

        The name is looked up relative to the validated parent descriptor, so
        a directory swapped for a symlink cannot redirect the unlink; every
        fsseam writer of the directory holds the same lock, so none can slip
        between the version check and the unlink.
        """
        name = os.path.basename(path)
        try:
            dir_fd = self._open_parent(path, create=False)
        except FsError as exc:
            if expected is not None and exc.code is FsErrorCode.FS_NOT_FOUND:
                raise stale(path, deleted=True) from None
            raise
        try:
            with self._locked(dir_fd, path), _os_errors(path):
                if expected is not None:
                    try:
                        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                    except FileNotFoundError:
                        raise stale(path, deleted=True) from None
                    if stat.S_ISDIR(st.st_mode):
                        raise not_a_file(path)
                    if not stat.S_ISREG(st.st_mode) or _version(st) != expected:
                        raise stale(path)  # a link or device swapped in is a change too
                os.unlink(name, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)

    async def remove(self, path: str) -> None:
        await _in_thread(lambda: self._remove(path))

    async def delete(self, path: str, expected: FsVersion) -> None:
        await _in_thread(lambda: self._remove(path, expected))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)


def _check_kind(path: str, old: os.stat_result | None) -> None:
    """What is at the name must be a regular file (or nothing), whatever the guard says."""
    if old is None or stat.S_ISREG(old.st_mode):
        return
    if stat.S_ISLNK(old.st_mode):
        raise FsSandboxDenied(
            f'"{path}" became a symlink after it was resolved; nothing was written'
        )
    if stat.S_ISDIR(old.st_mode):
        raise FsError(
            f'"{path}" is a directory, so it cannot be written as a file; write to a path '
            f'inside it (such as "{path}/notes.txt") or choose another name',
            FsErrorCode.FS_NOT_REGULAR_FILE,
        )
    raise FsError(
        f'"{path}" is a device, FIFO or socket, not a regular file; it cannot be overwritten; '
        "choose another name",
        FsErrorCode.FS_NOT_REGULAR_FILE,
    )


def _check_guard(path: str, old: os.stat_result | None, guard: FsWriteIntent | None) -> None:
    if isinstance(guard, CreateIfAbsent) and old is not None:
        raise already_exists(path)
    if isinstance(guard, ReplaceIfVersion):
        if old is None:
            raise stale(path, deleted=True)
        if _version(old) != guard.version:
            raise stale(path)
