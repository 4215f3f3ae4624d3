"""Textual screens sharper than a substring, for ``Rule.triggers``/``requires``.

A screen answers "can this source possibly contain a finding?" without
parsing. It may say yes wrongly (the file is then parsed and the rule finds
nothing) but must never say no wrongly: every ambiguity below resolves to
"yes". Each screen has the ``search(source)`` method of a compiled regex, so
rules can mix them freely with strings and regexes.
"""

from __future__ import annotations

import re
from typing import Optional, Union

Pattern = Union[str, "re.Pattern[str]", "Screen"]

# How far a call's arguments are scanned before giving up (and saying yes).
_MAX_ARGUMENT_SPAN = 4000
_CLOSING = {"(": ")", "[": "]", "{": "}"}


class Screen:
    def search(self, source: str) -> bool:  # pragma: no cover - interface
        raise NotImplementedError


def occurs(pattern: Pattern, source: str) -> bool:
    if isinstance(pattern, str):
        return pattern in source
    return bool(pattern.search(source))


class All(Screen):
    """Every pattern occurs somewhere."""

    def __init__(self, *patterns: Pattern) -> None:
        self._patterns = patterns

    def search(self, source: str) -> bool:
        return all(occurs(p, source) for p in self._patterns)


class CallWithout(Screen):
    """A call to one of ``names`` whose arguments lack one of ``keywords``.

    ``CallWithout("softmax|log_softmax", "dim")`` passes a file containing
    ``F.softmax(x)`` and rejects one whose every softmax call spells
    ``dim=``. A keyword passed by position is not seen, so such a call
    passes the screen (the rule then decides).
    """

    def __init__(self, names: str, *keywords: str) -> None:
        self._call = re.compile(rf"\b(?:{names})\s*\(")
        self._keywords = [re.compile(rf"\b{re.escape(k)}\s*=") for k in keywords]

    def search(self, source: str) -> bool:
        for match in self._call.finditer(source):
            arguments = argument_text(source, match.end())
            if arguments is None or not all(k.search(arguments) for k in self._keywords):
                return True
        return False


def argument_text(source: str, start: int) -> Optional[str]:
    """The text from ``start`` (just after an opening parenthesis) to its match.

    Strings and comments are skipped so their brackets do not count. None
    when the end is not found within a bounded span.
    """
    depth = 1
    index = start
    end = min(len(source), start + _MAX_ARGUMENT_SPAN)
    while index < end:
        char = source[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return source[start:index]
        elif char == "#":
            newline = source.find("\n", index)
            if newline < 0:
                return None
            index = newline
        elif char in "'\"":
            index = _string_end(source, index)
            if index is None:
                return None
            continue
        index += 1
    return None


# For each string delimiter: an escape, the closing delimiter, or (for
# single-quoted strings) the end of the line.
_STRING_STOPS = {
    delimiter: re.compile(r"\\.|" + re.escape(delimiter) + ("" if len(delimiter) == 3 else r"|\n"), re.S)
    for delimiter in ("'", '"', "'''", '"""')
}


def _string_end(source: str, index: int) -> Optional[int]:
    """Index just past the string literal starting at ``index``."""
    quote = source[index]
    triple = source.startswith(quote * 3, index)
    delimiter = quote * 3 if triple else quote
    position = index + len(delimiter)
    stops = _STRING_STOPS[delimiter]
    while True:
        found = stops.search(source, position)
        if found is None:
            return None
        if found.group().startswith("\\"):
            position = found.end()
            continue
        if found.group() == "\n":
            return None  # an unterminated single-quoted string: give up (say yes)
        return found.end()
