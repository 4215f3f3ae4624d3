#!/usr/bin/env python3
"""What ``--watch``'s polling costs, and how soon it reacts (issue 37).

For trees of 100, 1,000 and 10,000 small files it prints, side by side, the
CPU time of one poll (listing the files to check again and stat-ing each,
``run/watch.py``'s ``snapshot``), the wait before the next poll, that cost
as a share of one core, and a check of the tree that finds nothing (``--no-cache``),
measured once. Then, on the 100-file tree, the wall time from writing a
file to the ``File change detected...`` line of a running ``torchlint
--watch`` (median of 5)::

    python bench/watch_poll.py

Standard library only (and torchlint, from ``PYTHONPATH`` or installed).
"""

from __future__ import annotations

import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

from torchlint.frontends.cli import build_parser
from torchlint.rules import rule_specs
from torchlint.run.config import resolve
from torchlint.run.watch import INTERVAL, MAX_POLL_SHARE, snapshot

SOURCE = "import torch\n\n\ndef f(x):\n    return torch.relu(x) + 1\n"


def make_tree(root: str, files: int) -> None:
    for index in range(files):
        folder = os.path.join(root, f"pkg{index // 100}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"m{index}.py"), "w") as handle:
            handle.write(SOURCE)


def poll_cpu(root: str) -> float:
    cwd = os.getcwd()
    os.chdir(root)
    try:
        options = resolve(build_parser().parse_args(["--isolated", "."]), rule_specs())
        samples = []
        for _ in range(7):
            start = time.process_time()
            snapshot(options)
            samples.append(time.process_time() - start)
        return statistics.median(samples)
    finally:
        os.chdir(cwd)


def check_cpu(root: str) -> float:
    before = os.times()
    subprocess.run([sys.executable, "-m", "torchlint", "--isolated", "--no-cache", "-j1", "."], cwd=root,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def reaction(root: str) -> float:
    process = subprocess.Popen([sys.executable, "-m", "torchlint", "--isolated", "--watch", "."], cwd=root,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = SimpleNamespace(text="")

    def wait_for(count: int) -> None:
        while out.text.count("All checks passed.") < count:
            select.select([process.stdout], [], [], 60)
            out.text += os.read(process.stdout.fileno(), 65536).decode()

    try:
        wait_for(1)
        samples = []
        for round_ in range(5):
            start = time.monotonic()
            with open(os.path.join(root, "pkg0", "m0.py"), "a") as handle:
                handle.write(f"y{round_} = 1\n")
            while out.text.count("File change detected...") < round_ + 1:
                select.select([process.stdout], [], [], 60)
                out.text += os.read(process.stdout.fileno(), 65536).decode()
            samples.append(time.monotonic() - start)
            wait_for(round_ + 2)
        return statistics.median(samples)
    finally:
        process.terminate()
        process.wait()


def main() -> int:
    print(f"poll interval {INTERVAL} s")
    print(f"{'files':>6}  {'poll CPU ms':>11}  {'wait s':>6}  {'share of a core':>15}  {'check CPU s':>11}  "
          f"{'check/poll':>10}")
    with tempfile.TemporaryDirectory() as scratch:
        for files in (100, 1_000, 10_000):
            root = os.path.join(scratch, str(files))
            make_tree(root, files)
            poll = poll_cpu(root)
            check = check_cpu(root)
            wait = max(INTERVAL, poll / MAX_POLL_SHARE - poll)  # as run/watch.py waits
            print(f"{files:>6}  {poll * 1000:>11.1f}  {wait:>6.2f}  {poll / (wait + poll):>14.1%}  {check:>11.2f}  "
                  f"{check / poll:>10.0f}")
        latency = reaction(os.path.join(scratch, "100"))
        print(f"write -> 'File change detected...' (100 files, median of 5): {latency * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
