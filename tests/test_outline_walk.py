"""The outline's walk files every node Python's ``ast.walk`` finds, except
expression contexts and operators (which it leaves out for speed)."""

from __future__ import annotations

import ast
import sysconfig
import textwrap
from pathlib import Path

from torchlint.analysis.outline import Outline, names_in
from torchlint.engine.narrowing import outline_of_statements, statement_index

LEFT_OUT = (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)

SNIPPET = textwrap.dedent("""
    def f(a, /, b=1, *c, d, e=2, **g) -> int:
        global x
        lambda h, *, i=3: h if i else -h
        return {**g, 'k': [v async for v in w] if a else {u: u for u in b}}
    class C(B, metaclass=M):
        x: int = 1
    match p:
        case {"a": 1, **rest}: pass
        case Point(x=0) | [1, *others] as q if q: pass
        case None: pass
    with a as (b, c), d: del b[c:d:e], f.g
    try: pass
    except* E as e: raise X from e
    print(f"{a!r:>{w}}", not a < b <= c, a @ b, (y := 1))
""")


def _same_nodes(tree: ast.AST) -> bool:
    outline = Outline(tree)
    filed = sorted(id(node) for nodes in outline._by_type.values() for node in nodes)
    walked = sorted(id(node) for node in ast.walk(tree) if not isinstance(node, LEFT_OUT))
    return filed == walked and _ids(outline.names_not_loaded()) == _ids(_not_loaded(tree))


def _ids(nodes) -> list:
    return sorted(id(node) for node in nodes)


def _not_loaded(tree: ast.AST) -> list:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)]


def test_every_kind_of_node_is_filed():
    assert _same_nodes(ast.parse(SNIPPET))


def test_the_standard_library_is_filed_completely():
    checked = 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py"))[::7]:
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue  # CPython's deliberately invalid test files
        assert _same_nodes(tree), path
        checked += 1
    assert checked > 500


def test_an_outline_assembled_from_statements_sets_aside_the_same_names():
    # Narrowing assembles outlines from each statement's nodes, without a walk.
    tree = ast.parse(SNIPPET + "del z\nfor k, (l, m) in n: pass\n")
    assembled = outline_of_statements(tree, [statement_index(s) for s in tree.body])
    assert _ids(assembled.names_not_loaded()) == _ids(_not_loaded(tree))
    for outline in (assembled, Outline(tree)):
        assert names_in(outline, ast.Store) == {"b", "c", "u", "v", "x", "y", "k", "l", "m"}
        assert names_in(outline, ast.Del) == {"z"}
        assert {"a", "g", "n", "w"} <= names_in(outline, ast.Load)
