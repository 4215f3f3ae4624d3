"""TL113: `torchvision.transforms.v2.ToTensor` is deprecated."""

from __future__ import annotations

import re
from typing import Iterator

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Names, Outline, references_to
from torchlint.core.settings import versions
from torchlint.knowledge.torchvision_api import (
    V2_TO_IMAGE_TORCH,
    V2_TO_TENSOR_REPLACEMENTS,
)
from torchlint.rules.rule import Example, Finding, Rule, fitting

_REPLACED = Names(V2_TO_TENSOR_REPLACEMENTS)
_NAMES = frozenset(name.rsplit(".", 1)[1] for name in V2_TO_TENSOR_REPLACEMENTS)


class V2ToTensor(Rule):
    code = "TL113"
    name = "transforms-v2-to-tensor"
    summary = (
        "`torchvision.transforms.v2.ToTensor` is deprecated; use "
        "`v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`"
    )
    why = (
        "In the v2 transforms (torchvision 0.16 and later) `ToTensor` and `functional.to_tensor` are deprecated "
        "and warn on use: they exist only to ease porting from v1, and will be removed. Their job is split in "
        "two: `v2.ToImage()` turns a PIL image or NumPy array into a `tv_tensors.Image` (uint8, channels "
        "first), and `v2.ToDtype(torch.float32, scale=True)` converts it to floats in [0, 1], so "
        "`v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])` (in a pipeline, usually as two "
        "steps of the existing `Compose`) replaces `v2.ToTensor()`; for the function, "
        "`to_dtype(to_image(x), dtype=torch.float32, scale=True)`. The output equals the old one up to float "
        "rounding but is an `Image` (a Tensor subclass) rather than a plain tensor, and where the pipeline "
        "needs the steps depends on the transforms around it, so no fix is applied. The v1 "
        "`torchvision.transforms.ToTensor` is not deprecated and is not reported. The replacements exist from "
        "torchvision 0.16, which pairs with torch 2.1: with `--torch-version` older than 2.1 the rule is off."
    )
    triggers = ("torchvision",)
    requires = (re.compile(r"ToTensor|to_tensor"),)
    torch_versions = versions(since=V2_TO_IMAGE_TORCH)
    references = ("https://pytorch.org/vision/stable/generated/torchvision.transforms.v2.ToTensor.html",)

    flagged = (
        Example(
            """
            from torchvision.transforms import v2
            transform = v2.Compose([v2.RandomHorizontalFlip(), v2.ToTensor()])
            """,
        ),
        Example(
            """
            import torchvision.transforms.v2 as T
            from torchvision.transforms.v2 import ToTensor
            from torchvision.transforms.v2.functional import to_tensor
            steps = [T.Resize(256), T.ToTensor()]
            image = to_tensor(picture)
            """,
            count=3,
        ),
    )
    accepted = (
        """
        import torch
        from torchvision.transforms import v2
        transform = v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])
        """,
        """
        from torchvision import transforms
        from torchvision.transforms.functional import to_tensor
        transform = transforms.Compose([transforms.ToTensor()])  # v1 is not deprecated
        image = to_tensor(picture)
        """,
        """
        class ToTensor:
            def __call__(self, x):
                return x
        transform = ToTensor()
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # An attribute chain resolving through an import to a deprecated name, or a from-import of one.
        return references_to(outline, _REPLACED)

    def check_Attribute(self, node: cst.Attribute, ctx: NodeContext) -> Iterator[Finding]:
        if node.attr.value in _NAMES:
            qualified = ctx.resolver.resolve(node)
            if qualified in V2_TO_TENSOR_REPLACEMENTS:
                yield Finding(node, _message(qualified))

    def check_ImportFrom(self, node: cst.ImportFrom, ctx: NodeContext) -> Iterator[Finding]:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = cst.helpers.get_full_name_for_node(node.module)
        for alias in node.names:
            qualified = f"{module}.{cst.helpers.get_full_name_for_node(alias.name)}"
            if qualified in V2_TO_TENSOR_REPLACEMENTS:
                yield Finding(alias, _message(qualified))


def _message(qualified: str) -> str:
    name = qualified[len("torchvision.transforms."):]
    replacement = V2_TO_TENSOR_REPLACEMENTS[qualified]
    return fitting(f"`{name}` is deprecated since torchvision 0.16; use `{replacement}`",
                   f"`{name}` is deprecated; use `{replacement}`",
                   f"`{name}` is deprecated since torchvision 0.16")
