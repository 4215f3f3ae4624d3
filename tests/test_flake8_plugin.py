"""End-to-end tests of the flake8 plugin: the real flake8, in a subprocess.

The plugin promises the CLI's findings at the CLI's positions, so most tests
run both tools on the same files and compare their lines.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Dict, List, TypeVar

import libcst
import pytest
from conftest import every_rule_selector, opt_in_enable, run_flake8, run_torchlint

import torchlint
from torchlint.rules import all_rules

T = TypeVar("T")

FINDING = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) (?P<message>.*)$")

# The founding rules, plus TL107: `Variable(out, volatile=True)` is also the
# no-op Variable wrapper.
EXPECTED_CODES = {"TL101", "TL102", "TL103", "TL104", "TL105", "TL106", "TL107", "TL201", "TL202"}

# One finding of every rule, each on its own line.
ALL_RULES = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

criterion = nn.MSELoss(size_average=False)
out, target = torch.ones(3), torch.zeros(3)
loss = nn.MSELoss()(out, target)
total = loss.data[0]
v = Variable(out, volatile=True)
up = F.upsample(torch.zeros(1, 1, 2, 2), scale_factor=2)
gate = F.sigmoid(out)
w = torch.empty(3, 5)
nn.init.xavier_uniform(w)
t = torch.zeros(3)
t.cuda()
print(t.cuda().numpy())
"""

UPSAMPLE = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "x = torch.zeros(1, 1, 2, 2)\n"
    "y = F.upsample(x, scale_factor=2)\n"
)


def in_parallel(jobs: Dict[str, Callable[[], T]]) -> Dict[str, T]:
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        futures = {key: pool.submit(job) for key, job in jobs.items()}
        return {key: future.result() for key, future in futures.items()}


def findings(stdout: str) -> List[str]:
    """The finding lines of either tool (the CLI's summary line dropped)."""
    return [line for line in stdout.splitlines() if FINDING.match(line)]


def cli_findings(result) -> List[str]:
    lines = result.stdout.splitlines()
    assert lines and not FINDING.match(lines[-1]), f"no summary line: {result.stdout!r}"
    assert findings(result.stdout) == lines[:-1], result.stdout
    return lines[:-1]


def by_path(lines: List[str]) -> Dict[str, List[str]]:
    grouped: Dict[str, List[str]] = {}
    for line in lines:
        grouped.setdefault(FINDING.match(line).group("path"), []).append(line)
    return grouped


def no_traceback(result) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert "Traceback" not in result.stdout, result.stdout


def put(directory: Path, name: str, content) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


# --------------------------------------------------------------------------
# parity on every rule example
# --------------------------------------------------------------------------

# Examples Python 3 refuses (TL115's torch-era ``async``) are among them: the
# plugin has flake8 parse them as the command reads them, not report E999.
EXAMPLES = [
    (rule.code, index, example)
    for rule in all_rules()
    for index, example in enumerate(rule.flagged)
]


def example_name(code: str, index: int) -> str:
    return f"{code.lower()}_{index}.py"


@pytest.fixture(scope="module")
def example_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("examples")
    for code, index, example in EXAMPLES:
        put(d, example_name(code, index), example.code)
    names = sorted(example_name(code, index) for code, index, _ in EXAMPLES)
    # Every rule, opt-in ones included: by full code in the CLI's --select,
    # through --torchlint-enable in flake8.
    runs = in_parallel({
        "cli": lambda: run_torchlint(["--select", every_rule_selector(), *names], cwd=d),
        "flake8": lambda: run_flake8(["--select", "TL", "--torchlint-enable", opt_in_enable(), *names], cwd=d),
    })
    return SimpleNamespace(
        dir=d, cli=runs["cli"], flake8=runs["flake8"],
        cli_lines=by_path(cli_findings(runs["cli"])), flake8_lines=by_path(findings(runs["flake8"].stdout)),
    )


def test_examples_cover_every_rule_code():
    assert {code for code, _, _ in EXAMPLES} == {rule.code for rule in all_rules()}
    assert EXPECTED_CODES <= {code for code, _, _ in EXAMPLES}


