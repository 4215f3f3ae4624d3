"""A fix as text edits: what ``--output-format json``, ``sarif`` and ``full`` show.

Fixes are libcst node rewrites; to show one without applying it, the module
is rendered with that fix alone and compared with the original text. The
differences become minimal ``TextEdit``s (replace this range with that text)
with 1-based rows and columns counted in characters, like the diagnostics.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Optional, Tuple

from torchlint.core.diagnostic import Fix
from torchlint.core.source import SourceFile

if TYPE_CHECKING:  # pragma: no cover
    import libcst as cst


@dataclass(frozen=True)
class TextEdit:
    """Replace the text from ``start`` up to (not including) ``end`` with ``content``.

    Positions are (row, column), both 1-based, columns in characters.
    """

    start: Tuple[int, int]
    end: Tuple[int, int]
    content: str


def preview_fix(module: cst.Module, fix: Fix) -> Optional[List[TextEdit]]:
    """The edits ``fix`` alone makes to ``module``; None if it cannot be applied."""
    from torchlint.engine.fixer import apply_fixes  # libcst: only when there are fixes to show

    result = apply_fixes(module, [fix])
    if not result.applied:
        return None
    return edits_between(SourceFile(module.code), SourceFile(result.code))


def edits_between(before: SourceFile, after: SourceFile) -> List[TextEdit]:
    """Minimal edits turning ``before`` into ``after`` (line hunks, trimmed to the characters that differ)."""
    old_lines, new_lines = before.lines, after.lines
    old_offsets = before.line_starts
    edits: List[TextEdit] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        old = "".join(old_lines[i1:i2])
        new = "".join(new_lines[j1:j2])
        prefix = _common_prefix(old, new)
        while prefix and _splits_word(old, new, prefix):
            prefix -= 1
        suffix = _common_prefix(old[prefix:][::-1], new[prefix:][::-1])
        while suffix and _splits_word(old, new, len(old) - suffix, len(new) - suffix):
            suffix -= 1
        start = old_offsets[i1] + prefix
        end = old_offsets[i1] + len(old) - suffix
        edits.append(TextEdit(_position(before, start), _position(before, end), new[prefix:len(new) - suffix]))
    return edits


def apply_edits(source: SourceFile, edits: List[TextEdit]) -> str:
    """``source`` with ``edits`` (non-overlapping) applied."""

    def offset(position: Tuple[int, int]) -> int:
        row, column = position
        return source.offset(row, column - 1)

    result = source.text
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        result = result[:offset(edit.start)] + edit.content + result[offset(edit.end):]
    return result


def _common_prefix(a: str, b: str) -> int:
    length = min(len(a), len(b))
    for index in range(length):
        if a[index] != b[index]:
            return index
    return length


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _splits_word(old: str, new: str, at_old: int, at_new: int = -1) -> bool:
    """Would cutting at these offsets split an identifier or a CRLF in two (in either text)?"""
    at_new = at_old if at_new < 0 else at_new

    def splits(text: str, at: int) -> bool:
        if not 0 < at < len(text):
            return False
        before, after = text[at - 1], text[at]
        return (_is_word(before) and _is_word(after)) or (before == "\r" and after == "\n")

    return splits(old, at_old) or splits(new, at_new)


def _position(text: SourceFile, offset: int) -> Tuple[int, int]:
    """1-based (row, column) of character ``offset``, with Python's line breaks.

    (\r\n is never split between two offsets: edits never cut a line break in two.)
    """
    row, column = text.position(offset)
    return row, column + 1
