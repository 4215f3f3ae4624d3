"""The result cache through the real command: a warm run reports exactly what
a cold one does, never a stale result, and never loads the parser.

The cache is keyed by each file's bytes, torchlint (version and files), the
rules that run on the path and the settings; these tests change each of
them and expect the run to notice.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import run_torchlint

UPSAMPLE = "import torch.nn.functional as F\ny = F.upsample(x)\n"
SOFTMAX = "import torch.nn.functional as F\ny = F.softmax(x)\n"
CLEAN = "import torch\ny = torch.zeros(2)\n"


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text(UPSAMPLE)
    (root / "pkg" / "b.py").write_text(SOFTMAX)
    (root / "pkg" / "c.py").write_text(CLEAN)
    return root


def _run(root: Path, *args: str) -> subprocess.CompletedProcess:
    return run_torchlint(["--isolated", *args, "pkg"], cwd=root)


def _findings(result: subprocess.CompletedProcess) -> list:
    assert result.returncode in (0, 1), result.stderr
    return [line for line in result.stdout.splitlines() if ": TL" in line]


def test_warm_run_repeats_the_cold_run_and_marks_its_directory(tmp_path):
    root = _project(tmp_path)
    cold = _run(root)
    cache = root / ".torchlint_cache"
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache / ".gitignore").read_text() == "*\n"
    warm = _run(root)
    assert warm.stdout == cold.stdout and warm.returncode == cold.returncode == 1
    assert [line.split(":")[0] for line in _findings(warm)] == ["pkg/a.py", "pkg/b.py"]


def test_a_changed_file_is_checked_again(tmp_path):
    root = _project(tmp_path)
    _run(root)
    (root / "pkg" / "c.py").write_text(UPSAMPLE)  # same size class, new content
    (root / "pkg" / "a.py").write_text(CLEAN)
    assert [line.split(":")[0] for line in _findings(_run(root))] == ["pkg/b.py", "pkg/c.py"]


def test_changed_configuration_or_options_are_never_served_stale(tmp_path):
    root = _project(tmp_path)
    assert len(_findings(_run(root))) == 2
    assert [line.split()[1] for line in _findings(_run(root, "--select", "TL204"))] == ["TL204"]
    assert len(_findings(_run(root))) == 2
    # a configuration file (not --isolated): its ignore applies at once
    (root / "pyproject.toml").write_text('[tool.torchlint]\nignore = ["TL103"]\n')
    configured = run_torchlint(["pkg"], cwd=root)
    assert [line.split()[1] for line in _findings(configured)] == ["TL204"]
    (root / "pyproject.toml").write_text('[tool.torchlint.per-file-ignores]\n"pkg/b.py" = ["TL204"]\n')
    assert [line.split()[1] for line in _findings(run_torchlint(["pkg"], cwd=root))] == ["TL103"]
    # the oldest torch to support turns TL104-style version-bound rules on and off
    (root / "pkg" / "d.py").write_text("import torch.nn.functional as F\ny = F.sigmoid(x)\n")
    assert any(" TL104 " in line for line in _findings(_run(root)))
    assert not any(" TL104 " in line for line in _findings(_run(root, "--torch-version", "2.1")))


def test_no_cache_writes_nothing_and_the_directory_is_configurable(tmp_path, monkeypatch):
    root = _project(tmp_path)
    assert len(_findings(_run(root, "--no-cache"))) == 2
    assert not (root / ".torchlint_cache").exists()
    _run(root, "--cache-dir", "elsewhere")
    assert (root / "elsewhere" / "CACHEDIR.TAG").is_file() and not (root / ".torchlint_cache").exists()
    env_dir = tmp_path / "from-env"
    result = subprocess.run([sys.executable, "-m", "torchlint", "--isolated", "pkg"], cwd=root, capture_output=True,
                            text=True, env={**__import__("os").environ, "TORCHLINT_CACHE_DIR": str(env_dir)})
    assert len(_findings(result)) == 2 and (env_dir / "CACHEDIR.TAG").is_file()


@pytest.mark.parametrize("damage", ["delete", "garbage", "wrong-shape", "entry-shape"])
def test_a_deleted_or_damaged_cache_only_costs_time(tmp_path, damage):
    root = _project(tmp_path)
    expected = _findings(_run(root))
    cache = root / ".torchlint_cache"
    results = next(cache.glob("results-*.json"))
    if damage == "delete":
        shutil.rmtree(cache)  # the results and the module summaries (``modules-v1/``) alike
    elif damage == "garbage":
        results.write_bytes(b"\x00not json")
    elif damage == "wrong-shape":
        results.write_text(json.dumps([1, 2, 3]))
    else:
        data = json.loads(results.read_text())
        for entry in data["entries"].values():
            entry["diagnostics"] = [["TL103"]]  # too short: unusable
        results.write_text(json.dumps(data))
    again = _run(root)
    assert _findings(again) == expected and "Traceback" not in again.stderr
    assert _findings(_run(root)) == expected  # and the repaired cache is good


def test_problems_are_reported_on_every_run_not_cached_away(tmp_path):
    root = _project(tmp_path)
    (root / "pkg" / "broken.py").write_text("def (:\n")
    (root / "pkg" / "latin.py").write_bytes(b"x = '\xe9'\n")  # not UTF-8, no cookie
    for _ in range(2):
        result = _run(root)
        assert result.returncode == 2
        assert "broken.py" in result.stderr and "latin.py" in result.stderr


def test_a_warm_run_never_imports_libcst_or_the_rules(tmp_path):
    """Start-up is most of a warm run: the parser and the rules stay unloaded."""
    root = _project(tmp_path)
    _run(root)
    probe = textwrap.dedent("""
        import sys
        from torchlint.frontends.cli import main
        status = main(["--isolated", "pkg"])
        loaded = sorted(m for m in sys.modules if m == "libcst" or m.startswith("torchlint.rules.tl"))
        print("LOADED", loaded, status)
    """)
    result = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True)
    assert "LOADED [] 1" in result.stdout, result.stdout + result.stderr
    (root / "pkg" / "c.py").write_text(UPSAMPLE)  # one file to check: now they load
    result = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True)
    assert "'libcst'" in result.stdout, result.stdout + result.stderr


# -- issue 18: the key and the result come from the same bytes; damage is a miss --


def _in_process(root: Path, monkeypatch, *args: str):
    """The real command in this process (so a race can be staged exactly)."""
    import io

    from torchlint.frontends.cli import main

    monkeypatch.chdir(root)
    stdout, stderr = io.StringIO(), io.StringIO()
    status = main(["--isolated", *args, "pkg"], stdout=stdout, stderr=stderr)
    return status, stdout.getvalue(), stderr.getvalue()


def test_a_file_saved_during_a_run_and_reverted_is_never_served_a_stale_result(tmp_path, monkeypatch):
    """The cache lookup read the original bytes; the user then saved a clean
    version, which is what got checked; then the user reverted. The findings
    of the clean version must not be stored under the original's key."""
    root = _project(tmp_path)
    target = root / "pkg" / "a.py"
    from torchlint.run import runner

    real_read = runner.read_source

    def saved_meanwhile(path):
        if path.endswith("a.py"):
            target.write_text(CLEAN)  # the user saves while torchlint runs
        return real_read(path)

    monkeypatch.setattr(runner, "read_source", saved_meanwhile)
    status, out, err = _in_process(root, monkeypatch)
    assert "pkg/a.py" not in out  # it checked what the file held by then
    monkeypatch.setattr(runner, "read_source", real_read)
    target.write_text(UPSAMPLE)  # ... and reverts
    later = _run(root)
    assert [line.split(":")[0] for line in _findings(later)] == ["pkg/a.py", "pkg/b.py"]


