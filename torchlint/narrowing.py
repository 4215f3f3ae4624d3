"""Parse with libcst only the top-level statements that can hold findings.

A file that passes the screens usually holds one or two findings in a
thousand lines, and libcst's parse and torchlint's walk cost in proportion
to the whole file. So, when checking (not fixing), each top-level ``def`` and
``class`` is screened on its own: the active rules' outline screens are
asked about the file with every *other* def and class cut down to a stub.
A statement no rule accepts is cut in the text libcst parses too: its body
becomes ``pass`` and blank lines, so every line keeps its number.

A stub keeps the statement's header (decorators, name, parameters, bases).
Questions about the whole file ("does it import torch anywhere?") are
answered from the whole file's tree, by rules (``Resolver``) and screens
(``Outline.imports_from``) alike.

This is exact, not a heuristic, for rules that are *statement-local*
(``Rule.whole_file`` is False): what such a rule decides inside a top-level
statement depends only on that statement, on the rest of the module kept
verbatim (imports, assignments, ``if``/``try`` blocks: everything but defs and
classes), on the headers of other defs and classes, and on facts about the
whole file taken from Python's tree of it (never from libcst's). Then:

- a cut statement holds no finding: the screens, which never say no to a
  file the rule would flag, said no for the file where only that statement
  is whole, and the rule decides there as in the real file;
- a kept statement gets the same findings as in the real file;
- findings in a cut statement's header are dropped: it was screened out.

A def or class holding ``global`` is never stubbed: it binds module names.
A finding in module-level code passes every statement's screen, so such a
file is parsed whole for that rule.
"""

from __future__ import annotations

import ast
import copy
from bisect import bisect_left
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from torchlint.analysis.outline import Outline
from torchlint.rule import Rule
from torchlint.source import physical_lines

_STUBBABLE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# A body shorter than this is cheaper to parse than to cut from the text.
MIN_BODY_LINES = 4


@dataclass(frozen=True)
class Narrowed:
    """The text libcst parses instead of the file, and what it left out."""

    text: str
    stubbed: Tuple[Tuple[int, int], ...]  # first and last line of each cut statement

    def keeps(self, line: int) -> bool:
        """Is ``line`` (from 1) in a statement kept whole?"""
        return not any(first <= line <= last for first, last in self.stubbed)


def narrow(source: str, tree: ast.Module, rules: Sequence[Rule], outline: Optional[Outline] = None
           ) -> Optional[Narrowed]:
    """``source`` with the defs and classes no rule of ``rules`` can flag
    cut to their headers; None when nothing is cut. ``outline`` is the
    outline of ``tree``, if the caller has it."""
    if any(rule.whole_file for rule in rules):
        return None
    lines = physical_lines(source)
    statements = tree.body
    outline = outline if outline is not None else Outline(tree)
    stubs = _stubs(statements, outline)
    cuttable = [i for i in stubs if _cuttable(statements[i], lines)]
    if not cuttable:
        return None
    # Each statement is screened with every other def and class stubbed.
    outlined = [stubs.get(i, statement) for i, statement in enumerate(statements)]
    cut = []
    for index in cuttable:
        outlined[index] = statements[index]
        alone = Outline(ast.Module(body=outlined, type_ignores=[]), whole_file=outline)
        if not any(rule.may_match_tree(alone) for rule in rules):
            cut.append(index)
        outlined[index] = stubs[index]
    if not cut:
        return None
    for index in cut:
        _cut_body(statements[index], lines)
    return Narrowed("".join(lines), tuple((_first_line(statements[i]), _last_line(statements[i])) for i in cut))


def _stubs(statements: List[ast.stmt], outline: Outline) -> Dict[int, ast.stmt]:
    """Index -> stub (its header, ``pass`` for its body) of each top-level
    def and class without ``global``."""
    top_of = _TopLevel(statements)
    holding_global = {top_of(node) for node in outline.nodes(ast.Global)}
    stubs: Dict[int, ast.stmt] = {}
    for index, statement in enumerate(statements):
        if isinstance(statement, _STUBBABLE) and index not in holding_global:
            stub = copy.copy(statement)
            stub.body = [ast.Pass()]
            stubs[index] = stub
    return stubs


class _TopLevel:
    """The index of the top-level statement holding a node, from its line."""

    def __init__(self, statements: List[ast.stmt]) -> None:
        self._ends = [_last_line(statement) for statement in statements]

    def __call__(self, node: ast.AST) -> int:
        return bisect_left(self._ends, node.lineno)  # type: ignore[attr-defined]


def _cuttable(statement: ast.stmt, lines: List[str]) -> bool:
    """Is the body long enough, and on lines of its own (not after the colon)?"""
    first = statement.body[0]
    body_line = _first_line(first)
    return _last_line(statement) - body_line + 1 >= MIN_BODY_LINES and _indent(first, lines) is not None


def _cut_body(statement: ast.stmt, lines: List[str]) -> None:
    """Replace the body's lines by ``pass`` and blank lines, keeping line endings."""
    first = statement.body[0]
    body_line, indent = _first_line(first), _indent(first, lines)
    line = lines[body_line - 1]
    lines[body_line - 1] = line[:indent] + "pass" + _ending(line)
    for number in range(body_line, _last_line(statement)):
        lines[number] = _ending(lines[number])


def _first_line(statement: ast.stmt) -> int:
    """The line of the statement's first decorator, or of the statement
    (Python's tree places a decorated def at its ``def``)."""
    decorators = getattr(statement, "decorator_list", None)
    return decorators[0].lineno if decorators else statement.lineno


def _last_line(statement: ast.stmt) -> int:
    return statement.end_lineno or statement.lineno


def _indent(statement: ast.stmt, lines: List[str]) -> Optional[int]:
    """The indentation of the statement's first line, if the statement starts
    it (after the indentation, which is ASCII: ``col_offset`` counts UTF-8
    bytes); None when something precedes it there."""
    line = lines[_first_line(statement) - 1]
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
