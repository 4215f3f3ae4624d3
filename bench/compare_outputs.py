"""Are two checkouts of torchlint byte-identical in what users see?

For a refactoring that must not change behaviour: runs the ``torchlint``
command of a baseline checkout and of this one side by side on corpora
(folders given on the command line, e.g. the ones ``benchmark.py`` builds
under ``.cache/bench/corpora``), with every rule selected, in every output
format, with ``--statistics``, ``--diff --unsafe-fixes``, and
``--fix --unsafe-fixes`` on two copies of each corpus, then compares stdout,
stderr, exit codes and the fixed trees byte for byte.

    python bench/compare_outputs.py --baseline ../base CORPUS_DIR [CORPUS_DIR ...]

``--normalise OLD=NEW`` replaces OLD by NEW in the baseline's output before
comparing, for texts that are meant to change (a module path that a rule's
documentation names, say); every replacement is listed in the report.

Each checkout runs from its own source tree (``PYTHONPATH``) with the
Python running this script, which must have torchlint's dependencies.
Exit status 0 when everything is identical, 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

HERE = Path(__file__).resolve().parent.parent
EVERY_RULE = "TL,TL302,TL303,TL304"
CHECKS: Sequence[Tuple[str, Sequence[str]]] = [
    ("concise", ["--output-format", "concise"]),
    ("full", ["--output-format", "full"]),
    ("json", ["--output-format", "json"]),
    ("sarif", ["--output-format", "sarif"]),
    ("github", ["--output-format", "github"]),
    ("statistics", ["--statistics"]),
    ("diff", ["--diff", "--unsafe-fixes"]),
]


def run(tree: Path, corpus: Path, arguments: Sequence[str]) -> Tuple[int, bytes, bytes]:
    env = dict(os.environ, PYTHONPATH=str(tree), NO_COLOR="1")
    command = [sys.executable, "-m", "torchlint", "--isolated", "--no-cache", "--select", EVERY_RULE,
               *arguments, corpus.name]
    done = subprocess.run(command, cwd=corpus.parent, env=env, capture_output=True)
    return done.returncode, done.stdout, done.stderr


def tree_digest(root: Path) -> Dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def normalised(outcome: Tuple[int, bytes, bytes], replacements: Sequence[Tuple[bytes, bytes]]):
    code, stdout, stderr = outcome
    for old, new in replacements:
        stdout, stderr = stdout.replace(old, new), stderr.replace(old, new)
    return code, stdout, stderr


def compare(baseline: Path, current: Path, corpus: Path, log,
            replacements: Sequence[Tuple[bytes, bytes]] = ()) -> List[str]:
    differences: List[str] = []
    for label, arguments in CHECKS:
        started = time.perf_counter()
        before, after = run(baseline, corpus, arguments), run(current, corpus, arguments)
        before = normalised(before, replacements)
        same = before == after
        lines = after[1].count(b"\n")
        log(f"  {label:10s} {'identical' if same else 'DIFFERENT'}: exit {after[0]}, "
            f"{lines} stdout lines, {len(after[2])} stderr bytes "
            f"({time.perf_counter() - started:.0f} s)")
        if not same:
            differences.append(f"{corpus.name} {label}")
    with tempfile.TemporaryDirectory() as scratch:
        fixed = {}
        for name, tree in (("baseline", baseline), ("current", current)):
            copy = Path(scratch) / name / corpus.name
            shutil.copytree(corpus, copy, symlinks=True)
            outcome = run(tree, copy, ["--fix", "--unsafe-fixes"])
            fixed[name] = (outcome, tree_digest(copy))
        same = fixed["baseline"] == fixed["current"]
        changed = sum(1 for path, digest in fixed["current"][1].items() if tree_digest_of(corpus, path) != digest)
        log(f"  {'fix':10s} {'identical' if same else 'DIFFERENT'}: {changed} files rewritten, "
            f"exit {fixed['current'][0][0]}")
        if not same:
            differences.append(f"{corpus.name} fix")
    return differences


def tree_digest_of(root: Path, relative: str) -> str:
    return hashlib.sha256((root / relative).read_bytes()).hexdigest()


def main(argv: Sequence[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the other checkout (its top folder)")
    parser.add_argument("--current", type=Path, default=HERE, help="default: this checkout")
    parser.add_argument("--normalise", action="append", default=[], metavar="OLD=NEW",
                        help="replace OLD by NEW in the baseline's output before comparing (repeatable)")
    parser.add_argument("corpora", nargs="+", type=Path)
    args = parser.parse_args(argv)
    replacements = [tuple(part.encode() for part in pair.split("=", 1)) for pair in args.normalise]
    for old, new in replacements:
        print(f"normalising the baseline's {old.decode()!r} to {new.decode()!r}")
    differences: List[str] = []
    for corpus in args.corpora:
        corpus = corpus.resolve()
        files = sum(1 for _ in corpus.rglob("*.py"))
        print(f"{corpus} ({files} .py files)", flush=True)
        differences += compare(args.baseline.resolve(), args.current.resolve(), corpus,
                               lambda line: print(line, flush=True), replacements)
    print("all identical" if not differences else f"{len(differences)} differ: {', '.join(differences)}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