def _cache_file(root: Path) -> Path:
    return next((root / ".torchlint_cache").glob("results-*.json"))


def _flip_code(results: Path) -> None:
    """A bit flip that keeps the JSON valid: TL103 becomes TL123."""
    data = results.read_bytes()
    assert b'"TL103"' in data
    results.write_bytes(data.replace(b'"TL103"', b'"TL123"'))


def _wrong_types(results: Path) -> None:
    data = json.loads(results.read_text())
    for entry in data["entries"].values():
        for record in entry["diagnostics"]:
            record[3] = str(record[3])  # the column as a string
    results.write_text(json.dumps(data))


def _forged_entry(results: Path) -> None:
    """Well-formed with a valid checksum, but naming a rule that does not exist
    and a line far past the end: only the schema can tell."""
    from torchlint.run import cache

    data = json.loads(results.read_text())
    for path, entry in data["entries"].items():
        entry["diagnostics"] = [["TL123", "invented", 10**6, 0, None, None, None, None]]
        entry["check"] = cache.checksum(path, entry["key"], [entry["diagnostics"], entry["dependencies"]])
    results.write_text(json.dumps(data))


def _forged_end(results: Path) -> None:
    """A finding whose node ends before it starts, with a valid checksum."""
    from torchlint.run import cache

    data = json.loads(results.read_text())
    for path, entry in data["entries"].items():
        for record in entry["diagnostics"]:
            record[6], record[7] = record[2] - 1, 0
        entry["check"] = cache.checksum(path, entry["key"], [entry["diagnostics"], entry["dependencies"]])
    results.write_text(json.dumps(data))


