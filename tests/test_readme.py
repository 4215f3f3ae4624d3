"""The README's two commands are what a new user and CI actually run."""

import re
import shutil
import subprocess

import pytest
from conftest import REPO

from torchlint import __version__
from torchlint.core.links import REPOSITORY


def _shell_blocks(text: str):
    return re.findall(r"```sh\n(.*?)```", text, flags=re.S)


def test_readme_has_an_install_and_a_test_command():
    blocks = _shell_blocks((REPO / "README.md").read_text())
    assert any("pip install ." in b and "torchlint " in b for b in blocks), "no install-and-run command"
    assert any("pip install -e \".[test]\"" in b and "pytest" in b for b in blocks), "no test command"


def test_ci_runs_exactly_the_readme_test_command():
    blocks = _shell_blocks((REPO / "README.md").read_text())
    (test_command,) = [b.strip() for b in blocks if b.rstrip().endswith("&& pytest")]
    ci_lines = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    assert test_command in ci_lines, f".ci/run does not run the README's test command {test_command!r}"


def test_test_extras_pin_the_local_cpu_torch():
    # An unpinned torch would pull gigabytes of CUDA packages on a fresh machine.
    setup = (REPO / "setup.cfg").read_text()
    assert re.search(r"^\s+torch==2\.13\.0$", setup, flags=re.M)


RUNNERS = {"pipx": "pipx run --spec git+{url} torchlint", "uvx": "uvx --from git+{url} torchlint"}


@pytest.mark.parametrize("tool", sorted(RUNNERS))
def test_readme_runs_torchlint_with_pipx_and_uvx_from_the_declared_repository(tool):
    readme = (REPO / "README.md").read_text()
    command = RUNNERS[tool].format(url=REPOSITORY)
    assert any(line.startswith(command + " ") for block in _shell_blocks(readme) for line in block.splitlines())
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed: the README's line is checked, not run")
    # The same command on this checkout (the README's git URL points at the published repository).
    local = RUNNERS[tool].format(url="file://" + str(REPO)).split() + ["--version"]
    result = subprocess.run(local, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0 and __version__ in result.stdout, result.stdout + result.stderr
