"""TL215: `dot` / `vdot` on tensors known not to be 1-D (they flattened before torch 0.4; today they raise)."""

import ast
from typing import Iterator, Sequence

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Outline, may_know_ndim
from torchlint.analysis.shapes import ndim
from torchlint.core.diagnostic import Edit, Fix
from torchlint.rules.rule import Example, Finding, FixSafety, Rule

_NAMES = ("dot", "vdot")
_FUNCTIONS = frozenset({"torch.dot", "torch.vdot"})


class DotNotOneDimensional(Rule):
    code = "TL215"
    name = "dot-not-1d"
    summary = "`a.dot(b)` / `torch.vdot` on tensors that are not 1-D: they flattened before torch 0.4, today they raise"
    why = (
        "Before torch 0.4 `torch.dot` treated tensors of any shape with the same number of elements as "
        "flat vectors (the sum of the elementwise product). Since 0.4 `dot` and `vdot` take 1-D tensors "
        "only and raise `RuntimeError: 1D tensors expected, but got 2D and 2D tensors` otherwise. The rule "
        "fires when the file shows that an operand is not 1-D: made by a torch factory with two or more "
        "sizes (`torch.randn(3, 4)`), by `.view` / `.reshape` with two or more sizes, by a matrix "
        "product (`torch.mm`, `torch.outer`), or from a nested list (`torch.FloatTensor([[1, 2], [3, 4]])`), "
        "directly or through a name bound only to such values, or whose last binding before the call "
        "reaches it on every run (a tutorial that rebinds `tensor` from a 1-D to a 2-D tensor)."
    )
    fix_safety = FixSafety.UNSAFE
    fix_description = (
        "Flattens both operands: `a.dot(b)` becomes `a.reshape(-1).dot(b.reshape(-1))`, what torch before "
        "0.4 computed. Unsafe: the code may have meant a matrix product (`a @ b`) instead."
    )
    triggers = ("dot",)
    requires = ("torch",)
    references = ("https://pytorch.org/docs/stable/generated/torch.dot.html",)

    flagged = (
        Example(
            """
            import torch
            a = torch.ones(2, 3)
            b = torch.arange(6.0).view(2, 3)
            s = a.dot(b)
            t = torch.vdot(b, a)
            """,
            """
            import torch
            a = torch.ones(2, 3)
            b = torch.arange(6.0).view(2, 3)
            s = a.reshape(-1).dot(b.reshape(-1))
            t = torch.vdot(b.reshape(-1), a.reshape(-1))
            """,
            count=2,
            runnable=True,
            raises="RuntimeError",
        ),
        Example(
            """
            import numpy as np
            import torch
            data = [-1, -2, 1, 2]
            tensor = torch.FloatTensor(data)
            print(torch.mean(tensor))
            data = [[1, 2], [3, 4]]
            tensor = torch.FloatTensor(data)
            data = np.array(data)
            print(data.dot(data), tensor.dot(tensor))
            """,
            """
            import numpy as np
            import torch
            data = [-1, -2, 1, 2]
            tensor = torch.FloatTensor(data)
            print(torch.mean(tensor))
            data = [[1, 2], [3, 4]]
            tensor = torch.FloatTensor(data)
            data = np.array(data)
            print(data.dot(data), tensor.reshape(-1).dot(tensor.reshape(-1)))
            """,
            runnable=True,
            raises="RuntimeError",
        ),
    )
    accepted = (
        """
        import torch
        a, b = torch.ones(3), torch.arange(3.0)
        s = a.dot(b)
        t = torch.dot(torch.randn(4), torch.randn(4))
        """,
        """
        import torch
        def score(u, v):
            return u.dot(v)  # shapes unknown: not flagged
        """,
        """
        import torch
        v = torch.ones(4)
        print(v.dot(v))  # 1-D here: the 2-D binding comes later
        v = torch.ones(2, 2)
        for step in range(2):
            if step:
                print(v.dot(v))  # only a later turn gets here, after the 1-D binding below
            v = torch.ones(4)
        u = torch.ones(2, 2)
        if u.sum() > 0:
            u = torch.ones(4)
        print(u.dot(u))  # 2-D or 1-D, depending on the branch
        """,
        """
        import torch
        v = torch.tensor([1.0, -2.0])
        full = torch.full([2, 3], 1.0)  # sizes, not data: unknown here
        s = v.dot(v) + full.view(-1).dot(full.view(-1))
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # ``v.dot(w)``, ``torch.dot(v, w)``, ``dot(v, w)`` (the calls filed under those
        # names) with an operand whose number of dimensions ``ndim`` may know.
        for call in outline.calls(*_NAMES):
            operands = list(call.args)
            if isinstance(call.func, ast.Attribute):
                operands.append(call.func.value)
            if any(may_know_ndim(outline, operand) for operand in operands):
                return True
        return False

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        func = node.func
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if len(positional) != len(node.args):
            return
        if ctx.resolver.resolve(func) in _FUNCTIONS and len(positional) == 2:
            operands = [a.value for a in positional]
        elif isinstance(func, cst.Attribute) and func.attr.value in _NAMES and len(positional) == 1:
            operands = [func.value, positional[0].value]
        else:
            return
        dims = [ndim(o, ctx) for o in operands]
        if not any(d is not None and d >= 2 for d in dims):
            return
        name = "vdot" if "vdot" in cst.Module(body=[]).code_for_node(func) else "dot"
        yield Finding(node, f"`{name}` of a tensor that is not 1-D raises since torch 0.4 (it used to flatten)",
                      _fix(node, operands), detail="flatten the operands, or use a matrix product if that was meant")


def _flattened(node: cst.BaseExpression) -> cst.BaseExpression:
    if not isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not node.lpar:
        node = node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(func=cst.Attribute(value=node, attr=cst.Name("reshape")),
                    args=[cst.Arg(value=cst.UnaryOperation(operator=cst.Minus(), expression=cst.Integer("1")))])


def _fix(call: cst.Call, operands: Sequence[cst.BaseExpression]) -> Fix:
    return Fix([Edit(operand, _flattened) for operand in operands], safe=False)
