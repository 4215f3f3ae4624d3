"""The GitHub Action (``action.yml``) does what its steps say, run here as a runner would.

The steps' shell scripts run with bash as GitHub runs ``shell: bash``
(``bash --noprofile --norc -eo pipefail``), with the inputs and step outputs
substituted into their ``env:``, and ``GITHUB_ENV``, ``GITHUB_PATH`` and
``GITHUB_OUTPUT`` carried from step to step. The install step makes a real
virtualenv and pip-installs this checkout into it (the action's own ref), as
the runner would; the upload step (``github/codeql-action/upload-sarif``) is
not run, but the SARIF file it is given must be a valid SARIF log of the
findings.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest
import yaml

from conftest import REPO, copy_of_the_checkout

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
FLAGGED = "import torch.nn.functional as F\ny = F.sigmoid(x)\n"


class Runner:
    """Runs the action's steps in ``workspace`` as a GitHub runner would, for one set of inputs."""

    def __init__(self, tmp: Path, workspace: Path, inputs: Dict[str, str], action_path: Path = REPO) -> None:
        self.workspace = workspace
        self.inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
        unknown = set(inputs) - set(self.inputs)
        assert not unknown, f"action.yml has no inputs {unknown}"
        self.inputs.update(inputs)
        self.files = {name: tmp / name.lower() for name in ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT")}
        for path in self.files.values():
            path.write_text("")
        self.env = {
            **{k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith(("GITHUB_", "RUNNER_", "TORCHLINT_"))},
            "GITHUB_ACTION_PATH": str(action_path),
            "GITHUB_WORKSPACE": str(workspace),
            "RUNNER_TEMP": str(tmp),
            # python3 is the interpreter running the tests, as actions/setup-python would make it
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        }
        self.outputs: Dict[str, Dict[str, str]] = {}
        self.uploads: List[Dict[str, str]] = []
        self.results: Dict[str, subprocess.CompletedProcess] = {}  # by step name

    def evaluate(self, expression: str) -> str:
        match = re.fullmatch(r"inputs\.([\w-]+)", expression)
        if match:
            return self.inputs[match.group(1)]
        match = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression)
        if match:
            return self.outputs.get(match.group(1), {}).get(match.group(2), "")
        match = re.fullmatch(r"inputs\.([\w-]+) (==|!=) '([^']*)'", expression)
        if match:
            equal = self.inputs[match.group(1)] == match.group(3)
            return "true" if equal == (match.group(2) == "==") else "false"
        raise AssertionError(f"the test runner does not know the expression {expression!r}")

    def substitute(self, text: str) -> str:
        return EXPRESSION.sub(lambda m: self.evaluate(m.group(1)), str(text))

    def run(self, steps: Optional[List[dict]] = None) -> subprocess.CompletedProcess:
        """Every step in turn until one fails; the failed (or last) step's process."""
        result = None
        for step in steps or ACTION["runs"]["steps"]:
            condition = step.get("if")
            if condition is not None and self.substitute(condition) != "true":
                continue
            if "uses" in step:
                self.uploads.append({k: self.substitute(v) for k, v in step.get("with", {}).items()})
                continue
            result = self.results[step["name"]] = self.run_script(step)
            if result.returncode != 0:
                return result
        return result

    def run_script(self, step: dict) -> subprocess.CompletedProcess:
        assert step["shell"] == "bash"
        assert "${{" not in step["run"], "expressions belong in env:, not in the script"
        env = dict(self.env)
        env.update(self._file_entries("GITHUB_ENV"))
        env["PATH"] = os.pathsep.join([*reversed(self.files["GITHUB_PATH"].read_text().split()), env["PATH"]])
        env.update({name: self.substitute(value) for name, value in step.get("env", {}).items()})
        env.update({name: str(path) for name, path in self.files.items()})
        self.files["GITHUB_OUTPUT"].write_text("")
        result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                                cwd=self.workspace, env=env, capture_output=True, text=True, timeout=900)
        if "id" in step:
            self.outputs[step["id"]] = self._file_entries("GITHUB_OUTPUT")
        return result

    def _file_entries(self, name: str) -> Dict[str, str]:
        lines = self.files[name].read_text().splitlines()
        return dict(line.split("=", 1) for line in lines if "=" in line)


