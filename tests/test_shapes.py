"""Shapes the file shows (analysis/shapes.py), through the real command and real torch.

TL215 and TL216 ask ``analysis.shapes`` how many dimensions a tensor has; these
are the old-tutorial spellings of the migration benchmark (bench/migrate.py):
a ``Variable`` wrapper, a nested list turned into a tensor, a rebinding
through NumPy. Each fixed snippet runs under torch and prints what the hand
migration prints, while the original raises.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_torchlint

# hunkim/PyTorchZeroToAll's 12_2_hello_rnn.py, reduced: iterating 1-D labels gives 0-dim targets.
RNN = (
    "import torch\n"
    "import torch.nn as nn\n"
    "from torch.autograd import Variable\n"
    "torch.manual_seed(0)\n"
    "criterion = nn.CrossEntropyLoss()\n"
    "outputs = Variable(torch.randn(3, 5), requires_grad=True)\n"
    "labels = Variable(torch.LongTensor([1, 0, 4]))\n"
    "loss = 0\n"
    "for output, label in zip(outputs, labels):\n"
    "    loss += criterion(output.unsqueeze(0), label)\n"
    "loss.backward()\n"
    "print(round(loss.item(), 5))\n"
)
RNN_HAND = RNN.replace("criterion(output.unsqueeze(0), label)", "criterion(output.unsqueeze(0), label.unsqueeze(0))")

# MorvanZhou/PyTorch-Tutorial's 201_torch_numpy.py, reduced: dot flattened before 0.4.
DOT = (
    "import numpy as np\n"
    "import torch\n"
    "data = [[1, 2], [3, 4]]\n"
    "tensor = torch.FloatTensor(data)\n"
    "data = np.array(data)\n"
    "print(data.dot(data).tolist(), tensor.dot(tensor).item())\n"
)
DOT_HAND = DOT.replace("tensor.dot(tensor)", "tensor.view(-1).dot(tensor.view(-1))")


def _run(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-W", "error::FutureWarning", str(path)],
                          capture_output=True, text=True)


@pytest.mark.parametrize("source, hand, code, error", [
    (RNN, RNN_HAND, "TL216", "ValueError"),
    (DOT, DOT_HAND, "TL215", "RuntimeError"),
])
def test_shape_findings_are_fixed_to_what_a_hand_migration_prints(tmp_path: Path, source, hand, code, error):
    original, fixed, by_hand = tmp_path / "original.py", tmp_path / "fixed.py", tmp_path / "hand.py"
    for path, text in ((original, source), (fixed, source), (by_hand, hand)):
        path.write_text(text)
    check = run_torchlint([str(original), "--no-cache", "--select", code])
    assert f" {code} " in check.stdout, check.stdout + check.stderr
    run_torchlint([str(fixed), "--fix", "--unsafe-fixes", "--no-cache"])
    assert fixed.read_text() != source
    before, after, expected = _run(original), _run(fixed), _run(by_hand)
    assert before.returncode != 0 and error in before.stderr
    assert expected.returncode == 0, expected.stderr
    assert after.returncode == 0, after.stderr
    assert after.stdout == expected.stdout


def test_unknown_shapes_are_not_flagged(tmp_path: Path):
    # A name bound to data of two ranks, sizes rather than data, a parameter: unknown.
    path = tmp_path / "unknown.py"
    path.write_text(
        "import torch\n"
        "data = [1, 2]\n"
        "data = [[1, 2], [3, 4]]\n"
        "t = torch.tensor(data)\n"
        "u = torch.full([2, 2], 1.0)\n"
        "def score(v):\n"
        "    return v.dot(v)\n"
        "print(t.dot(t), u.dot(u), score(torch.ones(2)))\n"
    )
    check = run_torchlint([str(path), "--no-cache", "--select", "TL215"])
    assert check.returncode == 0, check.stdout
