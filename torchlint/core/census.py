"""The one walk over Python's tree of a file: its nodes by type.

Checking a file asks many questions of its tree ("which calls are there?",
"is there a ``yield`` outside a statement?"); each would cost a walk over
every node. One walk, made right after the parse (``SourceFile.census``),
files every node under its type, and the questions read those lists: the
compiler checks of ``source.python_tree`` and the screens' ``Outline``.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, Iterator, List, Tuple

NodeIndex = Dict[type, List[ast.AST]]


class Census:
    """Every node of a tree under its exact type, and the names stored or deleted."""

    __slots__ = ("by_type", "not_loaded")

    def __init__(self, by_type: NodeIndex, not_loaded: List[ast.Name]) -> None:
        self.by_type = by_type
        self.not_loaded = not_loaded

    def count(self, *kinds: type) -> int:
        by_type = self.by_type
        return sum(len(by_type.get(kind, ())) for kind in kinds)


def take_census(tree: ast.AST) -> Census:
    """Walk ``tree`` once (contexts and operators left out, see below)."""
    by_type: NodeIndex = {}
    stack = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    fields_of = _CHILD_FIELDS
    # Names and constants are half of all nodes and have no children to visit.
    names, constants = by_type.setdefault(ast.Name, []), by_type.setdefault(ast.Constant, [])
    # Most names are read; the few bound or deleted are asked about far more often.
    not_loaded: List[ast.Name] = []
    Name, Constant, Load = ast.Name, ast.Constant, ast.Load
    while stack:
        node = pop()
        kind = type(node)
        if kind is Name:
            names.append(node)
            if node.ctx.__class__ is not Load:  # type: ignore[attr-defined]
                not_loaded.append(node)  # type: ignore[arg-type]
            continue
        if kind is Constant:
            constants.append(node)
            continue
        found = by_type.get(kind)
        if found is None:
            by_type[kind] = [node]
        else:
            found.append(node)
        fields = fields_of.get(kind)
        if fields is None:
            fields = fields_of[kind] = _child_fields(kind)
        for field, how in fields:
            value = getattr(node, field, None)
            if value is None:
                continue
            if how == ONE:
                push(value)
            elif how == MANY:
                extend(value)
            else:
                extend([item for item in value if item is not None])
    return Census(by_type, not_loaded)


# Per node type: (field, how it holds nodes) for the fields that hold nodes:
# ONE (a node or None), MANY (a list of nodes), SOME (a list with Nones).
# Left out: expression contexts and operators (no rule asks for them; they
# are a third of all nodes) and fields holding names, numbers or constants.
ONE, MANY, SOME = 0, 1, 2
_CHILD_FIELDS: Dict[type, Tuple[Tuple[str, int], ...]] = {}
_NOT_CHILDREN = {
    "ctx", "op", "ops", "type_ignores", "id", "attr", "arg", "name", "asname", "module", "level", "type_comment",
    "kind", "conversion", "is_async", "simple", "tag", "rest", "kwd_attrs",
}
_LIST_FIELDS = {
    "body", "orelse", "finalbody", "handlers", "decorator_list", "targets", "elts", "values", "args",
    "keywords", "names", "generators", "ifs", "comparators", "bases", "items", "cases", "patterns", "kwd_patterns",
    "posonlyargs", "kwonlyargs", "defaults", "type_params", "dims",
}
_LISTS_WITH_NONE = {"keys", "kw_defaults"}  # ``{**d}`` has a None key; keyword-only args without defaults
_SINGLE_HERE = {  # list-sounding fields that hold one node in these types
    (ast.Lambda, "body"), (ast.IfExp, "body"), (ast.IfExp, "orelse"),
    (ast.FunctionDef, "args"), (ast.AsyncFunctionDef, "args"), (ast.Lambda, "args"),
}


def _child_fields(kind: type) -> Tuple[Tuple[str, int], ...]:
    fields = []
    for field in kind._fields:
        if field in _NOT_CHILDREN:
            continue
        if field == "value" and kind in (ast.Constant, ast.MatchSingleton):
            continue  # a Python value, not a node
        if field == "names" and kind in (ast.Global, ast.Nonlocal):
            continue  # plain strings
        if (kind, field) in _SINGLE_HERE:
            fields.append((field, ONE))
        else:
            fields.append((field, SOME if field in _LISTS_WITH_NONE else MANY if field in _LIST_FIELDS else ONE))
    return tuple(fields)


def child_nodes(nodes: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """The children of ``nodes`` (contexts and operators left out), as the outline walks them.

    ``take_census`` repeats this loop inline: it runs once per node of every
    file, where a generator per node would cost more than the walk itself."""
    fields_of = _CHILD_FIELDS
    for node in nodes:
        kind = type(node)
        fields = fields_of.get(kind)
        if fields is None:
            fields = fields_of[kind] = _child_fields(kind)
        for field, how in fields:
            value = getattr(node, field, None)
            if value is None:
                continue
            if how == ONE:
                yield value
            elif how == MANY:
                yield from value
            else:
                yield from (item for item in value if item is not None)
