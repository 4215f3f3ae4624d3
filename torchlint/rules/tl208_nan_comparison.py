"""TL208: comparing with NaN (`x == float('nan')`, `x is np.nan`) instead of testing for it."""

import ast
import re
from typing import Iterator, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.inference import Kind
from torchlint.analysis.outline import (
    Outline,
    attributes_named,
    bindings,
    calls_resolving_to,
    may_resolve_to,
    names_where,
)
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.torch_api import NAN_CONSTANTS
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting

_MAX_DEPTH = 8
_NUMBER_CONVERSIONS = frozenset({"builtins.float", "builtins.int"})
_GENERIC_ADVICE = "`torch.isnan(x)` for tensors, `math.isnan(x)` for numbers or `np.isnan(x)` for arrays"


class NanComparison(Rule):
    code = "TL208"
    name = "nan-comparison"
    summary = "`x == float('nan')` is always False; use `torch.isnan(x)` / `math.isnan(x)`"
    why = (
        "NaN compares unequal to everything, itself included, so `x == float('nan')` (or `math.nan`, "
        "`np.nan`, `torch.nan`) is always False and `!=` always True: for a tensor, an all-False (or "
        "all-True) mask. The check for a diverged loss or dirty input never fires. `is` is no better: "
        "`x is float('nan')` compares with a brand-new object and is always False, and `x is math.nan` is "
        "True only for that very object, never for a NaN computed by arithmetic, `.item()` or a tensor. "
        "Names bound only to NaN count too for `==` and `!=` (for `is`, such a name may be a deliberate "
        "sentinel and is left alone, as is `x is torch.nan` where the code itself sets `x` to that very "
        "constant, directly or through the tuple a method of the class returns)."
    )
    fix_safety = FixSafety.UNSAFE
    fix_description = (
        "Where the operand's kind is known and the comparison is not chained: a tensor gets "
        "`torch.isnan(x)` (`~torch.isnan(x)` for `!=`), a Python number (a literal, arithmetic on numbers, "
        "`float(...)`, `t.item()`) gets `math.isnan(x)` (`not math.isnan(x)` for `!=` and `is not`), adding "
        "`import math` / `import torch` when needed. Unsafe because the result changes, which is the "
        "point: NaNs are now detected. `is` with a tensor is flagged only (`torch.isnan` returns a tensor, "
        "not a bool)."
    )
    triggers = (re.compile(r"\bnan\b", re.IGNORECASE),)
    # ``x is torch.nan`` is a sentinel test where another method of the class sets x's value
    # to that constant and returns it (``_holds_the_object``): that method's body is read.
    whole_file = True
    references = ("https://pytorch.org/docs/stable/generated/torch.isnan.html",)

    flagged = (
        Example(
            """
            import torch
            x = torch.tensor([1.0, 2.0, 3.0])
            has_nan = x == float("nan")
            clean = x != torch.nan
            """,
            """
            import torch
            x = torch.tensor([1.0, 2.0, 3.0])
            has_nan = torch.isnan(x)
            clean = ~torch.isnan(x)
            """,
            count=2,
            runnable=True,
        ),
        Example(
            """
            import numpy as np
            import torch
            import torch.nn as nn
            criterion = nn.MSELoss()
            loss = criterion(torch.ones(3), torch.zeros(3))
            if loss.item() is np.nan:
                raise RuntimeError("diverged")
            """,
            """
            import math
            import torch
            import torch.nn as nn
            criterion = nn.MSELoss()
            loss = criterion(torch.ones(3), torch.zeros(3))
            if math.isnan(loss.item()):
                raise RuntimeError("diverged")
            """,
            runnable=True,
        ),
        Example(
            """
            import math
            def check(batch):
                return batch == math.nan  # kind unknown: no fix
            """,
        ),
    )
    accepted = (
        """
        import math
        import torch
        x = torch.tensor([1.0, float("nan")])
        mask = torch.isnan(x)
        bad = math.isnan(x[0].item())
        same = x == x
        """,
        """
        MISSING = float("nan")
        def lookup(table, key):
            value = table.get(key, MISSING)
            return value is MISSING  # a sentinel compared by identity
        """,
        """
        def nan(x):
            return x
        flag = 1.0 == nan(2.0)  # a local function named nan
        label = "nan" == "NaN"
        """,
        """
        import torch


        class Pairs(torch.utils.data.Dataset):
            def __init__(self, xs, ys):
                self.xs, self.ys = xs, ys

            def load(self, i):
                x = torch.nan if self.xs is None else self.xs[i]  # no input: the sentinel itself
                return x, self.ys[i]

            def __getitem__(self, i):
                x, y = self.load(i)
                return {"y": y} if x is torch.nan else {"x": x, "y": y}
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # ``==``/``!=``/``is``/``is not`` with an operand that is a NaN constant (math.nan
        # & co however imported, ``float("nan")``, their negation) or, for ``==``/``!=``,
        # a name with some binding to one.
        tails = {name.rsplit(".", 1)[1] for name in NAN_CONSTANTS}
        if not (
            any(True for _ in attributes_named(outline, tails))
            or any(name in NAN_CONSTANTS for names in bindings(outline).values() for name in names)
            or any(_nan_string(call) for call in (*outline.calls("float"), *calls_resolving_to(outline, ("builtins.float",))))
        ):
            return False
        for compare in outline.nodes(ast.Compare):
            operands = [compare.left, *compare.comparators]
            for index, operator in enumerate(compare.ops):
                if not isinstance(operator, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
                    continue
                by_name = isinstance(operator, (ast.Eq, ast.NotEq))
                if any(_may_be_nan(outline, e, by_name) for e in operands[index:index + 2]):
                    return True
        return False

    def check_Comparison(self, node: cst.Comparison, ctx: NodeContext) -> Iterator[Finding]:
        left = node.left
        for index, target in enumerate(node.comparisons):
            right = target.comparator
            operator = target.operator
            if isinstance(operator, (cst.Equal, cst.NotEqual)):
                by_name = True
            elif isinstance(operator, (cst.Is, cst.IsNot)):
                by_name = False
            else:
                left = right
                continue
            left_nan, right_nan = _nan(left, ctx, by_name), _nan(right, ctx, by_name)
            if not by_name and (left_nan == "constant") != (right_nan == "constant") and _holds_the_object(
                    right if left_nan else left, left if left_nan else right, ctx):
                left = right
                continue  # ``x is not torch.nan`` where the code itself sets x to torch.nan: a sentinel
            if left_nan or right_nan:
                yield self._finding(node, operator, left, right, left_nan, right_nan, ctx)
                return
            left = right

    def _finding(
        self,
        node: cst.Comparison,
        operator: cst.BaseCompOp,
        left: cst.BaseExpression,
        right: cst.BaseExpression,
        left_nan: Optional[str],
        right_nan: Optional[str],
        ctx: NodeContext,
    ) -> Finding:
        nan_expr, nan_kind = (right, right_nan) if right_nan else (left, left_nan)
        operand = left if right_nan else right
        negated = isinstance(operator, (cst.NotEqual, cst.IsNot))
        both = bool(left_nan and right_nan)
        kind = None if both else _operand_kind(operand, ctx)
        identity = isinstance(operator, (cst.Is, cst.IsNot))
        op = edits.expression_code(operator).strip()
        nan_code = edits.expression_code(nan_expr)
        if identity and nan_kind == "fresh":
            problem = f"`{op} {nan_code}` compares with a new object and is always {negated}"
            detail = "every evaluation of it makes a new NaN object"
        elif identity:
            problem = f"`{op} {nan_code}` holds only for that very object"
            detail = f"`{op} {nan_code}` is {'False' if negated else 'True'} only for that very object, never for a computed NaN"
        else:
            problem = f"`{op}` with NaN is always {negated}"
            detail = "NaN equals nothing, not even itself"
        shown = edits.expression_code(operand).strip()
        if len(shown) > 30 or "\n" in shown:
            shown = "x"
        if kind == "tensor":
            advice = f"`~torch.isnan({shown})`" if negated else f"`torch.isnan({shown})`"
        elif kind == "number":
            advice = f"`not math.isnan({shown})`" if negated else f"`math.isnan({shown})`"
        else:
            advice = _GENERIC_ADVICE
        fix = None
        if len(node.comparisons) == 1 and kind is not None and not (identity and kind == "tensor"):
            fix = _fix(node, operand is node.left, kind, negated, ctx)
        if advice == _GENERIC_ADVICE:
            detail += f"; use {_GENERIC_ADVICE}"
        return Finding(node, fitting(f"{problem}; use {advice}", f"{problem}; use an `isnan` function"), fix,
                       detail=detail)


def _nan_string(call: ast.Call) -> bool:
    """``float("nan")`` (any case, signs and spaces around)."""
    if not isinstance(call.func, ast.Name) or len(call.args) != 1 or call.keywords:
        return False
    text = call.args[0]
    return (isinstance(text, ast.Constant) and isinstance(text.value, str)
            and text.value.strip().lstrip("+-").lower() == "nan")


def _may_be_nan(outline: Outline, expr: ast.AST, by_name: bool, known: Optional[set] = None, depth: int = 0) -> bool:
    """The shapes ``_nan`` can accept, on Python's tree."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return _may_be_nan(outline, expr.operand, by_name, known, depth + 1)
    if isinstance(expr, (ast.Name, ast.Attribute)):
        if may_resolve_to(outline, expr, NAN_CONSTANTS):
            return True
        if by_name and isinstance(expr, ast.Name):
            if known is None:
                known = names_where(outline, "TL208 nan", lambda value, found: _may_be_nan(outline, value, True, found))
            return expr.id in known
        return False
    return isinstance(expr, ast.Call) and _nan_string(expr)


def _nan(expr: cst.BaseExpression, ctx: NodeContext, by_name: bool, depth: int = 0) -> Optional[str]:
    """"constant" for a NaN constant (math.nan, np.nan), "fresh" for ``float('nan')``, else None.

    ``by_name``: also follow local names bound only to NaN.
    """
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        inner = _nan(expr.expression, ctx, by_name, depth + 1)
        return "fresh" if inner else None  # -math.nan is a new float
    if isinstance(expr, (cst.Name, cst.Attribute)):
        if ctx.resolver.resolve(expr) in NAN_CONSTANTS:
            return "constant"
        if by_name and isinstance(expr, cst.Name):
            values = ctx.inference.bound_values(expr)
            if values and all(_nan(v, ctx, by_name, depth + 1) for v in values):
                return "constant"
        return None
    if isinstance(expr, cst.Call) and ctx.resolver.resolve(expr.func) == "builtins.float":
        if len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star:
            text = expr.args[0].value
            if isinstance(text, cst.SimpleString) and isinstance(text.evaluated_value, str):
                if text.evaluated_value.strip().lstrip("+-").lower() == "nan":
                    return "fresh"
    return None


def _holds_the_object(operand: cst.BaseExpression, constant: cst.BaseExpression, ctx: NodeContext,
                      depth: int = 0) -> bool:
    """May ``operand`` be the NaN constant object itself, so that ``is`` tests for it and works?
    A binding of the name assigns that constant (the whole value, or a branch of a
    conditional expression), or unpacks it from the tuple a method of the class returns,
    whose item there is such a name (coqui-tts: ``cond_len = torch.nan`` in ``load_item``,
    then ``..., cond_len, _ = self.load_item(sample)`` and ``cond_len is not torch.nan``)."""
    if not isinstance(operand, cst.Name) or depth > 2:
        return False
    qualified = ctx.resolver.resolve(constant)
    for binding in ctx.inference.bindings_of(operand) or ():
        if binding.how != "assign":
            continue
        if not binding.path and _is_constant(binding.value, qualified, ctx):
            return True
        if len(binding.path) == 1 and isinstance(binding.value, cst.Call):
            method = ctx.inference.own_method(binding.value.func)
            for item in _returned_items(method, binding.path[0]) if method is not None else ():
                if _is_constant(item, qualified, ctx) or _holds_the_object(item, constant, ctx, depth + 1):
                    return True
    return False


def _is_constant(value: cst.BaseExpression, qualified: Optional[str], ctx: NodeContext) -> bool:
    if isinstance(value, cst.IfExp):
        return _is_constant(value.body, qualified, ctx) or _is_constant(value.orelse, qualified, ctx)
    return qualified is not None and ctx.resolver.resolve(value) == qualified


def _returned_items(function: cst.FunctionDef, index: int) -> Iterator[cst.BaseExpression]:
    """The ``index``-th item of each tuple ``function``'s own ``return`` statements give."""
    pending: list = [function.body]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Return) and isinstance(node.value, cst.Tuple):
            elements = node.value.elements
            if index < len(elements) and isinstance(elements[index], cst.Element):
                yield elements[index].value
        elif not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            pending.extend(node.children)