def test_flake8_run_on_examples_is_clean(example_runs):
    result = example_runs.flake8
    assert result.returncode == 1
    assert result.stderr == ""
    no_traceback(result)
    # every stdout line is a finding: the plugin prints nothing of its own
    assert result.stdout.splitlines() == findings(result.stdout)


@pytest.mark.parametrize(
    "code, index, example", EXAMPLES, ids=[f"{code}-{index}" for code, index, _ in EXAMPLES]
)
def test_flake8_matches_the_cli_on_every_rule_example(example_runs, code, index, example):
    name = example_name(code, index)
    cli = example_runs.cli_lines.get(name, [])
    flake8 = example_runs.flake8_lines.get(name, [])
    assert flake8 == cli
    own = [line for line in cli if FINDING.match(line).group("code") == code]
    assert len(own) == example.count, cli


# --------------------------------------------------------------------------
# one file with every rule: file, stdin, selection and output format
# --------------------------------------------------------------------------

VSCODE_FORMAT = "%(row)d,%(col)d,%(code).1s,%(code)s:%(text)s"


@pytest.fixture(scope="module")
def all_rules_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("all-rules")
    put(d, "all.py", ALL_RULES)
    return SimpleNamespace(dir=d, **in_parallel({
        "cli": lambda: run_torchlint(["all.py"], cwd=d),
        "flake8": lambda: run_flake8(["--select", "TL", "all.py"], cwd=d),
        "stdin": lambda: run_flake8(["--select", "TL", "-", "--stdin-display-name", "some/path.py"],
                                    cwd=d, input=ALL_RULES),
        "vscode": lambda: run_flake8(["--select", "TL", f"--format={VSCODE_FORMAT}", "all.py"], cwd=d),
        "cli_tl1": lambda: run_torchlint(["--select", "TL1", "all.py"], cwd=d),
        "flake8_tl1": lambda: run_flake8(["--select", "TL1", "all.py"], cwd=d),
        "cli_ignore": lambda: run_torchlint(["--select", "TL", "--ignore", "TL10,TL202", "all.py"], cwd=d),
        "flake8_ignore": lambda: run_flake8(["--select", "TL", "--ignore", "TL10,TL202", "all.py"], cwd=d),
    }))


def test_fixture_has_one_finding_of_every_rule(all_rules_runs):
    lines = cli_findings(all_rules_runs.cli)
    assert sorted(FINDING.match(line).group("code") for line in lines) == sorted(EXPECTED_CODES)


def test_flake8_file_run_matches_the_cli(all_rules_runs):
    flake8 = all_rules_runs.flake8
    assert flake8.returncode == 1
    assert flake8.stderr == ""
    assert flake8.stdout.splitlines() == cli_findings(all_rules_runs.cli)


def test_flake8_stdin_matches_the_file_run(all_rules_runs):
    stdin = all_rules_runs.stdin
    assert stdin.returncode == 1
    assert stdin.stderr == ""
    expected = [line.replace("all.py:", "some/path.py:", 1) for line in cli_findings(all_rules_runs.cli)]
    assert stdin.stdout.splitlines() == expected
    assert len(expected) == len(EXPECTED_CODES)


def test_vscode_format(all_rules_runs):
    expected = []
    for line in cli_findings(all_rules_runs.cli):
        m = FINDING.match(line)
        expected.append(f"{m['line']},{m['col']},{m['code'][0]},{m['code']}:{m['message']}")
    lines = all_rules_runs.vscode.stdout.splitlines()
    assert lines == expected
    assert "11,8,T,TL103:`upsample` is deprecated; use `interpolate(...)`" in lines


def test_select_prefix_parity(all_rules_runs):
    cli = cli_findings(all_rules_runs.cli_tl1)
    assert sorted(FINDING.match(line).group("code") for line in cli) == sorted(
        c for c in EXPECTED_CODES if c.startswith("TL1")
    )
    assert all_rules_runs.flake8_tl1.stdout.splitlines() == cli


def test_ignore_parity(all_rules_runs):
    cli = cli_findings(all_rules_runs.cli_ignore)
    assert sorted(FINDING.match(line).group("code") for line in cli) == ["TL201"]
    assert all_rules_runs.flake8_ignore.stdout.splitlines() == cli


