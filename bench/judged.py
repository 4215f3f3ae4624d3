#!/usr/bin/env python3
"""A hand-judged evaluation of torchlint on real, old PyTorch code (issue 14).

Three commands, all standard library only:

``prepare --manifest M DEST``
    Materialises every corpus entry of the manifest into ``DEST/<name>/``.
    A manifest line is ``name<TAB>github:owner/repo@<40-hex commit>`` or
    ``name<TAB>pypi:NAME==VERSION`` (``#`` starts a comment). GitHub entries
    are read with ``git archive`` from a bare mirror already on this machine
    (``--mirror-root``, default ``/work/.mirror``, holding
    ``owner+repo/repo[/.git]``); PyPI entries with ``pip download --no-deps``.
    Notebooks are left out: the labels cover Python source files. An entry
    already present is skipped, so DEST can be shared between runs.

``candidates --codes TL101,... [--labels FILE ...] DEST``
    Prints every syntactic candidate occurrence of the named card rules,
    found by a deliberately broad search that does not use torchlint (every
    ``.data[0]``, every ``volatile`` keyword, every bare ``x.cuda()``
    statement, ...), and that has no label yet: labelling each of them makes
    the labels complete, so recall can be measured.

``score --labels FILE [--labels FILE ...] [--torchlint-src DIR ...] DEST``
    Runs the real command (``python -m torchlint --isolated --no-cache
    --output-format json``, every default rule plus the card rules) on DEST,
    in each entry's folder as that repository's user runs it, joins its findings with the labels on (path relative to DEST, line, code)
    and prints per-rule tables. ``--torchlint-src`` (repeatable) scores other
    checkouts side by side (their directory goes first on PYTHONPATH), so
    before/after figures come from one run; ``--frontend flake8`` scores
    ``flake8 --select TL`` (the plugin) instead of the command, and
    ``--frontend stdin`` the command fed each file on ``--stdin-filename``. Findings
    without a label are listed as UNJUDGED; ``--strict`` makes them an error
    (exit 1).

A label line is ``path<TAB>line<TAB>code<TAB>verdict<TAB>reason``: path
relative to DEST (starting with the corpus entry's name), verdict ``flag`` (a
correct linter must report it) or ``ok`` (it must not), and a one-line reason
naming the evidence. A reason may start with a cause tag in brackets
(``[loss-class] ...``); ``score`` groups the false negatives by it.
"""

from __future__ import annotations

import argparse
import ast
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

CARD_RULES = ("TL101", "TL102", "TL103", "TL104", "TL105", "TL106", "TL201", "TL202")
CARD_TOTAL = "card rules"
ALL_TOTAL = "all rules"
DEFAULT_MIRROR_ROOT = Path("/work/.mirror")
SKIPPED_SUFFIXES = (".ipynb",)
GITHUB = re.compile(r"^github:(?P<owner>[\w.-]+)/(?P<repo>[\w.-]+)@(?P<commit>[0-9a-f]{40})$")
PYPI = re.compile(r"^pypi:(?P<name>[\w.-]+)==(?P<version>[\w.+!-]+)$")
VERDICTS = ("flag", "ok")
CAUSE_TAG = re.compile(r"^\[(?P<cause>[\w-]+)\]")

Key = Tuple[str, int, str]  # (path relative to DEST, line, code)
FRONTEND_LABELS = {"cli": "", "flake8": " (flake8 plugin)", "stdin": " (--stdin-filename, file by file)"}
# path:line:col: CODE message, the default output
CONCISE_FINDING = re.compile(r"^(?P<path>.+?):(?P<row>\d+):(?P<col>\d+): (?P<code>TL\d{3}) ")


class UsageError(Exception):
    """Bad input: printed as one line, exit status 2."""


# --- the manifest and prepare ------------------------------------------------


@dataclass(frozen=True)
class Entry:
    name: str
    source: str


