"""TL301 stays silent where the code shows `x` holds whole numbers only (``analysis/integral.py``).

``log(1 + x)`` and ``exp(x) - 1`` lose nothing when ``x`` is a whole number:
``1 + x`` is exact and ``x`` is 0 or at least 1 in size. The evidence must be
in the code (``torch.arange(n)``, sizes, ``torch.floor``, ``int`` annotations,
a project function that only rearranges integer-valued arguments), followed
through the statements that reach the read; anything else stays reported.
"""

import json
import subprocess
import sys
import textwrap

import pytest

from torchlint.engine.linter import Engine
from torchlint.rules import rule_by_code


def tl301_lines(code):
    result = Engine([rule_by_code("TL301")]).check(textwrap.dedent(code))
    return sorted(d.line for d in result.diagnostics if d.code == "TL301")


WHOLE = [
    pytest.param("""
        import torch
        def f(n):
            x = torch.arange(n).float()
            return torch.log(1 + x)
        """, id="arange-of-end"),
    pytest.param("""
        import torch
        def f(start: int, end: int):
            x = torch.arange(start, end, 2)
            return torch.log(1 + x.abs())
        """, id="arange-int-annotated-start"),
    pytest.param("""
        import torch
        def f(x):
            n = x.shape[0] + len(x)
            return torch.log(1 + torch.tensor(n)), torch.exp(torch.tensor(x.size(1))) - 1
        """, id="sizes"),
    pytest.param("""
        import torch
        def f(n):
            x = torch.arange(n).float()
            for _ in range(3):
                x = x * 2 - 1
                x.abs_()
            return torch.log(1 + x)
        """, id="loop-keeping-whole"),
    pytest.param("""
        import torch
        def f(n, scaled):
            x = torch.arange(n).float()
            if scaled:
                x /= n
                y = torch.log(1 + x)  # not here: see the other test
                return y
            else:
                x[0] = 3
                return torch.log(1 + x)
        """, id="sibling-branch-divides"),
    pytest.param("""
        import torch
        def f(x):
            return torch.log(1 + torch.floor(x / 2)), torch.log(1 + x.round()), torch.log(1 + x.argmax(0))
        """, id="roundings-and-indices"),
    pytest.param("""
        import torch
        def grid(*tensors):
            return torch.meshgrid(*tensors, indexing="ij")
        def f(n):
            table = torch.stack(grid(torch.arange(n), torch.arange(n))).float()
            return torch.log(1 + table.abs())
        """, id="local-function-rearranging"),
    pytest.param("""
        import torch
        def softplus_inverse_of_one():
            return torch.log(torch.exp(torch.Tensor([1.0])) - 1)
        """, id="legacy-constructor-of-a-list"),
    pytest.param("""
        import torch
        class Aligner(torch.nn.Module):
            def _durations(self, path):
                counts = torch.sum(path, -1).int()
                return counts, path
            def forward(self, path):
                counts, _ = self._durations(path)
                steps = counts
                return torch.log(steps + 1)
        """, id="tuple-item-of-an-own-method"),
]


@pytest.mark.parametrize("code", WHOLE)
def test_whole_numbers_are_not_reported(code):
    lines = tl301_lines(code)
    if "not here" in code:  # the branch that divided stays reported
        assert lines == [7]
    else:
        assert lines == []


