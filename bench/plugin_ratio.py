"""CPU of flake8 alone and flake8 with the TL plugin on a corpus, side by side.

    python bench/plugin_ratio.py CORPUS [ROUNDS]

Each round runs ``flake8 --isolated -j 2`` once with flake8's default checks
(``--select E,F,W,C90``) and once with the plugin's too (``E,F,W,C90,TL``,
``--torchlint-no-cache``), alternating the order between rounds so a machine
that slows down weighs on both alike; prints every run and the ratio of the
minimums (issue 33's budget: the plugin stays within 1.10x flake8 alone).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
from typing import Dict, List

RUNS = {
    "flake8 alone": ["--select", "E,F,W,C90"],
    "flake8 + TL": ["--select", "E,F,W,C90,TL", "--torchlint-no-cache"],
}


def cpu_of(command: List[str], folder: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__.strip().split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    corpus, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2
    times: Dict[str, List[float]] = {name: [] for name in RUNS}
    with tempfile.TemporaryDirectory() as folder:  # no configuration of a checkout is found
        for round_number in range(rounds):
            order = list(RUNS) if round_number % 2 == 0 else list(reversed(RUNS))
            for name in order:
                seconds = cpu_of([sys.executable, "-m", "flake8", "--isolated", "-j", "2", *RUNS[name], corpus], folder)
                times[name].append(seconds)
                print(f"{name}: {seconds:.1f} CPU s", flush=True)
    alone, plugin = min(times["flake8 alone"]), min(times["flake8 + TL"])
    print(f"min flake8 alone {alone:.1f}, min flake8 + TL {plugin:.1f} CPU s: {plugin / alone:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
