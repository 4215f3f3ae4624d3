"""The oldest torch a project supports, read from its own metadata when
``torch-version`` is not configured (``run/project_metadata.py``): the CLI and
the flake8 plugin judge advice against it alike."""

from __future__ import annotations


import pytest
from conftest import run_flake8, run_torchlint

from torchlint.run.project_metadata import declared_torch_floor

# TL104 (F.sigmoid) applies only to code that still supports torch < 2.0.
SIGMOID = "import torch.nn.functional as F\ny = F.sigmoid(x)\n"

DECLARATIONS = {
    "pyproject.toml": ('[project]\nname = "p"\ndependencies = ["numpy", "torch >=2.1, <3"]\n',
                       "pyproject.toml [project] dependencies: torch >=2.1, <3"),
    "setup.cfg": ("[options]\ninstall_requires =\n    numpy\n    torch~=2.0.1\n",
                  "setup.cfg [options] install_requires: torch~=2.0.1"),
    "setup.py": ("from setuptools import setup\nsetup(name='p', install_requires=['Torch>=2.2; python_version>\"3\"'])\n",
                 "setup.py install_requires: Torch>=2.2; python_version>\"3\""),
}


@pytest.mark.parametrize("name", DECLARATIONS)
def test_the_floor_comes_from_the_packages_metadata(tmp_path, name):
    text, where = DECLARATIONS[name]
    (tmp_path / name).write_text(text)
    (tmp_path / "src").mkdir()
    declared = declared_torch_floor(str(tmp_path / "src"))
    assert declared is not None and declared.where == where
    assert declared.version[0] == 2


def test_requirements_files_count_when_the_package_metadata_says_nothing(tmp_path):
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='p')\n")
    (tmp_path / "requirements.txt").write_text("# pinned\n-r base.txt\nnumpy==1.26\ntorch==1.13.1  # CUDA 11\n")
    declared = declared_torch_floor(str(tmp_path))
    assert declared is not None and declared.version == (1, 13, 1)


@pytest.mark.parametrize("text", [
    '[project]\ndependencies = ["torch"]\n',  # no lower bound
    '[project]\ndependencies = ["torch<2"]\n',
    '[project]\ndependencies = ["torchvision>=0.15"]\n',  # another package
    '[project]\noptional-dependencies = {gpu = ["torch"], vision = ["torchvision>=0.15"]}\n',  # extras, no bound
    '[project]\ndependencies = ["numpy"]\n[tool.other]\noptional-dependencies = {gpu = ["torch>=2.0"]}\n',
    '[project\ndependencies = ["torch>=2.0"]\n',  # not TOML
    '[project]\ndependencies = ["torch>=>2"]\n',  # not a requirement
])
def test_no_floor_without_a_lower_bound_on_torch(tmp_path, text):
    (tmp_path / "pyproject.toml").write_text(text)
    assert declared_torch_floor(str(tmp_path)) is None


def test_setup_py_is_read_never_run(tmp_path):
    marker = tmp_path / "ran"
    (tmp_path / "setup.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nfrom setuptools import setup\nsetup(install_requires=['torch>=2.0'])\n")
    assert declared_torch_floor(str(tmp_path)).version == (2, 0, 0)
    assert not marker.exists()


def _project(tmp_path, requirement: str):
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "p"\ndependencies = ["{requirement}"]\n')
    (tmp_path / "model.py").write_text(SIGMOID)
    return tmp_path


def test_cli_and_flake8_skip_advice_older_than_the_declared_floor(tmp_path):
    project = _project(tmp_path, "torch>=2.0")
    assert run_torchlint(["--no-cache", "model.py"], cwd=project).returncode == 0
    assert run_flake8(["--select", "TL", "model.py"], cwd=project).stdout == ""


def test_cli_and_flake8_report_it_for_an_older_floor(tmp_path):
    project = _project(tmp_path, "torch>=1.8")
    cli = run_torchlint(["--no-cache", "model.py"], cwd=project)
    assert "TL104" in cli.stdout
    assert "TL104" in run_flake8(["--select", "TL", "model.py"], cwd=project).stdout


def test_the_command_line_and_isolated_runs_win_over_the_metadata(tmp_path):
    project = _project(tmp_path, "torch>=2.0")
    assert "TL104" in run_torchlint(["--no-cache", "--torch-version", "1.12", "model.py"], cwd=project).stdout
    assert "TL104" in run_torchlint(["--no-cache", "--isolated", "model.py"], cwd=project).stdout