# --------------------------------------------------------------------------
# encodings, line endings and columns
# --------------------------------------------------------------------------

ENCODED_FILES = {
    "latin1.py": ("# -*- coding: latin-1 -*-\n# café\ns = 'ñ'; " + UPSAMPLE).encode("latin-1"),
    "bom.py": ("\ufeff# ünïcode\n" + UPSAMPLE).encode("utf-8"),
    "crlf.py": ALL_RULES.replace("\n", "\r\n").encode(),
    "mixed_endings.py": UPSAMPLE.replace("\n", "\r\n", 2).encode(),
    "no_final_newline.py": UPSAMPLE.rstrip("\n").encode(),
    "wide.py": UPSAMPLE.replace("y = F.upsample", 's = "é€😀"; y = F.upsample').encode(),
    "tabs.py": ("import torch\nimport torch.nn.functional as F\n\n\ndef f(x):\n"
                "\tif x:\n\t\treturn F.upsample(x, scale_factor=2)\n").encode(),
}


@pytest.fixture(scope="module")
def encoded_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("encodings")
    for name, data in ENCODED_FILES.items():
        put(d, name, data)
    names = sorted(ENCODED_FILES)
    return in_parallel({
        "cli": lambda: run_torchlint(names, cwd=d),
        "flake8": lambda: run_flake8(["--select", "TL", *names], cwd=d),
    })


@pytest.mark.parametrize("name", sorted(ENCODED_FILES))
def test_flake8_matches_the_cli_whatever_the_encoding_and_line_endings(encoded_runs, name):
    cli = by_path(cli_findings(encoded_runs["cli"])).get(name, [])
    flake8 = by_path(findings(encoded_runs["flake8"].stdout)).get(name, [])
    assert cli, f"the fixture {name} should have findings"
    assert flake8 == cli


def test_encoded_runs_are_clean(encoded_runs):
    assert encoded_runs["cli"].stderr == ""
    assert encoded_runs["flake8"].stderr == ""


# --------------------------------------------------------------------------
# files that do not parse
# --------------------------------------------------------------------------

BROKEN = UPSAMPLE + "\ndef f(:\n    pass\n"  # a TL103 finding before a syntax error


def test_syntax_error_gives_e999_and_no_tl_findings(tmp_path):
    put(tmp_path, "broken.py", BROKEN)
    put(tmp_path, "good.py", UPSAMPLE)
    with pytest.raises(SyntaxError) as info:
        compile(BROKEN, "broken.py", "exec")
    result = run_flake8(["--select", "E999,TL", "broken.py", "good.py"], cwd=tmp_path)
    assert result.returncode == 1
    no_traceback(result)
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert len(lines) == 2, lines
    e999 = FINDING.match(lines[0])
    assert (e999["path"], e999["code"], int(e999["line"])) == ("broken.py", "E999", info.value.lineno)
    assert lines[1] == "good.py:4:7: TL103 `upsample` is deprecated; use `interpolate(...)`"


TORCH_ERA = (
    "import torch\n"
    "from torch.autograd import Variable\n"
    "def to_var(x, async=False):\n"
    "    return Variable(x).cuda(async=async)\n"
)


def test_torch_era_async_gives_the_commands_findings_instead_of_e999(tmp_path):
    put(tmp_path, "old.py", TORCH_ERA)
    put(tmp_path, "broken.py", BROKEN)
    with pytest.raises(SyntaxError):
        compile(TORCH_ERA, "old.py", "exec")
    cli = run_torchlint(["--select", "TL", "old.py", "--no-cache"], cwd=tmp_path)
    expected = [line for line in findings(cli.stdout)]
    assert [line.split(" ", 2)[1] for line in expected] == ["TL115", "TL107", "TL115", "TL115"], cli.stdout
    # Every check on: the same TL lines as the command, no E999 for old.py; broken.py keeps its E999.
    result = run_flake8(["old.py", "broken.py"], cwd=tmp_path)
    no_traceback(result)
    lines = findings(result.stdout)
    assert [line for line in lines if " TL" in line] == expected
    assert not any(line.startswith("old.py") and " E999 " in line for line in lines), lines
    assert any(line.startswith("broken.py") and " E999 " in line for line in lines), lines
    # From stdin, as editors run it.
    piped = run_flake8(["--select", "TL", "-", "--stdin-display-name", "old.py"], cwd=tmp_path, input=TORCH_ERA)
    assert findings(piped.stdout) == expected
    # TL115 not selected: the syntax error is flake8's E999, as without the plugin.
    plain = run_flake8(["--select", "E9", "old.py"], cwd=tmp_path)
    assert [line.split(" ", 2)[1] for line in findings(plain.stdout)] == ["E999"]


