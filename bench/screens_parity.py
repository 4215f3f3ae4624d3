"""Do the screens ever hide a finding? The command with and without them.

The outline screens and narrowing decide which files, and which defs,
classes and methods in them, reach the rules' checks; they must never turn
away one that holds a finding. This runs ``torchlint --no-cache -j1`` on
each folder given twice, in this process: as users run it, and with the
screens off (``Engine(screens=False)``: every rule analyses every file
whole, slowly), and prints the findings only one of the two runs reports.

    python bench/screens_parity.py /work/corpora/modern/lightning-2.6.6
    python bench/screens_parity.py --torchlint-src ../other-checkout CORPUS

Run it from the folder users would run torchlint from (a project's root:
its configuration and torch floor apply). Exit status 0 when every folder
gives the same findings both ways, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from typing import List, Set


def findings(folder: str, screens: bool) -> Set[str]:
    from torchlint.engine import linter
    from torchlint.frontends.cli import main

    original = linter.Engine.__init__

    def unscreened(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        kwargs["screens"] = False
        original(self, *args, **kwargs)

    output = io.StringIO()
    if not screens:
        linter.Engine.__init__ = unscreened  # type: ignore[method-assign]
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(io.StringIO()):
            try:
                main(["--no-cache", "--isolated", "-j1", "--select", "TL,TL302,TL303,TL304",
                      "--output-format", "concise", folder])
            except SystemExit:
                pass
    finally:
        linter.Engine.__init__ = original  # type: ignore[method-assign]
    return {line for line in output.getvalue().splitlines() if ": TL" in line}


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--torchlint-src", help="a checkout whose torchlint to run (default: the installed one)")
    args = parser.parse_args(argv)
    if args.torchlint_src:
        sys.path.insert(0, os.path.abspath(args.torchlint_src))
    differ = False
    for folder in args.folders:
        screened, unscreened = findings(folder, True), findings(folder, False)
        print(f"{folder}: {len(screened)} findings with the screens, {len(unscreened)} without")
        for line in sorted(unscreened - screened):
            print(f"  only without the screens: {line}")
        for line in sorted(screened - unscreened):
            print(f"  only with the screens: {line}")
        differ = differ or screened != unscreened
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
