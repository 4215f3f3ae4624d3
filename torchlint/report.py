"""How results are shown: diagnostic lines and the closing summary."""

from __future__ import annotations

import argparse
from typing import Optional, Sequence, TextIO

from torchlint.diagnostic import Diagnostic
from torchlint.runner import FileReport


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


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
