"""Where findings are: line and column of libcst nodes, computed cheaply.

libcst's PositionProvider generates the code of the whole module, recording
every node's place (and its metadata wrapper then walks the whole tree once
more for nothing). A file with one finding needs one position. Python's own
tree (parsed anyway) says on which line each top-level statement starts, so
only the top-level statements holding findings are generated (in a
top-level class, only the methods holding them), and their relative
positions shifted to that line. The shift is checked: the
generated statement must be, character for character, the source text at
that place; on any mismatch the whole module is generated as before, so the
answer is always libcst's.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import libcst as cst
from libcst.metadata.position_provider import (
    PositionProvider,
    PositionProvidingCodegenState,
)

from torchlint.core.source import SourceFile

Position = Tuple[int, int]  # line (from 1), column (from 0)
Range = Tuple[Position, Position]  # start and end (the end column is exclusive)


def positions(module: cst.Module, nodes: Iterable[cst.CSTNode], source: Optional[SourceFile] = None,
              tree: Optional[ast.Module] = None,
              top_of: Optional[Mapping[cst.CSTNode, cst.CSTNode]] = None) -> Dict[cst.CSTNode, Position]:
    """The start of each node of ``nodes`` (libcst's syntactic position).

    ``source`` is the module's text, ``tree`` Python's tree of it and
    ``top_of`` maps nodes to their top-level statement; without them the
    whole module is generated.
    """
    found = Locator(module, source, tree, top_of).ranges(nodes)
    return {node: start for node, (start, _) in found.items()}


class Locator:
    """Ranges of nodes of one module, generating each top-level statement
    that holds one at most once (see the module's docstring), or the whole
    module once when a statement's text does not line up with the source.
    Given ``method_of`` (node -> the method of a top-level class holding it),
    a node in a method is placed by generating that method alone: a large
    class holds most of a file."""

    def __init__(self, module: cst.Module, source: Optional[SourceFile] = None, tree: Optional[ast.Module] = None,
                 top_of: Optional[Mapping[cst.CSTNode, cst.CSTNode]] = None,
                 method_of: Optional[Mapping[cst.CSTNode, cst.CSTNode]] = None,
                 line_holding: Optional[Callable[[cst.CSTNode], Optional[cst.SimpleStatementLine]]] = None) -> None:
        self.module = module
        self.source = source
        self.top_of = top_of
        self._tree = tree
        self.method_of = method_of
        # node -> the statement line holding it, if known: a node in a def is
        # then placed by generating that line alone (a loss function of a
        # hundred statements is otherwise generated whole for one finding).
        self.line_holding = line_holding
        self._python_members: Dict[int, Optional[List[ast.stmt]]] = {}
        self._lines: Dict[int, Optional[Tuple[int, Mapping]]] = {}  # id of a statement line -> as ``_generated``
        # id of a definition -> Python's line (and indents) of each statement line in it
        self._line_tables: Dict[int, Dict[int, Tuple[int, Tuple[str, ...]]]] = {}
        self._python: Optional[List[ast.stmt]] = None  # Python's statement for each of libcst's top-level ones
        self._line_starts: Optional[List[int]] = None
        self._index: Optional[Dict[int, int]] = None
        # statement index, or (statement index, member index) -> (line offset, ranges); None: no match
        self._generated: Dict[object, Optional[Tuple[int, Mapping]]] = {}
        self._whole: Optional[Mapping] = None
        self._by_statement = source is not None and tree is not None and top_of is not None

    def ranges(self, nodes: Iterable[cst.CSTNode]) -> Dict[cst.CSTNode, Range]:
        nodes = list(nodes)
        if self._by_statement:
            found: Dict[cst.CSTNode, Range] = {}
            for node in nodes:
                place = self._statement_range(node)
                if place is None:
                    self._by_statement = False  # the answer must be libcst's: generate the module
                    break
                found[node] = place
            else:
                return found
        if self._whole is None:
            self._whole, _ = _generate(self.module, self.module)
        return {node: _range(self._whole[node], 0) for node in nodes}

    def range(self, node: cst.CSTNode) -> Optional[Range]:
        """The range of ``node``; None if it is not in the module."""
        try:
            return self.ranges([node])[node]
        except KeyError:
            return None

    def _statement_range(self, node: cst.CSTNode) -> Optional[Range]:
        module, source = self.module, self.source
        assert source is not None and self.top_of is not None and self._tree is not None
        if self._index is None:
            self._python = _first_statements(module.body, self._tree.body)
            if self._python is None:
                return None
            self._line_starts = source.line_starts
            self._index = {id(statement): i for i, statement in enumerate(module.body)}
        statement = self.top_of.get(node)
        i = self._index.get(id(statement)) if statement is not None else None
        if i is None or self._python is None:
            return None
        place = self._member_range(node, statement, i)  # type: ignore[arg-type]
        if place is not None:
            return place
        if isinstance(statement, _DEFINITIONS):
            place = self._line_range(node, statement, self._python[i], ())
            if place is not None:
                return place
        if i not in self._generated:
            self._generated[i] = self._placed(statement, self._python[i].lineno)  # type: ignore[arg-type]
        return _placed_range(self._generated[i], node)

    def _member_range(self, node: cst.CSTNode, statement: cst.CSTNode, i: int) -> Optional[Range]:
        """``node``'s range from its method alone, when it is in a method of the
        top-level class ``statement`` and that method's text lines up."""
        if self.method_of is None or not isinstance(statement, cst.ClassDef):
            return None
        method = self.method_of.get(node)
        if method is None or not isinstance(statement.body, cst.IndentedBlock):
            return None
        members = statement.body.body
        k = next((k for k, member in enumerate(members) if member is method), None)
        if k is None:
            return None
        if i not in self._python_members:
            python_class = self._python[i]  # type: ignore[index]
            self._python_members[i] = _first_statements(members, getattr(python_class, "body", []))
        python = self._python_members[i]
        indent = self._indent_of(statement.body)
        if python is not None:
            place = self._line_range(node, method, python[k], (indent,))
            if place is not None:
                return place
        key = (i, k)
        if key not in self._generated:
            self._generated[key] = None if python is None else self._placed(method, python[k].lineno, (indent,))
        return _placed_range(self._generated[key], node)

    def _line_range(self, node: cst.CSTNode, definition: cst.CSTNode, python: ast.stmt,
                    indents: Tuple[str, ...]) -> Optional[Range]:
        """``node``'s range from the statement line holding it alone, when that
        line is in ``definition`` (whose twin in Python's tree is ``python``,
        inside blocks indented by ``indents``) and its text lines up."""
        line = self.line_holding(node) if self.line_holding is not None else None
        if line is None:
            return None
        if id(line) not in self._lines:
            table = self._line_tables.get(id(definition))
            if table is None:
                # Every line of the definition at once: looked for one finding at a
                # time, each search re-paired the blocks (n findings in a def: n²).
                table = self._line_tables[id(definition)] = {}
                _find_lines(table, definition, python, indents, self._indent_of)
            found = table.get(id(line))
            self._lines[id(line)] = None if found is None else self._placed(line, found[0], found[1])
        return _placed_range(self._lines[id(line)], node)

    def _indent_of(self, block: cst.BaseSuite) -> str:
        return block.indent if getattr(block, "indent", None) is not None else self.module.default_indent

    def _placed(self, statement: cst.CSTNode, line: int, indents: Sequence[str] = ()) -> Optional[Tuple[int, Mapping]]:
        """The ranges of ``statement`` (generated inside blocks indented by
        ``indents``), shifted so it starts on Python's ``line`` for it; None
        unless its code (leading comments included) is the source's, right there."""
        assert self.source is not None and self._line_starts is not None
        ranges, code = _generate(statement, self.module, indents)
        offset = line - ranges[statement].start.line
        starts, text, newline = self._line_starts, self.source.text, self.module.default_newline
        if offset < 0 or offset >= len(starts):
            return None
        start = starts[offset]
        if text.startswith(code, start):
            return offset, ranges
        # The file's last statement: the module, not the statement, leaves the final newline out.
        if code.endswith(newline) and len(text) == start + len(code) - len(newline) and text.endswith(
                code[: -len(newline)]):
            return offset, ranges
        return None


def _placed_range(placed: Optional[Tuple[int, Mapping]], node: cst.CSTNode) -> Optional[Range]:
    if placed is None:
        return None
    offset, ranges = placed
    place = ranges.get(node)
    return None if place is None else _range(place, offset)


def _range(place, offset: int) -> Range:
    return (place.start.line + offset, place.start.column), (place.end.line + offset, place.end.column)


def _first_statements(statements: Sequence[cst.CSTNode], python: Sequence[ast.stmt]) -> Optional[List[ast.stmt]]:
    """Python's statement for each of libcst's ``statements`` (the first, for a
    line of several ``;``-separated ones), from Python's ``python`` of the same
    block; None when they do not pair up. Python places a def or class at its
    ``def``/``class`` line, not its decorators: as libcst does."""
    found: List[ast.stmt] = []
    remaining = iter(python)
    for statement in statements:
        count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        first = next(remaining, None)
        if first is None:
            return None
        for _ in range(count - 1):
            if next(remaining, None) is None:
                return None
        found.append(first)
    if next(remaining, None) is not None:
        return None
    return found


def _find_lines(table: Dict[int, Tuple[int, Tuple[str, ...]]], statement: cst.CSTNode, python: ast.stmt,
                indents: Tuple[str, ...], indent_of: Callable[[cst.BaseSuite], str]) -> None:
    """Python's line for each statement line inside ``statement`` (whose twin
    in Python's tree is ``python``), and the indentation of the blocks around
    it, into ``table`` (by id). A block whose statements do not pair up with
    Python's (each block's statements are paired as ``_first_statements``
    pairs them, so the line found is the twin's) ends the statement's search:
    its lines and those of its later blocks are left out."""
    for block, python_block in _blocks(statement, python):
        if not isinstance(block, cst.IndentedBlock):
            continue  # ``if x: y`` on one line: the whole definition is generated
        twins = _first_statements(block.body, python_block)
        if twins is None:
            return
        inner = (*indents, indent_of(block))
        for child, twin in zip(block.body, twins):
            table.setdefault(id(child), (twin.lineno, inner))
            if not isinstance(child, cst.SimpleStatementLine):
                _find_lines(table, child, twin, inner, indent_of)
    orelse = getattr(statement, "orelse", None)
    if isinstance(orelse, cst.If) and isinstance(python, ast.If) and len(python.orelse) == 1 \
            and isinstance(python.orelse[0], ast.If):
        # ``elif``: an ``if`` as the ``else`` of both trees, at the same indentation
        _find_lines(table, orelse, python.orelse[0], indents, indent_of)


def _blocks(statement: cst.CSTNode, python: ast.stmt) -> List[Tuple[cst.BaseSuite, Sequence[ast.stmt]]]:
    """The blocks of a compound statement, each with its twin's statements in
    Python's tree (an ``elif`` is no block: ``_find_line`` follows it)."""
    kind = type(statement)
    if kind in _DEFINITIONS or kind is cst.With:
        return [(statement.body, python.body)]  # type: ignore[attr-defined]
    blocks = []
    if kind in (cst.If, cst.For, cst.While):
        blocks.append((statement.body, python.body))  # type: ignore[attr-defined]
        orelse = statement.orelse  # type: ignore[attr-defined]
        if isinstance(orelse, cst.Else):
            blocks.append((orelse.body, python.orelse))  # type: ignore[attr-defined]
    elif kind is cst.Try and isinstance(python, ast.Try) and len(statement.handlers) == len(python.handlers):
        blocks.append((statement.body, python.body))
        blocks.extend((handler.body, twin.body) for handler, twin in zip(statement.handlers, python.handlers))
        if statement.orelse is not None:
            blocks.append((statement.orelse.body, python.orelse))
        if statement.finalbody is not None:
            blocks.append((statement.finalbody.body, python.finalbody))
    return blocks


_DEFINITIONS = (cst.FunctionDef, cst.ClassDef)


def _generate(node: cst.CSTNode, module: cst.Module, indents: Sequence[str] = (),
              ) -> Tuple[Mapping[cst.CSTNode, "cst.metadata.CodeRange"], str]:
    """Positions of ``node`` and everything in it, as if ``node`` started the
    file (inside blocks indented by ``indents``: a class's member, a statement
    of a def); and its code."""
    provider = PositionProvider()
    provider._computed = {}
    state = PositionProvidingCodegenState(
        default_indent=module.default_indent, default_newline=module.default_newline, provider=provider)
    for indent in indents:
        state.increase_indent(indent)
    node._codegen(state)
    return provider._computed, "".join(state.tokens)
