#!/usr/bin/env python3
"""Measure torchlint on real, old PyTorch code that nobody here wrote.

Downloads a list of 2017-2020 era, pure-Python, torch-based packages from
PyPI (``pip download --no-deps``; wheels or sdists, never installed), extracts
their ``.py`` / ``.pyi`` files into a cache, and then, always through the real
``python -m torchlint`` command:

(a) lints every file in check mode, recording per-rule findings, files that
    could not be parsed, internal errors, crashes and exit codes;
(b) on a copy of the corpus runs ``--fix --unsafe-fixes``, then checks that
    every fixed file still compiles (when the original did), that a second
    ``--fix --unsafe-fixes`` changes no byte, and that a check-mode run finds
    nothing left that a fix could handle;
(c) prints a summary table and, with ``--json PATH``, writes every number
    (and every finding, for review) as JSON.

One bad package or file never stops the others: downloads, extractions and
lint runs fail per package, and a torchlint run that crashes is retried file
by file to name the file that crashes it.

Usage::

    python bench/corpus.py                      # the default corpus
    python bench/corpus.py --all --json out.json
    python bench/corpus.py --packages torchvision,fastai --no-fix
    python bench/corpus.py --show TL101         # print each finding in context

Exit status: 0 when torchlint was robust on everything that was measured,
1 when a robustness check failed (crash, internal error, exit status that
does not match the output, a fix that breaks compilation or is not
idempotent, fixable findings left after --fix), 2 when nothing could be
measured (e.g. no network).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import difflib
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
SOURCE_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    why: str

    @property
    def spec(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"


# Pure-Python releases from the torch 0.2 - 1.3 years, chosen for old idioms
# (Variable/volatile, .data[0], init.xxx without underscore, F.sigmoid,
# size_average=, bare .cuda(), .numpy()). Each was checked to download.
DEFAULT_PACKAGES: Tuple[Package, ...] = (
    Package("torchvision", "0.2.1", "2018 models and transforms; init.* without underscore"),
    Package("pretrainedmodels", "0.7.4", "2018 model zoo (Cadene); Variable-era example scripts"),
    Package("pytorch-pretrained-bert", "0.6.2", "2019 BERT/GPT port; loss code, fp16 .half() handling"),
    Package("allennlp", "0.8.0", "large 2018 NLP library with tests; many tensor utilities"),
    Package("fastai", "0.7.0", "torch 0.3 era; Variable, volatile, async=True, init.*"),
    Package("torchtext", "0.3.1", "2018 text datasets and iterators; Variable(volatile=...) history"),
    Package("pytorch-ignite", "0.1.2", "2018 training engine; .item() transition"),
    Package("pyro-ppl", "0.1.2", "Nov 2017, torch 0.2/0.3; Variable everywhere, examples with .data[0]"),
    Package("gpytorch", "0.1.0", "2018 Gaussian processes; heavy tensor arithmetic"),
    Package("flair", "0.4.1", "2019 NLP; mixed old and new idioms"),
    Package("kornia", "0.1.4", "2019 geometry; tests use legacy loss arguments"),
    Package("inferno-pytorch", "0.1.7", "Aug 2017 trainer utilities; volatile, init.*, async="),
)

# More of the same era, measured with --all (or picked with --packages).
EXTRA_PACKAGES: Tuple[Package, ...] = (
    Package("tensorboardX", "1.6", "2019 logging; torch only at the edges"),
    Package("torchnet", "0.0.4", "2018 meters and engines; .data[0]-style metric reads"),
    Package("pytorch-nlp", "0.4.1", "2019 NLP utilities"),
    Package("skorch", "0.5.0", "2018 scikit-learn wrapper; training loops"),
    Package("pyro-ppl", "0.3.0", "Dec 2018, torch 1.0 port of the above"),
)

ALL_PACKAGES = DEFAULT_PACKAGES + EXTRA_PACKAGES

# path:line:col: CODE message  (flake8's format)
DIAGNOSTIC = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+[0-9]+) (?P<message>.*)$")
FIXED_SUMMARY = re.compile(r"\bFixed (\d+) problems?\.")
FIXABLE_HINT = re.compile(r"(\d+) fixable with --fix|(\d+) (?:more )?with --fix --unsafe-fixes")


# --- obtaining the corpus -----------------------------------------------------


class CorpusError(Exception):
    """A package that could not be downloaded or extracted."""


def download(package: Package, dist_root: Path, python: str = sys.executable, timeout: float = 600) -> Path:
    """The package's wheel or sdist, from the cache or ``pip download``."""
    target = dist_root / package.key
    existing = _archives_in(target)
    if existing:
        return existing[0]
    dist_root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dist_root, prefix=".download-"))
    try:
        command = [
            python, "-m", "pip", "download", "--no-deps", "--no-binary", ":none:",
            "--disable-pip-version-check", "--dest", str(tmp), package.spec,
        ]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CorpusError(f"pip download timed out after {timeout:.0f}s") from None
        if done.returncode != 0 or not _archives_in(tmp):
            raise CorpusError(f"pip download failed ({done.returncode}): {_last_error_line(done.stderr)}")
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _archives_in(target)[0]


