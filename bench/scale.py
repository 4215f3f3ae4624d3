#!/usr/bin/env python3
"""Prove that torchlint never breaks a file, on large real corpora.

The corpora: CPython's standard library (``Lib/`` of the interpreter that
runs this script), the ``transformers`` wheel, and the 2017-2020 torch
packages of ``bench/corpus.py`` (downloaded with ``pip download --no-deps``,
never installed). Each is copied into a cache and measured through the real
command (``python -m torchlint``), reusing ``bench/corpus.py``'s runs:

1. check mode over every file: no traceback, exit status 0 or 1, or 2 only
   for files that are genuinely invalid (``python FILE`` refuses them too:
   Python 2 files in old packages, CPython's deliberately broken test
   files); those are listed as *input errors* with both messages. Valid
   files torchlint cannot analyse (libcst cannot parse them) are listed as
   skipped (a warning; the exit status is unaffected);
2. ``--fix --unsafe-fixes`` on a copy: every fixed file still compiles, and
   no file Python refuses is touched;
3. a second ``--fix --unsafe-fixes`` changes no byte;
4. a final check of the fixed copy finds nothing fixable;
5. outside the rewritten code, the AST of each fixed file is unchanged: the
   original and fixed modules are walked in parallel, and where two nodes
   differ the node of one side must be the smallest holding a changed region
   of the text diff (an inserted ``import`` is a new statement inside a
   changed region; a statement that changed block, or a string that
   swallowed code, is drift); and no text may change where the AST did not
   (a dropped form feed, comment or line ending).

Every rule runs, the opt-in ones included (``--no-opt-in`` for the default
set), without configuration files (``--isolated``).

Usage::

    python bench/scale.py                       # everything (long: ~1.5M lines)
    python bench/scale.py --corpora cpython --sample 300
    python bench/scale.py --corpora old --packages torchvision,kornia --json out.json

Prints files, lines, findings and fixes per rule, input errors and
failures. Exit status: 0 without failures, 1 with failures, 2 when nothing
could be measured.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import difflib
import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import sys
import sysconfig
import time
import tokenize
import warnings
from collections import Counter
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent


def _load_corpus():
    """bench/corpus.py, once per process, under the name tests/test_corpus.py uses."""
    name = "torchlint_bench_corpus"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("corpus.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[name]


corpus = _load_corpus()
Package, Corpus = corpus.Package, corpus.Corpus

TRANSFORMERS_VERSION = "5.23.0"
# "    TL103 (upsample): 2 fixes" in --show-fixes output
APPLIED_FIX = re.compile(r"^    (?P<code>[A-Z]+\d+)(?: \([^)]*\))?: (?P<count>\d+) fix(?:es)?$")


# --- the corpora ---------------------------------------------------------------


def stdlib_dir() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def stdlib_package() -> Package:
    return Package("cpython-Lib", sys.version.split()[0], f"the standard library of {sys.executable}")


def stdlib_corpus(cache: Path, sample: Optional[int] = None, include: Sequence[str] = (),
                  max_lines: Optional[int] = None) -> Corpus:
    """A copy of the interpreter's ``Lib/`` (without site-packages) as a corpus.

    ``sample``/``max_lines``/``include``: see ``sample_files``.
    """
    package = stdlib_package()
    source = stdlib_dir()
    root = cache / "src" / package.key
    names = [f for f in corpus.source_files(source) if not f.startswith(("site-packages/", "dist-packages/"))]
    marker = root / ".copied"
    fingerprint = hashlib.sha256("\n".join(names).encode()).hexdigest()
    if not (marker.is_file() and marker.read_text() == fingerprint):
        if root.exists():
            shutil.rmtree(root)
        for name in names:
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / name, target)
        marker.write_text(fingerprint)
    result = Corpus(package, root=root, archive=str(source))
    _fill(result, names)
    return sample_files(result, sample, include, max_lines)


def package_corpus(package: Package, cache: Path, sample: Optional[int] = None, include: Sequence[str] = (),
                   max_lines: Optional[int] = None, python: str = sys.executable) -> Corpus:
    """A PyPI package, downloaded and extracted by bench/corpus.py."""
    result = corpus.prepare(package, cache, python)
    for name in result.files:
        if name not in result.not_compiling:
            problem = python_refuses((result.root / name).read_bytes(), name)
            if problem:
                result.not_compiling[name] = problem
    return sample_files(result, sample, include, max_lines)


def examples_corpus(cache: Path, source: Path = REPO) -> Corpus:
    """Every rule's flagged examples and accepted snippets, one file each (code that has fixes)."""
    sys.path.insert(0, str(source))
    try:
        from torchlint.rules import all_rules

        snippets = {}
        for rule in all_rules():
            for index, example in enumerate(rule.flagged):
                snippets[f"{rule.code.lower()}/flagged_{index}.py"] = example.code
            for index, code in enumerate(rule.accepted):
                snippets[f"{rule.code.lower()}/accepted_{index}.py"] = code
    finally:
        sys.path.remove(str(source))
    package = Package("rule-examples", "0", "the rules' own flagged and accepted examples")
    root = cache / "src" / package.key
    if root.exists():
        shutil.rmtree(root)
    for name, code in snippets.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(code, encoding="utf-8")
    result = Corpus(package, root=root, archive="torchlint.rules")
    _fill(result, sorted(snippets))
    return result


