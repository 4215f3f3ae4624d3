"""The ``torchlint`` command.

Exit status: 0 when nothing is left to report, 1 when findings remain (or
``--diff`` has changes to show), 2 on usage errors and on files that could not
be read, decoded, parsed or written; other files are still checked.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional, Sequence, TextIO

from torchlint import __version__, rule_command
from torchlint.engine import Engine
from torchlint.files import discover
from torchlint.report import format_diagnostic, print_summary
from torchlint.rules import all_rules
from torchlint.runner import FileReport, process_file
from torchlint.selection import SelectionError, select_rules
from torchlint.settings import Settings, SettingsError, parse_version

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchlint",
        description="Find and fix deprecated and risky PyTorch code.",
        epilog=(
            "`torchlint rule CODE` prints a rule's documentation; `torchlint rule --all` lists the rules. "
            "To check a file or folder named `rule`, run `torchlint ./rule`."
        ),
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or directories to check (default: .)")
    parser.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    parser.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff, also apply fixes that change behaviour")
    parser.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    parser.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to check (e.g. TL1,TL201); opt-in rules run only when named by full code")
    parser.add_argument("--ignore", metavar="CODES", help="comma-separated codes or prefixes to skip")
    parser.add_argument(
        "--torch-version", metavar="X.Y",
        help="oldest torch the code must run on; advice that does not apply to it is skipped (default: no constraint)",
    )
    parser.add_argument("--version", action="version", version=f"torchlint {__version__}")
    return parser


def main(argv: Optional[Sequence[str]] = None, stdout: TextIO = None, stderr: TextIO = None) -> int:
    # libcst's visitors recurse once or twice per nesting level; long
    # operator chains in generated code need more than CPython's 1000.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 8000))
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == [rule_command.NAME]:  # only as the first argument: `torchlint ./rule` checks a path
        return rule_command.main(argv[1:], stdout, stderr)
    args = build_parser().parse_args(argv)
    try:
        rules = select_rules(all_rules(), args.select, args.ignore)
        settings = Settings(torch_version=parse_version(args.torch_version) if args.torch_version else None)
    except (SelectionError, SettingsError) as exc:
        print(f"torchlint: error: {exc}", file=stderr)
        return 2
    engine = Engine(rules, settings)
    status = 0
    reports: List[FileReport] = []
    for path, error in discover(args.paths or ["."]):
        if error:
            print(f"torchlint: error: {path}: {error}", file=stderr)
            reports.append(FileReport(path, errors=[error]))
            status = 2
            continue
        report = process_file(path, engine, args)
        reports.append(report)
        for message in report.warnings:
            print(f"torchlint: warning: {message}", file=stderr)
        for message in report.errors:
            print(f"torchlint: error: {message}", file=stderr)
            status = 2
        if args.diff:
            stdout.write(report.diff)
        else:
            for d in report.diagnostics:
                print(format_diagnostic(report.path, d), file=stdout)
    if args.diff:
        changed = any(report.diff for report in reports)
        return status or (1 if changed else 0)
    print_summary(reports, args, stdout)
    remaining = any(report.diagnostics for report in reports)
    return status or (1 if remaining else 0)


def entry_point() -> None:
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``torchlint src | head``): not our error to
        # report, and Python must not complain again while flushing at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 1
    except KeyboardInterrupt:
        print("torchlint: interrupted", file=sys.stderr)
        status = 130
    sys.exit(status)


if __name__ == "__main__":  # pragma: no cover
    entry_point()
