#!/usr/bin/env python3
"""libcst's peak memory on one large def: the whole text parsed at once against
the text parsed in pieces (``engine/splicing.chunked_module``, which cuts a large
def's body into parts too).

Each measurement runs in a fresh process (peak RSS only grows), on the
``data_index`` input of ``bench/bounds.py`` (``loss = F.mse_loss(a, b)`` and
``total = total + loss.data[0]``, n times in one def)::

    python bench/parse_memory.py                # n = 1,600 / 3,200 / 6,400
    python bench/parse_memory.py --n 12800 --src /path/to/other-checkout

Prints the text's size, the baseline RSS of the process before the parse, the
peak after it and the CPU time of the parse, for each way.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

CHILD = """
import resource, sys, time
sys.path.insert(0, {bench!r})
import bounds
import libcst
from torchlint.core.source import SourceFile
from torchlint.engine.linter import PIECE_CHARS
from torchlint.engine.splicing import chunked_module

text = bounds.source("data_index", {n})
source = SourceFile(text)
lines, tree = source.lines, source.tree
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.process_time()
module = libcst.parse_module(text) if {way!r} == "whole" else chunked_module(text, lines, tree, PIECE_CHARS)
cpu = time.process_time() - start
assert module.code == text
print(len(text), before // 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, round(cpu, 2))
"""


def measure(src: str, n: int, way: str) -> list:
    bench = str(Path(__file__).resolve().parent)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
    out = subprocess.run([sys.executable, "-c", CHILD.format(bench=bench, n=n, way=way)], env=env,
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    return out.stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, action="append", help="reads in the def (default 1,600, 3,200, 6,400)")
    parser.add_argument("--src", default=str(Path(__file__).resolve().parent.parent), help="checkout to measure")
    args = parser.parse_args()
    print("| n | KB | way | RSS before MB | peak RSS MB | parse CPU s |")
    print("|---|---:|---|---:|---:|---:|")
    for n in args.n or [1_600, 3_200, 6_400]:
        for way in ("whole", "pieces"):
            size, before, peak, cpu = measure(args.src, n, way)
            print(f"| {n:,} | {int(size) // 1024} | {way} | {before} | {peak} | {cpu} |", flush=True)


if __name__ == "__main__":
    main()
