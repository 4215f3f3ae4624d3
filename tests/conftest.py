"""Shared helpers: run the real CLI and the real flake8 in subprocesses."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import pytest

REPO = Path(__file__).resolve().parent.parent


def copy_of_the_checkout(destination: Path) -> Path:
    """The checkout without version control, environments and build output, as a fresh clone has
    it: for builds and installs that would otherwise leave build/ and *.egg-info in the checkout."""
    ignored = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__",
                                     ".torchlint_cache", ".pytest_cache", ".cache")
    return Path(shutil.copytree(REPO, destination, ignore=ignored))


def every_rule_selector() -> str:
    """``--select`` value that runs every rule: ``TL`` plus each opt-in rule by
    its full code (a prefix does not turn opt-in rules on)."""
    from torchlint.rules import all_rules
    from torchlint.run.selection import opt_in_codes

    return ",".join(["TL", *opt_in_codes(all_rules())])


def opt_in_enable() -> str:
    """flake8's ``--torchlint-enable`` value that turns on every opt-in rule."""
    from torchlint.rules import all_rules
    from torchlint.run.selection import opt_in_codes

    return ",".join(opt_in_codes(all_rules()))


def interruptible_child() -> None:
    """A child's ``preexec_fn``: Ctrl-C as a terminal delivers it. A shell starts
    background jobs with SIGINT ignored, and a test that interrupts its child
    must not inherit that (torchlint rightly leaves an ignored SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_torchlint(args: Sequence[str], cwd=None, input: str = None, timeout: int = 120) -> subprocess.CompletedProcess:
    """``python -m torchlint ARGS`` as a user would run it."""
    return subprocess.run(
        [sys.executable, "-m", "torchlint", *args],
        cwd=cwd, input=input, capture_output=True, text=True, timeout=timeout,
    )


def run_flake8(args: Sequence[str], cwd=None, input: str = None, timeout: int = 120) -> subprocess.CompletedProcess:
    """The real flake8, with torchlint's plugin loaded through its entry point."""
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *args],
        cwd=cwd, input=input, capture_output=True, text=True, timeout=timeout,
    )


@pytest.fixture
def write(tmp_path):
    """write("name.py", source) -> Path, creating parent folders."""

    def _write(name: str, source: str, mode: str = "w", **kwargs) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if "b" in mode:
            path.write_bytes(source)
        else:
            with open(path, mode, newline="", **kwargs) as handle:
                handle.write(source)
        return path

    return _write
