"""Behaviour of the deprecation rules (TL107-TL111) beyond their documented examples.

Version targeting (``--torch-version``), import spelling, and the cases where
a fix must not be offered. These need no torch: they check what the linter
writes, not what torch computes (``test_deprecations_table.py`` does that).
"""

from __future__ import annotations

import textwrap
from typing import List, Optional, Tuple

import pytest

from torchlint.core.settings import Settings, parse_version
from torchlint.engine.linter import Engine
from torchlint.rules import rule_by_code


def _engine(codes: str, torch_version: Optional[str] = None, target: Optional[str] = None) -> Engine:
    settings = Settings(parse_version(torch_version) if torch_version else None,
                        parse_version(target) if target else None)
    return Engine([rule_by_code(code) for code in codes.split(",")], settings)


def _check(source: str, codes: str = "TL108,TL109", torch_version: Optional[str] = None,
           target: Optional[str] = None) -> List[Tuple[int, str, bool]]:
    result = _engine(codes, torch_version, target).check(textwrap.dedent(source).lstrip())
    assert result.internal_errors == []
    return [(d.line, d.code, d.fix is not None) for d in result.diagnostics]


def _fix(source: str, codes: str = "TL108,TL109", torch_version: Optional[str] = None, unsafe: bool = False,
         target: Optional[str] = None) -> str:
    result = _engine(codes, torch_version, target).fix(textwrap.dedent(source).lstrip(), unsafe=unsafe)
    assert result.internal_errors == [] and result.discarded == []
    return result.source


# --- --torch-version ----------------------------------------------------------------------


VERSIONED = """
import torch
U = torch.cholesky(A, True)
s = torch.cuda.amp.GradScaler(enabled=False)
X = torch.solve(B, A)
Y = torch.lu_solve(B, LU, piv)
"""


@pytest.mark.parametrize(
    "version, expected",
    [
        (None, [(2, "TL109", True), (3, "TL109", True), (4, "TL108", False), (5, "TL109", True)]),
        ("1.7", []),  # no torch.linalg yet: nothing to suggest
        ("1.9", [(2, "TL109", False), (4, "TL108", False)]),  # linalg.cholesky(upper=) is 1.10
        ("1.13", [(2, "TL109", True), (4, "TL108", False), (5, "TL109", True)]),
        ("2.3", [(2, "TL109", True), (3, "TL109", True), (4, "TL108", False), (5, "TL109", True)]),
    ],
)
def test_entries_and_fixes_follow_the_oldest_torch(version, expected) -> None:
    # a project moving to torch 2.13, where torch.cholesky is still deprecated (removed in 2.14)
    assert _check(VERSIONED, torch_version=version, target="2.13") == expected


def test_rules_without_a_version_range_stay_on() -> None:
    source = "import torch\nx = torch.tensor([1], dtype=torch.FloatTensor)\n"
    assert _check(source, "TL110", torch_version="0.4") == [(2, "TL110", True)]


# --- spelling the replacement -------------------------------------------------------------


def test_replacement_is_spelled_through_the_files_torch_alias() -> None:
    fixed = _fix("""
        import torch as th
        q, r = th.qr(m, some=False)
        with th.cuda.amp.autocast(enabled=False):
            pass
        """)
    assert "th.linalg.qr(m, mode='complete')" in fixed
    assert "th.amp.autocast('cuda', enabled=False)" in fixed
    assert "import torch\n" not in fixed


def test_import_torch_is_added_when_the_name_is_free() -> None:
    fixed = _fix("""
        from torch import cuda
        with cuda.amp.autocast(enabled=False):
            pass
        """)
    assert fixed == "import torch\nfrom torch import cuda\nwith torch.amp.autocast('cuda', enabled=False):\n    pass\n"


def test_no_fix_when_torch_is_bound_to_something_else() -> None:
    source = """
        from torch import cuda
        torch = None
        with cuda.amp.autocast(enabled=False):
            pass
        """
    assert _check(source) == [(3, "TL109", False)]


def test_aliased_from_import_of_a_rename() -> None:
    assert _fix("""
        from torch.cuda import memory_cached as cached
        used = cached()
        """) == "from torch.cuda import memory_reserved as cached\nused = cached()\n"


def test_unused_from_import_of_a_call_rewrite_is_flagged_without_fix() -> None:
    # Nothing to rewrite; removing the import would change what the module exports.
    assert _check("from torch import lu_solve, chain_matmul\n") == [(1, "TL109", False), (1, "TL109", False)]


