"""Bad input and a hostile file system, through the real ``torchlint`` command.

The input cases of issue 18 (libcst-deep chains, dead workers, FIFOs and
devices, size limits, deep notebook JSON and pyproject.toml, undecodable
names and strict encodings, unlistable directories, a closed stdin,
notebooks on stdin, what only CPython's compiler refuses) are the last
section. Each scenario of issue 6 has a test here or in ``tests/test_cli.py``
(which this file extends, never repeats):

====================================  =========================================================
PEP 263 latin-1 cookie                test_cli: test_positions_in_a_latin1_file,
                                      test_fix_keeps_a_latin1_file_in_latin1; here: a cookie on
                                      line 2 after a shebang, non-ASCII before the finding
UTF-8 BOM                             test_cli: test_the_bom_does_not_shift_positions,
                                      test_fix_keeps_the_utf8_bom; here: BOM + utf-8 cookie,
                                      BOM + latin-1 cookie (refused, as Python does), BOM only
CRLF and mixed line endings           test_cli: test_positions_in_a_crlf_file, test_fix_keeps_crlf_*,
                                      test_fix_keeps_mixed_line_endings; here: old-Mac CR only;
                                      test_fuzz: results do not depend on line endings
tabs                                  here: tab indentation (columns count a tab as one
                                      character, fixes keep tabs); inconsistent tabs (TabError)
form feeds                            test_cli: page breaks in a comment (--diff); here: form
                                      feeds starting lines at module level and in a block
                                      (columns; libcst leaves them out), after indentation
                                      (libcst cannot parse it: skipped with a warning)
a NUL byte                            here
invalid UTF-8                         test_cli: test_undecodable_file_gets_a_clear_message; here:
                                      a truncated multi-byte character, a UTF-16 file
a 5 MB generated file                 here
deeply nested expressions             here: 150 nested parentheses, a 2,000-term chain, 99 nested
                                      ifs and defs; beyond: 201 parentheses and 100 indentation
                                      levels (Python refuses them), 10,000-term chains (skipped)
an empty file                         here (and whitespace-, comment- and BOM-only files)
a directory named x.py                here
a symlink loop                        here (a link to itself, two links to each other, a
                                      directory link to its parent)
a path that vanishes mid-run          here (reading the first file deletes the others), and
                                      the runner and the writer called on a missing path
read-only file under --fix            test_cli: test_fix_an_unwritable_file_as_root_* (chattr +i)
                                      and test_fix_a_read_only_file_* (chmod, non-root); here:
                                      an immutable directory (no temporary file can be made)
KeyboardInterrupt during --fix        here: SIGINT and SIGTERM mid-run; interrupts deferred
                                      while a file is being replaced
permissions and mtime of unchanged    test_cli: test_fix_keeps_file_permissions,
files                                 test_fix_leaves_files_without_fixes_untouched; here: the
                                      directory's mtime, the owner and group of fixed files
never imports or executes the code    here: sitecustomize/usercustomize, modules shadowing
                                      torchlint's own imports (argparse, libcst, torch, ...),
                                      a package's __init__/__main__, conftest/setup, a notebook
                                      cell; check, --fix, --diff, --add-noqa, python -m and the
                                      console script
====================================  =========================================================
"""

from __future__ import annotations

import faulthandler
import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import REPO, interruptible_child, run_torchlint
from test_cli import (
    CUDA,
    UPSAMPLE,
    UPSAMPLE_FIXED,
    UPSAMPLE_LINE,
    diagnostics,
    fingerprint,
    in_parallel,
    leftovers,
    no_traceback,
    out_lines,
    put,
    stderr_about,
    summary,
)

from torchlint.core.source import SourceError
from torchlint.engine.linter import MAX_DEPTH
from torchlint.run import fileio as fileio_module
from torchlint.run.fileio import write_atomically
from torchlint.run.runner import process_file

sys.path.insert(0, str(REPO / "bench"))
import scale  # noqa: E402  (bench/scale.py: what Python itself refuses)

TL103 = "TL103 `upsample` is deprecated; use `interpolate(...)`"


def upsample_column(line: str) -> int:
    """The 1-based column torchlint reports for TL103 on ``line`` (the ``upsample`` name)."""
    return line.index("upsample") + 1


# --------------------------------------------------------------------------
# encodings, line endings, tabs, form feeds, NUL
# --------------------------------------------------------------------------

TEXT_FILES = {
    # a PEP 263 cookie on line 2 (after a shebang), non-ASCII before the finding on its line
    "cookie_line2.py": ("#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\n"
                        "import torch.nn.functional as F\ns = 'é½'; y = F.upsample(x)\n").encode("latin-1"),
    "bom_cookie.py": b"\xef\xbb\xbf# -*- coding: utf-8 -*-\n" + UPSAMPLE.encode(),
    "bom_only.py": b"\xef\xbb\xbf",
    "cr_only.py": UPSAMPLE.replace("\n", "\r").encode(),
    "tabs.py": b"import torch.nn.functional as F\nif True:\n\tif True:\n\t\ty = [1,\t2]; z = F.upsample(x)\n",
    "form_feeds.py": (b"import torch.nn.functional as F\n\x0c\n\x0cdef f(x):\n\x0c    return F.upsample(x)\n"
                      b"\x0c\x0cy = F.upsample(x)\n"),
    "empty.py": b"",
    "newline.py": b"\n",
    "blank.py": b"  \n\t\n\x0c\n",
    "comment.py": b"# import torch.nn.functional as F; F.upsample(x)\n",
}
# Files Python refuses too: exit 2, a clear message, never written.
INVALID_FILES = {
    "bom_latin1.py": (b"\xef\xbb\xbf# -*- coding: latin-1 -*-\n" + UPSAMPLE.encode(), "encoding"),
    "nul.py": (UPSAMPLE.encode().replace(b"x = ", b"x\x00 = "), "null bytes"),
    "nul_comment.py": (UPSAMPLE.encode() + b"# \x00\n", "null bytes"),
    "truncated_utf8.py": (UPSAMPLE.encode() + b"# \xe2\x82\n", "decode"),
    "utf16.py": (("# coding: utf-16\n" + UPSAMPLE).encode("utf-16"), "encoding"),
    "tab_error.py": (b"import torch.nn.functional as F\nif True:\n        a = 1\n\tb = F.upsample(x)\n", "cannot parse"),
    # a form feed after the indentation resets it: the block is empty
    "indent_form_feed.py": (b"import torch.nn.functional as F\ndef f(x):\n    \x0creturn F.upsample(x)\n",
                            "cannot parse"),
}
# Valid Python that libcst cannot parse (skipped with a warning, never exit 2).
UNSUPPORTED_FILES = {
    # libcst issue #1011: a parenthesised annotation target (in CPython's own test_grammar.py)
    "paren_annotation.py": b"import torch.nn.functional as F\ndef f():\n    (x): int = 1\n    return F.upsample(x)\n",
    # implicit concatenation of 6,000 strings (a generated resource): libcst's parser gives up
    "many_strings.py": b"import torch.nn.functional as F\ny = F.upsample(x)\ndata = (\n"
                       + b"".join(b"    b'%04d'\n" % i for i in range(6000)) + b")\n",
}


@pytest.fixture(scope="module")
def texts(tmp_path_factory):
    check = tmp_path_factory.mktemp("texts")
    fix = tmp_path_factory.mktemp("texts-fix")
    names = {**TEXT_FILES, **{n: d for n, (d, _) in INVALID_FILES.items()}, **UNSUPPORTED_FILES}
    for name, data in names.items():
        put(check, name, data)
        put(fix, name, data, aged=True)
    put(check, "z.py", UPSAMPLE)
    put(fix, "z.py", UPSAMPLE)
    before = {name: fingerprint(fix / name) for name in names}
    runs = in_parallel({
        "check": lambda: run_torchlint(["--isolated", *sorted(names), "z.py"], cwd=check),
        "fix": lambda: run_torchlint(["--isolated", "--fix", "--unsafe-fixes", *sorted(names), "z.py"], cwd=fix),
        "quiet": lambda: run_torchlint(["--isolated", "empty.py", "newline.py", "blank.py", "comment.py", "bom_only.py"],
                                       cwd=check),
        "unsupported": lambda: run_torchlint(["--isolated", *UNSUPPORTED_FILES, "z.py"], cwd=check),
    })
    return SimpleNamespace(check_dir=check, fix_dir=fix, before=before, **runs)


