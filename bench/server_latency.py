"""How fast the warm language server answers an edit, and whether it leaks.

Drives ``torchlint server`` over stdio with the tests' LSP client
(tests/lsp_client.py), as an editor does, on a generated 2,000-line
training module with a few findings:

- first diagnostics: from didOpen (server already initialized, nothing
  checked yet: rules and engines load here) to its publishDiagnostics;
- latency: from a didChange that edits one line in the middle of the file to
  the publishDiagnostics of that version, after a quiet spell longer than the
  debounce time (the server then checks at once); median and 90th
  percentile over ``--changes`` edits. The machine is shared, so each
  change is also measured against ``ast.parse`` of the same text, timed in
  this process just before it: the ratio is what stays comparable across
  loads. Wall time, and the server's CPU time (all its threads, from
  /proc/PID/task/*/schedstat) against ``ast.parse``'s CPU time;
- a typing burst: ``--burst`` changes 20 ms apart; how many diagnostics
  were published and that the last one is for the newest version;
- memory: the server's RSS (from /proc) after opening, and after every
  further 250 of ``--edits`` edits (debounce 0, each edit waits for its
  diagnostics): flat means no growth beyond noise.

The module has a TL104 finding in every eighth block (9 in 2,000 lines);
``--dense`` puts one in every block (72), which costs far more: every block
must then be parsed and analysed with libcst.

    python bench/server_latency.py [--lines 2000] [--changes 50] [--edits 1000] [--dense] [--write]
    python bench/server_latency.py --in-process [--changes 50]  # CPU: whole vs incremental vs ast.parse
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
        out = {gate}(out) * self.scale
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


def make_module(lines: int, dense: bool = False) -> str:
    """About ``lines`` lines of blocks; a deprecated ``F.sigmoid`` (TL104) in
    every eighth block, or with ``dense`` in every block."""
    text, n = HEADER, 0
    while text.count("\n") < lines:
        gate = "F.sigmoid" if dense or n % 8 == 0 else "torch.sigmoid"
        text += BLOCK.format(n=n, gate=gate)
        n += 1
    return text


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def cpu_ns(pid: int) -> int:
    """CPU time the process has used so far, all threads (Linux)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that just ended
    return total


def timed_parse(text: str) -> tuple:
    """(wall ms, CPU ms) of one ``ast.parse`` of ``text`` here and now."""
    import ast

    wall, cpu = time.perf_counter(), time.process_time()
    ast.parse(text)
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


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
    parser.add_argument("--dense", action="store_true", help="a finding in every block (72 instead of 9)")
    parser.add_argument("--in-process", action="store_true",
                        help="only measure, in this process, the CPU time of checking a change whole, "
                             "incrementally, and of ast.parse, side by side (no server)")
    parser.add_argument("--write", action="store_true",
                        help="also write the figures into bench/RESULTS.md (its language-server section)")
    args = parser.parse_args()

    if args.in_process:
        print(json.dumps(in_process(make_module(args.lines, args.dense), args.changes), indent=2))
        return 0
    root = Path(tempfile.mkdtemp(prefix="torchlint-lsp-bench-"))
    text = make_module(args.lines, args.dense)
    path = root / "model.py"
    path.write_text(text)
    results = {"lines": text.count("\n"), "changes": args.changes, "edits": args.edits}

    client = LspClient(cwd=str(root))
    try:
        client.initialize(root)
        start = time.perf_counter()
        uri = client.open(path, text, version=1)
        first = client.diagnostics(uri, version=1)
        results["first_diagnostics_ms"] = round((time.perf_counter() - start) * 1000, 1)
        results["findings"] = len(first["diagnostics"])

        latencies, cpu_times, wall_ratios, cpu_ratios, parse_walls, parse_cpus = [], [], [], [], [], []
        version = 1
        server_pid = client.process.pid
        for round_ in range(args.changes):
            time.sleep(0.25)  # longer than the default debounce (200 ms): a quiet spell
            version += 1
            changed = edit(text, round_)
            parse_wall, parse_cpu = timed_parse(changed)  # how busy the machine is now
            cpu_before = cpu_ns(server_pid)
            start = time.perf_counter()
            client.change(uri, version, changed)
            client.diagnostics(uri, version=version)
            latency = (time.perf_counter() - start) * 1000
            cpu = (cpu_ns(server_pid) - cpu_before) / 1e6
            latencies.append(latency)
            cpu_times.append(cpu)
            parse_walls.append(parse_wall)
            parse_cpus.append(parse_cpu)
            wall_ratios.append(latency / parse_wall)
            cpu_ratios.append(cpu / parse_cpu if parse_cpu > 0 else float("nan"))
        latencies.sort()
        results["ast_parse_ms"] = round(statistics.median(parse_walls), 1)
        results["ast_parse_cpu_ms"] = round(statistics.median(parse_cpus), 1)
        results["change_latency_ms"] = {
            "median": round(statistics.median(latencies), 1),
            "p90": round(latencies[int(len(latencies) * 0.9) - 1], 1),
            "min": round(latencies[0], 1),
            "max": round(latencies[-1], 1),
            "median_ratio_to_ast_parse": round(statistics.median(wall_ratios), 2),
        }
        results["change_cpu_ms"] = {
            "median": round(statistics.median(cpu_times), 1),
            "median_ratio_to_ast_parse": round(statistics.median(r for r in cpu_ratios if r == r), 2),
        }

        time.sleep(0.3)
        first_version = version + 1
        for round_ in range(args.burst):
            version += 1
            client.change(uri, version, edit(text, 5000 + round_))
            time.sleep(0.02)
        published = client.pending_diagnostics(5.0)
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
    results["load_average"] = round(os.getloadavg()[0], 1) if hasattr(os, "getloadavg") else None
    print(json.dumps(results, indent=2))
    if args.write:
        write_section(results, " ".join(sys.argv[1:]))
    return 0