def _archives_in(directory: Path) -> List[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and p.name.endswith((
        ".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tar")))


def _last_error_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and "is ignored" not in line]
    errors = [line for line in lines if line.lower().startswith(("error", "modulenotfounderror"))]
    return (errors or lines or ["no output"])[-1][:300]


def extract(archive: Path, dest: Path) -> Path:
    """Extract the archive's Python files into ``dest`` (once; cached)."""
    marker = dest / ".extracted"
    if marker.is_file() and marker.read_text() == archive.name:
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    tmp = dest.with_name(dest.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        members = list(_members(archive))
        # Sdists wrap everything in one name-version/ folder: drop it.
        tops = {m[0].parts[0] for m in members if len(m[0].parts) > 1}
        strip = len(tops) == 1 and all(len(m[0].parts) > 1 for m in members) and not archive.name.endswith(".whl")
        for relative, data in members:
            if strip:
                relative = PurePosixPath(*relative.parts[1:])
            out = tmp.joinpath(*relative.parts)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
    except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError) as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise CorpusError(f"cannot extract {archive.name}: {exc}") from None
    (tmp / ".extracted").write_text(archive.name)
    os.replace(tmp, dest)
    return dest


def _members(archive: Path):
    """(safe relative path, bytes) for each regular Python file in the archive."""
    if archive.name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                path = _safe_path(info.filename)
                if path is not None and not info.is_dir() and path.name.endswith(SOURCE_SUFFIXES):
                    yield path, zf.read(info)
    else:
        with tarfile.open(archive) as tf:
            for info in tf.getmembers():
                path = _safe_path(info.name)
                if path is not None and info.isfile() and path.name.endswith(SOURCE_SUFFIXES):
                    yield path, tf.extractfile(info).read()


def _safe_path(name: str) -> Optional[PurePosixPath]:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or not path.parts or any(part in ("", ".", "..") for part in path.parts):
        return None
    return path


