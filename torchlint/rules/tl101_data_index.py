"""TL101: reading a Python number with `.data[0]` instead of `.item()`."""

import ast
import re
from typing import Iterator

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.inference import Kind
from torchlint.analysis.outline import Outline, may_be_member, project_parameter_names
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.torch_api import DTYPE_METHODS
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
    fix_description = (
        "Replaces `<x>.data[0]` with `<x>.item()`; `<x>.data.numpy()[0]` (also with `.cpu()` or a dtype "
        "conversion before `.numpy()`) with `<x>.item()`, a Python number like the one `.data[0]` gave.")
    # ``.data[0]``, also spelled ``.data[(0)]`` or ``.data[0,]`` (one subscript to libcst).
    # And the NumPy spellings of the same read, ``loss.data.numpy()[0]``.
    triggers = (re.compile(r"\.\s*data\s*\[[\s(]*0[\s)]*,?\s*\]"),
                re.compile(r"\.\s*numpy\s*\(\s*\)\s*\[[\s(]*0[\s)]*,?\s*\]"))

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
        Example(
            """
            import torch
            def accuracy(out, y):
                correct = out.max(1)[1].eq(y).float().mean()
                return correct.data[0]
            def spread(a):
                return (torch.max(a) - torch.min(a)).data[0]
            acc = accuracy(torch.randn(4, 3), torch.tensor([0, 2, 1, 0]))
            width = spread(torch.arange(5.0))
            """,
            """
            import torch
            def accuracy(out, y):
                correct = out.max(1)[1].eq(y).float().mean()
                return correct.item()
            def spread(a):
                return (torch.max(a) - torch.min(a)).item()
            acc = accuracy(torch.randn(4, 3), torch.tensor([0, 2, 1, 0]))
            width = spread(torch.arange(5.0))
            """,
            count=2,
            runnable=True,
            raises="IndexError",
        ),
        Example(
            """
            import torch
            def per_sample_loss(x, average=False):
                loss = (x ** 2).sum(1)
                if average:
                    loss = torch.mean(loss)
                return loss
            x = torch.randn(4, 3)
            mean_loss = per_sample_loss(x, average=True).data[0]
            first_loss = per_sample_loss(x).data[0]
            """,
            """
            import torch
            def per_sample_loss(x, average=False):
                loss = (x ** 2).sum(1)
                if average:
                    loss = torch.mean(loss)
                return loss
            x = torch.randn(4, 3)
            mean_loss = per_sample_loss(x, average=True).item()
            first_loss = per_sample_loss(x).data[0]
            """,
            runnable=True,
            raises="IndexError",
        ),
        Example(
            """
            import torch
            import torch.nn.functional as F
            loss = F.mse_loss(torch.ones(3), torch.zeros(3))
            value = loss.data.numpy()[0]
            precise = loss.data.cpu().double().numpy()[0]
            """,
            """
            import torch
            import torch.nn.functional as F
            loss = F.mse_loss(torch.ones(3), torch.zeros(3))
            value = loss.item()
            precise = loss.double().item()
            """,
            count=2,
            runnable=True,
            raises="IndexError",
        ),
        Example(
            """
            import torch
            import torch.nn as nn


            class Trainer:
                def __init__(self):
                    self.criterion = nn.MSELoss()
                    self.loss = torch.zeros(1)  # shown before the first step

                def step(self, out, y):
                    self.loss = self.criterion(out, y)

                def report(self):
                    return self.loss.data[0]


            trainer = Trainer()
            before = trainer.report()
            trainer.step(torch.ones(3), torch.zeros(3))
            after = trainer.report()
            """,
            """
            import torch
            import torch.nn as nn


            class Trainer:
                def __init__(self):
                    self.criterion = nn.MSELoss()
                    self.loss = torch.zeros(1)  # shown before the first step

                def step(self, out, y):
                    self.loss = self.criterion(out, y)

                def report(self):
                    return self.loss.item()


            trainer = Trainer()
            before = trainer.report()
            trainer.step(torch.ones(3), torch.zeros(3))
            after = trainer.report()
            """,
            runnable=True,
            raises="IndexError",
        ),
        Example(
            """
            def mean_reward(rewards):
                return rewards.mean().data[0]
            """,
            """
            def mean_reward(rewards):
                return rewards.mean().item()
            """,
        ),
    )
    accepted = (
        """
        import torch
        def firsts(out):
            # a reduction along a dim, and a row: still indexable
            return out.sum(1).data[0], out.data.cpu().numpy()[0], out.max(1)[0].data[0]
        """,
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
        """
        import torch
        import torch.nn as nn
        class Meter:
            def __init__(self):
                self.criterion = nn.MSELoss()
                self.total = torch.zeros(1)
            def add(self, out, y):
                self.total = self.total + self.criterion(out, y)  # stays one 1-D element
            def report(self):
                return self.total.data[0]
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # ``<x>.data[0]`` (or ``<x>.data.numpy()[0]``) with a literal 0, x something
        # inference may know (whether it is a 0-dim tensor is the rule's question).
        for node in outline.nodes(ast.Subscript):
            if not _is_zero(node.slice):
                continue
            data = _numpy_data_ast(node.value) or node.value
            if isinstance(data, ast.Attribute) and data.attr == "data" and (
                    may_be_member(outline, data.value, "data") or _a_parameter(outline, data.value)):
                return True
        return False

    def check_Subscript(self, node: cst.Subscript, ctx: NodeContext) -> Iterator[Finding]:
        if not _is_index_zero(node):
            return
        value = node.value
        numpy_data = _numpy_data(value)
        data = numpy_data if numpy_data is not None else value
        if not (isinstance(data, cst.Attribute) and data.attr.value == "data"):
            return
        # ``.data`` exists only on tensors: a binding to a Python number cannot be what reaches here.
        receiver = ctx.inference.used_as_tensor(data.value)
        if receiver.kind is Kind.UNKNOWN and receiver.if_tensor is not None:
            # A full reduction of something unknown (``rewards.mean()``): a tensor's is 0-dim
            # today, a NumPy scalar's ``.data`` refuses any index, and pandas dropped
            # ``Series.data``; ``[0]`` of it works on none of them (``.item()`` on the first two).
            receiver = receiver.if_tensor
        if not receiver.zero_dim_on_some_run:
            return  # a one-element tensor on every run keeps ``[0]``; 0-dim on one, ``.item()`` reads both
        shape = "a 0-dim tensor" if receiver.scalar else "a tensor that is 0-dim on some runs"
        if numpy_data is not None:
            message = f"`.numpy()[0]` of {shape} raises `IndexError`; use `.item()` to read the number"
        else:
            message = f"`.data[0]` on {shape}; use `.item()` to read the number"
        yield Finding(node, message, Fix([Edit(node, _to_item)]))


# Calls between ``.data`` and ``.numpy()``: these keep a 0-dim tensor's value (the fix
# drops them), and dtype conversions, which the fix keeps (``x.double().item()``).
_VALUE_KEEPING = frozenset({"cpu", "detach", "clone"})
_CONVERSIONS = frozenset(DTYPE_METHODS)
_BETWEEN = _VALUE_KEEPING | _CONVERSIONS


def _a_parameter(outline: Outline, receiver: ast.AST) -> bool:
    """``loss.data[0]`` with ``loss`` a parameter of a def the scripts beside the file
    may call (``def report(loss)`` in a helper module): the project model may know it."""
    return isinstance(receiver, ast.Name) and receiver.id in project_parameter_names(outline)


def _numpy_data(expr: cst.BaseExpression) -> "cst.Attribute | None":
    """The ``<x>.data`` of ``<x>.data[.cpu()].numpy()``; None for anything else."""
    if not (isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value == "numpy"):
        return None
    inner = expr.func.value
    while (isinstance(inner, cst.Call) and not inner.args and isinstance(inner.func, cst.Attribute)
           and inner.func.attr.value in _BETWEEN):
        inner = inner.func.value
    return inner if isinstance(inner, cst.Attribute) and inner.attr.value == "data" else None


def _conversions(numpy_call: cst.Call) -> list:
    """The dtype conversions between ``.data`` and ``.numpy()``, innermost last."""
    found = []
    inner = numpy_call.func.value
    while isinstance(inner, cst.Call):
        if inner.func.attr.value in _CONVERSIONS:
            found.append(inner.func.attr.value)
        inner = inner.func.value
    return found


def _numpy_data_ast(expr: ast.AST) -> "ast.Attribute | None":
    """``_numpy_data`` on Python's tree, for the screen."""
    if not (isinstance(expr, ast.Call) and not expr.args and not expr.keywords
            and isinstance(expr.func, ast.Attribute) and expr.func.attr == "numpy"):
        return None
    inner = expr.func.value
    while (isinstance(inner, ast.Call) and not inner.args and not inner.keywords
           and isinstance(inner.func, ast.Attribute) and inner.func.attr in _BETWEEN):
        inner = inner.func.value
    return inner if isinstance(inner, ast.Attribute) and inner.attr == "data" else None


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
    assert isinstance(node, cst.Subscript) and isinstance(node.value, (cst.Attribute, cst.Call))
    data = _numpy_data(node.value)
    receiver = node.value.value if data is None else data.value
    if data is not None:
        for conversion in reversed(_conversions(node.value)):
            receiver = cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name(conversion)))
    return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("item")), lpar=node.lpar, rpar=node.rpar)
