"""TL301: `log(1 + x)`, `exp(x) - 1` and `log(sum(exp(x)))` lose precision; use the fused functions."""

from __future__ import annotations

import ast
from typing import Callable, Iterator, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.integral import IntegerValues
from torchlint.analysis.outline import Outline, calls_resolving_to, may_resolve_to
from torchlint.analysis.screens import CallArgs, CallThen
from torchlint.core.diagnostic import Edit, Fix
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting

LOG = "torch.log"
EXP = "torch.exp"
SUM = "torch.sum"


class ImpreciseMath(Rule):
    code = "TL301"
    name = "imprecise-log-exp"
    summary = (
        "`torch.log(1 + x)`, `torch.exp(x) - 1` and `torch.log(torch.sum(torch.exp(x), dim))` lose precision; "
        "use `torch.log1p`, `torch.expm1`, `torch.logsumexp`"
    )
    why = (
        "Floating point cannot represent `1 + x` exactly when `x` is small: in float32 `1 + 1e-10` is exactly "
        "1, so `torch.log(1 + x)` returns 0 and `torch.exp(x) - 1` returns 0 where the answer is 1e-10; "
        "relative errors grow as `x` shrinks well before that. `torch.log1p(x)` and `torch.expm1(x)` compute "
        "the same functions without forming `1 + x`. `torch.log(torch.sum(torch.exp(x), dim))` overflows to "
        "`inf` as soon as an element exceeds about 88 (float32), and underflows to `-inf` for very negative "
        "inputs; `torch.logsumexp(x, dim)` subtracts the maximum first and stays finite. These patterns are "
        "everywhere in log-likelihoods, softplus-like terms and attention scores, and their failures are "
        "silent: no warning, just zeros, infs and NaN gradients. The sum must have an explicit `dim`: "
        "`torch.logsumexp` requires one (a sum over all elements is reported without a fix). Where the code "
        "shows `x` holds whole numbers only (`torch.arange(n)`, differences and absolute values of such, sizes, "
        "`torch.floor(...)`, parameters annotated `int`), `1 + x` is exact and `x` is 0 or at least 1 in size, "
        "so nothing is lost and the rule stays silent. So it does where `exp(x) - 1`, maybe scaled, is assigned "
        "to a name that its block only rounds (`torch.round`, `torch.ceil`, ...) or compares with numbers before "
        "binding it again: the precision `expm1` adds, far below 1, is rounded away before any use."
    )
    fix_safety = FixSafety.UNSAFE
    fix_description = (
        "Rewrites to `torch.log1p(x)`, `torch.expm1(x)` or `torch.logsumexp(x, dim, keepdim)`, spelled with "
        "the module the original call used. The results change in the last bits (and from 0 or `inf` to the "
        "right value where the old form failed), which is the point but not a behaviour-preserving edit, so "
        "the fix is unsafe. No fix when the sum has no `dim`, or `dtype=` / `out=` arguments."
    )
    # log(1 + x) / log(x + 1) / log(sum(exp(x))), or exp(x) - 1.
    triggers = (CallArgs("log", r"\+|exp"), CallThen("exp", r"\s*-"))
    # Whole numbers may come as the items of a tuple another method of the class returns
    # (``integral.py``'s ``item_whole``): that method's body is read.
    whole_file = True

    references = (
        "https://pytorch.org/docs/stable/generated/torch.log1p.html",
        "https://pytorch.org/docs/stable/generated/torch.expm1.html",
    )
    flagged = (
        Example(
            """
            import torch
            x = torch.linspace(-0.5, 2.0, 6)
            a = torch.log(1 + x)
            b = torch.log(x + 1.0)
            c = torch.exp(x) - 1
            """,
            """
            import torch
            x = torch.linspace(-0.5, 2.0, 6)
            a = torch.log1p(x)
            b = torch.log1p(x)
            c = torch.expm1(x)
            """,
            count=3,
            runnable=True,
        ),
        Example(
            """
            import torch as th
            scores = th.arange(12.0).reshape(3, 4) / 4
            lse = th.log(th.sum(th.exp(scores), dim=1))
            kept = th.log(th.exp(scores).sum(0, keepdim=True))
            """,
            """
            import torch as th
            scores = th.arange(12.0).reshape(3, 4) / 4
            lse = th.logsumexp(scores, dim=1)
            kept = th.logsumexp(scores, 0, keepdim=True)
            """,
            count=2,
            runnable=True,
        ),
        Example(
            """
            from torch import exp, log
            y = log(1 + exp(z))
            """,
            """
            import torch
            from torch import exp
            y = torch.log1p(exp(z))
            """,
        ),
        Example(
            """
            import torch
            total = torch.log(torch.sum(torch.exp(x)))  # no dim: logsumexp needs one
            """,
        ),
        Example(
            """
            import torch


            def scaled_log_coords(n: int):
                coords = torch.arange(n).float()
                if n > 1:
                    coords /= n - 1  # now in [0, 1]: no longer whole numbers
                return torch.log(1 + coords)


            def shifted(n: int):
                half = torch.arange(0.5, n)  # 0.5, 1.5, ...
                return torch.exp(half) - 1
            """,
            """
            import torch


            def scaled_log_coords(n: int):
                coords = torch.arange(n).float()
                if n > 1:
                    coords /= n - 1  # now in [0, 1]: no longer whole numbers
                return torch.log1p(coords)


            def shifted(n: int):
                half = torch.arange(0.5, n)  # 0.5, 1.5, ...
                return torch.expm1(half)
            """,
            count=2,
        ),
        Example(
            """
            import torch


            def durations(log_durations, mask):
                frames = (torch.exp(log_durations) - 1) * mask
                frames[frames < 1] = 1.0
                return frames / frames.sum()  # used as they are: small values keep their error
            """,
            """
            import torch


            def durations(log_durations, mask):
                frames = (torch.expm1(log_durations)) * mask
                frames[frames < 1] = 1.0
                return frames / frames.sum()  # used as they are: small values keep their error
            """,
        ),
    )
    accepted = (
        """
        import torch
        m = torch.max(x)
        y = m + torch.log(torch.sum(torch.exp(x - m)))  # already shifted by the maximum
        shifted = x - m
        z = m + torch.log(torch.sum(torch.exp(shifted)))  # the same, in two statements
        """,
        """
        import torch
        a = torch.log1p(x)
        b = torch.expm1(x)
        c = torch.logsumexp(x, dim=1)
        d = torch.log(2 + x)
        e = torch.exp(x) - 2
        f = torch.log(x - 1)
        g = 1 - torch.exp(x)
        """,
        """
        import math
        import numpy as np
        a = math.log(1 + x)
        b = np.exp(x) - 1
        c = np.log(np.sum(np.exp(x), axis=1))
        """,
        """
        def log(x):
            return x
        y = log(1 + 2)
        """,
        """
        from typing import Tuple

        import torch


        def log_relative_coords(window: Tuple[int, int], mode: str):
            # whole numbers: 1 + x is exact, and log1p gains nothing
            coords = torch.arange(-(window[0] - 1), window[0]).to(torch.float32)
            table = torch.stack(torch.meshgrid(coords, coords, indexing="ij")).permute(1, 2, 0)
            if mode == "scaled":
                table[:, :, 0] /= window[0] - 1
                table = torch.log2(1.0 + table.abs())
            else:
                table = torch.sign(table) * torch.log(1.0 + table.abs())
            return table


        def pairwise(n, positions):
            steps = torch.arange(n, dtype=torch.float32)
            distance = steps[:, None] - steps[None, :]
            buckets = torch.log(1 + torch.floor(positions / n))
            return torch.log(1 + distance.abs()), torch.exp(distance) - 1, buckets
        """,
        """
        import torch


        def durations(log_durations, mask, scale):
            # rounded to whole frames before any use: what expm1 adds below 1 is rounded away
            frames = (torch.exp(log_durations) - 1) * mask * scale
            frames[frames < 1] = 1.0
            frames = torch.round(frames)
            return frames.sum(1)


        def lengths(log_durations):
            w = torch.exp(log_durations) - 1
            w_ceil = torch.clamp_min(torch.ceil(w), 1)
            return w_ceil.sum()
        """,
        """
        import torch
        import torch.nn as nn


        class Aligner(nn.Module):
            def _durations(self, path):
                return torch.sum(path, -1).int(), path

            def forward(self, path):
                durations, _ = self._durations(path)  # integer counts: 1 + x is exact
                return torch.log(durations + 1)
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # torch.log (however imported) of ``1 + x`` / ``x + 1`` or of a sum of
        # torch.exp(x); or ``torch.exp(x) - 1``.
        for call in calls_resolving_to(outline, (LOG,)):
            argument = _only_argument(call)
            if isinstance(argument, ast.BinOp) and isinstance(argument.op, ast.Add):
                if (_one(argument.left) and not _number(argument.right)) or (
                    _one(argument.right) and not _number(argument.left)
                ):
                    return True
            elif isinstance(argument, ast.Call):
                func = argument.func
                if isinstance(func, ast.Attribute) and func.attr == "sum" and isinstance(func.value, ast.Call):
                    exp: Optional[ast.AST] = func.value
                elif argument.args and may_resolve_to(outline, func, (SUM,)):
                    exp = argument.args[0]
                else:
                    continue
                if _exp_call(outline, exp):
                    shifted = exp.args[0]  # type: ignore[union-attr]
                    if not (isinstance(shifted, ast.BinOp) and isinstance(shifted.op, ast.Sub)):
                        return True
        return any(
            isinstance(node.op, ast.Sub) and _one(node.right) and _exp_call(outline, node.left)
            for node in outline.nodes(ast.BinOp)
        )

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        if not _single_positional(node) or ctx.resolver.resolve(node.func) != LOG:
            return
        argument = node.args[0].value
        if isinstance(argument, cst.BinaryOperation) and isinstance(argument.operator, cst.Add):
            side = _one_side(argument)
            if side is not None and not _whole(argument.right if side == "left" else argument.left, ctx) \
                    and not _rounded_right_away(node, ctx):
                spelled = _spelled(node, "log1p", ctx)
                fix = None
                if spelled is not None:
                    code, required = spelled
                    fix = Fix([Edit(node, _log1p(code, side))], safe=False, required_imports=required)
                operand = edits.expression_code(argument.right if side == "left" else argument.left)
                yield Finding(node, f"`log(1 + x)` loses precision for small `x`; use `log1p({operand})`", fix)
            return
        if isinstance(argument, cst.Call):
            yield from self._check_logsumexp(node, argument, ctx)

    def check_BinaryOperation(self, node: cst.BinaryOperation, ctx: NodeContext) -> Iterator[Finding]:
        if not isinstance(node.operator, cst.Subtract) or not _is_one(node.right):
            return
        left = node.left
        if not isinstance(left, cst.Call) or not _single_positional(left) or left.args[0].keyword is not None:
            return
        if ctx.resolver.resolve(left.func) != EXP or _whole(left.args[0].value, ctx) or _rounded_right_away(node, ctx) \
                or _rounded_before_use(node, ctx):
            return
        spelled = _spelled(left, "expm1", ctx)
        fix = None
        if spelled is not None:
            code, required = spelled
            fix = Fix([Edit(node, _expm1(code))], safe=False, required_imports=required)
        operand = edits.expression_code(left.args[0].value)
        yield Finding(node, f"`exp(x) - 1` loses precision for small `x`; use `expm1({operand})`", fix)

    def _check_logsumexp(self, log: cst.Call, inner: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        # torch.sum(torch.exp(x), ...) or torch.exp(x).sum(...)
        if isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "sum" and isinstance(
            inner.func.value, cst.Call
        ):
            exp, rest, method = inner.func.value, list(inner.args), True
        elif ctx.resolver.resolve(inner.func) == SUM and inner.args and inner.args[0].keyword is None \
                and not inner.args[0].star and isinstance(inner.args[0].value, cst.Call):
            exp, rest, method = inner.args[0].value, list(inner.args[1:]), False
        else:
            return
        if not _single_positional(exp) or exp.args[0].keyword is not None or ctx.resolver.resolve(exp.func) != EXP:
            return
        shifted = exp.args[0].value
        if isinstance(shifted, cst.Name):
            # ``value0 = value - m`` just before: the same stable form, in two statements
            shifted = ctx.inference.dominating_value(shifted) or shifted
        if isinstance(shifted, cst.BinaryOperation) and isinstance(shifted.operator, cst.Subtract):
            return  # ``exp(x - m)``: the hand-written stable form (m the maximum); it does not overflow
        dim = _dim(rest)
        fix = None
        if dim is not None and all(_known_sum_argument(arg) for arg in rest):
            spelled = _spelled(log, "logsumexp", ctx)
            if spelled is not None:
                code, required = spelled
                fix = Fix([Edit(log, _logsumexp(code, method))], safe=False, required_imports=required)
        operand = edits.expression_code(exp.args[0].value)
        if dim is None:
            message = fitting(f"`log(sum(exp(x)))` overflows for large `x`; use `logsumexp({operand}, dim)`",
                              "`log(sum(exp(x)))` overflows for large `x`; use `logsumexp(x, dim)`")
            detail = "`logsumexp` needs a `dim`: flatten first to reduce over all elements"
        else:
            message = fitting(f"`log(sum(exp(x)))` overflows for large `x`; use `logsumexp({operand}, ...)`",
                              "`log(sum(exp(x)))` overflows for large `x`; use `logsumexp(x, ...)`")
            detail = ""
        yield Finding(log, message, fix, detail=detail)


# Rounding to whole numbers: what ``log1p``/``expm1`` add (precision for small values,
# far below 1) is rounded away when the result goes straight into one of these.
_ROUNDING = frozenset(("torch.round", "torch.floor", "torch.ceil", "torch.trunc", "torch.fix", "builtins.round",
                       "builtins.int", "math.floor", "math.ceil", "math.trunc"))
_ROUNDING_METHODS = frozenset(("round", "floor", "ceil", "trunc", "fix", "long", "int"))


def _rounded_right_away(node: cst.BaseExpression, ctx: NodeContext) -> bool:
    """Is ``node`` the argument (or receiver) of a rounding to whole numbers
    (``torch.round(torch.exp(d) - 1)``, ``(torch.exp(d) - 1).long()``)?"""
    return node in ctx.file.memo(("TL301", "rounded"), lambda: _rounded_operands(ctx))


def _rounded_operands(ctx: NodeContext) -> Set[cst.CSTNode]:
    rounded: Set[cst.CSTNode] = set()
    for call in ctx.file.nodes(cst.Call):
        assert isinstance(call, cst.Call)
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _ROUNDING_METHODS and not call.args:
            rounded.add(func.value)
        elif _single_positional(call) and call.args[0].keyword is None and \
                ctx.resolver.resolve(func) in _ROUNDING:
            rounded.add(call.args[0].value)
    return rounded


def _rounded_before_use(node: cst.BaseExpression, ctx: NodeContext) -> bool:
    """Is ``node`` (scaled, maybe: ``(exp(d) - 1) * mask * scale``) assigned to a name that the
    rest of its block only rounds or compares with numbers before binding it again?

        durations = (torch.exp(log_durations) - 1) * mask
        durations[durations < 1] = 1
        durations = torch.round(durations)

    What ``expm1`` adds, precision for results far below 1, is rounded away before any use."""
    function = ctx.enclosing(cst.FunctionDef)
    if not isinstance(function, cst.FunctionDef):
        return False
    found = _assigning_block(function.body, node)
    if found is None:
        return False
    block, position, name = found
    rounded = ctx.file.memo(("TL301", "rounded"), lambda: _rounded_operands(ctx))
    before_rebinding = []  # the reads of this value: up to the statement that binds the name again
    after_rebinding = []  # the reads of the next value
    rebound = False
    for statement in block[position + 1:]:
        (after_rebinding if rebound else before_rebinding).extend(_name_reads(statement, name))
        rebound = rebound or _rebinds(statement, name)
    if not before_rebinding or not all(read in rounded or _compared_with_a_number(read, statement)
                                       for read, statement in _with_statements(block[position + 1:],
                                                                               before_rebinding)):
        return False
    # No other read anywhere in the function (before it, in a loop's next round, after the block).
    return len(list(_name_reads(function.body, name))) == len(before_rebinding) + len(after_rebinding)


def _with_statements(statements: Sequence[cst.BaseStatement], reads: Sequence[cst.Name]
                     ) -> Iterator[Tuple[cst.Name, cst.BaseStatement]]:
    """Each of ``reads`` with the statement of ``statements`` holding it."""
    wanted = set(reads)
    for statement in statements:
        for read in _all_names(statement):
            if read in wanted:
                yield read, statement


def _all_names(node: cst.CSTNode) -> Iterator[cst.Name]:
    class Names(cst.CSTVisitor):
        def __init__(self) -> None:
            self.found: list = []

        def visit_Name(self, name: cst.Name) -> None:
            self.found.append(name)

    names = Names()
    node.visit(names)
    return iter(names.found)


def _assigning_block(body: cst.BaseSuite, node: cst.BaseExpression
                     ) -> Optional[Tuple[Sequence[cst.BaseStatement], int, str]]:
    """(the statements of the block, the index of the one, the name) where ``name = <node, scaled>``."""
    statements = body.body if isinstance(body, cst.IndentedBlock) else ()
    for index, statement in enumerate(statements):
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                        isinstance(small.targets[0].target, cst.Name) and _scaled(small.value, node):
                    return statements, index, small.targets[0].target.value
            continue
        for child in statement.children:
            if isinstance(child, cst.BaseSuite):
                found = _assigning_block(child, node)
                if found is not None:
                    return found
        orelse = getattr(statement, "orelse", None)
        while orelse is not None:
            found = _assigning_block(orelse.body, node)
            if found is not None:
                return found
            orelse = getattr(orelse, "orelse", None)
    return None


def _scaled(value: cst.BaseExpression, node: cst.BaseExpression) -> bool:
    """``value`` is ``node``, or a product or quotient with ``node`` as a factor (not a divisor)."""
    if value is node:
        return True
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Multiply, cst.Divide)):
        return _scaled(value.left, node) or (isinstance(value.operator, cst.Multiply) and _scaled(value.right, node))
    return False


def _rebinds(statement: cst.BaseStatement, name: str) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and any(
            isinstance(t, cst.Name) and t.value == name
            for t in ([x.target for x in small.targets] if isinstance(small, cst.Assign) else [small.target]))
        for small in statement.body)


def _name_reads(statement: cst.CSTNode, name: str) -> Iterator[cst.Name]:
    """The reads of ``name`` in ``statement`` (a store in a subscript target counts as a read)."""
    class Reads(cst.CSTVisitor):
        def __init__(self) -> None:
            self.found: list = []
            self.stored: Set[cst.CSTNode] = set()

        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            if isinstance(target.target, cst.Name):
                self.stored.add(target.target)

        def visit_Name(self, read: cst.Name) -> None:
            if read.value == name and read not in self.stored:
                self.found.append(read)

    reads = Reads()
    statement.visit(reads)
    return iter(reads.found)


def _compared_with_a_number(read: cst.Name, statement: cst.CSTNode) -> bool:
    """``read < 1``, or the receiver of a store into it at such a mask (``d[d < 1] = 1``):
    a comparison with a constant, which the lost precision cannot change."""
    class Find(cst.CSTVisitor):
        def __init__(self) -> None:
            self.ok = False

        def visit_Comparison(self, comparison: cst.Comparison) -> None:
            operands = [comparison.left] + [c.comparator for c in comparison.comparisons]
            if read in operands and all(o is read or _is_number(o) for o in operands):
                self.ok = True

        def visit_Assign(self, assign: cst.Assign) -> None:
            for target in assign.targets:
                t = target.target
                if isinstance(t, cst.Subscript) and t.value is read and _is_number(assign.value) and all(
                        isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Comparison)
                        for e in t.slice):
                    self.ok = True

    finder = Find()
    statement.visit(finder)
    return finder.ok


def _whole(operand: cst.BaseExpression, ctx: NodeContext) -> bool:
    """Is ``operand`` integer-valued? Then ``1 + x`` is exact and ``x`` is 0 or
    at least 1 in size: ``log1p``/``expm1`` compute the same numbers."""
    function = ctx.enclosing(cst.FunctionDef)
    return IntegerValues(ctx.resolver, ctx.inference).integer_valued(
        operand, function if isinstance(function, cst.FunctionDef) else None)


def _only_argument(call: ast.Call) -> Optional[ast.AST]:
    """``f(x)`` / ``f(input=x)``: the argument (what ``_single_positional`` accepts)."""
    if len(call.args) + len(call.keywords) != 1:
        return None
    if call.args:
        return None if isinstance(call.args[0], ast.Starred) else call.args[0]
    return call.keywords[0].value if call.keywords[0].arg == "input" else None


def _exp_call(outline: Outline, node: ast.AST) -> bool:
    """``torch.exp(x)`` with one positional argument."""
    return (
        isinstance(node, ast.Call)
        and len(node.args) == 1
        and not node.keywords
        and not isinstance(node.args[0], ast.Starred)
        and may_resolve_to(outline, node.func, (EXP,))
    )


def _one(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 1


def _number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, complex)


def _single_positional(call: cst.Call) -> bool:
    """``f(x)``: exactly one argument, positional (or the ``input=`` keyword), no ``*``."""
    if len(call.args) != 1 or call.args[0].star:
        return False
    keyword = call.args[0].keyword
    return keyword is None or keyword.value == "input"


def _is_one(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Integer):
        return expr.evaluated_value == 1
    if isinstance(expr, cst.Float):
        return expr.evaluated_value == 1.0
    return False


def _is_number(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary))


def _one_side(add: cst.BinaryOperation) -> Optional[str]:
    """Which side of ``a + b`` is the literal 1 (the other one being no literal)."""
    if _is_one(add.left) and not _is_number(add.right):
        return "left"
    if _is_one(add.right) and not _is_number(add.left):
        return "right"
    return None


def _dim(rest) -> Optional[cst.BaseExpression]:
    """The ``dim`` argument of a sum (after its input), unless absent or None."""
    for position, arg in enumerate(rest):
        if (arg.keyword is None and position == 0) or (arg.keyword is not None and arg.keyword.value == "dim"):
            if isinstance(arg.value, cst.Name) and arg.value.value == "None":
                return None
            return arg.value
    return None


def _known_sum_argument(arg: cst.Arg) -> bool:
    """Arguments logsumexp takes with the same meaning: dim and keepdim (positional or keyword)."""
    if arg.star:
        return False
    return arg.keyword is None or arg.keyword.value in ("dim", "keepdim")


def _spelled(call: cst.Call, name: str, ctx: NodeContext) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """How to spell torch.<name> next to ``call``: (code, imports to add)."""
    if isinstance(call.func, cst.Attribute):
        return edits.expression_code(call.func.value) + "." + name, ()
    spelled = ctx.resolver.name_for_module("torch", call)
    if spelled is not None:
        return f"{spelled}.{name}", ()
    if ctx.resolver.is_unbound("torch", call):
        return f"torch.{name}", ("torch",)
    return None


def _log1p(func_code: str, side: str) -> Callable[[cst.CSTNode], cst.CSTNode]:
    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        add = node.args[0].value
        assert isinstance(add, cst.BinaryOperation)
        operand = add.right if side == "left" else add.left
        return node.with_changes(func=cst.parse_expression(func_code), args=[node.args[0].with_changes(value=operand)])

    return apply


def _expm1(func_code: str) -> Callable[[cst.CSTNode], cst.CSTNode]:
    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.BinaryOperation) and isinstance(node.left, cst.Call)
        call = node.left.with_changes(func=cst.parse_expression(func_code))
        return call.with_changes(lpar=node.lpar, rpar=node.rpar)

    return apply


def _logsumexp(func_code: str, method: bool) -> Callable[[cst.CSTNode], cst.CSTNode]:
    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        inner = node.args[0].value
        assert isinstance(inner, cst.Call)
        if method:
            assert isinstance(inner.func, cst.Attribute) and isinstance(inner.func.value, cst.Call)
            exp, rest = inner.func.value, list(inner.args)
            first = cst.Arg(value=exp.args[0].value)
        else:
            exp, rest = inner.args[0].value, list(inner.args[1:])
            assert isinstance(exp, cst.Call)
            first = inner.args[0].with_changes(value=exp.args[0].value)
        if rest and not isinstance(first.comma, cst.Comma):
            first = first.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return node.with_changes(func=cst.parse_expression(func_code), args=[first, *rest])

    return apply
