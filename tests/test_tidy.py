"""Fixes leave no debris: the fixer's shared tidy step (engine/tidy.py).

Each case runs the real engine with every rule, unsafe fixes included, and
compares the whole fixed file.
"""

from __future__ import annotations

import pytest

from torchlint.engine.linter import Engine
from torchlint.rules import all_rules
from torchlint.rules.rule import dedent


def fixed(source: str) -> str:
    return Engine(all_rules()).fix(dedent(source), unsafe=True).source


CASES = {
    "orphaned import removed, the one unused before kept": (
        """
        import torch
        from torch.autograd import Variable as Unused  # unused before the fix: not ours to remove
        from torch.autograd import Variable, Function
        x = Variable(torch.ones(2))
        class F(Function):
            pass
        """,
        """
        import torch
        from torch.autograd import Variable as Unused  # unused before the fix: not ours to remove
        from torch.autograd import Function
        x = torch.ones(2)
        class F(Function):
            pass
        """,
    ),
    "a name still used elsewhere keeps its import": (
        """
        import torch
        from torch.autograd import Variable
        x = Variable(torch.ones(2))
        print(isinstance(x, Variable))
        """,
        """
        import torch
        from torch.autograd import Variable
        x = torch.ones(2)
        print(isinstance(x, Variable))
        """,
    ),
    "a name listed in __all__ keeps its import": (
        """
        import torch
        from torch.autograd import Variable
        __all__ = ["Variable"]
        x = Variable(torch.ones(2))
        """,
        """
        import torch
        from torch.autograd import Variable
        __all__ = ["Variable"]
        x = torch.ones(2)
        """,
    ),
    "a docstring mentioning the name does not keep its import": (
        """
        \"\"\"Wraps data in a Variable, the old way.\"\"\"
        import torch
        from torch.autograd import Variable
        x = Variable(torch.ones(2))
        """,
        """
        \"\"\"Wraps data in a Variable, the old way.\"\"\"
        import torch
        x = torch.ones(2)
        """,
    ),
    "the comment above a removed import moves down": (
        """
        import torch
        # autograd
        from torch.autograd import Variable
        x = Variable(torch.ones(2))
        """,
        """
        import torch
        # autograd
        x = torch.ones(2)
        """,
    ),
    "self-assignments made by the fix go, one written by hand stays": (
        """
        import torch
        from torch.autograd import Variable
        def step(data, target, model):
            data, target = Variable(data), Variable(target)
            model = model
            if data.numel():
                target = Variable(target)
            return model(data), target
        """,
        """
        import torch
        def step(data, target, model):
            model = model
            if data.numel():
                pass
            return model(data), target
        """,
    ),
    "every .data[0] on a line is fixed": (
        """
        import torch
        import torch.nn as nn
        criterion = nn.MSELoss()
        out, y = torch.ones(3), torch.zeros(3)
        loss, other = criterion(out, y), criterion(y, out)
        print('%f %f' % (loss.data[0], other.data[0])); total = loss.data[0] + other.data[0]
        """,
        """
        import torch
        import torch.nn as nn
        criterion = nn.MSELoss()
        out, y = torch.ones(3), torch.zeros(3)
        loss, other = criterion(out, y), criterion(y, out)
        print('%f %f' % (loss.item(), other.item())); total = loss.item() + other.item()
        """,
    ),
    "an attribute or keyword of the same name is not a use of the import": (
        """
        import torch
        from torch import qr
        q = qr(torch.eye(3))[0]
        method = config.qr
        build(qr=True)
        """,
        """
        import torch
        q = torch.linalg.qr(torch.eye(3))[0]
        method = config.qr
        build(qr=True)
        """,
    ),
    "a statement of several parts loses only the self-assignment": (
        """
        import torch
        from torch.autograd import Variable
        x = torch.ones(2); x = Variable(x); y = x * 2
        """,
        """
        import torch
        x = torch.ones(2); y = x * 2
        """,
    ),
    "an attribute assigned to itself by the fix goes, one written by hand stays": (
        """
        import torch
        from torch.autograd import Variable
        class Grid(torch.nn.Module):
            def forward(self, x):
                self.grid = x * 2
                self.grid = Variable(self.grid)
                self.scale = self.scale
                return self.grid * self.scale
        """,
        """
        import torch
        class Grid(torch.nn.Module):
            def forward(self, x):
                self.grid = x * 2
                self.scale = self.scale
                return self.grid * self.scale
        """,
    ),
    "the pairs of a tuple the fix assigned to themselves go, one written by hand stays": (
        """
        import torch
        from torch.autograd import Variable
        def f(points, target, a, b):
            points, target = Variable(points), Variable(target[:, 0])
            a, b, c = Variable(a), b, 3
            return points, target, a, b, c
        """,
        """
        import torch
        def f(points, target, a, b):
            target = target[:, 0]
            b, c = b, 3
            return points, target, a, b, c
        """,
    ),
    "a comment that spoke of a removed statement alone in its paragraph goes with it": (
        """
        import torch
        from torch.autograd import Variable
        def f(x, y):
            # wrap into a Variable
            x = Variable(x)

            # Prepare targets
            y = Variable(y)
            z = y + 1
            return x, z
        """,
        """
        import torch
        def f(x, y):
            # Prepare targets
            z = y + 1
            return x, z
        """,
    ),
    "a directive above a removed statement stays": (
        """
        import torch
        from torch.autograd import Variable
        def f(x):
            # fmt: off
            x = Variable(x)

            return x
        """,
        """
        import torch
        def f(x):
            # fmt: off

            return x
        """,
    ),
    "removed paragraphs leave one blank line, none at the top of a block": (
        """
        import torch
        from torch.autograd import Variable
        def f(x, y, z):
            x = Variable(x)

            y = Variable(y)

            z = Variable(z)

            return x, y, z
        """,
        """
        import torch
        def f(x, y, z):
            return x, y, z
        """,
    ),
    "an if whose body went: gone when its test does nothing, negated before an else": (
        """
        import torch
        from torch.autograd import Variable
        def f(x, y, cuda):
            if torch.cuda.is_available():
                x = Variable(x)
            if cuda:
                y = Variable(y)
            else:
                y = y.cpu()
            if cuda and x is None:
                y = Variable(y)
            else:
                x = x + 1
            if step(x):
                x = Variable(x)
            return x, y
        """,
        """
        import torch
        def f(x, y, cuda):
            if not cuda:
                y = y.cpu()
            if not (cuda and x is None):
                x = x + 1
            if step(x):
                pass
            return x, y
        """,
    ),
    "an unwrapped argument's aligned continuation lines move with it": (
        """
        import torch
        from torch.autograd import Variable
        def f(points):
            y = Variable(torch.zeros(3,
                                     4))
            z = Variable(torch.zeros(
                3, 4))
            w = Variable(
                points.repeat(1, 2).view(
                    2, -1))
            return y, z, w
        """,
        """
        import torch
        def f(points):
            y = torch.zeros(3,
                            4)
            z = torch.zeros(
                3, 4)
            w = points.repeat(1, 2).view(
                2, -1)
            return y, z, w
        """,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_debris(name: str) -> None:
    source, expected = CASES[name]
    result = fixed(source)
    assert result == dedent(expected)
    assert fixed(result) == result  # idempotent


def test_tidy_runs_the_result_under_torch() -> None:
    torch = pytest.importorskip("torch")
    source, expected = CASES["a statement of several parts loses only the self-assignment"]
    namespace: dict = {}
    exec(compile(fixed(source), "<tidy>", "exec"), namespace)
    assert torch.equal(namespace["y"], torch.full((2,), 2.0))


def test_the_command_leaves_no_debris_and_the_result_runs(tmp_path) -> None:
    # Through the real command on a CRLF file: the orphaned import goes, the import unused before
    # stays, no ``data, target = data, target`` is left, both ``.data[0]`` of a line are fixed, and
    # the fixed script prints what the original meant (no warning under torch).
    import subprocess
    import sys

    pytest.importorskip("torch")
    from conftest import run_torchlint

    source = dedent(
        """
        import torch
        import torch.nn as nn
        from torch.autograd import Variable
        from torch.autograd import Function as Unused
        criterion = nn.MSELoss()
        def train(data, target):
            data, target = Variable(data), Variable(target)
            loss, other = criterion(data * 2, target), criterion(target, data)
            print('%.4f %.4f' % (loss.data[0], other.data[0]))
        train(torch.ones(3), torch.zeros(3))
        """
    )
    path = tmp_path / "train.py"
    path.write_bytes(source.replace("\n", "\r\n").encode())
    result = run_torchlint([str(path), "--fix", "--unsafe-fixes", "--no-cache"])
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = path.read_bytes().decode()
    assert fixed.count("\r\n") == fixed.count("\n")  # line endings kept
    assert "Variable" not in fixed and "from torch.autograd import Function as Unused" in fixed
    assert "data, target =" not in fixed
    assert "(loss.item(), other.item())" in fixed
    run = subprocess.run([sys.executable, "-W", "error", str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "4.0000 1.0000"


def test_the_json_preview_of_an_attribute_self_assignment_is_what_fix_writes(tmp_path) -> None:
    import json

    from conftest import run_torchlint
    from test_output_formats import _apply

    source, expected = CASES["an attribute assigned to itself by the fix goes, one written by hand stays"]
    path = tmp_path / "grid.py"
    path.write_text(dedent(source))
    preview = run_torchlint([str(path), "--no-cache", "--isolated", "--unsafe-fixes", "--output-format", "json"])
    (item,) = [i for i in json.loads(preview.stdout) if i["fix"] is not None]
    assert _apply(dedent(source), item["fix"]["edits"]) == dedent(expected)
    fixed_run = run_torchlint([str(path), "--no-cache", "--isolated", "--fix", "--unsafe-fixes"])
    assert fixed_run.returncode in (0, 1) and path.read_text() == dedent(expected)
