"""The release story is consistent: the version in ``torchlint/__init__.py``,
the top entry of CHANGELOG.md and the tag the docs tell users to pin agree
(docs/releasing.md says how the tag ``vX.Y.Z`` is made from the version)."""

from __future__ import annotations

import re

from conftest import REPO

from torchlint import __version__


def _changelog_top_version() -> str:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    match = re.search(r"^## (\d+\.\d+\.\d+)\b", text, re.MULTILINE)
    assert match, "CHANGELOG.md has no `## X.Y.Z` entry"
    return match.group(1)


def test_changelog_top_entry_is_the_package_version():
    assert _changelog_top_version() == __version__


def test_docs_pin_the_tag_of_the_package_version():
    running = (REPO / "docs" / "running.md").read_text(encoding="utf-8")
    revs = re.findall(r"^\s*rev:\s*(v\d+\.\d+\.\d+)\s*$", running, re.MULTILINE)
    pinned = re.findall(r"torchlint @ git\+<torchlint-git-url>@(v[\w.]+)", running)
    assert revs, "docs/running.md names no `rev: vX.Y.Z` for the torchlint hook"
    assert set(revs + pinned) == {f"v{__version__}"}


def test_the_release_procedure_derives_the_tag_from_the_version():
    releasing = (REPO / "docs" / "releasing.md").read_text(encoding="utf-8")
    assert "torchlint.__version__" in releasing
    assert 'git tag -a "v$version"' in releasing
    assert "releasing.md" in (REPO / "docs" / "running.md").read_text(encoding="utf-8")
