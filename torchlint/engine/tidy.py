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
    old_self_assignments = before_counts.self_assignments | before_counts.self_pairs
    if not orphaned and not (after_counts.self_assignments - old_self_assignments) \
            and not (after_counts.self_pairs - old_self_assignments):
        return after
    return after.visit(_Tidy(orphaned, old_self_assignments, uses_after, "torch" in after_counts.imported))


@dataclass(frozen=True)
class Counts:
    """What the tidy step compares in a module, counted in one walk."""

    uses: Counter  # how often each name occurs outside import statements
    imported: FrozenSet[str]  # the names its imports bind
    self_assignments: FrozenSet[Tuple[str, ...]]  # the names of its ``x = x``, ``a, b = a, b``, ``o.x = o.x``
    # ``("a", "b", "#0")`` for ``a, b = a, f(b)``: the targets and the position of a name assigned itself
    self_pairs: FrozenSet[Tuple[str, ...]] = frozenset()


def counts(node: cst.CSTNode) -> Counts:
    visitor = _Uses()
    node.visit(visitor)
    return Counts(visitor.names, frozenset(visitor.imported), frozenset(visitor.self_assigned),
                  frozenset(visitor.self_pairs))


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
        self.self_pairs: Set[Tuple[str, ...]] = set()

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
        else:
            self.self_pairs.update(_self_pairs(node))

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


def _self_pairs(statement: cst.BaseSmallStatement) -> List[Tuple[str, ...]]:
    """The keys (targets, then ``#i``) of the names ``a, b = a, f(b)`` assigns themselves:
    ``("a", "b", "#0")``. Only for tuples of plain or dotted names as long as their values."""
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
        return []
    target, value = statement.targets[0].target, statement.value
    targets = _names_of(target)
    if targets is None or len(targets) < 2 or not isinstance(value, (cst.Tuple, cst.List)) \
            or type(value) is not type(target) or len(value.elements) != len(targets):
        return []
    return [(*targets, f"#{index}") for index, (name, element) in enumerate(zip(targets, value.elements))
            if isinstance(element, cst.Element) and _dotted(element.value) == name]


def _without_pairs(statement: cst.Assign, dropped: List[int]) -> cst.Assign:
    """``statement`` (a tuple assignment) without the pairs at ``dropped``; a single
    pair left is written ``x = v``."""
    target = statement.targets[0].target
    assert isinstance(target, (cst.Tuple, cst.List)) and isinstance(statement.value, (cst.Tuple, cst.List))
    kept = [index for index in range(len(target.elements)) if index not in dropped]
    if len(kept) == 1:
        only_target = target.elements[kept[0]].value
        only_value = statement.value.elements[kept[0]].value
        return statement.with_changes(targets=[statement.targets[0].with_changes(target=only_target)],
                                      value=only_value)
    targets = _elements_at(target.elements, kept)
    values = _elements_at(statement.value.elements, kept)
    return statement.with_changes(targets=[statement.targets[0].with_changes(target=target.with_changes(
        elements=targets))], value=statement.value.with_changes(elements=values))


def _elements_at(elements: Sequence[cst.BaseElement], kept: List[int]) -> List[cst.BaseElement]:
    chosen = [elements[index] for index in kept]
    last_comma = elements[-1].comma
    chosen[-1] = chosen[-1].with_changes(comma=last_comma)
    return chosen


def tidy_statement(statement: Statement, old_self_assignments: FrozenSet[Tuple[str, ...]]) -> Optional[Statement]:
    """A top-level ``statement`` that fixes changed without orphaning any
    import, tidied as ``tidy`` tidies it in its module: without the
    self-assignments the fixes made (``old_self_assignments``: the module's
    before them). None if the statement itself goes (its comments then move
    to the next statement, which only the whole module shows)."""
    tidier = _Tidy(frozenset(), old_self_assignments, Counter())
    kept = tidier._statements([statement.visit(tidier)], block=False)
    return kept[0] if kept else None