NOT_WHOLE = [
    pytest.param("""
        import torch
        def f(n):
            x = torch.arange(n).float()
            while x.max() > 1:
                x = x / 2
            return torch.log(1 + x)
        """, id="loop-divides"),
    pytest.param("""
        import torch
        def f(n):
            x = torch.arange(n).float()
            x.div_(n)
            return torch.log(1 + x)
        """, id="in-place-division"),
    pytest.param("""
        import torch
        def f(n):
            x = torch.arange(n).float()
            x[:, 0] /= n
            return torch.log(1 + x)
        """, id="in-place-subscript-division"),
    pytest.param("""
        import torch
        def f(start, end):
            x = torch.arange(start, end)
            return torch.log(1 + x)
        """, id="arange-unknown-start"),
    pytest.param("""
        import torch
        def f(n: float):
            return torch.log(1 + torch.tensor(n))
        """, id="float-annotation"),
    pytest.param("""
        import torch
        def f(n, pairs):
            x = torch.arange(n)
            for x, _ in pairs:
                pass
            return torch.log(1 + x)
        """, id="rebound-by-loop"),
    pytest.param("""
        import torch
        def f(n):
            x = torch.arange(n)
            if (x := x / 3).sum() > 0:
                pass
            return torch.log(1 + x)
        """, id="walrus"),
    pytest.param("""
        import torch
        def f(n):
            try:
                x = torch.arange(n)
            except TypeError:
                x = torch.rand(n)
            return torch.log(1 + x)
        """, id="handler-rebinds"),
    pytest.param("""
        import torch
        def grid(*tensors):
            return [t / 2 for t in torch.meshgrid(*tensors, indexing="ij")]
        def f(n):
            table = torch.stack(grid(torch.arange(n), torch.arange(n)))
            return torch.log(1 + table.abs())
        """, id="local-function-scaling"),
    pytest.param("""
        import torch
        from helpers import normalise
        def f(n):
            return torch.log(1 + normalise(torch.arange(n)))
        """, id="unknown-function"),
    pytest.param("""
        import torch
        x = torch.arange(4)
        y = torch.log(1 + x)  # module level: names are not followed
        """, id="module-level"),
    pytest.param("""
        import torch
        def f():
            return torch.exp(torch.Tensor(3)) - 1  # uninitialised memory
        """, id="legacy-constructor-of-sizes"),
    pytest.param("""
        import torch
        class Aligner(torch.nn.Module):
            def _durations(self, path):
                return torch.sum(path, -1).int(), path / 2
            def forward(self, path):
                _, halves = self._durations(path)
                return torch.log(halves + 1)
        """, id="tuple-item-of-an-own-method-not-whole"),
]


@pytest.mark.parametrize("code", NOT_WHOLE)
def test_values_not_shown_whole_are_reported(code):
    assert len(tl301_lines(code)) == 1


GRID = """\
import torch


def ndgrid(*tensors):
    try:
        return torch.meshgrid(*tensors, indexing="ij")
    except TypeError:
        return torch.meshgrid(*tensors)


def scaled_grid(*tensors):
    return tuple(t / 2 for t in torch.meshgrid(*tensors, indexing="ij"))
"""

