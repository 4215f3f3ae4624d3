"""The release story is consistent: the version in ``torchlint/__init__.py``,
the top entry of CHANGELOG.md and the tag the docs tell users to pin agree
(docs/releasing.md says how the tag ``vX.Y.Z`` is made from the version)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile

import pytest
from conftest import REPO, copy_of_the_checkout

from torchlint import __version__
from torchlint.core import links


def _changelog_top_version() -> str:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    match = re.search(r"^## (\d+\.\d+\.\d+)\b", text, re.MULTILINE)
    assert match, "CHANGELOG.md has no `## X.Y.Z` entry"
    return match.group(1)


def test_changelog_top_entry_is_the_package_version():
    assert _changelog_top_version() == __version__


def _pinned_tags(text: str):
    """Every tag the text pins torchlint at: pre-commit's ``rev:``, the action's
    ``torchlint/torchlint@vX``, pip's ``git+https://github.com/torchlint/torchlint@vX``."""
    repository = re.escape(links.REPOSITORY.replace("https://github.com/", ""))
    return (re.findall(r"^\s*rev:\s*(v\d+\.\d+\.\d+)\s*$", text, re.MULTILINE)
            + re.findall(rf"uses: {repository}@(v[\w.]+)", text)
            + re.findall(rf"git\+{re.escape(links.REPOSITORY)}@(v[\w.]+)", text))


def test_docs_pin_the_tag_of_the_package_version():
    running = (REPO / "docs" / "running.md").read_text(encoding="utf-8")
    assert re.search(r"^\s*rev:\s*v\d", running, re.MULTILINE), "docs/running.md names no `rev: vX.Y.Z`"
    pins = {}
    for page in ("README.md", "docs/running.md", "docs/configuration.md"):
        pins[page] = _pinned_tags((REPO / page).read_text(encoding="utf-8"))
        assert pins[page], f"{page} pins no torchlint tag"
    assert {tag for tags in pins.values() for tag in tags} == {f"v{__version__}"}, pins


def test_docs_say_how_to_pin_a_commit_until_the_tag_exists():
    running = (REPO / "docs" / "running.md").read_text(encoding="utf-8")
    assert f"pre-commit autoupdate --bleeding-edge --freeze --repo {links.REPOSITORY}" in running
    for page in ("README.md", "docs/configuration.md"):
        assert "commit hash" in (REPO / page).read_text(encoding="utf-8"), page


def test_the_docs_do_not_contradict_each_other_on_pypi():
    """Not published yet: no page tells users to `pip install torchlint` as if it were."""
    for page in ("README.md", "docs/running.md", "docs/configuration.md", "docs/editors.md"):
        text = (REPO / page).read_text(encoding="utf-8")
        for paragraph in re.split(r"\n\s*\n", text):
            if re.search(r"pip install torchlint\b", paragraph) and "published" not in paragraph:
                raise AssertionError(f"{page}: {paragraph.strip()!r} installs torchlint from PyPI, "
                                     "where it is not yet")


def test_the_release_procedure_derives_the_tag_from_the_version():
    releasing = (REPO / "docs" / "releasing.md").read_text(encoding="utf-8")
    assert "torchlint.__version__" in releasing
    assert 'git tag -a "v$version"' in releasing
    assert "releasing.md" in (REPO / "docs" / "running.md").read_text(encoding="utf-8")


# --- the package: built, checked and installed as a release would be -------------------------


@pytest.fixture(scope="module")
def distributions(tmp_path_factory):
    """``python -m build``'s sdist and wheel (the wheel built from the sdist, as build does)."""
    pytest.importorskip("build", reason="`build` is not installed (it is in the test extras: pip install -e '.[test]')")
    pytest.importorskip("twine", reason="`twine` is not installed (it is in the test extras: pip install -e '.[test]')")
    tmp = tmp_path_factory.mktemp("release")
    source = copy_of_the_checkout(tmp / "source")
    dist = tmp / "dist"
    built = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)],
                           capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    return sdist, wheel


def test_build_gives_an_sdist_and_a_wheel_of_the_version_that_twine_accepts(distributions):
    sdist, wheel = distributions
    assert sdist.name == f"torchlint-{__version__}.tar.gz"
    assert wheel.name == f"torchlint-{__version__}-py3-none-any.whl"
    checked = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel)],
                             capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2


def test_the_sdist_carries_the_docs_license_and_ci_files(distributions):
    sdist, _ = distributions
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for expected in ("LICENSE", "README.md", "CHANGELOG.md", "action.yml", ".pre-commit-hooks.yaml",
                     "docs/releasing.md", "docs/rules/TL101.md", "tests/conftest.py", "tests/data/README.md",
                     "torchlint/knowledge/data/torch_api_snapshot.json"):
        assert expected in names, f"the sdist lacks {expected}"


def test_the_wheel_declares_the_project_urls_of_setup_cfg(distributions):
    _, wheel = distributions
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(f"torchlint-{__version__}.dist-info/METADATA").decode("utf-8")
    urls = dict(line[len("Project-URL: "):].split(", ", 1) for line in metadata.splitlines()
                if line.startswith("Project-URL: "))
    assert set(urls) == {"Homepage", "Documentation", "Rules", "Source", "Changelog", "Issues"}
    assert all(url.startswith(links.REPOSITORY) for url in urls.values())
    assert urls["Rules"] == links.DEFAULT_DOCS_BASE_URL
    assert "License-File: LICENSE" in metadata


def test_the_wheel_installs_and_runs_in_a_bare_virtualenv(distributions, tmp_path):
    """A virtualenv without the system's site-packages, the wheel installed with pip. Its
    dependencies come from the package index pip is configured with: a fully offline install
    (--no-index) would need wheels of libcst, pygls and lsprotocol on this machine, which it
    does not have."""
    _, wheel = distributions
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    config = (venv / "pyvenv.cfg").read_text()
    assert re.search(r"^include-system-site-packages = false$", config, re.M)
    python, torchlint_command = venv / "bin" / "python", venv / "bin" / "torchlint"
    # Outside the checkout, with nothing of it on the path: the installed package alone.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "TORCHLINT_DOCS_BASE_URL")}
    installed = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", str(wheel)],
                               env=env, capture_output=True, text=True, timeout=900)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    project = tmp_path / "project"
    project.mkdir()
    (project / "model.py").write_text("import torch.nn.functional as F\ny = F.sigmoid(x)\n")

    def run(*command):
        return subprocess.run([str(c) for c in command], cwd=project, env=env, capture_output=True, text=True,
                              timeout=300)

    located = run(python, "-c", "import torchlint; print(torchlint.__file__)")
    assert str(venv) in located.stdout, located.stdout + located.stderr
    assert run(torchlint_command, "--version").stdout.split() == ["torchlint", __version__]
    checked = run(torchlint_command, "--output-format", "json", "model.py")
    assert checked.returncode == 1, checked.stderr
    (finding,) = json.loads(checked.stdout)
    assert finding["code"] == "TL104"
    assert finding["url"] == f"{links.DEFAULT_DOCS_BASE_URL}/TL104.md"  # from the installed metadata
    flake8 = run(python, "-m", "flake8", "--isolated", "--select", "TL", "model.py")
    assert "TL104" in flake8.stdout, flake8.stdout + flake8.stderr
    assert run(torchlint_command, "rule", "TL104").stdout.startswith("# ")
