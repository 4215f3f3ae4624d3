"""The project model's module summaries on disk (``run/summaries.py``).

What a check learns about the project's modules (their top-level names, what
their functions return, ...) is kept in the cache directory by module path
and digest, so the next run, or another flake8 worker, reads it instead of
parsing and analysing the module again. Kept answers must give exactly the
findings a fresh analysis gives, follow every module they were worked out
from, and a damaged summary must only cost time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import torchlint.core.source as source_module
from torchlint.analysis.inference import Kind, Value
from torchlint.analysis.project import Project
from torchlint.analysis.summaries import decode, encode
from torchlint.core.settings import Settings
from torchlint.core.source import SourceFile
from torchlint.engine.linter import Engine
from torchlint.rules import all_rules
from torchlint.run.project_files import FileFinder
from torchlint.run.summaries import FOLDER, DiskSummaries

INNER = """\
import torch.nn.functional as F


def inner(out, y):
    return F.cross_entropy(out, y)
"""

OUTER = """\
from inner import inner


def outer(out, y):
    return inner(out, y)
"""

TRAIN = """\
from outer import outer


def report(out, y):
    loss = outer(out, y)
    print(loss.data[0])
"""


def _write(root: Path) -> Path:
    root.mkdir(exist_ok=True)
    (root / "inner.py").write_text(INNER)
    (root / "outer.py").write_text(OUTER)
    (root / "train.py").write_text(TRAIN)
    return root


def _check(root: Path, cache: Path, consulted: list, name: str = "train.py") -> list:
    """``name``'s findings from a new project model over ``root`` (a new run), noting the modules consulted."""
    finder = FileFinder([str(root)])
    project = Project(finder, Settings(), DiskSummaries(str(cache), Settings()))
    engine = Engine(all_rules(), project=project)
    path = str(root / name)
    data = (root / name).read_bytes()
    result = engine.check(SourceFile(data.decode(), data=data), module=engine.module_for(path))
    consulted.extend(project.consulted)
    return [(d.line, d.code) for d in result.diagnostics]


@pytest.fixture
def counted_parses(monkeypatch):
    """The texts Python's parser is asked for, by their first line."""
    seen = []
    real = source_module._checked_tree

    def counting(text, *args, **kwargs):
        seen.append(text.splitlines()[0] if text else "")
        return real(text, *args, **kwargs)

    monkeypatch.setattr(source_module, "_checked_tree", counting)
    return seen


def test_a_second_run_reads_the_answers_instead_of_parsing_the_modules(tmp_path, counted_parses):
    root, cache = _write(tmp_path / "proj"), tmp_path / "cache"
    first = _check(root, cache, [])
    assert first == [(6, "TL101")]
    assert any(line.startswith("from inner") for line in counted_parses)  # outer.py was parsed
    assert len(list((cache / FOLDER).glob("*.json"))) >= 2
    counted_parses.clear()
    consulted: list = []
    assert _check(root, cache, consulted) == first
    assert counted_parses == ["from outer import outer"]  # only the checked file
    # The run still depends on both modules (the result cache must watch them).
    assert {Path(key).name for key in consulted} >= {"inner.py", "outer.py"}


def test_a_kept_answer_follows_the_modules_it_was_worked_out_from(tmp_path):
    root, cache = _write(tmp_path), tmp_path / ".cache"
    assert _check(root, cache, []) == [(6, "TL101")]
    # outer.py is unchanged, but what it returns came from inner.py.
    (root / "inner.py").write_text(INNER.replace("return F.cross_entropy(out, y)", "return [out, y]"))
    assert _check(root, cache, []) == []
    (root / "inner.py").write_text(INNER)
    assert _check(root, cache, []) == [(6, "TL101")]


RPN = """\
import torch.nn as nn
import torch.nn.functional as F


class RPN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rpn_loss_cls = 0

    def forward(self, x, y):
        self.rpn_loss_cls = F.cross_entropy(x, y)
        return x
"""

NET = """\
import torch.nn as nn
from rpn import RPN


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rpn = RPN()
"""


def test_a_kept_answer_naming_another_modules_class_leads_to_that_module(tmp_path):
    # ``net.rpn`` is kept as "an instance of rpn.RPN"; the next question, about
    # that instance's attribute, must reach rpn.py although this run never read it.
    (tmp_path / "rpn.py").write_text(RPN)
    (tmp_path / "net.py").write_text(NET)
    (tmp_path / "train.py").write_text("from net import Net\n\nnet = Net()\nprint(net.rpn.rpn_loss_cls.data[0])\n")
    cache = tmp_path / ".cache"
    assert _check(tmp_path, cache, []) == [(4, "TL101")]
    assert _check(tmp_path, cache, []) == [(4, "TL101")]


def _damage_every_summary(cache: Path, damage) -> None:
    for path in (cache / FOLDER).glob("*.json"):
        damage(path)


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle] = ord("x") if data[middle] != ord("x") else ord("y")
    path.write_bytes(bytes(data))


def _forge_answers(path: Path) -> None:
    """A well-formed entry with a valid checksum whose answers are not answers."""
    from torchlint.run import cache

    entry = json.loads(path.read_text())
    summary = entry["summary"]
    for question in summary.get("answers", {}):
        summary["answers"][question] = [{"value": {"kind": {"kind": "tensor"}, "scalar": "yes"}}, {}]
    summary["facts"] = {"imports": 3}
    entry["check"] = cache.checksum(entry["key"], entry["digest"], summary)
    path.write_text(json.dumps(entry))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:40])


