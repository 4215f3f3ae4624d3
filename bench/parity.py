#!/usr/bin/env python3
"""Do the command, the flake8 plugin, ``--stdin-filename`` and the language server report the same findings?

Over a corpus folder (a checkout of someone else's project), from inside it,
so every front end sees the same project (its modules, for the project
model): ``torchlint --output-format json .``, ``flake8 --select TL .``, and
``torchlint --stdin-filename PATH -`` for each file of a sample (a process
per file is slow, so ``--stdin-sample`` of them, spread over the tree), and
``torchlint server`` driven by the tests' LSP client (tests/lsp_client.py),
which opens each file of a sample (``--server-sample``; 0: every file with a
finding) and reads its published diagnostics. The command and flake8 also
run twice more with a fresh cache folder: the first run writes the project
model's module summaries, the second reads them; both must agree with the
run without a cache. Prints the counts and every finding one front end
reports and another does not; exit status 1 when they differ.

    python bench/parity.py /path/to/corpus [--stdin-sample 60] [--server-sample 0]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import List, Optional, Set, Tuple

Finding = Tuple[str, int, int, str]  # path, line, column (from 1), code

_FLAKE8_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<code>TL\d{3}) ")


def command_findings(root: str, extra: List[str], cache: Optional[str] = None) -> Set[Finding]:
    caching = ["--cache-dir", cache] if cache else ["--no-cache"]
    result = subprocess.run([sys.executable, "-m", "torchlint.frontends.cli", *caching, "--output-format", "json",
                             *extra], cwd=root, capture_output=True, text=True)
    found = set()
    for item in json.loads(result.stdout or "[]"):
        if item["code"]:
            path = os.path.normpath(item["filename"])
            found.add((path, item["location"]["row"], item["location"]["column"], item["code"]))
    return found


def flake8_findings(root: str, cache: Optional[str] = None) -> Set[Finding]:
    keep = [] if cache else ["--torchlint-no-cache"]
    env = dict(os.environ, TORCHLINT_CACHE_DIR=cache) if cache else None
    result = subprocess.run([sys.executable, "-m", "flake8", "--select", "TL", *keep, "."], cwd=root,
                            capture_output=True, text=True, env=env)
    found = set()
    for line in result.stdout.splitlines():
        match = _FLAKE8_LINE.match(line)
        if match:
            found.add((os.path.normpath(match["path"]), int(match["line"]), int(match["column"]), match["code"]))
    return found


def stdin_findings(root: str, paths: List[str]) -> Set[Finding]:
    found = set()
    for path in paths:
        with open(os.path.join(root, path), encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read()
        result = subprocess.run([sys.executable, "-m", "torchlint.frontends.cli", "--no-cache", "--output-format",
                                 "json", "--stdin-filename", path, "-"], cwd=root, input=text, capture_output=True,
                                text=True)
        for item in json.loads(result.stdout or "[]"):
            if item["code"]:
                found.add((os.path.normpath(path), item["location"]["row"], item["location"]["column"], item["code"]))
    return found


def server_findings(root: str, paths: List[str]) -> Set[Finding]:
    """What ``torchlint server`` publishes for each file of ``paths`` opened in it (LSP columns,
    UTF-16 code units, turned back into characters)."""
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from lsp_client import LspClient

    found = set()
    client = LspClient(cwd=root)
    try:
        client.initialize(Path(root))
        for path in paths:
            file = Path(root, path)
            text = file.read_text(encoding="utf-8", errors="surrogateescape")
            uri = client.open(file, text, version=1)
            published = client.diagnostics(uri, version=1)
            lines = text.splitlines()
            for diagnostic in published["diagnostics"]:
                if not diagnostic.get("code"):
                    continue  # a syntax error: the command reports it as such, not as a finding
                start = diagnostic["range"]["start"]
                line = lines[start["line"]] if start["line"] < len(lines) else ""
                found.add((os.path.normpath(path), start["line"] + 1, _characters(line, start["character"]) + 1,
                           diagnostic["code"]))
            client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    finally:
        client.shutdown()
    return found


def _characters(line: str, units: int) -> int:
    """The character column of UTF-16 column ``units`` in ``line``."""
    count = 0
    for index, character in enumerate(line):
        if count >= units:
            return index
        count += 2 if ord(character) > 0xFFFF else 1
    return len(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("--stdin-sample", type=int, default=60, help="files checked through --stdin-filename")
    parser.add_argument("--server-sample", type=int, default=0,
                        help="files opened in the language server (0: every file with a finding)")
    args = parser.parse_args()
    root = os.path.abspath(args.corpus)
    command = command_findings(root, ["."])
    flake8 = flake8_findings(root)
    kept = {}
    for name, run in (("command", command_findings), ("flake8", flake8_findings)):
        with tempfile.TemporaryDirectory() as cache:
            arguments = ([root, ["."], cache] if name == "command" else [root, cache])
            kept[f"{name}, writing summaries"] = run(*arguments)
            kept[f"{name}, reading them"] = run(*arguments)
    files = sorted({path for path, _, _, _ in command})
    step = max(1, len(files) // max(1, args.stdin_sample))
    sample = files[::step][: args.stdin_sample]
    through_stdin = stdin_findings(root, sample)
    of_sample = {f for f in command if f[0] in set(sample)}
    print(f"{root}: command {len(command)}, flake8 {len(flake8)}; "
          f"stdin sample {len(sample)} files: command {len(of_sample)}, stdin {len(through_stdin)}")
    served = files if args.server_sample <= 0 else files[::max(1, len(files) // args.server_sample)][: args.server_sample]
    through_server = server_findings(root, served)
    of_served = {f for f in command if f[0] in set(served)}
    print(f"  server: {len(served)} files opened: command {len(of_served)}, server {len(through_server)}")
    print("  with module summaries: " + ", ".join(f"{name} {len(found)}" for name, found in kept.items()))
    differ = False
    for name, found in kept.items():
        for finding in sorted(command ^ found):
            differ = True
            side = "command without cache only" if finding in command else f"{name} only"
            print(f"  {side}: {finding[0]}:{finding[1]}:{finding[2]}: {finding[3]}")
    for name, one, other in (("command only", command, flake8), ("flake8 only", flake8, command),
                             ("command only (sample)", of_sample, through_stdin),
                             ("stdin only (sample)", through_stdin, of_sample),
                             ("command only (server)", of_served, through_server),
                             ("server only", through_server, of_served)):
        for finding in sorted(one - other):
            differ = True
            print(f"  {name}: {finding[0]}:{finding[1]}:{finding[2]}: {finding[3]}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
