"""Minimal reproducers of the fixes the differential campaign (issue 34,
tests/test_differential_fixes.py) caught changing what working code computes.

Each states the fixed text; where torch is installed, the original and the
fixed program also run and must leave the same values.
"""

from __future__ import annotations

import textwrap

import pytest

from torchlint.engine.linter import Engine
from torchlint.rules import all_rules

ENGINE = Engine(all_rules())


def _fixed(source: str, unsafe: bool = False) -> str:
    result = ENGINE.fix(textwrap.dedent(source).lstrip(), unsafe=unsafe)
    assert result.internal_errors == []
    return result.source


def _same_run(original: str, fixed: str) -> None:
    """Both programs complete and leave the same values (skipped without torch)."""
    pytest.importorskip("torch")
    from differential import Runner
    from torch_code import same_value

    runner = Runner()
    try:
        before, after = runner.run(textwrap.dedent(original).lstrip()), runner.run(fixed)
    finally:
        runner.close()
    assert before.error is None and after.error is None, (before.error, after.error)
    assert before.printed == after.printed
    assert sorted(before.values) == sorted(after.values)
    for name, value in before.values.items():
        assert same_value(value, after.values[name])[0], name


# --- a from-import in a function that declares the name ``global`` --------------------------

GLOBAL_IMPORT = """
    import torch
    def setup():
        global orthogonal
        from torch.nn.init import orthogonal
    setup()
    w = torch.ones(2, 2)
    orthogonal(w)
    """


def test_a_from_import_declared_global_keeps_binding_the_module_name():
    # It binds the module's name, used outside the function: renamed like a module-level import.
    fixed = _fixed(GLOBAL_IMPORT)
    assert "    from torch.nn.init import orthogonal_ as orthogonal\n" in fixed
    assert fixed.endswith("orthogonal(w)\n")
    _same_run(GLOBAL_IMPORT, fixed)


def test_a_from_import_declared_nonlocal_is_flagged_without_a_fix():
    source = """
        import torch
        def outer():
            orthogonal = None
            def setup():
                nonlocal orthogonal
                from torch.nn.init import orthogonal
            setup()
            return orthogonal(torch.ones(2, 2))
        """
    findings = [d for d in ENGINE.check(textwrap.dedent(source).lstrip()).diagnostics if d.code == "TL105"]
    assert [(d.line, d.fix) for d in findings] == [(6, None)]


# --- a from-import in a class body ----------------------------------------------------------

CLASS_IMPORT = """
    import torch
    class Box:
        from torch.nn.init import orthogonal
    w = torch.ones(2, 2)
    Box.orthogonal(w)
    """


def test_a_from_import_in_a_class_body_keeps_binding_the_class_attribute():
    fixed = _fixed(CLASS_IMPORT)
    assert "    from torch.nn.init import orthogonal_ as orthogonal\n" in fixed
    _same_run(CLASS_IMPORT, fixed)


# --- the spelling of torch in a rewrite: an alias imported further down ----------------------

LATER_ALIAS = """
    import torch
    A = torch.ones(2, 2)
    P = torch.chain_matmul(A, A)
    import torch as tc
    B = tc.ones(2)
    """


def test_a_rewrite_does_not_spell_torch_through_an_alias_imported_further_down():
    fixed = _fixed(LATER_ALIAS)
    assert "P = torch.linalg.multi_dot([A, A])\n" in fixed
    _same_run(LATER_ALIAS, fixed)


def test_a_rewrite_inside_a_function_may_use_an_alias_imported_further_down_the_module():
    # the function runs after the module's imports: the shorter alias is bound by then
    fixed = _fixed("""
        import torch
        def product(A):
            return torch.chain_matmul(A, A)
        import torch as tc
        """)
    assert "    return tc.linalg.multi_dot([A, A])\n" in fixed


def test_a_decorator_in_a_class_body_runs_before_a_torch_imported_further_down():
    # the class body runs where it is written: ``import torch`` below is not bound yet
    source = """
        from torch.cuda import amp
        class Double:
            @amp.custom_bwd
            def backward(ctx, grad):
                return grad * 2
        import torch
        """
    result = ENGINE.fix(textwrap.dedent(source).lstrip())
    assert result.source == textwrap.dedent(source).lstrip()
    assert [d.code for d in result.diagnostics if d.fix is None] == ["TL109"]  # still reported, not fixed


def test_a_comprehension_in_a_class_body_may_use_torch_imported_above():
    fixed = _fixed("""
        import torch.cuda
        class Box:
            scalers = [torch.cuda.amp.GradScaler() for _ in range(1)]
        import torch as tc
        """)
    assert "    scalers = [torch.amp.GradScaler('cuda') for _ in range(1)]\n" in fixed
