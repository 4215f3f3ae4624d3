"""CLI options around reporting and fixing: --statistics, --show-fixes, --exit-zero,
--exit-non-zero-on-fix, --stdin-filename, --add-noqa (with a reason), --fix-only,
fixable / unfixable / extend-safe-fixes / extend-unsafe-fixes, and colour.

All through the real CLI in subprocesses; colour is checked under a real
pseudo-terminal as well as in a pipe.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Dict, List, Optional

import pytest
from conftest import run_flake8, run_torchlint
from test_cli import (
    CLEAN,
    CUDA,
    CUDA_FIXED,
    DIAGNOSTIC,
    MIXED,
    NO_FIX,
    UPSAMPLE,
    UPSAMPLE_FIXED,
    age,
    fingerprint,
    in_parallel,
    mixed_fixed,
    no_traceback,
    put,
)

ESC = "\x1b["


def lines(result) -> List[str]:
    return result.stdout.splitlines()


def run_bytes(args, cwd, input: bytes = None, env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchlint", *args], cwd=cwd, input=input, capture_output=True,
                          timeout=120, env=env)


# --------------------------------------------------------------------------
# --statistics, --show-fixes, exit status options
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def reporting(tmp_path_factory):
    d = tmp_path_factory.mktemp("reporting")
    put(d, "a.py", MIXED)
    put(d, "b.py", UPSAMPLE + "z = F.upsample(x, scale_factor=3)\n")
    put(d, "c.py", NO_FIX)
    put(d, "broken.py", "def f(:\n")
    fixes = {name: tmp_path_factory.mktemp(name) for name in ("show", "quiet", "nonzero", "nonzero_clean", "zero")}
    for name in ("show", "quiet", "nonzero"):
        put(fixes[name], "a.py", MIXED)
        put(fixes[name], "b.py", UPSAMPLE)
    put(fixes["nonzero_clean"], "clean.py", CLEAN)
    put(fixes["zero"], "a.py", MIXED)
    return SimpleNamespace(dir=d, fixes=fixes, **in_parallel({
        "statistics": lambda: run_torchlint(["--statistics", "a.py", "b.py", "c.py"], cwd=d),
        "statistics_unsafe": lambda: run_torchlint(["--statistics", "--unsafe-fixes", "a.py", "b.py", "c.py"], cwd=d),
        "statistics_json": lambda: run_torchlint(["--statistics", "--output-format", "json", "a.py", "b.py", "c.py"],
                                                 cwd=d),
        "statistics_github": lambda: run_torchlint(["--statistics", "--output-format", "github", "a.py"], cwd=d),
        "exit_zero": lambda: run_torchlint(["--exit-zero", "a.py"], cwd=d),
        "exit_zero_error": lambda: run_torchlint(["--exit-zero", "a.py", "broken.py"], cwd=d),
        "show": lambda: run_torchlint(["--fix", "--show-fixes", "a.py", "b.py"], cwd=fixes["show"]),
        "quiet": lambda: run_torchlint(["--fix", "a.py", "b.py"], cwd=fixes["quiet"]),
        "nonzero": lambda: run_torchlint(["--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", "a.py", "b.py"],
                                         cwd=fixes["nonzero"]),
        "nonzero_clean": lambda: run_torchlint(["--fix", "--exit-non-zero-on-fix", "clean.py"],
                                               cwd=fixes["nonzero_clean"]),
        "zero_fix": lambda: run_torchlint(["--fix", "--exit-zero", "--exit-non-zero-on-fix", "a.py"],
                                          cwd=fixes["zero"]),
    }))


def test_statistics_count_each_code_with_its_fixability(reporting):
    result = reporting.statistics
    assert result.returncode == 1
    assert result.stderr == ""
    assert lines(result) == [
        "3\tTL103\t[*] deprecated-upsample",
        "1\tTL101\t[*] data-index-scalar",
        "1\tTL102\t[ ] volatile-variable",
        "1\tTL106\t[*] legacy-loss-reduction",
        "1\tTL201\t[-] discarded-tensor-conversion",
        "Found 7 problems (5 fixable with --fix, 1 more with --fix --unsafe-fixes).",
    ]
    # no finding lines: the counts replace them
    assert not any(DIAGNOSTIC.match(line) for line in lines(result))


def test_statistics_mark_unsafe_fixes_as_applicable_with_unsafe_fixes(reporting):
    assert "1\tTL201\t[*] discarded-tensor-conversion" in lines(reporting.statistics_unsafe)


def test_statistics_as_json(reporting):
    import json

    data = json.loads(reporting.statistics_json.stdout)
    assert [(row["code"], row["count"], row["fixable"], row["fix_needs_unsafe_fixes"]) for row in data] == [
        ("TL103", 3, True, False), ("TL101", 1, True, False), ("TL102", 1, False, False),
        ("TL106", 1, True, False), ("TL201", 1, False, True),
    ]
    assert data[0]["name"] == "deprecated-upsample"
    assert data[0]["message"] == "`upsample` is deprecated; use `interpolate(...)`"


def test_statistics_with_a_format_that_cannot_show_them_is_a_usage_error(reporting):
    result = reporting.statistics_github
    assert result.returncode == 2
    assert "--statistics" in result.stderr
    no_traceback(result)


def test_exit_zero_reports_but_exits_0(reporting):
    result = reporting.exit_zero
    assert result.returncode == 0
    assert len([line for line in lines(result) if DIAGNOSTIC.match(line)]) == 4
    assert lines(result)[-1].startswith("Found 4 problems")
    # errors are still errors
    assert reporting.exit_zero_error.returncode == 2


def test_show_fixes_lists_the_fixes_applied_to_each_file(reporting):
    result = reporting.show
    assert result.returncode == 1  # TL201 (unsafe) remains
    out = lines(result)
    start = out.index("Applied fixes:")
    assert out[start:] == [
        "Applied fixes:",
        "  a.py",
        "    TL101 (data-index-scalar): 1 fix",
        "    TL103 (deprecated-upsample): 1 fix",
        "    TL106 (legacy-loss-reduction): 1 fix",
        "  b.py",
        "    TL103 (deprecated-upsample): 1 fix",
        "Fixed 4 problems. Found 1 problem remaining (1 with --fix --unsafe-fixes).",
    ]
    assert (reporting.fixes["show"] / "a.py").read_text() == mixed_fixed(MIXED)
    assert "Applied fixes:" not in reporting.quiet.stdout
    assert lines(reporting.quiet) == out[:start] + out[-1:]


def test_exit_non_zero_on_fix(reporting):
    result = reporting.nonzero
    assert lines(result) == ["Fixed 5 problems."]
    assert result.returncode == 1  # nothing remains, but files were changed
    assert (reporting.fixes["nonzero"] / "b.py").read_text() == UPSAMPLE_FIXED
    assert reporting.nonzero_clean.returncode == 0  # nothing to fix
    assert reporting.zero_fix.returncode == 0  # --exit-zero wins, as in ruff


# --------------------------------------------------------------------------
# --stdin-filename
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stdin(tmp_path_factory):
    d = tmp_path_factory.mktemp("stdin")
    put(d, "pyproject.toml", '[tool.torchlint]\nper-file-ignores = {"legacy/*" = ["TL103"]}\n'
                             'extend-exclude = ["generated"]\n')
    crlf_latin1 = ("# -*- coding: latin-1 -*-\r\n# café\r\n" + UPSAMPLE.replace("\n", "\r\n")).encode("latin-1")
    jobs = {
        "lint": lambda: run_bytes(["--stdin-filename", "src/m.py"], d, MIXED.encode()),
        "dash": lambda: run_bytes(["-"], d, UPSAMPLE.encode()),
        "per_file": lambda: run_bytes(["--stdin-filename", "legacy/m.py"], d, UPSAMPLE.encode()),
        "fix": lambda: run_bytes(["--fix", "--stdin-filename", "src/m.py"], d, MIXED.encode()),
        "fix_unsafe": lambda: run_bytes(["--fix", "--unsafe-fixes", "--stdin-filename", "m.py"], d, CUDA.encode()),
        "fix_clean": lambda: run_bytes(["--fix", "--stdin-filename", "m.py"], d, CLEAN.encode()),
        "fix_encoding": lambda: run_bytes(["--fix", "--stdin-filename", "m.py"], d, crlf_latin1),
        "fix_broken": lambda: run_bytes(["--fix", "--stdin-filename", "m.py"], d, b"import torch\ndef f(:\n"),
        "fix_show": lambda: run_bytes(["--fix", "--show-fixes", "--stdin-filename", "m.py"], d, UPSAMPLE.encode()),
        "fix_forced_exclude": lambda: run_bytes(
            ["--fix", "--force-exclude", "--stdin-filename", "generated/m.py"], d, UPSAMPLE.encode()),
        "diff": lambda: run_bytes(["--diff", "--stdin-filename", "src/m.py"], d, UPSAMPLE.encode()),
        "json": lambda: run_bytes(["--output-format", "json", "--stdin-filename", "src/m.py"], d, CUDA.encode()),
        "with_paths": lambda: run_bytes(["--stdin-filename", "m.py", "other.py"], d, CUDA.encode()),
    }
    return SimpleNamespace(dir=d, crlf_latin1=crlf_latin1, **in_parallel(jobs))


def test_stdin_is_reported_under_the_given_name(stdin):
    result = stdin.lint
    assert result.returncode == 1
    out = result.stdout.decode().splitlines()
    assert [line.split(":")[0] for line in out[:-1]] == ["src/m.py"] * 4
    assert out[-1] == "Found 4 problems (3 fixable with --fix, 1 more with --fix --unsafe-fixes)."
    assert stdin.dash.stdout.decode().splitlines()[0] == "-:4:7: TL103 `upsample` is deprecated; use `interpolate(...)`"
    assert not (stdin.dir / "src").exists()  # nothing is written under that name


def test_per_file_ignores_apply_to_the_stdin_filename(stdin):
    assert (stdin.per_file.returncode, stdin.per_file.stdout.decode()) == (0, "All checks passed.\n")


def test_fix_on_stdin_writes_only_the_fixed_source_to_stdout(stdin):
    result = stdin.fix
    assert result.stdout.decode() == mixed_fixed(MIXED)
    # what remains is reported on stderr
    assert "src/m.py:10:1: TL201 " in result.stderr.decode()
    assert result.returncode == 1
    unsafe = stdin.fix_unsafe
    assert (unsafe.returncode, unsafe.stdout.decode()) == (0, CUDA_FIXED)
    clean = stdin.fix_clean
    assert (clean.returncode, clean.stdout.decode()) == (0, CLEAN)


def test_fix_on_stdin_keeps_the_encoding_and_line_endings(stdin):
    result = stdin.fix_encoding
    assert result.returncode == 0, result
    assert result.stdout == stdin.crlf_latin1.replace(b"F.upsample", b"F.interpolate")


def test_fix_on_stdin_with_a_syntax_error_echoes_the_source_unchanged(stdin):
    result = stdin.fix_broken
    assert result.returncode == 2
    assert result.stdout == b"import torch\ndef f(:\n"
    assert b"m.py:2:" in result.stderr and b"cannot parse" in result.stderr
    no_traceback(result)


def test_show_fixes_on_stdin_go_to_stderr(stdin):
    result = stdin.fix_show
    assert result.stdout.decode() == UPSAMPLE_FIXED
    assert "TL103 (deprecated-upsample): 1 fix" in result.stderr.decode()


def test_force_excluded_stdin_is_passed_through(stdin):
    result = stdin.fix_forced_exclude
    assert (result.returncode, result.stdout, result.stderr) == (0, UPSAMPLE.encode(), b"")


def test_diff_and_json_on_stdin(stdin):
    diff = stdin.diff.stdout.decode()
    assert stdin.diff.returncode == 1
    assert "--- a/src/m.py\n+++ b/src/m.py\n" in diff and "+y = F.interpolate(x, scale_factor=2)\n" in diff
    import json

    (item,) = json.loads(stdin.json.stdout)
    assert (item["filename"], item["code"]) == ("src/m.py", "TL201")


def test_stdin_filename_with_paths_is_a_usage_error(stdin):
    assert stdin.with_paths.returncode == 2
    assert b"--stdin-filename" in stdin.with_paths.stderr


# --------------------------------------------------------------------------
# --add-noqa
# --------------------------------------------------------------------------

NOQA_SOURCE = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "x = torch.zeros(1, 1, 2, 2)\n"
    "a = F.upsample(x, scale_factor=2)\n"                      # plain line
    "b = F.upsample(x, scale_factor=2)  # noqa: E501\n"        # merge with flake8 codes
    "c = F.upsample(x)  # type: ignore\n"                      # another comment stays first
    'd = F.upsample(x, mode="""nearest\n'                      # a multi-line string: the comment
    '""")\n'                                                   # goes after its end
    "e = F.upsample(x, \\\n"                                   # a backslash continuation
    "    scale_factor=2)\n"
    "t = torch.zeros(3)\n"
    "t.cuda(); F.upsample(x)   \n"                             # two codes; trailing spaces kept
    "f = F.upsample(\n"                                        # a multi-line call: reported on
    "    x,\n"                                                 # its first line
    ")\n"
    "g = 1  # noqa: E501\n"
)
NOQA_EXPECTED = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "x = torch.zeros(1, 1, 2, 2)\n"
    "a = F.upsample(x, scale_factor=2)  # noqa: TL103\n"
    "b = F.upsample(x, scale_factor=2)  # noqa: E501, TL103\n"
    "c = F.upsample(x)  # type: ignore  # noqa: TL103\n"
    'd = F.upsample(x, mode="""nearest\n'
    '""")  # noqa: TL103\n'
    "e = F.upsample(x, \\\n"
    "    scale_factor=2)  # noqa: TL103\n"
    "t = torch.zeros(3)\n"
    "t.cuda(); F.upsample(x)   # noqa: TL103, TL201\n"
    "f = F.upsample(  # noqa: TL103\n"
    "    x,\n"
    ")\n"
    "g = 1  # noqa: E501\n"
)


