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

# MorvanZhou/PyTorch-Tutorial's 201_torch_numpy.py, reduced: dot flattened before 0.4. The
# tutorial binds ``tensor`` (and ``data``) to a 1-D value first: the 2-D binding reaches the dot.
DOT = (
    "import numpy as np\n"
    "import torch\n"
    "data = [-1, -2, 1, 2]\n"
    "tensor = torch.FloatTensor(data)\n"
    "print(torch.mean(tensor).item(), np.mean(data))\n"
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
        "data = [[1, 2], [3, 4]]\n"
        "if len(data) > 2:\n"
        "    data = [1, 2]\n"
        "t = torch.tensor(data)\n"
        "u = torch.full([2, 2], 1.0)\n"
        "def score(v):\n"
        "    return v.dot(v)\n"
        "print(t.dot(t), u.dot(u), score(torch.ones(2)))\n"
    )
    check = run_torchlint([str(path), "--no-cache", "--select", "TL215"])
    assert check.returncode == 0, check.stdout


DOMINATING = """\
import torch
x = torch.ones(3)
a = x
x = torch.ones(2, 2)
b = x
for i in range(2):
    c = x
    x = torch.ones(4)
d = x
for i in range(2): e = x; x = 5
f = x
if f: x = 7
g = x
while x: x = 3
x = x.view(-1)
def h():
    return x
y = [[1]]
y = np.array(y)
z = (y := [1]) + y
"""


def test_dominating_value_is_the_binding_every_run_passes_last():
    # Inference.dominating_value, read at each ``name = <read>`` of the snippet above: the value
    # of the last binding before the read when it reaches the read on every run, else None.
    import libcst as cst

    from torchlint.analysis.context import analyse

    module = cst.parse_module(DOMINATING)
    context, _ = analyse(module, [])
    seen = {}

    class Reads(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            target, value = node.targets[0].target, node.value
            if isinstance(target, cst.Name) and isinstance(value, cst.Name):
                reaching = context.inference.dominating_value(value)
                seen[target.value] = module.code_for_node(reaching) if reaching is not None else None

        def visit_Call(self, node: cst.Call) -> None:
            argument = node.args[0].value if node.args else None
            if module.code_for_node(node.func) == "np.array" and isinstance(argument, cst.Name):
                reaching = context.inference.dominating_value(argument)
                seen["np.array"] = module.code_for_node(reaching) if reaching is not None else None

    module.visit(Reads())
    assert seen == {
        "a": "torch.ones(3)",  # not the later 2-D binding
        "b": "torch.ones(2, 2)",
        "c": None,  # a later turn of the loop reads ``torch.ones(4)``
        "d": None,  # the last binding is inside the loop: it may not have run
        "e": None,  # the same on a one-line loop
        "f": None,
        "g": None,  # ``if f: x = 7`` may not have run
        "np.array": "[[1]]",  # ``y = np.array(y)`` reads the binding before its own
    }
    # The ``while`` test is read on every turn, after the loop's binding; ``h`` reads ``x`` when
    # called; ``(y := [1]) + y`` binds inside the statement before the read.
    reads = {}

    class Others(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value in ("x", "y"):
                reaching = context.inference.dominating_value(node)
                reads.setdefault(node.value, []).append(module.code_for_node(reaching) if reaching else None)

    module.visit(Others())
    assert reads["x"][-3:] == [None, None, None]  # ``while x``, ``x.view(-1)`` after it, ``h``'s ``x``
    assert reads["y"][-1] is None


def test_a_binding_after_the_read_does_not_decide_its_value(tmp_path: Path):
    # Inference used to take the last binding of the function for every read of the name, even
    # one before it: ``out.data[0]`` on a batch of outputs was "fixed" (safely!) to ``out.item()``,
    # which raises on a tensor of three elements. The same in a loop whose first turn reads the
    # binding before the loop.
    path = tmp_path / "report.py"
    source = (
        "import torch\n"
        "def report(x):\n"
        "    out = x * 2\n"
        "    print(out.data[0].tolist())\n"
        "    out = torch.ones(3).sum()\n"
        "    return out\n"
        "def turns(x):\n"
        "    out = x * 2\n"
        "    for step in range(2):\n"
        "        print(out.data[0].tolist())\n"
        "        out = torch.ones(3).sum()\n"
        "        break\n"
        "report(torch.ones(3, 2))\n"
        "turns(torch.ones(3, 2))\n"
    )
    path.write_text(source)
    assert _run(path).returncode == 0
    check = run_torchlint([str(path), "--no-cache", "--select", "TL101"])
    assert check.returncode == 0, check.stdout
