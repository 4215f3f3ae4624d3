"""TL202: `.numpy()` on a tensor that lives on the GPU."""

import ast
from typing import Iterable, Iterator, Optional

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import (
    Outline,
    bindings,
    callee_name,
    keyword_value,
    names_where,
    parameter_names,
    resolved_names,
    stored_names,
)
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.torch_api import TENSOR_ATTRIBUTES, is_torch_name
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule


class CudaTensorToNumpy(Rule):
    code = "TL202"
    name = "cuda-tensor-numpy"
    summary = "`.numpy()` on a CUDA tensor raises; call `.cpu()` first"
    why = (
        "NumPy arrays live in host memory, so `Tensor.numpy()` on a CUDA tensor raises `TypeError: can't "
        "convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory "
        "first.` The rule fires where the tensor is visibly on the GPU: `x.cuda().numpy()`, "
        "`x.to('cuda').numpy()`, or a name bound from `.cuda()`, `.to('cuda')` or a factory with "
        "`device='cuda'` and never moved back."
    )
    fix_safety = FixSafety.UNSAFE
    fix_description = (
        "Inserts `.cpu()` before `.numpy()`. Unsafe: it adds a device-to-host copy (and `.numpy()` still "
        "raises if the tensor requires grad; add `.detach()` where needed)."
    )
    triggers = ("numpy(",)
    requires = ("cuda",)  # nothing reaches a GPU without saying so

    references = (
        "https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html",
    )
    flagged = (
        Example(
            """
            import torch
            x = torch.ones(3)
            print(x.cuda().numpy())
            """,
            """
            import torch
            x = torch.ones(3)
            print(x.cuda().cpu().numpy())
            """,
        ),
        Example(
            """
            import torch
            y = torch.zeros(4, device="cuda")
            z = y * 2
            array = z.numpy()
            """,
            """
            import torch
            y = torch.zeros(4, device="cuda")
            z = y * 2
            array = z.cpu().numpy()
            """,
        ),
        Example(
            """
            import torch
            out = torch.ones(2).to("cuda:0").detach()
            values = out.numpy()
            """,
            """
            import torch
            out = torch.ones(2).to("cuda:0").detach()
            values = out.cpu().numpy()
            """,
        ),
    )
    accepted = (
        """
        import torch
        x = torch.ones(3).cuda()
        print(x.cpu().numpy())
        """,
        """
        import torch
        x = torch.ones(3)
        x = x.cuda()
        x = x.cpu()
        print(x.numpy())
        """,
        """
        import torch
        x = torch.ones(3).to(device)
        print(x.numpy())  # device unknown: not flagged
        """,
        """
        import torch
        x = torch.ones(3).cuda()
        print(x.numpy(force=True))
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # ``<receiver>.numpy()`` without ``force=`` whose receiver can be visibly on the
        # GPU: ``.cuda()``, ``.to("cuda")``, a torch call (``device="cuda"``, a
        # torch.cuda tensor type), a module call, a name with some binding to one, or
        # a tensor method / ``.data`` / slice of one. Nothing reaches a GPU without a
        # ``.cuda`` attribute, an import from torch.cuda or a "cuda" string.
        candidates = [
            call for call in outline.calls("numpy")
            if isinstance(call.func, ast.Attribute) and keyword_value(call, "force") is None
        ]
        if not candidates or not (
            outline.calls("cuda")
            or any(True for _ in outline.attributes("cuda"))
            or any(n == "torch.cuda" or n.startswith("torch.cuda.")
                   for names in bindings(outline).values() for n in names)
            or any(_cuda_string(node) for node in outline.nodes(ast.Constant))
        ):
            return False
        return any(_may_be_on_cuda(outline, call.func.value) for call in candidates)  # type: ignore[attr-defined]

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "numpy"):
            return
        if edits.keyword(node, "force") is not None or not ctx.inference.on_cuda(func.value):
            return
        yield Finding(
            func.attr,
            "`.numpy()` on a CUDA tensor raises TypeError; call `.cpu()` first",
            Fix([Edit(func, _insert_cpu)], safe=False),
        )


def _torch(names: Iterable[str]) -> bool:
    return any(is_torch_name(name) for name in names)


def _cuda_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and (
        node.value == "cuda" or node.value.startswith("cuda:"))


def _device_literal(node: ast.AST) -> Optional[bool]:
    """``inference._device_literal``: True for "cuda", "cuda:0", torch.device("cuda"); False for "cpu"."""
    if isinstance(node, ast.Call) and node.args and callee_name(node.func) == "device":
        node = node.args[0]
    if _cuda_string(node):
        return True
    if isinstance(node, ast.Constant) and node.value == "cpu":
        return False
    return None


def _may_be_on_cuda(outline: Outline, expr: ast.AST, known: Optional[set] = None, depth: int = 0) -> bool:
    """Can inference know ``expr`` to be on a CUDA device (``Value.cuda``)?"""
    if depth > 40:
        return True
    if isinstance(expr, ast.Name):
        if known is None:
            known = names_where(outline, "TL202 cuda", lambda value, found: _may_be_on_cuda(outline, value, found))
        # A parameter takes what its calls pass (a script's def, a helper module's beside its scripts).
        return expr.id in known or expr.id in parameter_names(outline.whole_file)
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Name):  # a torch call, or a module's (a name bound by an assignment)
            return _torch(resolved_names(outline, func)) or func.id in stored_names(outline)
        if not isinstance(func, ast.Attribute) or _torch(resolved_names(outline, func)):
            return True
        if func.attr == "cuda":
            return True
        if func.attr == "cpu":
            return False
        if func.attr == "to":
            for arg in (*expr.args, *(k.value for k in expr.keywords if k.arg == "device")):
                device = _device_literal(arg)
                if device is not None:
                    return device
        return _may_be_on_cuda(outline, func.value, known, depth + 1)
    if isinstance(expr, ast.Attribute):
        return expr.attr in TENSOR_ATTRIBUTES and _may_be_on_cuda(outline, expr.value, known, depth + 1)
    if isinstance(expr, ast.Subscript):
        return _may_be_on_cuda(outline, expr.value, known, depth + 1)
    if isinstance(expr, ast.UnaryOp):
        return not isinstance(expr.op, ast.Not) and _may_be_on_cuda(outline, expr.operand, known, depth + 1)
    if isinstance(expr, ast.BinOp):
        return _may_be_on_cuda(outline, expr.left, known, depth + 1) or _may_be_on_cuda(
            outline, expr.right, known, depth + 1)
    if isinstance(expr, ast.Compare):
        return any(_may_be_on_cuda(outline, e, known, depth + 1) for e in (expr.left, *expr.comparators))
    if isinstance(expr, ast.IfExp):
        return _may_be_on_cuda(outline, expr.body, known, depth + 1) or _may_be_on_cuda(
            outline, expr.orelse, known, depth + 1)
    return False


def _insert_cpu(node: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(node, cst.Attribute)
    moved = cst.Call(func=cst.Attribute(value=node.value, attr=cst.Name("cpu")))
    return node.with_changes(value=moved)
