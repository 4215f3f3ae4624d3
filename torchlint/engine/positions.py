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


def positions(module: cst.Module, nodes: Iterable[cst.CSTNode], source: Optional[SourceFile] = None,
              tree: Optional[ast.Module] = None,
              top_of: Optional[Mapping[cst.CSTNode, cst.CSTNode]] = None) -> Dict[cst.CSTNode, Position]:
    """The start of each node of ``nodes`` (libcst's syntactic position).

    ``source`` is the module's text, ``tree`` Python's tree of it and
    ``top_of`` maps nodes to their top-level statement; without them the
    whole module is generated.
    """
    nodes = list(nodes)
    if source is not None and tree is not None and top_of is not None:
        found = _by_statement(module, nodes, source, tree, top_of)
        if found is not None:
            return found
    ranges, _ = _generate(module, module)
    return {node: (ranges[node].start.line, ranges[node].start.column) for node in nodes}


def _by_statement(module: cst.Module, nodes: List[cst.CSTNode], source: SourceFile, tree: ast.Module,
                  top_of: Mapping[cst.CSTNode, cst.CSTNode]) -> Optional[Dict[cst.CSTNode, Position]]:
    first_lines = _first_lines(module, tree)
    if first_lines is None:
        return None
    line_starts = source.line_starts
    index = {id(statement): i for i, statement in enumerate(module.body)}
    generated: Dict[int, Tuple[int, Mapping]] = {}  # statement index -> (line offset, ranges)
    found: Dict[cst.CSTNode, Position] = {}
    for node in nodes:
        statement = top_of.get(node)
        i = index.get(id(statement)) if statement is not None else None
        if i is None:
            return None
        if i not in generated:
            ranges, code = _generate(statement, module)
            # Shifted so the statement starts on Python's line for it; then its
            # code (leading comments included) must be the source's, right there.
            offset = first_lines[i] - ranges[statement].start.line
            if i == len(module.body) - 1 and not module.has_trailing_newline and code.endswith(module.default_newline):
                code = code[: -len(module.default_newline)]  # the module, not the statement, leaves it out
            if offset < 0 or offset >= len(line_starts) or not source.text.startswith(code, line_starts[offset]):
                return None
            generated[i] = (offset, ranges)
        offset, ranges = generated[i]
        place = ranges.get(node)
        if place is None:
            return None
        found[node] = (place.start.line + offset, place.start.column)
    return found


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
