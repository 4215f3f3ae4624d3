"""Bad input and a hostile file system, through the real ``torchlint`` command.

Each scenario of issue 6 has a test here or in ``tests/test_cli.py`` (which
this file extends, never repeats):

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
a path that vanishes mid-run          here (a FIFO holds the run while files are deleted), and
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
from conftest import REPO, run_torchlint
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


def test_a_path_vanishing_mid_run(tmp_path):
    """The run blocks reading a FIFO while the test deletes files it has already found."""
    d = tmp_path / "proj"
    put(d, "b.py", UPSAMPLE)
    put(d, "sub/c.py", UPSAMPLE)
    put(d, "z.py", UPSAMPLE)
    fifo = d / "a.py"
    os.mkfifo(fifo)
    runs = {}
    for mode in ("check", "fix"):
        args = ["--isolated", *(["--fix"] if mode == "fix" else []), "proj"]
        process = subprocess.Popen([sys.executable, "-m", "torchlint", *args], cwd=tmp_path,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            with _open_fifo_for_writing(fifo, process) as writer:  # torchlint opened a.py: the files are found
                (d / "b.py").unlink()
                shutil.rmtree(d / "sub")
                writer.write(UPSAMPLE.encode())
            stdout, stderr = process.communicate(timeout=120)
        finally:
            process.kill()
        runs[mode] = SimpleNamespace(returncode=process.returncode, stdout=stdout, stderr=stderr)
        put(d, "b.py", UPSAMPLE)
        put(d, "sub/c.py", UPSAMPLE)
    for mode, result in runs.items():
        no_traceback(result)
        assert result.returncode == 2, (mode, result)
        for name in ("b.py", "c.py"):
            lines = stderr_about(result, name)
            assert len(lines) == 1 and "no such file" in lines[0].lower(), result.stderr
    assert diagnostics(runs["check"]) == [os.path.join("proj", n) + UPSAMPLE_LINE for n in ("a.py", "z.py")]
    assert (d / "z.py").read_text() == UPSAMPLE_FIXED  # fixed by the --fix run; the deleted ones not recreated
    assert leftovers(d) == []


def _open_fifo_for_writing(fifo: Path, process: subprocess.Popen, timeout: float = 120):
    """Open ``fifo`` once a reader has it open (without blocking forever if none ever comes)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as exc:  # ENXIO: no reader yet
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"torchlint never opened {fifo}: {process.communicate()}") from exc
            time.sleep(0.01)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "wb")


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
                               preexec_fn=_interruptible)
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


def _interruptible() -> None:
    """Ctrl-C as a terminal delivers it: a shell starts background jobs with
    SIGINT ignored, and the tests must not inherit that (torchlint rightly
    leaves an ignored SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


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

    def failing_replace(src, dst):
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
