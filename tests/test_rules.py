"""Every rule is tested through its own definition.

The flagged examples (with their fixed forms) and the accepted snippets of
each rule in ``torchlint.rules.all_rules()`` are the test cases: adding an
example to a rule adds a test, and the documentation in ``docs/rules/`` is
rendered from the same attributes, so the two cannot drift apart.
"""

from __future__ import annotations

import re
from typing import List

import pytest

from torchlint.core.diagnostic import Diagnostic
from torchlint.engine.linter import Engine
from torchlint.rules import all_rules
from torchlint.rules.rule import Example, FixSafety, Rule

RULES: List[Rule] = all_rules()
RUNTIME_RULE_CODES = ("TL101", "TL102", "TL103", "TL104", "TL105", "TL106", "TL107", "TL108", "TL109", "TL110")


def _flagged_params():
    return [
        pytest.param(rule, example, id=f"{rule.code}-flagged-{index}")
        for rule in RULES
        for index, example in enumerate(rule.flagged)
    ]


def _accepted_params():
    return [
        pytest.param(rule, snippet, id=f"{rule.code}-accepted-{index}")
        for rule in RULES
        for index, snippet in enumerate(rule.accepted)
    ]


def _describe(diagnostics: List[Diagnostic]) -> str:
    return "\n".join(f"  {d.line}:{d.column} {d.code} {d.message} (fix: {d.fix is not None})" for d in diagnostics)


def _positions(diagnostics: List[Diagnostic], code: str):
    return sorted((d.line, d.column, d.message) for d in diagnostics if d.code == code)


# --- flagged examples ----------------------------------------------------------


@pytest.mark.parametrize("rule, example", _flagged_params())
def test_flagged_example_is_reported_by_its_rule(rule: Rule, example: Example) -> None:
    result = Engine([rule]).check(example.code)
    assert result.internal_errors == []
    diagnostics = result.diagnostics
    assert len(diagnostics) == example.count, (
        f"{rule.code} should report {example.count} finding(s) on:\n{example.code}\ngot:\n{_describe(diagnostics)}"
    )
    assert {d.code for d in diagnostics} == {rule.code}


@pytest.mark.parametrize("rule, example", _flagged_params())
def test_flagged_example_is_reported_by_the_full_engine(rule: Rule, example: Example) -> None:
    alone = Engine([rule]).check(example.code)
    full = Engine(all_rules()).check(example.code)
    assert full.internal_errors == []
    assert _positions(full.diagnostics, rule.code) == _positions(alone.diagnostics, rule.code), (
        f"the full engine reports {rule.code} differently on:\n{example.code}\n"
        f"alone:\n{_describe(alone.diagnostics)}\nfull:\n{_describe(full.diagnostics)}"
    )
    assert len(_positions(full.diagnostics, rule.code)) == example.count


@pytest.mark.parametrize("rule, example", _flagged_params())
def test_flagged_example_fix(rule: Rule, example: Example) -> None:
    result = Engine([rule]).fix(example.code, unsafe=True)
    assert result.internal_errors == []
    assert result.converged
    if example.fixed is None:
        assert result.source == example.code, f"{rule.code} offered a fix where the example documents none"
        offered = [d for d in Engine([rule]).check(example.code).diagnostics if d.fix is not None]
        assert offered == [], f"fix offered although the example has none:\n{_describe(offered)}"
    else:
        assert result.discarded == []
        assert result.source == example.fixed
        assert result.diagnostics == [], f"findings left after fixing:\n{_describe(result.diagnostics)}"


@pytest.mark.parametrize("rule, example", _flagged_params())
def test_fix_respects_declared_safety(rule: Rule, example: Example) -> None:
    """SAFE (and SOMETIMES, whose offered fixes are exact) apply without
    --unsafe-fixes; UNSAFE fixes never do; NONE offers no fix at all."""
    offered = [d.fix for d in Engine([rule]).check(example.code).diagnostics if d.fix is not None]
    safe_only = Engine([rule]).fix(example.code).source
    if rule.fix_safety in (FixSafety.SAFE, FixSafety.SOMETIMES):
        assert all(fix.safe for fix in offered), f"{rule.code} is {rule.fix_safety.value} but offers an unsafe fix"
        assert safe_only == (example.code if example.fixed is None else example.fixed)
    elif rule.fix_safety is FixSafety.UNSAFE:
        assert all(not fix.safe for fix in offered), f"{rule.code} is unsafe but offers a fix marked safe"
        assert safe_only == example.code, "an unsafe fix was applied without --unsafe-fixes"
    elif rule.fix_safety is FixSafety.MIXED:
        # An example shows one kind: its safe fixes alone make the fixed form, or its unsafe ones change nothing.
        if offered and all(fix.safe for fix in offered):
            assert safe_only == example.fixed
        else:
            assert safe_only == example.code, "an unsafe fix was applied without --unsafe-fixes"
    else:
        assert offered == []
        assert safe_only == example.code


