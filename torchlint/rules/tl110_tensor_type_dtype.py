"""TL110: a legacy tensor type (`torch.cuda.FloatTensor`) passed as `dtype=`."""

import ast
import re
from typing import Iterator, List, Optional

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import (
    Names,
    Outline,
    any_of,
    calls_to,
    keyword_arguments,
    may_hold_value,
    resolves_to,
)
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.deprecations import LEGACY_TENSOR_TYPES
from torchlint.knowledge.torch_api import DTYPE_FACTORIES, DTYPE_TENSOR_METHODS
from torchlint.rules import edits
from torchlint.rules._renames import spell_code
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting

_FACTORIES = Names(DTYPE_FACTORIES)
_LEGACY_TYPES = Names(LEGACY_TENSOR_TYPES)


class TensorTypeAsDtype(Rule):
    code = "TL110"
    name = "tensor-type-as-dtype"
    summary = "`dtype=torch.cuda.FloatTensor` raises TypeError; use `dtype=torch.float32, device='cuda'`"
    why = (
        "`torch.FloatTensor`, `torch.cuda.LongTensor` and the other legacy tensor types are types, not "
        "dtypes: factories such as `torch.tensor`, `zeros`, `ones`, `full`, `arange` or `randn` reject them "
        "with `TypeError: argument 'dtype' must be torch.dtype, not torch.tensortype`. Since torch 0.4 a "
        "tensor's element type and its device are separate arguments: `dtype=torch.float32` and "
        "`device='cuda'`."
    )
    fix_safety = FixSafety.SAFE
    fix_description = (
        "Replaces the type with its dtype (`FloatTensor` -> `torch.float32`, `LongTensor` -> `torch.int64`, "
        "...) and, for the `torch.cuda` types, adds `device='cuda'`. No fix for a CUDA type when the call "
        "already passes `device=` (or `**kwargs`): which device was meant is then unclear."
    )
    # ``dtype=`` a tensor type, or a tensor type imported under another name.
    triggers = (re.compile(r"\bdtype\s*=[\s(]*[\w.]*Tensor\b"), re.compile(r"Tensor\s+as\b"))

    references = (
        "https://pytorch.org/docs/stable/tensor_attributes.html",
    )
    flagged = (
        Example(
            """
            import torch
            x = torch.tensor([1, 2, 3], dtype=torch.FloatTensor)
            idx = torch.zeros(2, 3, dtype=torch.LongTensor)
            """,
            """
            import torch
            x = torch.tensor([1, 2, 3], dtype=torch.float32)
            idx = torch.zeros(2, 3, dtype=torch.int64)
            """,
            count=2,
            runnable=True,
            raises="TypeError",
        ),
        Example(
            """
            import torch
            data = [[1, 2], [3, 4]]
            x = torch.tensor(data, dtype=torch.cuda.FloatTensor)
            mask = torch.ones(4, dtype=torch.cuda.ByteTensor, requires_grad=False)
            """,
            """
            import torch
            data = [[1, 2], [3, 4]]
            x = torch.tensor(data, dtype=torch.float32, device='cuda')
            mask = torch.ones(4, dtype=torch.uint8, requires_grad=False, device='cuda')
            """,
            count=2,
        ),
        Example(
            """
            import torch as th
            from torch.cuda import HalfTensor
            y = th.randn(8, dtype=HalfTensor)
            z = y.new_zeros(3, dtype=th.DoubleTensor)
            """,
            """
            import torch as th
            y = th.randn(8, dtype=th.float16, device='cuda')
            z = y.new_zeros(3, dtype=th.float64)
            """,
            count=2,
        ),
        Example(
            """
            import torch
            x = torch.empty(3, dtype=torch.cuda.FloatTensor, device=rank)  # which device? no fix
            """,
        ),
    )
    accepted = (
        """
        import torch
        x = torch.tensor([1.0], dtype=torch.float32, device="cuda")
        y = x.type(torch.FloatTensor)  # .type() takes tensor types
        ok = isinstance(x, torch.cuda.FloatTensor)
        """,
        """
        import numpy as np
        a = np.zeros(3, dtype=np.float32)
        """,
        """
        import torch
        def zeros(n, dtype):
            return [dtype] * n
        z = zeros(3, dtype=torch.FloatTensor)  # a local function
        """,
        """
        def build(x, kind):
            return x.new_zeros(3, dtype=kind)
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # ``dtype=<a legacy tensor type, through an import>`` in a call of a factory
        # (through an import) or of a ``new_*`` method of something inference may know.
        if "dtype" not in keyword_arguments(outline):
            return False

        def legacy_dtype(call: ast.Call) -> bool:
            return any(k.arg == "dtype" and resolves_to(outline, k.value, _LEGACY_TYPES) for k in call.keywords)

        if any_of(calls_to(outline, _FACTORIES, where=legacy_dtype)):
            return True
        return any(
            isinstance(c.func, ast.Attribute) and legacy_dtype(c) and may_hold_value(outline, c.func.value)
            for c in outline.calls(*DTYPE_TENSOR_METHODS)
        )

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        dtype = edits.keyword(node, "dtype")
        if dtype is None:
            return
        legacy = ctx.resolver.resolve(dtype.value) if isinstance(dtype.value, (cst.Name, cst.Attribute)) else None
        if legacy not in LEGACY_TENSOR_TYPES or not _takes_dtype(node, ctx):
            return
        new_dtype, cuda = LEGACY_TENSOR_TYPES[legacy]
        advice = f"dtype={new_dtype}" + (", device='cuda'" if cuda else "")
        message = fitting(f"`{legacy}` is a tensor type, not a dtype; use `{advice}`",
                          f"`{legacy}` is not a dtype; use `{advice}`")
        yield Finding(dtype, message, _fix(node, dtype, new_dtype, cuda, ctx),
                      detail=f"`dtype={legacy}` raises TypeError")


def _takes_dtype(call: cst.Call, ctx: NodeContext) -> bool:
    callee = ctx.resolver.resolve(call.func)
    if callee is not None:
        return callee in DTYPE_FACTORIES
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value in DTYPE_TENSOR_METHODS
        and ctx.inference.is_tensor(func.value)
    )


def _fix(call: cst.Call, dtype: cst.Arg, new_dtype: str, cuda: bool, ctx: NodeContext) -> Optional[Fix]:
    spelled = spell_code(new_dtype, dtype, ctx)
    if spelled is None:
        return None
    code, required = spelled
    fix_edits: List[Edit] = [Edit(dtype.value, edits.replace_with_expression(code))]
    if cuda:
        if edits.keyword(call, "device") is not None or edits.has_star_args(call):
            return None
        fix_edits.append(Edit(call, edits.add_keywords((("device", "'cuda'"),))))
    return Fix(fix_edits, required_imports=required)
