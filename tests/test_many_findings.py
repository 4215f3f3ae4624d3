"""One file with very many findings (issue 18): time and memory grow
linearly. ``bench/many_findings.py`` measures 50,000 findings; these tests
pin the parts that were quadratic, by counting work rather than timing it
(the machine is shared), and run a moderate file through the real command.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys

from conftest import REPO, run_torchlint

sys.path.insert(0, str(REPO / "bench"))
import many_findings  # noqa: E402

from torchlint.analysis import outline as outline_module  # noqa: E402
from torchlint.core.noqa import NoqaIndex  # noqa: E402
from torchlint.core.source import SourceFile  # noqa: E402
from torchlint.engine import narrowing  # noqa: E402
from torchlint.engine.linter import Engine  # noqa: E402
from torchlint.rules import all_rules  # noqa: E402


class _CountingText(str):
    """A source text that counts how often it is lowered (scanned whole)."""

    scans = 0

    def lower(self):  # type: ignore[override]
        _CountingText.scans += 1
        return super().lower()


def test_noqa_scans_the_text_once_not_once_per_finding():
    source = SourceFile(_CountingText(many_findings.generate(2_000)))
    index = NoqaIndex(source)
    _CountingText.scans = 0
    assert not any(index.suppresses(line, "TL103") for line in range(4, 2_004))
    assert _CountingText.scans <= 1


def test_noqa_still_applies_when_the_text_mentions_it():
    text = "import torch.nn.functional as F\ny = F.upsample(x)  # noqa: TL103\nz = F.upsample(x)\n"
    index = NoqaIndex(SourceFile(text))
    assert index.suppresses(2, "TL103") and not index.suppresses(3, "TL103")


def test_narrowing_outlines_a_module_full_of_candidates_a_bounded_number_of_times(monkeypatch):
    """Each def used to be screened with the whole rest of the module: one
    walk of the module per def."""
    source = many_findings.generate(20_000)  # 100 defs, 10,000 module-level findings
    tree = ast.parse(source)
    engine = Engine([rule for rule in all_rules() if rule.enabled_by_default])
    rules = engine.rules_for(source, tree)  # the rules that run on it, as the engine chooses them
    assert rules and not any(rule.whole_file for rule in rules)
    walked = []
    real_init = outline_module.Outline.__init__

    def counting_init(self, tree, *args, **kwargs):
        walked.append(sum(1 for _ in ast.walk(tree)))  # the nodes this outline walks
        real_init(self, tree, *args, **kwargs)

    monkeypatch.setattr(outline_module.Outline, "__init__", counting_init)
    # every def could hold a finding: nothing is cut
    assert narrowing.narrow(SourceFile(source, tree=tree), tree, rules) is None
    # Statements are outlined once each (and the module at most twice): linear, not a walk per def.
    assert sum(walked) <= 3 * sum(1 for _ in ast.walk(tree))


def test_a_file_with_thousands_of_findings_is_checked_and_fixed(tmp_path):
    path = tmp_path / "many.py"
    path.write_text(many_findings.generate(3_000))
    checked = run_torchlint(["--isolated", "--no-cache", "many.py"], cwd=tmp_path, timeout=600)
    assert checked.returncode == 1 and checked.stdout.count(": TL103 ") == 3_000, checked.stderr
    fixed = run_torchlint(["--isolated", "--no-cache", "--fix", "many.py"], cwd=tmp_path, timeout=600)
    assert fixed.returncode == 0 and "Fixed 3000 problems" in fixed.stdout, fixed.stdout + fixed.stderr
    assert "F.upsample" not in path.read_text() and path.read_text().count("F.interpolate(") == 3_000


def test_one_fix_that_breaks_the_code_among_many_costs_few_renderings(monkeypatch):
    """A broken fix used to be found by rendering the module once per fix."""
    from torchlint.engine import fixer

    good = "".join(f"def f{k}(x):\n    return F.sigmoid(x)\n" for k in range(200))
    bad = "def g(x):\n    y = F.sigmoid(x)\n    global torch\n    return y\n"
    source = "import torch\nimport torch.nn.functional as F\n" + good + bad + good.replace("def f", "def h")
    renders = []
    real_render = fixer._render

    def counting_render(module, fixes, *context):
        renders.append(len(fixes))
        return real_render(module, fixes, *context)

    monkeypatch.setattr(fixer, "_render", counting_render)
    result = Engine([rule for rule in all_rules() if rule.enabled_by_default]).fix(source)
    assert result.fixed["TL104"] == 400
    assert {(d.code, d.line) for d, _ in result.discarded} == {("TL104", 2 + 2 * 200 + 2)}
    assert "used prior to global declaration" in result.discarded[0][1]
    assert result.source.count("F.sigmoid") == 1
    compile(result.source, "fixed", "exec")
    assert len(renders) <= 60, len(renders)


def _peak_rss(path, cwd) -> int:
    """Peak resident memory, in bytes, of the real command checking ``path`` in a fresh process."""
    code = ("import resource, subprocess, sys\n"
            "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
            "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "torchlint", "--isolated", "--no-cache",
                          str(path)], capture_output=True, text=True, cwd=cwd, timeout=300,
                         env=dict(os.environ, PYTHONPATH=str(REPO))).stdout.split()
    assert out[0] == "1", out  # findings, no error
    return int(out[1]) * 1024


def test_peak_memory_is_a_bounded_multiple_of_the_file(tmp_path):
    """Issue 36, item 9: libcst's native parser held several times the tree it
    returns while parsing the whole file (0.37 MB with 6,000 findings: 265 MB
    over an empty run, 716 bytes per byte); parsed in pieces, the peak is
    the tree and one piece's working memory (about 350 bytes per byte)."""
    (tmp_path / "small.py").write_text(many_findings.generate(10))
    source = many_findings.generate(6_000)
    (tmp_path / "big.py").write_text(source)
    baseline = _peak_rss(tmp_path / "small.py", tmp_path)
    peak = _peak_rss(tmp_path / "big.py", tmp_path)
    assert peak - baseline < 500 * len(source), (peak - baseline) / len(source)


