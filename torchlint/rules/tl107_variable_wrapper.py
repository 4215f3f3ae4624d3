"""TL107: `torch.autograd.Variable(x)` wrappers, obsolete since torch 0.4."""

from typing import Iterator, Optional

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Names, Outline, any_of, calls_to
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.torch_api import DTYPE_FACTORIES, VARIABLE
from torchlint.rules import edits
from torchlint.rules._grad_mode import grad_disabled, no_grad_block
from torchlint.rules.rule import Example, Finding, FixSafety, Rule

_VARIABLE = Names(VARIABLE)
# Factories whose result is a new leaf tensor nobody else holds: on it,
# ``requires_grad_()`` is what ``Variable(..., requires_grad=True)`` did.
_FRESH = DTYPE_FACTORIES - {"torch.as_tensor", "torch.asarray"}

MESSAGES = {
    False: "`Variable(x)` is obsolete since torch 0.4; use the tensor itself",
    True: "`Variable(x, requires_grad=True)` is obsolete; use `x.detach().requires_grad_()`",
    None: "`Variable(x, ...)` is obsolete since torch 0.4; use the tensor itself",
}
DETAILS = {
    False: "`Variable(x)` returns `x.detach()`",
    True: "`Variable(x, requires_grad=True)` returns `x.detach().requires_grad_()`",
    None: "`Variable(x, ...)` returns a detached copy of `x`",
}


