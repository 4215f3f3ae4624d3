"""TL118: torch's deprecated scalar-first overloads (`p.add_(-lr, grad)`, `torch.addmm(beta, M, a, b)`)."""

import ast
from typing import Iterator, List, Optional, Sequence

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.inference import Kind
from torchlint.analysis.outline import Outline, has_splat, qualified_names
from torchlint.core.diagnostic import Fix
from torchlint.core.settings import versions
from torchlint.knowledge import deprecated_overloads as table
from torchlint.knowledge.deprecated_overloads import FUNCTION, METHOD, Overload
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting

_TORCH = "torch."
# What a deprecated overload's leading scalar cannot be spelled as.
_NOT_A_SCALAR = (ast.JoinedStr, ast.Lambda, ast.Dict, ast.List, ast.Set, ast.Tuple)


def _may_be_a_scalar(arg: ast.AST) -> bool:
    return not isinstance(arg, _NOT_A_SCALAR) and not (isinstance(arg, ast.Constant) and isinstance(arg.value, str))


class DeprecatedOverload(Rule):
    code = "TL118"
    name = "deprecated-scalar-overload"
    summary = "`p.add_(-lr, grad)`, `m.addcmul_(1 - b, g, g)`: deprecated scalar-first overloads; use `alpha=`/`value=`"
    why = (
        "Before torch 0.4 the scaling factor of `add`, `sub`, `addcmul`, `addcdiv`, `addmm`, `addmv`, `addr`, "
        "`addbmm`, `baddbmm` and `sspaddmm` came first: `p.data.add_(-lr, grad)`, "
        "`exp_avg_sq.addcmul_(1 - beta2, grad, grad)`, `torch.addmm(beta, M, alpha, a, b)`. Every custom "
        "optimizer of 2017-2019 is written so. torch keeps these orders as deprecated overloads: each call "
        "warns `This overload of add_ is deprecated: add_(Number alpha, Tensor other)` and names the "
        "signature to use, where the factor is a keyword (`add_(grad, alpha=-lr)`). The overloads are "
        "torch's own list (`deprecated.yaml`, shipped with torch); a call is one when it passes more "
        "positional arguments than any current signature takes, or, for `torch.addmm(beta, M, a, b)` "
        "and `torch.baddbmm`, whose `out_dtype` signature takes four, when the first one is a number."
    )
    fix_safety = FixSafety.SAFE
    fix_description = (
        "Moves the scalars to the keywords of torch's suggested signature, the tensors keep their order: "
        "`p.add_(-lr, grad)` -> `p.add_(grad, alpha=-lr)`, `torch.addmm(b, M, a, x, y)` -> "
        "`torch.addmm(M, x, y, beta=b, alpha=a)`; `out=` stays. The method form is checked only where "
        "inference knows the receiver is a tensor, or one of the tensor arguments is and each scalar may "
        "be a number (not on an imported module or class, nor a method's `self`). No fix where moving "
        "a scalar after the tensors would change the order in which calls in the arguments run."
    )
    # ``alpha=``, ``value=`` and ``beta=`` are keywords of the current signatures since
    # torch 0.4, when the old orders became the deprecated overloads.
    torch_versions = versions(since="0.4")
    triggers = ("add", "sub")  # every name with a deprecated overload spells one of them
    references = (
        "https://pytorch.org/docs/stable/generated/torch.add.html",
        "https://pytorch.org/docs/stable/generated/torch.addcmul.html",
        "https://github.com/pytorch/pytorch/blob/main/tools/autograd/deprecated.yaml",
    )

    flagged = (
        Example(
            """
            import torch
            w = torch.ones(3)
            grad = torch.tensor([0.5, 1.0, -1.0])
            exp_avg, exp_avg_sq = torch.zeros(3), torch.zeros(3)
            exp_avg.mul_(0.9).add_(1 - 0.9, grad)
            exp_avg_sq.mul_(0.999).addcmul_(1 - 0.999, grad, grad)
            w.addcdiv_(-0.01, exp_avg, exp_avg_sq.sqrt().add_(1e-8))
            w.add_(-0.1 * 0.01, w)
            """,
            """
            import torch
            w = torch.ones(3)
            grad = torch.tensor([0.5, 1.0, -1.0])
            exp_avg, exp_avg_sq = torch.zeros(3), torch.zeros(3)
            exp_avg.mul_(0.9).add_(grad, alpha=1 - 0.9)
            exp_avg_sq.mul_(0.999).addcmul_(grad, grad, value=1 - 0.999)
            w.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(1e-8), value=-0.01)
            w.add_(w, alpha=-0.1 * 0.01)
            """,
            count=4,
            runnable=True,
        ),
        Example(
            """
            import torch
            m, a, b = torch.ones(2, 2), torch.ones(2, 3), torch.ones(3, 2)
            y = torch.addmm(0.5, m, 2, a, b)
            z = torch.add(m, 3, m)
            out = torch.empty(2, 2)
            torch.sub(m, 2, m, out=out)
            """,
            """
            import torch
            m, a, b = torch.ones(2, 2), torch.ones(2, 3), torch.ones(3, 2)
            y = torch.addmm(m, a, b, beta=0.5, alpha=2)
            z = torch.add(m, m, alpha=3)
            out = torch.empty(2, 2)
            torch.sub(m, m, alpha=2, out=out)
            """,
            count=3,
            runnable=True,
        ),
        Example(
            """
            from torch.optim import Optimizer

            class SGD(Optimizer):
                def step(self):
                    for group in self.param_groups:
                        for p in group['params']:
                            p.data.add_(-group['lr'], p.grad.data)
            """,
            """
            from torch.optim import Optimizer

            class SGD(Optimizer):
                def step(self):
                    for group in self.param_groups:
                        for p in group['params']:
                            p.data.add_(p.grad.data, alpha=-group['lr'])
            """,
        ),
        Example(
            """
            import torch

            def sgd_step(p, lr):
                grad = torch.ones(3)
                p.add_(-lr, grad)
            """,
            """
            import torch

            def sgd_step(p, lr):
                grad = torch.ones(3)
                p.add_(grad, alpha=-lr)
            """,
        ),
        Example(
            """
            import torch
            w = torch.ones(3)
            w.add_(-next_rate(), torch.ones(3))
            """,
        ),
    )
    accepted = (
        """
        import torch
        w, grad = torch.ones(3), torch.ones(3)
        w.add_(grad, alpha=-0.1)
        total = torch.add(w, grad)
        """,
        """
        seen = set()
        seen.add(1)
        counter.add(1, 2)  # not known to be a tensor
        """,
        """
        import torch
        m, a, b = torch.ones(2, 2), torch.ones(2, 3), torch.ones(3, 2)
        y = torch.addmm(m, a, b, torch.float16)  # out_dtype, not a beta first
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A call of one of the names whose count of positional arguments is that of a
        # deprecated overload, in the form the call takes: ``torch.add(a, b)`` (the
        # current function form) and ``x.add(y)`` pass; ``torch.add(a, 2, b)`` and
        # ``p.add_(-lr, g)`` do not.
        for call in outline.calls_named(table.names()):
            if has_splat(call):
                continue
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name is None:
                continue
            if _TORCH + name in qualified_names(outline, func):
                if table.lookup(name, FUNCTION, len(call.args)) is not None:
                    return True
            elif isinstance(func, ast.Attribute) and table.lookup(name, METHOD, len(call.args)) is not None \
                    and _may_be_a_scalar(call.args[0]):
                return True  # (a regular expression's ``.sub(' ', text)`` is no tensor's)
        return False

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        func = node.func
        if not isinstance(func, (cst.Attribute, cst.Name)) or edits.has_star_args(node):
            return
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value
        if name not in table.names():
            return
        positional = _leading_positional(node)
        form = FUNCTION if ctx.resolver.resolve(func) == _TORCH + name else METHOD
        if form == METHOD and not isinstance(func, cst.Attribute):
            return  # a function of the user's own that shares the name
        overload = table.lookup(name, form, len(positional))
        if overload is None or not _only_out_after(node, len(positional), overload):
            return
        if not _is_the_deprecated_overload(overload, func, positional, ctx):
            return
        yield _finding(node, overload, positional, ctx)


def _leading_positional(call: cst.Call) -> List[cst.BaseExpression]:
    values = []
    for arg in call.args:
        if arg.keyword is not None:
            break
        values.append(arg.value)
    return values


def _only_out_after(call: cst.Call, positional: int, overload: Overload) -> bool:
    """Nothing follows the positional arguments but ``out=``, where the overload takes it."""
    rest = call.args[positional:]
    return all(arg.keyword is not None and arg.keyword.value == "out" and overload.out for arg in rest)


def _is_the_deprecated_overload(overload: Overload, func: cst.BaseExpression,
                                positional: Sequence[cst.BaseExpression], ctx: NodeContext) -> bool:
    """Evidence that the call is torch's, in the deprecated order."""
    by_name = dict(zip(overload.old, positional))
    scalars = [by_name[s] for s in overload.scalars]
    if overload.form == FUNCTION:
        # ``torch.addmm(M, a, b, torch.float16)`` is a current signature of the same length:
        # there the first argument must be a number, which no tensor input is.
        return overload.decided_by_arity or all(ctx.inference.value(s).kind is Kind.NUMBER for s in scalars)
    assert isinstance(func, cst.Attribute)
    receiver = func.value
    if ctx.resolver.resolve(receiver) is not None or ctx.inference.is_self_of_class(receiver):
        return False  # ``operator.add(2, t)``, ``torch.Tensor.add(x, t)``, ``self.add(key, t)``
    # A tensor among the tensor arguments, and what may be a number where each scalar
    # goes (``graph.add(edge, weight)``, ``writer.add('tag', t)`` are someone else's
    # methods). Asked before the receiver: in ``grad = grad.add(wd, p.data)`` the
    # receiver's value depends on the statement itself, and asking there first
    # leaves ``grad`` unknown below.
    tensors = [by_name[t] for t in overload.new]
    if any(ctx.inference.is_tensor(t) for t in tensors) and all(_may_be_number(s, ctx) for s in scalars):
        return True
    return ctx.inference.used_as_tensor(receiver).kind is Kind.TENSOR


def _may_be_number(expr: cst.BaseExpression, ctx: NodeContext) -> bool:
    """Not a string literal, and of no kind inference knows that is not a number."""
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return False
    return ctx.inference.value(expr).kind in (Kind.NUMBER, Kind.UNKNOWN)


def _fixed_reference(expr: cst.BaseExpression, ctx: NodeContext) -> bool:
    """Does ``expr`` give the same object whenever it is evaluated in its call: a number
    spelled in the code, or a def's variable that no call can rebind? (Either side of
    a reorder being such, the other side's calls cannot change what it gives.)"""
    if edits.is_number_literal(expr):
        return True
    return isinstance(expr, cst.Name) and ctx.resolver.private_local(expr)


def _finding(call: cst.Call, overload: Overload, positional: Sequence[cst.BaseExpression],
             ctx: NodeContext) -> Finding:
    index = {name: i for i, name in enumerate(overload.old)}
    kept = [index[name] for name in overload.new]
    keywords = [(name, index[name]) for name in overload.keywords]
    moved = [positional[i] for _, i in keywords]
    passed = [positional[i] for i in kept if i > min(i for _, i in keywords)]
    fix: Optional[Fix] = None
    if edits.reorder_keeps_meaning(moved, passed) or all(_fixed_reference(e, ctx) for e in moved) or all(
            _fixed_reference(e, ctx) for e in passed):
        fix = Fix(edits.edits_for([(call, edits.move_to_keywords(kept, keywords))]))
    old, new = overload.signature(old=True), overload.signature(old=False)
    message = fitting(f"deprecated overload `{old}`; use `{new}`",
                      f"`{old}` is deprecated; use `{new}`",
                      f"deprecated overload of `{overload.name}`; use `{new}`")
    detail = f"torch warns: This overload of {overload.name} is deprecated"
    if fix is None:
        detail += "; not fixed: moving the scalars after the tensors would change the order calls run in"
    # A method is reported at its name: in ``m.mul_(b).add_(1 - b, g)`` that is what is wrong.
    where = call.func.attr if overload.form == METHOD and isinstance(call.func, cst.Attribute) else call
    return Finding(where, message, fix, detail=detail)