def test_memory_per_doubling_of_findings_in_a_file_of_one_size(tmp_path):
    """The file's size held (6,000 lines), its findings doubled twice: each
    doubling may cost at most 1.3 times the peak memory (what is kept per
    finding is small, the parse is the file's)."""
    peaks = []
    for findings in (1_500, 3_000, 6_000):
        lines = ["import torch.nn.functional as F", ""]
        step = 6_000 // findings
        lines += [f"y{i % 10} = F.{'upsample' if i % step == 0 else 'interpolate'}(x)" for i in range(6_000)]
        path = tmp_path / f"m{findings}.py"
        path.write_text("\n".join(lines) + "\n")
        peaks.append(_peak_rss(path, tmp_path))
    assert all(later / earlier < 1.3 for earlier, later in zip(peaks, peaks[1:])), peaks


def test_each_file_is_reported_before_the_next_is_checked(tmp_path, monkeypatch):
    """Findings stream (issue 36, item 9): a file's findings are printed as soon
    as it is checked, and what the run keeps of it afterwards holds no live
    fix (a fix's edits hold the file's parse tree) and no text. The run used to
    check every file first and keep each report whole to the end."""
    import io

    from torchlint.frontends import cli
    from torchlint.run import session

    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(many_findings.generate(40))
    out = io.StringIO()
    printed_before = {}
    kept = []
    check, keep = session.process_file, session.reported

    def checking(path, *args, **kwargs):
        printed_before[os.path.basename(path)] = out.getvalue().count(": TL103")
        return check(path, *args, **kwargs)

    def keeping(report):
        kept.append(keep(report))
        return kept[-1]

    monkeypatch.setattr(session, "process_file", checking)
    monkeypatch.setattr(session, "reported", keeping)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--isolated", "--no-cache", "-j", "1", "a.py", "b.py", "c.py"], stdout=out) == 1
    assert printed_before == {"a.py": 0, "b.py": 40, "c.py": 80}
    assert [len(report.diagnostics) for report in kept] == [40, 40, 40]
    assert all(d.fix is not None and not d.fix.edits for report in kept for d in report.diagnostics)
    assert all(report.source is None and not report.previews for report in kept)