def _finding(result, name):
    return [line for line in diagnostics(result) if line.startswith(name + ":")]


def test_bad_text_runs_never_crash(texts):
    for result in (texts.check, texts.fix, texts.quiet, texts.unsupported):
        no_traceback(result)
    assert texts.check.returncode == 2  # the invalid files
    assert texts.fix.returncode == 2


def test_cookie_on_line_two_columns_count_characters(texts):
    line = "s = 'é½'; y = F.upsample(x)"
    assert _finding(texts.check, "cookie_line2.py") == [f"cookie_line2.py:4:{upsample_column(line)}: {TL103}"]
    data = (texts.fix_dir / "cookie_line2.py").read_bytes()
    assert data == TEXT_FILES["cookie_line2.py"].replace(b"F.upsample", b"F.interpolate")  # still latin-1


def test_bom_with_a_utf8_cookie(texts):
    assert _finding(texts.check, "bom_cookie.py") == [f"bom_cookie.py:5:7: {TL103}"]
    assert (texts.fix_dir / "bom_cookie.py").read_bytes() == TEXT_FILES["bom_cookie.py"].replace(
        b"F.upsample", b"F.interpolate")


def test_old_mac_line_endings(texts):
    assert _finding(texts.check, "cr_only.py") == ["cr_only.py" + UPSAMPLE_LINE]
    assert (texts.fix_dir / "cr_only.py").read_bytes() == UPSAMPLE_FIXED.replace("\n", "\r").encode()


def test_tabs_count_as_one_column_and_are_kept(texts):
    line = "\t\ty = [1,\t2]; z = F.upsample(x)"
    assert _finding(texts.check, "tabs.py") == [f"tabs.py:4:{upsample_column(line)}: {TL103}"]
    assert (texts.fix_dir / "tabs.py").read_bytes() == TEXT_FILES["tabs.py"].replace(b"F.upsample", b"F.interpolate")


def test_form_feeds_count_as_one_column_and_are_kept(texts):
    lines = TEXT_FILES["form_feeds.py"].decode().split("\n")
    assert _finding(texts.check, "form_feeds.py") == [
        f"form_feeds.py:4:{upsample_column(lines[3])}: {TL103}",  # in a block
        f"form_feeds.py:5:{upsample_column(lines[4])}: {TL103}",  # at module level (libcst leaves them out)
    ]
    assert (texts.fix_dir / "form_feeds.py").read_bytes() == TEXT_FILES["form_feeds.py"].replace(
        b"F.upsample", b"F.interpolate")


def test_empty_and_blank_files_pass_and_are_never_written(texts):
    assert texts.quiet.returncode == 0, texts.quiet
    assert out_lines(texts.quiet) == ["All checks passed."]
    assert texts.quiet.stderr == ""
    for name in ("empty.py", "newline.py", "blank.py", "comment.py", "bom_only.py"):
        assert fingerprint(texts.fix_dir / name) == texts.before[name], name


@pytest.mark.parametrize("name", sorted(INVALID_FILES))
def test_input_python_refuses_is_a_clear_error_and_never_written(texts, name):
    data, words = INVALID_FILES[name]
    assert scale.python_refuses(data, name)  # genuinely invalid: `python FILE` refuses it
    for result in (texts.check, texts.fix):
        lines = stderr_about(result, name)
        assert len(lines) == 1 and lines[0].startswith("torchlint: error: "), result.stderr
        assert words in lines[0], lines[0]
    assert fingerprint(texts.fix_dir / name) == texts.before[name]
    # the other files are still checked and fixed
    assert _finding(texts.check, "z.py") == ["z.py" + UPSAMPLE_LINE]
    assert (texts.fix_dir / "z.py").read_text() == UPSAMPLE_FIXED


@pytest.mark.parametrize("name", sorted(UNSUPPORTED_FILES))
def test_valid_python_libcst_cannot_parse_is_skipped_with_a_warning_not_an_error(texts, name):
    assert scale.python_refuses(UNSUPPORTED_FILES[name], name) is None  # valid Python
    result = texts.unsupported
    assert result.returncode == 1, result  # z.py's finding; no exit 2 for valid code
    lines = stderr_about(result, name)
    assert len(lines) == 1 and lines[0].startswith("torchlint: warning: ") and "skipped" in lines[0], result.stderr
    assert summary(result) == ("Found 1 problem (1 fixable with --fix). 2 files skipped: valid Python torchlint "
                               "cannot analyse (see the warnings above).")
    assert fingerprint(texts.fix_dir / name) == texts.before[name]  # --fix left it alone
    assert len(stderr_about(texts.fix, name)) == 1


# --------------------------------------------------------------------------
# size and nesting
# --------------------------------------------------------------------------


def generated_5mb() -> str:
    """A generated module: code, a 5 MB base64 resource in a string, code."""
    import base64
    import random

    blob = base64.b64encode(random.Random(0).randbytes(3_750_000)).decode()
    body = "\n".join(blob[i:i + 76] for i in range(0, len(blob), 76))
    return ("import torch.nn.functional as F\ny = F.upsample(x)\nWEIGHTS = '''\n" + body + "\n'''\n"
            "def load():\n    return F.upsample(y)\n")


NESTED = {
    "paren150.py": "import torch.nn.functional as F\nx = " + "(" * 150 + "F.upsample(y)" + ")" * 150 + "\n",
    "chain2000.py": "import torch.nn.functional as F\nx = F.upsample(y) + " + " + ".join(["a"] * 2000) + "\n",
    "ifs99.py": "import torch.nn.functional as F\n" + "".join("    " * i + f"if c{i}:\n" for i in range(99))
                + "    " * 99 + "y = F.upsample(x)\n",
    "defs99.py": "import torch.nn.functional as F\n" + "".join("    " * i + f"def f{i}():\n" for i in range(99))
                 + "    " * 99 + "return F.upsample(x)\n",
}
TOO_DEEP_FOR_PYTHON = {
    "paren201.py": ("x = " + "(" * 201 + "F.upsample(y)" + ")" * 201 + "\n", "too many nested parentheses"),
    "ifs100.py": ("".join("    " * i + f"if c{i}:\n" for i in range(100)) + "    " * 100 + "y = 1\n",
                  "too many levels of indentation"),
}
TOO_DEEP_FOR_TORCHLINT = {
    # valid (CPython compiles them) but deeper than torchlint analyses: skipped, not crashed
    # (libcst's parser crashed the interpreter on the first one, after minutes)
    "chain10k.py": "import torch.nn.functional as F\nx = F.upsample(y) + " + " + ".join(["a"] * 10_000) + "\n",
    # (a rule's screen must pass, or the file is rightly "checked" without analysis)
    "methods.py": "import torch\nimport torch.nn.functional as F\ny = F.upsample(x)\nx = torch.zeros(1)"
                  + ".cuda()" * 3000 + "\n",
}


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    d = tmp_path_factory.mktemp("big")
    sources = {"big.py": generated_5mb(), **NESTED, **{n: s for n, (s, _) in TOO_DEEP_FOR_PYTHON.items()},
               **TOO_DEEP_FOR_TORCHLINT}
    for name, text in sources.items():
        put(d, name, text)
    names = sorted(sources)
    started = time.perf_counter()
    first = run_torchlint(["--isolated", "--fix", *names], cwd=d, timeout=600)
    seconds = time.perf_counter() - started
    second = run_torchlint(["--isolated", "--fix", *names], cwd=d, timeout=600)
    return SimpleNamespace(dir=d, sources=sources, first=first, second=second, seconds=seconds)


def test_a_5mb_generated_file_is_fixed(big):
    text = big.sources["big.py"]
    assert len(text.encode()) >= 5_000_000
    no_traceback(big.first)
    assert (big.dir / "big.py").read_text() == text.replace("F.upsample", "F.interpolate")
    assert big.seconds < 300, big.seconds


