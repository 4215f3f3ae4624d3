"""Learning-rate schedules (``knowledge/lr_schedules.py``, mined by
``scripts/mine_lr_schedules.py``): their state is numbers, so TL203 does not ask
for ``map_location=`` on a file saved from one or read back into one; and a file a
def reads where it exists and writes where it does not is its own cache."""

from __future__ import annotations

import importlib.util
import json
import textwrap
from pathlib import Path

import pytest
from conftest import run_torchlint

from torchlint.knowledge import lr_schedules

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(lr_schedules.__file__).parent / "data" / lr_schedules.LR_SCHEDULES_DATA


def _miner():
    spec = importlib.util.spec_from_file_location("mine_lr_schedules", ROOT / "scripts" / "mine_lr_schedules.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_the_torch_part_is_what_the_installed_torch_has():
    pytest.importorskip("torch")
    data = json.loads(DATA.read_text(encoding="utf-8"))
    assert data["torch"] == _miner().torch_schedules(), "run scripts/mine_lr_schedules.py"
    assert "torch.optim.lr_scheduler.StepLR" in lr_schedules.lr_schedule_makers()
    assert "torch.optim.lr_scheduler.LRScheduler" not in lr_schedules.lr_schedule_makers()  # a user's subclass base


def test_every_mined_schedule_keeps_no_tensor_in_its_state():
    """What the knowledge claims, on the real classes: each state dict holds numbers only."""
    torch = pytest.importorskip("torch")
    import torch.optim.lr_scheduler as lr_scheduler
    import torch.optim.swa_utils as swa_utils

    def fresh():
        return torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1, momentum=0.9)

    def made(name):
        cls = getattr(lr_scheduler, name, None) or getattr(swa_utils, name)
        optimizer = fresh()
        special = {
            "LambdaLR": lambda: cls(optimizer, lambda step: 0.9 ** step),
            "MultiplicativeLR": lambda: cls(optimizer, lambda step: 0.9),
            "StepLR": lambda: cls(optimizer, step_size=2),
            "MultiStepLR": lambda: cls(optimizer, milestones=[2]),
            "ExponentialLR": lambda: cls(optimizer, gamma=0.9),
            "CosineAnnealingLR": lambda: cls(optimizer, T_max=4),
            "CosineAnnealingWarmRestarts": lambda: cls(optimizer, T_0=2),
            "CyclicLR": lambda: cls(optimizer, base_lr=0.01, max_lr=0.1),
            "OneCycleLR": lambda: cls(optimizer, max_lr=0.1, total_steps=10),
            "SWALR": lambda: cls(optimizer, swa_lr=0.05),
            "ChainedScheduler": lambda: cls([lr_scheduler.StepLR(optimizer, 2)], optimizer=optimizer),
            "SequentialLR": lambda: cls(optimizer, [lr_scheduler.ConstantLR(optimizer), lr_scheduler.StepLR(optimizer, 2)],
                                        milestones=[2]),
        }
        return optimizer, (special.get(name) or (lambda: cls(optimizer)))()

    def tensors(obj):
        if isinstance(obj, torch.Tensor):
            return 1
        if isinstance(obj, dict):
            return sum(tensors(v) for v in obj.values())
        if isinstance(obj, (list, tuple)):
            return sum(tensors(v) for v in obj)
        return 0

    data = json.loads(DATA.read_text(encoding="utf-8"))
    for qualified in data["torch"]:
        optimizer, schedule = made(qualified.rsplit(".", 1)[1])
        optimizer.step()
        schedule.step(*((1.0,) if qualified.endswith("ReduceLROnPlateau") else ()))
        assert tensors(schedule.state_dict()) == 0, qualified


_OPTIMIZATION = '''
from torch.optim.lr_scheduler import LambdaLR, ReduceLROnPlateau
from .trainer_utils import GreedyLR

def _constant(_=None):
    return 1

def get_constant_schedule(optimizer):
    return LambdaLR(optimizer, _constant)

def get_plateau(optimizer, **kwargs):
    return ReduceLROnPlateau(optimizer, **kwargs)

def get_warm(optimizer, warm):
    if warm:
        return get_constant_schedule(optimizer)
    return LambdaLR(optimizer, lambda s: min(1.0, s / 10))

def get_greedy(optimizer):
    return GreedyLR(optimizer)

def _private(optimizer):
    return LambdaLR(optimizer, _constant)
'''


