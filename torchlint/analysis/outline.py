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
import builtins
import functools
from typing import (
    AbstractSet,
    Callable,
    Container,
    Dict,
    FrozenSet,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Set,
    Tuple,
    Type,
    TypeVar,
)

from torchlint.core.census import (
    AttributeIndex,
    Census,
    KeywordIndex,
    child_nodes,
    index_attributes,
    index_calls,
    index_keywords,
    take_census,
)

N = TypeVar("N", bound=ast.AST)
T = TypeVar("T")


class Outline:
    """Nodes of one module by type, and calls by the last name of their callee."""

    def __init__(self, tree: ast.AST, whole_file: Optional["Outline"] = None,
                 star_exports: Optional[Callable[[str], Optional[Mapping[str, str]]]] = None,
                 function_classes: Optional[Callable[[str], FrozenSet[str]]] = None,
                 census: Optional[Census] = None,
                 call_may_give_tensor: Optional[Callable[[str], bool]] = None) -> None:
        self.tree = tree
        # The walk of ``tree`` Python's parse already made (``SourceFile.census``), if given.
        self._census = census
        # When ``tree`` is part of a file (``narrowing.py``), the outline of
        # the whole file, which answers the questions about the whole file.
        self._whole_file = whole_file
        # What ``from m import *`` binds (the project model's answer, by the
        # module as spelled), or None when unknown.
        self.star_exports = star_exports if whole_file is None else whole_file.star_exports
        # The autograd Function classes of a project module, by the module as
        # spelled in an import (the project model's answer; TL111's screen).
        self.function_classes = function_classes if whole_file is None else whole_file.function_classes
        # May calling the def or class an import names (as spelled: ".utils.f") give a
        # tensor, or a container inference may find one in? The project model's answer.
        self.call_may_give_tensor = call_may_give_tensor if whole_file is None else whole_file.call_may_give_tensor
        self._by_type: Dict[type, List[ast.AST]] = {}
        self._calls_by_name: Optional[Dict[str, List[ast.Call]]] = None
        self._attribute_index: Optional[AttributeIndex] = None
        self._keyword_index: Optional[KeywordIndex] = None
        self._imported: Optional[List[Tuple[str, str, str]]] = None
        self._facts: Dict[str, object] = {}  # see ``memo``
        self._names_not_loaded: List[ast.Name] = []  # stored or deleted, see ``names_in``
        self._file(tree)

    def _file(self, tree: ast.AST) -> None:
        """Index the nodes by type: from the file's census, or a walk of ``tree``."""
        census = self._census if self._census is not None else take_census(tree)
        self._by_type, self._names_not_loaded = census.by_type, census.not_loaded
        self._calls_by_name, self._attribute_index = census.calls, census.attributes
        self._keyword_index = census.keywords

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """A fact about this outline, computed once (``key`` names it)."""
        facts = self._facts
        if key not in facts:
            facts[key] = compute()
        return facts[key]  # type: ignore[return-value]

    def names_not_loaded(self) -> List[ast.Name]:
        """The names stored or deleted (the walk sets them aside)."""
        return self._names_not_loaded

    def nodes(self, kind: Type[N]) -> List[N]:
        """Every node of exactly type ``kind`` (in no particular order)."""
        return self._by_type.get(kind, [])  # type: ignore[return-value]

    def calls(self, *names: str) -> List[ast.Call]:
        """Calls whose callee is spelled ``name`` or ``something.name``."""
        if self._calls_by_name is None:  # an outline given its nodes, not a census
            self._calls_by_name = index_calls(self.nodes(ast.Call))
        if len(names) == 1:
            return self._calls_by_name.get(names[0], [])
        return [call for name in names for call in self._calls_by_name.get(name, ())]

    def attribute_index(self) -> AttributeIndex:
        """The attributes by name, by the plain name they are on, and those on attributes (``census.py``)."""
        if self._attribute_index is None:  # an outline given its nodes, not a census
            self._attribute_index = index_attributes(self.nodes(ast.Attribute))
        return self._attribute_index

    def calls_named(self, names: AbstractSet[str]) -> List[ast.Call]:
        """``calls(*names)`` for a rule's table of names, met with the few callee names of the file."""
        self.calls()
        index = self._calls_by_name
        return [call for name in index.keys() & names for call in index[name]]  # type: ignore[union-attr]

    def keywords(self, *names: str) -> List[ast.keyword]:
        """The keyword arguments spelling one of ``names`` (``f(dim=1)``: ``dim``)."""
        if self._keyword_index is None:  # an outline given its nodes, not a census
            self._keyword_index = index_keywords(self.nodes(ast.keyword))
        index = self._keyword_index
        return [node for name in names for node in index.get(name, ())]

    def spelled_keywords(self) -> Iterable[Optional[str]]:
        """Every keyword the file's calls spell, once (None: ``**kwargs``)."""
        self.keywords()
        return self._keyword_index.keys()  # type: ignore[union-attr]

    def attributes(self, *names: str) -> Iterator[ast.Attribute]:
        """Attribute nodes named one of ``names`` (``x.cuda``: ``cuda``), by name."""
        by_name = self.attribute_index().by_name
        return (node for name in names for node in by_name.get(name, ()))

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

    @property
    def whole_file(self) -> "Outline":
        """The outline of the whole file: this one, unless it outlines a part
        of it. A rule that decides from a fact about the whole file (read
        from ``Resolver.file_outline``) asks its screen about the same fact here."""
        return self._whole_file if self._whole_file is not None else self

    def imports_from(self, *modules: str) -> bool:
        """Does any import of the file name one of ``modules`` or a submodule of one?"""
        if self._whole_file is not None:
            return self._whole_file.imports_from(*modules)
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


def returned_values(function: ast.AST) -> List[ast.AST]:
    """The values ``function``'s own ``return`` statements give (not those of defs nested in it)."""
    found: List[ast.AST] = []
    pending = list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            found.append(node.value)
        pending.extend(ast.iter_child_nodes(node))
    return found


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


# --- names through imports ---
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

    def compute() -> Dict[str, List[Optional[str]]]:
        found: Dict[str, List[Optional[str]]] = {}
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
                    for name, target in star_bindings(outline, "." * node.level + module).items():
                        found.setdefault(name, []).append(target)
                    continue
                real = f"{module}.{alias.name}" if module else alias.name
                found.setdefault(alias.asname or alias.name, []).append(real)
        return found

    return outline.memo("import bindings", compute)


def star_bindings(outline: Outline, module: str) -> Mapping[str, str]:
    """What ``from module import *`` binds that the file needs: the names it
    reads but binds nowhere else and that are not builtins (only those can
    come from the star import). Asking the project model costs reading the
    module, so a file that needs nothing from it never asks."""
    free = free_names(outline)
    if not free or outline.star_exports is None:
        return {}
    exports = outline.star_exports(module) or {}
    return {name: target for name, target in exports.items() if name in free}


