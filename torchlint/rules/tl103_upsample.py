"""TL103: F.upsample* is deprecated in favour of F.interpolate."""

from torchlint.knowledge.torch_api import Rename, renames_for
from torchlint.rules._renames import RenamedSymbolRule
from torchlint.rules.rule import Example, FixSafety, fitting


class DeprecatedUpsample(RenamedSymbolRule):
    code = "TL103"
    name = "deprecated-upsample"
    summary = "`F.upsample`, `upsample_nearest` and `upsample_bilinear` are deprecated; use `F.interpolate`"
    why = (
        "`torch.nn.functional.upsample` and its `_nearest` / `_bilinear` variants warn on every call "
        "since torch 0.4.1. `F.interpolate` does the same work; `upsample_nearest` is "
        "`interpolate(..., mode='nearest')` and `upsample_bilinear` is "
        "`interpolate(..., mode='bilinear', align_corners=True)` (with `align_corners=False` the "
        "results differ, so the fix spells it out)."
    )
    fix_safety = FixSafety.SAFE
    fix_description = (
        "Renames the call to `interpolate` and adds the `mode` (and `align_corners`) keywords the old "
        "function implied; a from-import inside a function is rewritten together with its uses (a module-level "
        "one is flagged without a fix: other modules may import the name from there and call it without the "
        "keywords). A reference that is not "
        "called (e.g. stored in a variable) to `upsample_nearest`/`upsample_bilinear` is flagged without a fix."
    )
    triggers = ("upsample",)
    RENAMES = renames_for("TL103")

    def message(self, rename: Rename) -> str:
        extra = "".join(f", {k}={v}" for k, v in rename.extra_keywords)
        return fitting(f"`{rename.old_attr}` is deprecated; use `interpolate(...{extra})`",
                       f"`{rename.old_attr}` is deprecated: `interpolate(...{extra})`")

    references = (
        "https://pytorch.org/docs/stable/generated/torch.nn.functional.upsample.html",
        "https://pytorch.org/docs/stable/generated/torch.nn.functional.interpolate.html",
    )
    flagged = (
        Example(
            """
            import torch
            import torch.nn.functional as F
            x = torch.arange(16.0).reshape(1, 1, 4, 4)
            y = F.upsample(x, scale_factor=2, mode="bilinear", align_corners=False)
            """,
            """
            import torch
            import torch.nn.functional as F
            x = torch.arange(16.0).reshape(1, 1, 4, 4)
            y = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
            """,
            runnable=True,
        ),
        Example(
            """
            import torch
            from torch.nn import functional as fn
            x = torch.arange(16.0).reshape(1, 1, 4, 4)
            y = fn.upsample_nearest(x, scale_factor=2)
            z = fn.upsample_bilinear(x, size=(7, 7))
            """,
            """
            import torch
            from torch.nn import functional as fn
            x = torch.arange(16.0).reshape(1, 1, 4, 4)
            y = fn.interpolate(x, scale_factor=2, mode='nearest')
            z = fn.interpolate(x, size=(7, 7), mode='bilinear', align_corners=True)
            """,
            count=2,
            runnable=True,
        ),
        Example(
            """
            import torch


            def upscale(x):
                from torch.nn.functional import upsample_bilinear
                return upsample_bilinear(x, scale_factor=2)


            y = upscale(torch.arange(16.0).reshape(1, 1, 4, 4))
            """,
            """
            import torch


            def upscale(x):
                from torch.nn.functional import interpolate
                return interpolate(x, scale_factor=2, mode='bilinear', align_corners=True)


            y = upscale(torch.arange(16.0).reshape(1, 1, 4, 4))
            """,
            runnable=True,
        ),
        Example(
            # Module level: other modules may star-import `upsample_bilinear`
            # from here and call it without `mode=`: no fix.
            """
            from torch.nn.functional import upsample_bilinear
            y = upsample_bilinear(x, scale_factor=2)
            """,
        ),
        Example(
            """
            import torch.nn as nn
            up = nn.functional.upsample_nearest  # not called: no fix
            """,
        ),
    )
    accepted = (
        """
        import torch.nn.functional as F
        y = F.interpolate(x, scale_factor=2)
        """,
        """
        import torch.nn as nn
        up = nn.Upsample(scale_factor=2)  # the module is not deprecated
        """,
        """
        class F:
            @staticmethod
            def upsample(x):
                return x
        y = F.upsample(1)
        """,
    )
