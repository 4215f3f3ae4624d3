"""``--output-format``: concise, full, json, sarif, github, gitlab, junit, rdjson and pylint, from the real CLI.

One module fixture builds a folder of files and runs every format over it
once (in parallel); the tests read those runs. The SARIF log is validated
against the official SARIF 2.1.0 schema (``tests/data``, see its README).
"""

from __future__ import annotations

import json
import re
from types import SimpleNamespace
from typing import Dict, List

import jsonschema
import pytest
from conftest import REPO, run_flake8, run_torchlint
from test_cli import (
    CRLF_IMPORT,
    CUDA,
    CUDA_FIXED,
    DIAGNOSTIC,
    MIXED,
    NO_FIX,
    UPSAMPLE,
    UPSAMPLE_FIXED,
    in_parallel,
    mixed_fixed,
    no_traceback,
    put,
    run_torchlint_bytes,
)

from torchlint.rules import all_rules

SCHEMA = json.loads((REPO / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
TABBED = "import torch\nimport torch.nn.functional as F\nif True:\n\tx = torch.zeros(1, 1, 2, 2)\n\ty = F.upsample(x, scale_factor=2)\n"

FILES = {
    "mixed.py": MIXED,
    "cuda.py": CUDA,
    "nofix.py": NO_FIX,
    "tabbed.py": TABBED,
    "dir with space/up.py": UPSAMPLE,
}
ARGS = sorted(FILES)
RULE_CODES = [rule.code for rule in all_rules()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("formats")
    for name, source in FILES.items():
        put(d, name, source)
    put(d, "crlf_import.py", CRLF_IMPORT)
    put(d, "broken.py", "import torch\ndef f(:\n")
    # the same files, fixed by --fix, to compare the fixes each format shows
    fixed = tmp_path_factory.mktemp("formats-fixed")
    for name, source in FILES.items():
        put(fixed, name, source)
    put(fixed, "crlf_import.py", CRLF_IMPORT)
    jobs = {fmt: (lambda fmt=fmt: run_torchlint(["--output-format", fmt, *ARGS], cwd=d))
            for fmt in ("concise", "full", "json", "sarif", "github", "gitlab", "junit", "rdjson", "pylint")}
    jobs.update({
        "default": lambda: run_torchlint(ARGS, cwd=d),
        "flake8": lambda: run_flake8(["--select", "TL", *ARGS], cwd=d),
        "sarif_broken": lambda: run_torchlint(["--output-format", "sarif", "broken.py", "cuda.py"], cwd=d),
        "json_broken": lambda: run_torchlint(["--output-format", "json", "broken.py", "cuda.py"], cwd=d),
        "json_crlf": lambda: run_torchlint_bytes(["--output-format", "json", "crlf_import.py"], cwd=d),
        "json_clean": lambda: run_torchlint(["--output-format", "json", "--select", "TL213", "mixed.py"], cwd=d),
        "sarif_selected": lambda: run_torchlint(["--output-format", "sarif", "--select", "TL2", "cuda.py"], cwd=d),
        "fix": lambda: run_torchlint(["--fix", "--unsafe-fixes", ".", "crlf_import.py"], cwd=fixed),
        "ci_broken": lambda: {fmt: run_torchlint(["--output-format", fmt, "broken.py", "cuda.py"], cwd=d)
                              for fmt in ("gitlab", "junit", "rdjson", "pylint")},
        "ci_clean": lambda: {fmt: run_torchlint(["--output-format", fmt, "--select", "TL213", "mixed.py"], cwd=d)
                             for fmt in ("gitlab", "junit", "rdjson", "pylint")},
    })
    return SimpleNamespace(dir=d, fixed=fixed, **in_parallel(jobs))


def concise_findings(result) -> List[re.Match]:
    return [m for m in map(DIAGNOSTIC.match, result.stdout.splitlines()) if m]


# --------------------------------------------------------------------------
# concise
# --------------------------------------------------------------------------


def test_concise_is_the_default_and_matches_flake8_line_for_line(runs):
    assert runs.concise.stdout == runs.default.stdout
    assert runs.concise.returncode == 1
    lines = [m.group(0) for m in concise_findings(runs.concise)]
    assert len(lines) == 8
    assert runs.flake8.stdout.splitlines() == lines


# --------------------------------------------------------------------------
# full
# --------------------------------------------------------------------------


def _full_blocks(stdout: str) -> Dict[str, str]:
    """The full output split into one block per finding, keyed by its first line."""
    blocks: Dict[str, str] = {}
    current = None
    for line in stdout.splitlines():
        if DIAGNOSTIC.match(line):
            current = line
            blocks[current] = ""
        elif current is not None:
            blocks[current] += line + "\n"
    return blocks


def test_full_shows_each_finding_with_its_source_line_and_a_caret(runs):
    blocks = _full_blocks(runs.full.stdout)
    # the same findings as concise, in the same order
    assert list(blocks) == [m.group(0) for m in concise_findings(runs.concise)]
    for first_line, block in blocks.items():
        m = DIAGNOSTIC.match(first_line)
        path, line, column = m.group("path"), int(m.group("line")), int(m.group("col"))
        source_line = FILES[path].splitlines()[line - 1]
        assert f"\n{line} | {source_line}\n" in "\n" + block, block
        caret_line = next(text for text in block.splitlines() if "^" in text)
        gutter = len(str(line)) + 3  # "N | "
        assert caret_line.index("^") - gutter == column - 1, block
        assert caret_line.endswith("^ " + m.group("code"))


def test_full_keeps_tabs_so_the_caret_lines_up(runs):
    block = next(b for first, b in _full_blocks(runs.full.stdout).items() if first.startswith("tabbed.py:5:"))
    assert "5 | \ty = F.upsample(x, scale_factor=2)" in block
    assert "  | \t      ^^^^^^^^ TL103" in block  # a tab, then spaces under "y = F.", carets under "upsample"


def test_full_shows_the_fix_as_a_diff_that_matches_what_fix_writes(runs):
    blocks = _full_blocks(runs.full.stdout)
    for first_line, block in blocks.items():
        path = DIAGNOSTIC.match(first_line).group("path")
        if path == "nofix.py":
            assert "fix" not in block
            continue
        removed = [line.strip()[1:] for line in block.splitlines() if line.strip().startswith("-")]
        added = [line.strip()[1:] for line in block.splitlines() if line.strip().startswith("+")]
        assert removed and added, block
        fixed_lines = (runs.fixed / path).read_text().splitlines()
        original_lines = FILES[path].splitlines()
        for text in removed:
            assert text in original_lines and text not in fixed_lines, (text, block)
        for text in added:
            assert text in fixed_lines, (text, block)
    cuda = blocks["cuda.py:3:1: TL201 `.cuda()` returns a new tensor and leaves the receiver unchanged; assign the result"]
    assert "unsafe fix" in cuda and "-t.cuda()" in cuda and "+t = t.cuda()" in cuda
    assert runs.full.stdout.splitlines()[-1] == runs.concise.stdout.splitlines()[-1]


# --------------------------------------------------------------------------
# json
# --------------------------------------------------------------------------


def _apply(source: str, edits) -> str:
    """Apply JSON edits (1-based row/column, end exclusive) independently of torchlint's code."""
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position):
        return starts[position["row"] - 1] + position["column"] - 1

    for edit in sorted(edits, key=lambda e: (e["location"]["row"], e["location"]["column"]), reverse=True):
        source = source[:offset(edit["location"])] + edit["content"] + source[offset(edit["end_location"]):]
    return source


def test_json_is_a_list_with_one_object_per_finding(runs):
    result = runs.json
    assert result.returncode == 1
    assert result.stderr == ""
    data = json.loads(result.stdout)  # nothing else on stdout
    concise = concise_findings(runs.concise)
    assert len(data) == len(concise)
    for item, m in zip(data, concise):
        assert set(item) == {"filename", "code", "name", "message", "location", "end_location", "fix", "url"}
        end = item["end_location"]  # past the flagged code, on its line or a later one
        assert (end["row"], end["column"]) > (item["location"]["row"], item["location"]["column"])
        assert item["filename"] == m.group("path")
        assert item["code"] == m.group("code")
        assert item["message"] == m.group("message")
        assert item["location"] == {"row": int(m.group("line")), "column": int(m.group("col"))}
        assert item["url"].endswith(f"/docs/rules/{item['code']}.md")
        assert (REPO / "docs" / "rules" / f"{item['code']}.md").is_file()
        rule = next(r for r in all_rules() if r.code == item["code"])
        assert item["name"] == rule.name


def test_json_fixes_carry_their_applicability_and_edits_that_reproduce_fix(runs):
    data = json.loads(runs.json.stdout)
    by_file: Dict[str, list] = {}
    for item in data:
        by_file.setdefault(item["filename"], []).append(item)
    assert [item["fix"] for item in by_file["nofix.py"]] == [None]
    (cuda,) = by_file["cuda.py"]
    assert cuda["fix"]["applicability"] == "unsafe"
    assert _apply(CUDA, cuda["fix"]["edits"]) == CUDA_FIXED
    (up,) = by_file["dir with space/up.py"]
    assert up["fix"]["applicability"] == "safe"
    assert up["fix"]["message"]
    # the edit is the word that changes, not the whole line
    assert up["fix"]["edits"] == [
        {"content": "interpolate", "location": {"row": 4, "column": 7}, "end_location": {"row": 4, "column": 15}},
    ]
    assert _apply(UPSAMPLE, up["fix"]["edits"]) == UPSAMPLE_FIXED
    # each fix alone, applied in turn, gives what --fix --unsafe-fixes writes
    text = MIXED
    for item in sorted(by_file["mixed.py"], key=lambda i: i["location"]["row"], reverse=True):
        text = _apply(text, item["fix"]["edits"])
    assert text == mixed_fixed(MIXED, unsafe=True) == (runs.fixed / "mixed.py").read_text()


def test_json_edits_of_a_fix_in_two_places_with_crlf(runs):
    result = runs.json_crlf
    (item,) = json.loads(result.stdout)
    edits = item["fix"]["edits"]
    assert len(edits) == 2  # the added import and the renamed call
    expected = (runs.fixed / "crlf_import.py").read_bytes().decode()
    assert _apply(CRLF_IMPORT.decode(), edits) == expected
    assert "import torch\r\n" in expected


def test_json_output_of_a_clean_run_is_an_empty_list(runs):
    assert (runs.json_clean.returncode, json.loads(runs.json_clean.stdout)) == (0, [])


def test_json_errors_go_to_stderr_and_into_the_json_as_items_without_a_code(runs):
    result = runs.json_broken
    assert result.returncode == 2
    no_traceback(result)
    assert "broken.py" in result.stderr
    data = json.loads(result.stdout)
    assert [item["filename"] for item in data] == ["broken.py", "cuda.py"]
    error = data[0]
    assert error["code"] is None and error["fix"] is None and error["message"].startswith("cannot parse: ")
    assert f"broken.py:{error['location']['row']}:{error['location']['column']}: cannot parse" in result.stderr


# --------------------------------------------------------------------------
# sarif
# --------------------------------------------------------------------------


def _validate(log) -> None:
    validator = jsonschema.Draft4Validator(SCHEMA)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])


