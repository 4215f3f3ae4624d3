"""TL301's claim, measured: where the naive forms fail, the fixed code is right.

The runnable examples (tests/test_runtime_torch.py) prove the fix keeps the
values where the naive forms are still accurate; this proves the other half on
inputs where they are not, running the real fixer's output under torch 2.13.
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from torchlint.engine.linter import Engine  # noqa: E402
from torchlint.rules import rule_by_code  # noqa: E402

SOURCE = """\
import torch
small = torch.tensor([1e-10, -3e-9, 2e-8])
large = torch.tensor([[1000.0, 1000.0], [-1000.0, -1001.0]])
a = torch.log(1 + small)
b = torch.exp(small) - 1
c = torch.log(torch.sum(torch.exp(large), dim=1))
"""


def run(code):
    namespace = {}
    exec(compile(code, "<TL301>", "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def runs():
    fixed = Engine([rule_by_code("TL301")]).fix(SOURCE, unsafe=True)
    assert fixed.diagnostics == []
    return run(SOURCE), run(fixed.source)


def test_log1p_keeps_tiny_inputs(runs):
    original, fixed = runs
    assert original["a"][0].item() == 0.0  # 1 + 1e-10 rounds to 1 in float32
    expected = torch.tensor([math.log1p(v) for v in (1e-10, -3e-9, 2e-8)])
    assert torch.allclose(fixed["a"], expected, rtol=1e-6, atol=0)
    assert not torch.allclose(original["a"], expected, rtol=1e-2, atol=0)


def test_expm1_keeps_tiny_inputs(runs):
    original, fixed = runs
    expected = torch.tensor([math.expm1(v) for v in (1e-10, -3e-9, 2e-8)])
    assert original["b"][0].item() == 0.0
    assert torch.allclose(fixed["b"], expected, rtol=1e-6, atol=0)
    assert not torch.allclose(original["b"], expected, rtol=1e-2, atol=0)


def test_logsumexp_does_not_overflow(runs):
    original, fixed = runs
    expected = torch.tensor([1000.0 + math.log(2.0), -1000.0 + math.log1p(math.exp(-1.0))])
    assert torch.isinf(original["c"]).all()  # inf and -inf
    assert torch.allclose(fixed["c"], expected)