def test_from_import_of_a_call_rewrite_rewrites_every_use_and_drops_the_import() -> None:
    assert _fix("""
        import os
        from torch import qr, chain_matmul as chain, lu_solve


        def solve(b, lu, piv):
            return lu_solve(b, lu, piv)


        q, r = qr(a, some=False)
        p = chain(a, b, qr(a)[0])
        """) == textwrap.dedent("""
        import torch
        import os


        def solve(b, lu, piv):
            return torch.linalg.lu_solve(lu, piv, b)


        q, r = torch.linalg.qr(a, mode='complete')
        p = torch.linalg.multi_dot([a, b, torch.linalg.qr(a)[0]])
        """).lstrip()


def test_from_import_fix_spells_through_the_files_torch_and_keeps_other_names() -> None:
    assert _fix("""
        import torch as th
        from torch.cuda.amp import autocast, GradScaler
        from torch import has_cuda, is_tensor
        with autocast(enabled=False):
            s = GradScaler(enabled=has_cuda)
        ok = is_tensor(s)
        """) == textwrap.dedent("""
        import torch as th
        from torch import is_tensor
        with th.amp.autocast('cuda', enabled=False):
            s = th.amp.GradScaler('cuda', enabled=th.backends.cuda.is_built())
        ok = is_tensor(s)
        """).lstrip()


def test_from_import_of_a_decorator() -> None:
    assert _fix("""
        import torch
        from torch.cuda.amp import custom_fwd, custom_bwd


        class Double(torch.autograd.Function):
            @staticmethod
            @custom_fwd
            def forward(ctx, x):
                return x * 2

            @staticmethod
            @custom_bwd
            def backward(ctx, grad):
                return grad * 2
        """) == textwrap.dedent("""
        import torch


        class Double(torch.autograd.Function):
            @staticmethod
            @torch.amp.custom_fwd(device_type='cuda')
            def forward(ctx, x):
                return x * 2

            @staticmethod
            @torch.amp.custom_bwd(device_type='cuda')
            def backward(ctx, grad):
                return grad * 2
        """).lstrip()


def test_from_import_inside_a_function() -> None:
    assert _fix("""
        def grid():
            from torch import range
            return range(0, 3)
        """) == "import torch\ndef grid():\n    return torch.arange(0.0, 4.0)\n"


@pytest.mark.parametrize(
    "source",
    [
        "from torch import qr\nf = qr\n",  # a use that is not a call: no rewrite for it
        "from torch import qr\ny = qr(a, some=flag)\n",  # one use cannot be rewritten
        "from torch import qr\ny = qr(a)\nz = qr(a, some=flag)\n",  # all uses or none
        "from torch import qr\nif cond:\n    qr = other\ny = qr(a)\n",  # rebound: a use may not be torch's
        "from torch.cuda.amp import custom_fwd\nfwd = custom_fwd\n",  # not a decorator, not called
        "from torch import has_cuda\nhas_cuda()\n",  # fails anyway: left to a human
        "torch = 1\nfrom torch import qr\ny = qr(a)\n",  # `torch` is bound to something else
    ],
)
def test_no_fix_for_from_import(source: str) -> None:
    findings = _check(source)
    assert findings and not any(fixable for _, _, fixable in findings), findings


def test_from_import_kept_while_the_module_exports_it() -> None:
    # `__all__` names it: the uses are rewritten, the import stays (other modules may import it).
    source = "from torch import qr\n__all__ = ['qr']\ny = qr(a)\n"
    fixed = _fix(source)
    assert fixed == "import torch\nfrom torch import qr\n__all__ = ['qr']\ny = torch.linalg.qr(a)\n"
    assert _check(fixed) == [(2, "TL108", False)]  # removed in torch 2.14, the default target


def test_from_import_fix_follows_the_oldest_torch() -> None:
    # linalg.cholesky's upper= exists from torch 1.10: flagged, not fixed, for 1.9.
    source = "from torch import cholesky\nu = cholesky(a, True)\n"
    assert _check(source, torch_version="1.9") == [(1, "TL108", False)]
    assert _check(source, torch_version="1.10") == [(1, "TL108", True)]


