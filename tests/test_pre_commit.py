"""The pre-commit hooks, run by the real pre-commit against this checkout.

``pre-commit try-repo`` installs the hook repository in a fresh virtualenv
(pip-installing torchlint and its dependencies from PyPI) and runs a hook in
the current git repository. It takes the hook repository's HEAD commit plus
changes to tracked files, so new files not yet added to git would be missing:
the tests commit a snapshot of the working tree (tracked and untracked files,
minus what .gitignore excludes) to a scratch repository and point pre-commit
at that.

try-repo builds its environment in a new temporary store on every call
(``PRE_COMMIT_HOME`` does not help it), about half a minute each, so only the
three core scenarios use it: a finding fails the hook, a clean file passes, the
fix hook rewrites the file. The other tests run the same hooks through a
``.pre-commit-config.yaml`` naming the snapshot, exactly what try-repo
generates, with ``PRE_COMMIT_HOME`` set once for the session so that
environment is built once.

The flake8 route is tested the same way: a flake8 hook whose
``additional_dependencies`` install torchlint from git (``git+file://`` here,
``git+https://`` for users); flake8 then reports the TL findings.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import REPO

from torchlint.core.links import REPOSITORY

FINDING = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "y = F.upsample(torch.zeros(1, 1, 2, 2), scale_factor=2)\n"
)
FIXED = FINDING.replace("F.upsample(", "F.interpolate(")
CLEAN = "import torch\n\nx = torch.zeros(3)\nprint(x.sum().item())\n"
UPSAMPLE_MESSAGE = "TL103 `upsample` is deprecated; use `interpolate(...)`"

INSTALL_TIMEOUT = 900  # the first run builds the hook's virtualenv from PyPI


def _git(*args, cwd, env=None):
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True)


def _working_tree_files(root: Path):
    """The checkout's files as git sees them (tracked or new, not ignored)."""
    if (root / ".git").exists():
        listed = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=root).stdout
        return sorted({name for name in listed.split("\0") if name and (root / name).is_file()})
    skip = {".git", "__pycache__", ".venv", "build", "dist", ".pytest_cache"}
    return sorted(
        str(path.relative_to(root)) for path in root.rglob("*")
        if path.is_file() and not skip.intersection(path.relative_to(root).parts)
        and not any(part.endswith(".egg-info") for part in path.parts)
    )


@pytest.fixture(scope="session")
def pre_commit(tmp_path_factory):
    if importlib.util.find_spec("pre_commit") is None:
        pytest.skip("pre-commit is not installed (it is in the test extras: pip install -e '.[test]')")
    base = tmp_path_factory.mktemp("pre-commit")
    gitconfig = base / "gitconfig"
    gitconfig.write_text("[user]\n\tname = torchlint tests\n\temail = tests@torchlint.invalid\n[init]\n\tdefaultBranch = main\n")
    env = dict(
        os.environ,
        PRE_COMMIT_HOME=str(base / "home"),
        GIT_CONFIG_GLOBAL=str(gitconfig),
        GIT_CONFIG_NOSYSTEM="1",
        PRE_COMMIT_COLOR="never",
    )
    env.pop("PYTHONPATH", None)  # the hooks must run the torchlint pre-commit installed, not this checkout

    snapshot = base / "torchlint"
    for name in _working_tree_files(REPO):
        target = snapshot / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target)
    _git("init", "-q", cwd=snapshot, env=env)
    _git("add", "-A", cwd=snapshot, env=env)
    _git("commit", "-q", "-m", "snapshot", cwd=snapshot, env=env)
    rev = _git("rev-parse", "HEAD", cwd=snapshot, env=env).stdout.strip()

    counter = iter(range(10_000))

    def workspace(files):
        """A throw-away git repository holding ``files`` (name -> text or bytes)."""
        root = base / f"work{next(counter)}"
        root.mkdir()
        _git("init", "-q", cwd=root, env=env)
        for name, content in files.items():
            path = root / name
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
        _git("add", "-A", cwd=root, env=env)
        return root

    def run(args, cwd):
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env,
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
        )

    def try_repo(hook, cwd, *files):
        return run(["try-repo", str(snapshot), hook, "--color", "never", "--files", *files], cwd)

    config = base / "hooks.yaml"
    config.write_text(
        f"repos:\n- repo: {snapshot}\n  rev: {rev}\n  hooks:\n  - id: torchlint\n  - id: torchlint-fix\n"
    )

    def run_hook(hook, cwd, *files):
        """The hook as a user's .pre-commit-config.yaml runs it (environment cached for the session)."""
        return run(["run", hook, "--config", str(config), "--color", "never", "--files", *files], cwd)

    # Build the cached hook environment once, here, so a broken install fails loudly in one place.
    warm = run(["install-hooks", "--config", str(config)], workspace({}))
    assert warm.returncode == 0, f"pre-commit could not install torchlint:\n{warm.stdout}\n{warm.stderr}"
    return SimpleNamespace(snapshot=snapshot, rev=rev, workspace=workspace, run=run, try_repo=try_repo, run_hook=run_hook)


