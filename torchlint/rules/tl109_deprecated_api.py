"""TL109: deprecated torch functions, classes and arguments, from the deprecation table."""

from torchlint.knowledge.deprecations import Deprecation, Status, reported_entries
from torchlint.rules._deprecated import DeprecatedApiRule, deprecated_message, entry_table, split_replacement
from torchlint.rules.rule import Example, FixSafety


class DeprecatedTorchApi(DeprecatedApiRule):
    code = "TL109"
    name = "deprecated-torch-api"
    summary = "`torch.range`, `chain_matmul`, `lu_solve`, `torch.cuda.amp.*` and other deprecated APIs"
    why = (
        "These APIs still work but are deprecated and scheduled for removal; most warn on use (some only "
        "once per process): `torch.range` (inclusive end, always floating point), `chain_matmul`, `lu`, "
        "`lu_solve`, `triangular_solve` (superseded by `torch.linalg`; `cholesky` and `qr` too, until torch "
        "2.14 removed them: TL108 for code moving to 2.14 or later), `ger`, the "
        "device-specific `torch.cuda.amp` / `torch.cpu.amp` classes and decorators (now `torch.amp` with a "
        "device argument), `torch.cuda.memory_cached`, `torch.testing.assert_allclose`, "
        "`nn.utils.clip_grad_norm`, `nn.utils.weight_norm`, `nn.NLLLoss2d`, `torch.set_default_tensor_type`, "
        "`torch.has_cuda` and friends, `ctx.saved_variables` and `backward(grad_variables=)`; and what torch "
        "2.13 itself warns about: `functorch.vmap`/`grad`/... (now `torch.func`), the device-specific autocast "
        "functions (`torch.get_autocast_gpu_dtype`, ...), `torch.distributed._all_gather_base` and `reduce_op`, "
        "`torch.utils._pytree._register_pytree_node`, TorchScript's `torch.jit.fork`/`wait`/`freeze`, the "
        "`torch.quantization` workflow (moved to torchao), and deprecated keywords (`only_inputs=`, "
        "`Hardtanh(min_value=)`), and what torch 2.14 and 2.15 deprecate (`profile(with_modules=)`, "
        "`_set_pg_timeout`, `load_nvprof`, `EnforceUnique`, ...). What is reported depends on the torch the "
        "project moves to (`--target-torch-version`, default the newest release known): a deprecation newer "
        "than that release is not reported, nor one torch took back by then (torch 2.15 no longer deprecates "
        "`all_gather_into_tensor` and `reduce_scatter_tensor`). The table below lists every entry with its "
        "replacement, the torch version that introduced it and the releases that deprecated, removed or "
        "un-deprecated it; `scripts/mine_torch_deprecations.py` checks it against the releases' sources."
    )
    fix_safety = FixSafety.SOMETIMES
    fix_description = (
        "Rewrites only where the result is the same, in every import spelling (a from-imported name is "
        "rewritten at every use, and the import dropped once unused; no fix when one use cannot be "
        "rewritten): renames; "
        "calls whose arguments map exactly (`lu_solve(B, LU, piv)` -> `linalg.lu_solve(LU, piv, B)`, "
        "`qr(A, some=False)` -> `linalg.qr(A, mode='complete')` for a literal `some`, "
        "`chain_matmul(a, b)` -> `linalg.multi_dot([a, b])`); the `torch.cuda.amp` / `torch.cpu.amp` "
        "classes only when every argument is a keyword (the positional orders differ); `torch.range` only "
        "with integer literals, the end made exclusive and the numbers written as floats unless `dtype=` "
        "is given (`range` returns floating point). Calls with `*args`/`**kwargs` or comments between the "
        "arguments are not rewritten. With `--torch-version`, an API whose replacement is newer than that "
        "version is not reported, and a rewrite needing a newer torch is not offered (`_set_pg_timeout` -> "
        "`set_timeout` needs torch 2.14).\n\n"
        + entry_table(reported_entries(Status.DEPRECATED, opt_in=False))
    )
    STATUS = Status.DEPRECATED

    def message(self, entry: Deprecation) -> str:  # type: ignore[override]
        return deprecated_message(entry)

    def detail(self, entry: Deprecation) -> str:  # type: ignore[override]
        return split_replacement(entry.replacement)[1]

    references = (
        "https://pytorch.org/docs/stable/linalg.html",
    )
    flagged = (
        Example(
            """
            import torch
            steps = torch.range(0, 10, 2)
            ticks = torch.range(1, 4, dtype=torch.long)
            down = torch.range(3, -3, -1)
            """,
            """
            import torch
            steps = torch.arange(0.0, 11.0, 2.0)
            ticks = torch.arange(1, 5, dtype=torch.long)
            down = torch.arange(3.0, -4.0, -1.0)
            """,
            count=3,
            runnable=True,
        ),
        Example(
            """
            import torch
            grid = torch.range(0, 1, 0.1)  # a float step: arange's end would differ, no fix
            """,
        ),
        Example(
            """
            import torch
            A = torch.tensor([[4.0, 2.0], [2.0, 3.0]])
            M = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
            P = torch.chain_matmul(A, A, M.T)
            """,
            """
            import torch
            A = torch.tensor([[4.0, 2.0], [2.0, 3.0]])
            M = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
            P = torch.linalg.multi_dot([A, A, M.T])
            """,
            runnable=True,
        ),
        Example(
            """
            import torch
            A = torch.tensor([[4.0, 2.0], [2.0, 3.0]])
            B = torch.tensor([[1.0], [2.0]])
            LU, pivots = torch.linalg.lu_factor(A)
            X = torch.lu_solve(B, LU, pivots)
            """,
            """
            import torch
            A = torch.tensor([[4.0, 2.0], [2.0, 3.0]])
            B = torch.tensor([[1.0], [2.0]])
            LU, pivots = torch.linalg.lu_factor(A)
            X = torch.linalg.lu_solve(LU, pivots, B)
            """,
            runnable=True,
        ),
        Example(
            """
            import torch
            a, b = torch.arange(3.0), torch.arange(4.0)
            P = torch.ger(a, b)
            Q = a.ger(b)
            """,
            """
            import torch
            a, b = torch.arange(3.0), torch.arange(4.0)
            P = torch.outer(a, b)
            Q = a.outer(b)
            """,
            count=2,
            runnable=True,
            silent=True,
        ),
        Example(
            """
            import torch
            x = torch.ones(2)
            with torch.cuda.amp.autocast(enabled=False):
                y = x * 2
            with torch.cpu.amp.autocast(dtype=torch.bfloat16):
                z = x + 1
            scaler = torch.cuda.amp.GradScaler(enabled=False)
            cpu_scaler = torch.cpu.amp.GradScaler(init_scale=2.0**10, enabled=False)
            """,
            """
            import torch
            x = torch.ones(2)
            with torch.amp.autocast('cuda', enabled=False):
                y = x * 2
            with torch.amp.autocast('cpu', dtype=torch.bfloat16):
                z = x + 1
            scaler = torch.amp.GradScaler('cuda', enabled=False)
            cpu_scaler = torch.amp.GradScaler('cpu', init_scale=2.0**10, enabled=False)
            """,
            count=4,
            runnable=True,
        ),
        Example(
            """
            import torch
            from torch.cuda import amp


            class Double(torch.autograd.Function):
                @staticmethod
                @amp.custom_fwd(cast_inputs=torch.float32)
                def forward(ctx, x):
                    return x * 2

                @staticmethod
                @amp.custom_bwd
                def backward(ctx, grad):
                    return grad * 2


            y = Double.apply(torch.ones(2))
            """,
            """
            import torch


            class Double(torch.autograd.Function):
                @staticmethod
                @torch.amp.custom_fwd(cast_inputs=torch.float32, device_type='cuda')
                def forward(ctx, x):
                    return x * 2

                @staticmethod
                @torch.amp.custom_bwd(device_type='cuda')
                def backward(ctx, grad):
                    return grad * 2


            y = Double.apply(torch.ones(2))
            """,
            count=2,
            runnable=True,
        ),
        Example(
            """
            import torch
            from torch.cuda.amp import autocast, GradScaler
            with torch.cuda.amp.autocast(True):  # positional: the new signature differs, no fix
                pass
            """,
            count=3,
        ),
        Example(
            """
            import torch
            import torch.nn as nn
            model = nn.Linear(2, 1)
            model(torch.ones(1, 2)).sum().backward()
            norm = nn.utils.clip_grad_norm(model.parameters(), 1.0)
            criterion = nn.NLLLoss2d(ignore_index=0)
            reserved = torch.cuda.memory_cached()
            peak = torch.cuda.max_memory_cached()
            """,
            """
            import torch
            import torch.nn as nn
            model = nn.Linear(2, 1)
            model(torch.ones(1, 2)).sum().backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            criterion = nn.NLLLoss(ignore_index=0)
            reserved = torch.cuda.memory_reserved()
            peak = torch.cuda.max_memory_reserved()
            """,
            count=4,
            runnable=True,
        ),
        Example(
            """
            import torch
            from torch.nn.utils import clip_grad_norm
            model = torch.nn.Linear(2, 1)
            model(torch.ones(1, 2)).sum().backward()
            norm = clip_grad_norm(model.parameters(), max_norm=0.5)
            """,
            """
            import torch
            from torch.nn.utils import clip_grad_norm_ as clip_grad_norm
            model = torch.nn.Linear(2, 1)
            model(torch.ones(1, 2)).sum().backward()
            norm = clip_grad_norm(model.parameters(), max_norm=0.5)
            """,
            runnable=True,
        ),
        Example(
            """
            import torch
            torch.set_default_tensor_type(torch.FloatTensor)
            built = [torch.has_cuda, torch.has_cudnn]
            more = [torch.has_mps, torch.has_mkldnn]
            """,
            """
            import torch
            torch.set_default_dtype(torch.float32)
            built = [torch.backends.cuda.is_built(), torch.backends.cudnn.is_available()]
            more = [torch.backends.mps.is_built(), torch.backends.mkldnn.is_available()]
            """,
            count=5,
            runnable=True,
        ),
        Example(
            """
            import torch


            class Square(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    ctx.save_for_backward(x)
                    return x * x

                @staticmethod
                def backward(ctx, grad):
                    (x,) = ctx.saved_variables
                    return 2 * x * grad


            x = torch.arange(3.0, requires_grad=True)
            y = Square.apply(x).sum()
            torch.autograd.backward([y], grad_variables=[torch.tensor(1.0)])
            g = x.grad
            """,
            """
            import torch


            class Square(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    ctx.save_for_backward(x)
                    return x * x

                @staticmethod
                def backward(ctx, grad):
                    (x,) = ctx.saved_tensors
                    return 2 * x * grad


            x = torch.arange(3.0, requires_grad=True)
            y = Square.apply(x).sum()
            torch.autograd.backward([y], grad_tensors=[torch.tensor(1.0)])
            g = x.grad
            """,
            count=2,
            runnable=True,
        ),
        Example(
            """
            import torch
            A = torch.eye(2)
            LU, pivots = torch.lu(A)
            torch.testing.assert_allclose(A, A)
            """,
            count=2,
        ),
        Example(
            """
            import torch
            dtype = torch.get_autocast_cpu_dtype()
            gpu = torch.get_autocast_gpu_dtype()
            torch.set_autocast_cpu_dtype(dtype)
            on = torch.is_autocast_cpu_enabled()
            torch.set_autocast_cpu_enabled(on)
            """,
            """
            import torch
            dtype = torch.get_autocast_dtype('cpu')
            gpu = torch.get_autocast_dtype('cuda')
            torch.set_autocast_dtype('cpu', dtype)
            on = torch.is_autocast_enabled('cpu')
            torch.set_autocast_enabled('cpu', on)
            """,
            count=5,
            runnable=True,
        ),
        Example(
            """
            import torch
            import functorch
            from functorch import grad
            xs = torch.arange(3.0)
            ys = functorch.vmap(torch.sin)(xs)
            g = grad(lambda x: (x ** 2).sum())(xs)
            """,
            """
            import torch
            from torch.func import grad
            xs = torch.arange(3.0)
            ys = torch.func.vmap(torch.sin)(xs)
            g = grad(lambda x: (x ** 2).sum())(xs)
            """,
            count=2,
            runnable=True,
        ),
        Example(
            """
            import torch
            A = torch.tensor([[4.0, 2.0], [2.0, 3.0]])
            B = torch.tensor([[1.0], [2.0]])
            LU, pivots = torch.linalg.lu_factor(A)
            X = B.lu_solve(LU, pivots)
            """,
            """
            import torch
            A = torch.tensor([[4.0, 2.0], [2.0, 3.0]])
            B = torch.tensor([[1.0], [2.0]])
            LU, pivots = torch.linalg.lu_factor(A)
            X = torch.linalg.lu_solve(LU, pivots, B)
            """,
            runnable=True,
        ),
        Example(
            """
            import torch
            import torch.distributed as dist
            import torch.utils._pytree as pytree
            from torch.nn.utils import stateless


            class Pair:
                def __init__(self, a, b):
                    self.a, self.b = a, b


            pytree._register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda values, _: Pair(*values))
            leaves = pytree.tree_leaves(Pair(torch.ones(1), torch.zeros(1)))
            text = pytree.pytree_to_str(pytree.tree_structure([1, (2, 3)]))
            spec = pytree.str_to_pytree(text)
            op = dist.reduce_op.SUM
            model = torch.nn.Linear(2, 1)
            params = {name: torch.ones_like(p) for name, p in model.named_parameters()}
            out = stateless.functional_call(model, params, (torch.ones(1, 2),))
            clamped = torch.nn.Hardtanh(min_value=-0.5, max_value=0.5)(torch.linspace(-1, 1, 5))
            """,
            """
            import torch
            import torch.distributed as dist
            import torch.utils._pytree as pytree


            class Pair:
                def __init__(self, a, b):
                    self.a, self.b = a, b


            pytree.register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda values, _: Pair(*values))
            leaves = pytree.tree_leaves(Pair(torch.ones(1), torch.zeros(1)))
            text = pytree.treespec_dumps(pytree.tree_structure([1, (2, 3)]))
            spec = pytree.treespec_loads(text)
            op = dist.ReduceOp.SUM
            model = torch.nn.Linear(2, 1)
            params = {name: torch.ones_like(p) for name, p in model.named_parameters()}
            out = torch.func.functional_call(model, params, (torch.ones(1, 2),))
            clamped = torch.nn.Hardtanh(min_val=-0.5, max_val=0.5)(torch.linspace(-1, 1, 5))
            """,
            count=7,
            runnable=True,
        ),
        Example(
            """
            import torch
            x = torch.arange(4.0).reshape(1, 1, 2, 2)
            near = torch.nn.UpsamplingNearest2d(scale_factor=2)(x)
            smooth = torch.nn.UpsamplingBilinear2d(size=(3, 3))(x)
            """,
            """
            import torch
            x = torch.arange(4.0).reshape(1, 1, 2, 2)
            near = torch.nn.Upsample(scale_factor=2, mode='nearest')(x)
            smooth = torch.nn.Upsample(size=(3, 3), mode='bilinear', align_corners=True)(x)
            """,
            count=2,
            runnable=True,
            silent=True,
        ),
        Example(
            """
            import torch.distributed as dist
            from torch.distributed import _all_gather_base
            work = _all_gather_base(output, shard)  # needs a process group: not run
            """,
            """
            import torch.distributed as dist
            from torch.distributed import all_gather_single as _all_gather_base
            work = _all_gather_base(output, shard)  # needs a process group: not run
            """,
        ),
        Example(
            """
            import torch
            a, b = torch.ones(3), torch.zeros(3)
            c = torch.cross(a, b)  # no dim: the first dimension of size 3, which a human must confirm
            """,
        ),
        Example(
            """
            import torch
            from functorch import make_functional  # functional_call with the module's own parameters
            """,
        ),
    )
    accepted = (
        """
        import torch
        steps = torch.arange(0, 10, 2)
        Q, R = torch.linalg.qr(torch.eye(3))
        P = torch.outer(steps, steps)
        with torch.amp.autocast("cuda", enabled=False):
            scaler = torch.amp.GradScaler("cuda")
        norm = torch.nn.utils.clip_grad_norm_([], 1.0)
        """,
        """
        import torch
        a, b = torch.ones(3), torch.zeros(3)
        c = torch.cross(a, b, dim=0)
        d = torch.cross(a, b, 0)
        e = torch.linalg.cross(a, b)
        f = torch.cross(*pair)  # the dimension may be in pair
        """,
        """
        for i in range(10):  # the builtin
            print(i)
        """,
        """
        import numpy as np
        import scipy.linalg
        q, r = np.linalg.qr(np.eye(3))
        c = scipy.linalg.cholesky(np.eye(3))
        o = np.outer([1, 2], [3, 4])
        """,
        """
        class Config:
            def range(self, start, end):
                return [start, end]
        r = Config().range(0, 5)
        """,
        """
        def decompose(m):
            return m.qr(), m.cholesky(), m.ger(m)  # unknown receiver: not flagged
        """,
        """
        class Tape:
            def backward(self, ctx):
                return ctx.saved_variables  # not an autograd Function


        def backward(loss, grad_variables=None):
            return loss
        backward(1, grad_variables=2)
        """,
        """
        from apex import amp
        with amp.autocast(enabled=True):
            pass
        """,
    )