def source_files(root: Path) -> List[str]:
    """Every .py/.pyi under root, relative, sorted (the CLI gets them by name)."""
    files = []
    for directory, subdirectories, names in os.walk(root):
        subdirectories.sort()
        for name in names:
            if name.endswith(SOURCE_SUFFIXES):
                files.append(os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/"))
    return sorted(files)


def count_lines(data: bytes) -> int:
    return len(data.splitlines())


def compiles(data: bytes, path: str) -> Optional[str]:
    """None when CPython compiles the file, else the SyntaxError text."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(data, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", None)
            return f"{type(exc).__name__} at line {line}: {getattr(exc, 'msg', exc)}"
        except RecursionError:
            return "RecursionError"
    return None


# --- running torchlint ----------------------------------------------------------


@dataclass
class Run:
    """What one ``python -m torchlint`` invocation over some files printed."""

    files: List[str]
    returncode: Optional[int]  # None: timed out
    stdout: str
    stderr: str
    seconds: float
    diagnostics: List[Dict] = field(default_factory=list)
    parse_errors: Dict[str, str] = field(default_factory=dict)
    internal_errors: Dict[str, List[str]] = field(default_factory=dict)
    other_errors: List[str] = field(default_factory=list)
    discarded: List[str] = field(default_factory=list)
    unsettled: List[str] = field(default_factory=list)
    fixed_total: int = 0
    fixable_hint: int = 0  # "N fixable with --fix", "M more with --fix --unsafe-fixes"

    @property
    def crashed(self) -> bool:
        return self.returncode is None or self.returncode not in (0, 1, 2) or "Traceback" in self.stderr

    @property
    def expected_returncode(self) -> int:
        if self.parse_errors or self.internal_errors or self.other_errors:
            return 2
        return 1 if self.diagnostics else 0


def run_torchlint(
    files: Sequence[str], base: Path, prefix: str, options: Sequence[str], python: str, timeout: float,
    source: Path = REPO,
) -> Run:
    """``python -m torchlint OPTIONS -- base/prefix/FILE...`` run from ``base``.

    ``base`` holds only the ``name-version`` folders, which no ``import`` can
    name, so the corpus cannot shadow a module torchlint imports (``-m`` puts
    the working directory first on sys.path). Paths in the result are
    relative to the package again.
    """
    command = [python, "-m", "torchlint", *options, "--", *(f"{prefix}/{f}" for f in files)]
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    # Run the torchlint of this checkout (or of --rev) even when another is installed.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), env.get("PYTHONPATH")]))
    start = time.perf_counter()
    try:
        done = subprocess.run(
            command, cwd=base, capture_output=True, text=True, encoding="utf-8", errors="replace",
            timeout=timeout, env=env,
        )
        run = Run(list(files), done.returncode, done.stdout, done.stderr, time.perf_counter() - start)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        run = Run(list(files), None, out, err, time.perf_counter() - start)
    _parse_output(run, prefix + "/")
    return run


def _file_of(text: str, known: Iterable[str]) -> Optional[str]:
    for path in known:
        if text.startswith(path + ":"):
            return path
    return None


def _parse_output(run: Run, prefix: str) -> None:
    known = sorted((prefix + f for f in run.files), key=len, reverse=True)

    def strip(path: str) -> str:
        return path[len(prefix):]

    for line in run.stdout.splitlines():
        match = DIAGNOSTIC.match(line)
        if match and _file_of(line, known):
            run.diagnostics.append({
                "path": strip(match["path"]), "line": int(match["line"]), "col": int(match["col"]),
                "code": match["code"], "message": match["message"],
            })
            continue
        fixed = FIXED_SUMMARY.search(line)
        if fixed:
            run.fixed_total += int(fixed.group(1))
        for hint in FIXABLE_HINT.finditer(line):
            run.fixable_hint += int(hint.group(1) or hint.group(2))
    for line in run.stderr.splitlines():
        if line.startswith("torchlint: error: "):
            rest = line[len("torchlint: error: "):]
            path = _file_of(rest, known)
            if path and "internal error" in rest:
                run.internal_errors.setdefault(strip(path), []).append(rest[len(path) + 1:].strip())
            elif path and "cannot parse" in rest:
                run.parse_errors[strip(path)] = rest[len(path) + 1:].strip()
            else:
                run.other_errors.append(rest)
        elif line.startswith("torchlint: warning: "):
            rest = line[len("torchlint: warning: "):]
            if "fix discarded" in rest:
                run.discarded.append(rest)
            elif "did not settle" in rest:
                run.unsettled.append(rest)


def chunked(files: Sequence[str], sizes: Dict[str, int], budget: int) -> List[List[str]]:
    """Split files into runs of at most ``budget`` lines (at least one file each)."""
    chunks: List[List[str]] = []
    current: List[str] = []
    total = 0
    for path in files:
        if current and total + sizes.get(path, 0) > budget:
            chunks.append(current)
            current, total = [], 0
        current.append(path)
        total += sizes.get(path, 0)
    if current:
        chunks.append(current)
    return chunks


@dataclass
class Merged:
    """Runs over one package's files, combined; crashes attributed to files."""

    runs: List[Run]
    crashes: Dict[str, str]  # file -> what its single-file run printed
    seconds: float

    @property
    def diagnostics(self) -> List[Dict]:
        return sorted((d for r in self.runs for d in r.diagnostics),
                      key=lambda d: (d["path"], d["line"], d["col"], d["code"]))

    def union(self, attribute: str):
        merged: Dict = {}
        for run in self.runs:
            merged.update(getattr(run, attribute))
        return merged

    def collect(self, attribute: str) -> List:
        return [item for run in self.runs for item in getattr(run, attribute)]

    @property
    def exit_codes(self) -> List[Optional[int]]:
        return [run.returncode for run in self.runs]

    @property
    def exit_mismatches(self) -> List[str]:
        return [
            f"exit {run.returncode}, expected {run.expected_returncode} "
            f"for {len(run.files)} file(s) from {run.files[0]}"
            for run in self.runs if not run.crashed and run.returncode != run.expected_returncode
        ]


class Runner:
    """Runs torchlint over many packages' files in parallel chunks."""

    def __init__(
        self, python: str, jobs: int, timeout: float, chunk_lines: int, extra: Sequence[str] = (),
        source: Path = REPO,
    ) -> None:
        self.python = python
        self.source = source
        self.jobs = max(1, jobs)
        self.timeout = timeout
        self.chunk_lines = chunk_lines
        self.extra = list(extra)

    def run_many(
        self, work: Sequence[Tuple[str, Path, List[str], Dict[str, int]]], options: Sequence[str]
    ) -> Dict[str, Merged]:
        """work: (key, root, files, line counts); returns key -> Merged."""
        options = [*options, *self.extra]
        jobs = []
        for key, root, files, sizes in work:
            for chunk in chunked(files, sizes, self.chunk_lines):
                jobs.append((key, root, chunk))
        runs: Dict[str, List[Run]] = {key: [] for key, *_ in work}
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            futures = {
                pool.submit(
                    run_torchlint, chunk, root.parent, root.name, options, self.python, self.timeout, self.source
                ): (key, root)
                for key, root, chunk in jobs
            }
            for future in concurrent.futures.as_completed(futures):
                key, _ = futures[future]
                runs[key].append(future.result())
        merged: Dict[str, Merged] = {}
        for key, root, _files, _sizes in work:
            package_runs = sorted(runs[key], key=lambda r: r.files[0])
            kept: List[Run] = []
            crashes: Dict[str, str] = {}
            for run in package_runs:
                if not run.crashed or len(run.files) == 1:
                    kept.append(run)
                    if run.crashed:
                        crashes[run.files[0]] = _crash_text(run)
                    continue
                # Name the file(s) that crash it; the others still count.
                for path in run.files:
                    single = run_torchlint(
                        [path], root.parent, root.name, options, self.python, self.timeout, self.source)
                    kept.append(single)
                    if single.crashed:
                        crashes[path] = _crash_text(single)
            merged[key] = Merged(kept, crashes, sum(r.seconds for r in package_runs))
        return merged


def _crash_text(run: Run) -> str:
    if run.returncode is None:
        return "timed out"
    tail = "\n".join(run.stderr.strip().splitlines()[-3:])
    return f"exit {run.returncode}: {tail}"


# --- the measurement --------------------------------------------------------------


@dataclass
class Corpus:
    package: Package
    root: Optional[Path] = None
    archive: Optional[str] = None
    error: Optional[str] = None
    files: List[str] = field(default_factory=list)
    lines: Dict[str, int] = field(default_factory=dict)
    not_compiling: Dict[str, str] = field(default_factory=dict)


def prepare(package: Package, cache: Path, python: str = sys.executable) -> Corpus:
    corpus = Corpus(package)
    try:
        archive = download(package, cache / "dist", python)
        corpus.archive = archive.name
        corpus.root = extract(archive, cache / "src" / package.key)
    except CorpusError as exc:
        corpus.error = str(exc)
        return corpus
    corpus.files = source_files(corpus.root)
    for path in corpus.files:
        data = (corpus.root / path).read_bytes()
        corpus.lines[path] = count_lines(data)
        problem = compiles(data, path)
        if problem:
            corpus.not_compiling[path] = problem
    return corpus


def by_rule(diagnostics: Iterable[Dict]) -> Counter:
    return Counter(d["code"] for d in diagnostics)


def snapshot(root: Path, files: Sequence[str]) -> Dict[str, str]:
    return {path: hashlib.sha256((root / path).read_bytes()).hexdigest() for path in files}


def measure(
    corpora: Sequence[Corpus], cache: Path, runner: Runner, fix: bool = True, recheck: bool = True, log=print
) -> Dict[str, Dict]:
    """Run the check and fix phases over prepared corpora; one result per package.

    ``recheck`` adds the final check-mode run over the fixed copy (nothing
    fixable may be left; it also gives the exact per-rule fix counts).
    """
    ready = [c for c in corpora if c.error is None and c.files]
    results: Dict[str, Dict] = {}
    for corpus in corpora:
        results[corpus.package.key] = {
            "name": corpus.package.name, "version": corpus.package.version, "archive": corpus.archive,
            "error": corpus.error if corpus.error else (None if corpus.files else "no Python files"),
            "files": len(corpus.files), "lines": sum(corpus.lines.values()),
            "not_compiling": corpus.not_compiling,
        }
    work = [(c.package.key, c.root, c.files, c.lines) for c in ready]

    log(f"checking {sum(len(c.files) for c in ready)} files of {len(ready)} packages ...")
    checked = runner.run_many(work, [])
    for corpus in ready:
        merged = checked[corpus.package.key]
        diagnostics = merged.diagnostics
        results[corpus.package.key]["check"] = {
            "seconds": round(merged.seconds, 1),
            "findings": dict(sorted(by_rule(diagnostics).items())),
            "fixable_hint": sum(r.fixable_hint for r in merged.runs),
            "diagnostics": diagnostics,
            "parse_errors": merged.union("parse_errors"),
            "parse_errors_on_valid_python": {
                p: m for p, m in merged.union("parse_errors").items() if p not in corpus.not_compiling},
            "internal_errors": merged.union("internal_errors"),
            "other_errors": merged.collect("other_errors"),
            "crashes": merged.crashes,
            "exit_codes": _exit_codes(merged),
            "exit_mismatches": merged.exit_mismatches,
        }
    if not fix:
        return results

    fixed_root = cache / "fixed"
    diff_root = cache / "diffs"
    diff_root.mkdir(parents=True, exist_ok=True)
    copies: Dict[str, Path] = {}
    for corpus in ready:
        copy = fixed_root / corpus.package.key
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(corpus.root, copy)
        copies[corpus.package.key] = copy
    fix_work = [(c.package.key, copies[c.package.key], c.files, c.lines) for c in ready]

    log("fixing a copy with --fix --unsafe-fixes ...")
    first = runner.run_many(fix_work, ["--fix", "--unsafe-fixes"])
    after_first: Dict[str, Dict[str, str]] = {}
    for corpus in ready:
        key = corpus.package.key
        copy = copies[key]
        changed, broken, diff_text = [], {}, []
        for path in corpus.files:
            before = (corpus.root / path).read_bytes()
            after = (copy / path).read_bytes()
            if before == after:
                continue
            changed.append(path)
            if path not in corpus.not_compiling:
                problem = compiles(after, path)
                if problem:
                    broken[path] = problem
            diff_text.append(_diff(path, before, after))
        (diff_root / f"{key}.diff").write_text("".join(diff_text), encoding="utf-8")
        after_first[key] = snapshot(copy, corpus.files)
        flagged_files = {d["path"] for d in results[key]["check"]["diagnostics"]}
        merged = first[key]
        results[key]["fix"] = {
            "seconds": round(merged.seconds, 1),
            "fixed_total": sum(r.fixed_total for r in merged.runs),
            "remaining": dict(sorted(by_rule(merged.diagnostics).items())),
            "changed_files": changed,
            "changed_without_findings": [p for p in changed if p not in flagged_files],
            "diff": str(diff_root / f"{key}.diff"),
            "broken_compile": broken,
            "discarded": merged.collect("discarded"),
            "unsettled": merged.collect("unsettled"),
            "internal_errors": merged.union("internal_errors"),
            "other_errors": merged.collect("other_errors"),
            "new_parse_errors": {p: m for p, m in merged.union("parse_errors").items()
                                 if p not in results[key]["check"]["parse_errors"]},
            "crashes": merged.crashes,
            "exit_codes": _exit_codes(merged),
            "exit_mismatches": merged.exit_mismatches,
        }

    log("second --fix --unsafe-fixes (must change nothing) ...")
    second = runner.run_many(fix_work, ["--fix", "--unsafe-fixes"])
    if recheck:
        log("checking the fixed copy (nothing fixable may be left) ...")
        rechecked = runner.run_many(fix_work, [])
    for corpus in ready:
        key = corpus.package.key
        copy = copies[key]
        now = snapshot(copy, corpus.files)
        merged2 = second[key]
        fix_result = results[key]["fix"]
        fix_result.update({
            "not_idempotent": [p for p in corpus.files if now[p] != after_first[key][p]],
            "second_fixed_total": sum(r.fixed_total for r in merged2.runs),
            "second_crashes": merged2.crashes,
            "second_internal_errors": merged2.union("internal_errors"),
            "second_exit_codes": _exit_codes(merged2),
        })
        # Fixes per rule: findings that are gone from the fixed code.
        remaining = by_rule((rechecked[key] if recheck else merged2).diagnostics)
        findings = results[key]["check"]["findings"]
        fix_result["fixes"] = {c: findings[c] - remaining.get(c, 0) for c in findings
                               if findings[c] - remaining.get(c, 0)}
        if recheck:
            merged3 = rechecked[key]
            fix_result.update({
                "recheck_remaining": dict(sorted(remaining.items())),
                "recheck_fixable": sum(r.fixable_hint for r in merged3.runs),
                "recheck_crashes": merged3.crashes,
                "recheck_internal_errors": merged3.union("internal_errors"),
                "recheck_exit_codes": _exit_codes(merged3),
            })
    return results


def _exit_codes(merged: "Merged") -> Dict[str, int]:
    """How many torchlint runs ended with each exit status ("None": timed out)."""
    return dict(sorted(Counter(str(c) for c in merged.exit_codes).items()))


def _diff(path: str, before: bytes, after: bytes) -> str:
    a = before.decode("utf-8", "replace").splitlines(keepends=True)
    b = after.decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, f"a/{path}", f"b/{path}"))