def _fill(result: Corpus, names: Iterable[str]) -> None:
    result.files, result.lines, result.not_compiling = [], {}, {}
    for name in names:
        data = (result.root / name).read_bytes()
        result.files.append(name)
        result.lines[name] = corpus.count_lines(data)
        problem = python_refuses(data, name)
        if problem:
            result.not_compiling[name] = problem


def python_refuses(data: bytes, path: str) -> Optional[str]:
    """Why ``python FILE`` would refuse the file, or None.

    ``compile(bytes)`` (bench/corpus.py's test) lets undecodable bytes in a
    comment through; the interpreter reading a file does not: decode per
    PEP 263 strictly first.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        data.decode(encoding)
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg if hasattr(exc, 'msg') else exc}"
    except (UnicodeDecodeError, LookupError) as exc:
        return f"SyntaxError: cannot decode the file: {exc}"
    return corpus.compiles(data, path)


def sample_files(result: Corpus, sample: Optional[int], include: Sequence[str] = (),
                 max_lines: Optional[int] = None) -> Corpus:
    """Keep a deterministic sample: ``sample`` files (spread by a hash of their
    path) of at most ``max_lines`` lines each, plus every file in ``include``."""
    if result.error or (sample is None and max_lines is None):
        return result
    wanted = [f for f in include if f in result.lines]
    pool = [f for f in result.files if f not in wanted and (max_lines is None or result.lines[f] <= max_lines)]
    pool.sort(key=lambda f: hashlib.sha1(f.encode()).hexdigest())
    chosen = set(wanted) | set(pool if sample is None else pool[:max(0, sample - len(wanted))])
    result.files = sorted(chosen)
    result.lines = {f: result.lines[f] for f in result.files}
    result.not_compiling = {f: m for f, m in result.not_compiling.items() if f in chosen}
    return result


# --- the AST outside the changed text --------------------------------------------


def decode_source(data: bytes) -> str:
    """The text Python reads from ``data`` (PEP 263 cookie or BOM), BOM removed."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


def physical_lines(text: str) -> List[str]:
    """Lines broken where Python breaks them (\\n, \\r\\n, \\r; not form feeds)."""
    return io.StringIO(text, newline="").readlines()


Span = Tuple[int, int]