@pytest.mark.parametrize("damage", [_flip_a_byte, _forge_answers, _truncate])
def test_a_damaged_summary_costs_only_time(tmp_path, damage):
    root, cache = _write(tmp_path), tmp_path / ".cache"
    expected = _check(root, cache, [])
    _damage_every_summary(cache, damage)
    assert _check(root, cache, []) == expected
    assert _check(root, cache, []) == expected  # and the summaries are written afresh


def test_answers_survive_encoding():
    values = [
        None, True, 3, "x",
        Value(Kind.TENSOR, scalar=True, loss=True, cuda=False, dtype="uint8"),
        Value(Kind.MODULE, module_class="torch.nn.MSELoss", reduces=True, instance_of="/p/m.py\x00Net"),
        Value(Kind.TUPLE, items=(Value(Kind.TENSOR), Value(Kind.UNKNOWN))),
        Value(Kind.MAPPING, element=Value(Kind.NUMBER)),
        Value(Kind.MAPPING, keys=(("params", Value(Kind.TUPLE, element=Value(Kind.TENSOR))),)),
        (1, "y"),
        {"volatile": ("torch.autograd.Variable", "volatile")},
    ]
    for value in values:
        assert decode(json.loads(json.dumps(encode(value)))) == value


@pytest.mark.parametrize("data", [
    {"value": {"scalar": True}},  # no kind
    {"value": {"kind": {"kind": "tensor"}, "colour": "red"}},
    {"value": {"kind": {"kind": "tensor"}, "items": {"tuple": [3]}}},
    {"value": {"kind": {"kind": "mapping"}, "keys": {"tuple": [{"tuple": ["params", 3]}]}}},
    {"kind": "nonsense"},
    {"dict": [[1, 2]]},
    [1, 2],
    {"tuple": [1], "dict": []},
])
def test_what_encoding_cannot_have_written_is_refused(data):
    with pytest.raises(ValueError):
        decode(data)


def _flake8(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8", "--select", "TL", *args, "."], cwd=root,
                          capture_output=True, text=True, timeout=300)


def test_flake8_keeps_summaries_in_the_commands_cache_and_finds_the_same(tmp_path):
    root = _write(tmp_path)
    (root / "setup.cfg").write_text("[torchlint]\n")
    first = _flake8(root)
    assert "train.py:6:11: TL101" in first.stdout, first.stdout + first.stderr
    assert list((root / ".torchlint_cache" / FOLDER).glob("*.json"))
    second = _flake8(root)
    assert second.stdout == first.stdout and not second.stderr
    cli = subprocess.run([sys.executable, "-m", "torchlint.frontends.cli", "-q", "."], cwd=root,
                         capture_output=True, text=True, timeout=300)
    assert "train.py:6:11: TL101" in cli.stdout


def test_flake8_can_be_told_to_keep_nothing(tmp_path):
    root = _write(tmp_path)
    (root / "setup.cfg").write_text("[torchlint]\n")
    result = _flake8(root, "--torchlint-no-cache")
    assert "train.py:6:11: TL101" in result.stdout
    assert not (root / ".torchlint_cache").exists()


# -- a helper's import shadowed by a module earlier on the import path ------------

SHADOWING_LOSSES = "def make(out, y):\n    return out\n"


def _write_shadowable(root: Path) -> Path:
    """train.py -> helpers.py -> ``from losses import make``, found in the project's src/;
    a losses.py at the project root, searched first, would shadow it."""
    (root / "src").mkdir(parents=True)
    (root / "src" / "losses.py").write_text(INNER.replace("def inner", "def make"))
    (root / "helpers.py").write_text(OUTER.replace("from inner import inner", "from losses import make")
                                     .replace("def outer", "def total_loss").replace("return inner", "return make"))
    (root / "train.py").write_text(TRAIN.replace("from outer import outer", "from helpers import total_loss")
                                   .replace("= outer(", "= total_loss("))
    (root / "setup.cfg").write_text("[torchlint]\n")
    return root


def test_a_kept_answer_is_dropped_when_a_module_it_read_is_shadowed(tmp_path):
    # The answer about helpers.total_loss was worked out from src/losses.py;
    # a losses.py at the root now shadows it, though src/losses.py and
    # helpers.py are unchanged. train.py is edited, so its result is not the
    # result cache's: the kept answer itself must be dropped.
    root = _write_shadowable(tmp_path)
    check = [sys.executable, "-m", "torchlint", "--cache-dir", str(root / ".cache"), "train.py"]
    first = subprocess.run(check, cwd=root, capture_output=True, text=True, timeout=300)
    assert "train.py:6:11: TL101" in first.stdout, first.stdout + first.stderr
    assert list((root / ".cache" / FOLDER).glob("*.json"))
    (root / "losses.py").write_text(SHADOWING_LOSSES)
    (root / "train.py").write_text(TRAIN.replace("from outer import outer", "from helpers import total_loss")
                                   .replace("= outer(", "= total_loss(") + "# edited\n")
    again = subprocess.run(check, cwd=root, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "TL101" not in again.stdout, again.stdout + again.stderr


def test_flake8_drops_a_kept_answer_whose_import_is_shadowed(tmp_path):
    root = _write_shadowable(tmp_path)
    first = _flake8(root)
    assert "train.py:6:11: TL101" in first.stdout, first.stdout + first.stderr
    (root / "losses.py").write_text(SHADOWING_LOSSES)
    again = _flake8(root)
    assert "TL101" not in again.stdout, again.stdout + again.stderr


def test_a_kept_value_naming_its_callables_with_something_else_is_refused():
    with pytest.raises(ValueError):
        decode({"value": {"kind": {"kind": "function"}, "calls": 3}})
