"""The deprecation table (``torchlint/knowledge/deprecations.py``), checked against real torch.

torchlint never imports torch while linting, so what it knows about removed
and deprecated APIs is data. These tests hold that data to the installed torch
(2.13): every replacement exists (and is reachable after a plain
``import torch``, which is how the fixes spell it), every entry marked removed
is absent or raises, every entry marked deprecated exists and warns when its
``warns`` flag says so, the rewrites' parameter names match the real
signatures, and the rewrites compute what the old APIs compute.

Warnings are observed in a fresh interpreter with ``torch.set_warn_always``:
many of them are emitted once per process, and this process runs the runtime
examples afterwards.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import subprocess
import sys
import textwrap
import warnings
from typing import Any, Dict, List

import pytest

torch = pytest.importorskip("torch")

from torchlint.analysis.outline import Outline  # noqa: E402
from torchlint.core.settings import parse_version  # noqa: E402
from torchlint.engine.linter import Engine  # noqa: E402
from torchlint.knowledge.deprecations import (  # noqa: E402
    ALL,
    ENTRIES,
    FUNCTION_CTX,
    LEGACY_TENSOR_TYPES,
    TENSOR,
    CallRewrite,
    Deprecation,
    InclusiveRange,
    Kind,
    ReadAs,
    Rename,
    RenameKeyword,
    Status,
    entries,
)
from torchlint.knowledge.torch_api import (  # noqa: E402
    AUTOGRAD_FUNCTION_BASES,
    DTYPE_FACTORIES,
    DTYPE_TENSOR_METHODS,
)
from torchlint.rules import rule_by_code  # noqa: E402

_MISSING = object()


def lookup(qualified: str) -> Any:
    """``torch.linalg.solve`` -> the object (importing submodules as needed), or _MISSING."""
    parts = qualified.split(".")
    obj: Any = importlib.import_module(parts[0])
    for index, part in enumerate(parts[1:], start=1):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # torch.has_cuda warns when read
                value = getattr(obj, part, _MISSING)
        except Exception:
            return _MISSING
        if value is _MISSING:
            try:
                value = importlib.import_module(".".join(parts[: index + 1]))
            except ImportError:
                return _MISSING
        obj = value
    return obj


def _targets(entry: Deprecation) -> List[str]:
    """Every torch name the entry's message or rewrite points users to."""
    names = list(entry.new)
    rewrite = entry.rewrite
    if isinstance(rewrite, (Rename, CallRewrite, InclusiveRange)):
        names.append(rewrite.new)
    elif isinstance(rewrite, ReadAs):
        names.append(rewrite.call)
    return [n for n in dict.fromkeys(names) if not n.startswith(FUNCTION_CTX + ".")]


def _ids(items) -> List[str]:
    return [e.display for e in items]


ALL_TARGETS = sorted({name for entry in ENTRIES for name in _targets(entry)})
REWRITE_TARGETS = sorted({name for entry in ENTRIES if entry.rewrite is not None for name in _targets(entry)[-1:]})


# --- the table itself ----------------------------------------------------------------


def test_entries_are_unique_and_consistent() -> None:
    keys = [(e.old, e.keyword) for e in ENTRIES]
    assert len(keys) == len(set(keys)), "an API is listed twice"
    for entry in ENTRIES:
        assert entry.old.startswith("torch."), entry.old
        assert entry.replacement.strip()
        if entry.kind is Kind.METHOD:
            assert entry.old.startswith(TENSOR + "."), entry.old
        if entry.kind is Kind.KEYWORD:
            assert entry.keyword and isinstance(entry.rewrite, (RenameKeyword, type(None)))
        else:
            assert entry.keyword is None
        if isinstance(entry.rewrite, RenameKeyword):
            assert entry.kind is Kind.KEYWORD
        if entry.status is Status.REMOVED:
            assert entry.warns, "`warns` describes deprecated entries only"
        for version in (entry.since, entry.deprecated, entry.removed, getattr(entry.rewrite, "since", None)):
            if version is not None:
                parse_version(version)
        fix_since = getattr(entry.rewrite, "since", None)
        if fix_since and entry.since:
            assert parse_version(fix_since) >= parse_version(entry.since), "a fix cannot predate its replacement"