def read_manifest(path: Path) -> List[Entry]:
    entries = []
    for number, raw in enumerate(_read_text(path).splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not (GITHUB.match(parts[1]) or PYPI.match(parts[1])):
            raise UsageError(f"{path}:{number}: expected name<TAB>github:owner/repo@<commit> "
                             f"or name<TAB>pypi:NAME==VERSION, got {raw!r}")
        name = parts[0].strip()
        if not re.fullmatch(r"[\w.-]+", name):
            raise UsageError(f"{path}:{number}: corpus name {name!r} must be a plain folder name")
        entries.append(Entry(name, parts[1].strip()))
    return entries


def prepare(manifest: Path, dest: Path, mirror_root: Path) -> int:
    failures = 0
    dest.mkdir(parents=True, exist_ok=True)
    for entry in read_manifest(manifest):
        target = dest / entry.name
        if target.exists():
            print(f"{entry.name}: present, skipped")
            continue
        # Unpack beside the target and rename at the end: a half-written entry
        # never looks present to the next run.
        staging = Path(tempfile.mkdtemp(dir=dest, prefix=f".{entry.name}-"))
        try:
            if entry.source.startswith("github:"):
                _unpack_github(entry.source, staging, mirror_root)
            else:
                _unpack_pypi(entry.source, staging)
            _drop_skipped_files(staging)
            staging.rename(target)
            print(f"{entry.name}: {sum(1 for _ in target.rglob('*.py'))} .py files from {entry.source}")
        except UsageError as error:  # one bad entry never stops the others
            failures += 1
            print(f"{entry.name}: FAILED: {error}", file=sys.stderr)
        finally:
            if staging.exists():
                shutil.rmtree(staging)
    return 1 if failures else 0


def mirror_git_dir(mirror_root: Path, owner: str, repo: str) -> Path:
    base = mirror_root / f"{owner}+{repo}" / "repo"
    for candidate in (base / ".git", base):
        if (candidate / "objects").is_dir():
            return candidate
    raise UsageError(f"no mirror of {owner}/{repo} under {mirror_root} (fetch github:{owner}/{repo} first)")


def _unpack_github(source: str, staging: Path, mirror_root: Path) -> None:
    """The commit's files, written from the mirror's blobs. A mirror may lack
    its largest blobs (weights, images): those files are left out, which is
    why this does not use ``git archive`` (it stops at the first one)."""
    match = GITHUB.match(source)
    git_dir = mirror_git_dir(mirror_root, match["owner"], match["repo"])
    listing = _git(git_dir, "ls-tree", "-r", "-z", "--full-tree", match["commit"])
    blobs = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, kind, blob = meta.split()
        if kind == b"blob" and mode != b"120000":  # symbolic links are left out
            blobs.append((blob.decode(), path.decode("utf-8", "surrogateescape")))
    contents = _git(git_dir, "cat-file", "--batch", stdin="".join(f"{b}\n" for b, _ in blobs).encode())
    position = 0
    for blob, path in blobs:
        header_end = contents.index(b"\n", position)
        header = contents[position:header_end].split()
        position = header_end + 1
        if header[-1] == b"missing":
            continue
        size = int(header[2])
        if not path.endswith(SKIPPED_SUFFIXES):
            target = staging / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(contents[position:position + size])
        position += size + 1


def _git(git_dir: Path, *arguments: str, stdin: bytes = b"") -> bytes:
    done = subprocess.run(["git", f"--git-dir={git_dir}", *arguments], input=stdin, capture_output=True)
    if done.returncode != 0:
        raise UsageError(f"git {arguments[0]} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _unpack_pypi(source: str, staging: Path) -> None:
    match = PYPI.match(source)
    with tempfile.TemporaryDirectory() as download:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
             "--dest", download, f"{match['name']}=={match['version']}"],
            capture_output=True, text=True)
        archives = sorted(Path(download).iterdir())
        if done.returncode != 0 or not archives:
            raise UsageError(f"pip download failed: {done.stderr.strip()[-300:]}")
        archive = archives[0]
        if archive.suffix in (".whl", ".zip"):
            with zipfile.ZipFile(archive) as zipped:
                zipped.extractall(staging)
        else:
            with tarfile.open(archive) as tarred:
                _extract_safely(tarred, staging)
    # An sdist holds one top folder (name-version/): the corpus starts inside it.
    children = list(staging.iterdir())
    if len(children) == 1 and children[0].is_dir():
        for child in list(children[0].iterdir()):
            child.rename(staging / child.name)
        children[0].rmdir()


