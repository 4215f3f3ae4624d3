"""``--output-format json``: one list of findings, written when the run ends.

Each finding: ``filename`` (as reported in text output), ``code``, ``name``
(the rule's name), ``message``, ``location`` ``{row, column}`` (1-based, like
the text output), ``end_location`` (where the flagged code ends, the
column just past it; null when unknown), ``fix`` (null, or ``{applicability: "safe" | "unsafe",
message, edits: [{content, location, end_location}]}``, edits against the
file as it is now) and ``url`` (the rule's documentation). With
``--statistics`` the list holds one object per code instead. A file that
could not be checked is an item whose ``code``, ``name`` and ``url`` are
null, with the error as ``message`` and, for a parse error, its
``location``.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Sequence

from torchlint.run.reporters.escaping import escaped, writes_unicode
from torchlint.core.diagnostic import Diagnostic
from torchlint.engine.textedits import TextEdit
from torchlint.run.report import ErrorEntry, FileReport, error_entries
from torchlint.run.reporters.base import (
    Reporter,
    applicability,
    fix_title,
    previews,
)
from torchlint.run.reporters.text import statistics_rows


def _position(position) -> Dict[str, int]:
    row, column = position
    return {"row": row, "column": column}


class JsonReporter(Reporter):
    name = "json"
    wants_previews = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.items: List[Dict[str, Any]] = []

    def report_file(self, report: FileReport) -> None:
        for d, edits in zip(report.diagnostics, previews(report)):
            self.items.append(self.item(report, d, edits))
        for error in error_entries(report):
            self.items.append(self.error_item(report, error))

    @staticmethod
    def error_item(report: FileReport, error: ErrorEntry) -> Dict[str, Any]:
        """A file that could not be checked, as an item without a code (as ruff reports syntax errors)."""
        located = error.line is not None and error.column is not None
        result: Dict[str, Any] = {
            "filename": report.path,
            "code": None,
            "name": None,
            "message": error.message,
            "location": {"row": error.line, "column": error.column + 1} if located else None,
            "end_location": None,
            "fix": None,
            "url": None,
        }
        if error.cell is not None:
            result["cell"] = error.cell
        return result

    def item(self, report: FileReport, d: Diagnostic, edits) -> Dict[str, Any]:
        rule = self.rule(d.code)
        fix = None
        if d.fix is not None and edits is not None:
            fix = {
                "applicability": applicability(d),
                "message": fix_title(rule) or None,
                "edits": [self.edit(edit) for edit in edits],
            }
        result = {
            "filename": report.path,
            "code": d.code,
            "name": rule.name if rule else None,
            "message": d.message,
            "location": {"row": d.line, "column": d.column + 1},
            "end_location": None if d.end_line is None else {"row": d.end_line, "column": d.end_column + 1},
            "fix": fix,
            "url": self.rule_url(d.code) if rule else None,
        }
        if d.cell is not None:  # notebooks: the 1-based cell; row and column are within it
            result["cell"] = d.cell
        return result

    @staticmethod
    def edit(edit: TextEdit) -> Dict[str, Any]:
        return {"content": edit.content, "location": _position(edit.start), "end_location": _position(edit.end)}

    def finish(self, reports: Sequence[FileReport]) -> None:
        if self.options.statistics:
            data: Any = [
                {
                    "code": row["code"],
                    "name": row["name"],
                    "count": row["count"],
                    "message": row["message"],
                    "fixable": row["fix"] == "applies",
                    "fix_needs_unsafe_fixes": row["fix"] == "unsafe",
                }
                for row in statistics_rows(reports, self)
            ]
        else:
            data = self.items
        json.dump(escaped(data), self.stream, indent=2, ensure_ascii=not writes_unicode(self.stream))
        self.write()