def test_the_transformers_reading_follows_returns(tmp_path):
    package = tmp_path / "transformers"
    package.mkdir()
    (package / "optimization.py").write_text(_OPTIMIZATION)
    (package / "__init__.py").write_text('__version__ = "9.9"\n_import_structure = {"optimization": '
                                         '["get_constant_schedule", "get_warm"]}\n')
    torch_part = ["torch.optim.lr_scheduler.LambdaLR", "torch.optim.lr_scheduler.ReduceLROnPlateau"]
    assert _miner().transformers_schedules(package, torch_part) == [
        "transformers.get_constant_schedule", "transformers.get_warm",
        "transformers.optimization.get_constant_schedule", "transformers.optimization.get_plateau",
        "transformers.optimization.get_warm",
    ]


def _lint(tmp_path, code: str) -> str:
    (tmp_path / "train.py").write_text(textwrap.dedent(code))
    run = run_torchlint(["--isolated", "--no-cache", "--select", "TL203", "train.py"], cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    return run.stdout


def test_a_schedule_state_saved_or_read_back_needs_no_map_location(tmp_path):
    out = _lint(tmp_path, """\
        import torch
        from torch.optim.lr_scheduler import StepLR
        device = "cuda" if torch.cuda.is_available() else "cpu"
        def checkpoint(optimizer, path):
            scheduler = StepLR(optimizer, 10)
            torch.save(scheduler.state_dict(), path + "/scheduler.pt")
            torch.save(optimizer.state_dict(), path + "/optimizer.pt")
        def resume(optimizer, path):
            optimizer.load_state_dict(torch.load(path + "/optimizer.pt", weights_only=True))
            torch.load(path + "/scheduler.pt", weights_only=True)
        """)
    # the optimizer's state holds tensors on the parameters' device: still reported
    assert "train.py:9:" in out and "train.py:10:" not in out, out


def test_a_file_read_into_a_transformers_schedule(tmp_path):
    out = _lint(tmp_path, """\
        import torch
        from transformers import get_linear_schedule_with_warmup
        device = "cuda" if torch.cuda.is_available() else "cpu"
        def resume(optimizer, folder):
            scheduler = get_linear_schedule_with_warmup(optimizer, 10, 100)
            scheduler.load_state_dict(torch.load(folder + "/scheduler.pt", weights_only=True))
            optimizer.load_state_dict(torch.load(folder + "/optimizer.pt", weights_only=True))
        """)
    assert "train.py:6:" not in out and "train.py:7:" in out, out


@pytest.mark.parametrize("otherwise, reported", [
    # where the file is missing the def makes it and saves it there: its own cache
    (["encoded = torch.tensor([len(t) for t in texts])", "torch.save(encoded, path)"], False),
    # where it is missing the def makes it and does not save it: the file comes from elsewhere
    (["encoded = torch.tensor([len(t) for t in texts])"], True),
])
def test_a_def_that_reads_its_own_cache(tmp_path, otherwise, reported):
    body = "\n                ".join(otherwise)
    out = _lint(tmp_path, """\
        import os
        import torch
        device = "cuda" if torch.cuda.is_available() else "cpu"
        def features(path, texts):
            if os.path.exists(path):
                encoded = torch.load(path, weights_only=True)
            else:
                BODY
            return encoded.to(device)
        """.replace("BODY", body))
    assert ("train.py:6:" in out) is reported, out


def test_a_model_trained_where_its_checkpoint_is_missing_is_no_cache(tmp_path):
    # the file may come from a GPU run of the same script, copied to a machine without one
    out = _lint(tmp_path, """\
        import os
        import torch
        device = "cuda" if torch.cuda.is_available() else "cpu"
        def trained(model, path):
            if os.path.exists(path):
                model.load_state_dict(torch.load(path, weights_only=True))
            else:
                model.to(device)
                torch.save(model.state_dict(), path)
            return model
        """)
    assert "train.py:6:" in out, out


def test_the_miner_says_what_is_wrong_with_a_folder_that_is_not_transformers(tmp_path):
    pytest.importorskip("torch")
    import subprocess
    import sys
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "mine_lr_schedules.py"), "--stdout",
                          "--transformers", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "is not the transformers package folder" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
