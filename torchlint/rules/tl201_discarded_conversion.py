"""TL201: `x.cuda()` on a tensor as a statement: the result is thrown away."""

import ast
import re
from typing import Iterator

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Outline, any_of, may_be_tensor
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.torch_api import DISCARDED_RESULT_METHODS
from torchlint.rules.rule import Example, Finding, FixSafety, Rule

_ASSIGNABLE = (cst.Name, cst.Attribute, cst.Subscript)


class DiscardedTensorConversion(Rule):
    code = "TL201"
    name = "discarded-tensor-conversion"
    summary = "`x.cuda()` / `x.to(...)` / `x.float()` on a tensor does not change `x`; assign the result"
    why = (
        "`model.cuda()` moves a module in place, so `tensor.cuda()` looks like it should too; it does not. "
        "Tensor conversions (`cuda`, `cpu`, `to`, `float`, `half`, `long`, `detach`, `contiguous`, ...) "
        "return a new tensor and leave the original alone, so a bare call is a no-op and the code later "
        "fails with a device or dtype mismatch. Module receivers (instances of `torch.nn` classes, of your "
        "`nn.Module` subclasses, `self` inside them) are never flagged, and neither is a value whose kind is "
        "unknown."
    )
    fix_safety = FixSafety.UNSAFE
    fix_description = (
        "Assigns the result back: `x.cuda()` becomes `x = x.cuda()`. Unsafe because it changes behaviour, "
        "which is the point: later code sees the converted tensor."
    )
    # A statement that starts with ``<dotted name>[...].<conversion>(``.
    triggers = (
        re.compile(
            r"(?:^|;)[ \t]*[A-Za-z_][\w.]*(?:\[[^\]\n]*\])*\.(?:"
            + "|".join(sorted(DISCARDED_RESULT_METHODS))
            + r")\(",
            re.MULTILINE,
        ),
    )

    references = (
        "https://pytorch.org/docs/stable/generated/torch.Tensor.to.html",
    )
    flagged = (
        Example(
            """
            import torch
            tensor = torch.zeros([2, 3, 10, 10])
            tensor.cuda()
            """,
            """
            import torch
            tensor = torch.zeros([2, 3, 10, 10])
            tensor = tensor.cuda()
            """,
        ),
        Example(
            """
            import torch
            from torch.utils.data import DataLoader


            def train(dataset, device):
                loader = DataLoader(dataset, batch_size=8)
                for images, labels in loader:
                    images.to(device)
                    labels.long()
            """,
            """
            import torch
            from torch.utils.data import DataLoader


            def train(dataset, device):
                loader = DataLoader(dataset, batch_size=8)
                for images, labels in loader:
                    images = images.to(device)
                    labels = labels.long()
            """,
            count=2,
        ),
    )
    accepted = (
        """
        import torch.nn as nn
        model = nn.Linear(3, 4)
        model.cuda()
        """,
        """
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def setup(self):
                self.cuda()
                self.float()


        net = Net()
        net.cuda()
        """,
        """
        def prepare(x):
            x.cuda()  # x may be a module: unknown kind is not flagged
        """,
        """
        import torch
        x = torch.zeros(3)
        x = x.cuda()
        x.add_(1)
        """,
        """
        import torch


        def restore(path, device):
            # tsai: a pickled fastai loader; ``new(num_workers=0)`` is its copy (a tensor's
            # legacy ``new`` takes sizes, never this keyword), and its ``to`` moves it in place.
            dl = torch.load(path, map_location=device, weights_only=False)
            dl = dl.new(num_workers=0)
            dl.to(device)
            return dl
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        return any_of(cls.screen_candidates(outline))

    @classmethod
    def screen_candidates(cls, outline: Outline) -> Iterator[ast.AST]:
        # A statement ``receiver.<conversion>(...)`` whose receiver can be known to be a tensor.
        for statement in outline.nodes(ast.Expr):
            call = statement.value
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr in DISCARDED_RESULT_METHODS
                and may_be_tensor(outline, call.func.value)
            ):
                yield call

    def check_Expr(self, node: cst.Expr, ctx: NodeContext) -> Iterator[Finding]:
        call = node.value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
            return
        method = call.func.attr.value
        if method not in DISCARDED_RESULT_METHODS:
            return
        receiver = call.func.value
        if not ctx.inference.is_tensor(receiver):
            return
        fix = Fix([Edit(node, _assign_back)], safe=False) if isinstance(receiver, _ASSIGNABLE) else None
        yield Finding(
            call,
            f"`.{method}()` returns a new tensor and leaves the receiver unchanged; assign the result",
            fix,
        )


def _assign_back(node: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(node, cst.Expr) and isinstance(node.value, cst.Call)
    receiver = node.value.func.value
    return cst.Assign(
        targets=[cst.AssignTarget(target=receiver.deep_clone())],
        value=node.value,
        semicolon=node.semicolon,
    )
