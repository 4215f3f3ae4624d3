"""TL304 (opt-in): pitfalls of the global `torch.backends.cudnn` switches."""

from __future__ import annotations

import ast
from typing import Iterator, Optional, Set

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Outline, calls_resolving_to, resolved_names
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.torch_api import CUDNN, CUDNN_FLAGS
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting

# Variable-length sequence utilities: their presence means input shapes vary.
VARYING_SHAPES = frozenset({
    "torch.nn.utils.rnn.pack_padded_sequence", "torch.nn.utils.rnn.pad_sequence",
    "torch.nn.utils.rnn.pack_sequence", "torch.nested.nested_tensor", "torch.nested.as_nested_tensor",
})
_LOWERCASE = {"true": "True", "false": "False"}


class CudnnFlags(Rule):
    code = "TL304"
    gathers = ("Assign", "Call")  # the flags the file sets, and whether input shapes vary
    name = "cudnn-global-flags"
    summary = (
        "`torch.backends.cudnn.enabled = False`, `benchmark = true` (an undefined name), and `benchmark = True` "
        "where it cannot help or defeats `deterministic = True` (opt-in)"
    )
    why = (
        "`torch.backends.cudnn.enabled = False` is often suggested as the cure for "
        "`CUDNN_STATUS_EXECUTION_FAILED` and for GPUs cuDNN does not support. It switches cuDNN off for the "
        "whole process, so every convolution and RNN falls back to much slower kernels, and the error it "
        "silences is usually a real bug (inputs and model on different devices, an out-of-range index) that "
        "`CUDA_LAUNCH_BLOCKING=1` would locate; scope it with `with torch.backends.cudnn.flags(enabled=False):` "
        "around the one operation that needs it. Snippets online also write `torch.backends.cudnn.benchmark = true`: "
        "lowercase `true` is an undefined name and the line raises NameError. `benchmark = True` times several "
        "convolution algorithms for every new input shape and caches the fastest: a win for fixed shapes, a "
        "loss when shapes keep changing (variable-length sequences, as the use of `pack_padded_sequence`, "
        "`pad_sequence` or nested tensors shows, or varying image sizes), where it re-runs the search for each "
        "shape; and together with `deterministic = True` it undoes the reproducibility asked for, because the "
        "algorithm chosen can differ from run to run (reproducible runs need `benchmark = False`). These are "
        "global, context-dependent settings, so the rule is opt-in."
    )
    fix_safety = FixSafety.UNSAFE
    fix_description = (
        "Only `true` / `false` are fixed, to `True` / `False`: the line stops raising NameError, which changes "
        "behaviour (hence unsafe). The other findings are advice with no mechanical rewrite."
    )
    triggers = ("cudnn",)
    enabled_by_default = False
    whole_file = True  # what the file does with cuDNN is a fact of the whole file
    references = (
        "https://pytorch.org/docs/stable/notes/randomness.html#cuda-convolution-benchmarking",
        "https://pytorch.org/docs/stable/backends.html#torch-backends-cudnn",
    )

    flagged = (
        Example(
            """
            import torch
            torch.backends.cudnn.benchmark = true
            """,
            """
            import torch
            torch.backends.cudnn.benchmark = True
            """,
            runnable=True,
            raises="NameError",
        ),
        Example(
            """
            import torch.backends.cudnn as cudnn
            cudnn.enabled = False  # "fixes" CUDNN_STATUS_EXECUTION_FAILED
            """,
        ),
        Example(
            """
            import torch
            from torch.backends import cudnn

            def seed_everything(seed):
                torch.manual_seed(seed)
                cudnn.deterministic = True
                cudnn.benchmark = True
            """,
        ),
        Example(
            """
            import torch
            from torch.nn.utils.rnn import pack_padded_sequence
            torch.backends.cudnn.benchmark = True
            packed = pack_padded_sequence(embedded, lengths, batch_first=True)
            """,
        ),
    )
    accepted = (
        """
        import torch
        torch.backends.cudnn.benchmark = True  # fixed-size inputs: the intended use
        torch.backends.cudnn.enabled = True
        torch.backends.cudnn.allow_tf32 = False
        """,
        """
        import torch
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        with torch.backends.cudnn.flags(enabled=False):
            y = model(x)
        """,
        """
        import torch
        true = 1
        torch.backends.cudnn.benchmark = true  # a defined name, whatever it is
        """,
        """
        class Settings:
            enabled = True
        cudnn = Settings()
        cudnn.enabled = False  # not torch
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # An assignment to torch.backends.cudnn.<flag> (however imported) of lowercase
        # ``true``/``false``, of False/0 to ``enabled``, or of True/1 to ``benchmark`` in a
        # file that also sets ``deterministic`` to True or uses a variable-shape utility.
        values = _flag_assignments(outline)
        for flag, value in values:
            if isinstance(value, ast.Name) and value.id in _LOWERCASE:
                return True
            if flag == "enabled" and _ast_bool(value) is False:
                return True
        if any(flag == "benchmark" and _ast_bool(value) is True for flag, value in values):
            return any(flag == "deterministic" and _ast_bool(value) is True for flag, value in values) or bool(
                calls_resolving_to(outline, VARYING_SHAPES))
        return False

    def check_Assign(self, node: cst.Assign, ctx: NodeContext) -> Iterator[Finding]:
        for target in node.targets:
            flag = _cudnn_flag(target.target, ctx)
            if flag is not None:
                yield from self._check(target.target, flag, node.value, ctx)

    def _check(self, target: cst.BaseExpression, flag: str, value: cst.BaseExpression,
               ctx: NodeContext) -> Iterator[Finding]:
        spelled = edits.expression_code(target)
        if isinstance(value, cst.Name) and value.value in _LOWERCASE and ctx.resolver.is_unbound(value.value, value):
            fixed = _LOWERCASE[value.value]
            yield Finding(
                target,
                fitting(f"`{spelled} = {value.value}` raises NameError: `{value.value}` is not defined; use `{fixed}`",
                        f"`{value.value}` is not defined (NameError); use `{fixed}`"),
                Fix([Edit(value, lambda n: n.with_changes(value=fixed))], safe=False),
            )
            return
        literal = _literal_bool(value)
        if flag == "enabled" and literal is False:
            yield Finding(
                target,
                fitting(f"`{spelled} = {edits.expression_code(value)}` turns cuDNN off for the whole process",
                        "this turns cuDNN off for the whole process"),
                detail="slow convolutions and RNNs, and it usually hides a real error; scope it with "
                       "`torch.backends.cudnn.flags(enabled=False)`",
            )
        elif flag == "benchmark" and literal is True:
            facts = ctx.file.memo(("TL304", "facts"), lambda: _file_facts(ctx))
            if "deterministic" in facts.true_flags:
                yield Finding(
                    target,
                    "`benchmark = True` next to `deterministic = True`: runs are not reproducible",
                    detail="benchmarking may pick a different algorithm on each run; set `benchmark = False`",
                )
            elif facts.varying_shapes:
                yield Finding(
                    target,
                    "`benchmark = True` with varying input shapes re-runs the search for each new shape",
                    detail=f"input shapes vary here ({facts.varying_shapes}); benchmarking pays off only when "
                           "shapes repeat",
                )


def _flag_assignments(outline: Outline):  # type: ignore[no-untyped-def]
    """(flag, value) for each ``torch.backends.cudnn.<flag> = value``."""
    found = []
    for node in outline.nodes(ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Attribute) and target.attr in CUDNN_FLAGS:
                if any(name == CUDNN + target.attr for name in resolved_names(outline, target)):
                    found.append((target.attr, node.value))
    return found


def _ast_bool(node: ast.AST) -> Optional[bool]:
    """``_literal_bool`` on Python's tree: True/False, 0/1."""
    if isinstance(node, ast.Constant) and type(node.value) in (bool, int) and node.value in (0, 1):
        return bool(node.value)
    return None


def _cudnn_flag(target: cst.BaseExpression, ctx: NodeContext) -> Optional[str]:
    if not isinstance(target, cst.Attribute) or target.attr.value not in CUDNN_FLAGS:
        return None
    qualified = ctx.resolver.resolve(target)
    if qualified is None or not qualified.startswith(CUDNN):
        return None
    flag = qualified[len(CUDNN):]
    return flag if flag in CUDNN_FLAGS else None


def _literal_bool(expr: cst.BaseExpression) -> Optional[bool]:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    if isinstance(expr, cst.Integer) and expr.evaluated_value in (0, 1):
        return bool(expr.evaluated_value)
    return None


class _Facts:
    def __init__(self) -> None:
        self.true_flags: Set[str] = set()  # cudnn flags set to True somewhere in the file
        self.varying_shapes: str = ""  # the first variable-shape utility the file uses


def _file_facts(ctx: NodeContext) -> _Facts:
    facts = _Facts()
    for node in ctx.file.nodes(cst.Assign):
        for target in node.targets:  # type: ignore[attr-defined]
            flag = _cudnn_flag(target.target, ctx)
            if flag is not None and _literal_bool(node.value) is True:  # type: ignore[attr-defined]
                facts.true_flags.add(flag)
    for call in ctx.file.nodes(cst.Call):
        qualified = ctx.resolver.resolve(call.func)  # type: ignore[attr-defined]
        if qualified in VARYING_SHAPES:
            facts.varying_shapes = qualified.rsplit(".", 1)[1]
            break
    return facts
