"""TL106: size_average= / reduce= / reduction='elementwise_mean' on losses."""

import ast
import re
from typing import Iterator, List, Optional, Sequence, Tuple

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import (
    Names,
    Outline,
    calls_to,
    is_none,
    qualified_names,
)
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.torch_api import LOSS_PARAMS, legacy_reduction
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule

LEGACY = ("size_average", "reduce")
_LOSSES = Names(LOSS_PARAMS)
_LOSS_NAMES = "|".join(sorted(_LOSSES.last))


def _may_pass_legacy(call: ast.Call) -> bool:
    """Can this call pass a legacy argument: has it positional ones, or a
    keyword ``may_match_tree`` looks at? (Most loss constructions pass none.)"""
    return bool(call.args) or any(k.arg in LEGACY or k.arg == "reduction" for k in call.keywords)


class LegacyLossReduction(Rule):
    code = "TL106"
    name = "legacy-loss-reduction"
    summary = "`size_average=` / `reduce=` on losses are deprecated; use `reduction=`"
    why = (
        "Loss modules and functions replaced `size_average` and `reduce` with one `reduction` argument in "
        "torch 0.4.1; the old ones still work but warn on every construction, and when either is given "
        "torch silently ignores an explicit `reduction=`. `reduction='elementwise_mean'` was an early "
        "spelling of `'mean'`. Positional legacy arguments (`CrossEntropyLoss(w, False)`) count too."
    )
    fix_safety = FixSafety.SOMETIMES
    fix_description = (
        "Computes `reduction=` with torch's own legacy table (None counts as True; `reduce=False` gives "
        "'none', else `size_average=False` gives 'sum', else 'mean'), removes the legacy arguments, turns "
        "positional arguments after them into keywords, and replaces an explicit `reduction=` that torch "
        "was ignoring. Only literal True/False/None values are fixed; anything else is flagged only."
    )
    # Positional legacy arguments leave no keyword to spot: the loss names do
    # (a call of a loss with arguments, or a loss imported under another name).
    triggers = (
        "size_average", "reduce", "elementwise_mean",
        re.compile(rf"\b(?:{_LOSS_NAMES})\s*\(\s*[^\s)]"), re.compile(rf"\b(?:{_LOSS_NAMES})\s+as\b"),
    )

    references = (
        "https://pytorch.org/docs/stable/generated/torch.nn.MSELoss.html",
    )
    flagged = (
        Example(
            """
            import torch
            import torch.nn as nn
            out, y = torch.arange(6.0), torch.zeros(6)
            loss = nn.MSELoss(size_average=False)(out, y)
            """,
            """
            import torch
            import torch.nn as nn
            out, y = torch.arange(6.0), torch.zeros(6)
            loss = nn.MSELoss(reduction='sum')(out, y)
            """,
            runnable=True,
        ),
        Example(
            """
            import torch
            import torch.nn.functional as F
            logits, target = torch.randn(4, 3), torch.tensor([0, 2, 1, 0])
            per_item = F.cross_entropy(logits, target, reduce=False)
            mean = F.nll_loss(logits.log_softmax(1), target, reduction="elementwise_mean")
            """,
            """
            import torch
            import torch.nn.functional as F
            logits, target = torch.randn(4, 3), torch.tensor([0, 2, 1, 0])
            per_item = F.cross_entropy(logits, target, reduction='none')
            mean = F.nll_loss(logits.log_softmax(1), target, reduction="mean")
            """,
            count=2,
            runnable=True,
        ),
        Example(
            """
            import torch
            from torch.nn import CrossEntropyLoss
            weight = torch.tensor([1.0, 2.0, 3.0])
            logits, target = torch.randn(4, 3), torch.tensor([0, 2, 1, 0])
            loss = CrossEntropyLoss(weight, False, 1)(logits, target)
            """,
            """
            import torch
            from torch.nn import CrossEntropyLoss
            weight = torch.tensor([1.0, 2.0, 3.0])
            logits, target = torch.randn(4, 3), torch.tensor([0, 2, 1, 0])
            loss = CrossEntropyLoss(weight, ignore_index=1, reduction='sum')(logits, target)
            """,
            runnable=True,
        ),
        Example(
            """
            import torch
            import torch.nn as nn
            out, y = torch.arange(6.0), torch.zeros(6)
            loss = nn.L1Loss(size_average=False, reduction="none")(out, y)
            """,
            """
            import torch
            import torch.nn as nn
            out, y = torch.arange(6.0), torch.zeros(6)
            loss = nn.L1Loss(reduction='sum')(out, y)
            """,
            runnable=True,
        ),
        Example(
            """
            import torch.nn as nn
            criterion = nn.BCELoss(size_average=args.average)  # not a literal: no fix
            """,
        ),
    )
    accepted = (
        """
        import torch.nn as nn
        import torch.nn.functional as F
        # Both legacy arguments None: torch's defaults, no warning, reduction= is honoured.
        criterion = nn.MSELoss(size_average=None, reduce=None, reduction="sum")
        per_item = F.mse_loss(p, t, size_average=None, reduce=None, reduction="none")
        """,
        """
        import torch.nn as nn
        criterion = nn.CrossEntropyLoss(reduction="sum")
        """,
        """
        from functools import reduce
        total = reduce(lambda a, b: a + b, [1, 2, 3])
        """,
        """
        def my_loss(x, y, size_average=True):
            return x
        value = my_loss(1, 2, size_average=False)
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A call of a loss (through an import) passing a legacy argument that
        # is not a literal None (by keyword, or by position up to the first
        # ``*args``), or ``reduction="elementwise_mean"``.
        for call in calls_to(outline, _LOSSES, where=_may_pass_legacy):
            for keyword in call.keywords:
                if keyword.arg in LEGACY and not is_none(keyword.value):
                    return True
                if keyword.arg == "reduction" and _is_string(keyword.value, "elementwise_mean"):
                    return True
            if call.args:
                for qualified in qualified_names(outline, call.func):
                    params = LOSS_PARAMS.get(qualified, ())
                    for index, arg in enumerate(call.args[: len(params)]):
                        if isinstance(arg, ast.Starred):
                            break
                        if params[index] in LEGACY and not is_none(arg):
                            return True
        return False

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        if not node.args:
            return
        callee = ctx.resolver.resolve(node.func)
        params = LOSS_PARAMS.get(callee) if callee else None
        if params is None:
            return
        # Both legacy arguments None is torch's own default: it takes the
        # ``reduction`` path, warns nothing, and honours ``reduction=``.
        legacy = [(name, arg) for name, arg in _legacy_arguments(node, params)
                  if edits.literal_value(arg.value) != (True, None)]
        reduction = edits.keyword(node, "reduction")
        if legacy:
            first = legacy[0][1]
            names = " and ".join(dict.fromkeys(name for name, _ in legacy))
            message = f"`{names}` {'is' if len(legacy) == 1 else 'are'} deprecated; use `reduction=`"
            detail = "torch ignores the explicit `reduction=` while these are given" if reduction is not None else ""
            yield Finding(first, message, _legacy_fix(node, params, legacy), detail=detail)
        elif reduction is not None and edits.literal_value(reduction.value) == (True, "elementwise_mean"):
            yield Finding(
                reduction,
                "`reduction='elementwise_mean'` is deprecated; use `reduction='mean'`",
                Fix([Edit(reduction.value, _requote("mean"))]),
            )


def _is_string(node: ast.AST, text: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == text


def _legacy_arguments(call: cst.Call, params: Sequence[str]) -> List[Tuple[str, cst.Arg]]:
    """(parameter name, argument) for every size_average/reduce argument, in call order."""
    found = []
    for index, arg in enumerate(call.args):
        if arg.star:
            break
        name = arg.keyword.value if arg.keyword is not None else (params[index] if index < len(params) else None)
        if name in LEGACY:
            found.append((name, arg))
    return found


def _legacy_fix(call: cst.Call, params: Sequence[str], legacy: List[Tuple[str, cst.Arg]]) -> Optional[Fix]:
    if edits.has_star_args(call):
        return None
    values = {}
    for name, arg in legacy:
        known, value = edits.literal_value(arg.value)
        if not known or value not in (True, False, None):
            return None
        values[name] = value
    reduction = legacy_reduction(values.get("size_average"), values.get("reduce"))
    return Fix([Edit(call, _rewrite_arguments(params, reduction))])


def _rewrite_arguments(params: Sequence[str], reduction: str):
    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        new_args: List[cst.Arg] = []
        positional = True
        for index, arg in enumerate(node.args):
            name = arg.keyword.value if arg.keyword is not None else params[index]
            if name in LEGACY or name == "reduction":
                positional = positional and arg.keyword is not None
                continue
            if arg.keyword is None and not positional:
                # An argument after a removed positional one must name itself.
                arg = arg.with_changes(keyword=cst.Name(name), equal=edits.keyword_arg(name, "0").equal)
            new_args.append(arg)
        new_args.append(edits.keyword_arg("reduction", repr(reduction)))
        return edits.set_args(node, new_args)

    return apply


def _requote(text: str):
    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.SimpleString)
        quote = node.quote
        return node.with_changes(value=f"{node.prefix}{quote}{text}{quote}")

    return apply
