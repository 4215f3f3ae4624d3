"""Reading and writing users' files without ever damaging them.

Writing re-encodes with the codec the file was read with, goes through a
temporary file in the same directory and an atomic rename (interrupts wait
until it is done), and keeps the file's permissions and owner.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import stat
import tempfile
import threading
from typing import Iterable, Iterator, List, Optional

from torchlint.core.dependencies import PROBE, content_digest, probe
from torchlint.core.source import SourceError, SourceFile, decode


# The largest file read (a larger one is reported, not checked): far beyond
# any hand-written module; notebooks carry their outputs (images), so they
# may be larger.
MAX_SOURCE_BYTES = 10 * 1024 * 1024
MAX_NOTEBOOK_BYTES = 100 * 1024 * 1024


def current_digest(key: str) -> Optional[str]:
    """The digest of the file ``key`` now (None if it cannot be read); for
    ``PROBE`` + a place, what an import finds there now: what a dependency
    recorded by the project model is compared against."""
    if key.startswith(PROBE):
        return probe(key[len(PROBE):])
    try:
        return content_digest(read_bytes(key, MAX_SOURCE_BYTES))
    except (SourceError, OSError, ValueError):
        return None


def read_source(path: str) -> SourceFile:
    return decode(read_bytes(path, MAX_SOURCE_BYTES))


def read_bytes(path: str, limit: int) -> bytes:
    """The content of the regular file ``path``, at most ``limit`` bytes.

    Anything else is a ``SourceError``: a FIFO (reading would wait for a
    writer forever), a device (``/dev/zero`` never ends), a directory, or a
    file larger than ``limit``. The file is opened without blocking and
    checked after opening, so a path swapped for a FIFO between the two
    steps cannot hang the run either.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except IsADirectoryError:
        raise SourceError("is a directory") from None
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        try:
            status = os.fstat(fd)
            if not stat.S_ISREG(status.st_mode):
                raise SourceError(f"not a regular file ({_kind(status.st_mode)}): not read")
            if status.st_size > limit:
                size, most = _megabytes(status.st_size), _megabytes(limit)
                raise SourceError(f"too large to check ({size}; the limit is {most})")
            os.set_blocking(fd, True)
            # A buffer of the file's size, not of the limit (10 MB per file).
            data = handle.read(status.st_size + 1)
            if len(data) > status.st_size:  # it grew since fstat (or fstat does not know: /proc)
                data += handle.read(limit + 1 - len(data))
        except OSError as exc:
            raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:  # it grew since fstat
        raise SourceError(f"too large to check (over {_megabytes(limit)})")
    return data


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


class ChangedOnDisk(SourceError):
    """The file no longer holds the bytes the fix was computed from."""


def encode(source: SourceFile, new_text: str) -> bytes:
    try:
        return new_text.encode(source.encoding)
    except UnicodeEncodeError as exc:
        raise SourceError(f"the fixed text cannot be encoded as {source.encoding}: {exc}") from None


def write_atomically(path: str, data: bytes, expected: Optional[bytes] = None) -> None:
    """Replace ``path`` with ``data`` in one step, keeping its permission bits and owner.

    ``expected``: the bytes ``data`` was computed from. If the file holds
    anything else by the time it would be replaced (the user saved it while
    torchlint was working), nothing is written and ``ChangedOnDisk`` is
    raised: the user's edit wins. The check is made after the new content is
    on disk, just before the rename, to keep the window small.

    An interrupt (Ctrl-C, SIGTERM, SIGHUP) arriving while the temporary file
    exists is held back until the file is replaced or the temporary file is
    gone, so no interrupted run leaves a half-written file or a stray
    temporary file behind.
    """
    path = os.path.realpath(path)  # through a symlink: replace its target, not the link
    directory = os.path.dirname(os.path.abspath(path))
    try:
        status = os.stat(path)
        if not os.access(path, os.W_OK):
            raise SourceError("cannot write: permission denied")
    except OSError as exc:
        raise SourceError(f"cannot write: {exc.strerror or exc}") from None
    with _interrupts_deferred():
        try:
            fd, temp_path = tempfile.mkstemp(prefix=f"{TEMPORARY_PREFIX}{os.getpid()}-", suffix=".tmp", dir=directory)
        except OSError as exc:
            raise SourceError(f"cannot write: {exc.strerror or exc}") from None
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            _keep_owner(temp_path, status)
            os.chmod(temp_path, stat.S_IMODE(status.st_mode))
            if expected is not None:
                _check_unchanged(path, status, expected)
            os.replace(temp_path, path)
        except BaseException as exc:
            try:
                os.unlink(temp_path)
            except OSError:
                pass
            if isinstance(exc, OSError):
                raise SourceError(f"cannot write: {exc.strerror or exc}") from None
            raise


