"""Where torchlint's home page and rule pages are: the links of the json, sarif and
language-server output (``url``, ``helpUri``, ``codeDescription``).

The package declares its URLs once, in ``setup.cfg``'s ``project_urls``, and
they reach the installed package's metadata (``Project-URL``); the links are
read from there, so a fork or a mirror that changes ``setup.cfg`` links to its
own pages. The rule pages are ``<base>/<CODE>.md``, ``<base>`` being, first
found:

1. the configured docs base URL (a ``docs-base-url`` setting, passed in as
   ``configured``);
2. the ``TORCHLINT_DOCS_BASE_URL`` environment variable (for a whole
   machine, a CI job or an editor's language server);
3. the ``Rules`` URL the installed package declares;
4. ``DEFAULT_DOCS_BASE_URL``, for a source checkout run without being
   installed (``tests/test_links.py`` keeps it equal to ``setup.cfg``'s).
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from typing import Dict, Optional
from urllib.parse import urlsplit

# What setup.cfg declares; used only where the installed metadata does not say.
REPOSITORY = "https://github.com/torchlint/torchlint"
DEFAULT_DOCS_BASE_URL = REPOSITORY + "/blob/main/docs/rules"
DOCS_BASE_URL_VARIABLE = "TORCHLINT_DOCS_BASE_URL"
SCHEMES = ("https", "http", "file")


def check_docs_base_url(value: str) -> str:
    """``value`` without a trailing slash, or ValueError saying why it cannot be a docs base URL
    (for the configuration to report as a usage error)."""
    parts = urlsplit(value.strip())
    if parts.scheme not in SCHEMES or not (parts.netloc or parts.scheme == "file"):
        raise ValueError(f"{value!r} is not a docs base URL: expected an https://, http:// or file:// URL "
                         f"of the folder holding the rule pages (TL101.md, ...)")
    return value.strip().rstrip("/")


@lru_cache(maxsize=None)
def declared_urls() -> Dict[str, str]:
    """The installed package's ``Project-URL`` entries by label ({} for an uninstalled checkout)."""
    from importlib import metadata  # only the outputs with links pay for reading the metadata

    try:
        entries = metadata.metadata("torchlint").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return {}
    urls = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        if url.strip():
            urls[label.strip()] = url.strip()
    return urls


def homepage_url() -> str:
    return declared_urls().get("Homepage", REPOSITORY)


@lru_cache(maxsize=None)
def _environment_base(value: str) -> Optional[str]:
    try:
        return check_docs_base_url(value)
    except ValueError as error:  # said once; the links fall back rather than break a report
        print(f"torchlint: ignoring {DOCS_BASE_URL_VARIABLE}: {error}", file=sys.stderr)
        return None


def docs_base_url(configured: Optional[str] = None) -> str:
    """The folder URL the rule pages are in, without a trailing slash (see the module's docstring)."""
    if configured:
        return configured.rstrip("/")
    from_environment = os.environ.get(DOCS_BASE_URL_VARIABLE, "").strip()
    if from_environment:
        base = _environment_base(from_environment)
        if base is not None:
            return base
    return declared_urls().get("Rules", DEFAULT_DOCS_BASE_URL).rstrip("/")


def rule_url(code: str, configured: Optional[str] = None) -> str:
    """``https://github.com/torchlint/torchlint/blob/main/docs/rules/TL101.md``."""
    return f"{docs_base_url(configured)}/{code}.md"
