"""torch 2.13's own deprecations (mined) against torchlint's table and review.

``scripts/mine_torch_deprecations.py`` reads the installed torch's sources for
every deprecation a user can trigger; ``knowledge/deprecation_review.py``
decides each mined item (a table entry, another rule, or out of scope with a
reason). These tests regenerate the data under the installed torch and hold
the committed file, the review and the rules to it.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from torchlint.knowledge import deprecation_review as review  # noqa: E402
from torchlint.knowledge.deprecations import ENTRIES  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "mine_torch_deprecations.py"
MINED = review.load_mined()


def _script():
    spec = importlib.util.spec_from_file_location("mine_torch_deprecations", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_committed_data_is_current(tmp_path: Path) -> None:
    if torch.__version__.split("+")[0] != MINED["torch"]:
        pytest.skip(f"the data was mined from torch {MINED['torch']}")
    output = tmp_path / "mined.json"
    result = subprocess.run([sys.executable, str(SCRIPT), "--output", str(output)], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    assert output.read_text(encoding="utf-8") == review.MINED_FILE.read_text(encoding="utf-8"), (
        "torch's deprecations changed: run python scripts/mine_torch_deprecations.py and review the new items")


def test_data_is_sorted_and_small() -> None:
    ids = [item["id"] for item in MINED["items"]]
    assert ids == sorted(ids) and len(ids) == len(set(ids))
    assert len(ids) > 200, "the miner found far fewer deprecations than torch 2.13 has"
    assert review.MINED_FILE.stat().st_size < 200_000


def test_every_mined_item_is_decided() -> None:
    keys = review.table_keys()
    undecided = [item["id"] for item in MINED["items"] if review.decide(item, keys) is None]
    assert not undecided, f"mined items neither in the table nor out of scope: {undecided}"


def test_out_of_scope_reasons_are_given_and_used() -> None:
    ids = [item["id"] for item in MINED["items"]]
    for pattern, scope, reason in review.OUT_OF_SCOPE:
        assert reason.strip() and isinstance(scope, review.Scope)
        assert any(fnmatch.fnmatchcase(i, pattern) for i in ids), f"no mined item matches {pattern!r}"
    keys = review.table_keys()
    for mined_id, key in review.COVERED_BY.items():
        assert mined_id in ids, mined_id
        assert key in keys, f"{mined_id} is said to be covered by {key}, which is not in the table"
    for mined_id in review.OTHER_RULES:
        assert mined_id in ids, mined_id


def test_items_the_issue_names_are_flagged() -> None:
    keys = review.table_keys()
    by_id = {item["id"]: item for item in MINED["items"]}
    for mined_id in ("functorch.vmap", "functorch.grad", "functorch.vjp", "functorch.jvp", "functorch.jacrev",
                     "functorch.jacfwd", "functorch.hessian", "torch.distributed._all_gather_base",
                     "torch.distributed._reduce_scatter_base", "torch.distributed.reduce_op",
                     "torch.utils._pytree._register_pytree_node", "torch.nn.init.constant",
                     "torch.nn.functional.upsample"):
        decision = review.decide(by_id[mined_id], keys)
        assert decision is not None and decision.flagged, mined_id


def test_coverage_of_detectable_items() -> None:
    counts = review.coverage(MINED)["all"]
    assert counts["undecided"] == 0
    # Measured 2026-11: 147 of 154 statically detectable items are flagged;
    # the rest are NOT_MODELED with their reasons (value-dependent keywords).
    assert counts["flagged"] >= 0.95 * counts["detectable"], counts


def test_every_name_entry_is_flagged_in_every_import_spelling() -> None:
    results = _script().measure_table()
    missed = {key: row for key, row in results.items() if "missed" in row.values()}
    assert not missed, missed


def test_exact_rewrites_are_fixed_in_every_import_spelling() -> None:
    """The fixer, run on a snippet of each entry in each spelling (``measure_table``), fixes
    at least 95 % of the exact rewrites per spelling, and every rename in all of them."""
    from torchlint.knowledge.deprecations import Rename

    results = _script().measure_table()
    exact = [e.key for e in ENTRIES if e.exact_fix and e.key in results]
    assert len(exact) > 50
    for spelling in _script().SPELLINGS:
        unfixed = sorted(key for key in exact if results[key][spelling] != "fixed")
        assert len(unfixed) <= 0.05 * len(exact), f"{spelling}: {len(unfixed)} of {len(exact)} unfixed: {unfixed}"
    renames = [e.key for e in ENTRIES if isinstance(e.rewrite, Rename) and e.key in results]
    unfixed_renames = {key: results[key] for key in renames if set(results[key].values()) != {"fixed"}}
    assert not unfixed_renames, unfixed_renames


def test_report_only_prints_fixes_by_spelling_without_mining() -> None:
    result = subprocess.run([sys.executable, str(SCRIPT), "--report-only"], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line.split() for line in result.stderr.splitlines() if line.startswith(
        tuple(_script().SPELLINGS))}
    assert sorted(rows) == sorted(_script().SPELLINGS)
    for spelling, row in rows.items():
        assert float(row[-1]) >= 95.0, row


def test_generator_prints_the_report(tmp_path: Path) -> None:
    script = _script()
    report = review.coverage_report(MINED) + script.fix_report(script.measure_table())
    assert "functorch" in report and "torch.distributed" in report and "from-import-as" in report
    assert json.loads(review.MINED_FILE.read_text(encoding="utf-8"))["torch"] == MINED["torch"]


# TorchFix 0.7.0's deprecated-symbols list (torchfix/deprecated_symbols.yaml), by name only.
TORCHFIX_DEPRECATED_SYMBOLS = (
    "torch.solve", "torch.qr", "torch.symeig", "torch.chain_matmul", "torch.cholesky", "torch.ger",
    "torch.lu_solve", "torch.norm", "torch.range", "torch.svd", "torch.triangular_solve", "torch.lu",
    "torch.matrix_rank", "torch.lstsq", "torch.nn.UpsamplingNearest2d", "torch.nn.UpsamplingBilinear2d",
    "torch.testing.assert_allclose", "torch.nn.utils.weight_norm", "torch.utils._pytree._register_pytree_node",
    "torch.backends.cuda.sdp_kernel", "functorch.vmap", "functorch.grad", "functorch.vjp", "functorch.jvp",
    "functorch.jacrev", "functorch.jacfwd", "functorch.hessian", "functorch.functionalize",
)


@pytest.mark.parametrize("qualified", TORCHFIX_DEPRECATED_SYMBOLS)
def test_torchfix_deprecated_symbol_is_flagged(qualified: str) -> None:
    from torchlint.engine.linter import Engine
    from torchlint.rules import all_rules

    assert len(TORCHFIX_DEPRECATED_SYMBOLS) == 28
    module, name = qualified.rsplit(".", 1)
    engine = Engine(all_rules())
    for source in (f"import {module}\ny = {qualified}(a, b)\n", f"from {module} import {name}\ny = {name}(a, b)\n"):
        codes = {d.code for d in engine.check(source).diagnostics}
        # TL117 (opt-in) has torch.norm and torch.svd: deprecated in the docs only, no exact fix.
        assert codes & {"TL108", "TL109", "TL117"}, f"{qualified} is not flagged:\n{source}"
