"""Reading and writing users' files without ever damaging them.

Writing re-encodes with the codec the file was read with, goes through a
temporary file in the same directory and an atomic rename (interrupts wait
until it is done), and keeps the file's permissions and owner.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import signal
import stat
import threading
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple

from torchlint.core.dependencies import LISTING, PROBE, content_digest, listing_digest, probe
from torchlint.core.source import SourceError, SourceFile, decode


# The largest file read (a larger one is reported, not checked): far beyond
# any hand-written module; notebooks carry their outputs (images), so they
# may be larger.
MAX_SOURCE_BYTES = 10 * 1024 * 1024
MAX_NOTEBOOK_BYTES = 100 * 1024 * 1024
# The longest line checked: libcst parses a file in pieces of whole
# statements, but one line is one piece, and its native parser holds about
# 1,000-1,600 bytes per character of code while it works (an 8.4 MB one-line
# file passed 11.7 GB). A line this long is generated or minified code, never
# written by hand; up to it a line costs at most about 160 MB.
MAX_LINE_CHARS = 100_000


def current_digest(key: str) -> Optional[str]:
    """The digest of the file ``key`` now (None if it cannot be read); for
    ``PROBE`` + a place, what an import finds there now: what a dependency
    recorded by the project model is compared against."""
    if key.startswith(PROBE):
        return probe(key[len(PROBE):])
    if key.startswith(LISTING):
        return listing_digest(key[len(LISTING):])
    try:
        return content_digest(read_bytes(key, MAX_SOURCE_BYTES))
    except (SourceError, OSError, ValueError):
        return None


# A file as (device, inode): what ``--fix`` may replace is the very file it read.
Identity = Tuple[int, int]


def read_source(path: str) -> SourceFile:
    data, identity = read_identified(path, MAX_SOURCE_BYTES)
    source = decode(data)
    refuse_long_lines(source)
    source.identity = identity
    return source


def refuse_long_lines(source: SourceFile) -> None:
    """A ``SourceError`` if a line of ``source`` is over ``MAX_LINE_CHARS``."""
    reason = long_line(source)
    if reason is not None:
        raise SourceError(reason)


def long_line(source: SourceFile) -> Optional[str]:
    """Why ``source`` is not checked when a line is over ``MAX_LINE_CHARS``; None otherwise."""
    if len(source.text) <= MAX_LINE_CHARS:
        return None
    for number, line in enumerate(source.lines, 1):
        if len(line.rstrip("\r\n")) > MAX_LINE_CHARS:
            return (f"line {number} is too long to check ({len(line.rstrip(chr(13) + chr(10))):,} characters; "
                    f"the limit is {MAX_LINE_CHARS:,}: generated or minified code)")
    return None


def read_bytes(path: str, limit: int) -> bytes:
    return read_identified(path, limit)[0]


def read_identified(path: str, limit: int) -> Tuple[bytes, Identity]:
    """The content of the regular file ``path``, at most ``limit`` bytes,
    and the identity of the file it came from (a symlink's target).

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
    return data, (status.st_dev, status.st_ino)


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


class OutsideTree(SourceError):
    """The file to fix is (through a symlink) outside the tree being checked."""


class CheckedTree:
    """Where ``--fix`` may write: under the folders named on the command line
    and the files named there (their real paths: a symlinked folder named
    explicitly is its target)."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.roots = tuple(os.path.realpath(path) for path in (paths or ["."]))

    def holds(self, path: str) -> bool:
        real = os.path.realpath(path)
        return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in self.roots)

    def outside_reason(self, path: str) -> Optional[str]:
        """Why ``path`` must not be written (None: it may be)."""
        if self.holds(path):
            return None
        if os.path.islink(path):
            return f"not fixed: it is a symbolic link to {os.path.realpath(path)}, outside the checked tree"
        return f"not fixed: {os.path.realpath(path)} is outside the checked tree"


# Writing relative to an open directory (Linux, macOS): what is replaced is
# an entry of the very directory checked, whatever symlinks appear later.
# (``os.replace`` is ``renameat`` like ``os.rename``, which is what the set lists.)
_AT_DIRECTORY = {os.open, os.stat, os.rename, os.unlink, os.access} <= os.supports_dir_fd and hasattr(os, "O_DIRECTORY")


def write_atomically(path: str, data: bytes, expected: Optional[bytes] = None,
                     identity: Optional[Identity] = None, tree: Optional[CheckedTree] = None) -> None:
    """Replace ``path`` with ``data`` in one step, keeping its permission bits and owner.

    A symlink is written through: its target is replaced, the link kept;
    with ``tree``, only a target inside it (else ``OutsideTree``).
    ``identity``: the (device, inode) of the file read; the file replaced
    must be that one, a regular file, never reached through a symlink that
    appeared since (``ChangedOnDisk`` otherwise).

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
    if tree is not None and not tree.holds(path):
        raise OutsideTree(tree.outside_reason(path) or "outside the checked tree")
    target = os.path.realpath(path)  # through a symlink: replace its target, not the link
    directory, name = os.path.split(target)
    dir_fd: Optional[int] = None
    try:
        if _AT_DIRECTORY:
            dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0))
        else:
            name = target
        _replace_in(dir_fd, directory, name, data, expected, identity)
    except OSError as exc:
        raise SourceError(f"cannot write: {exc.strerror or exc}") from None
    finally:
        if dir_fd is not None:
            os.close(dir_fd)


