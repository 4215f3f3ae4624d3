"""The outline's walk files every node Python's ``ast.walk`` finds, except
expression contexts and operators (which it leaves out for speed)."""

from __future__ import annotations

import ast
import sysconfig
import textwrap
from pathlib import Path

from torchlint.analysis.outline import Outline, names_in
from torchlint.core.census import CALLED_RESULT, index_attributes, index_calls, index_keywords, take_census
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


def _index_shape(attributes, calls, keywords) -> tuple:
    """The indexes as comparable data: node ids per key, in order."""
    return ({name: [id(n) for n in nodes] for name, nodes in attributes.by_name.items()},
            {name: [id(n) for n in nodes] for name, nodes in attributes.on_name.items()},
            [id(n) for n in attributes.on_attribute], {name: [id(n) for n in nodes] for name, nodes in attributes.stored.items()},
            {name: [id(n) for n in nodes] for name, nodes in calls.items()},
            {name: [id(n) for n in nodes] for name, nodes in keywords.items()})


def _walk_indexes_match(tree: ast.AST) -> bool:
    census = take_census(tree)
    attributes = census.by_type.get(ast.Attribute, [])
    calls = census.by_type.get(ast.Call, [])
    keywords = census.by_type.get(ast.keyword, [])
    return _index_shape(census.attributes, census.calls, census.keywords) == _index_shape(
        index_attributes(attributes), index_calls(calls), index_keywords(keywords))


def test_the_walk_files_attributes_and_calls_as_the_indexes_made_from_lists_do():
    # The census files them as it meets them; an outline assembled from
    # statements (narrowing) makes the same indexes from its lists.
    tree = ast.parse(SNIPPET + "torch.nn.functional.relu(x).y.z(w)\nf()(g)\na.b, c.d = e.f\n")
    assert _walk_indexes_match(tree)
    index = take_census(tree).attributes
    assert [node.attr for node in index.on_name["torch"]] == ["nn"]
    assert [node.attr for node in index.on_attribute] == ["z", "relu", "functional"]  # a node before those under it
    assert list(index.stored) == ["d", "b"]  # not ``f.g``, deleted, nor ``e.f``, read
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py"))[::19]:
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        assert _walk_indexes_match(tree), path


def test_an_assembled_outline_indexes_attributes_and_calls_like_a_walked_one():
    tree = ast.parse(SNIPPET + "import torch\ntorch.nn.functional.relu(x)\ndef h():\n    return torch.cat(y, dim=0)\nf()(g)\nf(**kw)\n")
    assembled = outline_of_statements(tree, [statement_index(s) for s in tree.body])
    walked = Outline(tree)
    for outline in (assembled, walked):
        assert sorted(outline.attribute_index().by_name) == ["cat", "functional", "g", "nn", "relu"]
        assert [call.func.attr for call in outline.calls("cat")] == ["cat"]
        assert [ast.unparse(call) for call in outline.calls(CALLED_RESULT)] == ["f()(g)"]
        assert [ast.unparse(node) for node in outline.keywords("dim", "metaclass")] == ["dim=0", "metaclass=M"]
        assert None in outline.spelled_keywords()  # ``{**g}`` is no keyword; ``f(**kw)`` is
        assert {node.attr for node in outline.attribute_index().on_name["torch"]} == {"nn", "cat"}
