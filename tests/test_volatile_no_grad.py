"""TL102/TL107 on ``volatile=True`` (issue 34): the unsafe fix puts the inference
code in ``with torch.no_grad():`` where that is exact, so the fixed program
builds no graph, as the original did before torch 0.4 (dropping the keyword
alone kept it running but recording). Run through the real CLI; the fixed
program runs under torch."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import run_torchlint

EVALUATE = """\
import torch
from torch.autograd import Variable

model = torch.nn.Linear(2, 1)


def evaluate(batches):
    outputs = []
    for batch in batches:
        x = Variable(batch, volatile=True)

        out = model(x)
        outputs.append(out)
    return outputs


print(all(not out.requires_grad for out in evaluate([torch.ones(3, 2)])))
"""


def _fix(tmp_path, text: str, *options: str) -> str:
    path = tmp_path / "evaluate.py"
    path.write_text(text)
    result = run_torchlint(["--isolated", "--no-cache", "--fix", *options, "evaluate.py"], cwd=tmp_path)
    assert "discarded" not in result.stderr, result.stderr
    return path.read_text()


def test_the_unsafe_fix_keeps_inference_without_a_graph(tmp_path):
    pytest.importorskip("torch")
    fixed = _fix(tmp_path, EVALUATE, "--unsafe-fixes")
    assert "volatile" not in fixed and "Variable" not in fixed
    assert "        with torch.no_grad():\n            x = batch\n\n            out = model(x)\n" in fixed
    assert not any(line != line.rstrip() for line in fixed.splitlines())  # no indented blank line
    ran = subprocess.run([sys.executable, "-W", "error", "-c", fixed], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "True"  # what volatile meant; dropping the keyword alone printed False


def test_safe_fixes_leave_volatile_true_reported(tmp_path):
    fixed = _fix(tmp_path, EVALUATE)
    assert fixed == EVALUATE
    check = run_torchlint(["--isolated", "--no-cache", "evaluate.py"], cwd=tmp_path)
    assert "TL102" in check.stdout


@pytest.mark.parametrize("body, reason", [
    ("x = Variable(batch, volatile=True)\nloss = model(x).sum()\nloss.backward()\n", "the def trains"),
    ("x = Variable(batch, volatile=True)\nx.requires_grad_()\nout = model(x)\n", "requires_grad touched"),
    ("x = Variable(batch, volatile=True)\nyield model(x)\n", "a generator"),
    ("x = Variable(batch, volatile=True)\nf = lambda: model(x)\n", "code run later"),
    ("return Variable(batch, volatile=True)\n", "the value is returned"),
    ("step.h = Variable(batch, volatile=True)\nout = model(step.h)\n", "the value is stored on an attribute"),
    ("if batch is None:\n    x = Variable(batch, volatile=True)\nout = model(x)\n", "the value is read after the block"),
    ("x = Variable(batch, volatile=True)\n", "nothing in the block uses the value"),
    ("for _ in range(2):\n    y = model(x) if _ else batch\n    x = Variable(y, volatile=True)\n    z = x * 2\n",
     "the loop's next pass reads it"),
])
def test_no_fix_where_no_grad_is_not_exact(tmp_path, body, reason):
    text = ("import torch\nfrom torch.autograd import Variable\nmodel = torch.nn.Linear(2, 1)\n\n\n"
            "def step(batch):\n" + textwrap.indent(body, "    "))
    fixed = _fix(tmp_path, text, "--unsafe-fixes")
    assert "volatile=True" in fixed, reason
    assert "no_grad" not in fixed, reason
