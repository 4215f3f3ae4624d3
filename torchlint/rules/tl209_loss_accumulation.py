"""TL209: `total_loss += loss` in a loop keeps every step's autograd graph alive."""

import ast
import re
from typing import Iterator, Optional

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.inference import Kind
from torchlint.analysis.outline import (
    Outline,
    callee_name,
    in_loop,
    iterated,
    loss_calls,
    may_be_tensor,
    may_resolve_to,
    names_where,
)
from torchlint.analysis.screens import Screen
from torchlint.core.diagnostic import Edit, Fix
from torchlint.core.settings import versions
from torchlint.knowledge.torch_api import (
    AUTOGRAD_FUNCTIONS,
    SIZE_METHODS,
)
from torchlint.rules._grad_mode import grad_disabled
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting

_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)



_ACCUMULATION = re.compile(r"\b(\w+)\s*(?:\+=|=\s*\1\s*\+)")


class _NumberAccumulator(Screen):
    """``total += x`` (or ``total = total + x``) where ``total`` is also bound to
    something that can be a Python number: a numeric literal or ``len()`` /
    ``float()`` / ``int()`` / a size query, as the rule's inference requires."""

    def search(self, source: str) -> bool:
        for name in {m.group(1) for m in _ACCUMULATION.finditer(source)}:
            start = re.compile(
                rf"\b{re.escape(name)}\s*(?::[^=\n]*)?=\s*(?:[-+(\s]*[\d.]|len\(|float\(|int\(|[\w.]+\.(?:size|numel|dim)\()"
            )
            if start.search(source):
                return True
        return False