def output(result) -> str:
    return result.stdout + result.stderr


def test_manifest_is_valid_and_declares_both_hooks():
    if importlib.util.find_spec("pre_commit") is None:
        pytest.skip("pre-commit is not installed (it is in the test extras: pip install -e '.[test]')")
    manifest = REPO / ".pre-commit-hooks.yaml"
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(manifest)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, output(result)
    import yaml  # a dependency of pre-commit

    hooks = {hook["id"]: hook for hook in yaml.safe_load(manifest.read_text())}
    assert set(hooks) == {"torchlint", "torchlint-fix"}
    assert hooks["torchlint"]["entry"] == "torchlint"
    assert hooks["torchlint-fix"]["entry"] == "torchlint --fix"
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["types_or"] == ["python", "pyi", "jupyter"]
        assert hook["require_serial"] is True  # one process, one summary


def test_check_hook_fails_on_a_finding(pre_commit):
    work = pre_commit.workspace({"bad.py": FINDING})
    result = pre_commit.try_repo("torchlint", work, "bad.py")
    assert result.returncode == 1, output(result)
    text = output(result)
    assert "- hook id: torchlint\n- exit code: 1" in text
    assert f"bad.py:3:7: {UPSAMPLE_MESSAGE}" in text
    assert "Found 1 problem (1 fixable with --fix)." in text
    assert (work / "bad.py").read_text() == FINDING


def test_check_hook_passes_on_a_clean_file(pre_commit):
    work = pre_commit.workspace({"good.py": CLEAN, "stub.pyi": "def f() -> int: ...\n"})
    result = pre_commit.try_repo("torchlint", work, "good.py", "stub.pyi")
    assert result.returncode == 0, output(result)
    assert any(line.startswith("torchlint") and line.endswith("Passed") for line in result.stdout.splitlines())


def test_fix_hook_rewrites_the_file_and_reports_the_modification(pre_commit):
    work = pre_commit.workspace({"bad.py": FINDING, "good.py": CLEAN})
    result = pre_commit.try_repo("torchlint-fix", work, "bad.py", "good.py")
    assert result.returncode == 1, output(result)
    text = output(result)
    assert "- hook id: torchlint-fix\n- files were modified by this hook" in text
    assert "Fixed 1 problem." in text
    assert (work / "bad.py").read_text() == FIXED
    assert (work / "good.py").read_text() == CLEAN
    again = pre_commit.run_hook("torchlint-fix", work, "bad.py", "good.py")
    assert again.returncode == 0, output(again)
    assert (work / "bad.py").read_text() == FIXED


def test_many_files_give_one_summary_not_one_per_batch(pre_commit):
    # pre-commit splits the files of a hook that is not require_serial into
    # one batch per core, each a process printing its own partial summary.
    files = {f"bad{index}.py": FINDING for index in range(12)}
    work = pre_commit.workspace(files)
    for hook, summary in (("torchlint", "Found 12 problems (12 fixable with --fix)."), ("torchlint-fix", "Fixed 12 problems.")):
        result = pre_commit.run_hook(hook, work, *sorted(files))
        assert result.returncode == 1, output(result)
        summaries = [line for line in result.stdout.splitlines() if line.startswith(("Found ", "Fixed ", "All checks"))]
        assert summaries == [summary], output(result)


