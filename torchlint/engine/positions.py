"""Where findings are: line and column of libcst nodes, computed cheaply.

libcst's PositionProvider generates the code of the whole module, recording
every node's place (and its metadata wrapper then walks the whole tree once
more for nothing). A file with one finding needs one position. Python's own
tree (parsed anyway) says on which line each top-level statement starts, so
only the top-level statements holding findings are generated, and their
relative positions shifted to that line. The shift is checked: the
generated statement must be, character for character, the source text at
that place; on any mismatch the whole module is generated as before, so the
answer is always libcst's.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Mapping, Optional, Tuple

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
    module once when a statement's text does not line up with the source."""

    def __init__(self, module: cst.Module, source: Optional[SourceFile] = None, tree: Optional[ast.Module] = None,
                 top_of: Optional[Mapping[cst.CSTNode, cst.CSTNode]] = None) -> None:
        self.module = module
        self.source = source
        self.top_of = top_of
        self._tree = tree
        self._first_lines: Optional[List[int]] = None
        self._line_starts: Optional[List[int]] = None
        self._index: Optional[Dict[int, int]] = None
        self._generated: Dict[int, Tuple[int, Mapping]] = {}  # statement index -> (line offset, ranges)
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
            self._first_lines = _first_lines(module, self._tree)
            if self._first_lines is None:
                return None
            self._line_starts = source.line_starts
            self._index = {id(statement): i for i, statement in enumerate(module.body)}
        statement = self.top_of.get(node)
        i = self._index.get(id(statement)) if statement is not None else None
        if i is None or self._first_lines is None or self._line_starts is None:
            return None
        if i not in self._generated:
            ranges, code = _generate(statement, module)
            # Shifted so the statement starts on Python's line for it; then its
            # code (leading comments included) must be the source's, right there.
            offset = self._first_lines[i] - ranges[statement].start.line
            if i == len(module.body) - 1 and not module.has_trailing_newline and code.endswith(module.default_newline):
                code = code[: -len(module.default_newline)]  # the module, not the statement, leaves it out
            if offset < 0 or offset >= len(self._line_starts) or not source.text.startswith(code, self._line_starts[offset]):
                return None
            self._generated[i] = (offset, ranges)
        offset, ranges = self._generated[i]
        place = ranges.get(node)
        return None if place is None else _range(place, offset)


def _range(place, offset: int) -> Range:
    return (place.start.line + offset, place.start.column), (place.end.line + offset, place.end.column)


def _first_lines(module: cst.Module, tree: ast.Module) -> Optional[List[int]]:
    """Python's line of each of libcst's top-level statements (``def``/``class``, not decorators: as libcst)."""
    lines: List[int] = []
    python = iter(tree.body)
    for statement in module.body:
        count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        first = next(python, None)
        if first is None:
            return None
        for _ in range(count - 1):
            if next(python, None) is None:
                return None
        lines.append(first.lineno)
    if next(python, None) is not None:
        return None
    return lines


def _generate(node: cst.CSTNode, module: cst.Module) -> Tuple[Mapping[cst.CSTNode, "cst.metadata.CodeRange"], str]:
    """Positions of ``node`` and everything in it, as if ``node`` started the file; and its code."""
    provider = PositionProvider()
    provider._computed = {}
    state = PositionProvidingCodegenState(
        default_indent=module.default_indent, default_newline=module.default_newline, provider=provider)
    node._codegen(state)
    return provider._computed, "".join(state.tokens)
