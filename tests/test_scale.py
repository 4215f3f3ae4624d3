"""torchlint on real code at scale, on a bounded sample (``bench/scale.py`` does it all).

Runs the real command over 200 small files of CPython's standard library
(plus its deliberately invalid files and one libcst cannot parse), the rules'
own examples, and torchvision 0.2.1 from PyPI (skipped without a network):
no crash, exit 2 only for files Python refuses too, fixed files compile,
a second ``--fix`` changes no byte, nothing fixable is left, and the AST
outside the rewritten code is unchanged. The full run over the whole
standard library, transformers and a dozen old torch packages is
``python bench/scale.py``.

Also unit tests of the AST comparison itself.
"""

from __future__ import annotations

import sys

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import scale  # noqa: E402

# CPython files that Python refuses (input errors) or that libcst cannot parse (skipped), when present.
STDLIB_INVALID = [
    "test/tokenizedata/bad_coding.py", "test/tokenizedata/bad_coding2.py", "test/tokenizedata/badsyntax_3131.py",
    "test/tokenizedata/badsyntax_pep3120.py", "test/bad_coding.py", "test/badsyntax_3131.py",
    "lib2to3/tests/data/bom.py", "lib2to3/tests/data/false_encoding.py",
]
STDLIB_UNSUPPORTED = ["test/typinganndata/ann_module.py", "test/ann_module.py"]
OLD_PACKAGE = scale.Package("torchvision", "0.2.1", "2018 models and transforms; init.* without underscore")


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    cache = tmp_path_factory.mktemp("scale")
    corpora = [
        scale.stdlib_corpus(cache, sample=200, max_lines=100, include=STDLIB_INVALID + STDLIB_UNSUPPORTED),
        scale.examples_corpus(cache),
    ]
    old = scale.package_corpus(OLD_PACKAGE, cache)  # pip download; an error (offline) leaves it out
    if old.error is None:
        corpora.append(old)
    results = scale.measure(corpora, cache, jobs=2, timeout=900, chunk_lines=8000, log=lambda message: None)
    return corpora, results, old.error


def test_no_failures(measured):
    corpora, results, _ = measured
    for item in corpora:
        assert results[item.package.key]["failures"] == [], scale.report(results, [])


def test_the_stdlib_sample(measured):
    corpora, results, _ = measured
    stdlib = corpora[0]
    result = results[stdlib.package.key]
    assert result["files"] >= 200 and result["lines"] > 5000
    assert set(result["check"]["exit_codes"]) <= {"0", "1", "2"}
    # every file torchlint refused is one Python refuses too, with both reasons listed
    assert result["input_errors"], "the sample includes CPython's deliberately invalid files"
    for path, reasons in result["input_errors"].items():
        assert path in stdlib.not_compiling and reasons["python"] and reasons["torchlint"]
    refused = {p for p in STDLIB_INVALID if p in stdlib.lines}
    assert refused <= set(result["input_errors"]), result["input_errors"]
    # valid files libcst cannot parse are skipped with a warning when a rule's
    # screen sends them to libcst; when none does, there is nothing to skip
    unsupported = {p for p in STDLIB_UNSUPPORTED if p in stdlib.lines and p not in stdlib.not_compiling}
    assert not unsupported & set(result["input_errors"]), result["input_errors"]


def test_fixes_are_applied_and_settle(measured):
    corpora, results, _ = measured
    examples = results[corpora[1].package.key]
    assert sum(examples["applied_fixes"].values()) >= 50
    assert len(examples["fix"]["changed_files"]) >= 40
    assert examples["fix"]["second_fixed_total"] == 0 and examples["fix"]["not_idempotent"] == []
    assert examples["fix"]["recheck_fixable"] == 0
    assert examples["ast_drift"] == {}


def test_an_old_torch_package(measured):
    corpora, results, error = measured
    if error is not None:
        pytest.skip(f"cannot download {OLD_PACKAGE.spec} (no network?): {error}")
    result = results[OLD_PACKAGE.key]
    assert result["files"] > 20
    assert result["check"]["findings"].get("TL105", 0) >= 2
    assert sum(result["applied_fixes"].values()) >= 3
    assert result["fix"]["broken_compile"] == {} and result["ast_drift"] == {}


def test_the_report_has_the_counts(measured):
    _, results, _ = measured
    text = scale.report(results, ["TL101", "TL105"])
    assert "Per rule" in text and "TOTAL" in text and "Failures: 0" in text


# --- the AST comparison ----------------------------------------------------------------------


