"""flake8 driven the way editors drive it, output parsed the way they parse it.

- VS Code's flake8 extension (microsoft/vscode-flake8) runs flake8 *inside its
  language-server process* (``runpy.run_module("flake8")`` with ``sys.argv``
  and the std streams swapped), once per save, on the saved file's absolute
  path, with ``--format='%(row)d,%(col)d,%(code).1s,%(code)s:%(text)s'`` (the
  quotes are part of the argument; it strips them from each output line). It
  maps severities through ``flake8.severity``, trying the code and then ever
  shorter prefixes of it, then the one-letter type, default Error.
- python-lsp-server's flake8 plugin pipes the unsaved buffer into
  ``flake8 -`` followed by its options (``--select=...``) and parses
  ``(.*):(\\d*):(\\d*): (\\w*) (.*)``; efm-langserver, nvim-lint and null-ls use
  ``flake8 --stdin-display-name PATH -``.

In every case stdout must hold flake8's finding lines and nothing else.
test_flake8_plugin.py already checks the plain formats against the CLI; these
tests add the editors' own invocations and parsers.
"""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
import textwrap

import pytest
from conftest import run_flake8

SOURCE = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "\n"
    "x = torch.zeros(1, 1, 2, 2)\n"
    "y = F.upsample(x, scale_factor=2)\n"
    "z = F.sigmoid(x)\n"
    "unused = 1;\n"  # E703: flake8's own checks run alongside
)
TL_FINDINGS = [
    (5, 7, "TL103", "`upsample` is deprecated; use `interpolate(...)`"),
    (6, 7, "TL104", "`F.sigmoid` is a deprecated alias; use `torch.sigmoid`"),
]

# --- VS Code ------------------------------------------------------------------------

VSCODE_FORMAT_ARG = "--format='%(row)d,%(col)d,%(code).1s,%(code)s:%(text)s'"
VSCODE_RE = re.compile(r"(?P<line>\d+),(?P<column>-?\d+),(?P<type>\w+),(?P<code>\w+\d+):(?P<message>[^\r\n]*)")
VSCODE_DEFAULT_SEVERITY = {"E": "Error", "F": "Error", "I": "Information", "W": "Warning"}

# Runs flake8 in one long-lived process as the extension's language server
# does, for each job in turn; prints one JSON object per run.
VSCODE_DRIVER = textwrap.dedent('''
    import contextlib, io, json, os, runpy, sys

    class Stream(io.TextIOWrapper):
        def __init__(self):
            super().__init__(io.BytesIO(), encoding="utf-8")
        def close(self):
            pass
        def value(self):
            self.seek(0)
            return self.read()

    for job in json.loads(sys.argv[1]):
        if "write" in job:
            with open(job["write"]["path"], "w", encoding="utf-8") as handle:
                handle.write(job["write"]["text"])
            continue
        out, err = Stream(), Stream()
        saved = sys.argv, sys.stdout, sys.stderr, os.getcwd()
        os.chdir(job["cwd"])
        sys.argv, sys.stdout, sys.stderr = job["argv"], out, err
        try:
            with contextlib.suppress(SystemExit):
                runpy.run_module("flake8", run_name="__main__")
        finally:
            sys.argv, sys.stdout, sys.stderr = saved[:3]
            os.chdir(saved[3])
        print(json.dumps({"stdout": out.value(), "stderr": err.value()}))
''')


