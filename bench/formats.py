#!/usr/bin/env python3
"""What each output format costs on real trees, checkout against checkout.

json, sarif and full preview every fix (``engine/textedits.py``); concise
does not. On old code, where many fixes drop a name (``x = Variable(x)``),
previews once cost ten times the check. This runs ``torchlint --no-cache -j1
--output-format FORMAT .`` in each corpus folder for every checkout given
(``--src``, first on ``PYTHONPATH``; default: the installed torchlint),
alternating checkouts and formats within each round, and prints the median
CPU seconds (user + system of the child) and each format's ratio to concise::

    python bench/formats.py --src ../before --src . /work/corpora/i14-eval-old/corpus

Standard library only.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from typing import Dict, List, Optional, Tuple

FORMATS = ("concise", "json", "sarif", "full")


def cpu_seconds(command: List[str], source: Optional[str], folder: str) -> float:
    env = dict(os.environ)
    if source:
        env["PYTHONPATH"] = os.path.abspath(source) + os.pathsep + env.get("PYTHONPATH", "")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", nargs="+", help="folders to check")
    parser.add_argument("--src", action="append", default=[], help="a checkout to time (repeatable)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--format", action="append", dest="formats", choices=FORMATS,
                        help="formats to time (default: all; concise is always timed)")
    args = parser.parse_args()
    formats = ["concise", *[f for f in (args.formats or FORMATS) if f != "concise"]]
    sources = args.src or [None]
    times: Dict[Tuple[Optional[str], str], List[float]] = {}
    for _ in range(args.rounds):
        for source in sources:
            for output in formats:
                # From inside each folder, as its users run it: the folder is the project.
                command = [sys.executable, "-m", "torchlint", "--isolated", "--no-cache", "-j1", "-q",
                           "--output-format", output, "."]
                seconds = sum(cpu_seconds(command, source, folder) for folder in args.corpora)
                times.setdefault((source, output), []).append(seconds)
    print(f"corpora: {' '.join(args.corpora)}; median of {args.rounds} rounds, CPU s")
    print("| checkout | " + " | ".join(formats) + " |")
    print("|---|" + "---:|" * len(formats))
    for source in sources:
        concise = statistics.median(times[(source, "concise")])
        cells = [f"{concise:.2f}"]
        for output in formats[1:]:
            seconds = statistics.median(times[(source, output)])
            cells.append(f"{seconds:.2f} ({seconds / concise:.1f}x)")
        print(f"| {source or 'installed'} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