class _Tidy(cst.CSTTransformer):
    def __init__(self, orphaned: FrozenSet[str], old_self_assignments: FrozenSet[Tuple[str, ...]],
                 used_after: Counter, imports_torch: bool = False) -> None:
        super().__init__()
        self.orphaned = orphaned
        self.used_after = used_after
        self.old_self_assignments = old_self_assignments
        self.imports_torch = imports_torch

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._statements(updated_node.body, block=False))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated_node.with_changes(body=self._statements(updated_node.body, block=True))

    def _statements(self, body: Sequence[Statement], block: bool) -> List[Statement]:
        kept: List[Statement] = []
        carried: List[cst.EmptyLine] = []  # the lines above a removed statement that stay
        for position, statement in enumerate(body):
            if isinstance(statement, cst.SimpleStatementLine):
                small = [s for s in (self._tidied(s) for s in statement.body) if s is not None]
                if not small:
                    carried = self._carry(carried, statement, body[position + 1:])
                    continue
                if len(small) != len(statement.body):
                    small[-1] = small[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
                statement = statement.with_changes(body=small)
            elif isinstance(statement, cst.If) and _emptied(statement):
                replaced = self._without_empty_branch(statement)
                if replaced is None:
                    carried = self._carry(carried, statement, body[position + 1:])
                    continue
                statement = replaced
            if carried:
                statement = statement.with_changes(leading_lines=_joined(carried, statement.leading_lines))
                carried = []
            if block and not kept and body and not _starts_blank(body[0]):
                statement = statement.with_changes(leading_lines=_without_leading_blanks(statement.leading_lines))
            kept.append(statement)
        return kept  # a comment above a removed last statement goes with it

    @staticmethod
    def _carry(carried: List[cst.EmptyLine], removed: Statement, rest: Sequence[Statement]) -> List[cst.EmptyLine]:
        """The lines above ``removed`` that stay for the next statement: the comments
        right above it go with it when it was alone in its paragraph (a blank line or
        the block's end follows it: they spoke of it), directives always stay."""
        lines = list(removed.leading_lines)
        alone = not rest or any(line.comment is None for line in rest[0].leading_lines[:1])
        if alone:
            cut = len(lines)
            while cut and lines[cut - 1].comment is not None and not _DIRECTIVE.match(lines[cut - 1].comment.value):
                cut -= 1
            lines = lines[:cut]
        return _joined(carried, lines)

    def _without_empty_branch(self, statement: cst.If) -> Optional[cst.If]:
        """An ``if`` whose body the tidy step emptied: gone when it has no ``else`` and its
        test does nothing (None), ``if not test:`` with the ``else`` body when it has one;
        kept as it is (with ``pass``) otherwise."""
        if statement.orelse is None:
            return None if self._pure(statement.test) else statement
        if isinstance(statement.orelse, cst.Else):
            return statement.with_changes(test=_negated(statement.test), body=statement.orelse.body, orelse=None)
        return statement

    def _pure(self, test: cst.BaseExpression) -> bool:
        from torchlint.rules.edits import without_side_effects

        if without_side_effects(test):
            return True
        # torch.cuda.is_available(): the one call the guarded legacy code tests
        return self.imports_torch and isinstance(test, cst.Call) and not test.args \
            and _dotted(test.func) in _PURE_TORCH_QUERIES

    def _tidied(self, statement: cst.BaseSmallStatement) -> Optional[cst.BaseSmallStatement]:
        names = _self_assigned(statement)
        if names is not None and names not in self.old_self_assignments:
            return None
        if isinstance(statement, cst.Assign):
            pairs = [int(pair[-1][1:]) for pair in _self_pairs(statement) if pair not in self.old_self_assignments]
            if pairs:
                return _without_pairs(statement, pairs)
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


# Comments that configure tools rather than describe code: never dropped with a statement.
_DIRECTIVE = re.compile(r"#\s*(fmt|isort|noqa|type|pylint|pragma|ruff|mypy|yapf|flake8)\b")
_PURE_TORCH_QUERIES = frozenset({"torch.cuda.is_available"})


def _emptied(statement: cst.If) -> bool:
    """Has the tidy step removed every statement of the ``if``'s body (Python needs one)?"""
    return isinstance(statement.body, cst.IndentedBlock) and not statement.body.body


def _negated(test: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and not test.lpar:
        return test.expression
    atom = isinstance(test, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or bool(test.lpar)
    operand = test if atom else test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.UnaryOperation(operator=cst.Not(), expression=operand)


def _starts_blank(statement: Statement) -> bool:
    lines = statement.leading_lines
    return bool(lines) and lines[0].comment is None


def _without_leading_blanks(lines: Sequence[cst.EmptyLine]) -> List[cst.EmptyLine]:
    """``lines`` without the blank lines before their first comment (a block's first
    statement had none: none are brought up to it)."""
    start = 0
    while start < len(lines) and lines[start].comment is None:
        start += 1
    return list(lines[start:])


def _joined(first: Sequence[cst.EmptyLine], second: Sequence[cst.EmptyLine]) -> List[cst.EmptyLine]:
    """``first`` then ``second``, a run of blank lines where they meet no longer than
    the longer of the runs each had (two paragraphs' separators make one)."""
    lines = [*first, *second]
    longest = max(_longest_blank_run(first), _longest_blank_run(second))
    joined: List[cst.EmptyLine] = []
    run = 0
    for line in lines:
        run = run + 1 if line.comment is None else 0
        if run <= max(longest, 1) or line.comment is not None:
            joined.append(line)
    return joined


def _longest_blank_run(lines: Sequence[cst.EmptyLine]) -> int:
    longest = run = 0
    for line in lines:
        run = run + 1 if line.comment is None else 0
        longest = max(longest, run)
    return longest
