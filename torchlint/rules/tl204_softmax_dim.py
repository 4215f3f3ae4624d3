"""TL204: softmax, log_softmax and softmin without `dim`."""

import ast
from typing import Iterator

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import (
    Outline,
    attributes_named,
    calls_resolving_to,
    has_splat,
    keyword_value,
    resolved_names,
)
from torchlint.analysis.screens import CallWithout
from torchlint.knowledge.torch_api import IMPLICIT_DIM_CALLABLES
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting


class SoftmaxImplicitDim(Rule):
    code = "TL204"
    name = "softmax-implicit-dim"
    summary = "`F.softmax(x)` / `nn.Softmax()` without `dim` uses a legacy implicit dimension"
    why = (
        "`F.softmax`, `F.log_softmax`, `F.softmin` and the `nn.Softmax`, `nn.LogSoftmax`, `nn.Softmin` "
        "modules normalise along `dim`. Without it (or with `dim=None`) torch warns `Implicit dimension "
        "choice for softmax has been deprecated` and falls back to a legacy guess: dim 0 for 0-, 1- and "
        "3-dimensional input, dim 1 otherwise. For a batch of sequences `(batch, seq, classes)` that is "
        "the batch dimension, so the probabilities are silently wrong; for `(batch, classes)` it happens "
        "to be right but still warns on every call. A module stored on `self` that the file never reads "
        "back (`self.softmax = nn.Softmax()`, never applied) chooses no dimension and is not flagged."
    )
    fix_safety = FixSafety.NONE
    fix_description = (
        "None: the implicit dimension depends on the input's number of dimensions, which is not known "
        "statically. Pass the dimension you mean, usually `dim=-1` (the class dimension last)."
    )
    triggers = (CallWithout("softmax|log_softmax|softmin|Softmax|LogSoftmax|Softmin", "dim"),)
    references = ("https://pytorch.org/docs/stable/generated/torch.nn.functional.softmax.html",)

    flagged = (
        Example(
            """
            import torch
            import torch.nn.functional as F
            logits = torch.randn(8, 10)
            probs = F.softmax(logits)
            log_probs = F.log_softmax(logits, dim=None)
            """,
            count=2,
        ),
        Example(
            """
            import torch.nn as nn
            head = nn.Sequential(nn.Linear(128, 10), nn.LogSoftmax())
            """,
        ),
        Example(
            """
            import torch
            from torch.nn import Softmin
            from torch.nn.functional import softmax
            weights = softmax(scores, dtype=torch.float32)
            gate = Softmin()
            """,
            count=2,
        ),
    )
    accepted = (
        """
        import torch.nn as nn


        class Tiny(nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = nn.Linear(4, 2)
                self.softmax = nn.Softmax()  # built, never applied: no dimension is ever chosen

            def forward(self, x):
                return self.linear(x)
        """,
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        logits = torch.randn(8, 10)
        probs = F.softmax(logits, dim=-1)
        log_probs = F.log_softmax(logits, 1)
        head = nn.Sequential(nn.Linear(128, 10), nn.Softmax(dim=1), nn.LogSoftmax(-1))
        values = logits.softmax(-1)
        """,
        """
        import torch.nn.functional as F
        options = {"dim": -1}
        probs = F.softmax(logits, **options)  # dim may be in there: not flagged
        """,
        """
        from scipy.special import softmax
        probs = softmax(scores)
        """,
        """
        def softmax(x):
            return x
        probs = softmax([1.0, 2.0])
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A call of F.softmax/log_softmax/softmin or a Softmax-like constructor (however
        # imported), without ``*``/``**``, whose ``dim`` is missing or None.
        for call in calls_resolving_to(outline, IMPLICIT_DIM_CALLABLES):
            if has_splat(call):
                continue
            dim = keyword_value(call, "dim")
            if dim is not None:
                if _is_none(dim):
                    return True
                continue
            for name in resolved_names(outline, call.func):
                index = IMPLICIT_DIM_CALLABLES.get(name)
                if index is not None and (len(call.args) <= index or _is_none(call.args[index])):
                    return True
        return False

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        callee = ctx.resolver.resolve(node.func)
        index = IMPLICIT_DIM_CALLABLES.get(callee) if callee else None
        if index is None or edits.has_star_args(node):
            return
        if _passes_dim(node, index) or _never_applied(node, ctx):
            return
        spelled = edits.expression_code(node.func)
        yield Finding(
            node,
            fitting(f"`{spelled}()` without `dim`: torch picks a legacy implicit one; pass `dim=`",
                    "no `dim`: torch picks a legacy implicit one; pass `dim=`"),
            detail="torch warns and picks dimension 0 for 0-, 1- and 3-D input, else 1",
        )


def _never_applied(call: cst.Call, ctx: NodeContext) -> bool:
    """``self.softmax = nn.Softmax()`` where the file never reads ``.softmax``:
    the module is never applied, so no implicit dimension is ever chosen (the
    warning and the choice happen when it is called, not when it is built)."""
    line = ctx.file.line_holding(call)
    statement = line.body[0] if line is not None and len(line.body) == 1 else None
    if not (isinstance(statement, cst.Assign) and statement.value is call and len(statement.targets) == 1):
        return False
    target = statement.targets[0].target
    if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
        return False
    whole = ctx.resolver.file_outline()
    name = target.attr.value
    return all(isinstance(node.ctx, ast.Store) for node in attributes_named(whole, [name])) and not any(
        isinstance(node, ast.Constant) and node.value == name for node in whole.nodes(ast.Constant))


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _passes_dim(call: cst.Call, index: int) -> bool:
    dim = edits.keyword(call, "dim")
    if dim is None:
        positional = [arg for arg in call.args if arg.keyword is None]
        if len(positional) <= index:
            return False
        dim = positional[index]
    return not (isinstance(dim.value, cst.Name) and dim.value.value == "None")