def changed_regions(before: str, after: str) -> Tuple[List[Tuple[int, int]], List[Tuple[int, int]]]:
    """Character ranges [start, end) that differ: (in ``before``, in ``after``).

    A line diff; a hunk that replaces as many lines as it removes is taken
    line by line; within each piece, the runs of tokens that differ.
    """
    a, b = physical_lines(before), physical_lines(after)
    a_at, b_at = _offsets(a), _offsets(b)
    old, new = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        pieces = [(i, i + 1, j, j + 1) for i, j in zip(range(i1, i2), range(j1, j2))] \
            if i2 - i1 == j2 - j1 else [(i1, i2, j1, j2)]
        for p1, p2, q1, q2 in pieces:
            x, y = "".join(a[p1:p2]), "".join(b[q1:q2])
            for (s1, e1), (s2, e2) in _token_changes(x, y):
                old.append((a_at[p1] + s1, a_at[p1] + e1))
                new.append((b_at[q1] + s2, b_at[q1] + e2))
    return old, new


_TOKEN = re.compile(r"\w+|\s+|.", re.DOTALL)


def _token_changes(x: str, y: str) -> List[Tuple[Span, Span]]:
    """The differing runs of tokens (words, spaces, single characters) of two texts."""
    tx, ty = _TOKEN.findall(x), _TOKEN.findall(y)
    ox, oy = _offsets(tx), _offsets(ty)
    return [((ox[i1], ox[i2]), (oy[j1], oy[j2]))
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, tx, ty, autojunk=False).get_opcodes()
            if tag != "equal"]


def _offsets(lines: Sequence[str]) -> List[int]:
    out = [0]
    for line in lines:
        out.append(out[-1] + len(line))
    return out




class _Side:
    """One of the two texts: AST spans in characters, and the text's changed regions."""

    def __init__(self, text: str, regions: List[Span]) -> None:
        self.lines = physical_lines(text)
        self.starts = _offsets(self.lines)
        self.regions = regions

    def _char(self, line: int, byte_column: int) -> int:
        if line - 1 >= len(self.lines):
            return self.starts[-1]
        text = self.lines[line - 1]
        return self.starts[line - 1] + len(text.encode("utf-8")[:byte_column].decode("utf-8", "replace"))

    def span(self, node) -> Optional[Span]:
        if not isinstance(node, ast.AST) or getattr(node, "end_lineno", None) is None \
                or getattr(node, "lineno", None) is None:
            return None
        return self._char(node.lineno, node.col_offset), self._char(node.end_lineno, node.end_col_offset)

    @staticmethod
    def _meets(span: Span, region: Span) -> bool:
        """The node's text overlaps or borders the region (a point, where text was inserted or removed)."""
        (start, end), (r_start, r_end) = span, region
        return r_start <= end and start <= r_end

    def touched(self, span: Span) -> bool:
        return any(self._meets(span, region) for region in self.regions)

    def covers_minimally(self, node: ast.AST, span: Span) -> bool:
        """``node`` holds (its share of) a changed region that none of its children holds."""
        children = [c for c in (self.span(child) for child in ast.iter_child_nodes(node)) if c]
        for region in self.regions:
            if not self._meets(span, region):
                continue
            if region[0] == region[1]:  # an insertion point: a child holds it only strictly inside
                held = any(c[0] < region[0] < c[1] for c in children)
            else:
                piece = (max(span[0], region[0]), min(span[1], region[1]))
                held = any(c[0] <= piece[0] and piece[1] <= c[1] for c in children)
            if not held:
                return True
        return False

    def line_of(self, span: Optional[Span]) -> int:
        return bisect.bisect_right(self.starts, span[0]) if span else 0


class _Drift(Exception):
    pass


