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
from torchlint.engine.linter import MAX_DEPTH, Engine  # noqa: E402
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
        if not compiles(text):
            # The parser accepts it, the compiler does not (``return`` outside a function): reported
            # with the compiler's message, or (where the cheap screen cannot see it) checked as is.
            try:
                ENGINE.check(text)
            except ParseError as refused:
                assert not isinstance(refused, Unsupported)
                with pytest.raises(SyntaxError, match=re.escape(refused.message)):
                    compile(text, "<fuzz>", "exec", dont_inherit=True)
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


# --------------------------------------------------------------------------
# deep nesting: never a crash (libcst's native parser overflows the C stack
# on what it nests deeper than Python's tree shows), only "Unsupported"
# --------------------------------------------------------------------------

# Each builds a statement nesting one construct ``n`` times.
NESTINGS = {
    "and/or chain": lambda n, ops: "z = " + "".join(f"a{i} {ops[i % len(ops)]} " for i in range(n)) + "b\n",
    "comparison chain": lambda n, ops: "z = " + " < ".join(["a"] * (n + 1)) + "\n",
    "binary operators": lambda n, ops: "z = " + " + ".join(["a"] * (n + 1)) + "\n",
    "power": lambda n, ops: "z = " + " ** ".join(["a"] * (n + 1)) + "\n",
    "not": lambda n, ops: "z = " + "not " * n + "a\n",
    "unary minus": lambda n, ops: "z = " + "-" * n + "a\n",
    "attributes": lambda n, ops: "z = a" + ".b" * n + "\n",
    "calls": lambda n, ops: "z = a" + "()" * n + "\n",
    "subscripts": lambda n, ops: "z = a" + "[0]" * n + "\n",
    "conditional expressions": lambda n, ops: "z = " + "a if b else " * n + "c\n",
    "lambdas": lambda n, ops: "z = " + "lambda: " * n + "c\n",
    "dotted import": lambda n, ops: "import " + ".".join(["a"] * (n + 1)) + "\n",
    "dotted from-import": lambda n, ops: "from " + ".".join(["a"] * (n + 1)) + " import b\n",
    "comprehension clauses": lambda n, ops: "z = [x " + " ".join(f"for a{i} in b" for i in range(n)) + "]\n",
    "implicit string concatenation": lambda n, ops: "z = (" + " ".join(["'a'"] * (n + 1)) + ")\n",
    "f-string concatenation": lambda n, ops: "z = (" + " ".join(["f'{a}'"] * (n + 1)) + ")\n",
    "elif chain": lambda n, ops: "if a: pass\n" + "elif a: pass\n" * n,
    "parentheses": lambda n, ops: "z = " + "(" * n + "a" + ")" * n + "\n",
    "nested lists": lambda n, ops: "z = " + "[" * n + "]" * n + "\n",
    "nested calls": lambda n, ops: "z = " + "f(" * n + ")" * n + "\n",
    "indented blocks": lambda n, ops: "".join("    " * i + "if a:\n" for i in range(n)) + "    " * n + "pass\n",
}
DEPTHS = st.sampled_from([1, 2, 50, 150, 199, 250, MAX_DEPTH - 100, MAX_DEPTH + 10, 8000])


@fuzz(40)
@given(st.sampled_from(sorted(NESTINGS)), DEPTHS, st.lists(st.sampled_from(["and", "or"]), min_size=1, max_size=3))
def test_deep_nesting_of_every_construct_is_checked_skipped_or_refused_never_a_crash(kind, depth, ops):
    """In-process on purpose: a C stack overflow would take the test run down."""
    source = "import torch.nn.functional as F\ny = F.upsample(x)\n" + NESTINGS[kind](depth, ops)
    note(f"{kind} x {depth}")
    try:
        checked = ENGINE.check(source)
    except Unsupported:
        return  # skipped with a warning: too deep, or libcst cannot parse it
    except ParseError:
        assert not compiles(source)  # Python refuses it too (too many parentheses, blocks...)
        return
    assert [d.code for d in checked.diagnostics] == ["TL103"]


# --------------------------------------------------------------------------
# hostile paths: FIFOs, devices, links, odd names, through the real command
# --------------------------------------------------------------------------

def _hostile(directory, kind: str, name: bytes) -> bool:
    """Make a path of ``kind`` named ``name`` in ``directory``; whether it must be an error."""
    path = os.path.join(os.fsencode(directory), name)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind in ("/dev/zero", "/dev/null", "/dev/urandom"):
        os.symlink(kind, path)
    elif kind == "dangling link":
        os.symlink(b"nowhere-" + name, path)
    elif kind == "link loop":
        os.symlink(name, path)
    elif kind == "directory":
        os.mkdir(path)
        return False
    else:  # a regular file with a finding
        with open(path, "wb") as handle:
            handle.write(b"import torch.nn.functional as F\ny = F.upsample(x)\n")
        return False
    return True


HOSTILE_KINDS = ["fifo", "/dev/zero", "/dev/null", "/dev/urandom", "dangling link", "link loop", "directory", "file"]
ODD_NAMES = st.sampled_from([b"x", b"-x", b"--fix", b"a b", b"new\nline", b"\xff\xfe", b"caf\xc3\xa9", b"\xe2\x80\xae",
                             b".hidden", b"x" * 200])


@fuzz(12)
@given(st.lists(st.tuples(st.sampled_from(HOSTILE_KINDS), ODD_NAMES, st.sampled_from([b".py", b".ipynb"])),
                min_size=1, max_size=4, unique_by=lambda t: t[1] + t[2]),
       st.sampled_from(["concise", "json", "sarif"]))
def test_hostile_paths_end_in_errors_never_a_hang_or_a_crash(tmp_path_factory, entries, output_format):
    import subprocess

    directory = tmp_path_factory.mktemp("hostile")
    bad = 0
    for kind, name, suffix in entries:
        bad += _hostile(directory, kind, name + suffix)
    for i in range(8):  # enough files for worker processes
        _hostile(directory, "file", b"ok%d.py" % i)
    result = subprocess.run([sys.executable, "-m", "torchlint", "--isolated", "--no-cache", "--output-format",
                             output_format, "."], cwd=directory, capture_output=True, timeout=120,
                            env={**os.environ, "PYTHONIOENCODING": "ascii:strict"})
    stderr = result.stderr.decode("ascii")  # strict: everything escaped
    assert "Traceback" not in stderr, stderr
    assert result.returncode == (2 if bad else 1), stderr
    assert stderr.count("torchlint: error:") >= min(bad, 1)
    if output_format != "concise":
        json.loads(result.stdout)