def test_an_unpacked_wheel_and_a_source_distribution_declare_it_too(tmp_path):
    wheel = tmp_path / "wheel"
    (wheel / "pkg-1.0.dist-info").mkdir(parents=True)
    (wheel / "pkg-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: pkg\nRequires-Dist: torch (>=1.12); extra == 'gpu'\n"
        "Requires-Dist: torch<4.0,>=2.1.0\n\nRequires-Dist: torch>=9.0 is the long description, not a header\n")
    floor = declared_torch_floor(str(wheel))
    assert floor is not None and floor.version == (2, 1, 0) and "METADATA" in floor.where
    sdist = tmp_path / "sdist"
    (sdist / "requirements").mkdir(parents=True)
    (sdist / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: pkg\n")
    (sdist / "requirements" / "test.txt").write_text("torch>=2.5\n")
    (sdist / "requirements" / "base.txt").write_text("torch>=2.2,<3\n")
    floor = declared_torch_floor(str(sdist))
    assert floor is not None and floor.version == (2, 2, 0) and floor.where.startswith("requirements/base.txt")


EXTRAS = {
    "pyproject.toml": ('[project]\nname = "p"\ndependencies = ["numpy"]\n'
                       '[project.optional-dependencies]\ngpu = ["torch>=2.1"]\ncuda = ["torch>=2.0"]\n'
                       'dev = ["pytest", "torch>=1.0"]\n',
                       "pyproject.toml [project.optional-dependencies]: torch>=2.0"),
    "setup.cfg": ("[options]\ninstall_requires =\n    numpy\n[options.extras_require]\ntorch =\n    torch>=2.0\n",
                  "setup.cfg [options.extras_require]: torch>=2.0"),
    "setup.py": ("from setuptools import setup\nsetup(install_requires=['torch'], extras_require={'gpu': ['torch>=2.0']})\n",
                 "setup.py extras_require: torch>=2.0"),
    "pkg-1.0.dist-info/METADATA": (
        'Metadata-Version: 2.1\nName: pkg\nRequires-Dist: numpy\nRequires-Dist: torch>=2.2; extra == "dev"\n'
        'Requires-Dist: torch>=2.0; extra == "torch"\n',
        'pkg-1.0.dist-info/METADATA Requires-Dist: torch>=2.0; extra == "torch"'),
}


@pytest.mark.parametrize("name", EXTRAS)
def test_without_a_requirement_on_torch_the_lowest_an_extra_declares_is_the_floor(tmp_path, name):
    # diffusers requires torch only through its extras: Requires-Dist: torch>=1.4; extra == "torch"
    text, where = EXTRAS[name]
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(text)
    declared = declared_torch_floor(str(tmp_path))
    assert declared is not None and (declared.version, declared.where) == ((2, 0, 0), where)


def test_a_requirement_outside_the_extras_wins_over_theirs(tmp_path):
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nsetup(extras_require={'old': ['torch>=1.4']})\n")
    (tmp_path / "requirements.txt").write_text("torch>=2.1\n")
    assert declared_torch_floor(str(tmp_path)).version == (2, 1, 0)


@pytest.mark.parametrize("pin, floor", [("torch==0.4.0a0+9a2e8f3", (0, 4, 0)), ("torch==1.4.0", (1, 4, 0))])
def test_an_exact_pin_is_the_floor_also_in_a_folder_of_scripts(tmp_path, pin, floor):
    # a 2018 repository of scripts: no package metadata, a pip freeze in requirements.txt
    (tmp_path / "requirements.txt").write_text(f"numpy==1.14.2\n{pin}\n")
    (tmp_path / "models").mkdir()
    declared = declared_torch_floor(str(tmp_path / "models"))
    assert declared is not None and declared.version == floor and declared.where == f"requirements.txt: {pin}"


def test_a_package_above_wins_over_a_requirements_file_below(tmp_path):
    # examples/requirements.txt belongs to the examples, not to the package holding them
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["torch>=2.0"]\n')
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "requirements.txt").write_text("torch==1.4.0\n")
    assert declared_torch_floor(str(tmp_path / "examples")).version == (2, 0, 0)