# --- where no fix may be offered -----------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        "torch.lu_solve(*args)",
        "torch.chain_matmul(a)",  # multi_dot needs two or more matrices
        "torch.qr(a, some=flag)",  # not a literal
        "torch.qr(a, True, some=True)",  # given twice: torch raises
        "torch.cuda.amp.autocast(True)",  # positional: the new order differs
        "torch.cuda.amp.GradScaler(2.0 ** 16)",
        "torch.cuda.amp.custom_fwd(cast_inputs=torch.float16, device_type='cuda')",
        "torch.range(0, n)",  # not a literal
        "torch.range(0, 1, 0.25)",  # a float step
        "torch.range(5, 0)",  # torch.range raises for this
        "torch.set_default_tensor_type(torch.cuda.FloatTensor)",  # also moves tensors to the GPU
        "torch.set_default_tensor_type(kind)",
        "torch.matrix_rank(a, tol=1e-3)",  # tol has no exact place in linalg.matrix_rank
        "torch.lu_solve(\n    b,  # right-hand side\n    lu,\n    piv,\n)",  # a comment would move
    ],
)
def test_no_fix(call: str) -> None:
    findings = _check(f"import torch\nx = {call}\n")
    assert findings and not any(fixable for _, _, fixable in findings), findings


def test_assigning_a_deprecated_attribute_is_not_rewritten_into_a_call() -> None:
    assert _check("import torch\ntorch.has_cuda = False\nprint(torch.has_cuda)\n") == [
        (2, "TL109", False), (3, "TL109", True)]


def test_grad_variables_with_grad_tensors_is_not_renamed() -> None:
    source = "import torch\ntorch.autograd.backward(y, grad_tensors=g, grad_variables=g)\n"
    assert _check(source) == [(2, "TL109", False)]


def test_bare_decorator_only_as_a_decorator() -> None:
    assert _check("import torch\nfwd = torch.cuda.amp.custom_fwd\n") == [(2, "TL109", False)]


def test_nested_rewrites_compose() -> None:
    assert _fix("import torch\nq = torch.qr(torch.cholesky(torch.chain_matmul(a, b)))\n") == (
        "import torch\nq = torch.linalg.qr(torch.linalg.cholesky(torch.linalg.multi_dot([a, b])))\n")


# --- receivers -----------------------------------------------------------------------------


def test_tensor_methods_need_a_known_tensor() -> None:
    source = """
        import torch
        a = torch.ones(2, 2)
        q = a.qr()
        r = model.qr()
        s = torch.ones(2).solve(a)
        t = (a + 1).ger(a[0])
        """
    # a.qr() is rewritten to torch.linalg.qr(a): the receiver is known to be a tensor.
    assert _check(source) == [(3, "TL108", True), (5, "TL108", False), (6, "TL109", True)]


def test_tensor_method_rewrites_take_the_receiver_as_first_argument() -> None:
    source = (
        "import torch\n"
        "A = torch.eye(2)\n"
        "L = A.cholesky(upper=True)\n"
        "Q, R = (A + 1).qr(some=False)\n"
        "X = torch.ones(2, 1).lu_solve(*torch.linalg.lu_factor(A))\n"  # *args: not rewritten
        "m = model.cholesky()\n"  # unknown receiver: not flagged
    )
    assert _fix(source) == source.replace("A.cholesky(upper=True)", "torch.linalg.cholesky(A, upper=True)").replace(
        "(A + 1).qr(some=False)", "torch.linalg.qr(A + 1, mode='complete')")


def test_saved_variables_only_on_the_ctx_of_an_autograd_function() -> None:
    source = """
        import torch
        class Fn(torch.autograd.Function):
            @staticmethod
            def backward(ctx, grad):
                other = ctx
                return ctx.saved_variables, other.saved_variables, grad.saved_variables
        class Sub(Fn):
            @staticmethod
            def backward(ctx, grad):
                return ctx.saved_variables
        """
    assert _check(source) == [(6, "TL109", True), (10, "TL109", True)]


# --- TL107 / TL110 / TL111 ------------------------------------------------------------------