def names_in(outline: Outline, context: type) -> FrozenSet[str]:
    """The ids of the file's names in ``context`` (``ast.Load``, ``ast.Store``
    or ``ast.Del``), found once per file. The walk set aside the names not
    read: the stored and deleted ones come from those few, and only a
    question about reads (star imports) goes over every name."""
    def compute() -> FrozenSet[str]:
        names = outline.nodes(ast.Name) if context is ast.Load else outline.names_not_loaded()
        return frozenset(node.id for node in names if node.ctx.__class__ is context)

    return outline.memo(f"names in {context.__name__}", compute)  # type: ignore[return-value]


def free_names(outline: Outline) -> FrozenSet[str]:
    """Names the file reads but never binds itself, builtins aside."""
    whole = outline.whole_file

    def compute() -> FrozenSet[str]:
        return names_in(whole, ast.Load) - _plain_bound_names(whole) - _BUILTIN_NAMES

    return whole.memo("free_names", compute)


_BUILTIN_NAMES = frozenset(dir(builtins)) | {"__file__", "__name__", "__path__", "__spec__", "__loader__"}


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
    known: Dict[Names, List[str]] = outline.memo("aliases", dict)  # asked by several screens per table
    found = known.get(names)
    if found is None:
        binders = _binders(outline)
        found = known[names] = [local for real in sorted(binders.keys() & names.names) for local in binders[real]
                                if local not in names.last]  # sorted: set order changes from run to run
    return found


def _binders(outline: Outline) -> Dict[str, List[str]]:
    """Imported name -> the local names an import binds to it (``from torch.nn
    import MSELoss as L2``: ``torch.nn.MSELoss`` -> ``["L2"]``; ``import torch``:
    ``torch`` -> ``["torch"]``, as ``bindings`` spells it): each rule's table
    is met with the file's few imports, not the other way round."""
    def compute() -> Dict[str, List[str]]:
        found: Dict[str, List[str]] = {}
        for local, reals in bindings(outline).items():
            for real in reals:
                found.setdefault(real, []).append(local)
        return found

    return outline.memo("binders", compute)


def keyword_arguments(outline: Outline) -> FrozenSet[str]:
    """The keywords spelled in the file's calls (``f(dim=1)``: ``dim``): a
    screen for a keyword asks this set before finding the calls."""
    return outline.memo("keyword arguments", lambda: frozenset(
        name for name in outline.spelled_keywords() if name is not None))


def calls_to(outline: Outline, names: Names, where: Optional[Callable[[ast.Call], bool]] = None,
             ) -> Iterator[ast.Call]:
    """Calls whose callee may resolve to one of ``names`` (and, given
    ``where``, for which it holds: asked first, as it is meant to be the
    cheaper test; a screen passes what its finding needs of the arguments)."""
    aliases = aliases_of(outline, names)
    for call in outline.calls_named(names.last) + (outline.calls(*aliases) if aliases else []):
        if (where is None or where(call)) and resolves_to(outline, call.func, names):
            yield call


def attributes_named(outline: Outline, names: Iterable[str]) -> Iterator[ast.Attribute]:
    """Attribute nodes whose attribute is one of ``names`` (an index built once per file)."""
    index = _attributes_by_name(outline)
    for name in names:
        yield from index.get(name, ())


def attribute_names(outline: Outline) -> Iterable[str]:
    """The names spelled after a dot in the file (``x.shape``: ``shape``), each once."""
    return _attributes_by_name(outline).keys()


def _attributes_by_name(outline: Outline) -> Dict[str, List[ast.Attribute]]:
    return outline.attribute_index().by_name


def references_to(outline: Outline, names: Names) -> bool:
    """Is one of ``names`` referenced the ways libcst resolves it: an attribute
    chain through an import (``F.upsample``), or a non-relative from-import
    (``from torch.nn.functional import upsample``)?"""
    return any_of(references(outline, names))


def references(outline: Outline, names: Names) -> Iterator[ast.AST]:
    """The references ``references_to`` looks for: the from-imports first, then the attribute chains."""
    yield from imports_of_names(outline, names)
    for node in attributes_named(outline, names.last):
        if resolves_to(outline, node, names):
            yield node


def imports_of_names(outline: Outline, names: Names) -> Iterator[ast.ImportFrom]:
    """Every ``from m import n`` (not relative) with ``m.n`` one of ``names``."""
    for node in outline.nodes(ast.ImportFrom):
        if node.level or not node.module:
            continue
        attrs = names.by_module.get(node.module)
        if attrs and any(alias.name in attrs for alias in node.names):
            yield node


def uses_of_imported(outline: Outline, node: ast.ImportFrom) -> Iterator[ast.AST]:
    """Where the names ``node`` binds may be used: every plain name spelled
    like one of them, and every string holding one (a string annotation)."""
    bound = {alias.asname or alias.name for alias in node.names}
    for name in outline.nodes(ast.Name):
        if name.id in bound:
            yield name
    for constant in outline.nodes(ast.Constant):
        if isinstance(constant.value, str) and any(b in constant.value for b in bound):
            yield constant


def is_none(node: ast.AST) -> bool:
    """The literal ``None``."""
    return isinstance(node, ast.Constant) and node.value is None


def parameters_from_calls(outline: "Outline") -> Dict[str, FrozenSet[str]]:
    """The top-level defs of the file whose parameters take their values from the
    file's own calls (inference's ``call_site_value``) -> their parameters' names.

    Those calls are all there are when the def is called in the file, its name is
    never read but as a callee (never passed on, stored or decorated away), it is
    defined once, and the module runs as a script (a top-level ``if __name__ ==
    "__main__":``) or the name is private: other modules do not call it."""
    whole = outline.whole_file
    return whole.memo("parameters from calls", lambda: _parameters_from_calls(whole))


def _parameters_from_calls(outline: "Outline") -> Dict[str, FrozenSet[str]]:
    tree = outline.tree
    script = any(isinstance(s, ast.If) and _is_main_test(s.test) for s in tree.body)
    defs = {s.name: s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
            and (script or (s.name.startswith("_") and not s.name.startswith("__")))}
    if not defs:
        return {}
    # From the file's census (its nodes by type), not another walk of the tree.
    callees = {id(node.func) for node in outline.nodes(ast.Call)}
    reads: Dict[str, List[ast.Name]] = {}
    for node in outline.nodes(ast.Name):
        if node.id in defs:
            reads.setdefault(node.id, []).append(node)
    for node in outline.names_not_loaded():
        if isinstance(node, ast.Name) and node.id in defs:
            reads.setdefault(node.id, []).append(node)
    definitions: Dict[str, int] = {}
    for kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        for node in outline.nodes(kind):
            if node.name in defs:
                definitions[node.name] = definitions.get(node.name, 0) + 1
    return {name: frozenset(a.arg for a in (*s.args.posonlyargs, *s.args.args, *s.args.kwonlyargs))
            for name, s in defs.items()
            if definitions.get(name) == 1 and not s.decorator_list and reads.get(name)
            and all(id(node) in callees and isinstance(node.ctx, ast.Load) for node in reads[name])}


