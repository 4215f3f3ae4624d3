"""TL108: torch functions that were removed (torch.solve, symeig, potrf, ...)."""

from torchlint.knowledge.deprecations import Deprecation, Status, reported_entries
from torchlint.rules._deprecated import DeprecatedApiRule, concise_message, entry_table, split_replacement
from torchlint.rules.rule import Example, FixSafety


class RemovedTorchApi(DeprecatedApiRule):
    code = "TL108"
    name = "removed-torch-api"
    summary = "`torch.solve`, `symeig`, `eig`, `lstsq`, `cholesky`, `qr`, `potrf` and other removed functions fail"
    why = (
        "The pre-`torch.linalg` linear algebra functions were deprecated in torch 1.9 and are gone: "
        "`torch.solve`, `symeig`, `eig`, `lstsq` and `matrix_rank` (and their Tensor methods) are stubs "
        "that raise `RuntimeError`, since torch 2.14 `cholesky` and `qr` too (and `profile(use_cuda=)` "
        "raises `TypeError`), and the 0.4-era names `gels`, `gesv`, `potrf`, `potrs`, `trtrs`, "
        "`btrifact`, `btrisolve` no longer exist (`AttributeError`), nor do `set_deterministic`, "
        "`is_deterministic`, `torch._six`, `torch.utils.ffi` and `torch.legacy`. Their replacements often differ in more "
        "than the name: `torch.linalg.solve(A, B)` takes its arguments in the opposite order and returns "
        "only the solution, `linalg.eigh` reads the lower triangle by default where `symeig` read the "
        "upper, `linalg.eig` returns complex tensors, and `potrf` returned the upper Cholesky factor."
    )
    fix_safety = FixSafety.SOMETIMES
    fix_description = (
        "Rewrites only where the replacement computes exactly what the removed function did, with the old "
        "defaults spelled out where the new function's differ (`potrf` returned the upper factor). "
        "Everything else is reported with its replacement: results of a different shape or layout need a "
        "human at the call site. A from-imported name is fixed at every use (`from torch import potrf` ... "
        "`potrf(A)` -> `torch.linalg.cholesky(A, upper=True)`, the import then dropped), or not at all when "
        "one use cannot be rewritten. With `--torch-version`, "
        "entries whose replacement is newer than that version are not reported. What torch removed in a "
        "later release (`cholesky` and `qr` in 2.14) is reported here for code moving to that release or "
        "later (`--target-torch-version`, default the newest release known), and by TL109 as deprecated "
        "before.\n\n"
        + entry_table(reported_entries(Status.REMOVED, opt_in=False))
    )
    STATUS = Status.REMOVED

    def message(self, entry: Deprecation) -> str:  # type: ignore[override]
        if entry.removed:
            when = f" in torch {entry.removed}"
        elif entry.deprecated:
            when = f" (deprecated since {entry.deprecated})"
        else:
            when = ""
        return concise_message(entry, f"was removed{when}", "was removed")

    def detail(self, entry: Deprecation) -> str:  # type: ignore[override]
        _, note = split_replacement(entry.replacement)
        since = f"deprecated since torch {entry.deprecated}" if entry.deprecated and not entry.removed else ""
        return "; ".join(part for part in (since, note) if part)

    references = (
        "https://pytorch.org/docs/stable/linalg.html",
        "https://github.com/pytorch/pytorch/releases/tag/v1.0.0",
    )
    flagged = (
        Example(
            """
            import torch
            A = torch.eye(3)
            B = torch.ones(3, 1)
            X, LU = torch.solve(B, A)
            """,
        ),
        Example(
            """
            import torch
            A = torch.tensor([[4.0, 2.0], [2.0, 3.0]])
            M = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
            U = torch.cholesky(A, True)
            Q, R = torch.qr(M, some=False)
            V = A.cholesky(upper=True)
            Q2, R2 = M.qr()
            """,
            """
            import torch
            A = torch.tensor([[4.0, 2.0], [2.0, 3.0]])
            M = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
            U = torch.linalg.cholesky(A, upper=True)
            Q, R = torch.linalg.qr(M, mode='complete')
            V = torch.linalg.cholesky(A, upper=True)
            Q2, R2 = torch.linalg.qr(M)
            """,
            count=4,
            runnable=True,  # removed in torch 2.14; the installed 2.13 still runs (and warns about) them
        ),
        Example(
            """
            import torch
            torch.set_deterministic(False)
            enabled = torch.is_deterministic()
            A = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
            rank = torch.matrix_rank(A, symmetric=True)
            """,
            """
            import torch
            torch.use_deterministic_algorithms(False)
            enabled = torch.are_deterministic_algorithms_enabled()
            A = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
            rank = torch.linalg.matrix_rank(A, hermitian=True)
            """,
            count=3,
            runnable=True,
            raises="AttributeError",
        ),
        Example(
            """
            import torch
            A = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
            rank = torch.matrix_rank(A)
            """,
            """
            import torch
            A = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
            rank = torch.linalg.matrix_rank(A)
            """,
            runnable=True,
            raises="RuntimeError",
        ),
        Example(
            """
            import torch as th
            A = th.tensor([[4.0, 2.0], [2.0, 3.0]])
            B = th.tensor([[1.0], [2.0]])
            U = th.potrf(A)
            X = th.potrs(B, U)
            """,
            """
            import torch as th
            A = th.tensor([[4.0, 2.0], [2.0, 3.0]])
            B = th.tensor([[1.0], [2.0]])
            U = th.linalg.cholesky(A, upper=True)
            X = th.cholesky_solve(B, U, upper=True)
            """,
            count=2,
            runnable=True,
            raises="AttributeError",
        ),
        Example(
            """
            import torch
            A = torch.randn(3, 3)
            w, v = A.symeig(eigenvectors=True)
            x, qr = torch.ones(3, 1).lstsq(A)
            """,
            count=2,
        ),
        Example(
            """
            from torch import gesv
            X, LU = gesv(B, A)  # no exact rewrite: flagged at the import
            """,
        ),
        Example(
            """
            from torch import potrf
            U = potrf(A)  # every use is rewritten, then the import goes
            """,
            """
            import torch
            U = torch.linalg.cholesky(A, upper=True)  # every use is rewritten, then the import goes
            """,
        ),
        Example(
            """
            from torch import is_deterministic
            if is_deterministic():
                print("deterministic")
            """,
            """
            from torch import are_deterministic_algorithms_enabled as is_deterministic
            if is_deterministic():
                print("deterministic")
            """,
        ),
        Example(
            """
            import torch.utils.ffi
            import torch.legacy.nn as lnn
            from torch._six import inf, string_classes
            """,
            count=4,
        ),
    )
    accepted = (
        """
        import torch
        A, B = torch.eye(3), torch.ones(3, 1)
        X = torch.linalg.solve(A, B)
        w, v = torch.linalg.eigh(A)
        L = torch.linalg.cholesky(A)
        torch.use_deterministic_algorithms(True)
        """,
        """
        def solve(b, A):
            return b
        x = solve(1, 2)
        """,
        """
        import numpy as np
        import scipy.linalg
        A = np.eye(3)
        x = np.linalg.solve(A, np.ones(3))
        w, v = np.linalg.eig(A)
        s = scipy.linalg.lstsq(A, np.ones(3))
        """,
        """
        def fit(problem, A):
            return problem.solve(A), problem.eig()  # unknown receiver: not a tensor
        """,
        """
        class Solver:
            def potrf(self):
                return 1
        u = Solver().potrf()
        """,
        """
        import six
        from six import string_types
        """,
    )
