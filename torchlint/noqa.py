"""``# noqa`` exactly as flake8 applies it, so the CLI and the plugin agree.

flake8 searches the reported line for ``# noqa`` (optionally
``# noqa: CODE[,CODE]``, codes matched as prefixes); a line inside a
multi-line string or a backslash continuation shares the comment of the
whole token range. ``# flake8: noqa`` on a line of its own skips the file.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Dict, List, Optional

from torchlint.source import physical_lines

NOQA_INLINE = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
NOQA_FILE = re.compile(r"\s*# flake8[:=]\s*noqa", re.IGNORECASE)
_CODE_SEPARATORS = re.compile(r"[,\s]+")


def file_is_exempt(source: str) -> bool:
    return "noqa" in source.lower() and any(NOQA_FILE.match(line) for line in physical_lines(source))


class NoqaIndex:
    """Answers "is this code suppressed on this line?" for one source text."""

    def __init__(self, source: str) -> None:
        self._source = source
        self._lines = physical_lines(source)
        self._mapping: Optional[Dict[int, str]] = None

    def suppresses(self, line: int, code: str) -> bool:
        if "noqa" not in self._source.lower():
            return False
        text = self._logical_text(line)
        match = NOQA_INLINE.search(text)
        if match is None:
            return False
        codes = match.group("codes")
        if codes is None:
            return True
        listed = [c for c in _CODE_SEPARATORS.split(codes.strip()) if c]
        return code in listed or code.startswith(tuple(listed))

    def _logical_text(self, line: int) -> str:
        if self._mapping is None:
            self._mapping = _token_line_mapping(self._source, self._lines)
        text = self._mapping.get(line)
        if text is None and 1 <= line <= len(self._lines):
            text = self._lines[line - 1]
        return text or ""


def _token_line_mapping(source: str, lines: List[str]) -> Dict[int, str]:
    """Map each line to the joined text of the token range it belongs to."""
    mapping: Dict[int, str] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return mapping
    first, last = None, None
    for token in tokens:
        if token.type in (tokenize.ENDMARKER, tokenize.DEDENT):
            continue
        start, end = token.start[0], token.end[0]
        first = start if first is None else min(first, start)
        last = end if last is None else max(last, end)
        if token.type in (tokenize.NL, tokenize.NEWLINE):
            joined = "".join(lines[first - 1:last])
            for number in range(first, last + 1):
                mapping[number] = joined
            first, last = None, None
    return mapping