@pytest.mark.parametrize("rule, example", _flagged_params())
def test_fix_is_idempotent(rule: Rule, example: Example) -> None:
    fixed = Engine([rule]).fix(example.code, unsafe=True).source
    again = Engine([rule]).fix(fixed, unsafe=True)
    assert again.source == fixed
    assert not again.fixed, f"a second fix applied {dict(again.fixed)}"
    fixable = [d for d in Engine([rule]).check(fixed).diagnostics if d.code == rule.code and d.fix is not None]
    assert fixable == [], f"the fixed code still has fixable {rule.code} findings:\n{_describe(fixable)}"


@pytest.mark.parametrize("rule, example", _flagged_params())
def test_fixed_code_compiles(rule: Rule, example: Example) -> None:
    for label, code in (("original", example.code), ("fixed", example.fixed)):
        if code is not None and (label == "fixed" or example.python3):
            compile(code, f"<{rule.code} {label}>", "exec")
    if not example.python3:
        with pytest.raises(SyntaxError):
            compile(example.code, f"<{rule.code} original>", "exec")
    if example.python3 or example.fixed is not None:
        compile(Engine([rule]).fix(example.code, unsafe=True).source, f"<{rule.code} fixer output>", "exec")


# --- accepted snippets ---------------------------------------------------------


@pytest.mark.parametrize("rule, snippet", _accepted_params())
def test_accepted_snippet_is_clean(rule: Rule, snippet: str) -> None:
    result = Engine(all_rules()).check(snippet)
    assert result.internal_errors == []
    assert result.diagnostics == [], (
        f"accepted snippet of {rule.code} is reported:\n{snippet}\n{_describe(result.diagnostics)}"
    )


@pytest.mark.parametrize("rule, snippet", _accepted_params())
def test_accepted_snippet_compiles(rule: Rule, snippet: str) -> None:
    compile(snippet, f"<{rule.code} accepted>", "exec")


# --- the catalog itself ----------------------------------------------------------


def test_catalog_is_not_empty() -> None:
    assert len(RULES) >= 8


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_metadata(rule: Rule) -> None:
    assert re.fullmatch(r"TL\d{3}", rule.code), rule.code
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name), rule.name
    assert rule.summary.strip() and "\n" not in rule.summary
    assert rule.why.strip()
    assert isinstance(rule.fix_safety, FixSafety)
    if rule.fix_safety is not FixSafety.NONE:
        assert rule.fix_description.strip(), f"{rule.code} has a fix but no fix_description"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_has_examples(rule: Rule) -> None:
    assert len(rule.flagged) >= 1, f"{rule.code} has no flagged example"
    assert len(rule.accepted) >= 1, f"{rule.code} has no accepted snippet"
    for example in rule.flagged:
        assert isinstance(example, Example)
        assert example.count >= 1
        assert example.code.strip()
        assert example.fixed != example.code, "a fixed form equal to the original documents no fix"
        if example.raises is not None:
            assert example.runnable, "`raises` is only checked on runnable examples"
        if example.silent:
            assert example.runnable and example.raises is None, "`silent` is only checked on runnable examples"
    if rule.fix_safety is not FixSafety.NONE:
        assert any(e.fixed is not None for e in rule.flagged), f"{rule.code} has a fix but no example shows it"
    else:
        assert all(e.fixed is None for e in rule.flagged), f"{rule.code} offers no fix but an example has one"


def test_codes_and_names_are_unique() -> None:
    codes = [r.code for r in RULES]
    names = [r.name for r in RULES]
    assert len(set(codes)) == len(codes), codes
    assert len(set(names)) == len(names), names
    assert codes == sorted(codes), "the catalog lists rules in code order"


@pytest.mark.parametrize("code", RUNTIME_RULE_CODES)
def test_torch_rules_have_a_runnable_example(code: str) -> None:
    rule = next((r for r in RULES if r.code == code), None)
    assert rule is not None, f"{code} is missing from the catalog"
    assert any(e.runnable for e in rule.flagged), f"{code} has no runnable example to prove its fix under torch"