# --- judging and reporting ---------------------------------------------------------


def failures(result: Dict) -> List[str]:
    """Robustness problems of one package, as short strings."""
    problems: List[str] = []
    check = result.get("check")
    if check:
        problems += [f"crash: {p}" for p in check["crashes"]]
        problems += [f"internal error: {p}" for p in check["internal_errors"]]
        problems += [f"unparsed valid Python: {p}" for p in check["parse_errors_on_valid_python"]]
        problems += [f"exit status: {m}" for m in check["exit_mismatches"]]
        problems += [f"error: {m}" for m in check["other_errors"]]
    fix = result.get("fix")
    if fix:
        problems += [f"fix crash: {p}" for p in fix["crashes"]]
        problems += [f"fix internal error: {p}" for p in fix["internal_errors"]]
        problems += [f"fix error: {m}" for m in fix["other_errors"]]
        problems += [f"fix exit status: {m}" for m in fix["exit_mismatches"]]
        problems += [f"does not compile after fix: {p}" for p in fix["broken_compile"]]
        problems += [f"does not parse after fix: {p}" for p in fix["new_parse_errors"]]
        problems += [f"not idempotent: {p}" for p in fix.get("not_idempotent", [])]
        problems += [f"fix did not settle: {m}" for m in fix["unsettled"]]
        if fix.get("recheck_fixable"):
            problems.append(f"{fix['recheck_fixable']} findings still fixable after --fix")
        problems += [f"second fix crash: {p}" for p in fix.get("second_crashes", {})]
        problems += [f"second fix internal error: {p}" for p in fix.get("second_internal_errors", {})]
        problems += [f"recheck crash: {p}" for p in fix.get("recheck_crashes", {})]
        problems += [f"recheck internal error: {p}" for p in fix.get("recheck_internal_errors", {})]
    return problems


