"""TL111: legacy autograd Functions (non-static forward/backward, instantiated and called)."""

import ast
from typing import Dict, Iterator, List, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Names, Outline, aliases_of, callee_name, dotted, resolves_to
from torchlint.core.census import CALLED_RESULT
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.torch_api import AUTOGRAD_FUNCTION_BASES, is_torch_name
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting

_METHODS = ("forward", "backward")
_STATIC = {"staticmethod", "classmethod"}
_BASES = Names(AUTOGRAD_FUNCTION_BASES)


class LegacyAutogradFunction(Rule):
    code = "TL111"
    gathers = ("Name", "Assign")  # where the file instantiates and calls a legacy Function
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
    fix_safety = FixSafety.SOMETIMES
    fix_description = (
        "Rewrites the class to the static form when its body allows it: `forward` and `backward` become "
        "`@staticmethod`s whose first parameter is `ctx` (every `self.` becomes `ctx.`: "
        "`ctx.save_for_backward`, `ctx.saved_tensors`, attributes kept between the passes), and every "
        "`MyFn()(x)` in the file becomes `MyFn.apply(x)`, all in one fix. Only when the class holds "
        "nothing but `forward`/`backward` (and a docstring), `self` is used only as `self.<attribute>`, and "
        "the class's name is used only in `MyFn()(...)` calls or `fn = MyFn()` with `fn` only ever called "
        "(it becomes `fn = MyFn.apply`): state from an `__init__`, an instance used otherwise or a "
        "subclass need a hand rewrite, so they are flagged only. The "
        "legacy form raises on current torch, so the rewrite cannot break working code. An instance of a "
        "Function class another module of the project defines, called at once (`RoIPool(7, 7)(x, rois)`), "
        "is flagged where it is called, without a fix: `.apply` fits there only once that module's class "
        "is rewritten."
    )
    triggers = ("Function",)
    whole_file = True  # whether the fix is exact depends on every use of the class in the file

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
            count=3,
        ),
        Example(
            """
            import torch
            from torch.autograd import Function


            class ScaleGrad(Function):
                \"\"\"Identity forward, scaled gradient.\"\"\"
                def forward(self, x, scale):
                    self.scale = scale
                    return x.clone()

                def backward(self, grad):
                    return grad * self.scale, None


            x = torch.ones(3, requires_grad=True)
            y = ScaleGrad()(x, 0.5)
            y.sum().backward()
            g = x.grad
            """,
            """
            import torch
            from torch.autograd import Function


            class ScaleGrad(Function):
                \"\"\"Identity forward, scaled gradient.\"\"\"
                @staticmethod
                def forward(ctx, x, scale):
                    ctx.scale = scale
                    return x.clone()

                @staticmethod
                def backward(ctx, grad):
                    return grad * ctx.scale, None


            x = torch.ones(3, requires_grad=True)
            y = ScaleGrad.apply(x, 0.5)
            y.sum().backward()
            g = x.grad
            """,
            count=3,
            runnable=True,
            raises="RuntimeError",
        ),
        Example(
            """
            import torch


            class Square(torch.autograd.Function):
                def forward(self, x):
                    self.save_for_backward(x)
                    return x * x

                def backward(self, grad):
                    (x,) = self.saved_tensors
                    return 2 * x * grad


            w = torch.ones(3, requires_grad=True)
            for step in range(2):
                square = Square()
                square(w).sum().backward()
            g = w.grad
            """,
            """
            import torch


            class Square(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    ctx.save_for_backward(x)
                    return x * x

                @staticmethod
                def backward(ctx, grad):
                    (x,) = ctx.saved_tensors
                    return 2 * x * grad


            w = torch.ones(3, requires_grad=True)
            for step in range(2):
                square = Square.apply
                square(w).sum().backward()
            g = w.grad
            """,
            count=3,
            runnable=True,
            raises="RuntimeError",
        ),
        Example(
            """
            from torch.autograd import Function


            class Clip(Function):
                def __init__(self, limit):
                    self.limit = limit  # state from the constructor: flagged only

                def forward(self, x):
                    return x.clamp(-self.limit, self.limit)


            y = Clip(1.0)(x)
            """,
            count=2,
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
            return _calls_imported_function_instance(outline)
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
        return (any(isinstance(call.func, ast.Name) for call in outline.calls(*functions))
                or _calls_imported_function_instance(outline))

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
                        fix=_class_fix(node, ctx),
                    )

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        classdef = ctx.inference.local_class(node.func)
        if classdef is not None and ctx.inference.is_autograd_function_class(classdef):
            name, fix = classdef.name.value, _class_fix(classdef, ctx)
        elif (isinstance(node.func, (cst.Name, cst.Attribute)) and ctx.file.call_of(node) is not None
              and ctx.inference.imported_function_class(node.func)):
            # ``RoIPool(7, 7)(features, rois)`` with the class from another module of
            # the project: its rewrite is made there; this call is rewritten by hand
            # (``.apply`` fits only once the class is static).
            name, fix = edits.expression_code(node.func), None
        else:
            return
        yield Finding(
            node,
            fitting(f"autograd Function `{name}` is instantiated (legacy style); use `{name}.apply(...)`",
                    "autograd Function instantiated (legacy style); call its `.apply(...)`"),
            detail="calling the instance raises RuntimeError in current torch",
            fix=fix,
        )