def test_a_line_too_long_to_check_is_an_error_for_its_file_only(tmp_path):
    """Issue 36, item 9: one line is one piece for libcst's parser, which holds
    about 1,000 bytes per character of code while it works (an 8.4 MB one-line
    file passed 11.7 GB). A line over ``MAX_LINE_CHARS`` is an error for its
    file, like a file over 10 MB; a line at the limit is still checked."""
    def one_line(statements: int) -> str:
        return "import torch.nn.functional as F\n" + "; ".join(["y = F.upsample(x)"] * statements) + "\n"

    (tmp_path / "long.py").write_text(one_line(6_000))  # 113,998 characters on line 2
    (tmp_path / "ok.py").write_text(one_line(5_000))  # 94,998
    result = run_torchlint(["--isolated", "--no-cache", "long.py", "ok.py"], cwd=tmp_path)
    no_traceback(result)
    assert result.returncode == 2
    assert ("torchlint: error: long.py: line 2 is too long to check (113,998 characters; the limit is "
            "100,000: generated or minified code)") in result.stderr
    assert result.stdout.count("ok.py:2:") == 5_000 and "long.py:" not in result.stdout
    piped = run_torchlint(["--isolated", "--stdin-filename", "long.py"], cwd=tmp_path, input=one_line(6_000))
    assert piped.returncode == 2 and "long.py: line 2 is too long to check" in piped.stderr
    # The language server refuses the same document with the same words.
    from torchlint.frontends.server import too_large

    assert "line 2 is too long to check (113,998 characters" in too_large(one_line(6_000))
    assert too_large(one_line(5_000)) is None


@pytest.mark.parametrize("name", sorted(NESTED))
def test_deep_nesting_python_accepts_is_checked_and_fixed(big, name):
    source = big.sources[name]
    compile(source, name, "exec")
    assert (big.dir / name).read_text() == source.replace("F.upsample", "F.interpolate")
    assert not stderr_about(big.first, name), big.first.stderr


@pytest.mark.parametrize("name", sorted(TOO_DEEP_FOR_PYTHON))
def test_nesting_python_refuses_is_a_clean_error(big, name):
    source, message = TOO_DEEP_FOR_PYTHON[name]
    with pytest.raises(SyntaxError, match=message):
        compile(source, name, "exec")
    lines = stderr_about(big.first, name)
    assert len(lines) == 1 and "cannot parse" in lines[0] and message in lines[0], big.first.stderr


@pytest.mark.parametrize("name", sorted(TOO_DEEP_FOR_TORCHLINT))
def test_nesting_too_deep_to_analyse_is_skipped_with_a_warning(big, name):
    lines = stderr_about(big.first, name)
    assert len(lines) == 1 and lines[0].startswith("torchlint: warning: "), big.first.stderr
    assert f"nested more than {MAX_DEPTH} levels deep" in lines[0]
    assert (big.dir / name).read_text() == big.sources[name]


def test_big_and_deep_files_settle_after_one_fix(big):
    assert big.first.returncode == 2  # the two files Python refuses
    assert "Fixed" not in big.second.stdout
    no_traceback(big.second)


# --------------------------------------------------------------------------
# the file system
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    d = tmp_path_factory.mktemp("tree")
    put(d, "x.py/inner.py", UPSAMPLE)  # a directory named like a module
    put(d, "x.py/deeper/y.py", CUDA)
    put(d, "sub/ok.py", UPSAMPLE)
    os.symlink("self.py", d / "self.py")  # a link to itself
    os.symlink("pong.py", d / "ping.py")  # two links to each other
    os.symlink("ping.py", d / "pong.py")
    os.symlink("..", d / "sub" / "up")  # a directory link to its parent: never followed
    runs = in_parallel({
        "dir_named_py": lambda: run_torchlint(["--isolated", "x.py"], cwd=d),
        "walk": lambda: run_torchlint(["--isolated", "."], cwd=d),
        "loops": lambda: run_torchlint(["--isolated", "self.py", "ping.py", "sub/ok.py"], cwd=d),
        "through_up": lambda: run_torchlint(["--isolated", "sub/up/sub/ok.py"], cwd=d),
    })
    return SimpleNamespace(dir=d, **runs)


def test_a_directory_named_x_py_is_searched_not_read(tree):
    result = tree.dir_named_py
    assert result.returncode == 1, result
    assert result.stderr == ""
    assert [line.split(":")[0] for line in diagnostics(result)] == [
        os.path.join("x.py", "deeper", "y.py"), os.path.join("x.py", "inner.py")]


def test_symlink_loops_named_explicitly_are_clear_errors(tree):
    result = tree.loops
    assert result.returncode == 2
    no_traceback(result)
    for name in ("self.py", "ping.py"):
        lines = stderr_about(result, name)
        assert len(lines) == 1 and "symbolic link loop" in lines[0], result.stderr
    assert diagnostics(result) == ["sub/ok.py" + UPSAMPLE_LINE]


def test_symlink_loops_found_in_a_directory_are_reported_and_the_walk_ends(tree):
    result = tree.walk
    assert result.returncode == 2
    no_traceback(result)
    for name in ("self.py", "ping.py", "pong.py"):
        lines = stderr_about(result, f"{name}:")
        assert len(lines) == 1 and "cannot read" in lines[0], result.stderr
    # sub/up (-> ..) is not followed: every real file once
    paths = [line.split(":")[0] for line in diagnostics(result)]
    assert paths == [os.path.join(".", p) for p in ("sub/ok.py", "x.py/deeper/y.py", "x.py/inner.py")]
    assert tree.through_up.returncode == 1 and len(diagnostics(tree.through_up)) == 1


def test_a_path_vanishing_mid_run(tmp_path, monkeypatch):
    """Files found by the walk are deleted while the run reads the first one
    (the CLI in-process, the read of ``a.py`` deleting the others)."""
    from torchlint.run import runner

    d = tmp_path / "proj"
    real_read = runner.read_source

    def read_and_delete(path):
        if path.endswith("a.py") and (d / "b.py").exists():
            (d / "b.py").unlink()
            shutil.rmtree(d / "sub")
        return real_read(path)

    monkeypatch.setattr(runner, "read_source", read_and_delete)
    monkeypatch.chdir(tmp_path)
    runs = {}
    for mode in ("check", "fix"):
        for name in ("a.py", "b.py", "sub/c.py", "z.py"):
            put(d, name, UPSAMPLE)
        args = ["--isolated", "--no-cache", *(["--fix"] if mode == "fix" else []), "proj"]
        runs[mode] = _in_process(args)
    for mode, result in runs.items():
        no_traceback(result)
        assert result.returncode == 2, (mode, result)
        for name in ("b.py", "c.py"):
            lines = stderr_about(result, name)
            assert len(lines) == 1 and "no such file" in lines[0].lower(), result.stderr
    assert diagnostics(runs["check"]) == [os.path.join("proj", n) + UPSAMPLE_LINE for n in ("a.py", "z.py")]
    assert (d / "z.py").read_text() == UPSAMPLE_FIXED  # fixed by the --fix run; the deleted ones not recreated
    assert not (d / "b.py").exists() and leftovers(d) == []


def _in_process(args, stdin=None) -> SimpleNamespace:
    """The CLI run in this process (so that monkeypatches reach it, and the workers it forks)."""
    from torchlint.frontends import cli

    stdout, stderr = io.StringIO(), io.StringIO()
    status = cli.main(args, stdout=stdout, stderr=stderr, stdin=stdin)
    return SimpleNamespace(returncode=status, stdout=stdout.getvalue(), stderr=stderr.getvalue())


def test_runner_and_writer_on_a_path_that_is_gone(tmp_path):
    from torchlint.engine.linter import Engine
    from torchlint.rules import all_rules

    args = SimpleNamespace(fix=True, diff=False, unsafe_fixes=False)
    report = process_file(str(tmp_path / "gone.py"), Engine(all_rules()), args)
    assert report.diagnostics == [] and len(report.errors) == 1 and "No such file" in report.errors[0]
    with pytest.raises(SourceError, match="cannot write"):
        write_atomically(str(tmp_path / "gone.py"), b"x = 1\n")
    assert list(tmp_path.iterdir()) == []  # nothing created, no temporary file


