"""TL102: `volatile=` was removed in torch 0.4."""

import ast
from typing import Iterator

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import (
    Names,
    import_bindings,
    keyword_arguments,
    Outline,
    attributes_named,
    calls_to,
    may_be_tensor,
)
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.torch_api import VARIABLE
from torchlint.rules import edits
from torchlint.rules._grad_mode import grad_disabled, no_grad_block
from torchlint.rules.rule import Example, Finding, FixSafety, Rule

_VARIABLE = Names(VARIABLE)
MESSAGE = "`volatile` has had no effect since torch 0.4; use `with torch.no_grad():`"
FORWARDED_MESSAGE = "`volatile` is passed on to `Variable`, where it has had no effect since torch 0.4"


def _may_forward_volatile(outline: Outline) -> bool:
    """A call with ``volatile=`` to a helper that may pass it on to ``Variable``:
    one imported from elsewhere, or a local one handing a ``volatile=<name>`` on."""
    if "volatile" not in keyword_arguments(outline):
        return False
    calls = [call for call in outline.nodes(ast.Call) if any(k.arg == "volatile" for k in call.keywords)]
    if not calls:
        return False
    imported = import_bindings(outline)
    forwards_here = any(isinstance(k.value, ast.Name) for call in calls for k in call.keywords if k.arg == "volatile")
    return forwards_here or any(
        isinstance(call.func, ast.Name) and call.func.id in imported
        or isinstance(call.func, ast.Attribute) for call in calls)


