"""Scopes and bindings, built in the one traversal of a file.

This is the scope model of libcst's ``ScopeProvider`` (the one torchlint's
name resolution was first written against, and whose answers the tests
compare with), computed without its cost: libcst's metadata framework walks
the tree three times (expression contexts, scopes, then our own collection),
rebuilding every node on the way. ``walk`` visits each node once, reading the
fields directly, and feeds the collecting visitor of ``context.py`` as it goes.

What it models, as libcst does:

- module, class, function (and lambda), comprehension and type-parameter
  scopes; a class body is invisible to the functions inside it;
- bindings (``Assignment``) by assignment targets, ``for``/``with``/``except``
  targets, walrus, parameters, ``def``/``class``, and imports
  (``ImportAssignment``: ``import a.b`` binds ``a.b`` and ``a``);
  ``global``/``nonlocal`` redirect them;
- accesses (``Access``): every name read, attached to the longest dotted
  prefix that is bound (``torch.nn`` after ``import torch.nn``); a read sees
  the bindings of its scope made before it, else the enclosing scopes';
- qualified names (``a.b.c`` for imports, ``builtins.x``, local spellings
  otherwise) and names read inside string annotations.
"""

from __future__ import annotations

import bisect
import builtins
import re
from collections import defaultdict
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Set, Tuple, Union

import libcst as cst
from libcst.helpers import get_full_name_for_node

IMPORT, BUILTIN, LOCAL = "import", "builtin", "local"  # where a qualified name comes from


class QualifiedName:
    __slots__ = ("name", "source")

    def __init__(self, name: str, source: str) -> None:
        self.name, self.source = name, source

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QualifiedName) and (self.name, self.source) == (other.name, other.source)

    def __hash__(self) -> int:
        return hash((self.name, self.source))

    def __repr__(self) -> str:
        return f"QualifiedName({self.name!r}, {self.source})"


# -- bindings and reads --------------------------------------------------------


class Access:
    """A read of a name: ``node`` is the Name, the bound dotted prefix
    (``torch.nn``), or the string annotation it was read from."""

    __slots__ = ("node", "scope", "index", "_visible")

    def __init__(self, node: cst.CSTNode, scope: "Scope") -> None:
        self.node = node
        self.scope = scope
        self.index = scope.count
        self._visible: Optional[_Visible] = None

    def __hash__(self) -> int:
        return self.index  # a deterministic order in sets (see ``BaseAssignment.__hash__``)

    @property
    def referents(self) -> Set["BaseAssignment"]:
        """The bindings this read may see: its scope's made before it, else the enclosing scopes'."""
        return self._visible.referents(self.index) if self._visible is not None else set()

    def qualified_names(self) -> FrozenSet[QualifiedName]:
        """The qualified names of the bindings this read may see."""
        return self._visible.qualified_names(self.index) if self._visible is not None else frozenset()


class _Visible:
    """The bindings the reads of one name in one scope may see, sorted once.

    Each read used to hold a set of the bindings made before it (and each
    binding a set of the reads after it): a name bound and read n times in
    one scope made n² links. A read now finds its bindings by bisection, and
    the qualified names of each prefix of them are built up once."""

    __slots__ = ("scope", "name", "assignments", "local", "indices", "others", "_prefix", "_others", "_outer")

    def __init__(self, scope: "Scope", name: str) -> None:
        self.scope, self.name = scope, name
        self.assignments = scope.resolve(name, scope)
        self.local = sorted((a for a in self.assignments if a.scope is scope), key=lambda a: a.index)
        self.indices = [a.index for a in self.local]
        self.others = [a for a in self.assignments if a.scope is not scope]
        self._prefix: List[FrozenSet[QualifiedName]] = [frozenset()]
        self._others: Optional[FrozenSet[QualifiedName]] = None
        self._outer: Optional[FrozenSet[QualifiedName]] = None

    def _seen(self, index: int) -> int:
        return bisect.bisect_left(self.indices, index)  # the bindings made before the read

    def _falls_back(self, seen: int) -> bool:
        return not seen and not self.others and bool(self.assignments) and self.scope.parent is not self.scope

    def referents(self, index: int) -> Set["BaseAssignment"]:
        seen = self._seen(index)
        if self._falls_back(seen):
            return set(self.scope.parent.resolve(self.name, self.scope))
        return {*self.local[:seen], *self.others}

    def qualified_names(self, index: int) -> FrozenSet[QualifiedName]:
        seen = self._seen(index)
        if self._falls_back(seen):
            if self._outer is None:
                self._outer = _names_of(self.scope.parent.resolve(self.name, self.scope))
            return self._outer
        if self._others is None:
            self._others = _names_of(self.others)
        while len(self._prefix) <= seen:
            added = _names_of([self.local[len(self._prefix) - 1]])
            last = self._prefix[-1]
            self._prefix.append(last if added <= last else last | added)
        return self._prefix[seen] | self._others if self._others else self._prefix[seen]


def _names_of(assignments: Iterable["BaseAssignment"]) -> FrozenSet[QualifiedName]:
    return frozenset(name for a in assignments for name in a.qualified_names(a.name))