def test_fix_in_an_immutable_directory_is_an_error_and_other_files_are_still_fixed(tmp_path):
    # As root, chmod does not stop writes; an immutable directory (chattr +i) refuses new files,
    # so the temporary file of the atomic replace cannot be made.
    if shutil.which("chattr") is None:
        pytest.skip("needs chattr")
    locked = tmp_path / "locked"
    inside = put(locked, "a.py", UPSAMPLE, aged=True)
    other = put(tmp_path, "b.py", UPSAMPLE)
    if subprocess.run(["chattr", "+i", str(locked)], capture_output=True).returncode != 0:
        pytest.skip("cannot set the immutable attribute here (needs root and a supporting filesystem)")
    try:
        before = fingerprint(inside)
        result = run_torchlint(["--isolated", "--fix", "locked/a.py", "b.py"], cwd=tmp_path)
        after = fingerprint(inside)
    finally:
        subprocess.run(["chattr", "-i", str(locked)], check=True)
    assert result.returncode == 2, result
    no_traceback(result)
    lines = stderr_about(result, "a.py")
    assert len(lines) == 1 and "cannot write" in lines[0], result.stderr
    assert after == before
    assert other.read_text() == UPSAMPLE_FIXED
    assert "locked/a.py" + UPSAMPLE_LINE in out_lines(result)
    assert leftovers(tmp_path) == []


# --- permissions, owner, mtime -------------------------------------------------------


def test_fix_keeps_owner_and_group_and_leaves_the_directory_alone_when_nothing_changes(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    owned = put(tmp_path / "fixed", "owned.py", UPSAMPLE, mode=0o664)
    os.chown(owned, 1234, 5678)
    quiet = tmp_path / "quiet"
    put(quiet, "clean.py", "import torch\n", aged=True)
    put(quiet, "unfixable.py", "import torch\nx = torch.zeros(3)\nx.volatile = True\n", aged=True)
    put(quiet, "unsafe_only.py", CUDA, aged=True)
    os.utime(quiet, ns=(10**18, 10**18))
    before = {p.name: fingerprint(p) for p in quiet.iterdir()}
    runs = in_parallel({
        "fixed": lambda: run_torchlint(["--isolated", "--fix", "fixed"], cwd=tmp_path),
        "quiet": lambda: run_torchlint(["--isolated", "--fix", "quiet"], cwd=tmp_path),
    })
    assert runs["fixed"].returncode == 0, runs["fixed"]
    st = os.stat(owned)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1234, 5678, 0o664)
    assert owned.read_text() == UPSAMPLE_FIXED
    assert runs["quiet"].returncode == 1
    assert {p.name: fingerprint(p) for p in quiet.iterdir()} == before
    assert os.stat(quiet).st_mtime_ns == 10**18  # no temporary file was made there


# --- interrupts ----------------------------------------------------------------------


def _interrupted_fix(tmp_path: Path, sig: int) -> SimpleNamespace:
    count = 400
    padding = "# " + "x" * 2000 + "\n"  # bigger files: more time spent writing
    originals = {}
    for index in range(count):
        originals[f"m{index:03d}.py"] = UPSAMPLE + padding * 20
        put(tmp_path, f"m{index:03d}.py", originals[f"m{index:03d}.py"])
    process = subprocess.Popen([sys.executable, "-m", "torchlint", "--isolated", "--fix", "."], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=interruptible_child)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and process.poll() is None:
            # interrupt once a few files are fixed
            if sum("F.interpolate" in (tmp_path / f"m{i:03d}.py").read_text() for i in range(0, count, 40)) >= 2:
                break
            time.sleep(0.02)
        process.send_signal(sig)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    states = {}
    for name, text in originals.items():
        now = (tmp_path / name).read_text()
        states[name] = "original" if now == text else "fixed" if now == text.replace("F.upsample", "F.interpolate") \
            else "broken"
    return SimpleNamespace(returncode=process.returncode, stdout=stdout, stderr=stderr, states=states)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupting_fix_leaves_every_file_original_or_fixed(tmp_path, sig):
    result = _interrupted_fix(tmp_path, sig)
    assert "broken" not in result.states.values()
    assert leftovers(tmp_path) == []
    assert "fixed" in result.states.values()
    if "original" not in result.states.values():
        pytest.skip("the run finished before the signal arrived")
    no_traceback(result)
    if sig == signal.SIGINT:
        assert result.returncode == 130, result
        assert "torchlint: interrupted" in result.stderr
    else:
        assert result.returncode == -signal.SIGTERM


@pytest.fixture
def interruptible():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_an_interrupt_during_a_write_waits_until_the_file_is_replaced(tmp_path, monkeypatch, interruptible):
    path = put(tmp_path, "a.py", "old\n")
    real_fsync = os.fsync

    def interrupted_fsync(fd):
        signal.raise_signal(signal.SIGINT)  # Ctrl-C while the temporary file is half done
        time.sleep(0.05)
        real_fsync(fd)

    monkeypatch.setattr(fileio_module.os, "fsync", interrupted_fsync)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(str(path), b"new\n")
    assert path.read_text() == "new\n"  # replaced completely, then interrupted
    assert leftovers(tmp_path) == []


def test_an_interrupt_in_a_worker_thread_write_still_cleans_up(tmp_path, monkeypatch):
    # signals cannot be deferred off the main thread: an exception mid-write removes the temporary file
    path = put(tmp_path, "a.py", "old\n")

    def failing_replace(src, dst, **at_directory):
        raise KeyboardInterrupt

    monkeypatch.setattr(fileio_module.os, "replace", failing_replace)
    errors = []
    thread = threading.Thread(target=lambda: _capture(errors, write_atomically, str(path), b"new\n"))
    thread.start()
    thread.join()
    assert errors and isinstance(errors[0], KeyboardInterrupt)
    assert path.read_text() == "old\n"
    assert leftovers(tmp_path) == []


def _capture(errors, function, *args):
    try:
        function(*args)
    except BaseException as exc:  # noqa: B902 - the point is to see it
        errors.append(exc)


# --------------------------------------------------------------------------
# never imports or executes the code it reads
# --------------------------------------------------------------------------

# Each file writes a marker named after itself when imported or run.
PLANTED_MODULES = [
    "sitecustomize.py", "usercustomize.py",  # imported at interpreter start-up when on sys.path
    "argparse.py", "libcst.py", "torch.py", "difflib.py", "tomllib.py", "fnmatch.py", "json.py",  # shadowing
    "conftest.py", "setup.py", "__main__.py",
    "pkg/__init__.py", "pkg/__main__.py", "pkg/mod.py",
]


def _marker_code(name: str, marker_dir: Path) -> str:
    marker = marker_dir / ("MARKER-" + name.replace("/", "-"))
    return (
        "import torch.nn.functional as F\n"
        f"open({str(marker)!r}, 'w').write('executed')\n"
        "y = F.upsample(x)\n"
    )


def _notebook(marker_dir: Path) -> str:
    cell = _marker_code("notebook.ipynb", marker_dir)
    return json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                   "source": cell.splitlines(keepends=True)}],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5,
    }, indent=1) + "\n"


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    base = tmp_path_factory.mktemp("planted")
    markers = base / "markers"
    markers.mkdir()
    project = base / "project"
    for name in PLANTED_MODULES:
        put(project, name, _marker_code(name, markers))
    put(project, "notebook.ipynb", _notebook(markers))
    put(project, "pyproject.toml", "[tool.torchlint]\nextend-select = ['TL']\n")
    console = Path(sys.executable).parent / "torchlint"
    env = dict(os.environ)
    env.pop("PYTHONSTARTUP", None)

    def run(args, command=None, input=""):
        command = command or [sys.executable, "-m", "torchlint"]
        return subprocess.run([*command, *args], cwd=project, capture_output=True, text=True, timeout=300, env=env,
                              input=input)

    jobs = {
        "check": lambda: run(["."]),
        "diff": lambda: run(["--diff", "--unsafe-fixes", "."]),
        "stdin": lambda: run(["--stdin-filename", "torch.py", "-"], input=_marker_code("stdin", markers)),
        "console": (lambda: run(["."], [str(console)])) if console.exists() else None,
    }
    results = in_parallel({k: v for k, v in jobs.items() if v})
    results["fix"] = run(["--fix", "--unsafe-fixes", "."])
    results["noqa"] = run(["--add-noqa", "."])
    return SimpleNamespace(markers=markers, project=project, has_console=console.exists(), **results)


