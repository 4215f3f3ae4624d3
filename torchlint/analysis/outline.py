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


# --- helper A ---
# Which torch names a dotted expression can stand for, the way libcst's scope
# analysis qualifies it (``torchlint.analysis.names.Resolver.resolve``): only
# names bound by imports resolve, to the imported name plus the rest of the
# chain. ``import a.b.c`` binds ``a`` and qualifies ``a.x`` as itself;
# ``import a.b as X`` / ``from m import n as X`` qualify ``X.y`` as ``a.b.y`` /
# ``m.n.y``; relative imports lose their dots (``from .m import n``: ``m.n``),
# as in libcst. Every import of the file counts, whatever its scope, so the
# answer is a superset of what libcst resolves.


class Names:
    """A table of qualified names, prepared once (per rule) for outline questions."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = frozenset(names)
        self.last = frozenset(name.rsplit(".", 1)[-1] for name in self.names)
        # Modules of the names, for from-imports: "torch.nn.functional" -> {"upsample", ...}
        by_module: Dict[str, set] = {}
        for name in self.names:
            module, _, attr = name.rpartition(".")
            if module:
                by_module.setdefault(module, set()).add(attr)
        self.by_module = {module: frozenset(attrs) for module, attrs in by_module.items()}

    def __contains__(self, name: object) -> bool:
        return name in self.names


def import_bindings(outline: Outline) -> Dict[str, List[Optional[str]]]:
    """Local name -> what it stands for: an imported name, or None for
    ``import a.b`` binding ``a`` (a chain from it qualifies as itself)."""
    found = outline.__dict__.get("_a_bindings")
    if found is None:
        found = {}
        for node in outline.nodes(ast.Import):
            for alias in node.names:
                if alias.asname:
                    found.setdefault(alias.asname, []).append(alias.name)
                else:
                    found.setdefault(alias.name.split(".", 1)[0], []).append(None)
        for node in outline.nodes(ast.ImportFrom):
            module = node.module or ""
            for alias in node.names:
                if alias.name == "*":
                    continue
                real = f"{module}.{alias.name}" if module else alias.name
                found.setdefault(alias.asname or alias.name, []).append(real)
        outline.__dict__["_a_bindings"] = found
    return found


def qualified_names(outline: Outline, node: ast.AST) -> List[str]:
    """The imported names ``node`` (a dotted name) may stand for."""
    full = dotted(node)
    if full is None:
        return []
    bindings = import_bindings(outline).get(full.split(".", 1)[0])
    if not bindings:
        return []
    root, dot, rest = full.partition(".")
    return [full if real is None else real + dot + rest for real in bindings]


def resolves_to(outline: Outline, node: ast.AST, names: Names) -> bool:
    """May ``node`` be resolved to one of ``names`` through the file's imports?"""
    return any(q in names.names for q in qualified_names(outline, node))


def aliases_of(outline: Outline, names: Names) -> List[str]:
    """Local names imports bind directly to one of ``names`` (``from torch.nn
    import MSELoss as L2``: ``L2``), whose calls ``calls`` would not file under
    the table's last names."""
    return [
        local for local, reals in import_bindings(outline).items()
        if local not in names.last and any(real in names.names for real in reals if real is not None)
    ]


def calls_to(outline: Outline, names: Names) -> Iterator[ast.Call]:
    """Calls whose callee may resolve to one of ``names``."""
    for call in outline.calls(*names.last, *aliases_of(outline, names)):
        if resolves_to(outline, call.func, names):
            yield call


def attributes_named(outline: Outline, names: Iterable[str]) -> Iterator[ast.Attribute]:
    """Attribute nodes whose attribute is one of ``names`` (an index built once per file)."""
    index = outline.__dict__.get("_a_attributes")
    if index is None:
        index = {}
        for node in outline.nodes(ast.Attribute):
            index.setdefault(node.attr, []).append(node)
        outline.__dict__["_a_attributes"] = index
    for name in names:
        yield from index.get(name, ())


def references_to(outline: Outline, names: Names) -> bool:
    """Is one of ``names`` referenced the ways libcst resolves it: an attribute
    chain through an import (``F.upsample``), or a non-relative from-import
    (``from torch.nn.functional import upsample``)?"""
    return imports_name_from(outline, names) or any_of(
        node for node in attributes_named(outline, names.last) if resolves_to(outline, node, names)
    )


def imports_name_from(outline: Outline, names: Names) -> bool:
    """``from m import n`` (not relative) with ``m.n`` one of ``names``."""
    for node in outline.nodes(ast.ImportFrom):
        if node.level or not node.module:
            continue
        attrs = names.by_module.get(node.module)
        if attrs and any(alias.name in attrs for alias in node.names):
            return True
    return False


def is_none(node: ast.AST) -> bool:
    """The literal ``None``."""
    return isinstance(node, ast.Constant) and node.value is None


def may_hold_value(outline: Outline, expr: ast.AST) -> bool:
    """Can inference (``torchlint.analysis.inference``) know what ``expr`` holds?

    A dotted name (``torch.linalg``, ``self.data``) is known only through its
    root name's value, and only bindings as assignment, ``for``, ``with`` or
    walrus targets carry one (imports, parameters, definitions, ``except``
    names give an unknown value); so a chain whose root is never such a target
    in the file holds nothing known. Any other expression may.
    """
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return True
    stored = outline.__dict__.get("_a_stored")
    if stored is None:
        stored = {node.id for node in outline.nodes(ast.Name) if not isinstance(node.ctx, ast.Load)}
        outline.__dict__["_a_stored"] = stored
    return expr.id in stored
