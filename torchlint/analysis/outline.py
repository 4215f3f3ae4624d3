"""The second screen: an outline of a file from Python's own ``ast`` tree.

Every file is parsed with ``ast.parse`` anyway (for CPython's syntax
errors), and flake8 hands its plugins that tree. One cheap walk over it
files the nodes by type and the calls by callee name; rules then ask sharp
questions ("is there a call to ``softmax`` without ``dim=``?", "is any
``init.normal`` called?") before the expensive libcst analysis runs.

Like the textual screens, an outline question must never answer "no" when
the rule could flag the file: it sees no name resolution, no aliases
through assignments, no inference, so it only ever asks about the shapes
a finding must have.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, Iterator, List, Optional, Tuple, Type, TypeVar

N = TypeVar("N", bound=ast.AST)


class Outline:
    """Nodes of one module by type, and calls by the last name of their callee."""

    def __init__(self, tree: ast.AST) -> None:
        self.tree = tree
        self._by_type: Dict[type, List[ast.AST]] = {}
        self._calls_by_name: Optional[Dict[str, List[ast.Call]]] = None
        self._imported: Optional[List[Tuple[str, str, str]]] = None
        self._file(tree)

    def _file(self, tree: ast.AST) -> None:
        by_type = self._by_type
        stack = [tree]
        pop, push, extend = stack.pop, stack.append, stack.extend
        AST = ast.AST
        while stack:
            node = pop()
            kind = type(node)
            found = by_type.get(kind)
            if found is None:
                by_type[kind] = [node]
            else:
                found.append(node)
            for field in node._fields:
                value = getattr(node, field, None)
                if isinstance(value, list):
                    extend([item for item in value if isinstance(item, AST)])
                elif isinstance(value, AST):
                    push(value)

    def nodes(self, kind: Type[N]) -> List[N]:
        """Every node of exactly type ``kind`` (in no particular order)."""
        return self._by_type.get(kind, [])  # type: ignore[return-value]

    def calls(self, *names: str) -> List[ast.Call]:
        """Calls whose callee is spelled ``name`` or ``something.name``."""
        if self._calls_by_name is None:
            index: Dict[str, List[ast.Call]] = {}
            for call in self.nodes(ast.Call):
                name = callee_name(call.func)
                if name is not None:
                    index.setdefault(name, []).append(call)
            self._calls_by_name = index
        if len(names) == 1:
            return self._calls_by_name.get(names[0], [])
        return [call for name in names for call in self._calls_by_name.get(name, ())]

    def attributes(self, *names: str) -> Iterator[ast.Attribute]:
        wanted = set(names)
        return (node for node in self.nodes(ast.Attribute) if node.attr in wanted)

    def imported(self) -> List[Tuple[str, str, str]]:
        """``(module, name, bound_as)`` for every import: ``import a.b as c`` is
        ``("a.b", "", "c")``; ``from a import b as c`` is ``("a", "b", "c")``;
        relative imports keep their dots (``(".m", "b", "b")``)."""
        if self._imported is None:
            found: List[Tuple[str, str, str]] = []
            for node in self.nodes(ast.Import):
                for alias in node.names:
                    found.append((alias.name, "", alias.asname or alias.name.split(".")[0]))
            for node in self.nodes(ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for alias in node.names:
                    found.append((module, alias.name, alias.asname or alias.name))
            self._imported = found
        return self._imported

    def imports_from(self, *modules: str) -> bool:
        """Does any import name one of ``modules`` or a submodule of one?"""
        return any(
            module == m or module.startswith(m + ".") for module, _, _ in self.imported() for m in modules
        )

    def has_name(self, *ids: str) -> bool:
        wanted = set(ids)
        return any(node.id in wanted for node in self.nodes(ast.Name))


def callee_name(func: ast.AST) -> Optional[str]:
    """``f`` for ``f(...)`` and ``a.b.f(...)``; None for other callees."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def keyword_names(call: ast.Call) -> List[Optional[str]]:
    """The keywords a call spells (None for ``**kwargs``)."""
    return [k.arg for k in call.keywords]


def lacks_keyword(call: ast.Call, *names: str) -> bool:
    """True when the call does not spell one of ``names`` as a keyword
    (``**kwargs`` may supply it: rules decide that, the screen says yes)."""
    spelled = keyword_names(call)
    return any(name not in spelled for name in names)


def has_splat(call: ast.Call) -> bool:
    """``f(*args)`` or ``f(**kwargs)``: the arguments are not all visible."""
    return any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)


def dotted(node: ast.AST) -> Optional[str]:
    """``"a.b.c"`` for a dotted name, None otherwise."""
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def any_of(items: Iterable[object]) -> bool:
    for _ in items:
        return True
    return False