_CTX = "ctx"


def _calls_imported_function_instance(outline: Outline) -> bool:
    """``RoIPool(7, 7)(x, rois)``: an instance of a class imported from a project
    module that the project model knows to define it as an autograd Function."""
    ask = outline.function_classes
    called = [call.func for call in outline.calls(CALLED_RESULT)]
    if ask is None or not called:
        return False
    imported: Dict[str, List[Tuple[str, str]]] = {}
    for module, name, bound in outline.imported():
        imported.setdefault(bound, []).append((module, name))
    for instance in called:
        spelled = dotted(instance.func)
        if spelled is None:
            continue
        root, dot, rest = spelled.partition(".")
        for module, name in imported.get(root, ()):
            if name:  # from module import name
                full = f"{module}.{name}{dot}{rest}"
            else:  # import a.b (binding a: the chain spells the module) / import a.b as c
                full = spelled if module.split(".")[0] == root else f"{module}{dot}{rest}"
            owner, _, cls = full.rpartition(".")
            if owner.strip(".") and not is_torch_name(owner) and cls in ask(owner):
                return True
    return False


def _class_fix(classdef: cst.ClassDef, ctx: NodeContext) -> Optional[Fix]:
    """One fix for the whole class and its calls (see ``fix_description``), shared
    by its findings so that it applies all at once; None when not exact."""
    return ctx.file.memo(("TL111", classdef), lambda: _build_class_fix(classdef, ctx))


def _build_class_fix(classdef: cst.ClassDef, ctx: NodeContext) -> Optional[Fix]:
    body = classdef.body.body if isinstance(classdef.body, cst.IndentedBlock) else ()
    edit_list: List[Edit] = []
    for index, statement in enumerate(body):
        if isinstance(statement, cst.FunctionDef) and statement.name.value in _METHODS:
            decorators = {cst.helpers.get_full_name_for_node(d.decorator) for d in statement.decorators}
            if decorators & _STATIC:
                continue
            if statement.decorators or statement.asynchronous:
                return None
            first = _first_parameter(statement)
            if first is None or not _uses_only_attributes(statement, first):
                return None
            edit_list.append(Edit(statement, _to_static(first)))
        elif not (index == 0 and _is_docstring(statement)):
            return None  # __init__, other methods, class attributes: state the rewrite cannot move
    calls = _instance_calls(classdef, ctx)
    if calls is None:
        return None
    edit_list.extend(Edit(call, _to_apply) for call in calls)
    return Fix(edit_list) if edit_list else None


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _first_parameter(function: cst.FunctionDef) -> Optional[str]:
    params = function.params
    ordered = [*params.posonly_params, *params.params]
    if not ordered or ordered[0].default is not None:
        return None
    return ordered[0].name.value