def ast_drift(before: str, after: str, limit: int = 5) -> List[str]:
    """How ``after`` differs from ``before`` outside the rewritten code.

    Both ASTs are walked in parallel. Where two nodes differ (another kind of
    node, another name or constant, statements or arguments added or removed)
    the difference must be explained by the text diff: the node of either
    side must be the smallest one holding a changed region of its text, and
    the other must overlap a changed region too. Conversely every changed
    region of the text must overlap (or border) a node that differs: text may
    not change where the AST did not (a dropped form feed, comment or line
    ending). Empty when there is no drift.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a_tree, b_tree = ast.parse(before), ast.parse(after)
    old, new = changed_regions(before, after)
    a, b = _Side(before, old), _Side(after, new)
    walker = _Walker(a, b)
    if ast.dump(a_tree) != ast.dump(b_tree):
        problem = walker.compare(a_tree, b_tree, (0, len(before)), (0, len(after)), "Module")
        if problem:
            return [problem]
    problems = []
    for (o_start, o_end), (n_start, n_end) in zip(old, new):
        explained = any(
            any(a._meets(span, o) for span in walker.rewritten_a) or any(b._meets(span, n) for span in walker.rewritten_b)
            for o, n in equivalent_regions(before, after, (o_start, o_end), (n_start, n_end)))
        if not explained:
            problems.append(f"line {a.line_of((o_start, o_end))}: text changed where the AST did not: "
                            f"{before[o_start:o_end]!r} -> {after[n_start:n_end]!r}")
    return problems[:limit]


def equivalent_regions(before: str, after: str, old: Span, new: Span) -> List[Tuple[Span, Span]]:
    """``(old, new)`` and every other place the diff could equally have put it.

    A pure deletion or insertion inside a run of repeated text has many
    alignments: removing the ``)`` of ``Variable(x)`` from ``f(Variable(x))``
    reads, to a diff, like removing the outer ``)``. The diff picks one; the
    rewritten node may hold another. Replacements have a single place.
    """
    places = [(old, new)]
    if (old[0] == old[1]) == (new[0] == new[1]):
        return places  # a replacement (or nothing)
    text, (start, end) = (before, old) if new[0] == new[1] else (after, new)
    for step in (-1, 1):
        shift = 0
        while True:
            s, e = start + shift, end + shift
            if step < 0 and not (s > 0 and text[s - 1] == text[e - 1]):
                break
            if step > 0 and not (e < len(text) and text[s] == text[e]):
                break
            shift += step
            places.append(((old[0] + shift, old[1] + shift), (new[0] + shift, new[1] + shift)))
    return places


class _Walker:
    def __init__(self, a: _Side, b: _Side) -> None:
        self.a, self.b = a, b
        self.rewritten_a: List[Span] = []  # spans of the nodes accepted as rewritten
        self.rewritten_b: List[Span] = []

    def compare(self, x, y, x_span: Span, y_span: Span, where: str) -> Optional[str]:
        """None when ``x`` and ``y`` are equal or differ only where the text changed."""
        if not isinstance(x, ast.AST) or not isinstance(y, ast.AST):
            return None if _same_scalar(x, y) else self._describe(x, y, x_span, y_span, where)
        if type(x) is not type(y):
            return self._accept(x, y, x_span, y_span, where)
        x_span = self.a.span(x) or x_span
        y_span = self.b.span(y) or y_span
        for name in x._fields:
            xv, yv = getattr(x, name, None), getattr(y, name, None)
            here = f"{where}.{name}"
            if isinstance(xv, list) and isinstance(yv, list):
                problem = self._compare_lists(xv, yv, x_span, y_span, here)
            elif isinstance(xv, ast.AST) and isinstance(yv, ast.AST):
                problem = self.compare(xv, yv, x_span, y_span, f"{here}:{type(xv).__name__}")
            elif _same_scalar(xv, yv):
                problem = None
            else:
                problem = self._describe(xv, yv, x_span, y_span, here)
            if problem:
                # Below this node the trees do not line up: this node itself may be the rewrite.
                return None if self._acceptable(x, y, x_span, y_span) else problem
        return None

    def _compare_lists(self, xs: list, ys: list, x_span: Span, y_span: Span, where: str) -> Optional[str]:
        if len(xs) == len(ys):
            kept = (list(self.rewritten_a), list(self.rewritten_b))
            for index, (xv, yv) in enumerate(zip(xs, ys)):
                problem = self.compare(xv, yv, x_span, y_span, f"{where}[{index}]")
                if problem:
                    break
            else:
                return None
            # As long, but maybe one element added and another removed (an ``import math``
            # inserted at the top, an orphaned ``import numpy as np`` dropped below): align
            # the elements as for lists of different lengths before calling it drift.
            self.rewritten_a[:], self.rewritten_b[:] = kept
            if self._aligned_lists(xs, ys, x_span, y_span, where) is None:
                return None
            return problem
        return self._aligned_lists(xs, ys, x_span, y_span, where)

    def _aligned_lists(self, xs: list, ys: list, x_span: Span, y_span: Span, where: str) -> Optional[str]:
        keys_x = [ast.dump(v) if isinstance(v, ast.AST) else repr(v) for v in xs]
        keys_y = [ast.dump(v) if isinstance(v, ast.AST) else repr(v) for v in ys]
        # The common head stays aligned first: among repeated elements (four
        # ``import torch``) the longest match may otherwise pair the head of one
        # side with the middle of the other, and report an untouched element gone.
        head = 0
        while head < min(len(keys_x), len(keys_y)) and keys_x[head] == keys_y[head]:
            head += 1
        matcher = difflib.SequenceMatcher(None, keys_x[head:], keys_y[head:], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
            if tag == "equal":
                continue
            if tag == "replace" and i2 - i1 == j2 - j1:
                for offset in range(i2 - i1):
                    problem = self.compare(xs[i1 + offset], ys[j1 + offset], x_span, y_span, f"{where}[{i1 + offset}]")
                    if problem:
                        return problem
                continue
            # Elements added or removed: each must lie in changed text.
            for value in xs[i1:i2]:
                span = self.a.span(value) or x_span
                if not self.a.touched(span):
                    return f"line {self.a.line_of(span)}: {where}: {_short(value)} is gone, outside the changed text"
                self.rewritten_a.append(span)
            for value in ys[j1:j2]:
                span = self.b.span(value) or y_span
                if not self.b.touched(span):
                    return f"fixed line {self.b.line_of(span)}: {where}: {_short(value)} appeared outside the changed text"
                self.rewritten_b.append(span)
        return None

    def _acceptable(self, x: ast.AST, y: ast.AST, x_span: Span, y_span: Span) -> bool:
        x_own, y_own = self.a.span(x), self.b.span(y)
        if x_own is None or y_own is None or isinstance(x, ast.Module):
            return False  # decided by the nearest node with a position
        if (self.a.touched(x_own) and self.b.touched(y_own)
                and (self.a.covers_minimally(x, x_own) or self.b.covers_minimally(y, y_own))):
            self.rewritten_a.append(x_own)
            self.rewritten_b.append(y_own)
            return True
        return False

    def _accept(self, x, y, x_span: Span, y_span: Span, where: str) -> Optional[str]:
        if self._acceptable(x, y, x_span, y_span):
            return None
        return self._describe(x, y, x_span, y_span, where)

    def _describe(self, x, y, x_span: Span, y_span: Span, where: str) -> str:
        xs, ys = self.a.span(x) or x_span, self.b.span(y) or y_span
        return (f"line {self.a.line_of(xs)} (fixed: line {self.b.line_of(ys)}): {where} differs outside the "
                f"changed text: {_short(x)} -> {_short(y)}")


def _short(value) -> str:
    text = ast.dump(value) if isinstance(value, ast.AST) else repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _same_scalar(x, y) -> bool:
    return type(x) is type(y) and (x == y or repr(x) == repr(y))  # nan, -0.0


# --- running ------------------------------------------------------------------------


class RecordingRunner(corpus.Runner):
    """corpus.Runner that keeps every phase's runs (their stdout has --show-fixes)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.phases: List[Tuple[Tuple[str, ...], Dict[str, "corpus.Merged"]]] = []

    def run_many(self, work, options):
        merged = super().run_many(work, options)
        self.phases.append((tuple(options), merged))
        return merged


