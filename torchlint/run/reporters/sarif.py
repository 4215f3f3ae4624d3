"""``--output-format sarif``: a SARIF 2.1.0 log, for code scanning services.

One run: ``tool.driver`` describes torchlint and every selected rule (id,
name, short and full description, help text and markdown, help URI); each
finding is a result with ``ruleId``, ``ruleIndex``, ``level``, ``message``
and a physical location (relative paths are relative to ``%SRCROOT%``, the
current directory; columns count Unicode code points) and, when torchlint
can fix it, the fix as replacements. Files that could not be checked are
tool execution notifications of the invocation.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence
from urllib.parse import quote

from torchlint import __version__
from torchlint.run.reporters.escaping import escaped, writes_unicode
from torchlint.core.diagnostic import Diagnostic
from torchlint.engine.textedits import TextEdit
from torchlint.rules.docs import fix_availability, render_rule
from torchlint.rules.rule import Rule
from torchlint.run.report import ErrorEntry, FileReport, error_entries
from torchlint.run.reporters.base import (
    Reporter,
    fix_title,
    homepage_url,
    previews,
)

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"


def artifact_location(path: str) -> Dict[str, str]:
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    relative = os.path.normpath(path).replace(os.sep, "/")
    return {"uri": quote(os.fsencode(relative)), "uriBaseId": SRCROOT}  # the real bytes, %-encoded


def _directory_uri(directory: str) -> str:
    uri = Path(directory).as_uri()
    return uri if uri.endswith("/") else uri + "/"


def rule_descriptor(rule: Rule, help_uri: str) -> Dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": " ".join(rule.why.split())},
        "help": {
            "text": f"{rule.summary}. {fix_availability(rule).replace('**', '')}",
            "markdown": render_rule(rule),
        },
        "helpUri": help_uri,
        "defaultConfiguration": {"level": "error"},
        "properties": {"fix": rule.fix_safety.value},
    }


def _region(start, end=None) -> Dict[str, int]:
    region = {"startLine": start[0], "startColumn": start[1]}
    if end is not None:
        region.update({"endLine": end[0], "endColumn": end[1]})
    return region


class SarifReporter(Reporter):
    name = "sarif"
    wants_previews = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.results: List[Dict[str, Any]] = []
        self.index = {rule.code: index for index, rule in enumerate(self.options.rules)}

    def report_file(self, report: FileReport) -> None:
        for d, edits in zip(report.diagnostics, previews(report)):
            self.results.append(self.result(report.path, d, edits))

    def result(self, path: str, d: Diagnostic, edits: Optional[List[TextEdit]]) -> Dict[str, Any]:
        location = artifact_location(path)
        result: Dict[str, Any] = {
            "ruleId": d.code,
            "level": "error",
            "message": {"text": d.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": location,
                    "region": _region((d.line, d.column + 1),
                                      None if d.end_line is None else (d.end_line, d.end_column + 1)),
                },
            }],
        }
        if d.cell is not None:  # notebooks: the region is within this 1-based cell
            result["properties"] = {"cell": d.cell}
            result["message"]["text"] = f"cell {d.cell}: {d.message}"
        if d.code in self.index:
            result["ruleIndex"] = self.index[d.code]
        if d.fix is not None and edits:
            title = fix_title(self.rule(d.code)) or "Apply torchlint's fix"
            kind = "safe" if d.fix.safe else "unsafe: it changes behaviour"
            result["fixes"] = [{
                "description": {"text": f"{title} ({kind})"},
                "artifactChanges": [{
                    "artifactLocation": location,
                    "replacements": [
                        {"deletedRegion": _region(e.start, e.end), "insertedContent": {"text": e.content}}
                        for e in edits
                    ],
                }],
            }]
        return result

    def finish(self, reports: Sequence[FileReport]) -> None:
        notifications = [_notification(report, error) for report in reports for error in error_entries(report)]
        invocation: Dict[str, Any] = {"executionSuccessful": not notifications}
        if notifications:
            invocation["toolExecutionNotifications"] = notifications
        log = {
            "$schema": SCHEMA_URI,
            "version": "2.1.0",
            "runs": [{
                "tool": {
                    "driver": {
                        "name": "torchlint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": homepage_url(),
                        "rules": [rule_descriptor(_loaded(rule), self.rule_url(rule.code))
                                  for rule in self.options.rules],
                    },
                },
                "invocations": [invocation],
                "originalUriBaseIds": {SRCROOT: {"uri": _directory_uri(os.getcwd())}},
                "columnKind": "unicodeCodePoints",
                "results": self.results,
            }],
        }
        json.dump(escaped(log), self.stream, indent=2, ensure_ascii=not writes_unicode(self.stream))
        self.write()


def _loaded(rule) -> Rule:
    """The options hold the catalog's light specs; the descriptor needs the rule itself."""
    return rule if isinstance(rule, Rule) else rule.load()


def _notification(report: FileReport, error: ErrorEntry) -> Dict[str, Any]:
    """A file that could not be checked; a parse error with where it is."""
    text = error.message if error.cell is None else f"cell {error.cell}: {error.message}"
    location: Dict[str, Any] = {"artifactLocation": artifact_location(report.path)}
    if error.line is not None and error.column is not None:
        location["region"] = _region((error.line, error.column + 1))
    notification: Dict[str, Any] = {
        "level": "error",
        "message": {"text": f"{report.path}: {text}"},
        "locations": [{"physicalLocation": location}],
    }
    if error.cell is not None:
        notification["properties"] = {"cell": error.cell}
    return notification
