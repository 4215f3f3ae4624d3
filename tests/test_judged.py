"""bench/judged.py, the hand-judged evaluation, on a tiny synthetic corpus.

Runs the script's real command line: ``prepare`` from a local git mirror,
``candidates`` (the broad search that makes labels complete) and ``score``
(the real torchlint command joined with a labels file). The labels here are
written to exercise every cell of the table: one true positive, one false
positive (an ``ok`` label on a finding), one false negative (a ``flag``
label on a line nothing reports), a correct ``ok`` and an unjudged finding.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
JUDGED = REPO / "bench" / "judged.py"

TRAIN = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.autograd import Variable

    criterion = nn.CrossEntropyLoss()
    output = torch.zeros(4, 3)
    loss = criterion(output, torch.zeros(4, dtype=torch.long))
    print(loss.data[0])
    first_row = output.data[0]
    again = loss.data[0]
    probabilities = F.sigmoid(output)
    pass
    """)

HELPERS = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.autograd import Variable
    from torch.nn.functional import upsample as resize
    from torch.nn.init import xavier_uniform

    resized = resize(torch.zeros(1, 1, 2, 2), scale_factor=2)
    weight = xavier_uniform(torch.zeros(2, 2))
    criterion = nn.MSELoss(size_average=False)

    def to_var(x, volatile=False):
        return Variable(x, volatile=volatile)

    batch = to_var(torch.zeros(2), volatile=True)
    batch.cuda()
    array = batch.data.numpy()
    """)

# train.py:9 is a true positive, train.py:11 a false positive (a deliberately
# wrong `ok`), train.py:13 a false negative (`pass` is reported by nothing),
# train.py:10 a correct `ok`; train.py:12 (TL104) is left unjudged.
LABELS = textwrap.dedent("""\
    # synthetic labels
    demo/train.py\t9\tTL101\tflag\t[torch-loss] loss from nn.CrossEntropyLoss
    demo/train.py\t10\tTL101\tok\tfirst row of a batch
    demo/train.py\t11\tTL101\tok\tdeliberately wrong, to count a false positive
    demo/train.py\t13\tTL101\tflag\t[other] deliberately a line nothing reports
    """)


def judged(*arguments: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(JUDGED), *arguments], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    dest = tmp_path / "corpus"
    (dest / "demo").mkdir(parents=True)
    (dest / "demo" / "train.py").write_text(TRAIN)
    (dest / "demo" / "helpers.py").write_text(HELPERS)
    # torch 0.3's async= keyword, which Python 3.7+ refuses and torchlint repairs
    (dest / "demo" / "old_async.py").write_text("import torch\nx = torch.ones(1).cuda(async=True)\nprint(x.data[0])\n")
    (dest / "demo" / "python2.py").write_text("print 'not Python 3'\n")
    (tmp_path / "labels.tsv").write_text(LABELS)
    return dest


def _table_row(output: str, code: str) -> list:
    for line in output.splitlines():
        if line.startswith(f"| {code} |"):
            return [cell.strip() for cell in line.strip("|").split("|")]
    raise AssertionError(f"no table row for {code} in:\n{output}")


def test_score_counts_every_cell_and_lists_unjudged_findings(corpus: Path, tmp_path: Path):
    done = judged("score", "--labels", str(tmp_path / "labels.tsv"), "--show", "fn,fp", str(corpus), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # rule | should flag | labelled ok | flagged | TP | FP | FN | unjudged | precision | recall
    assert _table_row(done.stdout, "TL101") == ["TL101", "2", "2", "2", "1", "1", "1", "0", "0.500", "0.500"]
    assert _table_row(done.stdout, "TL104")[1:8] == ["0", "0", "1", "0", "0", "0", "1"]
    assert "UNJUDGED\tdemo/train.py\t12\tTL104" in done.stdout
    assert "files torchlint could not parse (1): demo/python2.py" in done.stdout
    assert "TL101: other 1" in done.stdout  # the false negative's cause tag
    assert "demo/train.py:13 TL101 [other]" in done.stdout
    assert "demo/train.py:11 TL101 deliberately wrong" in done.stdout

    strict = judged("score", "--strict", "--labels", str(tmp_path / "labels.tsv"), str(corpus), cwd=tmp_path)
    assert strict.returncode == 1


def test_score_through_the_flake8_plugin_gives_the_same_table(corpus: Path, tmp_path: Path):
    done = judged("score", "--frontend", "flake8", "--labels", str(tmp_path / "labels.tsv"), str(corpus), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "## torchlint: this checkout (flake8 plugin)" in done.stdout
    assert _table_row(done.stdout, "TL101") == ["TL101", "2", "2", "2", "1", "1", "1", "0", "0.500", "0.500"]
    assert "UNJUDGED\tdemo/train.py\t12\tTL104" in done.stdout
    # flake8 reports the async= file as the command does (the plugin repairs it too)
    assert "UNJUDGED\tdemo/old_async.py\t2\tTL115" in done.stdout
    assert "files torchlint could not parse (1): demo/python2.py" in done.stdout


def test_score_through_stdin_filename_gives_the_same_table(corpus: Path, tmp_path: Path):
    done = judged("score", "--frontend", "stdin", "--labels", str(tmp_path / "labels.tsv"), str(corpus), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "## torchlint: this checkout (--stdin-filename, file by file)" in done.stdout
    assert _table_row(done.stdout, "TL101") == ["TL101", "2", "2", "2", "1", "1", "1", "0", "0.500", "0.500"]
    assert "UNJUDGED\tdemo/train.py\t12\tTL104" in done.stdout
    assert "files torchlint could not parse (1): demo/python2.py" in done.stdout


def test_score_side_by_side_runs_each_checkout(corpus: Path, tmp_path: Path):
    done = judged("score", "--labels", str(tmp_path / "labels.tsv"), "--torchlint-src", str(REPO),
                  "--torchlint-src", str(REPO), str(corpus), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(f"## torchlint: {REPO}") == 2
    assert "| TL101 | 0.500 / 0.500 | 0.500 / 0.500 |" in done.stdout


def test_candidates_are_broad_and_skip_labelled_lines(corpus: Path, tmp_path: Path):
    done = judged("candidates", "--labels", str(tmp_path / "labels.tsv"), str(corpus), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    found = {tuple(line.split("\t")[:3]) for line in done.stdout.splitlines()}
    assert found == {
        ("demo/helpers.py", "4", "TL103"),   # the from-import of upsample
        ("demo/helpers.py", "5", "TL105"),   # the from-import of xavier_uniform
        ("demo/helpers.py", "7", "TL103"),   # a call through the imported alias
        ("demo/helpers.py", "8", "TL105"),   # a call through the imported name
        ("demo/helpers.py", "9", "TL106"),   # size_average=
        ("demo/helpers.py", "12", "TL102"),  # Variable(x, volatile=volatile) in the helper
        ("demo/helpers.py", "14", "TL102"),  # the helper's caller: volatile= forwarded
        ("demo/helpers.py", "15", "TL201"),  # bare batch.cuda()
        ("demo/helpers.py", "16", "TL202"),  # .data.numpy()
        ("demo/old_async.py", "3", "TL101"),  # found although the file needs async= renamed to parse
        ("demo/train.py", "12", "TL104"),    # F.sigmoid
    }, done.stdout  # every TL101 line of train.py has a label, so none is printed
    assert "11 unlabelled of 14 candidates; 1 files Python cannot parse" in done.stderr

    only = judged("candidates", "--codes", "TL101", str(corpus), cwd=tmp_path)
    assert [line.split("\t")[:2] for line in only.stdout.splitlines()] == [
        ["demo/old_async.py", "3"], ["demo/train.py", "9"], ["demo/train.py", "10"], ["demo/train.py", "11"]]

    wrong = judged("candidates", "--codes", "TL301", str(corpus), cwd=tmp_path)
    assert wrong.returncode == 2 and "not card rules: TL301" in wrong.stderr


def test_bad_labels_are_a_clear_error(corpus: Path, tmp_path: Path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("demo/train.py\t9\tTL101\tmaybe\twhy\n")
    done = judged("score", "--labels", str(bad), str(corpus), cwd=tmp_path)
    assert done.returncode == 2
    assert "bad.tsv:1: expected path<TAB>line<TAB>code<TAB>flag|ok<TAB>reason" in done.stderr
    assert "Traceback" not in done.stderr


def _git(*arguments: str, cwd: Path) -> str:
    return subprocess.run(["git", *arguments], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def test_prepare_writes_the_pinned_commit_and_goes_on_after_a_bad_entry(tmp_path: Path):
    work = tmp_path / "mirrors" / "someone+old-code" / "repo"
    work.mkdir(parents=True)
    _git("init", "-q", cwd=work)
    (work / "train.py").write_text("print('first')\n")
    (work / "notebook.ipynb").write_text("{}")
    _git("add", ".", cwd=work)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one", cwd=work)
    pinned = _git("rev-parse", "HEAD", cwd=work)
    (work / "train.py").write_text("print('second')\n")
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "two", cwd=work)

    manifest = tmp_path / "manifest"
    manifest.write_text(f"missing\tgithub:nobody/absent@{'0' * 40}\n"
                        f"old\tgithub:someone/old-code@{pinned}  # the first commit\n")
    dest = tmp_path / "dest"
    done = judged("prepare", "--manifest", str(manifest), "--mirror-root", str(tmp_path / "mirrors"), str(dest),
                  cwd=tmp_path)
    assert done.returncode == 1  # the missing mirror
    assert "missing: FAILED: no mirror of nobody/absent" in done.stderr
    assert (dest / "old" / "train.py").read_text() == "print('first')\n"
    assert not (dest / "old" / "notebook.ipynb").exists()
    assert not (dest / "missing").exists()

    again = judged("prepare", "--manifest", str(manifest), "--mirror-root", str(tmp_path / "mirrors"), str(dest),
                   cwd=tmp_path)
    assert "old: present, skipped" in again.stdout