class LossAccumulatedAsTensor(Rule):
    code = "TL209"
    name = "loss-accumulated-as-tensor"
    summary = "`total += loss` in a loop keeps every step's autograd graph alive; accumulate `loss.item()`"
    why = (
        "Since torch 0.4 a loss is a 0-dim tensor that carries the autograd graph of its step. Adding it to a "
        "running total that started as a Python number (`total = 0`, then `total += loss` in the training "
        "loop) turns the total into a tensor whose graph links every step's graph: their saved activations "
        "cannot be freed, memory grows with each iteration, and the logged total is a tensor instead of a "
        "number. `loss.item()` (or `loss.detach()`) accumulates the value without the graph.\n\n"
        "The rule fires inside a `for`/`while` loop on `total += x` and `total = total + x` when `x` is "
        "known to be a loss value (the result of a loss function or loss module, or arithmetic on one, not "
        "detached), `total` starts as a Python number in all its other bindings, and autograd is on (not "
        "inside `with torch.no_grad()` / `torch.inference_mode()` or a function decorated with them). A "
        "total that is later differentiated (`total.backward()`, `torch.autograd.grad(total, ...)`, "
        "`scaler.scale(total)`), directly or through what the function computes from it (`loss = content "
        "+ style_weight * style_total; loss.backward()`, a list it is appended to), is a deliberate "
        "accumulation and is not flagged; neither "
        "are accumulators kept on `self` or in containers, whose starting value the rule cannot see, nor a "
        "total started afresh in each pass of an outer loop while its own loop walks something other than a "
        "data loader (`loss = 0; for out in outputs: loss += criterion(out, y)` in the batch loop): it holds "
        "one batch's graph, not every step's. A total that leaves the function may be differentiated "
        "where it goes: one stored on an attribute or in a container, or handed to a call other than "
        "torch's or a builtin, is not flagged; nor one returned, unless every call of the function is in "
        "its own file (a script's, or a private one) and no caller differentiates anything."
    )
    fix_safety = FixSafety.UNSAFE
    fix_description = (
        "Appends `.item()` to the accumulated 0-dim loss (`total += loss.item()`, "
        "`total = total + (loss * n).item()`): the total becomes a Python float. Where the function later "
        "uses the total (or a value computed from it) as only a tensor can be used (`total.item()`, "
        "`total.data`, `torch.exp(total)`), it appends `.detach()` instead, so the total stays a tensor. "
        "Unsafe: a float prints differently from a tensor and sums in double precision, and `.item()` "
        "waits for the GPU on every step. A loss that is not known to be 0-dim is flagged without a fix."
    )
    triggers = (_NumberAccumulator(),)  # total = 0 ... total += x
    requires = (re.compile(r"loss|cross_entropy|kl_div", re.IGNORECASE),)  # where loss values come from
    torch_versions = versions(since="0.4")

    references = (
        "https://pytorch.org/docs/stable/notes/faq.html",
    )
    flagged = (
        Example(
            """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            criterion = nn.MSELoss()
            data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
            total_loss = 0.0
            for x, y in data:
                loss = criterion(model(x), y)
                loss.backward()
                total_loss += loss
            """,
            """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            criterion = nn.MSELoss()
            data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
            total_loss = 0.0
            for x, y in data:
                loss = criterion(model(x), y)
                loss.backward()
                total_loss += loss.item()
            """,
            runnable=True,
        ),
        Example(
            """
            import torch
            torch.manual_seed(0)
            labels = torch.LongTensor([1, 0, 2])
            out = torch.randn(3, 3, requires_grad=True)
            criterion = torch.nn.CrossEntropyLoss()
            loss = 0
            for row, label in zip(out, labels):
                loss += criterion(row.view(1, -1), label.view(1))
            print(loss.item())  # a tensor method: the total stays a tensor
            """,
            """
            import torch
            torch.manual_seed(0)
            labels = torch.LongTensor([1, 0, 2])
            out = torch.randn(3, 3, requires_grad=True)
            criterion = torch.nn.CrossEntropyLoss()
            loss = 0
            for row, label in zip(out, labels):
                loss += criterion(row.view(1, -1), label.view(1)).detach()
            print(loss.item())  # a tensor method: the total stays a tensor
            """,
            runnable=True,
        ),
        Example(
            """
            import torch.nn.functional as F
            from torch.utils.data import DataLoader


            def train_epoch(model, dataset):
                running = 0
                for inputs, targets in DataLoader(dataset, batch_size=32):
                    loss = F.cross_entropy(model(inputs), targets)
                    loss.backward()
                    running = running + loss * inputs.size(0)
                return running / len(dataset)


            def main(model, dataset):
                average = train_epoch(model, dataset)  # the only call: its result is only printed
                print(float(average))


            if __name__ == "__main__":
                main(None, [])
            """,
            """
            import torch.nn.functional as F
            from torch.utils.data import DataLoader


            def train_epoch(model, dataset):
                running = 0
                for inputs, targets in DataLoader(dataset, batch_size=32):
                    loss = F.cross_entropy(model(inputs), targets)
                    loss.backward()
                    running = running + (loss * inputs.size(0)).item()
                return running / len(dataset)


            def main(model, dataset):
                average = train_epoch(model, dataset)  # the only call: its result is only printed
                print(float(average))


            if __name__ == "__main__":
                main(None, [])
            """,
        ),
        Example(
            """
            import torch.nn as nn

            criterion = nn.MSELoss(reduction="none")


            def fit(model, batches):
                per_sample = 0
                for x, y in batches:
                    loss = criterion(model(x), y)
                    loss.mean().backward()
                    per_sample += loss  # not 0-dim: flagged without a fix
            """,
        ),
    )
    accepted = (
        """
        import torch.nn.functional as F


        def compute_loss(outputs, targets):
            total = 0
            for out, target in zip(outputs, targets):
                total += F.mse_loss(out, target)
            return total  # the training loss: its caller differentiates it


        def main(outputs, targets):
            loss = compute_loss(outputs, targets)
            loss.backward()


        if __name__ == "__main__":
            main([], [])
        """,
        """
        import torch.nn.functional as F


        class Trainer:
            def step(self, outputs, targets):
                total = 0
                for out, target in zip(outputs, targets):
                    total += F.l1_loss(out, target)
                self.loss = total  # kept: what is done with it elsewhere is unknown
        """,
        """
        import torch
        import torch.nn as nn
        criterion = nn.MSELoss()


        def evaluate(model, batches):
            total = 0.0
            with torch.no_grad():
                for x, y in batches:
                    total += criterion(model(x), y)
            return total
        """,
        """
        import torch.nn.functional as F


        def style_transfer_step(features, targets, content, optimizer):
            style_loss = 0
            for feature, target in zip(features, targets):
                style_loss += F.mse_loss(feature, target)
            total_loss = content + 1000 * style_loss  # the style term is differentiated through the sum
            total_loss.backward()
            optimizer.step()
        """,
        """
        import torch.nn.functional as F


        def multitask(outputs, targets):
            losses = []
            aux = 0
            for out, y in zip(outputs, targets):
                aux += F.l1_loss(out, y)
            losses.append(aux)
            sum(losses).backward()
        """,
        """
        import torch.nn as nn
        criterion = nn.CrossEntropyLoss()


        def accumulate(model, chunks, target):
            total = 0
            for chunk in chunks:
                total += criterion(model(chunk), target)
            total.backward()  # a deliberate sum over sub-batches
        """,
        """
        import torch
        import torch.nn as nn
        criterion = nn.MSELoss()


        def train(model, batches):
            total = 0.0
            correct = 0
            grad_sum = torch.zeros(3)
            for x, y in batches:
                out = model(x)
                loss = criterion(out, y)
                total += loss.detach()  # no graph: avoids a GPU sync per step
                total += loss.item()
                correct += (out.argmax(1) == y).sum()
                grad_sum += loss  # a tensor accumulator by design
        """,
        """
        import torch.nn as nn
        criterion = nn.MSELoss()


        def validate(model, batches):
            for x, y in batches:
                loss = 0  # started afresh for each batch: one batch's graph, not every step's
                for out in model(x):
                    loss += criterion(out, y)
                print(float(loss))
        """,
        """
        import torch
        import torch.autograd as autograd
        mse = torch.nn.MSELoss()


        def finish_episode(values, rewards):
            value_loss = 0
            for value, reward in zip(values, rewards):
                value_loss += mse(value, reward)
            autograd.backward([value_loss], [torch.ones(1)])  # the sum is differentiated
        """,
        """
        def train(model, batches, criterion):
            total = 0
            for x, y in batches:
                total += criterion(model(x), y)  # criterion of unknown kind
        """,
        """
        import torch
        import torch.nn.functional as F


        @torch.no_grad()
        def evaluate(model, batches):
            total = 0
            for x, y in batches:
                total += F.mse_loss(model(x), y)
            return total
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # In a loop, ``total += x`` / ``total = total + x`` where x can be a tensor and
        # total can start as a number, in a file that calls a torch loss function or
        # constructs a torch loss module (however imported): where loss values come from.
        if not (outline.nodes(ast.For) or outline.nodes(ast.While) or outline.nodes(ast.AsyncFor)):
            return False
        accumulations = []
        for node in outline.nodes(ast.AugAssign):
            if isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name):
                accumulations.append((node.target.id, node.value, node))
        for node in outline.nodes(ast.Assign):
            value = node.value
            if (
                len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(value, ast.BinOp)
                and isinstance(value.op, ast.Add)
                and isinstance(value.left, ast.Name)
                and value.left.id == node.targets[0].id
            ):
                accumulations.append((value.left.id, value.right, node))
        accumulations = [a for a in accumulations if in_loop(outline, a[2])]
        if not accumulations or not loss_calls(outline):
            return False
        numbers = names_where(outline, "TL209 numbers", lambda value, found: _may_be_number(outline, value, found))
        counters = _enumerate_indexes(outline)
        return any(
            (name in numbers or name in counters) and may_be_tensor(outline, added) for name, added, _ in accumulations
        )

    def check_AugAssign(self, node: cst.AugAssign, ctx: NodeContext) -> Iterator[Finding]:
        if isinstance(node.operator, cst.AddAssign):
            yield from self._check(node.target, node.value, ctx)

    def check_Assign(self, node: cst.Assign, ctx: NodeContext) -> Iterator[Finding]:
        value = node.value
        if (
            len(node.targets) == 1
            and isinstance(node.targets[0].target, cst.Name)
            and isinstance(value, cst.BinaryOperation)
            and isinstance(value.operator, cst.Add)
            and isinstance(value.left, cst.Name)
            and value.left.value == node.targets[0].target.value
        ):
            yield from self._check(node.targets[0].target, value.right, ctx)

    def _check(self, target: cst.BaseExpression, added: cst.BaseExpression, ctx: NodeContext) -> Iterator[Finding]:
        if not isinstance(target, cst.Name) or not ctx.in_loop():
            return
        value = ctx.inference.value(added)
        if not value.loss:
            return
        if ctx.inference.initial_value(target).kind is not Kind.NUMBER:
            return
        if grad_disabled(ctx) or _differentiated_later(target, ctx) or _one_pass_total(target, ctx):
            return
        leaves = _leaves_function(target, ctx)
        if leaves == "elsewhere":
            return  # stored or handed on: what is done with it there is unknown
        if leaves == "returned":
            function = ctx.enclosing(cst.FunctionDef)
            if function is None or ctx.inference.callers_may_differentiate(function):
                return  # the caller may differentiate the sum (a loss returned by compute_loss)
        fix = None
        # A total later used as only a tensor can be (``total.item()``, ``torch.exp(total)``)
        # stays a tensor: ``.detach()``; else the usual ``.item()``.
        method = "detach" if _used_as_tensor_later(target, ctx) else "item"
        if value.scalar:
            fix = Fix([Edit(added, lambda node: _append(node, method))], safe=False)
        yield Finding(
            target,
            fitting(f"adding a loss tensor to `{target.value}` keeps every step's graph; add `loss.{method}()`",
                    f"adding a loss tensor keeps every step's autograd graph; add `loss.{method}()`"),
            fix,
            detail=("each step's autograd graph stays alive; accumulate `loss.item()` (or `loss.detach()`)"
                    if method == "item" else "each step's autograd graph stays alive; the total is used as a "
                    "tensor later, so accumulate `loss.detach()`"),
        )


def _may_be_number(outline: Outline, value: ast.AST, numbers: set, depth: int = 0) -> bool:
    """Can inference take ``value`` for a Python number (a numeric literal, ``len()``, a size query)?"""
    if depth > 40:
        return True
    if isinstance(value, ast.Constant):
        return type(value.value) in (int, float)
    if isinstance(value, ast.Name):
        return value.id in numbers
    if isinstance(value, ast.UnaryOp):
        return not isinstance(value.op, ast.Not) and _may_be_number(outline, value.operand, numbers, depth + 1)
    if isinstance(value, ast.BinOp):
        return _may_be_number(outline, value.left, numbers, depth + 1) and _may_be_number(
            outline, value.right, numbers, depth + 1)
    if isinstance(value, ast.IfExp):
        return _may_be_number(outline, value.body, numbers, depth + 1) or _may_be_number(
            outline, value.orelse, numbers, depth + 1)
    if isinstance(value, ast.Call):
        if isinstance(value.func, ast.Name):
            return value.func.id in ("len", "float", "int") or may_resolve_to(outline, value.func, _NUMBER_CALLS)
        return callee_name(value.func) in SIZE_METHODS
    return False


_NUMBER_CALLS = frozenset({"builtins.len", "builtins.float", "builtins.int"})


def _enumerate_indexes(outline: Outline) -> "set[str]":
    """Names a ``for`` over ``enumerate(...)`` binds (``i`` in ``for i, x in enumerate(xs)``: a number)."""
    found: "set[str]" = set()
    for kind in (ast.For, ast.AsyncFor):
        for node in outline.nodes(kind):
            if _counts(outline, node.iter):
                found.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
    return found


def _counts(outline: Outline, iterable: ast.AST) -> bool:
    """Does a loop over ``iterable`` go through ``enumerate`` (its counter: a number)?"""
    while isinstance(iterable, ast.Call) and iterable.args:
        if callee_name(iterable.func) == "enumerate" or may_resolve_to(outline, iterable.func, ("builtins.enumerate",)):
            return True
        if iterated(outline, iterable) is iterable:
            return False
        iterable = iterable.args[0]
    return False


def _leaves_function(target: cst.Name, ctx: NodeContext) -> Optional[str]:
    """Does the total (or what the function computes from it) leave the function:
    "returned" (or yielded), "elsewhere" (stored on an attribute or in a container,
    or handed to a call that is not torch's or a builtin), or None?"""
    body = ctx.enclosing(cst.FunctionDef) or ctx.file.module
    scope = ctx.resolver.scope_of(target)
    finder = _Exits(_derived(target, body, scope, ctx), scope, ctx)
    body.visit(finder)
    return "elsewhere" if finder.elsewhere else ("returned" if finder.returned else None)


class _Exits(cst.CSTVisitor):
    def __init__(self, names: "set[str]", scope: object, ctx: NodeContext) -> None:
        super().__init__()
        self._names = names
        self._scope = scope
        self._ctx = ctx
        self.returned = False
        self.elsewhere = False

    def _ours(self, expr: Optional[cst.CSTNode]) -> bool:
        return expr is not None and _mentions(expr, self._names, self._scope, self._ctx)

    def visit_Return(self, node: cst.Return) -> None:
        self.returned = self.returned or self._ours(node.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        self.returned = self.returned or self._ours(node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(isinstance(t.target, (cst.Attribute, cst.Subscript)) for t in node.targets) and self._ours(node.value):
            self.elsewhere = True

    def visit_Call(self, node: cst.Call) -> None:
        callee = self._ctx.resolver.resolve(node.func) or ""
        if callee.startswith("builtins.") or self._ctx.resolver.resolve_torch(node.func) is not None:
            return
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _VALUE_READS:
            return  # ``.item()``, ``.format(total)``, ``.append`` (followed by ``_derived``)
        if any(_tensor_passed(arg.value, self._names, self._scope, self._ctx) for arg in node.args):
            self.elsewhere = True


# Methods that read a value or whose flow ``_derived`` already follows.
_VALUE_READS = frozenset({"item", "format", "append", "extend", "insert", "detach", "cpu", "tolist", "numpy"})


def _tensor_passed(expr: cst.BaseExpression, names: "set[str]", scope: object, ctx: NodeContext) -> bool:
    """Is ``expr`` the total itself or arithmetic on it (not a number read from it)?"""
    if isinstance(expr, cst.Name):
        return _mentions(expr, names, scope, ctx)
    if isinstance(expr, (cst.BinaryOperation,)):
        return _tensor_passed(expr.left, names, scope, ctx) or _tensor_passed(expr.right, names, scope, ctx)
    if isinstance(expr, cst.UnaryOperation):
        return _tensor_passed(expr.expression, names, scope, ctx)
    return False


def _one_pass_total(target: cst.Name, ctx: NodeContext) -> bool:
    """Is the total started afresh in each pass of a loop around the one that adds
    to it, while that inner loop walks something other than a data loader (``loss
    = 0; for o in outputs: loss += criterion(o, y)`` in the batch loop)? Then it
    holds the graphs of one pass (one batch's outputs, the graph backward needs
    anyway), not every step's."""
    loops = list(ctx.enclosing_in_function(cst.For, cst.While))
    if len(loops) < 2:
        return False
    inner = loops[0]
    if isinstance(inner, cst.For) and ctx.inference.value(inner.iter).kind is Kind.LOADER:
        return False
    inference = ctx.inference
    within = inference.bound_in(target, inner.body)
    return any(b.how == "assign" and b not in within and inference.value(b.value).kind is Kind.NUMBER
               for b in inference.bound_in(target, loops[1].body))


class _Differentiation(cst.CSTVisitor):
    """Finds ``<...name...>.backward()``, ``torch.autograd.grad(<...name...>)`` and
    ``x.scale(<...name...>)`` for any of ``names`` (in the scope of the accumulator)."""

    def __init__(self, names: "set[str]", scope: object, ctx: NodeContext) -> None:
        super().__init__()
        self._names = names
        self._ctx = ctx
        self._scope = scope
        self.found = False

    def visit_Call(self, node: cst.Call) -> Optional[bool]:
        func = node.func
        # ``torch.autograd.backward(tensors)`` is an attribute named backward too: its
        # arguments are differentiated, not its receiver (the module).
        functional = self._ctx.resolver.resolve(func) in AUTOGRAD_FUNCTIONS
        if isinstance(func, cst.Attribute) and func.attr.value == "backward" and not functional:
            self.found = self.found or _mentions(func.value, self._names, self._scope, self._ctx)
        elif (isinstance(func, cst.Attribute) and func.attr.value == "scale") or functional:
            self.found = self.found or any(_mentions(arg.value, self._names, self._scope, self._ctx)
                                           for arg in node.args)
        return not self.found


class _NameFinder(cst.CSTVisitor):
    def __init__(self, identifiers: "set[str]") -> None:
        super().__init__()
        self._identifiers = identifiers
        self.names = []

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self._identifiers:
            self.names.append(node)


def _mentions(expr: cst.CSTNode, names: "set[str]", scope: object, ctx: NodeContext) -> bool:
    finder = _NameFinder(names)
    expr.visit(finder)
    return any(ctx.resolver.scope_of(name) is scope for name in finder.names)


class _Flow(cst.CSTVisitor):
    """One pass of ``_derived``: the names assigned (or appended to) from an
    expression that mentions one of ``names``: ``total = content + w * style``,
    ``total += style``, ``losses.append(style)``."""

    def __init__(self, names: "set[str]", scope: object, ctx: NodeContext) -> None:
        super().__init__()
        self.names = names
        self._scope = scope
        self._ctx = ctx

    def _flows(self, targets: "list[cst.BaseExpression]", value: Optional[cst.BaseExpression]) -> None:
        if value is None or not _mentions(value, self.names, self._scope, self._ctx):
            return
        for target in targets:
            self.names.update(name.value for name in _target_names(target))

    def visit_Assign(self, node: cst.Assign) -> None:
        self._flows([t.target for t in node.targets], node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._flows([node.target], node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._flows([node.target], node.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend", "insert"):
            self._flows([func.value], cst.Tuple([cst.Element(a.value) for a in node.args]) if node.args else None)


def _target_names(target: cst.BaseExpression) -> "list[cst.Name]":
    """The names an assignment target binds (``a`` and ``b`` in ``a, (b, c.d) = ...``)."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


def _derived(target: cst.Name, body: cst.CSTNode, scope: object, ctx: NodeContext) -> "set[str]":
    """``target`` and every name of the same scope its value flows into, through
    assignments, sums and lists, anywhere in ``body``."""
    names = {target.value}
    while True:
        before = len(names)
        body.visit(_Flow(names, scope, ctx))
        if len(names) == before:
            return names


def _differentiated_later(target: cst.Name, ctx: NodeContext) -> bool:
    """Is the accumulated value, or anything computed from it in the function,
    differentiated there (``total = content + style; total.backward()``)?"""
    body = ctx.enclosing(cst.FunctionDef) or ctx.file.module
    scope = ctx.resolver.scope_of(target)
    finder = _Differentiation(_derived(target, body, scope, ctx), scope, ctx)
    body.visit(finder)
    return finder.found


class _TensorUses(cst.CSTVisitor):
    """Finds a read of one of ``names`` that only a tensor survives: an attribute of it
    (``total.item()``, ``total.data``) or an argument of a torch function (``torch.exp(total)``)."""

    def __init__(self, names: "set[str]", scope: object, ctx: NodeContext) -> None:
        super().__init__()
        self._names = names
        self._scope = scope
        self._ctx = ctx
        self.found = False

    def _is_ours(self, expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Name) and expr.value in self._names and self._ctx.resolver.scope_of(expr) is self._scope

    def visit_Attribute(self, node: cst.Attribute) -> Optional[bool]:
        self.found = self.found or self._is_ours(node.value)
        return not self.found

    def visit_Call(self, node: cst.Call) -> Optional[bool]:
        if self._ctx.resolver.resolve_torch(node.func) is not None:
            self.found = self.found or any(self._is_ours(arg.value) for arg in node.args)
        return not self.found


def _used_as_tensor_later(target: cst.Name, ctx: NodeContext) -> bool:
    """Is the total, or a value the function computes from it, used as only a tensor can be?"""
    body = ctx.enclosing(cst.FunctionDef) or ctx.file.module
    scope = ctx.resolver.scope_of(target)
    finder = _TensorUses(_derived(target, body, scope, ctx), scope, ctx)
    body.visit(finder)
    return finder.found


def _append(node: cst.CSTNode, method: str) -> cst.CSTNode:
    assert isinstance(node, cst.BaseExpression)
    if not isinstance(node, _ATOMS) and not node.lpar:
        node = node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(func=cst.Attribute(value=node, attr=cst.Name(method)))
