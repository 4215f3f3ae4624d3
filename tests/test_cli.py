"""End-to-end tests of the ``torchlint`` command, run in a subprocess.

Every test drives the real CLI (``python -m torchlint``) on real files and
checks what a user sees: stdout, stderr, the exit status and the bytes,
permissions and timestamps of the files afterwards.

Starting the CLI costs about half a second (importing libcst), so related
scenarios share one run: a module-scoped fixture builds a folder of files,
runs the command once, and several small tests each check one file or one
aspect of that run.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Dict, List, Sequence, TypeVar

import pytest
from conftest import every_rule_selector, interruptible_child, run_torchlint

import torchlint
from torchlint.rules import all_rules

# --------------------------------------------------------------------------
# snippets
# --------------------------------------------------------------------------

UPSAMPLE = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "x = torch.zeros(1, 1, 2, 2)\n"
    "y = F.upsample(x, scale_factor=2)\n"
)
UPSAMPLE_FIXED = UPSAMPLE.replace("F.upsample", "F.interpolate")
TL103_MESSAGE = "TL103 `upsample` is deprecated; use `interpolate(...)`"
UPSAMPLE_LINE = ":4:7: " + TL103_MESSAGE

CUDA = "import torch\nt = torch.zeros(3)\nt.cuda()\n"
CUDA_FIXED = "import torch\nt = torch.zeros(3)\nt = t.cuda()\n"
CUDA_LINE = ":3:1: TL201 `.cuda()` returns a new tensor and leaves the receiver unchanged; assign the result"

CUDA_NUMPY = "import torch\nx = torch.ones(3)\nprint(x.cuda().numpy())\n"
CUDA_NUMPY_FIXED = "import torch\nx = torch.ones(3)\nprint(x.cuda().cpu().numpy())\n"

CLEAN = "import torch\nx = torch.zeros(3)\ny = x.cuda()\n"

# A finding with no fix at all (TL102 on an attribute assignment).
NO_FIX = "import torch\nx = torch.zeros(3)\nx.volatile = True\n"

# Findings of several rules: TL101, TL103, TL106 (safe fixes) and TL201 (unsafe).
MIXED = (
    "import torch\n"
    "import torch.nn as nn\n"
    "import torch.nn.functional as F\n"
    "out, target = torch.ones(3), torch.zeros(3)\n"
    "loss = nn.MSELoss()(out, target)\n"
    "total = loss.data[0]\n"
    "up = F.upsample(torch.zeros(1, 1, 2, 2), scale_factor=2)\n"
    "criterion = nn.MSELoss(size_average=False)\n"
    "t = torch.zeros(3)\n"
    "t.cuda()\n"
)


def mixed_fixed(text, unsafe=False):
    """MIXED (as str or bytes, any line ending) with its fixes applied."""
    b = isinstance(text, bytes)
    enc = (lambda s: s.encode()) if b else (lambda s: s)
    text = (
        text.replace(enc("loss.data[0]"), enc("loss.item()"))
        .replace(enc("F.upsample"), enc("F.interpolate"))
        .replace(enc("size_average=False"), enc("reduction='sum'"))
    )
    if unsafe:
        text = re.sub(enc(r"(?m)^t\.cuda\(\)"), enc("t = t.cuda()"), text)
    return text


SYNTAX_ERRORS = {
    "bad_def": "import torch\n\ndef f(:\n    pass\n",
    "double_equals": "import torch\ny = = 2\nz = 3\n",
    "stray_paren": "import torch\nb = 1\nc = )\n",
    "unclosed_paren": "import torch\nx = (1,\n",
    "unexpected_indent": "import torch\n  x = 1\n",
    # no word any rule looks for: the file is still not valid Python
    "no_torch": "def f(:\n    pass\n",
}

OLD_NS = 1_000_000_000 * 1_000_000_000  # 2001-09-09: any rewrite changes it

DIAGNOSTIC = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>TL\d{3}) (?P<message>.+)$")

T = TypeVar("T")


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def out_lines(result: subprocess.CompletedProcess) -> List[str]:
    return result.stdout.splitlines()


def diagnostics(result: subprocess.CompletedProcess) -> List[str]:
    return [line for line in out_lines(result) if DIAGNOSTIC.match(line)]


def codes(result: subprocess.CompletedProcess) -> List[str]:
    return [DIAGNOSTIC.match(line).group("code") for line in diagnostics(result)]


def summary(result: subprocess.CompletedProcess) -> str:
    lines = out_lines(result)
    assert lines, f"no output at all; stderr: {result.stderr}"
    return lines[-1]


def stderr_about(result: subprocess.CompletedProcess, name: str) -> List[str]:
    return [line for line in result.stderr.splitlines() if name in line]


def no_traceback(result) -> None:
    stdout, stderr = result.stdout, result.stderr
    if isinstance(stdout, bytes):
        stdout, stderr = stdout.decode(errors="replace"), stderr.decode(errors="replace")
    assert "Traceback" not in stderr, stderr
    assert "Traceback" not in stdout, stdout


def put(directory: Path, name: str, content, mode: int = None, aged: bool = False) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    if mode is not None:
        path.chmod(mode)
    if aged:
        age(path)
    return path


def age(path: Path) -> Path:
    """Give ``path`` an old mtime so that any rewrite is visible."""
    os.utime(path, ns=(OLD_NS, OLD_NS))
    return path


def fingerprint(path: Path):
    st = os.stat(path)
    return (path.read_bytes(), st.st_mtime_ns, st.st_ino, stat.S_IMODE(st.st_mode))


def leftovers(directory: Path) -> List[str]:
    """Temporary files a write may have left behind, anywhere under ``directory``."""
    return sorted(str(p) for p in directory.rglob(".torchlint-*"))


def in_parallel(jobs: Dict[str, Callable[[], T]]) -> Dict[str, T]:
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        futures = {key: pool.submit(job) for key, job in jobs.items()}
        return {key: future.result() for key, future in futures.items()}


def run_torchlint_bytes(args: Sequence[str], cwd) -> subprocess.CompletedProcess:
    """Like ``run_torchlint`` but without newline translation of the output."""
    return subprocess.run([sys.executable, "-m", "torchlint", *args], cwd=cwd, capture_output=True, timeout=120)


# --------------------------------------------------------------------------
# exit status and output format
# --------------------------------------------------------------------------


def test_clean_file_exits_0_with_all_checks_passed(write):
    path = write("clean.py", CLEAN)
    result = run_torchlint([str(path)])
    assert result.returncode == 0, result
    assert out_lines(result) == ["All checks passed."]
    assert result.stderr == ""


def test_findings_exit_1_in_flake8_format_with_summary(write, tmp_path):
    write("a.py", UPSAMPLE)
    write("b.py", CUDA)
    result = run_torchlint(["a.py", "b.py"], cwd=tmp_path)
    assert result.returncode == 1, result
    assert out_lines(result) == [
        "a.py" + UPSAMPLE_LINE,
        "b.py" + CUDA_LINE,
        "Found 2 problems (1 fixable with --fix, 1 more with --fix --unsafe-fixes).",
    ]
    assert result.stderr == ""


@pytest.fixture(scope="module")
def positions(tmp_path_factory):
    """One check run over files whose positions need care."""
    d = tmp_path_factory.mktemp("positions")
    # "é" and "€" are one character each but 2 and 3 bytes in UTF-8.
    put(d, "u.py", UPSAMPLE.replace("y = F.upsample", 's = "é€"; y = F.upsample'))
    put(d, "lat.py", ("# -*- coding: latin-1 -*-\n# café\n" + UPSAMPLE).encode("latin-1"))
    put(d, "bom.py", "\ufeff# ünïcode\n" + UPSAMPLE)
    put(d, "crlf.py", UPSAMPLE.replace("\n", "\r\n"))
    put(d, "pkg/a.py", UPSAMPLE)
    put(d, "pkg/b.py", UPSAMPLE)
    result = run_torchlint(["u.py", "lat.py", "bom.py", "crlf.py", "pkg/a.py", str(d / "pkg" / "b.py")], cwd=d)
    return SimpleNamespace(dir=d, result=result, lines=diagnostics(result))


def test_columns_are_one_based_and_counted_in_characters(positions):
    assert "u.py:4:17: " + TL103_MESSAGE in positions.lines


def test_positions_in_a_latin1_file(positions):
    assert "lat.py:6:7: " + TL103_MESSAGE in positions.lines


def test_the_bom_does_not_shift_positions(positions):
    assert "bom.py:5:7: " + TL103_MESSAGE in positions.lines


def test_positions_in_a_crlf_file(positions):
    assert "crlf.py" + UPSAMPLE_LINE in positions.lines


def test_paths_are_printed_as_given_and_in_argument_order(positions):
    assert positions.result.returncode == 1
    assert positions.result.stderr == ""
    assert positions.lines == [
        "u.py:4:17: " + TL103_MESSAGE,
        "lat.py:6:7: " + TL103_MESSAGE,
        "bom.py:5:7: " + TL103_MESSAGE,
        "crlf.py" + UPSAMPLE_LINE,
        "pkg/a.py" + UPSAMPLE_LINE,
        str(positions.dir / "pkg" / "b.py") + UPSAMPLE_LINE,
    ]
    assert summary(positions.result) == "Found 6 problems (6 fixable with --fix)."


# --- files that cannot be checked ------------------------------------------------


@pytest.fixture(scope="module")
def errors(tmp_path_factory):
    """Runs over files that cannot be read, decoded or parsed, next to good ones."""
    check = tmp_path_factory.mktemp("errors")
    put(check, "a.py", UPSAMPLE)
    put(check, "z.py", CUDA)
    put(check, "bad.py", b"import torch\n# caf\xe9 \xff\xfe\nx = 1\n")
    put(check, "cookie.py", "# -*- coding: no-such-codec -*-\nimport torch\n")
    os.symlink(check / "gone.py", check / "dangling.py")
    has_proc = os.path.exists("/proc/self/mem")
    if has_proc:
        # Reading /proc/self/mem from offset 0 fails with EIO, even for root:
        # a read error that does not depend on permission bits.
        os.symlink("/proc/self/mem", check / "mem.py")
    for name, source in SYNTAX_ERRORS.items():
        put(check, f"broken_{name}.py", source)
    args = ["a.py", "missing.py", "dangling.py", "bad.py", "cookie.py",
            *(["mem.py"] if has_proc else []), *(f"broken_{n}.py" for n in SYNTAX_ERRORS), "z.py"]

    # the same unreadable files under --fix: nothing may be written
    fix = tmp_path_factory.mktemp("errors-fix")
    untouchable = {
        "bad.py": put(fix, "bad.py", b"import torch.nn.functional as F\ny = F.upsample(x)  # \xff\n", aged=True),
        "broken.py": put(fix, "broken.py", "import torch.nn.functional as F\ny = F.upsample(x\n", aged=True),
    }
    before = {name: fingerprint(path) for name, path in untouchable.items()}

    # only files that cannot be checked: nothing may claim success
    only = tmp_path_factory.mktemp("errors-only")
    put(only, "broken.py", SYNTAX_ERRORS["bad_def"])
    put(only, "bad.py", b"# \xff\xfe\nx = 1\n")

    runs = in_parallel({
        "check": lambda: run_torchlint(args, cwd=check),
        "fix": lambda: run_torchlint(["--fix", "--unsafe-fixes", "bad.py", "broken.py"], cwd=fix),
        "only": lambda: run_torchlint(["broken.py", "bad.py"], cwd=only),
        "missing_alone": lambda: run_torchlint(["nope.py"], cwd=only),
    })
    return SimpleNamespace(
        has_proc=has_proc, untouchable=untouchable, before=before, **runs,
    )


def test_errors_exit_2_and_the_other_files_are_still_checked(errors):
    result = errors.check
    assert result.returncode == 2, result
    no_traceback(result)
    assert diagnostics(result) == ["a.py" + UPSAMPLE_LINE, "z.py" + CUDA_LINE]
    assert summary(result).startswith("Found 2 problems (1 fixable with --fix, 1 more with --fix --unsafe-fixes).")
    assert "All checks passed." not in result.stdout
    # errors go to stderr only
    for name in ("missing", "dangling", "bad", "cookie", "broken"):
        assert f"{name}" not in result.stdout


def test_missing_path_is_named_on_stderr(errors):
    lines = stderr_about(errors.check, "missing.py")
    assert len(lines) == 1, errors.check.stderr
    assert "no such file" in lines[0].lower()


def test_missing_path_alone_exits_2(errors):
    result = errors.missing_alone
    assert result.returncode == 2
    assert "nope.py" in result.stderr
    no_traceback(result)


def test_broken_symlink_is_named_on_stderr(errors):
    lines = stderr_about(errors.check, "dangling.py")
    assert len(lines) == 1, errors.check.stderr


def test_undecodable_file_gets_a_clear_message(errors):
    lines = stderr_about(errors.check, "bad.py")
    assert len(lines) == 1, errors.check.stderr
    assert "decode" in lines[0] and "utf-8" in lines[0].lower()


def test_unknown_coding_cookie_gets_a_clear_message(errors):
    lines = stderr_about(errors.check, "cookie.py")
    assert len(lines) == 1, errors.check.stderr
    assert "encoding" in lines[0]


def test_read_error_is_reported(errors):
    if not errors.has_proc:
        pytest.skip("needs Linux /proc")
    lines = stderr_about(errors.check, "mem.py")
    assert len(lines) == 1, errors.check.stderr
    assert "cannot read" in lines[0]


def _python_error_line(source: str) -> int:
    with pytest.raises(SyntaxError) as info:
        compile(source, "<test>", "exec")
    return info.value.lineno


@pytest.mark.parametrize("name", sorted(SYNTAX_ERRORS))
def test_syntax_error_is_reported_at_the_right_line(errors, name):
    expected_line = _python_error_line(SYNTAX_ERRORS[name])
    lines = stderr_about(errors.check, f"broken_{name}.py")
    assert len(lines) == 1, f"broken_{name}.py is not valid Python, yet stderr says:\n{errors.check.stderr}"
    match = re.search(rf"broken_{name}\.py:(\d+):(\d+): cannot parse: \S", lines[0])
    assert match, lines[0]
    assert int(match.group(1)) == expected_line, f"{lines[0]!r}, but Python reports line {expected_line}"
    assert int(match.group(2)) >= 1


def test_files_that_cannot_be_read_are_never_written_by_fix(errors):
    result = errors.fix
    assert result.returncode == 2
    no_traceback(result)
    for name, path in errors.untouchable.items():
        assert fingerprint(path) == errors.before[name], name
        assert len(stderr_about(result, name)) == 1, result.stderr


def test_summary_never_claims_success_when_a_file_could_not_be_checked(errors):
    result = errors.only
    assert result.returncode == 2
    no_traceback(result)
    assert len(stderr_about(result, "broken.py")) == 1 and len(stderr_about(result, "bad.py")) == 1
    assert "All checks passed." not in result.stdout, (
        "no file could be checked, yet the summary says all checks passed:\n" + result.stdout
    )


def test_closed_stdout_pipe_is_not_a_crash(tmp_path):
    # `torchlint . | head -1`: the reader goes away before torchlint writes.
    put(tmp_path, "a.py", UPSAMPLE)
    put(tmp_path, "b.py", CUDA)
    process = subprocess.Popen(
        [sys.executable, "-m", "torchlint", "a.py", "b.py"], cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    process.stdout.close()  # long before the interpreter has imported libcst
    stderr = process.stderr.read().decode()
    process.wait(timeout=120)
    assert "Traceback" not in stderr, stderr
    assert "BrokenPipeError" not in stderr, stderr
    assert process.returncode != 0  # the output was lost: never report success


def test_unreadable_file_exits_2(write, tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root can read a chmod 000 file (test_read_error_is_reported covers read errors)")
    path = write("secret.py", UPSAMPLE)
    write("a.py", UPSAMPLE)
    path.chmod(0)
    try:
        result = run_torchlint(["secret.py", "a.py"], cwd=tmp_path)
    finally:
        path.chmod(0o644)
    assert result.returncode == 2, result
    lines = stderr_about(result, "secret.py")
    assert len(lines) == 1 and "cannot read" in lines[0], result.stderr
    no_traceback(result)
    assert diagnostics(result) == ["a.py" + UPSAMPLE_LINE]


def test_version_and_usage_errors():
    runs = in_parallel({
        "version": lambda: run_torchlint(["--version"]),
        "bad_option": lambda: run_torchlint(["--no-such-option"]),
    })
    version = runs["version"]
    assert version.returncode == 0
    assert version.stdout.strip() == f"torchlint {torchlint.__version__}"
    assert re.fullmatch(r"torchlint \d+\.\d+\.\d+\S*", version.stdout.strip())
    bad = runs["bad_option"]
    assert bad.returncode == 2
    assert "usage: torchlint" in bad.stderr and "--no-such-option" in bad.stderr
    no_traceback(bad)


# --------------------------------------------------------------------------
# discovering files
# --------------------------------------------------------------------------

CHECKED = ["proj/b.py", "proj/A.py", "proj/pkg/z.py", "proj/pkg/a.py", "proj/pkg/sub/m.pyi", "proj/lib/mod.py",
           "proj/pkg-x/a.py", "proj/a/b.py", "proj/a.py"]
SKIPPED = [
    "proj/.git/hook.py",
    "proj/__pycache__/a.py",
    "proj/build/a.py",
    "proj/lib/site-packages/dep.py",
    "proj/myenv/lib/x.py",  # a virtualenv: its root holds pyvenv.cfg
    "proj/venv/x.py",
    "proj/.venv/x.py",
    "proj/dist/x.py",
    "proj/pkg/__pycache__/c.py",
]


@pytest.fixture(scope="module")
def discovery(tmp_path_factory):
    d = tmp_path_factory.mktemp("discovery")
    for name in CHECKED + SKIPPED:
        put(d, name, UPSAMPLE)
    put(d, "proj/myenv/pyvenv.cfg", "home = /usr/bin\n")
    put(d, "proj/notes.txt", UPSAMPLE)
    put(d, "proj/script", UPSAMPLE)  # no .py suffix: not searched for
    os.symlink("a.py", d / "proj" / "alias.py")
    put(d, "empty/readme.txt", "hello\n")
    return SimpleNamespace(dir=d, **in_parallel({
        "first": lambda: run_torchlint(["proj"], cwd=d),
        "second": lambda: run_torchlint(["proj"], cwd=d),
        "explicit": lambda: run_torchlint(["proj/build/a.py", "proj/a.py", "./proj/a.py", "proj/alias.py"], cwd=d),
        "default": lambda: run_torchlint([], cwd=d / "proj" / "pkg"),
        "empty": lambda: run_torchlint(["empty"], cwd=d),
    }))


def test_directory_is_recursed_in_sorted_order_skipping_tool_directories(discovery):
    result = discovery.first
    assert result.returncode == 1, result
    reported = [DIAGNOSTIC.match(line).group("path") for line in diagnostics(result)]
    assert reported == sorted(CHECKED)  # proj/alias.py is proj/a.py: reported once
    assert summary(result) == f"Found {len(CHECKED)} problems ({len(CHECKED)} fixable with --fix)."


def test_directory_output_is_deterministic(discovery):
    assert discovery.second.stdout == discovery.first.stdout


def test_explicit_files_are_checked_even_in_skipped_directories_and_only_once(discovery):
    result = discovery.explicit
    assert diagnostics(result) == ["proj/build/a.py" + UPSAMPLE_LINE, "proj/a.py" + UPSAMPLE_LINE]
    assert summary(result) == "Found 2 problems (2 fixable with --fix)."


def test_default_path_is_the_current_directory(discovery):
    result = discovery.default
    assert result.returncode == 1
    assert [DIAGNOSTIC.match(line).group("path") for line in diagnostics(result)] == [
        os.path.join(".", "a.py"),
        os.path.join(".", "sub", "m.pyi"),
        os.path.join(".", "z.py"),
    ]


def test_directory_without_python_files_passes(discovery):
    assert discovery.empty.returncode == 0
    assert out_lines(discovery.empty) == ["All checks passed."]


def test_reports_hold_the_checked_text_only_when_they_show_something_of_it():
    """A run keeps every file's report until it ends: holding each file's
    text too made memory grow with the size of the tree."""
    from torchlint.core.diagnostic import Diagnostic
    from torchlint.run.report import FileReport
    from torchlint.run.session import lean

    assert lean(FileReport("clean.py", source="x = 1\n")).source is None
    finding = Diagnostic("TL104", "message", 1, 0, None)
    assert lean(FileReport("flagged.py", diagnostics=[finding], source="F.tanh(x)\n")).source == "F.tanh(x)\n"


def test_full_output_shows_the_source_of_findings_from_parallel_workers(write, tmp_path):
    padding = "# padding\n" * 10_000  # 12 x 100 KB: enough source for worker processes
    for index in range(12):
        write(f"pkg/m{index:02d}.py",
              ("import torch.nn.functional as F\ny = F.tanh(x)\n" if index == 7 else "x = 1\n") + padding)
    result = run_torchlint(["--isolated", "--no-cache", "-j2", "--output-format", "full", str(tmp_path / "pkg")])
    assert result.returncode == 1
    assert "y = F.tanh(x)" in result.stdout


# --------------------------------------------------------------------------
# the summary line
# --------------------------------------------------------------------------

SUMMARY_CASES = {
    "two-safe": ({"a.py": UPSAMPLE, "b.py": UPSAMPLE}, [], "Found 2 problems (2 fixable with --fix).", 1),
    "one-unsafe": ({"a.py": CUDA}, [], "Found 1 problem (1 with --fix --unsafe-fixes).", 1),
    "no-fix": ({"a.py": NO_FIX}, [], "Found 1 problem.", 1),
    "fix-leaves-unsafe": ({"a.py": UPSAMPLE, "b.py": CUDA}, ["--fix"],
                          "Fixed 1 problem. Found 1 problem remaining (1 with --fix --unsafe-fixes).", 1),
    "fix-leaves-unfixable": ({"a.py": UPSAMPLE, "b.py": NO_FIX}, ["--fix"],
                             "Fixed 1 problem. Found 1 problem remaining.", 1),
    "fix-unsafe": ({"a.py": UPSAMPLE, "b.py": CUDA}, ["--fix", "--unsafe-fixes"], "Fixed 2 problems.", 0),
    "fix-clean": ({"a.py": CLEAN}, ["--fix"], "All checks passed.", 0),
}


@pytest.fixture(scope="module")
def summaries(tmp_path_factory):
    jobs = {}
    for case, (files, args, _, _) in SUMMARY_CASES.items():
        d = tmp_path_factory.mktemp(case)
        for name, source in files.items():
            put(d, name, source)
        jobs[case] = (lambda d=d, args=args, files=files: run_torchlint([*args, *sorted(files)], cwd=d))
    return in_parallel(jobs)


@pytest.mark.parametrize("case", list(SUMMARY_CASES))
def test_summary_line(summaries, case):
    _, _, expected_summary, expected_status = SUMMARY_CASES[case]
    result = summaries[case]
    assert summary(result) == expected_summary
    assert result.returncode == expected_status
    assert result.stderr == ""
    # one diagnostic line per remaining problem, then the summary
    assert len(out_lines(result)) == len(diagnostics(result)) + 1


# --------------------------------------------------------------------------
# --select / --ignore
# --------------------------------------------------------------------------

SELECTIONS = {
    "default": ([], ["TL101", "TL103", "TL106", "TL201"]),
    "select-TL1": (["--select", "TL1"], ["TL101", "TL103", "TL106"]),
    "select-list": (["--select", "tl103 , TL201"], ["TL103", "TL201"]),
    "select-TL101-ignore-TL1": (["--select", "TL101", "--ignore", "TL1"], ["TL101"]),
    "select-TL-ignore-TL1": (["--select", "TL", "--ignore", "TL1"], ["TL201"]),
    "ignore-TL103": (["--ignore", "TL103"], ["TL101", "TL106", "TL201"]),
    "ignore-all": (["--ignore", "TL1,TL2"], []),
}
BAD_SELECTIONS = {
    "XX": ["--select", "XX"],
    "TL999": ["--ignore", "TL1,TL999"],
}


@pytest.fixture(scope="module")
def selections(tmp_path_factory):
    d = tmp_path_factory.mktemp("selection")
    put(d, "m.py", MIXED)
    jobs = {name: (lambda args=args: run_torchlint([*args, "m.py"], cwd=d)) for name, (args, _) in SELECTIONS.items()}
    jobs.update({f"bad-{name}": (lambda args=args: run_torchlint([*args, "m.py"], cwd=d))
                 for name, args in BAD_SELECTIONS.items()})
    return in_parallel(jobs)


@pytest.mark.parametrize("case", list(SELECTIONS))
def test_select_and_ignore_match_prefixes_like_flake8(selections, case):
    expected = SELECTIONS[case][1]
    result = selections[case]
    assert codes(result) == expected
    assert result.returncode == (1 if expected else 0)
    if not expected:
        assert out_lines(result) == ["All checks passed."]


@pytest.mark.parametrize("bad", list(BAD_SELECTIONS))
def test_unknown_selector_is_a_usage_error(selections, bad):
    result = selections[f"bad-{bad}"]
    assert result.returncode == 2
    assert bad in result.stderr
    assert result.stdout == ""  # nothing was checked
    no_traceback(result)


def test_selection_also_limits_fixes(write, tmp_path):
    path = write("m.py", MIXED)
    result = run_torchlint(["--fix", "--unsafe-fixes", "--select", "TL103", "m.py"], cwd=tmp_path)
    assert result.returncode == 0
    assert path.read_text() == MIXED.replace("F.upsample", "F.interpolate")


# --------------------------------------------------------------------------
# --diff
# --------------------------------------------------------------------------


def test_diff_prints_a_unified_diff_and_writes_nothing(tmp_path):
    files = {name: put(tmp_path, name, source, aged=True)
             for name, source in {"a.py": UPSAMPLE, "b.py": CUDA, "c.py": CLEAN}.items()}
    before = {p: fingerprint(p) for p in files.values()}
    runs = in_parallel({
        "changes": lambda: run_torchlint(["--diff", "a.py", "b.py", "c.py"], cwd=tmp_path),
        "none": lambda: run_torchlint(["--diff", "c.py"], cwd=tmp_path),
    })
    result = runs["changes"]
    assert result.returncode == 1, result
    assert result.stdout == (
        "--- a/a.py\n"
        "+++ b/a.py\n"
        "@@ -1,4 +1,4 @@\n"
        " import torch\n"
        " import torch.nn.functional as F\n"
        " x = torch.zeros(1, 1, 2, 2)\n"
        "-y = F.upsample(x, scale_factor=2)\n"
        "+y = F.interpolate(x, scale_factor=2)\n"
    )
    assert result.stderr == "Would fix 1 problem in 1 file.\n"  # the summary stays off the patch
    # nothing to change: exit 0, no output
    assert (runs["none"].returncode, runs["none"].stdout) == (0, "")
    assert {p: fingerprint(p) for p in files.values()} == before
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch(1)")
def test_diff_applies_with_patch_and_matches_what_fix_writes(tmp_path):
    sources = {
        "a.py": MIXED,
        "crlf.py": UPSAMPLE.replace("\n", "\r\n"),
        "nonl.py": CUDA_NUMPY.rstrip("\n"),
        "cuda.py": CUDA,
        # characters str.splitlines() breaks at but Python and patch(1) do not
        "page_breaks.py": UPSAMPLE.replace("x = ", "# page\x0cbreak \x1c \u2028 \x85\n\x0c\nx = "),
    }
    for name, source in sources.items():
        put(tmp_path / "diffed", name, source)
        put(tmp_path / "fixed", name, source)
    runs = in_parallel({
        "diff": lambda: run_torchlint_bytes(["--diff", "--unsafe-fixes", "."], cwd=tmp_path / "diffed"),
        "fix": lambda: run_torchlint_bytes(["--fix", "--unsafe-fixes", "."], cwd=tmp_path / "fixed"),
    })
    diff = runs["diff"]
    assert diff.returncode == 1
    # the unsafe rewrite is shown; a missing final newline is marked
    assert b"-t.cuda()\n+t = t.cuda()\n" in diff.stdout
    assert b"\n\\ No newline at end of file\n" in diff.stdout
    assert b"--- a/crlf.py\r\n" not in diff.stdout and b"--- a/crlf.py\n" in diff.stdout  # headers end with \n
    for name in sources:
        assert (tmp_path / "diffed" / name).read_bytes() == sources[name].encode()  # --diff wrote nothing
    patched = subprocess.run(
        ["patch", "-p1", "--binary", "--no-backup-if-mismatch"], cwd=tmp_path / "diffed",
        input=diff.stdout, capture_output=True,
    )
    assert patched.returncode == 0, patched
    for name in sources:
        fixed = (tmp_path / "fixed" / name).read_bytes()
        assert fixed != sources[name].encode(), name
        assert (tmp_path / "diffed" / name).read_bytes() == fixed, name


def test_diff_marks_a_missing_final_newline(write, tmp_path):
    write("n.py", UPSAMPLE.rstrip("\n"))
    result = run_torchlint(["--diff", "n.py"], cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.endswith(
        "-y = F.upsample(x, scale_factor=2)\n"
        "\\ No newline at end of file\n"
        "+y = F.interpolate(x, scale_factor=2)\n"
        "\\ No newline at end of file\n"
    )


def test_diff_from_the_project_root_is_a_patch_git_apply_accepts(tmp_path):
    """``torchlint --diff . > p`` wrote ``a/./DataLoader.py`` and an absolute
    path ``a//tmp/...``; ``git apply`` rejects both (issue 37)."""
    repo = tmp_path / "repo"
    put(repo, "DataLoader.py", UPSAMPLE)
    put(repo, "pkg/sub/m.py", UPSAMPLE)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "."], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=repo, check=True)
    for args in (["."], ["./DataLoader.py", "pkg//sub/../sub/m.py"], [str(repo / "DataLoader.py"), str(repo / "pkg")]):
        diff = run_torchlint(["--isolated", "--diff", *args], cwd=repo)
        assert diff.returncode == 1, diff
        headers = [line for line in diff.stdout.splitlines() if line.startswith(("--- ", "+++ "))]
        assert headers == ["--- a/DataLoader.py", "+++ b/DataLoader.py", "--- a/pkg/sub/m.py", "+++ b/pkg/sub/m.py"]
        patch = tmp_path / "p"
        patch.write_text(diff.stdout)
        check = subprocess.run(["git", "apply", "--check", str(patch)], cwd=repo, capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
    subprocess.run(["git", "apply", str(tmp_path / "p")], cwd=repo, check=True)
    assert (repo / "pkg" / "sub" / "m.py").read_text() == UPSAMPLE_FIXED
    assert run_torchlint(["--isolated", "--diff", "."], cwd=repo).stdout == ""


# --------------------------------------------------------------------------
# --fix
# --------------------------------------------------------------------------


def test_fix_rewrites_and_a_second_fix_changes_nothing(write, tmp_path):
    path = write("m.py", MIXED)
    first = run_torchlint(["--fix", "m.py"], cwd=tmp_path)
    assert first.returncode == 1  # the unsafe TL201 remains
    assert path.read_text() == mixed_fixed(MIXED)
    assert diagnostics(first) == ["m.py" + CUDA_LINE.replace(":3:1:", ":10:1:")]
    assert summary(first) == "Fixed 3 problems. Found 1 problem remaining (1 with --fix --unsafe-fixes)."

    age(path)
    before = fingerprint(path)
    second = run_torchlint(["--fix", "m.py"], cwd=tmp_path)
    assert second.returncode == 1
    assert fingerprint(path) == before
    assert summary(second) == "Found 1 problem remaining (1 with --fix --unsafe-fixes)."
    assert leftovers(tmp_path) == []


def test_unsafe_fixes_need_the_unsafe_flag(tmp_path):
    tl201 = put(tmp_path, "tl201.py", CUDA, aged=True)
    tl202 = put(tmp_path, "tl202.py", CUDA_NUMPY, aged=True)
    before = {p: fingerprint(p) for p in (tl201, tl202)}
    runs = in_parallel({
        name: (lambda args=args: run_torchlint([*args, "tl201.py", "tl202.py"], cwd=tmp_path))
        for name, args in {"fix": ["--fix"], "unsafe": ["--unsafe-fixes"], "diff": ["--diff"]}.items()
    })
    assert {p: fingerprint(p) for p in (tl201, tl202)} == before
    for name, result in runs.items():
        assert "Fixed" not in result.stdout, name
        if name == "diff":
            assert (result.returncode, result.stdout) == (0, ""), name
        else:
            assert result.returncode == 1, name
            assert codes(result) == ["TL201", "TL202"], name

    unsafe = run_torchlint(["--fix", "--unsafe-fixes", "tl201.py", "tl202.py"], cwd=tmp_path)
    assert unsafe.returncode == 0, unsafe
    assert tl201.read_text() == CUDA_FIXED
    assert tl202.read_text() == CUDA_NUMPY_FIXED
    assert out_lines(unsafe) == ["Fixed 2 problems."]


LATIN1 = ("# -*- coding: latin-1 -*-\n# café, naïve, ½\n" + UPSAMPLE).encode("latin-1")
BOM = ("\ufeff# ünïcode\n" + UPSAMPLE).encode("utf-8")
CRLF = ("# header  \n" + MIXED + "\n\nz = 1   # trailing spaces   \n").replace("\n", "\r\n").encode()
CRLF_IMPORT = b"import torch.nn.functional as F\r\n\r\n\r\ndef gate(x):\r\n    return F.relu(F.sigmoid(x))\r\n"
MIXED_ENDINGS = (
    b"import torch\r\n"
    b"import torch.nn.functional as F\n"
    b"x = torch.zeros(1, 1, 2, 2)\r\n"
    b"y = F.upsample(x, scale_factor=2)\n"
    b"z = F.upsample(x, scale_factor=3)\r\n"
    b"t = torch.zeros(3)\n"
    b"t.cuda()\r\n"
    b"w = 1\n"
)
NOQA = UPSAMPLE + "z = F.upsample(x, scale_factor=2)  # noqa: TL103\nw = F.upsample(x)  # noqa\n"
EXEMPT = "# flake8: noqa\n" + UPSAMPLE
PERMISSIONS = (0o640, 0o755, 0o600)


@pytest.fixture(scope="module")
def fixed(tmp_path_factory):
    """``--fix --unsafe-fixes`` over a folder of tricky files, then again."""
    d = tmp_path_factory.mktemp("fix")
    # Each rule's examples are fixed with that rule alone: an example may
    # also show another rule's pattern (TL102's `Variable(x, volatile=True)`
    # is TL107's wrapper too), and its documented fix is its own rule's.
    examples_dir = tmp_path_factory.mktemp("examples")
    examples: Dict[str, str] = {}
    for rule in all_rules():
        for index, example in enumerate(rule.flagged):
            name = f"examples/{rule.code.lower()}_{index}.py"
            put(examples_dir, name, example.code)
            examples[name] = example.fixed if example.fixed is not None else example.code
        run_torchlint(
            ["--fix", "--unsafe-fixes", "--select", rule.code,
             *sorted(n for n in examples if n.startswith(f"examples/{rule.code.lower()}_"))],
            cwd=examples_dir,
        )
    put(d, "lat.py", LATIN1)
    put(d, "bom.py", BOM)
    put(d, "crlf.py", CRLF)
    put(d, "crlf_import.py", CRLF_IMPORT)
    put(d, "mixed_endings.py", MIXED_ENDINGS)
    put(d, "no_final_newline.py", UPSAMPLE.rstrip("\n"))
    put(d, "noqa.py", NOQA)
    for mode in PERMISSIONS:
        put(d, f"mode_{mode:o}.py", UPSAMPLE, mode=mode)
    untouched = {
        "clean.py": put(d, "clean.py", CLEAN, aged=True),
        "unfixable.py": put(d, "unfixable.py", NO_FIX, aged=True),
        "exempt.py": put(d, "exempt.py", EXEMPT, aged=True),
    }
    untouched_before = {name: fingerprint(p) for name, p in untouched.items()}
    put(d, "real/target.py", UPSAMPLE)
    os.symlink(os.path.join("real", "target.py"), d / "link.py")

    every_rule = ["--select", every_rule_selector()]  # opt-in rules too
    first = run_torchlint(["--fix", "--unsafe-fixes", *every_rule, "."], cwd=d)
    every_file = [p for p in d.rglob("*") if p.is_file() and not p.is_symlink()]
    for path in every_file:
        age(path)
    before_second = {p: fingerprint(p) for p in every_file}
    second = run_torchlint(["--fix", "--unsafe-fixes", *every_rule, "."], cwd=d)
    after_second = {p: fingerprint(p) for p in every_file}
    diff = run_torchlint(["--diff", "--unsafe-fixes", *every_rule, "."], cwd=d)
    return SimpleNamespace(
        dir=d, examples=examples, examples_dir=examples_dir, first=first, second=second, diff=diff,
        untouched=untouched, untouched_before=untouched_before,
        before_second=before_second, after_second=after_second,
    )


def test_fix_run_reports_no_errors(fixed):
    assert fixed.first.stderr == ""
    no_traceback(fixed.first)
    assert out_lines(fixed.first)[-1].startswith("Fixed ")
    assert leftovers(fixed.dir) == []


def test_fix_every_rule_example_gives_its_documented_fix(fixed):
    assert {name.split("/")[1][:5] for name in fixed.examples} == {rule.code.lower() for rule in all_rules()}
    wrong = [name for name, text in fixed.examples.items() if (fixed.examples_dir / name).read_text() != text]
    assert wrong == []


def test_second_fix_changes_no_byte(fixed):
    assert fixed.after_second == fixed.before_second
    assert "Fixed" not in fixed.second.stdout
    assert fixed.second.stderr == ""
    # the findings left after the first run are exactly those of the second
    assert diagnostics(fixed.second) == diagnostics(fixed.first)


def test_diff_after_fix_is_empty(fixed):
    assert (fixed.diff.returncode, fixed.diff.stdout) == (0, "")


def test_fix_keeps_a_latin1_file_in_latin1(fixed):
    data = (fixed.dir / "lat.py").read_bytes()
    assert data == LATIN1.replace(b"F.upsample", b"F.interpolate")
    assert b"caf\xe9" in data


def test_fix_keeps_the_utf8_bom(fixed):
    data = (fixed.dir / "bom.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and not data.startswith(b"\xef\xbb\xbf\xef\xbb\xbf")
    assert data == BOM.replace(b"F.upsample", b"F.interpolate")


def test_fix_keeps_crlf_line_endings_byte_for_byte(fixed):
    assert (fixed.dir / "crlf.py").read_bytes() == mixed_fixed(CRLF, unsafe=True)


def test_fix_inserting_an_import_uses_the_files_crlf_line_ending(fixed):
    data = (fixed.dir / "crlf_import.py").read_bytes()
    assert data == b"import torch\r\n" + CRLF_IMPORT.replace(b"F.sigmoid", b"torch.sigmoid")


def test_fix_keeps_mixed_line_endings(fixed):
    expected = MIXED_ENDINGS.replace(b"F.upsample", b"F.interpolate").replace(b"\nt.cuda()", b"\nt = t.cuda()")
    assert (fixed.dir / "mixed_endings.py").read_bytes() == expected


def test_fix_keeps_a_missing_final_newline(fixed):
    assert (fixed.dir / "no_final_newline.py").read_bytes() == UPSAMPLE_FIXED.rstrip("\n").encode()


@pytest.mark.parametrize("mode", PERMISSIONS, ids=oct)
def test_fix_keeps_file_permissions(fixed, mode):
    path = fixed.dir / f"mode_{mode:o}.py"
    assert path.read_text() == UPSAMPLE_FIXED
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_fix_leaves_files_without_fixes_untouched(fixed):
    for name, path in fixed.untouched.items():
        assert fingerprint(path) == fixed.untouched_before[name], name


def test_fix_respects_noqa(fixed):
    assert (fixed.dir / "noqa.py").read_text() == NOQA.replace("y = F.upsample", "y = F.interpolate")


def test_fix_through_a_symlink_writes_the_target_and_keeps_the_link(fixed):
    link = fixed.dir / "link.py"
    assert link.is_symlink()
    assert os.readlink(link) == os.path.join("real", "target.py")
    target = fixed.dir / "real" / "target.py"
    assert not target.is_symlink()
    assert target.read_text() == UPSAMPLE_FIXED


# --- files that cannot be written --------------------------------------------


def test_fix_a_read_only_file_is_an_error_and_other_files_are_still_fixed(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root may write a chmod 0o444 file; the immutable-file test covers root")
    read_only = put(tmp_path, "ro.py", UPSAMPLE, mode=0o444)
    writable = put(tmp_path, "rw.py", UPSAMPLE)
    try:
        result = run_torchlint(["--fix", "ro.py", "rw.py"], cwd=tmp_path)
    finally:
        read_only.chmod(0o644)
    _assert_unwritable_file_reported(result, tmp_path, read_only, writable)


def test_fix_an_unwritable_file_as_root_is_an_error_and_other_files_are_still_fixed(tmp_path):
    # Root ignores permission bits; an immutable file (chattr +i) is one root
    # cannot replace either, so the same error path is exercised meaningfully.
    if os.geteuid() != 0:
        pytest.skip("chattr +i needs root; the chmod 0o444 test covers other users")
    if shutil.which("chattr") is None:
        pytest.skip("needs chattr")
    read_only = put(tmp_path, "ro.py", UPSAMPLE)
    writable = put(tmp_path, "rw.py", UPSAMPLE)
    if subprocess.run(["chattr", "+i", str(read_only)], capture_output=True).returncode != 0:
        pytest.skip("this filesystem does not support the immutable attribute")
    try:
        result = run_torchlint(["--fix", "ro.py", "rw.py"], cwd=tmp_path)
    finally:
        subprocess.run(["chattr", "-i", str(read_only)], check=True)
    _assert_unwritable_file_reported(result, tmp_path, read_only, writable)


def _assert_unwritable_file_reported(result, tmp_path, read_only, writable):
    assert result.returncode == 2, result
    no_traceback(result)
    errors = stderr_about(result, "ro.py")
    assert len(errors) == 1, result.stderr
    assert "cannot write" in errors[0]
    assert read_only.read_text() == UPSAMPLE
    assert writable.read_text() == UPSAMPLE_FIXED
    assert leftovers(tmp_path) == []
    # The summary must not count the fix that could not be written, and the
    # problem is still in ro.py, so it is still reported.
    assert "Fixed 2 problems" not in result.stdout, result.stdout
    assert "Fixed 1 problem." in result.stdout, result.stdout
    assert "ro.py" + UPSAMPLE_LINE in out_lines(result), result.stdout


# --------------------------------------------------------------------------
# --watch (ruff's): a run, then one per change of a checked file or the configuration
# --------------------------------------------------------------------------


class _Reader:
    """Lines of a running process's stdout, waited for with a deadline."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.process, self.text = process, ""

    def until(self, needle: str, count: int = 1, timeout: float = 60) -> str:
        import select

        deadline = time.monotonic() + timeout
        while self.text.count(needle) < count:
            left = deadline - time.monotonic()
            assert left > 0, f"no {needle!r} x{count} within {timeout} s; output so far:\n{self.text}"
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536).decode()
                assert chunk, f"the process ended; output:\n{self.text}"
                self.text += chunk
        return self.text


def test_watch_runs_again_when_a_file_or_the_configuration_changes(tmp_path):
    import signal

    put(tmp_path, "a.py", CUDA)
    process = subprocess.Popen([sys.executable, "-m", "torchlint", "--watch", "--no-cache", "."], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, preexec_fn=interruptible_child)
    try:
        out = _Reader(process)
        first = out.until("Found 1 problem")
        assert re.match(r"\[\d\d:\d\d:\d\d\] Starting linter in watch mode\.\.\.\n", first), first
        assert "./a.py:3:1: TL201 " in first
        put(tmp_path, "b.py", UPSAMPLE)  # a new file counts
        second = out.until("Found 2 problems")[len(first):]
        assert re.match(r"\[\d\d:\d\d:\d\d\] File change detected\.\.\.\n", second), second
        assert "./b.py:4:7: TL103 " in second
        put(tmp_path, "pyproject.toml", '[tool.torchlint]\nignore = ["TL201"]\n')  # so does the configuration
        third = out.until("File change detected...", 2)
        third = out.until("Found 1 problem", 2)[len(first) + len(second):]
        assert "TL201" not in third and "./b.py:4:7: TL103 " in third
        put(tmp_path, "pyproject.toml", '[tool.torchlint]\nignore = ["TL9"]\n')  # broken: said, and watching goes on
        out.until("torchlint: error: pyproject.toml: [tool.torchlint] ignore: unknown rule selector 'TL9'")
        put(tmp_path, "pyproject.toml", "[tool.torchlint]\n")
        out.until("Found 2 problems", 2)
    finally:
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "Traceback" not in out.text + rest.decode()
    assert rest.decode().endswith("torchlint: interrupted\n")


def test_watch_with_fix_settles_after_its_own_writes(tmp_path):
    put(tmp_path, "a.py", UPSAMPLE)
    process = subprocess.Popen([sys.executable, "-m", "torchlint", "--watch", "--fix", "--no-cache", "a.py"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out = _Reader(process)
        out.until("Fixed 1 problem.")
        out.until("All checks passed.")  # its own write is a change: one more run, which fixes nothing
        time.sleep(2)
        settled = out.text
        put(tmp_path, "a.py", UPSAMPLE)
        out.until("Fixed 1 problem.", 2)
    finally:
        process.terminate()
        process.communicate(timeout=60)
    assert settled.count("File change detected...") == 1
    assert (tmp_path / "a.py").read_text() == UPSAMPLE_FIXED


@pytest.mark.parametrize("extra", [["--statistics"], ["--add-noqa"], ["--show-files"], ["--stdin-filename", "x.py"]])
def test_watch_with_a_one_shot_option_is_a_usage_error(tmp_path, extra):
    result = run_torchlint(["--watch", *extra], cwd=tmp_path)
    assert result.returncode == 2 and "--watch cannot be combined" in result.stderr
