"""TL203 and checkpoints shipped with the project: the file a load reads, beside the
module (``Path(__file__).parent / "x.pt"``) or beside a script (``'./oracle.trc'``), is
read (never unpickled) for the devices its storages were saved from."""

from __future__ import annotations

import pickle

import pytest
from conftest import run_torchlint

from torchlint.analysis.checkpoint_files import devices_in_checkpoint, holds_cpu_tensors_only


def _legacy_checkpoint(path, location: str) -> None:
    """A file laid out as torch's legacy format: magic number, protocol, system info, then
    the object pickle, whose storages name their location (here a stand-in tuple)."""
    with open(path, "wb") as handle:
        for part in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True},
                     {"weight": ("storage", "FloatStorage", "0", location, 4)}):
            pickle.dump(part, handle, protocol=2)


def test_the_devices_of_checkpoints_torch_saved_on_the_cpu(tmp_path):
    torch = pytest.importorskip("torch")
    state = {"w": torch.ones(3), "b": torch.zeros(2, dtype=torch.long)}
    torch.save(state, tmp_path / "zip.pt")
    torch.save(state, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    assert devices_in_checkpoint(str(tmp_path / "zip.pt")) == {"cpu"}
    assert devices_in_checkpoint(str(tmp_path / "legacy.pt")) == {"cpu"}


def test_a_checkpoint_naming_a_gpu_or_unreadable_is_not_cpu_only(tmp_path):
    _legacy_checkpoint(tmp_path / "gpu.pt", "cuda:0")
    _legacy_checkpoint(tmp_path / "cpu.pt", "cpu")
    (tmp_path / "junk.pt").write_bytes(b"\x00not a pickle at all")
    assert devices_in_checkpoint(str(tmp_path / "gpu.pt")) == {"cuda:0"}
    assert holds_cpu_tensors_only(str(tmp_path / "cpu.pt"))
    assert not holds_cpu_tensors_only(str(tmp_path / "gpu.pt"))
    assert devices_in_checkpoint(str(tmp_path / "junk.pt")) is None
    assert devices_in_checkpoint(str(tmp_path / "missing.pt")) is None


_MODULE = """import pathlib
import os
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def table():
    here = pathlib.Path(os.path.abspath(__file__)).parent
    return torch.load({path}, weights_only=True)
"""


@pytest.mark.parametrize("path", [
    "str(here) + '/tensors.pt'",
    "here / 'tensors.pt'",
    "os.path.join(os.path.dirname(__file__), 'tensors.pt')",
    "os.path.join(os.path.dirname(os.path.realpath(__file__)), 'data', '..', 'tensors.pt')",
])
def test_a_cpu_checkpoint_shipped_beside_the_module_needs_no_map_location(tmp_path, path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "tables.py").write_text(_MODULE.format(path=path))
    _legacy_checkpoint(tmp_path / "pkg" / "tensors.pt", "cpu")
    run = run_torchlint(["--isolated", "--select", "TL203", "pkg"], cwd=tmp_path)
    assert "TL203" not in run.stdout, run.stdout + run.stderr
    # the same file saved from a GPU: reported, and the cache knows the check read the file
    _legacy_checkpoint(tmp_path / "pkg" / "tensors.pt", "cuda:0")
    run = run_torchlint(["--isolated", "--select", "TL203", "pkg"], cwd=tmp_path)
    assert "pkg/tables.py:10:" in run.stdout and "TL203" in run.stdout, run.stdout + run.stderr


_SCRIPT = """import torch
oracle_path = './oracle.trc'
use_cuda = torch.cuda.is_available()
{guard}
    oracle = torch.load(oracle_path, weights_only=True)
    if use_cuda:
        oracle = oracle.cuda()
"""


@pytest.mark.parametrize("guard, reported", [
    # a script is run from its folder: the relative path is the file beside it
    ("if __name__ == '__main__':", False),
    # a library function: its relative path is read from wherever its caller runs
    ("def load():", True),
])
def test_a_relative_path_is_the_file_beside_a_script_only(tmp_path, guard, reported):
    (tmp_path / "main.py").write_text(_SCRIPT.format(guard=guard))
    _legacy_checkpoint(tmp_path / "oracle.trc", "cpu")
    run = run_torchlint(["--isolated", "--no-cache", "--select", "TL203", "main.py"], cwd=tmp_path)
    assert ("TL203" in run.stdout) is reported, run.stdout + run.stderr
