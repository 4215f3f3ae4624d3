"""TL303 (opt-in): `zero_grad(set_to_none=False)` writes zeros into every gradient."""

from __future__ import annotations

import ast
from typing import Iterator, Optional

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Outline, is_literal
from torchlint.core.diagnostic import Edit, Fix
from torchlint.core.settings import parse_version, versions
from torchlint.knowledge.torch_api import ZERO_GRAD_SET_TO_NONE_SINCE
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting

# From torch 2.0, set_to_none=True is the default: the argument can simply go.
DEFAULT_TRUE_SINCE = parse_version("2.0")


class ZeroGradSetToNoneFalse(Rule):
    code = "TL303"
    name = "zero-grad-set-to-none-false"
    summary = "`optimizer.zero_grad(set_to_none=False)` fills every gradient with zeros instead of freeing it (opt-in)"
    why = (
        "`zero_grad(set_to_none=False)` runs a fill kernel on every parameter's `.grad` and keeps the memory "
        "allocated between steps; with `set_to_none=True` (the default since torch 2.0) the gradients are "
        "simply dropped, and the next `backward()` writes them instead of adding to zeros. The PyTorch "
        "profiler reports this as its \"gradient set to zero instead of None\" pattern (TorchFix's TOR402). "
        "The rule is opt-in because zeros are sometimes wanted: code that reads `.grad` after `zero_grad()` "
        "(gradient logging, custom optimizers doing `p.grad.add_(...)`) fails on None, and an optimizer step "
        "treats a None gradient as \"skip this parameter\" where a zero gradient still applies momentum and "
        "weight decay. Applies to `zero_grad` of a known `nn.Module` or of anything in a file that imports "
        "torch (the method and keyword are torch's)."
    )
    fix_safety = FixSafety.UNSAFE
    fix_description = (
        "Drops the argument (`zero_grad()`), or writes `set_to_none=True` when `--torch-version` is older than "
        "2.0, where the default was still False. Unsafe: afterwards `.grad` is None until the next backward "
        "pass, and parameters without a gradient are skipped by the optimizer step."
    )
    triggers = ("zero_grad",)
    enabled_by_default = False
    torch_versions = versions(since=ZERO_GRAD_SET_TO_NONE_SINCE)
    references = ("https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html",)

    flagged = (
        Example(
            """
            import torch
            w = torch.nn.Parameter(torch.ones(3))
            optimizer = torch.optim.SGD([w], lr=0.1)
            (w * w).sum().backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=False)
            weights = w.detach().clone()
            """,
            """
            import torch
            w = torch.nn.Parameter(torch.ones(3))
            optimizer = torch.optim.SGD([w], lr=0.1)
            (w * w).sum().backward()
            optimizer.step()
            optimizer.zero_grad()
            weights = w.detach().clone()
            """,
            runnable=True,
        ),
        Example(
            """
            import torch.nn as nn
            model = nn.Linear(4, 2)
            model.zero_grad(False)
            self.optimizer.zero_grad(set_to_none=False)
            """,
            """
            import torch.nn as nn
            model = nn.Linear(4, 2)
            model.zero_grad()
            self.optimizer.zero_grad()
            """,
            count=2,
        ),
    )
    accepted = (
        """
        import torch
        optimizer.zero_grad()
        optimizer.zero_grad(set_to_none=True)
        model.zero_grad(set_to_none=flag)
        """,
        """
        class Tape:
            def zero_grad(self, set_to_none=True):
                pass
        Tape().zero_grad(set_to_none=False)  # no torch in this file
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # ``<x>.zero_grad(False)`` / ``<x>.zero_grad(set_to_none=False)``.
        for call in outline.calls("zero_grad"):
            if not isinstance(call.func, ast.Attribute) or len(call.args) + len(call.keywords) != 1:
                continue
            if call.args:
                value = call.args[0]
            elif call.keywords[0].arg == "set_to_none":
                value = call.keywords[0].value
            else:
                continue
            if is_literal(value, False):
                return True
        return False

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "zero_grad" or len(node.args) != 1:
            return
        arg = node.args[0]
        if arg.star or (arg.keyword is not None and arg.keyword.value != "set_to_none"):
            return
        if not (isinstance(arg.value, cst.Name) and arg.value.value == "False"):
            return
        if not (ctx.inference.is_module(func.value) or ctx.resolver.imports("torch")):
            return
        receiver = edits.expression_code(func.value)
        yield Finding(
            node,
            fitting(f"`{receiver}.zero_grad({edits.expression_code(arg).rstrip(', ')})` fills gradients with zeros; "
                    "use `zero_grad()`",
                    "`zero_grad(set_to_none=False)` fills gradients with zeros; use `zero_grad()`"),
            Fix([Edit(node, _fix(ctx.file.settings.torch_version))], safe=False),
            detail="letting it set them to None is faster, unless code reads `.grad` afterwards",
        )


def _fix(oldest: Optional[tuple]):
    def apply(call: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(call, cst.Call)
        if oldest is None or oldest >= DEFAULT_TRUE_SINCE:
            return call.with_changes(args=[])
        return call.with_changes(args=[edits.keyword_arg("set_to_none", "True")])

    return apply
