"""TL216: a loss target taken element by element from a 1-D tensor, 0-dim since torch 0.4."""

import ast
from typing import Iterator, Optional

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Outline, calls_matching
from torchlint.rules.rule import Example, Finding, Rule
from torchlint.rules.tl209_loss_accumulation import _is_loss_callee, _loss_tail
from torchlint.rules.tl215_dot_not_1d import _known_ndim


class ZeroDimTarget(Rule):
    code = "TL216"
    name = "zero-dim-target"
    summary = "A loss target taken from a 1-D tensor by iteration or indexing is 0-dim since torch 0.4"
    why = (
        "Before torch 0.4, iterating over a 1-D Variable or indexing it (`targets[i]`) gave a 1-element "
        "Variable of shape `(1,)`, which is what a loss expects next to a batch of one output "
        "(`criterion(model(x), targets[i])`). Since 0.4 it gives a 0-dim tensor, so the same line raises "
        "`ValueError: Expected input batch_size (1) to match target batch_size (0)` (or silently "
        "broadcasts, for regression losses). The rule fires when a loss receives, as its target, an "
        "element of a tensor the file shows is 1-D (`torch.tensor([...])`, `torch.arange(n)`, a "
        "factory with one size): by `for y in targets`, `for x, y in zip(inputs, targets)` or "
        "`targets[i]`. Whether `targets[i:i + 1]` (shape `(1,)`) or the 0-dim element is right depends on "
        "the output's shape, so there is no fix."
    )
    triggers = ("loss", "Loss")
    references = ("https://github.com/pytorch/pytorch/releases/tag/v0.4.0",)

    flagged = (
        Example(
            """
            import torch
            import torch.nn as nn
            criterion = nn.CrossEntropyLoss()
            inputs = torch.randn(4, 3)
            targets = torch.tensor([0, 2, 1, 0])
            for i in range(4):
                loss = criterion(inputs[i:i + 1], targets[i])
            for x, y in zip(inputs, targets):
                loss = criterion(x.unsqueeze(0), y)
            """,
            count=2,
        ),
    )
    accepted = (
        """
        import torch
        import torch.nn as nn
        criterion = nn.CrossEntropyLoss()
        inputs = torch.randn(4, 3)
        targets = torch.tensor([0, 2, 1, 0])
        for i in range(4):
            loss = criterion(inputs[i:i + 1], targets[i:i + 1])
        loss = criterion(inputs, targets)
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A call whose target (second positional or ``target=``) is a name or an
        # index, in a file that calls or builds a torch loss (where losses come from).
        def element_like(node: Optional[ast.AST]) -> bool:
            return isinstance(node, ast.Name) or (
                isinstance(node, ast.Subscript) and not isinstance(node.slice, (ast.Slice, ast.Tuple)))

        return any(
            element_like(call.args[1] if len(call.args) > 1 else None)
            or any(k.arg == "target" and element_like(k.value) for k in call.keywords)
            for call in outline.nodes(ast.Call)
        ) and bool(calls_matching(outline, _loss_tail, _is_loss_callee))

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        # The cheap questions first: what the call is (a loss?) may take the project model.
        target = _target_argument(node)
        if target is None or not isinstance(target, (cst.Name, cst.Subscript)):
            return
        if _element_of_1d(target, ctx) and ctx.inference.value(node).loss:
            yield Finding(target, "loss target is one element of a 1-D tensor: 0-dim since torch 0.4, (1,) before",
                          detail="slice it (`t[i:i + 1]`) if the loss expects a batch")


def _target_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "target":
            return arg.value
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) >= 2 and not any(a.star for a in positional[:2]):
        return positional[1].value
    return None


def _element_of_1d(target: cst.BaseExpression, ctx: NodeContext) -> bool:
    if isinstance(target, cst.Subscript):
        if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
            return False
        index = target.slice[0].slice.value
        return isinstance(index, (cst.Name, cst.Integer)) and _is_1d(target.value, ctx)
    if isinstance(target, cst.Name):
        for loop in ctx.enclosing_in_function(cst.For):
            iterated = _iterated_for(loop, target.value)
            if iterated is not None:
                return _is_1d(iterated, ctx)
    return False


def _iterated_for(loop: cst.For, name: str) -> Optional[cst.BaseExpression]:
    """What ``name`` takes the elements of in ``for name in xs`` / ``for a, name in zip(xs, ys)``."""
    if isinstance(loop.target, cst.Name) and loop.target.value == name:
        return loop.iter
    if isinstance(loop.target, (cst.Tuple, cst.List)) and isinstance(loop.iter, cst.Call):
        func = loop.iter.func
        if isinstance(func, cst.Name) and func.value == "zip":
            targets = [e.value for e in loop.target.elements]
            sources = [a.value for a in loop.iter.args if a.keyword is None and not a.star]
            if len(targets) == len(sources):
                for element, source in zip(targets, sources):
                    if isinstance(element, cst.Name) and element.value == name:
                        return source
    return None


def _is_1d(expr: cst.BaseExpression, ctx: NodeContext) -> bool:
    return _ndim(expr, ctx) == 1 and ctx.inference.is_tensor(expr)


def _ndim(expr: cst.BaseExpression, ctx: NodeContext) -> Optional[int]:
    known = _known_ndim(expr, ctx, 0)
    if known is not None:
        return known
    # A tensor of a flat list literal: ``torch.tensor([0, 2, 1])``, ``torch.LongTensor([0, 1])``.
    values = ctx.inference.bound_values(expr) if isinstance(expr, cst.Name) else (expr,)
    if not values or len(values) != 1:
        return None
    value = values[0]
    if isinstance(value, cst.Call) and value.args and isinstance(value.args[0].value, cst.List):
        qualified = ctx.resolver.resolve(value.func) or ""
        elements = value.args[0].value.elements
        if qualified.startswith("torch.") and elements and all(
                isinstance(e.value, (cst.Integer, cst.Float)) for e in elements):
            return 1
    if isinstance(value, cst.Call) and ctx.resolver.resolve(value.func) == "torch.arange":
        return 1
    return None
