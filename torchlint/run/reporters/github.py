"""``--output-format github``: GitHub Actions workflow commands.

One ``::error title=torchlint (CODE),file=PATH,line=N,col=N::MESSAGE`` line
per finding (with ``endLine`` and ``endColumn`` when known), which the
Actions runner turns into an annotation on the pull request; a file that
could not be checked gets one with the title ``torchlint (error)``. Escaping follows the Actions toolkit: in the message ``%``, CR and
LF become ``%25``, ``%0D`` and ``%0A``; property values also escape ``:`` and
``,`` (``%3A``, ``%2C``), which would otherwise end the value.
"""

from __future__ import annotations

from torchlint.run.report import FileReport, error_entries
from torchlint.run.reporters.base import Reporter


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


class GithubReporter(Reporter):
    name = "github"

    def report_file(self, report: FileReport) -> None:
        for d in report.diagnostics:
            properties = {
                "title": f"torchlint ({d.code})",
                "file": report.path,
                "line": str(d.line),
                "col": str(d.column + 1),
            }
            if d.end_line is not None and d.end_column is not None and d.cell is None:
                properties.update({"endLine": str(d.end_line), "endColumn": str(d.end_column + 1)})
            joined = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
            message = d.message if d.cell is None else f"cell {d.cell}: {d.message}"
            self.write(f"::error {joined}::{escape_data(message)}")
        for error in error_entries(report):
            properties = {"title": "torchlint (error)", "file": report.path}
            if error.line is not None and error.column is not None and error.cell is None:
                properties.update({"line": str(error.line), "col": str(error.column + 1)})
            joined = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
            message = error.message if error.cell is None else f"cell {error.cell}: {error.message}"
            self.write(f"::error {joined}::{escape_data(message)}")