def test_variable_with_volatile_is_fixed_in_two_rounds() -> None:
    source = "import torch\nfrom torch.autograd import Variable\nv = Variable(x, volatile=True)\nprint(v)\n"
    # Dropping volatile=True alone would silently build the graph it meant to avoid: no safe fix.
    assert _fix(source, "TL102,TL107") == source
    # Unsafe: the inference goes in no_grad (TL102), then the wrapper goes (TL107) and with
    # it the import the fix orphaned.
    assert _fix(source, "TL102,TL107", unsafe=True) == "import torch\nwith torch.no_grad():\n    v = x\n    print(v)\n"
    false = "from torch.autograd import Variable\nv = Variable(x, volatile=False)\n"
    assert _fix(false, "TL102,TL107") == "from torch.autograd import Variable\nv = Variable(x)\n"
    assert _fix(false, "TL102,TL107", unsafe=True) == "v = x\n"


@pytest.mark.parametrize(
    "call, fixed",
    [
        ("Variable(a + b).sum()", "(a + b).sum()"),
        ("Variable(a)[0]", "a[0]"),
        ("Variable(-a, requires_grad=True)", "(-a).detach().requires_grad_()"),
        ("Variable(a, True)", "a.detach().requires_grad_()"),
        ("Variable(a, requires_grad=False)", "a"),
        ("Variable(a, name='w')", None),
        ("Variable()", None),
    ],
)
def test_variable_rewrites(call: str, fixed: Optional[str]) -> None:
    source = f"from torch.autograd import Variable\nv = {call}\n"
    result = _fix(source, "TL107", unsafe=True)
    expected = source if fixed is None else f"v = {fixed}\n"  # the import the fix orphaned goes
    assert result == expected


def test_tensor_type_dtype_with_kwargs_is_not_given_a_device() -> None:
    source = "import torch\nx = torch.zeros(2, dtype=torch.cuda.FloatTensor, **options)\n"
    assert _check(source, "TL110") == [(2, "TL110", False)]
    cpu = "import torch\nx = torch.zeros(2, dtype=torch.FloatTensor, **options)\n"
    assert _fix(cpu, "TL110") == "import torch\nx = torch.zeros(2, dtype=torch.float32, **options)\n"


def test_tensor_type_dtype_needs_a_torch_factory() -> None:
    source = """
        import torch
        import numpy as np
        a = np.zeros(2, dtype=torch.FloatTensor)
        b = x.new_zeros(2, dtype=torch.FloatTensor)
        c = torch.ones(2).new_zeros(2, dtype=torch.FloatTensor)
        """
    assert _check(source, "TL110") == [(5, "TL110", True)]


def test_legacy_function_subclass_chain_and_static_methods() -> None:
    source = """
        import torch
        class Base(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x
            @classmethod
            def backward(cls, ctx, grad):
                return grad
        class Child(Base):
            def forward(self, x):
                return x
        y = Child.apply(1)
        z = Base()(1)
        """
    assert _check(source, "TL111") == [(10, "TL111", False), (13, "TL111", False)]


# --- opt-in entries (TL117) ----------------------------------------------------------------


def test_documented_only_deprecations_are_tl117_not_tl109() -> None:
    source = "import torch\nn = torch.norm(x, dim=1)\nu, s, v = torch.svd(a)\nq, r = torch.qr(a)\n"
    assert _check(source) == [(4, "TL108", True)]  # torch.qr: removed in 2.14, the default target
    assert _check(source, codes="TL117") == [(2, "TL117", False), (3, "TL117", False)]
    engine = _engine("TL117")
    messages = [d.message for d in engine.check(source).diagnostics]
    assert "`torch.linalg.vector_norm` or `torch.linalg.matrix_norm`" in messages[0]


def test_tl117_is_opt_in() -> None:
    from torchlint.run.selection import select_rules
    from torchlint.rules import all_rules

    assert "TL117" not in {rule.code for rule in select_rules(all_rules(), "TL", None)}
    assert "TL117" in {rule.code for rule in select_rules(all_rules(), "TL,TL117", None)}


def test_norm_of_one_argument_gets_an_unsafe_fix() -> None:
    source = "from torch import norm\nimport torch\na = norm(x)\nb = torch.norm(x)\nc = torch.norm(x, 1)\n"
    assert _check(source, codes="TL117") == [(1, "TL117", True), (4, "TL117", True), (5, "TL117", False)]
    assert _fix(source, codes="TL117") == source  # unsafe: not applied by --fix alone
    assert _fix("import torch\nb = torch.norm(x)\n", codes="TL117", unsafe=True) == (
        "import torch\nb = torch.linalg.vector_norm(x)\n")
    assert _fix("from torch import norm\nb = norm(x)\n", codes="TL117", unsafe=True) == (
        "import torch\nb = torch.linalg.vector_norm(x)\n")
    engine = _engine("TL117")
    fixes = [d.fix for d in engine.check("import torch\nb = torch.norm(x)\n").diagnostics]
    assert fixes and not fixes[0].safe


