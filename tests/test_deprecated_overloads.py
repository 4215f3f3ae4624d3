"""TL118's table of deprecated scalar-first overloads, held to the installed torch (2.13, CPU).

The table (``knowledge/data/torch_deprecated_overloads.json``) is mined from torch's
own ``deprecated.yaml`` by ``scripts/mine_deprecated_overloads.py``. For every entry
a witness calls the overload the old way (``x.add_(2.0, other)``,
``torch.addmm(0.5, input, 3.0, mat1, mat2, out=out)``); the test checks that torch
warns "This overload of ... is deprecated" there, fixes the witness with the real
engine, runs the fixed code with warnings as errors and compares the results. The
witnesses then go through the real CLI (``--fix`` twice: the second changes
nothing) and flake8, which must report what the CLI reports. Nothing is downloaded.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Dict, List

import pytest

torch = pytest.importorskip("torch")

from conftest import run_flake8, run_torchlint  # noqa: E402

from torchlint.engine.linter import Engine  # noqa: E402
from torchlint.knowledge import deprecated_overloads as table  # noqa: E402
from torchlint.knowledge.deprecated_overloads import FUNCTION, Overload  # noqa: E402
from torchlint.rules import rule_by_code  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "mine_deprecated_overloads.py"
DATA = REPO / "torchlint" / "knowledge" / "data" / table.DATA_FILE
OVERLOADS = table.overloads()

# The scalars the witnesses pass: all different, so that a scalar moved to the
# wrong keyword changes the result.
SCALARS = {"alpha": "3.0", "beta": "0.5", "value": "2.0"}
# The tensors each family takes (the receiver is ``input``), shaped to fit.
SHAPES: Dict[str, Dict[str, str]] = {
    "add": {"input": "torch.randn(3)", "other": "torch.randn(3)"},
    "addcmul": {"input": "torch.randn(3)", "tensor1": "torch.randn(3)", "tensor2": "torch.randn(3)"},
    "addcdiv": {"input": "torch.randn(3)", "tensor1": "torch.randn(3)", "tensor2": "torch.rand(3) + 1"},
    "addmm": {"input": "torch.randn(2, 2)", "mat1": "torch.randn(2, 3)", "mat2": "torch.randn(3, 2)"},
    "addmv": {"input": "torch.randn(2)", "mat": "torch.randn(2, 3)", "vec": "torch.randn(3)"},
    "addr": {"input": "torch.randn(2, 3)", "vec1": "torch.randn(2)", "vec2": "torch.randn(3)"},
    "addbmm": {"input": "torch.randn(2, 2)", "batch1": "torch.randn(4, 2, 3)", "batch2": "torch.randn(4, 3, 2)"},
    "baddbmm": {"input": "torch.randn(4, 2, 2)", "batch1": "torch.randn(4, 2, 3)",
                "batch2": "torch.randn(4, 3, 2)"},
    "sspaddmm": {"input": "torch.randn(2, 2).to_sparse()", "mat1": "torch.randn(2, 3).to_sparse()",
                 "mat2": "torch.randn(3, 2)"},
}
SHAPES["sub"] = SHAPES["add"]


def _family(overload: Overload) -> str:
    return overload.name.rstrip("_")


def witness(overload: Overload) -> str:
    """Code calling ``overload`` the deprecated way; the result is ``result``."""
    shapes = SHAPES[_family(overload)]
    lines = ["import torch", "torch.manual_seed(0)"]
    lines += [f"{name} = {make}" for name, make in shapes.items()]
    receiver = "input"
    if overload.name.endswith("_"):
        lines.append("target = input.clone()")  # the in-place forms update their input
        receiver = "target"
    args = [SCALARS.get(name) or (receiver if name == "input" else name) for name in overload.old]
    if overload.form == FUNCTION:
        call = f"torch.{overload.name}({', '.join(args)}"
        if overload.out:
            lines.append(f"out = torch.empty_like({receiver})")
            call += ", out=out"
        call += ")"
    else:
        call = f"{receiver}.{overload.name}({', '.join(args)})"
    lines.append(f"result = {call}")
    return "\n".join(lines) + "\n"


def _id(overload: Overload) -> str:
    return f"{overload.form}-{overload.name}-{len(overload.old)}{'-out' if overload.out else ''}"


def _engine() -> Engine:
    return Engine([rule_by_code("TL118")])


def _findings(code: str) -> List[str]:
    return [d.message for d in _engine().check(code).diagnostics]


def _run(code: str, warnings_as_errors: bool):
    namespace: Dict[str, object] = {}
    torch.set_warn_always(True)  # torch warns of each overload once per process otherwise
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("error" if warnings_as_errors else "always")
            exec(compile(code, "<witness>", "exec"), namespace)
    finally:
        torch.set_warn_always(False)
    result = namespace["result"]
    return (result.to_dense() if result.is_sparse else result), [str(w.message) for w in caught]


# -- the mined data --------------------------------------------------------------------


def test_committed_data_is_current() -> None:
    import json

    committed = json.loads(DATA.read_text(encoding="utf-8"))
    if torch.__version__.split("+")[0] != committed["torch"]:
        pytest.skip(f"the data was mined from torch {committed['torch']}")
    run = subprocess.run([sys.executable, str(SCRIPT), "--stdout"], capture_output=True, text=True, timeout=300,
                         cwd=REPO)
    assert run.returncode == 0, run.stderr
    assert run.stdout == DATA.read_text(encoding="utf-8"), (
        "torch's deprecated overloads changed: run python scripts/mine_deprecated_overloads.py")


def test_table_covers_the_families_torch_deprecates() -> None:
    assert {_family(o) for o in OVERLOADS} == set(SHAPES)
    assert len(OVERLOADS) == 48  # torch 2.13: 42 deprecated.yaml lines in their Python forms


# -- every entry, under torch ----------------------------------------------------------


@pytest.mark.parametrize("overload", OVERLOADS, ids=_id)
def test_the_fix_of_each_overload_runs_the_same_without_the_warning(overload: Overload) -> None:
    original = witness(overload)
    assert len(_findings(original)) == 1, original
    fixed = _engine().fix(original).source
    assert fixed != original and not _findings(fixed), fixed
    assert _engine().fix(fixed).source == fixed, "the fix is not idempotent"

    before, said = _run(original, warnings_as_errors=False)
    warning = next((m for m in said if f"This overload of {overload.name} is deprecated" in m), None)
    assert warning is not None, said
    # The rewrite is the signature torch suggests: the tensors by position, the scalars by keyword.
    suggested = warning.split("instead:", 1)[1]
    positional, keywords = suggested.split("*", 1)
    places = [positional.find(f"Tensor {name}") for name in overload.new]
    assert -1 not in places and places == sorted(places), warning
    assert all(f"Number {name}" in keywords for name in overload.keywords), warning
    after, _ = _run(fixed, warnings_as_errors=True)
    assert torch.equal(before, after), f"{before} != {after}\n{fixed}"


def test_the_fix_names_torchs_suggested_keywords() -> None:
    fixed = _engine().fix(witness(table.lookup("addmm", FUNCTION, 5))).source
    assert "result = torch.addmm(input, mat1, mat2, beta=0.5, alpha=3.0, out=out)" in fixed


# -- the real CLI and flake8 -------------------------------------------------------------


@pytest.fixture(scope="module")
def witnesses(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("overloads")
    for overload in OVERLOADS:
        (folder / f"{_id(overload).replace('-', '_')}.py").write_text(witness(overload), encoding="utf-8")
    return folder


def test_flake8_reports_what_the_cli_reports(witnesses: Path) -> None:
    cli = run_torchlint(["--select", "TL118", "--isolated", "."], cwd=witnesses)
    flake8 = run_flake8(["--select", "TL118", "."], cwd=witnesses)
    lines = _without_dot([line for line in cli.stdout.splitlines() if ": TL118 " in line])
    assert len(lines) == len(OVERLOADS), cli.stdout + cli.stderr
    assert _without_dot(flake8.stdout.splitlines()) == lines, flake8.stdout + flake8.stderr


def _without_dot(lines: List[str]) -> List[str]:
    """The tools spell the folder ``.`` differently (``./a.py``, ``a.py``)."""
    return sorted(line[2:] if line.startswith("./") else line for line in lines)


def test_cli_fix_is_the_engines_and_fixing_twice_changes_nothing(witnesses: Path, tmp_path: Path) -> None:
    for path in witnesses.glob("*.py"):
        (tmp_path / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    first = run_torchlint(["--select", "TL118", "--isolated", "--fix", "."], cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    fixed = {path.name: path.read_text(encoding="utf-8") for path in tmp_path.glob("*.py")}
    for name, text in fixed.items():
        assert text == _engine().fix((witnesses / name).read_text(encoding="utf-8")).source, name
    second = run_torchlint(["--select", "TL118", "--isolated", "--fix", "."], cwd=tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    assert {path.name: path.read_text(encoding="utf-8") for path in tmp_path.glob("*.py")} == fixed


# -- what is flagged, and what is not --------------------------------------------------------

OPTIMIZER = """\
import math
import torch
from torch.optim import Optimizer


