"""Is autograd recording off where a node runs, and how to turn it off exactly
where ``volatile=True`` once did. Shared by the rules that ask (TL209's totals,
TL102's ``volatile=``, TL107's ``Variable`` wrappers)."""

from __future__ import annotations

from typing import Callable, List, Optional, Set, Tuple, Union

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.torch_api import NO_GRAD_CONTEXTS, SET_GRAD_ENABLED
from torchlint.rules import edits
from torchlint.rules._renames import spell_qualified


def grad_disabled(ctx: NodeContext) -> bool:
    """Inside ``with torch.no_grad():`` (or inference_mode, set_grad_enabled(False)) or a function decorated so."""
    for frame in ctx.enclosing_in_function(cst.With, cst.FunctionDef):
        if isinstance(frame, cst.With):
            if any(disables_grad(item.item, ctx) for item in frame.items):
                return True
        else:
            assert isinstance(frame, cst.FunctionDef)
            if any(disables_grad(d.decorator, ctx) for d in frame.decorators):
                return True
    return False


def disables_grad(expr: cst.BaseExpression, ctx: NodeContext) -> bool:
    func = expr.func if isinstance(expr, cst.Call) else expr
    name = ctx.resolver.resolve(func)
    if name in NO_GRAD_CONTEXTS:
        return True
    if name in SET_GRAD_ENABLED and isinstance(expr, cst.Call) and expr.args:
        return edits.literal_value(expr.args[0].value) == (True, False)
    return False


def no_grad_block(call: cst.Call, ctx: NodeContext, rewrite: Callable[[cst.Call], cst.BaseExpression]) -> Optional[Fix]:
    """The unsafe fix of ``Variable(x, volatile=True)`` (TL102, and TL107 where the
    wrapper goes too; ``rewrite`` makes ``call``'s new form): the statement holding it and
    the rest of its block go in ``with torch.no_grad():``, where torch builds no
    graph, as ``volatile`` once did for whatever the value reached. None unless
    that is exact: the value is bound to plain names that the statements after it
    use and nothing outside the block reads (not returned, not read after the block,
    in another pass of a loop around it, or in a def); nothing in the def (or the
    module's code) differentiates; the statements moved define no code run later
    (def, class, lambda), suspend nothing (``yield``, ``await``), touch no
    ``requires_grad`` or grad mode; and a value they return is differentiated by no
    caller."""
    line = ctx.file.line_of_call(call)
    names = _bound_names(line, call) if line is not None else None
    function = ctx.enclosing(cst.FunctionDef)
    scope = function if function is not None else ctx.file.module
    found = _block_holding(scope, line) if names else None
    spelled = spell_qualified("torch.no_grad", call, ctx)
    if found is None or spelled is None or ctx.inference.differentiates_where(call):
        return None
    block, index, loops = found
    moved = list(block.body[index:])
    mover = _Moved()
    for statement in moved:
        statement.visit(mover)
    if mover.blocked or not _stays_inside(names, moved, block, loops, scope):
        return None
    if mover.returns_value and (not isinstance(function, cst.FunctionDef)
                                or ctx.inference.result_may_be_differentiated(function)):
        return None
    code, required = spelled
    context = cst.parse_expression(f"{code}()")

    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, (cst.IndentedBlock, cst.Module))
        if len(node.body) != len(block.body):
            raise ValueError("the block changed under the fix")
        body = [statement.visit(_Rewrite(call, rewrite)).visit(_BareBlankLines()) for statement in node.body[index:]]
        first = body[0]
        wrapped = cst.With(items=[cst.WithItem(item=context)],
                           body=cst.IndentedBlock(body=[first.with_changes(leading_lines=[]), *body[1:]]),
                           leading_lines=first.leading_lines)
        return node.with_changes(body=[*node.body[:index], wrapped])

    return Fix([Edit(block, apply)], safe=False, required_imports=required)


def _block_holding(root: cst.CSTNode, line: cst.SimpleStatementLine
                   ) -> Optional[Tuple[Union[cst.IndentedBlock, cst.Module], int, List[cst.CSTNode]]]:
    """The block under ``root`` whose statements include ``line``, its index there, and
    the loops around it under ``root`` (their next pass reads what the block bound)."""
    finder = _BlockFinder(line)
    root.visit(finder)
    return finder.found


class _BlockFinder(cst.CSTVisitor):
    """A module-level class: a class made per call would leave cycles for the collector."""

    def __init__(self, line: cst.SimpleStatementLine) -> None:
        super().__init__()
        self.line = line
        self.loops: List[cst.CSTNode] = []
        self.found: Optional[Tuple[Union[cst.IndentedBlock, cst.Module], int, List[cst.CSTNode]]] = None

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found is not None:
            return False
        if isinstance(node, (cst.IndentedBlock, cst.Module)):
            for index, statement in enumerate(node.body):
                if statement is self.line:
                    self.found = (node, index, list(self.loops))
                    return False
        if isinstance(node, (cst.For, cst.While)):
            self.loops.append(node)
        return not isinstance(node, cst.BaseExpression)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if self.loops and original_node is self.loops[-1] and self.found is None:
            self.loops.pop()


