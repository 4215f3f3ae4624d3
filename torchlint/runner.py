"""Checking or fixing one file end to end: read, lint or fix, write.

Everything that can go wrong with one file ends up in its ``FileReport``;
nothing here prints, so the front end decides how to report.
"""

from __future__ import annotations

import argparse
import difflib
from dataclasses import dataclass, field
from typing import Iterable, List

from torchlint.engine import Diagnostic, Engine, ParseError
from torchlint.source import SourceError, encode, physical_lines, read_source, write_atomically


@dataclass
class FileReport:
    path: str
    diagnostics: List[Diagnostic] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    fixed: int = 0
    diff: str = ""


def process_file(path: str, engine: Engine, args: argparse.Namespace) -> FileReport:
    if path.endswith(".ipynb"):
        from torchlint.notebook import process_notebook  # builds on this module

        return process_notebook(path, engine, args)
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
