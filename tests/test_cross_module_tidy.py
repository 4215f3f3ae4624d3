"""The fixer's tidy step removes an import only when no other module of the
project takes the name from the fixed one (issue 34): ``from model import *``
in ``train.py`` still needs the ``Variable`` that ``model.py`` imports after
its own uses were fixed away. Run through the real CLI on a project folder,
and the fixed project is run (without torch: a stand-in ``torch`` package)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import run_torchlint

MODEL = """\
import torch
from torch.autograd import Variable


def make(x):
    x = Variable(x)
    return x
"""

# A stand-in torch: the project runs without the real one.
FAKE_TORCH = {
    "torch/__init__.py": "from torch import autograd\n",
    "torch/autograd.py": "def Variable(x, **kwargs):\n    return x\n",
}


def _project(tmp_path, importer: str) -> None:
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "train.py").write_text(textwrap.dedent(importer))
    for name, text in FAKE_TORCH.items():
        path = tmp_path / "stand_in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _runs(tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "train.py"], cwd=tmp_path, capture_output=True, text=True,
                          env={"PYTHONPATH": str(tmp_path / "stand_in")}, timeout=60)


@pytest.mark.parametrize("importer", [
    "from model import *\nprint(Variable(3))\n",
    "from model import make, Variable\nprint(Variable(make(3)))\n",
    "import model\nprint(model.Variable(3))\n",
    "import model as m\nprint(m.Variable(3))\n",
])
def test_an_import_another_module_takes_stays(tmp_path, importer):
    _project(tmp_path, importer)
    assert _runs(tmp_path).returncode == 0
    result = run_torchlint(["--fix", "--unsafe-fixes", "--no-cache", "model.py"], cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    fixed = (tmp_path / "model.py").read_text()
    assert "x = Variable(x)" not in fixed  # the fix itself was made
    assert "from torch.autograd import Variable" in fixed
    ran = _runs(tmp_path)
    assert ran.returncode == 0, ran.stderr


def test_an_import_no_module_takes_goes(tmp_path):
    _project(tmp_path, "from model import make\nprint(make(3))\n")
    run_torchlint(["--fix", "--unsafe-fixes", "--no-cache", "."], cwd=tmp_path)
    fixed = (tmp_path / "model.py").read_text()
    assert "Variable" not in fixed
    assert _runs(tmp_path).returncode == 0


def test_a_package_star_import_keeps_the_name(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .model import *\n")
    (package / "model.py").write_text(MODEL)
    (tmp_path / "train.py").write_text("from pkg import Variable\nprint(Variable(3))\n")
    run_torchlint(["--fix", "--unsafe-fixes", "--no-cache", "pkg/model.py"], cwd=tmp_path)
    assert "from torch.autograd import Variable" in (package / "model.py").read_text()


def test_a_star_import_that_never_names_it_does_not_keep_it(tmp_path):
    (tmp_path / "models.py").write_text("import torch\nimport torch.nn.functional as F\n\n\n"
                                        "def act(x):\n    return F.tanh(x)\n")
    (tmp_path / "main.py").write_text("from models import *\nprint(act)\n")
    run_torchlint(["--fix", "--no-cache", "models.py"], cwd=tmp_path)
    fixed = (tmp_path / "models.py").read_text()
    assert "torch.tanh(x)" in fixed and "import torch.nn.functional as F" not in fixed


def test_the_json_preview_of_the_fix_keeps_the_import_too(tmp_path):
    import json

    _project(tmp_path, "from model import *\nprint(Variable(3))\n")
    result = run_torchlint(["--output-format", "json", "--unsafe-fixes", "--no-cache", "model.py"], cwd=tmp_path)
    (finding,) = [item for item in json.loads(result.stdout) if item["code"] == "TL107"]
    edits = finding["fix"]["edits"]
    assert edits and all(edit["location"]["row"] != 2 for edit in edits), edits  # line 2: the import
