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

# Measured on torchvision 0.2.1 and kornia 0.1.4 (all true positives): TL105 x3
# (nn.init.kaiming_normal and friends), TL201 x2 (kornia's `coef.to(LAF.device)` as a statement, a
# real bug). Kornia's two TL106 findings (`size_average=None, reduce=None`) are
# false positives, so they are not required here. TL203 no longer reports the
# torch.load of the MNIST and PhotoTour files: torchvision's own processing
# wrote them on the CPU (files that never touch CUDA), as the judged
# evaluation of recent releases found (bench/labels/modern.tsv).
MIN_FINDINGS = {"TL105": 2, "TL201": 1}


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
    # Few retries: without a network the test should skip quickly, not hang.
    corpora = [bench.prepare(package, cache, pip_options=("--retries", "1", "--timeout", "30"))
               for package in PACKAGES]
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


# -- the same findings however the run is organised (issue 5) ---------------

def _findings(result) -> list:
    assert result.returncode in (0, 1), result.stderr
    return [line for line in result.stdout.splitlines() if ": TL" in line]


def test_same_findings_with_or_without_workers_cache_and_flake8(measured, tmp_path):
    """Real code, the real CLI: -j1 and -j2, a cold and a warm result cache, and
    flake8's plugin all report exactly the same findings, in the same order."""
    import subprocess

    corpora, _ = measured
    roots = [str(c.root) for c in corpora]
    cache = tmp_path / "cache"

    def torchlint(*options):
        return _findings(subprocess.run(
            [sys.executable, "-m", "torchlint", "--isolated", *options, *roots],
            capture_output=True, text=True, timeout=600))

    serial = torchlint("-j", "1", "--no-cache")
    assert len(serial) >= sum(MIN_FINDINGS.values())
    assert torchlint("-j", "2", "--no-cache") == serial
    assert torchlint("-j", "2", "--cache-dir", str(cache)) == serial  # cold: fills the cache
    assert any(cache.rglob("*")), "the cache was not written"
    assert torchlint("-j", "2", "--cache-dir", str(cache)) == serial  # warm
    # flake8's --isolated ignores flake8's configuration, not the project's metadata, which
    # the plugin reads from the folder it runs in: run it where there is none, as
    # torchlint's --isolated reads none (torchlint's own setup.cfg declares no torch floor).
    plugin = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "TL", *roots],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert sorted(_findings(plugin)) == sorted(serial)


def test_screens_never_hide_a_finding_on_real_code(measured):
    """The textual and outline screens decide which files reach libcst; every
    rule run on every file unscreened must find nothing more."""
    from torchlint.core.diagnostic import ParseError
    from torchlint.engine.linter import Engine
    from torchlint.rules import all_rules

    corpora, _ = measured
    rules = all_rules()  # opt-in rules too
    screened, unscreened = Engine(rules), Engine(rules, screens=False)
    compared = 0
    for corpus in corpora:
        for path in sorted(Path(corpus.root).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            try:
                expected = unscreened.check(source).diagnostics
            except ParseError:
                continue
            actual = screened.check(source).diagnostics
            assert [(d.code, d.line, d.column) for d in actual] == [(d.code, d.line, d.column) for d in expected], path
            compared += 1
    assert compared > 80


def test_checking_part_of_a_file_finds_what_the_whole_file_gives(measured):
    """Checking cuts the defs and classes no rule can flag (``narrowing.py``);
    on real code, what it reports must equal the analysis of the whole file:
    the same findings, places, messages, and fixes offered."""
    from torchlint.core.diagnostic import ParseError
    from torchlint.engine.linter import Engine
    from torchlint.rules import all_rules

    corpora, _ = measured
    engine = Engine(all_rules())  # opt-in rules too
    compared = narrowed = 0
    for corpus in corpora:
        for path in sorted(Path(corpus.root).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            try:
                whole = engine.check(source, whole=True)
            except ParseError:
                continue
            part = engine.check(source)
            assert _described(part) == _described(whole), path
            compared += 1
            narrowed += part.narrowed
    assert compared > 80
    assert narrowed >= 3  # measured: 6 files of torchvision 0.2.1 and kornia 0.1.4


def _described(result) -> list:
    return [(d.code, d.line, d.column, d.message, d.fix is not None) for d in result.diagnostics]
