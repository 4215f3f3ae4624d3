"""How sharp and how safe are the rules' screens?

For each file of the given directories: which rules pass the textual screen,
which pass the outline screen too, and (with ``--verify``) whether the
findings with screens equal the findings of every rule on every file. A
screen that hides a finding is a bug; this prints each such file and exits 1.

    python bench/screens.py DIR [DIR ...] [--verify] [--every N] [--rules TL201,TL209]

Counts are per rule: files passing the textual screen, files the engine
analyses for the rule (its outline screen where it has one, else the textual
one), and files the rule actually flags.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from collections import Counter
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from torchlint.core.diagnostic import ParseError  # noqa: E402
from torchlint.engine.linter import Engine  # noqa: E402
from torchlint.rules import all_rules  # noqa: E402


def python_files(roots: List[str]) -> List[Path]:
    files: List[Path] = []
    for root in roots:
        path = Path(root)
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--verify", action="store_true", help="compare findings with every screen off")
    parser.add_argument("--every", type=int, default=1, help="take every Nth file")
    parser.add_argument("--rules", default="", help="comma-separated codes (default: every rule)")
    args = parser.parse_args()
    wanted = set(filter(None, args.rules.split(",")))
    rules = [r for r in all_rules() if not wanted or r.code in wanted]
    screened, unscreened = Engine(rules), Engine(rules, screens=False)
    textual, outlined, flagged = Counter(), Counter(), Counter()
    files = python_files(args.roots)[:: args.every]
    lines = analysed = analysed_lines = 0
    hidden = []
    started = time.process_time()
    for path in files:
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        n = source.count("\n")
        lines += n
        textual.update(r.code for r in rules if r.may_match(source))
        sharp = screened.rules_for(source, tree)  # what the engine runs: outline screens where rules have them
        outlined.update(r.code for r in sharp)
        if sharp:
            analysed += 1
            analysed_lines += n
        if not args.verify:
            continue
        try:
            with_screens = screened.check(source).diagnostics
            without = unscreened.check(source).diagnostics
        except ParseError:
            continue
        flagged.update(d.code for d in without)
        key = [(d.code, d.line, d.column) for d in with_screens]
        if key != [(d.code, d.line, d.column) for d in without]:
            missing = sorted({d.code for d in without} - {d.code for d in with_screens})
            hidden.append(f"{path}: screens hide {missing or 'findings'}")
    print(f"{len(files)} files, {lines:,} lines; {analysed} files ({analysed_lines:,} lines) pass some rule's "
          f"screens and reach libcst; {time.process_time() - started:.1f} s CPU")
    print(f"{'rule':6} {'textual':>8} {'engine':>8}" + (f" {'flagged':>8}" if args.verify else ""))
    for rule in rules:
        row = f"{rule.code:6} {textual[rule.code]:8} {outlined[rule.code]:8}"
        print(row + (f" {flagged[rule.code]:8}" if args.verify else ""))
    for line in hidden:
        print(line)
    return 1 if hidden else 0


if __name__ == "__main__":
    sys.exit(main())
