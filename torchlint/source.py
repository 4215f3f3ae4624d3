"""Reading and writing users' files without ever damaging them.

Bytes are decoded with the encoding Python itself would use (PEP 263 cookie
or UTF-8 BOM); line endings are left as they are (the parser keeps them).
Writing re-encodes with the same codec, goes through a temporary file in the
same directory and an atomic rename, and keeps the file's permissions.
"""

from __future__ import annotations

import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from typing import List


class SourceError(Exception):
    """A file that cannot be read or decoded; the message is for the user."""


@dataclass(frozen=True)
class SourceText:
    text: str
    encoding: str  # a codec name; "utf-8-sig" when the file starts with a BOM


def physical_lines(source: str) -> List[str]:
    """Lines as Python counts them: broken at \\n, \\r\\n and \\r only.

    ``str.splitlines`` also breaks at form feeds and Unicode separators,
    which would shift every line number after one.
    """
    return io.StringIO(source, newline="").readlines()


def decode(data: bytes) -> SourceText:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceError(f"cannot determine the encoding: {exc}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceError(f"cannot decode as {encoding}: {exc}") from None
    return SourceText(text, encoding)


def read_source(path: str) -> SourceText:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except IsADirectoryError:
        raise SourceError("is a directory") from None
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    return decode(data)


def encode(source: SourceText, new_text: str) -> bytes:
    try:
        return new_text.encode(source.encoding)
    except UnicodeEncodeError as exc:
        raise SourceError(f"the fixed text cannot be encoded as {source.encoding}: {exc}") from None


def write_atomically(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step, keeping its permission bits."""
    path = os.path.realpath(path)  # through a symlink: replace its target, not the link
    directory = os.path.dirname(os.path.abspath(path))
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        if not os.access(path, os.W_OK):
            raise SourceError("cannot write: permission denied")
        fd, temp_path = tempfile.mkstemp(prefix=".torchlint-", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise SourceError(f"cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp_path, mode)
        os.replace(temp_path, path)
    except BaseException as exc:
        try:
            os.unlink(temp_path)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise SourceError(f"cannot write: {exc.strerror or exc}") from None
        raise
