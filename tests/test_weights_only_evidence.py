"""TL214 chooses `weights_only=` from what the same file saves at that path."""

from __future__ import annotations

import json

import pytest

from torchlint.core.settings import Settings
from torchlint.engine.linter import Engine
from torchlint.rules import all_rules
from torchlint.rules.rule import dedent

TL214 = [r for r in all_rules() if r.code == "TL214"]


def findings(source: str, **settings):
    engine = Engine(TL214, Settings(**settings)) if settings else Engine(TL214)
    return engine.check(dedent(source)).diagnostics


def fixed(source: str) -> str:
    return Engine(TL214).fix(dedent(source), unsafe=True).source


@pytest.mark.parametrize("source, value", [
    # the same variable, a state dict saved through a name bound to a dict literal
    ("""
     import torch
     def save(net, path):
         checkpoint = {"net": net.state_dict(), "lr": 0.1}
         torch.save(checkpoint, path)
     def load(path):
         return torch.load(path, map_location="cpu")
     """, "True"),
    # a whole module, found by inference (a class of the file derived from nn.Module)
    ("""
     import torch
     class Net(torch.nn.Module):
         pass
     net = Net()
     torch.save(net, "net.pt")
     again = torch.load("net.pt", map_location="cpu")
     """, "False"),
    # an instance of a plain class of the file, inside a dict
    ("""
     import torch
     class Vocab:
         pass
     torch.save({"vocab": Vocab(), "epoch": 1}, "vocab.pt")
     vocab = torch.load("vocab.pt", map_location="cpu")["vocab"]
     """, "False"),
    # one save of a module among state-dict saves: the module decides
    ("""
     import torch
     model = torch.nn.Linear(2, 2)
     torch.save(model.state_dict(), "m.pt")
     torch.save(model, "m.pt")
     m = torch.load("m.pt", map_location="cpu")
     """, "False"),
])
def test_fix_follows_the_save(source: str, value: str) -> None:
    result = fixed(source)
    assert f"weights_only={value})" in result
    assert result.count("weights_only=") == 1


@pytest.mark.parametrize("source", [
    # another path
    """
    import torch
    torch.save(model.state_dict(), "a.pt")
    state = torch.load("b.pt", map_location="cpu")
    """,
    # what is saved is unknown (a parameter)
    """
    import torch
    def save(obj):
        torch.save(obj, "a.pt")
    state = torch.load("a.pt", map_location="cpu")
    """,
    # one unknown save among state dicts
    """
    import torch
    torch.save(model.state_dict(), "a.pt")
    torch.save(something, "a.pt")
    state = torch.load("a.pt", map_location="cpu")
    """,
])
def test_no_fix_without_evidence(source: str) -> None:
    found = findings(source)
    assert len(found) == 1 and found[0].fix is None
    assert "only for a file you trust" in found[0].detail


def test_from_torch_2_6_only_pickled_files_are_reported() -> None:
    state_dict = """
    import torch
    torch.save(model.state_dict(), "a.pt")
    state = torch.load("a.pt", map_location="cpu")
    """
    module = """
    import torch
    model = torch.nn.Linear(2, 2)
    torch.save(model, "a.pt")
    state = torch.load("a.pt", map_location="cpu")
    """
    assert findings(state_dict, torch_version=(2, 6, 0)) == []
    [found] = findings(module, torch_version=(2, 6, 0))
    assert "UnpicklingError" in found.detail and "trust" in found.detail


def test_the_two_questions_of_torch_load_are_silenced_apart(tmp_path) -> None:
    # TL203 (map_location) and TL214 (weights_only) are separate codes: a user who answers one
    # (or silences it) still hears about the other, through the real command.
    from conftest import run_torchlint

    path = tmp_path / "load.py"
    path.write_text(
        "import torch\n"
        # On the GPU when there is one (after an unconditional .cuda() a load runs only on a GPU).
        "model = torch.nn.Linear(2, 2).cuda() if torch.cuda.is_available() else None\n"
        "state = torch.load('ckpt.pt')  # noqa: TL214\n"
        "other = torch.load('other.pt', weights_only=True)\n"
        "third = torch.load('third.pt', map_location='cpu')\n"
    )
    result = run_torchlint([str(path), "--no-cache", "--select", "TL203,TL214", "--output-format", "json"])
    found = sorted((d["location"]["row"], d["code"]) for d in json.loads(result.stdout))
    assert found == [(3, "TL203"), (4, "TL203"), (5, "TL214")], result.stdout