MODEL = """\
from typing import Tuple

import torch

from layers.grid import ndgrid, scaled_grid


def log_coords(win_size: Tuple[int, int]):
    h = torch.arange(-(win_size[0] - 1), win_size[0]).to(torch.float32)
    w = torch.arange(-(win_size[1] - 1), win_size[1]).to(torch.float32)
    table = torch.stack(ndgrid(h, w)).permute(1, 2, 0).contiguous()
    return torch.sign(table) * torch.log(1.0 + table.abs())


def scaled_log_coords(n):
    table = torch.stack(scaled_grid(torch.arange(n), torch.arange(n)))
    return torch.log(1.0 + table.abs())
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "layers").mkdir()
    (tmp_path / "layers" / "__init__.py").write_text("")
    (tmp_path / "layers" / "grid.py").write_text(GRID)
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n")
    return tmp_path


def test_project_function_rearranging_whole_numbers_keeps_them_whole(project):
    """timm's ``ndgrid`` (another module): only the grid that ``scaled_grid`` halves is reported,
    by the command, by flake8 and from standard input alike."""
    command = subprocess.run([sys.executable, "-m", "torchlint.frontends.cli", "--no-cache", "--select", "TL301",
                              "--output-format", "json", "model.py"], cwd=project, capture_output=True, text=True,
                             timeout=300)
    assert [(f["location"]["row"], f["code"]) for f in json.loads(command.stdout)] == [(17, "TL301")], \
        command.stderr
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "TL301", "model.py"], cwd=project,
                            capture_output=True, text=True, timeout=300)
    assert [line.split(":")[1] for line in flake8.stdout.splitlines()] == ["17"], flake8.stdout + flake8.stderr
    stdin = subprocess.run([sys.executable, "-m", "torchlint.frontends.cli", "--no-cache", "--select", "TL301",
                            "--output-format", "json", "--stdin-filename", "model.py", "-"], cwd=project,
                           input=MODEL, capture_output=True, text=True, timeout=300)
    assert [f["location"]["row"] for f in json.loads(stdin.stdout)] == [17], stdin.stderr


@pytest.mark.parametrize("code", [
    pytest.param("""
        import torch
        def f(n, xs):
            x = torch.arange(n)
            return torch.stack([torch.log(1 + x) for x in xs])
        """, id="comprehension-variable"),
    pytest.param("""
        import torch
        def f(n):
            x = torch.arange(n).float()
            while torch.log(1 + x).sum() > 3:
                x = x / 2
        """, id="while-test-after-the-body"),
    pytest.param("""
        import torch
        def scale(x, dim):
            return x * dim
        def f(n):
            return torch.log(1 + scale(torch.arange(n), dim=0.5))
        """, id="project-keyword-holding-a-number"),
])
def test_scopes_loops_and_keywords_are_respected(code):
    assert len(tl301_lines(code)) == 1


@pytest.mark.parametrize("code, reported", [
    # torch_geometric's degree(): ones added into zeros, whole whatever the index and dtype given
    pytest.param("""
        import torch
        def degree(index, num_nodes, dtype=None):
            out = torch.zeros((num_nodes, ), dtype=dtype, device=index.device)
            one = torch.ones((index.size(0), ), dtype=out.dtype, device=out.device)
            return out.scatter_add_(0, index, one)
        def scale(out, index):
            deg = degree(index, out.size(0), dtype=out.dtype).view(-1, 1)
            return out * torch.log(deg + 1), out / torch.log(deg.clamp(min=1) + 1)
        """, [], id="scatter-add-of-ones-whatever-the-arguments"),
    # the same with weights scattered instead of ones: reported
    pytest.param("""
        import torch
        def weighted_degree(index, weight, num_nodes):
            out = torch.zeros((num_nodes, ))
            return out.scatter_add_(0, index, weight)
        def scale(out, index, weight):
            deg = weighted_degree(index, weight, out.size(0))
            return torch.log(deg + 1)
        """, [8], id="scatter-add-of-unknown-weights"),
    # a function whose result is whole only given whole arguments, called with a fraction
    pytest.param("""
        import torch
        def shifted(x):
            return x.add(1)
        def f(n):
            return torch.log(1 + shifted(torch.arange(n) * 0.5)), torch.log(1 + shifted(torch.arange(n)))
        """, [6], id="add-method-keeps-whole-given-whole-arguments"),
    pytest.param("""
        import torch
        def f(mask, n):
            x = torch.arange(n).masked_fill(mask, 0.5)
            return torch.log(1 + x)
        """, [5], id="masked-fill-with-a-fraction"),
])
def test_combining_methods_and_functions_whole_whatever_their_arguments(code, reported):
    assert tl301_lines(code) == reported


@pytest.mark.parametrize("code, reported", [
    # speechbrain's HiFi-GAN: the duration is rounded to a whole number right away
    pytest.param("""
        import torch
        def durations(log_dur_pred):
            return torch.clamp(torch.round((torch.exp(log_dur_pred) - 1)).long(), min=1)
        """, [], id="torch-round-then-long"),
    pytest.param("""
        import torch
        def f(x, y):
            return (torch.exp(x) - 1).long(), int(torch.log(1 + y))
        """, [], id="long-method-and-int"),
    # rounding to decimals keeps small values: reported; so is a value used as it is
    pytest.param("""
        import torch
        def f(x, y):
            a = torch.round(torch.log(1 + y), decimals=2)
            return a, torch.exp(x) - 1
        """, [4, 5], id="decimals-and-unrounded"),
])
def test_a_result_rounded_to_whole_numbers_right_away_is_not_reported(code, reported):
    assert tl301_lines(code) == reported


_ALIGNER = '''import torch
import torch.nn as nn


class Acoustic(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def _align(self, scores):
        """The hard alignment of ``scores`` and the durations it gives.

        A body long enough for the check to cut it where no rule asks for it:
        the durations are counts of the frames each token is aligned to.
        """
        hard = (scores == scores.max(-1, keepdim=True).values).float()
        return torch.sum(hard, -1).int(), hard

    def forward(self, scores):
        durations, _ = self._align(scores)
        dr = durations
        return torch.log(dr + 1)

    def unrelated(self, x):
        return self.proj(x) * 2
'''


def test_whole_items_of_an_own_method_are_seen_in_a_narrowed_file(tmp_path):
    # coqui-tts: the durations another method returns are counts (``.int()``); the check
    # must read that method's body even where it holds no candidate of its own
    (tmp_path / "acoustic.py").write_text(_ALIGNER)
    done = subprocess.run([sys.executable, "-m", "torchlint", "--isolated", "--no-cache", "--select", "TL301",
                           "acoustic.py"], cwd=tmp_path, capture_output=True, text=True)
    assert "TL301" not in done.stdout and done.returncode == 0, done.stdout + done.stderr
    (tmp_path / "acoustic.py").write_text(_ALIGNER.replace(".int(), hard", ", hard"))
    done = subprocess.run([sys.executable, "-m", "torchlint", "--isolated", "--no-cache", "--select", "TL301",
                           "acoustic.py"], cwd=tmp_path, capture_output=True, text=True)
    assert "acoustic.py:22:" in done.stdout, done.stdout + done.stderr