def differentiated_callees(outline: "Outline") -> FrozenSet[Tuple[Optional[str], str]]:
    """The callees whose results the file differentiates with no gradient, from
    the whole file's tree (a narrowed text may have cut the train loop that says
    so): ``(None, f)`` for ``loss = f(...)`` then ``loss.backward()`` in a
    top-level def, ``f`` (or ``m.f``: ``m``) bound nowhere in it; ``(C, attr)`` for ``loss =
    self.attr(...)`` then ``loss.backward()`` in a method of the top-level class ``C``."""
    whole = outline.whole_file
    if not whole.attribute_index().by_name.get("backward"):
        return frozenset()  # most modules differentiate nothing: no walk of every def
    return whole.memo("differentiated callees", lambda: _differentiated_callees(whole.tree))


def _differentiated_callees(tree: ast.Module) -> FrozenSet[Tuple[Optional[str], str]]:
    found: Set[Tuple[Optional[str], str]] = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.update(_callees_differentiated_in(statement, None))
        elif isinstance(statement, ast.ClassDef):
            for method in statement.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found.update(_callees_differentiated_in(method, statement))
    return frozenset(found)


def _callees_differentiated_in(function: ast.AST, classdef: Optional[ast.ClassDef]) -> Set[Tuple[Optional[str], str]]:
    """The callees (global names and attribute chains on them, or in a method
    ``self``'s attributes) whose result ``function`` differentiates: ``name =
    callee(...)`` is the last statement binding ``name`` before ``name.backward()``
    (no gradient) in the same block (``loss = loss / n`` in between differentiates
    a quotient, which says nothing of the callee's shape)."""
    bound: Set[str] = {a.arg for a in ast.walk(getattr(function, "args")) if isinstance(a, ast.arg)}
    backwards: List[Tuple[List[ast.stmt], int, str]] = []  # (block, index of the statement, receiver)
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        for block in _blocks_of(node):
            for index, statement in enumerate(block):
                receiver = _backward_receiver(statement)
                if receiver is not None:
                    backwards.append((block, index, receiver))
    this = _first_parameter(function) if classdef is not None else None
    found: Set[Tuple[Optional[str], str]] = set()
    for block, index, receiver in backwards:
        func = _last_call_bound(block[:index], receiver)
        if func is None:
            continue
        if (this is not None and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id == this):
            found.add((classdef.name, func.attr))  # type: ignore[union-attr]
            continue
        spelled = dotted(func)
        if spelled is not None and spelled.split(".")[0] not in bound:
            found.add((None, spelled))
    return found


def _blocks_of(node: ast.AST) -> Iterator[List[ast.stmt]]:
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for handler in getattr(node, "handlers", ()) or ():
        yield handler.body