@pytest.mark.parametrize("save, load, value", [
    ("os.path.join(out_dir, 'best.pth')", "os.path.join(ckpt_dir, 'best.pth')", "False"),
    ("out_dir + '/best.pth'", "'%s/best.pth' % ckpt_dir", "False"),
    ("Path(out_dir) / 'best.pth'", "f'{ckpt_dir}/best.pth'", "False"),
    ("os.path.join(out_dir, 'best.pth')", "os.path.join(ckpt_dir, 'other.pth')", None),  # another file
    # one naming scheme, written and read alike: a file of the family the save writes
    ("'model_%d.pth' % epoch", "'model_%d.pth' % last", "False"),
    ("os.path.join(out_dir, '{}_net_{}.pth'.format('pose', epoch))",
     "os.path.join(ckpt_dir, '{}_net_{}.pth'.format('pose', last))", "False"),
    ("'model_%d.pth' % epoch", "'optim_%d.pth' % last", None),  # another scheme
    ("'model_%d.pth' % epoch", "'model_%d.pt' % last", None),
    ("os.path.join(out_dir, 'best.pth')", "open(os.path.join(ckpt_dir, 'best.pth'), 'rb')", None),
])
def test_a_path_ending_in_the_same_file_name_is_evidence(save: str, load: str, value) -> None:
    source = f"""
    import os
    from pathlib import Path
    import torch
    def train(out_dir, epoch):
        net = torch.nn.Linear(2, 2)
        torch.save(net, {save})
    def evaluate(ckpt_dir, last):
        return torch.load({load}, map_location="cpu")
    """
    [found] = findings(source)
    if value is None:
        assert found.fix is None
    else:
        assert f"weights_only={value})" in fixed(source)


def test_a_path_named_by_a_template_is_followed_through_its_names() -> None:
    # cmr: save_filename = '{}_net_{}.pth'.format(...); save_path = os.path.join(d, save_filename)
    source = """
    import os
    import torch
    def save_network(net, label, epoch, save_dir):
        save_filename = '{}_net_{}.pth'.format(label, epoch)
        save_path = os.path.join(save_dir, save_filename)
        torch.save(net.cpu().state_dict(), save_path)
    def load_network(net, label, epoch, save_dir):
        save_filename = '{}_net_{}.pth'.format(label, epoch)
        save_path = os.path.join(save_dir, save_filename)
        net.load_state_dict(torch.load(save_path, map_location="cpu"))
    """
    assert "weights_only=True)" in fixed(source)


def test_an_old_floor_still_reports_the_load_without_a_fix():
    # torch 1.9-1.12 lack the keyword, but a project supporting 1.9 also runs on 1.13-2.5,
    # where this load unpickles whatever the file holds: reported, with no fix to break 1.9.
    source = """
        import torch
        state = torch.load("checkpoint.pt", map_location="cpu")
        """
    [found] = findings(source, torch_version=(1, 9, 0))
    assert found.fix is None
    assert "supports torch 1.9" in found.detail and "1.13" in found.detail
    assert Engine(TL214, Settings(torch_version=(1, 9, 0))).fix(dedent(source), unsafe=True).source == dedent(source)
    [newer] = findings(source, torch_version=(1, 13, 0))
    assert "supports torch" not in newer.detail