class Adam(Optimizer):
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad.data
                state = self.state[p]
                exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']
                beta1, beta2 = group['betas']
                exp_avg.mul_(beta1).add_(1 - beta1, grad)
                exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)
                denom = exp_avg_sq.sqrt().add_(group['eps'])
                step_size = group['lr'] * math.sqrt(1 - beta2) / (1 - beta1)
                p.data.addcdiv_(-step_size, exp_avg, denom)
                if group['weight_decay'] != 0:
                    p.data.add_(-group['weight_decay'], p.data)


def sgd(model: torch.nn.Module, lr):
    net = torch.nn.Linear(2, 2)
    for p in net.parameters():
        p.data.add_(-lr, p.grad.data)
    for name, p in net.named_parameters():
        p.data.sub_(lr, p.grad.data)
"""


def _lines(code: str) -> List[int]:
    return [d.line for d in _engine().check(textwrap.dedent(code)).diagnostics]


def test_a_2017_optimizer_is_flagged_and_fixed() -> None:
    # ``group['params']`` of an Optimizer subclass lists tensors, as a module's
    # ``parameters()`` does: inference knows ``p`` is a tensor.
    assert _lines(OPTIMIZER) == [16, 17, 20, 22, 28, 30]
    fixed = _engine().fix(OPTIMIZER).source
    assert "exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)" in fixed
    assert "exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)" in fixed
    assert "p.data.addcdiv_(exp_avg, denom, value=-step_size)" in fixed
    assert "p.data.add_(p.data, alpha=-group['weight_decay'])" in fixed
    assert "p.data.sub_(p.grad.data, alpha=lr)" in fixed


def test_param_groups_of_a_class_that_is_no_optimizer_prove_nothing() -> None:
    code = OPTIMIZER.replace("class Adam(Optimizer):", "class Adam(object):")
    assert _lines(code) == [28, 30]  # only the module's parameters are known


@pytest.mark.parametrize("code", [
    # Python's and other libraries' ``add``: receivers not known to be tensors.
    "seen = set()\nseen.add(1)\n",
    "def f(counter, graph, edge, weight):\n    counter.add(1, 2)\n    graph.add(edge, weight)\n",
    "from numba import cuda\n\ndef k(lock, b, u):\n    cuda.atomic.add(lock, (b, u + 1), -1)\n",
    # A tensor, or a string, in a scalar's place: someone else's method.
    "import torch\n\ndef f(graph):\n    graph.add(torch.ones(2), torch.ones(2))\n",
    "import torch\n\ndef f(writer):\n    writer.add('loss', torch.ones(2))\n",
    # Receivers that are no tensor: an imported module or class, a method's ``self``.
    "import operator\nimport torch\nt = torch.ones(2)\nu = operator.add(2, t)\nv = torch.Tensor.add(t, t)\n",
    "import torch\n\nclass Buffer:\n    def push(self, error):\n        self.add(error, torch.ones(2))\n",
    # The current signatures.
    "import torch\nx = torch.ones(3)\nx.add_(x, alpha=2)\ny = torch.add(x, x)\nz = x.addcmul(x, x, value=0.5)\n",
    "import torch\nm = torch.ones(2, 2)\ny = torch.addmm(m, m, m, torch.float16)\nz = torch.addmm(m, m, m, beta=2)\n",
    # Keywords the overload does not take, ``*args``: not decided.
    "import torch\nx = torch.ones(3)\nx.add_(2, x, alpha=3)\nx.add_(*args)\n",
    # A function of the user's own named like torch's.
    "def add_(a, b):\n    return a\nadd_(1, 2)\n",
])
def test_not_flagged(code: str) -> None:
    assert _lines(code) == []


def test_no_fix_where_the_order_of_calls_would_change() -> None:
    code = "import torch\nw = torch.ones(3)\nw.add_(-rate(), torch.ones(3))\nw.add_(-0.1, torch.ones(3))\n"
    fixed = _engine().fix(code).source
    assert "w.add_(-rate(), torch.ones(3))" in fixed  # rate() would run after torch.ones(3)
    assert "w.add_(torch.ones(3), alpha=-0.1)" in fixed  # a number spelled in the code can move


def test_a_def_variable_no_call_can_rebind_may_move_past_calls() -> None:
    code = textwrap.dedent("""\
        import torch

        def line_search(p, update, step_size):
            p.add_(step_size, update.view_as(p))
            p.add_(-step_size, update.view_as(p))

        def closure_rebinds(update):
            p = torch.ones(3)
            step = 0.1
            def grow():
                nonlocal step
                step = 0.2
                return update
            p.add_(step, grow())
        """)
    assert _lines(code) == [4, 5, 14]
    fixed = _engine().fix(code).source
    assert "p.add_(update.view_as(p), alpha=step_size)" in fixed  # a parameter of the def
    assert "p.add_(-step_size, update.view_as(p))" in fixed  # ``-x`` is computed when evaluated
    assert "p.add_(step, grow())" in fixed  # ``grow`` rebinds ``step``


def test_param_groups_zipped_with_other_lists_and_a_gradient_rebound_from_itself() -> None:
    code = textwrap.dedent("""\
        import torch


        class Bounded(torch.optim.Optimizer):
            def step(self):
                for group, base_lr in zip(self.param_groups, self.base_lrs):
                    for p in group['params']:
                        grad = p.grad.data
                        if group['weight_decay'] != 0:
                            grad = grad.add(group['weight_decay'], p.data)
                        state = self.state[p]
                        state['exp_avg'].mul_(0.9).add_(0.1, grad)
        """)
    assert _lines(code) == [10, 12]