def applied_fixes(merged: "corpus.Merged") -> Counter:
    """Fixes per rule that a --fix --show-fixes run says it applied."""
    counts: Counter = Counter()
    for run in merged.runs:
        for line in run.stdout.splitlines():
            match = APPLIED_FIX.match(line)
            if match:
                counts[match["code"]] += int(match["count"])
    return counts


def every_rule_selector(source: Path = REPO) -> str:
    sys.path.insert(0, str(source))
    try:
        from torchlint.rules import all_rules

        return ",".join(["TL", *(r.code for r in all_rules() if not r.enabled_by_default)])
    finally:
        sys.path.remove(str(source))


def measure(corpora: Sequence[Corpus], cache: Path, jobs: int = 2, timeout: float = 1800, chunk_lines: int = 6000,
            opt_in: bool = True, python: str = sys.executable, source: Path = REPO, log=print) -> Dict[str, Dict]:
    """Check, fix, fix again, re-check (bench/corpus.py), then judge each corpus."""
    extra = ["--isolated", "--show-fixes"]
    if opt_in:
        extra += ["--select", every_rule_selector(source)]
    runner = RecordingRunner(python, jobs, timeout, chunk_lines, extra, source)
    started = time.perf_counter()
    results = corpus.measure(corpora, cache, runner, fix=True, recheck=True, log=log)
    first_fix = next((merged for options, merged in runner.phases if "--fix" in options), {})
    for item in corpora:
        key = item.package.key
        result = results[key]
        if result.get("error"):
            continue
        result["applied_fixes"] = dict(sorted(applied_fixes(first_fix[key]).items())) if key in first_fix else {}
        result["skipped"] = skipped_files(runner.phases[0][1][key], item) if runner.phases else {}
        result["input_errors"], _ = input_errors(result, item)
        result["ast_drift"] = ast_check(item, cache / "fixed" / key, result["fix"]["changed_files"])
        result["failures"] = judge(result, item, cache / "fixed" / key)
    results["_seconds"] = round(time.perf_counter() - started, 1)
    return results


