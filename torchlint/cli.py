"""The ``torchlint`` command.

Exit status: 0 when nothing is left to report, 1 when findings remain (or
``--diff`` has changes to show), 2 on usage errors and on files that could not
be read, decoded, parsed or written; other files are still checked.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from dataclasses import dataclass, field
from typing import Iterable, Iterator, List, Optional, Sequence, TextIO, Tuple

from torchlint import __version__
from torchlint.engine import Diagnostic, Engine, ParseError
from torchlint.rules import all_rules
from torchlint.selection import SelectionError, select_rules
from torchlint.settings import Settings, SettingsError, parse_version
from torchlint.source import SourceError, encode, physical_lines, read_source, write_atomically

SOURCE_SUFFIXES = (".py", ".pyi")
SKIPPED_DIRECTORIES = frozenset({
    ".git", ".hg", ".svn", ".bzr", "__pycache__", ".tox", ".nox", ".venv", "venv", ".eggs",
    "build", "dist", "site-packages", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    "__pypackages__", "_build", "buck-out",
})


@dataclass
class FileReport:
    path: str
    diagnostics: List[Diagnostic] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    fixed: int = 0
    diff: str = ""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchlint",
        description="Find and fix deprecated and risky PyTorch code.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or directories to check (default: .)")
    parser.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    parser.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff, also apply fixes that change behaviour")
    parser.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    parser.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to check (e.g. TL1,TL201)")
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


def format_diagnostic(path: str, d: Diagnostic) -> str:
    # Identical to flake8's default format, so both tools print the same lines.
    return f"{path}:{d.line}:{d.column + 1}: {d.code} {d.message}"


def process_file(path: str, engine: Engine, args: argparse.Namespace) -> FileReport:
    report = FileReport(path)
    try:
        source = read_source(path)
    except SourceError as exc:
        report.errors.append(f"{path}: {exc}")
        return report
    try:
        if args.fix or args.diff:
            result = engine.fix(source.text, unsafe=args.unsafe_fixes)
            report.diagnostics = result.diagnostics
            report.fixed = sum(result.fixed.values())
            for diagnostic, reason in result.discarded:
                report.warnings.append(
                    f"{path}:{diagnostic.line}:{diagnostic.column + 1}: {diagnostic.code} fix discarded: {reason}"
                )
            if not result.converged:
                report.warnings.append(f"{path}: fixes did not settle after repeated rounds; some were left out")
            _report_internal(report, result.internal_errors)
            if result.source != source.text:
                if args.diff:
                    report.diff = unified_diff(path, source.text, result.source)
                else:
                    try:
                        write_atomically(path, encode(source, result.source))
                    except SourceError as exc:
                        # Nothing was written: report what is still in the file.
                        report.errors.append(f"{path}: {exc}")
                        report.fixed = 0
                        report.diagnostics = engine.check(source.text).diagnostics
                        report.warnings.clear()
        else:
            checked = engine.check(source.text)
            report.diagnostics = checked.diagnostics
            _report_internal(report, checked.internal_errors)
    except ParseError as exc:
        report.diagnostics = []
        report.errors.append(f"{path}:{exc.line}:{exc.column + 1}: cannot parse: {exc.message}")
    except SourceError as exc:
        report.errors.append(f"{path}: {exc}")
    return report


def _report_internal(report: FileReport, errors: Iterable[str]) -> None:
    for error in dict.fromkeys(errors):
        report.errors.append(f"{report.path}: internal error (please report it): {error}")


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        physical_lines(before), physical_lines(after), fromfile=f"a/{path}", tofile=f"b/{path}"
    )
    text = ""
    for line in lines:
        text += line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
    return text


def print_summary(reports: Sequence[FileReport], args: argparse.Namespace, stdout: TextIO) -> None:
    diagnostics = [d for report in reports for d in report.diagnostics]
    fixed = sum(report.fixed for report in reports)
    safe = sum(1 for d in diagnostics if d.fixable)
    unsafe = sum(1 for d in diagnostics if d.unsafe_fixable)
    parts = []
    if fixed:
        parts.append(f"Fixed {_plural(fixed, 'problem')}.")
    if diagnostics:
        found = f"Found {_plural(len(diagnostics), 'problem')}" + (" remaining" if args.fix else "")
        hints = []
        if safe and not args.fix:
            hints.append(f"{safe} fixable with --fix")
        if unsafe and not args.unsafe_fixes:
            hints.append(f"{unsafe} {'more ' if safe and not args.fix else ''}with --fix --unsafe-fixes")
        parts.append(found + (f" ({', '.join(hints)})" if hints else "") + ".")
    failed = sum(1 for report in reports if report.errors)
    if failed:
        parts.append(f"{_plural(failed, 'file')} could not be checked (see the errors above).")
    elif not diagnostics and not fixed:
        parts.append("All checks passed.")
    print(" ".join(parts), file=stdout)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def discover(paths: Sequence[str]) -> Iterator[Tuple[str, Optional[str]]]:
    """Yield (file, None) for each file to check, (path, error) for bad paths."""
    seen = set()
    for path in paths:
        if os.path.isdir(path):
            files = sorted(_walk(path))
        elif os.path.exists(path):
            files = [path]
        elif os.path.lexists(path):
            yield path, "broken symbolic link"
            continue
        else:
            yield path, "no such file or directory"
            continue
        for file in files:
            key = os.path.realpath(file)
            if key not in seen:
                seen.add(key)
                yield file, None


def _walk(root: str) -> Iterator[str]:
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(
            d for d in subdirectories
            if d not in SKIPPED_DIRECTORIES
            and not d.endswith(".egg-info")
            and not os.path.exists(os.path.join(directory, d, "pyvenv.cfg"))
        )
        for name in files:
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.join(directory, name)


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
