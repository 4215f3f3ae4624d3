"""The rough edges a new user hit (issue 17), each through the real CLI."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, run_flake8, run_torchlint

UPSAMPLE = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "y = F.upsample(torch.zeros(1, 1, 2, 2), scale_factor=2)\n"
)


def _lines(result: subprocess.CompletedProcess):
    return [line for line in result.stdout.splitlines() if line]


# --- 7. `torchlint check` is a subcommand -----------------------------------------------


def test_check_is_an_explicit_subcommand(tmp_path):
    (tmp_path / "a.py").write_text(UPSAMPLE)
    plain = run_torchlint(["--isolated", "--no-cache", "."], cwd=tmp_path)
    explicit = run_torchlint(["check", "--isolated", "--no-cache", "."], cwd=tmp_path)
    default = run_torchlint(["check", "--isolated", "--no-cache"], cwd=tmp_path)
    assert explicit.returncode == plain.returncode == default.returncode == 1, explicit.stderr
    assert explicit.stdout == plain.stdout == default.stdout
    assert "TL103" in explicit.stdout


def test_a_folder_named_check_is_checked_as_dot_slash_check(tmp_path):
    (tmp_path / "check").mkdir()
    (tmp_path / "check" / "a.py").write_text(UPSAMPLE)
    result = run_torchlint(["--isolated", "--no-cache", "./check"], cwd=tmp_path)
    assert result.returncode == 1 and "TL103" in result.stdout


# --- 9. torch.legacy is a removed module, not a misspelling --------------------------------


def test_torch_legacy_is_reported_as_removed_not_misspelled(tmp_path):
    (tmp_path / "a.py").write_text("import torch\nimport torch.legacy.nn as lnn\nfrom torch.legacy import optim\n")
    result = run_torchlint(["--isolated", "--no-cache", "--select", "TL", "a.py"], cwd=tmp_path)
    found = _lines(result)[:-1]
    assert [line.split()[1] for line in found] == ["TL108", "TL108"], result.stdout
    assert all("torch.legacy" in line and "removed" in line and "torch.nn" in line for line in found)
    flake8 = run_flake8(["--select", "TL", str(tmp_path / "a.py")])
    assert [line.split()[1] for line in flake8.stdout.splitlines()] == ["TL108", "TL108"], flake8.stdout


# --- 1. rule pages cite public sources only ----------------------------------------------

PUBLIC_SOURCES = ("https://pytorch.org/", "https://docs.pytorch.org/", "https://github.com/pytorch/")  # torch's own sites


def test_no_rule_definition_or_page_mentions_the_internal_seed_notes():
    from torchlint.rules import all_rules
    from torchlint.rules.docs import render_rule
    from torchlint.rules.rule import Rule

    assert not hasattr(Rule, "seeds")
    for rule in all_rules():
        assert not hasattr(rule, "seeds"), rule.code
        source = Path(__import__(type(rule).__module__, fromlist=["_"]).__file__).read_text(encoding="utf-8")
        assert "seeds" not in source and "seed notes" not in source.lower(), rule.code
        for reference in rule.references:
            assert reference.startswith(PUBLIC_SOURCES), (rule.code, reference)
        page = (REPO / "docs" / "rules" / f"{rule.code}.md").read_text(encoding="utf-8")
        assert page == render_rule(rule)
        assert "seed notes" not in page.lower() and not re.search(r"\b00[0-4] \(", page), rule.code


def test_torchlint_rule_ends_with_public_references(tmp_path):
    result = run_torchlint(["rule", "TL101"], cwd=tmp_path)
    assert result.returncode == 0
    assert "000 (2.5.3)" not in result.stdout and "Seed notes" not in result.stdout
    assert result.stdout.rstrip().endswith("https://pytorch.org/docs/stable/generated/torch.Tensor.item.html")


# --- 10. the cache lives at the project root ---------------------------------------------


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


@pytest.mark.parametrize("marker", ["pyproject.toml", "git"])
def test_the_cache_is_made_at_the_project_root_and_reused_from_subfolders(tmp_path, marker):
    root = tmp_path / "project"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "a.py").write_text(UPSAMPLE)
    if marker == "git":
        _git("init", "-q", cwd=root)
    else:
        (root / "pyproject.toml").write_text('[tool.torchlint]\nignore = ["TL204"]\n')
    top = run_torchlint(["src"], cwd=root)
    assert top.returncode == 1 and (root / ".torchlint_cache" / "CACHEDIR.TAG").is_file()
    inside = run_torchlint(["."], cwd=root / "src" / "pkg")
    assert inside.returncode == 1 and "TL103" in inside.stdout
    assert not (root / "src" / "pkg" / ".torchlint_cache").exists()
    assert not (root / "src" / ".torchlint_cache").exists()
    entries = json.loads(next((root / ".torchlint_cache").glob("results-*.json")).read_text())["entries"]
    assert list(entries) == [str(root / "src" / "pkg" / "a.py")]


def test_outside_a_project_the_cache_is_in_the_current_directory(tmp_path):
    (tmp_path / "a.py").write_text(UPSAMPLE)
    assert run_torchlint(["--isolated", "a.py"], cwd=tmp_path).returncode == 1
    assert (tmp_path / ".torchlint_cache" / "CACHEDIR.TAG").is_file()


# --- 11. worker processes only when the work pays for them ----------------------------------


def _pools_started(monkeypatch, tmp_path, files, *options):
    """Run the CLI in this process and count the worker pools it starts."""
    import io

    from torchlint.frontends import cli
    from torchlint.run import session

    started = []
    real = session._in_workers

    def spying_workers(files, jobs):
        started.append((files, jobs))
        return real(files, jobs)

    monkeypatch.setattr(session, "_in_workers", spying_workers)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    status = cli.main(["--isolated", "--no-cache", *options, "."], stdout=out, stderr=io.StringIO())
    return started, status, out.getvalue()


def test_a_small_tree_is_checked_without_worker_processes(monkeypatch, tmp_path):
    files = {f"m{index:03d}.py": "import torch\nx = torch.zeros(3)\n" for index in range(120)}
    files["m007.py"] = UPSAMPLE
    started, status, out = _pools_started(monkeypatch, tmp_path, files, "-j", "2")
    assert status == 1 and "m007.py:3:7: TL103" in out
    assert started == []


def test_a_large_tree_gets_worker_processes(monkeypatch, tmp_path):
    from torchlint.run.session import PARALLEL_MIN_BYTES

    padding = "# padding\n" * (PARALLEL_MIN_BYTES // 10 // 8 + 1)
    files = {f"m{index}.py": "import torch\nx = torch.zeros(3)\n" + padding for index in range(8)}
    files["m7.py"] = UPSAMPLE + padding
    started, status, out = _pools_started(monkeypatch, tmp_path, files, "-j", "2")
    assert status == 1 and "m7.py:3:7: TL103" in out
    assert len(started) == 1


# --- 5. fix previews (json, sarif, full) cost about what checking costs --------------------


def _every_flagged_example():
    from torchlint.rules import all_rules

    for rule in all_rules():
        for index, example in enumerate(rule.flagged):
            yield rule, index, example


def test_local_fix_previews_equal_whole_module_previews_on_every_example():
    from torchlint.engine.linter import Engine
    from torchlint.core.source import SourceFile
    from torchlint.engine.textedits import FixPreviewer, apply_edits, preview_fix

    compared = 0
    for rule, index, example in _every_flagged_example():
        checked = Engine([rule]).check(example.code, whole=True)
        if checked.module is None:
            continue  # repaired at the token level (TL115): its fix is not a tree edit
        previewer = FixPreviewer(checked.module, checked.locator)
        for d in checked.diagnostics:
            if d.fix is not None:
                local, whole = previewer.preview(d.fix), preview_fix(checked.module, d.fix)
                assert (local is None) == (whole is None), (rule.code, index)
                if whole is not None:  # the same change; local edits may be finer (one per node)
                    code = SourceFile(checked.module.code)
                    assert apply_edits(code, local) == apply_edits(code, whole), (rule.code, index)
                    assert len(local) >= len(whole)
                compared += 1
        # What the runner previews: the narrowed check's (defs no rule can flag cut to stubs).
        narrowed = Engine([rule]).check(example.code)
        on_narrowed = FixPreviewer(narrowed.module, narrowed.locator) if narrowed.module is not None else None
        assert [on_narrowed.preview(d.fix) if d.fix else None for d in narrowed.diagnostics] == \
            [previewer.preview(d.fix) if d.fix else None for d in checked.diagnostics], (rule.code, index)
    assert compared > 100


def test_previews_of_repeated_statements_that_drop_a_name_are_on_their_own_rows(tmp_path):
    lines = ["import torch", "import torch.nn.functional as F", "x = torch.zeros(1)"]
    lines += ["y = F.sigmoid(x)"] * 4 + ["@torch.no_grad()", "def f(x):", "    return F.sigmoid(x)"]
    (tmp_path / "a.py").write_text("\n".join(lines) + "\n")
    result = run_torchlint(["--isolated", "--no-cache", "--output-format", "json", "a.py"], cwd=tmp_path)
    findings = json.loads(result.stdout)
    assert [f["fix"]["edits"] for f in findings] == [
        [{"content": "torch", "location": {"row": row, "column": column}, "end_location": {"row": row, "column": column + 1}}]
        for row, column in [(4, 5), (5, 5), (6, 5), (7, 5), (10, 12)]]


def test_previews_of_fixes_that_drop_a_name_are_the_whole_module_previews(monkeypatch):
    """A fix that may make a self-assignment is previewed on its statements (the
    tidy step's removal included) unless it orphans an import: the edits are
    exactly those of the whole-module route, on every example. Any other fix
    that drops a name keeps its local edits, which give the same text."""
    from torchlint.core.source import SourceFile
    from torchlint.engine import textedits
    from torchlint.engine.linter import Engine

    on_statements = []
    real = textedits.FixPreviewer._statement_edits

    def counted(self, *args):
        edits = real(self, *args)
        on_statements.append(1)
        return edits

    monkeypatch.setattr(textedits.FixPreviewer, "_statement_edits", counted)
    for rule, index, example in _every_flagged_example():
        checked = Engine([rule]).check(example.code, whole=True)
        if checked.module is None:
            continue
        previewer = textedits.FixPreviewer(checked.module, checked.locator)
        for d in checked.diagnostics:
            if d.fix is not None:
                before = len(on_statements)
                local = previewer.preview(d.fix)
                whole = textedits.preview_fix(checked.module, d.fix)
                if len(on_statements) > before:
                    assert local == whole, (rule.code, index)
                elif whole is not None:
                    code = SourceFile(checked.module.code)
                    assert textedits.apply_edits(code, local) == textedits.apply_edits(code, whole), (rule.code, index)
    assert len(on_statements) >= 3


# A class whose methods carry fixes that drop names: self-assignments the tidy
# step removes (``x = Variable(x)``), around comments, decorators and blank lines.
_METHODS = '''import torch
from torch.autograd import Variable
import torch.nn.functional as F


class Trainer(object):
    """Runs the model."""

    scale = 2

    def __init__(self, model):
        self.model = model

    # moves a batch
    def step(self, x, y):
        x = Variable(x)
        y = Variable(y)
        return F.sigmoid(self.model(x)) - y

    @staticmethod
    def helper(x):
        # the input
        x = Variable(x)
        return F.tanh(x)

    def last(self, x):
        x, = Variable(x),
        x = Variable(x)
        return x
'''


@pytest.mark.parametrize("variant", ["plain", "no final line break", "crlf", "tabs", "narrowed"])
def test_previews_in_the_methods_of_a_class_are_made_on_each_method(monkeypatch, variant):
    """Issue 14 (json on old code): a fix in a method of a large class was
    previewed on the whole class, once per finding, and in the last statement
    of a file without a final line break on the whole module. Now each fix is
    previewed on its method, and the edits are the whole-module route's."""
    from torchlint.engine import fixer, textedits
    from torchlint.engine.linter import Engine
    from torchlint.rules import all_rules

    code = _METHODS
    if variant == "no final line break":
        code = code.rstrip("\n")
    elif variant == "crlf":
        code = code.replace("\n", "\r\n")
    elif variant == "tabs":
        code = code.replace("    ", "\t")
    whole_check = Engine(all_rules()).check(code, whole=True)
    checked = Engine(all_rules()).check(code) if variant == "narrowed" else whole_check
    expected = [textedits.preview_fix(whole_check.module, d.fix) for d in whole_check.diagnostics]
    members, applied = [], []
    real_member = textedits.FixPreviewer._member_unit
    monkeypatch.setattr(textedits.FixPreviewer, "_member_unit",
                        lambda self, *args: members.append(real_member(self, *args)) or members[-1])
    monkeypatch.setattr(fixer, "apply_fixes", lambda *args: applied.append(1))
    previewer = textedits.FixPreviewer(checked.module, checked.locator)
    previews = [previewer.preview(d.fix) for d in checked.diagnostics]
    assert [(d.line, d.code) for d in checked.diagnostics] == [(d.line, d.code) for d in whole_check.diagnostics]
    assert previews == expected and all(previews)
    assert [d.code for d in checked.diagnostics].count("TL107") == 5
    assert not applied  # no whole-module route
    assert len(members) == 3 and all(members)  # step, helper and last, each once
    removed = [edit for edits in previews for edit in edits if edit.content == ""]
    assert len(removed) == 5  # each ``x = Variable(x)`` (``x, = Variable(x),`` too): their lines go


def test_previews_do_not_reparse_the_file_for_every_finding(monkeypatch, tmp_path):
    import io

    import libcst

    from torchlint.frontends import cli

    lines = ["import torch", "import torch.nn.functional as F", "x = torch.zeros(1, 1, 2, 2)"]
    lines += [f"y{index} = F.upsample(x, scale_factor=2)" for index in range(40)]
    (tmp_path / "many.py").write_text("\n".join(lines) + "\n")
    parses = []
    real = libcst.parse_module
    monkeypatch.setattr(libcst, "parse_module", lambda *args, **kwargs: parses.append(1) or real(*args, **kwargs))
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert cli.main(["--isolated", "--no-cache", "--output-format", "json", "many.py"], stdout=out) == 1
    findings = json.loads(out.getvalue())
    assert len(findings) == 40 and all(f["fix"]["edits"] for f in findings)
    assert findings[5]["fix"]["edits"] == [
        {"content": "interpolate", "location": {"row": 9, "column": 8}, "end_location": {"row": 9, "column": 16}}
    ]
    assert len(parses) <= 3  # the check's own parse(s), not one per finding


def _findings_heavy_file(functions: int) -> str:
    """``functions`` functions, each with a fix that drops a name (``F.sigmoid`` ->
    ``torch.sigmoid``: ``F`` goes), one that does not (``F.upsample``) and one
    that makes a self-assignment the tidy step removes (``x = Variable(x)``)."""
    lines = ["import torch", "import torch.nn.functional as F", "from torch.autograd import Variable", ""]
    for index in range(functions):
        lines += [f"def f{index}(x):", "    x = Variable(x)", "    a = F.sigmoid(x)",
                  "    b = F.upsample(x, scale_factor=2)", "    return a, b", ""]
    return "\n".join(lines)


def _json_output_counting_whole_module_work(monkeypatch, tmp_path, functions: int, final_line_break: bool = True):
    """json findings of ``_findings_heavy_file(functions)`` through the real CLI, with
    the count of whole-module parses, renderings and fix applications it made."""
    import io

    import libcst

    from torchlint.engine import fixer
    from torchlint.frontends import cli

    code = _findings_heavy_file(functions)
    (tmp_path / "many.py").write_text(code if final_line_break else code.rstrip("\n"))
    counts = {"parse": 0, "render": 0, "apply_fixes": 0}

    def counting(name, real):
        def counted(*args, **kwargs):
            counts[name] += 1
            return real(*args, **kwargs)
        return counted

    monkeypatch.setattr(libcst, "parse_module", counting("parse", libcst.parse_module))
    monkeypatch.setattr(fixer, "apply_fixes", counting("apply_fixes", fixer.apply_fixes))
    monkeypatch.setattr(libcst.Module, "code", property(counting("render", libcst.Module.code.fget)))
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert cli.main(["--isolated", "--no-cache", "--output-format", "json", "many.py"], stdout=out) == 1
    monkeypatch.undo()
    return json.loads(out.getvalue()), counts


def test_json_previews_of_a_file_without_a_final_line_break_stay_local(monkeypatch, tmp_path):
    """The last statement of such a file was previewed on the whole module, once per finding."""
    findings, counts = _json_output_counting_whole_module_work(monkeypatch, tmp_path, 3, final_line_break=False)
    with_break, _ = _json_output_counting_whole_module_work(monkeypatch, tmp_path, 3)
    assert counts["apply_fixes"] == 0 and counts["parse"] <= 3
    assert findings == with_break and len(findings) == 9


def test_json_previews_cost_about_linear_time_in_the_findings(monkeypatch, tmp_path):
    """Issue 17, edge 5: a fix that drops a name was previewed by rendering, tidying
    and re-parsing the whole module once per finding: quadratic in the findings.
    Now such a fix is previewed on its own top-level statement, with the module's
    name uses counted once; the whole module is rendered a fixed number of times."""
    from torchlint.core.source import SourceFile
    from torchlint.engine.linter import Engine
    from torchlint.engine.textedits import preview_fix
    from torchlint.rules import all_rules

    small, small_counts = _json_output_counting_whole_module_work(monkeypatch, tmp_path, 50)
    large, large_counts = _json_output_counting_whole_module_work(monkeypatch, tmp_path, 100)
    assert len(small) == 150 and len(large) == 300 and all(f["fix"]["edits"] for f in large)
    assert large_counts == small_counts, (small_counts, large_counts)  # not one per finding
    assert large_counts["apply_fixes"] == 0 and large_counts["parse"] <= 3
    # The same previews as the whole-module route gives, finding by finding.
    code = _findings_heavy_file(3)
    checked = Engine(all_rules()).check(code, whole=True)
    whole = [preview_fix(checked.module, d.fix) for d in checked.diagnostics]
    local = [f["fix"]["edits"] for f in large[:len(whole)]]
    as_json = [[{"content": e.content, "location": {"row": e.start[0], "column": e.start[1]},
                 "end_location": {"row": e.end[0], "column": e.end[1]}} for e in edits] for edits in whole]
    assert local == as_json
    assert len(whole) == 9 and all(whole)
    # ``x = Variable(x)`` becomes ``x = x``, which the tidy step removes: its line goes.
    assert SourceFile(code).lines[5] == "    x = Variable(x)\n"
    assert {"content": "", "location": {"row": 6, "column": 1}, "end_location": {"row": 7, "column": 1}} \
        in [edit for edits in local for edit in edits]


# --- 4. end positions, parse errors in every format, full output ------------------------------


def _notebook(*sources):
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": s}
             for s in sources]
    cells.insert(1, {"cell_type": "markdown", "metadata": {}, "source": "notes"})
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_json_has_end_positions(tmp_path):
    (tmp_path / "a.py").write_text(UPSAMPLE)
    result = run_torchlint(["--isolated", "--no-cache", "--output-format", "json", "a.py"], cwd=tmp_path)
    (item,) = json.loads(result.stdout)
    assert item["location"] == {"row": 3, "column": 7}
    assert item["end_location"] == {"row": 3, "column": 15}  # `upsample`, the flagged name