def test_retain_variables_is_renamed_retain_graph_by_tl116_alone() -> None:
    # Issue 15: TL211 used to take ``retain_variables=`` for a misspelling and suggest the wrong
    # keyword (``grad_variables``). Every rule runs here; only TL116 answers, with ``retain_graph``.
    from torchlint.rules import all_rules

    source = (
        "import torch\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "loss = (x * 2).sum()\n"
        "loss.backward(retain_variables=True)\n"
        "torch.autograd.backward([loss], retain_variables=True)\n"
    )
    engine = Engine(all_rules())
    found = [(d.line, d.code) for d in engine.check(source).diagnostics]
    assert found == [(4, "TL116"), (5, "TL116")]
    fixed = engine.fix(source, unsafe=True).source
    assert fixed.count("retain_graph=True") == 2 and "variables" not in fixed


# --- --target-torch-version: the torch a project moves to (issue 35) ------------------------

REMOVED_IN_2_14 = """
import torch
A = torch.eye(2)
L = torch.cholesky(A)
Q, R = torch.qr(A, some=False)
U = A.cholesky(upper=True)
Q2, R2 = A.qr()
with torch.profiler.profile(use_cuda=True):
    pass
with torch.autograd.profiler.profile(use_cuda=True):
    pass
"""


@pytest.mark.parametrize("target, code", [("2.13", "TL109"), ("2.14", "TL108"), ("2.15", "TL108"), (None, "TL108")])
def test_removed_in_2_14_is_tl108_for_a_target_of_2_14_or_later(target, code) -> None:
    assert _check(REMOVED_IN_2_14, target=target) == [
        (3, code, True), (4, code, True), (5, code, True), (6, code, True), (7, code, False), (9, code, False)]


def test_removed_in_2_14_keeps_its_exact_rewrites() -> None:
    assert _fix(REMOVED_IN_2_14, target="2.14") == textwrap.dedent(REMOVED_IN_2_14).lstrip().replace(
        "torch.cholesky(A)", "torch.linalg.cholesky(A)").replace(
        "torch.qr(A, some=False)", "torch.linalg.qr(A, mode='complete')").replace(
        "A.cholesky(upper=True)", "torch.linalg.cholesky(A, upper=True)").replace(
        "A.qr()", "torch.linalg.qr(A)")


def test_removed_in_2_14_message_names_the_release() -> None:
    result = _engine("TL108", target="2.14").check("import torch\nL = torch.cholesky(A)\n")
    assert "removed in torch 2.14" in result.diagnostics[0].message


NEW_IN_2_14 = """
import torch
import torch.distributed as dist
with torch.autograd.profiler.profile(with_modules=True):
    pass
dist.distributed_c10d._set_pg_timeout(timeout)
dist.gather_into_tensor(out, x)
"""


@pytest.mark.parametrize("target, expected", [
    ("2.13", []),  # not deprecated yet in the torch the project moves to
    # _set_pg_timeout's replacement, set_timeout, came in 2.14: not asked of a project on 2.13
    ("2.14", [(3, "TL109", False), (6, "TL109", False)]),
    ("2.15", [(3, "TL109", False)]),  # gather_into_tensor is no longer deprecated
])
def test_deprecated_in_2_14_for_a_floor_of_2_13(target, expected) -> None:
    # the fixes name set_timeout / gather_single, which torch 2.13 (the floor) does not have
    assert _check(NEW_IN_2_14, torch_version="2.13", target=target) == expected


def test_deprecated_in_2_14_is_fixed_for_a_floor_of_2_14() -> None:
    assert _fix(NEW_IN_2_14, torch_version="2.14", target="2.14") == textwrap.dedent(NEW_IN_2_14).lstrip().replace(
        "dist.distributed_c10d._set_pg_timeout", "dist.distributed_c10d.set_timeout").replace(
        "dist.gather_into_tensor", "dist.gather_single")


