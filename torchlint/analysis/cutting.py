"""Cutting the bodies of defs and classes out of a text, keeping every line's number.

libcst's parse costs in proportion to the text; a question about one
definition needs only it, the module-level code around it and the headers of
the others. A cut body becomes an empty string literal over the same lines
(one token for libcst, however long the body was), so positions in what is
kept are those of the file.
"""

from __future__ import annotations

import ast
from typing import Collection, Dict, Iterable, List, Optional, Sequence, Set

from torchlint.core.census import child_nodes

# A body shorter than this is cheaper to parse than to cut from the text.
MIN_BODY_LINES = 4


def cuttable(statement: ast.stmt, lines: List[str]) -> bool:
    """Is the body long enough, and on lines of its own (not after the colon)?"""
    first = statement.body[0]
    body_line = first_line(first)
    return last_line(statement) - body_line + 1 >= MIN_BODY_LINES and _indent(first, lines) is not None


def body_on_own_lines(statement: ast.stmt, lines: List[str]) -> bool:
    """Does the body start a line of its own (so ``cut_body`` can cut it, however short)?"""
    return _indent(statement.body[0], lines) is not None


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


def cut_whole(statement: ast.stmt, lines: List[str]) -> None:
    """Replace a cut top-level def or class, decorators included, by a string
    literal over the same lines (see ``unreferenced``): for libcst one
    statement of one token where its header was a few dozen nodes."""
    first, last = first_line(statement), last_line(statement)
    span = lines[first - 1:last]
    cut_whole_lines(span)
    lines[first - 1:last] = span


def cut_whole_lines(lines: List[str]) -> None:
    """Make ``lines`` (whole statements) one string literal over the same lines."""
    if len(lines) == 1:
        lines[0] = '""' + _ending(lines[0])
        return
    lines[0] = '"""' + _ending(lines[0])
    for number in range(1, len(lines) - 1):
        lines[number] = _ending(lines[number])
    lines[-1] = '"""' + _ending(lines[-1])


def unreferenced(statements: Sequence[ast.stmt], cut: Collection[ast.stmt]) -> List[ast.stmt]:
    """The top-level defs and classes of ``cut`` (whose bodies are cut) that
    nothing kept names: neither the statements of ``statements`` kept whole
    (module-level code included), nor the header of a cut one they name, and
    so on. A name reaches its binding only through a name, so without them
    every kept name is bound as before; they are cut whole (``cut_whole``).
    On transformers such headers were a sixth of what libcst parsed."""
    cut_ids = {id(statement) for statement in cut}
    binders: Dict[str, List[ast.stmt]] = {}
    needed: Set[str] = set()
    for statement in statements:
        if id(statement) in cut_ids and isinstance(statement, _DEFINITIONS):
            binders.setdefault(statement.name, []).append(statement)
        else:
            _names_in([statement], needed)
    kept: Set[int] = set()
    waiting = [name for name in needed if name in binders]
    while waiting:
        for statement in binders.pop(waiting.pop(), ()):
            kept.add(id(statement))
            found: Set[str] = set()
            _names_in(_header(statement), found)
            waiting.extend(name for name in found - needed if name in binders)
            needed |= found
    return [s for s in statements if id(s) in cut_ids and isinstance(s, _DEFINITIONS) and id(s) not in kept]


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _header(statement: ast.stmt) -> List[ast.AST]:
    """The parts of a def or class outside its body."""
    parts: List[ast.AST] = list(statement.decorator_list)  # type: ignore[attr-defined]
    if isinstance(statement, ast.ClassDef):
        return parts + statement.bases + statement.keywords
    parts.append(statement.args)  # type: ignore[attr-defined]
    returns = statement.returns  # type: ignore[attr-defined]
    return parts + [returns] if returns is not None else parts


def _names_in(nodes: Iterable[ast.AST], found: Set[str]) -> None:
    """Add every name read, bound or declared (``global``) under ``nodes``."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node.__class__ is ast.Name:
            found.add(node.id)  # type: ignore[attr-defined]
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            found.update(node.names)
        stack.extend(child_nodes([node]))


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
