"""Differential fix test (issue 34): fixes never change what working code computes.

Programs are the rules' examples mutated without changing what they compute
(``torch_code.differential_program``); ``differential.campaign`` fixes each
with the real engine and runs the original and the safely fixed program under
torch. In CI the campaign is a fixed seed and a bounded count;
``TORCHLINT_DIFFERENTIAL_COUNT`` / ``TORCHLINT_DIFFERENTIAL_SEED`` change
them, and ``bench/differential_fixes.py`` runs the long campaign.
"""

from __future__ import annotations

import os
import random

import libcst as cst
import pytest

torch = pytest.importorskip("torch")

from differential import Runner, behaviour_change, campaign  # noqa: E402
from torch_code import (  # noqa: E402
    MUTATIONS, compiles, differential_program, imported_names, runnable_snippets, same_value)

COUNT = int(os.environ.get("TORCHLINT_DIFFERENTIAL_COUNT", "500"))
SEED = int(os.environ.get("TORCHLINT_DIFFERENTIAL_SEED", "34"))


@pytest.fixture(scope="module")
def runner():
    runner = Runner()
    yield runner
    runner.close()


@pytest.fixture(scope="module")
def originals(runner):
    """Each runnable example's run, where it completes."""
    runs = {code: runner.run(code) for code in runnable_snippets()}
    return {code: run for code, run in runs.items() if run.error is None}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_each_mutation_keeps_what_the_examples_compute(name, runner, originals):
    """The generator is sound: otherwise a behaviour change would be the mutation's, not the fix's."""
    rng = random.Random(f"{SEED}:{name}")
    mutated_count = 0
    for code, original in originals.items():
        mutated = MUTATIONS[name](cst.parse_module(code), rng)
        if mutated is None:
            continue
        assert compiles(mutated.code), mutated.code
        mutated_count += 1
        run = runner.run(mutated.code)
        assert run.error is None, f"{run.error}\n{mutated.code}"
        for variable, value in original.values.items():  # mutations may add variables, never change one
            assert variable in run.values, f"`{variable}` is gone\n{mutated.code}"
            same, why = same_value(value, run.values[variable])
            assert same, f"`{variable}`: {why}\n{mutated.code}"
    assert mutated_count >= 10, f"the {name} mutation applied to {mutated_count} examples only"


def test_the_judge_sees_changed_values_and_output_and_lets_unused_imports_go(runner):
    original = "import torch\nfrom torch import has_cuda\nx = torch.ones(2)\nprint(x.shape)\n"
    run = runner.run(original)
    assert run.error is None and "has_cuda" in run.values
    imported = imported_names(original)
    assert imported == {"torch", "has_cuda"}
    dropped = "import torch\nx = torch.ones(2)\nprint(x.shape)\n"
    assert behaviour_change(run, runner.run(dropped), imported) is None
    assert "`x` differs" in behaviour_change(run, runner.run(original.replace("ones", "zeros")), imported)
    printed = runner.run(original.replace("print(x.shape)", "print(x.sum())"))
    assert behaviour_change(run, printed, imported).startswith("printed")
    assert "raised NameError" in behaviour_change(run, runner.run(original + "y = z\n"), imported)


def test_a_program_that_kills_its_worker_is_an_error_and_the_next_runs(runner, monkeypatch):
    import differential

    monkeypatch.setattr(differential, "WAIT_SECONDS", 10)
    assert "did not finish" in runner.run("import os\nos.kill(os.getpid(), 9)\n").error
    fresh = runner.run("x = 1\n")  # a fresh worker took over
    assert (fresh.error, fresh.values) == (None, {"x": 1})


def test_programs_are_named_by_seed_and_index():
    assert differential_program(SEED, 7).source == differential_program(SEED, 7).source
    sources = {differential_program(SEED, index).source for index in range(30)}
    assert len(sources) >= 25  # mutations vary the programs


def test_fixes_never_change_what_working_code_computes():
    report = campaign(SEED, COUNT)
    assert not report.failures, "\n\n".join(failure.describe() for failure in report.failures)
    assert report.count == COUNT
    # the campaign really compared fixed programs, of many rules
    assert report.compared >= COUNT // 4, report.as_json()
    assert len(report.fixes) >= 12, report.fixes