def rule_codes(results: Dict[str, Dict], source: Path = REPO, python: str = sys.executable) -> List[str]:
    """Codes of every rule the measured torchlint has, plus any that were found."""
    codes = set()
    probe = "from torchlint.rules import all_rules; print(' '.join(r.code for r in all_rules()))"
    try:
        done = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, PYTHONPATH=str(source)), cwd=tempfile.gettempdir())
        codes.update(done.stdout.split() if done.returncode == 0 else ())
    except (OSError, subprocess.SubprocessError):
        pass  # the table still works from what was found
    for result in results.values():
        codes.update(result.get("check", {}).get("findings", {}))
    return sorted(codes)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def summary(results: Dict[str, Dict], codes: Sequence[str]) -> str:
    rows, total = [], Counter()
    for key, r in results.items():
        if r.get("error"):
            rows.append([key, "-", "-", *(["-"] * len(codes)), "-", "-", "-", f"skipped: {r['error'][:60]}"])
            continue
        check, fix = r.get("check", {}), r.get("fix", {})
        found = check.get("findings", {})
        fixes = fix.get("fixes", {})
        cells = []
        for code in codes:
            n, f = found.get(code, 0), fixes.get(code, 0)
            cells.append(f"{n}/{f}" if fix else str(n))
            total[code] += n
            total[code + "/fixed"] += f
        total["files"] += r["files"]
        total["lines"] += r["lines"]
        total["parse"] += len(check.get("parse_errors", {}))
        total["found"] += sum(found.values())
        total["fixed"] += sum(fixes.values())
        total["cli fixed"] += fix.get("fixed_total", 0)
        total["failures"] += len(failures(r))
        rows.append([
            key, r["files"], r["lines"], *cells, len(check.get("parse_errors", {})),
            f"{sum(found.values())}/{sum(fixes.values())}" if fix else sum(found.values()),
            fix.get("fixed_total", "-") if fix else "-",
            len(failures(r)),
        ])
    rows.append([
        "TOTAL", total["files"], total["lines"],
        *[f"{total[c]}/{total[c + '/fixed']}" for c in codes], total["parse"],
        f"{total['found']}/{total['fixed']}", total["cli fixed"], total["failures"],
    ])
    out = [
        "Findings per rule as found/fixed. fixed: findings gone after --fix --unsafe-fixes; a partial fix"
        " (the finding stays for another reason) counts only in 'cli fixed', the CLI's own 'Fixed N'.",
        table(["package", "files", "lines", *codes, "unparsed", "found/fixed", "cli fixed", "failures"], rows),
    ]
    robust_rows = []
    for key, r in results.items():
        if r.get("error"):
            continue
        check, fix = r.get("check", {}), r.get("fix", {})
        robust_rows.append([
            key,
            check.get("seconds", "-"),
            " ".join(f"{c}x{n}" for c, n in check.get("exit_codes", {}).items()),
            len(check.get("crashes", {})) + len(fix.get("crashes", {})),
            len(check.get("internal_errors", {})) + len(fix.get("internal_errors", {})),
            len(r.get("not_compiling", {})),
            len(check.get("parse_errors_on_valid_python", {})),
            len(fix.get("changed_files", [])) if fix else "-",
            len(fix.get("broken_compile", {})) if fix else "-",
            len(fix.get("not_idempotent", [])) if fix else "-",
            fix.get("recheck_fixable", "-") if fix else "-",
            len(fix.get("discarded", [])) if fix else "-",
        ])
    out += [
        "",
        "Robustness:",
        table(["package", "check s", "exit codes", "crashes", "internal", "not py3", "unparsed ok-py",
               "changed", "!compile", "!idempotent", "fixable left", "discarded"], robust_rows),
    ]
    problems = [(key, p) for key, r in results.items() for p in failures(r)]
    if problems:
        out += ["", "Failures:"] + [f"  {key}: {p}" for key, p in problems]
    return "\n".join(out)