def vscode_session(tmp_path, jobs):
    driver = tmp_path / "vscode_driver.py"
    driver.write_text(VSCODE_DRIVER)
    result = subprocess.run(
        [sys.executable, str(driver), json.dumps(jobs)], capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return [json.loads(line) for line in result.stdout.splitlines()]


def vscode_lint_job(workspace, path, args=()):
    return {"cwd": str(workspace), "argv": ["flake8", VSCODE_FORMAT_ARG, *args, str(path)]}


def vscode_severity(code, code_type, severity):
    """The extension's lookup: the code, then shorter prefixes, then the type letter."""
    value = None
    while code and value is None:
        value = severity.get(code)
        code = code[:-1]
    if value is None:
        value = severity.get(code_type, "Error")
    return value


def vscode_parse(stdout, severity):
    diagnostics = []
    for line in stdout.splitlines():
        if line.startswith("'") and line.endswith("'"):
            line = line[1:-1]
        match = VSCODE_RE.match(line)
        assert match, f"VS Code cannot parse {line!r}"
        data = match.groupdict()
        diagnostics.append({
            "line": int(data["line"]) - 1, "character": int(data["column"]) - 1, "code": data["code"],
            "message": data["message"], "severity": vscode_severity(data["code"], data["type"], severity),
        })
    return diagnostics


def test_vscode_on_save_in_process(tmp_path):
    workspace = tmp_path / "my project"  # a space in the path, as on many machines
    (workspace / "src").mkdir(parents=True)
    path = workspace / "src" / "train.py"
    path.write_text(SOURCE)
    edited = SOURCE.replace("y = F.upsample(x, scale_factor=2)\n", "y = F.interpolate(x, scale_factor=2)\n")
    runs = vscode_session(tmp_path, [
        vscode_lint_job(workspace, path),
        {"write": {"path": str(path), "text": edited}},  # the user fixes one line and saves again
        vscode_lint_job(workspace, path),
    ])
    for run in runs:
        assert run["stderr"] == ""
    first = vscode_parse(runs[0]["stdout"], VSCODE_DEFAULT_SEVERITY)
    assert [(d["line"] + 1, d["character"] + 1, d["code"], d["message"]) for d in first if d["code"].startswith("TL")] == TL_FINDINGS
    assert any(d["code"] == "E703" for d in first)  # flake8's own checks still ran
    # Without a severity setting an unknown prefix shows as an Error ...
    assert {d["severity"] for d in first if d["code"].startswith("TL")} == {"Error"}
    # ... and the documented "flake8.severity": {"TL": "Warning"} makes them warnings.
    configured = vscode_parse(runs[0]["stdout"], {**VSCODE_DEFAULT_SEVERITY, "TL": "Warning"})
    assert {d["severity"] for d in configured if d["code"].startswith("TL")} == {"Warning"}
    assert {d["severity"] for d in configured if d["code"] == "E703"} == {"Error"}
    # The second save in the same process sees the new file: nothing is cached across runs.
    second = vscode_parse(runs[1]["stdout"], VSCODE_DEFAULT_SEVERITY)
    assert [d["code"] for d in second if d["code"].startswith("TL")] == ["TL104"]


def test_vscode_args_setting_changes_apply_in_the_same_process(tmp_path):
    # "flake8.args": ["--torch-version=2.1"] — TL104 only applies to code that supports torch < 2.0.
    path = tmp_path / "m.py"
    path.write_text(SOURCE)
    runs = vscode_session(tmp_path, [
        vscode_lint_job(tmp_path, path),
        vscode_lint_job(tmp_path, path, ["--torch-version=2.1"]),
        vscode_lint_job(tmp_path, path),
        vscode_lint_job(tmp_path, path, ["--torch-version=two"]),
    ])
    codes = [[d["code"] for d in vscode_parse(run["stdout"], {}) if d["code"].startswith("TL")] for run in runs[:3]]
    assert codes == [["TL103", "TL104"], ["TL103"], ["TL103", "TL104"]]
    # A bad setting is reported on stderr (the extension logs it), never on stdout.
    assert runs[3]["stdout"] == ""
    assert "torchlint: error: --torch-version: invalid torch version 'two'" in runs[3]["stderr"]


def test_vscode_saved_file_with_a_syntax_error(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text(SOURCE + "def f(:\n    pass\n")
    (run,) = vscode_session(tmp_path, [vscode_lint_job(tmp_path, path)])
    assert run["stderr"] == ""
    diagnostics = vscode_parse(run["stdout"], VSCODE_DEFAULT_SEVERITY)
    assert [d["code"] for d in diagnostics] == ["E999"]
    assert diagnostics[0]["line"] == 7


# --- python-lsp-server and other stdin-based clients ------------------------------

PYLSP_RE = re.compile(r"(.*):(\d*):(\d*): (\w*) (.*)")


def pylsp_flake8(buffer, cwd, options=()):
    """python-lsp-server's call: ``flake8 -`` then its options, the buffer on stdin."""
    result = run_flake8(["-", *options], cwd=cwd, input=buffer)
    diagnostics = []
    for line in result.stdout.splitlines():
        match = PYLSP_RE.match(line)
        assert match, f"python-lsp-server cannot parse {line!r}"
        path, row, column, code, message = match.groups()
        diagnostics.append((path, int(row), int(column), code, message))
    return result, diagnostics


def test_pylsp_lints_the_unsaved_buffer_not_the_file(tmp_path):
    # On disk the file is clean; the editor buffer has the findings.
    (tmp_path / "train.py").write_text("import torch\n")
    result, diagnostics = pylsp_flake8(SOURCE, tmp_path, ["--select=E,F,W,TL"])
    assert result.stderr == ""
    assert [d[1:] for d in diagnostics if d[3].startswith("TL")] == [
        (line, column, code, message) for line, column, code, message in TL_FINDINGS
    ]
    assert {d[0] for d in diagnostics} == {"stdin"}
    assert any(d[3] == "E703" for d in diagnostics)


@pytest.mark.parametrize("buffer", [
    SOURCE + "y = F.upsample(x,\n",  # typing a call
    SOURCE + "def f(\n",
    SOURCE + "import torch.nn.functional as\n",
    SOURCE + "if x:\nz = F.sigmoid(x)\n",  # IndentationError
    SOURCE + "s = 'unterminated\n",
    SOURCE + "\tx = 1\n        y = 2\n",  # TabError territory
], ids=["open-call", "open-def", "half-import", "indentation", "string", "tabs"])
@pytest.mark.parametrize("style", ["pylsp", "stdin-display-name"])
def test_buffers_being_typed_give_only_e999(tmp_path, buffer, style):
    if style == "pylsp":
        result, diagnostics = pylsp_flake8(buffer, tmp_path)
    else:
        result = run_flake8(["--stdin-display-name", str(tmp_path / "buffer.py"), "-"], cwd=tmp_path, input=buffer)
        diagnostics = [PYLSP_RE.match(line).groups() for line in result.stdout.splitlines()]
        assert {d[0] for d in diagnostics} == {str(tmp_path / "buffer.py")}
    assert result.stderr == ""
    assert "Traceback" not in result.stdout
    codes = [d[3] for d in diagnostics]
    assert "E999" in codes
    assert not any(code.startswith("TL") for code in codes)


def test_stdin_display_name_buffer_matches_the_saved_file_run(tmp_path):
    path = tmp_path / "pkg" / "model.py"
    path.parent.mkdir()
    path.write_text(SOURCE)
    saved = run_flake8(["--select=TL", str(path)], cwd=tmp_path)
    buffer = run_flake8(["--select=TL", "--stdin-display-name", str(path), "-"], cwd=tmp_path, input=SOURCE)
    assert buffer.stdout == saved.stdout
    assert buffer.stdout.splitlines() == [f"{path}:{line}:{column}: {code} {message}" for line, column, code, message in TL_FINDINGS]


def test_a_large_buffer_is_linted_quickly(tmp_path):
    # Editors lint on every change. Measured in CPU seconds of the flake8
    # process (flake8's own checks included), so a busy machine does not fail it.
    block = "def step_{i}(x):\n    y = F.upsample(x, scale_factor=2)\n    return torch.sigmoid(y) + {i}\n\n\n"
    buffer = "import torch\nimport torch.nn.functional as F\n\n\n" + "".join(block.format(i=i) for i in range(600))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result, diagnostics = pylsp_flake8(buffer, tmp_path, ["--select=TL"])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert result.stderr == ""
    assert len(diagnostics) == 600 and {d[3] for d in diagnostics} == {"TL103"}
    assert cpu < 20, f"flake8 --select TL used {cpu:.1f} CPU seconds on a {buffer.count(chr(10))}-line buffer"
