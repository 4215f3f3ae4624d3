"""Name resolution: which torch object does an expression refer to?

Built on the scope analysis of ``scopes.py`` (libcst's model), so imports, aliases and shadowing are
handled the way Python binds names: ``import torch.nn.functional as F``,
``from torch.nn import init``, ``from torch.nn.functional import upsample``
all resolve, and a local ``class F`` does not.
"""

from __future__ import annotations

from typing import Callable, Dict, FrozenSet, Iterator, Mapping, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis.outline import Outline, bound_names, deleted_names
from torchlint.analysis.scopes import (
    BUILTIN,
    IMPORT,
    Assignment,
    BaseAssignment,
    FunctionScope,
    ImportAssignment,
    Scope,
    StarImportAssignment,
)
from torchlint.analysis.scopes import release as release_scopes
from torchlint.knowledge.torch_api import is_torch_name


class Resolver:
    """Names of one file: ``scopes`` from libcst's tree of it, and facts about
    the whole file from the outline of Python's tree of it (``whole_file``
    makes it when first asked), which still holds what checking leaves out
    of libcst's (``narrowing.py``)."""

    def __init__(self, scopes: Mapping[cst.CSTNode, Optional[Scope]], whole_file: Callable[[], Outline]) -> None:
        self._scopes = scopes
        self._outline_of_file = whole_file
        self._outline: Optional[Outline] = None
        self._cache: Dict[int, FrozenSet[str]] = {}
        self._frozen: Dict[Tuple[int, int], Tuple[object, FrozenSet[BaseAssignment]]] = {}

    def file_outline(self) -> Outline:
        """The outline of Python's tree of the whole file."""
        if self._outline is None:
            self._outline = self._outline_of_file()
        return self._outline

    def scope_of(self, node: cst.CSTNode) -> Optional[Scope]:
        return self._scopes.get(node)

    def release(self) -> None:
        """Free the scopes (``scopes.release``): nothing asks this resolver again."""
        release_scopes(self._scopes)
        self._scopes = {}
        self._cache.clear()
        self._frozen.clear()

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
        if name is not None and is_torch_name(name):
            return name
        return None

    def assignments(self, name: cst.Name) -> FrozenSet[BaseAssignment]:
        """The bindings a Name (load or store) may see in its scope."""
        scope = self._scopes.get(name)
        if scope is None or name.value not in scope:
            return frozenset()
        bindings = scope[name.value]
        # One frozen copy per set of bindings, not one per read: a name bound
        # n times and read n times made n² copies. (The length tells a set
        # that grew since: builtins are added as they are first asked for.)
        key = (id(bindings), len(bindings))
        frozen = self._frozen.get(key)
        if frozen is None or frozen[0] is not bindings:
            frozen = self._frozen[key] = (bindings, frozenset(bindings))
        return frozen[1]

    def private_local(self, name: cst.Name) -> bool:
        """Is ``name`` a variable of a def that only the def's own statements bind (not a
        global, not one a closure rebinds with ``nonlocal``)? A call made in the def then
        cannot change what the name holds."""
        scope = self._scopes.get(name)
        assignments = self.assignments(name)
        return isinstance(scope, FunctionScope) and bool(assignments) and all(
            a.scope is scope and self._scopes.get(getattr(a, "node", None)) is scope for a in assignments)

    def name_for_module(self, module: str, at: cst.CSTNode) -> Optional[str]:
        """How to spell ``module`` at ``at`` through a plain ``import``, if any.

        ``"torch"`` after ``import torch`` (or ``import torch.nn``), ``"th"``
        after ``import torch as th``; None when no such binding is visible,
        or when the name is deleted (``del torch``) anywhere in the file: the
        import may no longer be bound where a fix would use it.
        """
        scope = self._scopes.get(at)
        if scope is None:
            return None
        deleted = deleted_names(self.file_outline())
        candidates = sorted(
            {a.name for a in _visible_assignments(scope)
             if isinstance(getattr(a, "node", None), cst.Import) or isinstance(a, StarImportAssignment)},
            key=len,
        )
        runs_in, index = scope.runs_at(at)
        for spelled in candidates:
            head = spelled.split(".", 1)[0]
            if head in deleted:
                continue
            if index is not None and not any(a.scope is not runs_in or a.index < index for a in scope[spelled]):
                continue  # imported further down the code that runs ``at``: not bound yet there
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
        return self.file_outline().imports_from(package)

    def is_unbound(self, name: str, at: cst.CSTNode) -> bool:
        """True when ``name`` is bound nowhere in the file, in no scope (safe
        to import it: a binding anywhere risks shadowing, and a ``del`` of it
        anywhere may unbind the import)."""
        if self._scopes.get(at) is None:
            return False
        outline = self.file_outline()
        return name not in bound_names(outline) and name not in deleted_names(outline)


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


__all__ = ["Resolver", "Assignment", "ImportAssignment"]
