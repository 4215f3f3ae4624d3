"""How fast the warm language server answers an edit, and whether it leaks.

Drives ``torchlint server`` over stdio with the tests' LSP client
(tests/lsp_client.py), as an editor does, on a generated 2,000-line
training module with a few findings:

- first diagnostics: from didOpen (server already initialized, nothing
  checked yet: rules and engines load here) to its publishDiagnostics;
- latency: from a didChange that edits one line in the middle of the file to
  the publishDiagnostics of that version, after a quiet spell longer than the
  debounce time (the server then checks at once); median and 90th
  percentile over ``--changes`` edits;
- a typing burst: ``--burst`` changes 20 ms apart; how many diagnostics
  were published and that the last one is for the newest version;
- memory: the server's RSS (from /proc) after opening, and after every
  further 250 of ``--edits`` edits (debounce 0, each edit waits for its
  diagnostics): flat means no growth beyond noise.

    python bench/server_latency.py [--lines 2000] [--changes 50] [--edits 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from lsp_client import LspClient  # noqa: E402

BLOCK = '''\
class Block{n}(nn.Module):
    """A residual block; {n} of many."""

    def __init__(self, channels):
        super(Block{n}, self).__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm = nn.BatchNorm2d(channels)
        self.scale = {n}

    def forward(self, x):
        out = self.conv(x)
        out = self.norm(out)
        out = F.sigmoid(out) * self.scale
        return x + F.relu(out)


def train_step{n}(model, batch, target, optimizer):
    optimizer.zero_grad()
    output = model(batch)
    loss = F.mse_loss(output, target)
    loss.backward()
    optimizer.step()
    total = 0
    for value in range(10):
        total += value * {n}
    return loss.item() + total


'''

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"


def make_module(lines: int) -> str:
    text, n = HEADER, 0
    while text.count("\n") < lines:
        text += BLOCK.format(n=n)
        n += 1
    return text


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def edit(text: str, round_: int) -> str:
    """``text`` with one line in the middle changed (a different constant each round)."""
    lines = text.split("\n")
    middle = len(lines) // 2
    while "total += value *" not in lines[middle]:
        middle += 1
    lines[middle] = f"        total += value * {round_ + 1000}"
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--burst", type=int, default=20)
    parser.add_argument("--edits", type=int, default=1000)
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="torchlint-lsp-bench-"))
    text = make_module(args.lines)
    path = root / "model.py"
    path.write_text(text)
    results = {"lines": text.count("\n")}

    client = LspClient(cwd=str(root))
    try:
        client.initialize(root)
        start = time.perf_counter()
        uri = client.open(path, text, version=1)
        first = client.diagnostics(uri, version=1)
        results["first_diagnostics_ms"] = round((time.perf_counter() - start) * 1000, 1)
        results["findings"] = len(first["diagnostics"])

        latencies = []
        version = 1
        for round_ in range(args.changes):
            time.sleep(0.25)  # longer than the default debounce (200 ms): a quiet spell
            version += 1
            start = time.perf_counter()
            client.change(uri, version, edit(text, round_))
            client.diagnostics(uri, version=version)
            latencies.append((time.perf_counter() - start) * 1000)
        latencies.sort()
        results["change_latency_ms"] = {
            "median": round(statistics.median(latencies), 1),
            "p90": round(latencies[int(len(latencies) * 0.9) - 1], 1),
            "min": round(latencies[0], 1),
            "max": round(latencies[-1], 1),
        }

        time.sleep(0.3)
        first_version = version + 1
        for round_ in range(args.burst):
            version += 1
            client.change(uri, version, edit(text, 5000 + round_))
            time.sleep(0.02)
        published = client.pending_diagnostics(1.0)
        results["burst"] = {
            "changes": args.burst,
            "published": len(published),
            "versions": [p.get("version") for p in published],
            "last_is_newest": bool(published) and published[-1].get("version") == version,
            "first_version": first_version,
        }
    finally:
        client.shutdown()

    # Memory: a server without debounce, every edit checked.
    client = LspClient(cwd=str(root))
    try:
        client.initialize(root, {"debounceMs": 0})
        uri = client.open(path, text, version=1)
        client.diagnostics(uri, version=1)
        memory = [("after open", rss_kb(client.process.pid))]
        for round_ in range(args.edits):
            client.change(uri, round_ + 2, edit(text, 10000 + round_))
            client.diagnostics(uri, version=round_ + 2)
            if (round_ + 1) % 250 == 0:
                memory.append((f"after {round_ + 1} edits", rss_kb(client.process.pid)))
        results["rss_kb"] = dict(memory)
    finally:
        client.shutdown()
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
