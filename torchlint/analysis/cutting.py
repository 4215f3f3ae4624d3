"""Cutting the bodies of defs and classes out of a text, keeping every line's number.

libcst's parse costs in proportion to the text; a question about one
definition needs only it, the module-level code around it and the headers of
the others. A cut body becomes an empty string literal over the same lines
(one token for libcst, however long the body was), so positions in what is
kept are those of the file.
"""

from __future__ import annotations

import ast
from typing import List, Optional

# A body shorter than this is cheaper to parse than to cut from the text.
MIN_BODY_LINES = 4


def cuttable(statement: ast.stmt, lines: List[str]) -> bool:
    """Is the body long enough, and on lines of its own (not after the colon)?"""
    first = statement.body[0]
    body_line = first_line(first)
    return last_line(statement) - body_line + 1 >= MIN_BODY_LINES and _indent(first, lines) is not None


def cut_body(statement: ast.stmt, lines: List[str]) -> None:
    """Replace the body by a string literal over the same lines, keeping
    their line endings: one token for libcst however long the body was
    (blank lines would each become a node)."""
    first = statement.body[0]
    body_line, end_line, indent = first_line(first), last_line(statement), _indent(first, lines)
    line = lines[body_line - 1]
    if body_line == end_line:
        lines[body_line - 1] = line[:indent] + "pass" + _ending(line)
        return
    lines[body_line - 1] = line[:indent] + '"""' + _ending(line)
    for number in range(body_line, end_line - 1):
        lines[number] = _ending(lines[number])
    lines[end_line - 1] = '"""' + _ending(lines[end_line - 1])


def first_line(statement: ast.stmt) -> int:
    """The line of the statement's first decorator, or of the statement
    (Python's tree places a decorated def at its ``def``)."""
    decorators = getattr(statement, "decorator_list", None)
    return decorators[0].lineno if decorators else statement.lineno


def last_line(statement: ast.stmt) -> int:
    return statement.end_lineno or statement.lineno


def _indent(statement: ast.stmt, lines: List[str]) -> Optional[int]:
    """The indentation of the statement's first line, if the statement starts
    it (after the indentation, which is ASCII: ``col_offset`` counts UTF-8
    bytes); None when something precedes it there."""
    line = lines[first_line(statement) - 1]
    indent = len(line) - len(line.lstrip(" \t\x0c"))
    if getattr(statement, "decorator_list", None):
        return indent if line.startswith("@", indent) else None
    return indent if indent == statement.col_offset else None


def _ending(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith(("\n", "\r")):
        return line[-1]
    return ""
