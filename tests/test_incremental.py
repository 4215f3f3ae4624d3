"""The language server's incremental checking (``engine/incremental.py``): after a
change confined to one def or class, only it is re-checked and the other
statements' findings are kept. Every expectation is a whole check of the same
text (a fresh ``Workbench``, and the CLI itself): the results must be equal,
whether the change was taken incrementally or not.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Tuple

import pytest
from conftest import every_rule_selector, run_torchlint

from torchlint.frontends import server
from torchlint.frontends.cli import build_parser
from torchlint.frontends.server import Workbench

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from server_latency import edit, make_module  # noqa: E402

MODEL = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F

_TORCH_2 = torch.__version__ >= "2"
scale = 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.gate = F.sigmoid

    def forward(self, x):
        h = self.fc(x)
        h = F.tanh(h) * scale
        return F.sigmoid(h)


def train(model, batch, target, optimizer):
    optimizer.zero_grad()
    out = model(batch)
    loss = F.mse_loss(out, target)
    loss.backward()
    total = 0
    for step in range(10):
        total += loss
    return total


def helper(x):
    flag = 1
    other = _TORCH_2
    if flag:
        y = torch.nn.functional.upsample(x, scale_factor=2)
    else:
        y = x
    return F.tanh(y)


def use_net(batch):
    net = Net()
    value = net(batch)
    return F.sigmoid(value).data


@torch.no_grad()
def evaluate(model, loader):
    for batch in loader:
        out = model(batch)
        torch.nn.functional.upsample(out, scale_factor=3)
    return out
'''


def findings(outcome) -> List[Tuple]:
    assert outcome.parse_error is None and outcome.skipped is None and outcome.config_error is None, outcome
    return [(d.line, d.column, d.end_line, d.end_column, d.code, d.message, d.fix is not None and d.fix.safe,
             d.fix is not None) for d in outcome.diagnostics]


@pytest.fixture(params=["default", "every rule"])
def project(tmp_path, request):
    if request.param == "default":
        (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n")
    else:
        select = ", ".join(f'"{code}"' for code in every_rule_selector().split(","))
        (tmp_path / "pyproject.toml").write_text(f"[tool.torchlint]\nselect = [{select}]\n")
    return tmp_path


@pytest.fixture
def taken(monkeypatch):
    """How many checks ``recheck`` answered (the others were whole checks)."""
    answered = []
    original = server.recheck

    def counting(*args, **kwargs):
        result = original(*args, **kwargs)
        answered.append(result is not None)
        return result

    monkeypatch.setattr(server, "recheck", counting)
    return answered


def workbench() -> Workbench:
    return Workbench(build_parser().parse_args([]))


def assert_same_as_whole_checks(path: Path, texts: List[str]) -> Workbench:
    """Check ``texts`` one after the other as an editor's changes, each against a fresh whole check."""
    editing = workbench()
    for number, text in enumerate(texts):
        got = editing.check(str(path), text)
        expected = workbench().check(str(path), text)
        if expected.parse_error is not None:
            error, wanted = got.parse_error, expected.parse_error
            assert error is not None and (error.message, error.line, error.column) == (
                wanted.message, wanted.line, wanted.column), number
            continue
        assert findings(got) == findings(expected), f"text {number}:\n{text}"
    return editing