def test_linting_never_imports_or_runs_the_checked_code(planted):
    assert sorted(p.name for p in planted.markers.iterdir()) == []
    for name in ("check", "diff", "stdin", "noqa", "fix"):
        result = getattr(planted, name)
        no_traceback(result)
        assert result.returncode in (0, 1), (name, result.returncode, result.stderr)
    # the files were really read and fixed
    assert len(diagnostics(planted.check)) == len(PLANTED_MODULES) + 1
    assert "Fixed" in planted.fix.stdout
    assert "F.interpolate" in (planted.project / "pkg" / "__init__.py").read_text()
    assert "F.interpolate" in (planted.project / "notebook.ipynb").read_text()


def test_the_console_script_never_imports_the_checked_code(planted):
    if not planted.has_console:
        pytest.skip("no torchlint console script next to this interpreter")
    no_traceback(planted.console)
    assert planted.console.returncode in (0, 1)
    assert sorted(p.name for p in planted.markers.iterdir()) == []


# --------------------------------------------------------------------------
# issue 18: hostile input that used to crash, hang or pass silently
# --------------------------------------------------------------------------

AND_CHAIN = "import torch.nn.functional as F\ny = F.upsample(x)\nz = " + " and ".join(["a"] * 8000) + "\n"
DOTTED_IMPORT = "import torch.nn.functional as F\ny = F.upsample(x)\nimport " + ".".join(["a"] * 8000) + "\n"