class _Uses(cst.CSTVisitor):
    """Every ``Name`` of a function, and which of them are the receiver of an attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.names: List[cst.Name] = []
        self.receivers: set = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name):
            self.receivers.add(id(node.value))


def _uses_only_attributes(function: cst.FunctionDef, first: str) -> bool:
    """``self`` only as ``self.<attribute>`` in the body, and no other ``ctx`` to collide with."""
    uses = _Uses()
    function.body.visit(uses)
    for name in uses.names:
        if name.value == _CTX and first != _CTX:
            return False
        if name.value == first and id(name) not in uses.receivers:
            return False
    return True


def _instance_calls(classdef: cst.ClassDef, ctx: NodeContext) -> Optional[List[cst.Call]]:
    """The instantiations to rewrite: ``Cls()(...)`` calls, and ``Cls()`` in
    ``fn = Cls()`` where ``fn`` is only ever called; None if the class's name
    is used any other way."""
    assigned = _assigned_values(ctx)
    calls: List[cst.Call] = []
    names: List[cst.Name] = ctx.file.nodes(cst.Name)  # type: ignore[assignment]
    for name in names:
        if name.value != classdef.name.value or name is classdef.name:
            continue
        made = ctx.file.call_of(name)
        if made is None or made.args:
            return None
        called = ctx.file.call_of(made)
        if called is not None:
            calls.append(called)
        elif made in assigned and _only_called(assigned[made], names, ctx):
            calls.append(made)
        else:
            return None
    return calls


def _assigned_values(ctx: NodeContext) -> "dict":
    """Value node -> the one ``Name`` it is assigned to (``fn = Cls()``), for the file."""
    def compute() -> dict:
        found: dict = {}
        for node in ctx.file.nodes(cst.Assign):
            if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):  # type: ignore[attr-defined]
                found[node.value] = node.targets[0].target  # type: ignore[attr-defined]
        return found

    return ctx.file.memo(("TL111", "assigned"), compute)


def _only_called(target: cst.Name, names: List[cst.Name], ctx: NodeContext) -> bool:
    """Is every other occurrence of ``target``'s name in the file (``names``) a call of it (``fn(x)``)?"""
    return all(ctx.file.call_of(n) is not None for n in names if n.value == target.value and n is not target)


def _to_static(first: str):
    class Rename(cst.CSTTransformer):
        def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
            return updated_node.with_changes(value=_CTX) if updated_node.value == first else updated_node

    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef)
        renamed = node.with_changes(params=node.params.visit(Rename()), body=node.body.visit(Rename()))
        return renamed.with_changes(decorators=[cst.Decorator(decorator=cst.Name("staticmethod"))])

    return apply


def _to_apply(node: cst.CSTNode) -> cst.CSTNode:
    """``Cls()(x)`` -> ``Cls.apply(x)``; ``Cls()`` (an instance only called) -> ``Cls.apply``."""
    assert isinstance(node, cst.Call)
    if isinstance(node.func, cst.Call):
        return node.with_changes(func=cst.Attribute(value=node.func.func, attr=cst.Name("apply")))
    return cst.Attribute(value=node.func, attr=cst.Name("apply"), lpar=node.lpar, rpar=node.rpar)


def _is_function_base(outline: Outline, base: ast.AST, functions: set) -> bool:
    if isinstance(base, ast.Starred):
        base = base.value
    if isinstance(base, ast.Name) and base.id in functions:
        return True
    # Only a name spelled like a base class (or bound to one) can resolve to it.
    spelled = callee_name(base)
    return spelled is not None and (spelled in _BASES.last or spelled in aliases_of(outline, _BASES)) and resolves_to(
        outline, base, _BASES)


def _defines(classdef: cst.ClassDef, name: str) -> bool:
    body = classdef.body.body if isinstance(classdef.body, cst.IndentedBlock) else ()
    return any(isinstance(s, cst.FunctionDef) and s.name.value == name for s in body)