@pytest.mark.parametrize("before, after", [
    ("y = F.upsample(x)\n", "y = F.interpolate(x)\n"),
    ("t.cuda()\nx = 1\n", "t = t.cuda()\nx = 1\n"),
    ("import a\ny = F.sigmoid(x)\n", "import torch\nimport a\ny = torch.sigmoid(x)\n"),
    ("f = torch.from_numpy(np.flip(x, axis=0))\n", "f = torch.from_numpy(np.flip(x, axis=0).copy())\n"),
    ("P = torch.chain_matmul(A, A, M.T)\n", "P = torch.linalg.multi_dot([A, A, M.T])\n"),
    ("from torch.nn.functional import relu, tanh\n", "from torch.nn.functional import relu\nfrom torch import tanh\n"),
    ("ok = x == float('nan')\n", "ok = torch.isnan(x)\n"),
    ("c = nn.MSELoss(size_average=False)\n", "c = nn.MSELoss(reduction='sum')\n"),
    ("def f():\n    y = F.upsample(x)\n    return y\n", "def f():\n    y = F.interpolate(x)\n    return y\n"),
    # The diff removes the outer ")" of "))": the rewritten node held the inner one.
    ("r = f(g,\n      Variable(torch.ones(b).float()))\n", "r = f(g,\n      torch.ones(b).float())\n"),
    ("y = log(a + Variable(torch.ones([1])))\n", "y = log(a + torch.ones([1]))\n"),
    ("r = f(Variable(torch.from_numpy(b))).data\n", "r = f(torch.from_numpy(b)).data\n"),
])
def test_rewrites_are_not_drift(before, after):
    assert scale.ast_drift(before, after) == []


@pytest.mark.parametrize("before, after, what", [
    ("if x:\n    a = 1\nb = 2\n", "if x:\n    a = 1\n    b = 2\n", "is gone"),  # a statement changed block
    ("s = 'a'  # c\ny = F.upsample(x)\n", "s = 'a'\ny = F.interpolate(x)\n", "text changed where the AST did not"),
    ("\x0cy = F.upsample(x)\n", "y = F.interpolate(x)\n", "text changed where the AST did not"),
    ("x = 1\r\ny = F.upsample(x)\r\n", "x = 1\ny = F.interpolate(x)\r\n", "text changed where the AST did not"),
])
def test_drift_outside_the_rewrite_is_found(before, after, what):
    problems = scale.ast_drift(before, after)
    assert problems and what in problems[0], problems


def test_a_removed_bracket_slides_only_over_equal_text():
    # Removing one ")" of "))" could be either; the slide stops at other text.
    places = scale.equivalent_regions("f(g(x)))", "f(g(x))", (7, 8), (7, 7))
    assert sorted(o for o, _ in places) == [(5, 6), (6, 7), (7, 8)]
    # A ")" dropped from a comment slides over the comment's "))" but never reaches the rewrite.
    problems = scale.ast_drift("y = F.upsample(x)  # ))\n", "y = F.interpolate(x)  # )\n")
    assert problems and "text changed where the AST did not" in problems[0], problems


def test_changed_regions_are_token_runs():
    old, new = scale.changed_regions("y = F.upsample(x)\nz = 1\n", "y = F.interpolate(x)\nz = 1\n")
    assert [("y = F.upsample(x)\n"[a:b]) for a, b in old] == ["upsample"]
    assert [("y = F.interpolate(x)\n"[a:b]) for a, b in new] == ["interpolate"]


def test_ast_drift_aligns_repeated_statements_from_the_head():
    # four ``import torch`` and one removed import between them: the fix's tidy
    # removed only ``import torch.autograd as autograd`` (a fuzz case once read
    # it as the first ``import torch`` gone)
    before = ("import torch\nimport torch.autograd as autograd\nimport torch\nimport torch\n"
              "def f(t):\n    return autograd.Variable(t)\n")
    after = "import torch\nimport torch\nimport torch\ndef f(t):\n    return t\n"
    assert scale.ast_drift(before, after) == []
    assert scale.ast_drift("x = 1  # kept\nimport torch\n", "x = 1\nimport torch\n") != []


def test_ast_drift_aligns_an_import_added_above_and_another_removed_below():
    # A fuzz case: TL208's fix adds ``import math`` at the top and its tidy drops the
    # orphaned ``import numpy as np`` further down: as many statements as before, but
    # shifted between the two, which is not drift.
    before = ("from scipy.special import softmax\nimport torch\nprobs = softmax(s)\nimport numpy as np\n"
              "loss = torch.ones(3).sum()\nif loss.item() is np.nan:\n    raise RuntimeError('diverged')\n")
    after = ("import math\nfrom scipy.special import softmax\nimport torch\nprobs = softmax(s)\n"
             "loss = torch.ones(3).sum()\nif math.isnan(loss.item()):\n    raise RuntimeError('diverged')\n")
    assert scale.ast_drift(before, after) == []
    # The same shape with a comment lost outside the fix is still drift.
    commented = before.replace("probs = softmax(s)\n", "probs = softmax(s)  # kept\n")
    assert scale.ast_drift(commented, after) != []