@pytest.fixture(scope="module")
def noqa(tmp_path_factory):
    d = tmp_path_factory.mktemp("add-noqa")
    files = {
        "m.py": put(d, "m.py", NOQA_SOURCE),
        "crlf.py": put(d, "crlf.py", NOQA_SOURCE.replace("\n", "\r\n")),
        "clean.py": put(d, "clean.py", CLEAN, aged=True),
        "in_string.py": put(d, "in_string.py", 'import torch.nn.functional as F\ns = "# noqa: E501"; F.upsample(x)\n'),
        "nonl.py": put(d, "nonl.py", UPSAMPLE.rstrip("\n")),
    }
    clean_before = fingerprint(files["clean.py"])
    first = run_torchlint(["--add-noqa", "."], cwd=d)
    after_first = {name: path.read_bytes() for name, path in files.items()}
    for path in files.values():
        age(path)
    before_second = {name: fingerprint(path) for name, path in files.items()}
    second = run_torchlint(["--add-noqa", "."], cwd=d)
    after_second = {name: fingerprint(path) for name, path in files.items()}
    runs = in_parallel({
        "check": lambda: run_torchlint(["m.py", "crlf.py", "nonl.py"], cwd=d),
        "flake8": lambda: run_flake8(["--select", "TL", "m.py", "crlf.py", "nonl.py"], cwd=d),
        "with_fix": lambda: run_torchlint(["--add-noqa", "--fix", "m.py"], cwd=d),
    })
    return SimpleNamespace(dir=d, files=files, first=first, second=second, after_first=after_first,
                           before_second=before_second, after_second=after_second, clean_before=clean_before,
                           **runs)


