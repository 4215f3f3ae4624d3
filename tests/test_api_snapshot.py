"""The offline snapshot of torch's API (torchlint/knowledge/data/torch_api_snapshot.json).

The committed file must be what ``scripts/snapshot_torch_api.py`` writes for
the installed torch (regenerated here in a fresh interpreter), and linting
must read it without importing torch.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchlint.knowledge import api_snapshot
from torchlint.knowledge.api_snapshot import (
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Params,
    parse_params,
)

REPO = Path(__file__).resolve().parent.parent
SNAPSHOT = REPO / "torchlint" / "knowledge" / "data" / "torch_api_snapshot.json"
SCRIPT = REPO / "scripts" / "snapshot_torch_api.py"


# --- the committed file ------------------------------------------------------------


def test_snapshot_is_current() -> None:
    torch = pytest.importorskip("torch")
    committed_text = SNAPSHOT.read_text(encoding="utf-8")
    committed = json.loads(committed_text)
    if torch.__version__.split("+")[0] != committed["torch_version"]:
        pytest.skip(f"snapshot is of torch {committed['torch_version']}, installed is {torch.__version__}")
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--stdout"], capture_output=True, text=True, timeout=600, cwd=REPO
    )
    assert run.returncode == 0, run.stderr
    fresh = json.loads(run.stdout)
    stale = sorted(key for key in set(fresh) | set(committed) if fresh.get(key) != committed.get(key))
    assert not stale, f"the committed snapshot is stale in {stale}; run `python {SCRIPT.relative_to(REPO)}`"
    for namespace in fresh["namespaces"]:
        assert fresh["namespaces"][namespace] == committed["namespaces"][namespace], namespace
    assert run.stdout == committed_text, "same data, different layout: regenerate the file"


def test_snapshot_is_small() -> None:
    assert SNAPSHOT.stat().st_size < 250_000


def test_snapshot_covers_the_documented_namespaces() -> None:
    for namespace in (
        "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.optim", "torch.optim.lr_scheduler",
        "torch.utils.data", "torch.cuda", "torch.autograd", "torch.linalg", "torch.fft", "torch.nn.utils",
        "torch.backends.cudnn", "torch.distributions",
    ):
        assert api_snapshot.namespace_members(namespace), namespace
    assert api_snapshot.namespace_members("torch.distributed") is None  # platform dependent: not snapshotted
    assert api_snapshot.namespace_members("torch.Tensor") is None  # a class, not a namespace


def test_loading_for_lint_does_not_import_torch() -> None:
    code = textwrap.dedent(
        """
        import sys
        from torchlint.engine.linter import Engine
        from torchlint.rules import all_rules
        source = (
            "import torch\\n"
            "from torch.utils.data import DataLoader\\n"
            "torch.set_num_threds(2)\\n"
            "loader = DataLoader(ds, num_worker=2)\\n"
        )
        result = Engine(all_rules()).check(source)
        codes = sorted(d.code for d in result.diagnostics)
        print(codes, result.internal_errors)
        assert codes == ["TL211", "TL211"], codes
        assert "torch" not in sys.modules, "linting imported torch"
        """
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert run.returncode == 0, run.stdout + run.stderr


# --- what it records -----------------------------------------------------------------


def test_members_and_removed() -> None:
    torch_names = api_snapshot.namespace_members("torch")
    assert {"set_num_threads", "zeros", "nn", "cuda", "float32", "no_grad", "onnx"} <= torch_names
    assert "set_num_threds" not in torch_names
    # Removed functions that survive as stubs raising RuntimeError are not API.
    assert {"torch.solve", "torch.symeig", "torch.eig", "torch.lstsq", "torch.matrix_rank"} <= api_snapshot.removed()
    assert "solve" not in torch_names
    # Module-level __getattr__ names and class-attribute module properties count.
    assert "has_cuda" in torch_names
    assert {"benchmark", "deterministic", "enabled", "is_available"} <= api_snapshot.namespace_members(
        "torch.backends.cudnn")
    # Submodules on disk count even when not imported: `import torch.utils.tensorboard`.
    assert "tensorboard" in api_snapshot.namespace_members("torch.utils")
    assert {"tensorboard", "data"} <= api_snapshot.submodules("torch.utils")
    assert {"nn", "fft", "linalg"} <= api_snapshot.submodules("torch")
    assert "zeros" not in api_snapshot.submodules("torch")


def test_signatures() -> None:
    loader = api_snapshot.signature("torch.utils.data.DataLoader")
    assert loader is not None and not loader.var_keyword
    assert {"dataset", "batch_size", "shuffle", "num_workers", "persistent_workers"} <= loader.keywords
    # Where a class is defined resolves to where it is exported.
    assert api_snapshot.signature("torch.utils.data.dataloader.DataLoader") == loader
    assert api_snapshot.signature("torch.nn.modules.conv.Conv2d") == api_snapshot.signature("torch.nn.Conv2d")
    # A builtin parsed by torch's argument parser accepts numpy spellings.
    total = api_snapshot.signature("torch.sum")
    assert total is not None and total.argument_parser
    assert {"input", "dim", "keepdim", "dtype", "out", "axis", "keepdims"} <= total.keywords
    # Builtins without a stub (torch.linalg) come from the argument parser's signatures.
    assert {"input", "ord", "dim", "keepdim", "out"} <= api_snapshot.signature("torch.linalg.norm").keywords
    assert api_snapshot.signature("torch.Tensor") is None  # unknown: never checked
    assert api_snapshot.signature("torch.no_such_thing") is None


def test_params_notation() -> None:
    params = parse_params("a,/,b,*args,c,**kw")
    assert params.parameters == (
        ("a", POSITIONAL_ONLY), ("b", POSITIONAL_OR_KEYWORD), ("args", VAR_POSITIONAL),
        ("c", KEYWORD_ONLY), ("kw", VAR_KEYWORD),
    )
    assert params.var_keyword and params.var_positional
    assert params.keywords == {"b", "c"} and params.positional_only == {"a"}
    assert parse_params("x,*,y") == Params((("x", POSITIONAL_OR_KEYWORD), ("y", KEYWORD_ONLY)))
    assert parse_params("") == Params(())
    assert parse_params("@input,dim").keywords == {"input", "dim", "x", "a", "x1", "axis"}


def test_script_notation_round_trips() -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import snapshot_torch_api as script
    finally:
        sys.path.remove(str(SCRIPT.parent))
    kinds = {"p": POSITIONAL_ONLY, "k": POSITIONAL_OR_KEYWORD, "a": VAR_POSITIONAL, "o": KEYWORD_ONLY, "w": VAR_KEYWORD}
    for params in (
        [("a", "p"), ("b", "k"), ("args", "a"), ("c", "o"), ("kw", "w")],
        [("x", "k"), ("y", "o")],
        [("x", "p")],
        [],
    ):
        parsed = parse_params(script.encode(params))
        assert parsed.parameters == tuple((n, kinds[k]) for n, k in params)
    merged = script.merge([[("input", "k"), ("dim", "k")], [("input", "k"), ("out", "o")], [("x", "p")]])
    assert merged == [("x", "p"), ("input", "k"), ("dim", "k"), ("out", "o")]


def test_did_you_mean() -> None:
    torch_names = api_snapshot.namespace_members("torch")
    nn_names = api_snapshot.namespace_members("torch.nn")
    assert api_snapshot.closest("set_num_threds", torch_names) == "set_num_threads"
    assert api_snapshot.unambiguous_correction("set_num_threds", torch_names) == "set_num_threads"
    assert api_snapshot.unambiguous_correction("Conv2D", nn_names) == "Conv2d"
    assert api_snapshot.unambiguous_correction("Conv4d", nn_names) is None  # Conv1d, Conv2d, Conv3d
    assert api_snapshot.closest("relu", nn_names) == "ReLU"
    assert api_snapshot.unambiguous_correction("relu", nn_names) is None  # function vs class
    assert api_snapshot.unambiguous_correction("tensr", torch_names) == "tensor"  # not Tensor
    assert api_snapshot.closest("zzzzzz", torch_names) is None


# --- witnesses under real torch -----------------------------------------------------------


def test_numpy_spellings_are_accepted_by_torch() -> None:
    torch = pytest.importorskip("torch")
    x = torch.ones(2, 3)
    assert torch.sum(x, axis=0, keepdims=True).shape == (1, 3)
    assert torch.add(x1=x, x2=x).shape == (2, 3)
    with pytest.raises(TypeError):
        torch.sum(x, dims=0)


def test_removed_functions_raise() -> None:
    torch = pytest.importorskip("torch")
    for qualified in api_snapshot.removed():
        module, _, name = qualified.rpartition(".")
        function = getattr(__import__(module, fromlist=["_"]), name)
        with pytest.raises(RuntimeError, match="removed"):
            function(torch.eye(2), torch.eye(2))
