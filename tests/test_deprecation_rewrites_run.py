"""Every exact rewrite of the deprecation table, run under real torch in every import spelling.

For each table entry with an exact rewrite, a witness below uses the old API
the way real code does. The test writes the witness in each import spelling
(``torch.x.f(...)``, ``import torch.x as m; m.f(...)``, ``from torch.x import
f``, ``from torch.x import f as nm``; Tensor methods on a tensor receiver),
fixes it with the real engine and runs both versions under the installed torch
(2.13, CPU):

* the original warns, or raises (a removed API; ``from torch import potrf``
  fails at the import), unless torch documents the entry as deprecated without
  warning (``warns=False``): then it must run warning-free;
* the fixed code runs with warnings turned into errors;
* both compute the same values; where the original raises, the fixed values
  are compared with ``expected``, code that computes them without the old API.

The fix must also be complete (no TL108/TL109 finding left) and idempotent.
Entries that cannot run on a CPU-only machine are listed in ``NOT_RUNNABLE``
with the reason; a test fails when an exact entry is in neither list. Those new
in a later release (torch 2.14) have their witnesses in ``LATER_WITNESSES``,
which ``bench/run_fixes_under.py`` runs under that release (bench/RESULTS.md).
Running and comparing is ``witness_exec.py``'s, which needs only torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple

import pytest

torch = pytest.importorskip("torch")

from torchlint.core.settings import Settings, parse_version  # noqa: E402
from torchlint.engine.linter import Engine  # noqa: E402
from torchlint.knowledge.deprecations import ENTRIES, FUNCTION_CTX, Deprecation, Kind  # noqa: E402
from torchlint.rules import rule_by_code  # noqa: E402
from witness_exec import execute as _execute, same as _same  # noqa: E402

SPELLINGS = ("attribute", "import-as", "from-import", "from-import-as")
METHOD = "method"  # a Tensor method on a receiver inference knows is a tensor


@dataclass(frozen=True)
class Witness:
    use: str  # code with ``{}`` for the old API as spelled (``torch.qr``, ``m.qr``, ``qr``, ``nm``)
    setup: str = ""  # code before the use (``torch`` is always imported)
    expected: str = ""  # code computing the fixed values without the old API, where the original raises


_SPD = "a = torch.tensor([[4.0, 2.0], [2.0, 3.0]], dtype=torch.float64)"
_DIST_SETUP = ("torch.distributed.init_process_group('gloo', store=torch.distributed.HashStore(), rank=0, "
               "world_size=1)\nout = torch.zeros(2)")
_DIST_TEARDOWN = "\ntorch.distributed.destroy_process_group()"
_STFT_SETUP = ("x = torch.randn(400)\nw = torch.hann_window(64)\nx2 = torch.randn(2, 300, dtype=torch.float64)\n"
               "w2 = torch.hann_window(32, dtype=torch.float64)\n"
               "g = torch.randn(300, requires_grad=True)")
_AUTOCAST_FUNCTION = """
class Double(torch.autograd.Function):
    @staticmethod
    {fwd}
    def forward(ctx, x):
        return x * 2

    @staticmethod
    {bwd}
    def backward(ctx, grad):
        return grad * 2


