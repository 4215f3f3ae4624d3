"""What every reporter shares: the run's options, the rule catalogue, links."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, TextIO

from torchlint.core.diagnostic import Diagnostic
from torchlint.core.links import homepage_url, rule_url  # noqa: F401 (homepage_url: re-exported for the reporters)
from torchlint.engine.textedits import TextEdit
from torchlint.rules import all_rules
from torchlint.rules.rule import Rule
from torchlint.run.report import FileReport
from torchlint.run.reporters.style import PLAIN, Style

# The links (homepage_url, rule_url; the server imports rule_url from here) come from
# torchlint.core.links: setup.cfg's project_urls, as the installed package declares them.


class Reporter:
    """Base class: override ``report_file`` and/or ``finish``."""

    name = ""
    # Needs each fix described as text edits (runner's ``previews``).
    wants_previews = False

    def __init__(self, stream: TextIO, options, style: Style = PLAIN) -> None:
        self.stream = stream
        self.options = options
        self.style = style
        self._rules: Optional[Dict[str, Rule]] = None

    def report_file(self, report: FileReport) -> None:
        pass

    def finish(self, reports: Sequence[FileReport]) -> None:
        pass

    def write(self, text: str = "") -> None:
        self.stream.write(text + "\n")

    # --- helpers -----------------------------------------------------------

    def rule(self, code: str) -> Optional[Rule]:
        if self._rules is None:
            self._rules = {rule.code: rule for rule in all_rules()}
        return self._rules.get(code)

    def rule_url(self, code: str) -> str:
        """The rule's page: under the run's configured docs base URL (``docs_base_url`` in the
        options, where the configuration sets one), else the default (``torchlint.core.links``)."""
        return rule_url(code, getattr(self.options, "docs_base_url", None))

    def fix_applies(self, d: Diagnostic) -> bool:
        """Would ``--fix`` (with this run's unsafe-fixes setting) apply the fix?"""
        return d.fix is not None and (d.fix.safe or bool(self.options.unsafe_fixes))


def previews(report: FileReport) -> List[Optional[List[TextEdit]]]:
    """The fix preview of each diagnostic, aligned with ``report.diagnostics``."""
    if len(report.previews) == len(report.diagnostics):
        return report.previews
    return [None] * len(report.diagnostics)


def applicability(d: Diagnostic) -> Optional[str]:
    if d.fix is None:
        return None
    return "safe" if d.fix.safe else "unsafe"


def fix_title(rule: Optional[Rule]) -> str:
    """The first sentence of a rule's fix description."""
    text = " ".join((rule.fix_description if rule else "").split())
    if not text:
        return ""
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]
