"""Opt-in rules (TL302-TL304): off unless named by their full code, in the CLI and in flake8.

ruff's convention: a prefix (``TL``, ``TL3``) selects the rules that are on by
default; an opt-in rule runs only when its full code is selected. flake8's own
``--select TL`` shows every code a plugin yields, so the plugin runs opt-in
rules only when they are named in ``--torchlint-enable`` (also read from the
flake8 config as ``torchlint-enable``) or by full code in ``--select`` /
``--extend-select``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_flake8, run_torchlint

from torchlint.rules import all_rules
from torchlint.run.selection import (
    SelectionError,
    enabled_rules,
    opt_in_codes,
    parse_enable,
    select_rules,
)

RULES = all_rules()
OPT_IN = {"TL117", "TL119", "TL217", "TL302", "TL303", "TL304"}

# One finding of each opt-in rule, plus TL214 (on by default).
SOURCE = """\
import torch
from torch.utils.data import DataLoader
torch.backends.cudnn.enabled = False
loader = DataLoader(dataset, batch_size=32)
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.zero_grad(set_to_none=False)
state = torch.load("model.pt", map_location="cpu")
"""
EXPECTED = {"TL214": 9, "TL302": 4, "TL303": 8, "TL304": 3}  # code -> line

FINDING = re.compile(r"^[^:]+:(\d+):\d+: (TL\d{3}) ")


def reported(stdout: str):
    return sorted((m.group(2), int(m.group(1))) for m in map(FINDING.match, stdout.splitlines()) if m)


def expected(*codes: str):
    return sorted((code, EXPECTED[code]) for code in codes)


def selected(select, ignore=None):
    return {rule.code for rule in select_rules(RULES, select, ignore)}


# --- selection rules ----------------------------------------------------------------


def test_the_opt_in_rules_are_marked():
    assert set(opt_in_codes(RULES)) == OPT_IN


@pytest.mark.parametrize("select", [None, "TL", "TL3", "TL30", "tl"])
def test_a_prefix_does_not_enable_opt_in_rules(select):
    chosen = selected(select)
    assert chosen & OPT_IN == set()
    assert "TL214" in chosen or select in ("TL3", "TL30")


def test_tl3_still_selects_the_default_rules_under_it():
    assert "TL301" in selected("TL3")


@pytest.mark.parametrize("select, wanted", [
    ("TL302", {"TL302"}),
    ("TL,TL303", {"TL303"}),
    ("tl304 , TL302", {"TL302", "TL304"}),
])
def test_the_full_code_enables_an_opt_in_rule(select, wanted):
    assert selected(select) & OPT_IN == wanted


def test_ignore_still_applies_to_an_enabled_opt_in_rule():
    assert "TL302" in selected("TL302", "TL3")  # the longer prefix wins, as in flake8
    assert "TL302" not in selected("TL302", "TL302")


def test_enabled_rules_adds_named_opt_in_rules_to_the_defaults():
    codes = {rule.code for rule in enabled_rules(RULES, ["tl303", "TL3", "E501"])}
    assert codes & OPT_IN == {"TL303"}
    assert {rule.code for rule in RULES if rule.enabled_by_default} <= codes


@pytest.mark.parametrize("text", ["TL3", "TL999", "XX1", "TL30x"])
def test_enable_takes_only_known_full_codes(text):
    with pytest.raises(SelectionError):
        parse_enable(text, RULES)


# --- the CLI ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("opt-in")
    (d / "train.py").write_text(SOURCE)
    return d


@pytest.mark.parametrize("args, codes", [
    ([], ("TL214",)),
    (["--select", "TL"], ("TL214",)),
    (["--select", "TL3"], ()),
    (["--select", "TL302"], ("TL302",)),
    (["--select", "TL,TL303,TL304"], ("TL214", "TL303", "TL304")),
])
def test_cli_selection(project, args, codes):
    result = run_torchlint([*args, "train.py"], cwd=project)
    assert result.stderr == ""
    assert reported(result.stdout) == expected(*codes)


# --- flake8 -------------------------------------------------------------------------


@pytest.mark.parametrize("args, codes", [
    (["--select", "TL"], ("TL214",)),
    ([], ("TL214",)),
    (["--select", "TL", "--torchlint-enable", "TL302,TL304"], ("TL214", "TL302", "TL304")),
    (["--select", "TL302"], ("TL302",)),
    (["--select", "TL2", "--extend-select", "TL303"], ("TL214", "TL303")),
])
def test_flake8_selection(project, args, codes):
    result = run_flake8([*args, "train.py"], cwd=project)
    assert result.stderr == ""
    assert [(c, line) for c, line in reported(result.stdout)] == expected(*codes)


def test_flake8_reads_torchlint_enable_from_its_config(project, tmp_path):
    (tmp_path / "train.py").write_text(SOURCE)
    (tmp_path / "setup.cfg").write_text("[flake8]\nselect = TL\ntorchlint-enable = TL303, TL304\n")
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "train.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert result.stderr == ""
    assert reported(result.stdout) == expected("TL214", "TL303", "TL304")


@pytest.mark.parametrize("value", ["TL999", "TL3"])
def test_flake8_rejects_unknown_or_prefix_codes(project, value):
    result = run_flake8(["--select", "TL", "--torchlint-enable", value, "train.py"], cwd=project)
    assert result.returncode == 2
    assert "torchlint: error: --torchlint-enable" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
