"""TL105: nn.init.X -> nn.init.X_."""

import re

from torchlint.knowledge.torch_api import Rename, renames_for
from torchlint.rules._renames import RenamedSymbolRule
from torchlint.rules.rule import Example, FixSafety


class InitWithoutUnderscore(RenamedSymbolRule):
    code = "TL105"
    name = "deprecated-init-function"
    summary = "`nn.init.xavier_uniform` and friends are deprecated; use the in-place `xavier_uniform_`"
    why = (
        "Since torch 0.4 the initialisers in `torch.nn.init` are in-place functions with a trailing "
        "underscore. The old names (`uniform`, `normal`, `constant`, `eye`, `dirac`, `xavier_uniform`, "
        "`xavier_normal`, `kaiming_uniform`, `kaiming_normal`, `orthogonal`, `sparse`) emit a "
        "FutureWarning on every call. The underscored functions take the same arguments and draw the "
        "same random numbers. A reference that is not called, in a file that patches `torch.nn.init` "
        "(`setattr(torch.nn.init, name, skip)`), is the original function kept to be put back: not flagged."
    )
    fix_safety = FixSafety.SAFE
    fix_description = (
        "Appends the underscore in attribute references. A from-import inside a function is renamed with its "
        "uses; a module-level one (or one the function declares `global`) keeps its name bound (`from "
        "torch.nn.init import normal_ as normal`), since other modules may import it from there (`from "
        ".imports import *`, `__all__`), and so does one in a class body (read as `Box.normal`)."
    )
    # A deprecated name (``normal``, not ``normal_``) and the init module.
    triggers = (re.compile(r"\b(?:uniform|normal|constant|eye|dirac|xavier_uniform|xavier_normal|"
                           r"kaiming_uniform|kaiming_normal|orthogonal|sparse)\b"),)
    requires = (re.compile(r"\binit\b"),)
    RENAMES = renames_for("TL105")

    def message(self, rename: Rename) -> str:
        return f"`init.{rename.old_attr}` is deprecated; use `init.{rename.new_attr}`"

    references = (
        "https://pytorch.org/docs/stable/nn.init.html",
    )
    flagged = (
        Example(
            """
            import torch
            import torch.nn as nn
            torch.manual_seed(0)
            w = torch.empty(3, 5)
            nn.init.xavier_uniform(w, gain=2.0)
            """,
            """
            import torch
            import torch.nn as nn
            torch.manual_seed(0)
            w = torch.empty(3, 5)
            nn.init.xavier_uniform_(w, gain=2.0)
            """,
            runnable=True,
        ),
        Example(
            """
            import torch
            from torch.nn import init
            torch.manual_seed(0)
            w = torch.empty(4, 4)
            init.kaiming_normal(w)
            init.constant(w[0], 0.5)
            """,
            """
            import torch
            from torch.nn import init
            torch.manual_seed(0)
            w = torch.empty(4, 4)
            init.kaiming_normal_(w)
            init.constant_(w[0], 0.5)
            """,
            count=2,
            runnable=True,
        ),
        Example(
            """
            import torch
            from torch.nn.init import orthogonal, normal as gauss
            torch.manual_seed(0)
            w = torch.empty(4, 4)
            orthogonal(w)
            gauss(w, std=0.1)
            """,
            """
            import torch
            from torch.nn.init import orthogonal_ as orthogonal, normal_ as gauss
            torch.manual_seed(0)
            w = torch.empty(4, 4)
            orthogonal(w)
            gauss(w, std=0.1)
            """,
            count=2,
            runnable=True,
        ),
    )
    accepted = (
        """
        import torch.nn as nn
        nn.init.xavier_uniform_(w)
        nn.init.zeros_(b)
        """,
        """
        import numpy as np
        w = np.random.normal(size=3)
        """,
        """
        from mylib import init
        init.normal(w)
        """,
        """
        import torch
        import torch.nn as nn

        ORIGINALS = {"normal": nn.init.normal, "normal_": nn.init.normal_}  # kept to be put back


        def skip_init():
            for name in ORIGINALS:
                setattr(torch.nn.init, name, lambda *args, **kwargs: None)


        def restore_init():
            for name, function in ORIGINALS.items():
                setattr(torch.nn.init, name, function)
        """,
    )
