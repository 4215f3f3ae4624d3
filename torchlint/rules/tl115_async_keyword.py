"""TL115: `x.cuda(async=True)`, torch's old keyword that Python 3.7 made a syntax error."""

from typing import Optional

from torchlint.analysis.outline import Outline
from torchlint.core.legacy_syntax import (
    NEW_KEYWORD,
    async_keyword_sites,
    original_column,
    rename_async_keywords,
)
from torchlint.rules.rule import Example, FixSafety, RepairSite, Rule, SyntaxRepair

MESSAGES = {
    True: "`async=` is a syntax error since Python 3.7; torch 0.4 renamed it `non_blocking=`",
    False: "`async=` is a syntax error since Python 3.7; rename it to what the callee expects",
}


class AsyncKeyword(Rule):
    code = "TL115"
    name = "async-keyword"
    summary = "`x.cuda(async=True)` is a syntax error since Python 3.7; use `non_blocking=True`"
    why = (
        "Torch 0.3 spelled asynchronous host-to-device copies `x.cuda(async=True)` (also `.type(..., "
        "async=)` and `.copy_(src, async=)`). Python 3.7 made `async` a reserved keyword, so such a call "
        "is a syntax error: the whole file no longer imports. Torch 0.4 renamed the argument "
        "`non_blocking`, which `.cuda()`, `.to()`, `.type()` and `.copy_()` take today. torchlint reads "
        "the file with the keyword renamed, so everything else in it is checked and fixed as usual."
    )
    fix_safety = FixSafety.SOMETIMES
    fix_description = (
        "Renames the keyword `async=` to `non_blocking=` in calls of the torch methods `.cuda()`, "
        "`.to()`, `.type()` and `.copy_()`. In a call of anything else the finding has no fix (the callee's "
        "new keyword is unknown), and the file, which Python 3 cannot parse, gets no other fix either."
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
            job = submit(task, async=True)  # not a torch method: no fix
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
        return SyntaxRepair(
            rename_async_keywords(source, sites),
            [RepairSite(s.line, s.column, MESSAGES[s.torch_method], s.torch_method, "async", NEW_KEYWORD) for s in sites],
            lambda line, column: original_column(sites, line, column),
        )
