"""TL119 (opt-in): torchaudio's 2.9 removals, mined from its wheels (issue 35).

torchaudio is not installed here and CI downloads no wheel: the tests hold the
committed data (``data/torchaudio_deprecations_mined.json``, written by
``scripts/mine_torchaudio_deprecations.py``) to what the issue names, the
entries to the data, and the rule to the entries through the real CLI. The
miner itself runs on small wheels made here.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import run_torchlint

from torchlint.knowledge.deprecations import Status
from torchlint.knowledge.torchaudio_api import MINED_FILE, removed_entries
from torchlint.rules import rule_by_code

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "mine_torchaudio_deprecations.py"
DATA = json.loads(MINED_FILE.read_text(encoding="utf-8"))
BY_ID = {item["id"]: item for item in DATA["items"]}


def test_data_covers_the_releases_around_the_removal() -> None:
    assert DATA["package"] == "torchaudio" and DATA["releases"] == ["2.7.1", "2.8.0", "2.9.1"]
    # the I/O and backend functions the issue names: warned about in 2.8, gone in 2.9
    for name in ("torchaudio.info", "torchaudio.list_audio_backends", "torchaudio.AudioMetaData",
                 "torchaudio.io.StreamReader", "torchaudio.io.StreamWriter", "torchaudio.io.AudioEffector",
                 "torchaudio.sox_effects.apply_effects_tensor", "torchaudio.kaldi_io.read_mat_ark"):
        item = BY_ID[name]
        assert item["status"]["2.8.0"] == "warns" and item["status"]["2.9.1"] == "gone", item
        assert item["removed"] == "2.9.1", item
    # torchaudio.load stays (on TorchCodec): no item says it is removed
    assert "torchaudio.load" not in BY_ID


def test_entries_are_the_public_names_2_9_removed() -> None:
    entries = removed_entries()
    removed = {item["names"][0] for item in DATA["items"] if item["removed"] == "2.9.1" and item["names"]
               and not item["keyword"] and not any(p.startswith("_") for p in item["names"][0].split("."))}
    assert {e.old for e in entries} == removed
    assert len(entries) > 60 and all(e.status is Status.REMOVED and e.replacement for e in entries)
    assert tuple(rule_by_code("TL119").ENTRIES) == entries


def test_tl119_is_opt_in_and_flags_removed_names(tmp_path: Path) -> None:
    source = tmp_path / "audio.py"
    source.write_text(
        "import torchaudio\n"
        "from torchaudio.io import StreamReader\n"
        "meta = torchaudio.info('speech.wav')\n"
        "reader = StreamReader('speech.mp4')\n"
        "wave, sr = torchaudio.load('speech.wav')\n"
        "wave = torchaudio.functional.resample(wave, sr, 16000)\n", encoding="utf-8")
    default = run_torchlint(["--isolated", "--no-cache", str(source)])
    assert default.returncode == 0 and "TL119" not in default.stdout, default.stdout
    chosen = run_torchlint(["--isolated", "--no-cache", "--select", "TL119", str(source)])
    assert chosen.returncode == 1, chosen.stderr
    lines = [line for line in chosen.stdout.splitlines() if "TL119" in line]
    assert [line.split(":")[1] for line in lines] == ["2", "3"], chosen.stdout
    assert "`torchaudio.info` was removed in torchaudio 2.9" in chosen.stdout


def _script():
    spec = importlib.util.spec_from_file_location("mine_torchaudio_deprecations", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


HELPERS = (
    "import warnings\nfrom functools import partial\n"
    "def wrap_deprecated(func, name, direction):\n    def wrapped(*a):\n        warnings.warn(direction)\n"
    "        return func(*a)\n    return wrapped\n"
    "def deprecated(direction):\n    def decorator(func):\n        return wrap_deprecated(func, 'f', direction)\n"
    "    return decorator\n"
    "dropping_support = deprecated('dropped in 2.9')\n"
    "def dropping_class_support(c, msg='x'):\n    c.__init__ = wrap_deprecated(c.__init__, 'c', msg)\n    return c\n"
    "dropping_class_io_support = partial(dropping_class_support, msg='io')\n"
)


def _wheel(tmp_path: Path, version: str, init: str) -> Path:
    path = tmp_path / f"torchaudio-{version}.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("torchaudio/version.py", f"__version__ = '{version}+cpu'\n")
        archive.writestr("torchaudio/_internal/__init__.py", "")
        archive.writestr("torchaudio/_internal/module_utils.py", HELPERS)
        archive.writestr("torchaudio/__init__.py", init)
        archive.writestr("torchaudio/_info.py", "def _info(path):\n    return path\nclass _Meta:\n    pass\n")
    return path


def test_miner_reads_wrappers_from_wheels(tmp_path: Path) -> None:
    wheels = [
        _wheel(tmp_path, "2.7.1", "from ._info import _info as info, _Meta as AudioMetaData\n"),
        _wheel(tmp_path, "2.8.0", "from torchaudio._internal.module_utils import dropping_support, "
                                  "dropping_class_io_support\nfrom ._info import _info, _Meta\n"
                                  "info = dropping_support(_info)\nAudioMetaData = dropping_class_io_support(_Meta)\n"
                                  "@dropping_support\ndef play(x):\n    return x\n"),
        _wheel(tmp_path, "2.9.1", "def load(path):\n    return path\n"),
    ]
    output = tmp_path / "mined.json"
    result = subprocess.run([sys.executable, str(SCRIPT), *map(str, wheels), "--output", str(output), "--report"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    items = {item["id"]: item for item in json.loads(output.read_text(encoding="utf-8"))["items"]}
    assert items["torchaudio.info"]["status"] == {"2.7.1": "silent", "2.8.0": "warns", "2.9.1": "gone"}
    assert items["torchaudio.AudioMetaData"]["removed"] == "2.9.1"
    assert items["torchaudio.play"]["deprecated"] == "2.8.0"
    assert "torchaudio 2.7.1, 2.8.0, 2.9.1" in result.stderr


def test_miner_says_which_wheel_is_missing(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "none.whl")], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2 and "no such wheel" in result.stderr and "Traceback" not in result.stderr
