"""Old code Python 3 cannot parse, through the real ``torchlint`` command.

``x.cuda(async=True)`` (TL115) is repaired at the token level and the file
is then checked and fixed like any other; a Python 2 file is named as such
in one line; other syntax errors keep Python's message; no bad file stops
the others. The fixed training script is then run under real torch.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_torchlint

from torchlint.core.legacy_syntax import async_keyword_sites, python2_feature

TRAIN = (
    "import torch\n"
    "from torch.autograd import Variable\n"
    "torch.manual_seed(0)\n"
    "model = torch.nn.Linear(3, 2)\n"
    "criterion = torch.nn.CrossEntropyLoss()\n"
    "inputs, target = torch.randn(4, 3), torch.tensor([0, 1, 1, 0])\n"
    "target = target.to('cpu', async=True)\n"
    "x = inputs.to('cpu', async=True); v = Variable(x)\n"
    "loss = criterion(model(v), Variable(target))\n"
    "loss.backward()\n"
    "print(round(loss.item(), 6))\n"
)
TRAIN_FIXED = (
    TRAIN.replace("async=", "non_blocking=")
    .replace("v = Variable(x)", "v = x")
    .replace("Variable(target)", "target")
    .replace("from torch.autograd import Variable\n", "")  # orphaned by the fix: removed
)
PYTHON2 = "import torch\nx = torch.ones(2)\nprint x.sum()\n"
BROKEN = "import torch\ny = = 2\n"
NOT_TORCH = "import torch\nfrom torch.autograd import Variable\nv = Variable(torch.ones(2))\njob = submit(v, async=True)\n"


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    folder = tmp_path_factory.mktemp("legacy")
    for name, text in (("train.py", TRAIN), ("py2.py", PYTHON2), ("broken.py", BROKEN),
                       ("not_torch.py", NOT_TORCH)):
        (folder / name).write_text(text)
    return folder


def _lines_about(output: str, name: str):
    return [line for line in output.splitlines() if f"{name}:" in line]


def test_check_reports_async_and_the_rest_of_the_file(tree: Path):
    run = run_torchlint([str(tree / "train.py"), "--no-cache"])
    assert run.returncode == 1, run.stderr
    found = [re.search(r":(\d+):(\d+): (TL\d+)", line).groups() for line in _lines_about(run.stdout, "train.py")]
    # Columns are those of the file as written: after `async=` on line 8 too.
    assert found == [("7", "27", "TL115"), ("8", "22", "TL115"), ("8", "39", "TL107"), ("9", "28", "TL107")]
    assert run.stderr == ""


def test_python2_and_syntax_errors_are_one_line_each_and_the_rest_is_checked(tree: Path):
    run = run_torchlint([str(tree), "--no-cache"])
    assert run.returncode == 2
    assert _lines_about(run.stderr, "py2.py") == [
        f"torchlint: error: {tree / 'py2.py'}:3:1: cannot parse: "
        "Python 2 code (a `print` statement); torchlint checks Python 3"
    ]
    broken = _lines_about(run.stderr, "broken.py")
    assert len(broken) == 1 and broken[0].endswith("broken.py:2:5: cannot parse: invalid syntax"), broken
    assert "Python 2" not in broken[0]
    assert len(_lines_about(run.stdout, "train.py")) == 4


def test_fix_renames_async_then_fixes_the_file_and_the_result_runs(tmp_path: Path):
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    run = run_torchlint([str(script), "--fix", "--unsafe-fixes", "--no-cache"])
    assert run.returncode == 0, run.stdout + run.stderr
    assert script.read_text() == TRAIN_FIXED
    again = run_torchlint([str(script), "--fix", "--unsafe-fixes", "--no-cache"])
    assert again.returncode == 0 and script.read_text() == TRAIN_FIXED
    pytest.importorskip("torch")
    ran = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-W", "error::FutureWarning",
                          str(script)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    # The same number a hand migration prints (seeded).
    hand = TRAIN_FIXED.replace("v = x", "v = inputs")
    by_hand = subprocess.run([sys.executable, "-c", hand], capture_output=True, text=True, timeout=120)
    assert ran.stdout == by_hand.stdout and ran.stdout.strip()


def test_safe_fix_alone_renames_async(tmp_path: Path):
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    run = run_torchlint([str(script), "--fix", "--no-cache"])
    assert run.returncode == 1  # the TL107 findings are unsafe to fix: they remain
    assert script.read_text() == TRAIN.replace("async=", "non_blocking=")


def test_async_on_an_unknown_callee_blocks_every_fix_with_a_reason(tree: Path, tmp_path: Path):
    script = tmp_path / "not_torch.py"
    script.write_text(NOT_TORCH)
    run = run_torchlint([str(script), "--fix", "--unsafe-fixes", "--no-cache"])
    assert script.read_text() == NOT_TORCH
    assert run.returncode == 1
    assert ":4:17: TL115" in run.stdout and ":3:5: TL107" in run.stdout
    assert "TL107 fix discarded: the file keeps syntax Python 3 cannot parse" in run.stderr


def test_noqa_on_the_async_line_suppresses_it_and_leaves_the_file(tmp_path: Path):
    script = tmp_path / "train.py"
    text = TRAIN.replace("async=True)\n", "async=True)  # noqa: TL115\n", 1)
    script.write_text(text)
    run = run_torchlint([str(script), "--fix", "--no-cache"])
    assert script.read_text() == text
    assert ":7:" not in run.stdout and ":8:22: TL115" in run.stdout


def test_other_rules_read_an_async_file_when_tl115_is_not_selected(tmp_path: Path):
    # ``--select TL107`` on a file with ``async=``: the file is read through the repair (TL107's
    # findings, not "invalid syntax"); TL115 is neither reported nor applied, so --fix writes
    # nothing and says why.
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    check = run_torchlint([str(script), "--no-cache", "--select", "TL107"])
    assert check.returncode == 1, check.stderr
    assert "cannot parse" not in check.stderr and "TL115" not in check.stdout
    assert ":8:39: TL107" in check.stdout and ":9:28: TL107" in check.stdout  # columns as written
    fix = run_torchlint([str(script), "--no-cache", "--select", "TL107", "--fix", "--unsafe-fixes"])
    assert script.read_text() == TRAIN
    assert "TL107 fix discarded: the file keeps syntax Python 3 cannot parse" in fix.stderr


@pytest.mark.parametrize("source, expected", [
    ("x.cuda(async=True)", [(1, 7, "cuda", "argument")]),
    ("f(a, async=1)", [(1, 5, "f", "argument")]),
    ("(a or b)(async=1)", [(1, 9, None, "argument")]),
    ("x.cuda(\n    async=True)", [(2, 4, "cuda", "argument")]),
    ("def f(async=False):\n    pass", [(1, 6, None, "parameter")]),
    ("def f(x, *, async):\n    return async", [(1, 12, None, "parameter"), (2, 11, None, "name")]),
    ("g = lambda x, async=0: async", [(1, 14, None, "parameter"), (1, 23, None, "name")]),
    ("d = {'async': 1}\nasync def g():\n    await h(async_=1)\n    async with a:\n        pass", []),
    ("if (async == 1):\n    pass", [(1, 4, None, "name")]),
    ("flag = args.async", [(1, 12, None, "attribute")]),
])
def test_async_keyword_sites(source, expected):
    assert [(s.line, s.column, s.method, s.role) for s in async_keyword_sites(source)] == expected


# ``async`` as old code's own parameter and variable: renamed ``non_blocking``
# with every use, and the ``async=`` arguments of calls to the file's function.
OWN_ASYNC = (
    "import torch\n"
    "\n"
    "\n"
    "def to_device(x, async=False):\n"
    "    return x.to('cpu', non_blocking=async)\n"
    "\n"
    "\n"
    "class Loader:\n"
    "    def move(self, batch, async=True):\n"
    "        return [to_device(b, async=async) for b in batch]\n"
    "\n"
    "\n"
    "async = False\n"
    "batch = Loader().move([torch.ones(2), torch.arange(3.0)], async=not async)\n"
    "print([t.tolist() for t in batch], to_device(torch.ones(1), async).item())\n"
)
OWN_ASYNC_FIXED = OWN_ASYNC.replace("async", "non_blocking")


def test_async_parameters_and_names_are_renamed_and_the_result_runs(tmp_path: Path):
    path = tmp_path / "own.py"
    path.write_text(OWN_ASYNC)
    check = run_torchlint([str(path), "--no-cache"])
    found = [line.split(": ", 1)[1].split(" ", 1)[0] for line in check.stdout.splitlines() if "own.py:" in line]
    assert found == ["TL115"] * OWN_ASYNC.count("async"), check.stdout
    assert "5:37: TL115 `async` is a reserved keyword" in check.stdout
    assert "4:18: TL115 an `async` parameter" in check.stdout
    assert "14:59: TL115 `async=` is a syntax error since Python 3.7; the parameter it sets" in check.stdout
    fixed = run_torchlint([str(path), "--fix", "--no-cache"])
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert path.read_text() == OWN_ASYNC_FIXED
    ran = subprocess.run([sys.executable, "-W", "error", str(path)], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "[[1.0, 1.0], [0.0, 1.0, 2.0]] 1.0\n"
    again = run_torchlint([str(path), "--fix", "--no-cache"])
    assert again.returncode == 0 and path.read_text() == OWN_ASYNC_FIXED  # idempotent


@pytest.mark.parametrize("source", [
    # The file already uses ``non_blocking`` as a name: renaming would merge two variables.
    "def f(x, async=False):\n    non_blocking = 1\n    return x.cuda(non_blocking=async)\n",
    # An attribute has no exact rename, and then nothing in the file is rewritten.
    "import torch\nfrom torch.autograd import Variable\nv = Variable(torch.ones(2)).cuda(async=args.async)\n",
    # The callee is not the file's own: its new keyword is unknown.
    "def f(x, async=False):\n    return x\ny = g(1, async=True)\n",
])
def test_inexact_async_renames_have_no_fix(tmp_path: Path, source: str):
    path = tmp_path / "inexact.py"
    path.write_text(source)
    check = run_torchlint([str(path), "--no-cache"])
    assert check.returncode == 1 and "TL115" in check.stdout, check.stdout + check.stderr
    assert "Traceback" not in check.stderr
    run_torchlint([str(path), "--fix", "--unsafe-fixes", "--no-cache"])
    assert path.read_text() == source


@pytest.mark.parametrize("source, feature", [
    ("print 'x'\n", "a `print` statement"),
    ("try:\n    pass\nexcept E, e:\n    pass\n", "`except E, e:`"),
    ("y = `x`\n", "a backtick repr"),
    ("x = 0777\n", "an octal literal like `0777`"),
    ("raise E, 'm'\n", "`raise E, message`"),
    ("x = (1,\n", None),
])
def test_python2_feature(source, feature):
    with pytest.raises(SyntaxError) as info:
        compile(source, "<test>", "exec")
    assert python2_feature(info.value.msg, source, info.value.lineno) == feature


def test_json_previews_are_in_the_columns_of_the_file_as_written(tmp_path: Path):
    import json

    script = tmp_path / "k.py"
    script.write_text("import torch\nx = torch.ones(2)\ny = x.to('cpu', async=True); z = x.sum().data[0]\n")
    run = run_torchlint([str(script), "--no-cache", "--output-format", "json", "--select", "TL115,TL101"])
    found = {d["code"]: d for d in json.loads(run.stdout)}
    assert found["TL115"]["fix"]["edits"] == [{"content": "non_blocking", "location": {"row": 3, "column": 17},
                                               "end_location": {"row": 3, "column": 22}}]
    # `x.sum().data[0]` after the renamed keyword on the same line: columns of the file as written
    assert found["TL101"]["location"] == {"row": 3, "column": 34}
    [edit] = found["TL101"]["fix"]["edits"]
    assert edit["location"] == {"row": 3, "column": 42} and edit["content"].startswith("item()")