class _Reads:
    """The reads of one name made in one scope, in order: what each binding's ``references`` are cut from."""

    __slots__ = ("scope", "accesses", "indices")

    def __init__(self, scope: "Scope", accesses: Iterable[Access]) -> None:
        self.scope = scope
        self.accesses = sorted(accesses, key=lambda a: a.index)
        self.indices = [a.index for a in self.accesses]


class BaseAssignment:
    __slots__ = ("name", "scope", "_sources")
    index = -1

    # Sets of bindings (and of reads) are iterated by what inference asks first; an
    # identity hash, a memory address, made that order, and with it which question met
    # a cycle first, differ from run to run. The order a scope made them in does not.
    def __hash__(self) -> int:
        return self.index

    def __init__(self, name: str, scope: "Scope") -> None:
        self.name = name
        self.scope = scope
        # id(reads) -> [reads, end of the earlier reads seen, start of the later ones]
        self._sources: Dict[int, list] = {}

    @property
    def references(self) -> Set[Access]:
        """The reads that may see this binding."""
        found: Set[Access] = set()
        for reads, earlier_end, later_start in self._sources.values():
            found.update(reads.accesses[:earlier_end])
            found.update(reads.accesses[later_start:])
        return found

    def record_reads(self, reads: _Reads) -> None:
        """``reads`` (of this name, in one scope) see this binding if made after it, or in
        another scope; those of its own scope made before it see the enclosing scope's."""
        later = 0 if reads.scope is not self.scope else bisect.bisect_right(reads.indices, self.index)
        self._source(reads)[2] = min(self._source(reads)[2], later)
        if later and self.scope.parent is not self.scope:
            for shadowed in self.scope.parent[self.name]:
                # Another scope's binding: every one of these reads is one it may reach.
                source = shadowed._source(reads)
                source[1] = max(source[1], later)

    def _source(self, reads: _Reads) -> list:
        source = self._sources.get(id(reads))
        if source is None:
            source = self._sources[id(reads)] = [reads, 0, len(reads.accesses)]
        return source

    def qualified_names(self, full_name: str) -> Set[QualifiedName]:
        raise NotImplementedError


class Assignment(BaseAssignment):
    """A binding by ``node``: a Name (target), Param, FunctionDef, ClassDef, Import or ImportFrom."""

    __slots__ = ("node", "index")

    def __init__(self, name: str, scope: "Scope", node: cst.CSTNode, index: int) -> None:
        super().__init__(name, scope)
        self.node = node
        self.index = index

    def qualified_names(self, full_name: str) -> Set[QualifiedName]:
        prefix = self.scope.name_prefix
        return {QualifiedName(f"{prefix}.{full_name}" if prefix else full_name, LOCAL)}


class BuiltinAssignment(BaseAssignment):
    __slots__ = ()

    def qualified_names(self, full_name: str) -> Set[QualifiedName]:
        return {QualifiedName(f"builtins.{self.name}", BUILTIN)}


class ImportAssignment(Assignment):
    __slots__ = ("as_name",)

    def __init__(self, name: str, scope: "Scope", node: cst.CSTNode, index: int, as_name: cst.CSTNode) -> None:
        super().__init__(name, scope, node, index)
        self.as_name = as_name

    def _module(self) -> str:
        node = self.node
        if not isinstance(node, cst.ImportFrom):
            return ""
        module = (get_full_name_for_node(node.module) or "") if node.module else ""
        return "." * len(node.relative) + module if node.relative else module

    def qualified_names(self, full_name: str) -> Set[QualifiedName]:
        """``full_name`` as spelled through this import: ``F.relu`` -> ``torch.nn.functional.relu``."""
        module = self._module()
        results: Set[QualifiedName] = set()
        names = self.node.names
        if isinstance(names, cst.ImportStar):
            return results
        for alias in names:
            imported = get_full_name_for_node(alias.name)
            if not imported:
                continue
            parts = imported.split(".")
            # For dotted imports, the longest prefix of the import that matches.
            for real_name in (".".join(parts[:i]) for i in range(len(parts), 0, -1)):
                as_name = real_name
                if module.endswith("."):
                    real_name = f"{module}{real_name}"
                elif module:
                    real_name = f"{module}.{real_name}"
                if alias.asname is not None and alias.evaluated_alias is not None:
                    as_name = alias.evaluated_alias
                if full_name.startswith(as_name):
                    remaining = full_name.split(as_name, 1)[1]
                    if remaining and not remaining.startswith("."):
                        continue
                    remaining = remaining.lstrip(".")
                    results.add(QualifiedName(f"{real_name}.{remaining}" if remaining else real_name, IMPORT))
                    break
        return results


class StarImportAssignment(ImportAssignment):
    """A name ``from m import *`` binds, when the project model knows ``m``'s
    exports: ``target`` is what it stands for ("torch.nn", or "m.helper")."""

    __slots__ = ("target",)

    def __init__(self, name: str, scope: "Scope", node: cst.CSTNode, index: int, target: str) -> None:
        super().__init__(name, scope, node, index, node)
        self.target = target

    def qualified_names(self, full_name: str) -> Set[QualifiedName]:
        if full_name != self.name and not full_name.startswith(self.name + "."):
            return set()
        return {QualifiedName(self.target + full_name[len(self.name):], IMPORT)}


