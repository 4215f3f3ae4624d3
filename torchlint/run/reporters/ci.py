"""Output formats of CI services and review tools, each as ruff writes it.

``gitlab``: a GitLab Code Quality report (a JSON list); ``junit``: JUnit XML,
one test suite per file and one failed test case per finding; ``rdjson``:
reviewdog's Diagnostic Format, with each fix as suggestions; ``pylint``:
``path:line: [CODE] message`` lines. Files that could not be checked are
reported in them too, as ruff reports its syntax errors: under the name
``invalid-syntax`` (where the file fails to parse) or ``io-error`` (it could
not be read), and on stderr as always.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple
from xml.sax.saxutils import escape

from torchlint.core.diagnostic import Diagnostic
from torchlint.run.report import ErrorEntry, FileReport, error_entries
from torchlint.run.reporters.base import Reporter, homepage_url, previews
from torchlint.run.reporters.escaping import escaped, writes_unicode

PROGRAM = "torchlint"


class Finding:
    """A diagnostic or a file's error, in the terms every format here uses:
    a check name, a message, and where it starts and ends (1-based lines and
    columns; None for a notebook cell or an error without a place)."""

    def __init__(self, path: str, check: str, message: str, start: Optional[Tuple[int, int]],
                 end: Optional[Tuple[int, int]], diagnostic: Optional[Diagnostic] = None, edits=None) -> None:
        self.path, self.check, self.message = path, check, message
        self.start, self.end = start, end
        self.diagnostic, self.edits = diagnostic, edits


def findings(report: FileReport) -> Iterator[Finding]:
    for d, edits in zip(report.diagnostics, previews(report)):
        if d.cell is not None:  # a position within a cell is no position in the file
            yield Finding(report.path, d.code, d.message, None, None, d)
            continue
        start = (d.line, d.column + 1)
        end = (d.end_line, d.end_column + 1) if d.end_line is not None and d.end_column is not None else start
        yield Finding(report.path, d.code, d.message, start, end, d, edits)
    for error in error_entries(report):
        yield _error_finding(report.path, error)


def _error_finding(path: str, error: ErrorEntry) -> Finding:
    located = error.line is not None and error.column is not None and error.cell is None
    start = (error.line, error.column + 1) if located else None
    return Finding(path, "invalid-syntax" if error.line is not None else "io-error", error.message, start, start)


class _Collecting(Reporter):
    """Written whole when the run ends."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.findings: List[Finding] = []

    def report_file(self, report: FileReport) -> None:
        self.findings.extend(findings(report))

    def dump(self, data: Any, **kwargs: Any) -> None:
        json.dump(escaped(data), self.stream, indent=2, ensure_ascii=not writes_unicode(self.stream), **kwargs)
        self.write()


class GitlabReporter(_Collecting):
    """GitLab Code Quality: paths relative to ``$CI_PROJECT_DIR`` when set
    (GitLab's checkout), else as reported. The fingerprint hashes the check
    and the path, not the line, so a finding keeps it when code above it
    moves; a second finding of the same check in the same file gets the next
    free one, as in ruff."""

    name = "gitlab"

    def finish(self, reports: Sequence[FileReport]) -> None:
        project_dir = os.environ.get("CI_PROJECT_DIR")
        used: Set[str] = set()
        items = []
        for finding in self.findings:
            path = os.path.relpath(os.path.abspath(finding.path), project_dir) if project_dir else finding.path
            path = os.path.normpath(path).replace(os.sep, "/")  # GitLab matches them to the files of the change
            fingerprint = _fingerprint(finding.check, path, "")
            while fingerprint in used:
                fingerprint = _fingerprint(finding.check, path, fingerprint)
            used.add(fingerprint)
            begin, end = finding.start or (1, 1), finding.end or (1, 1)
            items.append({
                "check_name": finding.check,
                # GitLab does not show check_name: the description carries it.
                "description": f"{finding.check}: {finding.message}",
                "severity": "major",
                "fingerprint": fingerprint,
                "location": {"path": path, "positions": {"begin": _line_column(begin), "end": _line_column(end)}},
            })
        self.dump(items)