def _write_patching_project(root, patch: str) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("from pkg.utils import helper\n")
    (root / "pkg" / "utils").mkdir()
    (root / "pkg" / "utils" / "__init__.py").write_text(
        "import torch\n"
        "from pkg.utils.patches import torch_load\n"
        f"{patch}\n"
        "def helper():\n"
        "    return 1\n")
    (root / "pkg" / "utils" / "patches.py").write_text(
        "import torch\n"
        "_torch_load = torch.load\n"
        "def torch_load(*args, **kwargs):\n"
        "    kwargs.setdefault('weights_only', False)\n"
        "    return _torch_load(*args, **kwargs)\n")
    (root / "pkg" / "train.py").write_text(
        "import torch\n"
        "from pkg.utils import helper\n"
        "state = torch.load('last.pt', map_location='cpu')\n")
    (root / "pkg" / "models").mkdir()
    (root / "pkg" / "models" / "__init__.py").write_text("")
    (root / "pkg" / "models" / "build.py").write_text(  # reaches the patch through its package only
        "import torch\n"
        "state = torch.load('sam.pt', map_location='cpu')\n")
    (root / "pyproject.toml").write_text("[tool.torchlint]\n")


@pytest.mark.parametrize("patch, reported", [
    ("torch.load = torch_load", set()),           # ultralytics: every load calls the project's wrapper
    ("torch.save = torch_load", {("train.py", 3), ("build.py", 2)}),  # another name: torch.load stays torch's
    ("import torch as t\nt.load = torch_load", set()),
])
def test_a_project_that_rebinds_torch_load_is_left_to_its_wrapper(tmp_path, patch, reported):
    import subprocess
    import sys
    _write_patching_project(tmp_path, patch)
    result = subprocess.run([sys.executable, "-m", "torchlint.frontends.cli", "--no-cache", "--select", "TL214",
                             "--output-format", "json", "."], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300)
    found = {(item["filename"].replace("\\", "/").rsplit("/", 1)[-1], item["location"]["row"])
             for item in json.loads(result.stdout)}
    assert found == reported, result.stderr


def test_a_template_saved_from_cpu_in_another_module_needs_no_map_location(tmp_path) -> None:
    # cmr: train_utils.py saves network.cpu().state_dict() under '{}_net_{}.pth'; predictor.py,
    # beside it, loads the same scheme on a GPU-using model: the file holds CPU tensors only.
    from conftest import run_torchlint

    (tmp_path / "train_utils.py").write_text(
        "import os\nimport torch\n\n\n"
        "def save_network(network, label, epoch, save_dir):\n"
        "    save_filename = '{}_net_{}.pth'.format(label, epoch)\n"
        "    torch.save(network.cpu().state_dict(), os.path.join(save_dir, save_filename))\n"
        "    network.cuda()\n")
    (tmp_path / "predictor.py").write_text(
        "import os\nimport torch\n\n\n"
        "def load_network(network, label, epoch, save_dir):\n"
        "    save_filename = '{}_net_{}.pth'.format(label, epoch)\n"
        "    network.load_state_dict(torch.load(os.path.join(save_dir, save_filename), weights_only=True))\n"
        "    return network.cuda()\n")
    result = run_torchlint([str(tmp_path), "--no-cache", "--select", "TL203", "--output-format", "json"])
    assert json.loads(result.stdout) == [], result.stdout
    other = (tmp_path / "predictor.py").read_text().replace("'{}_net_{}.pth'", "'{}_opt_{}.pth'")
    (tmp_path / "predictor.py").write_text(other)
    result = run_torchlint([str(tmp_path), "--no-cache", "--select", "TL203", "--output-format", "json"])
    assert [d["code"] for d in json.loads(result.stdout)] == ["TL203"], result.stdout


_SCRIPT = """
import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
model = torch.nn.Linear(2, 2).to(device)
{save}
model.load_state_dict(torch.load("model.pth", weights_only=True))
"""


@pytest.mark.parametrize("save, reported", [
    # a tutorial that saves at its top level and reads back: the same run wrote the file
    ('torch.save(model.state_dict(), "model.pth")', False),
    # a save only some runs make: a run that only loads may read a GPU machine's file
    ('if device == "cuda":\n    torch.save(model.state_dict(), "model.pth")', True),
    ('for epoch in range(2):\n    torch.save(model.state_dict(), "model.pth")', True),
])
def test_a_script_reading_back_what_its_top_level_saved_needs_no_map_location(save, reported) -> None:
    engine = Engine([r for r in all_rules() if r.code == "TL203"])
    codes = [d.code for d in engine.check(dedent(_SCRIPT.format(save=save))).diagnostics]
    assert ("TL203" in codes) is reported, codes