NEW_IN_2_15 = """
import torch
from torch.autograd.profiler import EnforceUnique, load_nvprof, parse_nvprof_trace
from torch.distributed.checkpoint import _fsspec_filesystem
import torch.distributed.checkpoint._fsspec_filesystem
seen = EnforceUnique()
trace = load_nvprof("trace.prof")
events = parse_nvprof_trace("trace.prof")
config = torch.profiler._ExperimentalConfig(adjust_profiler_step=True)
torch.cuda.graph_annotations.clear_kernel_annotations()
"""


def test_deprecated_in_2_15() -> None:
    flagged = [(2, "TL109", False)] * 3 + [(line, "TL109", False) for line in (3, 4, 8, 9)]
    assert _check(NEW_IN_2_15, target="2.15") == flagged
    assert _check(NEW_IN_2_15) == flagged  # the default target: the newest release known
    assert _check(NEW_IN_2_15, target="2.14") == []


UNDEPRECATED_IN_2_15 = """
import torch.distributed as dist
dist.all_gather_into_tensor(out, x)
dist.reduce_scatter_tensor(out, x)
"""


def test_undeprecated_in_2_15_is_not_reported_from_2_15_on() -> None:
    assert _check(UNDEPRECATED_IN_2_15, target="2.14") == [(2, "TL109", True), (3, "TL109", True)]
    assert _check(UNDEPRECATED_IN_2_15, target="2.15") == []
    assert _check(UNDEPRECATED_IN_2_15) == []


def test_still_deprecated_private_collectives_stay_reported() -> None:
    source = "import torch.distributed as dist\ndist._all_gather_base(out, x)\ndist._reduce_scatter_base(out, x)\n"
    assert _check(source) == [(2, "TL109", True), (3, "TL109", True)]


def test_a_floor_newer_than_the_newest_release_is_the_target() -> None:
    source = "import torch\nL = torch.cholesky(A)\n"
    assert _check(source, torch_version="2.16") == [(2, "TL108", True)]


def test_target_older_than_the_floor_is_an_error() -> None:
    from torchlint.core.settings import SettingsError

    with pytest.raises(SettingsError, match="older than"):
        Settings(parse_version("2.14"), parse_version("2.13"))


OPTIMIZER_WITH_A_SET = """
import torch
from torch.optim import Adam
model = torch.nn.Linear(2, 2)
a = torch.optim.SGD(set(model.parameters()), lr=0.1)
b = Adam({model.weight, model.bias})
c = torch.optim.AdamW(params={p for p in model.parameters()})
d = torch.optim.SGD(list(model.parameters()), lr=0.1)
e = torch.optim.SGD(*groups)
f = torch.optim.SGD(lr=0.1, params=[model.weight])
s = set(model.parameters())
"""


def test_optimizer_given_a_set_is_deprecated_in_2_15() -> None:
    assert _check(OPTIMIZER_WITH_A_SET) == [(4, "TL109", False), (5, "TL109", False), (6, "TL109", False)]
    assert _check(OPTIMIZER_WITH_A_SET, target="2.14") == []
    message = _engine("TL109").check(textwrap.dedent(OPTIMIZER_WITH_A_SET).lstrip()).diagnostics[0].message
    assert message.startswith("`Optimizer(params={...})` is deprecated since torch 2.15")


def test_a_users_own_set_taking_function_is_not_an_optimizer() -> None:
    source = "def SGD(params, lr):\n    return params\nopt = SGD({1, 2}, lr=0.1)\n"
    assert _check(source) == []


GREEN_CONTEXTS = """
import torch
from torch.cuda.green_contexts import GreenContext
ctx = torch.cuda.GreenContext.create(num_sms=8)
ctx.set_context()
run()
ctx.pop_context()
g = GreenContext.create(num_sms=4)
g.set_context()
torch.cuda.GreenContext.pop_context(g)
"""


def test_green_context_stack_is_deprecated_in_2_14() -> None:
    assert _check(GREEN_CONTEXTS) == [(4, "TL109", False), (6, "TL109", False), (8, "TL109", False),
                                      (9, "TL109", False)]
    assert _check(GREEN_CONTEXTS, target="2.13") == []
    message = _engine("TL109").check(textwrap.dedent(GREEN_CONTEXTS).lstrip()).diagnostics[0].message
    assert "set_context` is deprecated since torch 2.14; use `" in message and "ctx.Stream()" in message


