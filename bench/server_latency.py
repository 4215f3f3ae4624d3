"""How fast the warm language server answers an edit, and whether it leaks.

Drives ``torchlint server`` over stdio with the tests' LSP client
(tests/lsp_client.py), as an editor does, on a generated 2,000-line
training module with a few findings:

- first diagnostics: from didOpen (server already initialized: rules and
  engines were loaded while the editor waited for ``initialize``'s answer;
  nothing checked yet) to its publishDiagnostics, wall and server CPU;
- start-up: from starting the process to the first publishDiagnostics, with
  initialize, initialized and didOpen sent at once as an editor sends them
  (wall and server CPU; the median of three starts). Python's bytecode is
  cached as an installed package has it (``PYTHONPYCACHEPREFIX``, a folder
  of this run's, filled by a first, unmeasured start; where
  ``PYTHONDONTWRITEBYTECODE`` is set, every start would otherwise compile
  torchlint's sources, about 0.5 s of CPU);
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
  further 100 of ``--edits`` edits (debounce 0, each edit waits for its
  diagnostics), and, in a process of its own, the Python memory the same
  checks hold (tracemalloc after a full collection) after half and all of
  the edits: flat means no growth once the bounded caches are full.

``--src DIR`` (repeatable) measures the servers of other checkouts side by
side (their changes interleaved, so the load weighs on each alike).

The module has a TL104 finding in every eighth block (9 in 2,000 lines);
``--dense`` puts one in every block (72), which costs far more: every block
must then be parsed and analysed with libcst.

    python bench/server_latency.py [--lines 2000] [--changes 50] [--edits 1000] [--dense] [--src DIR]... [--write]
    python bench/server_latency.py --in-process [--changes 50]  # CPU: whole vs incremental vs ast.parse
    python bench/server_latency.py --retained [--edits 1000]    # tracemalloc only
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


# The edit kinds measured, each as editors send them (one didChange per
# edit), in pairs: an edit and the edit that follows it in the session (its
# undo, or the next step). A pair's second member is measured too when it
# has a label of its own. The targets of issue 37 hold for the first five.
KINDS = ("within a line", "Enter", "delete line", "paste 20 lines", "new statement")  # "insert line" pairs "delete line"
TARGETS = {"within a line": 50, "Enter": 50, "delete line": 50, "insert line": 50, "paste 20 lines": 50}


def _middle(lines: list, marker: str) -> int:
    """The index of the first line holding ``marker`` from the middle of ``lines`` on."""
    at = len(lines) // 2
    while marker not in lines[at]:
        at += 1
    return at


def paste_block(lines: list) -> list:
    """20 lines copied from other defs of the module (two training steps' bodies
    and lines of a forward), indented for a function body."""
    step = BLOCK.replace("{n}", "7").split("\n")[17:25]
    forward = ["    out = self.conv(x)", "    out = self.norm(out)", "    out = torch.sigmoid(out) * self.scale",
               "    out = self.norm(out)"]
    return step + step + forward


def kind_pairs(text: str, kind: str, round_: int) -> list:
    """[(label or None, text), ...]: the changes of one round of ``kind``, each
    measured under its label (None: not measured). Every round starts from a
    text of its own (a number changed in the middle def, not measured), so no
    measured text was seen before: the server would answer it from the
    results it keeps per text (undo is that quick)."""
    if kind == "within a line":
        return [(kind, edit(text, round_)), (kind, edit(text, round_ + 1000))]
    base = edit(text, 7000 + round_)
    lines = base.split("\n")
    at = _middle(lines, "loss = F.mse_loss(output, target)")
    changed = list(lines)
    if kind == "Enter":  # a new, indented empty line (then undone)
        changed.insert(at + 1, "    ")
        return [(None, base), (kind, "\n".join(changed)), (None, base)]
    if kind == "delete line":  # ``dd`` on a line another def also holds, then ``p`` puts it back a line lower
        step = _middle(lines, "optimizer.step()")
        del changed[step]
        put_back = list(changed)
        put_back.insert(step + 1, lines[step])
        return [(None, base), ("delete line", "\n".join(changed)), ("insert line", "\n".join(put_back))]
    if kind == "paste 20 lines":
        changed[at + 1:at + 1] = paste_block(lines)
        return [(None, base), (kind, "\n".join(changed)), (None, base)]
    if kind == "new statement":  # a line with a name the file has nowhere else (checked whole)
        changed.insert(at + 1, f"    debug_{round_} = loss.item()")
        return [(None, base), (kind, "\n".join(changed)), (None, base)]
    raise ValueError(kind)


ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--changes", type=int, default=50, help="rounds of each edit kind")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS),
                        help="the edit kinds to measure (default: all)")
    parser.add_argument("--burst", type=int, default=20)
    parser.add_argument("--edits", type=int, default=1000)
    parser.add_argument("--dense", action="store_true", help="a finding in every block (72 instead of 9)")
    parser.add_argument("--src", action="append", default=[],
                        help="a torchlint checkout whose server to measure (repeatable; default: this one); "
                             "several are measured side by side, their changes interleaved")
    parser.add_argument("--in-process", action="store_true",
                        help="only measure, in this process, the CPU time of checking a change whole, "
                             "incrementally, and of ast.parse, side by side (no server)")
    parser.add_argument("--retained", action="store_true",
                        help="only measure, in this process, the Python memory the server's checks retain "
                             "over --edits edits (tracemalloc; no server)")
    parser.add_argument("--write", action="store_true",
                        help="also write the figures into bench/RESULTS.md (its language-server section)")
    args = parser.parse_args()

    if args.in_process:
        print(json.dumps(in_process(make_module(args.lines, args.dense), args.changes, args.kinds), indent=2))
        return 0
    if args.retained:
        print(json.dumps(retained(make_module(args.lines, args.dense), args.edits)))
        return 0
    sources = [str(Path(src).resolve()) for src in args.src] or [str(ROOT)]
    root = Path(tempfile.mkdtemp(prefix="torchlint-lsp-bench-"))
    text = make_module(args.lines, args.dense)
    path = root / "model.py"
    path.write_text(text)
    results = {"lines": text.count("\n"), "changes": args.changes, "edits": args.edits,
               "servers": {src: {} for src in sources}}
    servers = results["servers"]
    for src in sources:
        servers[src]["startup"] = startup(src, root, path, text)
    clients = {src: LspClient(cwd=str(root), env=_env(src)) for src in sources}
    try:
        uris = {}
        for src, client in clients.items():
            client.initialize(root)
            time.sleep(0.5)  # initialized: the editor opens its first file a moment later
            cpu_before = cpu_ns(client.process.pid)
            start = time.perf_counter()
            uris[src] = client.open(path, text, version=1)
            first = client.diagnostics(uris[src], version=1)
            servers[src]["first_diagnostics_ms"] = round((time.perf_counter() - start) * 1000, 1)
            servers[src]["first_diagnostics_cpu_ms"] = round((cpu_ns(client.process.pid) - cpu_before) / 1e6, 1)
            servers[src]["findings"] = len(first["diagnostics"])
        samples = {src: {} for src in sources}
        parse_walls, parse_cpus = [], []
        version = 1
        for kind in args.kinds:
            for round_ in range(args.changes):
                for label, changed in kind_pairs(text, kind, round_):
                    version += 1
                    for src, client in clients.items():  # interleaved: the load weighs on each alike
                        time.sleep(0.25)  # longer than the default debounce (200 ms): a quiet spell
                        parse_wall, parse_cpu = timed_parse(changed)  # how busy the machine is now
                        cpu_before = cpu_ns(client.process.pid)
                        start = time.perf_counter()
                        client.change(uris[src], version, changed)
                        client.diagnostics(uris[src], version=version)
                        latency = (time.perf_counter() - start) * 1000
                        cpu = (cpu_ns(client.process.pid) - cpu_before) / 1e6
                        if label is None:
                            continue
                        parse_walls.append(parse_wall)
                        parse_cpus.append(parse_cpu)
                        sample = samples[src].setdefault(label, {"latency": [], "cpu": [], "wall_ratio": [],
                                                                 "cpu_ratio": []})
                        sample["latency"].append(latency)
                        sample["cpu"].append(cpu)
                        sample["wall_ratio"].append(latency / parse_wall)
                        sample["cpu_ratio"].append(cpu / parse_cpu if parse_cpu > 0 else float("nan"))
        results["ast_parse_ms"] = round(statistics.median(parse_walls), 1)
        results["ast_parse_cpu_ms"] = round(statistics.median(parse_cpus), 1)
        for src, by_kind in samples.items():
            servers[src]["kinds"] = {label: _summary(sample) for label, sample in by_kind.items()}
            first_kind = servers[src]["kinds"][args.kinds[0]]
            servers[src]["change_latency_ms"] = first_kind["latency_ms"]
            servers[src]["change_cpu_ms"] = first_kind["cpu_ms"]

        for src, client in clients.items():
            time.sleep(0.3)
            first_version = version + 1
            burst_version = version
            for round_ in range(args.burst):
                burst_version += 1
                client.change(uris[src], burst_version, edit(text, 5000 + round_))
                time.sleep(0.02)
            published = client.pending_diagnostics(5.0)
            servers[src]["burst"] = {
                "changes": args.burst,
                "published": len(published),
                "versions": [p.get("version") for p in published],
                "last_is_newest": bool(published) and published[-1].get("version") == burst_version,
                "first_version": first_version,
            }
    finally:
        for client in clients.values():
            client.shutdown()

    for src in sources:
        servers[src]["rss_kb"] = server_memory(src, root, path, text, args.edits)
        if args.edits:
            servers[src]["retained"] = retained_in(src, args.lines, args.dense, args.edits)
    results["load_average"] = round(os.getloadavg()[0], 1) if hasattr(os, "getloadavg") else None
    print(json.dumps(results, indent=2))
    if args.write:
        write_section(results, " ".join(sys.argv[1:]))
    return 0


def _summary(sample: dict) -> dict:
    latencies = sorted(sample["latency"])
    return {
        "latency_ms": {
            "median": round(statistics.median(latencies), 1),
            "p90": round(latencies[max(0, int(len(latencies) * 0.9) - 1)], 1),
            "min": round(latencies[0], 1),
            "max": round(latencies[-1], 1),
            "median_ratio_to_ast_parse": round(statistics.median(sample["wall_ratio"]), 2),
        },
        "cpu_ms": {
            "median": round(statistics.median(sample["cpu"]), 1),
            "median_ratio_to_ast_parse": round(statistics.median(r for r in sample["cpu_ratio"] if r == r), 2),
        },
    }


_BYTECODE = tempfile.mkdtemp(prefix="torchlint-lsp-bench-pyc-")


def _env(src: str) -> dict:
    """The environment that makes a Python process import torchlint from checkout
    ``src``, its bytecode cached in a folder of this run (as an installed package's is)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = _BYTECODE
    return env


def startup(src: str, root: Path, path: Path, text: str, starts: int = 3) -> dict:
    """Process start to the first publishDiagnostics, as an editor starts the server
    (initialize, initialized, didOpen at once): the medians of wall and server CPU
    time over ``starts`` starts, after one unmeasured start that caches the bytecode."""
    walls, cpus = [], []
    for number in range(starts + 1):
        start = time.perf_counter()
        client = LspClient(cwd=str(root), env=_env(src))
        try:
            client.initialize(root)
            uri = client.open(path, text, version=1)
            client.diagnostics(uri, version=1)
            wall, cpu = (time.perf_counter() - start) * 1000, cpu_ns(client.process.pid) / 1e6
        finally:
            client.close()  # only its start is measured
        if number:
            walls.append(wall)
            cpus.append(cpu)
    return {"wall_ms": round(statistics.median(walls), 1), "cpu_ms": round(statistics.median(cpus), 1)}


MEMORY_STEP = 100


def server_memory(src: str, root: Path, path: Path, text: str, edits: int) -> dict:
    """The server's RSS after opening and after every ``MEMORY_STEP`` further edits
    (debounce 0, each edit waits for its diagnostics)."""
    client = LspClient(cwd=str(root), env=_env(src))
    try:
        client.initialize(root, {"debounceMs": 0})
        uri = client.open(path, text, version=1)
        client.diagnostics(uri, version=1)
        memory = {0: rss_kb(client.process.pid)}
        for round_ in range(edits):
            client.change(uri, round_ + 2, edit(text, 10000 + round_))
            client.diagnostics(uri, version=round_ + 2)
            if (round_ + 1) % MEMORY_STEP == 0:
                memory[round_ + 1] = rss_kb(client.process.pid)
        return memory
    finally:
        client.shutdown()


def retained_in(src: str, lines: int, dense: bool, edits: int) -> dict:
    """``retained`` run in a process that imports torchlint from ``src``."""
    import subprocess

    command = [sys.executable, __file__, "--retained", "--lines", str(lines), "--edits", str(edits)]
    command += ["--dense"] if dense else []
    done = subprocess.run(command, env=_env(src), capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def retained(text: str, edits: int) -> dict:
    """The Python memory (tracemalloc, after a full collection) the server's
    checks (``Workbench``, as the server calls it, settled after each check, without the protocol) hold
    after the first and the second half of ``edits`` one-line edits: growth
    over the second half, when the bounded caches are full, is a leak."""
    import gc
    import tracemalloc

    from torchlint.frontends.cli import build_parser
    from torchlint.frontends.server import Workbench

    root = Path(tempfile.mkdtemp(prefix="torchlint-lsp-bench-"))
    (root / "pyproject.toml").write_text("[tool.torchlint]\n")
    path = str(root / "model.py")
    workbench = Workbench(build_parser().parse_args([]))
    # As the server does once the findings are published (checkouts that have it).
    settle = getattr(workbench, "settle", lambda path: None)
    workbench.check(path, text)
    settle(path)
    tracemalloc.start()
    held = []
    half = max(1, edits // 2)
    for round_ in range(edits + 1):
        if round_ % half == 0:
            gc.collect()
            held.append(tracemalloc.get_traced_memory()[0])
        if round_ < edits:
            workbench.check(path, edit(text, 20000 + round_))
            settle(path)
    tracemalloc.stop()
    return {"edits": edits, "held_kb": [round(b / 1024, 1) for b in held],
            "first_half_bytes_per_edit": round((held[1] - held[0]) / half, 1),
            "second_half_bytes_per_edit": round((held[-1] - held[1]) / half, 1)}


def in_process(text: str, changes: int, kinds=KINDS) -> dict:
    """CPU ms per change of the server's checks (``Workbench``) without the
    protocol, for each edit kind: incremental checks, whole checks (the
    document's last check forgotten each time) and ``ast.parse`` of the same
    texts, in alternating rounds so that the load weighs on all three alike."""
    import ast

    from torchlint.frontends.cli import build_parser
    from torchlint.frontends.server import Workbench

    root = Path(tempfile.mkdtemp(prefix="torchlint-lsp-bench-"))
    (root / "pyproject.toml").write_text("[tool.torchlint]\n")
    path = str(root / "model.py")
    whole, incremental = Workbench(build_parser().parse_args([])), Workbench(build_parser().parse_args([]))
    incremental.check(path, text)
    spent: dict = {}
    for kind in kinds:
        for round_ in range(changes):
            for label, changed in kind_pairs(text, kind, round_):
                incremental._results.clear()  # the texts repeat: check them, not their kept results
                for name, run in (("ast.parse", lambda: ast.parse(changed)),
                                  ("whole", lambda: (whole.forget(path), whole._results.clear(),
                                                     whole.check(path, changed))),
                                  ("incremental", lambda: incremental.check(path, changed))):
                    start = time.process_time()
                    run()
                    if label is not None:
                        spent.setdefault(label, {}).setdefault(name, []).append((time.process_time() - start) * 1000)
    report = {"lines": text.count("\n"), "changes": changes, "cpu_ms_median": {}, "cpu_ms_p90": {}}
    for label, by_name in spent.items():
        report["cpu_ms_median"][label] = {name: round(statistics.median(times), 1) for name, times in by_name.items()}
        report["cpu_ms_p90"][label] = {name: round(sorted(times)[max(0, int(len(times) * 0.9) - 1)], 1)
                                       for name, times in by_name.items()}
    return report


SECTION = "server_latency"


def write_section(results: dict, arguments: str) -> None:
    """Replace (or add) this script's section of RESULTS.md; benchmark.py keeps it when it rewrites the file."""
    path = Path(__file__).resolve().parent / "RESULTS.md"
    servers = results["servers"]
    names = {src: _checkout_name(src) for src in servers}
    load = results.get("load_average") or float("nan")
    first = next(iter(servers.values()))

    def row(label: str, cell, target: str = "") -> str:
        return "| " + " | ".join([label, *(cell(s) for s in servers.values()), target]) + " |"

    def rss(s: dict) -> str:
        sizes = {int(k): v for k, v in s["rss_kb"].items()}
        last = max(sizes)
        middle = min(sizes, key=lambda k: abs(k - last / 2))
        tail = (sizes[last] - sizes[middle]) / max(1, last - middle)
        head = (sizes[middle] - sizes[0]) / max(1, middle)
        return (f"{sizes[0] / 1024:.1f} MB after open, {sizes[last] / 1024:.1f} MB after {last} edits; "
                f"{head:+.2f} KB/edit over the first {middle}, {tail:+.2f} KB/edit over the rest")

    def held(s: dict) -> str:
        kept = s.get("retained")
        if not kept:
            return ""
        return (f"{kept['held_kb'][0]:.0f} / {kept['held_kb'][1]:.0f} / {kept['held_kb'][2]:.0f} KB: "
                f"{kept['first_half_bytes_per_edit']:+.0f} B/edit, then {kept['second_half_bytes_per_edit']:+.0f} B/edit")

    body = "\n".join([
        "## Language server (`torchlint server`)",
        "",
        f"`python bench/server_latency.py {arguments}`".replace(" `", "`"),
        f"({results['lines']}-line module, {first['findings']} findings; the servers' changes interleaved; "
        f"load average {load:.1f} at the end, on the 2-core machine shared with other work; "
        f"`ast.parse` of the text took {results['ast_parse_ms']:.0f} ms wall, {results['ast_parse_cpu_ms']:.0f} ms CPU "
        f"(medians, timed just before each change)).",
        "",
        "| measure | " + " | ".join(f"`{name}`" for name in names.values()) + " | target |",
        "| --- | " + " | ".join("---" for _ in names) + " | --- |",
        row("first diagnostics after didOpen (initialized: rules and engines loaded; wall, server CPU)",
            lambda s: f"{s['first_diagnostics_ms']:.0f} ms ({s['first_diagnostics_cpu_ms']:.0f} ms CPU)", "<= 500 ms"),
        row("start-up: process start to first diagnostics (initialize + didOpen at once; median of 3; wall, "
            "server CPU)", lambda s: f"{s['startup']['wall_ms']:.0f} ms ({s['startup']['cpu_ms']:.0f} ms CPU)"),
        *[row(f"diagnostics after an edit: **{kind}** (median of {results['changes']}; p90, min)",
              lambda s, kind=kind: _latency_cell(s, kind),
              f"median <= {TARGETS[kind]} ms, p90 <= {2 * TARGETS[kind]} ms" if kind in TARGETS else
              ("(checked whole: a form the file has nowhere else)" if kind == "new statement" else ""))
          for kind in first["kinds"]],
        *[row(f"server CPU time per edit: {kind} (median; all threads; ratio to `ast.parse`'s CPU time)",
              lambda s, kind=kind: _cpu_cell(s, kind)) for kind in first["kinds"]],
        row("burst: changes 20 ms apart, published; newest last",
            lambda s: f"{s['burst']['changes']} -> {s['burst']['published']}; "
                      f"{'yes' if s['burst']['last_is_newest'] else 'no'}", "gathered, newest last"),
        row(f"server RSS over {results['edits']} edits (debounce 0)", rss, "flat"),
        row("Python memory the checks hold (tracemalloc, in process, at 0 / half / all edits)", held, "flat"),
    ])
    section = f"\n<!-- begin {SECTION} -->\n{body}\n<!-- end {SECTION} -->\n"
    old = path.read_text(encoding="utf-8")
    pattern = re.compile(rf"\n<!-- begin {SECTION} -->\n.*?<!-- end {SECTION} -->\n", re.S)
    new = pattern.sub(lambda _: section, old) if pattern.search(old) else old + section
    path.write_text(new, encoding="utf-8")


def _cpu_cell(server: dict, kind: str) -> str:
    found = server["kinds"].get(kind)
    if found is None:
        return "-"
    cpu = found["cpu_ms"]
    return f"{cpu['median']:.0f} ms ({cpu['median_ratio_to_ast_parse']:.2f}x)"


def _latency_cell(server: dict, kind: str) -> str:
    found = server["kinds"].get(kind)
    if found is None:
        return "-"
    latency = found["latency_ms"]
    return f"**{latency['median']:.0f} ms** ({latency['p90']:.0f}, {latency['min']:.0f})"


def _checkout_name(src: str) -> str:
    """The checkout's commit (and "this checkout" for the one running the script)."""
    import subprocess

    try:
        commit = subprocess.run(["git", "-C", src, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = Path(src).name
    dirty = subprocess.run(["git", "-C", src, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return commit + (" + changes" if dirty else "")


if __name__ == "__main__":
    sys.exit(main())
