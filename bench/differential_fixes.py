#!/usr/bin/env python3
"""A long differential fix campaign (issue 34): fixes never change what working code computes.

Generates ``--count`` programs from the rules' examples (``tests/torch_code.py``:
import aliases, locals named like torch modules, keyword / positional
arguments, comments and continuations, blocks, lambdas, comprehensions,
walrus, ``match``, decorators), fixes each with the real engine (safe, then
unsafe) and runs the original and the safely fixed program under the
installed torch (``tests/differential.py``). Writes the figures (count, seed,
fixes per rule, failures with their programs) as JSON.

Usage::

    python bench/differential_fixes.py --count 2000 --seed 34 --json /tmp/differential.json

Exit status: 0 without failures, 1 with failures.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from differential import campaign  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000, help="programs to generate and judge")
    parser.add_argument("--seed", type=int, default=34, help="campaign seed (program i is the same for a seed)")
    parser.add_argument("--start", type=int, default=0, help="first program index (to replay a failure)")
    parser.add_argument("--json", type=Path, default=Path("differential_fixes.json"), help="where to write the result")
    args = parser.parse_args(argv)

    started = time.monotonic()

    def progress(report) -> None:
        if report.count % 100 == 0:
            print(f"{report.count} programs, {len(report.failures)} failures, "
                  f"{time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)

    report = campaign(args.seed, args.count, args.start, progress)
    result = report.as_json()
    import torch

    result.update(start=args.start, seconds=round(time.monotonic() - started, 1), torch=torch.__version__,
                  python=platform.python_version(),
                  command=f"python bench/differential_fixes.py --count {args.count} --seed {args.seed}"
                          + (f" --start {args.start}" if args.start else ""))
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    for failure in report.failures:
        print(failure.describe(), end="\n\n")
    print(f"{report.count} programs (seed {args.seed}): {report.safe_fixed} changed by safe fixes, "
          f"{report.compared} of them run and compared, {report.original_raised} whose original raised; "
          f"{report.unsafe_fixed} changed by unsafe fixes; {len(report.failures)} failures; "
          f"{result['seconds']} s. Written to {args.json}")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
