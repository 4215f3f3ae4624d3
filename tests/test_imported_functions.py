"""TL111 across modules: an autograd Function class another module of the
project defines, instantiated and called at once (``RoIPool(7, 7)(x, rois)``,
the way 2018 detection code used its CUDA ops), is flagged where it is called,
by the command, flake8 and ``--stdin-filename`` alike; without a fix there,
since ``.apply`` fits only once the class itself is rewritten (in its module)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

FUNCTIONS = textwrap.dedent('''
    import torch
    from torch.autograd import Function


    class RoIPoolFunction(Function):
        def __init__(self, height, width):
            self.height, self.width = height, width

        def forward(self, features, rois):
            return features[:, :, :self.height, :self.width]

        def backward(self, grad_output):
            return grad_output, None


    class Helper:
        def __init__(self, scale):
            self.scale = scale

        def __call__(self, x):
            return x * self.scale
''')

MODULES = textwrap.dedent('''
    import torch
    from torch.nn import Module
    from ops.functions import RoIPoolFunction, Helper
    import ops.functions as functions


    class RoIPool(Module):
        def forward(self, features, rois):
            pooled = RoIPoolFunction(7, 7)(features, rois)
            other = functions.RoIPoolFunction(3, 3)(features, rois)
            self.op = RoIPoolFunction(7, 7)  # not called here: not flagged
            return Helper(2)(pooled) + torch.nn.ReLU()(other)
''')

EXPECTED = {("pool.py", 10), ("pool.py", 11)}


@pytest.fixture
def project(tmp_path):
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "__init__.py").write_text("")
    (tmp_path / "ops" / "functions.py").write_text(FUNCTIONS)
    (tmp_path / "pool.py").write_text(MODULES)
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n")
    return tmp_path


def _run(root, *args, stdin=None):
    return subprocess.run([sys.executable, "-m", *args], cwd=root, input=stdin, capture_output=True, text=True,
                          timeout=300)


def _calls_flagged(items, name="pool.py"):
    return {(name, item["location"]["row"]) for item in items
            if item["code"] == "TL111" and item["filename"].endswith("pool.py")}


def test_the_command_flags_the_calls_of_another_modules_function_class(project):
    result = _run(project, "torchlint", "--no-cache", "--select", "TL111", "--output-format", "json", ".")
    items = json.loads(result.stdout)
    assert _calls_flagged(items) == EXPECTED, result.stderr
    assert all(item["fix"] is None for item in items if item["filename"].endswith("pool.py"))
    # the class itself is flagged in its own module, where its rewrite belongs
    assert any(item["filename"].endswith("functions.py") for item in items)


def test_flake8_and_stdin_agree_with_the_command(project):
    flake8 = _run(project, "flake8", "--isolated", "--select", "TL111", "pool.py")
    assert {(line.split(":")[0], int(line.split(":")[1])) for line in flake8.stdout.splitlines()} == EXPECTED, (
        flake8.stdout + flake8.stderr)
    stdin = _run(project, "torchlint", "--no-cache", "--select", "TL111", "--output-format", "json",
                 "--stdin-filename", "pool.py", "-", stdin=MODULES)
    assert _calls_flagged(json.loads(stdin.stdout)) == EXPECTED, stdin.stderr


def test_a_text_alone_knows_no_other_module(tmp_path):
    # Outside a project (an --isolated text from stdin with no module to read) the class is unknown.
    result = _run(tmp_path, "torchlint", "--isolated", "--no-cache", "--select", "TL111", "-", stdin=MODULES)
    assert result.returncode == 0, result.stdout


def test_a_modules_facts_list_its_function_classes_and_keep_them_in_summaries():
    import ast

    from torchlint.analysis.project import _Facts

    source = textwrap.dedent('''
        import torch
        import other
        from torch.autograd import Function
        from torch import autograd as ag

        class A(Function):
            pass

        class B(A):
            pass

        class C(torch.autograd.Function):
            pass

        class D(ag.Function):
            pass

        class E(other.Function):  # not torch's
            pass

        class F(object):
            pass

        if True:
            class G(Function):
                pass
    ''')
    facts = _Facts(ast.parse(source), "<text>")
    assert sorted(facts.function_classes) == ["A", "B", "C", "D", "G"]
    kept = _Facts.from_json(json.loads(json.dumps(facts.to_json())))
    assert kept.function_classes == facts.function_classes
    older = facts.to_json()
    del older["function_classes"]  # a summary written before the field existed is read anew
    with pytest.raises(ValueError):
        _Facts.from_json(older)


def test_a_class_called_at_once_that_is_no_function_keeps_the_screen_closed(tmp_path):
    from torchlint.analysis.outline import Outline
    from torchlint.rules.tl111_legacy_autograd_function import LegacyAutogradFunction

    import ast

    tree = ast.parse(MODULES.replace("RoIPoolFunction(7, 7)(features, rois)", "features")
                     .replace("functions.RoIPoolFunction(3, 3)(features, rois)", "rois"))
    asked = []

    def function_classes(spelled):
        asked.append(spelled)
        return frozenset({"RoIPoolFunction"}) if spelled == "ops.functions" else frozenset()

    assert not LegacyAutogradFunction.may_match_tree(Outline(tree, function_classes=function_classes))
    assert asked == ["ops.functions"]  # Helper(2)(pooled): asked, and not a Function
    full = Outline(ast.parse(MODULES), function_classes=function_classes)
    assert LegacyAutogradFunction.may_match_tree(full)


def test_a_file_with_its_own_static_function_still_screens_the_imported_one():
    import ast

    from torchlint.analysis.outline import Outline
    from torchlint.rules.tl111_legacy_autograd_function import LegacyAutogradFunction

    own = textwrap.dedent('''
        from torch.autograd import Function

        class Double(Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2
    ''')
    tree = ast.parse(MODULES + own)
    outline = Outline(tree, function_classes=lambda spelled: frozenset({"RoIPoolFunction"}))
    assert LegacyAutogradFunction.may_match_tree(outline)