def _fingerprint(check: str, path: str, salt: str) -> str:
    return hashlib.sha256("\0".join((salt, check, path)).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _line_column(position: Tuple[int, int]) -> Dict[str, int]:
    return {"line": position[0], "column": position[1]}


class RdjsonReporter(_Collecting):
    """reviewdog's rdjson: each fix torchlint can describe becomes suggestions
    (its text edits), which reviewdog offers as suggested changes."""

    name = "rdjson"
    wants_previews = True

    def finish(self, reports: Sequence[FileReport]) -> None:
        diagnostics = [self._item(finding) for finding in self.findings]
        self.dump({"diagnostics": diagnostics, "severity": "WARNING",
                   "source": {"name": PROGRAM, "url": homepage_url()}}, sort_keys=True)

    def _item(self, finding: Finding) -> Dict[str, Any]:
        code: Dict[str, str] = {"value": finding.check}
        if finding.diagnostic is not None and self.rule(finding.check) is not None:
            code["url"] = self.rule_url(finding.check)
        location: Dict[str, Any] = {"path": finding.path}
        if finding.start is not None:
            location["range"] = _range(finding.start, finding.end or finding.start)
        item = {"code": code, "location": location, "message": finding.message}
        if finding.edits:
            item["suggestions"] = [{"range": _range(edit.start, edit.end), "text": edit.content}
                                   for edit in finding.edits]
        return item


def _range(start: Tuple[int, int], end: Tuple[int, int]) -> Dict[str, Any]:
    return {"start": _line_column(start), "end": _line_column(end)}


class PylintReporter(Reporter):
    """pylint's parseable format, as flake8's ``--format=pylint`` writes it."""

    name = "pylint"

    def report_file(self, report: FileReport) -> None:
        for finding in findings(report):
            line = finding.start[0] if finding.start else 1
            self.write(f"{finding.path}:{line}: [{finding.check}] {finding.message}")


class JunitReporter(_Collecting):
    """JUnit XML: a test suite per file, a failed test case per finding; a
    clean run is one passing test case, "No errors found"."""

    name = "junit"

    def finish(self, reports: Sequence[FileReport]) -> None:
        lines = ['<?xml version="1.0" encoding="UTF-8"?>']
        total = len(self.findings)
        lines.append(f'<testsuites name="{PROGRAM}" tests="{max(total, 1)}" failures="{total}" errors="0">')
        package = f"org.{PROGRAM}"
        if not self.findings:
            lines.append(f'    <testsuite name="{PROGRAM}" tests="1" disabled="0" errors="0" failures="0" '
                         f'package="{package}">')
            lines.append(f'        <testcase name="No errors found" classname="{PROGRAM}"/>')
            lines.append("    </testsuite>")
        for path, group in _by_path(self.findings).items():
            lines.append(f"    <testsuite name={_attr(path)} tests=\"{len(group)}\" disabled=\"0\" errors=\"0\" "
                         f"failures=\"{len(group)}\" package=\"{package}\">")
            classname = os.path.splitext(path)[0]
            for finding in group:
                place = ""
                description = finding.message
                if finding.start is not None:
                    place = f' line="{finding.start[0]}" column="{finding.start[1]}"'
                    description = f"line {finding.start[0]}, col {finding.start[1]}, {finding.message}"
                lines.append(f"        <testcase name={_attr(f'{package}.{finding.check}')} "
                             f"classname={_attr(classname)}{place}>")
                lines.append("            <properties>")
                lines.append('                <property name="severity" value="error"/>')
                lines.append("            </properties>")
                lines.append(f"            <failure message={_attr(finding.message)}>{_text(description)}</failure>")
                lines.append("        </testcase>")
            lines.append("    </testsuite>")
        lines.append("</testsuites>")
        self.write(escaped("\n".join(lines)))


def _by_path(items: Sequence[Finding]) -> Dict[str, List[Finding]]:
    grouped: Dict[str, List[Finding]] = {}
    for finding in items:
        grouped.setdefault(finding.path, []).append(finding)
    return dict(sorted(grouped.items()))


def _text(text: str) -> str:
    return escape(_xml_chars(text))


def _attr(text: str) -> str:
    return '"' + escape(_xml_chars(text), {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}) + '"'


def _xml_chars(text: str) -> str:
    """``text`` without the control characters XML 1.0 cannot hold at all."""
    return "".join(ch if ch in "\t\n\r" or ord(ch) >= 0x20 else f"\\x{ord(ch):02x}" for ch in text)
