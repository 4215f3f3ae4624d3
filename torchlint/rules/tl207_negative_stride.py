"""TL207: a negative-stride NumPy view (`np.flip`, `a[::-1]`) passed to `torch.from_numpy` & co."""

import ast
import re
from typing import Iterator, Optional

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.inference import Kind
from torchlint.analysis.outline import (
    Outline,
    calls_resolving_to,
    names_where,
    resolved_names,
)
from torchlint.analysis.screens import All
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.torch_api import (
    ARRAY_TO_TENSOR,
    NDARRAY_FACTORIES,
    NDARRAY_ONLY_TO_TENSOR,
    NDARRAY_STRIDE_PERMUTING_ATTRIBUTES,
    NDARRAY_STRIDE_PERMUTING_METHODS,
    NUMPY_NEGATIVE_STRIDE_FUNCTIONS,
    NUMPY_STRIDE_PERMUTING_FUNCTIONS,
)
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting

_MAX_DEPTH = 8  # name -> binding -> name ... chains followed


class NegativeStrideToTensor(Rule):
    code = "TL207"
    name = "numpy-negative-stride"
    summary = "`torch.from_numpy(np.flip(a))` / `a[::-1]` raises on negative strides; add `.copy()`"
    why = (
        "`np.flip`, `np.fliplr`, `np.flipud`, `np.rot90` and slices with a negative step (`a[::-1]`, "
        "`img[:, :, ::-1]` for BGR to RGB) return views with negative strides, which torch tensors cannot "
        "represent: `torch.from_numpy`, `torch.tensor`, `torch.as_tensor`, `torch.asarray` and the legacy "
        "`torch.Tensor` constructors raise `ValueError: At least one stride in the given numpy array is "
        "negative` (a RuntimeError in old torch). Transposing such a view keeps the negative stride. "
        "`np.rot90` with a `k` that is a multiple of 4 returns the array itself, and a `k` computed at run "
        "time might, so only the default and literal `k` are reported. The "
        "rule follows names assigned only from such views. A negative-step slice counts when its base is "
        "known to be an ndarray, or for `torch.from_numpy`, which accepts nothing else (a reversed Python "
        "list is an ordinary list and is fine)."
    )
    fix_safety = FixSafety.SAFE
    fix_description = (
        "Appends `.copy()` to the array argument, which gives a contiguous array with the same values. "
        "Safe: the original call always raises, so there is no behaviour to keep."
    )
    # A flip, a rot90 or a negative slice step, and a torch constructor.
    triggers = (All("numpy", re.compile(r"flip|rot90")), re.compile(r":[^:\],\n]*:[ \t]*-"))  # a negative step in one slice
    requires = (re.compile(r"from_numpy|tensor|Tensor|asarray"),)
    references = ("https://pytorch.org/docs/stable/generated/torch.from_numpy.html",)

    flagged = (
        Example(
            """
            import numpy as np
            import torch
            x = np.arange(12.0).reshape(3, 4)
            flipped = torch.from_numpy(np.flip(x, axis=0))
            """,
            """
            import numpy as np
            import torch
            x = np.arange(12.0).reshape(3, 4)
            flipped = torch.from_numpy(np.flip(x, axis=0).copy())
            """,
            runnable=True,
            raises="ValueError",
        ),
        Example(
            """
            import numpy as np
            import torch
            image = np.zeros((4, 5, 3), dtype=np.uint8)
            rgb = image[:, :, ::-1]
            chw = torch.as_tensor(rgb.transpose(2, 0, 1), dtype=torch.float32)
            """,
            """
            import numpy as np
            import torch
            image = np.zeros((4, 5, 3), dtype=np.uint8)
            rgb = image[:, :, ::-1]
            chw = torch.as_tensor(rgb.transpose(2, 0, 1).copy(), dtype=torch.float32)
            """,
            runnable=True,
            raises="ValueError",
        ),
        Example(
            """
            from numpy import rot90
            import torch
            def rotate(batch):
                return torch.from_numpy(rot90(batch)), torch.from_numpy(batch[::-1])
            """,
            """
            from numpy import rot90
            import torch
            def rotate(batch):
                return torch.from_numpy(rot90(batch).copy()), torch.from_numpy(batch[::-1].copy())
            """,
            count=2,
        ),
    )
    accepted = (
        """
        import numpy as np
        import torch
        x = np.arange(12.0).reshape(3, 4)
        a = torch.from_numpy(np.flip(x, 0).copy())
        b = torch.from_numpy(np.ascontiguousarray(x[::-1]))
        c = torch.from_numpy(np.rot90(x, 2).copy())
        d = torch.from_numpy(np.rot90(x, k=4))
        f = torch.from_numpy(np.rot90(x, k=turns))  # k unknown: not flagged
        e = torch.from_numpy(x[::2])
        """,
        """
        import torch
        tokens = [1, 2, 3]
        reversed_ids = torch.tensor(tokens[::-1])  # a reversed list is a plain list
        scores = torch.as_tensor(load_scores()[::-1])  # unknown kind: not flagged
        """,
        """
        import numpy as np
        import torch
        image = np.zeros((4, 5, 3))
        image = image[:, :, ::-1]
        image = np.ascontiguousarray(image)
        tensor = torch.from_numpy(image)  # not every binding is a negative view
        """,
        """
        import torch
        flipped = torch.flip(torch.arange(6), dims=[0])
        same = torch.tensor(flipped.numpy())
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # torch.from_numpy & co (however imported) whose first argument can be a
        # negative-stride view: np.flip & co, a slice with a negative step, ``.T`` or a
        # transpose of one, or a name with some binding to one.
        if not (
            any(_is_negative_integer(node.step) for node in outline.nodes(ast.Slice))
            or calls_resolving_to(outline, NUMPY_NEGATIVE_STRIDE_FUNCTIONS)
        ):
            return False  # nothing makes a negative stride
        for call in calls_resolving_to(outline, ARRAY_TO_TENSOR):
            if call.args:
                ndarray_only = any(name in NDARRAY_ONLY_TO_TENSOR for name in resolved_names(outline, call.func))
                if _may_be_flipped(outline, call.args[0], ndarray_only):
                    return True
        return False

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        if not node.args or node.args[0].keyword is not None or node.args[0].star:
            return
        callee = ctx.resolver.resolve(node.func)
        if callee not in ARRAY_TO_TENSOR:
            return
        argument = node.args[0].value
        ndarray_only = callee in NDARRAY_ONLY_TO_TENSOR
        if not _negative_stride(argument, ctx, ndarray_only, 0):
            return
        spelled = cst.Module(body=[]).code_for_node(node.func)
        yield Finding(
            node,
            fitting(f"`{spelled}()` of a negative-stride NumPy view raises ValueError; pass a `.copy()`",
                    "a negative-stride NumPy view raises ValueError here; pass a `.copy()`"),
            Fix([Edit(argument, _append_copy)]),
        )


def _may_be_flipped(outline: Outline, expr: ast.AST, ndarray_only: bool, depth: int = 0,
                    known: Optional[set] = None) -> bool:
    """The shapes ``_negative_stride`` can accept, on Python's tree (names: some binding is one)."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, ast.Call):
        names = resolved_names(outline, expr.func)
        if any(name in NUMPY_NEGATIVE_STRIDE_FUNCTIONS for name in names):
            return True
        if any(name in NUMPY_STRIDE_PERMUTING_FUNCTIONS for name in names) and expr.args:
            if _may_be_flipped(outline, expr.args[0], True, depth + 1, known):
                return True
        func = expr.func
        return (isinstance(func, ast.Attribute) and func.attr in NDARRAY_STRIDE_PERMUTING_METHODS
                and _may_be_flipped(outline, func.value, ndarray_only, depth + 1, known))
    if isinstance(expr, ast.Attribute):
        return expr.attr in NDARRAY_STRIDE_PERMUTING_ATTRIBUTES and _may_be_flipped(
            outline, expr.value, ndarray_only, depth + 1, known)
    if isinstance(expr, ast.Subscript):
        elements = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
        if not any(isinstance(e, ast.Slice) and _is_negative_integer(e.step) for e in elements):
            return False
        return ndarray_only or _may_be_ndarray(outline, expr.value, depth + 1)
    if isinstance(expr, ast.Name):
        if known is None:  # (a name is asked about as for from_numpy: the wider question)
            known = names_where(outline, "TL207 flipped",
                                lambda value, found: _may_be_flipped(outline, value, True, 0, found))
        return expr.id in known
    return False


def _may_be_ndarray(outline: Outline, expr: ast.AST, depth: int, known: Optional[set] = None) -> bool:
    """The shapes ``_is_ndarray`` can accept: a NumPy factory, ``.numpy()``, a name bound to one."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, ast.Call):
        func = expr.func
        return (isinstance(func, ast.Attribute) and func.attr == "numpy") or any(
            name in NDARRAY_FACTORIES for name in resolved_names(outline, func))
    if isinstance(expr, ast.Name):
        if known is None:
            known = names_where(outline, "TL207 ndarray",
                                lambda value, found: _may_be_ndarray(outline, value, 0, found))
        return expr.id in known
    return False


def _is_negative_integer(node: Optional[ast.AST]) -> bool:
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
        and node.operand.value != 0
    )


def _negative_stride(expr: cst.BaseExpression, ctx: NodeContext, ndarray_only: bool, depth: int) -> bool:
    """Is ``expr`` visibly a NumPy view with a negative stride?

    ``ndarray_only``: the consumer accepts only ndarrays, so a negative-step
    slice of anything (not known to be something else) is one.
    """
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, cst.Call):
        callee = ctx.resolver.resolve(expr.func)
        if callee in NUMPY_NEGATIVE_STRIDE_FUNCTIONS:
            return callee != "numpy.rot90" or _rot90_flips(expr)
        first = _first_argument(expr)
        if callee in NUMPY_STRIDE_PERMUTING_FUNCTIONS and first is not None:
            return _negative_stride(first, ctx, True, depth + 1)
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in NDARRAY_STRIDE_PERMUTING_METHODS:
            return _negative_stride(func.value, ctx, ndarray_only, depth + 1) and _not_a_tensor(func.value, ctx)
        return False
    if isinstance(expr, cst.Attribute):
        if expr.attr.value in NDARRAY_STRIDE_PERMUTING_ATTRIBUTES:
            return _negative_stride(expr.value, ctx, ndarray_only, depth + 1) and _not_a_tensor(expr.value, ctx)
        return False
    if isinstance(expr, cst.Subscript):
        if _has_negative_step(expr):
            base = expr.value
            if not _not_a_tensor(base, ctx) or _python_sequence(base, ctx):
                return False
            return ndarray_only or _is_ndarray(base, ctx, depth + 1)
        return False
    if isinstance(expr, cst.Name):
        values = ctx.inference.bound_values(expr)
        return bool(values) and all(_negative_stride(v, ctx, ndarray_only, depth + 1) for v in values)
    return False


def _is_ndarray(expr: cst.BaseExpression, ctx: NodeContext, depth: int) -> bool:
    """Known to be a numpy.ndarray: a NumPy/OpenCV constructor, ``t.numpy()``, a name bound to those."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, cst.Call):
        if ctx.resolver.resolve(expr.func) in NDARRAY_FACTORIES:
            return True
        func = expr.func
        return isinstance(func, cst.Attribute) and func.attr.value == "numpy" and ctx.inference.is_tensor(func.value)
    if isinstance(expr, cst.Name):
        values = ctx.inference.bound_values(expr)
        return bool(values) and all(_is_ndarray(v, ctx, depth + 1) for v in values)
    return False


_SEQUENCE_LITERALS = (
    cst.List, cst.Tuple, cst.ListComp, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString,
)


def _python_sequence(expr: cst.BaseExpression, ctx: NodeContext) -> bool:
    """A list, tuple or string literal, or a name bound only to those: reversing it copies."""
    if isinstance(expr, _SEQUENCE_LITERALS):
        return True
    if isinstance(expr, cst.Name):
        values = ctx.inference.bound_values(expr)
        return bool(values) and all(isinstance(v, _SEQUENCE_LITERALS) for v in values)
    return False


def _not_a_tensor(expr: cst.BaseExpression, ctx: NodeContext) -> bool:
    return ctx.inference.value(expr).kind not in (Kind.TENSOR, Kind.MODULE, Kind.LOADER, Kind.NUMBER)


def _has_negative_step(node: cst.Subscript) -> bool:
    for element in node.slice:
        part = element.slice
        if isinstance(part, cst.Slice) and part.step is not None and _negative_integer(part.step):
            return True
    return False


def _negative_integer(expr: cst.BaseExpression) -> bool:
    return (
        isinstance(expr, cst.UnaryOperation)
        and isinstance(expr.operator, cst.Minus)
        and isinstance(expr.expression, cst.Integer)
        and expr.expression.evaluated_value != 0
    )


def _first_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    if call.args and call.args[0].keyword is None and not call.args[0].star:
        return call.args[0].value
    return None


def _rot90_flips(call: cst.Call) -> bool:
    """``np.rot90(m)`` / ``np.rot90(m, k)`` with a literal ``k`` that is not a multiple of 4.

    ``k % 4 == 0`` returns ``m`` itself; a ``k`` computed at run time may, so
    it is not reported.
    """
    if any(arg.star for arg in call.args):
        return False
    k: Optional[cst.BaseExpression] = None
    positional = [arg for arg in call.args if arg.keyword is None]
    if len(positional) >= 2:
        k = positional[1].value
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "k":
            k = arg.value
    if k is None:
        return True  # k=1
    sign = 1
    if isinstance(k, cst.UnaryOperation) and isinstance(k.operator, (cst.Minus, cst.Plus)):
        sign = -1 if isinstance(k.operator, cst.Minus) else 1
        k = k.expression
    if isinstance(k, cst.Integer):
        return (sign * int(k.evaluated_value)) % 4 != 0
    return False


def _append_copy(node: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(node, cst.BaseExpression)
    return cst.Call(func=cst.Attribute(value=node, attr=cst.Name("copy")))