StarExports = Callable[[cst.ImportFrom], Optional[Dict[str, str]]]


# -- scopes ----------------------------------------------------------------------


class Assignments:
    """The bindings made in one scope: ``name in scope.assignments``,
    ``scope.assignments[name]``, and iteration over all of them."""

    def __init__(self, by_name: Dict[str, Set[BaseAssignment]]) -> None:
        self._by_name = by_name

    def __iter__(self) -> Iterator[BaseAssignment]:
        for assignments in self._by_name.values():
            yield from assignments

    def __getitem__(self, name: str) -> Set[BaseAssignment]:
        return self._by_name.get(name, set())

    def __contains__(self, name: str) -> bool:
        return len(self[name]) > 0


class Scope:
    def __init__(self, parent: Optional["Scope"]) -> None:
        self.parent: "Scope" = parent if parent is not None else self
        self.globals: "Scope" = self.parent.globals if parent is not None else self
        self._assignments: Dict[str, Set[BaseAssignment]] = defaultdict(set)
        self._accesses_by_node: Dict[cst.CSTNode, Set[Access]] = defaultdict(set)
        self._reads_by_name: Dict[str, Set[Access]] = {}
        self.count = 0  # bindings made so far: orders reads after the bindings they see
        self.name_prefix = ""

    @property
    def assignments(self) -> Assignments:
        return Assignments(self._assignments)

    def record_assignment(self, name: str, node: cst.CSTNode) -> None:
        target = self.assignment_target(name)
        target._assignments[name].add(Assignment(name, target, node, target.count))

    def record_star_assignment(self, name: str, node: cst.CSTNode, target: str) -> None:
        target_scope = self.assignment_target(name)
        target_scope._assignments[name].add(StarImportAssignment(name, target_scope, node, target_scope.count, target))

    def record_import_assignment(self, name: str, node: cst.CSTNode, as_name: cst.CSTNode) -> None:
        target = self.assignment_target(name)
        target._assignments[name].add(ImportAssignment(name, target, node, target.count, as_name))

    def assignment_target(self, name: str) -> "Scope":
        return self

    def record_access(self, access: Access) -> None:
        self._accesses_by_node[access.node].add(access)

    def access_of(self, node: cst.CSTNode) -> Optional[Access]:
        """The read ``node`` makes in this scope, if any."""
        accesses = self._accesses_by_node.get(node)
        return next(iter(accesses)) if accesses else None

    def reads_of(self, name: str) -> Set[Access]:
        """The reads of ``name`` made in this scope itself."""
        return self._reads_by_name.get(name, set())

    def runs_at(self, node: cst.CSTNode) -> Tuple["Scope", Optional[int]]:
        """The scope whose statements run ``node`` as they come, and how many
        bindings it has made by then (``index_at``): a class body or a
        comprehension runs where it is written, a function body only when called."""
        scope, index = self, self.index_at(node)
        while isinstance(scope, (ClassScope, ComprehensionScope)):
            scope, index = scope.parent, scope.opened_at
        return scope, index

    def index_at(self, node: cst.CSTNode) -> Optional[int]:
        """How many bindings this scope has made when ``node`` runs: the index of
        the first read inside it (None when it reads nothing here)."""
        pending = [node]
        while pending:
            current = pending.pop()
            accesses = self._accesses_by_node.get(current)
            if accesses:
                return min(access.index for access in accesses)
            pending.extend(reversed(current.children))
        return None

    def _release(self) -> None:
        """Drop this scope's bindings and reads, and their links to each other."""
        for assignments in self._assignments.values():
            for assignment in assignments:
                assignment._sources.clear()
        for accesses in self._accesses_by_node.values():
            for access in accesses:
                access._visible = None
        self._assignments.clear()
        self._accesses_by_node.clear()
        self._reads_by_name.clear()

    def visible_from_children(self, child: "Scope") -> bool:
        return True

    def next_visible_parent(self, child: "Scope", first: Optional["Scope"] = None) -> "Scope":
        parent = first if first is not None else self.parent
        while not parent.visible_from_children(child):
            parent = parent.parent
        return parent

    def __contains__(self, name: str) -> bool:
        raise NotImplementedError

    def __getitem__(self, name: str) -> Set[BaseAssignment]:
        return self.resolve(name, self)

    def resolve(self, name: str, reader: "Scope") -> Set[BaseAssignment]:
        """The bindings a read of ``name`` in ``reader`` may see, looked up from this scope outwards."""
        raise NotImplementedError

    def record_global(self, name: str) -> None:
        raise NotImplementedError

    def record_nonlocal(self, name: str) -> None:
        raise NotImplementedError

    def get_qualified_names_for(self, node: Union[str, cst.CSTNode]) -> Set[QualifiedName]:
        """The qualified names ``node`` (a read, or a dotted name) may have here."""
        accesses = self._accesses_by_node.get(node) if isinstance(node, cst.CSTNode) else None
        if accesses:
            return {name for access in accesses for name in access.qualified_names()}
        full_name = get_full_name_for_node(node)
        if full_name is None:
            return set()
        assignments: Set[BaseAssignment] = set()
        prefix: Optional[str] = full_name
        while prefix:
            if prefix in self:
                assignments = self[prefix]
                break
            cut = prefix.rfind(".")
            prefix = None if cut == -1 else prefix[:cut]
        if not isinstance(node, str):
            for assignment in assignments:
                if isinstance(assignment, Assignment) and _is_binding_of(node, assignment.node):
                    return assignment.qualified_names(full_name)
        results: Set[QualifiedName] = set()
        for assignment in assignments:
            results |= assignment.qualified_names(full_name)
        return results


