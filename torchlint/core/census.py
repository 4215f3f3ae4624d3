"""The one walk over Python's tree of a file: its nodes by type.

Checking a file asks many questions of its tree ("which calls are there?",
"is there a ``yield`` outside a statement?"); each would cost a walk over
every node. One walk, made right after the parse (``SourceFile.census``),
files every node under its type, and the questions read those lists: the
compiler checks of ``source.python_tree`` and the screens' ``Outline``.

The walk also files attributes, calls and keyword arguments by name. A
large file's tree does not fit in the processor's cache: a node is cheap
to read while the walk is at it (the parse laid the tree out in the order
the walk goes), and several times dearer in a later pass over one type's
nodes, which misses the cache at nearly every node.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

NodeIndex = Dict[type, List[ast.AST]]


class Census:
    """Every node of a tree under its exact type, and the names stored or deleted.

    Attributes and calls are also filed by name as the walk meets them, while
    their nodes are in the processor's cache: a later pass over a large
    file's thousands of attributes misses it at nearly every node, and costs
    several times the walk's share of them (``index_attributes`` and
    ``index_calls`` make the same indexes from a list of nodes, in the same order)."""

    __slots__ = ("by_type", "not_loaded", "attributes", "calls", "keywords")

    def __init__(self, by_type: NodeIndex, not_loaded: List[ast.Name],
                 attributes: "Optional[AttributeIndex]" = None, calls: "Optional[Dict[str, List[ast.Call]]]" = None,
                 keywords: "Optional[KeywordIndex]" = None) -> None:
        self.by_type = by_type
        self.not_loaded = not_loaded
        self.attributes = attributes if attributes is not None else index_attributes(
            by_type.get(ast.Attribute, []))  # type: ignore[arg-type]
        self.calls = calls if calls is not None else index_calls(by_type.get(ast.Call, []))  # type: ignore[arg-type]
        self.keywords = keywords if keywords is not None else index_keywords(
            by_type.get(ast.keyword, []))  # type: ignore[arg-type]

    def count(self, *kinds: type) -> int:
        by_type = self.by_type
        return sum(len(by_type.get(kind, ())) for kind in kinds)


class AttributeIndex:
    """A file's attribute nodes (``a.b``) by their name (``b``), those on a
    plain name by that name (``a``), those on another attribute (``a.b.c``),
    and those assigned (``a.b = c``) by their name, each list in the walk's
    order: a node before the nodes under it."""

    __slots__ = ("by_name", "on_name", "on_attribute", "stored")

    def __init__(self) -> None:
        self.by_name: Dict[str, List[ast.Attribute]] = {}
        self.on_name: Dict[str, List[ast.Attribute]] = {}
        self.on_attribute: List[ast.Attribute] = []
        self.stored: Dict[str, List[ast.Attribute]] = {}


def index_attributes(nodes: Iterable[ast.Attribute]) -> AttributeIndex:
    """The ``AttributeIndex`` of ``nodes``, taken in their order."""
    index = AttributeIndex()
    by_name, on_name, on_attribute = index.by_name, index.on_name, index.on_attribute
    for node in nodes:
        by_name.setdefault(node.attr, []).append(node)
        if node.ctx.__class__ is ast.Store:
            index.stored.setdefault(node.attr, []).append(node)
        value = node.value
        if value.__class__ is ast.Name:
            on_name.setdefault(value.id, []).append(node)  # type: ignore[attr-defined]
        elif value.__class__ is ast.Attribute:
            on_attribute.append(node)
    return index


# Keyword arguments by the keyword they spell (None: ``**kwargs``).
KeywordIndex = Dict[Optional[str], List[ast.keyword]]


def index_keywords(nodes: Iterable[ast.keyword]) -> KeywordIndex:
    index: KeywordIndex = {}
    for node in nodes:
        index.setdefault(node.arg, []).append(node)
    return index


# The key calls of a call's result (``f(x)(y)``) are filed under: no name is spelled so.
CALLED_RESULT = "()"


def index_calls(nodes: Iterable[ast.Call]) -> Dict[str, List[ast.Call]]:
    """Calls by their callee's name: ``f`` for ``f(...)`` and ``a.b.f(...)``;
    ``CALLED_RESULT`` for ``f(...)(...)``."""
    index: Dict[str, List[ast.Call]] = {}
    for node in nodes:
        func = node.func
        kind = func.__class__
        name = (func.attr if kind is ast.Attribute else func.id if kind is ast.Name  # type: ignore[attr-defined]
                else CALLED_RESULT if kind is ast.Call else None)
        if name is not None:
            index.setdefault(name, []).append(node)
    return index


def take_census(tree: ast.AST) -> Census:
    """Walk ``tree`` once (contexts and operators left out, see below)."""
    by_type: NodeIndex = {}
    stack = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    fields_of = _CHILD_FIELDS
    # Names and constants are half of all nodes and have no children to visit.
    names, constants = by_type.setdefault(ast.Name, []), by_type.setdefault(ast.Constant, [])
    attributes, calls = by_type.setdefault(ast.Attribute, []), by_type.setdefault(ast.Call, [])
    attribute_index = AttributeIndex()
    by_attr, on_name, on_attribute = attribute_index.by_name, attribute_index.on_name, attribute_index.on_attribute
    attributes_stored = attribute_index.stored
    by_callee: Dict[str, List[ast.Call]] = {}
    keywords, by_keyword = by_type.setdefault(ast.keyword, []), {}  # type: ignore[var-annotated]
    # Most names are read; the few bound or deleted are asked about far more often.
    not_loaded: List[ast.Name] = []
    Name, Constant, Load, Store, Attribute, Call = ast.Name, ast.Constant, ast.Load, ast.Store, ast.Attribute, ast.Call
    keyword = ast.keyword
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
        if kind is Attribute:  # filed as ``index_attributes`` files them
            attributes.append(node)
            found = by_attr.get(node.attr)  # type: ignore[attr-defined]
            if found is None:
                by_attr[node.attr] = [node]  # type: ignore[attr-defined]
            else:
                found.append(node)
            if node.ctx.__class__ is Store:  # type: ignore[attr-defined]
                attributes_stored.setdefault(node.attr, []).append(node)  # type: ignore[attr-defined]
            value = node.value  # type: ignore[attr-defined]
            if value.__class__ is Name:
                found = on_name.get(value.id)
                if found is None:
                    on_name[value.id] = [node]
                else:
                    found.append(node)
            elif value.__class__ is Attribute:
                on_attribute.append(node)
            push(value)
            continue
        if kind is Call:  # filed as ``index_calls`` files them
            calls.append(node)
            func = node.func  # type: ignore[attr-defined]
            callee = (func.attr if func.__class__ is Attribute else func.id if func.__class__ is Name
                      else CALLED_RESULT if func.__class__ is Call else None)
            if callee is not None:
                found = by_callee.get(callee)
                if found is None:
                    by_callee[callee] = [node]
                else:
                    found.append(node)
            push(func)
            extend(node.args)  # type: ignore[attr-defined]
            extend(node.keywords)  # type: ignore[attr-defined]
            continue
        if kind is keyword:  # filed as ``index_keywords`` files them
            keywords.append(node)
            found = by_keyword.get(node.arg)  # type: ignore[attr-defined]
            if found is None:
                by_keyword[node.arg] = [node]  # type: ignore[attr-defined]
            else:
                found.append(node)
            push(node.value)  # type: ignore[attr-defined]
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
    for kind in (ast.Attribute, ast.Call, ast.keyword):
        if not by_type[kind]:
            del by_type[kind]  # an absent type has no list, as for every other type
    return Census(by_type, not_loaded, attribute_index, by_callee, by_keyword)


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
