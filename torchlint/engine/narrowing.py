"""Parse with libcst only the parts of a file that can hold findings.

A file that passes the screens usually holds one or two findings in a
thousand lines, and libcst's parse and torchlint's walk cost in proportion
to the whole file. So, when checking (not fixing), each top-level ``def`` and
``class`` is screened on its own: the active rules' outline screens are
asked about the file with every *other* def and class cut down to a stub.
A statement no rule accepts is cut in the text libcst parses too: its body
becomes an empty string literal over the same lines, so every line keeps
its number. In a
class some rule accepts, each method is screened the same way, with the
class's other methods stubbed.

A stub keeps the statement's header (decorators, name, parameters, bases).
Questions about the whole file ("does it import torch anywhere?") are
answered from the whole file's tree, by rules (``Resolver``) and screens
(``Outline.imports_from``) alike.

This is exact, not a heuristic, for rules that are *statement-local*
(``Rule.whole_file`` is False): what such a rule decides inside a top-level
statement depends only on that statement, on the rest of the module kept
verbatim (imports, assignments, ``if``/``try`` blocks: everything but defs and
classes), on the headers of other defs and classes, and on facts about the
whole file taken from Python's tree of it (never from libcst's); inside a
method, only on the method, its class's header and class-level code, and
the headers of the other methods. Then:

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

from torchlint.analysis.cutting import MIN_BODY_LINES, cut_body, cuttable, first_line, last_line  # noqa: F401
from torchlint.analysis.outline import Outline
from torchlint.core.source import SourceFile
from torchlint.rules.rule import Rule

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_STUBBABLE = (*_FUNCTIONS, ast.ClassDef)


@dataclass(frozen=True)
class Narrowed:
    """The text libcst parses instead of the file, and what it left out."""

    source: SourceFile
    stubbed: Tuple[Tuple[int, int], ...]  # first and last line of each cut statement

    def keeps(self, line: int) -> bool:
        """Is ``line`` (from 1) in a statement kept whole?"""
        return not any(first <= line <= last for first, last in self.stubbed)


def narrow(source: SourceFile, tree: ast.Module, rules: Sequence[Rule], outline: Optional[Outline] = None
           ) -> Optional[Narrowed]:
    """``source`` with the defs, classes and methods no rule of ``rules`` can
    flag cut to their headers; None when nothing is cut. ``outline`` is the
    outline of ``tree``, if the caller has it."""
    if any(rule.whole_file for rule in rules):
        return None
    lines = list(source.lines)  # cut in place below
    statements = tree.body
    outline = outline if outline is not None else Outline(tree)
    stubs = _stubs(statements, outline)
    # Each statement is screened with every other def and class stubbed.
    outlined = [stubs.get(i, statement) for i, statement in enumerate(statements)]
    if not stubs or _accepted(rules, outlined, outline):
        # A screen accepts the module with every def and class stubbed:
        # adding a body back only adds nodes, so it accepts each of them
        # too and nothing would be cut. Stopping here keeps narrowing
        # linear: screening every def with the rest of a large module
        # (thousands of module-level candidates) is quadratic.
        return None
    cut: List[ast.stmt] = []
    for index in stubs:
        statement = statements[index]
        if not cuttable(statement, lines):
            continue
        outlined[index] = statement
        if not _accepted(rules, outlined, outline):
            cut.append(statement)
        elif isinstance(statement, ast.ClassDef):
            cut.extend(_methods_to_cut(statement, index, outlined, rules, outline, lines))
        outlined[index] = stubs[index]
    if not cut:
        return None
    for statement in cut:
        cut_body(statement, lines)
    return Narrowed(SourceFile("".join(lines)), tuple((first_line(s), last_line(s)) for s in cut))


def _methods_to_cut(classdef: ast.ClassDef, index: int, outlined: List[ast.stmt], rules: Sequence[Rule],
                    outline: Outline, lines: List[str]) -> List[ast.stmt]:
    """The methods of a class that holds candidates which no rule accepts,
    screened one by one with the class's other methods stubbed: one level
    down, the same reasoning as for top-level statements (rules decide in a
    method from it, its class's header and class-level code, and the
    headers of the other methods)."""
    body = classdef.body
    methods = [k for k, member in enumerate(body) if isinstance(member, _FUNCTIONS)]
    shell = copy.copy(classdef)
    shell.body = [_stub(member) if k in methods else member for k, member in enumerate(body)]
    outlined[index] = shell
    cut = []
    for k in methods:
        if not cuttable(body[k], lines):
            continue
        stub, shell.body[k] = shell.body[k], body[k]
        if not _accepted(rules, outlined, outline):
            cut.append(body[k])
        shell.body[k] = stub
    return cut


def _accepted(rules: Sequence[Rule], statements: List[ast.stmt], outline: Outline) -> bool:
    """Does some rule's screen accept the module of ``statements``?"""
    alone = Outline(ast.Module(body=statements, type_ignores=[]), whole_file=outline)
    return any(rule.may_match_tree(alone) for rule in rules)


def _stubs(statements: List[ast.stmt], outline: Outline) -> Dict[int, ast.stmt]:
    """Index -> stub of each top-level def and class without ``global``."""
    top_of = _TopLevel(statements)
    holding_global = {top_of(node) for node in outline.nodes(ast.Global)}
    return {index: _stub(statement) for index, statement in enumerate(statements)
            if isinstance(statement, _STUBBABLE) and index not in holding_global}


def _stub(statement: ast.stmt) -> ast.stmt:
    """The statement's header, with ``pass`` for its body (for the screens)."""
    stub = copy.copy(statement)
    stub.body = [ast.Pass()]
    return stub


class _TopLevel:
    """The index of the top-level statement holding a node, from its line."""

    def __init__(self, statements: List[ast.stmt]) -> None:
        self._ends = [last_line(statement) for statement in statements]

    def __call__(self, node: ast.AST) -> int:
        return bisect_left(self._ends, node.lineno)  # type: ignore[attr-defined]
