"""Local disk: stat-identity versions, temp-file + rename writes, flock-guarded checks.

Version = ``dev:ino:size:mtime_ns:ctime_ns`` taken by ``fstat`` on the very
descriptor the content came from. A guarded write runs its version check and
its publication under an exclusive ``flock`` on a per-target lock file that
lives outside the user's tree (keyed by the parent directory's ``(dev, ino)``
and the name, so every spelling and every process agrees on one lock).
Creation publishes with ``link(2)``, which never replaces, so a racing
creator is never clobbered.

Known limit: a writer that takes no lock (a text editor) can still slip in
between the final version check and the rename.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import secrets
import stat
import tempfile
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import Any, ClassVar, NoReturn

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
    FsPathInfo,
    FsVersion,
    FsWriteIntent,
    ReplaceIfVersion,
)
from fsseam.seam.types import FileType, PathType

__all__ = ["LocalDialect"]

_LOCK_STRIPES = 1024
"""Lock files per user: a bounded set shared by every target."""
_TMP_PREFIX = ".fsseam."
_TMP_SUFFIX = ".tmp"
_UMASK = os.umask(0)
os.umask(_UMASK)
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


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


def _fd_path(fd: int) -> str | None:
    """The path the kernel has for an open descriptor (Linux), else ``None``."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def _lock_dir() -> str:
    path = os.path.join(tempfile.gettempdir(), f"fsseam-locks-{os.getuid()}")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


class _FdReader(RawReader):
    def __init__(self, fd: int, info: FsInfo, path: str) -> None:
        self._fd = fd
        self.info = info
        self._path = path

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        size = self.info.size or 0
        # One read covers small files; the +1 notices growth since fstat.
        want = size + 1 if size < CHUNK_SIZE else CHUNK_SIZE
        while True:
            with _os_errors(self._path):
                data = os.read(self._fd, want)
            if not data:
                return
            yield data
            want = CHUNK_SIZE


