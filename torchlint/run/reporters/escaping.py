"""Output that never fails to encode.

A file name that is not valid UTF-8 reaches Python as a string with lone
surrogates (``surrogateescape``), which no codec writes; a strict stdout
(``PYTHONIOENCODING=ascii:strict``, ``LC_ALL=C`` on old Pythons) cannot
write ``é`` either. Both must print, never crash: an undecodable byte shows
as ``\\xNN`` everywhere (text, JSON strings, stderr), any other character the
stream cannot encode as Python's ``backslashreplace`` spells it.
"""

from __future__ import annotations

import codecs
import re
from typing import Any, TextIO, Tuple

ERRORS = "torchlint-escape"
_UNDECODABLE = re.compile("[\udc80-\udcff]")


def escape_undecodable(text: str) -> str:
    """``text`` with each undecodable byte (a lone surrogate) spelled ``\\xNN``."""
    return _UNDECODABLE.sub(lambda match: f"\\x{ord(match.group()) - 0xDC00:02x}", text)


def escaped(data: Any) -> Any:
    """``data`` (JSON-like) with ``escape_undecodable`` applied to every string."""
    if isinstance(data, str):
        return escape_undecodable(data)
    if isinstance(data, dict):
        return {escaped(key): escaped(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [escaped(item) for item in data]
    return data


def _escape(exc: UnicodeError) -> Tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    bad = exc.object[exc.start:exc.end]
    spelled = escape_undecodable(bad).encode("ascii", "backslashreplace").decode("ascii")
    return spelled, exc.end


codecs.register_error(ERRORS, _escape)


def never_fails(stream: TextIO) -> None:
    """Make ``stream`` escape what its encoding cannot write instead of raising."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None and getattr(stream, "errors", None) != ERRORS:
        try:
            reconfigure(errors=ERRORS)
        except (ValueError, OSError):  # a stream already written to in a way that forbids it
            pass


def writes_unicode(stream: TextIO) -> bool:
    """Whether ``stream`` can write any character (JSON may then stay unescaped)."""
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("_", "-")
    return encoding.startswith("utf")
