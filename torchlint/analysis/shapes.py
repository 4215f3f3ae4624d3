"""How many dimensions a tensor expression has, when the file shows it.

Read from how the value was made: a torch factory with its sizes
(``torch.randn(3, 4)``), ``.view`` / ``.reshape`` with the new sizes, a product
of known rank (``torch.mm``), a tensor of a flat list of numbers
(``torch.tensor([0, 2, 1])``) or ``torch.arange``; through a name bound only to
such values. Anything else is unknown (None): rules act on known shapes only.
"""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.knowledge.torch_api import PRODUCT_NDIM, RESHAPE_METHODS, SIZE_FACTORIES

_MAX_DEPTH = 4  # names followed through assignments


def sized_ndim(expr: cst.BaseExpression, ctx: NodeContext, depth: int = 0) -> Optional[int]:
    """The number of dimensions ``expr`` has when it comes from sizes the file
    spells out (a sized factory, ``.view``/``.reshape``, a product); None: unknown."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, cst.Name):
        values = ctx.inference.bound_values(expr)
        if not values:
            return None
        dims = {sized_ndim(v, ctx, depth + 1) for v in values}
        return dims.pop() if len(dims) == 1 else None
    if not isinstance(expr, cst.Call):
        return None
    qualified = ctx.resolver.resolve(expr.func)
    if qualified in PRODUCT_NDIM:
        return PRODUCT_NDIM[qualified]
    sizes = [a for a in expr.args if a.keyword is None]
    if qualified in SIZE_FACTORIES:
        return _count_sizes(sizes)
    if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in RESHAPE_METHODS and ctx.inference.is_tensor(expr):
        return _count_sizes(sizes)
    return None


def ndim(expr: cst.BaseExpression, ctx: NodeContext) -> Optional[int]:
    """``sized_ndim``, and 1 for a tensor of a flat list of numbers or ``torch.arange``."""
    known = sized_ndim(expr, ctx)
    if known is not None:
        return known
    values = ctx.inference.bound_values(expr) if isinstance(expr, cst.Name) else (expr,)
    if not values or len(values) != 1:
        return None
    value = values[0]
    if not isinstance(value, cst.Call):
        return None
    qualified = ctx.resolver.resolve(value.func) or ""
    if qualified == "torch.arange":
        return 1
    if value.args and isinstance(value.args[0].value, cst.List):
        elements = value.args[0].value.elements
        if qualified.startswith("torch.") and elements and all(
                isinstance(e.value, (cst.Integer, cst.Float)) for e in elements):
            return 1
    return None


def is_1d_tensor(expr: cst.BaseExpression, ctx: NodeContext) -> bool:
    return ctx.inference.is_tensor(expr) and ndim(expr, ctx) == 1


def _count_sizes(args: Sequence[cst.Arg]) -> Optional[int]:
    if any(a.star for a in args):
        return None
    if len(args) == 1 and isinstance(args[0].value, (cst.Tuple, cst.List)):
        return len(args[0].value.elements)
    return len(args) if args else None
