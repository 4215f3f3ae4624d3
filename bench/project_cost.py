"""What the project model costs inside a cold run (issue 14: "the cost of the index stated separately").

Runs ``torchlint --no-cache -j1 -q`` in this process on the folders given
and times, with the process's CPU clock, every question the checked files
ask the project model (``ModuleLink``: what a project function returns,
what a star import binds, ... and whether a name is a version flag) and the
result cache's dependency list. Nested questions count once, in the
outermost. Prints the run's CPU seconds, the project model's, and its share.

    python bench/project_cost.py /work/corpora/cache/src/transformers-5.23.0
    python bench/project_cost.py --torchlint-src ../other-checkout CORPUS

The questions are wrapped by this script, not by torchlint: nothing in the
product measures itself. The wrapping costs a little; the share is an upper
bound.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import resource
import sys
import time
from typing import Callable, List

# The public questions a checked file's inference asks (analysis/project.py).
LINK_QUESTIONS = ("local", "absolute", "call_value", "member_value", "forwarded", "star_exports",
                  "member_forwarded", "returns_integer_valued")
PROJECT_QUESTIONS = ("is_version_flag", "dependencies", "register")


class Clock:
    def __init__(self) -> None:
        self.seconds = 0.0
        self.questions = 0
        self._depth = 0

    def wrap(self, method: Callable) -> Callable:
        @functools.wraps(method)
        def timed(*args, **kwargs):
            if self._depth:
                return method(*args, **kwargs)
            self._depth += 1
            self.questions += 1
            start = time.process_time()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds += time.process_time() - start
                self._depth -= 1

        return timed


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchlint-src", help="checkout whose torchlint to measure (default: the installed one)")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    if args.torchlint_src:
        sys.path.insert(0, args.torchlint_src)
    from torchlint.analysis import project
    from torchlint.frontends import cli

    clock = Clock()
    for name in LINK_QUESTIONS:
        if hasattr(project.ModuleLink, name):
            setattr(project.ModuleLink, name, clock.wrap(getattr(project.ModuleLink, name)))
    for name in PROJECT_QUESTIONS:
        if hasattr(project.Project, name):
            setattr(project.Project, name, clock.wrap(getattr(project.Project, name)))
    start = cpu_seconds()
    findings = io.StringIO()
    with contextlib.redirect_stdout(findings):
        status = cli.main(["--no-cache", "-j1", "--isolated", *args.paths])
    total = cpu_seconds() - start
    lines = findings.getvalue().count("\n")
    print(f"torchlint from {project.__file__.rsplit('/analysis/', 1)[0]}; exit status {status}, {lines} output lines")
    print(f"run: {total:.2f} CPU s; project model: {clock.seconds:.2f} CPU s over {clock.questions} questions "
          f"({100 * clock.seconds / total:.1f} % of the run)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