@pytest.mark.parametrize("status, code", [(Status.REMOVED, "TL108"), (Status.DEPRECATED, "TL109")])
def test_every_entry_belongs_to_its_rule(status: Status, code: str) -> None:
    rule = rule_by_code(code)
    assert tuple(rule.ENTRIES) == entries(status)
    for entry in entries(status):
        # The rule's textual screen must let a file using the entry through.
        use = f"f(x, {entry.name}=y)" if entry.kind is Kind.KEYWORD else f"y = torch.{entry.name}(x)"
        assert rule.may_match(use), f"{entry.display} cannot trigger {code}"
        # So must both screens a use the rule flags: ``torch`` imported, a
        # method on a known tensor, the ctx of an autograd Function.
        for use in _uses(entry):
            assert rule.may_match(use) and rule.may_match_tree(Outline(ast.parse(use))), (
                f"{entry.display} cannot trigger {code}:\n{use}")
            assert Engine([rule]).check(use).diagnostics, f"{code} does not flag:\n{use}"


def _uses(entry: Deprecation) -> List[str]:
    """Snippets that use ``entry`` the ways the rule flags it."""
    if entry.kind is Kind.KEYWORD:
        return [f"import torch\n{entry.old}(x, {entry.keyword}=y)\n"]
    if entry.kind is Kind.METHOD:
        return [f"import torch\nx = torch.ones(3, 3)\ny = x.{entry.name}()\n"]
    if entry.old.startswith(FUNCTION_CTX + "."):
        return [
            "import torch\n\n\nclass Fn(torch.autograd.Function):\n    @staticmethod\n"
            f"    def backward(ctx, grad):\n        return ctx.{entry.name}\n"
        ]
    module, name = entry.old.rsplit(".", 1)
    return [f"import torch\ny = {entry.old}(x)\n", f"from {module} import {name} as alias\n"]


# --- replacements exist ------------------------------------------------------------------


@pytest.mark.parametrize("qualified", ALL_TARGETS)
def test_replacement_exists(qualified: str) -> None:
    assert lookup(qualified) is not _MISSING, f"{qualified} does not exist in torch {torch.__version__}"


