"""TL205: `F.dropout(...)` in a module's `forward` without `training=`."""

import re
from typing import Iterator, Optional

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import (
    Outline,
    calls_resolving_to,
    has_splat,
    in_function_named,
    keyword_value,
)
from torchlint.analysis.screens import CallWithout
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.torch_api import DROPOUT_FUNCTIONS, DROPOUT_TRAINING_INDEX
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting


class FunctionalDropoutTraining(Rule):
    code = "TL205"
    name = "functional-dropout-without-training"
    summary = "`F.dropout(x)` in `forward` ignores `model.eval()`; pass `training=self.training`"
    why = (
        "`nn.Dropout` follows the module's mode, but the functional form only knows the `training` "
        "argument it is given: `F.dropout`, `F.dropout1d/2d/3d` default to `training=True`, so inside a "
        "module's `forward` they keep dropping activations after `model.eval()` and evaluation results "
        "are noisy and wrong. `F.alpha_dropout` and `F.feature_alpha_dropout` default to `training=False` "
        "and so never drop anything, not even while training. Only calls directly inside `forward` of a "
        "class deriving from `nn.Module` are reported; `training` passed by position counts as given. Dropout "
        "the author keeps on in evaluation on purpose is left alone where the code says so: the class's or "
        "`forward`'s docstring, or a comment at the call (Tacotron 2's prenet \"always applies dropout even in "
        "evaluation\"; Monte Carlo dropout)."
    )
    fix_safety = FixSafety.UNSAFE
    fix_description = (
        "Adds `training=self.training` (spelled with the method's own first parameter). Unsafe because "
        "it changes what the module computes in the mode that was wrong: no dropout in `eval()` (and, "
        "for the alpha variants, dropout while training). In training mode `F.dropout` computes the same "
        "as before."
    )
    # A lowercase (functional) dropout call; nn.Dropout modules are fine.
    # (``self.dropout(x)`` calls an nn.Dropout module: not a candidate).
    triggers = (CallWithout(r"(?<!self\.)\b\w*dropout(?:[123]d)?", "training"),)
    references = ("https://pytorch.org/docs/stable/generated/torch.nn.functional.dropout.html",)

    flagged = (
        Example(
            """
            import torch
            import torch.nn as nn
            import torch.nn.functional as F


            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 3)

                def forward(self, x):
                    return self.fc(F.dropout(x, 0.5))


            net = Net()
            out = net(torch.ones(2, 4))
            """,
            """
            import torch
            import torch.nn as nn
            import torch.nn.functional as F


            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 3)

                def forward(self, x):
                    return self.fc(F.dropout(x, 0.5, training=self.training))


            net = Net()
            out = net(torch.ones(2, 4))
            """,
            runnable=True,
        ),
        Example(
            """
            import torch.nn as nn
            import torch.nn.functional as F


            class EdgeDropout(nn.Module):
                def forward(self, weight):
                    if self.always or self.training:
                        weight = F.dropout(weight, p=0.1)
                    return weight
            """,
            """
            import torch.nn as nn
            import torch.nn.functional as F


            class EdgeDropout(nn.Module):
                def forward(self, weight):
                    if self.always or self.training:
                        weight = F.dropout(weight, p=0.1, training=self.training)
                    return weight
            """,
        ),
        Example(
            """
            import torch.nn as nn
            from torch.nn.functional import alpha_dropout, dropout2d


            class Block(nn.Module):
                def forward(self, x, p=0.2):
                    x = dropout2d(x, p=p, inplace=False)
                    return alpha_dropout(x)
            """,
            """
            import torch.nn as nn
            from torch.nn.functional import alpha_dropout, dropout2d


            class Block(nn.Module):
                def forward(self, x, p=0.2):
                    x = dropout2d(x, p=p, inplace=False, training=self.training)
                    return alpha_dropout(x, training=self.training)
            """,
            count=2,
        ),
    )
    accepted = (
        """
        import torch.nn as nn
        import torch.nn.functional as F


        class Prenet(nn.Module):
            \"\"\"Tacotron 2's prenet: it always applies dropout, even in evaluation, as the paper does.\"\"\"

            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(80, 256)

            def forward(self, x):
                return F.dropout(F.relu(self.fc(x)), 0.5)
        """,
        """
        import torch.nn as nn
        import torch.nn.functional as F


        class Sampler(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)

            def forward(self, x):
                # Monte Carlo dropout: sampled at inference too, for the uncertainty estimate
                return F.dropout(self.fc(x), 0.1)
        """,
        """
        import torch.nn as nn
        import torch.nn.functional as F


        class Net(nn.Module):
            def forward(self, x):
                x = F.dropout(x, 0.5, self.training)
                return F.dropout(x, p=0.1, training=self.training)
        """,
        """
        import torch.nn as nn
        import torch.nn.functional as F


        class EdgeDropout(nn.Module):
            def forward(self, weight):
                if self.p > 0 and self.training:
                    weight = F.dropout(weight, p=self.p)  # runs only in training
                return weight
        """,
        """
        import torch.nn.functional as F


        def augment(x):
            return F.dropout(x, 0.1)  # a plain function: noise on purpose


        class Helper:
            def forward(self, x):
                return F.dropout(x, 0.5)  # not an nn.Module
        """,
        """
        import torch.nn as nn


        def dropout(x, p):
            return x


        class Net(nn.Module):
            def forward(self, x):
                return dropout(x, 0.5)
        """,
        """
        import torch.nn as nn
        import torch.nn.functional as F


        class Net(nn.Module):
            def forward(self, x, **options):
                return F.dropout(x, **options)
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A call of F.dropout & co (however imported) inside some ``def forward``,
        # without ``*``/``**``, ``training=`` or a third positional argument.
        return any(
            not has_splat(call)
            and keyword_value(call, "training") is None
            and len(call.args) <= DROPOUT_TRAINING_INDEX
            and in_function_named(outline, call, "forward")
            for call in calls_resolving_to(outline, DROPOUT_FUNCTIONS)
        )

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        callee = ctx.resolver.resolve(node.func)
        if callee not in DROPOUT_FUNCTIONS or edits.has_star_args(node):
            return
        if _passes_training(node):
            return
        classdef = ctx.enclosing_class_of_method()
        method = ctx.enclosing(cst.FunctionDef)
        if classdef is None or not isinstance(method, cst.FunctionDef) or method.name.value != "forward":
            return
        if not ctx.inference.is_module_class(classdef):
            return
        this = _self_name(method)
        if this is None or _under_training_test(method, node, this):
            return
        if _documented_as_always_on(classdef, method, ctx.file.line_of_call(node)):
            return
        spelled = edits.expression_code(node.func)
        if DROPOUT_FUNCTIONS[callee]:
            consequence = "still drops after `model.eval()`"
            detail = "it defaults to `training=True`, so it keeps dropping in evaluation"
        else:
            consequence = "never drops, even in training"
            detail = "it defaults to `training=False`, so it never drops, not even while training"
        fix = Fix([Edit(node, edits.add_keywords((("training", f"{this}.training"),)))], safe=False)
        yield Finding(
            node,
            fitting(f"`{spelled}()` without `training=` {consequence}; pass `training={this}.training`",
                    f"no `training=`: {consequence}; pass `training={this}.training`",
                    f"no `training=`: {consequence}"),
            fix,
            detail=detail,
        )


# What authors write where dropout stays on in evaluation by design (Tacotron 2's prenet: "This
# module always applies dropout even in evaluation"; Monte Carlo dropout for uncertainty).
_ALWAYS_ON = re.compile(
    r"dropout\b[^.\n]{0,40}\b(?:even|also|always)\b[^.\n]{0,30}\b(?:eval\w*|inference|test\w*)"
    r"|\balways?\s+appl\w*\s+dropout|\b(?:monte[- ]carlo|mc)[- ]dropout", re.IGNORECASE)
# A comment at the call saying the randomness is wanted ("we make this part non deterministic").
_RANDOM_ON_PURPOSE = re.compile(r"non[- ]?deterministic|stochastic (?:at|in|during) (?:eval|inference|test)",
                                re.IGNORECASE)


def _documented_as_always_on(classdef: cst.ClassDef, method: cst.FunctionDef,
                             line: Optional[cst.SimpleStatementLine]) -> bool:
    """Does the author say the dropout stays on in evaluation on purpose: the class's or
    ``forward``'s docstring, or a comment directly above the call's line or at its end?"""
    docstrings = [text for text in (classdef.get_docstring(), method.get_docstring()) if text]
    if any(_ALWAYS_ON.search(text) for text in docstrings):
        return True
    comments = edits.comments_at(line) if line is not None else []
    return any(_ALWAYS_ON.search(text) or _RANDOM_ON_PURPOSE.search(text) for text in comments)


def _passes_training(call: cst.Call) -> bool:
    if edits.keyword(call, "training") is not None:
        return True
    return sum(1 for arg in call.args if arg.keyword is None) > DROPOUT_TRAINING_INDEX


def _under_training_test(method: cst.FunctionDef, call: cst.Call, this: str) -> bool:
    """Is ``call`` in the body of an ``if`` whose test reads ``self.training`` (``if
    self.dropout > 0 and self.training:``)? It then runs only in training, where
    the default ``training=True`` is right."""
    finder = _TrainingTests(call, this)
    method.body.visit(finder)
    return finder.found


class _TrainingTests(cst.CSTVisitor):
    def __init__(self, call: cst.Call, this: str) -> None:
        self.call, self.this, self.found = call, this, False
        self._tests = 0  # how many enclosing ``if`` bodies test ``self.training``

    def visit_If(self, node: cst.If) -> bool:
        if _reads_training(node.test, self.this):
            self._tests += 1
            node.body.visit(self)
            self._tests -= 1
            if node.orelse is not None:
                node.orelse.visit(self)  # the ``else`` runs outside training
            return False
        return True

    def visit_Call(self, node: cst.Call) -> bool:
        if node is self.call and self._tests:
            self.found = True
        return not self.found


def _reads_training(test: cst.BaseExpression, this: str) -> bool:
    """Does ``test`` hold only in training: ``self.training``, or an ``and`` with it
    (``self.p > 0 and self.training``)? An ``or`` or a ``not`` may hold in evaluation."""
    if isinstance(test, cst.BooleanOperation):
        return isinstance(test.operator, cst.And) and (
            _reads_training(test.left, this) or _reads_training(test.right, this))
    return (isinstance(test, cst.Attribute) and test.attr.value == "training"
            and isinstance(test.value, cst.Name) and test.value.value == this)


def _self_name(method: cst.FunctionDef) -> Optional[str]:
    decorators = {cst.helpers.get_full_name_for_node(d.decorator) for d in method.decorators}
    if decorators & {"staticmethod", "classmethod"}:
        return None
    params = method.params.posonly_params or method.params.params
    return params[0].name.value if params else None
