"""torch's own deprecations (mined) against torchlint's table and review.

``scripts/mine_torch_deprecations.py`` reads the installed torch's sources
(2.13) and the wheels of later releases (2.14.1, 2.15.0) for every deprecation
a user can trigger, into one table that says per item in which release it was
deprecated, removed or un-deprecated; ``knowledge/deprecation_review.py``
decides each mined item (a table entry, another rule, or out of scope with a
reason). These tests regenerate the data under the installed torch (the other
releases' statuses are the committed ones: no wheel is downloaded here) and
hold the committed file, the review and the rules to it; the reading of
releases from wheels is tested on small wheels made here.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Dict

import pytest

torch = pytest.importorskip("torch")

from torchlint.core.settings import parse_version  # noqa: E402
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
    assert review.MINED_FILE.stat().st_size < 250_000  # three releases' statuses


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
    for mined_id in review.COVERED_BY:
        assert mined_id in ids, mined_id
        for key in review.covering_keys(mined_id):
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


def test_each_release_has_95_percent_of_its_detectable_items_flagged() -> None:
    """Issue 35's acceptance: flagged of detectable and fixed of exact, per release (2.13, 2.14, 2.15)."""
    for release, row in review.release_coverage(MINED).items():
        assert row["flagged"] >= 0.95 * row["detectable"], (release, row)
        assert row["fixed"] >= 0.95 * row["exact"], (release, row)