def test_add_noqa_appends_the_codes_where_flake8_looks_for_them(noqa):
    assert noqa.first.returncode == 0, noqa.first
    assert noqa.after_first["m.py"].decode() == NOQA_EXPECTED
    # 7 lines in m.py, the same 7 in crlf.py, 1 in nonl.py
    assert noqa.first.stdout.splitlines()[-1] == "Added noqa comments to 15 lines in 3 files."


def test_add_noqa_keeps_crlf_and_a_missing_final_newline(noqa):
    assert noqa.after_first["crlf.py"] == NOQA_EXPECTED.replace("\n", "\r\n").encode()
    assert noqa.after_first["nonl.py"] == (UPSAMPLE.rstrip("\n") + "  # noqa: TL103").encode()


def test_add_noqa_changes_nothing_but_the_end_of_the_lines(noqa):
    before = NOQA_SOURCE.splitlines()
    after = NOQA_EXPECTED.splitlines()
    assert len(before) == len(after)
    for old, new in zip(before, after):
        assert new.startswith(old), (old, new)
        assert new == old or "# noqa" in new[len(old):] or "TL" in new[len(old):]


def test_after_add_noqa_neither_torchlint_nor_flake8_reports_anything(noqa):
    assert (noqa.check.returncode, noqa.check.stdout) == (0, "All checks passed.\n")
    assert (noqa.flake8.returncode, noqa.flake8.stdout) == (0, "")