def _extract_safely(archive: tarfile.TarFile, target: Path) -> None:
    """Extract refusing links and paths outside ``target`` (the "data" filter
    where this Python has it, the same check by hand otherwise)."""
    if hasattr(tarfile, "data_filter"):
        archive.extractall(target, filter="data")
        return
    root = target.resolve()
    for member in archive.getmembers():
        if member.issym() or member.islnk() or not (root / member.name).resolve().is_relative_to(root):
            raise UsageError(f"unsafe path in the archive: {member.name}")
    archive.extractall(target)


def _drop_skipped_files(root: Path) -> None:
    for path in list(root.rglob("*")):
        if path.is_file() and path.name.endswith(SKIPPED_SUFFIXES):
            path.unlink()


# --- labels ------------------------------------------------------------------


@dataclass(frozen=True)
class Label:
    key: Key
    verdict: str
    reason: str
    origin: str  # file:line, for messages

    @property
    def cause(self) -> str:
        match = CAUSE_TAG.match(self.reason)
        return match["cause"] if match else "untagged"


def read_labels(paths: Sequence[Path]) -> Dict[Key, Label]:
    labels: Dict[Key, Label] = {}
    for path in paths:
        for number, raw in enumerate(_read_text(path).splitlines(), 1):
            if not raw.strip() or raw.startswith("#"):
                continue
            parts = raw.split("\t")
            origin = f"{path}:{number}"
            if len(parts) != 5 or not parts[1].isdigit() or parts[3] not in VERDICTS or not parts[4].strip():
                raise UsageError(f"{origin}: expected path<TAB>line<TAB>code<TAB>flag|ok<TAB>reason, got {raw!r}")
            key = (parts[0], int(parts[1]), parts[2])
            if key in labels:
                raise UsageError(f"{origin}: {key} is labelled twice (first at {labels[key].origin})")
            labels[key] = Label(key, parts[3], parts[4].strip(), origin)
    return labels


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read {path}: {error}") from None


# --- candidates: a broad syntactic search, independent of torchlint ----------

CANDIDATE_CONVERSIONS = frozenset({
    "abs", "add", "bfloat16", "bool", "byte", "char", "clamp", "clone", "contiguous", "cpu", "cuda",
    "detach", "div", "double", "flatten", "float", "half", "int", "long", "mul", "permute",
    "pin_memory", "reshape", "short", "squeeze", "sub", "t", "to", "transpose", "type", "type_as",
    "unsqueeze", "view",
})
OLD_INIT_NAMES = frozenset({
    "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
    "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse",
})
UPSAMPLE_NAMES = frozenset({"upsample", "upsample_nearest", "upsample_bilinear"})
SIGMOID_TANH = frozenset({"sigmoid", "tanh"})
LEGACY_REDUCTION_KEYWORDS = frozenset({"size_average", "reduce"})
ASYNC_KEYWORD = re.compile(r"\basync(\s*=)")


@dataclass(frozen=True)
class Candidate:
    key: Key
    text: str


def source_files(dest: Path) -> Iterator[Path]:
    for path in sorted(dest.rglob("*.py")):
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(dest).parts):
            yield path


def find_candidates(dest: Path, codes: Iterable[str], wide: bool = False) -> Tuple[List[Candidate], List[str]]:
    """Every candidate of ``codes`` under DEST, and the files Python cannot parse.
    ``wide`` adds the searches of issue 33 (``_wide_candidates_in``)."""
    wanted = set(codes)
    found: Dict[Key, Candidate] = {}
    unparsed = []
    for path in source_files(dest):
        relative = path.relative_to(dest).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        tree = _parse(text)
        if tree is None:
            unparsed.append(relative)
            continue
        lines = text.splitlines()
        found_here = _candidates_in(tree)
        if wide:
            found_here = itertools.chain(found_here, _wide_candidates_in(tree, "cuda" in text))
        for line, code in found_here:
            if code in wanted:
                key = (relative, line, code)
                found.setdefault(key, Candidate(key, lines[line - 1].strip() if line <= len(lines) else ""))
    return sorted(found.values(), key=lambda c: c.key), unparsed