@pytest.mark.parametrize("output_format", ["json", "sarif", "github"])
def test_parse_errors_appear_in_machine_readable_output(tmp_path, output_format):
    (tmp_path / "broken.py").write_text("import torch\ndef f(:\n    pass\n")
    (tmp_path / "a.py").write_text(UPSAMPLE)
    result = run_torchlint(["--isolated", "--no-cache", "--output-format", output_format, "."], cwd=tmp_path)
    assert result.returncode == 2
    assert "broken.py:2:7: cannot parse" in result.stderr
    if output_format == "json":
        error = next(item for item in json.loads(result.stdout) if item["filename"] == "./broken.py")
        assert error["code"] is None and error["location"] == {"row": 2, "column": 7}
        assert error["message"] == "cannot parse: invalid syntax"
    elif output_format == "sarif":
        (invocation,) = json.loads(result.stdout)["runs"][0]["invocations"]
        (notification,) = invocation["toolExecutionNotifications"]
        assert notification["level"] == "error" and "cannot parse" in notification["message"]["text"]
        physical = notification["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == "broken.py"
        assert physical["region"] == {"startLine": 2, "startColumn": 7}
    else:
        assert "::error title=torchlint (error),file=./broken.py,line=2,col=7::cannot parse: invalid syntax" in result.stdout


def test_full_underlines_the_whole_flagged_range(tmp_path):
    (tmp_path / "a.py").write_text("import torch\nstate = torch.load('model.pt', map_location='cpu')\n")
    result = run_torchlint(["--isolated", "--no-cache", "--output-format", "full", "a.py"], cwd=tmp_path)
    lines = result.stdout.splitlines()
    source = lines.index("2 | state = torch.load('model.pt', map_location='cpu')")
    assert lines[source + 1] == "  |         " + "^" * len("torch.load('model.pt', map_location='cpu')") + " TL214"  # weights_only= is missing (TL203 is map_location only)


def test_full_shows_a_notebook_cells_line_and_fix(tmp_path):
    (tmp_path / "nb.ipynb").write_text(_notebook(
        "import torch\nimport torch.nn.functional as F\n",
        "x = torch.zeros(1, 1, 2, 2)\n%matplotlib inline\ny = F.upsample(x, scale_factor=2)\n",
    ))
    result = run_torchlint(["--isolated", "--no-cache", "--output-format", "full", "nb.ipynb"], cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("nb.ipynb:cell 3:3:7: TL103")
    assert "3 | y = F.upsample(x, scale_factor=2)\n  |       ^^^^^^^^ TL103\n" in result.stdout
    assert "    -y = F.upsample(x, scale_factor=2)\n    +y = F.interpolate(x, scale_factor=2)\n" in result.stdout
    json_result = run_torchlint(["--isolated", "--no-cache", "--output-format", "json", "nb.ipynb"], cwd=tmp_path)
    (item,) = json.loads(json_result.stdout)
    assert item["cell"] == 3 and item["end_location"] == {"row": 3, "column": 15}
    assert item["fix"]["edits"] == [
        {"content": "interpolate", "location": {"row": 3, "column": 7}, "end_location": {"row": 3, "column": 15}}
    ]


# --- 3. git-ignored paths are skipped by directory searches -------------------------------------


@pytest.fixture
def ignoring_repo(tmp_path):
    root = tmp_path / "repo"
    (root / "generated").mkdir(parents=True)
    (root / "src" / "deep").mkdir(parents=True)
    _git("init", "-q", cwd=root)
    (root / ".gitignore").write_text("generated/\n*_pb2.py\n")
    (root / "src" / ".gitignore").write_text("scratch.py\n")
    for name in ("generated/g.py", "src/x_pb2.py", "src/scratch.py", "src/ok.py", "src/deep/ok2.py"):
        (root / name).write_text(UPSAMPLE)
    return root


def _flagged_files(result):
    return sorted(line.split(":")[0] for line in result.stdout.splitlines() if ": TL" in line)


def test_git_ignored_paths_are_skipped_when_searching(ignoring_repo):
    result = run_torchlint(["--no-cache", "."], cwd=ignoring_repo)
    assert _flagged_files(result) == ["./src/deep/ok2.py", "./src/ok.py"], result.stdout + result.stderr
    inside = run_torchlint(["--no-cache", "."], cwd=ignoring_repo / "src")
    assert _flagged_files(inside) == ["./deep/ok2.py", "./ok.py"]


def test_named_files_are_checked_even_if_ignored(ignoring_repo):
    result = run_torchlint(["--no-cache", "generated/g.py", "src/scratch.py"], cwd=ignoring_repo)
    assert _flagged_files(result) == ["generated/g.py", "src/scratch.py"]


def test_no_respect_gitignore_and_the_config_key(ignoring_repo):
    every = ["./generated/g.py", "./src/deep/ok2.py", "./src/ok.py", "./src/scratch.py", "./src/x_pb2.py"]
    result = run_torchlint(["--no-cache", "--no-respect-gitignore", "."], cwd=ignoring_repo)
    assert _flagged_files(result) == every
    (ignoring_repo / "pyproject.toml").write_text("[tool.torchlint]\nrespect-gitignore = false\n")
    assert _flagged_files(run_torchlint(["--no-cache", "."], cwd=ignoring_repo)) == every


def test_git_is_asked_once_per_run_not_once_per_file(ignoring_repo, monkeypatch):
    from torchlint.run import files

    calls = []
    real = files.subprocess.run
    monkeypatch.setattr(files.subprocess, "run", lambda *a, **k: calls.append(a) or real(*a, **k))
    from torchlint.run.config import Options

    monkeypatch.chdir(ignoring_repo)
    options = Options(paths=["."], rules=[])
    found = sorted(path for path, _ in files.discover(["."], options.is_excluded))
    assert found == ["./src/deep/ok2.py", "./src/ok.py"]
    assert len(calls) == 1


# --- 8. --ignore-noqa, unused noqa, --output-file, -q/-qq, --show-settings/--show-files, --diff summary


NOQA_SOURCE = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "y = F.upsample(x, scale_factor=2)  # noqa: TL103\n"
    "z = F.tanh(x)  # noqa: TL103, E501\n"
    "w = F.upsample(x)  # noqa\n"
)


def test_ignore_noqa_reports_suppressed_findings(tmp_path):
    (tmp_path / "a.py").write_text(NOQA_SOURCE)
    honoured = run_torchlint(["--isolated", "a.py"], cwd=tmp_path)
    assert [line.split()[1] for line in _lines(honoured)[:-1]] == ["TL104"]
    ignored = run_torchlint(["--isolated", "--ignore-noqa", "a.py"], cwd=tmp_path)
    assert [line.split(":")[1] + " " + line.split()[1] for line in _lines(ignored)[:-1]] == [
        "3 TL103", "4 TL104", "5 TL103"]


def test_report_unused_noqa_names_codes_that_suppress_nothing(tmp_path):
    (tmp_path / "a.py").write_text(NOQA_SOURCE)
    result = run_torchlint(["--isolated", "--report-unused-noqa", "a.py"], cwd=tmp_path)
    assert result.returncode == 1
    assert _lines(result)[:-1] == [
        "a.py:4:7: TL104 `F.tanh` is a deprecated alias; use `torch.tanh`",
        "a.py:4:16: TL001 unused `noqa` code TL103: nothing to suppress on this line",
    ]  # E501 (another tool's) and the bare `# noqa` are left alone
    (tmp_path / "a.py").write_text(NOQA_SOURCE.replace("  # noqa: TL103, E501", "  # noqa: TL104"))
    clean = run_torchlint(["--isolated", "--report-unused-noqa", "--select", "TL103,TL104", "a.py"], cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout


def test_output_file_quiet_and_silent(tmp_path):
    (tmp_path / "a.py").write_text(UPSAMPLE)
    to_file = run_torchlint(["--isolated", "--no-cache", "--output-file", "report.json", "--output-format", "json",
                             "a.py"], cwd=tmp_path)
    assert to_file.returncode == 1 and to_file.stdout == ""
    assert json.loads((tmp_path / "report.json").read_text())[0]["code"] == "TL103"
    quiet = run_torchlint(["--isolated", "--no-cache", "-q", "a.py"], cwd=tmp_path)
    assert quiet.returncode == 1
    assert quiet.stdout == "a.py:3:7: TL103 `upsample` is deprecated; use `interpolate(...)`\n"
    for silent in (["-qq"], ["--silent"]):
        result = run_torchlint(["--isolated", "--no-cache", *silent, "a.py"], cwd=tmp_path)
        assert (result.returncode, result.stdout, result.stderr) == (1, "", "")


def test_show_settings_and_show_files(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(UPSAMPLE)
    (tmp_path / "pkg" / "b.pyi").write_text("x: int\n")
    (tmp_path / "pkg" / "notes.txt").write_text("F.upsample\n")
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL1"]\ntorch-version = "1.13"\n')
    settings = run_torchlint(["--show-settings", "pkg"], cwd=tmp_path)
    assert settings.returncode == 0
    values = dict(line.split(":", 1) for line in settings.stdout.splitlines())
    assert values["configuration file"].strip() == "pyproject.toml"
    assert values["rules"].strip().startswith("TL101, TL102") and "TL201" not in values["rules"]
    assert values["torch-version"].strip() == "1.13.0 (configuration file: pyproject.toml torch-version)"
    assert values["cache"].strip() == str(tmp_path / ".torchlint_cache")
    files = run_torchlint(["--show-files", "pkg"], cwd=tmp_path)
    assert (files.returncode, files.stdout) == (0, "pkg/a.py\npkg/b.pyi\n")


def test_diff_prints_a_summary_on_stderr_and_a_clean_patch_on_stdout(tmp_path):
    (tmp_path / "a.py").write_text(UPSAMPLE)
    (tmp_path / "b.py").write_text(UPSAMPLE.replace("y = ", "z = ") + "w = F.upsample(y, scale_factor=2)\n")
    result = run_torchlint(["--isolated", "--diff", "."], cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == "Would fix 3 problems in 2 files.\n"
    assert result.stdout.startswith("--- a/a.py\n") and "Would fix" not in result.stdout
    applied = subprocess.run(["patch", "-p1", "--dry-run"], input=result.stdout, cwd=tmp_path, text=True,
                             capture_output=True)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("x = 2\n")
    nothing = run_torchlint(["--isolated", "--diff", "."], cwd=tmp_path)
    assert (nothing.returncode, nothing.stdout, nothing.stderr) == (0, "", "No fixes to apply.\n")


# --- 2. concise messages: one short line, the detail in full output ---------------------------


def test_every_message_of_every_flagged_example_fits_in_90_characters():
    from torchlint.engine.linter import Engine
    from torchlint.rules.rule import MAX_MESSAGE

    assert MAX_MESSAGE == 90
    seen = 0
    for rule, index, example in _every_flagged_example():
        for d in Engine([rule]).check(example.code).diagnostics:
            assert len(d.message) <= MAX_MESSAGE, (rule.code, index, d.message)
            seen += 1
    assert seen > 140


def test_full_output_shows_the_detail_the_concise_message_leaves_out(tmp_path):
    (tmp_path / "a.py").write_text(
        "import os\nimport torch\ntorch.cuda.set_device(0)\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n")
    concise = run_torchlint(["--isolated", "--no-cache", "--select", "TL210", "a.py"], cwd=tmp_path)
    assert _lines(concise)[0] == "a.py:4:1: TL210 `CUDA_VISIBLE_DEVICES` is set after CUDA was initialised: it has no effect"
    full = run_torchlint(["--isolated", "--no-cache", "--select", "TL210", "--output-format", "full", "a.py"],
                         cwd=tmp_path)
    assert "  = note: CUDA was initialised by `torch.cuda.set_device(0)`; set it before anything touches CUDA" \
        in full.stdout
