"""TL112: torchvision model builders called with `pretrained=` / `pretrained_backbone=`."""

from __future__ import annotations

import ast
import re
from typing import Iterator, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Names, Outline, calls_to
from torchlint.core.diagnostic import Edit, Fix
from torchlint.core.settings import versions
from torchlint.knowledge.torchvision_api import (
    BUILDERS_BY_NAME,
    VARIES,
    WEIGHTS_API_TORCH,
    Builder,
)
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting

LEGACY_ARGUMENTS = {"pretrained": "weights", "pretrained_backbone": "weights_backbone"}
_BUILDERS = Names(BUILDERS_BY_NAME)


class TorchvisionPretrained(Rule):
    code = "TL112"
    name = "torchvision-pretrained-argument"
    summary = (
        "torchvision model builders called with `pretrained=` / `pretrained_backbone=`; use `weights=` / "
        "`weights_backbone=`"
    )
    why = (
        "torchvision 0.13 replaced the boolean `pretrained=` and `pretrained_backbone=` arguments of every model "
        "builder (classification, detection, segmentation, quantized, video and optical-flow models) by "
        "`weights=` and `weights_backbone=`, which name the exact weights: an enum member such as "
        "`ResNet50_Weights.IMAGENET1K_V1`, its name as a string (`weights=\"IMAGENET1K_V1\"`), or None. The old "
        "arguments still work through a compatibility layer that warns on every call and may be removed. "
        "`pretrained=True` always meant one fixed set of weights per model, its *legacy* weights (for ResNet-50 "
        "`IMAGENET1K_V1`), whereas `weights=\"DEFAULT\"` means the best weights of the installed torchvision "
        "(`IMAGENET1K_V2` for ResNet-50): a different model with different outputs. So torchlint rewrites "
        "`pretrained=True` to the legacy weights, which it knows for each builder of torchvision's model "
        "registry, and spells them as a string so that no import is needed; switch to `\"DEFAULT\"` on purpose "
        "when you want the newer weights. For quantized builders the legacy weights depend on `quantize=`, "
        "which must then be a literal. Builders with no legacy weights (`vit_h_14`, `regnet_y_128gf`) raise "
        "ValueError on `pretrained=True`, and `raft_large` loaded different weights in different releases: "
        "those are reported without a fix, as is any argument that is not a literal `True`/`False` (the "
        "message shows the conditional to write). TorchFix (TOR201) crashed on such arguments and rewrote "
        "`pretrained=True` to names it imported. torchvision 0.13 pairs with torch 1.12: with "
        "`--torch-version` older than 1.12 the rule is off, since the `weights=` API may not exist there."
    )
    fix_safety = FixSafety.SOMETIMES
    fix_description = (
        "`pretrained=True` becomes `weights=\"<legacy weights>\"` (and `pretrained_backbone=True` becomes "
        "`weights_backbone=\"<legacy backbone weights>\"`), the exact weights the old argument loaded; `False` "
        "becomes `None`. A positional `True`/`False` (the legacy first parameter) gets the `weights=` keyword. "
        "No fix where the value is not a literal, the call has `**kwargs` or already passes `weights=`, or the "
        "builder's legacy weights are not known."
    )
    triggers = ("torchvision",)
    requires = (re.compile(r"pretrained|\(\s*(?:True|False)\b"),)  # keyword, or the legacy positional flag
    torch_versions = versions(since=WEIGHTS_API_TORCH)
    references = (
        "https://pytorch.org/vision/stable/models.html",
        "https://pytorch.org/blog/introducing-torchvision-new-multi-weight-support-api/",
    )

    flagged = (
        Example(
            """
            import torchvision
            model = torchvision.models.resnet50(pretrained=True)
            """,
            """
            import torchvision
            model = torchvision.models.resnet50(weights="IMAGENET1K_V1")
            """,
        ),
        Example(
            """
            from torchvision.models import detection
            model = detection.fasterrcnn_resnet50_fpn(pretrained=False, pretrained_backbone=True, num_classes=3)
            """,
            """
            from torchvision.models import detection
            model = detection.fasterrcnn_resnet50_fpn(weights=None, weights_backbone="IMAGENET1K_V1", num_classes=3)
            """,
            count=2,
        ),
        Example(
            """
            from torchvision.models.segmentation import deeplabv3_resnet101
            from torchvision.models.quantization import mobilenet_v3_large
            import torchvision.models as models
            seg = deeplabv3_resnet101(pretrained=True)
            q = mobilenet_v3_large(pretrained=True, quantize=True)
            features = models.vgg16(True).features
            """,
            """
            from torchvision.models.segmentation import deeplabv3_resnet101
            from torchvision.models.quantization import mobilenet_v3_large
            import torchvision.models as models
            seg = deeplabv3_resnet101(weights="COCO_WITH_VOC_LABELS_V1")
            q = mobilenet_v3_large(weights="IMAGENET1K_QNNPACK_V1", quantize=True)
            features = models.vgg16(weights="IMAGENET1K_V1").features
            """,
            count=3,
        ),
        Example(
            """
            import torchvision
            def build(args):
                return torchvision.models.resnet18(pretrained=args.pretrained)
            """,
        ),
        Example(
            """
            from torchvision import models
            big = models.vit_h_14(pretrained=True)  # raises ValueError: no legacy weights
            q = models.quantization.resnet18(pretrained=True, quantize=args.quantize)
            flow = models.optical_flow.raft_large(pretrained=True)
            """,
            count=3,
        ),
    )
    accepted = (
        """
        import torchvision
        from torchvision.models import ResNet50_Weights
        a = torchvision.models.resnet50(weights=ResNet50_Weights.IMAGENET1K_V2)
        b = torchvision.models.resnet50(weights="DEFAULT")
        c = torchvision.models.detection.maskrcnn_resnet50_fpn(weights=None, weights_backbone=None)
        """,
        """
        import timm
        model = timm.create_model("resnet50", pretrained=True)  # not torchvision
        """,
        """
        def resnet50(pretrained=False):
            return pretrained
        model = resnet50(pretrained=True)  # a local builder
        """,
        """
        import torch
        model = torch.hub.load("pytorch/vision", "resnet50", weights="IMAGENET1K_V1")
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A call of a builder (through an import) spelling ``pretrained=`` /
        # ``pretrained_backbone=``, or with a literal True/False first argument.
        for call in calls_to(outline, _BUILDERS):
            if any(k.arg in LEGACY_ARGUMENTS for k in call.keywords):
                return True
            if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, bool):
                return True
        return False

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        qualified = ctx.resolver.resolve(node.func)
        builder = BUILDERS_BY_NAME.get(qualified) if qualified else None
        if builder is None:
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in LEGACY_ARGUMENTS:
                if arg.keyword.value == "pretrained_backbone" and builder.backbone is None:
                    continue  # not a parameter of this builder: a TypeError, not this rule's business
                yield self._finding(node, arg, arg.keyword.value, builder)
        positional = [arg for arg in node.args if arg.keyword is None]
        if positional and not positional[0].star and _literal_bool(positional[0].value) is not None:
            # The legacy first parameter; rewritable when no other positional follows it.
            yield self._finding(node, positional[0], "pretrained", builder, fixable=len(positional) == 1)

    def _finding(self, call: cst.Call, arg: cst.Arg, old: str, builder: Builder, fixable: bool = True) -> Finding:
        new = LEGACY_ARGUMENTS[old]
        value = _literal_bool(arg.value)
        if arg.keyword is not None:
            head = f"`{old}={_code(arg.value)}` is deprecated"
        else:
            head = f"a positional `{_code(arg.value)}` (the legacy `{old}`) is deprecated"
        detail = "deprecated since torchvision 0.13"
        if value is False:
            weights: Optional[str] = "None"
            message = f"{head}; use `{new}=None`"
        else:
            enum, member, problem = _legacy_weights(call, old, builder)
            if value is None:
                weights = None
                if member and not edits.literal_value(arg.value)[0] and not _is_number(arg.value):
                    condition = _code(arg.value)
                    if not isinstance(arg.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                        condition = f"({condition})"
                    message = f'{head}; pass `{new}="{member}" if {condition} else None`'
                    detail += f'; pass `{new}="{member}" if {condition} else None`'
                else:
                    message = f"{head}; pass `{new}=` with a `{enum}` member or None"
                    detail += f"; pass `{new}=` with a `{enum}` member or None"
            elif member is None:
                weights = None
                message = f"{head}; pass `{new}=` explicitly"
                detail += f"; {problem}: pass `{new}=` with one of `{enum}` explicitly"
            else:
                weights = f'"{member}"'
                message = f'{head}; use `{new}="{member}"`'
                detail += f'; `{new}="{member}"` is `{enum}.{member}`, the weights it loads (`"DEFAULT"` would load the newest ones)'
        message = fitting(message, f"`{old}` is deprecated; pass `{new}=` instead", f"deprecated; pass `{new}=`")
        fix = None
        if weights is not None and fixable and _can_rewrite(call, new):
            fix = Fix([Edit(arg, _set_keyword(new, weights))])
        return Finding(arg, message, fix, detail=detail)


def _legacy_weights(call: cst.Call, old: str, builder: Builder) -> Tuple[str, Optional[str], str]:
    """(enum, member that `old=True` loads), or (enum, None, why it is unknown)."""
    if old == "pretrained_backbone":
        assert builder.backbone is not None
        return builder.backbone[0], builder.backbone[1], ""
    enum = builder.weights_enum
    if builder.legacy is None:
        return enum, None, f"`{builder.name}` has no weights for `pretrained=True` (it raises ValueError)"
    if builder.legacy == VARIES:
        return enum, None, (
            f"the weights `pretrained=True` loads for `{builder.name}` differ between torchvision releases")
    if builder.quantized is not None:
        quantize = edits.keyword(call, "quantize")
        if edits.has_star_args(call) or (quantize is not None and _literal_bool(quantize.value) is None):
            return f"{enum}` or `{builder.quantized[0]}", None, (
                "the weights depend on `quantize=`, which is not a literal here")
        if quantize is not None and _literal_bool(quantize.value):
            return builder.quantized[0], builder.quantized[1], ""
    return enum, builder.legacy, ""


def _can_rewrite(call: cst.Call, new: str) -> bool:
    if any(arg.star == "**" for arg in call.args):
        return False  # the new keyword may be in there already
    return edits.keyword(call, new) is None


def _literal_bool(expr: cst.BaseExpression) -> Optional[bool]:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


def _is_number(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float))


def _code(expr: cst.BaseExpression) -> str:
    return edits.expression_code(expr)


def _set_keyword(keyword: str, value_code: str):
    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Arg)
        changes = {"keyword": cst.Name(keyword), "value": cst.parse_expression(value_code)}
        if not isinstance(node.equal, cst.AssignEqual):
            changes["equal"] = cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
            )
        return node.with_changes(**changes)

    return apply
