"""CPU and wall time of a warm ``torchlint`` run (nothing changed) for two or
more checkouts, side by side: what checking the result cache's dependencies
costs.

Each checkout gets a cache directory of its own, filled by one cold run
(whose CPU is printed too); then each round runs every checkout once,
alternating the order between rounds, so a machine that slows down or
speeds up weighs on all of them alike. It prints each checkout's minimum and
median, the size of its results file and how many dependencies its entries
hold (modules read and places imports probed).

    python bench/warm_cache.py CORPUS ROUNDS CHECKOUT [CHECKOUT ...]

Each run is ``python -m torchlint -q --cache-dir DIR CORPUS`` with
``PYTHONPATH=CHECKOUT``, started in a temporary folder (see ``side_by_side.py``).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Tuple


def timed(command: List[str], env: Dict[str, str], folder: str) -> Tuple[float, float]:
    """(CPU seconds, wall seconds) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def cache_figures(cache: str) -> str:
    """The results file's size and the dependencies its entries hold."""
    path = os.path.join(cache, "results-v2.json")
    try:
        with open(path, encoding="utf-8") as handle:
            entries = json.load(handle).get("entries", {})
    except (OSError, ValueError):
        return "no results file"
    dependencies = [key for entry in entries.values() for key in entry.get("dependencies", {})]
    probes = sum(1 for key in dependencies if key.startswith(("probe:", "absent:")))
    return (f"{os.path.getsize(path) / 1e6:.2f} MB, {len(entries)} entries, {len(dependencies)} dependencies "
            f"({probes} import places)")


def main() -> int:
    if len(sys.argv) < 4:
        print("usage: " + __doc__.strip().split("\n\n")[2].strip(), file=sys.stderr)
        return 2
    corpus, rounds = os.path.abspath(sys.argv[1]), int(sys.argv[2])
    checkouts = [os.path.abspath(path) for path in sys.argv[3:]]
    cpu: Dict[str, List[float]] = {checkout: [] for checkout in checkouts}
    wall: Dict[str, List[float]] = {checkout: [] for checkout in checkouts}
    with tempfile.TemporaryDirectory() as folder:
        caches = {checkout: os.path.join(folder, f"cache-{index}") for index, checkout in enumerate(checkouts)}

        def command(checkout: str) -> List[str]:
            return [sys.executable, "-m", "torchlint", "-q", "--cache-dir", caches[checkout], corpus]

        for checkout in checkouts:
            cold, _ = timed(command(checkout), dict(os.environ, PYTHONPATH=checkout), folder)
            print(f"{checkout}: cold run filling the cache {cold:.2f} CPU s; {cache_figures(caches[checkout])}")
        for number in range(rounds):
            for checkout in checkouts if number % 2 == 0 else checkouts[::-1]:
                spent, elapsed = timed(command(checkout), dict(os.environ, PYTHONPATH=checkout), folder)
                cpu[checkout].append(spent)
                wall[checkout].append(elapsed)
    for checkout in checkouts:
        runs = " ".join(f"{t:.3f}" for t in cpu[checkout])
        print(f"{checkout}: warm min {min(cpu[checkout]):.3f} median {statistics.median(cpu[checkout]):.3f} CPU s, "
              f"wall median {statistics.median(wall[checkout]):.3f} s; runs {runs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
