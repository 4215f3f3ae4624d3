"""Output formats: one small class per ``--output-format``.

Every reporter gets each file's ``FileReport`` as soon as it is done
(``report_file``) and all of them at the end (``finish``). Text formats
(``concise``, ``full``) stream and end with a summary; structured formats
(``json``, ``sarif``) are written whole at the end; ``github`` prints one
workflow command per finding; ``gitlab``, ``junit``, ``rdjson`` and ``pylint``
(``reporters/ci.py``) are written as ruff writes them. Errors about files always go to stderr, never
into a structured document.
"""

from __future__ import annotations

from typing import Dict, Type

from torchlint.run.reporters.base import Reporter, homepage_url, rule_url
from torchlint.run.reporters.ci import GitlabReporter, JunitReporter, PylintReporter, RdjsonReporter
from torchlint.run.reporters.github import GithubReporter
from torchlint.run.reporters.json import JsonReporter
from torchlint.run.reporters.sarif import SarifReporter
from torchlint.run.reporters.text import ConciseReporter, FullReporter

REPORTERS: Dict[str, Type[Reporter]] = {
    "concise": ConciseReporter,
    "full": FullReporter,
    "json": JsonReporter,
    "sarif": SarifReporter,
    "github": GithubReporter,
    "gitlab": GitlabReporter,
    "junit": JunitReporter,
    "pylint": PylintReporter,
    "rdjson": RdjsonReporter,
}

__all__ = ["REPORTERS", "Reporter", "rule_url", "homepage_url"]
