"""How many dimensions a tensor expression has, when the file shows it.

Read from how the value was made: a torch factory with its sizes
(``torch.randn(3, 4)``), ``.view`` / ``.reshape`` with the new sizes, a product
of known rank (``torch.mm``), a tensor of a (nested) list of numbers
(``torch.tensor([0, 2, 1])``, ``torch.FloatTensor([[1, 2], [3, 4]])``) or
``torch.arange``; through a name bound only to such values, or whose binding that
reaches the read on every run is one (``Inference.dominating_value``); else what
inference's value facts know (``Value.ndim``: an element of such a tensor, a
reduction along a dimension, a sort). Anything else is unknown (None): rules
act on known shapes only.
"""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.inference import Kind, literal_rank
from torchlint.knowledge.torch_api import (
    ARRAY_TO_TENSOR,
    NDARRAY_ONLY_TO_TENSOR,
    PRODUCT_NDIM,
    RESHAPE_METHODS,
    SIZE_FACTORIES,
    VARIABLE,
)

_MAX_DEPTH = 4  # names followed through assignments
# Constructors that take the data: a (nested) list makes a tensor of its nesting depth.
_FROM_DATA = ARRAY_TO_TENSOR - NDARRAY_ONLY_TO_TENSOR
_ARRAY_CONVERSIONS = frozenset({"numpy.array", "numpy.asarray", "torch.from_numpy"})


def sized_ndim(expr: cst.BaseExpression, ctx: NodeContext, depth: int = 0) -> Optional[int]:
    """The number of dimensions ``expr`` has when it comes from sizes the file
    spells out (a sized factory, ``.view``/``.reshape``, a product); None: unknown."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, cst.Name):
        values = _values(expr, ctx)
        if not values:
            return None
        dims = {sized_ndim(v, ctx, depth + 1) for v in values}
        return dims.pop() if len(dims) == 1 else None
    if not isinstance(expr, cst.Call):
        return None
    qualified = ctx.resolver.resolve(expr.func)
    wrapped = _variable_data(expr, qualified)
    if wrapped is not None:
        return sized_ndim(wrapped, ctx, depth + 1)
    if qualified in PRODUCT_NDIM:
        return PRODUCT_NDIM[qualified]
    sizes = [a for a in expr.args if a.keyword is None]
    if qualified in SIZE_FACTORIES:
        return _count_sizes(sizes)
    if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in RESHAPE_METHODS and ctx.inference.is_tensor(expr):
        return _count_sizes(sizes)
    return None


def ndim(expr: cst.BaseExpression, ctx: NodeContext) -> Optional[int]:
    """``sized_ndim``; else, for a tensor made from a literal (``torch.tensor([[1, 2], [3, 4]])``,
    ``torch.FloatTensor(data)`` with ``data`` bound to a literal), the literal's nesting depth;
    1 for ``torch.arange``."""
    known = sized_ndim(expr, ctx)
    if known is not None:
        return known
    value = _only_value(expr, ctx)
    if not isinstance(value, cst.Call):
        return _inferred_ndim(expr, ctx)
    qualified = ctx.resolver.resolve(value.func) or ""
    wrapped = _variable_data(value, qualified)
    if wrapped is not None:
        return ndim(wrapped, ctx)
    if qualified == "torch.arange":
        return 1
    if qualified in _FROM_DATA:
        rank = _data_rank(value, ctx, 0)
        if rank is not None:
            return rank
    return _inferred_ndim(expr, ctx)


def _inferred_ndim(expr: cst.BaseExpression, ctx: NodeContext) -> Optional[int]:
    """What the engine of value facts knows of ``expr``'s dimensions, followed through
    indexing, iteration, reductions along a dimension and sorting (``Value.ndim``)."""
    value = ctx.inference.value(expr)
    return value.ndim if value.kind is Kind.TENSOR else None


def _data_rank(expr: cst.BaseExpression, ctx: NodeContext, depth: int) -> Optional[int]:
    """The rank of array data the file spells out: a (nested) list literal, a
    name bound to one, or a conversion that keeps the rank (``np.array(data)``,
    ``torch.FloatTensor(data)``); None: unknown."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, cst.Name):
        reaching = ctx.inference.dominating_value(expr)
        if reaching is not None:
            return _data_rank(reaching, ctx, depth + 1)
        values = ctx.inference.bound_values(expr)
        if not values:
            return None
        # ``data = np.array(data)`` keeps the rank of what ``data`` was.
        ranks = {_data_rank(v, ctx, depth + 1) for v in values if not _converts_name(v, expr.value, ctx)}
        return ranks.pop() if len(ranks) == 1 else None
    if isinstance(expr, cst.Call):
        argument = _converted(expr, ctx)
        return _data_rank(argument, ctx, depth + 1) if argument is not None else None
    return literal_rank(expr)


def _converted(call: cst.Call, ctx: NodeContext) -> Optional[cst.BaseExpression]:
    """The data a rank-keeping conversion (``np.array(x)``, ``torch.tensor(x)``) converts."""
    qualified = ctx.resolver.resolve(call.func) or ""
    if qualified not in _FROM_DATA and qualified not in _ARRAY_CONVERSIONS:
        return None
    if not call.args or call.args[0].keyword is not None or call.args[0].star:
        return None
    return call.args[0].value


def _converts_name(value: cst.BaseExpression, name: str, ctx: NodeContext) -> bool:
    argument = _converted(value, ctx) if isinstance(value, cst.Call) else None
    return isinstance(argument, cst.Name) and argument.value == name


def _variable_data(call: cst.Call, qualified: Optional[str]) -> Optional[cst.BaseExpression]:
    """``t`` of ``Variable(t)``: the legacy wrapper is the tensor itself, of the same shape."""
    if qualified in VARIABLE and call.args and call.args[0].keyword is None and not call.args[0].star:
        return call.args[0].value
    return None


def _only_value(expr: cst.BaseExpression, ctx: NodeContext) -> Optional[cst.BaseExpression]:
    """``expr``, or the one value the name ``expr`` has where it is read (None: several or unknown)."""
    if not isinstance(expr, cst.Name):
        return expr
    values = _values(expr, ctx)
    return values[0] if values and len(values) == 1 else None


def _values(name: cst.Name, ctx: NodeContext) -> Optional[Sequence[cst.BaseExpression]]:
    """What ``name`` may hold where it is read: the value of the binding that reaches it on every
    run (``tensor = torch.FloatTensor(data)`` rebinding an earlier ``tensor``), else all its values."""
    reaching = ctx.inference.dominating_value(name)
    return (reaching,) if reaching is not None else ctx.inference.bound_values(name)


def is_1d_tensor(expr: cst.BaseExpression, ctx: NodeContext) -> bool:
    # The shape first: it rarely needs more than this file, the tensor question may take the project model.
    return ndim(expr, ctx) == 1 and ctx.inference.is_tensor(expr)


def _count_sizes(args: Sequence[cst.Arg]) -> Optional[int]:
    if any(a.star for a in args):
        return None
    if len(args) == 1 and isinstance(args[0].value, (cst.Tuple, cst.List)):
        return len(args[0].value.elements)
    return len(args) if args else None
