"""Configuration files: ``[tool.torchlint]`` in pyproject.toml, ``[torchlint]`` in setup.cfg.

Every test runs the real CLI in a subprocess on a throw-away project. Runs
that share a project are made together (in parallel) by a module fixture.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Dict, List

import pytest
from conftest import run_torchlint
from test_cli import (
    CUDA,
    DIAGNOSTIC,
    MIXED,
    UPSAMPLE,
    UPSAMPLE_FIXED,
    in_parallel,
    no_traceback,
    put,
)

SIGMOID = "import torch\nimport torch.nn.functional as F\nx = torch.zeros(3)\ny = F.sigmoid(x)\n"  # TL104, until torch 2.0


def codes(result) -> List[str]:
    return [m.group("code") for m in map(DIAGNOSTIC.match, result.stdout.splitlines()) if m]


def paths(result) -> List[str]:
    return [m.group("path") for m in map(DIAGNOSTIC.match, result.stdout.splitlines()) if m]


# --------------------------------------------------------------------------
# which file is read
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def discovery(tmp_path_factory):
    d = tmp_path_factory.mktemp("discovery")
    # root: pyproject selects TL1; a sub-project has its own setup.cfg; a
    # folder whose pyproject.toml has no [tool.torchlint] is skipped over.
    put(d, "root/pyproject.toml", '[tool.torchlint]\nselect = ["TL1"]\n')
    put(d, "root/setup.cfg", "[torchlint]\nselect = TL2\n")  # pyproject.toml comes first
    put(d, "root/m.py", MIXED)
    put(d, "root/pkg/deep/m.py", MIXED)
    put(d, "root/other/pyproject.toml", '[tool.black]\nline-length = 100\n')
    put(d, "root/other/m.py", MIXED)
    put(d, "root/sub/setup.cfg", "[metadata]\nname = x\n\n[torchlint]\nselect =\n    TL201\n    TL106\n")
    put(d, "root/sub/m.py", MIXED)
    put(d, "root/cfgonly/pyproject.toml", "[project]\nname = 'x'\n")
    put(d, "root/cfgonly/setup.cfg", "[torchlint]\nignore = TL1, TL201\n")
    put(d, "root/cfgonly/m.py", MIXED)
    put(d, "elsewhere/alt.toml", 'select = ["TL103"]\n')
    put(d, "elsewhere/py/pyproject.toml", '[tool.torchlint]\nselect = ["TL101"]\n')
    put(d, "elsewhere/custom.cfg", "[torchlint]\nselect = TL106\n")
    root = d / "root"
    return SimpleNamespace(dir=d, **in_parallel({
        "root": lambda: run_torchlint(["m.py"], cwd=root),
        "deep": lambda: run_torchlint(["m.py"], cwd=root / "pkg" / "deep"),
        "skip_unrelated_pyproject": lambda: run_torchlint(["m.py"], cwd=root / "other"),
        "nearest_setup_cfg": lambda: run_torchlint(["m.py"], cwd=root / "sub"),
        "setup_cfg_next_to_plain_pyproject": lambda: run_torchlint(["m.py"], cwd=root / "cfgonly"),
        "cwd_decides_not_the_file": lambda: run_torchlint(["sub/m.py"], cwd=root),
        "config_standalone_toml": lambda: run_torchlint(["--config", "../elsewhere/alt.toml", "m.py"], cwd=root),
        "config_pyproject": lambda: run_torchlint(["--config", "../elsewhere/py/pyproject.toml", "m.py"], cwd=root),
        "config_cfg": lambda: run_torchlint(["--config", str(d / "elsewhere" / "custom.cfg"), "m.py"], cwd=root),
        "isolated": lambda: run_torchlint(["--isolated", "m.py"], cwd=root),
        "cli_select_wins": lambda: run_torchlint(["--select", "TL201", "m.py"], cwd=root),
    }))


ALL_MIXED = ["TL101", "TL103", "TL106", "TL201"]


@pytest.mark.parametrize("run, expected", [
    ("root", ["TL101", "TL103", "TL106"]),
    ("deep", ["TL101", "TL103", "TL106"]),
    ("skip_unrelated_pyproject", ["TL101", "TL103", "TL106"]),
    ("nearest_setup_cfg", ["TL106", "TL201"]),
    ("setup_cfg_next_to_plain_pyproject", []),  # ignore = TL1, TL201 leaves nothing of MIXED
    ("cwd_decides_not_the_file", ["TL101", "TL103", "TL106"]),
    ("config_standalone_toml", ["TL103"]),
    ("config_pyproject", ["TL101"]),
    ("config_cfg", ["TL106"]),
    ("isolated", ALL_MIXED),
    ("cli_select_wins", ["TL201"]),
])
def test_the_closest_configuration_to_the_current_directory_is_used(discovery, run, expected):
    result = discovery.__dict__[run]
    assert result.stderr == ""
    assert codes(result) == expected, result.stdout
    assert result.returncode == (1 if expected else 0)


@pytest.fixture(scope="module")
def cli_errors(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli-errors")
    put(d, "m.py", MIXED)
    put(d, "plain.toml", "[tool.black]\nx = 1\n")
    put(d, "plain.cfg", "[flake8]\nselect = E\n")
    put(d, "pyproject.toml", "[project]\nname = 'x'\n")
    return in_parallel({
        "missing": lambda: run_torchlint(["--config", "nope.toml", "m.py"], cwd=d),
        "pyproject_without_table": lambda: run_torchlint(["--config", "pyproject.toml", "m.py"], cwd=d),
        "cfg_without_section": lambda: run_torchlint(["--config", "plain.cfg", "m.py"], cwd=d),
        "isolated_and_config": lambda: run_torchlint(["--isolated", "--config", "plain.cfg", "m.py"], cwd=d),
    })


@pytest.mark.parametrize("run, words", [
    ("missing", ["nope.toml", "no such"]),
    ("pyproject_without_table", ["pyproject.toml", "[tool.torchlint]"]),
    ("cfg_without_section", ["plain.cfg", "[torchlint]"]),
    ("isolated_and_config", ["--isolated", "--config"]),
])
def test_config_option_errors_exit_2(cli_errors, run, words):
    result = cli_errors[run]
    assert result.returncode == 2, result
    assert result.stdout == ""
    for word in words:
        assert word in result.stderr, result.stderr
    no_traceback(result)


# --------------------------------------------------------------------------
# what the keys do
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    runs = {}

    def project(name: str, config_name: str, config: str, files: Dict[str, str]) -> Path:
        d = tmp_path_factory.mktemp(name)
        put(d, config_name, config)
        for path, source in files.items():
            put(d, path, source)
        return d

    extend = project("extend", "pyproject.toml", '[tool.torchlint]\nselect = ["TL1"]\nextend-select = ["TL201"]\n',
                     {"m.py": MIXED})
    runs["extend_select"] = lambda: run_torchlint(["m.py"], cwd=extend)
    runs["extend_select_with_cli_select"] = lambda: run_torchlint(["--select", "TL103", "m.py"], cwd=extend)
    runs["cli_extend_select"] = lambda: run_torchlint(["--extend-select", "TL106", "--select", "TL103", "m.py"],
                                                      cwd=extend)

    ignore = project("ignore", "setup.cfg", "[torchlint]\nignore = TL103,TL201\n", {"m.py": MIXED})
    runs["ignore"] = lambda: run_torchlint(["m.py"], cwd=ignore)
    runs["cli_ignore_replaces"] = lambda: run_torchlint(["--ignore", "TL101", "m.py"], cwd=ignore)

    versions = project("versions", "pyproject.toml", '[tool.torchlint]\ntorch-version = "2.1"\n',
                       {"s.py": SIGMOID})
    runs["torch_version"] = lambda: run_torchlint(["s.py"], cwd=versions)
    runs["cli_torch_version"] = lambda: run_torchlint(["--torch-version", "1.13", "s.py"], cwd=versions)

    unsafe = project("unsafe", "setup.cfg", "[torchlint]\nunsafe-fixes = yes\n", {"a.py": CUDA, "b.py": CUDA})
    runs["unsafe_fix"] = lambda: run_torchlint(["--fix", "a.py"], cwd=unsafe)
    runs["unsafe_report"] = lambda: run_torchlint(["b.py"], cwd=unsafe)
    no_unsafe = project("no-unsafe", "pyproject.toml", "[tool.torchlint]\nunsafe-fixes = true\n", {"a.py": CUDA})
    runs["no_unsafe_fix"] = lambda: run_torchlint(["--fix", "--no-unsafe-fixes", "a.py"], cwd=no_unsafe)

    # exclude / extend-exclude, relative to the configuration's folder
    layout = {
        "src/a.py": UPSAMPLE, "src/generated/g.py": UPSAMPLE, "src/gen_x.py": UPSAMPLE,
        "build/b.py": UPSAMPLE, "docs/generated/d.py": UPSAMPLE, "tests/t.py": UPSAMPLE,
    }
    extend_exclude = project("extend-exclude", "pyproject.toml",
                             '[tool.torchlint]\nextend-exclude = ["src/generated", "gen_*.py"]\n', layout)
    runs["extend_exclude"] = lambda: run_torchlint([], cwd=extend_exclude)
    runs["extend_exclude_from_subdir"] = lambda: run_torchlint(["."], cwd=extend_exclude / "src")
    runs["explicit_file_in_excluded_dir"] = lambda: run_torchlint(["src/generated/g.py"], cwd=extend_exclude)
    runs["force_exclude"] = lambda: run_torchlint(["--force-exclude", "src/generated/g.py", "src/a.py"],
                                                  cwd=extend_exclude)
    runs["cli_extend_exclude"] = lambda: run_torchlint(["--extend-exclude", "tests"], cwd=extend_exclude)
    exclude = project("exclude", "setup.cfg", "[torchlint]\nexclude =\n    tests\n    docs/*\n", layout)
    runs["exclude_replaces_defaults"] = lambda: run_torchlint([], cwd=exclude)
    runs["cli_exclude"] = lambda: run_torchlint(["--exclude", "src"], cwd=exclude)
    force = project("force", "pyproject.toml", '[tool.torchlint]\nforce-exclude = true\n', layout)
    runs["force_exclude_config"] = lambda: run_torchlint(["build/b.py", "src/a.py"], cwd=force)

    # per-file-ignores: TOML table and flake8's syntax in setup.cfg
    pfi_files = {"src/m.py": MIXED, "tests/test_m.py": MIXED, "tests/sub/test_n.py": MIXED, "legacy.py": MIXED}
    pfi_toml = project("pfi-toml", "pyproject.toml",
                       '[tool.torchlint]\n[tool.torchlint.per-file-ignores]\n"tests/*" = ["TL1"]\n'
                       '"legacy.py" = ["TL103", "TL201"]\n', pfi_files)
    runs["pfi_toml"] = lambda: run_torchlint(["."], cwd=pfi_toml)
    runs["pfi_toml_from_subdir"] = lambda: run_torchlint(["."], cwd=pfi_toml / "tests")
    pfi_cfg = project("pfi-cfg", "setup.cfg",
                      "[torchlint]\nper-file-ignores =\n    tests: TL1, TL201\n    legacy.py src/m.py:TL106\n", pfi_files)
    runs["pfi_cfg"] = lambda: run_torchlint(["."], cwd=pfi_cfg)
    # --fix writes: a project of its own, so that no other run reads a half-fixed folder
    pfi_fix = project("pfi-fix", "setup.cfg", "[torchlint]\nper-file-ignores = legacy.py: TL106\n",
                      {"legacy.py": MIXED})
    runs["pfi_fix"] = lambda: run_torchlint(["--fix", "legacy.py"], cwd=pfi_fix)
    runs["pfi_cli"] = lambda: run_torchlint(["--per-file-ignores", "legacy.py:TL201", "legacy.py"], cwd=pfi_cfg)
    result = in_parallel(runs)
    result["pfi_fix_dir"] = pfi_fix
    return result


@pytest.mark.parametrize("run, expected", [
    ("extend_select", ["TL101", "TL103", "TL106", "TL201"]),
    ("extend_select_with_cli_select", ["TL103", "TL201"]),  # --select replaces select; extend-select still adds
    ("cli_extend_select", ["TL103", "TL106", "TL201"]),
    ("ignore", ["TL101", "TL106"]),
    ("cli_ignore_replaces", ["TL103", "TL106", "TL201"]),
    ("torch_version", []),  # TL104 does not apply to code for torch >= 2.0
    ("cli_torch_version", ["TL104"]),
])
def test_rule_selection_keys(keys, run, expected):
    result = keys[run]
    assert result.stderr == ""
    assert codes(result) == expected, result.stdout
    assert result.returncode == (1 if expected else 0)


def test_unsafe_fixes_in_the_configuration(keys):
    fix = keys["unsafe_fix"]
    assert (fix.returncode, fix.stdout) == (0, "Fixed 1 problem.\n"), fix
    report = keys["unsafe_report"]
    # the summary says plain --fix would now fix it
    assert report.stdout.splitlines()[-1] == "Found 1 problem (1 fixable with --fix)."
    no_unsafe = keys["no_unsafe_fix"]
    assert no_unsafe.returncode == 1
    assert codes(no_unsafe) == ["TL201"]


@pytest.mark.parametrize("run, expected", [
    # the defaults (build/) still apply: extend-exclude adds to them
    ("extend_exclude", ["./docs/generated/d.py", "./src/a.py", "./tests/t.py"]),
    # "src/generated" is relative to the configuration, not to the current folder
    ("extend_exclude_from_subdir", ["./a.py"]),
    # a file named explicitly is checked, as in ruff ...
    ("explicit_file_in_excluded_dir", ["src/generated/g.py"]),
    # ... unless exclusions are forced (pre-commit passes every file explicitly)
    ("force_exclude", ["src/a.py"]),
    ("force_exclude_config", ["src/a.py"]),
    ("cli_extend_exclude", ["./docs/generated/d.py", "./src/a.py"]),
    # exclude replaces the defaults: build/ is checked now
    ("exclude_replaces_defaults", ["./build/b.py", "./src/a.py", "./src/gen_x.py", "./src/generated/g.py"]),
    ("cli_exclude", ["./build/b.py", "./docs/generated/d.py", "./tests/t.py"]),
])
def test_exclusions(keys, run, expected):
    result = keys[run]
    assert result.stderr == ""
    assert paths(result) == expected, result.stdout


def _by_path(result) -> Dict[str, List[str]]:
    found: Dict[str, List[str]] = {}
    for m in map(DIAGNOSTIC.match, result.stdout.splitlines()):
        if m:
            found.setdefault(m.group("path"), []).append(m.group("code"))
    return found


def test_per_file_ignores_table_in_pyproject(keys):
    assert _by_path(keys["pfi_toml"]) == {
        "./legacy.py": ["TL101", "TL106"],
        "./src/m.py": ALL_MIXED,
        "./tests/sub/test_n.py": ["TL201"],  # * also matches /, as in flake8
        "./tests/test_m.py": ["TL201"],
    }
    # patterns are relative to the configuration file, wherever torchlint runs
    assert _by_path(keys["pfi_toml_from_subdir"]) == {"./sub/test_n.py": ["TL201"], "./test_m.py": ["TL201"]}


def test_per_file_ignores_in_flake8_syntax_in_setup_cfg(keys):
    # "tests: TL1, TL201" names a folder: it covers everything in it, at any depth
    assert _by_path(keys["pfi_cfg"]) == {
        "./legacy.py": ["TL101", "TL103", "TL201"],
        "./src/m.py": ["TL101", "TL103", "TL201"],
    }


def test_per_file_ignores_also_hold_back_the_fixes(keys):
    result = keys["pfi_fix"]
    text = (keys["pfi_fix_dir"] / "legacy.py").read_text()
    assert "size_average=False" in text  # TL106 is ignored for legacy.py: its fix is not applied
    assert "loss.item()" in text and "F.interpolate" in text
    assert result.returncode == 1  # the unsafe TL201 remains


def test_per_file_ignores_on_the_command_line_replace_the_configuration(keys):
    # the configuration ignores TL106 in legacy.py; the command line ignores TL201 instead
    assert codes(keys["pfi_cli"]) == ["TL101", "TL103", "TL106"]


# --------------------------------------------------------------------------
# mistakes are errors that name the file and the key
# --------------------------------------------------------------------------

BAD_CONFIGS = {
    "unknown-key": ("pyproject.toml", '[tool.torchlint]\nselct = ["TL1"]\n', ["selct", "did you mean 'select'"]),
    "unknown-code": ("pyproject.toml", '[tool.torchlint]\nignore = ["TL1", "XYZ1"]\n', ["ignore", "XYZ1"]),
    "no-such-rule": ("setup.cfg", "[torchlint]\nselect = TL999\n", ["select", "TL999"]),
    "string-not-list": ("pyproject.toml", '[tool.torchlint]\nselect = "TL1"\n', ["select", "list"]),
    "float-version": ("pyproject.toml", '[tool.torchlint]\ntorch-version = 1.10\n', ["torch-version", '"1.10"']),
    "bad-version": ("setup.cfg", "[torchlint]\ntorch-version = latest\n", ["torch-version", "latest"]),
    "no-such-release": ("pyproject.toml", '[tool.torchlint]\ntorch-version = "3"\n',
                        ["torch-version", "no torch release has version '3'"]),
    "no-such-target": ("setup.cfg", "[torchlint]\ntarget-torch-version = 1.31\n",
                       ["target-torch-version", "no torch release has version '1.31'"]),
    "bad-bool": ("setup.cfg", "[torchlint]\nunsafe-fixes = maybe\n", ["unsafe-fixes", "maybe"]),
    "toml-bool-as-string": ("pyproject.toml", '[tool.torchlint]\nunsafe-fixes = "yes"\n', ["unsafe-fixes"]),
    "bad-per-file": ("setup.cfg", "[torchlint]\nper-file-ignores = tests/*\n", ["per-file-ignores", "tests/*"]),
    "bad-per-file-code": ("pyproject.toml", '[tool.torchlint.per-file-ignores]\n"a.py" = ["TL9"]\n',
                          ["per-file-ignores", "TL9"]),
    "per-file-not-table": ("pyproject.toml", '[tool.torchlint]\nper-file-ignores = ["a.py"]\n',
                           ["per-file-ignores"]),
    "invalid-toml": ("pyproject.toml", '[tool.torchlint]\nselect = ["TL1"\n', ["invalid TOML"]),
    "invalid-cfg": ("setup.cfg", "[torchlint\nselect = TL1\n", ["setup.cfg"]),
    "exclude-not-strings": ("pyproject.toml", '[tool.torchlint]\nexclude = [1, 2]\n', ["exclude"]),
}


@pytest.fixture(scope="module")
def bad_configs(tmp_path_factory):
    jobs = {}
    for name, (filename, text, _) in BAD_CONFIGS.items():
        d = tmp_path_factory.mktemp(name)
        put(d, filename, text)
        put(d, "m.py", MIXED)
        jobs[name] = (lambda d=d: run_torchlint(["m.py"], cwd=d))
    return in_parallel(jobs)


@pytest.mark.parametrize("name", list(BAD_CONFIGS))
def test_a_bad_key_or_value_is_an_error_naming_the_file_and_key(bad_configs, name):
    filename, _, words = BAD_CONFIGS[name]
    result = bad_configs[name]
    assert result.returncode == 2, result
    assert result.stdout == ""  # nothing was checked
    no_traceback(result)
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"torchlint: error: {filename}: "), line
    for word in words:
        assert word in line, line


# --------------------------------------------------------------------------
# flake8 reads its own configuration
# --------------------------------------------------------------------------


def _flake8(args, cwd) -> subprocess.CompletedProcess:
    # Not --isolated: the point is that flake8 reads its configuration files.
    return subprocess.run([sys.executable, "-m", "flake8", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_flake8_takes_torch_version_and_per_file_ignores_from_its_own_config(tmp_path):
    put(tmp_path, "s.py", SIGMOID)
    put(tmp_path, "tests/t.py", UPSAMPLE)
    put(tmp_path, "u.py", UPSAMPLE)
    put(tmp_path, "setup.cfg", "[flake8]\nselect = TL\ntorch-version = 2.1\nper-file-ignores =\n    tests/*: TL103\n")
    result = _flake8(["."], cwd=tmp_path)
    assert result.stderr == ""
    assert result.stdout.splitlines() == ["./u.py:4:7: TL103 `upsample` is deprecated; use `interpolate(...)`"]
    # [tool.torchlint] is torchlint's own: flake8 does not read it
    put(tmp_path, "setup.cfg", "[flake8]\nselect = TL\n")
    put(tmp_path, "pyproject.toml", '[tool.torchlint]\ntorch-version = "2.1"\n')
    assert re.search(r"s\.py:4:7: TL104 ", _flake8(["s.py"], cwd=tmp_path).stdout)


def test_fix_and_exclude_in_one_run(tmp_path):
    """A realistic setup: config at the root, --fix from the root, generated code left alone."""
    put(tmp_path, "pyproject.toml", '[tool.torchlint]\nextend-exclude = ["generated"]\n')
    a = put(tmp_path, "pkg/a.py", UPSAMPLE)
    g = put(tmp_path, "pkg/generated/g.py", UPSAMPLE)
    result = run_torchlint(["--fix"], cwd=tmp_path)
    assert result.returncode == 0, result
    assert a.read_text() == UPSAMPLE_FIXED
    assert g.read_text() == UPSAMPLE


# --------------------------------------------------------------------------
# the pieces, directly
# --------------------------------------------------------------------------


def test_per_file_ignores_syntax_is_flake8s():
    from torchlint.run.config import parse_per_file_ignores

    assert parse_per_file_ignores("\n  a.py:TL101 tests/*: TL2, TL3\n  b.py c.py :TL1\n") == [
        ("a.py", ["TL101"]), ("tests/*", ["TL2", "TL3"]), ("b.py", ["TL1"]), ("c.py", ["TL1"]),
    ]
    for bad in ("tests/*", "a.py:", ": TL1", "a.py:TL1 b.py"):
        with pytest.raises(ValueError):
            parse_per_file_ignores(bad)


def test_path_patterns(tmp_path):
    from torchlint.run.config import PathPattern

    base = str(tmp_path)
    name = PathPattern.make("build", base)
    assert name.matches(str(tmp_path / "x" / "build"))
    assert not name.matches(str(tmp_path / "x" / "build" / "a.py"))  # searches prune the folder itself
    assert name.matches(str(tmp_path / "x" / "build" / "a.py"), parents=True)
    anchored = PathPattern.make("./src/gen/", base)
    assert anchored.pattern == "src/gen"
    assert anchored.matches(str(tmp_path / "src" / "gen"))
    assert not anchored.matches(str(tmp_path / "lib" / "src" / "gen"))
    assert anchored.matches(str(tmp_path / "src" / "gen" / "deep" / "m.py"), parents=True)
    # outside the configuration's folder, only name patterns can match
    assert not anchored.matches(str(tmp_path.parent / "src" / "gen"), parents=True)
    assert PathPattern.make("*_pb2.py", base).matches("/elsewhere/x_pb2.py")
    glob = PathPattern.make("tests/*", base)
    assert glob.matches(str(tmp_path / "tests" / "a" / "b.py"))


def test_every_key_is_documented():
    from torchlint.run.config import KEYS

    doc = (Path(__file__).resolve().parent.parent / "docs" / "configuration.md").read_text()
    for key in KEYS:
        assert f"| `{key}` |" in doc, key


# --------------------------------------------------------------------------
# the torch the code moves to (issue 35)
# --------------------------------------------------------------------------

CHOLESKY = "import torch\nA = torch.eye(2)\nL = torch.cholesky(A)\n"


def _codes(result) -> List[str]:
    return [line.split()[1] for line in result.stdout.splitlines() if ": TL" in line]


def test_target_torch_version_on_the_command_line_and_in_the_configuration(tmp_path):
    put(tmp_path, "s.py", CHOLESKY)
    select = ["--select", "TL108,TL109", "s.py"]
    assert _codes(run_torchlint(select, cwd=tmp_path)) == ["TL108"]  # default: the newest release known
    assert _codes(run_torchlint(["--target-torch-version", "2.13", *select], cwd=tmp_path)) == ["TL109"]
    put(tmp_path, "pyproject.toml", '[tool.torchlint]\ntarget-torch-version = "2.13"\n')
    assert _codes(run_torchlint(select, cwd=tmp_path)) == ["TL109"]
    assert _codes(run_torchlint(["--target-torch-version", "2.14", *select], cwd=tmp_path)) == ["TL108"]
    (tmp_path / "pyproject.toml").unlink()
    put(tmp_path, "setup.cfg", "[torchlint]\ntarget-torch-version = 2.13\n")
    assert _codes(run_torchlint(select, cwd=tmp_path)) == ["TL109"]


def test_show_settings_shows_the_target(tmp_path):
    put(tmp_path, "s.py", CHOLESKY)
    shown = run_torchlint(["--isolated", "--show-settings", "s.py"], cwd=tmp_path).stdout
    assert re.search(r"^target-torch-version: +2\.15 \(default: the newest release torchlint knows\)$", shown, re.M), shown
    shown = run_torchlint(["--isolated", "--target-torch-version", "2.14", "--show-settings", "s.py"],
                          cwd=tmp_path).stdout
    assert re.search(r"^target-torch-version: +2\.14\.0 \(command line: --target-torch-version\)$", shown, re.M), shown


def test_a_target_older_than_the_floor_is_an_error(tmp_path):
    put(tmp_path, "s.py", CHOLESKY)
    result = run_torchlint(["--isolated", "--torch-version", "2.14", "--target-torch-version", "2.13", "s.py"],
                           cwd=tmp_path)
    assert result.returncode == 2 and "older than" in result.stderr, result.stderr
    put(tmp_path, "pyproject.toml", '[tool.torchlint]\ntarget-torch-version = 2.14\n')  # a number: rejected
    result = run_torchlint(["s.py"], cwd=tmp_path)
    assert result.returncode == 2 and "target-torch-version" in result.stderr, result.stderr


def test_flake8_takes_the_target_from_its_own_config(tmp_path):
    put(tmp_path, "s.py", CHOLESKY)
    put(tmp_path, "setup.cfg", "[flake8]\nselect = TL108,TL109\n")
    assert " TL108 " in _flake8(["s.py"], cwd=tmp_path).stdout
    put(tmp_path, "setup.cfg", "[flake8]\nselect = TL108,TL109\ntarget-torch-version = 2.13\n")
    assert " TL109 " in _flake8(["s.py"], cwd=tmp_path).stdout
    assert " TL108 " in _flake8(["--target-torch-version", "2.14", "s.py"], cwd=tmp_path).stdout


@pytest.mark.parametrize("version", ["3", "3.0", "1.14", "0.5", "0.0"])
def test_a_torch_version_no_release_has_is_rejected_by_the_cli_and_flake8(tmp_path, version):
    put(tmp_path, "s.py", SIGMOID)
    for option in ("--torch-version", "--target-torch-version"):
        result = run_torchlint(["--isolated", option, version, "s.py"], cwd=tmp_path)
        assert (result.returncode, result.stdout) == (2, ""), result
        no_traceback(result)
        assert result.stderr == (f"torchlint: error: {option}: no torch release has version {version!r} (torch "
                                 "releases are 0.1 to 0.4, 1.0 to 1.13 and 2.0 on; expected e.g. 1.13 or 2.1)\n")
    flake8 = _flake8(["--torch-version", version, "s.py"], cwd=tmp_path)
    assert flake8.returncode != 0 and flake8.stdout == ""
    assert f"--torch-version: no torch release has version {version!r}" in flake8.stderr


def test_real_releases_and_future_2x_releases_are_accepted(tmp_path):
    put(tmp_path, "s.py", SIGMOID)
    for version in ("0.4", "1.13.1", "2.0", "2.99"):
        result = run_torchlint(["--isolated", "--torch-version", version, "s.py"], cwd=tmp_path)
        assert result.returncode in (0, 1) and result.stderr == "", (version, result)


def test_show_settings_says_where_each_torch_version_came_from(tmp_path):
    project = tmp_path / "project"
    put(project, "pyproject.toml", '[project]\nname = "p"\ndependencies = ["torch>=2.1"]\n')
    put(project, "src/s.py", SIGMOID)

    def shown(args, cwd):
        result = run_torchlint(["--show-settings", *args, "s.py"], cwd=cwd)
        assert result.returncode == 0, result
        return {k: v.strip() for k, v in (line.split(":", 1) for line in result.stdout.splitlines())}

    from_metadata = shown([], project / "src")
    assert from_metadata["torch-version"] == (
        f"2.1.0 (project metadata: {project / 'pyproject.toml'} [project] dependencies: torch>=2.1)")
    assert from_metadata["target-torch-version"] == "2.15 (default: the newest release torchlint knows)"
    assert shown([], project)["torch-version"] == (
        "2.1.0 (project metadata: pyproject.toml [project] dependencies: torch>=2.1)")
    from_cli = shown(["--torch-version", "1.9", "--target-torch-version", "2.14"], project / "src")
    assert from_cli["torch-version"] == "1.9.0 (command line: --torch-version)"
    assert from_cli["target-torch-version"] == "2.14.0 (command line: --target-torch-version)"
    put(project, "src/setup.cfg", "[torchlint]\ntorch-version = 1.13\ntarget-torch-version = 2.13\n")
    from_config = shown([], project / "src")
    assert from_config["torch-version"] == "1.13.0 (configuration file: setup.cfg torch-version)"
    assert from_config["target-torch-version"] == "2.13.0 (configuration file: setup.cfg target-torch-version)"
    assert shown(["--isolated"], project / "src")["torch-version"].startswith("(no constraint) (default: ")


def test_help_says_the_torch_version_defaults_to_the_projects_metadata():
    text = " ".join(run_torchlint(["--help"]).stdout.split())
    assert "(default: no constraint)" not in text
    assert "else the lowest torch the project's metadata requires" in text
    flake8 = " ".join(subprocess.run([sys.executable, "-m", "flake8", "--help"], capture_output=True, text=True,
                                     timeout=120).stdout.split())
    assert "torchlint: oldest torch the code must run on (default: the lowest torch the project's metadata" in flake8


# --------------------------------------------------------------------------
# extend = "../pyproject.toml": ruff's configuration inheritance
# --------------------------------------------------------------------------


def _settings(result) -> Dict[str, str]:
    assert result.returncode == 0, result
    return {k: v.strip() for k, v in (line.split(":", 1) for line in result.stdout.splitlines())}


def test_extend_merges_the_named_file_under_this_one(tmp_path):
    put(tmp_path, "pyproject.toml", '[tool.torchlint]\nignore = ["TL201"]\nextend-exclude = ["proj/gen/*"]\n'
                                    'torch-version = "1.9"\nper-file-ignores = {"proj/legacy.py" = ["TL1"]}\n')
    put(tmp_path, "proj/pyproject.toml", '[tool.torchlint]\nextend = "../pyproject.toml"\nignore = ["TL106"]\n'
                                         'extend-exclude = ["skip.py"]\n')
    for name in ("m.py", "gen/g.py", "skip.py", "legacy.py"):
        put(tmp_path, f"proj/{name}", MIXED)
    proj = tmp_path / "proj"
    files = run_torchlint(["--show-files", "."], cwd=proj)
    # the parent's pattern is relative to the parent, the child's to the child
    assert files.stdout.splitlines() == ["./legacy.py", "./m.py"]
    checked = run_torchlint(["--no-cache", "."], cwd=proj)
    assert {(m.group("path"), m.group("code")) for m in map(DIAGNOSTIC.match, checked.stdout.splitlines()) if m} == {
        ("./m.py", "TL101"), ("./m.py", "TL103")}  # ignore adds up: TL201 (parent) and TL106 (child)
    shown = _settings(run_torchlint(["--show-settings", "."], cwd=proj))
    assert shown["configuration file"] == f"pyproject.toml (extends {tmp_path / 'pyproject.toml'})"
    assert shown["torch-version"] == f"1.9.0 (configuration file: {tmp_path / 'pyproject.toml'} torch-version)"


def test_extend_a_child_select_is_a_new_baseline_and_a_child_value_replaces_the_parents(tmp_path):
    put(tmp_path, "base.toml", 'ignore = ["TL201"]\ntorch-version = "1.9"\nextend-select = ["TL302"]\n')
    put(tmp_path, "setup.cfg", "[torchlint]\nextend = base.toml\nselect = TL2\ntorch-version = 2.1\n")
    shown = _settings(run_torchlint(["--show-settings", "."], cwd=tmp_path))
    assert "TL201" in shown["rules"].split(", ") and "TL302" in shown["rules"].split(", ")
    assert shown["torch-version"] == "2.1.0 (configuration file: setup.cfg torch-version)"
    assert shown["configuration file"] == "setup.cfg (extends base.toml)"


def test_extend_chains_through_several_files_and_works_with_config(tmp_path):
    put(tmp_path, "a/b/c.toml", 'extend = "../b.toml"\nignore = ["TL103"]\n')
    put(tmp_path, "a/b.toml", 'extend = "../root.toml"\n')
    put(tmp_path, "root.toml", 'select = ["TL103", "TL101"]\n')
    put(tmp_path, "m.py", MIXED)
    shown = _settings(run_torchlint(["--config", "a/b/c.toml", "--show-settings", "m.py"], cwd=tmp_path))
    assert shown["rules"] == "TL101"
    assert shown["configuration file"] == "a/b/c.toml (extends a/b.toml) (which extends root.toml)"


@pytest.mark.parametrize("layout, cycle", [
    ({"pyproject.toml": '[tool.torchlint]\nextend = "pyproject.toml"\n'},
     "pyproject.toml: [tool.torchlint] extend: 'pyproject.toml' makes a cycle: pyproject.toml -> pyproject.toml"),
    ({"pyproject.toml": '[tool.torchlint]\nextend = "cfg/base.toml"\n', "cfg/base.toml": 'extend = "../pyproject.toml"\n'},
     "cfg/base.toml: (top level) extend: '../pyproject.toml' makes a cycle: "
     "pyproject.toml -> cfg/base.toml -> pyproject.toml"),
])
def test_an_extend_cycle_is_an_error_that_shows_it(tmp_path, layout, cycle):
    for name, text in layout.items():
        put(tmp_path, name, text)
    put(tmp_path, "m.py", MIXED)
    result = run_torchlint(["m.py"], cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    no_traceback(result)
    assert result.stderr == f"torchlint: error: {cycle}\n"


def test_extend_of_a_missing_or_broken_file_names_it(tmp_path):
    put(tmp_path, "pyproject.toml", '[tool.torchlint]\nextend = "../nowhere/pyproject.toml"\n')
    put(tmp_path, "m.py", MIXED)
    result = run_torchlint(["m.py"], cwd=tmp_path)
    assert result.returncode == 2 and "pyproject.toml: [tool.torchlint] extend: '../nowhere/pyproject.toml': " \
        "no such file" in result.stderr, result.stderr
    put(tmp_path, "pyproject.toml", '[tool.torchlint]\nextend = "base.toml"\n')
    put(tmp_path, "base.toml", 'selct = ["TL1"]\n')
    result = run_torchlint(["m.py"], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("torchlint: error: base.toml: (top level): unknown key 'selct'"), result.stderr
