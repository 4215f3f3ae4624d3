"""The fixes, proved under real torch.

Every flagged example marked ``runnable`` is executed twice under the
installed torch (2.13): the original, which must show the pitfall (a warning,
or the exception the example names), and the real fixer's output, which must
run with warnings turned into errors. Where the original completes, both runs
must compute the same values. TL104 is the exception the research notes
document: ``F.sigmoid`` / ``F.tanh`` no longer warn in torch 2.x, so the test
witnesses that the original is warning-free and equal to the fix, as it does
for every example marked ``silent`` (a documented deprecation torch does not
report at run time, such as ``torch.ger``) and the risky patterns in
``SILENT_PITFALLS``, which never warn. Warnings torch emits only once per
process are made to appear in every run (``torch.set_warn_always``).
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, List, Optional

import pytest

torch = pytest.importorskip("torch")

from torch_code import computed_values, same_value  # noqa: E402

from torchlint.engine.linter import Engine  # noqa: E402
from torchlint.rules import all_rules  # noqa: E402
from torchlint.rules.rule import Example, Rule  # noqa: E402

# Deprecated aliases that torch 2.x no longer warns about (research note: F.sigmoid / F.tanh
# stopped warning with pytorch/pytorch#86905).
WARNING_FREE_IN_TORCH_2 = frozenset({"TL104"})
# Risky patterns that are silent by nature (no warning, no error): their runnable
# examples prove that the fix computes the same values where the pitfall does not
# bite (torch.load with weights_only=True on torch >= 2.6, F.dropout in training
# mode, NaN checks on NaN-free data, a loss total kept as a tensor, log1p / expm1 /
# logsumexp on inputs where the naive forms are still accurate, zero_grad with
# gradients left unread).
SILENT_PITFALLS = frozenset({"TL214", "TL205", "TL208", "TL209", "TL301", "TL303"})

RUNNABLE = [
    pytest.param(rule, example, id=f"{rule.code}-flagged-{index}")
    for rule in all_rules()
    for index, example in enumerate(rule.flagged)
    if example.runnable
]


class Run:
    def __init__(self, namespace: Dict[str, Any], caught: List[warnings.WarningMessage],
                 error: Optional[BaseException]) -> None:
        self.namespace = namespace
        self.warnings = caught
        self.error = error


def _execute(code: str, label: str, warnings_as_errors: bool) -> Run:
    namespace: Dict[str, Any] = {"__name__": f"__torchlint_example_{label}__"}
    compiled = compile(code, f"<{label}>", "exec")
    error: Optional[BaseException] = None
    warn_always = torch.is_warn_always_enabled()
    # Many deprecation warnings are TORCH_WARN_ONCE (once per process): make
    # every example show them, whatever ran before it.
    torch.set_warn_always(True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("error" if warnings_as_errors else "always")
        torch.manual_seed(0)
        try:
            exec(compiled, namespace)
        except Exception as exc:  # the pitfall itself, reported by the caller
            error = exc
        finally:
            torch.set_warn_always(warn_always)
    return Run(namespace, list(caught), error)


def _warning_lines(run: Run) -> str:
    return "\n".join(f"  {w.category.__name__}: {w.message}" for w in run.warnings) or "  (none)"


@pytest.mark.parametrize("rule, example", RUNNABLE)
def test_runnable_example_under_torch(rule: Rule, example: Example) -> None:
    fixed = Engine([rule]).fix(example.code, unsafe=True).source
    assert fixed == example.fixed, "the documented fixed form is not what the fixer produces"

    if not example.python3:  # the pitfall is that Python 3 cannot even compile it
        with pytest.raises(SyntaxError):
            compile(example.code, f"<{rule.code} original>", "exec")
        result = _execute(fixed, f"{rule.code} fixed", warnings_as_errors=True)
        assert result.error is None, f"the fixed code failed: {type(result.error).__name__}: {result.error}"
        assert computed_values(result.namespace), "the example computes no tensor or number"
        return

    original = _execute(example.code, f"{rule.code} original", warnings_as_errors=False)
    if example.raises is not None:
        assert original.error is not None, f"the original was expected to raise {example.raises} but completed"
        assert type(original.error).__name__ == example.raises, (
            f"the original raised {type(original.error).__name__}: {original.error}, not {example.raises}")
    else:
        assert original.error is None, f"the original raised {type(original.error).__name__}: {original.error}"

    result = _execute(fixed, f"{rule.code} fixed", warnings_as_errors=True)
    assert result.error is None, (
        f"the fixed code failed (warnings are errors): {type(result.error).__name__}: {result.error}\n{fixed}")

    if rule.code in WARNING_FREE_IN_TORCH_2 | SILENT_PITFALLS or example.silent:
        assert original.warnings == [], f"torch 2.x is documented as warning-free here, got:\n{_warning_lines(original)}"
    else:
        assert original.warnings or original.error is not None, (
            "the original neither warned nor raised under this torch: the pattern is not deprecated here")

    if example.raises is None:
        before, after = computed_values(original.namespace), computed_values(result.namespace)
        assert before, "the example computes no tensor or number to compare"
        assert sorted(before) == sorted(after), "the fix changed which variables the code defines"
        for name in before:
            same, why = same_value(before[name], after[name])
            assert same, f"`{name}` differs after the fix: {why}"


def test_there_are_runnable_examples() -> None:
    assert RUNNABLE, "no rule has a runnable example"