def _bound_names(line: cst.SimpleStatementLine, call: cst.Call) -> Optional[Set[str]]:
    """The plain names ``line`` binds, when it is ``x = ...Variable(...)...`` (or ``a, b = ...``);
    None for any other statement (a return, an attribute or item stored: the value leaves)."""
    if len(line.body) != 1 or not isinstance(line.body[0], cst.Assign):
        return None
    names: Set[str] = set()
    for target in line.body[0].targets:
        parts = target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else [target.target]
        for part in parts:
            value = part.value if isinstance(part, cst.Element) else part
            if not isinstance(value, cst.Name):
                return None
            names.add(value.value)
    return names


def _stays_inside(names: Set[str], moved: List[cst.CSTNode], block: cst.CSTNode, loops: List[cst.CSTNode],
                  scope: cst.CSTNode) -> bool:
    """Is the value bound to ``names`` used in the statements after its own among ``moved``,
    and read nowhere the ``no_grad`` block does not cover: not returned, not after the
    block, not in another pass of a loop around it, not in a def (run later)?"""
    used = _Reads(names)
    for statement in moved[1:]:
        statement.visit(used)
    if not used.found or any(_returns_any(statement, names) for statement in moved):
        return False
    outside = _Reads(names, skipped={id(s) for s in moved}, block=block, loops={id(loop) for loop in loops})
    scope.visit(outside)
    return not outside.found


def _returns_any(statement: cst.CSTNode, names: Set[str]) -> bool:
    finder = _ReturnReads(names)
    statement.visit(finder)
    return finder.found


class _ReturnReads(cst.CSTVisitor):
    """Does a ``return`` read any of ``names``?"""

    def __init__(self, names: Set[str]) -> None:
        super().__init__()
        self.names = names
        self.found = False

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and not self.found:
            reads = _Reads(self.names)
            node.value.visit(reads)
            self.found = reads.found


class _Reads(cst.CSTVisitor):
    """Reads of ``names`` (a name assigned, a loop's target, is no read). With ``block``:
    only those after it, in a loop of ``loops`` or in a def, outside the ``skipped`` statements."""

    def __init__(self, names: Set[str], skipped: Set[int] = frozenset(), block: Optional[cst.CSTNode] = None,
                 loops: Set[int] = frozenset()) -> None:
        super().__init__()
        self.names = names
        self.skipped = skipped
        self.block = block
        self.loops = loops
        self.after = block is None  # without a block every read counts
        self.depth = 0  # loops of ``loops`` and defs entered
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found or id(node) in self.skipped:
            return False
        if isinstance(node, cst.AssignTarget) and _plain_names(node.target):
            return False
        if isinstance(node, cst.For) and _plain_names(node.target):
            self._enter(node)
            for part in (node.iter, node.body, node.orelse):
                if part is not None:
                    part.visit(self)
            self._leave(node)
            return False
        self._enter(node)
        if isinstance(node, cst.Name) and node.value in self.names and (self.after or self.depth):
            self.found = True
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._leave(original_node)
        if original_node is self.block:
            self.after = True

    def _enter(self, node: cst.CSTNode) -> None:
        if id(node) in self.loops or (self.block is not None and isinstance(node, (cst.FunctionDef, cst.Lambda))):
            self.depth += 1

    def _leave(self, node: cst.CSTNode) -> None:
        if id(node) in self.loops or (self.block is not None and isinstance(node, (cst.FunctionDef, cst.Lambda))):
            self.depth -= 1


def _plain_names(target: cst.BaseExpression) -> bool:
    if isinstance(target, cst.Name):
        return True
    return isinstance(target, (cst.Tuple, cst.List)) and all(
        isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements)


class _Moved(cst.CSTVisitor):
    """What the statements moved into the ``no_grad`` block hold that makes it inexact."""

    _BLOCKING = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Yield, cst.Await, cst.Global, cst.Nonlocal)
    _GRAD_WORDS = frozenset({"requires_grad", "requires_grad_", "enable_grad", "set_grad_enabled", "backward",
                             "grad"})

    def __init__(self) -> None:
        super().__init__()
        self.blocked = False
        self.returns_value = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "requires_grad" \
                and edits.literal_value(node.value) == (True, False):
            return False  # ``Variable(t, requires_grad=False)``: the default, nothing to record
        if isinstance(node, self._BLOCKING) or (isinstance(node, cst.Name) and node.value in self._GRAD_WORDS):
            self.blocked = True
        if isinstance(node, cst.Return) and node.value is not None:
            self.returns_value = True
        return not self.blocked


class _Rewrite(cst.CSTTransformer):
    """``call`` rewritten by ``rewrite`` (``volatile=`` dropped: inside ``no_grad`` it asks
    for nothing more); left as it is if another fix of the round changed it."""

    def __init__(self, call: cst.Call, rewrite: Callable[[cst.Call], cst.BaseExpression]) -> None:
        super().__init__()
        self._call = call
        self._rewrite = rewrite

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if original_node is self._call:
            return self._rewrite(updated_node)
        return updated_node


class _BareBlankLines(cst.CSTTransformer):
    """Blank lines of the moved statements stay empty: indented one level deeper,
    libcst would write the new indentation on them (trailing whitespace)."""

    def leave_EmptyLine(self, original_node: cst.EmptyLine, updated_node: cst.EmptyLine) -> cst.EmptyLine:
        if updated_node.comment is None and updated_node.indent:
            return updated_node.with_changes(indent=False)
        return updated_node