def _notebook_json(*cells: str, indent=1) -> str:
    return json.dumps({
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# title\n"]}]
        + [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": cell.splitlines(keepends=True)} for cell in cells],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5,
    }, indent=indent) + "\n"


def padding_for_workers(files: int) -> str:
    """Comment lines that make ``files`` files hold the source workers start for."""
    from torchlint.run.session import PARALLEL_MIN_BYTES

    return "# padding\n" * (PARALLEL_MIN_BYTES // 10 // files + 1)


@pytest.mark.parametrize("jobs", ["-j1", "-j2"])
def test_chains_flat_in_ast_but_nested_in_libcst_are_skipped_not_a_crash(tmp_path, jobs):
    """An 8,000-term ``and`` chain is one level in Python's tree and 8,000 in
    libcst's, whose parser overflowed the C stack (a segfault; with workers,
    a run that never ended)."""
    put(tmp_path, "chain.py", AND_CHAIN)
    put(tmp_path, "dotted.py", DOTTED_IMPORT)
    for i in range(8):  # enough source for worker processes
        put(tmp_path, f"ok{i}.py", UPSAMPLE + padding_for_workers(8))
    result = run_torchlint(["--isolated", "--no-cache", jobs, "."], cwd=tmp_path, timeout=300)
    no_traceback(result)
    assert result.returncode == 1, result  # the ok files' findings; skipping is no error
    for name in ("chain.py", "dotted.py"):
        lines = stderr_about(result, name)
        assert len(lines) == 1 and lines[0].startswith("torchlint: warning: "), result.stderr
        assert f"nested more than {MAX_DEPTH} levels deep" in lines[0]
    assert len(diagnostics(result)) == 8


def test_chains_just_below_the_depth_limit_are_still_checked(tmp_path):
    put(tmp_path, "chain.py", UPSAMPLE + "z = " + " and ".join(["a"] * (MAX_DEPTH - 100)) + "\n")
    result = run_torchlint(["--isolated", "--no-cache", "chain.py"], cwd=tmp_path, timeout=300)
    assert result.returncode == 1 and diagnostics(result) == ["chain.py" + UPSAMPLE_LINE], result


def test_flake8_on_a_long_boolean_chain_neither_dies_nor_hangs(tmp_path):
    from conftest import run_flake8

    put(tmp_path, "chain.py", AND_CHAIN)
    result = run_flake8(["--select", "TL", "chain.py"], cwd=tmp_path, timeout=300)
    no_traceback(result)
    assert result.returncode == 0, result  # skipped silently, as the plugin does with what it cannot analyse


@pytest.mark.parametrize("how", [signal.SIGSEGV, signal.SIGKILL])
def test_a_worker_killed_by_a_signal_is_an_error_for_its_file_and_the_run_ends(tmp_path, monkeypatch, how):
    """The worker checking ``crash.py`` dies (as a segfaulting parser would);
    before, the pool waited for its result forever."""
    from torchlint.run import session

    real = session.process_file

    def dying(path, *args, **kwargs):
        if path.endswith("crash.py"):
            faulthandler.disable()  # pytest's: it would print the worker's stack
            os.kill(os.getpid(), how)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(session, "process_file", dying)
    monkeypatch.setattr(session, "PARALLEL_MIN_BYTES", 0)  # workers even for this little source
    monkeypatch.chdir(tmp_path)
    for i in range(12):
        put(tmp_path, f"ok{i:02}.py", UPSAMPLE)
    put(tmp_path, "crash.py", UPSAMPLE)
    result = _in_process(["--isolated", "--no-cache", "-j2", "."])
    assert result.returncode == 2, result
    lines = stderr_about(result, "crash.py")
    assert lines == [f"torchlint: error: ./crash.py: not checked: the process checking it was killed by {how.name}"]
    assert len(diagnostics(result)) == 12  # every other file's findings, in order
    assert diagnostics(result) == sorted(diagnostics(result))


def test_killing_a_worker_from_outside_never_hangs_the_run(tmp_path):
    """The real command; one of its workers is killed with SIGKILL mid-run."""
    slow = "import torch.nn.functional as F\ny = F.upsample(x)\nz = " + " + ".join(["a"] * 1200) + "\n"
    slow += padding_for_workers(16)  # enough source for worker processes
    for i in range(16):
        put(tmp_path, f"f{i:02}.py", slow)
    process = subprocess.Popen([sys.executable, "-m", "torchlint", "--isolated", "--no-cache", "-j2", "."],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        killed = _kill_a_child(process.pid, deadline=time.monotonic() + 60)
        stdout, stderr = process.communicate(timeout=300)
    finally:
        process.kill()
    result = SimpleNamespace(returncode=process.returncode, stdout=stdout, stderr=stderr)
    no_traceback(result)
    assert killed, "no worker to kill"
    checked = {line.split(":")[0] for line in diagnostics(result)}
    failed = {line.split(": ")[2] for line in stderr.splitlines() if "not checked" in line}
    assert len(failed) <= 1  # at most the file the killed worker held (none if it was between files)
    assert checked | failed == {f"./f{i:02}.py" for i in range(16)} and not checked & failed, result
    assert result.returncode == (2 if failed else 1)


def test_stopping_the_pool_ends_its_workers_and_its_manager_thread():
    """``_stop`` must end both before the interpreter's exit: a manager thread
    left running can close its wake-up pipe while exit writes to it (CPython
    3.11), and the run then ends with "OSError: Bad file descriptor" printed
    after its report. ``shutdown(wait=False)`` forgets both, so they must be
    taken first."""
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing

    from torchlint.run.session import _stop

    executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
    busy = executor.submit(time.sleep, 60)
    deadline = time.monotonic() + 30
    while not busy.running() and time.monotonic() < deadline:
        time.sleep(0.01)
    processes = list(executor._processes.values())
    manager = executor._executor_manager_thread
    started = time.monotonic()
    _stop(executor)
    assert time.monotonic() - started < 30  # the sleeping worker was not waited for
    assert not manager.is_alive()
    for process in processes:
        process.join(timeout=10)
        assert not process.is_alive()


def _kill_a_child(pid: int, deadline: float) -> bool:
    """SIGKILL one child process of ``pid`` (a worker) once it has one."""
    while time.monotonic() < deadline:
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            return False
        if children:
            time.sleep(0.5)  # let it start on a file
            try:
                os.kill(int(children[0]), signal.SIGKILL)
            except ProcessLookupError:
                continue
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(scope="module")
def special_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("special")
    put(d, "proj/ok.py", UPSAMPLE)
    os.mkfifo(d / "proj" / "fifo.py")
    os.mkfifo(d / "proj" / "fifo.ipynb")
    os.symlink("/dev/zero", d / "proj" / "zero.py")
    with open(d / "proj" / "huge.py", "wb") as handle:  # sparse: 11 MB that take no disk space
        handle.truncate(11 * 1024 * 1024)
    names = ["proj/fifo.py", "proj/zero.py", "proj/huge.py", "proj/fifo.ipynb", "proj/ok.py"]
    runs = in_parallel({
        "walk": lambda: run_torchlint(["--isolated", "--no-cache", "proj"], cwd=d, timeout=120),
        "named": lambda: run_torchlint(["--isolated", "--no-cache", *names], cwd=d, timeout=120),
        "fix": lambda: run_torchlint(["--isolated", "--fix", *names], cwd=d, timeout=120),
    })
    return SimpleNamespace(dir=d, **runs)


@pytest.mark.parametrize("run", ["walk", "named", "fix"])
def test_fifos_devices_and_huge_files_are_reported_never_read(special_files, run):
    result = getattr(special_files, run)
    no_traceback(result)
    assert result.returncode == 2, result
    assert len(stderr_about(result, "fifo.py")) == 1 and "not a regular file (a FIFO)" in stderr_about(result, "fifo.py")[0]
    assert "not a regular file (a FIFO)" in stderr_about(result, "fifo.ipynb")[0]
    assert "too large to check (11.0 MB; the limit is 10.0 MB)" in stderr_about(result, "huge.py")[0]
    if run != "walk":  # in a walk, zero.py is the same file as ... nothing else: reported too
        assert "not a regular file (a character device)" in stderr_about(result, "zero.py")[0]
    assert any(line.endswith("ok.py" + UPSAMPLE_LINE) for line in diagnostics(result)) or run == "fix"
    assert os.path.getsize(special_files.dir / "proj" / "huge.py") == 11 * 1024 * 1024


def test_a_notebook_nested_too_deeply_is_unreadable_and_the_others_are_kept(tmp_path):
    deep = _notebook_json(UPSAMPLE).replace('"outputs": []', '"outputs": ' + "[" * 100_000 + "]" * 100_000)
    put(tmp_path, "deep.ipynb", deep)
    put(tmp_path, "ok.ipynb", _notebook_json(UPSAMPLE))
    put(tmp_path, "ok.py", UPSAMPLE)
    result = run_torchlint(["--isolated", "--no-cache", "."], cwd=tmp_path)
    no_traceback(result)
    assert result.returncode == 2, result
    assert stderr_about(result, "deep.ipynb") == [
        "torchlint: error: ./deep.ipynb: not a notebook: the JSON is nested too deeply to read"]
    assert diagnostics(result) == ["./ok.ipynb:cell 2" + UPSAMPLE_LINE, "./ok.py" + UPSAMPLE_LINE]


UNDECODABLE = b"bad\xff\xe9.py"


@pytest.mark.parametrize("output_format", ["concise", "full", "json", "sarif", "github"])
@pytest.mark.parametrize("encoding", ["utf-8", "ascii:strict"])
def test_undecodable_file_names_never_crash_the_output(tmp_path, output_format, encoding):
    os.makedirs(tmp_path / "src")
    with open(os.path.join(os.fsencode(tmp_path / "src"), UNDECODABLE), "wb") as handle:
        handle.write(UPSAMPLE.encode())
    with open(os.path.join(os.fsencode(tmp_path / "src"), b"broken\xfe.py"), "wb") as handle:
        handle.write(b"x = (\n")
    put(tmp_path, "src/caf\u00e9.py", UPSAMPLE)
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    result = subprocess.run([sys.executable, "-m", "torchlint", "--isolated", "--no-cache", "--output-format",
                             output_format, "src"], cwd=tmp_path, capture_output=True, env=env, timeout=120)
    stdout, stderr = result.stdout.decode("utf-8"), result.stderr.decode("utf-8")
    no_traceback(SimpleNamespace(stdout=stdout, stderr=stderr))
    assert result.returncode == 2, stderr
    assert "src/broken\\xfe.py:1:5: cannot parse" in stderr  # the undecodable byte as \xNN
    if output_format == "json":
        items = json.loads(stdout)
        assert {item["filename"] for item in items if item["code"]} == {"src/bad\\xff\\xe9.py", "src/caf\u00e9.py"}
        # the parse error is an item too (code null), under the same escaped name
        assert [item["filename"] for item in items if item["code"] is None] == ["src/broken\\xfe.py"]
    elif output_format == "sarif":
        run = json.loads(stdout)["runs"][0]
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
        assert uris == {"src/bad%FF%E9.py", "src/caf%C3%A9.py"}  # the file's real bytes, percent-encoded
        assert "src/broken\\xfe.py" in run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]
    else:
        assert "src/bad\\xff\\xe9.py" in stdout
        if encoding == "ascii:strict" and output_format != "github":
            assert "src/caf\\xe9.py" in stdout  # what the stream cannot encode, backslash-escaped
    if encoding.startswith("ascii"):
        stdout.encode("ascii")


def test_a_directory_that_cannot_be_listed_is_an_error(tmp_path, monkeypatch):
    """In-process (tests run as root, whom permissions do not stop): listing ``locked`` fails."""
    put(tmp_path, "proj/ok.py", UPSAMPLE)
    put(tmp_path, "proj/locked/hidden.py", UPSAMPLE)
    real_scandir = os.scandir

    def scandir(path="."):
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.chdir(tmp_path)
    walked = _in_process(["--isolated", "--no-cache", "proj"])
    named = _in_process(["--isolated", "--no-cache", "proj/locked"])
    for result in (walked, named):
        assert result.returncode == 2, result
        assert stderr_about(result, "locked") == [
            "torchlint: error: proj/locked: cannot list the directory: Permission denied"]
    assert diagnostics(walked) == ["proj/ok.py" + UPSAMPLE_LINE]
    assert "All checks passed" not in named.stdout


def test_a_directory_that_cannot_be_listed_is_an_error_for_an_ordinary_user():
    """The real command, run as ``nobody`` on a directory with mode 000."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run as another user")
    import tempfile

    with tempfile.TemporaryDirectory(dir="/tmp") as top:
        os.chmod(top, 0o755)
        put(Path(top), "proj/ok.py", UPSAMPLE, mode=0o644)
        put(Path(top), "proj/locked/hidden.py", UPSAMPLE, mode=0o644)
        os.chmod(Path(top) / "proj", 0o755)
        os.chmod(Path(top) / "proj" / "locked", 0o000)
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                   sys.executable, "-m", "torchlint", "--isolated", "--no-cache"]
        probe = subprocess.run([*command, "--version"], cwd=top, capture_output=True, text=True)
        if probe.returncode != 0:
            pytest.skip(f"torchlint cannot run as nobody here: {probe.stderr[-200:]}")
        for args in (["proj"], ["proj/locked"]):
            result = subprocess.run([*command, *args], cwd=top, capture_output=True, text=True, timeout=120)
            no_traceback(result)
            assert result.returncode == 2, result
            assert "torchlint: error: proj/locked: cannot list the directory: Permission denied" in result.stderr


def test_reading_a_closed_stdin_is_a_clear_error(tmp_path):
    for args in (["-"], ["--stdin-filename", "x.py"]):
        result = subprocess.run([sys.executable, "-m", "torchlint", "--isolated", *args], cwd=tmp_path,
                                capture_output=True, text=True, timeout=120, stdin=None,
                                preexec_fn=lambda: os.close(0))
        no_traceback(result)
        assert result.returncode == 2, result
        assert result.stderr == "torchlint: error: cannot read stdin: it is closed\n"


def test_a_deeply_nested_pyproject_is_a_clear_error(tmp_path):
    put(tmp_path, "pyproject.toml", "[tool.torchlint]\nselect = " + "[" * 50_000 + "]" * 50_000 + "\n")
    put(tmp_path, "a.py", UPSAMPLE)
    result = run_torchlint(["a.py"], cwd=tmp_path)
    no_traceback(result)
    assert result.returncode == 2, result
    assert result.stderr == "torchlint: error: pyproject.toml: cannot read: nested too deeply\n"


def test_a_notebook_on_stdin_is_read_as_a_notebook(tmp_path):
    notebook = _notebook_json("import torch\n", "import torch.nn.functional as F\ny = F.upsample(x)\n")
    checked = run_torchlint(["--isolated", "--stdin-filename", "nb.ipynb"], cwd=tmp_path, input=notebook)
    assert checked.returncode == 1, checked
    assert diagnostics(checked) == ["nb.ipynb:cell 3:2:7: " + TL103]
    fixed = run_torchlint(["--isolated", "--fix", "--stdin-filename", "nb.ipynb"], cwd=tmp_path, input=notebook)
    assert fixed.returncode == 0, fixed
    assert fixed.stdout == notebook.replace("F.upsample", "F.interpolate")  # the notebook's JSON, only the cell changed
    assert "Fixed 1 problem" in fixed.stderr
    broken = run_torchlint(["--isolated", "--fix", "--stdin-filename", "nb.ipynb"], cwd=tmp_path, input="{")
    assert broken.returncode == 2 and broken.stdout == "{" and "not a notebook" in broken.stderr


COMPILER_REFUSES = {
    "late_future.py": "import torch\nx = 1\nfrom __future__ import annotations\n",
    "unknown_future.py": "from __future__ import braces_please\nimport torch\n",
    "module_return.py": "import torch\nreturn torch.zeros(1)\n",
    "class_return.py": "import torch\nclass A:\n    return 1\n",
    "module_break.py": "import torch\nif torch:\n    break\n",
    "loop_else_continue.py": "import torch\nfor a in b:\n    pass\nelse:\n    continue\n",
    "module_yield.py": "import torch\nx = yield torch\n",
    "class_yield.py": "import torch\nclass A:\n    def f(self):\n        yield 1\n    yield torch\n",
    "grouped_yield.py": "import torch\nprint((\n    yield torch\n))\n",
    "comprehension_yield.py": "import torch\ndef f():\n    return [(yield torch) for x in y]\n",
    "module_await.py": "import torch\nawait torch.x()\n",
    "sync_await.py": "import torch\ndef f():\n    await torch.x()\n",
    "module_nonlocal.py": "import torch\nnonlocal torch\n",
    "late_global.py": "import torch\ndef f():\n    torch = 1\n    global torch\n",
    "bare_except_first.py": "import torch\ntry:\n    pass\nexcept:\n    pass\nexcept ValueError:\n    pass\n",
    "starred_target.py": "import torch\n*a = torch.x\n",
    "async_for.py": "import torch\ndef f():\n    async for a in b:\n        pass\n",
    "async_yield_from.py": "import torch\nasync def f():\n    yield from torch.x\n",
    "async_generator_return.py": "import torch\nasync def f():\n    yield torch\n    return 1\n",
    "async_comprehension.py": "import torch\ndef f(y):\n    return [x async for x in torch.y]\n",
    "class_default_yield.py": "import torch\nclass A:\n    def f(self, x=(yield torch)):\n        pass\n",
    "generator_yield.py": "import torch\ndef f(y):\n    return ((yield x) for x in torch.y)\n",
    "debug_assignment.py": "import torch\n__debug__ = torch\n",
}


@pytest.fixture(scope="module")
def compiler_refuses(tmp_path_factory):
    d = tmp_path_factory.mktemp("compiler")
    for name, text in COMPILER_REFUSES.items():
        put(d, name, text)
    put(d, "ok.py", UPSAMPLE)
    return SimpleNamespace(dir=d, check=run_torchlint(["--isolated", "--no-cache", "."], cwd=d),
                           fix=run_torchlint(["--isolated", "--fix", "."], cwd=d))


@pytest.mark.parametrize("name", sorted(COMPILER_REFUSES))
def test_what_the_compiler_refuses_is_reported_as_it_does(compiler_refuses, name):
    source = COMPILER_REFUSES[name]
    ast_module = __import__("ast")
    ast_module.parse(source)  # the parser accepts it ...
    with pytest.raises(SyntaxError) as refused:  # ... the compiler does not
        compile(source, name, "exec", dont_inherit=True)
    expected = f"torchlint: error: ./{name}:{refused.value.lineno}:{refused.value.offset}: cannot parse: {refused.value.msg}"
    for result in (compiler_refuses.check, compiler_refuses.fix):
        no_traceback(result)
        assert result.returncode == 2
        assert stderr_about(result, name) == [expected]
        assert diagnostics(compiler_refuses.check) == ["./ok.py" + UPSAMPLE_LINE]
    assert (compiler_refuses.dir / name).read_text() == source  # never written


# --------------------------------------------------------------------------
# issue 18: a user's edit during --fix, fixes that do not compile or use a
# deleted name, and temporary files of killed runs
# --------------------------------------------------------------------------

USER_EDIT = UPSAMPLE + "z = 1  # saved by the user while torchlint was fixing\n"


def _fix_in_process(tmp_path: Path, monkeypatch, *paths: str):
    import io

    from torchlint.frontends.cli import main

    monkeypatch.chdir(tmp_path)
    stdout, stderr = io.StringIO(), io.StringIO()
    status = main(["--isolated", "--no-cache", "--fix", *paths], stdout=stdout, stderr=stderr)
    return SimpleNamespace(returncode=status, stdout=stdout.getvalue(), stderr=stderr.getvalue())


def _notebook_text(code: str) -> str:
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": code.splitlines(keepends=True)}
    return json.dumps({"cells": [cell], "metadata": {"language_info": {"name": "python"}}, "nbformat": 4,
                       "nbformat_minor": 5}, indent=1) + "\n"


@pytest.mark.parametrize("how", ["rewritten", "replaced", "notebook"])
def test_fix_never_overwrites_an_edit_saved_while_it_worked(tmp_path, monkeypatch, how):
    """The user saves between torchlint's read and its write (made exact by
    hooking the engine): the edit stays, the file is an error (exit 2), the
    other file is still fixed."""
    name = "edited.ipynb" if how == "notebook" else "edited.py"
    original, user_edit = (UPSAMPLE, USER_EDIT)
    if how == "notebook":
        original, user_edit = _notebook_text(UPSAMPLE), _notebook_text(USER_EDIT)
    edited = put(tmp_path, name, original)
    other = put(tmp_path, "other.py", UPSAMPLE)
    from torchlint.engine.linter import Engine

    real_fix = Engine.fix

    def fix_while_the_user_saves(self, source, unsafe=False, **kwargs):
        result = real_fix(self, source, unsafe, **kwargs)
        if edited.read_text() != user_edit:
            if how == "replaced":
                put(tmp_path, "saved.tmp", user_edit).replace(edited)  # as editors save: a new file renamed
            else:
                edited.write_text(user_edit)  # in place (same inode)
        return result

    monkeypatch.setattr(Engine, "fix", fix_while_the_user_saves)
    result = _fix_in_process(tmp_path, monkeypatch, name, "other.py")
    assert edited.read_text() == user_edit
    assert other.read_text() == UPSAMPLE_FIXED
    assert result.returncode == 2
    assert f"{name}: changed on disk while torchlint was fixing it; not written" in result.stderr
    assert leftovers(tmp_path) == []


def test_add_noqa_never_overwrites_an_edit_saved_while_it_worked(tmp_path, monkeypatch):
    edited = put(tmp_path, "edited.py", UPSAMPLE)
    from torchlint.run import session

    real_add_noqa = session.add_noqa

    def add_noqa_while_the_user_saves(*args):
        edited.write_text(USER_EDIT)
        return real_add_noqa(*args)

    monkeypatch.setattr(session, "add_noqa", add_noqa_while_the_user_saves)
    import io

    from torchlint.frontends.cli import main

    monkeypatch.chdir(tmp_path)
    stderr = io.StringIO()
    status = main(["--isolated", "--add-noqa", "edited.py"], stdout=io.StringIO(), stderr=stderr)
    assert edited.read_text() == USER_EDIT and status == 2
    assert "changed on disk" in stderr.getvalue()


GLOBAL_AFTER_USE = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "def f(x):\n"
    "    y = F.sigmoid(x)\n"
    "    global torch\n"
    "    return y\n"
)


def test_a_fix_the_compiler_refuses_is_discarded_and_the_finding_stays(tmp_path):
    """``torch.sigmoid`` before ``global torch`` parses but does not compile."""
    path = put(tmp_path, "g.py", GLOBAL_AFTER_USE)
    compile(GLOBAL_AFTER_USE, "g.py", "exec")  # the original is valid
    result = run_torchlint(["--isolated", "--no-cache", "--fix", "g.py"], cwd=tmp_path)
    no_traceback(result)
    assert path.read_text() == GLOBAL_AFTER_USE
    assert result.returncode == 1
    assert [line.split(": ", 1)[1].split()[0] for line in diagnostics(result)] == ["TL104"]
    assert "TL104 fix discarded: the fix would produce invalid code (name 'torch' is used prior to global " \
           "declaration" in result.stderr


DELETED_TORCH = {
    "module": "import torch\nimport torch.nn.functional as F\ndel torch\ny = F.sigmoid(torch_input)\n",
    "global-trickery": (
        "import torch\nimport torch.nn.functional as F\n"
        "def forget():\n    global torch\n    del torch\n"
        "def f(x):\n    return F.sigmoid(x)\n"
        "forget()\ny = f(torch_input)\n"
    ),
    # A match statement's capture pattern rebinds torch; the scope analysis does not see it.
    "match-capture": (
        "import torch\nimport torch.nn.functional as F\n"
        "def f(x, command):\n    match command:\n        case torch:\n            pass\n"
        "    return F.sigmoid(x)\n"
        "y = f(torch_input, 3)\n"
    ),
}


@pytest.mark.parametrize("name", sorted(DELETED_TORCH))
def test_a_fix_never_spells_a_name_a_del_may_have_unbound(tmp_path, name):
    """``F.sigmoid`` -> ``torch.sigmoid`` would be a NameError after ``del torch`` (and call
    whatever ``case torch:`` captured)."""
    source = DELETED_TORCH[name]
    path = put(tmp_path, "d.py", source)
    result = run_torchlint(["--isolated", "--no-cache", "--fix", "d.py"], cwd=tmp_path)
    no_traceback(result)
    assert path.read_text() == source
    assert result.returncode == 1 and len(diagnostics(result)) == 1
    # the original runs (torch is imported by F's module): the fix must not break it
    run = subprocess.run([sys.executable, "-W", "ignore", "-c",
                          "import torch; torch_input = torch.zeros(2); exec(open('d.py').read())"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_temporary_files_of_a_killed_fix_are_removed_by_the_next_one(tmp_path):
    """``kill -9`` cannot be deferred: the temporary file stays. The next --fix
    removes it, and only it (not a live run's, not a user's look-alike)."""
    path = put(tmp_path, "a.py", UPSAMPLE)
    killed = subprocess.run([sys.executable, "-c", (
        "import os, signal, sys\n"
        "from torchlint.run import fileio\n"
        "fileio.os.replace = lambda *args, **at_directory: os.kill(os.getpid(), signal.SIGKILL)\n"  # killed mid-write
        "from torchlint.frontends.cli import main\n"
        "sys.exit(main(['--isolated', '--no-cache', '--fix', 'a.py']))\n")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL
    stray = leftovers(tmp_path)
    assert len(stray) == 1 and path.read_text() == UPSAMPLE
    live = put(tmp_path, f".torchlint-{os.getpid()}-abcd1234.tmp", "a live run's")
    users = [put(tmp_path, ".torchlint-notes.tmp", "mine"), put(tmp_path, f".torchlint-{_dead_pid()}-notes.txt", "")]
    result = run_torchlint(["--isolated", "--no-cache", "--fix", "a.py"], cwd=tmp_path)
    no_traceback(result)
    assert path.read_text() == UPSAMPLE_FIXED
    assert leftovers(tmp_path) == sorted(str(p) for p in [live, *users])


def test_a_deep_expression_in_a_def_no_rule_can_flag_does_not_hide_the_other_findings(tmp_path):
    """The depth limit guards what libcst parses: a check parses only the defs
    some rule may flag (``narrowing.py``), so a generated ``and`` chain in an
    unrelated function no longer makes the whole file "too deep"; ``--fix``,
    which parses the whole file, still skips it with the warning."""
    chain = " and ".join(["a"] * 8000)
    body = "".join(f"    x{i} = {i}\n" for i in range(4))  # long enough to be cut (``cutting.MIN_BODY_LINES``)
    text = (f"import torch.nn.functional as F\n\n\ndef table(a):\n{body}    return {chain}\n\n\n"
            "def scale(x):\n    return F.upsample(x, scale_factor=2)\n")
    put(tmp_path, "mixed.py", text)
    checked = run_torchlint(["--isolated", "--no-cache", "mixed.py"], cwd=tmp_path, timeout=300)
    no_traceback(checked)
    assert checked.returncode == 1 and [d.split(" ")[:2] for d in diagnostics(checked)] == [["mixed.py:13:14:", "TL103"]], checked
    assert not stderr_about(checked, "mixed.py"), checked.stderr
    from conftest import run_flake8

    flake8 = run_flake8(["--select", "TL", "mixed.py"], cwd=tmp_path, timeout=300)
    no_traceback(flake8)
    assert [line.split(" ")[:2] for line in flake8.stdout.splitlines()] == [["mixed.py:13:14:", "TL103"]], flake8
    fixed = run_torchlint(["--isolated", "--no-cache", "--fix", "mixed.py"], cwd=tmp_path, timeout=300)
    no_traceback(fixed)
    lines = stderr_about(fixed, "mixed.py")
    assert len(lines) == 1 and f"nested more than {MAX_DEPTH} levels deep" in lines[0], fixed.stderr
    assert (tmp_path / "mixed.py").read_text() == text


def test_a_deep_file_parsed_whole_after_narrowing_fails_is_still_refused(monkeypatch):
    """If libcst refuses the narrowed text, the whole file is parsed instead:
    then the depth guard must look at all of it first (libcst's parser
    crashes the interpreter near 10,000 levels)."""
    import torchlint.engine.linter as linter_module
    from torchlint.core.diagnostic import Unsupported
    from torchlint.core.source import SourceFile
    from torchlint.engine.linter import Engine
    from torchlint.rules import all_rules

    body = "".join(f"    x{i} = {i}\n" for i in range(4))
    text = (f"import torch.nn.functional as F\n\n\ndef table(a):\n{body}    return {' and '.join(['a'] * 8000)}\n\n\n"
            "def scale(x):\n    return F.upsample(x, scale_factor=2)\n")
    engine = Engine(all_rules())
    assert [d.code for d in engine.check(SourceFile(text)).diagnostics] == ["TL103"]  # narrowed: checked
    monkeypatch.setattr(linter_module, "_parse_narrowed", lambda narrowed: None)
    with pytest.raises(Unsupported, match=f"nested more than {MAX_DEPTH} levels deep"):
        engine.check(SourceFile(text))


def test_a_deep_expression_in_the_header_of_a_cut_def_is_refused():
    """Narrowing cuts a def's body, not its header: a deep default argument
    reaches libcst either way, so the depth guard must see it."""
    from torchlint.core.diagnostic import Unsupported
    from torchlint.core.source import SourceFile
    from torchlint.engine.linter import Engine
    from torchlint.rules import all_rules

    body = "".join(f"    x{i} = {i}\n" for i in range(4))
    text = (f"import torch.nn.functional as F\n\n\ndef table(a={' and '.join(['a'] * 8000)}):\n{body}    return a\n\n\n"
            "def scale(x):\n    return F.upsample(x, scale_factor=2)\n")
    with pytest.raises(Unsupported, match=f"nested more than {MAX_DEPTH} levels deep"):
        Engine(all_rules()).check(SourceFile(text))


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_a_regular_file_whose_size_the_system_does_not_know_is_read_whole() -> None:
    from torchlint.run.fileio import read_bytes

    with open("/proc/self/status", "rb") as handle:
        expected_start = handle.read(64)
    assert os.stat("/proc/self/status").st_size == 0
    data = read_bytes("/proc/self/status", 1 << 20)
    assert data.startswith(expected_start[:16]) and len(data) > 64
