"""Reading and writing users' files without ever damaging them.

Bytes are decoded with the encoding Python itself would use (PEP 263 cookie
or UTF-8 BOM); line endings are left as they are (the parser keeps them).
Writing re-encodes with the same codec, goes through a temporary file in the
same directory and an atomic rename (interrupts wait until it is done), and
keeps the file's permissions and owner.
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass, field
from typing import List


class SourceError(Exception):
    """A file that cannot be read or decoded; the message is for the user."""


@dataclass(frozen=True)
class SourceText:
    text: str
    encoding: str  # a codec name; "utf-8-sig" when the file starts with a BOM
    # The bytes ``text`` was decoded from: what the cache key hashes and what
    # the file must still hold before a fix replaces it.
    data: bytes = field(default=b"", repr=False, compare=False)


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
    return SourceText(text, encoding, data)
