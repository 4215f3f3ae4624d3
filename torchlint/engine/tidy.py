"""The debris fixes leave behind, removed once for every rule.

A fix rewrites an expression; what it makes pointless elsewhere is tidied
here, comparing the module before the fixes with the module after them:

- an import whose every use the fixes removed (``from torch.autograd import
  Variable`` once no ``Variable(...)`` is left). Only imports the fixes
  orphaned: one that was unused before stays, it is not ours to judge; and
  one another module of the project takes from this one (``from model import
  *``) stays too;
- an assignment of names to themselves that the fixes created
  (``x = Variable(x)`` -> ``x = x``, ``a, b = a, b``, ``self.x = self.x``):
  the statement goes.

Uses are counted conservatively: every ``Name`` outside import statements
(attribute and keyword names aside: they never read a variable) and every
word of a string without spaces (``__all__``, string annotations) counts,
so an import is removed only when its name appears nowhere else in
the file's code (prose such as docstrings aside).
A removed line's comments above it move to the next statement; a block left
empty gets ``pass`` (libcst renders it).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, FrozenSet, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

_WORD = re.compile(r"[A-Za-z_]\w*")

Statement = Union[cst.SimpleStatementLine, cst.BaseCompoundStatement]


# Of the names a module's imports bind, those other modules take from it
# (``Project.names_imported_elsewhere``): their imports are no debris.
ImportedElsewhere = Callable[[FrozenSet[str]], FrozenSet[str]]


def tidy(before: cst.Module, after: cst.Module, counted_before: Optional["Counts"] = None,
         imported_elsewhere: Optional[ImportedElsewhere] = None) -> cst.Module:
    """``after`` (``before`` with fixes applied) without the debris the fixes left."""
    before_counts = counts(before) if counted_before is None else counted_before
    after_counts = counts(after)
    uses_before, uses_after = before_counts.uses, after_counts.uses
    orphaned = frozenset(name for name, count in uses_before.items() if count and not uses_after[name])
    orphaned &= after_counts.imported
    if orphaned and imported_elsewhere is not None:
        orphaned -= imported_elsewhere(orphaned)
    old_self_assignments = before_counts.self_assignments
    if not orphaned and not (after_counts.self_assignments - old_self_assignments):
        return after
    return after.visit(_Tidy(orphaned, old_self_assignments, uses_after))


@dataclass(frozen=True)
class Counts:
    """What the tidy step compares in a module, counted in one walk."""

    uses: Counter  # how often each name occurs outside import statements
    imported: FrozenSet[str]  # the names its imports bind
    self_assignments: FrozenSet[Tuple[str, ...]]  # the names of its ``x = x``, ``a, b = a, b``, ``o.x = o.x``


def counts(node: cst.CSTNode) -> Counts:
    visitor = _Uses()
    node.visit(visitor)
    return Counts(visitor.names, frozenset(visitor.imported), frozenset(visitor.self_assigned))


def name_uses(node: cst.CSTNode) -> Counter:
    """How often each name occurs in ``node`` outside import statements."""
    visitor = _Uses()
    node.visit(visitor)
    return visitor.names


class _Uses(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: Counter = Counter()
        self.imported: Set[str] = set()
        self.self_assigned: Set[Tuple[str, ...]] = set()

    def visit_Import(self, node: cst.Import) -> bool:
        self.imported.update(n for n in (_bound_name(a, False) for a in node.names) if n)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if not isinstance(node.names, cst.ImportStar) and not _is_future(node):
            self.imported.update(n for n in (_bound_name(a, True) for a in node.names) if n)
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        names = _self_assigned(node)
        if names is not None:
            self.self_assigned.add(names)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        # ``A.qr`` reads ``A``, never a variable named ``qr``: a fix that
        # rewrites ``qr(A)`` (from-imported) into ``torch.linalg.qr(A)`` orphans the import.
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)  # the keyword of ``f(qr=1)`` is not a use of ``qr``
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.names[node.value] += 1

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self._words(node.value)

    def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
        self._words(node.value)

    def _words(self, text: str) -> None:
        # A name in ``__all__`` or a string annotation (``"Optional[Variable]"``)
        # is a use; prose (a docstring, a message) is not.
        if not any(c.isspace() for c in text.strip("'\"")):
            self.names.update(_WORD.findall(text))


def _bound_name(alias: cst.ImportAlias, from_import: bool) -> Optional[str]:
    """The name an import alias binds: ``b`` for ``a as b``, ``a`` for ``import a.c``."""
    if alias.asname is not None:
        name = alias.asname.name
        return name.value if isinstance(name, cst.Name) else None
    target = alias.name
    if from_import:
        return target.value if isinstance(target, cst.Name) else None
    while isinstance(target, cst.Attribute):
        target = target.value
    return target.value if isinstance(target, cst.Name) else None


def _is_future(node: cst.ImportFrom) -> bool:
    return isinstance(node.module, cst.Name) and node.module.value == "__future__"


def _names_of(node: cst.BaseExpression) -> Optional[Tuple[str, ...]]:
    """``("a", "b")`` for ``a``, ``(a, b)`` or ``a, b``, ``("self.x",)`` for
    ``self.x`` (a dotted name); None for anything else."""
    dotted = _dotted(node)
    if dotted is not None:
        return (dotted,)
    if isinstance(node, (cst.Tuple, cst.List)) and node.elements:
        names: List[str] = []
        for element in node.elements:
            name = _dotted(element.value) if isinstance(element, cst.Element) else None
            if name is None:
                return None
            names.append(name)
        return tuple(names)
    return None


def _dotted(node: cst.BaseExpression) -> Optional[str]:
    """``a`` or ``a.b.c`` spelled out; None for any other expression."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        value = _dotted(node.value)
        return None if value is None else f"{value}.{node.attr.value}"
    return None


