"""The oldest torch a file runs on, as its own top-level imports show it
(``analysis/import_floor.py``): a module that arrived in torch 2.3 cannot be
imported before, so the file is not told to keep spellings for older torch.
Through the real command and the real flake8 plugin, which must agree."""

from __future__ import annotations

import ast
import json
import textwrap

import pytest
from conftest import run_flake8, run_torchlint

from torchlint.analysis.import_floor import import_floor, with_import_floor
from torchlint.core.settings import Settings, parse_version
from torchlint.knowledge.releases import module_release

# torch.nn.attention arrived in 2.3 (mined from the releases' sources); LeafSpec's
# replacement, TreeSpec.is_leaf(), in 2.2; torch.amp.GradScaler in 2.3.
SOURCE = """\
import torch
{imports}
import torch.utils._pytree as pytree


def is_leaf(spec):
    return isinstance(spec, pytree.LeafSpec)


scaler = torch.cuda.amp.GradScaler()
"""


def _floor(imports: str):
    return import_floor(ast.parse(SOURCE.format(imports=textwrap.dedent(imports))))


def test_the_mined_modules_give_the_release_a_module_arrived_in():
    assert module_release("torch.nn.attention") == "2.3"
    assert module_release("torch.compiler") == "2.1"
    assert module_release("torch.nn") is None  # as old as the oldest release mined


@pytest.mark.parametrize("imports, floor", [
    ("from torch.nn.attention import sdpa_kernel", "2.3"),
    ("import torch.nn.attention", "2.3"),
    ("from torch.nn import attention", "2.3"),  # a submodule imported by name
    ("from torch.nn.attention import sdpa_kernel\nfrom torch import compiler", "2.3"),  # the newest one
    ("import torch.nn", None),
    ("try:\n    from torch.nn.attention import sdpa_kernel\nexcept ImportError:\n    sdpa_kernel = None", None),
    ("if hasattr(torch, 'compiler'):\n    import torch.compiler", None),
])
def test_only_unconditional_top_level_imports_bound_the_floor(imports, floor):
    assert _floor(imports) == (parse_version(floor) if floor else None)


def test_a_declared_floor_is_raised_by_the_imports_and_never_lowered():
    tree = ast.parse(SOURCE.format(imports="from torch.nn.attention import sdpa_kernel"))
    newer = Settings(torch_version=parse_version("2.6"))
    assert with_import_floor(newer, tree) is newer
    assert with_import_floor(Settings(torch_version=parse_version("1.13")), tree).torch_version == (2, 3, 0)
    # no declared floor: a lower bound says nothing of the older releases the project supports
    assert with_import_floor(Settings(), tree).torch_version is None


def _codes(path, imports: str, *extra: str):
    path.write_text(SOURCE.format(imports=imports))
    result = run_torchlint([str(path), "--no-cache", "--select", "TL109", "--output-format", "json", *extra])
    assert result.returncode in (0, 1), result.stderr
    return sorted((d["location"]["row"], d["code"]) for d in json.loads(result.stdout))


def test_a_file_importing_a_newer_module_is_told_about_newer_replacements(tmp_path):
    path = tmp_path / "model.py"
    # declared 1.13: neither replacement exists there, so nothing is asked of the file...
    assert _codes(path, "", "--torch-version", "1.13") == []
    # ...unless the file itself cannot run before 2.3
    assert _codes(path, "from torch.nn.attention import sdpa_kernel", "--torch-version", "1.13") == [
        (7, "TL109"), (10, "TL109")]


def test_the_flake8_plugin_reads_the_same_floor(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(SOURCE.format(imports="from torch.nn.attention import sdpa_kernel"))
    result = run_flake8(["--select", "TL", "--torch-version", "1.13", str(path)])
    assert [line.split(":")[1] for line in result.stdout.splitlines() if " TL109 " in line] == ["7", "10"], \
        result.stdout + result.stderr


# -- what a module's code needs (a project that declares no floor) ----------------------

@pytest.mark.parametrize("code, needed", [
    ("import torch\nx = torch.compile(model)\n", (2, 0, 0)),  # a mined name, anywhere
    ("def f(m):\n    from torch.nn.attention import sdpa_kernel\n    return sdpa_kernel\n", (2, 3, 0)),
    ("import torch as T\n\ndef load(p):\n    return T.load(p, weights_only=False)\n", (1, 13, 0)),
    ("from torch import load\nstate = load('x.pt', weights_only=True)\n", (1, 13, 0)),
    ("import torch\ntry:\n    y = torch.compile(m)\nexcept AttributeError:\n    y = m\n", None),
    ("import torch\nif hasattr(torch, 'compile'):\n    y = torch.compile(m)\n", None),
    ("import torch\nif torch.__version__ >= '2':\n    y = torch.compile(m)\n", None),
    ("import torch\ndef f():\n    if IS_TORCH_2:\n        return torch.compile(m)\n", None),
    ("import torch\nif torch.cuda.is_available():\n    y = torch.compile(m)\n", (2, 0, 0)),  # no version test
    ("import torch\nx = torch.load('a.pt', map_location='cpu')\n", None),
    ("compile = lambda m: m\ny = compile(m)\n", None),  # not torch's
])
def test_what_a_module_uses_outside_version_tests_bounds_its_torch(code, needed):
    from torchlint.analysis.import_floor import needed_release
    assert needed_release(ast.parse(code)) == needed


@pytest.mark.parametrize("code", [
    "from torch import amp as A\nA.GradScaler",
    "from torch._C import X\nfrom torch.distributed.c10d_logger import (\n    _exception_logger,\n)\n",
    "import torch.nn.attention as attention\n",
    "import torch\ny = torch.compile(m)\n",
    "import torch\ntorch.load(f, weights_only=True)\n",
])
def test_the_screen_lets_through_every_text_that_may_need_a_release(code):
    from torchlint.analysis.import_floor import may_need_a_release, needed_release
    assert may_need_a_release(code)
    assert needed_release(ast.parse(code)) is not None or code.startswith("from torch import amp")


def test_the_screen_stops_texts_that_need_nothing():
    from torchlint.analysis.import_floor import may_need_a_release
    assert not may_need_a_release("import torch\nx = torch.zeros(3) + 1\n")
    assert not may_need_a_release("import numpy as np\nx = np.compile\n")
