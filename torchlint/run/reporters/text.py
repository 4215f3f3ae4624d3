"""The text formats: ``concise`` (flake8's line format) and ``full``."""

from __future__ import annotations

import difflib
from collections import Counter
from typing import Dict, List, Optional, Sequence

from torchlint.core.diagnostic import Diagnostic
from torchlint.core.source import SourceFile
from torchlint.engine.textedits import TextEdit, apply_edits
from torchlint.run.report import FileReport, fix_only_summary, format_diagnostic, summary_line
from torchlint.run.reporters.base import Reporter, previews


class TextReporter(Reporter):
    """Diagnostics as they come; then statistics, applied fixes and the summary."""

    def report_file(self, report: FileReport) -> None:
        if self.options.statistics or self.options.fix_only:
            return
        for index, d in enumerate(report.diagnostics):
            self.diagnostic(report, index, d)

    def diagnostic(self, report: FileReport, index: int, d: Diagnostic) -> None:
        self.write(self.location_line(report.path, d))

    def location_line(self, path: str, d: Diagnostic) -> str:
        s = self.style
        if not s.enabled:
            return format_diagnostic(path, d)
        colon = s.cyan(":")
        return f"{s.bold(path)}{colon}{d.line}{colon}{d.column + 1}{colon} {s.code(d.code)} {d.message}"

    def finish(self, reports: Sequence[FileReport]) -> None:
        if self.options.statistics:
            self.statistics(reports)
        if self.options.show_fixes:
            self.applied_fixes(reports)
        if getattr(self.options, "quiet", 0):
            return
        if self.options.fix_only:
            summary = fix_only_summary(reports, self.options)
            if summary:
                self.write(summary)
        else:
            self.write(summary_line(reports, self.options))

    def statistics(self, reports: Sequence[FileReport]) -> None:
        rows = statistics_rows(reports, self)
        if not rows:
            return
        width = max(len(str(row["count"])) for row in rows)
        for row in rows:
            marker = {"applies": "[*]", "unsafe": "[-]", None: "[ ]"}[row["fix"]]
            self.write(f"{row['count']:>{width}}\t{self.style.code(row['code'])}\t{marker} {row['name']}")

    def applied_fixes(self, reports: Sequence[FileReport]) -> None:
        fixed = [report for report in reports if report.fixed_by_code]
        if not fixed:
            return
        self.write("Applied fixes:")
        for report in fixed:
            self.write(f"  {self.style.bold(report.path)}")
            for code, count in sorted(report.fixed_by_code.items()):
                rule = self.rule(code)
                name = f" ({rule.name})" if rule else ""
                self.write(f"    {code}{name}: {count} {'fix' if count == 1 else 'fixes'}")


class ConciseReporter(TextReporter):
    name = "concise"


class FullReporter(TextReporter):
    """Each finding with its source line, a caret, and its fix as a diff."""

    name = "full"
    wants_previews = True

    def report_file(self, report: FileReport) -> None:
        self._source = SourceFile(report.source or "")
        self._lines = self._source.lines
        self._cell_lines = {cell: SourceFile(text).lines for cell, text in report.cell_sources.items()}
        self._previews = previews(report)
        super().report_file(report)

    def diagnostic(self, report: FileReport, index: int, d: Diagnostic) -> None:
        s = self.style
        self.write(self.location_line(report.path, d))
        gutter = len(str(d.line))
        bar = " " * (gutter + 1) + s.cyan("|")
        # In a notebook, lines (and fix edits) are within the finding's cell.
        lines = self._lines if d.cell is None else self._cell_lines.get(d.cell, [])
        source = self._source if d.cell is None else SourceFile(report.cell_sources.get(d.cell, ""))
        if 1 <= d.line <= len(lines):
            text = lines[d.line - 1].rstrip("\r\n")
            pad = "".join("\t" if char == "\t" else " " for char in text[: d.column])
            self.write(bar)
            self.write(f"{s.cyan(str(d.line))} {s.cyan('|')} {text}")
            self.write(f"{bar} {pad}{s.red('^' * _caret_width(d, text))} {s.code(d.code)}")
        if d.detail:
            self.write(f"{' ' * (gutter + 1)}{s.cyan('=')} note: {d.detail}")
        edits = self._previews[index]
        if d.fix is not None:
            if d.fix.safe:
                label = "safe fix (applied by --fix)"
            else:
                label = "unsafe fix (applied by --fix --unsafe-fixes)"
            self.write(f"{' ' * (gutter + 1)}{s.cyan('=')} {label}" + (":" if edits else ""))
            if edits:
                for line in fix_diff(source, edits):
                    if line.startswith("-"):
                        line = s.red(line)
                    elif line.startswith("+"):
                        line = s.green(line)
                    elif line.startswith("@@"):
                        line = s.cyan(line)
                    self.write(" " * (gutter + 3) + line)
        self.write()


def _caret_width(d: Diagnostic, text: str) -> int:
    """How many carets underline the finding on its first line: its whole
    range, or up to the end of the line when it goes on."""
    if d.end_line is None or d.end_column is None:
        return 1
    end = d.end_column if d.end_line == d.line else len(text.rstrip())
    return max(1, min(end, len(text)) - d.column)


def fix_diff(source: SourceFile, edits: List[TextEdit]) -> List[str]:
    """The lines of a unified diff (no file headers, no context) showing ``edits``."""
    before = source.lines
    after = SourceFile(apply_edits(source, edits)).lines
    lines = list(difflib.unified_diff(before, after, n=0, lineterm=""))[2:]
    return [line.rstrip("\r\n") for line in lines]


def statistics_rows(reports: Sequence[FileReport], reporter: Reporter) -> List[Dict[str, object]]:
    """One row per code, most frequent first: count, name, message, fix availability."""
    counts: Counter = Counter()
    first: Dict[str, Diagnostic] = {}
    fix: Dict[str, Optional[str]] = {}
    for report in reports:
        for d in report.diagnostics:
            counts[d.code] += 1
            first.setdefault(d.code, d)
            if reporter.fix_applies(d):
                fix[d.code] = "applies"
            elif d.fix is not None and fix.get(d.code) is None:
                fix[d.code] = "unsafe"
            else:
                fix.setdefault(d.code, None)
    rows = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = reporter.rule(code)
        rows.append({
            "code": code,
            "name": rule.name if rule else code,
            "count": count,
            "message": first[code].message,
            "fix": fix[code],
        })
    return rows