def show(results: Dict[str, Dict], cache: Path, codes: Sequence[str], context: int = 2) -> str:
    """Each finding with its source lines, for review by hand."""
    out = []
    for key, r in results.items():
        for d in r.get("check", {}).get("diagnostics", []):
            if codes and d["code"] not in codes:
                continue
            path = cache / "src" / key / d["path"]
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            out.append(f"== {key}/{d['path']}:{d['line']}:{d['col']}: {d['code']} {d['message']}")
            for n in range(max(1, d["line"] - context), min(len(lines), d["line"] + context) + 1):
                out.append(f"{'>' if n == d['line'] else ' '}{n:6d}  {lines[n - 1]}")
    return "\n".join(out)


def select_packages(names: Optional[str], everything: bool) -> List[Package]:
    pool = ALL_PACKAGES if (everything or names) else DEFAULT_PACKAGES
    if not names:
        return list(pool)
    chosen = []
    for wanted in (n.strip() for n in names.split(",") if n.strip()):
        name, _, version = wanted.partition("==")
        matches = [p for p in pool if p.name.lower() == name.lower() and (not version or p.version == version)]
        if not matches and version:
            matches = [Package(name, version, "given on the command line")]
        if not matches:
            raise SystemExit(f"corpus: unknown package {wanted!r} (give NAME==VERSION for one not listed)")
        chosen.extend(m for m in matches if m not in chosen)
    return chosen


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", default=str(REPO / ".cache" / "corpus"),
                        help="download/extract cache (default: .cache/corpus)")
    parser.add_argument("--json", metavar="PATH", help="write all results as JSON")
    parser.add_argument("--packages", metavar="LIST", help="comma-separated names (or NAME==VERSION) to measure")
    parser.add_argument("--all", action="store_true", help="also measure the extra packages")
    parser.add_argument("--list", action="store_true", help="list the packages and exit")
    parser.add_argument("--no-fix", action="store_true", help="check mode only")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel torchlint runs")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per torchlint run")
    parser.add_argument("--chunk-lines", type=int, default=6000, help="lines of code per torchlint run")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs torchlint and pip")
    parser.add_argument("--torchlint-arg", action="append", default=[], metavar="ARG",
                        help="extra argument for every torchlint run (repeatable), "
                             "e.g. --torchlint-arg=--torch-version=1.0")
    parser.add_argument("--rev", metavar="REV",
                        help="measure the torchlint of this git revision (a snapshot in the cache), not the work tree")
    parser.add_argument("--torchlint-src", metavar="DIR",
                        help="directory holding the torchlint package to run (default: this checkout)")
    parser.add_argument("--no-recheck", action="store_true", help="skip the final check of the fixed copy")
    parser.add_argument("--from-json", metavar="PATH",
                        help="print the summary (and --show) of an earlier --json run instead of measuring")
    parser.add_argument("--show", metavar="CODES", nargs="?", const="",
                        help="print every finding (or those of CODES) with its source context")
    args = parser.parse_args(argv)

    if args.from_json:
        document = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
        results = document["packages"]
        source = Path(document.get("torchlint_source") or REPO)
        print(summary(results, rule_codes(results, source if source.is_dir() else REPO, args.python)))
        if args.show is not None:
            print()
            print(show(results, Path(args.cache).resolve(), [c for c in args.show.split(",") if c]))
        return 0
    packages = select_packages(args.packages, args.all)
    if args.list:
        for p in packages:
            print(f"{p.spec:32s} {p.why}")
        return 0
    cache = Path(args.cache).resolve()
    cache.mkdir(parents=True, exist_ok=True)
    corpora = []
    for package in packages:
        corpus = prepare(package, cache, args.python)
        state = corpus.error or f"{len(corpus.files)} files, {sum(corpus.lines.values())} lines"
        print(f"{package.spec}: {state}", file=sys.stderr)
        corpora.append(corpus)
    if not any(c.files for c in corpora):
        print("corpus: nothing to measure (no package could be downloaded)", file=sys.stderr)
        return 2
    source, commit = REPO, _git_head()
    if args.torchlint_src:
        source, commit = Path(args.torchlint_src).resolve(), None
    elif args.rev:
        source, commit = snapshot_revision(args.rev, cache)
    state = commit or ("work tree" if source == REPO else "as found there")
    print(f"torchlint from {source} ({state})", file=sys.stderr)
    runner = Runner(args.python, args.jobs, args.timeout, args.chunk_lines, args.torchlint_arg, source)
    started = time.perf_counter()
    results = measure(corpora, cache, runner, fix=not args.no_fix, recheck=not args.no_recheck,
                      log=lambda m: print(m, file=sys.stderr))
    elapsed = time.perf_counter() - started
    print(summary(results, rule_codes(results, source, args.python)))
    print(f"\n({elapsed:.0f}s; fixed copies in {cache / 'fixed'}, diffs in {cache / 'diffs'})")
    if args.show is not None:
        print()
        print(show(results, cache, [c for c in args.show.split(",") if c]))
    if args.json:
        document = {
            "python": sys.version.split()[0],
            "torchlint_source": str(source),
            "torchlint_commit": commit,
            "work_tree_dirty": _git_dirty() if source == REPO else None,
            "torchlint_args": args.torchlint_arg,
            "seconds": round(elapsed, 1),
            "packages": results,
            "failures": {key: failures(r) for key, r in results.items()},
        }
        Path(args.json).write_text(json.dumps(document, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return 1 if any(failures(r) for r in results.values()) else 0


def _git(*args: str) -> Optional[str]:
    try:
        done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _git_head() -> Optional[str]:
    return (_git("rev-parse", "HEAD") or "").strip() or None


def _git_dirty() -> Optional[bool]:
    status = _git("status", "--porcelain", "--", "torchlint")
    return None if status is None else bool(status.strip())


def snapshot_revision(rev: str, cache: Path) -> Tuple[Path, str]:
    """Export torchlint/ at ``rev`` into the cache (read-only use of the repository)."""
    commit = (_git("rev-parse", "--verify", f"{rev}^{{commit}}") or "").strip()
    if not commit:
        raise SystemExit(f"corpus: unknown revision {rev!r}")
    target = cache / "torchlint" / commit[:12]
    if not (target / "torchlint" / "__init__.py").is_file():
        tmp = Path(tempfile.mkdtemp(dir=cache, prefix=".snapshot-"))
        archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", commit, "torchlint"],
                                 capture_output=True, timeout=120)
        if archive.returncode != 0:
            raise SystemExit(f"corpus: git archive failed: {archive.stderr.decode(errors='replace')}")
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tf:
            tf.extractall(tmp, filter="data") if hasattr(tarfile, "data_filter") else tf.extractall(tmp)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    return target, commit


if __name__ == "__main__":
    sys.exit(main())
