#!/usr/bin/env python3
"""How much of a command's CPU time goes to Python's cyclic garbage collector.

Runs a Python module as ``python -m`` would, in this process, and times every
collection through ``gc.callbacks``; at exit it prints, per generation, the
number of collections, their CPU seconds and the objects they freed, then the
process's CPU seconds. Run it with the Python of the environment to measure
(it imports nothing of torchlint), e.g. flake8 alone and with the plugin::

    FLAKE8_ONLY_VENV/bin/python bench/collector.py flake8 --isolated -j1 DIR
    .venv/bin/python bench/collector.py flake8 --isolated -j1 DIR
    .venv/bin/python bench/collector.py torchlint.frontends.cli --no-cache -j1 -q DIR

With ``-j1`` every check runs in this process, so the figures cover it all.
The command's own output goes where it always does; the summary goes to stderr.
"""

from __future__ import annotations

import gc
import runpy
import sys
import time
from typing import Dict, List


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: collector.py MODULE [ARGS...]")
    stats: Dict[int, List[float]] = {generation: [0, 0.0, 0] for generation in range(3)}
    started = [0.0]

    def timed(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.process_time()
            return
        entry = stats[info["generation"]]
        entry[0] += 1
        entry[1] += time.process_time() - started[0]
        entry[2] += info["collected"]

    gc.callbacks.append(timed)
    module, sys.argv = sys.argv[1], sys.argv[1:]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    finally:
        gc.callbacks.remove(timed)
        total = sum(entry[1] for entry in stats.values())
        for generation, (count, seconds, freed) in stats.items():
            sys.stderr.write(f"collector: generation {generation}: {int(count)} collections, "
                             f"{seconds:.2f} CPU s, {int(freed)} objects freed\n")
        sys.stderr.write(f"collector: {total:.2f} of {time.process_time():.2f} CPU s in collections\n")


if __name__ == "__main__":
    main()