def test_replacements_are_reachable_after_import_torch() -> None:
    """Fixes spell ``torch.linalg.qr`` after a plain ``import torch``: torch must import those submodules."""
    script = textwrap.dedent(
        """
        import json, sys, warnings
        warnings.simplefilter("ignore")
        import torch
        missing = []
        for name in json.loads(sys.stdin.read()):
            obj = torch
            try:
                for part in name.split(".")[1:]:
                    obj = getattr(obj, part)
            except AttributeError:
                missing.append(name)
        print(json.dumps(missing))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], input=json.dumps(REWRITE_TARGETS), capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_ctx_has_saved_tensors_and_saved_variables_warns() -> None:
    seen: Dict[str, Any] = {}

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            seen["tensors"] = ctx.saved_tensors
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                seen["variables"] = ctx.saved_variables
            seen["warnings"] = [str(w.message) for w in caught]
            return grad

    x = torch.ones(2, requires_grad=True)
    Probe.apply(x).sum().backward()
    assert torch.equal(seen["tensors"][0], seen["variables"][0])
    assert any("saved_variables" in message for message in seen["warnings"])


# --- removed entries are gone ------------------------------------------------------------


# Calls of the removed stubs (they raise whatever the arguments).
A2 = "torch.tensor([[4.0, 1.0], [1.0, 3.0]])"


@pytest.mark.parametrize("entry", entries(Status.REMOVED), ids=_ids(entries(Status.REMOVED)))
def test_removed_entry_is_gone_or_raises(entry: Deprecation) -> None:
    if entry.kind is Kind.MODULE:
        with pytest.raises(ImportError):
            importlib.import_module(entry.old)
        return
    if entry.kind is Kind.METHOD:
        obj = getattr(torch.tensor([[4.0, 1.0], [1.0, 3.0]]), entry.name, _MISSING)
    else:
        obj = lookup(entry.old)
    if obj is _MISSING:
        return
    with pytest.raises(RuntimeError, match="removed"):
        if entry.kind is Kind.METHOD:
            obj(torch.tensor([[4.0, 1.0], [1.0, 3.0]]))
        elif entry.name in ("solve", "lstsq"):
            obj(torch.ones(2, 1), eval(A2))
        else:
            obj(eval(A2))


# --- deprecated entries still work, and warn -------------------------------------------


# How to use each deprecated entry (in a fresh interpreter, after ``import torch``).
USES: Dict[str, str] = {
    "torch.range": "torch.range(0, 3)",
    "torch.chain_matmul": "torch.chain_matmul(torch.eye(2), torch.eye(2))",
    "torch.lu": "torch.lu(torch.eye(2))",
    "torch.Tensor.lu": "torch.eye(2).lu()",
    "torch.lu_solve": "LU, piv = torch.linalg.lu_factor(torch.eye(2)); torch.lu_solve(torch.ones(2, 1), LU, piv)",
    "torch.Tensor.lu_solve": "LU, piv = torch.linalg.lu_factor(torch.eye(2)); torch.ones(2, 1).lu_solve(LU, piv)",
    "torch.cholesky": "torch.cholesky(torch.eye(2))",
    "torch.Tensor.cholesky": "torch.eye(2).cholesky()",
    "torch.qr": "torch.qr(torch.eye(2))",
    "torch.Tensor.qr": "torch.eye(2).qr()",
    "torch.triangular_solve": "torch.triangular_solve(torch.ones(2, 1), torch.eye(2))",
    "torch.ger": "torch.ger(torch.ones(2), torch.ones(3))",
    "torch.Tensor.ger": "torch.ones(2).ger(torch.ones(3))",
    "torch.cuda.amp.autocast": "torch.cuda.amp.autocast(enabled=False)",
    "torch.cpu.amp.autocast": "torch.cpu.amp.autocast()",
    "torch.cuda.amp.GradScaler": "torch.cuda.amp.GradScaler(enabled=False)",
    "torch.cpu.amp.GradScaler": "torch.cpu.amp.GradScaler(enabled=False)",
    "torch.cuda.amp.custom_fwd": "torch.cuda.amp.custom_fwd(lambda ctx, x: x)",
    "torch.cuda.amp.custom_bwd": "torch.cuda.amp.custom_bwd(lambda ctx, g: g)",
    "torch.cuda.memory_cached": "torch.cuda.memory_cached()",
    "torch.cuda.max_memory_cached": "torch.cuda.max_memory_cached()",
    "torch.cuda.reset_max_memory_cached": "torch.cuda.reset_max_memory_cached()",  # then fails without CUDA
    "torch.testing.assert_allclose": "torch.testing.assert_allclose(torch.ones(1), torch.ones(1))",
    "torch.nn.utils.clip_grad_norm": "torch.nn.utils.clip_grad_norm([torch.nn.Parameter(torch.ones(2))], 1.0)",
    "torch.nn.utils.weight_norm": "torch.nn.utils.weight_norm(torch.nn.Linear(2, 2))",
    "torch.nn.NLLLoss2d": "torch.nn.NLLLoss2d()",
    "torch.set_default_tensor_type": "torch.set_default_tensor_type(torch.FloatTensor)",
    "torch.backends.cuda.sdp_kernel": "torch.backends.cuda.sdp_kernel()",
    "torch.has_cuda": "torch.has_cuda",
    "torch.has_cudnn": "torch.has_cudnn",
    "torch.has_mps": "torch.has_mps",
    "torch.has_mkldnn": "torch.has_mkldnn",
    "torch.autograd.backward": (
        "x = torch.ones(2, requires_grad=True); torch.autograd.backward([x.sum()], grad_variables=[torch.tensor(1.0)])"
    ),
    # ctx.saved_variables is witnessed in-process by test_ctx_has_saved_tensors_and_saved_variables_warns.
}

_PROBE = textwrap.dedent(
    """
    import json, sys, warnings
    import torch
    torch.set_warn_always(True)
    results = {}
    for name, code in json.loads(sys.stdin.read()).items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                exec(code, {"torch": torch})
                error = None
            except Exception as exc:
                error = type(exc).__name__
        results[name] = {"warnings": [f"{w.category.__name__}: {w.message}" for w in caught], "error": error}
    print(json.dumps(results))
    """
)


@pytest.fixture(scope="module")
def observed() -> Dict[str, Dict[str, Any]]:
    result = subprocess.run([sys.executable, "-c", _PROBE], input=json.dumps(USES), capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


DEPRECATED = [e for e in entries(Status.DEPRECATED) if not e.old.startswith(FUNCTION_CTX + ".")]


@pytest.mark.parametrize("entry", DEPRECATED, ids=_ids(DEPRECATED))
def test_deprecated_entry_exists_and_warns(entry: Deprecation, observed) -> None:
    assert lookup(entry.old) is not _MISSING or entry.kind is Kind.METHOD and hasattr(torch.Tensor, entry.name)
    assert entry.old in USES, f"add a use of {entry.old} to USES so its warning is witnessed"
    seen = observed[entry.old]
    if entry.warns:
        assert seen["warnings"], f"{entry.old} no longer warns in torch {torch.__version__}: {seen}"
    else:
        assert not seen["warnings"], f"{entry.old} warns now: set warns=True ({seen['warnings']})"
    if entry.old != "torch.cuda.reset_max_memory_cached":  # needs CUDA after warning
        assert seen["error"] is None, seen


# --- rewrites match the real signatures --------------------------------------------------


def _signature(obj: Any):
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


CALL_REWRITES = [e for e in ENTRIES if isinstance(e.rewrite, CallRewrite)]


@pytest.mark.parametrize("entry", CALL_REWRITES, ids=_ids(CALL_REWRITES))
def test_call_rewrite_names_real_parameters(entry: Deprecation) -> None:
    rewrite = entry.rewrite
    assert isinstance(rewrite, CallRewrite)
    assert set(rewrite.args) <= set(rewrite.params)
    assert {old for _, old in rewrite.keywords} <= set(rewrite.params)
    assert set(rewrite.literals) | {p for p, _ in rewrite.defaults} <= set(rewrite.params)
    new = lookup(rewrite.new)
    new_signature = _signature(new.__init__ if isinstance(new, type) else new)
    if new_signature is not None:
        accepted = set(new_signature.parameters)
        named = {k for k, _ in rewrite.keywords} | {k for k, _ in rewrite.extra}
        if rewrite.passthrough != ALL:
            named |= set(rewrite.passthrough)
        assert named <= accepted, f"{rewrite.new} has no parameter(s) {named - accepted}"
    if entry.status is Status.DEPRECATED:
        old = lookup(entry.old)
        old_signature = _signature(old.__init__ if isinstance(old, type) else old)
        if old_signature is not None:
            parameters = [p for p in old_signature.parameters if p != "self"]
            assert list(rewrite.params) == parameters[: len(rewrite.params)], parameters
            if rewrite.passthrough == ALL:
                # Keyword-only mapping: every old keyword must exist on the new callable too.
                assert new_signature is not None
                assert set(parameters) <= set(new_signature.parameters), parameters


RENAMES = [e for e in ENTRIES if isinstance(e.rewrite, Rename) and e.status is Status.DEPRECATED
           and not e.old.startswith(FUNCTION_CTX + ".")]


@pytest.mark.parametrize("entry", RENAMES, ids=_ids(RENAMES))
def test_rename_keeps_the_signature(entry: Deprecation) -> None:
    old, new = lookup(entry.old), lookup(entry.rewrite.new)
    if isinstance(old, type):
        assert issubclass(old, new) and _signature(old.__init__) == _signature(new.__init__)
        return
    old_signature, new_signature = _signature(old), _signature(new)
    if old_signature is not None and new_signature is not None:
        assert list(old_signature.parameters) == list(new_signature.parameters)


def test_legacy_tensor_types_map_to_their_dtypes() -> None:
    for name, (dtype_name, cuda) in LEGACY_TENSOR_TYPES.items():
        tensor_type, dtype = lookup(name), lookup(dtype_name)
        assert dtype is not _MISSING and isinstance(dtype, torch.dtype), dtype_name
        assert tensor_type.dtype == dtype, name
        assert tensor_type.is_cuda == cuda, name
        with pytest.raises(TypeError, match="must be torch.dtype"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the CUDA types also warn about __torch_function__
            torch.zeros(1, dtype=tensor_type)


# Minimal arguments for each factory TL110 knows, called with ``dtype=``.
_T = "torch.ones(2)"
DTYPE_CALLS = {
    "torch.tensor": "[1]", "torch.as_tensor": "[1]", "torch.asarray": "[1]", "torch.scalar_tensor": "1",
    "torch.zeros": "2", "torch.ones": "2", "torch.empty": "2", "torch.full": "(2,), 1",
    "torch.empty_strided": "(2,), (1,)", "torch.arange": "2", "torch.range": "0, 1", "torch.linspace": "0, 1, 3",
    "torch.logspace": "0, 1, 3", "torch.eye": "2", "torch.rand": "2", "torch.randn": "2",
    "torch.randint": "0, 5, (2,)", "torch.randperm": "3", "torch.zeros_like": _T, "torch.ones_like": _T,
    "torch.empty_like": _T, "torch.full_like": _T + ", 1", "torch.rand_like": _T, "torch.randn_like": _T,
    "torch.randint_like": _T + ", 5", "torch.tril_indices": "3, 3", "torch.triu_indices": "3, 3",
    "new_tensor": "[1]", "new_zeros": "2", "new_ones": "2", "new_empty": "2", "new_full": "(2,), 1",
}
_INTEGER_ONLY = {"torch.tril_indices", "torch.triu_indices"}


@pytest.mark.parametrize("name", sorted(DTYPE_FACTORIES | DTYPE_TENSOR_METHODS))
def test_dtype_factory_takes_dtype(name: str) -> None:
    dtype = torch.int32 if name in _INTEGER_ONLY else torch.float64
    callee = name if name.startswith("torch.") else f"{_T}.{name}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.range
        result = eval(f"{callee}({DTYPE_CALLS[name]}, dtype=dtype)", {"torch": torch, "dtype": dtype})
    assert result.dtype == dtype, name


@pytest.mark.parametrize("qualified", sorted(AUTOGRAD_FUNCTION_BASES))
def test_autograd_function_base(qualified: str) -> None:
    base = lookup(qualified)
    assert isinstance(base, type) and issubclass(base, torch.autograd.Function), qualified


# --- rewrites compute what the old APIs compute ------------------------------------------


def _fixed(code: str) -> str:
    return Engine([rule_by_code("TL108"), rule_by_code("TL109")]).fix(code).source


def _run(code: str) -> Dict[str, Any]:
    namespace: Dict[str, Any] = {}
    warn_always = torch.is_warn_always_enabled()
    torch.set_warn_always(True)  # do not use up the once-per-process warnings of later tests
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(0)
            exec(compile(code, "<witness>", "exec"), namespace)
    finally:
        torch.set_warn_always(warn_always)
    return {k: v for k, v in namespace.items() if isinstance(v, torch.Tensor)}


WITNESSES = {
    "range": """
        import torch
        a = torch.range(0, 7, 3)
        b = torch.range(-2, 2)
        c = torch.range(5, -5, -2)
        d = torch.range(0, 4, 2, dtype=torch.int32)
        e = torch.range(0, 4, 2, dtype=torch.float64)
        """,
    "chain_matmul": """
        import torch
        a, b, c = torch.randn(3, 4), torch.randn(4, 5), torch.randn(5, 2)
        x = torch.chain_matmul(a, b, c)
        y = torch.chain_matmul(a, b)
        """,
    "cholesky": """
        import torch
        m = torch.randn(4, 3, 3, dtype=torch.float64)
        a = m @ m.mT + 3 * torch.eye(3, dtype=torch.float64)
        lower = torch.cholesky(a)
        upper = torch.cholesky(a, upper=True)
        upper2 = torch.cholesky(a, True)
        """,
    "qr": """
        import torch
        m = torch.randn(2, 5, 3, dtype=torch.float64)
        q1, r1 = torch.qr(m)
        q2, r2 = torch.qr(m, some=False)
        q3, r3 = torch.qr(m, True)
        """,
    "lu_solve": """
        import torch
        a = torch.randn(3, 4, 4, dtype=torch.float64) + 4 * torch.eye(4, dtype=torch.float64)
        b = torch.randn(3, 4, 2, dtype=torch.float64)
        lu, piv = torch.linalg.lu_factor(a)
        x = torch.lu_solve(b, lu, piv)
        """,
    "ger": """
        import torch
        v, w = torch.randn(3), torch.randn(4)
        p = torch.ger(v, w)
        q = v.ger(w)
        """,
    "has": """
        import torch
        a = torch.tensor([torch.has_cuda, torch.has_cudnn, torch.has_mps, torch.has_mkldnn])
        """,
}


@pytest.mark.parametrize("name", sorted(WITNESSES))
def test_rewrite_computes_the_same(name: str) -> None:
    original = textwrap.dedent(WITNESSES[name]).lstrip()
    fixed = _fixed(original)
    assert fixed != original, "the witness was not rewritten"
    before, after = _run(original), _run(fixed)
    assert sorted(before) == sorted(after)
    for key in before:
        assert before[key].dtype == after[key].dtype, key
        assert before[key].shape == after[key].shape, key
        assert torch.allclose(before[key].double(), after[key].double(), atol=1e-10), key


def test_set_default_tensor_type_rewrite_sets_the_same_defaults() -> None:
    """In a fresh interpreter: the default state after each old call and after its rewrite."""
    codes = []
    for argument in ("torch.DoubleTensor", "'torch.DoubleTensor'", "torch.HalfTensor", "torch.BFloat16Tensor",
                     "torch.FloatTensor"):
        original = f"import torch\ntorch.set_default_tensor_type({argument})\n"
        fixed = _fixed(original)
        assert "set_default_dtype" in fixed, fixed
        codes += [original, fixed]
    script = textwrap.dedent(
        """
        import json, sys, warnings
        warnings.simplefilter("ignore")
        import torch
        states = []
        for code in json.loads(sys.stdin.read()):
            exec(code, {})
            states.append([str(torch.get_default_dtype()), torch.Tensor().type(), str(torch.tensor([1.0]).dtype)])
            torch.set_default_tensor_type(torch.FloatTensor)  # back to the initial state
        print(json.dumps(states))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], input=json.dumps(codes), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    states = json.loads(result.stdout)
    for index in range(0, len(states), 2):
        assert states[index] == states[index + 1], (codes[index], states[index], states[index + 1])
