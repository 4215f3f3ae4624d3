"""TL111: legacy autograd Functions (non-static forward/backward, instantiated and called)."""

import ast
from typing import Iterator

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Names, Outline, resolves_to
from torchlint.knowledge.torch_api import AUTOGRAD_FUNCTION_BASES
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting

_METHODS = ("forward", "backward")
_STATIC = {"staticmethod", "classmethod"}
_BASES = Names(AUTOGRAD_FUNCTION_BASES)


class LegacyAutogradFunction(Rule):
    code = "TL111"
    name = "legacy-autograd-function"
    summary = "autograd `Function`s with non-static `forward`/`backward`, or called as `MyFn()(x)`"
    why = (
        "Before torch 0.4 a custom `torch.autograd.Function` kept state on `self`, defined `forward` and "
        "`backward` as ordinary methods and was used by instantiating it: `MyFn()(x)`. That style is "
        "gone: calling an instance raises `RuntimeError: Legacy autograd function with non-static forward "
        "method is deprecated`, and instantiating one warns. A Function's `forward(ctx, ...)` and "
        "`backward(ctx, ...)` are `@staticmethod`s, state travels through `ctx` (`ctx.save_for_backward`, "
        "attributes on `ctx`), and the function is applied with `MyFn.apply(x)`."
    )
    fix_safety = FixSafety.NONE
    triggers = ("Function",)

    references = (
        "https://pytorch.org/docs/stable/notes/extending.html",
    )
    flagged = (
        Example(
            """
            import torch


            class MyReLU(torch.autograd.Function):
                def forward(self, x):
                    self.save_for_backward(x)
                    return x.clamp(min=0)

                def backward(self, grad_output):
                    (x,) = self.saved_tensors
                    return grad_output * (x > 0).float()


            y = MyReLU()(torch.randn(3))
            """,
            count=3,
        ),
        Example(
            """
            from torch.autograd import Function


            class Scale(Function):
                @staticmethod
                def forward(ctx, x):
                    return x * 2

                @staticmethod
                def backward(ctx, grad):
                    return grad * 2


            class Base(Scale):
                pass


            fn = Base()  # instantiated; `fn(x)` raises
            """,
        ),
    )
    accepted = (
        """
        import torch


        class MyReLU(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.clamp(min=0)

            @staticmethod
            def backward(ctx, grad_output):
                (x,) = ctx.saved_tensors
                return grad_output * (x > 0).float()


        y = MyReLU.apply(torch.randn(3))
        """,
        """
        import torch.nn as nn


        class Net(nn.Module):
            def forward(self, x):
                return x


        y = Net()(1)
        """,
        """
        from sympy import Function


        class f(Function):
            def forward(self, x):
                return x


        g = f()(1)
        """,
        """
        from mylib import CustomFunction  # unknown class: not flagged
        y = CustomFunction()(1)
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A Function class: one deriving from torch's Function through an import,
        # or from such a class of the file by its name. Findings are such a
        # class defining forward/backward without @staticmethod/@classmethod,
        # or a call of one by its name.
        classes = outline.nodes(ast.ClassDef)
        functions = set()
        pending = list(classes)
        while pending:
            found = [
                c for c in pending
                if any(_is_function_base(outline, base, functions) for base in c.bases)
            ]
            if not found:
                break
            functions.update(c.name for c in found)
            pending = [c for c in pending if c.name not in functions]
        if not functions:
            return False
        for classdef in classes:
            if classdef.name not in functions:
                continue
            for statement in classdef.body:
                if (
                    isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and statement.name in _METHODS
                    and not any(isinstance(d, ast.Name) and d.id in _STATIC for d in statement.decorator_list)
                ):
                    return True
        return any(isinstance(call.func, ast.Name) for call in outline.calls(*functions))

    def check_ClassDef(self, node: cst.ClassDef, ctx: NodeContext) -> Iterator[Finding]:
        if not any(_defines(node, name) for name in _METHODS):
            return
        if not ctx.inference.is_autograd_function_class(node):
            return
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        for statement in body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value in _METHODS:
                decorators = {cst.helpers.get_full_name_for_node(d.decorator) for d in statement.decorators}
                if not decorators & _STATIC:
                    method, cls = statement.name.value, node.name.value
                    yield Finding(
                        statement,
                        fitting(f"`{cls}.{method}` is not a @staticmethod (legacy autograd Function style)",
                                f"`{method}` is not a @staticmethod (legacy autograd Function style)"),
                        detail=f"define `@staticmethod {method}(ctx, ...)` and call `{cls}.apply(...)`",
                    )

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        classdef = ctx.inference.local_class(node.func)
        if classdef is None or not ctx.inference.is_autograd_function_class(classdef):
            return
        name = classdef.name.value
        yield Finding(
            node,
            fitting(f"autograd Function `{name}` is instantiated (legacy style); use `{name}.apply(...)`",
                    "autograd Function instantiated (legacy style); call its `.apply(...)`"),
            detail="calling the instance raises RuntimeError in current torch",
        )


def _is_function_base(outline: Outline, base: ast.AST, functions: set) -> bool:
    if isinstance(base, ast.Starred):
        base = base.value
    return (isinstance(base, ast.Name) and base.id in functions) or resolves_to(outline, base, _BASES)


def _defines(classdef: cst.ClassDef, name: str) -> bool:
    body = classdef.body.body if isinstance(classdef.body, cst.IndentedBlock) else ()
    return any(isinstance(s, cst.FunctionDef) and s.name.value == name for s in body)
