"""TL116: keywords torch renamed and no longer accepts (`loss.backward(retain_variables=True)`)."""

from typing import Dict, Iterator, Optional

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Outline, keyword_arguments
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.torch_api import KEYWORDS_NOW_POSITIONAL, REMOVED_KEYWORDS
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting

_TENSOR_METHOD = "torch.Tensor."
_ALL_KEYWORDS = frozenset(
    [k for renames in REMOVED_KEYWORDS.values() for k in renames]
    + [k for keywords in KEYWORDS_NOW_POSITIONAL.values() for k in keywords]
)


class RemovedKeyword(Rule):
    code = "TL116"
    name = "removed-keyword"
    summary = (
        "Keywords torch renamed or made positional and no longer accepts: `loss.backward(retain_variables=)`, "
        "`TensorDataset(data_tensor=, target_tensor=)`"
    )
    why = (
        "Early torch called `retain_graph` of `Tensor.backward` and `torch.autograd.backward` "
        "`retain_variables`. The old name was kept as a deprecated alias for a while and is gone today: "
        "`loss.backward(retain_variables=True)` raises `TypeError: backward() got an unexpected keyword "
        "argument 'retain_variables'`. The new keyword means the same thing: keep the graph so that "
        "`backward` can be called through it again. Likewise `TensorDataset(data_tensor=x, "
        "target_tensor=y)` became `TensorDataset(*tensors)` in torch 0.4 and rejects the keywords."
    )
    fix_safety = FixSafety.SAFE
    fix_description = (
        "Renames the keyword (`retain_variables=` -> `retain_graph=`), unless the new one is passed too; "
        "`TensorDataset(data_tensor=x, target_tensor=y)` becomes `TensorDataset(x, y)` when no other "
        "argument is passed. The method form is checked only on values known to be tensors."
    )
    triggers = tuple(_ALL_KEYWORDS)
    references = (
        "https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html",
        "https://pytorch.org/docs/stable/generated/torch.autograd.backward.html",
    )

    flagged = (
        Example(
            """
            import torch
            x = torch.arange(3.0, requires_grad=True)
            loss = (x * x).sum()
            loss.backward(retain_variables=True)
            loss.backward()
            grad = x.grad
            """,
            """
            import torch
            x = torch.arange(3.0, requires_grad=True)
            loss = (x * x).sum()
            loss.backward(retain_graph=True)
            loss.backward()
            grad = x.grad
            """,
            runnable=True,
            raises="TypeError",
        ),
        Example(
            """
            import torch
            from torch import autograd
            x = torch.ones(2, requires_grad=True)
            y = (x * 3).sum()
            autograd.backward([y], retain_variables=True)
            grad = x.grad
            """,
            """
            import torch
            from torch import autograd
            x = torch.ones(2, requires_grad=True)
            y = (x * 3).sum()
            autograd.backward([y], retain_graph=True)
            grad = x.grad
            """,
            runnable=True,
            raises="TypeError",
        ),
        Example(
            """
            import torch
            from torch.utils.data import TensorDataset
            inputs, labels = torch.randn(4, 3), torch.tensor([0, 1, 1, 0])
            dataset = TensorDataset(data_tensor=inputs, target_tensor=labels)
            first = dataset[0]
            """,
            """
            import torch
            from torch.utils.data import TensorDataset
            inputs, labels = torch.randn(4, 3), torch.tensor([0, 1, 1, 0])
            dataset = TensorDataset(inputs, labels)
            first = dataset[0]
            """,
            runnable=True,
            raises="TypeError",
        ),
        Example(
            """
            import torch.utils.data as data
            dataset = data.TensorDataset(target_tensor=labels, data_tensor=inputs)
            """,
            """
            import torch.utils.data as data
            dataset = data.TensorDataset(inputs, labels)
            """,
        ),
    )
    accepted = (
        """
        import torch
        x = torch.ones(2, requires_grad=True)
        (x * 2).sum().backward(retain_graph=True)
        """,
        """
        class Trainer:
            def backward(self, retain_variables=False):
                return retain_variables
        Trainer().backward(retain_variables=True)  # not a tensor
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        return not _ALL_KEYWORDS.isdisjoint(keyword_arguments(outline))

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        given = {arg.keyword.value: arg for arg in node.args if arg.keyword is not None}
        if not _ALL_KEYWORDS & given.keys():
            return
        positional = KEYWORDS_NOW_POSITIONAL.get(ctx.resolver.resolve(node.func) or "")
        if positional:
            yield from _now_positional(node, positional, given)
            return
        renames = _renames_of(node, ctx)
        if not renames:
            return
        callee = edits.expression_code(node.func)
        for old, new in renames.items():
            arg = given.get(old)
            if arg is None:
                continue
            fix = None if new in given else Fix([Edit(arg, _rename_keyword(new))])
            yield Finding(arg, fitting(f"`{callee}()` no longer takes `{old}=` (TypeError); use `{new}=`",
                                       f"`{old}=` is gone (TypeError); use `{new}=`"), fix)


def _now_positional(call: cst.Call, order, given) -> Iterator[Finding]:
    """``TensorDataset(data_tensor=x, target_tensor=y)`` -> ``TensorDataset(x, y)``."""
    used = [k for k in order if k in given]
    callee = edits.expression_code(call.func)
    written = [a.keyword.value for a in call.args if a.keyword is not None]
    # Exact when they are all there is, stand for the first positions, and
    # either keep their order or are plain names (no evaluation order to keep).
    exact = (len(call.args) == len(used) and used == list(order[:len(used)])
             and (written == used or all(isinstance(given[k].value, (cst.Name, cst.Attribute)) for k in used)))
    fix = None
    if exact:
        def apply(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, cst.Call)
            by_keyword = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
            return edits.set_args(node, [cst.Arg(value=by_keyword[k]) for k in used])

        fix = Fix([Edit(call, apply)])
    keywords = ", ".join(f"`{k}=`" for k in used)
    yield Finding(call, fitting(f"`{callee}()` takes its tensors by position since torch 0.4 (TypeError)",
                                "`TensorDataset()` takes its tensors by position since torch 0.4 (TypeError)"),
                  fix, detail=f"pass them in order instead of {keywords}")


def _renames_of(call: cst.Call, ctx: NodeContext) -> Optional[Dict[str, str]]:
    """The removed keywords of ``call``'s callee: a torch function, or a method of a known tensor."""
    qualified = ctx.resolver.resolve(call.func)
    if qualified in REMOVED_KEYWORDS:
        return REMOVED_KEYWORDS[qualified]
    func = call.func
    if isinstance(func, cst.Attribute) and ctx.inference.is_tensor(func.value):
        return REMOVED_KEYWORDS.get(_TENSOR_METHOD + func.attr.value)
    return None


def _rename_keyword(new: str):
    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Arg) and node.keyword is not None
        return node.with_changes(keyword=node.keyword.with_changes(value=new))

    return apply
