"""Reading and writing users' files without ever damaging them.

Writing re-encodes with the codec the file was read with, goes through a
temporary file in the same directory and an atomic rename (interrupts wait
until it is done), and keeps the file's permissions and owner.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import tempfile
import threading
from typing import Iterator, List

from torchlint.core.source import SourceError, SourceFile, decode


def read_source(path: str) -> SourceFile:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except IsADirectoryError:
        raise SourceError("is a directory") from None
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    return decode(data)


def encode(source: SourceFile, new_text: str) -> bytes:
    try:
        return new_text.encode(source.encoding)
    except UnicodeEncodeError as exc:
        raise SourceError(f"the fixed text cannot be encoded as {source.encoding}: {exc}") from None


def write_atomically(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step, keeping its permission bits and owner.

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
            fd, temp_path = tempfile.mkstemp(prefix=".torchlint-", suffix=".tmp", dir=directory)
        except OSError as exc:
            raise SourceError(f"cannot write: {exc.strerror or exc}") from None
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            _keep_owner(temp_path, status)
            os.chmod(temp_path, stat.S_IMODE(status.st_mode))
            os.replace(temp_path, path)
        except BaseException as exc:
            try:
                os.unlink(temp_path)
            except OSError:
                pass
            if isinstance(exc, OSError):
                raise SourceError(f"cannot write: {exc.strerror or exc}") from None
            raise


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
