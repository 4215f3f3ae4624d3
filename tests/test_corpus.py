"""torchlint on real old PyTorch code: two small 2018/2019 releases from PyPI.

Downloads the packages with ``pip download`` (skipped without a network),
then runs the real CLI through ``bench/corpus.py``: check mode over every
file, ``--fix --unsafe-fixes`` on a copy, and a second ``--fix`` that must
change nothing. The minimum finding counts are about half of what was
measured, so the test notices a rule that stops firing on real code without
breaking when inference gets a little more (or less) eager.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# Measured on torchvision 0.2.1 and kornia 0.1.4: TL105 x3 (nn.init without
# underscore), TL201 x2 (`coef.to(device)` as a statement), TL106 x2
# (`size_average=None, reduce=None` next to `reduction=`).
MIN_FINDINGS = {"TL105": 2, "TL201": 1, "TL106": 1}


def _load_bench():
    spec = importlib.util.spec_from_file_location("torchlint_bench_corpus", REPO / "bench" / "corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


bench = _load_bench()
PACKAGES = (
    bench.Package("torchvision", "0.2.1", "pure-Python wheel, 25 files"),
    bench.Package("kornia", "0.1.4", "pure-Python wheel, 67 files"),
)


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    cache = tmp_path_factory.mktemp("corpus")
    corpora = [bench.prepare(package, cache) for package in PACKAGES]
    failed = [f"{c.package.spec}: {c.error}" for c in corpora if c.error]
    if failed:
        pytest.skip("cannot download the corpus (no network?): " + "; ".join(failed))
    runner = bench.Runner(sys.executable, jobs=max(2, os.cpu_count() or 1), timeout=300, chunk_lines=4000)
    # No final re-check: it would only repeat what the second --fix proves.
    results = bench.measure(corpora, cache, runner, fix=True, recheck=False, log=lambda message: None)
    return corpora, results


def test_every_file_is_checked_without_crash(measured):
    corpora, results = measured
    for corpus in corpora:
        result = results[corpus.package.key]
        check = result["check"]
        assert result["files"] > 20 and result["lines"] > 4000
        assert check["crashes"] == {}, check["crashes"]  # a Traceback or an odd exit status
        assert check["internal_errors"] == {}
        assert check["other_errors"] == []
        assert check["parse_errors"] == {}, "these releases are valid Python 3"
        assert set(check["exit_codes"]) <= {"0", "1"}, check["exit_codes"]
        assert check["exit_mismatches"] == []


def test_fixed_code_compiles_and_a_second_fix_changes_nothing(measured):
    corpora, results = measured
    changed = 0
    for corpus in corpora:
        fix = results[corpus.package.key]["fix"]
        assert fix["crashes"] == {} and fix["second_crashes"] == {}
        assert fix["internal_errors"] == {} and fix["second_internal_errors"] == {}
        assert fix["other_errors"] == []
        assert set(fix["exit_codes"]) <= {"0", "1"} and set(fix["second_exit_codes"]) <= {"0", "1"}
        assert fix["broken_compile"] == {}, fix["broken_compile"]
        assert fix["new_parse_errors"] == {}
        assert fix["unsettled"] == []
        assert fix["changed_without_findings"] == []
        assert fix["not_idempotent"] == [], fix["not_idempotent"]
        assert fix["second_fixed_total"] == 0
        changed += len(fix["changed_files"])
    assert changed >= 2  # the fixes really ran


def test_the_rules_these_packages_exercise_fire(measured):
    _, results = measured
    found = {}
    for result in results.values():
        for code, count in result["check"]["findings"].items():
            found[code] = found.get(code, 0) + count
    for code, minimum in MIN_FINDINGS.items():
        assert found.get(code, 0) >= minimum, (code, found)