class VariableWrapper(Rule):
    code = "TL107"
    name = "variable-wrapper"
    summary = "`Variable(x)` wrappers are obsolete since torch 0.4; use the tensor (`x.requires_grad_()`)"
    why = (
        "Before torch 0.4 a tensor had to be wrapped in `torch.autograd.Variable` to take part in "
        "autograd; since 0.4 tensors do it themselves and `Variable` is kept only for backward "
        "compatibility, silently. It is not a no-op: `Variable(x)` returns a new tensor sharing `x`'s "
        "storage but detached from its graph (`x.detach()`), and `Variable(x, requires_grad=True)` a new "
        "leaf (`x.detach().requires_grad_()`), so code that wraps a tensor that already requires grad cuts "
        "the graph there. Legacy code wraps fresh data (`Variable(inputs.cuda())`), where the tensor itself "
        "is what was meant."
    )
    fix_safety = FixSafety.UNSAFE
    fix_description = (
        "Replaces `Variable(x)` (or `requires_grad=False`) with `x`, parenthesizing `x` where needed, and "
        "`Variable(x, requires_grad=True)` with `x.detach().requires_grad_()`, exactly what it returns, so "
        "the caller's tensor `x` is untouched (on a tensor just created by a torch factory such as "
        "`torch.randn(3)`, simply `torch.randn(3).requires_grad_()`). Unsafe because `Variable(x)` detaches: "
        "if `x` already requires grad, `x` keeps it connected to its graph; for fresh data (the usual "
        "legacy case) nothing changes. A `volatile=False`, or a `volatile=True` inside `torch.no_grad()`, goes "
        "with the wrapper (it has had no effect since torch 0.4; see TL102); with `volatile=True` elsewhere the "
        "fix also puts the code in a `with torch.no_grad():` block, where TL102 finds that exact, and there is "
        "no fix otherwise (nor for a `volatile=` flag passed on). No fix with other arguments "
        "or a non-literal `requires_grad`. An import the fix leaves unused "
        "is removed, and so is an assignment it leaves as `x = x` (`x = Variable(x)`)."
    )
    triggers = ("Variable",)

    references = (
        "https://pytorch.org/blog/pytorch-0_4_0-migration-guide/",
        "https://pytorch.org/docs/stable/autograd.html#variable-deprecated",
    )
    flagged = (
        Example(
            """
            import torch
            from torch.autograd import Variable
            torch.manual_seed(0)
            w = Variable(torch.randn(3), requires_grad=True)
            x = Variable(torch.ones(3))
            loss = (w * x).sum()
            loss.backward()
            g = w.grad
            """,
            """
            import torch
            torch.manual_seed(0)
            w = torch.randn(3).requires_grad_()
            x = torch.ones(3)
            loss = (w * x).sum()
            loss.backward()
            g = w.grad
            """,
            count=2,
            runnable=True,
            silent=True,
        ),
        Example(
            """
            import torch
            import torch.autograd as autograd
            a, b = torch.ones(2), torch.arange(2.0)
            s = autograd.Variable(a + b, False) * 2
            t = autograd.Variable(a * b, requires_grad=True).sum()
            """,
            """
            import torch
            a, b = torch.ones(2), torch.arange(2.0)
            s = (a + b) * 2
            t = (a * b).detach().requires_grad_().sum()
            """,
            count=2,
            runnable=True,
            silent=True,
        ),
        Example(
            """
            import torch
            torch.manual_seed(0)
            for inputs, labels in loader:
                inputs, labels = Variable(inputs.cuda()), torch.autograd.Variable(labels.cuda())
            """,
            """
            import torch
            torch.manual_seed(0)
            for inputs, labels in loader:
                inputs, labels = Variable(inputs.cuda()), labels.cuda()
            """,
        ),
        Example(
            """
            import torch
            from torch.autograd import Variable
            data, target = torch.ones(2, 3), torch.tensor([0, 1])
            data, target = Variable(data), Variable(target)
            weights = torch.zeros(3)
            weights = Variable(weights)
            total = (data.sum(1) + weights.sum()).sum()
            """,
            """
            import torch
            data, target = torch.ones(2, 3), torch.tensor([0, 1])
            weights = torch.zeros(3)
            total = (data.sum(1) + weights.sum()).sum()
            """,
            count=3,
            runnable=True,
            silent=True,
        ),
        Example(
            """
            import torch
            from torch.autograd import Variable
            t = torch.ones(3)
            w = Variable(t, requires_grad=True)
            (w * 2).sum().backward()
            caller_flag = t.requires_grad
            g = w.grad
            """,
            """
            import torch
            t = torch.ones(3)
            w = t.detach().requires_grad_()
            (w * 2).sum().backward()
            caller_flag = t.requires_grad
            g = w.grad
            """,
            runnable=True,
            silent=True,
        ),
        Example(
            # volatile= has done nothing since torch 0.4: one asking for nothing, or for what the
            # no_grad block around it does, goes with the wrapper (TL102 says why)
            """
            import torch
            from torch.autograd import Variable
            x = torch.ones(3)
            y = Variable(x, volatile=False).sum()
            with torch.no_grad():
                z = Variable(x, volatile=True).sum()
            """,
            """
            import torch
            x = torch.ones(3)
            y = x.sum()
            with torch.no_grad():
                z = x.sum()
            """,
            count=2,
        ),
        Example(
            # volatile=True meant inference: the wrapper goes with the code put in a no_grad
            # block, where that is exact (TL102 says when)
            """
            import torch
            from torch.autograd import Variable
            x = torch.ones(3)
            y = Variable(x, volatile=True).sum()
            print(y)
            """,
            """
            import torch
            x = torch.ones(3)
            with torch.no_grad():
                y = x.sum()
                print(y)
            """,
        ),
        Example(
            # not exact (the function trains): no fix
            """
            import torch
            from torch.autograd import Variable

            def step(model, batch):
                loss = model(Variable(batch, volatile=True)).sum()
                loss.backward()
            """,
        ),
        Example(
            # a volatile= whose value has side effects stays: no fix
            """
            import torch
            from torch.autograd import Variable
            x = torch.ones(3)
            y = Variable(x, volatile=next(flags))
            """,
        ),
        Example(
            """
            from torch.autograd import Variable
            v = Variable(x, requires_grad=flag)  # not a literal: no fix
            """,
        ),
    )
    accepted = (
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        x = torch.ones(3)
        """,
        """
        import tensorflow as tf
        v = tf.Variable(3.0)
        """,
        """
        class Variable:
            def __init__(self, value):
                self.value = value
        v = Variable(3)
        """,
        """
        from torch.autograd import Variable
        def is_tensor(x):
            return isinstance(x, Variable)  # the class itself is not flagged, only wrapping calls
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A call of ``Variable`` (or an alias of it) through an import.
        return any_of(calls_to(outline, _VARIABLE))

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        if ctx.resolver.resolve(node.func) not in VARIABLE:
            return
        requires_grad = _requires_grad(node)
        volatile = edits.keyword(node, "volatile")
        grad_off = grad_disabled(ctx)
        # ``volatile=True`` outside no_grad: the wrapper goes only with the code put in a no_grad block.
        wants_block = volatile is not None and not grad_off and edits.literal_value(volatile.value) == (True, True)
        fix = _fix(node, requires_grad, _fresh(node, ctx), grad_off or wants_block)
        if fix is not None and wants_block:
            fix = no_grad_block(node, ctx, fix.edits[0].apply)  # type: ignore[arg-type]
        yield Finding(node, MESSAGES[requires_grad], fix, detail=DETAILS[requires_grad])


def _fresh(call: cst.Call, ctx: NodeContext) -> bool:
    """Is ``Variable``'s tensor a new leaf made right there (``torch.randn(3)``)?"""
    if not call.args:
        return False
    made = call.args[0].value
    return (isinstance(made, cst.Call) and ctx.resolver.resolve(made.func) in _FRESH
            and edits.keyword(made, "requires_grad") is None)


def _requires_grad(call: cst.Call) -> Optional[bool]:
    """The literal requires_grad of ``Variable(x, ...)``, False when absent, None when unknown."""
    positional = [a for a in call.args if a.keyword is None]
    keyword = edits.keyword(call, "requires_grad")
    arg = keyword if keyword is not None else (positional[1] if len(positional) > 1 else None)
    if arg is None:
        return False
    known, value = edits.literal_value(arg.value)
    return value if known and isinstance(value, bool) else None


def _droppable_keyword(arg: cst.Arg, grad_off: bool) -> bool:
    """``requires_grad=`` (what the fix rewrites into), or a ``volatile=`` that has done
    nothing since torch 0.4 and asked for nothing (``False``) or for what the
    ``torch.no_grad()`` around the call does (``grad_off``: there already, or put
    there by the fix, as TL102's)."""
    assert arg.keyword is not None
    if arg.keyword.value == "requires_grad":
        return True
    return arg.keyword.value == "volatile" and edits.without_side_effects(arg.value) and (
        grad_off or edits.literal_value(arg.value) in ((True, False), (True, None), (True, 0)))


def _fix(call: cst.Call, requires_grad: Optional[bool], fresh: bool, grad_off: bool) -> Optional[Fix]:
    if requires_grad is None or edits.has_star_args(call) or not call.args or call.args[0].keyword is not None:
        return None
    allowed = 2 if edits.keyword(call, "requires_grad") is None else 1
    positional = [a for a in call.args if a.keyword is None]
    keywords = [a for a in call.args if a.keyword is not None]
    if len(positional) > allowed or any(not _droppable_keyword(a, grad_off) for a in keywords):
        return None  # name=, a volatile= with side effects, ...

    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        value = node.args[0].value
        if requires_grad:
            receiver = edits.parenthesized_if_needed(value)
            if not fresh:  # leave the caller's tensor alone, as Variable did
                receiver = cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("detach")))
            return cst.Call(
                func=cst.Attribute(value=receiver, attr=cst.Name("requires_grad_")), lpar=node.lpar, rpar=node.rpar
            )
        if node.lpar:
            return value.with_changes(lpar=node.lpar, rpar=node.rpar)
        unwrapped = edits.parenthesized_if_needed(value)
        return edits.moved_left(unwrapped, _opening_width(node) - (1 if unwrapped.lpar and not value.lpar else 0))

    return Fix([Edit(call, apply)], safe=False)


def _opening_width(call: cst.Call) -> int:
    """How many columns the argument's continuation lines move left once ``Variable(`` is
    gone: the width of ``Variable(`` when the argument starts on its line; when it starts
    on the next line, that line's indent (the argument comes up to the statement, its
    continuation lines keep their indent relative to it)."""
    if isinstance(call.whitespace_after_func, cst.ParenthesizedWhitespace):
        return 0
    if isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        indent = call.whitespace_before_args.last_line.value
        return len(indent) if indent == " " * len(indent) else 0
    opening = edits.expression_code(call.func) + call.whitespace_after_func.value + "(" + \
        call.whitespace_before_args.value
    return 0 if "\n" in opening else len(opening)