class BuiltinScope(Scope):
    def __init__(self, globals_: "GlobalScope") -> None:
        super().__init__(None)
        self.globals = globals_

    def __contains__(self, name: str) -> bool:
        return hasattr(builtins, name)

    def resolve(self, name: str, reader: Scope) -> Set[BaseAssignment]:
        if name in self._assignments:
            return self._assignments[name]
        if hasattr(builtins, name):
            self._assignments[name].add(BuiltinAssignment(name, self))
            return self._assignments[name]
        return set()


class GlobalScope(Scope):
    def __init__(self) -> None:
        super().__init__(None)
        self.parent = BuiltinScope(self)
        self.globals = self

    def __contains__(self, name: str) -> bool:
        if name in self._assignments:
            return len(self._assignments[name]) > 0
        return name in self.next_visible_parent(self)

    def resolve(self, name: str, reader: Scope) -> Set[BaseAssignment]:
        if name in self._assignments:
            return self._assignments[name]
        return self.next_visible_parent(reader)[name]

    def record_global(self, name: str) -> None:
        pass

    def record_nonlocal(self, name: str) -> None:
        pass  # a syntax error at module level; Python has refused the file already


class LocalScope(Scope):
    def __init__(self, parent: Scope, node: cst.CSTNode, name: Optional[str] = None) -> None:
        super().__init__(parent)
        self.node = node
        self.name = name
        self._overwrites: Dict[str, Scope] = {}  # global / nonlocal declarations
        self.name_prefix = self._make_name_prefix()
        self.opened_at = parent.count  # the bindings the enclosing scope had made when this one opened

    def _make_name_prefix(self) -> str:
        return ".".join(filter(None, [self.parent.name_prefix, self.name, "<locals>"]))

    def record_global(self, name: str) -> None:
        self._overwrites[name] = self.globals

    def record_nonlocal(self, name: str) -> None:
        self._overwrites[name] = self.parent

    def assignment_target(self, name: str) -> Scope:
        if name in self._overwrites:
            return self.next_visible_parent(self, self._overwrites[name]).assignment_target(name)
        return self

    def __contains__(self, name: str) -> bool:
        if name in self._overwrites:
            return name in self._overwrites[name]
        if name in self._assignments:
            return len(self._assignments[name]) > 0
        return name in self.next_visible_parent(self)

    def resolve(self, name: str, reader: Scope) -> Set[BaseAssignment]:
        if name in self._overwrites:
            return self.next_visible_parent(reader, self._overwrites[name]).resolve(name, reader)
        if name in self._assignments:
            return self._assignments[name]
        return self.next_visible_parent(reader).resolve(name, reader)


class FunctionScope(LocalScope):
    pass


class ClassScope(LocalScope):
    def visible_from_children(self, child: Scope) -> bool:
        return child.parent is self and isinstance(child, AnnotationScope)

    def _make_name_prefix(self) -> str:
        return ".".join(filter(None, [self.parent.name_prefix, self.name]))


class ComprehensionScope(LocalScope):
    def _make_name_prefix(self) -> str:
        return ".".join(filter(None, [self.parent.name_prefix, "<comprehension>"]))


class AnnotationScope(LocalScope):
    """Type parameters and type aliases (PEP 695); transparent in qualified names."""

    def _make_name_prefix(self) -> str:
        return self.parent.name_prefix


def _is_binding_of(node: cst.CSTNode, binding: cst.CSTNode) -> bool:
    """Is ``node`` the binding itself (a target, or a name inside an import)?"""
    if node is binding:
        return True
    if isinstance(binding, (cst.Import, cst.ImportFrom)) and not isinstance(binding.names, cst.ImportStar):
        for alias in binding.names:
            if alias.name is node or (alias.asname is not None and alias.asname.name is node):
                return True
    return False


def dotted_names(node: Union[cst.Attribute, cst.Name]) -> Iterator[Tuple[str, cst.CSTNode]]:
    """``a.b.c`` -> ("a.b.c", node), ("a.b", ...), ("a", ...); through a call, only its callee's."""
    if isinstance(node, cst.Name):
        yield node.value, node
        return
    value = node.value
    if isinstance(value, cst.Call):
        if isinstance(value.func, (cst.Attribute, cst.Name)):
            yield from dotted_names(value.func)
    elif isinstance(value, (cst.Attribute, cst.Name)):
        inner = dotted_names(value)
        first = next(inner, None)
        if first is not None:
            yield f"{first[0]}.{node.attr.value}", node
            yield first
            yield from inner


