"""TL204: softmax, log_softmax and softmin without `dim`."""

import ast
from typing import Dict, FrozenSet, Iterator, List

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import (
    Outline,
    attributes_named,
    calls_resolving_to,
    dotted,
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
        "back (`self.softmax = nn.Softmax()`, never applied) chooses no dimension and is not flagged. A class "
        "of the file that is a softmax module with the base's constructor (`class BottleSoftmax(Bottle, "
        "nn.Softmax)`, no `__init__`, any `forward` handing on to the base's) built without arguments is "
        "flagged too."
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
            import torch.nn as nn


            class Bottle(object):
                def forward(self, input):
                    size = input.size()
                    out = super(Bottle, self).forward(input.view(size[0] * size[1], -1))
                    return out.view(size[0], size[1], -1)


            class BottleSoftmax(Bottle, nn.Softmax):  # nn.Softmax's constructor: dim=None
                pass


            softmax = BottleSoftmax()
            """,
        ),
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
        subclasses = softmax_subclasses(outline)
        return any(not call.args and not call.keywords for call in outline.calls(*subclasses)) if subclasses else False

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        callee = ctx.resolver.resolve(node.func)
        index = IMPLICIT_DIM_CALLABLES.get(callee) if callee else None
        if index is None and isinstance(node.func, cst.Name) and not node.args:
            # A class of the file that is a softmax module with its constructor: no dim either.
            definition = ctx.inference.local_definition(node.func)
            if isinstance(definition, cst.ClassDef) and definition.name.value in softmax_subclasses(
                    ctx.resolver.file_outline()):
                index = 0
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


def softmax_subclasses(outline: Outline) -> FrozenSet[str]:
    """Top-level classes of the file that are ``nn.Softmax``/``LogSoftmax``/``Softmin``
    with the base's constructor (``class BottleSoftmax(Bottle, nn.Softmax): pass``):
    built without arguments, their ``dim`` is None. Through the file's own bases
    too; not when one of them defines ``__init__`` (it may pass a dim), nor when a
    ``forward`` of theirs does not hand on to the base's (which reads ``dim``)."""
    whole = outline.whole_file
    return whole.memo("TL204 softmax subclasses", lambda: _SoftmaxClasses(whole).names())


class _SoftmaxClasses:
    """The search behind ``softmax_subclasses`` (plain methods: no closures, no cycles to collect)."""

    def __init__(self, outline: Outline) -> None:
        self.outline = outline
        self.classes = {s.name: s for s in outline.tree.body if isinstance(s, ast.ClassDef)}
        self.modules = {name for name, index in IMPLICIT_DIM_CALLABLES.items() if index == 0}
        self.found: Dict[str, bool] = {}

    def names(self) -> FrozenSet[str]:
        last_names = {name.rsplit(".", 1)[1] for name in self.modules}
        if not any((dotted(base) or "").rsplit(".", 1)[-1] in last_names
                   for node in self.classes.values() for base in node.bases):
            return frozenset()  # no class of the file names a softmax module among its bases (most files)
        return frozenset(name for name in self.classes if self.is_softmax(name, frozenset()))

    def keeps_base(self, name: str, seen: FrozenSet[str]) -> bool:
        """No ``__init__`` of its own, a ``forward`` (if any) handing on, and so for its file's bases."""
        node = self.classes[name]
        methods = {m.name: m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if "__init__" in methods or ("forward" in methods and not _hands_on(methods["forward"])):
            return False
        return all(self.keeps_base(b, seen | {name}) for b in _local_bases(node, self.classes, seen | {name}))

    def is_softmax(self, name: str, seen: FrozenSet[str]) -> bool:
        if name not in self.found:
            node = self.classes[name]
            direct = any(self.modules & set(resolved_names(self.outline, base)) for base in node.bases)
            self.found[name] = self.keeps_base(name, seen) and (direct or any(
                self.is_softmax(b, seen | {name}) for b in _local_bases(node, self.classes, seen | {name})))
        return self.found[name]


def _local_bases(node: ast.ClassDef, classes: Dict[str, ast.ClassDef], seen: FrozenSet[str]) -> List[str]:
    return [b.id for b in node.bases if isinstance(b, ast.Name) and b.id in classes and b.id not in seen]


def _hands_on(forward: ast.AST) -> bool:
    """Does this ``forward`` call the next class's (``super().forward(...)``)?"""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "forward"
               and isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name)
               and node.func.value.func.id == "super" for node in ast.walk(forward))


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