def _operand_kind(expr: cst.BaseExpression, ctx: NodeContext) -> Optional[str]:
    kind = ctx.inference.value(expr).kind
    if kind is Kind.TENSOR:
        return "tensor"
    if kind is Kind.NUMBER:
        return "number"
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value == "item" and not expr.args:
            if ctx.inference.is_tensor(func.value):
                return "number"
        if ctx.resolver.resolve(func) in _NUMBER_CONVERSIONS:
            return "number"
    return None


def _fix(node: cst.Comparison, operand_is_left: bool, kind: str, negated: bool, ctx: NodeContext) -> Optional[Fix]:
    module = "torch" if kind == "tensor" else "math"
    spelled = ctx.resolver.name_for_module(module, node)
    required: Tuple[str, ...] = ()
    if spelled is None:
        if not ctx.resolver.is_unbound(module, node):
            return None
        spelled, required = module, (module,)
    if kind == "tensor":
        template = "~{}.isnan(__operand__)" if negated else "{}.isnan(__operand__)"
    else:
        template = "not {}.isnan(__operand__)" if negated else "{}.isnan(__operand__)"
    template = template.format(spelled)

    def apply(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.Comparison)
        operand = updated.left if operand_is_left else updated.comparisons[0].comparator
        new = cst.parse_expression(template)
        new = _replace_placeholder(new, operand)
        return new.with_changes(lpar=updated.lpar, rpar=updated.rpar)

    return Fix([Edit(node, apply)], safe=False, required_imports=required)


class _Placeholder(cst.CSTTransformer):
    def __init__(self, operand: cst.BaseExpression) -> None:
        super().__init__()
        self.operand = operand

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self.operand if original_node.value == "__operand__" else updated_node


def _replace_placeholder(template: cst.BaseExpression, operand: cst.BaseExpression) -> cst.BaseExpression:
    return template.visit(_Placeholder(operand))