# -- the traversal -----------------------------------------------------------------

LOAD, STORE, DEL = "load", "store", "del"

_WHITESPACE = re.compile(
    r"^(.*whitespace.*|leading_lines|lines_after_decorators|trailing_whitespace|header|footer|lpar|rpar|lbracket"
    r"|rbracket|lbrace|rbrace|comma|semicolon|equal|dot|colon|star|operator|asynchronous|relative|newline"
    r"|first_line|empty_lines|indent|prefix|value_format|default_newline|default_indent|encoding|has_trailing_newline"
    r"|start|end|quote|conversion)$")
_FIELDS: Dict[type, Tuple[str, ...]] = {}

# Nodes after which libcst counts a binding made (reads after them see it).
_BINDING_LIKE = frozenset((
    cst.AnnAssign, cst.AsName, cst.Assign, cst.AugAssign, cst.ClassDef, cst.CompFor, cst.FunctionDef, cst.Global,
    cst.Import, cst.ImportFrom, cst.NamedExpr, cst.Nonlocal, cst.Parameters, cst.WithItem, cst.TypeVar,
    cst.TypeAlias, cst.TypeVarTuple, cst.ParamSpec,
))
_NODE_CLASSES: Dict[type, bool] = {}  # class -> is it a libcst node (isinstance on libcst's ABCs is slow)


def _is_node(value) -> bool:
    kind = value.__class__
    known = _NODE_CLASSES.get(kind)
    if known is None:
        known = _NODE_CLASSES[kind] = issubclass(kind, cst.CSTNode)
    return known


def child_fields(node_type: type) -> Tuple[str, ...]:
    """The fields of ``node_type`` that hold code, in libcst's visiting order
    (that of libcst's own ``_visit_and_replace_children``, which names each
    field it visits as a string: ``visit_required(self, "value", ...)``);
    whitespace and punctuation are left out."""
    fields = _FIELDS.get(node_type)
    if fields is None:
        declared = getattr(node_type, "__dataclass_fields__", {})
        method = getattr(node_type, "_visit_and_replace_children", None)
        code = getattr(method, "__code__", None)
        # The compiled method's string constants, in the order they first
        # appear: its visiting order. Read from the code object rather than
        # the source (``inspect.getsource``: tokenizing libcst's files cost a
        # document's first check about 50 ms); tests/test_scopes.py checks the
        # two orders agree for every node class.
        order = list(dict.fromkeys(name for name in _string_constants(code) if name in declared)) if code else []
        known = [f for f in declared if f not in order]
        fields = tuple(f for f in order + known if not _WHITESPACE.match(f) and f != "__slots__")
        _FIELDS[node_type] = fields
    return fields


def _string_constants(code) -> Iterator[str]:
    """The string constants of ``code`` and of the code nested in it (comprehensions), in order."""
    for constant in code.co_consts:
        if isinstance(constant, str):
            yield constant
        elif hasattr(constant, "co_consts"):
            yield from _string_constants(constant)


class Listener:
    """What the traversal reports to: each node on the way in and out, with
    the scope it is in (``context.Collector`` implements it)."""

    def on_visit(self, node: cst.CSTNode) -> None: ...

    def on_leave(self, node: cst.CSTNode) -> None: ...


