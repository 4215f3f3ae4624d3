"""Checking or fixing one file end to end: read, lint or fix, write.

Everything that can go wrong with one file ends up in its ``FileReport``;
nothing here prints, so the front end decides how to report.
"""

from __future__ import annotations

import argparse
import difflib
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, List, Optional

from torchlint.diagnostic import Diagnostic, ParseError, Unsupported
from torchlint.source import SourceError, SourceText, encode, physical_lines, read_source, write_atomically
from torchlint.textedits import TextEdit, preview_fix

if TYPE_CHECKING:  # pragma: no cover
    from torchlint.engine import CheckResult, Engine


@dataclass
class FileReport:
    path: str
    diagnostics: List[Diagnostic] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    fixed: int = 0
    diff: str = ""
    # The text that was checked (after fixing, when fixes were applied): the
    # diagnostics' positions refer to it.
    source: Optional[str] = None
    fixed_by_code: Counter = field(default_factory=Counter)  # code -> fixes applied
    # With ``fixed_in_memory``: the fixed text, not written anywhere (stdin).
    fixed_source: Optional[str] = None
    # Valid Python that torchlint cannot analyse (see ``engine.Unsupported``):
    # skipped with a warning, not an error.
    skipped: bool = False
    # With ``previews``: for each diagnostic, the edits its fix would make to
    # ``source`` (None: no fix, or one that cannot be applied).
    previews: List[Optional[List[TextEdit]]] = field(default_factory=list)


def process_file(
    path: str,
    engine: Engine,
    args: argparse.Namespace,
    text: Optional[SourceText] = None,
    previews: bool = False,
) -> FileReport:
    """Check or fix ``path`` (``args.fix`` / ``args.diff`` / ``args.unsafe_fixes``).

    ``text``: the source, already read (stdin); then fixes are never written:
    the fixed text is left in ``report.fixed_source``. ``previews``: describe
    each remaining fix as text edits.
    """
    if path.endswith(".ipynb") and text is None:
        from torchlint.notebook import process_notebook  # builds on this module

        return process_notebook(path, engine, args)
    report = FileReport(path)
    if text is not None:
        source = text
    else:
        try:
            source = read_source(path)
        except SourceError as exc:
            report.errors.append(f"{path}: {exc}")
            return report
    report.source = source.text
    try:
        if args.fix or args.diff:
            result = engine.fix(source.text, unsafe=args.unsafe_fixes)
            report.diagnostics = result.diagnostics
            report.fixed = sum(result.fixed.values())
            report.fixed_by_code = Counter(result.fixed)
            for diagnostic, reason in result.discarded:
                report.warnings.append(
                    f"{path}:{diagnostic.line}:{diagnostic.column + 1}: {diagnostic.code} fix discarded: {reason}"
                )
            if not result.converged:
                report.warnings.append(f"{path}: fixes did not settle after repeated rounds; some were left out")
            _report_internal(report, result.internal_errors)
            if result.source != source.text:
                report.source = result.source
                if args.diff:
                    report.diff = unified_diff(path, source.text, result.source)
                elif text is not None:
                    report.fixed_source = result.source
                else:
                    try:
                        write_atomically(path, encode(source, result.source))
                    except SourceError as exc:
                        # Nothing was written: report what is still in the file.
                        report.errors.append(f"{path}: {exc}")
                        report.fixed = 0
                        report.fixed_by_code.clear()
                        report.source = source.text
                        report.diagnostics = engine.check(source.text).diagnostics
                        report.warnings.clear()
            if previews and any(d.fix for d in report.diagnostics):
                # The fixes of the final round belong to a tree we no longer
                # have: check the final text again to describe them.
                _add_previews(report, engine.check(report.source, whole=True))
        else:
            checked = engine.check(source.text, whole=previews)  # previews apply fixes to the module
            report.diagnostics = checked.diagnostics
            _report_internal(report, checked.internal_errors)
            if previews:
                _add_previews(report, checked)
    except Unsupported as exc:
        skip(report, f"{path}:{exc.line}:{exc.column + 1}", exc.message)
    except ParseError as exc:
        report.diagnostics = []
        report.errors.append(f"{path}:{exc.line}:{exc.column + 1}: cannot parse: {exc.message}")
    except SourceError as exc:
        report.errors.append(f"{path}: {exc}")
    return report


def skip(report: FileReport, location: str, message: str) -> None:
    """``report``'s file is valid Python torchlint cannot analyse: a warning; nothing is reported or written."""
    report.diagnostics = []
    report.fixed = 0
    report.fixed_by_code.clear()
    report.diff = ""
    report.skipped = True
    report.warnings.append(f"{location}: skipped: {message}")


def _add_previews(report: FileReport, checked: CheckResult) -> None:
    if checked.module is None:
        report.previews = [None] * len(report.diagnostics)
        return
    report.diagnostics = checked.diagnostics
    report.previews = [
        preview_fix(checked.module, d.fix) if d.fix is not None else None for d in checked.diagnostics
    ]


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