def test_add_noqa_is_idempotent(noqa):
    assert noqa.second.returncode == 0
    assert noqa.after_second == noqa.before_second
    assert noqa.second.stdout.splitlines()[-1] == "Added noqa comments to 0 lines in 0 files."


def test_add_noqa_leaves_files_without_findings_alone(noqa):
    assert fingerprint(noqa.files["clean.py"]) == noqa.clean_before


def test_add_noqa_does_not_touch_a_line_whose_noqa_is_decided_elsewhere(noqa):
    # `# noqa: E501` inside a string is what flake8's search finds first on
    # that line: a comment added at the end would not work, so none is added.
    assert noqa.after_first["in_string.py"] == noqa.files["in_string.py"].read_bytes()
    assert b"# noqa: E501\"; F.upsample(x)\n" in noqa.after_first["in_string.py"]
    assert "in_string.py:2: cannot add `# noqa: TL103`" in noqa.first.stderr


def test_add_noqa_with_fix_is_a_usage_error(noqa):
    assert noqa.with_fix.returncode == 2
    assert "--add-noqa" in noqa.with_fix.stderr


# --------------------------------------------------------------------------
# colour
# --------------------------------------------------------------------------


def run_in_terminal(args, cwd, env) -> str:
    """Run the CLI with stdout and stderr on a pseudo-terminal; return what it printed."""
    master, slave = pty.openpty()
    try:
        process = subprocess.Popen([sys.executable, "-m", "torchlint", *args], cwd=cwd, env=env,
                                   stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    finally:
        os.close(slave)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                break
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
        process.wait(timeout=60)
    return b"".join(chunks).decode()


def _env(**changes) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["TERM"] = "xterm"
    env.update(changes)
    return env


@pytest.fixture(scope="module")
def colour(tmp_path_factory):
    d = tmp_path_factory.mktemp("colour")
    put(d, "a.py", UPSAMPLE)
    plain_env, no_color_env, force_env = _env(), _env(NO_COLOR="1"), _env(FORCE_COLOR="1")
    return SimpleNamespace(**in_parallel({
        "tty": lambda: run_in_terminal(["a.py"], d, plain_env),
        "tty_full": lambda: run_in_terminal(["--output-format", "full", "a.py"], d, plain_env),
        "tty_no_color": lambda: run_in_terminal(["a.py"], d, no_color_env),
        "tty_json": lambda: run_in_terminal(["--output-format", "json", "a.py"], d, plain_env),
        "tty_github": lambda: run_in_terminal(["--output-format", "github", "a.py"], d, plain_env),
        "tty_dumb": lambda: run_in_terminal(["a.py"], d, _env(TERM="dumb")),
        "pipe": lambda: run_bytes(["a.py"], d, env=plain_env),
        "pipe_force": lambda: run_bytes(["a.py"], d, env=force_env),
        "pipe_force_no_color": lambda: run_bytes(["a.py"], d, env=_env(FORCE_COLOR="1", NO_COLOR="1")),
        "pipe_force_json": lambda: run_bytes(["--output-format", "json", "a.py"], d, env=force_env),
        "file": lambda: _to_file(d, plain_env),
    }))


def _to_file(d: Path, env) -> str:
    out = d / "out.txt"
    with open(out, "wb") as handle:
        subprocess.run([sys.executable, "-m", "torchlint", "a.py"], cwd=d, env=env, stdout=handle, timeout=120)
    return out.read_text()


def _strip(text: str) -> str:
    import re
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_colour_on_a_terminal(colour):
    assert ESC in colour.tty
    # the colour is only decoration: without it, the text is the plain output
    assert _strip(colour.tty).replace("\r\n", "\n") == (
        "a.py:4:7: TL103 `upsample` is deprecated; use `interpolate(...)`\n"
        "Found 1 problem (1 fixable with --fix).\n"
    )
    assert ESC in colour.tty_full
    assert "+y = F.interpolate(x, scale_factor=2)" in _strip(colour.tty_full)


@pytest.mark.parametrize("run", ["tty_no_color", "tty_json", "tty_github", "tty_dumb"])
def test_no_colour_on_a_terminal_with_no_color_or_a_machine_format(colour, run):
    output = getattr(colour, run)
    assert "TL103" in output
    assert ESC not in output


def test_never_colour_in_pipes_and_files(colour):
    assert ESC not in colour.pipe.stdout.decode()
    assert ESC not in colour.file
    assert colour.file.startswith("a.py:4:7: TL103")


def test_force_color_colours_a_pipe_but_no_color_wins(colour):
    assert ESC in colour.pipe_force.stdout.decode()
    assert ESC not in colour.pipe_force_no_color.stdout.decode()
    assert ESC not in colour.pipe_force_json.stdout.decode()


# --------------------------------------------------------------------------
# --fix-only (ruff's): fix, report nothing that remains, exit 0 for it
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fix_only(tmp_path_factory):
    dirs = {name: tmp_path_factory.mktemp(f"fix-only-{name}") for name in
            ("plain", "nothing", "on_fix", "json", "broken", "unsafe")}
    for d in dirs.values():
        put(d, "a.py", MIXED)
        put(d, "c.py", NO_FIX)
    put(dirs["nothing"], "a.py", NO_FIX)
    put(dirs["broken"], "b.py", "import torch\ndef f(:\n")
    runs = in_parallel({
        "plain": lambda: run_torchlint(["--isolated", "--fix-only", "."], cwd=dirs["plain"]),
        "nothing": lambda: run_torchlint(["--isolated", "--fix-only", "."], cwd=dirs["nothing"]),
        "on_fix": lambda: run_torchlint(["--isolated", "--fix-only", "--exit-non-zero-on-fix", "."], cwd=dirs["on_fix"]),
        "json": lambda: run_torchlint(["--isolated", "--fix-only", "--output-format", "json", "."], cwd=dirs["json"]),
        "broken": lambda: run_torchlint(["--isolated", "--fix-only", "."], cwd=dirs["broken"]),
        "unsafe": lambda: run_torchlint(["--isolated", "--fix-only", "--unsafe-fixes", "--show-fixes", "."],
                                        cwd=dirs["unsafe"]),
    })
    return SimpleNamespace(dirs=dirs, **runs)


def test_fix_only_fixes_and_reports_only_what_it_fixed(fix_only):
    result = fix_only.plain
    assert (result.returncode, result.stderr) == (0, "")  # TL201 and c.py's finding remain: not reported
    assert result.stdout == "Fixed 3 problems (1 more fixable with --unsafe-fixes).\n"
    assert (fix_only.dirs["plain"] / "a.py").read_text() == mixed_fixed(MIXED)


def test_fix_only_with_nothing_to_fix_prints_nothing_and_exits_0(fix_only):
    assert (fix_only.nothing.returncode, fix_only.nothing.stdout, fix_only.nothing.stderr) == (0, "", "")


def test_fix_only_exits_1_on_a_fix_with_exit_non_zero_on_fix(fix_only):
    assert fix_only.on_fix.returncode == 1
    assert (fix_only.dirs["on_fix"] / "a.py").read_text() == mixed_fixed(MIXED)


def test_fix_only_with_a_structured_format_writes_nothing(fix_only):
    assert (fix_only.json.returncode, fix_only.json.stdout) == (0, "")
    assert (fix_only.dirs["json"] / "a.py").read_text() == mixed_fixed(MIXED)


def test_fix_only_still_exits_2_on_a_file_it_cannot_read(fix_only):
    result = fix_only.broken
    assert result.returncode == 2
    assert "b.py:2:7: cannot parse" in result.stderr
    assert result.stdout == "Fixed 3 problems (1 more fixable with --unsafe-fixes). 1 file could not be checked " \
                            "(see the errors above).\n"


def test_fix_only_with_unsafe_fixes_and_show_fixes(fix_only):
    result = fix_only.unsafe
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == "Applied fixes:"
    assert result.stdout.splitlines()[-1] == "Fixed 4 problems."
    assert (fix_only.dirs["unsafe"] / "a.py").read_text() == mixed_fixed(MIXED, unsafe=True)


@pytest.fixture(scope="module")
def fix_only_setting(tmp_path_factory):
    """``fix-only = true`` in the configuration (ruff's setting), and the command
    lines that override it or ask for another mode."""
    names = ("plain", "no_fix_only", "diff", "statistics", "setup_cfg", "bad", "settings")
    dirs = {name: tmp_path_factory.mktemp(f"fix-only-setting-{name}") for name in names}
    for name, d in dirs.items():
        put(d, "a.py", MIXED)
        put(d, "c.py", NO_FIX)
        if name == "setup_cfg":
            put(d, "setup.cfg", "[torchlint]\nfix-only = true\n")
        else:
            value = '"maybe"' if name == "bad" else "true"
            put(d, "pyproject.toml", f"[tool.torchlint]\nfix-only = {value}\n")
    runs = in_parallel({
        "plain": lambda: run_torchlint(["--no-cache", "."], cwd=dirs["plain"]),
        "no_fix_only": lambda: run_torchlint(["--no-cache", "--no-fix-only", "."], cwd=dirs["no_fix_only"]),
        "diff": lambda: run_torchlint(["--no-cache", "--diff", "."], cwd=dirs["diff"]),
        "statistics": lambda: run_torchlint(["--no-cache", "--statistics", "."], cwd=dirs["statistics"]),
        "setup_cfg": lambda: run_torchlint(["--no-cache", "."], cwd=dirs["setup_cfg"]),
        "bad": lambda: run_torchlint(["--no-cache", "."], cwd=dirs["bad"]),
        "shown": lambda: run_torchlint(["--show-settings"], cwd=dirs["settings"]),
        "shown_overridden": lambda: run_torchlint(["--show-settings", "--no-fix-only"], cwd=dirs["settings"]),
    })
    return SimpleNamespace(dirs=dirs, **runs)


def test_fix_only_setting_fixes_and_reports_only_what_it_fixed(fix_only_setting):
    """``fix-only = true``: ``torchlint .`` runs as ``torchlint --fix-only .`` (ruff's behaviour), from
    pyproject.toml and setup.cfg alike."""
    for run, folder in ((fix_only_setting.plain, "plain"), (fix_only_setting.setup_cfg, "setup_cfg")):
        assert (run.returncode, run.stderr) == (0, ""), folder
        assert run.stdout == "Fixed 3 problems (1 more fixable with --unsafe-fixes).\n", folder
        assert (fix_only_setting.dirs[folder] / "a.py").read_text() == mixed_fixed(MIXED), folder


def test_no_fix_only_overrides_the_setting(fix_only_setting):
    run = fix_only_setting.no_fix_only
    assert run.returncode == 1  # a plain check: the findings are reported, nothing is written
    assert "TL201" in run.stdout and "TL103" in run.stdout
    assert (fix_only_setting.dirs["no_fix_only"] / "a.py").read_text() == MIXED


def test_the_fix_only_setting_gives_way_to_diff_and_statistics(fix_only_setting):
    """On the command line ``--fix-only --statistics`` is a usage error; a setting
    cannot make one: the mode the command line asks for runs, and writes nothing."""
    diff, statistics = fix_only_setting.diff, fix_only_setting.statistics
    assert diff.returncode == 1 and diff.stdout.startswith("--- a/a.py\n+++ b/a.py\n")
    assert statistics.returncode == 1 and "TL201" in statistics.stdout
    for folder in ("diff", "statistics"):
        assert (fix_only_setting.dirs[folder] / "a.py").read_text() == MIXED, folder


def test_show_settings_shows_the_fix_only_setting(fix_only_setting):
    assert fix_only_setting.shown.returncode == 0
    assert re.search(r"^fix-only: +true$", fix_only_setting.shown.stdout, re.M), fix_only_setting.shown.stdout
    assert re.search(r"^fix-only: +false$", fix_only_setting.shown_overridden.stdout, re.M)


def test_a_bad_fix_only_value_is_a_clear_error(fix_only_setting):
    run = fix_only_setting.bad
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "[tool.torchlint] fix-only: expected true or false, got 'maybe'" in run.stderr
    assert (fix_only_setting.dirs["bad"] / "a.py").read_text() == MIXED


# --------------------------------------------------------------------------
# fixable / unfixable / extend-fixable, extend-safe-fixes / extend-unsafe-fixes (ruff's)
# --------------------------------------------------------------------------


def _json_fixes(result) -> Dict[str, Optional[str]]:
    return {item["code"]: item["fix"] and item["fix"]["applicability"] for item in json.loads(result.stdout)}


@pytest.fixture(scope="module")
def policies(tmp_path_factory):
    configs = {
        "unfixable_cli": ("", ["--unfixable", "TL103"]),
        "unfixable_prefix_extend_fixable": ('unfixable = ["TL1"]\nextend-fixable = ["TL103"]\n', []),
        "fixable_cli_replaces": ('fixable = ["TL103"]\n', ["--fixable", "TL101"]),
        "extend_fixable_cli": ('fixable = ["TL103"]\n', ["--extend-fixable", "TL106"]),
        "safe": ('extend-safe-fixes = ["TL201"]\n', []),
        "unsafe": ('extend-unsafe-fixes = ["TL103"]\n', []),
        "both": ('extend-safe-fixes = ["TL2", "TL103"]\nextend-unsafe-fixes = ["TL103"]\n', []),
    }
    jobs = {}
    dirs = {}
    for name, (config, args) in configs.items():
        d = dirs[name] = tmp_path_factory.mktemp(name)
        put(d, "pyproject.toml", "[tool.torchlint]\n" + config)
        put(d, "a.py", MIXED)
        put(d, "check/a.py", MIXED)
        jobs[name] = (lambda d=d, args=args: run_torchlint([*args, "--fix", "a.py"], cwd=d))
        jobs[name + "_json"] = (lambda d=d, args=args: run_torchlint(
            [*args, "--output-format", "json", "check/a.py"], cwd=d))
    bad = tmp_path_factory.mktemp("bad")
    put(bad, "pyproject.toml", '[tool.torchlint]\nunfixable = ["TL9"]\n')
    put(bad, "a.py", MIXED)
    jobs["bad_config"] = lambda: run_torchlint(["a.py"], cwd=bad)
    jobs["bad_cli"] = lambda: run_torchlint(["--isolated", "--fixable", "XY1", "a.py"], cwd=bad)
    return SimpleNamespace(dirs=dirs, **in_parallel(jobs))


def _fixed(policies, name) -> str:
    return (policies.dirs[name] / "a.py").read_text()


def test_unfixable_rules_are_reported_without_their_fix_and_never_fixed(policies):
    result = policies.unfixable_cli
    assert result.returncode == 1
    assert _fixed(policies, "unfixable_cli") == mixed_fixed(MIXED).replace("F.interpolate", "F.upsample")
    assert result.stdout.splitlines()[-1] == "Fixed 2 problems. Found 2 problems remaining (1 with --fix --unsafe-fixes)."
    assert _json_fixes(policies.unfixable_cli_json) == {
        "TL101": "safe", "TL103": None, "TL106": "safe", "TL201": "unsafe"}


def test_the_longest_prefix_decides_between_fixable_and_unfixable(policies):
    assert _json_fixes(policies.unfixable_prefix_extend_fixable_json) == {
        "TL101": None, "TL103": "safe", "TL106": None, "TL201": "unsafe"}
    fixed = _fixed(policies, "unfixable_prefix_extend_fixable")
    assert "F.interpolate" in fixed and "loss.data[0]" in fixed and "size_average=False" in fixed


def test_fixable_on_the_command_line_replaces_the_configuration_and_extend_fixable_adds(policies):
    assert _json_fixes(policies.fixable_cli_replaces_json) == {
        "TL101": "safe", "TL103": None, "TL106": None, "TL201": None}
    assert _json_fixes(policies.extend_fixable_cli_json) == {
        "TL101": None, "TL103": "safe", "TL106": "safe", "TL201": None}


def test_extend_safe_fixes_makes_an_unsafe_fix_safe(policies):
    assert _json_fixes(policies.safe_json)["TL201"] == "safe"
    assert _fixed(policies, "safe") == mixed_fixed(MIXED, unsafe=True)  # --fix alone applied TL201's fix
    assert policies.safe.stdout.splitlines()[-1] == "Fixed 4 problems."


def test_extend_unsafe_fixes_makes_a_safe_fix_unsafe(policies):
    assert _json_fixes(policies.unsafe_json)["TL103"] == "unsafe"
    assert "F.upsample" in _fixed(policies, "unsafe") and "loss.item()" in _fixed(policies, "unsafe")


def test_extend_unsafe_fixes_wins_where_both_name_a_rule_as_closely(policies):
    assert _json_fixes(policies.both_json) == {"TL101": "safe", "TL103": "unsafe", "TL106": "safe", "TL201": "safe"}


def test_a_bad_fixable_selector_is_an_error(policies):
    for result, where in ((policies.bad_config, "pyproject.toml: [tool.torchlint] unfixable"),
                          (policies.bad_cli, "--fixable")):
        assert result.returncode == 2 and result.stdout == ""
        no_traceback(result)
        assert where in result.stderr, result.stderr


def test_the_result_cache_keeps_apart_runs_with_different_fix_policies(tmp_path):
    put(tmp_path, "a.py", MIXED)
    first = run_torchlint(["--output-format", "json", "a.py"], cwd=tmp_path)
    assert _json_fixes(first)["TL103"] == "safe"
    put(tmp_path, "pyproject.toml", '[tool.torchlint]\nextend-unsafe-fixes = ["TL103"]\nunfixable = ["TL101"]\n')
    second = run_torchlint(["--output-format", "json", "--cache-dir", ".torchlint_cache", "a.py"], cwd=tmp_path)
    assert _json_fixes(second) == {"TL101": None, "TL103": "unsafe", "TL106": "safe", "TL201": "unsafe"}


# --------------------------------------------------------------------------
# --add-noqa=REASON (ruff's spelling)
# --------------------------------------------------------------------------


def test_add_noqa_with_a_reason_writes_it_after_the_codes(tmp_path):
    put(tmp_path, "m.py", MIXED)
    put(tmp_path, "n.py", "import torch\nt = torch.zeros(3)\nt.cuda()  # noqa: TL101\nt.cuda()  # noqa: TL101 old\n")
    result = run_torchlint(["--isolated", "--add-noqa=reviewed: legacy code, see #12", "m.py", "n.py"], cwd=tmp_path)
    assert result.returncode == 0, result
    assert result.stdout == "Added noqa comments to 6 lines in 2 files.\n"
    m = (tmp_path / "m.py").read_text().splitlines()
    assert m[5] == "total = loss.data[0]  # noqa: TL101 reviewed: legacy code, see #12"
    assert m[9] == "t.cuda()  # noqa: TL201 reviewed: legacy code, see #12"
    n = (tmp_path / "n.py").read_text().splitlines()
    assert n[2:] == ["t.cuda()  # noqa: TL101, TL201 reviewed: legacy code, see #12",
                     "t.cuda()  # noqa: TL101, TL201 old"]  # a comment's own words stay
    assert run_torchlint(["--isolated", "m.py", "n.py"], cwd=tmp_path).stdout == "All checks passed.\n"
    assert run_flake8(["--select", "TL", "m.py", "n.py"], cwd=tmp_path).stdout == ""


def test_add_noqa_without_equals_takes_no_reason_and_checks_the_path(tmp_path):
    put(tmp_path, "src/m.py", CUDA)
    result = run_torchlint(["--isolated", "--add-noqa", "src"], cwd=tmp_path)
    assert result.returncode == 0, result
    assert (tmp_path / "src" / "m.py").read_text().splitlines()[-1] == "t.cuda()  # noqa: TL201"


@pytest.mark.parametrize("reason", ["E501 is fine", "tl2 migration", "two\nlines"])
def test_add_noqa_refuses_a_reason_that_would_not_stay_a_reason(tmp_path, reason):
    put(tmp_path, "m.py", CUDA)
    result = run_torchlint(["--isolated", f"--add-noqa={reason}", "m.py"], cwd=tmp_path)
    assert result.returncode == 2
    no_traceback(result)
    assert "--add-noqa: " in result.stderr
    assert (tmp_path / "m.py").read_text() == CUDA
