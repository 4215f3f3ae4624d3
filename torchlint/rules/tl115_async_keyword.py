"""TL115: `x.cuda(async=True)`, torch's old keyword that Python 3.7 made a syntax error."""

from typing import Optional, Set, Tuple

from torchlint.analysis.outline import Outline
from torchlint.core.legacy_syntax import (
    ARGUMENT,
    ATTRIBUTE,
    NEW_KEYWORD,
    PARAMETER,
    AsyncKeyword as AsyncSite,
    async_keyword_sites,
    original_column,
    renamable_names,
    rename_async_keywords,
)
from torchlint.rules.rule import Example, FixSafety, RepairSite, Rule, SyntaxRepair

TORCH_ARGUMENT = "`async=` is a syntax error since Python 3.7; torch 0.4 renamed it `non_blocking=`"
OWN_ARGUMENT = "`async=` is a syntax error since Python 3.7; the parameter it sets is now `non_blocking`"
OTHER_ARGUMENT = "`async=` is a syntax error since Python 3.7; rename it to what the callee expects"
PARAMETER_MESSAGE = "an `async` parameter: a syntax error since Python 3.7; torch 0.4 renamed it `non_blocking`"
NAME_MESSAGE = "`async` is a reserved keyword since Python 3.7; rename the variable (`non_blocking`)"
ATTRIBUTE_MESSAGE = "`.async` is a syntax error since Python 3.7; read it with `getattr(obj, \"async\")`"


class AsyncKeyword(Rule):
    code = "TL115"
    name = "async-keyword"
    summary = "`x.cuda(async=True)` is a syntax error since Python 3.7; use `non_blocking=True`"
    why = (
        "Torch 0.3 spelled asynchronous host-to-device copies `x.cuda(async=True)` (also `.type(..., "
        "async=)` and `.copy_(src, async=)`). Python 3.7 made `async` a reserved keyword, so such a call "
        "is a syntax error: the whole file no longer imports, and so is old code's own `async` parameter "
        "or variable (`def to_var(x, async=False)`). Torch 0.4 renamed the argument "
        "`non_blocking`, which `.cuda()`, `.to()`, `.type()` and `.copy_()` take today. torchlint reads "
        "the file with each `async` renamed, so everything else in it is checked and fixed as usual."
    )
    fix_safety = FixSafety.SOMETIMES
    fix_description = (
        "Renames the keyword `async=` to `non_blocking=` in calls of the torch methods `.cuda()`, "
        "`.to()`, `.type()` and `.copy_()`. An `async` parameter (`def to_device(x, async=False)`) or "
        "variable becomes `non_blocking`, with every use of the name in the file and the `async=` "
        "arguments of calls to the file's own functions that take it, unless the file already uses the name "
        "`non_blocking` for something else. An `async=` passed to anything else, or an attribute "
        "`obj.async`, has no fix (the new name is unknown), and the file, which Python 3 cannot parse, then "
        "gets no other fix either."
    )
    triggers = ("async",)
    references = (
        "https://github.com/pytorch/pytorch/releases/tag/v0.4.0",
    )

    flagged = (
        Example(
            """
            import torch
            x = torch.arange(4.0)
            y = x.to("cpu", async=True)
            z = x.type(torch.float64, async=True)
            buffer = torch.zeros(4)
            buffer.copy_(x, async=True)
            """,
            """
            import torch
            x = torch.arange(4.0)
            y = x.to("cpu", non_blocking=True)
            z = x.type(torch.float64, non_blocking=True)
            buffer = torch.zeros(4)
            buffer.copy_(x, non_blocking=True)
            """,
            count=3,
            runnable=True,
            python3=False,
        ),
        Example(
            """
            for inputs, target in loader:
                target = target.cuda(async=True)
                inputs = inputs.cuda(
                    async=True)
            """,
            """
            for inputs, target in loader:
                target = target.cuda(non_blocking=True)
                inputs = inputs.cuda(
                    non_blocking=True)
            """,
            count=2,
            python3=False,
        ),
        Example(
            """
            import torch


            def to_device(x, async=False):
                return x.to("cpu", non_blocking=async)


            async = True
            y = to_device(torch.ones(2), async=async)
            """,
            """
            import torch


            def to_device(x, non_blocking=False):
                return x.to("cpu", non_blocking=non_blocking)


            non_blocking = True
            y = to_device(torch.ones(2), non_blocking=non_blocking)
            """,
            count=5,
            runnable=True,
            python3=False,
        ),
        Example(
            """
            job = submit(task, async=True)  # not a torch method: no fix
            """,
            python3=False,
        ),
        Example(
            """
            copy = options.async  # an attribute: no fix
            """,
            python3=False,
        ),
    )
    accepted = (
        """
        import torch
        x = torch.ones(2).to("cpu", non_blocking=True)
        """,
        """
        async def load(batch):
            return batch
        options = {"async": True}
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A file Python parses has no `async=` keyword argument: every finding
        # comes from ``repair_syntax``, so a parsed file never needs libcst here.
        return False

    @classmethod
    def repair_syntax(cls, source: str) -> Optional[SyntaxRepair]:
        sites = async_keyword_sites(source)
        if not sites:
            return None
        # Every site is renamed so that the file parses; a site's fix is safe
        # only where the rename is exact.
        exact_names = renamable_names(source, sites)
        own_functions = {s.function for s in sites if s.role == PARAMETER and s.function} if exact_names else set()
        return SyntaxRepair(
            rename_async_keywords(source, sites),
            [RepairSite(s.line, s.column, *_report(s, exact_names, own_functions), "async", NEW_KEYWORD)
             for s in sites],
            lambda line, column: original_column(sites, line, column),
        )


def _report(site: AsyncSite, exact_names: bool, own_functions: Set[str]) -> Tuple[str, bool]:
    """The message for ``site`` and whether renaming it ``non_blocking`` is exact."""
    if site.role == ARGUMENT:
        if site.torch_method:
            return TORCH_ARGUMENT, True
        if site.method in own_functions:
            # A function of this file whose ``async`` parameter is renamed too.
            return OWN_ARGUMENT, True
        return OTHER_ARGUMENT, False
    if site.role == ATTRIBUTE:
        return ATTRIBUTE_MESSAGE, False
    return (PARAMETER_MESSAGE if site.role == PARAMETER else NAME_MESSAGE), exact_names
