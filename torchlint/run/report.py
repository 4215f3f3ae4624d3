"""What checking one file produced (``FileReport``), and how results are shown:
diagnostic lines and the closing summary."""

from __future__ import annotations

import argparse
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, TextIO, Tuple

from torchlint.core.diagnostic import Diagnostic
from torchlint.engine.textedits import TextEdit


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
    # Where the file failed to parse: (cell or None, line, 0-based column).
    parse_error_at: Optional[Tuple[Optional[int], int, int]] = None
    # Notebooks with ``previews``: each cell's text by cell number (the
    # diagnostics' lines and the previews' edits are within their cell).
    cell_sources: Dict[int, str] = field(default_factory=dict)
    # The hash of the bytes that were checked (``core.dependencies.content_digest``):
    # the result cache keys the findings by it, never by a second read.
    content_digest: Optional[str] = None
    # The other modules of the project the check consulted (path -> digest of
    # their bytes then): a cached result holds only while they are unchanged.
    dependencies: Dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ErrorEntry:
    """A file's error for machine-readable output: the message without the
    path, and where it is (parse errors only)."""

    message: str
    line: Optional[int] = None
    column: Optional[int] = None  # 0-based
    cell: Optional[int] = None


def error_entries(report: FileReport) -> List[ErrorEntry]:
    entries = []
    for error in report.errors:
        marker = error.find("cannot parse:")
        if report.parse_error_at is not None and marker >= 0:
            cell, line, column = report.parse_error_at
            entries.append(ErrorEntry(error[marker:], line, column, cell))
            continue
        prefix = f"{report.path}: "
        entries.append(ErrorEntry(error[len(prefix):] if error.startswith(prefix) else error))
    return entries


def skip(report: FileReport, location: str, message: str) -> None:
    """``report``'s file is valid Python torchlint cannot analyse: a warning; nothing is reported or written."""
    report.diagnostics = []
    report.fixed = 0
    report.fixed_by_code.clear()
    report.diff = ""
    report.skipped = True
    report.warnings.append(f"{location}: skipped: {message}")


def report_internal(report: FileReport, errors: Iterable[str]) -> None:
    for error in dict.fromkeys(errors):
        report.errors.append(f"{report.path}: internal error (please report it): {error}")


def patch_path(path: str) -> str:
    """``path`` as ``git apply`` and ``patch -p1`` want it after ``a/`` and
    ``b/``: relative to the current directory (the project root, where the
    patch is applied), without ``./`` or doubled slashes, ``/`` separated.
    ``torchlint --diff .`` names ``./m.py``, which ``git apply`` rejects as
    ``a/./m.py``; an absolute path gave ``a//tmp/...``."""
    if os.path.isabs(path):
        try:
            path = os.path.relpath(path)
        except ValueError:  # Windows: another drive has no relative path
            return path.replace(os.sep, "/")
    return os.path.normpath(path).replace(os.sep, "/")


def format_diagnostic(path: str, d: Diagnostic) -> str:
    # Identical to flake8's default format, so both tools print the same lines;
    # in a notebook the cell comes first, as ruff prints it: nb.ipynb:cell 3:2:5.
    return f"{format_location(path, d.line, d.column, d.cell)}: {d.code} {d.message}"


def format_location(path: str, line: int, column: int, cell: Optional[int] = None) -> str:
    """``path:line:col`` (column 1-based), or ``path:cell N:line:col`` in a notebook."""
    where = f"{path}:cell {cell}" if cell is not None else path
    return f"{where}:{line}:{column + 1}"


def print_summary(reports: Sequence[FileReport], args: argparse.Namespace, stdout: TextIO) -> None:
    print(summary_line(reports, args), file=stdout)


def summary_line(reports: Sequence[FileReport], args: argparse.Namespace) -> str:
    diagnostics = [d for report in reports for d in report.diagnostics]
    fixed = sum(report.fixed for report in reports)
    safe = sum(1 for d in diagnostics if d.fixable)
    unsafe = sum(1 for d in diagnostics if d.unsafe_fixable)
    if args.unsafe_fixes:  # --fix would apply the unsafe fixes too
        safe, unsafe = safe + unsafe, 0
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
    skipped = sum(1 for report in reports if report.skipped and not report.errors)
    if failed:
        parts.append(f"{_plural(failed, 'file')} could not be checked (see the errors above).")
    if skipped:
        parts.append(f"{_plural(skipped, 'file')} skipped: valid Python torchlint cannot analyse (see the warnings above).")
    if not failed and not skipped and not diagnostics and not fixed:
        parts.append("All checks passed.")
    return " ".join(parts)


def fix_only_summary(reports: Sequence[FileReport], args: argparse.Namespace) -> str:
    """``--fix-only``: what was fixed, and what more ``--unsafe-fixes`` would
    fix; never the findings that remain (ruff's wording, in torchlint's words)."""
    fixed = sum(report.fixed for report in reports)
    unapplied = 0 if args.unsafe_fixes else sum(
        1 for report in reports for d in report.diagnostics if d.unsafe_fixable)
    parts = []
    more = f"{unapplied} more fixable with --unsafe-fixes"
    if fixed:
        parts.append(f"Fixed {_plural(fixed, 'problem')}" + (f" ({more})." if unapplied else "."))
    elif unapplied:
        parts.append(f"No problems fixed ({more}).")
    failed = sum(1 for report in reports if report.errors)
    if failed:
        parts.append(f"{_plural(failed, 'file')} could not be checked (see the errors above).")
    return " ".join(parts)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
