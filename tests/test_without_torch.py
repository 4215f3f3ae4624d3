"""The suite runs without torch: the tests that execute torch skip, the others pass.

torch is hidden from a pytest run in a subprocess by a ``sitecustomize`` that
puts ``None`` in ``sys.modules["torch"]`` (``import torch`` then fails,
``importlib.util.find_spec("torch")`` answers None), for pytest and every
process it starts (the CLI, flake8): torchlint itself never imports torch.
The README says how to install the test dependencies without torch; the list
it gives is the test extras less torch.
"""

from __future__ import annotations

import configparser
import os
import re
import subprocess
import sys

from conftest import REPO

HIDE_TORCH = 'import sys\nsys.modules["torch"] = None\nsys.modules["torchvision"] = None\n'


def _pytest_without_torch(tmp_path, *args):
    (tmp_path / "sitecustomize.py").write_text(HIDE_TORCH)
    path = os.pathsep.join([str(tmp_path), str(REPO), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    hidden = subprocess.run([sys.executable, "-c", "import torch"], env=env, capture_output=True, text=True)
    assert hidden.returncode != 0 and "import of torch halted" in hidden.stderr  # the hiding works
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)


def test_every_test_module_is_collected_or_skipped_without_torch(tmp_path):
    result = _pytest_without_torch(tmp_path, "--collect-only", "tests")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "error" not in result.stdout.splitlines()[-1].lower(), result.stdout[-2000:]
    assert re.search(r"^\d+ tests collected", result.stdout.splitlines()[-1])


def test_tests_that_need_no_torch_pass_and_the_others_skip(tmp_path):
    result = _pytest_without_torch(
        tmp_path, "tests/test_value_facts.py", "tests/test_links.py::test_a_base_that_is_not_a_url_is_reported_and_the_default_kept")
    summary = result.stdout.splitlines()[-1]
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    skipped = int(re.search(r"(\d+) skipped", summary).group(1))
    assert passed >= 20 and skipped >= 4, summary
    skip_reasons = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skip_reasons and all("could not import 'torch'" in line for line in skip_reasons), skip_reasons


def test_the_readme_installs_the_test_extras_less_torch():
    parser = configparser.ConfigParser()
    parser.read(REPO / "setup.cfg", encoding="utf-8")
    extras = [line.strip() for line in parser["options.extras_require"]["test"].strip().splitlines()]
    without_torch = [requirement for requirement in extras if not requirement.startswith("torch")]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (line,) = [line for line in readme.splitlines() if line.startswith("pip install -e . ")]
    assert line.split()[4:] == [f'"{requirement}"' for requirement in without_torch]