def test_hooks_take_notebooks_and_skip_other_files(pre_commit):
    nb = {
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": FINDING}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    work = pre_commit.workspace({"nb.ipynb": json.dumps(nb, indent=1) + "\n", "notes.md": "F.upsample(x)\n"})
    result = pre_commit.run_hook("torchlint", work, "nb.ipynb")
    assert result.returncode == 1, output(result)
    assert f"nb.ipynb:cell 1:3:7: {UPSAMPLE_MESSAGE}" in output(result)
    result = pre_commit.run_hook("torchlint-fix", work, "nb.ipynb")
    assert "files were modified by this hook" in output(result)
    assert json.loads((work / "nb.ipynb").read_text())["cells"][0]["source"] == FIXED
    result = pre_commit.run_hook("torchlint", work, "notes.md")
    assert result.returncode == 0, output(result)
    assert "(no files to check)Skipped" in result.stdout


def test_flake8_hook_with_torchlint_as_additional_dependency(pre_commit):
    config = (
        "repos:\n"
        "- repo: local\n"
        "  hooks:\n"
        "  - id: flake8\n"
        "    name: flake8\n"
        "    entry: flake8\n"
        "    language: python\n"
        "    types: [python]\n"
        "    args: [--select, TL]\n"
        "    additional_dependencies:\n"
        "    - flake8\n"
        f"    - torchlint @ git+file://{pre_commit.snapshot}@{pre_commit.rev}\n"
    )
    work = pre_commit.workspace({"bad.py": FINDING, "good.py": CLEAN, "cfg.yaml": config})
    assert pre_commit.run(["validate-config", "cfg.yaml"], work).returncode == 0
    result = pre_commit.run(["run", "--config", "cfg.yaml", "--color", "never", "--files", "bad.py", "good.py"], work)
    assert result.returncode == 1, output(result)
    assert f"bad.py:3:7: {UPSAMPLE_MESSAGE}" in result.stdout
    assert "good.py" not in result.stdout
    result = pre_commit.run(["run", "--config", "cfg.yaml", "--color", "never", "--files", "good.py"], work)
    assert result.returncode == 0, output(result)


def test_a_commit_is_pinned_as_the_docs_say_until_the_tag_exists(pre_commit):
    """docs/running.md: `rev: v0.1.0` names a tag not pushed yet; `pre-commit autoupdate
    --bleeding-edge --freeze --repo URL` replaces it with the newest commit's hash, which runs."""
    command = f"pre-commit autoupdate --bleeding-edge --freeze --repo {REPOSITORY}"
    assert command in (REPO / "docs" / "running.md").read_text()
    config = f"repos:\n- repo: {pre_commit.snapshot}\n  rev: v0.1.0\n  hooks:\n  - id: torchlint\n"
    work = pre_commit.workspace({"bad.py": FINDING, "cfg.yaml": config})
    assert pre_commit.run(["run", "--config", "cfg.yaml", "--files", "bad.py"], work).returncode != 0  # no such tag
    args = command.split()[1:-1] + [str(pre_commit.snapshot), "--config", "cfg.yaml"]
    updated = pre_commit.run(args, work)
    assert updated.returncode == 0, output(updated)
    assert f"rev: {pre_commit.rev}" in (work / "cfg.yaml").read_text()
    result = pre_commit.run(["run", "--config", "cfg.yaml", "--color", "never", "--files", "bad.py"], work)
    assert result.returncode == 1 and UPSAMPLE_MESSAGE in result.stdout, output(result)


def test_documented_configurations_are_valid(tmp_path):
    if importlib.util.find_spec("pre_commit") is None:
        pytest.skip("pre-commit is not installed (it is in the test extras: pip install -e '.[test]')")
    import re

    import yaml

    blocks = re.findall(r"```yaml\n(.*?)```", (REPO / "docs" / "running.md").read_text(), flags=re.S)
    manifest_ids = {hook["id"] for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    torchlint_ids = []
    assert len(blocks) == 2
    for index, block in enumerate(blocks):
        path = tmp_path / f"config{index}.yaml"
        path.write_text(block)
        result = subprocess.run([sys.executable, "-m", "pre_commit", "validate-config", str(path)],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, output(result)
        for repo in yaml.safe_load(block)["repos"]:
            if repo["repo"] == REPOSITORY:
                torchlint_ids += [hook["id"] for hook in repo["hooks"]]
            else:
                (hook,) = repo["hooks"]
                assert hook["id"] == "flake8"
                assert any(dep.startswith("torchlint @ git+") for dep in hook["additional_dependencies"])
    # the commented-out alternative names the other hook
    assert torchlint_ids == ["torchlint-fix"] and "# - id: torchlint\n" in blocks[0]
    assert set(torchlint_ids) <= manifest_ids