def _steps(*names: str) -> List[dict]:
    by_name = {step["name"]: step for step in ACTION["runs"]["steps"]}
    return [by_name[name] for name in names]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The install step, run once: a virtualenv in RUNNER_TEMP with this checkout installed."""
    tmp = tmp_path_factory.mktemp("runner")
    # The runner's checkout of the action at the ref the workflow names: here, a copy of this one.
    runner = Runner(tmp, tmp, {}, action_path=copy_of_the_checkout(tmp / "action"))
    result = runner.run(_steps("Install torchlint"))
    assert result.returncode == 0, result.stdout + result.stderr
    return tmp, runner.files["GITHUB_ENV"].read_text(), runner.files["GITHUB_PATH"].read_text()


def _runner(installed, tmp_path: Path, **inputs) -> Runner:
    temp, github_env, github_path = installed
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "src").mkdir()
    (workspace / "src" / "model.py").write_text(FLAGGED)
    runner = Runner(temp, workspace, inputs)
    runner.files["GITHUB_ENV"].write_text(github_env)
    runner.files["GITHUB_PATH"].write_text(github_path)
    return runner


def test_the_action_declares_its_inputs_and_uploads_with_codeql():
    assert ACTION["runs"]["using"] == "composite"
    assert {"args", "version", "sarif"} <= set(ACTION["inputs"])
    (upload,) = [step for step in ACTION["runs"]["steps"] if "uses" in step]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif }}"


def test_install_step_installs_the_actions_own_checkout(installed):
    temp, github_env, github_path = installed
    (bin_dir,) = github_path.split()
    version = subprocess.run([str(Path(bin_dir) / "torchlint"), "--version"], capture_output=True, text=True)
    from torchlint import __version__

    assert version.returncode == 0 and __version__ in version.stdout
    assert Path(bin_dir).parent == temp / "torchlint-action-venv"  # its own venv, not the project's
    assert f"TORCHLINT_ACTION_BIN={bin_dir}" in github_env.splitlines()


def test_findings_are_written_as_sarif_uploaded_and_fail_the_job(installed, tmp_path):
    runner = _runner(installed, tmp_path, args="src --select 'TL1'")
    result = runner.run(_steps("Run torchlint", "Upload the findings to code scanning", "Fail on findings"))
    assert result.returncode == 1, result.stdout + result.stderr  # the last step fails the job
    assert runner.outputs["run"] == {"exit-code": "1"}
    assert runner.uploads == [{"sarif_file": "torchlint.sarif", "category": "torchlint"}]
    log = json.loads((runner.workspace / "torchlint.sarif").read_text(encoding="utf-8"))
    (run,) = log["runs"]
    (finding,) = run["results"]
    assert finding["ruleId"] == "TL104"
    assert finding["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/model.py"


def test_a_clean_project_passes(installed, tmp_path):
    runner = _runner(installed, tmp_path, args="src --ignore TL104")
    result = runner.run(_steps("Run torchlint", "Upload the findings to code scanning", "Fail on findings"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert runner.outputs["run"] == {"exit-code": "0"}
    assert len(runner.uploads) == 1  # the empty result is uploaded too: it closes earlier alerts


def test_without_sarif_findings_are_annotations_and_nothing_is_uploaded(installed, tmp_path):
    runner = _runner(installed, tmp_path, args="src", sarif="")
    result = runner.run(_steps("Run torchlint", "Upload the findings to code scanning", "Fail on findings"))
    assert result.returncode == 1
    assert runner.uploads == []
    annotations = runner.results["Run torchlint"].stdout
    assert "::error title=torchlint (TL104),file=src/model.py,line=2,col=7" in annotations
    assert not (runner.workspace / "torchlint.sarif").exists()


def test_a_usage_error_fails_the_run_step_before_the_upload(installed, tmp_path):
    runner = _runner(installed, tmp_path, args="src --select NOPE")
    result = runner.run(_steps("Run torchlint", "Upload the findings to code scanning", "Fail on findings"))
    assert result.returncode == 2
    assert "wrote no SARIF file" in result.stderr
    assert runner.uploads == []
