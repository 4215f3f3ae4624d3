"""Name resolution: which torch object does an expression refer to?

Built on the scope analysis of ``scopes.py`` (libcst's model), so imports, aliases and shadowing are
handled the way Python binds names: ``import torch.nn.functional as F``,
``from torch.nn import init``, ``from torch.nn.functional import upsample``
all resolve, and a local ``class F`` does not.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Iterator, Mapping, Optional, Set

import libcst as cst
from torchlint.analysis.scopes import BUILTIN, IMPORT, Assignment, BaseAssignment, ImportAssignment, Scope


class Resolver:
    def __init__(self, scopes: Mapping[cst.CSTNode, Optional[Scope]]) -> None:
        self._scopes = scopes
        self._cache: Dict[int, FrozenSet[str]] = {}
        self._imports_cache: Dict[str, bool] = {}

    def scope_of(self, node: cst.CSTNode) -> Optional[Scope]:
        return self._scopes.get(node)

    def qualified_names(self, node: cst.CSTNode) -> FrozenSet[str]:
        """All names ``node`` may refer to, e.g. ``{'torch.nn.functional.relu'}``.

        Names bound locally (assignments, classes, functions) come back as
        their local spelling, so they never look like torch.
        """
        if not _is_dotted_name(node):
            # libcst would name a call ``f()`` after ``f``, and ``f(x).attr``
            # or ``f[0].attr`` after ``f.attr``.
            return frozenset()
        key = id(node)
        cached = self._cache.get(key)
        if cached is None:
            scope = self._scopes.get(node)
            names: Set[str] = set()
            if scope is not None:
                for qn in scope.get_qualified_names_for(node):
                    if qn.source in (IMPORT, BUILTIN):
                        names.add(qn.name)
                    else:
                        names.add("<local>." + qn.name)
            cached = frozenset(names)
            self._cache[key] = cached
        return cached

    def resolve(self, node: cst.CSTNode) -> Optional[str]:
        """The one imported name ``node`` refers to, or None if ambiguous or local."""
        names = self.qualified_names(node)
        if len(names) != 1:
            return None
        (name,) = names
        return None if name.startswith("<local>.") else name

    def resolve_torch(self, node: cst.CSTNode) -> Optional[str]:
        name = self.resolve(node)
        if name is not None and (name == "torch" or name.startswith("torch.")):
            return name
        return None

    def assignments(self, name: cst.Name) -> FrozenSet[BaseAssignment]:
        """The bindings a Name (load or store) may see in its scope."""
        scope = self._scopes.get(name)
        if scope is None or name.value not in scope:
            return frozenset()
        return frozenset(scope[name.value])

    def name_for_module(self, module: str, at: cst.CSTNode) -> Optional[str]:
        """How to spell ``module`` at ``at`` through a plain ``import``, if any.

        ``"torch"`` after ``import torch`` (or ``import torch.nn``), ``"th"``
        after ``import torch as th``; None when no such binding is visible.
        """
        scope = self._scopes.get(at)
        if scope is None:
            return None
        candidates = sorted(
            {a.name for a in _visible_assignments(scope) if isinstance(getattr(a, "node", None), cst.Import)},
            key=len,
        )
        for spelled in candidates:
            head = spelled.split(".", 1)[0]
            if not all(isinstance(a, ImportAssignment) for a in scope[head]):
                continue  # also rebound by an assignment somewhere: ambiguous
            if {qn.name for qn in scope.get_qualified_names_for(spelled)} == {module}:
                return spelled
        return None

    def imports(self, package: str) -> bool:
        """Does the file import ``package`` or one of its submodules anywhere?

        For rules about torch APIs whose method names other libraries share
        (``load_state_dict``): no torch import, no torch object to blame.
        """
        cached = self._imports_cache.get(package)
        if cached is None:
            cached = any(
                module == package or module.startswith(package + ".")
                for module in self._imported_modules()
            )
            self._imports_cache[package] = cached
        return cached

    def _imported_modules(self) -> Iterator[str]:
        seen: Set[int] = set()
        for scope in self._scopes.values():
            if scope is None or id(scope) in seen:
                continue
            seen.add(id(scope))
            for assignment in scope.assignments:
                if not isinstance(assignment, ImportAssignment):
                    continue
                node = assignment.node
                if isinstance(node, cst.Import):
                    for alias in node.names:
                        yield cst.helpers.get_full_name_for_node(alias.name) or ""
                elif isinstance(node, cst.ImportFrom) and not node.relative and node.module is not None:
                    yield cst.helpers.get_full_name_for_node(node.module) or ""

    def is_unbound(self, name: str, at: cst.CSTNode) -> bool:
        """True when ``name`` is bound nowhere in the file (safe to import it)."""
        scope = self._scopes.get(at)
        if scope is None:
            return False
        global_scope = scope.globals
        if name in global_scope.assignments:
            return False
        # A binding in any nested scope still counts: do not risk shadowing.
        return not any(name in child.assignments for child in _descendant_scopes(global_scope, self._scopes))


def _is_dotted_name(node: cst.CSTNode) -> bool:
    """``a`` or ``a.b.c``: a name, not an attribute of a call, subscript or literal."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def _visible_assignments(scope: Scope) -> Iterator[BaseAssignment]:
    """Assignments of ``scope`` and every enclosing scope."""
    current: Optional[Scope] = scope
    while current is not None:
        yield from current.assignments
        parent = current.parent
        current = None if parent is current else parent


def _descendant_scopes(global_scope: Scope, scopes: Mapping[cst.CSTNode, Optional[Scope]]):
    seen = set()
    for scope in scopes.values():
        if scope is not None and scope is not global_scope and id(scope) not in seen:
            seen.add(id(scope))
            yield scope


__all__ = ["Resolver", "Assignment", "ImportAssignment"]
