#!/usr/bin/env python3
"""Time torchlint against TorchFix, flake8 and Python's own parser on real code.

Builds the corpora from PyPI into a cache directory (default ``.cache/bench``,
never committed): the ``transformers`` wheel's ``.py`` files (pinned below)
and a few old, torch-based packages from 2018-2020 (the list and the
download / extract helpers come from ``bench/corpus.py``). Only files that
this Python compiles are kept, so every tool sees the same, valid files.

The tools run in virtualenvs of their own, created in the cache directory
with the Python that runs this script:

- ``torchlint``: flake8 + torchlint, installed as a wheel built from a copy of
  the source (``--torchlint-src``, default this checkout; reinstalled when the
  source changes), with the same libcst version TorchFix gets, so the ratio
  compares the tools rather than libcst releases (``--torchlint-libcst``
  overrides it);
- ``torchfix``: ``TorchFix==0.7.0`` installed with ``--no-deps`` plus its real
  requirements (libcst >=1.5,<1.6, PyYAML, flake8), so torch is never pulled;
- ``flake8``: the same flake8 alone. flake8 runs every plugin it finds, so
  "flake8 without the TL plugin" needs an environment without torchlint (and
  without TorchFix, whose TOR plugin would run too).

Each round runs every measurement once, in an order rotated from round to
round, and the table shows medians: the machine is shared, so the ratios of
runs measured side by side mean more than any absolute number. Measured:

- ``ast.parse`` floor: one process reading and parsing every file;
- torchlint cold (``--no-cache`` when it has the option), and with ``-j1``
  when it has ``-j``; then, when it has a cache, a run that fills a fresh
  cache and a warm re-run with nothing changed;
- TorchFix 0.7.0 (``torchfix DIR``, check mode, its default rules and jobs);
- flake8 (its default checks: pycodestyle E/W, pyflakes F, mccabe C90) without
  and with the TL plugin, and ``flake8 --select TL``;
- memory: torchlint's peak RSS on half of transformers against all of it.

Per run: wall time, CPU time (user + sys of the process and its children,
from ``wait4``), the peak RSS of the largest process (``VmHWM``) and the
peak of the whole process tree's PSS (both sampled from /proc). It
also checks that every torchlint run over a corpus (cold, ``-j1``, cache
fill, warm) printed the same findings, and compares them with what
``flake8 --select TL`` reports.

Usage::

    python bench/benchmark.py              # full: 3 rounds, rewrites bench/RESULTS.md
    python bench/benchmark.py --quick      # 300 transformers files + 100 old ones, 1 round
    python bench/benchmark.py --rounds 5 --torchfix-rounds 1
    python bench/benchmark.py --torchlint-src ../other-worktree

A tool that cannot be installed or that fails is reported in the table, not
a crash. Exit status: 0, or 2 when no corpus could be built.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib.util
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def _load_corpus_module():
    spec = importlib.util.spec_from_file_location("torchlint_bench_corpus", HERE / "corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


corpus_lib = _load_corpus_module()
Package = corpus_lib.Package

TRANSFORMERS = Package("transformers", "5.23.0", "2026 wheel: 2,860 .py files, 1.2 M lines, heavy torch use")
TORCHFIX = "TorchFix==0.7.0"
TORCHFIX_REQUIREMENTS = ("libcst>=1.5.0,<1.6.0", "PyYAML")  # its metadata, less flake8 (pinned below)
# Old, torch-based releases (2018-2019) from bench/corpus.py's list.
OLD_PACKAGES = ("torchvision", "pretrainedmodels", "pytorch-pretrained-bert", "fastai", "torchtext", "kornia")
QUICK_FILES = 300
QUICK_OLD_FILES = 100
# Memory check: the full corpus may use at most this much more per extra file
# than the half corpus (a few findings per file, never whole syntax trees).
MAX_KB_PER_FILE = 32.0
LARGEST_IN_HALF = 10
# torchlint's and flake8's directory walks skip these names; corpus files
# under them are left out so that every tool sees the same files.
SKIPPED_NAMES = {
    ".git", ".hg", ".svn", ".bzr", "__pycache__", ".tox", ".nox", ".venv", "venv", ".eggs", "build", "dist",
    "site-packages", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache", "__pypackages__", "_build",
    "buck-out", ".ipynb_checkpoints", "CVS",
}

AST_FLOOR = r"""
import ast, os, sys
files = lines = 0
for root in sys.argv[1:]:
    for directory, subdirectories, names in os.walk(root):
        subdirectories.sort()
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                with open(path, "rb") as handle:
                    data = handle.read()
                ast.parse(data, path)
                files += 1
                lines += data.count(b"\n")
print(f"parsed {files} files, {lines} lines")
"""


# --- running one measured command ---------------------------------------------------


@dataclass
class Sample:
    """One run of one command."""

    wall: float
    cpu: float  # user + sys of the process and its waited-for children
    maxrss_kb: int  # peak RSS of the largest single process (sampled VmHWM)
    tree_kb: int  # peak of the summed PSS of the process tree (sampled)
    returncode: Optional[int]  # None: timed out or could not start
    output_sha: str = ""
    stderr_tail: str = ""
    error: str = ""


def _children(pid: int) -> List[int]:
    found = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as handle:
                found.extend(int(p) for p in handle.read().split())
    except (OSError, ValueError):
        pass
    return found


def _status_kb(pid: int, *fields: str) -> List[int]:
    """``kB`` fields of /proc/PID/status (0 when unreadable)."""
    values = dict.fromkeys(fields, 0)
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                name, _, rest = line.partition(":")
                if name in values:
                    values[name] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return [values[f] for f in fields]


def _pss_kb(pid: int) -> Optional[int]:
    """Proportional set size: pages shared with forked workers count once in all."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


class TreeSampler(threading.Thread):
    """Memory of a process and its descendants, every ``interval`` s.

    ``process_kb``: the largest peak RSS (VmHWM) of any one process of the
    tree. (``ru_maxrss`` from ``wait4`` cannot say this: Linux carries the
    pre-exec peak of the forked benchmark process over into the child.)
    ``tree_kb``: the peak of the tree's summed PSS (RSS where PSS is missing).
    """

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.process_kb = 0
        self.tree_kb = 0
        self.done = threading.Event()

    def run(self) -> None:
        while True:
            seen, todo, total = set(), [self.pid], 0
            while todo:
                pid = todo.pop()
                if pid in seen:
                    continue
                seen.add(pid)
                hwm, rss = _status_kb(pid, "VmHWM", "VmRSS")
                self.process_kb = max(self.process_kb, hwm)
                pss = _pss_kb(pid)
                total += rss if pss is None else pss
                todo.extend(_children(pid))
            self.tree_kb = max(self.tree_kb, total)
            if self.done.wait(self.interval):
                return