def _parse(text: str) -> Optional[ast.AST]:
    """The syntax tree, also of torch 0.3 code that passes ``async=True``
    (a keyword since Python 3.7, which torchlint repairs and checks too); the
    rename keeps every line number."""
    for source in (text, ASYNC_KEYWORD.sub(r"async_\1", text)):
        try:
            return ast.parse(source)
        except (SyntaxError, ValueError):
            continue
    return None


def _candidates_in(tree: ast.AST) -> Iterator[Tuple[int, str]]:
    cuda_bound = _names_bound_from_cuda(tree)
    imported = _imported_card_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_data_index_zero(node):
            yield node.lineno, "TL101"
        elif isinstance(node, ast.keyword):
            if node.arg == "volatile":
                yield node.value.lineno, "TL102"
            elif node.arg in LEGACY_REDUCTION_KEYWORDS:
                yield node.value.lineno, "TL106"
            elif node.arg == "reduction" and _is_string(node.value, "elementwise_mean"):
                yield node.value.lineno, "TL106"
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr == "volatile":
                    yield target.lineno, "TL102"
        elif isinstance(node, ast.Attribute):
            yield from _attribute_candidates(node)
        elif isinstance(node, ast.Name) and node.id in imported and isinstance(node.ctx, ast.Load):
            yield node.lineno, imported[node.id]
        elif isinstance(node, ast.ImportFrom):
            yield from _import_candidates(node)
        elif isinstance(node, ast.Expr) and _is_conversion_call(node.value):
            yield node.lineno, "TL201"
        elif isinstance(node, ast.Call) and _is_numpy_on_gpu_candidate(node, cuda_bound):
            yield node.func.lineno if hasattr(node.func, "lineno") else node.lineno, "TL202"


def _wide_candidates_in(tree: ast.AST, mentions_cuda: bool) -> Iterator[Tuple[int, str]]:
    """The wider search of issue 33, for corpora labelled from then on: the
    NumPy spellings of a scalar read (``loss.data.numpy()[0]``,
    ``x.data.cpu().numpy()[0]``: ``IndexError`` on a 0-dim value), and, in a
    file that mentions ``cuda`` at all, every ``.numpy()`` whose receiver chain
    has no ``.cpu()`` (``torch.softmax(out, 1).numpy()``, a helper's
    ``x.data.numpy()``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_numpy_index_zero(node):
            yield node.lineno, "TL101"
        elif (mentions_cuda and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "numpy" and "cpu" not in _attribute_chain(node.func.value)):
            yield node.func.lineno, "TL202"


def _is_numpy_index_zero(node: ast.Subscript) -> bool:
    index = node.slice
    call = node.value
    return (isinstance(index, ast.Constant) and type(index.value) is int and index.value == 0
            and isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "numpy" and "data" in _attribute_chain(call.func.value))


def _attribute_candidates(node: ast.Attribute) -> Iterator[Tuple[int, str]]:
    if node.attr in UPSAMPLE_NAMES:
        yield node.lineno, "TL103"
    elif node.attr in SIGMOID_TANH and not (isinstance(node.value, ast.Name) and node.value.id == "torch"):
        yield node.lineno, "TL104"
    elif node.attr in OLD_INIT_NAMES and _last_name(node.value) == "init":
        yield node.lineno, "TL105"


def _import_candidates(node: ast.ImportFrom) -> Iterator[Tuple[int, str]]:
    for alias in node.names:
        code = _import_code(node.module or "", alias.name)
        if code:
            yield node.lineno, code


def _is_data_index_zero(node: ast.Subscript) -> bool:
    index = node.slice
    if isinstance(index, ast.Tuple) and len(index.elts) == 1:
        index = index.elts[0]
    return (isinstance(node.value, ast.Attribute) and node.value.attr == "data"
            and isinstance(index, ast.Constant) and index.value == 0 and type(index.value) is int)


def _is_conversion_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in CANDIDATE_CONVERSIONS)


def _is_numpy_on_gpu_candidate(node: ast.Call, cuda_bound: Set[str]) -> bool:
    """``.numpy()`` on a receiver chain with ``.cuda()`` or ``.data`` (and no
    ``.cpu()``, which always brings the tensor home), or on a name some
    assignment in the file binds from ``.cuda()``."""
    if not (isinstance(node.func, ast.Attribute) and node.func.attr == "numpy"):
        return False
    chain = _attribute_chain(node.func.value)
    if "cpu" in chain:
        return False
    root = node.func.value
    return "cuda" in chain or "data" in chain or (isinstance(root, ast.Name) and root.id in cuda_bound)


def _attribute_chain(node: ast.AST) -> List[str]:
    names = []
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Attribute):
            names.append(node.attr)
            node = node.value
        else:
            return names


def _names_bound_from_cuda(tree: ast.AST) -> Set[str]:
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and "cuda" in _attribute_chain(node.value):
            bound.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return bound


def _imported_card_names(tree: ast.AST) -> Dict[str, str]:
    """Names a from-import binds to a card rule's function (``from
    torch.nn.functional import upsample as up``), so calls through them count."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                code = _import_code(node.module or "", alias.name)
                if code:
                    names[alias.asname or alias.name] = code
    return names


