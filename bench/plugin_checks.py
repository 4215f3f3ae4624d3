"""What the flake8 plugin costs per file, without flake8 around it.

Walks the folders given, parses every ``.py`` file with Python's parser
(as flake8 does before calling plugins) and runs the plugin's checker on
it, all in this process. Prints the CPU seconds of the parses and of the
plugin's checks separately: the second is what the plugin adds to flake8's
own work, without flake8's worker processes and their noise, so two
checkouts can be compared side by side.

    python bench/plugin_checks.py /work/corpora/cache/corpora/transformers-5.23.0
    python bench/plugin_checks.py --torchlint-src ../other-checkout CORPUS

Module summaries are kept in a temporary cache folder that starts empty
(as in the benchmark's "flake8 + TL" row) unless ``--no-summaries``.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import tempfile
import time
from typing import List


def python_files(roots: List[str]) -> List[str]:
    found: List[str] = []
    for root in roots:
        for folder, subfolders, names in os.walk(root):
            subfolders.sort()
            found.extend(os.path.join(folder, name) for name in sorted(names) if name.endswith(".py"))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--torchlint-src", help="a checkout whose torchlint to time (default: the installed one)")
    parser.add_argument("--no-summaries", action="store_true", help="keep no module summaries")
    args = parser.parse_args()
    if args.torchlint_src:
        sys.path.insert(0, os.path.abspath(args.torchlint_src))
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TORCHLINT_CACHE_DIR"] = cache
        from torchlint.core.settings import Settings
        from torchlint.frontends.flake8_plugin import TorchlintChecker

        TorchlintChecker._settings = Settings()
        TorchlintChecker._enable = ()
        TorchlintChecker._keep_summaries = not args.no_summaries
        TorchlintChecker._engine = None
        parsing = checking = 0.0
        files = findings = 0
        for path in python_files(args.roots):
            with open(path, encoding="utf-8", errors="replace") as handle:
                lines = handle.readlines()
            started = time.process_time()
            try:
                tree = ast.parse("".join(lines))
            except (SyntaxError, ValueError):
                continue
            parsing += time.process_time() - started
            started = time.process_time()
            findings += len(list(TorchlintChecker(tree, lines, path).run()))
            checking += time.process_time() - started
            files += 1
    source = os.path.dirname(os.path.dirname(os.path.abspath(sys.modules["torchlint"].__file__)))
    print(f"{files} files, {findings} findings; torchlint from {source}")
    print(f"parse {parsing:.2f} CPU s, plugin checks {checking:.2f} CPU s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