def skipped_files(merged: "corpus.Merged", item: Corpus) -> Dict[str, str]:
    """Valid files torchlint skipped with a warning (libcst cannot parse them, or too deep)."""
    skipped = {}
    for run in merged.runs:
        for line in run.stderr.splitlines():
            if line.startswith("torchlint: warning: ") and ": skipped: " in line:
                message = line[len("torchlint: warning: "):]
                path = _error_path(message, item)
                if path is not None:
                    skipped[path] = message.split(": skipped: ", 1)[1]
    return dict(sorted(skipped.items()))


def input_errors(result: Dict, item: Corpus) -> Tuple[Dict[str, Dict[str, str]], List[str]]:
    """Files torchlint refused (exit 2) that Python refuses too; and errors that are not about such a file."""
    check = result["check"]
    refused: Dict[str, str] = dict(check["parse_errors"])
    unexplained: List[str] = []
    for message in check["other_errors"]:  # "key/path: cannot decode ..."
        path = _error_path(message, item)
        if path is not None and path in item.not_compiling:
            refused[path] = message.split(": ", 1)[1]
        else:
            unexplained.append(message)
    explained = {path: {"torchlint": message, "python": item.not_compiling[path]}
                 for path, message in sorted(refused.items()) if path in item.not_compiling}
    return explained, unexplained


def _error_path(message: str, item: Corpus) -> Optional[str]:
    prefix = item.package.key + "/"
    if not message.startswith(prefix):
        return None
    for path in sorted(item.lines, key=len, reverse=True):
        if message.startswith(prefix + path + ":"):
            return path
    return None


def ast_check(item: Corpus, fixed_root: Path, changed: Sequence[str]) -> Dict[str, List[str]]:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))  # the walk recurses with the tree (up to 2500 deep)
    drift: Dict[str, List[str]] = {}
    for path in changed:
        if path in item.not_compiling:
            continue  # bench/corpus.py judges these (torchlint must not have changed them)
        try:
            before = decode_source((item.root / path).read_bytes())
            after = decode_source((fixed_root / path).read_bytes())
            problems = ast_drift(before, after)
        except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError) as exc:
            problems = [f"cannot compare: {type(exc).__name__}: {exc}"]
        if problems:
            drift[path] = problems
    return drift


