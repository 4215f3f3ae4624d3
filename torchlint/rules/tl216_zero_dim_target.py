"""TL216: a loss target taken element by element from a 1-D tensor, 0-dim since torch 0.4."""

import ast
import builtins
from typing import Iterator, Optional

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import (
    Outline, any_of, bound_names, classes_only, loss_calls, may_hold_value, may_know_ndim, resolved_names,
    self_member_known,
)
from torchlint.analysis.shapes import is_1d_tensor, ndim
from torchlint.knowledge.torch_api import is_loss_callee, is_torch_name
from torchlint.core.diagnostic import Edit, Fix
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule


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
        "`targets[i]`, unless the input is likewise one row of a 2-D tensor (an unbatched `(C,)` input, "
        "which takes a 0-dim target)."
    )
    fix_safety = FixSafety.UNSAFE
    fix_description = (
        "Gives the target the shape torch 0.3 gave it: `y` becomes `y.view(1)` and `targets[i]` becomes "
        "`targets[i].view(1)`. Unsafe: code written for torch 0.4 or later may mean the 0-dim element "
        "(next to a 0-dim output); then the loss's result changes shape."
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
            """
            import torch
            import torch.nn as nn
            criterion = nn.CrossEntropyLoss()
            inputs = torch.randn(4, 3)
            targets = torch.tensor([0, 2, 1, 0])
            for i in range(4):
                loss = criterion(inputs[i:i + 1], targets[i].view(1))
            for x, y in zip(inputs, targets):
                loss = criterion(x.unsqueeze(0), y.view(1))
            """,
            count=2,
            runnable=True,
            raises="ValueError",
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
        """
        import torch
        import torch.nn as nn
        criterion = nn.CrossEntropyLoss()
        inputs = torch.randn(4, 3)
        targets = torch.tensor([0, 2, 1, 0])
        for x, y in zip(inputs, targets):
            loss = criterion(x, y)  # an unbatched (C,) input: a 0-dim target is what it takes
        for i in range(4):
            loss = criterion(inputs[i], targets[i])
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        return any_of(cls.screen_candidates(outline))

    @classmethod
    def screen_candidates(cls, outline: Outline) -> Iterator[ast.AST]:
        # A call whose target (second positional or ``target=``) is what
        # ``_element_source`` can follow: ``xs[i]`` / ``xs[0]``, or a name a
        # ``for`` loop binds (alone, or from ``zip``); in a file that calls or
        # builds a torch loss anywhere (where losses come from: asked first, it is
        # cheaper; a loss built in ``__init__`` reaches the method using it as
        # ``self.criterion``, through the project model).
        if not loss_calls(outline.whole_file):
            return
        looped = outline.memo("TL216 loop names", lambda: _loop_names(outline))

        def element_like(node: Optional[ast.AST]) -> bool:
            if isinstance(node, ast.Name):
                return node.id in looped
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
                return False  # a size, never a tensor's element
            # ``_element_of_1d`` asks inference for the shape of ``xs`` in ``xs[i]``.
            return isinstance(node, ast.Subscript) and (
                isinstance(node.slice, ast.Name)
                or (isinstance(node.slice, ast.Constant) and type(node.slice.value) is int)
            ) and _may_be_1d(outline, node.value)

        def may_be_loss(call: ast.Call) -> bool:
            # Inference gives a loss only from a torch callee that is one (or a project's);
            # ``torch.gather(x, 1, idx[0])``, ``F.pad(x, pads[i])``, ``getattr(c, keys[i])``
            # never are.
            func = call.func
            if isinstance(func, ast.Name) and func.id in _NEVER_LOSS_BUILTINS and not rebinds_builtins():
                return False
            if isinstance(func, ast.Name) and func.id in classes_only(outline.whole_file):
                return False  # builds an instance of the file's class
            if isinstance(func, ast.Attribute) and self_member_known(outline, func.value, func.attr) is False:
                return False  # ``self.add_module(...)``: a method of torch's base class
            names = resolved_names(outline, func)
            return not names or any(not is_torch_name(n) or is_loss_callee(n) for n in names)

        def rebinds_builtins() -> bool:
            return outline.memo("TL216 builtins", lambda: bool(_NEVER_LOSS_BUILTINS & bound_names(outline)) or any(
                alias.name == "*" for node in outline.nodes(ast.ImportFrom) for alias in node.names))

        for call in outline.nodes(ast.Call):
            if ((element_like(call.args[1] if len(call.args) > 1 else None)
                 or any(k.arg == "target" and element_like(k.value) for k in call.keywords))
                    and may_be_loss(call)):
                yield call

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        # The cheap questions first: what the call is (a loss?) may take the project model.
        target = _target_argument(node)
        if target is None or not isinstance(target, (cst.Name, cst.Subscript)):
            return
        if _element_of_1d(target, ctx) and not _unbatched_input(node, ctx) and ctx.inference.value(node).loss:
            yield Finding(target, "loss target is one element of a 1-D tensor: 0-dim since torch 0.4, (1,) before",
                          Fix([Edit(target, _as_one_element_batch)], safe=False),
                          detail="`.view(1)` gives it torch 0.3's shape (1,) if the loss expects a batch")


def _loop_names(outline: Outline) -> frozenset:
    """The names ``for`` loops bind the way ``_iterated_for`` follows them, from
    something whose shape inference may know (``_may_be_1d``)."""
    names = set()
    for loop in outline.nodes(ast.For):
        if isinstance(loop.target, ast.Name):
            if _may_be_1d(outline, loop.iter):
                names.add(loop.target.id)
        elif isinstance(loop.target, (ast.Tuple, ast.List)) and _is_zip(loop.iter):
            sources = [a for a in loop.iter.args if not isinstance(a, ast.Starred)]
            if len(sources) == len(loop.target.elts):
                names.update(element.id for element, source in zip(loop.target.elts, sources)
                             if isinstance(element, ast.Name) and _may_be_1d(outline, source))
    return frozenset(names)


def _may_be_1d(outline: Outline, whole: ast.AST) -> bool:
    """Could ``is_1d_tensor`` hold for ``whole``: inference may know what it
    holds, and its shape comes from a call ``shapes.ndim`` reads?"""
    return may_hold_value(outline, whole) and may_know_ndim(outline, whole)


# Builtins whose calls inference never gives a value (``min``/``max`` of tensors it
# does, ``sum`` and arithmetic ones are left in for safety).
_NEVER_LOSS_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_")) - {
    "min", "max", "sum", "abs", "pow", "round", "divmod"}


def _is_zip(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "zip"


def _target_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "target":
            return arg.value
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) >= 2 and not any(a.star for a in positional[:2]):
        return positional[1].value
    return None


def _element_of_1d(target: cst.BaseExpression, ctx: NodeContext) -> bool:
    whole = _element_source(target, ctx)
    return whole is not None and is_1d_tensor(whole, ctx)


def _unbatched_input(call: cst.Call, ctx: NodeContext) -> bool:
    """The loss's input is one row of a 2-D tensor (``x`` of ``zip(inputs, targets)``, ``inputs[i]``):
    an unbatched ``(C,)`` input, which takes a 0-dim target; torch 0.3's losses took no such input."""
    positional = [a for a in call.args if a.keyword is None]
    if not positional or positional[0].star:
        return False
    whole = _element_source(positional[0].value, ctx)
    return whole is not None and ndim(whole, ctx) == 2


def _element_source(element: cst.BaseExpression, ctx: NodeContext) -> Optional[cst.BaseExpression]:
    """The tensor ``element`` is one element of: ``xs`` of ``xs[i]``, or of ``for x in xs`` /
    ``for x, y in zip(xs, ys)`` around it."""
    if isinstance(element, cst.Subscript):
        if len(element.slice) != 1 or not isinstance(element.slice[0].slice, cst.Index):
            return None
        index = element.slice[0].slice.value
        return element.value if isinstance(index, (cst.Name, cst.Integer)) else None
    if isinstance(element, cst.Name):
        for loop in ctx.enclosing_in_function(cst.For):
            iterated = _iterated_for(loop, element.value)
            if iterated is not None:
                return iterated
    return None


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


def _as_one_element_batch(node: cst.CSTNode) -> cst.CSTNode:
    """``y`` -> ``y.view(1)``: the shape (1,) torch 0.3 gave an element of a 1-D tensor."""
    assert isinstance(node, cst.BaseExpression)
    return cst.Call(func=cst.Attribute(value=edits.parenthesized_if_needed(node), attr=cst.Name("view")),
                    args=[cst.Arg(value=cst.Integer("1"))])
