"""TL213: a uint8 tensor used as a mask (indexing, masked_fill, where, ...)."""

import ast
from typing import Iterator, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.inference import Kind
from torchlint.analysis.outline import (
    Outline,
    calls_resolving_to,
    may_resolve_to,
    names_where,
    resolved_names,
)
from torchlint.core.diagnostic import Edit, Fix
from torchlint.core.settings import versions
from torchlint.knowledge.torch_api import (
    DTYPE_KEEPING_METHODS,
    DTYPES,
    MASK_FUNCTIONS,
    MASK_METHODS,
    TENSOR_ATTRIBUTES,
    TENSOR_TYPE_DTYPES,
)
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule

# What inference reads as uint8: torch.uint8 and the ByteTensor types, as names or strings.
_UINT8 = frozenset(name for table in (DTYPES, TENSOR_TYPE_DTYPES) for name, dtype in table.items() if dtype == "uint8")
_UINT8_TYPES = frozenset(name for name, dtype in TENSOR_TYPE_DTYPES.items() if dtype == "uint8")
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)
_NOT_TENSORS = (Kind.MODULE, Kind.LOADER, Kind.NUMBER)
_INDEXING = "indexing with uint8 is deprecated"
_WHERE = "a uint8 condition in `where` is deprecated"


class Uint8Mask(Rule):
    code = "TL213"
    name = "uint8-mask"
    summary = "uint8 tensors as masks are deprecated (indexing, `where`) or rejected (`masked_fill`, ...); use `.bool()`"
    why = (
        "Before torch 1.2 masks were `uint8` tensors (`(x > 0)` returned one, `.byte()` made one). Since "
        "1.2 masks are `bool`: indexing with a uint8 tensor (`x[mask]`) warns on every call, `torch.where(mask, a, b)` "
        "warns (once per process), and under torch 2.13 `masked_fill`, `masked_select`, `masked_scatter` and "
        "assigning through a mask (`x[mask] = 0`) raise `RuntimeError` (\"only supports boolean masks\"). "
        "The rule fires where the mask is visibly uint8: built with `.byte()`, `dtype=torch.uint8`, "
        "`.to(torch.uint8)`, `.type(torch.uint8)` or `torch.ByteTensor` / `torch.cuda.ByteTensor`, inline "
        "or in a name whose every binding is such an expression.\n\n"
        "`~mask` on a uint8 mask is a bitwise NOT (1 becomes 254, 0 becomes 255), so every element counts "
        "as true: that use is flagged as the bug it is, without a fix."
    )
    fix_safety = FixSafety.SOMETIMES
    fix_description = (
        "Converts the mask where it is used: `x[mask]` becomes `x[mask.bool()]`, `x.masked_fill(mask, v)` "
        "becomes `x.masked_fill(mask.bool(), v)`; `(a > b).byte()` used inline becomes `(a > b).bool()`. "
        "Torch treats every non-zero uint8 as true, exactly like `.bool()`, so indexing and `where` compute "
        "the same values without the warning, and the calls that raise today do what they did before torch "
        "made them errors. Indexing a value not known to be a tensor is flagged without a fix (NumPy, for "
        "one, reads a uint8 index as positions, not as a mask)."
    )
    triggers = ("byte", "uint8", "ByteTensor")
    torch_versions = versions(since="1.2")

    references = (
        "https://github.com/pytorch/pytorch/releases/tag/v1.2.0",
    )
    flagged = (
        Example(
            """
            import torch
            scores = torch.tensor([0.2, 0.9, 0.4, 0.7])
            keep = (scores > 0.5).byte()
            kept = scores[keep]
            """,
            """
            import torch
            scores = torch.tensor([0.2, 0.9, 0.4, 0.7])
            keep = (scores > 0.5).byte()
            kept = scores[keep.bool()]
            """,
            runnable=True,
        ),
        Example(
            """
            import torch
            logits = torch.randn(2, 5)
            pad = torch.zeros(2, 5, dtype=torch.uint8)
            pad[:, 3:] = 1
            masked = logits.masked_fill(pad, float("-inf"))
            """,
            """
            import torch
            logits = torch.randn(2, 5)
            pad = torch.zeros(2, 5, dtype=torch.uint8)
            pad[:, 3:] = 1
            masked = logits.masked_fill(pad.bool(), float("-inf"))
            """,
            runnable=True,
            raises="RuntimeError",
        ),
        Example(
            """
            import torch
            x = torch.arange(6.0)
            picked = torch.where((x > 2).byte(), x, torch.zeros(6))
            selected = x[torch.ByteTensor([1, 0, 1, 0, 1, 0])]
            """,
            """
            import torch
            x = torch.arange(6.0)
            picked = torch.where((x > 2).bool(), x, torch.zeros(6))
            selected = x[torch.ByteTensor([1, 0, 1, 0, 1, 0]).bool()]
            """,
            count=2,
            runnable=True,
        ),
        Example(
            """
            import torch


            def build_targets(pred_boxes, target):
                obj_mask = torch.cuda.ByteTensor(4, 3).fill_(0)
                obj_mask[0, 1] = 1
                return pred_boxes[obj_mask], target[~obj_mask]
            """,
            count=2,
        ),
    )
    accepted = (
        """
        import torch
        x = torch.randn(5)
        keep = x > 0
        y = x[keep]
        z = x.masked_fill(~keep, 0)
        """,
        """
        import torch
        x = torch.randn(5)
        idx = torch.tensor([0, 2], dtype=torch.long)
        y = x[idx]
        pixels = torch.zeros(4, dtype=torch.uint8)
        first = pixels[0]
        where = torch.where(pixels)  # one argument: indices of non-zero elements
        """,
        """
        import numpy as np
        image = np.zeros(4, dtype=np.uint8)
        x = values[image.astype(bool)]
        """,
        """
        def apply(x, mask):
            return x[mask.byte_mask()]  # not a torch method
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A mask (an index, or the mask argument of torch.where/masked_* however
        # imported) that can carry a uint8 dtype: ``.byte()``, a ``dtype=``/``dst_type=``
        # or ``.to()``/``.type()`` argument naming torch.uint8 or a ByteTensor type, a
        # ByteTensor construction, or a name, slice, dtype-keeping method or ``~`` of one.
        if not _has_uint8_source(outline):
            return False
        for node in outline.nodes(ast.Subscript):
            index = node.slice
            for element in index.elts if isinstance(index, ast.Tuple) else (index,):
                if _may_be_uint8(outline, element):
                    return True
        for call in outline.calls(*MASK_METHODS):
            if isinstance(call.func, ast.Attribute):
                position, keyword = MASK_METHODS[call.func.attr]
                if any(_may_be_uint8(outline, a) for a in _mask_arguments(call, position, keyword)):
                    return True
        for call in calls_resolving_to(outline, MASK_FUNCTIONS):
            for name in resolved_names(outline, call.func):
                if name in MASK_FUNCTIONS:
                    position, keyword = MASK_FUNCTIONS[name]
                    if any(_may_be_uint8(outline, a) for a in _mask_arguments(call, position, keyword)):
                        return True
        return False

    def check_Subscript(self, node: cst.Subscript, ctx: NodeContext) -> Iterator[Finding]:
        receiver = ctx.inference.value(node.value)
        if receiver.kind in _NOT_TENSORS:
            return
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index) and index.star is None:
                yield from self._check_mask(index.value, ctx, _INDEXING, fixable=receiver.kind is Kind.TENSOR)

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        func = node.func
        position: Optional[Tuple[int, str]] = None
        callee = ctx.resolver.resolve(func)
        if callee is not None:
            position = MASK_FUNCTIONS.get(callee)
            short = callee.rsplit(".", 1)[1]
            if callee == "torch.where" and len(node.args) < 2:
                return  # torch.where(mask) lists non-zero positions: any dtype is fine
        elif isinstance(func, cst.Attribute) and func.attr.value in MASK_METHODS:
            receiver = ctx.inference.value(func.value)
            method = func.attr.value
            # masked_* exist only on tensors; Tensor.where shares its name with other libraries.
            if receiver.kind is Kind.TENSOR or (receiver.kind is Kind.UNKNOWN and method != "where"):
                position = MASK_METHODS[method]
                short = method
        if position is None:
            return
        mask = edits.argument(node, *position)
        if mask is not None:
            use = _WHERE if short == "where" else f"`{short}` raises RuntimeError for uint8 masks (torch 2.13)"
            yield from self._check_mask(mask, ctx, use, fixable=True)

    def _check_mask(self, mask: cst.BaseExpression, ctx: NodeContext, use: str, fixable: bool) -> Iterator[Finding]:
        if ctx.inference.value(mask).dtype != "uint8":
            return
        if isinstance(mask, cst.UnaryOperation) and isinstance(mask.operator, cst.BitInvert):
            yield Finding(
                mask,
                "`~` on a uint8 mask is a bitwise NOT: every element stays true; invert a bool mask",
                detail="1 -> 254, 0 -> 255; make the mask bool (`.bool()`) and then invert it",
            )
            return
        if isinstance(mask, cst.UnaryOperation):
            return
        yield Finding(
            mask,
            f"uint8 mask: {use}; use `.bool()`",
            Fix([Edit(mask, _to_bool)]) if fixable else None,
            detail="uint8 masks are deprecated; assigning through one raises RuntimeError in current torch",
        )


def _mask_arguments(call: ast.Call, position: int, keyword: str) -> Tuple[ast.AST, ...]:
    """What ``_argument`` can pick as the mask (every argument when a ``*`` blurs positions)."""
    for k in call.keywords:
        if k.arg == keyword:
            return (k.value,)
    if any(isinstance(a, ast.Starred) for a in call.args[:position + 1]):
        return tuple(call.args)
    return (call.args[position],) if position < len(call.args) else ()


def _has_uint8_source(outline: Outline) -> bool:
    if any(_byte_call(c) for c in outline.calls("byte")):
        return True
    if any(_names_uint8(outline, k.value) for k in outline.keywords("dtype", "dst_type")):
        return True
    if any(_converts_to_uint8(outline, c) for c in outline.calls("to", "type")):
        return True
    return bool(calls_resolving_to(outline, _UINT8_TYPES))


def _byte_call(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr == "byte" and not call.args and not call.keywords


def _converts_to_uint8(outline: Outline, call: ast.Call) -> bool:
    """``x.to(torch.uint8)``, ``x.type('torch.ByteTensor')``, a uint8 ``dtype=`` keyword."""
    return isinstance(call.func, ast.Attribute) and (
        any(_names_uint8(outline, a) for a in call.args)
        or any(k.arg in ("dtype", "dst_type") and _names_uint8(outline, k.value) for k in call.keywords)
    )


def _may_be_uint8(outline: Outline, expr: ast.AST, known: Optional[set] = None, depth: int = 0) -> bool:
    """Can inference give ``expr`` the dtype uint8 (``Value.dtype``)?"""
    if depth > 40:
        return True
    if isinstance(expr, ast.Name):
        if known is None:
            known = names_where(outline, "TL213 uint8", lambda value, found: _may_be_uint8(outline, value, found))
        return expr.id in known
    if isinstance(expr, ast.Call):
        func = expr.func
        if _byte_call(expr) or _converts_to_uint8(outline, expr):
            return True
        if any(k.arg == "dtype" and _names_uint8(outline, k.value) for k in expr.keywords):
            return True  # a factory
        if may_resolve_to(outline, func, _UINT8_TYPES):
            return True
        if isinstance(func, ast.Attribute) and (
            func.attr in DTYPE_KEEPING_METHODS
            or func.attr.endswith("_")
            or (func.attr == "to" and bool(expr.args or expr.keywords))  # ``.to(device)`` keeps the dtype
        ):
            return _may_be_uint8(outline, func.value, known, depth + 1)
        return False
    if isinstance(expr, ast.Subscript):
        return _may_be_uint8(outline, expr.value, known, depth + 1)
    if isinstance(expr, ast.Attribute):
        return expr.attr in TENSOR_ATTRIBUTES and _may_be_uint8(outline, expr.value, known, depth + 1)
    if isinstance(expr, ast.UnaryOp):
        return not isinstance(expr.op, ast.Not) and _may_be_uint8(outline, expr.operand, known, depth + 1)
    if isinstance(expr, ast.IfExp):
        return _may_be_uint8(outline, expr.body, known, depth + 1) or _may_be_uint8(
            outline, expr.orelse, known, depth + 1)
    return False


def _names_uint8(outline: Outline, node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in _UINT8
    return may_resolve_to(outline, node, _UINT8)


def _to_bool(node: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(node, cst.BaseExpression)
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "byte"
        and not node.args
        and isinstance(node.func.value, cst.Comparison)
    ):
        # A comparison is already bool: the detour through uint8 can go.
        return node.with_changes(func=node.func.with_changes(attr=cst.Name("bool")))
    if not isinstance(node, _ATOMS) and not node.lpar:
        node = node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(func=cst.Attribute(value=node, attr=cst.Name("bool")))
