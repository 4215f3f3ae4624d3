#!/usr/bin/env python3
"""Growth of time and memory on the hostile inputs of issue 36 (items 9-11).

Each case is written at N, 2N and 4N units (``--scale`` multiplies the
default N) and checked by the real command, each run in a fresh process;
prints user+system CPU time, peak RSS and the ratio of each doubling
(linear: about 2; quadratic: about 4). ``--src DIR`` (repeatable) measures
another checkout's torchlint side by side, as ``bench/many_findings.py``::

    python bench/bounds.py --src /path/to/main-checkout --src .
    python bench/bounds.py --case forwarding --case noqa --scale 2

``tests/test_growth.py`` runs the same generators at small sizes.
Standard library only.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List

HEADER = ["import torch", "import torch.nn.functional as F", ""]
# Default N of each case (measured at N, 2N, 4N).
SIZES = {"forwarding": 250, "reassignment": 1_000, "data_index": 1_000, "per_file_ignores": 25_000,
         "noqa": 12_500, "loss_chain": 1_000, "name_chain": 2_000, "call_chain": 2_000,
         "attribute_chain": 2_000, "module_chain": 2_000, "long_line": 1_000}

# Chains through different names (issue 36, leftover of item 11): the first
# link, the n-th, and the read that asks whether the last is a 0-dim tensor
# (TL101 reports it: the fact travelled the whole chain).
CHAINS = {
    "name_chain": ("a0 = F.mse_loss(p, q)", "a{i} = a{j} + 1", "return a{i}.data[0]"),
    "call_chain": ("a0 = F.mse_loss(p, q)", "a{i} = torch.abs(a{j})", "return a{i}.data[0]"),
    "attribute_chain": ("a0 = F.mse_loss(p, q)", "a{i} = a{j}.detach()", "return a{i}.data[0]"),
    "module_chain": ("a0 = F.mse_loss(torch.zeros(3), torch.ones(3))", "a{i} = a{j} * 2", "y = a{i}.data[0]"),
}


def source(case: str, n: int) -> str:
    lines: List[str] = list(HEADER)
    if case == "forwarding":  # a chain of forwarding defs, the last called at module level
        lines += ["def f0(a, b):", "    return a.data[0] + b"]
        for i in range(1, n):
            lines += [f"def f{i}(a, b):", f"    return f{i - 1}(a, b)"]
        lines += [f"x = f{n - 1}(torch.zeros(3), 1)", "y = x.data[0]"]
    elif case == "reassignment":  # one name rebound n times in one def
        lines += ["def g(x):", "    y = x"] + ["    y = y + 1"] * n + ["    return y.data[0]"]
    elif case == "data_index":  # n findings in one def, the loss rebound each time
        lines += ["def g(a, b):", "    total = 0"]
        lines += ["    loss = F.mse_loss(a, b)", "    total = total + loss.data[0]"] * n
        lines += ["    return total"]
    elif case == "noqa":  # a suppressed finding on every line
        lines += [f"y{i} = F.upsample(x)  # noqa" for i in range(n)]
    elif case == "loss_chain":  # issue 36, item 10: one chain of n links
        lines += ["def g(a, b):", "    loss = F.mse_loss(a, b)", "    total = 0"]
        lines += ["    loss = loss + F.mse_loss(a, b)"] * n
        lines += ["    return loss.data[0]"]
    elif case == "per_file_ignores":
        lines += ["y = F.upsample(x)"]
    elif case == "long_line":  # n findings on one line (19 characters each; over 100,000 the file is refused)
        lines += ["; ".join(["y = F.upsample(x)"] * n)]
    elif case in CHAINS:  # a chain through n different names, then a value fact asked of the last
        first, link, last = CHAINS[case]
        indent = "" if case == "module_chain" else "    "
        lines += [] if case == "module_chain" else ["def g(p, q):"]
        lines += [indent + first] + [indent + link.format(i=i, j=i - 1) for i in range(1, n)]
        lines += [indent + last.format(i=n - 1)]
    else:
        raise ValueError(case)
    return "\n".join(lines) + "\n"


def write_case(case: str, n: int, directory: Path) -> None:
    directory = Path(directory)
    (directory / "m.py").write_text(source(case, n))
    if case == "per_file_ignores":  # n entries, none of which matches m.py
        entries = "\n".join(f'"dir{i}/*.py" = ["TL101"]' for i in range(n))
        (directory / "pyproject.toml").write_text(f"[tool.torchlint.per-file-ignores]\n{entries}\n")


def arguments(case: str, directory: Path) -> List[str]:
    """The command line for ``case`` (the configuration is read only where the case has one)."""
    path = str(Path(directory) / "m.py")
    return [path] if case == "per_file_ignores" else ["--isolated", path]


def measure(src: str, case: str, n: int, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as directory:
        write_case(case, n, Path(directory))
        env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
        helper = ("import resource, subprocess, sys, time\n"
                  "start = time.perf_counter()\n"
                  "p = subprocess.run(sys.argv[1:], capture_output=True, timeout=float(%r))\n"
                  "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
                  "print(u.ru_utime + u.ru_stime, u.ru_maxrss, p.returncode, time.perf_counter() - start)\n"
                  % timeout)
        command = [sys.executable, "-c", helper, sys.executable, "-m", "torchlint", "--no-cache",
                   *arguments(case, Path(directory))]
        try:
            out = subprocess.run(command, capture_output=True, text=True, env=env, cwd=directory,
                                 timeout=timeout + 30).stdout.split()
            cpu, rss, status, wall = float(out[0]), int(out[1]), out[2], float(out[3])
        except (subprocess.TimeoutExpired, IndexError, ValueError):
            return {"cpu": float("nan"), "rss_mb": float("nan"), "status": "timeout", "wall": timeout}
    return {"cpu": cpu, "rss_mb": rss / 1024, "status": status, "wall": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", action="append", help="checkout(s) to measure (default: this one)")
    parser.add_argument("--case", action="append", choices=sorted(SIZES), help="case(s) (default: all)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply each case's N")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    sources = args.src or [str(Path(__file__).resolve().parent.parent)]
    print("| case | N | checkout | CPU s (N / 2N / 4N) | ratios | peak RSS MB (N / 2N / 4N) | exit |")
    print("|---|---|---|---|---|---|---|")
    for case in args.case or [c for c in SIZES if c != "loss_chain" and c not in CHAINS]:
        n = int(SIZES[case] * args.scale)
        for src in sources:
            runs = [measure(src, case, n * factor, args.timeout) for factor in (1, 2, 4)]
            cpu = [r["cpu"] for r in runs]
            ratios = [b / a if a else float("nan") for a, b in zip(cpu, cpu[1:])]
            rss = " / ".join(f"{run['rss_mb']:.0f}" for run in runs)
            status = " / ".join(str(run["status"]) for run in runs)
            print(f"| {case} | {n:,} | {src} | {' / '.join(f'{c:.2f}' for c in cpu)} | "
                  f"{' / '.join(f'{r:.2f}' for r in ratios)} | {rss} | {status} |", flush=True)


if __name__ == "__main__":
    main()