class _Walk:
    def __init__(self, listener: Listener, tops: Optional[Dict[cst.CSTNode, cst.CSTNode]] = None,
                 star_exports: Optional[StarExports] = None,
                 methods: Optional[Dict[cst.CSTNode, cst.CSTNode]] = None) -> None:
        self.listener = listener
        self.star_exports = star_exports
        self.tops = tops if tops is not None else {}  # node -> its top-level statement
        self.top: Optional[cst.CSTNode] = None
        # node -> the method of a top-level class holding it (where findings are placed from)
        self.methods = methods if methods is not None else {}
        self.method: Optional[cst.CSTNode] = None
        self.global_scope = GlobalScope()
        self.scope: Scope = self.global_scope
        self.scopes: Dict[cst.CSTNode, Scope] = {}
        self.deferred: List[Tuple[Access, Optional[cst.Attribute], Optional[cst.CSTNode]]] = []
        self.attribute_stack: List[Optional[cst.Attribute]] = [None]  # the outermost Attribute being read
        self.in_annotation: List[bool] = [False]
        self.in_type_hint: List[bool] = [False]
        self.ignored_subscripts: Set[cst.Subscript] = set()
        self.string_annotation: Optional[cst.CSTNode] = None
        self.collecting = True  # off inside string annotations: their nodes are not the file's
        self.handlers: Dict[type, Callable] = {
            cst.Import: self._import, cst.ImportFrom: self._import, cst.Attribute: self._attribute,
            cst.Call: self._call, cst.Annotation: self._annotation, cst.SimpleString: self._string,
            cst.ConcatenatedString: self._string, cst.Subscript: self._subscript, cst.Name: self._name,
            cst.FunctionDef: self._function, cst.Lambda: self._lambda, cst.Param: self._param,
            cst.Arg: self._arg, cst.ClassDef: self._class, cst.Global: self._global, cst.Nonlocal: self._global,
            cst.ListComp: self._comprehension, cst.SetComp: self._comprehension,
            cst.DictComp: self._comprehension, cst.GeneratorExp: self._comprehension, cst.For: self._for,
            cst.Assign: self._assign, cst.AnnAssign: self._ann_assign, cst.AugAssign: self._target_value,
            cst.NamedExpr: self._target_value, cst.AsName: self._as_name, cst.CompFor: self._comp_for,
            cst.Del: self._del, cst.TypeAlias: self._type_alias, cst.TypeVar: self._type_var,
            cst.TypeVarTuple: self._type_param, cst.ParamSpec: self._type_param, cst.Module: self._module,
        }

    # -- the generic part -------------------------------------------------------

    def visit(self, node: cst.CSTNode, context: str = LOAD) -> None:
        if self.collecting:
            self.listener.on_visit(node)
        handler = self.handlers.get(type(node))
        if handler is None:
            self.children(node, context)
        else:
            handler(node, context)
        self.leave(node)

    def leave(self, node: cst.CSTNode) -> None:
        self.scopes[node] = self.scope
        if type(node) in _BINDING_LIKE:
            self.scope.count += 1
        if self.collecting:
            self.tops[node] = self.top
            if self.method is not None:
                self.methods[node] = self.method
            self.listener.on_leave(node)

    def children(self, node: cst.CSTNode, context: str = LOAD) -> None:
        for field in child_fields(type(node)):
            self.field(getattr(node, field), context)

    def field(self, value, context: str = LOAD) -> None:
        if value.__class__ is tuple or value.__class__ is list:
            for item in value:
                if _is_node(item):
                    self.visit(item, context)
        elif _is_node(value):
            self.visit(value, context)

    def silently(self, node: Optional[cst.CSTNode]) -> None:
        """Visit for the listener only: code libcst's scope analysis does not read (an import's
        names, an attribute's name, a keyword): no reads, no bindings, no scope recorded."""
        if node is None or not self.collecting:
            return
        self.listener.on_visit(node)
        self._silent_children(node)
        self.tops[node] = self.top
        if self.method is not None:
            self.methods[node] = self.method
        self.listener.on_leave(node)

    def in_scope(self, scope: Scope, visit: Callable[[], None]) -> None:
        outer, self.scope = self.scope, scope
        try:
            visit()
        finally:
            self.scope = outer

    def _module(self, node: cst.Module, context: str) -> None:
        if not self.collecting:  # a string annotation's
            self.children(node, context)
            return
        for statement in node.body:
            self.top = statement
            self.visit(statement)
        self.top = None

    # -- bindings ----------------------------------------------------------------

    def _import(self, node: Union[cst.Import, cst.ImportFrom], context: str) -> None:
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                self.scopes[alias] = self.scope
                bound = alias.asname.name if alias.asname is not None else alias.name
                for dotted, _ in dotted_names(bound):
                    self.scope.record_import_assignment(dotted, node, bound)
        elif self.star_exports is not None and isinstance(node, cst.ImportFrom):
            for name, target in (self.star_exports(node) or {}).items():
                self.scope.record_star_assignment(name, node, target)
        self._silent_children(node)

    def _silent_children(self, node: cst.CSTNode) -> None:
        for field in child_fields(type(node)):
            value = getattr(node, field)
            for item in (value if isinstance(value, (tuple, list)) else (value,)):
                if _is_node(item):
                    self.silently(item)

    def _name(self, node: cst.Name, context: str) -> None:
        if context == STORE:
            self.scope.record_assignment(node.value, node)
            return
        access = Access(node, self.scope)
        self.deferred.append((access, self.attribute_stack[-1], self.string_annotation))

    def _assign(self, node: cst.Assign, context: str) -> None:
        for target in node.targets:
            self.listen(target, lambda t=target: self.visit(t.target, STORE))
        self.visit(node.value)

    def listen(self, node: cst.CSTNode, visit_children: Callable[[], None]) -> None:
        """Visit ``node`` with a custom order for its children."""
        if self.collecting:
            self.listener.on_visit(node)
        visit_children()
        self.leave(node)

    def _ann_assign(self, node: cst.AnnAssign, context: str) -> None:
        self.visit(node.target, STORE)
        self.visit(node.annotation)
        if node.value is not None:
            self.visit(node.value)

    def _target_value(self, node: Union[cst.AugAssign, cst.NamedExpr], context: str) -> None:
        self.visit(node.target, STORE)
        self.visit(node.value)

    def _as_name(self, node: cst.AsName, context: str) -> None:
        self.visit(node.name, STORE)

    def _del(self, node: cst.Del, context: str) -> None:
        self.visit(node.target, DEL)

    def _for(self, node: cst.For, context: str) -> None:
        self.visit(node.target, STORE)
        self.scope.count += 1
        self.visit(node.iter)
        self.visit(node.body)
        if node.orelse is not None:
            self.visit(node.orelse)

    def _global(self, node: Union[cst.Global, cst.Nonlocal], context: str) -> None:
        record = self.scope.record_global if isinstance(node, cst.Global) else self.scope.record_nonlocal
        for item in node.names:
            record(item.name.value)
        self._silent_children(node)

    # -- reads -------------------------------------------------------------------

    def _attribute(self, node: cst.Attribute, context: str) -> None:
        top = self.attribute_stack[-1] is None
        if top:
            self.attribute_stack[-1] = node
        self.visit(node.value)  # the value is read, whatever the attribute's context
        if top:
            self.attribute_stack[-1] = None
        self.silently(node.attr)

    def _call(self, node: cst.Call, context: str) -> None:
        self.attribute_stack.append(None)
        self.in_type_hint.append(False)
        names = {qn.name for qn in self.scope.get_qualified_names_for(node)}
        if "typing.NewType" in names or "typing.TypeVar" in names:
            self.visit(node.func)
            if node.args:
                self.silently(node.args[0])  # the new type's name: not read
            self.in_type_hint[-1] = True
            for arg in node.args[1:]:
                self.visit(arg)
        elif "typing.cast" in names:
            self.visit(node.func)
            if node.args:
                self.in_type_hint.append(True)
                self.visit(node.args[0])
                self.in_type_hint.pop()
                for arg in node.args[1:]:
                    self.visit(arg)
        else:
            self.children(node, context)
        self.attribute_stack.pop()
        self.in_type_hint.pop()

    def _arg(self, node: cst.Arg, context: str) -> None:
        self.visit(node.value)
        self.silently(node.keyword)

    def _annotation(self, node: cst.Annotation, context: str) -> None:
        self.in_annotation.append(True)
        self.children(node, context)
        self.in_annotation.pop()

    def _subscript(self, node: cst.Subscript, context: str) -> None:
        in_type_hint = False
        if isinstance(node.value, cst.Name):
            names = {qn.name for qn in self.scope.get_qualified_names_for(node.value)}
            if any(name.startswith(("typing.", "typing_extensions.")) for name in names):
                in_type_hint = True
            if "typing.Literal" in names or "typing_extensions.Literal" in names:
                self.ignored_subscripts.add(node)
        self.in_type_hint.append(in_type_hint)
        self.visit(node.value)
        for element in node.slice:
            self.visit(element)
        self.in_type_hint.pop()
        self.ignored_subscripts.discard(node)

    def _string(self, node: Union[cst.SimpleString, cst.ConcatenatedString], context: str) -> None:
        if (self.in_type_hint[-1] or self.in_annotation[-1]) and not self.ignored_subscripts:
            value = node.evaluated_value
            if value:
                self._read_string_annotation(node, value)
                self._silent_children(node)
                return
        if isinstance(node, cst.ConcatenatedString):
            self.children(node, context)

    def _read_string_annotation(self, node: cst.CSTNode, value) -> None:
        """Names in ``"torch.Tensor"`` are reads too; their access is the string."""
        outermost = self.string_annotation is None
        if outermost:
            self.string_annotation = node
        collecting, self.collecting = self.collecting, False
        try:
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            self.visit(cst.parse_module(value))
        except cst.ParserSyntaxError:
            pass  # as CPython: an annotation that is not code is just a string
        finally:
            self.collecting = collecting
            if outermost:
                self.string_annotation = None

    # -- scopes ------------------------------------------------------------------

    def _function(self, node: cst.FunctionDef, context: str) -> None:
        if self.method is None and isinstance(self.scope, ClassScope) and self.scope.node is self.top:
            self.method = node  # a method of a top-level class: what it holds is placed from it
            try:
                self._function_in_scope(node)
            finally:
                self.method = None
        else:
            self._function_in_scope(node)

    def _function_in_scope(self, node: cst.FunctionDef) -> None:
        self.scope.record_assignment(node.name.value, node)
        self.scopes[node.name] = self.scope
        outer = self.scope
        if node.type_parameters is not None:
            outer = AnnotationScope(self.scope, node)
        function = FunctionScope(outer, node, get_full_name_for_node(node.name))

        def visit_all() -> None:
            for decorator in node.decorators:
                self.visit(decorator)
            self.silently(node.name)
            if node.type_parameters is not None:
                self.visit(node.type_parameters)
            self.in_scope(function, lambda: self.visit(node.params))
            if node.returns is not None:
                self.visit(node.returns)
            self.in_scope(function, lambda: self.visit(node.body))

        self.in_scope(outer, visit_all)

    def _lambda(self, node: cst.Lambda, context: str) -> None:
        function = FunctionScope(self.scope, node)
        self.in_scope(function, lambda: (self.visit(node.params), self.visit(node.body)))

    def _param(self, node: cst.Param, context: str) -> None:
        self.scope.record_assignment(node.name.value, node)
        self.scopes[node.name] = self.scope
        self.silently(node.name)

        def defaults() -> None:
            for value in (node.annotation, node.default):
                if value is not None:
                    self.visit(value)

        self.in_scope(self.scope.parent, defaults)

    def _class(self, node: cst.ClassDef, context: str) -> None:
        self.scope.record_assignment(node.name.value, node)
        self.scopes[node.name] = self.scope
        for decorator in node.decorators:
            self.visit(decorator)
        self.silently(node.name)
        outer = self.scope if node.type_parameters is None else AnnotationScope(self.scope, node)
        body = ClassScope(outer, node, get_full_name_for_node(node.name))

        def visit_rest() -> None:
            if node.type_parameters is not None:
                self.visit(node.type_parameters)
            for argument in (*node.bases, *node.keywords):
                self.visit(argument)
            self.in_scope(body, lambda: self.listen(node.body, lambda: self.field(node.body.body)))

        self.in_scope(outer, visit_rest)
        self.scopes.pop(node.body, None)  # libcst's analysis never visits the block itself

    def _comprehension(self, node, context: str) -> None:
        for_in = node.for_in  # read in evaluation order: its iterable outside, the rest inside
        if self.collecting:
            self.listener.on_visit(for_in)
        self.visit(for_in.iter)
        self.scopes[for_in] = self.scope
        inner = ComprehensionScope(self.scope, node)

        def visit_inside() -> None:
            self.visit(for_in.target, STORE)
            self.scope.count += 1
            for condition in for_in.ifs:
                self.visit(condition)
            if for_in.inner_for_in is not None:
                self.visit(for_in.inner_for_in)
            if self.collecting:
                self.tops[for_in] = self.top
                self.listener.on_leave(for_in)
            if isinstance(node, cst.DictComp):
                self.visit(node.key)
                self.visit(node.value)
            else:
                self.visit(node.elt)

        self.in_scope(inner, visit_inside)

    def _comp_for(self, node: cst.CompFor, context: str) -> None:
        self.visit(node.target, STORE)
        self.visit(node.iter)
        for condition in node.ifs:
            self.visit(condition)
        if node.inner_for_in is not None:
            self.visit(node.inner_for_in)

    def _type_alias(self, node: cst.TypeAlias, context: str) -> None:
        self.scope.record_assignment(node.name.value, node)
        self.silently(node.name)
        alias = AnnotationScope(self.scope, node)

        def visit_inside() -> None:
            if node.type_parameters is not None:
                self.visit(node.type_parameters)
            self.visit(node.value)

        self.in_scope(alias, visit_inside)

    def _type_var(self, node: cst.TypeVar, context: str) -> None:
        self.scope.record_assignment(node.name.value, node)
        self.silently(node.name)
        if node.bound is not None:
            self.visit(node.bound)

    def _type_param(self, node, context: str) -> None:
        self.scope.record_assignment(node.name.value, node)
        self.silently(node.name)

    # -- after the walk ------------------------------------------------------------

    def infer_accesses(self) -> None:
        """Attach each read to the bindings it may see (and each binding to its reads)."""
        by_scope_and_name: Dict[Tuple[Scope, str], Set[Access]] = defaultdict(set)
        for access, attribute, string in self.deferred:
            name = access.node.value
            if attribute is not None:
                for dotted, node in dotted_names(attribute):
                    if dotted in access.scope:
                        access.node, name = node, dotted
                        break
            if string is not None:
                access.node = string
            by_scope_and_name[(access.scope, name)].add(access)
            access.scope.record_access(access)
        for (scope, name), accesses in by_scope_and_name.items():
            scope._reads_by_name[name] = accesses
            visible = _Visible(scope, name)
            for access in accesses:
                access._visible = visible
            reads = _Reads(scope, accesses)
            for assignment in scope.resolve(name, scope):
                assignment.record_reads(reads)
        self.deferred = []