def replace_line(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


# --- changes taken incrementally ----------------------------------------------------------------


def test_a_number_changed_in_a_function_rechecks_only_it(project, taken):
    texts = [MODEL] + [replace_line(MODEL, "range(10)", f"range({n})") for n in (11, 12, 1234)]
    assert_same_as_whole_checks(project / "m.py", texts)
    assert taken == [True, True, True]


def test_added_and_removed_lines_move_the_findings_after_them(project, taken):
    added = replace_line(MODEL, "    total = 0\n", "    total = 0\n    total = 0\n\n    total = 0\n")
    fewer = replace_line(MODEL, "    total = 0\n", "    total = 0\n    total = 0\n")
    texts = [MODEL, added, fewer, added.replace("range(10)", "range(2)"), fewer.replace("range(10)", "range(3)")]
    assert_same_as_whole_checks(project / "m.py", texts)
    assert taken == [True] * 4
    # Removing a line that holds the only call of a method changes the
    # statement's shape (the attribute is no longer read): checked whole.
    taken.clear()
    assert_same_as_whole_checks(project / "m.py", [MODEL, replace_line(MODEL, "    optimizer.zero_grad()\n", "")])
    assert taken == [False]
    # Blank and comment lines after a def belong to it.
    texts = [MODEL, replace_line(MODEL, "    return total\n", "    return total\n# trailing\n\n\n")]
    assert_same_as_whole_checks(project / "m.py", texts)


def test_the_last_statement_and_its_decorator(project, taken):
    texts = [MODEL, replace_line(MODEL, "scale_factor=3", "scale_factor=4"),
             replace_line(MODEL, "@torch.no_grad()", "@torch.no_grad(1)"),
             MODEL + "        # appended\n"]
    assert_same_as_whole_checks(project / "m.py", texts)
    assert taken[0] is True


def test_findings_inside_the_changed_statement_come_and_go(project, taken):
    with_finding = replace_line(MODEL, "        total += loss\n", "        total += loss\n        F.tanh(loss)\n")
    texts = [MODEL, with_finding, MODEL, with_finding.replace("F.tanh(loss)", "F.tanh(total)")]
    assert_same_as_whole_checks(project / "m.py", texts)


def test_edits_moving_from_one_function_to_another(project, taken):
    """What narrowing prepared for the other statements is re-used only while
    the same statement keeps changing: each step still equals a whole check."""
    in_train = replace_line(MODEL, "range(10)", "range(11)")
    in_helper = replace_line(in_train, "    flag = 1\n", "    flag = 2\n")
    in_evaluate = replace_line(in_helper, "scale_factor=3", "scale_factor=5")
    in_decorator = replace_line(in_evaluate, "@torch.no_grad()", "@torch.no_grad(2)")
    texts = [MODEL, in_train, in_helper, in_evaluate, in_decorator, in_evaluate.replace("range(11)", "range(12)"),
             in_evaluate.replace("range(11)", "range(13)")]
    assert_same_as_whole_checks(project / "m.py", texts)
    assert taken[:3] == [True, True, True]


# --- changes that must re-check other statements ----------------------------------------------


def test_an_import_change_rechecks_everything(project, taken):
    texts = [MODEL, replace_line(MODEL, "import torch.nn.functional as F\n", "import torch.nn.functional as G\n"),
             MODEL, replace_line(MODEL, "import torch.nn as nn\n", "import torch.nn as nn\nfrom mylib import F\n")]
    assert_same_as_whole_checks(project / "m.py", texts)
    assert not any(taken)


def test_a_top_level_assignment_change_rechecks_everything(project, taken):
    texts = [MODEL, replace_line(MODEL, "scale = 2\n", "scale = 3\n"),
             replace_line(MODEL, '_TORCH_2 = torch.__version__ >= "2"\n', "_TORCH_2 = True\n"),
             replace_line(MODEL, "scale = 2\n", "F = 3\n")]
    assert_same_as_whole_checks(project / "m.py", texts)
    assert not any(taken)


def test_a_class_used_elsewhere(project, taken):
    """The class's body, header and name: other statements' findings follow from a whole check."""
    texts = [MODEL,
             replace_line(MODEL, "nn.Linear(4, 4)", "nn.Linear(4, 8)"),
             replace_line(MODEL, "        return F.sigmoid(h)\n", "        return h\n"),
             replace_line(MODEL, "class Net(nn.Module):", "class Net(object):"),
             replace_line(MODEL, "class Net(nn.Module):", "class Network(nn.Module):"),
             replace_line(MODEL, "        self.fc = nn.Linear(4, 4)\n", "        self.fc = nn.Linear(4, 4)\n        self.data = 1\n"),
             MODEL]
    assert_same_as_whole_checks(project / "m.py", texts)


def test_a_number_in_a_function_used_elsewhere(project, taken):
    """Inference follows ``pair(a, b)`` into ``pair`` (the project model): which
    element it returns decides ``use``'s finding, so a change of a number in a
    def named elsewhere is checked whole."""
    text = (
        "import torch.nn as nn\n\ncrit = nn.MSELoss()\n\n\n"
        "def pair(a, b):\n    out = (crit(a, b), 1.5)\n    return out[0]\n\n\n"
        "def use(a, b):\n    return pair(a, b).data[0]\n"
    )
    second = text.replace("out[0]", "out[1]")
    editing = assert_same_as_whole_checks(project / "m.py", [text, second, text, second])
    assert [d.code for d in editing.check(str(project / "m.py"), text).diagnostics] == ["TL101"]
    assert not any(taken)


def test_a_function_that_binds_names_elsewhere_is_never_taken(project, taken):
    with_global = replace_line(MODEL, "    flag = 1\n", "    global F\n    flag = 1\n")
    texts = [MODEL, with_global, with_global.replace("flag = 1", "flag = 2"), MODEL]
    assert_same_as_whole_checks(project / "m.py", texts)
    assert not any(taken)


def test_new_names_attributes_and_strings_are_not_taken(project, taken):
    """A new name could shadow or bind what another statement reads: taken whole."""
    texts = [MODEL, replace_line(MODEL, "    flag = 1\n", "    flag = 1\n    F = flag\n"),
             MODEL, replace_line(MODEL, "    flag = 1\n", "    flag = 1\n    torch.my_upsample = flag\n"),
             MODEL, replace_line(MODEL, "    flag = 1\n", "    flag = 'F'\n"),
             MODEL, replace_line(MODEL, "    flag = 1\n", "    import torch.nn.functional as F2\n    flag = 1\n")]
    assert_same_as_whole_checks(project / "m.py", texts)
    assert taken == [False] * 4  # the repeated MODEL comes from the results kept per text


def test_version_flags_moved_between_names(project, taken):
    """Swapping which local is a torch version flag keeps the statement's shape
    but changes which ``if`` elsewhere is a gate: results still equal whole checks."""
    gated = MODEL + (
        "\n\ndef probe():\n"
        "    a = 1\n"
        "    b = hasattr(torch, 'compile')\n"
        "    return a, b\n"
        "\n\ndef legacy(x):\n"
        "    if b:\n"
        "        return torch.nn.functional.upsample(x, scale_factor=2)\n"
        "    if a:\n"
        "        return torch.nn.functional.upsample(x, scale_factor=3)\n"
    )
    swapped = gated.replace("    a = 1\n    b = hasattr(torch, 'compile')\n", "    b = 1\n    a = hasattr(torch, 'compile')\n")
    assert_same_as_whole_checks(project / "m.py", [gated, swapped, gated])


def test_broken_text_in_between(project, taken):
    broken = replace_line(MODEL, "    total = 0\n", "    total = (0\n")
    dedented = replace_line(MODEL, "    total = 0\n", "total = 0\n")
    texts = [MODEL, broken, MODEL, dedented, MODEL, replace_line(MODEL, "range(10)", "range(7)")]
    assert_same_as_whole_checks(project / "m.py", texts)


@pytest.mark.parametrize("kind", ["digit", "delete", "duplicate", "swap"])
def test_every_line_of_every_def_mutated(project, kind, taken):
    """Each line of the defs and classes of the model, and of the benchmark's
    module, changed one way: every result equals the whole check's."""
    for name, base in (("m.py", MODEL), ("bench.py", make_module(50, dense=True))):
        lines = base.splitlines(True)
        texts = [base]
        for number, line in enumerate(lines):
            if not line.startswith((" ", "\t")) or number + 1 >= len(lines):
                continue
            changed = list(lines)
            if kind == "digit":
                changed[number] = line.replace("1", "7").replace("0", "5") if any(c in line for c in "10") else line
            elif kind == "delete":
                del changed[number]
            elif kind == "duplicate":
                changed.insert(number, line)
            else:
                changed[number], changed[number + 1] = lines[number + 1], line
            texts += ["".join(changed), base]
        assert_same_as_whole_checks(project / name, texts)
    if kind in ("digit", "swap"):  # these keep most statements' shapes: not only whole checks
        assert any(taken)


# --- the CLI's answer ----------------------------------------------------------------------------


def test_incremental_results_are_the_clis(project, taken):
    path = project / "bench.py"
    base = make_module(400)
    editing = workbench()
    editing.check(str(path), base)
    for round_ in range(3):
        text = edit(base, round_)
        got = editing.check(str(path), text)
        path.write_text(text)
        result = run_torchlint([str(path), "--no-cache", "--output-format", "json"], cwd=project)
        assert result.returncode in (0, 1), result.stderr
        cli = [(f["location"]["row"], f["location"]["column"] - 1, f["end_location"]["row"],
                f["end_location"]["column"] - 1, f["code"], f["message"]) for f in json.loads(result.stdout)]
        assert [item[:6] for item in findings(got)] == cli
    assert taken == [True, True, True]


# --- random editing sessions ---------------------------------------------------------------------


def random_session(base: str, seed: int, steps: int) -> List[str]:
    """``steps`` texts an editor might send one after the other, each an edit of
    the one before (or, now and then, back to ``base``): numbers changed, lines
    deleted, duplicated, swapped, added (blank, comment, code) or copied from
    elsewhere (over a line or after it), syntax broken
    and repaired, edits in methods and at the end of the file, a function
    added at the end. Line endings follow ``base``'s (CRLF stays CRLF)."""
    import random

    chooser = random.Random(seed)
    newline = "\r\n" if "\r\n" in base else "\n"
    texts, current = [], base
    broken_from = None
    for _ in range(steps):
        if broken_from is not None:  # repair what the last step broke
            current, broken_from = broken_from, None
            texts.append(current)
            continue
        lines = current.splitlines(True)
        inside = [n for n, line in enumerate(lines) if line.startswith((" ", "\t")) and line.strip()]
        kind = chooser.choice(["digit", "digit", "digit", "delete", "duplicate", "swap", "blank", "comment",
                               "statement", "break", "last", "append", "base", "copy", "copy"])
        number = chooser.choice(inside) if inside else len(lines) - 1
        line = lines[number]
        indent = line[:len(line) - len(line.lstrip())]
        if kind == "digit":
            digits = [i for i, c in enumerate(line) if c.isdigit()]
            if digits:
                at = chooser.choice(digits)
                line = line[:at] + str(chooser.randrange(10)) + line[at + 1:]
            lines[number] = line
        elif kind == "delete" and len(inside) > 10:
            del lines[number]
        elif kind == "duplicate":
            lines.insert(number, line)
        elif kind == "copy":  # a line of another def, pasted over this one or after it
            pasted = indent + lines[chooser.choice(inside)].lstrip() if inside else line
            lines[number:number + chooser.randrange(2)] = [pasted]
        elif kind == "swap" and number + 1 < len(lines):
            lines[number], lines[number + 1] = lines[number + 1], line
        elif kind == "blank":
            lines.insert(number, newline)
        elif kind == "comment":
            lines.insert(number, f"{indent}# note {chooser.randrange(100)}{newline}")
        elif kind == "statement":
            lines.insert(number, f"{indent}value_{chooser.randrange(3)} = F.sigmoid(torch.ones({chooser.randrange(9)})){newline}")
        elif kind == "break":
            broken_from = current
            lines[number] = line.rstrip("\r\n") + " (" + newline
        elif kind == "last":
            last = max(inside) if inside else len(lines) - 1
            lines.insert(last + 1, f"{lines[last][:len(lines[last]) - len(lines[last].lstrip())]}"
                                   f"extra = {chooser.randrange(100)}{newline}")
        elif kind == "append":
            lines.append(f"{newline}{newline}def added_{chooser.randrange(5)}(x):{newline}"
                         f"    y = x * {chooser.randrange(10)}{newline}    return F.tanh(y){newline}")
        else:
            lines = base.splitlines(True)
        current = "".join(lines)
        texts.append(current)
    return texts


@pytest.mark.parametrize("seed", range(4))
def test_random_editing_sessions_equal_whole_checks(project, seed, taken, monkeypatch):
    """Random sessions of edits on the model, the benchmark's module and a
    CRLF copy of the model: after each edit the findings equal a fresh whole
    check's (libcst's pieces are re-used across the session)."""
    from torchlint.engine import narrowing

    spliced, original = [], narrowing.spliced_module

    def counting(*args):
        module = original(*args)
        spliced.append(module)
        return module

    monkeypatch.setattr(narrowing, "spliced_module", counting)
    bases = [("m.py", MODEL), ("bench.py", make_module(120, dense=True)), ("crlf.py", MODEL.replace("\n", "\r\n"))]
    for name, base in bases:
        texts = [base] + random_session(base, seed * 10 + len(name), 40)
        assert_same_as_whole_checks(project / name, texts)
    assert sum(taken) >= 10  # many edits keep the shapes: the incremental path ran
    assert len(spliced) >= 3  # and libcst's module was assembled from pieces


# --- lines added or removed (issue 37: insert, delete, Enter, paste) -----------------------------


def _bench_lines(base: str, marker: str) -> Tuple[List[str], int]:
    lines = base.splitlines(True)
    at = len(lines) // 2
    while marker not in lines[at]:
        at += 1
    return lines, at


def test_a_line_deleted_or_pasted_from_another_def_is_rechecked_alone(project, taken):
    """Deleting ``optimizer.step()`` from one training step, putting it back,
    pasting lines copied from another def, and Enter: each def's forms change,
    but every form is still held by some other def, so the facts about the
    whole file are the same and only the changed def is re-checked."""
    base = make_module(400, dense=True)
    lines, step = _bench_lines(base, "optimizer.step()")
    start = max(n for n in range(step - 10) if "optimizer.zero_grad()" in lines[n])
    other = lines[start:start + 5]  # an earlier training step's first lines
    assert other[0].strip() == "optimizer.zero_grad()" and other[-1].strip() == "optimizer.step()"
    deleted = "".join(lines[:step] + lines[step + 1:])
    restored = "".join(lines[:step] + lines[step + 1:step + 2] + ["    optimizer.step()\n"] + lines[step + 2:])
    pasted = "".join(lines[:step] + other + lines[step:])
    enter = "".join(lines[:step] + other + ["    \n"] + lines[step:])
    texts = [base, deleted, restored, pasted, enter]
    assert_same_as_whole_checks(project / "bench.py", texts)
    assert taken == [True] * (len(texts) - 1)


def test_a_line_with_a_form_the_file_has_nowhere_else_is_checked_whole(project, taken):
    base = make_module(200, dense=True)
    lines, at = _bench_lines(base, "loss.backward()")
    debug = "".join(lines[:at] + ["    debug = loss.item() + 1\n"] + lines[at:])
    texts = [base, debug, debug.replace("debug = loss.item() + 1", "debug = loss.item() + 2"),
             "".join(lines[:at] + ["    F = loss\n"] + lines[at:])]
    assert_same_as_whole_checks(project / "bench.py", texts)
    assert taken == [False, True, False]  # a number changed in the new line: its forms are now the file's


def test_moved_statements_have_the_positions_a_parse_gives(project, taken):
    """After lines are added and removed, the kept tree (statements after the
    change moved in place, not re-parsed) equals Python's parse of the text."""
    import ast

    base = make_module(200, dense=True)
    lines, at = _bench_lines(base, "optimizer.step()")
    texts = [base, "".join(lines[:at] + ["    \n", "    \n"] + lines[at:]), "".join(lines[:at] + lines[at + 1:])]
    editing = assert_same_as_whole_checks(project / "bench.py", texts)
    assert taken == [True, True]
    (kept,) = editing._checked.values()
    assert ast.dump(kept.tree, include_attributes=True) == ast.dump(ast.parse(texts[-1]), include_attributes=True)


def test_a_line_replaced_by_one_from_another_def_keeps_its_findings(project, taken):
    """The same number of lines, a form the def did not hold (but another def
    does) and a finding on it: narrowing must screen the new statement, not
    what the old text had there."""
    base = make_module(200, dense=True)
    lines, at = _bench_lines(base, "    total = 0")
    replaced = "".join(lines[:at] + ["    out = F.sigmoid(out) * self.scale\n"] + lines[at + 1:])
    commented = "".join(lines[:at] + ["    out = F.sigmoid(out) * self.scale  # copied\n"] + lines[at + 1:])
    texts = [base, replaced, commented]
    editing = assert_same_as_whole_checks(project / "bench.py", texts)
    assert taken == [True, True]
    assert at + 1 in [d.line for d in editing.check(str(project / "bench.py"), texts[-1]).diagnostics]


def test_checks_whole_after_new_forms_walk_only_the_changed_def_again(project, taken, monkeypatch):
    """Each line with a new name is checked whole; deciding that needs every
    def's footprint, which is looked up by the def's text from the check before
    rather than walked again (a walk of every def is as slow as a whole check)."""
    import ast

    from torchlint.engine import incremental

    walked = []
    original = incremental._footprint
    monkeypatch.setattr(incremental, "_footprint", lambda statement: walked.append(1) or original(statement))
    base = make_module(400, dense=True)
    lines, at = _bench_lines(base, "loss.backward()")
    texts = [base] + ["".join(lines[:at] + [f"    debug_{n} = loss.item()\n"] + lines[at:]) for n in range(4)]
    assert_same_as_whole_checks(project / "bench.py", texts)
    assert taken == [False] * 4
    definitions = sum(isinstance(s, (ast.FunctionDef, ast.ClassDef)) for s in ast.parse(base).body)
    assert len(walked) <= definitions + 4 * 3, (len(walked), definitions)


def test_a_settled_document_walks_only_the_changed_def_on_its_first_structural_edit(project, taken, monkeypatch):
    """``Workbench.settle`` (run by the server once a check's findings are out)
    works out every def's footprint and node index ahead: the first edit that
    changes a def's forms then walks that def alone, not the whole file (about
    140 ms on 2,000 lines, paid by that edit before), with the same findings."""
    from torchlint.engine import incremental

    base = make_module(400, dense=True)
    path = str(project / "bench.py")
    lines, step = _bench_lines(base, "optimizer.step()")
    deleted = "".join(lines[:step] + lines[step + 1:])
    walked: List[int] = []
    original = incremental._footprint
    monkeypatch.setattr(incremental, "_footprint", lambda statement: walked.append(1) or original(statement))
    for settled in (False, True):
        editing = workbench()
        editing.check(str(path), base)
        if settled:
            editing.settle(path)
        walked.clear()
        got = editing.check(path, deleted)
        assert findings(got) == findings(workbench().check(path, deleted))
        if settled:
            assert len(walked) <= 2, len(walked)  # the changed def: its new text (and its old one)
        else:
            assert len(walked) > 20  # every def, on this edit
    assert taken == [True, True]


@pytest.mark.parametrize("text", ["Block7 = 1", "Block70(x)", "_Block7", "xBlock7", "Block7_", "éBlock7", "Block7é",
                                  "# Block7\n", "'Block7'", "aBlock7 Block7", "Block7Block7", "", "Block", "٣Block7"])
def test_a_name_is_found_as_the_regular_expression_finds_it(text):
    """``_named_elsewhere`` looks for a def's name with ``str.find`` and word checks,
    as ``(?<!\\w)name(?!\\w)`` did (Unicode letters and digits are word characters)."""
    import re

    from torchlint.engine.incremental import _spelled

    assert _spelled("Block7", text) == bool(re.search(r"(?<!\w)Block7(?!\w)", text))
