"""TL117 (opt-in): torch APIs deprecated in their docs only, with no exact fix (`torch.norm`, `torch.svd`)."""

from torchlint.knowledge.deprecations import Deprecation, Status, reported_entries
from torchlint.rules._deprecated import DeprecatedApiRule, deprecated_message, entry_table, split_replacement
from torchlint.rules.rule import Example, FixSafety


class DocumentedTorchDeprecation(DeprecatedApiRule):
    code = "TL117"
    name = "documented-torch-deprecation"
    summary = "`torch.norm`, `torch.svd` and other APIs deprecated in the docs only, with no exact fix (opt-in)"
    why = (
        "Some torch APIs are deprecated in their documentation but torch neither warns when they are used nor "
        "says when they go: `torch.norm` (\"deprecated and may be removed in a future PyTorch release\"; use "
        "`torch.linalg.vector_norm` or `torch.linalg.matrix_norm`), `torch.svd` (use `torch.linalg.svd`, "
        "which returns Vh where svd returned V), and APIs marked deprecated for type checkers only. The "
        "match is certain (the name is resolved through the file's imports), but the finding is advice "
        "without a deadline and no fix can be exact: which replacement is right depends on the input. "
        "`torch.norm` is everywhere in working model code, so these entries are opt-in: TL109 reports the "
        "deprecations torch signals itself (it warns or raises) or that have an exact fix. The table says "
        "why each entry is opt-in."
    )
    fix_safety = FixSafety.UNSAFE
    fix_description = (
        "Only `torch.norm(x)` with no other argument, the whole tensor's 2-norm, is rewritten: to "
        "`torch.linalg.vector_norm(x)`, which is what torch.norm calls for strided CPU and CUDA tensors. "
        "Unsafe: for sparse or MPS tensors torch.norm takes another path, which vector_norm may not "
        "support. Every other use needs a human decision at the call site.\n\n"
        + entry_table(reported_entries(Status.DEPRECATED, opt_in=True))
    )
    STATUS = Status.DEPRECATED
    OPT_IN = True
    enabled_by_default = False

    def message(self, entry: Deprecation) -> str:  # type: ignore[override]
        return deprecated_message(entry)

    def detail(self, entry: Deprecation) -> str:  # type: ignore[override]
        return split_replacement(entry.replacement)[1]

    references = (
        "https://pytorch.org/docs/stable/generated/torch.norm.html",
        "https://pytorch.org/docs/stable/generated/torch.svd.html",
    )
    flagged = (
        Example(
            """
            import torch
            x = torch.arange(12.0).reshape(3, 4)
            size = torch.norm(x)
            """,
            """
            import torch
            x = torch.arange(12.0).reshape(3, 4)
            size = torch.linalg.vector_norm(x)
            """,
            runnable=True,
            silent=True,
        ),
        Example(
            """
            import torch
            rows = torch.norm(torch.ones(3, 2), dim=1)  # vector_norm or matrix_norm: a human decides
            U, S, V = torch.svd(torch.eye(2))  # linalg.svd returns Vh, not V
            """,
            count=2,
        ),
        Example(
            """
            from torch import norm as frobenius
            size = frobenius(weights, p=1)
            """,
        ),
    )
    accepted = (
        """
        import torch
        size = torch.linalg.vector_norm(torch.ones(3))
        U, S, Vh = torch.linalg.svd(torch.eye(2))
        """,
        """
        import numpy as np
        size = np.linalg.norm(np.ones(3))
        """,
        """
        def norm(x):
            return x
        size = norm(3)
        """,
    )