class LocalDialect(Dialect):
    """fsspec ``LocalFileSystem``: the OS file APIs directly, for speed and identity."""

    name: ClassVar[str] = "local"
    atomic_conditional_write: ClassVar[bool] = True
    local_paths: ClassVar[bool] = True

    def __init__(self, fs: Any) -> None:
        super().__init__(fs)
        self._locks = _lock_dir()

    def url(self, path: str) -> str:
        return path

    async def stat(self, path: str) -> FsInfo | None:
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            _raise_os(path, exc)
        return FsInfo(_version(st), _file_type(st.st_mode), st.st_size)

    async def lstat(self, path: str) -> FsPathInfo | None:
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            _raise_os(path, exc)
        return FsPathInfo(_version(st), _path_type(st.st_mode), st.st_size)

    def _check_fd(self, fd: int, path: str) -> None:
        """Re-validate an open descriptor: a symlink swapped in after resolve is caught here."""
        if self.root is None:
            return
        real = _fd_path(fd)
        if real is None:  # no /proc: compare identities of the path and the descriptor
            fst = os.fstat(fd)
            try:
                pst = os.stat(os.path.realpath(path))
            except OSError:
                pst = None
            inside = pst is not None and (pst.st_dev, pst.st_ino) == (fst.st_dev, fst.st_ino)
            real = os.path.realpath(path) if inside else ""
        root = self.root
        if real != root and not real.startswith(root.rstrip("/") + "/"):
            raise FsError(
                f'"{path}" now leads outside the workspace (a symlink was swapped in); '
                "nothing was read or written",
                FsErrorCode.FS_SANDBOX_DENIED,
            )

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
            self._check_fd(fd, path)
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise _not_regular(path, st.st_mode)
        except BaseException:
            os.close(fd)
            raise
        return fd, FsInfo(_version(st), "file", st.st_size)

    def open_read(self, path: str) -> AbstractAsyncContextManager[RawReader]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[RawReader]:
            fd, info = self._open(path)
            try:
                yield _FdReader(fd, info, path)
            finally:
                os.close(fd)

        return opened()

    async def read_bytes(self, path: str, limit: int | None = None) -> tuple[bytes, FsInfo]:
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

    @contextmanager
    def _lock(self, dir_fd: int, name: str) -> Iterator[None]:
        """Exclusive lock for ``name`` in the directory ``dir_fd``, across processes.

        The lock is one of :data:`_LOCK_STRIPES` files, picked by a hash of the
        parent's ``(dev, ino)`` and the name, so every process and spelling
        agrees on it and lock files never pile up. They are never unlinked:
        creating and unlinking a file per write costs a journal round trip
        (about a fifth of a local edit). Two targets sharing a stripe only
        wait for each other's check-and-rename, a few microseconds.
        """
        pst = os.fstat(dir_fd)
        key = f"{pst.st_dev:x}-{pst.st_ino:x}-".encode() + name.encode("utf-8", "surrogateescape")
        stripe = int.from_bytes(hashlib.sha256(key).digest()[:4], "big") % _LOCK_STRIPES
        lock_path = os.path.join(self._locks, f"stripe-{stripe:04x}.lock")
        with _os_errors(lock_path):
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the flock

    def _open_parent(self, path: str) -> int:
        """A validated descriptor of ``path``'s directory, created if missing.

        Every later step (temp file, check, rename, link) is relative to it, so
        a directory swapped for a symlink after resolve cannot redirect the
        write outside the workspace. Missing directories are created one by
        one below the nearest existing ancestor, which is validated first, and
        each is entered with ``O_NOFOLLOW``: nothing is created outside either.
        """
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
        current = os.path.dirname(path)
        missing: list[str] = []
        with _os_errors(path):
            while True:
                try:
                    dir_fd = os.open(current, flags)
                    break
                except FileNotFoundError:
                    current, name = os.path.split(current)
                    if not name:
                        raise
                    missing.append(name)
        try:
            self._check_fd(dir_fd, current)
            with _os_errors(path):
                for name in reversed(missing):
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, 0o777, dir_fd=dir_fd)
                    child = os.open(name, flags | os.O_NOFOLLOW, dir_fd=dir_fd)
                    os.close(dir_fd)
                    dir_fd = child
        except BaseException:
            os.close(dir_fd)
            raise
        return dir_fd

    async def put(self, path: str, data: bytes, guard: FsWriteIntent | None) -> StoredWrite:
        name = os.path.basename(path)
        dir_fd = self._open_parent(path)
        tmp = f"{_TMP_PREFIX}{secrets.token_hex(8)}{_TMP_SUFFIX}"
        published = False
        try:
            with _os_errors(path):
                fd = os.open(
                    tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600, dir_fd=dir_fd
                )
            try:
                with _os_errors(path):
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.fsync(fd)
                with self._lock(dir_fd, name), _os_errors(path):
                    try:
                        old: os.stat_result | None = os.stat(
                            name, dir_fd=dir_fd, follow_symlinks=False
                        )
                    except FileNotFoundError:
                        old = None
                    self._check_guard(path, old, guard)
                    if old is not None and stat.S_ISLNK(old.st_mode):
                        raise FsError(
                            f'"{path}" became a symlink after it was resolved; nothing was written',
                            FsErrorCode.FS_SANDBOX_DENIED,
                        )
                    if old is not None and not stat.S_ISREG(old.st_mode):
                        raise FsError(
                            f'"{path}" is a directory or special file; it cannot be overwritten',
                            FsErrorCode.FS_NOT_REGULAR_FILE,
                        )
                    os.fchmod(fd, (old.st_mode & 0o7777) if old else (0o666 & ~_UMASK))
                    # A reused inode with a coarse clock must never repeat a version.
                    now = time.time_ns()
                    mtime = max(now, old.st_mtime_ns + 1) if old else now
                    os.utime(fd, ns=(mtime, mtime))
                    if isinstance(guard, CreateIfAbsent):
                        try:
                            os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                        except FileExistsError:
                            raise already_exists(path) from None
                        os.unlink(tmp, dir_fd=dir_fd)
                    else:
                        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                    published = True
                    version = _version(os.fstat(fd))
            finally:
                os.close(fd)
            return StoredWrite(version, created=old is None)
        finally:
            if not published:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dir_fd)
            os.close(dir_fd)

    @staticmethod
    def _check_guard(path: str, old: os.stat_result | None, guard: FsWriteIntent | None) -> None:
        if isinstance(guard, CreateIfAbsent) and old is not None:
            raise already_exists(path)
        if isinstance(guard, ReplaceIfVersion):
            if old is None:
                raise stale(path, deleted=True)
            if _version(old) != guard.version:
                raise stale(path)

    async def remove(self, path: str) -> None:
        dir_fd = self._open_parent(path)
        try:
            with self._lock(dir_fd, os.path.basename(path)), _os_errors(path):
                os.unlink(os.path.basename(path), dir_fd=dir_fd)
        finally:
            os.close(dir_fd)

    async def list_dir(self, path: str) -> list[RawEntry]:
        entries: list[RawEntry] = []
        with _os_errors(path), os.scandir(path) as it:
            for entry in it:
                if self.is_internal(entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                kind = _path_type(st.st_mode)
                entries.append(
                    RawEntry(
                        entry.name,
                        kind,
                        _version(st),
                        st.st_size if kind == "file" else None,
                    )
                )
        return entries

    def is_internal(self, name: str) -> bool:
        return name.startswith(_TMP_PREFIX) and name.endswith(_TMP_SUFFIX)