def _import_code(module: str, name: str) -> Optional[str]:
    if name in UPSAMPLE_NAMES:
        return "TL103"
    if name in SIGMOID_TANH and "functional" in module:
        return "TL104"
    if name in OLD_INIT_NAMES and module.split(".")[-1] == "init":
        return "TL105"
    return None


def _last_name(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _is_string(node: ast.AST, value: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == value


# --- score -------------------------------------------------------------------


@dataclass
class Run:
    """One torchlint checkout's findings on DEST."""
    source: str
    findings: Set[Key]
    parse_errors: List[str]


def run_torchlint(dest: Path, source: Optional[Path], codes: Sequence[str], frontend: str = "cli") -> Run:
    """torchlint's findings on DEST through the command (``cli``) or the
    flake8 plugin (``flake8``), from ``source`` when given."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source.resolve()), env.get("PYTHONPATH")]))
    label = f"{source or 'this checkout'}" + FRONTEND_LABELS[frontend]
    if frontend == "flake8":
        return Run(label, *_flake8_findings(dest, env))
    if frontend == "stdin":
        return Run(label, *_stdin_findings(dest, env, codes))
    return Run(label, *_cli_findings(dest, env, codes))


def _cli_findings(dest: Path, env: Dict[str, str], codes: Sequence[str]) -> Tuple[Set[Key], List[str]]:
    if not codes:  # the modern corpora: default rules, each entry as its user runs it
        return _modern_findings(dest, env)
    command = [sys.executable, "-m", "torchlint", "--isolated", "--no-cache", "--no-respect-gitignore",
               "--output-format", "json", "--exit-zero", "--extend-select", ",".join(codes), "."]
    if any(p.suffix == ".py" for p in dest.iterdir()):
        return _json_findings(subprocess.run(command, cwd=dest, env=env, capture_output=True, text=True), "")
    # Each entry is a repository: run in its folder, as its user runs torchlint at the
    # top of their checkout, so its own packages (``torchcv/`` beside ``examples/``) are
    # the project's, and a package it imports but does not hold is a third party's.
    return _each_entry(dest, command, env)


def _modern_findings(dest: Path, env: Dict[str, str]) -> Tuple[Set[Key], List[str]]:
    """The default rules on each entry of DEST, run in the entry's folder without
    ``--isolated``: the torch floor its metadata declares (``*.dist-info/METADATA``)
    applies, as it does for a user who checks the package (no entry carries a
    torchlint configuration)."""
    command = [sys.executable, "-m", "torchlint", "--no-cache", "--no-respect-gitignore",
               "--output-format", "json", "--exit-zero", "."]
    return _each_entry(dest, command, env)


def _each_entry(dest: Path, command: List[str], env: Dict[str, str]) -> Tuple[Set[Key], List[str]]:
    """``command`` run in each entry folder of DEST, its findings named from DEST."""
    findings: Set[Key] = set()
    parse_errors: List[str] = []
    for entry in sorted(p for p in dest.iterdir() if p.is_dir()):
        done = subprocess.run(command, cwd=entry, env=env, capture_output=True, text=True)
        found, errors = _json_findings(done, entry.name + "/")
        findings |= found
        parse_errors += errors
    return findings, parse_errors


def _json_findings(done: "subprocess.CompletedProcess[str]", prefix: str) -> Tuple[Set[Key], List[str]]:
    # Files Python 3 cannot parse make the exit status 2 even with
    # --exit-zero; they are listed in the JSON (code null), so the JSON decides.
    try:
        items = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise UsageError(f"torchlint exited {done.returncode} without JSON: {done.stderr.strip()[-500:]}") from None
    findings: Set[Key] = set()
    parse_errors = []
    for item in items:
        path = prefix + _relative(item["filename"])
        if item.get("code") is None:  # a file torchlint could not parse
            parse_errors.append(path)
        else:
            findings.add((path, item["location"]["row"], item["code"]))
    return findings, sorted(set(parse_errors))


def _flake8_findings(dest: Path, env: Dict[str, str]) -> Tuple[Set[Key], List[str]]:
    command = [sys.executable, "-m", "flake8", "--isolated", "--select", "TL,E999", "--exit-zero",
               "--format", "%(path)s\t%(row)d\t%(code)s", "."]
    done = subprocess.run(command, cwd=dest, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise UsageError(f"flake8 exited {done.returncode}: {done.stderr.strip()[-500:]}")
    findings: Set[Key] = set()
    parse_errors = []
    for line in done.stdout.splitlines():
        path, row, code = line.split("\t")
        if code == "E999":  # flake8's own syntax error
            parse_errors.append(_relative(path))
        else:
            findings.add((_relative(path), int(row), code))
    return findings, sorted(set(parse_errors))


def _stdin_findings(dest: Path, env: Dict[str, str], codes: Sequence[str]) -> Tuple[Set[Key], List[str]]:
    """One ``--stdin-filename`` run per file, as an editor integration sends
    them (the default output: the JSON one costs much more per finding)."""
    findings: Set[Key] = set()
    parse_errors = []
    for path in source_files(dest):
        relative = path.relative_to(dest).as_posix()
        command = [sys.executable, "-m", "torchlint", "--isolated", "--no-cache", "--exit-zero", "-q",
                   "--extend-select", ",".join(codes), "--stdin-filename", relative, "-"]
        done = subprocess.run(command, cwd=dest, env=env, input=path.read_bytes(), capture_output=True)
        output = done.stdout.decode("utf-8", "replace")
        matches = [CONCISE_FINDING.match(line) for line in output.splitlines()]
        findings.update((_relative(m["path"]), int(m["row"]), m["code"]) for m in matches if m)
        if done.returncode == 2:  # the file could not be parsed
            parse_errors.append(relative)
    return findings, parse_errors


def _relative(path: str) -> str:
    return os.path.normpath(path).replace(os.sep, "/")


@dataclass
class RuleScore:
    code: str
    should_flag: int = 0
    labelled_ok: int = 0
    flagged: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    unjudged: int = 0

    @property
    def precision(self) -> Optional[float]:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> Optional[float]:
        # Only card rules have every candidate labelled; elsewhere the labels
        # cover findings, so a recall would always read 1.0.
        if self.code not in CARD_RULES and self.code != CARD_TOTAL:
            return None
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


def score_run(run: Run, labels: Dict[Key, Label]) -> Dict[str, RuleScore]:
    scores: Dict[str, RuleScore] = {}

    def rule(code: str) -> RuleScore:
        return scores.setdefault(code, RuleScore(code))

    for key, label in labels.items():
        entry = rule(key[2])
        if label.verdict == "flag":
            entry.should_flag += 1
            if key in run.findings:
                entry.tp += 1
            else:
                entry.fn += 1
        else:
            entry.labelled_ok += 1
            if key in run.findings:
                entry.fp += 1
    for key in run.findings:
        entry = rule(key[2])
        entry.flagged += 1
        if key not in labels:
            entry.unjudged += 1
    return dict(sorted(scores.items()))


def total(scores: Iterable[RuleScore], name: str) -> RuleScore:
    summed = RuleScore(name)
    for entry in scores:
        for field in ("should_flag", "labelled_ok", "flagged", "tp", "fp", "fn", "unjudged"):
            setattr(summed, field, getattr(summed, field) + getattr(entry, field))
    return summed


def _ratio(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.3f}"


def format_table(scores: Dict[str, RuleScore]) -> List[str]:
    rows = ["| rule | should flag | labelled ok | flagged | TP | FP | FN | unjudged | precision | recall |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    card = [s for code, s in scores.items() if code in CARD_RULES]
    for entry in [*scores.values(), total(card, CARD_TOTAL), total(scores.values(), ALL_TOTAL)]:
        rows.append(f"| {entry.code} | {entry.should_flag} | {entry.labelled_ok} | {entry.flagged} | {entry.tp} "
                    f"| {entry.fp} | {entry.fn} | {entry.unjudged} | {_ratio(entry.precision)} "
                    f"| {_ratio(entry.recall)} |")
    return rows


def score(dest: Path, label_files: Sequence[Path], sources: Sequence[Optional[Path]], strict: bool,
          show: Set[str], frontend: str = "cli", modern: bool = False) -> int:
    labels = read_labels(label_files)
    unjudged_anywhere = False
    summaries = []
    for source in sources:
        run = run_torchlint(dest, source, () if modern else CARD_RULES, frontend)
        scores = score_run(run, labels)
        print(f"## torchlint: {run.source}\n")
        print("\n".join(format_table(scores)))
        if run.parse_errors:
            print(f"\nfiles torchlint could not parse ({len(run.parse_errors)}): {', '.join(run.parse_errors)}")
        misses = [labels[k] for k in sorted(labels) if labels[k].verdict == "flag" and k not in run.findings]
        _print_causes(misses)
        if "fn" in show:
            _print_labels("false negatives", misses)
        if "fp" in show:
            _print_labels("false positives", [labels[k] for k in sorted(run.findings) if k in labels
                                              and labels[k].verdict == "ok"])
        unjudged = sorted(k for k in run.findings if k not in labels)
        if unjudged:
            unjudged_anywhere = True
            print(f"\nUNJUDGED findings ({len(unjudged)}):")
            for path, line, code in unjudged:
                print(f"UNJUDGED\t{path}\t{line}\t{code}")
        print()
        summaries.append((run.source, scores))
    if len(summaries) > 1:
        _print_side_by_side(summaries)
    return 1 if strict and unjudged_anywhere else 0


def _print_causes(misses: Sequence[Label]) -> None:
    if not misses:
        return
    by_rule: Dict[str, Counter] = defaultdict(Counter)
    for label in misses:
        by_rule[label.key[2]][label.cause] += 1
    print("\nfalse negatives by cause (the label's [tag]):")
    for code, causes in sorted(by_rule.items()):
        print(f"  {code}: " + ", ".join(f"{cause} {n}" for cause, n in causes.most_common()))


def _print_labels(title: str, labels: Sequence[Label]) -> None:
    print(f"\n{title} ({len(labels)}):")
    for label in labels:
        path, line, code = label.key
        print(f"  {path}:{line} {code} {label.reason}")


def _print_side_by_side(summaries: Sequence[Tuple[str, Dict[str, RuleScore]]]) -> None:
    print("## side by side (precision / recall)\n")
    print("| rule | " + " | ".join(source for source, _ in summaries) + " |")
    print("|---|" + "---|" * len(summaries))
    codes = sorted({code for _, scores in summaries for code in scores})
    for code in [*codes, CARD_TOTAL, ALL_TOTAL]:
        cells = []
        for _, scores in summaries:
            if code == CARD_TOTAL:
                entry = total([s for c, s in scores.items() if c in CARD_RULES], code)
            elif code == ALL_TOTAL:
                entry = total(scores.values(), code)
            else:
                entry = scores.get(code, RuleScore(code))
            cells.append(f"{_ratio(entry.precision)} / {_ratio(entry.recall)}")
        print(f"| {code} | " + " | ".join(cells) + " |")


# --- command line ------------------------------------------------------------


def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    prep = commands.add_parser("prepare", help="materialise the manifest's corpus entries into DEST")
    prep.add_argument("--manifest", type=Path, required=True)
    prep.add_argument("--mirror-root", type=Path, default=DEFAULT_MIRROR_ROOT)
    prep.add_argument("dest", type=Path)
    cand = commands.add_parser("candidates", help="print unlabelled candidate occurrences of card rules")
    cand.add_argument("--codes", default=",".join(CARD_RULES), help="comma-separated card rule codes")
    cand.add_argument("--labels", type=Path, action="append", default=[])
    cand.add_argument("--wide", action="store_true",
                      help="also the searches of issue 33: NumPy spellings of .data[0], every .numpy() "
                           "without .cpu() in a file that mentions cuda")
    cand.add_argument("dest", type=Path)
    sc = commands.add_parser("score", help="run torchlint on DEST and score it against the labels")
    sc.add_argument("--labels", type=Path, action="append", required=True)
    sc.add_argument("--torchlint-src", type=Path, action="append", default=[],
                    help="a checkout to score (its folder goes on PYTHONPATH); repeatable")
    sc.add_argument("--strict", action="store_true", help="exit 1 when a finding has no label")
    sc.add_argument("--frontend", choices=tuple(FRONTEND_LABELS), default="cli",
                    help="the torchlint command over DEST (default), flake8 with the TL plugin, "
                         "or the command on each file through --stdin-filename")
    sc.add_argument("--modern", action="store_true",
                    help="precision on recent releases: the default rules only, run in each entry's folder "
                         "without --isolated so that the floor its metadata declares applies")
    sc.add_argument("--show", default="", help="comma-separated lists to print: fn, fp")
    sc.add_argument("dest", type=Path)
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    arguments = parse_arguments(sys.argv[1:] if argv is None else argv)
    try:
        if not arguments.dest.is_dir() and arguments.command != "prepare":
            raise UsageError(f"{arguments.dest} is not a directory")
        if arguments.command == "prepare":
            return prepare(arguments.manifest, arguments.dest, arguments.mirror_root)
        if arguments.command == "candidates":
            codes = [c.strip() for c in arguments.codes.split(",") if c.strip()]
            unknown = sorted(set(codes) - set(CARD_RULES))
            if unknown:
                raise UsageError(f"not card rules: {', '.join(unknown)} (card rules: {', '.join(CARD_RULES)})")
            labels = read_labels(arguments.labels)
            candidates, unparsed = find_candidates(arguments.dest, codes, arguments.wide)
            fresh = [c for c in candidates if c.key not in labels]
            for candidate in fresh:
                path, line, code = candidate.key
                print(f"{path}\t{line}\t{code}\t{candidate.text}")
            print(f"{len(fresh)} unlabelled of {len(candidates)} candidates; "
                  f"{len(unparsed)} files Python cannot parse", file=sys.stderr)
            return 0
        sources = arguments.torchlint_src or [None]
        show = {s.strip() for s in arguments.show.split(",") if s.strip()}
        return score(arguments.dest, arguments.labels, sources, arguments.strict, show, arguments.frontend,
                     arguments.modern)
    except UsageError as error:
        print(f"judged.py: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
