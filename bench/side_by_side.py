"""CPU of a cold ``torchlint -j1`` run for two or more checkouts, side by side.

Each round runs every checkout once, alternating the order between rounds,
so a machine that slows down or speeds up weighs on all of them alike; it
prints each checkout's minimum, median and every run, in CPU seconds (user +
system of the run, from ``wait4``).

    python bench/side_by_side.py CORPUS ROUNDS CHECKOUT [CHECKOUT ...]

Each run is ``python -m torchlint --no-cache -j1 -q CORPUS`` with
``PYTHONPATH=CHECKOUT``, started in a temporary folder: ``python -m`` puts
the current folder first on ``sys.path``, so started inside a checkout it
would import that checkout whatever ``PYTHONPATH`` says.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
from typing import Dict, List


def cpu_of(command: List[str], env: Dict[str, str], folder: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> int:
    if len(sys.argv) < 4:
        print("usage: " + __doc__.strip().split("\n\n")[2].strip(), file=sys.stderr)
        return 2
    corpus, rounds = os.path.abspath(sys.argv[1]), int(sys.argv[2])
    checkouts = [os.path.abspath(path) for path in sys.argv[3:]]
    times: Dict[str, List[float]] = {checkout: [] for checkout in checkouts}
    with tempfile.TemporaryDirectory() as folder:
        for number in range(rounds):
            for checkout in checkouts if number % 2 == 0 else checkouts[::-1]:
                env = dict(os.environ, PYTHONPATH=checkout)
                command = [sys.executable, "-m", "torchlint", "--no-cache", "-j1", "-q", corpus]
                times[checkout].append(cpu_of(command, env, folder))
    for checkout, found in times.items():
        runs = " ".join(f"{t:.2f}" for t in found)
        print(f"{checkout}: min {min(found):.2f} median {statistics.median(found):.2f} CPU s; runs {runs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