def test_the_vendored_schema_is_the_official_sarif_2_1_0_schema():
    assert SCHEMA["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    # the schema does reject what is not SARIF
    assert list(jsonschema.Draft4Validator(SCHEMA).iter_errors({"version": "2.1.0", "runs": [{"results": []}]}))


@pytest.mark.parametrize("run", ["sarif", "sarif_broken", "sarif_selected"])
def test_sarif_output_is_valid_against_the_official_schema(runs, run):
    result = getattr(runs, run)
    log = json.loads(result.stdout)
    _validate(log)
    assert log["version"] == "2.1.0"
    assert len(log["runs"]) == 1


def test_sarif_driver_describes_torchlint_and_every_selected_rule(runs):
    run = json.loads(runs.sarif.stdout)["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "torchlint"
    import torchlint
    assert driver["version"] == torchlint.__version__
    assert driver["informationUri"].startswith("https://")
    default_rules = [rule for rule in all_rules() if rule.enabled_by_default]  # opt-in rules are not selected
    assert [rule["id"] for rule in driver["rules"]] == [rule.code for rule in default_rules]
    for descriptor, rule in zip(driver["rules"], default_rules):
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["fullDescription"]["text"] == " ".join(rule.why.split())
        assert descriptor["help"]["text"] and descriptor["help"]["markdown"].startswith(f"# {rule.name} ({rule.code})")
        assert descriptor["helpUri"].endswith(f"/docs/rules/{rule.code}.md")
    selected = json.loads(runs.sarif_selected.stdout)["runs"][0]["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in selected] == [rule.code for rule in default_rules if rule.code.startswith("TL2")]


def test_sarif_results_point_at_the_same_places_as_concise(runs):
    run = json.loads(runs.sarif.stdout)["runs"][0]
    results = run["results"]
    concise = concise_findings(runs.concise)
    assert len(results) == len(concise)
    rules = run["tool"]["driver"]["rules"]
    for result, m in zip(results, concise):
        assert result["ruleId"] == m.group("code")
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == "error"
        assert result["message"]["text"] == m.group("message")
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        region = physical["region"]
        assert {k: region[k] for k in ("startLine", "startColumn")} == {
            "startLine": int(m.group("line")), "startColumn": int(m.group("col"))}
        assert (region["endLine"], region["endColumn"]) > (region["startLine"], region["startColumn"])
        artifact = physical["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        assert artifact["uri"] == m.group("path").replace(" ", "%20")
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == runs.dir.as_uri() + "/"
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["invocations"] == [{"executionSuccessful": True}]


def test_sarif_fixes_are_replacements(runs):
    results = json.loads(runs.sarif.stdout)["runs"][0]["results"]
    cuda = next(r for r in results if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "cuda.py")
    (fix,) = cuda["fixes"]
    assert "unsafe" in fix["description"]["text"]
    (change,) = fix["artifactChanges"]
    (replacement,) = change["replacements"]
    region = replacement["deletedRegion"]
    edit = {"content": replacement["insertedContent"]["text"],
            "location": {"row": region["startLine"], "column": region["startColumn"]},
            "end_location": {"row": region["endLine"], "column": region["endColumn"]}}
    assert _apply(CUDA, [edit]) == CUDA_FIXED
    nofix = next(r for r in results if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "nofix.py")
    assert "fixes" not in nofix


def test_sarif_reports_files_that_could_not_be_checked_as_notifications(runs):
    result = runs.sarif_broken
    assert result.returncode == 2
    (invocation,) = json.loads(result.stdout)["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    (notification,) = invocation["toolExecutionNotifications"]
    assert "broken.py" in notification["message"]["text"]


# --------------------------------------------------------------------------
# github
# --------------------------------------------------------------------------

GITHUB = re.compile(r"^::error title=(?P<title>[^,]*),file=(?P<file>[^,]*),line=(?P<line>\d+),col=(?P<col>\d+)"
                    r"(?:,endLine=\d+,endColumn=\d+)?::(?P<message>.*)$")


def _unescape_property(text: str) -> str:
    # what the Actions runner does, in reverse order of escaping
    return (text.replace("%2C", ",").replace("%3A", ":").replace("%0A", "\n").replace("%0D", "\r")
            .replace("%25", "%"))


def test_github_prints_one_workflow_command_per_finding(runs):
    result = runs.github
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    concise = concise_findings(runs.concise)
    assert len(lines) == len(concise)  # nothing else: no summary
    for line, m in zip(lines, concise):
        g = GITHUB.match(line)
        assert g, line
        assert g.group("title") == f"torchlint ({m.group('code')})"
        assert g.group("file") == m.group("path")
        assert (g.group("line"), g.group("col")) == (m.group("line"), m.group("col"))
        assert g.group("message") == m.group("message")


def test_github_from_the_cache_is_the_cold_runs_output(tmp_path):
    # The end of each finding's node is kept with the finding: an annotation
    # covers the same span whether the result was computed or cached.
    (tmp_path / "a.py").write_text('import torch\ntorch.load("x")\ny = torch.autograd.Variable(3)\n')
    check = ["--cache-dir", str(tmp_path / ".cache"), "--output-format", "github", "a.py"]
    cold = run_torchlint(check, cwd=tmp_path)
    assert cold.stdout.count("endLine=") == 2, cold.stdout + cold.stderr
    assert (tmp_path / ".cache" / "results-v2.json").is_file()
    warm = run_torchlint(check, cwd=tmp_path)
    assert warm.stdout == cold.stdout and warm.returncode == cold.returncode == 1


def test_github_escapes_properties_and_message():
    from torchlint.run.reporters.github import escape_data, escape_property

    assert escape_data("50% done\r\nnext: a, b") == "50%25 done%0D%0Anext: a, b"
    assert escape_property("a%b:c,d\ne") == "a%25b%3Ac%2Cd%0Ae"
    for text in ["100%", "%0A", "a:b,c", "x\r\ny", "%25,%3A"]:
        assert _unescape_property(escape_property(text)) == text


def test_github_escapes_a_file_name_with_commas_colons_and_percent(tmp_path):
    name = "odd,na:me%20.py"
    put(tmp_path, name, UPSAMPLE)
    result = run_torchlint(["--output-format", "github", name], cwd=tmp_path)
    (line,) = result.stdout.splitlines()
    assert ",file=odd%2Cna%3Ame%2520.py,line=4,col=7,endLine=4,endColumn=15::" in line
    g = GITHUB.match(line)
    assert _unescape_property(g.group("file")) == name


# --------------------------------------------------------------------------
# gitlab, junit, rdjson, pylint: ruff's layouts (crates/ruff_db/src/diagnostic/render)
# --------------------------------------------------------------------------


def test_pylint_is_path_line_code_message_like_ruff_and_flake8(runs):
    result = runs.pylint
    assert (result.returncode, result.stderr) == (1, "")
    expected = [f"{m.group('path')}:{m.group('line')}: [{m.group('code')}] {m.group('message')}"
                for m in concise_findings(runs.concise)]
    assert result.stdout.splitlines() == expected
    broken = runs.ci_broken["pylint"]
    assert broken.returncode == 2
    assert broken.stdout.splitlines()[0] == "broken.py:2: [invalid-syntax] cannot parse: invalid syntax"
    assert "broken.py:2:7: cannot parse" in broken.stderr
    assert runs.ci_clean["pylint"].stdout == ""


def test_gitlab_is_a_code_quality_report_with_unique_fingerprints(runs):
    result = runs.gitlab
    assert (result.returncode, result.stderr) == (1, "")
    data = json.loads(result.stdout)
    concise = concise_findings(runs.concise)
    assert len(data) == len(concise)
    for item, m in zip(data, concise):
        assert set(item) == {"check_name", "description", "severity", "fingerprint", "location"}
        assert item["check_name"] == m.group("code")
        assert item["description"] == f"{m.group('code')}: {m.group('message')}"
        assert item["severity"] == "major"
        assert re.fullmatch(r"[0-9a-f]{16}", item["fingerprint"])
        assert item["location"]["path"] == m.group("path")
        begin, end = item["location"]["positions"]["begin"], item["location"]["positions"]["end"]
        assert begin == {"line": int(m.group("line")), "column": int(m.group("col"))}
        assert (end["line"], end["column"]) >= (begin["line"], begin["column"])  # equal: end unknown
    fingerprints = [item["fingerprint"] for item in data]
    assert len(set(fingerprints)) == len(fingerprints)
    assert json.loads(runs.ci_clean["gitlab"].stdout) == []
    (error, _cuda) = json.loads(runs.ci_broken["gitlab"].stdout)
    assert error["check_name"] == "invalid-syntax"
    assert error["location"]["positions"]["begin"] == {"line": 2, "column": 7}


def test_gitlab_fingerprints_survive_moved_lines_and_paths_follow_ci_project_dir(runs, tmp_path):
    import os
    import subprocess
    import sys

    moved = tmp_path / "sub"
    moved.mkdir()
    (moved / "cuda.py").write_text("# a comment above moves the finding down\n\n" + CUDA)
    env = {**os.environ, "CI_PROJECT_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-m", "torchlint", "--output-format", "gitlab", "cuda.py"],
                            cwd=moved, env=env, capture_output=True, text=True, timeout=120)
    (item,) = json.loads(result.stdout)
    assert item["location"]["path"] == "sub/cuda.py"
    again = subprocess.run([sys.executable, "-m", "torchlint", "--output-format", "gitlab", "sub/cuda.py"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert json.loads(again.stdout)[0]["fingerprint"] == item["fingerprint"]
    original = next(i for i in json.loads(runs.gitlab.stdout) if i["location"]["path"] == "cuda.py")
    assert original["location"]["positions"]["begin"]["line"] + 2 == item["location"]["positions"]["begin"]["line"]


def test_junit_has_one_suite_per_file_and_a_failure_per_finding(runs):
    import xml.etree.ElementTree as ET

    result = runs.junit
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ET.fromstring(result.stdout)
    concise = concise_findings(runs.concise)
    assert (root.tag, root.get("name"), root.get("tests"), root.get("failures")) == (
        "testsuites", "torchlint", str(len(concise)), str(len(concise)))
    suites = {suite.get("name"): suite for suite in root}
    assert sorted(suites) == sorted({m.group("path") for m in concise})
    for m in concise:
        suite = suites[m.group("path")]
        assert suite.get("package") == "org.torchlint"
        cases = [c for c in suite if c.get("line") == m.group("line") and c.get("column") == m.group("col")
                 and c.get("name") == f"org.torchlint.{m.group('code')}"]
        assert len(cases) == 1
        (case,) = cases
        assert case.get("classname") == m.group("path")[: -len(".py")]
        failure = case.find("failure")
        assert failure.get("message") == m.group("message")
        assert failure.text == f"line {m.group('line')}, col {m.group('col')}, {m.group('message')}"
        assert case.find("properties/property").attrib == {"name": "severity", "value": "error"}
    clean = ET.fromstring(runs.ci_clean["junit"].stdout)
    (suite,) = clean
    (case,) = suite
    assert (clean.get("failures"), case.get("name"), case.find("failure")) == ("0", "No errors found", None)


def test_rdjson_carries_fixes_as_suggestions_that_reproduce_fix(runs):
    result = runs.rdjson
    assert (result.returncode, result.stderr) == (1, "")
    data = json.loads(result.stdout)
    assert data["source"]["name"] == "torchlint" and data["severity"] == "WARNING"
    concise = concise_findings(runs.concise)
    assert len(data["diagnostics"]) == len(concise)
    for item, m in zip(data["diagnostics"], concise):
        assert item["code"]["value"] == m.group("code")
        assert item["code"]["url"].endswith(f"/docs/rules/{m.group('code')}.md")
        assert item["location"]["path"] == m.group("path")
        assert item["location"]["range"]["start"] == {"line": int(m.group("line")), "column": int(m.group("col"))}
        assert item["message"] == m.group("message")
    (up,) = [i for i in data["diagnostics"] if i["location"]["path"] == "dir with space/up.py"]
    as_json_edits = [{"content": s["text"],
                      "location": {"row": s["range"]["start"]["line"], "column": s["range"]["start"]["column"]},
                      "end_location": {"row": s["range"]["end"]["line"], "column": s["range"]["end"]["column"]}}
                     for s in up["suggestions"]]
    assert _apply(UPSAMPLE, as_json_edits) == UPSAMPLE_FIXED
    (nofix,) = [i for i in data["diagnostics"] if i["location"]["path"] == "nofix.py"]
    assert "suggestions" not in nofix
    assert json.loads(runs.ci_clean["rdjson"].stdout)["diagnostics"] == []
    broken = json.loads(runs.ci_broken["rdjson"].stdout)["diagnostics"][0]
    assert broken["code"] == {"value": "invalid-syntax"}