def judge(result: Dict, item: Corpus, fixed_root: Path) -> List[str]:
    """Every robustness failure of one corpus (input errors are not failures).

    A file Python refuses may be changed only into one it accepts: the
    repair of torch-era syntax (TL115's ``async=`` keyword)."""
    invalid = set(result["input_errors"])

    def about_invalid_file(problem: str) -> bool:
        for label in ("error: ", "fix error: "):
            if problem.startswith(label) and _error_path(problem[len(label):], item) in invalid:
                return True
        return False

    problems = [p for p in corpus.failures(result) if not about_invalid_file(p)]
    fix = result["fix"]
    problems += [f"changed a file Python refuses: {p}" for p in fix["changed_files"]
                 if p in item.not_compiling and corpus.compiles((fixed_root / p).read_bytes(), p) is not None]
    problems += [f"changed without findings: {p}" for p in fix["changed_without_findings"]]
    if fix.get("second_fixed_total"):
        problems.append(f"the second --fix fixed {fix['second_fixed_total']} more")
    for path, drift in result["ast_drift"].items():
        problems += [f"AST drift in {path}: {d}" for d in drift]
    for phase, codes in (("check", result["check"]["exit_codes"]), ("fix", fix["exit_codes"]),
                         ("second fix", fix.get("second_exit_codes", {})), ("recheck", fix.get("recheck_exit_codes", {}))):
        if "2" in codes and not invalid:
            problems.append(f"{phase}: exit status 2 without an input error")
        problems += [f"{phase}: exit status {c}" for c in codes if c not in ("0", "1", "2")]
    return list(dict.fromkeys(problems))


# --- reporting ------------------------------------------------------------------------


