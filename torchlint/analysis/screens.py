"""Textual screens sharper than a substring, for ``Rule.triggers``/``requires``.

A screen answers "can this source possibly contain a finding?" without
parsing. It may say yes wrongly (the file is then parsed and the rule finds
nothing) but must never say no wrongly: every ambiguity below resolves to
"yes". Each screen has the ``search(source)`` method of a compiled regex, so
rules can mix them freely with strings and regexes.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional, Union

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


class CallArgs(Screen):
    """A call to one of ``names`` whose argument text matches ``pattern``."""

    def __init__(self, names: str, pattern: str) -> None:
        self._call = re.compile(rf"\b(?:{names})\s*\(")
        self._pattern = re.compile(pattern)

    def search(self, source: str) -> bool:
        for match in self._call.finditer(source):
            arguments = argument_text(source, match.end())
            if arguments is None or self._pattern.search(arguments):
                return True
        return False


class CallThen(Screen):
    """A call to one of ``names`` followed (after its closing parenthesis) by ``pattern``."""

    def __init__(self, names: str, pattern: str) -> None:
        self._call = re.compile(rf"\b(?:{names})\s*\(")
        self._after = re.compile(pattern)

    def search(self, source: str) -> bool:
        for match in self._call.finditer(source):
            arguments = argument_text(source, match.end())
            if arguments is None:
                return True
            if self._after.match(source, match.end() + len(arguments) + 1):
                return True
        return False


def referenced(names: Iterable[str], keywords: Iterable[str] = ()) -> "re.Pattern[str]":
    """A name used the way torch APIs are reached: as an attribute (``.name``),
    in an import (``from torch import name`` or inside a parenthesised import
    list), or as a keyword argument (``name=``) for ``keywords``.

    Unlike a bare substring this does not match inside other words
    (``eig`` in ``weight``) nor Python's own names (``range(``).
    """
    alternation = "|".join(sorted(map(re.escape, names)))
    parts = [
        rf"\.\s*(?:{alternation})\b",
        rf"\bimport\b[^\n]*\b(?:{alternation})\b",
        rf"^[ \t]*(?:{alternation})\b[ \t]*(?:,|\)|\bas\b|$)",
    ]
    keywords = sorted(map(re.escape, keywords))
    if keywords:
        parts.append(rf"\b(?:{'|'.join(keywords)})\s*=")
    return re.compile("|".join(parts), re.MULTILINE)


def top_level(arguments: str) -> str:
    """``arguments`` with nested brackets and string literals blanked out, so
    only the call's own argument separators and keywords remain visible."""
    kept = []
    depth = 0
    index = 0
    while index < len(arguments):
        char = arguments[index]
        if char in "'\"":
            end = _string_end(arguments, index)
            if end is None:
                break
            kept.append(" ")
            index = end
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0:
            kept.append(char)
        index += 1
    return "".join(kept)