class VolatileVariable(Rule):
    code = "TL102"
    name = "volatile-variable"
    summary = "`Variable(x, volatile=True)` does nothing since torch 0.4; use `torch.no_grad()`"
    why = (
        "`volatile=True` used to turn off graph building for inference. Since torch 0.4 the flag is "
        "ignored with a warning (`volatile was removed and now has no effect`), so code that relies on it "
        "silently builds the autograd graph and uses more memory. `with torch.no_grad():` is the "
        "replacement. Setting `x.volatile = True` is equally ignored."
    )
    fix_safety = FixSafety.MIXED
    fix_description = (
        "`volatile=True` meant inference: the unsafe fix puts the statement and the rest of its block in "
        "`with torch.no_grad():` and drops the keyword, so that code builds no autograd graph again, as it did "
        "before torch 0.4 (tensors computed there no longer require grad; that is the point). It is offered "
        "only where that is exact: the value is bound to a name the statements after it use and nothing "
        "outside the block reads; nothing in the function (or the module's own code) runs a backward, "
        "`torch.autograd.grad` or `scaler.scale`; the moved statements define no def, class or lambda, "
        "`yield` or `await` nothing, and touch no `requires_grad`, `enable_grad` or `set_grad_enabled`; a "
        "value they return is differentiated by no caller. The safe fix removes a `volatile=` that asks for "
        "nothing (`False`) or for what a `no_grad` block around it already does. Otherwise the finding stays "
        "without a fix (dropping `volatile=True` would keep the program running, but silently building the "
        "graph it meant to avoid): a flag passed on (`volatile=evaluation`), a value that leaves the block "
        "(returned, stored on an attribute, read after the block or in the loop's next pass), "
        "`requires_grad=True` beside it (torch refused that combination), an assignment `x.volatile = True`, "
        "or a value that does "
        "something besides giving one (`volatile=next(flags)`)."
    )
    triggers = ("volatile",)

    references = (
        "https://pytorch.org/blog/pytorch-0_4_0-migration-guide/",
        "https://pytorch.org/docs/stable/generated/torch.no_grad.html",
    )
    flagged = (
        Example(
            """
            import torch
            from torch.autograd import Variable
            model = torch.nn.Linear(2, 1)

            def evaluate(batches):
                total = 0.0
                for batch in batches:
                    x = Variable(batch, volatile=True)
                    total += model(x).sum().item()
                return total

            result = evaluate([torch.ones(3, 2)])
            """,
            """
            import torch
            from torch.autograd import Variable
            model = torch.nn.Linear(2, 1)

            def evaluate(batches):
                total = 0.0
                for batch in batches:
                    with torch.no_grad():
                        x = Variable(batch)
                        total += model(x).sum().item()
                return total

            result = evaluate([torch.ones(3, 2)])
            """,
            runnable=True,
        ),
        Example(
            """
            import torch
            import torch.autograd as autograd
            targets = [autograd.Variable(t, volatile=True, requires_grad=False) for t in [torch.ones(1)]]
            print(targets[0].sum())
            """,
            """
            import torch
            import torch.autograd as autograd
            with torch.no_grad():
                targets = [autograd.Variable(t, requires_grad=False) for t in [torch.ones(1)]]
                print(targets[0].sum())
            """,
            runnable=True,
        ),
        Example(
            # asking for nothing, or for what the no_grad around it does: dropped (safe)
            """
            import torch
            from torch.autograd import Variable
            x = torch.ones(2, 2)
            v = Variable(x, volatile=False)
            with torch.no_grad():
                w = Variable(x, volatile=True)
            """,
            """
            import torch
            from torch.autograd import Variable
            x = torch.ones(2, 2)
            v = Variable(x)
            with torch.no_grad():
                w = Variable(x)
            """,
            count=2,
            runnable=True,
        ),
        Example(
            # the function trains too: a no_grad block there is no exact rewrite, no fix
            """
            import torch
            from torch.autograd import Variable

            def step(model, batch):
                x = Variable(batch, volatile=True)
                loss = model(x).sum()
                loss.backward()
            """,
        ),
        Example(
            """
            import torch
            x = torch.zeros(3)
            x.volatile = True
            """,
        ),
        Example(
            # a flag passed on: no fix (the no_grad belongs where the flag is set)
            """
            import torch
            from torch.autograd import Variable

            def to_var(x, volatile=False):
                return Variable(x, volatile=volatile)

            y = to_var(torch.ones(2), volatile=True)
            """,
            count=2,
        ),
        Example(
            """
            import torch
            from torch.autograd import Variable
            flags = iter([True, False])
            x = Variable(torch.ones(2), volatile=next(flags))  # no fix: next() would go with it
            y = Variable(torch.ones(2), volatile=next(flags))
            """,
            count=2,
        ),
    )
    accepted = (
        """
        import torch
        with torch.no_grad():
            y = model(x)
        """,
        """
        def Variable(x, volatile=False):
            return x
        v = Variable(1, volatile=True)
        """,
        """
        class Config:
            def __init__(self):
                self.volatile = True
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # ``Variable(..., volatile=...)`` (a spelled keyword; the callee through an
        # import), or ``<x>.volatile = ...`` as a target of a plain assignment,
        # x something inference may know.
        if "volatile" in keyword_arguments(outline) and any(
                any(k.arg == "volatile" for k in call.keywords) for call in calls_to(outline, _VARIABLE)):
            return True
        if _may_forward_volatile(outline):
            return True
        if not any(True for _ in attributes_named(outline, ("volatile",))):
            return False  # the index of attributes by name is shared by every screen
        return any(
            isinstance(target, ast.Attribute) and target.attr == "volatile" and may_be_tensor(outline, target.value)
            for node in outline.nodes(ast.Assign)
            for target in node.targets
        )

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        volatile = edits.keyword(node, "volatile")
        if volatile is None:
            return
        if ctx.resolver.resolve(node.func) not in VARIABLE:
            forwarded = ctx.inference.forwarded_to(node, "volatile")
            if forwarded is not None and forwarded[0] in VARIABLE and forwarded[1] == "volatile":
                # A project helper (``to_var(x, volatile=True)``) hands it to ``Variable``:
                # the helper's own ``Variable(..., volatile=...)`` is flagged and fixed there.
                yield Finding(volatile, FORWARDED_MESSAGE)
            return
        requires_grad = edits.keyword(node, "requires_grad")
        # torch < 0.4 refused a Variable both volatile and requiring grad: the user must choose
        raises_today = requires_grad is not None and edits.literal_value(requires_grad.value) != (True, False) \
            and edits.literal_value(volatile.value) != (True, False)
        # Removing the argument removes its expression too: only one that does nothing else may go.
        if raises_today or not edits.without_side_effects(volatile.value):
            yield Finding(volatile, MESSAGE)
            return
        known, value = edits.literal_value(volatile.value)
        if (known and not value) or grad_disabled(ctx):
            # It asks for nothing, or for what the no_grad around it does: dropping it is exact.
            yield Finding(volatile, MESSAGE, Fix([Edit(node, edits.remove_keywords(["volatile"]))]))
        elif known and value:
            yield Finding(volatile, MESSAGE, no_grad_block(node, ctx, edits.remove_keywords(["volatile"])))
        else:
            yield Finding(volatile, MESSAGE)  # a flag (``volatile=evaluation``): no_grad only where it is set

    def check_Assign(self, node: cst.Assign, ctx: NodeContext) -> Iterator[Finding]:
        for target in node.targets:
            attribute = target.target
            if (
                isinstance(attribute, cst.Attribute)
                and attribute.attr.value == "volatile"
                and ctx.inference.is_tensor(attribute.value)
            ):
                yield Finding(attribute, MESSAGE)