def measure(command: Sequence[str], cwd: Path, env: Dict[str, str], output: Path, timeout: float) -> Sample:
    """Run ``command`` with stdout to ``output``; time it and take its resource usage."""
    output.parent.mkdir(parents=True, exist_ok=True)
    errors = output.with_suffix(output.suffix + ".stderr")
    with open(output, "wb") as out, open(errors, "wb") as err:
        start = time.perf_counter()
        try:
            process = subprocess.Popen(list(command), cwd=cwd, env=env, stdout=out, stderr=err,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            return Sample(0.0, 0.0, 0, 0, None, error=f"cannot start: {exc}")
        sampler = TreeSampler(process.pid)
        sampler.start()
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            while True:
                try:
                    _, status, usage = os.wait4(process.pid, 0)
                    break
                except InterruptedError:
                    continue
        finally:
            wall = time.perf_counter() - start
            timer.cancel()
            sampler.done.set()
            sampler.join()
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    try:  # workers left behind by a killed tool
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass
    tail = errors.read_bytes()[-2000:].decode("utf-8", "replace")
    sample = Sample(
        wall=wall, cpu=usage.ru_utime + usage.ru_stime, maxrss_kb=sampler.process_kb, tree_kb=sampler.tree_kb,
        returncode=None if timed_out.is_set() else process.returncode,
        output_sha=hashlib.sha256(output.read_bytes()).hexdigest(), stderr_tail=tail,
    )
    if timed_out.is_set():
        sample.error = f"timed out after {timeout:.0f}s"
    return sample


# --- corpora ------------------------------------------------------------------------


@dataclass
class Corpus:
    name: str  # directory under <cache>/corpora
    description: str
    files: List[str] = field(default_factory=list)  # relative to the corpus directory
    lines: int = 0
    dropped: Dict[str, str] = field(default_factory=dict)  # file -> why it is not in the corpus
    packages: List[str] = field(default_factory=list)
    sampled: bool = False

    def directory(self, cache: Path) -> Path:
        return cache / "corpora" / self.name


def _keep(path: str) -> Optional[str]:
    """None to keep a file of a package, else why not."""
    if not path.endswith(".py"):
        return "not .py"
    parts = path.split("/")
    for part in parts[:-1]:
        if part in SKIPPED_NAMES or part.endswith((".egg-info", ".egg")):
            return f"under {part}/, which the linters skip"
    return None


def materialise(corpus: Corpus, sources: Dict[str, Path], cache: Path) -> None:
    """Lay the corpus out as hard links (copies as a fallback); rebuilt when the list changes."""
    target = corpus.directory(cache)
    manifest = "\n".join(corpus.files)
    # The marker sits next to the corpus, not in it, so that no tool sees it.
    marker = target.parent / f".{corpus.name}.manifest"
    if target.is_dir() and marker.is_file() and marker.read_text() == manifest:
        return
    if target.exists():
        shutil.rmtree(target)
    for relative in corpus.files:
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(sources[relative], destination)
        except OSError:
            shutil.copyfile(sources[relative], destination)
    marker.write_text(manifest)


def build_corpora(cache: Path, sample: Optional[int], old_sample: Optional[int], with_transformers: bool,
                  old_names: Sequence[str], python: str, log: Callable[[str], None]) -> Tuple[List[Corpus], Optional[Corpus], List[str]]:
    """(timed corpora, half of transformers for the memory check, problems)."""
    problems: List[str] = []
    corpora: List[Corpus] = []
    half: Optional[Corpus] = None

    def fetch(package: Package):
        prepared = corpus_lib.prepare(package, cache, python)
        if prepared.error:
            problems.append(f"{package.spec}: {prepared.error}")
            log(f"  {package.spec}: {prepared.error}")
            return None
        return prepared

    prepared = None
    if with_transformers:
        log(f"corpus: {TRANSFORMERS.spec} ...")
        prepared = fetch(TRANSFORMERS)
    if prepared is not None:
        name = f"transformers-{TRANSFORMERS.version}"
        kept, dropped = _select(prepared)
        step = 1
        if sample and sample < len(kept):
            step = max(1, len(kept) // sample)
            kept = kept[::step][:sample]
            name += f"-s{len(kept)}"
        sources = {p: prepared.root / p for p in kept}  # wheel paths start with transformers/
        files = sorted(sources)
        corpus = Corpus(name, f"{TRANSFORMERS.spec} wheel" + (f", one file in {step}" if step > 1 else ""),
                        files, sum(prepared.lines[p] for p in kept), dropped, [TRANSFORMERS.spec], step > 1)
        materialise(corpus, sources, cache)
        corpora.append(corpus)
        # Every other file, and the largest files in both halves: the peak of a
        # linter that forgets each file goes with the largest file, so any
        # difference between half and full is memory that piles up.
        largest = sorted(files, key=lambda p: prepared.lines[p], reverse=True)[:LARGEST_IN_HALF]
        half_files = sorted(set(files[::2]) | set(largest))
        half = Corpus(name + "-half", f"every other file of {name}, with its {LARGEST_IN_HALF} largest", half_files,
                      sum(prepared.lines[p] for p in half_files), {}, [TRANSFORMERS.spec])
        materialise(half, {p: sources[p] for p in half_files}, cache)

    wanted = [p for p in corpus_lib.ALL_PACKAGES if p.name in old_names]
    missing = set(old_names) - {p.name for p in wanted}
    for name in sorted(missing):
        problems.append(f"{name}: not in bench/corpus.py's package list")
    if wanted:
        sources, lines, dropped, specs = {}, {}, {}, []
        for package in wanted:
            log(f"corpus: {package.spec} ...")
            prepared = fetch(package)
            if prepared is None:
                continue
            specs.append(package.spec)
            kept, why = _select(prepared)
            dropped.update({f"{package.key}/{p}": reason for p, reason in why.items()})
            for p in kept:
                sources[f"{package.key}/{p}"] = prepared.root / p
                lines[f"{package.key}/{p}"] = prepared.lines[p]
        files = sorted(sources)
        name = "old-packages"
        step = 1
        if old_sample and old_sample < len(files):
            step = max(1, len(files) // old_sample)
            files = files[::step][:old_sample]
            name += f"-s{len(files)}"
        if files:
            description = "old torch-based releases" + (f", one file in {step}" if step > 1 else "")
            corpus = Corpus(name, description, files, sum(lines[p] for p in files), dropped, specs, step > 1)
            materialise(corpus, {p: sources[p] for p in files}, cache)
            corpora.append(corpus)
    return corpora, half, problems


def _select(prepared) -> Tuple[List[str], Dict[str, str]]:
    kept, dropped = [], {}
    for path in prepared.files:
        why = _keep(path) or (f"does not compile: {prepared.not_compiling[path]}"
                              if path in prepared.not_compiling else None)
        if why:
            if path.endswith(".py"):
                dropped[path] = why
        else:
            kept.append(path)
    return kept, dropped


# --- the tools' environments ----------------------------------------------------------


class SetupError(Exception):
    pass


def _run(command: Sequence[str], timeout: float = 1800, **kwargs) -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=timeout, **kwargs)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SetupError(f"{' '.join(command[:4])} ...: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-3:]
        raise SetupError(f"{' '.join(command[:6])} ... failed ({done.returncode}): {' | '.join(last)}")
    return done


class Venv:
    def __init__(self, root: Path) -> None:
        self.root = root

    def bin(self, name: str) -> str:
        return str(self.root / "bin" / name)

    @property
    def python(self) -> str:
        return self.bin("python")

    def ensure(self, spec: Dict, install: Callable[["Venv"], None], base_python: str) -> None:
        """Create and fill the venv unless its marker says it already holds ``spec``."""
        marker = self.root / ".bench-spec.json"
        wanted = json.dumps(spec, sort_keys=True)
        if marker.is_file() and marker.read_text() == wanted and Path(self.python).exists():
            return
        if self.root.exists():
            shutil.rmtree(self.root)
        _run([base_python, "-m", "venv", str(self.root)], timeout=600)
        install(self)
        marker.write_text(wanted)

    def pip(self, *args: str) -> None:
        _run([self.python, "-m", "pip", "install", "--disable-pip-version-check", "-q", *args])

    def versions(self) -> Dict[str, str]:
        try:
            done = _run([self.python, "-m", "pip", "list", "--disable-pip-version-check", "--format=json"], timeout=300)
            return {p["name"].lower(): p["version"] for p in json.loads(done.stdout)}
        except (SetupError, ValueError):
            return {}


def _source_hash(source: Path) -> str:
    digest = hashlib.sha256()
    paths = sorted(p for p in (source / "torchlint").rglob("*") if p.is_file() and "__pycache__" not in p.parts
                   and p.suffix != ".pyc")
    for p in paths + [source / "setup.cfg", source / "pyproject.toml"]:
        if p.is_file():
            digest.update(str(p.relative_to(source)).encode() + b"\0" + p.read_bytes() + b"\0")
    return digest.hexdigest()


def _install_torchlint(venv: Venv, source: Path) -> None:
    """Build from a copy of the source, so the source tree gets no build/ or egg-info."""
    with tempfile.TemporaryDirectory(prefix="torchlint-src-") as tmp:
        copy = Path(tmp) / "torchlint-src"
        copy.mkdir()
        shutil.copytree(source / "torchlint", copy / "torchlint",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for name in ("setup.cfg", "pyproject.toml", "README.md", "LICENSE", "setup.py"):
            if (source / name).is_file():
                shutil.copy2(source / name, copy / name)
        venv.pip("--no-deps", "--force-reinstall", str(copy))


@dataclass
class Tools:
    torchlint: Optional[Venv] = None
    torchfix: Optional[Venv] = None
    flake8: Optional[Venv] = None
    problems: List[str] = field(default_factory=list)
    versions: Dict[str, Dict[str, str]] = field(default_factory=dict)
    features: Dict[str, bool] = field(default_factory=dict)
    torchlint_version: str = ""
    torchlint_commit: str = ""


def setup_tools(cache: Path, source: Path, base_python: str, libcst_override: Optional[str],
                log: Callable[[str], None]) -> Tools:
    tools = Tools()
    venvs = cache / "venvs"
    flake8_pin = "flake8"
    libcst_pin = libcst_override or "libcst>=1.5.0,<1.6.0"

    log("venv flake8 (flake8 alone) ...")
    flake8 = Venv(venvs / "flake8")
    try:
        flake8.ensure({"flake8": "latest"}, lambda v: v.pip("flake8"), base_python)
        tools.flake8 = flake8
        version = flake8.versions().get("flake8")
        if version:
            flake8_pin = f"flake8=={version}"
    except SetupError as exc:
        tools.problems.append(f"flake8 venv: {exc}")

    log(f"venv torchfix ({TORCHFIX} --no-deps, {', '.join(TORCHFIX_REQUIREMENTS)}, {flake8_pin}) ...")
    torchfix = Venv(venvs / "torchfix")

    def install_torchfix(venv: Venv) -> None:
        venv.pip(*TORCHFIX_REQUIREMENTS, flake8_pin)
        venv.pip("--no-deps", TORCHFIX)

    try:
        torchfix.ensure({"torchfix": TORCHFIX, "deps": TORCHFIX_REQUIREMENTS, "flake8": flake8_pin},
                        install_torchfix, base_python)
        tools.torchfix = torchfix
        if not libcst_override:
            version = torchfix.versions().get("libcst")
            if version:
                libcst_pin = f"libcst=={version}"
    except SetupError as exc:
        tools.problems.append(f"TorchFix venv: {exc}")

    log(f"venv torchlint ({source}, {libcst_pin}, {flake8_pin}) ...")
    torchlint = Venv(venvs / "torchlint")
    source_hash = _source_hash(source)

    def install_torchlint(venv: Venv) -> None:
        # torchlint's other run-time needs (setup.cfg); the server's pygls is not measured.
        venv.pip(libcst_pin, flake8_pin, "packaging>=22", "tomli>=1.1; python_version < '3.11'")
        _install_torchlint(venv, source)

    try:
        torchlint.ensure({"source": str(source), "hash": source_hash, "libcst": libcst_pin, "flake8": flake8_pin,
                          "also": "packaging>=22"},
                         install_torchlint, base_python)
        tools.torchlint = torchlint
    except SetupError as exc:
        tools.problems.append(f"torchlint venv: {exc}")

    for name, venv in (("torchlint", tools.torchlint), ("torchfix", tools.torchfix), ("flake8", tools.flake8)):
        if venv is not None:
            tools.versions[name] = venv.versions()
    if tools.torchlint is not None:
        try:
            help_text = _run([tools.torchlint.bin("torchlint"), "--help"], timeout=120).stdout
            tools.torchlint_version = _run([tools.torchlint.bin("torchlint"), "--version"], timeout=120).stdout.strip()
        except SetupError as exc:
            # A torchlint that cannot start would be "measured" at a tenth of a second.
            raise SystemExit(f"benchmark: torchlint does not start in {tools.torchlint.root}: {exc}")
        tools.features = {
            "no_cache": "--no-cache" in help_text,
            "cache_dir": "--cache-dir" in help_text,
            "jobs": bool(re.search(r"(^|\s)(-j\b|--jobs\b)", help_text)),
        }
        try:
            commit = _run(["git", "-C", str(source), "rev-parse", "--short=12", "HEAD"], timeout=30).stdout.strip()
            dirty = _run(["git", "-C", str(source), "status", "--porcelain", "--", "torchlint"], timeout=30).stdout.strip()
            tools.torchlint_commit = commit + (" + uncommitted changes" if dirty else "")
        except SetupError:
            tools.torchlint_commit = "unknown"
    return tools


# --- the measurements ------------------------------------------------------------------


@dataclass
class Tool:
    key: str
    label: str
    command: List[str]
    corpus: str
    before: Optional[Callable[[], None]] = None  # e.g. empty the cache
    rounds: Optional[int] = None  # None: every round
    group: str = ""  # measurements run back to back in this order (fill, then warm)
    torchlint_output: bool = False  # its stdout is torchlint's findings


def plan(tools: Tools, corpora: Sequence[Corpus], half: Optional[Corpus], cache: Path,
         torchfix_rounds: int) -> List[Tool]:
    steps: List[Tool] = []
    features = tools.features
    for corpus in corpora:
        path = corpus.name
        c = corpus.name
        if tools.torchlint is not None:
            steps.append(Tool(f"ast:{c}", "ast.parse floor (1 process)", [tools.torchlint.python, "-c", AST_FLOOR, path], c))
            tl = [tools.torchlint.bin("torchlint"), "--isolated"]
            cold = tl + (["--no-cache"] if features.get("no_cache") else [])
            steps.append(Tool(f"tl-cold:{c}", "torchlint cold" + (" (--no-cache)" if features.get("no_cache") else ""),
                              cold + [path], c, torchlint_output=True))
            if features.get("jobs"):
                steps.append(Tool(f"tl-j1:{c}", "torchlint cold -j1", cold + ["-j1", path], c, torchlint_output=True))
            if features.get("no_cache"):
                cache_dir = cache / "torchlint-cache" / c
                with_cache = tl + (["--cache-dir", str(cache_dir)] if features.get("cache_dir") else [])

                def empty(directory: Path = cache_dir) -> None:
                    shutil.rmtree(directory, ignore_errors=True)
                    shutil.rmtree(cache / "xdg", ignore_errors=True)
                    # Without --cache-dir the cache may sit in the working directory.
                    for entry in (cache / "corpora").iterdir():
                        if entry.is_dir() and "cache" in entry.name.lower():
                            shutil.rmtree(entry, ignore_errors=True)

                steps.append(Tool(f"tl-fill:{c}", "torchlint, filling an empty cache", with_cache + [path], c,
                                  before=empty, group=f"cache:{c}", torchlint_output=True))
                steps.append(Tool(f"tl-warm:{c}", "torchlint warm (nothing changed)", with_cache + [path], c,
                                  group=f"cache:{c}", torchlint_output=True))
        if tools.torchfix is not None:
            steps.append(Tool(f"torchfix:{c}", "TorchFix 0.7.0", [tools.torchfix.bin("torchfix"), path], c,
                              rounds=torchfix_rounds))
        if tools.flake8 is not None:
            steps.append(Tool(f"flake8:{c}", "flake8 (default checks)", [tools.flake8.bin("flake8"), "--isolated", path], c))
        if tools.torchlint is not None:
            # The plugin keeps module summaries in the cache folder of the
            # project flake8 runs in (here the working directory): the first
            # run starts without them, the second reads what the first kept.
            def no_summaries(directory: Path = cache / "corpora" / ".torchlint_cache") -> None:
                shutil.rmtree(directory, ignore_errors=True)

            steps.append(Tool(f"flake8-tl:{c}", "flake8 + TL plugin (default checks + TL)",
                              [tools.torchlint.bin("flake8"), "--isolated", path], c,
                              before=no_summaries, group=f"flake8-tl:{c}"))
            steps.append(Tool(f"flake8-tl-kept:{c}", "flake8 + TL plugin, module summaries of the run before",
                              [tools.torchlint.bin("flake8"), "--isolated", path], c, group=f"flake8-tl:{c}"))
            steps.append(Tool(f"flake8-tl-only:{c}", "flake8 --select TL",
                              [tools.torchlint.bin("flake8"), "--isolated", "--select", "TL", path], c))
    if half is not None and tools.torchlint is not None:
        tl = [tools.torchlint.bin("torchlint"), "--isolated"] + (["--no-cache"] if features.get("no_cache") else [])
        steps.append(Tool(f"tl-cold:{half.name}", "torchlint cold, half corpus", tl + [half.name], half.name,
                          rounds=1, torchlint_output=True))
        if features.get("jobs"):
            steps.append(Tool(f"tl-j1:{half.name}", "torchlint cold -j1, half corpus", tl + ["-j1", half.name],
                              half.name, rounds=1, torchlint_output=True))
    return steps


def run_rounds(steps: List[Tool], rounds: int, cache: Path, env: Dict[str, str], timeout: float,
               log: Callable[[str], None]) -> Dict[str, List[Sample]]:
    # Blocks keep a group (cache fill, then warm) together; the block order rotates each round.
    blocks: List[List[Tool]] = []
    for step in steps:
        if step.group and blocks and blocks[-1][0].group == step.group:
            blocks[-1].append(step)
        else:
            blocks.append([step])
    samples: Dict[str, List[Sample]] = {step.key: [] for step in steps}
    cwd = cache / "corpora"
    outputs = cache / "outputs"
    for number in range(rounds):
        shift = (number * max(1, len(blocks) // rounds + 1)) % max(1, len(blocks))
        order = blocks[shift:] + blocks[:shift]
        for block in order:
            for step in block:
                if step.rounds is not None and number >= step.rounds:
                    continue
                if step.before is not None:
                    step.before()
                log(f"round {number + 1}/{rounds}: {step.label} on {step.corpus} ...")
                sample = measure(step.command, cwd, env, outputs / f"{step.key.replace(':', '__')}.r{number}.out", timeout)
                samples[step.key].append(sample)
                state = sample.error or f"exit {sample.returncode}"
                log(f"    {sample.wall:.2f}s wall, {sample.cpu:.2f}s cpu, {sample.maxrss_kb / 1024:.0f} MB max RSS, "
                    f"{sample.tree_kb / 1024:.0f} MB tree ({state})")
    return samples


# --- judging the runs -----------------------------------------------------------------


OK_EXIT = {
    "ast": {0}, "tl-cold": {0, 1, 2}, "tl-j1": {0, 1, 2}, "tl-fill": {0, 1, 2}, "tl-warm": {0, 1, 2},
    "torchfix": {0, 1}, "flake8": {0, 1}, "flake8-tl": {0, 1}, "flake8-tl-kept": {0, 1}, "flake8-tl-only": {0, 1},
}
# Exit statuses whose run still counts, but which say that some files could
# not be checked (torchlint: 2; TorchFix: 1, files it failed on): reported.
WARN_EXIT = {"tl-cold": 2, "tl-j1": 2, "tl-fill": 2, "tl-warm": 2, "torchfix": 1}


def _kind(key: str) -> str:
    return key.split(":", 1)[0]


def failure_of(key: str, sample: Sample) -> Optional[str]:
    """Why a run does not count (it timed out, could not start, or exited with an odd status)."""
    if sample.error:
        return sample.error
    if sample.returncode not in OK_EXIT.get(_kind(key), {0, 1}):
        tail = " | ".join(sample.stderr_tail.strip().splitlines()[-2:])[:300]
        return f"exit {sample.returncode}" + (f": {tail}" if tail else "")
    return None


def _median(values: Sequence[float]) -> Optional[float]:
    return statistics.median(values) if values else None


@dataclass
class Row:
    key: str
    label: str
    corpus: str
    runs: int
    wall: Optional[float]
    cpu: Optional[float]
    maxrss_mb: Optional[float]
    tree_mb: Optional[float]
    files_per_s: Optional[float]
    lines_per_s: Optional[float]
    failure: Optional[str]  # set when no run counts
    failed_runs: List[str] = field(default_factory=list)


def rows_of(steps: Sequence[Tool], samples: Dict[str, List[Sample]], sizes: Dict[str, Tuple[int, int]]) -> List[Row]:
    rows = []
    for step in steps:
        runs = samples.get(step.key, [])
        failed = [f"run {i + 1}: {why}" for i, s in enumerate(runs) for why in [failure_of(step.key, s)] if why]
        good = [s for s in runs if not failure_of(step.key, s)]
        wall = _median([s.wall for s in good])
        files, lines = sizes[step.corpus]
        rows.append(Row(
            step.key, step.label, step.corpus, len(good), wall, _median([s.cpu for s in good]),
            max((s.maxrss_kb for s in good), default=0) / 1024 or None,
            max((s.tree_kb for s in good), default=0) / 1024 or None,
            files / wall if wall else None, lines / wall if wall else None,
            failed[0] if failed and not good else None, failed,
        ))
    return rows


DIAGNOSTIC = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+[0-9]+) ")


def _findings(path: Path, prefix: str = "") -> Optional[set]:
    if not path.is_file():
        return None
    found = set()
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        match = DIAGNOSTIC.match(line)
        if match and match["code"].startswith(prefix):
            found.add((os.path.normpath(match["path"]), int(match["line"]), int(match["col"]), match["code"]))
    return found


def consistency(steps: Sequence[Tool], samples: Dict[str, List[Sample]], corpora: Sequence[Corpus],
                cache: Path) -> List[str]:
    """Same findings whatever the parallelism and the cache; the same as the flake8 plugin's."""
    notes = []
    outputs = cache / "outputs"
    for corpus in corpora:
        c = corpus.name
        runs = [(step, i, s) for step in steps if step.corpus == c and step.torchlint_output
                for i, s in enumerate(samples.get(step.key, []))
                if not failure_of(step.key, s)]
        if not runs:
            continue
        kinds = sorted({step.label for step, _, _ in runs})
        # Compare the finding lines, in order (deterministic output order);
        # other lines (the summary) are compared byte for byte separately.
        by_findings: Dict[Tuple[str, ...], List[str]] = {}
        for step, i, _sample in runs:
            path = outputs / f"{step.key.replace(':', '__')}.r{i}.out"
            text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
            lines = tuple(line for line in text.splitlines() if DIAGNOSTIC.match(line))
            by_findings.setdefault(lines, []).append(f"{step.label} #{i + 1}")
        if len(by_findings) == 1:
            count = len(next(iter(by_findings)))
            same_bytes = len({s.output_sha for _, _, s in runs}) == 1
            notes.append(f"{c}: the {_n(len(runs), 'torchlint run')} ({'; '.join(kinds)}) printed the same "
                         f"{_n(count, 'finding')} in the same order"
                         + (", byte for byte." if same_bytes else "; their other lines (summary) differ."))
        else:
            groups = " vs ".join(f"[{', '.join(names)}: {_n(len(lines), 'finding')}]"
                                 for lines, names in by_findings.items())
            same_sets = len({frozenset(lines) for lines in by_findings}) == 1
            notes.append(f"{c}: torchlint runs DIFFER" + (" in order only" if same_sets else "") + f": {groups}")
        cold = _findings(outputs / f"tl-cold__{c}.r0.out")
        plugin = _findings(outputs / f"flake8-tl-only__{c}.r0.out", "TL")
        if cold is not None and plugin is not None and samples.get(f"flake8-tl-only:{c}"):
            if cold == plugin:
                notes.append(f"{c}: flake8 --select TL reports the same {len(cold)} findings as the torchlint command.")
            else:
                notes.append(f"{c}: flake8 --select TL and the torchlint command differ: {len(cold - plugin)} only in "
                             f"torchlint, {len(plugin - cold)} only in flake8 (of {len(cold)} / {len(plugin)}).")
        both = _findings(outputs / f"flake8-tl__{c}.r0.out")
        if both is not None and plugin is not None and samples.get(f"flake8-tl:{c}"):
            tl_in_both = {f for f in both if f[3].startswith("TL")}
            if tl_in_both != plugin:
                notes.append(f"{c}: flake8's default run with the plugin reports {len(tl_in_both)} TL findings, "
                             f"--select TL {len(plugin)}.")
    return notes


def finding_counts(cache: Path, corpus: str) -> Dict[str, str]:
    """What each tool reported, in words (from round 1's output)."""
    outputs = cache / "outputs"
    counts = {}
    tl = _findings(outputs / f"tl-cold__{corpus}.r0.out")
    if tl is not None:
        counts["torchlint"] = _n(len(tl), "finding")
    tf_err = outputs / f"torchfix__{corpus}.r0.out.stderr"
    tf_out = outputs / f"torchfix__{corpus}.r0.out"
    if tf_err.is_file():
        text = tf_err.read_text(encoding="utf-8", errors="replace")
        checked = re.search(r"Finished checking (\d+) files", text)
        fixable = re.search(r"(\d+) potentially fixable", text)
        lines = tf_out.read_text(encoding="utf-8", errors="replace").splitlines() if tf_out.is_file() else []
        tor = sum(1 for line in lines if re.match(r"^.+?:\d+:\d+: TOR\d+", line))
        parts = []
        if checked:
            parts.append(f"checked {_n(int(checked.group(1)), 'file')} containing 'torch'")
        parts.append(_n(tor, "finding"))
        if fixable:
            parts.append(f"{_n(int(fixable.group(1)), 'file')} fixable")
        counts["TorchFix"] = ", ".join(parts)
    for key, name in (("flake8", "flake8"), ("flake8-tl", "flake8 + TL")):
        found = _findings(outputs / f"{key}__{corpus}.r0.out")
        if found is not None:
            tl_count = sum(1 for f in found if f[3].startswith("TL"))
            counts[name] = _n(len(found), "finding") + (f" ({tl_count} TL)" if key == "flake8-tl" else "")
    return counts


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


# --- report ------------------------------------------------------------------------------


def _fmt(value: Optional[float], digits: int = 2, suffix: str = "") -> str:
    if value is None:
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}{suffix}"
    return f"{value:.{digits}f}{suffix}"


def _ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return a / b if a and b else None


def ratios(rows: Sequence[Row], corpora: Sequence[Corpus], half: Optional[Corpus], features: Dict[str, bool]) -> List[List[str]]:
    by_key = {row.key: row for row in rows}
    out = []

    def get(kind: str, corpus: str, attribute: str = "wall") -> Optional[float]:
        row = by_key.get(f"{kind}:{corpus}")
        return getattr(row, attribute) if row and not row.failure else None

    def mark(ok: Optional[bool]) -> str:
        return "-" if ok is None else ("yes" if ok else "NO")

    for corpus in corpora:
        c = corpus.name
        target = corpus.name.startswith("transformers")  # the targets are about transformers
        r = _ratio(get("torchfix", c), get("tl-cold", c))
        out.append([c, "TorchFix / torchlint cold (wall)", _fmt(r, 1, "x"), ">= 20x" if target else "",
                    mark(r >= 20 if r and target else None)])
        r = _ratio(get("torchfix", c, "cpu"), get("tl-cold", c, "cpu"))
        out.append([c, "TorchFix / torchlint cold (CPU)", _fmt(r, 1, "x"), "", ""])
        r = _ratio(get("tl-cold", c), get("ast", c))
        out.append([c, "torchlint cold / ast.parse floor (wall)", _fmt(r, 2, "x"), "<= 3x" if target else "",
                    mark(r <= 3 if r and target else None)])
        if features.get("jobs"):
            r = _ratio(get("tl-j1", c), get("ast", c))
            out.append([c, "torchlint cold -j1 / ast.parse floor (wall)", _fmt(r, 2, "x"), "", ""])
        r = _ratio(get("tl-cold", c, "cpu"), get("ast", c, "cpu"))
        out.append([c, "torchlint cold / ast.parse floor (CPU)", _fmt(r, 2, "x"), "", ""])
        if features.get("no_cache"):
            w = get("tl-warm", c)
            out.append([c, "torchlint warm re-run (wall)", _fmt(w, 2, " s"), "< 1 s" if target else "",
                        mark(w < 1 if w and target else None)])
        else:
            out.append([c, "torchlint warm re-run (wall)", "no cache (torchlint has no --no-cache)",
                        "< 1 s" if target else "", "-"])
        r = _ratio(get("flake8-tl", c), get("flake8", c))
        out.append([c, "flake8 + TL / flake8 (wall)", _fmt(r, 2, "x"), "<= 1.10x" if target else "",
                    mark(r <= 1.10 if r and target else None)])
        r = _ratio(get("flake8-tl", c, "cpu"), get("flake8", c, "cpu"))
        out.append([c, "flake8 + TL / flake8 (CPU)", _fmt(r, 2, "x"), "", ""])
        if get("flake8-tl-kept", c):
            r = _ratio(get("flake8-tl-kept", c), get("flake8", c))
            out.append([c, "flake8 + TL, summaries kept / flake8 (wall)", _fmt(r, 2, "x"), "", ""])
            r = _ratio(get("flake8-tl-kept", c, "cpu"), get("flake8", c, "cpu"))
            out.append([c, "flake8 + TL, summaries kept / flake8 (CPU)", _fmt(r, 2, "x"), "", ""])
    if half is not None and corpora:
        full = corpora[0]
        kind = "tl-j1" if features.get("jobs") else "tl-cold"
        for attribute, what in (("maxrss_mb", "largest process, RSS"), ("tree_mb", "process tree, PSS")):
            a, b = get(kind, half.name, attribute), get(kind, full.name, attribute)
            if a and b:
                extra = len(full.files) - len(half.files)
                per_file = (b - a) * 1024 / extra if extra else 0.0
                ok = per_file <= MAX_KB_PER_FILE
                out.append([full.name, f"peak RSS ({what}, {kind}): half -> full corpus",
                            f"{a:.0f} -> {b:.0f} MB ({per_file:+.1f} KB/file)", f"<= {MAX_KB_PER_FILE:.0f} KB/file",
                            mark(ok)])
    return out


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table, padded so it also reads as plain text."""
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        padded = [c.ljust(w) if i in (0, 1) else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("| " + " | ".join(padded) + " |")
        if n == 0:
            lines.append("|" + "|".join(("-" * (w + 1) + ":") if i > 1 else ("-" * (w + 2)) for i, w in enumerate(widths)) + "|")
    return "\n".join(lines)


def timing_table(rows: Sequence[Row]) -> str:
    body = []
    for row in rows:
        if row.failure:
            body.append([row.corpus, row.label, 0, "FAILED", "", "", "", "", row.failure[:120]])
            continue
        runs = f"{row.runs}" + (f" (+{len(row.failed_runs)} failed)" if row.failed_runs else "")
        body.append([
            row.corpus, row.label, runs, _fmt(row.wall), _fmt(row.cpu), _fmt(row.maxrss_mb, 0),
            _fmt(row.tree_mb, 0), _fmt(row.files_per_s, 0), _fmt(row.lines_per_s, 0),
        ])
    return table(["corpus", "measurement", "runs", "wall s", "CPU s", "max RSS MB", "tree PSS MB", "files/s",
                  "lines/s"], body)


def machine() -> Dict[str, str]:
    info = {"platform": platform.platform(), "python": sys.version.split()[0], "nproc": str(os.cpu_count())}
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        models = re.findall(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
        info["cpu"] = f"{models[0]} x {len(models)}" if models else "unknown"
        mhz = re.findall(r"^cpu MHz\s*:\s*(.+)$", cpuinfo, re.M)
        if mhz:
            info["cpu"] += f" ({float(mhz[0]):.0f} MHz)"
    except OSError:
        info["cpu"] = "unknown"
    try:
        meminfo = Path("/proc/meminfo").read_text()
        total = int(re.search(r"MemTotal:\s*(\d+)", meminfo).group(1))
        info["memory"] = f"{total / 1024 / 1024:.1f} GiB"
    except (OSError, AttributeError):
        info["memory"] = "unknown"
    return info


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def render(context: Dict) -> str:
    m = context["machine"]
    tools: Tools = context["tools"]
    v = tools.versions
    lines = [
        "# torchlint benchmark results",
        "",
        f"Written by `python bench/benchmark.py{context['argv']}` on {context['date']} "
        f"({context['elapsed']:.0f} s in all). Rewritten by every full run; see `bench/README.md`.",
        "",
        *([f"**Sampled corpora** ({context['sampled']}): the issue's targets are about all of transformers, "
           "so read these ratios as a preview.", ""] if context["sampled"] else []),
        "## Machine",
        "",
        f"- CPU: {m['cpu']}; `nproc`: {m['nproc']}; memory: {m['memory']}",
        f"- {m['platform']}; Python {m['python']}",
        f"- load average (1, 5, 15 min) at the start: {context['load_start']}; at the end: {context['load_end']}"
        " (the machine is shared: compare the ratios, measured side by side, more than absolute times)",
        "",
        "## Tools",
        "",
        f"- torchlint {tools.torchlint_version.replace('torchlint ', '')} from `{context['source']}` "
        f"(commit {tools.torchlint_commit}), installed as a wheel in its own venv with libcst "
        f"{v.get('torchlint', {}).get('libcst', '?')} and flake8 {v.get('torchlint', {}).get('flake8', '?')}; "
        f"options found: " + (", ".join(k for k, on in tools.features.items() if on) or "no --no-cache, no -j"),
        f"- TorchFix {v.get('torchfix', {}).get('torchfix', '?')} (`--no-deps`) with libcst "
        f"{v.get('torchfix', {}).get('libcst', '?')}, PyYAML {v.get('torchfix', {}).get('pyyaml', '?')}, "
        f"flake8 {v.get('torchfix', {}).get('flake8', '?')}; run as `torchfix DIR` (check mode, default rules, "
        "one job per core)",
        f"- flake8 {v.get('flake8', {}).get('flake8', '?')} (pycodestyle {v.get('flake8', {}).get('pycodestyle', '?')}, "
        f"pyflakes {v.get('flake8', {}).get('pyflakes', '?')}, mccabe {v.get('flake8', {}).get('mccabe', '?')}) "
        "alone in a third venv for \"flake8 without the plugin\"; every flake8 run is `flake8 --isolated DIR` "
        "(default checks, default jobs)",
        "",
        "## Corpora",
        "",
    ]
    for corpus in context["corpora"]:
        lines.append(f"- `{corpus.name}`: {len(corpus.files):,} files, {corpus.lines:,} lines; {corpus.description}: "
                     + ", ".join(corpus.packages)
                     + (f"; {len(corpus.dropped)} .py files left out (do not compile with this Python, or under a "
                        "folder the linters skip)" if corpus.dropped else ""))
    if context["half"] is not None:
        h = context["half"]
        lines.append(f"- `{h.name}`: {len(h.files):,} files, {h.lines:,} lines (memory check only)")
    lines += [
        "",
        f"## Timings (median of {context['rounds']} round{'s' if context['rounds'] != 1 else ''}, "
        "tools alternating within each round"
        + (f"; TorchFix: {_n(context['torchfix_rounds'], 'round')}" if context["torchfix_rounds"] < context["rounds"]
           else "")
        + ")",
        "",
        timing_table(context["rows"]),
        "",
        "CPU s: user + sys of the tool and its worker processes (wait4). max RSS: peak RSS of the largest "
        "single process (VmHWM); tree PSS: peak of the summed PSS of the tool's process tree (memory shared by "
        "forked workers counted once); both sampled from /proc every 0.05 s. "
        "files/s and lines/s: corpus size / median wall time.",
        "",
        "## Ratios and targets",
        "",
        table(["corpus", "ratio", "measured", "target", "met"], context["ratios"]),
        "",
        "## Findings and consistency",
        "",
    ]
    for corpus in context["corpora"]:
        counts = context["counts"].get(corpus.name, {})
        if counts:
            lines.append(f"- `{corpus.name}`: " + "; ".join(f"{k}: {val}" for k, val in counts.items()))
    lines += [f"- {note}" for note in context["consistency"]]
    if context["problems"]:
        lines += ["", "## Problems", ""] + [f"- {p}" for p in context["problems"]]
    return "\n".join(lines) + "\n"


# --- main ------------------------------------------------------------------------------


# Sections other scripts own in RESULTS.md (bench/server_latency.py): kept
# when this script rewrites the file.
KEPT_SECTION = re.compile(r"\n<!-- begin (\S+) -->\n.*?<!-- end \1 -->\n", re.S)


def kept_sections(results: Path) -> str:
    old = results.read_text(encoding="utf-8") if results.is_file() else ""
    return "".join(match.group(0) for match in KEPT_SECTION.finditer(old))


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", default=str(REPO / ".cache" / "bench"),
                        help="corpora, venvs and outputs (default: .cache/bench; safe to delete)")
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_FILES} transformers files and {QUICK_OLD_FILES} old ones, 1 round; "
                             "does not rewrite bench/RESULTS.md unless --results is given")
    parser.add_argument("--sample", type=int, metavar="N",
                        help=f"time N transformers files, evenly spread (default: all; {QUICK_FILES} with --quick)")
    parser.add_argument("--old-sample", type=int, metavar="N",
                        help=f"time N files of the old packages (default: all; {QUICK_OLD_FILES} with --quick)")
    parser.add_argument("--rounds", type=int, help="rounds (default 3; 1 with --quick)")
    parser.add_argument("--torchfix-rounds", type=int, help="rounds that include TorchFix (default: all)")
    parser.add_argument("--old", default=",".join(OLD_PACKAGES),
                        help="comma-separated old packages from bench/corpus.py ('' for none)")
    parser.add_argument("--no-transformers", action="store_true", help="leave transformers out")
    parser.add_argument("--torchlint-src", default=str(REPO), help="checkout whose torchlint to measure")
    parser.add_argument("--torchlint-libcst", metavar="REQ",
                        help="libcst requirement for torchlint's venv (default: the version TorchFix gets)")
    parser.add_argument("--skip", default="", help="comma-separated measurements to skip: "
                        + ", ".join(sorted(OK_EXIT)))
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per run before it counts as failed")
    parser.add_argument("--results", help="Markdown file to (re)write (default: bench/RESULTS.md; none with --quick)")
    parser.add_argument("--json", help="also write every sample as JSON here")
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    started = time.perf_counter()
    load_start = loadavg()
    cache = Path(args.cache).resolve()
    cache.mkdir(parents=True, exist_ok=True)
    rounds = args.rounds or (1 if args.quick else 3)
    torchfix_rounds = min(rounds, args.torchfix_rounds or rounds)
    source = Path(args.torchlint_src).resolve()
    base_python = sys.executable

    old_names = [n.strip() for n in args.old.split(",") if n.strip()]
    sample = args.sample or (QUICK_FILES if args.quick else None)
    old_sample = args.old_sample or (QUICK_OLD_FILES if args.quick else None)
    corpora, half, problems = build_corpora(cache, sample, old_sample, not args.no_transformers, old_names,
                                            base_python, log)
    if not corpora:
        log("benchmark: no corpus could be built: " + "; ".join(problems))
        return 2
    for corpus in corpora:
        log(f"corpus {corpus.name}: {len(corpus.files)} files, {corpus.lines} lines")
    current = {c.name for c in corpora} | ({half.name} if half else set())
    for entry in (cache / "corpora").iterdir():  # corpora of other samples, old caches
        if entry.name not in current and entry.name.lstrip(".").rsplit(".manifest", 1)[0] not in current:
            shutil.rmtree(entry, ignore_errors=True) if entry.is_dir() else entry.unlink()

    tools = setup_tools(cache, source, base_python, args.torchlint_libcst, log)
    problems += tools.problems
    log(f"torchlint options: {tools.features}")

    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if "tl-fill" in skip and "tl-warm" not in skip:
        # The warm run reads the cache the filling run writes: without it, it is a cold run.
        log("skipping tl-warm too: it needs the cache tl-fill fills")
        skip.add("tl-warm")
    steps = [s for s in plan(tools, corpora, half, cache, torchfix_rounds) if _kind(s.key) not in skip]
    env = dict(os.environ, PYTHONIOENCODING="utf-8", NO_COLOR="1", XDG_CACHE_HOME=str(cache / "xdg"))
    for variable in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "FLAKE8_CONFIG"):
        env.pop(variable, None)
    outputs = cache / "outputs"
    shutil.rmtree(outputs, ignore_errors=True)
    samples = run_rounds(steps, rounds, cache, env, args.timeout, log)

    sizes = {c.name: (len(c.files), c.lines) for c in corpora}
    if half is not None:
        sizes[half.name] = (len(half.files), half.lines)
    rows = rows_of(steps, samples, sizes)
    problems += [f"{row.label} on {row.corpus}, {why}" for row in rows for why in row.failed_runs]
    for step in steps:
        for number, sample in enumerate(samples.get(step.key, [])):
            if sample.returncode is not None and sample.returncode == WARN_EXIT.get(_kind(step.key)):
                tail = " | ".join(sample.stderr_tail.strip().splitlines()[-3:])[:400]
                problems.append(f"{step.label} on {step.corpus}, run {number + 1}: exit {sample.returncode} "
                                f"(some files not checked; timing kept): {tail}")
    context = {
        "argv": "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:])),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "elapsed": time.perf_counter() - started,
        "machine": machine(), "load_start": load_start, "load_end": loadavg(),
        "tools": tools, "source": source, "corpora": corpora, "half": half,
        "rounds": rounds, "torchfix_rounds": torchfix_rounds, "rows": rows,
        "sampled": ", ".join(f"{c.name}: {c.description}" for c in corpora if c.sampled),
        "ratios": ratios(rows, corpora, half, tools.features),
        "counts": {c.name: finding_counts(cache, c.name) for c in corpora},
        "consistency": consistency(steps, samples, corpora, cache),
        "problems": problems,
    }
    report = render(context)
    print(report)
    results = args.results or (None if args.quick else str(HERE / "RESULTS.md"))
    if results:
        Path(results).write_text(report + kept_sections(Path(results)), encoding="utf-8")
        log(f"wrote {results}")
    if args.json:
        document = {
            "context": {k: str(v) for k, v in context.items() if k in ("argv", "date", "elapsed", "load_start", "load_end")},
            "machine": context["machine"], "versions": tools.versions, "features": tools.features,
            "corpora": [{"name": c.name, "files": len(c.files), "lines": c.lines, "packages": c.packages}
                        for c in corpora],
            "samples": {key: [asdict(s) for s in runs] for key, runs in samples.items()},
            "rows": [asdict(r) for r in rows],
        }
        Path(args.json).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0



if __name__ == "__main__":
    sys.exit(main())
