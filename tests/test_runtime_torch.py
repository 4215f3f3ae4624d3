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

import math
import warnings
from typing import Any, Dict, List, Optional, Tuple

import pytest

torch = pytest.importorskip("torch")

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


def _values(namespace: Dict[str, Any]) -> Dict[str, Any]:
    """The tensors and Python numbers a snippet computed, by variable name."""
    return {
        name: value
        for name, value in namespace.items()
        if not name.startswith("__") and _comparable(value)
    }


def _comparable(value: Any) -> bool:
    if isinstance(value, (torch.Tensor, int, float, bool)):
        return True
    return isinstance(value, (list, tuple)) and bool(value) and all(_comparable(v) for v in value)


def _equal(original: Any, fixed: Any) -> Tuple[bool, str]:
    if isinstance(original, (list, tuple)) or isinstance(fixed, (list, tuple)):
        if type(original) is not type(fixed) or len(original) != len(fixed):
            return False, f"{original!r} != {fixed!r}"
        for a, b in zip(original, fixed):
            same, why = _equal(a, b)
            if not same:
                return False, why
        return True, ""
    if isinstance(original, torch.Tensor) and isinstance(fixed, torch.Tensor):
        if original.shape != fixed.shape or original.dtype != fixed.dtype:
            return False, f"shape/dtype {tuple(original.shape)} {original.dtype} != {tuple(fixed.shape)} {fixed.dtype}"
        a, b = original.detach(), fixed.detach()
        if a.is_floating_point() or a.is_complex():
            same = torch.allclose(a, b, equal_nan=True)
        else:
            same = torch.equal(a, b)
        return same, "" if same else f"{a} != {b}"
    if isinstance(original, torch.Tensor) or isinstance(fixed, torch.Tensor):
        # e.g. `loss.data[0]` (a 0-dim tensor on old torch) vs `loss.item()` (a number)
        tensor, number = (original, fixed) if isinstance(original, torch.Tensor) else (fixed, original)
        if tensor.numel() != 1:
            return False, f"{tensor} is not a scalar to compare with {number!r}"
        same = math.isclose(tensor.item(), number, rel_tol=1e-6, abs_tol=1e-6) or tensor.item() == number
        return same, "" if same else f"{tensor.item()!r} != {number!r}"
    if isinstance(original, float) or isinstance(fixed, float):
        same = math.isclose(original, fixed, rel_tol=1e-9, abs_tol=1e-12) or (
            math.isnan(original) and math.isnan(fixed))
        return same, "" if same else f"{original!r} != {fixed!r}"
    same = original == fixed and type(original) is type(fixed)
    return same, "" if same else f"{original!r} != {fixed!r}"


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
        assert _values(result.namespace), "the example computes no tensor or number"
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
        before, after = _values(original.namespace), _values(result.namespace)
        assert before, "the example computes no tensor or number to compare"
        assert sorted(before) == sorted(after), "the fix changed which variables the code defines"
        for name in before:
            same, why = _equal(before[name], after[name])
            assert same, f"`{name}` differs after the fix: {why}"


def test_there_are_runnable_examples() -> None:
    assert RUNNABLE, "no rule has a runnable example"