def _deep(results: Path) -> None:
    results.write_text('{"version": ' + "[" * 200_000 + "]" * 200_000 + "}")


def _fifo(results: Path) -> None:
    results.unlink()
    os.mkfifo(results)


def _dev_zero(results: Path) -> None:
    results.unlink()
    results.symlink_to("/dev/zero")


def _limited_memory() -> None:
    import resource

    # A run that reads /dev/zero must fail here, not take the machine's memory.
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


@pytest.mark.parametrize("damage", [_flip_code, _wrong_types, _forged_entry, _deep, _fifo, _dev_zero])
def test_a_damaged_cache_entry_is_a_miss_never_an_error_a_hang_or_a_finding(tmp_path, damage):
    root = _project(tmp_path)
    expected = _findings(_run(root))
    damage(_cache_file(root))
    again = subprocess.run([sys.executable, "-m", "torchlint", "--isolated", "pkg"], cwd=root, capture_output=True,
                           text=True, timeout=60, preexec_fn=_limited_memory)
    assert "Traceback" not in again.stderr and again.stderr == ""
    assert _findings(again) == expected
    assert _cache_file(root).is_file()  # rewritten: a regular file again
    assert _findings(_run(root)) == expected


def test_a_forged_end_position_is_a_miss(tmp_path):
    # The github format shows where each finding's node ends, from the cache too.
    root = _project(tmp_path)
    cold = _run(root, "--output-format", "github")
    assert "endLine=" in cold.stdout
    _forged_end(_cache_file(root))
    warm = _run(root, "--output-format", "github")
    assert warm.stdout == cold.stdout and warm.stderr == ""


# -- imports shadowed by a module that appears earlier on the import path ---------

SHADOWED_TRAIN = """\
import os
import sys

sys.path.append(os.path.join(os.path.dirname(__file__), "lib"))
from helpers import total_loss


def report(out, y):
    loss = total_loss(out, y)
    print(loss.data[0])
"""
LOSS_HELPERS = "import torch.nn.functional as F\n\ndef total_loss(out, y):\n    return F.cross_entropy(out, y)\n"
UNKNOWN_HELPERS = "def total_loss(out, y):\n    return out\n"


@pytest.mark.parametrize("shadow", ["helpers.py", "helpers/__init__.py"])
def test_a_module_shadowing_the_one_an_import_found_is_noticed(tmp_path, shadow):
    # Python looks in the script's folder before the ``lib`` it appends to
    # sys.path: a helpers module or package added there is what the import
    # reaches from then on, though lib/helpers.py is unchanged.
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helpers.py").write_text(LOSS_HELPERS)
    (tmp_path / "train.py").write_text(SHADOWED_TRAIN)
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n")
    check = ["--cache-dir", str(tmp_path / ".cache"), "train.py"]
    assert "train.py:10:11: TL101" in run_torchlint(check, cwd=tmp_path).stdout
    assert "train.py:10:11: TL101" in run_torchlint(check, cwd=tmp_path).stdout  # from the cache
    (tmp_path / shadow).parent.mkdir(exist_ok=True)
    (tmp_path / shadow).write_text(UNKNOWN_HELPERS)
    shadowed = run_torchlint(check, cwd=tmp_path)
    assert shadowed.returncode == 0 and "TL101" not in shadowed.stdout, shadowed.stdout + shadowed.stderr
    # And back: the shadowing module removed, lib/helpers.py is reached again.
    (tmp_path / shadow).unlink()
    assert "train.py:10:11: TL101" in run_torchlint(check, cwd=tmp_path).stdout


def test_a_folder_without_init_becoming_a_package_is_noticed(tmp_path):
    # ``helpers/`` without __init__.py is a namespace portion: the module in lib
    # wins. An __init__.py written into the folder makes it the package Python imports.
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helpers.py").write_text(LOSS_HELPERS)
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "data.txt").write_text("not a module\n")
    (tmp_path / "train.py").write_text(SHADOWED_TRAIN)
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n")
    check = ["--cache-dir", str(tmp_path / ".cache"), "train.py"]
    assert "train.py:10:11: TL101" in run_torchlint(check, cwd=tmp_path).stdout
    (tmp_path / "helpers" / "__init__.py").write_text(UNKNOWN_HELPERS)
    assert "TL101" not in run_torchlint(check, cwd=tmp_path).stdout