def test_cli_and_flake8_judge_against_the_floor_an_extra_declares(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\n[project.optional-dependencies]\ntorch = ["torch>=2.0"]\n')
    (tmp_path / "model.py").write_text(SIGMOID)
    assert run_torchlint(["--no-cache", "model.py"], cwd=tmp_path).returncode == 0
    assert run_flake8(["--select", "TL", "model.py"], cwd=tmp_path).stdout == ""


@pytest.mark.parametrize("text", [
    '[project]\nname = "p"\noptional-dependencies = {test = ["torch==2.13.0"], docs = ["torch>=2.0"]}\n',
    '[project]\nname = "p"\noptional-dependencies = {dev = ["torch>=2.0"]}\n',
])
def test_a_torch_only_the_projects_development_extras_pin_is_no_floor(tmp_path, text):
    # torchlint's own setup.cfg pins torch for its tests: that is not what a project supports.
    (tmp_path / "pyproject.toml").write_text(text)
    assert declared_torch_floor(str(tmp_path)) is None
    (tmp_path / "setup.cfg").write_text("[options.extras_require]\ntest =\n    torch==2.13.0\n")
    (tmp_path / "pyproject.toml").unlink()
    assert declared_torch_floor(str(tmp_path)) is None
    (tmp_path / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: p\nRequires-Dist: torch==2.13.0; extra == \"test\"\n"
        "Requires-Dist: torch>=1.8; extra == \"gpu\"\n\nbody\n")
    (tmp_path / "setup.cfg").unlink()
    declared = declared_torch_floor(str(tmp_path))
    assert declared is not None and declared.version == (1, 8, 0)


# -- a package that declares no torch floor --------------------------------------------

# TL109: torch.cuda.amp.GradScaler's replacement torch.amp.GradScaler came in torch 2.3.
SCALER = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"
# torch.load's weights_only= came in torch 1.13 (knowledge/torch_api.KEYWORD_SINCE).
LOADER = "import torch\n\n\ndef restore(path):\n    return torch.load(path, weights_only=True)\n"


def _package(tmp_path, python=None, torch=None, files=None):
    project = ['[project]', 'name = "p"']
    if python:
        project.append(f'requires-python = "{python}"')
    project.append(f'dependencies = [{", ".join(repr(r) for r in (["numpy"] + ([torch] if torch else [])))}]')
    (tmp_path / "pyproject.toml").write_text("\n".join(project).replace("'", '"') + "\n")
    for name, text in (files or {"pkg/__init__.py": "", "pkg/train.py": SCALER}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("python, least", [(">=3.11", (1, 13, 0)), (">=3.12.1", (2, 2, 0)), ("~=3.10", (1, 10, 0)),
                                           (">=3.7", None), (None, None), ("<3.13", None)])
def test_a_package_without_a_torch_floor_meets_the_first_torch_for_its_python(tmp_path, python, least):
    from torchlint.run.project_metadata import least_torch_release
    found = least_torch_release(str(_package(tmp_path, python)))
    assert (found.version if found else None) == least
    if found:
        assert "no torch requirement" in found.where and python.lstrip("~=>") .split(".")[1] in found.where


def test_a_declared_floor_or_a_folder_of_scripts_has_no_least_release(tmp_path):
    from torchlint.run.project_metadata import least_torch_release
    assert least_torch_release(str(_package(tmp_path, ">=3.11", torch="torch>=2.0"))) is None
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "requirements.txt").write_text("numpy\n")
    (scripts / ".git").mkdir()
    assert least_torch_release(str(scripts)) is None


def test_the_python_table_is_mined_and_fits_the_installed_torch():
    import json
    import sys
    from pathlib import Path

    from torchlint.knowledge.releases import first_release_for_python, oldest_release_on_pypi
    data = json.loads((Path(__file__).resolve().parent.parent / "torchlint" / "knowledge" / "data" /
                       "torch_python_support.json").read_text())
    releases = [tuple(map(int, r.split("."))) for r in data["first_release_for_python"].values()]
    assert releases == sorted(releases) and data["oldest"] == oldest_release_on_pypi()
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    torch = pytest.importorskip("torch")
    installed = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
    # The torch installed here has a wheel for this Python: that Python's first release is no newer.
    assert tuple(map(int, first_release_for_python(python).split("."))) <= installed


def test_cli_and_flake8_judge_a_package_without_a_torch_floor_by_its_python(tmp_path):
    project = _package(tmp_path, ">=3.12")  # torch 2.2 at the oldest: torch.amp.GradScaler (2.3) may be missing
    assert "TL109" not in run_torchlint(["--no-cache", "pkg"], cwd=project).stdout
    assert "TL109" not in run_flake8(["--select", "TL", "pkg"], cwd=project).stdout
    shown = run_torchlint(["--show-settings", "pkg"], cwd=project).stdout
    assert "at least 2.2.0" in shown and "Python 3.12" in shown
    project = _package(tmp_path, ">=3.13")  # torch 2.5 at the oldest: it has the replacement
    assert "TL109" in run_torchlint(["--no-cache", "pkg"], cwd=project).stdout
    assert "TL109" in run_flake8(["--select", "TL", "pkg"], cwd=project).stdout


def test_what_another_module_of_the_package_needs_is_the_packages_floor(tmp_path):
    # Nothing declares a floor; pkg/io.py passes weights_only= (torch 1.13), so the
    # package runs on 1.13: GradScaler's 2.3 replacement is not offered, and TL212's
    # use_reentrant= (torch 1.11) is.
    files = {"pkg/__init__.py": "", "pkg/io.py": LOADER,
             "pkg/train.py": SCALER + "from torch.utils.checkpoint import checkpoint\ny = checkpoint(f, x)\n"}
    project = _package(tmp_path, ">=3.7", files=files)
    out = run_torchlint(["--no-cache", "pkg"], cwd=project).stdout
    assert "TL109" not in out and "TL212" in out
    assert "TL109" not in run_flake8(["--select", "TL", "pkg"], cwd=project).stdout
    # Behind a test of the torch version (or in a try) it is how older torch is served: no evidence.
    (project / "pkg" / "io.py").write_text(LOADER.replace(
        "    return torch.load(path, weights_only=True)\n",
        "    if TORCH_1_13:\n        return torch.load(path, weights_only=True)\n    return torch.load(path)\n"))
    assert "TL109" in run_torchlint(["--no-cache", "pkg"], cwd=project).stdout


def test_a_folder_of_old_scripts_is_still_advised_for_the_torch_it_moves_to(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.py").write_text(SCALER)
    assert "TL109" in run_torchlint(["--no-cache", "train.py"], cwd=tmp_path).stdout


def test_version_tests_outvote_what_the_code_needs(tmp_path):
    # pkg/compat.py tests for torch 1.12, so the package serves 1.11; that pkg/io.py
    # passes weights_only= (1.13) does not raise that floor: TL112-like advice for
    # 1.12 stays away. Here: GradScaler (2.3) is not offered either way, and TL212
    # (use_reentrant=, 1.11) is.
    files = {"pkg/__init__.py": "from . import compat\n", "pkg/io.py": LOADER,
             "pkg/compat.py": "import torch\nif torch.__version__ >= '1.12':\n    FAST = True\nelse:\n    FAST = False\n",
             "pkg/train.py": SCALER + "from torch.utils.checkpoint import checkpoint\ny = checkpoint(f, x)\n"}
    project = _package(tmp_path, ">=3.7", files=files)
    out = run_torchlint(["--no-cache", "pkg"], cwd=project).stdout
    assert "TL109" not in out and "TL212" in out
    # A 1.10 test: TL212's keyword (1.11) is newer than the floor the test shows.
    (project / "pkg" / "compat.py").write_text(files["pkg/compat.py"].replace("1.12", "1.11"))
    out = run_torchlint(["--no-cache", "pkg"], cwd=project).stdout
    assert "TL109" not in out and "TL212" not in out


def test_a_folder_of_scripts_using_a_newer_module_is_not_judged_by_it(tmp_path):
    # A script importing torch.amp (newer than the oldest release mined) is still told
    # about torch.cuda.amp.GradScaler: only a package declaring no floor takes what its
    # code needs as its floor.
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.py").write_text(SCALER + "from torch.func import vmap\n")  # torch.func: 2.0
    assert "TL109" in run_torchlint(["--no-cache", "train.py"], cwd=tmp_path).stdout
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    assert "TL109" not in run_torchlint(["--no-cache", "train.py"], cwd=tmp_path).stdout