def report(results: Dict[str, Dict], codes: Sequence[str]) -> str:
    rows, total = [], Counter()
    keys = [k for k in results if not k.startswith("_")]
    for key in keys:
        r = results[key]
        if r.get("error"):
            rows.append([key, "-", "-", "-", "-", "-", "-", "-", "-", f"not measured: {r['error'][:70]}"])
            continue
        found = sum(r["check"]["findings"].values())
        fixed = sum(r["applied_fixes"].values())
        row = [key, r["files"], r["lines"], found, fixed, len(r["fix"]["changed_files"]),
               len(r["input_errors"]), len(r.get("skipped", {})), len(r["fix"].get("discarded", [])),
               len(r["failures"])]
        rows.append(row)
        names = ("files", "lines", "found", "fixed", "changed", "input", "skipped", "discarded", "failures")
        for name, value in zip(names, row[1:]):
            total[name] += value
    rows.append(["TOTAL", *(total[n] for n in ("files", "lines", "found", "fixed", "changed", "input", "skipped",
                                                "discarded", "failures"))])
    out = ["Corpora:", corpus.table(
        ["corpus", "files", "lines", "findings", "fixes", "files changed", "input errors", "skipped",
         "fixes discarded", "failures"], rows)]

    per_rule = []
    for code in codes:
        cells = []
        for key in keys:
            r = results[key]
            if r.get("error"):
                continue
            cells.append((r["check"]["findings"].get(code, 0), r["applied_fixes"].get(code, 0),
                          r["fix"].get("recheck_remaining", {}).get(code, 0)))
        found, fixed, left = (sum(c[i] for c in cells) for i in range(3))
        per_rule.append([code, found, fixed, left])
    out += ["", "Per rule (findings in the original; fixes applied by --fix --unsafe-fixes; findings left after):",
            corpus.table(["rule", "findings", "fixes", "left"], per_rule)]

    listed = [(key, path, e) for key in keys for path, e in results[key].get("input_errors", {}).items()]
    if listed:
        out += ["", f"Input errors ({len(listed)} files that Python refuses too; exit 2 for these only):"]
        out += [f"  {key}/{path}: torchlint: {e['torchlint']} | python: {e['python']}" for key, path, e in listed]
    discarded = [(key, m) for key in keys if not results[key].get("error") for m in results[key]["fix"]["discarded"]]
    if discarded:
        out += ["", f"Fixes discarded because they would have produced invalid code ({len(discarded)}; never written):"]
        out += [f"  {key}: {m}" for key, m in discarded]
    skipped = [(key, path, m) for key in keys for path, m in results[key].get("skipped", {}).items()]
    if skipped:
        out += ["", f"Skipped with a warning ({len(skipped)} valid files torchlint cannot analyse; exit status unaffected):"]
        out += [f"  {key}/{path}: {m}" for key, path, m in skipped]
    failed = [(key, p) for key in keys for p in results[key].get("failures", [])]
    out += ["", f"Failures: {len(failed)}"] + [f"  {key}: {p}" for key, p in failed]
    return "\n".join(out)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", default=str(REPO / ".cache" / "scale"), help="copies and downloads (default: .cache/scale)")
    parser.add_argument("--corpora", default="examples,cpython,transformers,old",
                        help="comma-separated: examples (the rules' own), cpython, transformers, old (default: all)")
    parser.add_argument("--packages", metavar="LIST", help="old packages to use (NAME or NAME==VERSION; default: bench/corpus.py's list)")
    parser.add_argument("--transformers-version", default=TRANSFORMERS_VERSION)
    parser.add_argument("--sample", type=int, help="at most this many files per corpus (a deterministic sample)")
    parser.add_argument("--max-lines", type=int, help="sample only files of at most this many lines")
    parser.add_argument("--no-opt-in", action="store_true", help="run the default rules only")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per torchlint run")
    parser.add_argument("--chunk-lines", type=int, default=6000, help="lines of code per torchlint run")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs torchlint and pip")
    parser.add_argument("--json", metavar="PATH", help="write every number as JSON")
    parser.add_argument("--torchlint-src", metavar="DIR",
                        help="directory holding the torchlint package to run (default: this checkout)")
    args = parser.parse_args(argv)

    wanted = {c.strip() for c in args.corpora.split(",") if c.strip()}
    unknown = wanted - {"examples", "cpython", "transformers", "old"}
    if unknown:
        parser.error(f"unknown corpora: {', '.join(sorted(unknown))}")
    cache = Path(args.cache).resolve()
    cache.mkdir(parents=True, exist_ok=True)
    sampling = dict(sample=args.sample, max_lines=args.max_lines)
    corpora: List[Corpus] = []
    if "examples" in wanted:
        corpora.append(examples_corpus(cache, Path(args.torchlint_src).resolve() if args.torchlint_src else REPO))
    if "cpython" in wanted:
        corpora.append(stdlib_corpus(cache, **sampling))
    if "transformers" in wanted:
        corpora.append(package_corpus(Package("transformers", args.transformers_version, "a large modern torch library"),
                                      cache, python=args.python, **sampling))
    if "old" in wanted:
        for package in corpus.select_packages(args.packages, False):
            corpora.append(package_corpus(package, cache, python=args.python, **sampling))
    for item in corpora:
        state = item.error or f"{len(item.files)} files, {sum(item.lines.values())} lines"
        print(f"{item.package.spec}: {state}", file=sys.stderr)
    if not any(c.files for c in corpora):
        print("scale: nothing to measure", file=sys.stderr)
        return 2
    source = Path(args.torchlint_src).resolve() if args.torchlint_src else REPO
    results = measure(corpora, cache, args.jobs, args.timeout, args.chunk_lines, not args.no_opt_in, args.python,
                      source, log=lambda m: print(m, file=sys.stderr))
    codes = corpus.rule_codes({k: v for k, v in results.items() if not k.startswith("_")}, source, args.python)
    print(report(results, codes))
    print(f"\n({results['_seconds']:.0f}s; fixed copies in {cache / 'fixed'}, diffs in {cache / 'diffs'})")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    failed = any(r.get("failures") for k, r in results.items() if not k.startswith("_"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