def test_syntax_error_in_an_editor_run_prints_only_flake8_lines(tmp_path):
    # Editors pipe the buffer into flake8 with every check enabled.
    result = run_flake8(["-", "--stdin-display-name", "buffer.py"], cwd=tmp_path, input=BROKEN)
    assert result.returncode == 1
    no_traceback(result)
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines and all(FINDING.match(line) and line.startswith("buffer.py:") for line in lines), lines
    assert any(" E999 " in line for line in lines)
    assert not any(" TL" in line for line in lines)


def test_valid_python_that_libcst_cannot_parse_prints_only_flake8_lines(tmp_path):
    # Python parses it, so flake8 runs the plugin; libcst gives up on it.
    source = UPSAMPLE + "s = " + " ".join(['"a"'] * 5000) + "\n"
    compile(source, "deep.py", "exec")
    try:
        libcst.parse_module(source)
    except Exception:
        pass
    else:
        pytest.skip("this libcst parses the fixture; no unparseable sample at hand")
    result = run_flake8(["-", "--stdin-display-name", "deep.py"], cwd=tmp_path, input=source)
    no_traceback(result)
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert all(FINDING.match(line) and line.startswith("deep.py:") for line in lines), lines
    # flake8's own checks still ran (the plugin did not kill the run) ...
    assert any(" E501 " in line for line in lines), lines
    # ... and the plugin stayed silent
    assert not any(" TL" in line for line in lines)


# --------------------------------------------------------------------------
# version and noqa
# --------------------------------------------------------------------------


def test_flake8_version_lists_torchlint():
    result = run_flake8(["--version"])
    assert result.returncode == 0
    assert f"torchlint: {torchlint.__version__}" in result.stdout


NOQA_CASES = [
    # (suffix, suppressed?)
    ("  # noqa", True),
    ("  # noqa: TL103", True),
    ("  # noqa:TL1", True),
    ("  # noqa: E501", False),
    ("  # noqa: E501,TL103", True),
    ("  # NOQA", True),
    ("  # NoQA:TL103,TL201", True),
    ("  # noqa: TL2", False),
    ("  # noqa: TL", True),  # no digits: not a code list, a blanket noqa
    ("  # noqa:", True),
    ("  #noqa", False),  # flake8 needs "# noqa"
    ("  # noqa: tl103", False),  # codes are matched case-sensitively
    ("  # noqa: TL101 TL103 because reasons", True),
    ("  # noqa : TL201", True),  # " :" is not the code-list syntax: blanket
    ("  # type: ignore  # noqa: TL103", True),
    ('; s = "# noqa"', True),  # flake8 searches the raw line
    ("", False),
]


def noqa_source() -> str:
    lines = ["import torch", "import torch.nn.functional as F", "x = torch.zeros(1, 1, 2, 2)"]
    lines += [f"y{i} = F.upsample(x, scale_factor=2){suffix}" for i, (suffix, _) in enumerate(NOQA_CASES)]
    return "\n".join(lines) + "\n"


def test_noqa_comments_behave_the_same_in_flake8_and_the_cli(tmp_path):
    put(tmp_path, "nq.py", noqa_source())
    runs = in_parallel({
        "cli": lambda: run_torchlint(["nq.py"], cwd=tmp_path),
        "flake8": lambda: run_flake8(["--select", "TL", "nq.py"], cwd=tmp_path),
    })
    expected = [
        f"nq.py:{4 + i}:{7 + len(str(i))}: TL103 `upsample` is deprecated; use `interpolate(...)`"
        for i, (_, suppressed) in enumerate(NOQA_CASES) if not suppressed
    ]
    assert runs["flake8"].stdout.splitlines() == expected
    assert cli_findings(runs["cli"]) == expected