# Temporary files are named ``.torchlint-<pid>-<random>.tmp``: the pid of the
# writer tells a leftover of a killed run (``kill -9`` cannot be deferred)
# from a file another run is writing right now.
TEMPORARY_PREFIX = ".torchlint-"
_TEMPORARY = re.compile(r"\.torchlint-(?P<pid>[0-9]{1,10})-[A-Za-z0-9_]{6,16}\.tmp")


def remove_stale_temporaries(directories: Iterable[str]) -> List[str]:
    """Delete the temporary files killed runs left in ``directories``.

    Only regular files named exactly like ours whose writing process no
    longer exists; a user's file never matches that name, and a run still
    writing keeps its file. Returns the paths removed.
    """
    removed: List[str] = []
    for directory in directories:
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            match = _TEMPORARY.fullmatch(name)
            if match is None or _process_exists(int(match.group("pid"))):
                continue
            path = os.path.join(directory, name)
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):
                    os.unlink(path)
                    removed.append(path)
            except OSError:
                pass  # gone already, or not ours to remove
    return removed


def _process_exists(pid: int) -> bool:
    if pid <= 0:
        return True  # not a pid we write: leave the file alone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # someone else's process, or cannot tell: keep the file
    return True


def _check_unchanged(path: str, before: os.stat_result, expected: bytes) -> None:
    """Raise ``ChangedOnDisk`` unless ``path`` still holds exactly ``expected``.

    Only a regular file can be read again (a FIFO's bytes are gone once read);
    opened without blocking, so a FIFO put in its place cannot hang the run.
    """
    if not stat.S_ISREG(before.st_mode):
        return
    changed = ChangedOnDisk("changed on disk while torchlint was fixing it; not written (the file keeps "
                            "its new content; run torchlint again)")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            now = os.fstat(handle.fileno())
            if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino) \
                    or now.st_size != len(expected):
                raise changed  # replaced by another file (an editor's save), or resized
            if handle.read(len(expected) + 1) != expected:
                raise changed
    except OSError as exc:
        raise SourceError(f"cannot write: {exc.strerror or exc}") from None


def _keep_owner(temp_path: str, status: os.stat_result) -> None:
    """Give the new file the old one's owner and group (when allowed: root, or our own group)."""
    if not hasattr(os, "chown"):
        return
    temp = os.stat(temp_path)
    if (temp.st_uid, temp.st_gid) == (status.st_uid, status.st_gid):
        return
    try:
        os.chown(temp_path, status.st_uid, status.st_gid)
    except OSError:
        try:
            os.chown(temp_path, -1, status.st_gid)
        except OSError:
            pass  # an ordinary user cannot give files away; the file is still replaced


_DEFERRED_SIGNALS = {getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)}


@contextlib.contextmanager
def _interrupts_deferred() -> Iterator[None]:
    """Hold interrupting signals back for the duration; they are delivered on exit.

    Python-level handlers, not a signal mask: a process-directed signal goes
    to any thread that does not block it (a library's worker thread), and
    Python then runs its handler in the main thread at once, mid-write.
    Handlers can be installed from the main thread only; elsewhere a failed
    write still removes its temporary file.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: List[int] = []
    previous = {}
    for number in _DEFERRED_SIGNALS:
        handler = signal.getsignal(number)
        if handler is None or handler == signal.SIG_IGN:
            continue  # installed outside Python, or ignored anyway: leave it alone
        previous[number] = signal.signal(number, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        for number in received:
            signal.raise_signal(number)
