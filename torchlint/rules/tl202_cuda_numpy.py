"""TL202: `.numpy()` on a tensor that lives on the GPU."""

import ast

from typing import Iterator

import libcst as cst

from torchlint import edits
from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Outline, bindings, keyword_value, may_be_tensor
from torchlint.rule import Edit, Example, Finding, Fix, FixSafety, Rule


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
    seeds = "000 (2.3.1); 004 (DEBUG 12)"

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
        # ``<receiver>.numpy()`` without ``force=``, where the receiver can hold a known
        # value, in a file where something can reach a GPU: a ``.cuda`` attribute
        # (``x.cuda()``, ``torch.cuda.FloatTensor``), a "cuda" device string, or an
        # import from torch.cuda.
        if not any(
            isinstance(call.func, ast.Attribute)
            and keyword_value(call, "force") is None
            and may_be_tensor(outline, call.func.value, any_name=True)
            for call in outline.calls("numpy")
        ):
            return False
        if any(True for _ in outline.attributes("cuda")):
            return True
        if any(n.startswith("torch.cuda.") for names in bindings(outline).values() for n in names):
            return True
        return any(
            isinstance(node.value, str) and (node.value == "cuda" or node.value.startswith("cuda:"))
            for node in outline.nodes(ast.Constant)
        )

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


def _insert_cpu(node: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(node, cst.Attribute)
    moved = cst.Call(func=cst.Attribute(value=node.value, attr=cst.Name("cpu")))
    return node.with_changes(value=moved)
