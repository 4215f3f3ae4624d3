"""A check, `--diff` and `--fix` agree on how many findings a fix answers.

A check says "N fixable"; `--diff` says "Would fix N" and `--fix` "Fixed N"
of the same file. Findings one fix answers together (TL111 turns a whole
legacy Function into the new style), a fix that makes another unnecessary
(TL107 drops the `volatile=` TL102 reports) and a multi-line argument the
unwrapping must keep valid all count once per finding.
"""

from __future__ import annotations

import re
import textwrap

import pytest
from conftest import run_torchlint

CASES = {
    "legacy_function.py": """
        import torch
        from torch.autograd import Function

        class Square(Function):
            def forward(self, x):
                self.save_for_backward(x)
                return x * x

            def backward(self, grad):
                x, = self.saved_tensors
                return 2 * x * grad

        y = Square()(torch.ones(2, requires_grad=True))
        """,
    "volatile.py": """
        import torch
        from torch.autograd import Variable
        x = Variable(torch.ones(3), volatile=True)
        y = Variable(torch.zeros(3), volatile=False).sum() + x
        """,
    "volatile_false_requires_grad.py": """
        import torch
        from torch.autograd import Variable
        v = torch.ones(3)
        v = Variable(v.data, requires_grad=True, volatile=False)
        """,
    "multiline.py": """
        import torch
        from torch.autograd import Variable

        def make():
            table = Variable(
                torch.FloatTensor([[0, 1], [1, 0]])
                .transpose(0, 1))  # rows x cols
            return table
        """,
}


def _number(pattern: str, text: str) -> int:
    found = re.search(pattern, text)
    assert found is not None, text
    return int(found.group(1))


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_diff_and_fix_count_the_same_findings(tmp_path, name):
    path = tmp_path / name
    path.write_text(textwrap.dedent(CASES[name]).lstrip())
    check = run_torchlint(["--isolated", "--no-cache", "--unsafe-fixes", name], cwd=tmp_path)
    fixable = _number(r"\((\d+) fixable with --fix\)", check.stdout)
    diff = run_torchlint(["--isolated", "--no-cache", "--unsafe-fixes", "--diff", name], cwd=tmp_path)
    assert _number(r"Would fix (\d+) problem", diff.stderr + diff.stdout) == fixable
    fix = run_torchlint(["--isolated", "--no-cache", "--unsafe-fixes", "--fix", name], cwd=tmp_path)
    assert _number(r"Fixed (\d+) problem", fix.stdout) == fixable, fix.stdout + fix.stderr
    assert "remaining" not in fix.stdout and "discarded" not in fix.stderr, fix.stdout + fix.stderr
    compile(path.read_text(), name, "exec")  # the fixed file is valid Python
    again = run_torchlint(["--isolated", "--no-cache", "--unsafe-fixes", name], cwd=tmp_path)
    assert "All checks passed" in again.stdout, again.stdout


def test_a_multiline_argument_keeps_brackets_of_its_own(tmp_path):
    path = tmp_path / "multiline.py"
    path.write_text(textwrap.dedent(CASES["multiline.py"]).lstrip())
    run_torchlint(["--isolated", "--no-cache", "--unsafe-fixes", "--fix", "multiline.py"], cwd=tmp_path)
    assert "table = (torch.FloatTensor([[0, 1], [1, 0]])\n        .transpose(0, 1))  # rows x cols" in path.read_text()
