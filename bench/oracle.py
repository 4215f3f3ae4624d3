"""The runtime oracle (issue 33): label lines of real scripts by running them.

Runs each script of ``bench/migrate.py`` (44 real 2017-2018 scripts at pinned
commits, self-contained) as written, under the installed torch, through
``bench/oracle_harness.py``: once on the CPU, and once with a pretended GPU
when the script mentions ``cuda``. What each ``.data[0]`` / ``.numpy()[0]``
receiver was (0-dim or not) and whether each ``.numpy()`` met a tensor on
CUDA becomes a label in the format of ``bench/labels`` (path, line, code,
verdict, reason), written to ``--out``; ``judged.py score`` then scores
torchlint against it like against hand labels. Only executed lines get a
label: a line a run never reached says nothing.

- TL101 ``flag``: a run read ``.data[0]`` (or ``.numpy()[0]``) of a 0-dim
  value there (``IndexError`` since torch 0.4; the harness gave the number
  and went on, as torch 0.3 did); ``ok``: every read there met a row of a
  larger tensor.
- TL202 ``flag``: a run with the pretended GPU called ``.numpy()`` there on a
  tensor on CUDA; ``ok``: every such call met a CPU tensor, in a CUDA run or
  in a script that never mentions ``cuda``.

    python bench/oracle.py FOLDER [--mirrors /work/.mirror] [--out bench/labels/oracle_migrate.tsv]
    python bench/judged.py score --labels bench/labels/oracle_migrate.tsv --show fn,fp FOLDER/before
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import migrate  # noqa: E402

HARNESS = str(Path(__file__).resolve().parent / "oracle_harness.py")
HEADER = ("# Runtime oracle labels (issue 33): written by bench/oracle.py from runs of bench/migrate.py's scripts,\n"
          "# not by hand. path<TAB>line<TAB>code<TAB>flag|ok<TAB>reason (what the runs met there).\n")

Key = Tuple[str, int, str]  # (path in the corpus, line, record kind)


def run_script(script: "migrate.Script", path: Path, cuda: bool, timeout: int) -> Tuple[List[dict], str]:
    """The harness's records of one run, and how it ended ("" when it ran to its end)."""
    with tempfile.TemporaryDirectory() as scratch:
        record = os.path.join(scratch, "records.json")
        command = [sys.executable, HARNESS, path.name, "--record", record,
                   *(["--cuda"] if cuda else []), *(["--call", script.call] if script.call else [])]
        environment = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
        try:
            done = subprocess.run(command, cwd=path.parent, capture_output=True, text=True, timeout=timeout,
                                  env=environment)
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            ended = "" if done.returncode == 0 else (lines[-1] if lines else f"exit status {done.returncode}")
        except subprocess.TimeoutExpired:
            ended = f"timed out after {timeout} s"
        try:
            with open(record, encoding="utf-8") as handle:
                return json.load(handle), ended
        except (OSError, ValueError):
            return [], ended or "no records"


def collect(folder: Path, timeout: int) -> Tuple[Dict[Key, Dict[str, int]], Dict[str, bool], List[str]]:
    """Every record of every run, keyed by (corpus path, line, kind); whether each
    script mentions ``cuda``; and one line per run saying how it ended."""
    root = folder / "before"
    records: Dict[Key, Dict[str, int]] = defaultdict(lambda: defaultdict(int))
    mentions_cuda: Dict[str, bool] = {}
    log = []
    for script in migrate.SCRIPTS:
        path = root / script.repo.replace("/", "+") / script.path
        relative = path.relative_to(root).as_posix()
        mentions_cuda[relative] = "cuda" in path.read_text(encoding="utf-8", errors="replace")
        for cuda in (False, True) if mentions_cuda[relative] else (False,):
            found, ended = run_script(script, path, cuda, timeout)
            log.append(f"{relative} ({'pretended GPU' if cuda else 'CPU'}): {ended or 'ran to its end'}; "
                       f"{len(found)} records")
            for item in found:
                if os.path.abspath(item["file"]) != str(path.resolve()):
                    continue  # another module the script imported: not one of the scripts
                for what in ("zero", "more", "cuda", "cpu"):
                    if item.get(what):
                        kind = item["kind"] + ("@gpu" if cuda and item["kind"] == "numpy" else "")
                        records[(relative, item["line"], kind)][what] += item[what]
    return records, mentions_cuda, log


def labels(records: Dict[Key, Dict[str, int]], mentions_cuda: Dict[str, bool]) -> List[Tuple[str, int, str, str, str]]:
    found: Dict[Tuple[str, int, str], Tuple[str, str]] = {}
    reads: Dict[Tuple[str, int], Dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for (path, line, kind), counts in records.items():
        if kind in ("data0", "numpy0"):
            for what, count in counts.items():
                reads[(path, line)][what] += count
    for (path, line), counts in reads.items():
        zero, more = counts.get("zero", 0), counts.get("more", 0)
        if zero:
            found[(path, line, "TL101")] = ("flag", f"[runtime] {zero} of {zero + more} reads there met a 0-dim value")
        else:
            found[(path, line, "TL101")] = ("ok", f"[runtime] all {more} reads there met a row of a larger tensor")
    for (path, line, kind), counts in records.items():
        if kind == "numpy@gpu":
            if counts.get("cuda"):
                found[(path, line, "TL202")] = (
                    "flag", f"[runtime] with a GPU, {counts['cuda']} of {counts['cuda'] + counts.get('cpu', 0)} "
                            ".numpy() calls there met a tensor on CUDA")
            else:
                found[(path, line, "TL202")] = ("ok", f"[runtime] with a GPU, all {counts['cpu']} .numpy() calls "
                                                      "there met CPU tensors")
        elif kind == "numpy" and not mentions_cuda[path] and (path, line, "TL202") not in found:
            found[(path, line, "TL202")] = ("ok", "[runtime] the script never mentions cuda: its tensors stay on the CPU")
    return sorted((path, line, code, verdict, reason) for (path, line, code), (verdict, reason) in found.items())


def write(rows, out: Path) -> None:
    with open(out, "w", encoding="utf-8") as handle:
        handle.write(HEADER)
        for path, line, code, verdict, reason in rows:
            handle.write(f"{path}\t{line}\t{code}\t{verdict}\t{reason}\n")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="where migrate.py's scripts are fetched (emptied first)")
    parser.add_argument("--mirrors", type=Path, help="local git mirrors instead of the network")
    parser.add_argument("--out", type=Path, default=Path("bench/labels/oracle_migrate.tsv"))
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--reuse", action="store_true", help="run the scripts already in FOLDER/before")
    args = parser.parse_args(argv)
    if not args.reuse:
        migrate.prepare(args.folder, args.mirrors)
    records, mentions_cuda, log = collect(args.folder, args.timeout)
    rows = labels(records, mentions_cuda)
    write(rows, args.out)
    print("\n".join(log))
    by_code: Dict[Tuple[str, str], int] = defaultdict(int)
    for _, _, code, verdict, _ in rows:
        by_code[(code, verdict)] += 1
    print(f"{len(rows)} labels in {args.out}: " + ", ".join(f"{code} {verdict} {n}" for (code, verdict), n in
                                                         sorted(by_code.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