def _self_assigned(statement: cst.BaseSmallStatement) -> Optional[Tuple[str, ...]]:
    """The names of ``x = x`` / ``a, b = a, b`` / ``self.x = self.x``; None if ``statement`` is not one."""
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
        return None
    target, value = _names_of(statement.targets[0].target), _names_of(statement.value)
    return target if target is not None and target == value else None


def tidy_statement(statement: Statement, old_self_assignments: FrozenSet[Tuple[str, ...]]) -> Optional[Statement]:
    """A top-level ``statement`` that fixes changed without orphaning any
    import, tidied as ``tidy`` tidies it in its module: without the
    self-assignments the fixes made (``old_self_assignments``: the module's
    before them). None if the statement itself goes (its comments then move
    to the next statement, which only the whole module shows)."""
    tidier = _Tidy(frozenset(), old_self_assignments, Counter())
    kept = tidier._statements([statement.visit(tidier)])
    return kept[0] if kept else None


class _Tidy(cst.CSTTransformer):
    def __init__(self, orphaned: FrozenSet[str], old_self_assignments: FrozenSet[Tuple[str, ...]],
                 used_after: Counter) -> None:
        super().__init__()
        self.orphaned = orphaned
        self.used_after = used_after
        self.old_self_assignments = old_self_assignments

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._statements(updated_node.body))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated_node.with_changes(body=self._statements(updated_node.body))

    def _statements(self, body: Sequence[Statement]) -> List[Statement]:
        kept: List[Statement] = []
        carried: List[cst.EmptyLine] = []  # comment lines of a removed statement
        for statement in body:
            if isinstance(statement, cst.SimpleStatementLine):
                small = [s for s in (self._tidied(s) for s in statement.body) if s is not None]
                if not small:
                    carried.extend(statement.leading_lines)
                    continue
                if len(small) != len(statement.body):
                    small[-1] = small[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
                statement = statement.with_changes(body=small)
            if carried:
                statement = statement.with_changes(leading_lines=[*carried, *statement.leading_lines])
                carried = []
            kept.append(statement)
        return kept  # a comment above a removed last statement goes with it

    def _tidied(self, statement: cst.BaseSmallStatement) -> Optional[cst.BaseSmallStatement]:
        names = _self_assigned(statement)
        if names is not None and names not in self.old_self_assignments:
            return None
        if isinstance(statement, cst.Import) or (
                isinstance(statement, cst.ImportFrom) and not isinstance(statement.names, cst.ImportStar)
                and not _is_future(statement)):
            return self._without_orphans(statement)
        return statement

    def _loads_submodule(self, alias: cst.ImportAlias) -> bool:
        """``import a.b as c`` also makes ``a.b`` usable through ``a``, which
        the file still uses: keep it (torch imports its submodules itself)."""
        if alias.asname is None or not isinstance(alias.name, cst.Attribute):
            return False
        root = _bound_name(alias.with_changes(asname=None), False)
        return root != "torch" and root in self.used_after

    def _without_orphans(self, statement: Union[cst.Import, cst.ImportFrom]) -> Optional[cst.BaseSmallStatement]:
        from_import = isinstance(statement, cst.ImportFrom)
        aliases = list(statement.names)
        kept = [a for a in aliases if _bound_name(a, from_import) not in self.orphaned or self._loads_submodule(a)]
        if len(kept) == len(aliases):
            return statement
        if not kept:
            return None
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return statement.with_changes(names=kept)
