"""TL104: F.sigmoid / F.tanh -> torch.sigmoid / torch.tanh."""

import re

from torchlint.core.settings import versions
from torchlint.knowledge.torch_api import Rename, renames_for
from torchlint.rules._renames import RenamedSymbolRule
from torchlint.rules.rule import Example, FixSafety


class FunctionalSigmoidTanh(RenamedSymbolRule):
    code = "TL104"
    name = "functional-sigmoid-tanh"
    summary = "`F.sigmoid` / `F.tanh` are deprecated aliases; use `torch.sigmoid` / `torch.tanh`"
    why = (
        "From torch 0.4.1 until 1.13, `torch.nn.functional.sigmoid` and `tanh` warned that they are "
        "deprecated in favour of `torch.sigmoid` and `torch.tanh`; the warning was dropped in 2.0 "
        "(pytorch/pytorch#86905) but the functions remain aliases. The results are identical: this is a "
        "cosmetic rule that matters for code still run on torch < 2.0."
    )
    fix_safety = FixSafety.SAFE
    fix_description = (
        "Rewrites the reference to `torch.sigmoid` / `torch.tanh`, spelled the way the file imports torch "
        "(`th.sigmoid` after `import torch as th`); adds `import torch` when the file binds no `torch`. "
        "`from torch.nn.functional import sigmoid` becomes `from torch import sigmoid`."
    )
    # An attribute reference not spelled ``torch.sigmoid``, or the bare name
    # in an import list; and the functional module somewhere.
    triggers = (
        re.compile(r"(?<!torch)\.(?:sigmoid|tanh)\b"),
        re.compile(r"(?:^|[\s,(])(?:sigmoid|tanh)\s*(?:,|\)|$|\bas\b)", re.MULTILINE),
    )
    requires = ("functional",)
    torch_versions = versions(until="2.0")  # torch 2.x no longer warns
    RENAMES = renames_for("TL104")

    def message(self, rename: Rename) -> str:
        return f"`F.{rename.old_attr}` is a deprecated alias; use `torch.{rename.new_attr}`"

    references = (
        "https://pytorch.org/docs/stable/generated/torch.sigmoid.html",
        "https://pytorch.org/docs/stable/generated/torch.tanh.html",
    )
    flagged = (
        Example(
            """
            import torch
            import torch.nn.functional as F
            x = torch.linspace(-3, 3, 7)
            y = F.sigmoid(x) + F.tanh(x)
            """,
            """
            import torch
            x = torch.linspace(-3, 3, 7)
            y = torch.sigmoid(x) + torch.tanh(x)
            """,
            count=2,
            runnable=True,
        ),
        Example(
            """
            import torch.nn.functional as F


            def gate(x):
                return F.sigmoid(x)
            """,
            """
            import torch


            def gate(x):
                return torch.sigmoid(x)
            """,
        ),
        Example(
            """
            from torch.nn.functional import relu, tanh
            y = tanh(relu(x))
            """,
            """
            from torch.nn.functional import relu
            from torch import tanh
            y = tanh(relu(x))
            """,
        ),
    )
    accepted = (
        """
        import torch
        y = torch.sigmoid(x)
        """,
        """
        import torch.nn as nn
        act = nn.Sigmoid()
        """,
        """
        import numpy as F
        y = F.tanh(0.5)
        """,
    )