def test_unflagged_lists_every_detectable_item_not_flagged() -> None:
    result = subprocess.run([sys.executable, str(SCRIPT), "--unflagged"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    for release, row in review.release_coverage(MINED).items():
        listed = review.unflagged(MINED, release)
        assert len(listed) == row["detectable"] - row["flagged"], (release, listed)
        assert f"{release}: {len(listed)} detectable, not flagged" in result.stdout
        for item_id, why in listed:
            assert why.strip() and f"  {item_id}: " in result.stdout


# Issue 35's items that torch warns about only for some values: the value by keyword, by position,
# a value that does not warn, and one the file computes (not reported).
VALUE_CASES = [
    ("torch.onnx.export(m, x, 'm.onnx', dynamo=False)", True),
    ("torch.onnx.export(m, x, 'm.onnx', dynamo=True)", False),
    ("torch.onnx.export(m, x, 'm.onnx', dynamo=flag)", False),
    ("torch.onnx.utils.export(m, x, 'm.onnx', training=torch.onnx.TrainingMode.TRAINING)", True),
    ("torch.onnx.utils.export(m, x, 'm.onnx', training=torch.onnx.TrainingMode.EVAL)", False),
    ("torch.onnx.utils.export(m, x, 'm.onnx', operator_export_type=torch.onnx.OperatorExportTypes.ONNX_ATEN)", True),
    ("torch.onnx.utils.export(m, x, 'm.onnx', operator_export_type=torch.onnx.OperatorExportTypes.ONNX)", False),
    ("torch.onnx.utils.export(m, x, 'm.onnx', operator_export_type=config.OPERATOR_TYPE)", False),
    ("torch.jit.ignore(True)(f)", True),
    ("torch.jit.ignore(drop=True)(f)", True),
    ("torch.jit.ignore(False)(f)", False),
    ("torch.jit.ignore(f)", False),
    ("torch.multiprocessing.spawn(f, (), 2, True, False, 'fork')", True),
    ("torch.multiprocessing.spawn(f, start_method='forkserver')", True),
    ("torch.multiprocessing.spawn(f, start_method='spawn')", False),
    ("torch.multiprocessing.spawn(f, start_method=method)", False),
    ("torch.stft(x, 64, return_complex=False)", True),
    ("torch.stft(x, 64, return_complex=True)", False),
    ("torch.nn.parallel.DistributedDataParallel(m, broadcast_buffers=False)", True),
    ("torch.nn.parallel.DistributedDataParallel(m, forward_sync_buffers=False)", False),
    ("torch.autograd.variable(x)", True),
    ("torch.autograd.variable.Variable(x)", False),
    ("torch.FloatStorage(3)", True),
    ("torch.TypedStorage(3)", True),
    ("isinstance(s, (torch.FloatStorage, torch.TypedStorage))", False),
    ("torch.sparse.FloatTensor(i, v, (2, 2))", True),
    ("isinstance(t, torch.sparse.FloatTensor)", False),
    # decorating a class with a grad-mode context manager (not a function or a method)
    ("None\n@torch.no_grad()\nclass A:\n    pass", True),
    ("None\n@torch.no_grad\nclass A:\n    pass", True),
    ("None\n@torch.set_grad_enabled(False)\nclass A:\n    pass", True),
    ("None\nclass A:\n    @torch.no_grad()\n    def f(self):\n        pass", False),
    ("None\n@torch.inference_mode()\ndef f():\n    pass", False),
    # __torch_function__ as a plain method: a Tensor subclass or a duck type, not a mode or a project base
    ("None\nclass T(torch.Tensor):\n    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
     "        return 1", True),
    ("None\nclass Duck:\n    def __torch_function__(self, func, types, args=(), kwargs=None):\n        return 1", True),
    ("None\nclass T(torch.Tensor):\n    @classmethod\n    def __torch_function__(cls, func, types, args=(), "
     "kwargs=None):\n        return 1", False),
    ("None\nclass M(torch.overrides.TorchFunctionMode):\n    def __torch_function__(self, func, types, args=(), "
     "kwargs=None):\n        return 1", False),
    ("None\nclass M(ProjectMode):\n    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
     "        return 1", False),
]


@pytest.mark.parametrize("use, flagged", VALUE_CASES)
def test_values_and_calls_torch_warns_about(use: str, flagged: bool) -> None:
    from torchlint.core.settings import Settings
    from torchlint.engine.linter import Engine
    from torchlint.rules import rule_by_code

    engine = Engine([rule_by_code("TL108"), rule_by_code("TL109")], Settings())
    found = engine.check(f"import torch\nimport torch.autograd.variable\ny = {use}\n").diagnostics
    assert bool(found) is flagged, (use, [d.message for d in found])


def test_plain_method_torch_function_warns_under_torch() -> None:
    """What the plain-method entry matches does warn under the installed torch: a Tensor subclass
    and a duck type (the C++ dispatcher and handle_torch_function both warn); a mode does not."""
    code = (
        "import warnings, torch\n"
        "torch.set_warn_always(True)\n"
        "class T(torch.Tensor):\n    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
        "        return super().__torch_function__(func, types, args, kwargs or {})\n"
        "class Duck:\n    def __torch_function__(self, func, types, args=(), kwargs=None):\n        return 1\n"
        "class Mode(torch.overrides.TorchFunctionMode):\n"
        "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
        "        return func(*args, **(kwargs or {}))\n"
        "def warned(run):\n    with warnings.catch_warnings(record=True) as caught:\n"
        "        warnings.simplefilter('always')\n        run()\n"
        "    return any('plain method' in str(w.message) for w in caught)\n"
        "def in_mode():\n    with Mode():\n        torch.ones(2) + 1\n"
        "print(warned(lambda: torch.ones(2).as_subclass(T) + 1), warned(lambda: torch.add(Duck(), 1)), "
        "warned(in_mode))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", "False"], result.stdout


def test_from_imported_storage_is_flagged_only_where_called() -> None:
    from torchlint.core.settings import Settings
    from torchlint.engine.linter import Engine
    from torchlint.rules import rule_by_code

    engine = Engine([rule_by_code("TL109")], Settings())
    assert not engine.check("from torch import FloatStorage\nisinstance(s, FloatStorage)\n").diagnostics
    assert engine.check("from torch import FloatStorage\ns = FloatStorage(4)\n").diagnostics


_GROUP_PROBE = """
import json, sys, warnings
import torch
torch.set_warn_always(True)
torch.storage._set_always_warn_typed_storage_removal(True)
seen = {}
for group, use in json.loads(sys.stdin.read()).items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eval(use, {"torch": torch})
    seen[group] = [str(w.message) for w in caught]
print(json.dumps(seen))
"""


def test_unmined_groups_warn_and_are_decided() -> None:
    """Issue 35's 2.13 groups torch's Python sources do not show: torch 2.13 warns on each use, and each
    is either flagged by the entries named (the use itself, through TL109) or not reported, with a reason."""
    from torchlint.core.settings import Settings
    from torchlint.engine.linter import Engine
    from torchlint.rules import rule_by_code

    uses = {group: use for group, use, _, _ in review.UNMINED_GROUPS}
    result = subprocess.run([sys.executable, "-c", _GROUP_PROBE], input=json.dumps(uses), capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    keys = review.table_keys()
    engine = Engine([rule_by_code("TL108"), rule_by_code("TL109")], Settings())
    for group, use, entry_keys, reason in review.UNMINED_GROUPS:
        assert any("deprecated" in message for message in seen[group]), (group, seen[group])
        found = engine.check(f"import torch\ny = {use}\n").diagnostics
        if entry_keys:
            assert not reason and all(key in keys for key in entry_keys), group
            assert found, f"{group}: {use} is not flagged"
        else:
            assert reason.strip() and not found, group


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


# --- releases ----------------------------------------------------------------------------

BY_ID = {item["id"]: item for item in MINED["items"]}


def test_releases_are_mined() -> None:
    assert MINED["format"] == 2
    assert MINED["releases"] == ["2.13.0", "2.14.1", "2.15.0"]
    assert all(set(item["status"]) == set(MINED["releases"]) for item in MINED["items"])


@pytest.mark.parametrize("mined_id, deprecated, removed, undeprecated", [
    # removed in 2.14: stubs that raise, and a keyword the signatures dropped (TypeError)
    ("torch.cholesky", None, "2.14.1", None),
    ("torch.qr", None, "2.14.1", None),
    ("torch.Tensor.cholesky", None, "2.14.1", None),
    ("torch.Tensor.qr", None, "2.14.1", None),
    ("torch.profiler.profile(use_cuda=)", "2.13.0", "2.14.1", None),
    ("torch.autograd.profiler.profile(use_cuda=)", "2.13.0", "2.14.1", None),
    # deprecated in 2.14
    ("torch.autograd.profiler.profile(with_modules=)", "2.14.1", None, None),
    ("torch.cuda.GreenContext.set_context", "2.14.1", None, None),
    ("torch.cuda.GreenContext.pop_context", "2.14.1", None, None),
    ("torch.distributed.distributed_c10d._set_pg_timeout", "2.14.1", None, None),
    # deprecated in 2.15
    ("torch.autograd.profiler.EnforceUnique", "2.15.0", None, None),
    ("torch.autograd.profiler.load_nvprof", "2.15.0", None, None),
    ("torch.autograd.profiler.parse_nvprof_trace", "2.15.0", None, None),
    ("torch.autograd.profiler.FunctionEvent.event_metadata", "2.15.0", None, None),
    ("torch.distributed.checkpoint._fsspec_filesystem", "2.15.0", None, None),
    ("torch.optim.Optimizer(params=)", "2.15.0", None, None),  # an optimizer given a set
    ("torch.cuda.graph_annotations.clear_kernel_annotations", "2.15.0", None, None),
    # no longer deprecated in 2.15
    ("torch.distributed.all_gather_into_tensor", "2.13.0", None, "2.15.0"),
    ("torch.distributed.reduce_scatter_tensor", "2.13.0", None, "2.15.0"),
    ("torch.distributed.gather_into_tensor", "2.14.1", None, "2.15.0"),
])
def test_release_history_of_the_items_the_issue_names(mined_id: str, deprecated, removed, undeprecated) -> None:
    item = BY_ID[mined_id]
    assert (item["deprecated"], item["removed"], item["undeprecated"]) == (deprecated, removed, undeprecated), item
    assert review.decide(item) is not None, f"{mined_id} is not decided"


def test_experimental_config_fields_are_reported_per_release() -> None:
    """``profile()`` warns about fields of its ``experimental_config``, which the user sets where the
    config is made: torch 2.14.1 about ``profiler_metrics`` and ``profiler_measure_per_kernel``
    (ignored there, gone from 2.15.0's constructor), 2.15.0 about ``adjust_profiler_step``. The one
    mined item is covered by the config keyword of each release, and flagged in both."""
    item = BY_ID["torch.autograd.profiler.profile(experimental_config=)"]
    assert item["status"] == {"2.13.0": "silent", "2.14.1": "warns", "2.15.0": "warns"}
    assert "profiler_metrics and profiler_measure_per_kernel are deprecated" in item["message"]
    decision = review.decide(item)
    config = "torch._C._profiler._ExperimentalConfig"
    by_release = {release: decision.entry_for(parse_version(release)) for release in ("2.14.1", "2.15.0")}
    assert by_release["2.14.1"].key == f"{config}(profiler_metrics=)"
    assert by_release["2.15.0"].key == f"{config}(adjust_profiler_step=)"
    assert by_release["2.15.0"].deprecated == "2.15"
    fields = [e for e in decision.entries if e.keyword != "adjust_profiler_step"]
    assert [(e.keyword, e.deprecated, e.removed) for e in fields] == [
        ("profiler_metrics", "2.14", "2.15"), ("profiler_measure_per_kernel", "2.14", "2.15")]
    assert not any(row[0] == item["id"] for release in ("2.14.1", "2.15.0")
                   for row in review.unflagged(MINED, release))


def test_experimental_config_fields_are_silent_in_2_13() -> None:
    """The installed torch 2.13 takes both fields and says nothing (so the floor 2.13 gets no fix:
    there they still configure CUDA metrics)."""
    import warnings

    from torch._C._profiler import _ExperimentalConfig

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = _ExperimentalConfig(profiler_metrics=["kineto__cuda_core_flops"], profiler_measure_per_kernel=True)
        with torch.autograd.profiler.profile(experimental_config=config):
            torch.ones(2).sum()


def _minor(version):
    return ".".join(version.split(".")[:2]) if version else None


def test_table_entries_agree_with_the_mined_history() -> None:
    """An entry with an item of its own key carries that item's removal and un-deprecation (to the
    minor version); a removal before the first release mined is not dated by mining."""
    first = MINED["releases"][0]
    keys = review.table_keys()
    for item in MINED["items"]:
        entry = keys.get(item["id"])
        if entry is None or entry.key != item["id"]:
            continue
        if item["removed"] and item["removed"] != first:
            assert entry.removed == _minor(item["removed"]), (item["id"], entry.removed, item["removed"])
        assert entry.undeprecated == _minor(item["undeprecated"]), (item["id"], entry.undeprecated)


def test_report_prints_each_release() -> None:
    report = review.coverage_report(MINED)
    rows = {line.split()[0]: line.split()[1:] for line in report.splitlines() if line[:1].isdigit()}
    assert sorted(rows) == MINED["releases"]
    for release, (mined, detectable, flagged, exact, fixed) in rows.items():
        assert int(flagged) <= int(detectable) <= int(mined) and int(fixed) <= int(exact) <= int(flagged)


# --- reading releases from wheels (small ones made here) -------------------------------

REMOVED = "This function was deprecated since version 1.9 and is now removed."
RELEASE_2_13: Dict[str, str] = {
    "torch/version.py": "__version__ = '2.13.0+cpu'\n",
    "torch/__init__.py": "from torch._linalg_utils import cholesky, solve\nfrom torch import profiler\n"
                         "from .functional import *\n",
    "torch/functional.py": "__all__ = ['norm']\ndef norm(x):\n    return x\n",
    "torch/_linalg_utils.py": (
        "import warnings\n"
        "def cholesky(A, upper=False):\n    warnings.warn('cholesky is deprecated', FutureWarning)\n"
        f"def solve(A, B):\n    raise RuntimeError({REMOVED!r})\n"
    ),
    "torch/profiler/__init__.py": "from .profiler import profile\n",
    "torch/profiler/profiler.py": (
        "import warnings\n"
        "class profile:\n"
        "    def __init__(self, activities=None, use_cuda=None):\n"
        "        if use_cuda is not None:\n"
        "            warnings.warn('`use_cuda` is deprecated', FutureWarning)\n"
    ),
    "torch/distributed/__init__.py": "from .c10d import *\n",
    "torch/distributed/c10d.py": (
        "__all__ = ['all_gather_into_tensor']\n"
        "from typing_extensions import deprecated\n"
        "@deprecated('all_gather_into_tensor is deprecated', category=FutureWarning)\n"
        "def all_gather_into_tensor(a, b):\n    pass\n"
    ),
}

RELEASE_2_14 = {
    **RELEASE_2_13,
    "torch/version.py": "__version__ = '2.14.1'\n",
    "torch/_linalg_utils.py": (
        "def cholesky(A, upper=False):\n    mode = 'upper' if upper else 'lower'\n"
        f"    raise RuntimeError({REMOVED!r})\n"
        f"def solve(A, B):\n    raise RuntimeError({REMOVED!r})\n"
    ),
    "torch/profiler/profiler.py": "class profile:\n    def __init__(self, activities=None):\n        pass\n",
    "torch/distributed/c10d.py": "__all__ = ['all_gather_into_tensor']\ndef all_gather_into_tensor(a, b):\n    pass\n",
}


def _wheel(tmp_path: Path, name: str, files: Dict[str, str]) -> Path:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            archive.writestr(member, text)
        archive.writestr("torch/lib/libtorch.so", b"\0binary, never read")
    return path


def test_releases_are_read_from_wheels_and_diffed(tmp_path: Path) -> None:
    script = _script()
    releases = [script.Release.wheel(_wheel(tmp_path, f"torch-{v}.whl", files))
                for v, files in (("2.13", RELEASE_2_13), ("2.14", RELEASE_2_14))]
    assert [r.version for r in releases] == ["2.13.0", "2.14.1"]
    assert not any(name.endswith(".so") for r in releases for name in r.files)
    names = {r.version: script.StaticNames(r) for r in releases}
    mined = {r.version: script.mine_release(r, names[r.version]) for r in releases}
    table = script.build_table(mined, names, "2.13.0")
    by_id = {item["id"]: item for item in table["items"]}
    history = {i: (by_id[i]["deprecated"], by_id[i]["removed"], by_id[i]["undeprecated"]) for i in by_id}
    assert history == {
        "torch.cholesky": ("2.13.0", "2.14.1", None),  # warns, then a stub that raises
        "torch.solve": (None, "2.13.0", None),  # raises in the first release mined
        "torch.profiler.profile(use_cuda=)": ("2.13.0", "2.14.1", None),  # the keyword is gone
        "torch.distributed.all_gather_into_tensor": ("2.13.0", None, "2.14.1"),  # silent again
    }
    assert by_id["torch.cholesky"]["names"] == ["torch.cholesky"]
    assert by_id["torch.distributed.all_gather_into_tensor"]["names"][0] == "torch.distributed.all_gather_into_tensor"


def test_static_names_follow_imports(tmp_path: Path) -> None:
    script = _script()
    names = script.StaticNames(script.Release.wheel(_wheel(tmp_path, "torch.whl", RELEASE_2_13)))
    assert names.resolve("torch", "cholesky") == ("def", "torch._linalg_utils", "cholesky")
    assert names.resolve("torch", "norm") == ("def", "torch.functional", "norm")  # through __all__
    assert names.resolve("torch", "profiler") == ("module", "torch.profiler", "")
    assert names.exists("torch.profiler.profile") and not names.exists("torch.nothing_here")
    assert names.accepts_keyword("torch.profiler.profiler:profile", "use_cuda") is True
    assert names.accepts_keyword("torch.profiler.profiler:profile", "use_gpu") is False