@pytest.mark.parametrize("source", [
    "import torch\ndef enter(ctx):\n    ctx.set_context()\n",  # unknown receiver
    "import torch\nctx = make()\nctx.set_context()\n",
    "import torch\nctx = torch.cuda.GreenContext.create(num_sms=8)\nctx = other\nctx.set_context()\n",
    "import torch\nif flag:\n    ctx = torch.cuda.GreenContext.create(num_sms=8)\nctx.set_context()\n",
])
def test_set_context_needs_a_known_green_context(source: str) -> None:
    assert _check(source) == []


STFT_OLD_LAYOUT = """
import torch as th
from torch import stft
x = th.randn(400)
a = th.stft(x, 64, return_complex=False)
b = x.stft(64, return_complex=False).abs()
c = (stft(x, 64, 16, 64, None, True, 'reflect', False, None, False))
d = x.stft(64,
           return_complex=False)
"""


def test_stft_return_complex_false_becomes_view_as_real() -> None:
    """The exact rewrite (tests/test_deprecation_rewrites_run.py runs it): the call gets
    ``return_complex=True`` and its result goes through ``view_as_real``, spelled through the file's
    torch; parentheses and what follows the call stay outside."""
    assert _check(STFT_OLD_LAYOUT) == [(4, "TL109", True), (5, "TL109", True), (6, "TL109", True),
                                       (8, "TL109", True)]
    assert _fix(STFT_OLD_LAYOUT) == textwrap.dedent("""
        import torch as th
        from torch import stft
        x = th.randn(400)
        a = th.view_as_real(th.stft(x, 64, return_complex=True))
        b = th.view_as_real(x.stft(64, return_complex=True)).abs()
        c = (th.view_as_real(stft(x, 64, 16, 64, None, True, 'reflect', False, None, True)))
        d = th.view_as_real(x.stft(64,
                   return_complex=True))
        """).lstrip()


@pytest.mark.parametrize("source", [
    "import torch\nx = torch.randn(400)\ny = torch.stft(x, 64, return_complex=True)\n",
    "import torch\nx = torch.randn(400)\ny = torch.stft(x, 64, return_complex=flag)\n",  # computed
    "import torch\ny = audio.stft(64, return_complex=False)\n",  # not known to be a tensor
    "import librosa\nx = librosa.load('a.wav')\ny = x.stft(64, return_complex=False)\n",
    # at the function's position 9 the method has align_to_window
    "import torch\nx = torch.randn(400)\ny = x.stft(64, 16, 64, None, True, 'reflect', False, None, True, False)\n",
])
def test_stft_not_reported(source: str) -> None:
    assert _check(source) == []


EXPERIMENTAL_CONFIG_FIELDS = """
import torch
from torch.profiler import _ExperimentalConfig
config = torch._C._profiler._ExperimentalConfig(profiler_metrics=["kineto__tensor_core_insts"], verbose=True)
per_kernel = _ExperimentalConfig(profiler_measure_per_kernel=True)
computed = torch.profiler._ExperimentalConfig(profiler_metrics=metrics())
"""


@pytest.mark.parametrize("target, expected", [
    ("2.13", []),  # silent in 2.13: the fields still configure CUDA metrics there
    ("2.14", [(3, "TL109"), (4, "TL109"), (5, "TL109")]),  # ignored, and profile() warns
    ("2.15", [(3, "TL108"), (4, "TL108"), (5, "TL108")]),  # the constructor no longer takes them
])
def test_experimental_config_fields_of_2_14(target, expected) -> None:
    found = _check(EXPERIMENTAL_CONFIG_FIELDS, torch_version="2.13", target=target)
    assert [(line, code) for line, code, _ in found] == expected
    assert not any(fixable for _, _, fixable in found), "a floor of 2.13 still uses the fields: no fix"
    message = _engine("TL108").check(textwrap.dedent(EXPERIMENTAL_CONFIG_FIELDS).lstrip()).diagnostics[0].message
    assert "removed in torch 2.15" in message


def test_experimental_config_fields_are_dropped_for_a_floor_of_2_14() -> None:
    """torch 2.14 ignores the fields: leaving them out is exact, unless the value runs code."""
    assert _fix(EXPERIMENTAL_CONFIG_FIELDS, torch_version="2.14") == textwrap.dedent(EXPERIMENTAL_CONFIG_FIELDS).lstrip(
        ).replace('profiler_metrics=["kineto__tensor_core_insts"], ', "").replace(
        "profiler_measure_per_kernel=True", "")