def release(scopes: Mapping[cst.CSTNode, Optional[Scope]]) -> None:
    """Break the cycles ``walk``'s scopes are made of, once nothing will ask them again.

    Scopes, bindings and reads refer to each other; left alone, they and
    the tree they point into stay in memory until the garbage collector
    walks them all. Broken, they are freed as soon as the check lets go."""
    seen: Set[int] = set()
    for scope in scopes.values():
        while scope is not None and id(scope) not in seen:
            seen.add(id(scope))
            outer = scope.parent if scope.parent is not scope else None
            if outer is None and scope.globals is not scope:
                outer = scope.globals
            scope._release()
            scope.parent = scope.globals = None  # type: ignore[assignment]
            scope = outer


def walk(module: cst.Module, listener: Listener,
         tops: Optional[Dict[cst.CSTNode, cst.CSTNode]] = None,
         star_exports: Optional[StarExports] = None,
         methods: Optional[Dict[cst.CSTNode, cst.CSTNode]] = None) -> Dict[cst.CSTNode, Scope]:
    """Visit every node of ``module`` once, in libcst's order, telling
    ``listener``; returns the scope of each node (as libcst's ScopeProvider).
    ``tops``, if given, receives each node's top-level statement; ``methods``
    each node's method of a top-level class, for the nodes in one."""
    walker = _Walk(listener, tops, star_exports, methods)
    walker.visit(module)
    walker.infer_accesses()
    walker.handlers.clear()  # its bound methods refer back to the walker: a cycle
    return walker.scopes