def _replace_in(dir_fd: Optional[int], directory: str, name: str, data: bytes, expected: Optional[bytes],
                identity: Optional[Identity]) -> None:
    """``write_atomically``'s work on the entry ``name`` of the open directory ``dir_fd``."""
    status = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISLNK(status.st_mode) or (identity is not None and (status.st_dev, status.st_ino) != identity):
        raise _changed_on_disk()
    if not os.access(name, os.W_OK, dir_fd=dir_fd):
        raise SourceError("cannot write: permission denied")
    with _interrupts_deferred():
        temp_name, fd = _create_temporary(dir_fd, directory)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
                _keep_owner(handle.fileno(), status)
                os.chmod(handle.fileno(), stat.S_IMODE(status.st_mode))
            if expected is not None:
                _check_unchanged(dir_fd, name, status, expected)
            os.replace(temp_name, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            try:
                os.unlink(temp_name, dir_fd=dir_fd)
            except OSError:
                pass
            raise


def _create_temporary(dir_fd: Optional[int], directory: str) -> Tuple[str, int]:
    """A new, empty temporary file beside the file to replace: (its name
    relative to ``dir_fd``, or its path without one; an open descriptor)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        name = f"{TEMPORARY_PREFIX}{os.getpid()}-{secrets.token_hex(6)}.tmp"
        if dir_fd is None:
            name = os.path.join(directory, name)
        try:
            return name, os.open(name, flags, 0o600, dir_fd=dir_fd)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name")


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


def _changed_on_disk() -> ChangedOnDisk:
    return ChangedOnDisk("changed on disk while torchlint was fixing it; not written (the file keeps "
                         "its new content; run torchlint again)")


def _check_unchanged(dir_fd: Optional[int], name: str, before: os.stat_result, expected: bytes) -> None:
    """Raise ``ChangedOnDisk`` unless ``name`` still holds exactly ``expected``.

    Only a regular file can be read again (a FIFO's bytes are gone once read);
    opened without blocking, so a FIFO put in its place cannot hang the run,
    and without following a symlink put in its place.
    """
    if not stat.S_ISREG(before.st_mode):
        return
    changed = _changed_on_disk()
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0), dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise changed from None  # a symlink now
        raise
    with os.fdopen(fd, "rb") as handle:
        now = os.fstat(handle.fileno())
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino) \
                or now.st_size != len(expected):
            raise changed  # replaced by another file (an editor's save), or resized
        if handle.read(len(expected) + 1) != expected:
            raise changed


def _keep_owner(fd: int, status: os.stat_result) -> None:
    """Give the new file the old one's owner and group (when allowed: root, or our own group)."""
    if not hasattr(os, "fchown"):
        return
    temp = os.fstat(fd)
    if (temp.st_uid, temp.st_gid) == (status.st_uid, status.st_gid):
        return
    try:
        os.fchown(fd, status.st_uid, status.st_gid)
    except OSError:
        try:
            os.fchown(fd, -1, status.st_gid)
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
