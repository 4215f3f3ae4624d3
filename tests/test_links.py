"""Every rule link torchlint emits (json ``url``, SARIF ``helpUri``, the language server's
``codeDescription.href``) is ``<docs base URL>/<CODE>.md`` with the page present in docs/rules/,
the base is what setup.cfg declares unless one is configured, and one configured base changes
all three outputs."""

from __future__ import annotations

import configparser
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import REPO, every_rule_selector
from lsp_client import LspClient

from torchlint.core import links
from torchlint.rules import all_rules

RULES = all_rules()
CUSTOM_BASE = "https://docs.example.org/torchlint/rules"


def _declared_urls():
    parser = configparser.ConfigParser()
    parser.read(REPO / "setup.cfg", encoding="utf-8")
    lines = parser["metadata"]["project_urls"].strip().splitlines()
    return dict((part.strip() for part in line.split("=", 1)) for line in lines)


def test_the_fallback_urls_are_the_ones_setup_cfg_declares():
    urls = _declared_urls()
    assert urls["Rules"] == links.DEFAULT_DOCS_BASE_URL
    assert urls["Homepage"] == urls["Source"] == links.REPOSITORY
    assert all(url.startswith(links.REPOSITORY) for url in urls.values())
    assert {"Homepage", "Documentation", "Source", "Changelog", "Issues"} <= set(urls)


def test_the_default_base_is_the_repositorys_docs_rules_folder():
    # The blob URL of docs/rules on the default branch: each page is docs/rules/<CODE>.md there.
    assert links.DEFAULT_DOCS_BASE_URL == links.REPOSITORY + "/blob/main/docs/rules"
    assert (REPO / "docs" / "rules").is_dir()


@pytest.fixture(scope="module")
def examples(tmp_path_factory) -> Path:
    """One file per flagged example of every rule: findings of (nearly) every rule."""
    folder = tmp_path_factory.mktemp("examples")
    (folder / "pyproject.toml").write_text("[tool.torchlint]\n")
    for rule in RULES:
        for index, example in enumerate(rule.flagged):
            if example.python3:
                (folder / f"{rule.code.lower()}_{index}.py").write_text(textwrap.dedent(example.code))
    return folder


def _outputs(folder: Path, env=None):
    found = {}
    for output_format in ("json", "sarif"):
        result = subprocess_run(folder, output_format, env)
        assert result.returncode == 1, result.stderr
        found[output_format] = json.loads(result.stdout)
    return found


def subprocess_run(folder: Path, output_format: str, env=None):
    """The real CLI on ``folder``, every rule selected, in ``env``."""
    return subprocess.run([sys.executable, "-m", "torchlint", "--no-cache", "--select", every_rule_selector(),
                           "--output-format", output_format, "."],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=600)


def _links(found):
    """(code, url) of every rule link in the json and SARIF output."""
    pairs = [(item["code"], item["url"]) for item in found["json"] if item["code"]]
    driver = found["sarif"]["runs"][0]["tool"]["driver"]
    pairs += [(rule["id"], rule["helpUri"]) for rule in driver["rules"]]
    return pairs, driver["informationUri"]


def test_every_link_is_a_rule_page_under_the_default_base(examples):
    pairs, homepage = _links(_outputs(examples, env=_env_without_base()))
    codes = {code for code, _ in pairs}
    assert codes == {rule.code for rule in RULES}  # the SARIF driver lists every selected rule
    assert len(set(pairs)) == len(RULES)  # one link per code, whichever output names it
    base = links.docs_base_url()
    for code, url in pairs:
        assert url == f"{base}/{code}.md"
        assert (REPO / "docs" / "rules" / f"{code}.md").is_file(), f"{url} names a page docs/rules lacks"
    assert homepage == links.homepage_url()


def test_findings_of_most_rules_carry_links(examples):
    found = _outputs(examples, env=_env_without_base())
    with_links = {item["code"] for item in found["json"] if item["code"] and item["url"]}
    assert len(with_links) >= len(RULES) - 3, sorted({r.code for r in RULES} - with_links)


def _env_without_base():
    return {k: v for k, v in os.environ.items() if k != links.DOCS_BASE_URL_VARIABLE}


def test_a_configured_base_changes_every_link(examples):
    env = {**_env_without_base(), links.DOCS_BASE_URL_VARIABLE: CUSTOM_BASE + "/"}  # the slash is dropped
    pairs, _ = _links(_outputs(examples, env=env))
    assert pairs and all(url == f"{CUSTOM_BASE}/{code}.md" for code, url in pairs)


def test_a_base_that_is_not_a_url_is_reported_and_the_default_kept(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n")
    (tmp_path / "model.py").write_text("import torch.nn.functional as F\ny = F.sigmoid(x)\n")
    env = {**_env_without_base(), links.DOCS_BASE_URL_VARIABLE: "docs/rules"}
    result = subprocess_run(tmp_path, "json", env)
    assert result.returncode == 1
    (item,) = json.loads(result.stdout)
    assert item["url"] == f"{links.docs_base_url()}/TL104.md"
    assert "ignoring TORCHLINT_DOCS_BASE_URL" in result.stderr and "not a docs base URL" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("base", [None, CUSTOM_BASE])
def test_the_language_server_links_the_same_pages(tmp_path, base):
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n")
    env = _env_without_base()
    if base:
        env[links.DOCS_BASE_URL_VARIABLE] = base
    client = LspClient(cwd=str(tmp_path), env=env)
    try:
        client.initialize(tmp_path)
        source = "import torch.nn.functional as F\ny = F.sigmoid(x)\nz = F.upsample(y, scale_factor=2)\n"
        uri = client.open(tmp_path / "model.py", source)
        diagnostics = client.diagnostics(uri, version=1)["diagnostics"]
    finally:
        client.close()
    expected_base = base or links.docs_base_url()
    assert {d["code"] for d in diagnostics} == {"TL103", "TL104"}
    for diagnostic in diagnostics:
        code = diagnostic["code"]
        assert diagnostic["codeDescription"]["href"] == f"{expected_base}/{code}.md"
        assert (REPO / "docs" / "rules" / f"{code}.md").is_file()


def test_check_docs_base_url_names_what_it_expects():
    assert links.check_docs_base_url("https://example.org/rules/") == "https://example.org/rules"
    assert links.check_docs_base_url("file:///srv/docs/rules") == "file:///srv/docs/rules"
    for bad in ("docs/rules", "ftp://example.org/rules", "https://"):
        with pytest.raises(ValueError, match="not a docs base URL"):
            links.check_docs_base_url(bad)


def test_the_docs_base_url_setting_wins_over_the_environment(tmp_path):
    (tmp_path / "pyproject.toml").write_text(f'[tool.torchlint]\ndocs-base-url = "{CUSTOM_BASE}/"\n')
    (tmp_path / "model.py").write_text("import torch.nn.functional as F\ny = F.sigmoid(x)\n")
    env = {**_env_without_base(), links.DOCS_BASE_URL_VARIABLE: "https://elsewhere.example/rules"}
    result = subprocess_run(tmp_path, "json", env)
    (item,) = json.loads(result.stdout)
    assert item["url"] == f"{CUSTOM_BASE}/TL104.md"


def test_a_docs_base_url_setting_that_is_no_url_is_a_usage_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ndocs-base-url = "docs/rules"\n')
    (tmp_path / "model.py").write_text("x = 1\n")
    result = subprocess_run(tmp_path, "json", _env_without_base())
    assert result.returncode == 2
    assert "docs-base-url" in result.stderr and "not a docs base URL" in result.stderr
    assert "Traceback" not in result.stderr
