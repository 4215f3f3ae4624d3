"""TL101: reading a Python number with `.data[0]` instead of `.item()`."""

import ast
import re
from typing import Iterator

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.inference import Kind
from torchlint.analysis.outline import Outline, may_be_member
from torchlint.core.diagnostic import Edit, Fix
from torchlint.rules.rule import Example, Finding, FixSafety, Rule


class DataIndexZero(Rule):
    code = "TL101"
    name = "data-index-scalar"
    summary = "`loss.data[0]` reads a scalar the pre-0.4 way; use `loss.item()`"
    why = (
        "Before torch 0.4 a loss was a 1-element Variable and `loss.data[0]` read its value. Since 0.4 a "
        "loss is a 0-dim tensor: indexing it raises `IndexError: invalid index of a 0-dim tensor` (a "
        "warning in 0.4, an error since). `.item()` returns the Python number in every version, and unlike "
        "`total += loss` it does not keep the autograd graph alive."
    )
    fix_safety = FixSafety.SAFE
    fix_description = "Replaces `<x>.data[0]` with `<x>.item()`."
    # ``.data[0]``, also spelled ``.data[(0)]`` or ``.data[0,]`` (one subscript to libcst).
    triggers = (re.compile(r"\.\s*data\s*\[[\s(]*0[\s)]*,?\s*\]"),)

    references = (
        "https://pytorch.org/blog/pytorch-0_4_0-migration-guide/",
        "https://pytorch.org/docs/stable/generated/torch.Tensor.item.html",
    )
    flagged = (
        Example(
            """
            import torch
            import torch.nn as nn
            criterion = nn.MSELoss()
            out, y = torch.ones(3), torch.zeros(3)
            loss = criterion(out, y)
            total = loss.data[0]
            """,
            """
            import torch
            import torch.nn as nn
            criterion = nn.MSELoss()
            out, y = torch.ones(3), torch.zeros(3)
            loss = criterion(out, y)
            total = loss.item()
            """,
            runnable=True,
            raises="IndexError",
        ),
        Example(
            """
            import torch
            import torch.nn.functional as F
            pred, y = torch.tensor([1, 2, 3]), torch.tensor([1, 0, 3])
            correct = (pred == y).sum().data[0]
            error = F.l1_loss(pred.float(), y.float()).data[0]
            """,
            """
            import torch
            import torch.nn.functional as F
            pred, y = torch.tensor([1, 2, 3]), torch.tensor([1, 0, 3])
            correct = (pred == y).sum().item()
            error = F.l1_loss(pred.float(), y.float()).item()
            """,
            count=2,
        ),
        Example(
            """
            import torch
            import torch.nn as nn
            criterion = nn.CrossEntropyLoss()
            logits, target = torch.randn(4, 3), torch.tensor([0, 2, 1, 0])
            value = criterion(logits, target).data[0]
            """,
            """
            import torch
            import torch.nn as nn
            criterion = nn.CrossEntropyLoss()
            logits, target = torch.randn(4, 3), torch.tensor([0, 2, 1, 0])
            value = criterion(logits, target).item()
            """,
        ),
    )
    accepted = (
        """
        class Dataset:
            def first(self):
                return self.data[0]
        """,
        """
        import torchvision
        trainset = torchvision.datasets.MNIST(root=".")
        image = trainset.data[0]
        """,
        """
        import torch
        batch = {"data": [1, 2]}
        first = batch["data"][0]
        outputs = torch.randn(8, 10)
        row = outputs.data[0]  # a whole row of a batch, not a scalar
        """,
        """
        def report(loss):
            return loss.data[0]  # unknown kind: not flagged
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # ``<x>.data[0]`` with a literal 0, x something inference may know
        # (whether it is a 0-dim tensor is the rule's question).
        return any(
            isinstance(node.value, ast.Attribute) and node.value.attr == "data" and _is_zero(node.slice)
            and may_be_member(outline, node.value.value, "data")
            for node in outline.nodes(ast.Subscript)
        )

    def check_Subscript(self, node: cst.Subscript, ctx: NodeContext) -> Iterator[Finding]:
        value = node.value
        if not (isinstance(value, cst.Attribute) and value.attr.value == "data" and _is_index_zero(node)):
            return
        # ``.data`` exists only on tensors: a binding to a Python number cannot be what reaches here.
        receiver = ctx.inference.used_as_tensor(value.value)
        if not (receiver.kind is Kind.TENSOR and receiver.scalar):
            return
        yield Finding(node, "`.data[0]` on a 0-dim tensor; use `.item()` to read the number", Fix([Edit(node, _to_item)]))


def _is_index_zero(node: cst.Subscript) -> bool:
    if len(node.slice) != 1:
        return False
    index = node.slice[0].slice
    return isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) and index.value.value == "0"


def _is_zero(index: ast.AST) -> bool:
    if isinstance(index, ast.Tuple) and len(index.elts) == 1:
        index = index.elts[0]  # ``x.data[0,]`` is one subscript element to libcst
    return isinstance(index, ast.Constant) and type(index.value) is int and index.value == 0


def _to_item(node: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute)
    receiver = node.value.value
    return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("item")), lpar=node.lpar, rpar=node.rpar)
