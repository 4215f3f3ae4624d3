"""The generated documentation is committed and up to date.

``docs/rules/*.md`` and the README rule table are rendered from the rule
definitions by ``python -m torchlint.rules.docs``; a page that is missing or differs
from what the definitions render fails here, telling you to regenerate.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torchlint.rules import all_rules, docs, rule_by_code
from torchlint.rules.rule import FixSafety

REPO = Path(__file__).resolve().parent.parent

RULES = all_rules()
REGENERATE = "run `python -m torchlint.rules.docs` and commit the result"


def _read(path):
    assert path.is_file(), f"{path.relative_to(REPO)} is missing; {REGENERATE}"
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_page_is_up_to_date(rule) -> None:
    path = REPO / "docs" / "rules" / f"{rule.code}.md"
    assert _read(path) == docs.render_rule(rule), f"{path.relative_to(REPO)} is stale; {REGENERATE}"


def test_rule_index_is_up_to_date() -> None:
    path = REPO / "docs" / "rules" / "README.md"
    assert _read(path) == docs.render_index(RULES), f"{path.relative_to(REPO)} is stale; {REGENERATE}"


def test_readme_rule_table_is_up_to_date() -> None:
    readme = _read(REPO / "README.md")
    assert readme.count(docs.README_START) == 1 and readme.count(docs.README_END) == 1
    section = readme.split(docs.README_START, 1)[1].split(docs.README_END, 1)[0]
    assert section == "\n" + docs.render_readme_table(RULES), f"README.md's rule table is stale; {REGENERATE}"


def test_no_page_for_a_rule_that_does_not_exist() -> None:
    codes = {r.code for r in RULES}
    pages = {p.stem for p in (REPO / "docs" / "rules").glob("TL*.md")}
    assert pages - codes == set(), f"pages of removed rules remain; {REGENERATE}"


def test_check_mode_passes_on_the_repository() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "torchlint.rules.docs", "--check"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# --- the pages say what the definitions say ------------------------------------------


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_page_contents(rule) -> None:
    page = docs.render_rule(rule)
    assert page.startswith(f"# {rule.name} ({rule.code})\n")
    headings = re.findall(r"^## (.+)$", page, flags=re.M)
    expected = ["What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "Torch versions", "Accepted"]
    if rule.references:
        expected.append("References")
    assert headings == expected
    assert rule.torch_versions.describe() in page
    for text in (rule.summary, rule.why, rule.fix_description):
        assert text in page
    for example in rule.flagged:
        assert f"```python\n{example.code.rstrip()}\n```" in page
        if example.fixed is not None:
            assert f"```python\n{example.fixed.rstrip()}\n```" in page
    for snippet in rule.accepted:
        assert f"```python\n{snippet.rstrip()}\n```" in page
    if rule.fix_safety in (FixSafety.UNSAFE, FixSafety.MIXED):
        assert "--unsafe-fixes" in page
    elif rule.fix_safety is FixSafety.NONE:
        assert "No fix is available" in page


def test_tables_list_every_rule_with_its_fix_safety() -> None:
    index = docs.render_index(RULES)
    table = docs.render_readme_table(RULES)
    for rule in RULES:
        assert f"| [{rule.code}]({rule.code}.md) | {rule.name} | {rule.summary} | {rule.fix_safety.value} |" in index
        assert f"| [{rule.code}](docs/rules/{rule.code}.md) | {rule.summary} | {rule.fix_safety.value} |" in table


# --- the generator itself ------------------------------------------------------------------


def _copy_docs(tmp_path):
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    shutil.copy(REPO / "CHANGELOG.md", tmp_path / "CHANGELOG.md")  # the README links to it
    (tmp_path / "bench").mkdir()
    for page in ("README.md", "RESULTS.md"):  # the README links to them
        shutil.copy(REPO / "bench" / page, tmp_path / "bench" / page)
    (tmp_path / "torchlint" / "rules").mkdir(parents=True)
    shutil.copy(REPO / "torchlint" / "rules" / "catalog.py", tmp_path / "torchlint" / "rules" / "catalog.py")
    return tmp_path


def test_check_mode_reports_stale_missing_and_obsolete_files(tmp_path) -> None:
    root = _copy_docs(tmp_path)
    (root / "docs" / "rules" / "TL101.md").write_text("edited by hand\n", encoding="utf-8")
    (root / "docs" / "rules" / "TL102.md").unlink()
    (root / "docs" / "rules" / "TL999.md").write_text("a removed rule\n", encoding="utf-8")
    out = io.StringIO()
    assert docs.main(["--check", "--root", str(root)], stdout=out) == 1
    report = out.getvalue()
    assert "stale: docs/rules/TL101.md" in report
    assert "missing: docs/rules/TL102.md" in report
    assert "obsolete: docs/rules/TL999.md" in report
    assert "python -m torchlint.rules.docs" in report
    assert (root / "docs" / "rules" / "TL101.md").read_text(encoding="utf-8") == "edited by hand\n"


def test_generator_repairs_and_is_idempotent(tmp_path) -> None:
    root = _copy_docs(tmp_path)
    (root / "docs" / "rules" / "TL101.md").write_text("edited by hand\n", encoding="utf-8")
    (root / "docs" / "rules" / "TL999.md").write_text("a removed rule\n", encoding="utf-8")
    readme = (root / "README.md").read_text(encoding="utf-8")
    start, end = readme.index(docs.README_START), readme.index(docs.README_END)
    (root / "README.md").write_text(readme[: start + len(docs.README_START)] + "\nold\n" + readme[end:], encoding="utf-8")

    assert docs.main(["--root", str(root)], stdout=io.StringIO()) == 0
    assert (root / "docs" / "rules" / "TL101.md").read_text(encoding="utf-8") == docs.render_rule(rule_by_code("TL101"))
    assert not (root / "docs" / "rules" / "TL999.md").exists()
    assert (root / "README.md").read_text(encoding="utf-8") == readme
    out = io.StringIO()
    assert docs.main(["--check", "--root", str(root)], stdout=out) == 0, out.getvalue()


def test_readme_outside_the_markers_is_kept() -> None:
    readme = "intro\n" + docs.README_START + "\nold table\n" + docs.README_END + "\noutro\n"
    updated = docs.replace_readme_section(readme, "NEW\n")
    assert updated == "intro\n" + docs.README_START + "\nNEW\n" + docs.README_END + "\noutro\n"
    with pytest.raises(ValueError):
        docs.replace_readme_section("no markers here\n", "NEW\n")


# --- hand-written pages ------------------------------------------------------------------


def test_hand_written_pages_exist_and_are_linked_from_the_readme() -> None:
    readme = _read(REPO / "README.md")
    for page in docs.HAND_WRITTEN_PAGES:
        assert (REPO / page).is_file(), f"{page} is missing"
        assert page.as_posix() in docs.relative_links(readme), f"README.md does not link to {page}"
    assert docs.hand_written_problems(REPO, readme) == []


def test_check_mode_reports_missing_unlinked_pages_and_broken_links(tmp_path) -> None:
    root = _copy_docs(tmp_path)
    (root / "docs" / "editors.md").unlink()
    (root / "docs" / "extra.md").write_text("# Extra\n\nSee [the rules](rules/README.md).\n", encoding="utf-8")
    running = root / "docs" / "running.md"
    running.write_text(running.read_text(encoding="utf-8") + "\n[gone](nowhere.md#top) [web](https://example.org/x.md)\n",
                       encoding="utf-8")
    out = io.StringIO()
    assert docs.main(["--check", "--root", str(root)], stdout=out) == 1
    report = out.getvalue().splitlines()
    assert "error: docs/editors.md: missing (a hand-written page; write it)" in report
    assert "error: README.md: no link to docs/extra.md" in report
    assert "error: docs/running.md: broken link to nowhere.md" in report
    assert not any("example.org" in line for line in report)
    assert report[-1] == "the errors above are in hand-written files: fix them by hand"
    # the generator never writes hand-written pages
    assert docs.main(["--root", str(root)], stdout=io.StringIO()) == 1
    assert not (root / "docs" / "editors.md").exists()


def _blocks(page: str, language: str):
    return re.findall(rf"```{language}\n(.*?)```", _read(REPO / "docs" / page), flags=re.S)


def test_editor_settings_in_the_docs_are_valid_json() -> None:
    import json

    blocks = [json.loads(block) for block in _blocks("editors.md", "json")]
    severities = [b["flake8.severity"] for b in blocks if "flake8.severity" in b]
    assert severities and severities[0]["TL"] == "Warning"
    pylsp = [b["pylsp"]["plugins"] for b in blocks if "pylsp" in b]
    assert pylsp and pylsp[0]["flake8"] == {"enabled": True}


def test_documented_flake8_config_is_read_by_flake8(tmp_path) -> None:
    (ini,) = _blocks("running.md", "ini")
    assert "torch-version" in ini
    (tmp_path / "setup.cfg").write_text(ini, encoding="utf-8")
    # TL104 only applies while torch < 2.0 is supported; the documented 2.1 turns it off.
    (tmp_path / "m.py").write_text("import torch.nn.functional as F\ny = F.upsample(F.sigmoid(x), scale_factor=2)\n")
    with_config = subprocess.run([sys.executable, "-m", "flake8", "--select", "TL", "m.py"],
                                 cwd=tmp_path, capture_output=True, text=True, timeout=120)
    without = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "TL", "m.py"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert with_config.stderr == "" and without.stderr == ""
    assert [line.split()[1] for line in without.stdout.splitlines()] == ["TL103", "TL104"]
    assert [line.split()[1] for line in with_config.stdout.splitlines()] == ["TL103"]