def _backward_receiver(statement: ast.stmt) -> Optional[str]:
    """``name`` of a statement ``name.backward()`` with no gradient."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "backward"
            and isinstance(call.func.value, ast.Name) and not call.args
            and all(k.arg is not None and k.arg != "gradient" for k in call.keywords)):
        return call.func.value.id
    return None


def _last_call_bound(before: List[ast.stmt], name: str) -> Optional[ast.expr]:
    """The callee of ``name = callee(...)`` when that is the last of ``before`` to bind ``name``."""
    for statement in reversed(before):
        if not any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                   for n in ast.walk(statement)):
            continue
        if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Call)):
            return statement.value.func
        return None
    return None


def _first_parameter(function: ast.AST) -> Optional[str]:
    arguments = getattr(function, "args", None)
    positional = [*arguments.posonlyargs, *arguments.args] if arguments is not None else []
    decorated = any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                    for d in getattr(function, "decorator_list", ()))
    return positional[0].arg if positional and not decorated else None


def _is_main_test(test: ast.expr) -> bool:
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def may_hold_value(outline: Outline, expr: ast.AST) -> bool:
    """Can inference (``torchlint.analysis.inference``) know what ``expr`` holds?

    A dotted name (``torch.linalg``, ``self.data``) is known only through its
    root name, and only assignment-like targets carry a value, besides a
    method's ``self`` (an instance of its class), a parameter proved a
    tensor by ``isinstance`` or ``.backward()`` (``evidence_names``) and one
    of a def whose calls are all in the file (``parameters_from_calls``); imports,
    definitions, other parameters and builtins give none. So a chain whose
    root is no such name holds nothing known. Any other expression may.
    """
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return True
    return expr.id in outline.memo("names holding values", lambda: (
        names_in(outline, ast.Store) | names_in(outline, ast.Del)
        | evidence_names(outline) | self_names(outline)
        | {name for names in parameters_from_calls(outline).values() for name in names}))


# --- the same, as sets of qualified names, and facts about local names ---
# "May this expression resolve to torch.load?" is a dotted expression whose
# first name some import binds (one table: ``import_bindings``). Results are
# memoised on the outline.


def bindings(outline: Outline) -> Dict[str, Tuple[str, ...]]:
    """Local name -> the qualified names imports bind it to: ``import
    torch.nn as nn`` gives ``nn -> torch.nn``, ``import torch.nn`` gives
    ``torch -> torch``, ``from torch.nn import functional as F`` gives
    ``F -> torch.nn.functional`` (a name bound twice keeps both). The same
    table as ``import_bindings``, spelled out."""
    return outline.memo("bindings", lambda: {  # type: ignore[return-value]
        name: tuple(dict.fromkeys(name if real is None else real for real in reals))
        for name, reals in import_bindings(outline).items()})


def resolved_names(outline: Outline, expr: ast.AST) -> Tuple[str, ...]:
    """What a dotted expression may resolve to through the file's imports
    (``F.softmax`` -> ``torch.nn.functional.softmax`` after ``import
    torch.nn.functional as F``); empty when no import binds its first name."""
    return tuple(dict.fromkeys(qualified_names(outline, expr)))


def may_resolve_to(outline: Outline, expr: ast.AST, wanted: "FrozenSet[str] | Iterable[str]") -> bool:
    return any(name in wanted for name in resolved_names(outline, expr))


def calls_resolving_to(outline: Outline, qualified: Iterable[str]) -> List[ast.Call]:
    """Calls whose callee may resolve to one of ``qualified`` (aliases
    included: ``from torch.nn.functional import softmax as sm``)."""
    wanted = frozenset(qualified)
    found = bindings(outline)
    if not found:
        return []
    tails = _tails(wanted)
    binders = _binders(outline)
    aliases = {local for real in binders.keys() & wanted for local in binders[real]} - tails  # a set, as before
    found_calls = outline.calls_named(tails) + (outline.calls(*aliases) if aliases else [])
    return [call for call in found_calls if may_resolve_to(outline, call.func, wanted)]


@functools.lru_cache(maxsize=64)
def _tails(qualified: FrozenSet[str]) -> FrozenSet[str]:
    """The last parts of ``qualified`` (a rule's table, asked for every file)."""
    return frozenset(name.rsplit(".", 1)[-1] for name in qualified)


def calls_matching(outline: Outline, tail: Callable[[str], bool], qualified: Callable[[str], bool]) -> List[ast.Call]:
    """Calls whose callee may resolve to a name for which ``qualified`` holds;
    ``tail`` must hold for the last part of every such name (a cheap filter)."""
    found = bindings(outline)
    if not found:
        return []
    aliases = {bound for bound, names in found.items() if any(qualified(n) for n in names)}
    outline.calls("")  # files the calls by callee name
    index = outline._calls_by_name or {}
    result = []
    for name, calls in index.items():
        if tail(name) or name in aliases:
            result.extend(call for call in calls if any(qualified(n) for n in resolved_names(outline, call.func)))
    return result


def stored_names(outline: Outline) -> FrozenSet[str]:
    """Every name the file assigns somewhere (a Name in a store context)."""
    return names_in(outline, ast.Store)


def _plain_bound_names(outline: Outline) -> FrozenSet[str]:
    """Every name the file binds, in any scope: what the scope analysis
    (``scopes.py``, as libcst) records as assignments. Targets of assignments,
    ``for``, ``with``, walrus and comprehensions, ``except ... as``, imports
    (``import a.b`` binds ``a`` and ``a.b``), defs, classes, parameters and
    type parameters; not ``del`` targets, star imports or match captures."""

    def compute() -> FrozenSet[str]:
        found = set(stored_names(outline))
        for node in outline.nodes(ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name
                found.update(bound.rsplit(".", dots)[0] for dots in range(bound.count(".") + 1))
        for node in outline.nodes(ast.ImportFrom):
            found.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
        for kind in _NAMED_BINDERS:
            found.update(node.name for node in outline.nodes(kind) if node.name)  # type: ignore[attr-defined]
        found.update(node.arg for node in outline.nodes(ast.arg))
        found.update(node.name.id for node in outline.nodes(getattr(ast, "TypeAlias", _Never)))
        return frozenset(found)

    return outline.memo("plain_bound_names", compute)  # type: ignore[return-value]


def bound_names(outline: Outline) -> FrozenSet[str]:
    """``_plain_bound_names``, and what star imports bind that the file reads
    (the project model's answer: ``star_bindings``)."""
    def compute() -> FrozenSet[str]:
        found = set(_plain_bound_names(outline))
        for node in outline.nodes(ast.ImportFrom):
            if any(alias.name == "*" for alias in node.names):
                found.update(star_bindings(outline, "." * node.level + (node.module or "")))
        return frozenset(found)

    return outline.memo("bound_names", compute)


def deleted_names(outline: Outline) -> FrozenSet[str]:
    """Every plain name a ``del`` statement removes (or a ``match`` pattern binds), in any scope.

    The scope analysis, like libcst's, is not flow-sensitive: after
    ``del torch`` it still sees the import. A fix must never introduce a
    reference to such a name (it may be unbound where the fix puts it)."""

    def compute() -> FrozenSet[str]:
        deleted = {target.id for node in outline.nodes(ast.Delete) for target in node.targets
                   if isinstance(target, ast.Name)}
        # A ``match`` statement's capture patterns (``case torch:``) bind names the scope
        # analysis does not see: after one, the name may no longer be the import either.
        for kind in _CAPTURE_PATTERNS:
            deleted.update(node.name for node in outline.nodes(kind) if getattr(node, "name", None))
        if _MATCH_MAPPING is not None:
            deleted.update(node.rest for node in outline.nodes(_MATCH_MAPPING) if node.rest)
        return frozenset(deleted)

    return outline.memo("deleted_names", compute)  # type: ignore[return-value]


# Patterns binding a name (Python 3.10+): ``case x:``, ``case [*rest]:``, ``case {**rest}``.
_CAPTURE_PATTERNS = tuple(getattr(ast, name) for name in ("MatchAs", "MatchStar") if hasattr(ast, name))
_MATCH_MAPPING = getattr(ast, "MatchMapping", None)


class _Never(ast.AST):
    """A node type no tree holds (``ast.TypeAlias`` before Python 3.12)."""


_NAMED_BINDERS = tuple(getattr(ast, kind) for kind in (
    "FunctionDef", "AsyncFunctionDef", "ClassDef", "ExceptHandler", "TypeVar", "ParamSpec", "TypeVarTuple")
    if hasattr(ast, kind))


def _ranges(outline: Outline, key: str, nodes: Callable[[], Iterable[ast.AST]]) -> List[Tuple[int, int]]:
    return outline.memo(key, lambda: sorted(  # type: ignore[return-value]
        (node.lineno, getattr(node, "end_lineno", None) or 10 ** 9) for node in nodes()))


def _within(line: int, ranges: List[Tuple[int, int]]) -> bool:
    for start, end in ranges:
        if start > line:
            return False
        if line <= end:
            return True
    return False


def in_loop(outline: Outline, node: ast.AST) -> bool:
    """Is ``node`` on a line of some ``for``/``while`` statement (header or body)?"""
    loops = _ranges(outline, "loops", lambda: [
        *outline.nodes(ast.For), *outline.nodes(ast.AsyncFor), *outline.nodes(ast.While)])
    return _within(node.lineno, loops)


def in_function_named(outline: Outline, node: ast.AST, name: str) -> bool:
    """Is ``node`` on a line of some ``def name(...)``?"""
    functions = _ranges(outline, "def " + name, lambda: [
        f for kind in (ast.FunctionDef, ast.AsyncFunctionDef) for f in outline.nodes(kind) if f.name == name])
    return _within(node.lineno, functions)


def leading_positional(call: ast.Call) -> int:
    """Positional arguments before the first ``*args``: those whose position is certain."""
    count = 0
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            break
        count += 1
    return count


def keyword_value(call: ast.Call, name: str) -> Optional[ast.AST]:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


def is_literal(node: Optional[ast.AST], *values: object) -> bool:
    """A literal equal, and of the same type, to one of ``values`` (``False`` is not ``0``)."""
    return isinstance(node, ast.Constant) and any(
        type(node.value) is type(v) and node.value == v for v in values)


from torchlint.knowledge import torch_api as _api  # noqa: E402


def loss_calls(outline: Outline) -> List[ast.Call]:
    """Calls of a torch loss function or constructions of a torch loss module
    (however imported): where the file's loss values come from."""
    return outline.memo("loss calls", lambda: calls_matching(outline, _api.may_name_loss, _api.is_loss_callee))


def _tensor_callee(qualified: str) -> bool:
    """Does inference give a call of ``qualified`` a tensor (or data loader) value?
    (The TENSOR and LOADER cases of ``Inference._known_callee_value``.)"""
    return (
        qualified in _api.CUDA_TENSOR_TYPES
        or qualified in _api.VARIABLE
        or qualified in _api.PARAMETER_CLASSES
        or qualified in _api.DATALOADERS
        or qualified in _api.LOSS_FUNCTION_PARAMS
        or qualified.startswith(_api.FUNCTIONAL)
        or qualified in _api.TENSOR_FACTORIES
        or qualified in _api.INDEX_SAMPLERS
    )


def _binding_values(outline: Outline) -> List[Tuple[str, ast.AST]]:
    """(name, expression its value comes from) for the bindings inference reads:
    assignments (a literal tuple unpacked element by element), annotated and
    augmented assignments, ``:=`` and ``for`` targets (from the iterable, seen
    through ``enumerate(...)`` / ``tqdm(...)``)."""

    def compute() -> List[Tuple[str, ast.AST]]:
        found: List[Tuple[str, ast.AST]] = []
        for node in outline.nodes(ast.Assign):
            for target in node.targets:
                _bind(found, target, node.value, True)
        for node in outline.nodes(ast.AnnAssign):
            if node.value is not None:
                _bind(found, node.target, node.value, True)
        for node in outline.nodes(ast.AugAssign):
            _bind(found, node.target, node.value, True)
        for node in outline.nodes(ast.NamedExpr):
            _bind(found, node.target, node.value, True)
        for kind in (ast.For, ast.AsyncFor):
            for node in outline.nodes(kind):
                _bind(found, node.target, iterated(outline, node.iter), False)
        return found

    return outline.memo("binding_values", compute)  # type: ignore[return-value]


def _bind(found: List[Tuple[str, ast.AST]], target: ast.AST, value: ast.AST, unpack: bool) -> None:
    """Add to ``found`` what assigning ``value`` to ``target`` binds (see
    ``_binding_values``). A function of the module, not a closure calling
    itself: that closure and its cell make a cycle, which kept every file's
    ``found`` and the trees under it alive until the collector ran."""
    if isinstance(target, ast.Name):
        found.append((target.id, value))
    elif isinstance(target, (ast.Tuple, ast.List)):
        literal = unpack and isinstance(value, (ast.Tuple, ast.List)) and not any(
            isinstance(e, ast.Starred) for e in value.elts)
        for index, element in enumerate(target.elts):
            if literal and index < len(value.elts):  # type: ignore[attr-defined]
                _bind(found, element, value.elts[index], True)  # type: ignore[attr-defined]
            elif not unpack:
                _bind(found, element, value, False)


_ITERATION_WRAPPERS = frozenset({"builtins.enumerate", *_api.ITERATION_WRAPPERS})


def iterated(outline: Outline, iterable: ast.AST) -> ast.AST:
    """What a ``for`` loop really iterates: ``enumerate(...)`` and ``tqdm(...)``
    (however imported) looked through."""
    while isinstance(iterable, ast.Call) and iterable.args and (
        callee_name(iterable.func) in ("enumerate", "tqdm")
        or may_resolve_to(outline, iterable.func, _ITERATION_WRAPPERS)
    ):
        iterable = iterable.args[0]
    return iterable


def names_where(outline: Outline, key: str, holds: Callable[[ast.AST, "Container[str]"], bool]) -> "Container[str]":
    """Names with some binding whose value ``holds`` (given the names known
    so far, which it asks with ``in``): the least fixed point, a superset of
    the names whose every binding holds (what the rules' inference asks).

    It is worked out name by name, when asked (``_NamesWhere``): a screen
    asks about the few names it meets, and the whole file's fixed point
    read every binding's value, most of them more than once."""
    # The answers so far are kept on the outline; ``holds`` is not (it holds
    # the outline: the cycle would keep every file's tree until a collection).
    return _NamesWhere(outline.memo(key, lambda: _Answers(_values_by_name(outline))), holds)


def _values_by_name(outline: Outline) -> Dict[str, List[ast.AST]]:
    def compute() -> Dict[str, List[ast.AST]]:
        found: Dict[str, List[ast.AST]] = {}
        for name, value in _binding_values(outline):
            found.setdefault(name, []).append(value)
        return found

    return outline.memo("binding values by name", compute)


class _NamesWhere:
    """``names_where``'s answer, one name at a time.

    A name is in when one of its bindings' values holds. A name asked about
    again while its own answer is being worked out (``x = x + 1``, or through
    other names) counts as out there: the least fixed point never needs a
    name to prove itself. So a name found out is kept out only when no name
    asked before it was assumed out on the way (that one, once decided, may
    change the answer). A chain of names deeper than ``_Answers.DEEPEST`` answers in
    (never too few, and the stack stays bounded), and so does everything
    once the answers have cost ``_Answers.BUDGET`` reads of every binding of the file."""

    def __init__(self, answers: "_Answers", holds: Callable[[ast.AST, "Container[str]"], bool]) -> None:
        self._answers = answers
        self._holds = holds

    def __contains__(self, name: object) -> bool:
        state = self._answers
        if name in state.known_in:
            return True
        if name in state.known_out:
            return False
        values = state.values.get(name)  # type: ignore[arg-type]
        if not values:
            state.known_out.add(name)  # type: ignore[arg-type]
            return False
        asking = state.asking
        if name in asking:
            state.lowest = min(state.lowest, asking.index(name))  # type: ignore[arg-type]
            return False
        if len(asking) >= _Answers.DEEPEST or state.reads_left <= 0:
            return True
        state.reads_left -= len(values)
        place, outer = len(asking), state.lowest
        state.lowest = _Answers.NONE
        asking.append(name)  # type: ignore[arg-type]
        try:
            found = any(self._holds(value, self) for value in values)
        finally:
            asking.pop()
        lowest = state.lowest
        if found:
            state.known_in.add(name)  # type: ignore[arg-type]
        elif lowest >= place:  # assumed nothing of the names asked before it
            state.known_out.add(name)  # type: ignore[arg-type]
        state.lowest = min(outer, lowest if lowest < place else _Answers.NONE)
        return found


class _Answers:
    """What ``_NamesWhere`` has worked out for one question about one outline."""

    DEEPEST = 12
    BUDGET = 8
    NONE = 1 << 30  # no name of the stack assumed out

    def __init__(self, values: Dict[str, List[ast.AST]]) -> None:
        self.values = values
        self.known_in: Set[str] = set()
        self.known_out: Set[str] = set()
        self.asking: List[str] = []
        self.lowest = self.NONE  # the lowest place in ``asking`` of a name assumed out
        self.reads_left = self.BUDGET * (sum(len(found) for found in values.values()) + 1)


def evidence_names(outline: Outline) -> FrozenSet[str]:
    """Names the file proves tensors whatever their bindings: ``x.backward()``
    or ``x.size(0)`` is called on them, or they are tested by ``isinstance(x, ...)`` /
    ``torch.is_tensor(x)``."""
    def compute() -> FrozenSet[str]:
        found = set()
        for call in outline.calls("backward"):
            if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
                found.add(call.func.value.id)
        for call in outline.calls("size"):  # ``x.size(0)``: only a tensor has that method
            if (isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
                    and len(call.args) == 1 and not call.keywords and _is_integer(call.args[0])):
                found.add(call.func.value.id)
        for call in outline.calls("isinstance", "is_tensor"):
            if call.args and isinstance(call.args[0], ast.Name) and _may_prove_tensor(outline, call):
                found.add(call.args[0].id)
        return frozenset(found)

    return outline.memo("evidence_names", compute)


def _may_prove_tensor(outline: Outline, call: ast.Call) -> bool:
    """Could inference take ``call`` (``isinstance(x, K)`` or ``is_tensor(x)``)
    as proof that ``x`` is a tensor? ``isinstance`` proves it only when ``K``
    resolves through an import to a tensor class: ``isinstance(module,
    HQQLinear)`` proves nothing of the kind."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "isinstance"):
        return True
    return len(call.args) == 2 and may_resolve_to(outline, call.args[1], _api.TENSOR_CLASSES)


def self_names(outline: Outline) -> FrozenSet[str]:
    """The names of methods' first parameters (``self``): instances of a class of this file."""
    def compute() -> FrozenSet[str]:
        found = set()
        for classdef in outline.nodes(ast.ClassDef):
            for method in classdef.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.args.args:
                    found.add((method.args.posonlyargs or method.args.args)[0].arg)
        return frozenset(found)

    return outline.memo("self_names", compute)


def project_parameter_names(outline: Outline) -> FrozenSet[str]:
    """The parameters of the file's top-level defs and of its top-level classes' methods
    (``self`` left out): the project model may know what the calls in the modules
    beside the file pass them (``Project.parameter_from_project``)."""
    def compute() -> FrozenSet[str]:
        whole = outline.whole_file
        found = set()
        for statement in whole.tree.body:
            functions = [statement] if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) else (
                [s for s in statement.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
                if isinstance(statement, ast.ClassDef) else [])
            for function in functions:
                params = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
                if function is not statement and params:
                    params = params[1:]
                found.update(param.arg for param in params)
        return frozenset(found)

    return outline.whole_file.memo("project parameter names", compute)


def attributes_stored(outline: Outline) -> FrozenSet[str]:
    """Attributes the file assigns (``x.attr = ...``) or defines as methods."""
    def compute() -> FrozenSet[str]:
        found = set(outline.attribute_index().stored)
        for kind in (ast.FunctionDef, ast.AsyncFunctionDef):
            found.update(node.name for node in outline.nodes(kind))
        return frozenset(found)

    return outline.memo("attributes_stored", compute)


def may_be_member(outline: Outline, receiver: ast.AST, attribute: str) -> bool:
    """Could ``receiver.attribute`` be known through the project model? Not
    when ``receiver`` is a method's ``self`` (and not bound otherwise), the
    file neither assigns nor defines ``attribute``, and no class of the file
    inherits from a class defined elsewhere (a class's members come from its
    own body, or from its bases'). Whole-file facts: the project model reads
    the whole class, whatever part of the file narrowing screens."""
    if isinstance(receiver, ast.Name) and receiver.id in self_names(outline) and receiver.id not in stored_names(outline):
        whole = outline.whole_file
        return attribute in attributes_stored(whole) or inherits_from_elsewhere(whole)
    return may_hold_value(outline, receiver)


def _may_be_tensor_member(outline: Outline, receiver: ast.AST, attribute: str) -> bool:
    """``may_be_member`` for the value of the attribute itself. Of a method's
    ``self``, the project model reads the attribute where the method's class
    (``_ClassFacts``) assigns it, or its property of that name; only when the
    class does neither, its base classes."""
    if isinstance(receiver, ast.Name) and receiver.id in self_names(outline) and receiver.id not in stored_names(outline):
        whole = outline.whole_file
        facts = _class_at(whole, getattr(receiver, "lineno", 0))
        if facts is None:
            return attribute in attributes_stored(whole) or inherits_from_elsewhere(whole)
        if attribute in facts.defs:
            return True
        values = facts.stores.get(attribute)
        if values is None:
            return facts.has_bases  # from a base class, or passed to its ``__init__``
        asking = whole.memo("members being asked", set)
        question = (id(facts), attribute)
        if question in asking:
            return True  # ``self.a = self.b + 1`` and ``self.b = self.a * 2``: never too few
        asking.add(question)
        try:
            return any(value is None or isinstance(value, ast.Attribute)
                       or (isinstance(value, ast.Name) and value.id in parameter_names(whole))  # what callers pass
                       or _may_be_tensor(whole, value, False, 0, None) for value in values)
        finally:
            asking.discard(question)
    return may_hold_value(outline, receiver)


def parameter_names(outline: Outline) -> FrozenSet[str]:
    """The names of every parameter of the file's defs and lambdas."""
    return outline.memo("parameter names", lambda: frozenset(node.arg for node in outline.nodes(ast.arg)))


def self_member_known(outline: Outline, receiver: ast.AST, attribute: str) -> Optional[bool]:
    """For ``self.attribute`` in a method of a class of the file: can the
    project model know anything of it (the class assigns it or defines it,
    or has a base other than a builtin or a torch class)? None when
    ``receiver`` is not such a ``self``."""
    if not (isinstance(receiver, ast.Name) and receiver.id in self_names(outline)
            and receiver.id not in stored_names(outline)):
        return None
    facts = _class_at(outline.whole_file, getattr(receiver, "lineno", 0))
    if facts is None:
        return None
    return attribute in facts.defs or attribute in facts.stores or facts.has_bases


class _ClassFacts:
    """What a class's own code says of its instances' attributes: the names of
    its defs, and for each attribute its methods assign (``self.w = ...``),
    the values assigned (None: bound another way, unpacked or augmented).
    An assignment belongs to the innermost class around it: a nested class
    has its own."""

    def __init__(self, classdef: ast.ClassDef, outline: Outline) -> None:
        self.span = (classdef.lineno, classdef.end_lineno or classdef.lineno)
        self.defs = {s.name for s in classdef.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.has_bases = any(not _builtin_or_torch_base(outline, base) for base in classdef.bases) or bool(
            classdef.keywords)
        self.stores: Dict[str, List[Optional[ast.AST]]] = {}


def _class_facts(outline: Outline) -> List[_ClassFacts]:
    """The facts of every class of the (whole-file) ``outline``, from its indexes."""
    classes = [_ClassFacts(node, outline) for node in outline.nodes(ast.ClassDef)]
    if not classes:
        return classes
    values: Dict[int, ast.AST] = {}  # id of an assigned attribute -> the value assigned
    for node in outline.nodes(ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Attribute):
                values[id(target)] = node.value
    for node in outline.nodes(ast.AnnAssign):
        if node.value is not None and isinstance(node.target, ast.Attribute):
            values[id(node.target)] = node.value
    selves = self_names(outline)
    for node in outline.nodes(ast.Attribute):
        if isinstance(node.ctx, ast.Store) and _of_self(node, selves):
            facts = _innermost(classes, node.lineno)
            if facts is not None:
                facts.stores.setdefault(node.attr, []).append(values.get(id(node)))
    return classes


def _innermost(classes: List[_ClassFacts], line: int) -> Optional[_ClassFacts]:
    holding = [facts for facts in classes if facts.span[0] <= line <= facts.span[1]]
    return max(holding, key=lambda facts: facts.span[0]) if holding else None


def _of_self(target: ast.AST, selves: FrozenSet[str]) -> bool:
    """``self.attr`` (a method's first parameter's attribute)?"""
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id in selves


def _builtin_or_torch_base(outline: Outline, base: ast.AST) -> bool:
    """A base the project model knows no members of: a builtin (``object``) or a torch class."""
    if isinstance(base, ast.Name) and base.id in _BUILTIN_NAMES and base.id not in _plain_bound_names(outline):
        return True
    names = resolved_names(outline, base)
    return bool(names) and all(name.startswith(_api.TORCH_PACKAGES) for name in names)


def _class_at(outline: Outline, line: int) -> Optional[_ClassFacts]:
    """The innermost class of the (whole-file) ``outline`` whose lines hold ``line``."""
    return _innermost(outline.memo("class facts", lambda: _class_facts(outline)), line)


def _bound_otherwise(outline: Outline, definitions: Tuple[type, ...], from_imports: bool = True) -> set:
    """Every name the file binds some way other than by a ``definitions`` node:
    an assignment, ``del``, a parameter, another def or class, an import
    (star imports: what they bind that the file reads; ``from m import n``
    only given ``from_imports``), ``global``/``nonlocal``."""
    other = set(stored_names(outline)) | deleted_names(outline)
    other.update(node.arg for node in outline.nodes(ast.arg))
    for kind in _NAMED_BINDERS:
        if kind not in definitions:
            other.update(node.name for node in outline.nodes(kind) if node.name)  # type: ignore[attr-defined]
    for node in outline.nodes(ast.Import):
        other.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    for node in outline.nodes(ast.ImportFrom):
        if from_imports:
            other.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
        if any(alias.name == "*" for alias in node.names):
            other.update(star_bindings(outline, "." * node.level + (node.module or "")))
    for node in outline.nodes(ast.Global) + outline.nodes(ast.Nonlocal):
        other.update(node.names)
    return other


def classes_only(outline: Outline) -> FrozenSet[str]:
    """Names the file binds only as classes (no assignment, import, def or
    parameter anywhere binds them too): calling one makes an instance of the
    file's class, which inference never takes for a tensor."""
    def compute() -> FrozenSet[str]:
        classes = {node.name for node in outline.nodes(ast.ClassDef)}
        if not classes:
            return frozenset()
        other = _bound_otherwise(outline, (ast.ClassDef,))
        return frozenset(classes - other)

    return outline.memo("classes_only", compute)


def inherits_from_elsewhere(outline: Outline) -> bool:
    """Does a class of the file name a base that may be a class of another
    module of the project: not one of the file's classes, a builtin, or a
    torch package's class (the project model knows no members of those)?"""
    def compute() -> bool:
        local = {node.name for node in outline.nodes(ast.ClassDef)}
        bound = _plain_bound_names(outline)
        for classdef in outline.nodes(ast.ClassDef):
            for base in classdef.bases:
                if isinstance(base, ast.Name) and (
                        base.id in local or (base.id in _BUILTIN_NAMES and base.id not in bound)):
                    continue
                names = resolved_names(outline, base)
                if names and all(name.startswith(_api.TORCH_PACKAGES) for name in names):
                    continue
                return True
        return False

    return outline.memo("inherits_from_elsewhere", compute)


# Tensor methods that give Python values: on a tensor they never give one,
# and a project class that defines them to return tensors is not worth the
# screen's sharpness (``total += loss.item()`` is in every training loop).
_PYTHON_VALUE_METHODS = frozenset({"item", "tolist", "numpy", "dim", "numel", "nelement", "size", "element_size",
                                   "data_ptr", "get_device", "is_contiguous", "stride"})


def tensor_names(outline: Outline) -> Container[str]:
    """Names with some binding whose value may be a tensor (or a data loader):
    a superset of the names inference can know to be tensors."""
    return names_where(outline, "tensor_names", lambda value, known: _may_be_tensor(outline, value, False, 0, known))


# What ``analysis/shapes.py`` reads a number of dimensions from: calls of these
# (the sizes, the data, the range they are given), of ``.view``/``.reshape``,
# and ``Variable`` around one of them.
_SHAPED_CALLS = frozenset({*_api.SIZE_FACTORIES, *_api.PRODUCT_NDIM, "torch.arange",
                           *(_api.ARRAY_TO_TENSOR - _api.NDARRAY_ONLY_TO_TENSOR), *_api.VARIABLE})


def may_know_ndim(outline: Outline, expr: ast.AST) -> bool:
    """Could ``shapes.ndim`` know how many dimensions ``expr`` has? Only for
    a call it reads a shape from (``torch.zeros(3)``, ``x.view(-1)``,
    ``torch.tensor([0, 1])``, ``torch.arange(n)``), or a name with a binding
    to one (through other names): never for a parameter, an attribute or
    the result of any other call."""
    return _may_know_ndim(outline, expr, None)


def shaped_names(outline: Outline) -> Container[str]:
    """Names with some binding ``may_know_ndim`` holds for."""
    return names_where(outline, "shaped_names", lambda value, known: _may_know_ndim(outline, value, known))


def _may_know_ndim(outline: Outline, expr: ast.AST, names: "Optional[set]") -> bool:
    if isinstance(expr, ast.Name):
        return expr.id in (names if names is not None else shaped_names(outline))
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    if isinstance(func, ast.Attribute) and func.attr in _api.RESHAPE_METHODS:
        return True
    return may_resolve_to(outline, func, _SHAPED_CALLS)


def _torch_tensor_call(outline: Outline, func: ast.AST) -> bool:
    return any(_tensor_callee(name) for name in resolved_names(outline, func))


def may_be_tensor(outline: Outline, expr: ast.AST, any_name: bool = False) -> bool:
    """Could the inference (analysis/inference.py) know ``expr`` to be a tensor
    (and so know its device, dtype or loss)? It knows a name only through a
    binding in the file (``any_name``: count every name, for questions where a
    module parameter like ``self`` can answer too), an attribute only when it
    is ``.data``/``.grad``/``.T``... of a tensor, a call through a torch name,
    a method of a tensor, or a module call. Literals, containers and
    attributes of unknown objects (``self.x``) never are."""
    return _may_be_tensor(outline, expr, any_name, 0, None)


def _may_be_tensor(outline: Outline, expr: ast.AST, any_name: bool, depth: int, names: "Optional[set]") -> bool:
    if depth > 40:
        return True
    if isinstance(expr, ast.Name):
        if any_name or expr.id in evidence_names(outline):
            return True
        return expr.id in (names if names is not None else tensor_names(outline))
    if isinstance(expr, ast.Attribute):
        if expr.attr in _api.TENSOR_ATTRIBUTES:
            return _may_be_tensor(outline, expr.value, any_name, depth + 1, names)
        return _may_be_tensor_member(outline, expr.value, expr.attr)  # an attribute of a project class's instance
    if isinstance(expr, ast.Subscript):
        return _may_be_tensor(outline, expr.value, any_name, depth + 1, names)
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Attribute):
            if any_name or func.attr in _api.TENSOR_ATTRIBUTES or _torch_tensor_call(outline, func):
                return True
            if func.attr not in _PYTHON_VALUE_METHODS and may_be_member(outline, func.value, func.attr):
                return True  # a method of a project class
            if isinstance(func.value, ast.Compare):
                return True  # ``(pred == y).sum()``
            tensor_method = func.attr in _api.TENSOR_RETURNING_METHODS or func.attr.endswith("_")
            return tensor_method and _may_be_tensor(outline, func.value, any_name, depth + 1, names)
        if isinstance(func, ast.Name):
            # a torch function, a module called (bound by an assignment), a project function or
            # another module's class; calling a class of this file makes an instance, never a tensor
            return any_name or _torch_tensor_call(outline, func) or (
                func.id in bound_names(outline) and func.id not in classes_only(outline.whole_file)
                and _may_return_tensor(outline, func.id, depth, names))
        return not isinstance(func, (ast.Subscript, ast.Constant))
    if isinstance(expr, ast.UnaryOp):
        return not isinstance(expr.op, ast.Not) and _may_be_tensor(outline, expr.operand, any_name, depth + 1, names)
    if isinstance(expr, ast.BinOp):
        return _may_be_tensor(outline, expr.left, any_name, depth + 1, names) or _may_be_tensor(
            outline, expr.right, any_name, depth + 1, names)
    if isinstance(expr, ast.Compare):
        return any(_may_be_tensor(outline, e, any_name, depth + 1, names) for e in (expr.left, *expr.comparators))
    if isinstance(expr, ast.IfExp):
        return _may_be_tensor(outline, expr.body, any_name, depth + 1, names) or _may_be_tensor(
            outline, expr.orelse, any_name, depth + 1, names)
    return False


def _may_return_tensor(outline: Outline, name: str, depth: int, names: "Optional[set]") -> bool:
    """May calling ``name`` give a tensor? Not when it names one plain function
    of the file (bound by nothing else, undecorated, no generator) none of
    whose ``return`` values may be one: inference takes what calling it gives
    from those. Asked about a part of the file (narrowing), the function is
    read in the whole file, whose names it may bind. A call of the function
    being read adds nothing (a least fixed point, like inference's)."""
    whole = outline.whole_file
    function = plain_functions(whole).get(name)
    if function is None:
        imported = _imported_call_may_give_tensor(whole, name)
        return imported if imported is not None else True
    returned = whole.memo("returns of " + name, lambda: _returned_values(function))
    if returned is None:
        return True
    reading: set = whole.memo("returns being read", set)
    if name in reading:
        return False  # recursion: the other returns say what a call can give
    reading.add(name)
    try:
        known = names if whole is outline else None
        return any(_may_be_tensor(whole, value, False, depth + 1, known) for value in returned)
    finally:
        reading.discard(name)


def _imported_call_may_give_tensor(outline: Outline, name: str) -> Optional[bool]:
    """For a name the file binds only by from-imports: may calling it give a
    tensor, as inference works it out (a torch name from its tables, asked
    before this; any other from the project model; outside the project,
    nothing)? None when the name is bound otherwise, or no project model answers."""
    ask = outline.call_may_give_tensor
    if ask is None or name not in imported_only(outline):
        return None
    for module, attribute, bound in outline.imported():
        if bound == name and attribute:
            spelled = module + attribute if module.endswith(".") else f"{module}.{attribute}"
            if ask(spelled):
                return True
    return False


def imported_only(outline: Outline) -> FrozenSet[str]:
    """Names the file binds only by ``from m import name`` (no assignment,
    parameter, def, class, plain or star import binds them too)."""
    def compute() -> FrozenSet[str]:
        imported = {alias.asname or alias.name for node in outline.nodes(ast.ImportFrom)
                    for alias in node.names if alias.name != "*"}
        if not imported:
            return frozenset()
        return frozenset(imported - _bound_otherwise(outline, (), from_imports=False))

    return outline.memo("imported_only", compute)


def plain_functions(outline: Outline) -> Mapping[str, ast.FunctionDef]:
    """Names the file binds only by one undecorated ``def`` (no assignment,
    import, parameter, class or other def binds them too): what calling
    one gives is what its ``return`` statements give."""
    def compute() -> Mapping[str, ast.FunctionDef]:
        defs: Dict[str, List[ast.AST]] = {}
        for kind in (ast.FunctionDef, ast.AsyncFunctionDef):
            for node in outline.nodes(kind):
                defs.setdefault(node.name, []).append(node)
        if not defs:
            return {}
        other = _bound_otherwise(outline, (ast.FunctionDef, ast.AsyncFunctionDef))
        return {name: found[0] for name, found in defs.items()
                if len(found) == 1 and name not in other and type(found[0]) is ast.FunctionDef
                and not found[0].decorator_list}  # type: ignore[attr-defined]

    return outline.memo("plain_functions", compute)


# What of a nested def, lambda or class its enclosing function evaluates.
_OWN_SCOPES: Dict[type, Tuple[str, ...]] = {
    ast.FunctionDef: ("decorator_list", "args"), ast.AsyncFunctionDef: ("decorator_list", "args"),
    ast.Lambda: ("args",), ast.ClassDef: ("decorator_list", "bases", "keywords"),
}


def _as_list(value: object) -> List[ast.AST]:
    return list(value) if isinstance(value, list) else [value]  # type: ignore[list-item]


def _returned_values(function: ast.FunctionDef) -> Optional[List[ast.AST]]:
    """What the ``return`` statements of ``function`` give (``return`` alone
    and falling off the end give None, which is no tensor); None for a
    generator. Nested defs, lambdas and classes return for themselves."""
    values: List[ast.AST] = []
    pending: List[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind in _OWN_SCOPES:
            # Only the parts evaluated where they stand: decorators, defaults, bases.
            pending.extend(part for field in _OWN_SCOPES[kind] for part in _as_list(getattr(node, field)))
            continue
        if kind is ast.Yield or kind is ast.YieldFrom:
            return None
        if kind is ast.Return:
            if node.value is not None:  # type: ignore[attr-defined]
                values.append(node.value)  # type: ignore[attr-defined]
        pending.extend(child_nodes([node]))
    return values


def _is_integer(expr: ast.AST) -> bool:
    """``0`` or ``-1``: a literal dimension."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and type(expr.value) is int