def in_process(text: str, changes: int) -> dict:
    """CPU ms per change of the server's checks (``Workbench``) without the
    protocol: whole checks (the document's last check forgotten each time),
    incremental ones, and ``ast.parse`` of the same texts, in alternating
    rounds so that the load weighs on all three alike."""
    import ast

    from torchlint.frontends.cli import build_parser
    from torchlint.frontends.server import Workbench

    root = Path(tempfile.mkdtemp(prefix="torchlint-lsp-bench-"))
    (root / "pyproject.toml").write_text("[tool.torchlint]\n")
    path = str(root / "model.py")
    whole, incremental = Workbench(build_parser().parse_args([])), Workbench(build_parser().parse_args([]))
    incremental.check(path, text)
    spent = {"whole": [], "incremental": [], "ast.parse": []}
    for round_ in range(changes):
        changed = edit(text, round_)
        for name, run in (("ast.parse", lambda: ast.parse(changed)),
                          ("whole", lambda: (whole.forget(path), whole.check(path, changed))),
                          ("incremental", lambda: incremental.check(path, changed))):
            start = time.process_time()
            run()
            spent[name].append((time.process_time() - start) * 1000)
    medians = {name: statistics.median(times) for name, times in spent.items()}
    return {"lines": text.count("\n"), "changes": changes,
            "cpu_ms_median": {name: round(value, 1) for name, value in medians.items()},
            "ratio_to_ast_parse": {name: round(value / medians["ast.parse"], 2) for name, value in medians.items()}}


SECTION = "server_latency"


def write_section(results: dict, arguments: str) -> None:
    """Replace (or add) this script's section of RESULTS.md; benchmark.py keeps it when it rewrites the file."""
    path = Path(__file__).resolve().parent / "RESULTS.md"
    latency, burst, memory = results["change_latency_ms"], results["burst"], results["rss_kb"]
    cpu = results["change_cpu_ms"]
    load = results.get("load_average", float("nan"))
    rss = ", ".join(f"{label} {kb / 1024:.1f} MB" for label, kb in memory.items())
    sizes = list(memory.values())
    # Growth over the second half of the edits (the first fills the caches).
    tail = (sizes[-1] - sizes[len(sizes) // 2]) / max(1, results.get("edits", 1) // 2) if len(sizes) > 2 else 0.0
    body = "\n".join([
        "## Language server (`torchlint server`)",
        "",
        f"`python bench/server_latency.py {arguments}`".replace(" `", "`"),
        f"({results['lines']}-line module, {results['findings']} findings; load average {load:.1f} at the end, "
        f"on the 2-core machine shared with other work).",
        "",
        "| measure | figure | target | met |",
        "| --- | --- | --- | --- |",
        f"| first diagnostics after didOpen (initialized, nothing loaded) | "
        f"{results['first_diagnostics_ms']:.0f} ms | | |",
        f"| diagnostics after a one-line change (median of {results.get('changes', '?')}) | "
        f"{latency['median']:.0f} ms (p90 {latency['p90']:.0f}, min {latency['min']:.0f}) | <= 50 ms | "
        f"{'yes' if latency['median'] <= 50 else 'no'} |",
        f"| the same, as a ratio to `ast.parse` of the changed text timed just before each change | "
        f"{latency['median_ratio_to_ast_parse']:.2f}x `ast.parse` (median; `ast.parse` took {results['ast_parse_ms']:.0f} ms)"
        f" | | |",
        f"| server CPU time per change (all threads) | {cpu['median']:.0f} ms, "
        f"{cpu['median_ratio_to_ast_parse']:.2f}x `ast.parse`'s CPU time ({results['ast_parse_cpu_ms']:.0f} ms) | | |",
        f"| burst: {burst['changes']} changes 20 ms apart | {burst['published']} published, "
        f"newest last: {'yes' if burst['last_is_newest'] else 'no'} | gathered, newest last | "
        f"{'yes' if burst['last_is_newest'] and burst['published'] < burst['changes'] else 'no'} |",
        f"| server RSS over {results.get('edits', '?')} edits | {rss}; second half {tail:+.1f} KB/edit | flat | "
        f"{'yes' if abs(tail) <= 1 else 'no'} |",
    ])
    section = f"\n<!-- begin {SECTION} -->\n{body}\n<!-- end {SECTION} -->\n"
    old = path.read_text(encoding="utf-8")
    pattern = re.compile(rf"\n<!-- begin {SECTION} -->\n.*?<!-- end {SECTION} -->\n", re.S)
    new = pattern.sub(lambda _: section, old) if pattern.search(old) else old + section
    path.write_text(new, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
