#!/usr/bin/env python3
"""Do the command, the flake8 plugin and ``--stdin-filename`` report the same findings?

Over a corpus folder (a checkout of someone else's project), from inside it,
so every front end sees the same project (its modules, for the project
model): ``torchlint --output-format json .``, ``flake8 --select TL .``, and
``torchlint --stdin-filename PATH -`` for each file of a sample (a process
per file is slow, so ``--stdin-sample`` of them, spread over the tree).
Prints the counts and every finding one front end reports and another does
not; exit status 1 when they differ.

    python bench/parity.py /path/to/corpus [--stdin-sample 60]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from typing import List, Set, Tuple

Finding = Tuple[str, int, int, str]  # path, line, column (from 1), code

_FLAKE8_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<code>TL\d{3}) ")


def command_findings(root: str, extra: List[str]) -> Set[Finding]:
    result = subprocess.run([sys.executable, "-m", "torchlint.frontends.cli", "--no-cache", "--output-format", "json",
                             *extra], cwd=root, capture_output=True, text=True)
    found = set()
    for item in json.loads(result.stdout or "[]"):
        if item["code"]:
            path = os.path.normpath(item["filename"])
            found.add((path, item["location"]["row"], item["location"]["column"], item["code"]))
    return found


def flake8_findings(root: str) -> Set[Finding]:
    result = subprocess.run([sys.executable, "-m", "flake8", "--select", "TL", "."], cwd=root,
                            capture_output=True, text=True)
    found = set()
    for line in result.stdout.splitlines():
        match = _FLAKE8_LINE.match(line)
        if match:
            found.add((os.path.normpath(match["path"]), int(match["line"]), int(match["column"]), match["code"]))
    return found


def stdin_findings(root: str, paths: List[str]) -> Set[Finding]:
    found = set()
    for path in paths:
        with open(os.path.join(root, path), encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read()
        result = subprocess.run([sys.executable, "-m", "torchlint.frontends.cli", "--no-cache", "--output-format",
                                 "json", "--stdin-filename", path, "-"], cwd=root, input=text, capture_output=True,
                                text=True)
        for item in json.loads(result.stdout or "[]"):
            if item["code"]:
                found.add((os.path.normpath(path), item["location"]["row"], item["location"]["column"], item["code"]))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("--stdin-sample", type=int, default=60, help="files checked through --stdin-filename")
    args = parser.parse_args()
    root = os.path.abspath(args.corpus)
    command = command_findings(root, ["."])
    flake8 = flake8_findings(root)
    files = sorted({path for path, _, _, _ in command})
    step = max(1, len(files) // max(1, args.stdin_sample))
    sample = files[::step][: args.stdin_sample]
    through_stdin = stdin_findings(root, sample)
    of_sample = {f for f in command if f[0] in set(sample)}
    print(f"{root}: command {len(command)}, flake8 {len(flake8)}; "
          f"stdin sample {len(sample)} files: command {len(of_sample)}, stdin {len(through_stdin)}")
    differ = False
    for name, one, other in (("command only", command, flake8), ("flake8 only", flake8, command),
                             ("command only (sample)", of_sample, through_stdin),
                             ("stdin only (sample)", through_stdin, of_sample)):
        for finding in sorted(one - other):
            differ = True
            print(f"  {name}: {finding[0]}:{finding[1]}:{finding[2]}: {finding[3]}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
