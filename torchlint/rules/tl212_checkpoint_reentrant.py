"""TL212: `torch.utils.checkpoint.checkpoint(...)` without an explicit `use_reentrant=`."""


from typing import Iterator

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Outline, calls_resolving_to, keyword_value
from torchlint.analysis.screens import CallWithout
from torchlint.core.diagnostic import Edit, Fix
from torchlint.core.settings import versions
from torchlint.knowledge.torch_api import CHECKPOINT_FUNCTIONS
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule


class CheckpointWithoutUseReentrant(Rule):
    code = "TL212"
    name = "checkpoint-without-use-reentrant"
    summary = "`checkpoint(...)` / `checkpoint_sequential(...)` without `use_reentrant=` warns; pass it explicitly"
    why = (
        "`torch.utils.checkpoint` has two implementations. Called without `use_reentrant=`, "
        "`checkpoint` and `checkpoint_sequential` warn on every call (\"the use_reentrant parameter should "
        "be passed explicitly\") and fall back to the reentrant one, whose default torch has announced it "
        "will stop choosing for you. The reentrant variant ignores inputs that do not require grad when "
        "deciding whether to record a graph, does not work with `torch.autograd.grad` and needs at least "
        "one input that requires grad; `use_reentrant=False` is what torch recommends. Calls that pass "
        "`**kwargs` are not flagged (the keyword may be in them). `checkpoint` accepts the argument since "
        "torch 1.11 and `checkpoint_sequential` since 2.0; with an older `--torch-version` the "
        "corresponding calls are not flagged."
    )
    fix_safety = FixSafety.SAFE
    fix_description = (
        "Adds `use_reentrant=True`, the value torch uses today when the argument is missing, so behaviour "
        "is unchanged and the warning goes away. Switching to the recommended `use_reentrant=False` is a "
        "decision to make by hand: it changes which inputs need grad and how RNG state and hooks behave."
    )
    triggers = (CallWithout("checkpoint|checkpoint_sequential", "use_reentrant"),)
    requires = ("utils",)  # torch.utils.checkpoint, however imported
    torch_versions = versions(since="1.11")
    # ``use_reentrant=`` arrived in torch 1.11: a call without it in a branch a torch-version
    # gate chooses (``if is_torch_version(">=", "1.11.0"): ... else: checkpoint(f, x)``) is
    # the spelling the older torch needs.
    version_gated = True

    references = (
        "https://pytorch.org/docs/stable/checkpoint.html",
    )
    flagged = (
        Example(
            """
            import torch
            from torch.utils.checkpoint import checkpoint


            def block(t):
                return torch.tanh(t) * 2


            x = torch.randn(4, requires_grad=True)
            y = checkpoint(block, x)
            y.sum().backward()
            grad = x.grad
            """,
            """
            import torch
            from torch.utils.checkpoint import checkpoint


            def block(t):
                return torch.tanh(t) * 2


            x = torch.randn(4, requires_grad=True)
            y = checkpoint(block, x, use_reentrant=True)
            y.sum().backward()
            grad = x.grad
            """,
            runnable=True,
        ),
        Example(
            """
            import torch
            import torch.nn as nn
            import torch.utils.checkpoint as cp
            model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
            x = torch.randn(2, 3, requires_grad=True)
            out = cp.checkpoint_sequential(model, 2, x)
            """,
            """
            import torch
            import torch.nn as nn
            import torch.utils.checkpoint as cp
            model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
            x = torch.randn(2, 3, requires_grad=True)
            out = cp.checkpoint_sequential(model, 2, x, use_reentrant=True)
            """,
            runnable=True,
        ),
        Example(
            """
            import torch


            class Net(torch.nn.Module):
                def forward(self, x):
                    return torch.utils.checkpoint.checkpoint(
                        self.block,
                        x,
                        preserve_rng_state=False,
                    )
            """,
            """
            import torch


            class Net(torch.nn.Module):
                def forward(self, x):
                    return torch.utils.checkpoint.checkpoint(
                        self.block,
                        x,
                        preserve_rng_state=False,
                        use_reentrant=True,
                    )
            """,
        ),
    )
    accepted = (
        """
        from torch.utils.checkpoint import checkpoint
        y = checkpoint(block, x, use_reentrant=False)
        """,
        """
        import torch.utils.checkpoint as cp
        y = cp.checkpoint(block, x, **options)  # may carry use_reentrant
        """,
        """
        from myproject.training import checkpoint
        checkpoint(model, "weights.pt")
        """,
        """
        def checkpoint(model, path):
            pass


        checkpoint(None, "weights.pt")
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A call of torch.utils.checkpoint.checkpoint(_sequential) (however imported)
        # without ``use_reentrant=`` or ``**kwargs``.
        return any(
            keyword_value(call, "use_reentrant") is None and all(k.arg is not None for k in call.keywords)
            for call in calls_resolving_to(outline, CHECKPOINT_FUNCTIONS)
        )

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        callee = ctx.resolver.resolve(node.func)
        since = CHECKPOINT_FUNCTIONS.get(callee) if callee else None
        if since is None or not versions(since=since).applies_to(ctx.file.settings.torch_version):
            return
        if edits.keyword(node, "use_reentrant") is not None or any(arg.star == "**" for arg in node.args):
            return
        short = callee.rsplit(".", 1)[1]
        yield Finding(
            node,
            f"`{short}` without `use_reentrant=` relies on a default torch plans to change",
            Fix([Edit(node, edits.add_keywords((("use_reentrant", "True"),)))]),
            detail="torch warns; pass it explicitly (`False` is recommended, `True` keeps today's behaviour)",
        )
