"""Property-based tests: torchlint never raises, never breaks code, and does
not care about line endings, a BOM or trailing whitespace.

Sources come from ``hypothesmith`` (syntactically valid Python from CPython's
grammar, and from libcst's node types) and from ``torch_code.torch_programs``
(the rules' own examples shuffled, renamed and wrapped, since hypothesmith
almost never writes a torch call). Every rule runs, opt-in ones included.

In CI the examples are derandomized (a fixed seed) and bounded; set
``TORCHLINT_FUZZ_EXAMPLES=5000`` for a long random run (and
``TORCHLINT_FUZZ_SEED=N`` to repeat one).
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import tokenize
from types import SimpleNamespace
from typing import List, Tuple

import pytest

hypothesis = pytest.importorskip("hypothesis")
hypothesmith = pytest.importorskip("hypothesmith")

from conftest import REPO, every_rule_selector  # noqa: E402
from hypothesis import HealthCheck, assume, given, note, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from torch_code import compiles, is_valid, torch_programs, with_torch_prelude  # noqa: E402

from torchlint.core.source import decode  # noqa: E402
from torchlint.core.diagnostic import ParseError, Unsupported  # noqa: E402
from torchlint.engine.linter import Engine  # noqa: E402
from torchlint.frontends import cli  # noqa: E402
from torchlint.rules import all_rules  # noqa: E402

sys.path.insert(0, str(REPO / "bench"))
import scale  # noqa: E402  (bench/scale.py: the AST comparison outside changed text)

sys.setrecursionlimit(max(sys.getrecursionlimit(), 8000))  # as the CLI does

LONG_RUN = int(os.environ.get("TORCHLINT_FUZZ_EXAMPLES", "0") or 0)
SEED = os.environ.get("TORCHLINT_FUZZ_SEED")


def fuzz(ci_examples: int):
    """Bounded and derandomized in CI; ``TORCHLINT_FUZZ_EXAMPLES`` for a long run."""
    options = settings(
        max_examples=LONG_RUN or ci_examples,
        deadline=None,
        derandomize=not LONG_RUN and SEED is None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
        print_blob=True,
    )

    def decorate(test):
        test = options(test)
        return hypothesis.seed(int(SEED))(test) if SEED is not None else test

    return decorate


ENGINE = Engine(all_rules())  # every rule, opt-in ones included

# hypothesmith's sources, and the same after torch imports (so the rules analyse them)
GRAMMAR = hypothesmith.from_grammar()
ANY_SOURCE = st.one_of(torch_programs(), GRAMMAR.map(with_torch_prelude))


def findings(source: str) -> List[Tuple[str, int, int, str, bool]]:
    return [(d.code, d.line, d.column, d.message, d.fix is not None and d.fix.safe)
            for d in ENGINE.check(source).diagnostics]


def check_or_skip(source: str):
    """``ENGINE.check``; None when the source is valid Python libcst cannot parse (a skip, not a crash)."""
    try:
        return ENGINE.check(source)
    except Unsupported as exc:
        note(f"skipped as unsupported: {exc.message}")
        return None


def assert_fix_is_sound(source: str, unsafe: bool) -> str:
    """Fixing gives valid code, settles, is idempotent, and changes the AST only where the text changed."""
    result = ENGINE.fix(source, unsafe=unsafe)
    assert result.internal_errors == []
    assert result.converged
    assert result.discarded == [], [(d.code, d.line, reason) for d, reason in result.discarded]
    assert compiles(result.source) or not compiles(source), result.source
    again = ENGINE.fix(result.source, unsafe=unsafe)
    assert again.source == result.source, "a second fix changed the code"
    assert sum(again.fixed.values()) == 0
    assert not [d for d in again.diagnostics if d.fix is not None and (d.fix.safe or unsafe)]
    if result.source != source:
        assert scale.ast_drift(source, result.source) == []
    return result.source


# --------------------------------------------------------------------------
# never raises; fixes are valid and idempotent
# --------------------------------------------------------------------------


@fuzz(50)
@given(GRAMMAR)
def test_never_raises_on_hypothesmith_source(source):
    for text in dict.fromkeys([source, with_torch_prelude(source)]):
        if not is_valid(text):
            # Not valid Python after all (hypothesmith follows the grammar only): a clean ParseError.
            with pytest.raises(ParseError) as info:
                ENGINE.check(text)
            assert not isinstance(info.value, Unsupported)
            continue
        checked = check_or_skip(text)
        if checked is None:
            continue
        assert checked.internal_errors == []
        assert_fix_is_sound(text, unsafe=True)


@fuzz(15)
@given(hypothesmith.from_node())
def test_never_raises_on_libcst_generated_source(source):
    text = with_torch_prelude(source)
    checked = check_or_skip(text)
    if checked is not None:
        assert checked.internal_errors == []
        assert_fix_is_sound(text, unsafe=True)


@fuzz(60)
@given(torch_programs())
def test_fixes_on_torch_code_are_valid_idempotent_and_local(source):
    checked = ENGINE.check(source)
    assert checked.internal_errors == []
    safe = assert_fix_is_sound(source, unsafe=False)
    unsafe = assert_fix_is_sound(source, unsafe=True)
    # the unsafe run applies the safe fixes too: nothing safe is left after it
    assert not [d for d in ENGINE.check(unsafe).diagnostics if d.fixable]
    if safe != source:
        assert unsafe != source


def test_the_torch_strategy_really_exercises_the_rules():
    """The generated programs carry findings and fixes of many rules (else the fuzzing above is idle)."""
    seen, fixed = set(), set()

    @settings(max_examples=40, derandomize=True, database=None, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(torch_programs())
    def collect(source):
        seen.update(d.code for d in ENGINE.check(source).diagnostics)
        fixed.update(ENGINE.fix(source, unsafe=True).fixed)

    collect()
    # Hypothesis's derandomized examples still vary a little with the state
    # other tests leave (11 to 13 rules seen in full-suite runs): ask for many
    # rules, not an exact draw.
    assert len(seen) >= 10, seen
    assert len(fixed) >= 8, fixed


# --------------------------------------------------------------------------
# line endings, BOM, trailing whitespace
# --------------------------------------------------------------------------


def _lf(source: str) -> str:
    assume("\r" not in source and "\x0c" not in source)
    return source


@fuzz(40)
@given(ANY_SOURCE, st.data())
def test_results_do_not_depend_on_line_endings(source, data):
    lf = _lf(source)
    assume(is_valid(lf) and check_or_skip(lf) is not None)
    crlf = lf.replace("\n", "\r\n")
    lines = lf.split("\n")
    endings = data.draw(st.lists(st.sampled_from(["\n", "\r\n"]), min_size=len(lines) - 1, max_size=len(lines) - 1))
    mixed = "".join(line + ending for line, ending in zip(lines, endings)) + lines[-1]
    expected = findings(lf)
    for text in (crlf, mixed):
        assert [(c, l, col, m.replace("\r\n", "\n"), s) for c, l, col, m, s in findings(text)] == expected
    fixed = ENGINE.fix(lf, unsafe=True).source
    assert ENGINE.fix(crlf, unsafe=True).source == fixed.replace("\n", "\r\n")
    assert ENGINE.fix(mixed, unsafe=True).source.replace("\r\n", "\n") == fixed


def run_stdin(data: bytes, *args: str) -> SimpleNamespace:
    """The CLI in-process on ``data`` as stdin (decoding, the runner and encoding included)."""
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
    stderr = io.StringIO()
    stdin = SimpleNamespace(buffer=io.BytesIO(data))
    status = cli.main(["--isolated", "--select", SELECT, "--stdin-filename", "fuzz.py", *args],
                      stdout=stdout, stderr=stderr, stdin=stdin)
    stdout.flush()
    return SimpleNamespace(status=status, out=stdout.buffer.getvalue(), err=stderr.getvalue())


SELECT = every_rule_selector()
BOM = b"\xef\xbb\xbf"


@fuzz(30)
@given(ANY_SOURCE)
def test_results_do_not_depend_on_a_bom(source):
    assume(is_valid(source) and check_or_skip(source) is not None)
    data = source.encode("utf-8")
    assert decode(BOM + data).text == decode(data).text == source
    plain, bommed = run_stdin(data, "--output-format", "json"), run_stdin(BOM + data, "--output-format", "json")
    assert (bommed.status, bommed.err) == (plain.status, plain.err)
    assert json.loads(bommed.out) == json.loads(plain.out)
    plain, bommed = run_stdin(data, "--fix", "--unsafe-fixes"), run_stdin(BOM + data, "--fix", "--unsafe-fixes")
    assert bommed.status == plain.status
    assert bommed.out == BOM + plain.out  # the fixed source keeps its BOM, and only one


def _line_ends_outside_strings(source: str) -> List[int]:
    """Lines (0-based) whose end is outside any string and not after a backslash."""
    ends = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.NEWLINE, tokenize.NL) and token.string:
                ends.add(token.start[0] - 1)
    except (tokenize.TokenError, SyntaxError):
        return []
    return sorted(ends)


@fuzz(30)
@given(ANY_SOURCE, st.data())
def test_results_do_not_depend_on_trailing_whitespace(source, data):
    lf = _lf(source)
    assume(is_valid(lf) and check_or_skip(lf) is not None)
    lines = lf.split("\n")
    safe = _line_ends_outside_strings(lf)
    assume(safe)
    chosen = data.draw(st.lists(st.sampled_from(safe), min_size=1, unique=True))
    padding = data.draw(st.sampled_from([" ", "\t", "   ", " \t "]))
    padded = "\n".join(line + padding if index in chosen else line for index, line in enumerate(lines))
    assume(is_valid(padded))
    assert findings(padded) == findings(lf)

    def strip(text: str) -> str:
        return re.sub(r"[ \t]+(?=\n|$)", "", text)

    assert strip(ENGINE.fix(padded, unsafe=True).source) == strip(ENGINE.fix(lf, unsafe=True).source)