x = torch.ones(2, requires_grad=True)
Double.apply(x).sum().backward()
g = x.grad
"""

WITNESSES: Dict[str, Witness] = {
    # removed (TL108): the original raises
    "torch.matrix_rank": Witness("r = {}(torch.diag(torch.tensor([1.0, 2.0, 0.0])))",
                                 expected="r = torch.tensor(2)"),
    "torch.potrf": Witness("u = {}(a)\nl = {}(a, False)", _SPD,
                           expected="u = torch.tensor([[2.0, 1.0], [0.0, 2.0 ** 0.5]], dtype=torch.float64)\n"
                                    "l = u.T"),
    "torch.potrs": Witness("u = torch.linalg.cholesky(a, upper=True)\nb = torch.tensor([[1.0], [2.0]], "
                           "dtype=torch.float64)\nx = {}(b, u)", _SPD,
                           expected="u = torch.linalg.cholesky(a, upper=True)\nb = torch.tensor([[1.0], [2.0]], "
                                    "dtype=torch.float64)\nx = torch.linalg.solve(a, b)"),
    "torch.set_deterministic": Witness("{}(False)\non = torch.are_deterministic_algorithms_enabled()",
                                       expected="on = False"),
    "torch.is_deterministic": Witness("on = {}()", expected="on = False"),
    # deprecated (TL109): the original warns
    "torch.range": Witness("a = {}(0, 7, 3)\nb = {}(-2, 2)\nc = {}(5, -5, -2)\nd = {}(0, 4, 2, dtype=torch.int32)"),
    "torch.chain_matmul": Witness("p = {}(a, b, c)", "a, b, c = torch.randn(3, 4), torch.randn(4, 5), torch.randn(5, 2)"),
    "torch.lu_solve": Witness("x = {}(b, lu, piv)", "a = torch.randn(3, 3) + 3 * torch.eye(3)\nb = torch.randn(3, 2)\n"
                              "lu, piv = torch.linalg.lu_factor(a)"),
    "torch.cholesky": Witness("l = {}(a)\nu = {}(a, True)\nu2 = {}(a, upper=True)", _SPD),
    "torch.qr": Witness("q, r = {}(mat)\nq2, r2 = {}(mat, some=False)\nq3, r3 = {}(mat, True)",
                        "mat = torch.randn(5, 3)"),
    "torch.ger": Witness("p = {}(v, w)", "v, w = torch.arange(3.0), torch.arange(4.0)"),
    "torch.cuda.amp.autocast": Witness("with {}(enabled=False):\n    y = x * 2", "x = torch.ones(2)"),
    "torch.cpu.amp.autocast": Witness("with {}(dtype=torch.bfloat16):\n    y = x @ x.T", "x = torch.ones(2, 2)"),
    "torch.cuda.amp.GradScaler": Witness("s = {}(enabled=False)\non = s.is_enabled()\nscale = s.get_scale()"),
    "torch.cpu.amp.GradScaler": Witness("s = {}(init_scale=2.0 ** 10, enabled=False)\non = s.is_enabled()"),
    "torch.cuda.amp.custom_fwd": Witness(_AUTOCAST_FUNCTION.format(fwd="@{}(cast_inputs=torch.float32)", bwd="")),
    "torch.cuda.amp.custom_bwd": Witness(_AUTOCAST_FUNCTION.format(
        fwd="@torch.amp.custom_fwd(device_type='cuda')", bwd="@{}")),
    "torch.cuda.memory_cached": Witness("n = {}()"),
    "torch.cuda.max_memory_cached": Witness("n = {}()"),
    "torch.nn.utils.clip_grad_norm": Witness("n = {}(model.parameters(), 0.5)",
                                             "model = torch.nn.Linear(2, 1)\n"
                                             "model(torch.ones(1, 2)).sum().backward()"),
    "torch.nn.NLLLoss2d": Witness("loss = {}(ignore_index=0)(torch.randn(2, 3, 4, 4).log_softmax(1), t)",
                                  "t = torch.randint(0, 3, (2, 4, 4))"),
    "torch.set_default_tensor_type": Witness("{}(torch.DoubleTensor)\nd = torch.ones(1)\n"
                                             "{}(torch.FloatTensor)\nf = torch.ones(1)"),
    "torch.has_cuda": Witness("on = {}"),
    "torch.has_cudnn": Witness("on = {}"),
    "torch.has_mps": Witness("on = {}"),
    "torch.has_mkldnn": Witness("on = {}"),
    "torch.autograd.backward(grad_variables=)": Witness(
        "{}([y], grad_variables=[torch.tensor(2.0)])\ng = x.grad",
        "x = torch.arange(3.0, requires_grad=True)\ny = (x * x).sum()"),
    **{f"functorch.{name}": Witness(use, "xs = torch.arange(1.0, 4.0)")
       for name, use in (
           ("vmap", "y = {}(torch.sin)(xs)"),
           ("grad", "y = {}(lambda x: (x ** 3).sum())(xs)"),
           ("grad_and_value", "y, v = {}(lambda x: (x ** 3).sum())(xs)"),
           ("vjp", "y, pull = {}(torch.sin, xs)\n(g,) = pull(torch.ones(3))"),
           ("jvp", "y, t = {}(torch.sin, (xs,), (torch.ones(3),))"),
           ("jacrev", "j = {}(torch.sin)(xs)"),
           ("jacfwd", "j = {}(torch.sin)(xs)"),
           ("hessian", "h = {}(lambda x: (x ** 3).sum())(xs)"),
           ("functionalize", "y = {}(lambda x: x.clone().add_(1))(xs)"),
       )},
    **{f"torch.{prefix}_autocast_{device}_{what}": Witness(use.format(device={"gpu": "cuda"}.get(device, device)))
       for prefix, what, use in (
           ("get", "dtype", "d = {{}}()"),
           ("set", "dtype", "d = torch.get_autocast_dtype('{device}')\n{{}}(d)\n"
                            "after = torch.get_autocast_dtype('{device}')"),
           ("is", "enabled", "on = {{}}()"),
           ("set", "enabled", "{{}}(False)\non = torch.is_autocast_enabled('{device}')"),
       )
       for device in ("cpu", "gpu", "ipu", "xla")
       if not (device == "gpu" and what == "enabled")},
    "torch.nn.UpsamplingNearest2d": Witness("near = {}(scale_factor=2)(x)\nnear2 = {}((3, 3))(x)",
                                            "x = torch.arange(4.0).reshape(1, 1, 2, 2)"),
    "torch.nn.UpsamplingBilinear2d": Witness("smooth = {}(size=(3, 3))(x)\nsmooth2 = {}(None, 2)(x)",
                                             "x = torch.arange(4.0).reshape(1, 1, 2, 2)"),
    "torch.nn.Hardtanh(min_value=)": Witness("y = {}(min_value=-0.5)(torch.linspace(-1, 1, 5))"),
    "torch.nn.Hardtanh(max_value=)": Witness("y = {}(max_value=0.5)(torch.linspace(-1, 1, 5))"),
    "torch.nn.utils.stateless.functional_call": Witness(
        "y = {}(model, params, (torch.ones(1, 2),))",
        "model = torch.nn.Linear(2, 1)\nparams = {n: torch.ones_like(p) for n, p in model.named_parameters()}"),
    "torch.utils._pytree._register_pytree_node": Witness(
        "{}(Pair, lambda p: ([p.a, p.b], None), lambda values, _: Pair(*values))\n"
        "leaves = torch.utils._pytree.tree_leaves(Pair(torch.ones(1), torch.zeros(1)))",
        "import torch.utils._pytree\nclass Pair:\n    def __init__(self, a, b):\n        self.a, self.b = a, b"),
    "torch.utils._pytree.pytree_to_str": Witness(
        "text = {}(torch.utils._pytree.tree_structure([1, (2, 3)]))", "import torch.utils._pytree"),
    "torch.utils._pytree.str_to_pytree": Witness(
        "spec = {}(torch.utils._pytree.treespec_dumps(torch.utils._pytree.tree_structure([1, (2, 3)])))\n"
        "n = spec.num_leaves", "import torch.utils._pytree"),
    **{f"torch.distributed.{name}": Witness("{}(out, torch.ones(2))" + _DIST_TEARDOWN, _DIST_SETUP)
       for name in ("_all_gather_base", "_reduce_scatter_base", "all_gather_into_tensor", "reduce_scatter_tensor")},
    "torch.distributed.reduce_op": Witness("op = str({}.SUM)"),
    # unsafe (TL117, opt-in): exact for strided tensors, as here
    "torch.norm": Witness("n = {}(x)\ncube = {}(torch.arange(24.0).reshape(2, 3, 4))\nz = {}(torch.zeros(0))",
                          "x = torch.randn(5, dtype=torch.float64)"),
    # Tensor methods (the receiver is a tensor by assignment)
    "torch.Tensor.cholesky": Witness("u = a.cholesky()\nu2 = a.cholesky(True)\nu3 = a.cholesky(upper=False)", _SPD),
    "torch.Tensor.qr": Witness("q, r = mat.qr()\nq2, r2 = mat.qr(False)\nq3, r3 = (mat + 1).qr(some=True)",
                               "mat = torch.randn(5, 3)"),
    "torch.Tensor.lu_solve": Witness("x = b.lu_solve(lu, piv)",
                                     "a = torch.randn(3, 3) + 3 * torch.eye(3)\nb = torch.randn(3, 2)\n"
                                     "lu, piv = torch.linalg.lu_factor(a)"),
    "torch.Tensor.ger": Witness("p = v.ger(w)", "v, w = torch.arange(3.0), torch.arange(4.0)"),
    # issue 35: values torch warns about; the fix leaves the argument out or names what the call returned
    "torch.jit.ignore(drop=)": Witness("@{}(True)\ndef helper(x):\n    return x + 1\n\n"
                                       "modifier = str(helper._torchscript_modifier)\ny = helper(2)"),
    # return_complex=False is view_as_real of the complex result: the same values, shape, dtype, strides
    # and gradients, for batched and double input, positional and keyword forms
    "torch.stft(return_complex=)": Witness(
        "s = {}(x, 64, window=w, return_complex=False)\n"
        "s2 = {}(x2, 32, 8, 32, w2, False, 'reflect', True, True, False)\n"
        "s3 = {}(g, 64, window=w, return_complex=False)\ns3.pow(2).sum().backward()\ngrad = g.grad\n"
        "strides = (s.stride(), s2.stride())",
        _STFT_SETUP),
    "torch.Tensor.stft(return_complex=)": Witness(
        "s = x.stft(64, window=w, return_complex=False)\n"
        "s2 = (x2 * 2).stft(32, 8, 32, w2, False, 'reflect', True, None, False)\n"
        "s3 = g.stft(64, window=w, return_complex=False)\ns3.pow(2).sum().backward()\ngrad = g.grad\n"
        "strides = (s.stride(), s2.stride())",
        _STFT_SETUP),
    # nprocs=0 starts no process (a spawned child cannot import the witness's functions)
    "torch.multiprocessing.spawn(start_method=)": Witness("context = {}(print, (), 0, False, False, 'fork')\n"
                                                          "done = context.join()"),
}

# Entries new in torch 2.14 whose fix the installed torch (2.13) cannot run: it has neither the
# deprecation nor the new name, or the fix is offered only from a floor of 2.14.
# bench/run_fixes_under.py runs these witnesses under torch 2.14.1 (bench/RESULTS.md, "Fixes under
# torch 2.14.1"); tests/test_deprecation_rules.py checks the fixes' text.
_PROFILED = ("with torch.profiler.profile(experimental_config=config):\n    y = torch.arange(3.0) * 2\n"
             "z = torch.arange(3.0) * 2")
LATER_WITNESSES: Dict[str, Witness] = {
    "torch.distributed.distributed_c10d._set_pg_timeout": Witness(
        "{}(datetime.timedelta(seconds=77))\ntimeout = str(backend.options._timeout)" + _DIST_TEARDOWN,
        "import datetime\n" + _DIST_SETUP + "\nbackend = torch.distributed.distributed_c10d._get_default_group()"
        "._get_backend(torch.device('cpu'))"),
    # gloo has no gather_single in torch 2.14.1: the original and the fixed code raise alike on a CPU
    "torch.distributed.gather_into_tensor": Witness("{}(torch.ones(2), out, dst=0)" + _DIST_TEARDOWN, _DIST_SETUP),
    **{f"torch._C._profiler._ExperimentalConfig({field}=)": Witness(
        f"config = {{}}({field}={value}, verbose=True)\n{_PROFILED}")
       for field, value in (("profiler_metrics", "['kineto__cuda_core_flops']"),
                            ("profiler_measure_per_kernel", "True"))},
}

NOT_RUNNABLE: Dict[str, str] = {
    **{key: "new in torch 2.14: run under torch 2.14.1 by bench/run_fixes_under.py" for key in LATER_WITNESSES},
    "torch.cuda.reset_max_memory_cached": "needs CUDA (both the old and the new function raise without it)",
    f"{FUNCTION_CTX}.saved_variables": "an attribute of an autograd ctx, not an importable name: "
                                      "TL109's runnable ctx example runs it",
}

ENGINE_RULES = ("TL108", "TL109", "TL117")
INSTALLED = parse_version(torch.__version__.split("+")[0])


def _engine(entry: Deprecation) -> Engine:
    """The rules of a project moving to the first known release where ``entry`` is reported
    (``all_gather_into_tensor`` is no longer deprecated in 2.15: 2.13)."""
    settings = Settings(target_torch_version=entry.first_target())
    return Engine([rule_by_code(code) for code in ENGINE_RULES], settings)


def _exact_entries() -> List[Deprecation]:
    """Every entry with a rewrite: the exact ones, and the unsafe ones on inputs where they are exact."""
    return [e for e in ENTRIES if e.rewrite is not None]


def _spellings(entry: Deprecation) -> Tuple[str, ...]:
    return (METHOD,) if entry.kind is Kind.METHOD or entry.old.startswith("torch.Tensor.") else SPELLINGS


CASES = [
    pytest.param(entry, spelling, id=f"{entry.key}-{spelling}")
    for entry in _exact_entries() if entry.key in WITNESSES
    for spelling in _spellings(entry)
]


def test_every_exact_rewrite_has_a_witness_or_a_reason() -> None:
    keys = {e.key for e in _exact_entries()}
    missing = sorted(keys - set(WITNESSES) - set(NOT_RUNNABLE))
    assert not missing, f"exact rewrites that no test runs: {missing}"
    assert not set(WITNESSES) & set(NOT_RUNNABLE)
    assert set(WITNESSES) | set(NOT_RUNNABLE) <= keys, sorted((set(WITNESSES) | set(NOT_RUNNABLE)) - keys)
    # what a later release deprecates has a witness for that release (bench/run_fixes_under.py)
    later = {e.key for e in _exact_entries() if e.deprecated and parse_version(e.deprecated)[:2] > INSTALLED[:2]}
    assert later == set(LATER_WITNESSES), sorted(later ^ set(LATER_WITNESSES))


def snippet(entry: Deprecation, spelling: str) -> str:
    """The witness of ``entry`` with the old API written in ``spelling``."""
    witness = witness_of(entry)
    module, name = entry.old.rsplit(".", 1)
    imports, spelled = {
        "attribute": (f"import {module}", entry.old),
        "import-as": (f"import {module} as m", f"m.{name}"),
        "from-import": (f"from {module} import {name}", name),
        "from-import-as": (f"from {module} import {name} as nm", "nm"),
        METHOD: ("", ""),
    }[spelling]
    lines = [line for line in ("import torch", imports if imports != "import torch" else "") if line]
    use = witness.use.replace("{}", spelled)
    return "\n".join([*lines, witness.setup, use]).replace("\n\n\n", "\n\n") + "\n"


def witness_of(entry: Deprecation) -> Witness:
    return WITNESSES.get(entry.key) or LATER_WITNESSES[entry.key]


def _findings(code: str, engine: Engine) -> List[str]:
    return [f"{d.line}: {d.code} {d.message}" for d in engine.check(code).diagnostics]


@pytest.mark.parametrize("entry, spelling", CASES)
def test_rewrite_runs_in_every_spelling(entry: Deprecation, spelling: str) -> None:
    original = snippet(entry, spelling)
    engine = _engine(entry)
    unsafe = not entry.exact_fix  # an unsafe rewrite is applied with --unsafe-fixes only
    fixed = engine.fix(original, unsafe=unsafe).source
    assert fixed != original, f"not fixed:\n{original}\nfindings: {_findings(original, engine)}"
    assert not _findings(fixed, engine), f"findings left after the fix:\n{fixed}\n{_findings(fixed, engine)}"
    assert engine.fix(fixed, unsafe=unsafe).source == fixed, "the fix is not idempotent"
    if unsafe:
        assert engine.fix(original).source == original, "an unsafe rewrite applied without --unsafe-fixes"

    before = _execute(original, warnings_as_errors=False)
    after = _execute(fixed, warnings_as_errors=True)
    assert after.error is None, f"the fixed code failed: {type(after.error).__name__}: {after.error}\n{fixed}"
    if entry.warns or before.error is not None:
        assert before.warnings or before.error is not None, (
            f"the original neither warned nor raised under torch {torch.__version__}:\n{original}")
    else:
        assert not before.warnings, [str(w.message) for w in before.warnings]

    witness = WITNESSES[entry.key]
    if before.error is not None:
        assert witness.expected, f"the original raised ({before.error!r}) and the witness has no expected values"
        reference = _execute("import torch\n" + witness.setup + "\n" + witness.expected, warnings_as_errors=True)
        assert reference.error is None, reference.error
        expected = reference.values
    else:
        expected = before.values
    imported = {"m", "nm", entry.old.rsplit(".", 1)[1]}  # what the spelling's import binds
    expected = {name: value for name, value in expected.items() if name not in imported}
    assert expected, "the witness computes nothing to compare"
    for name, value in expected.items():
        assert name in after.values, f"`{name}` is not computed by the fixed code:\n{fixed}"
        assert _same(value, after.values[name]), f"`{name}` differs: {value!r} != {after.values[name]!r}\n{fixed}"


def test_bench_runs_the_fixes_under_a_given_python(tmp_path) -> None:
    """``bench/run_fixes_under.py`` (run with torch 2.14.1's Python for bench/RESULTS.md; CI has only
    2.13) fixes the witnesses here and runs them in the other Python's process: given this Python,
    the stft fixes pass, each original having warned there and the values compared with its own."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "bench" / "run_fixes_under.py"
    out = tmp_path / "cases.json"
    done = subprocess.run([sys.executable, str(script), "--python", sys.executable, "--only", "stft(",
                           "--json", str(out)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    cases = json.loads(out.read_text())["cases"]
    assert sorted({c["id"].split(" [")[0] for c in cases}) == ["torch.Tensor.stft(return_complex=)",
                                                               "torch.stft(return_complex=)"]
    assert len(cases) == 5  # four import spellings and the method
    for case in cases:
        assert not case["problem"] and not case["same_error"], case
        assert case["original did"].startswith("warned UserWarning: stft with return_complex=False is deprecated")
        assert case["compared with"] == "the original there" and "view_as_real" in case["fixed"]
