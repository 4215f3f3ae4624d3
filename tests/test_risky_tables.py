"""The torch and NumPy facts behind TL203-TL208, checked against the installed versions.

The rules read these tables from ``torchlint.knowledge.torch_api`` and never import
torch or NumPy at lint time; these tests keep the data equal to what torch
2.13 and NumPy actually do.
"""

from __future__ import annotations

import importlib
import inspect
import math
import warnings
from typing import Any

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

from torchlint.knowledge.torch_api import (  # noqa: E402
    ARRAY_TO_TENSOR,
    DROPOUT_FUNCTIONS,
    DROPOUT_TRAINING_INDEX,
    IMPLICIT_DIM_CALLABLES,
    NAN_CONSTANTS,
    NDARRAY_FACTORIES,
    NDARRAY_ONLY_TO_TENSOR,
    NDARRAY_STRIDE_PERMUTING_METHODS,
    NUMPY_NEGATIVE_STRIDE_FUNCTIONS,
    NUMPY_STRIDE_PERMUTING_FUNCTIONS,
    TORCH_LOAD,
    TORCH_LOAD_POSITIONAL,
)

_MISSING = object()


def lookup(qualified: str) -> Any:
    parts = qualified.split(".")
    try:
        obj: Any = importlib.import_module(parts[0])
    except ImportError:
        return _MISSING
    for index, part in enumerate(parts[1:], start=1):
        value = getattr(obj, part, _MISSING)
        if value is _MISSING:
            try:
                value = importlib.import_module(".".join(parts[: index + 1]))
            except ImportError:
                return _MISSING
        obj = value
    return obj


# --- TL203 / TL214 -------------------------------------------------------------------------


@pytest.mark.parametrize("qualified", sorted(TORCH_LOAD))
def test_torch_load_signature(qualified: str) -> None:
    load = lookup(qualified)
    assert load is torch.load
    parameters = inspect.signature(load).parameters
    positional = [
        name for name, p in parameters.items() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    ]
    assert tuple(positional) == TORCH_LOAD_POSITIONAL
    assert parameters["weights_only"].kind is inspect.Parameter.KEYWORD_ONLY


def test_weights_only_defaults_to_true_in_this_torch() -> None:
    """Adding weights_only=True (TL214's fix) changes nothing from torch 2.6 on."""
    import io

    buffer = io.BytesIO()
    torch.save({"m": torch.nn.Linear(2, 2)}, buffer)  # a pickled module, not only tensors
    for kwargs in ({}, {"weights_only": True}):
        buffer.seek(0)
        with pytest.raises(Exception, match="[Ww]eights only load failed"):
            torch.load(buffer, map_location="cpu", **kwargs)


# --- TL204 -------------------------------------------------------------------------


@pytest.mark.parametrize("qualified, index", sorted(IMPLICIT_DIM_CALLABLES.items()))
def test_implicit_dim_callables(qualified: str, index: int) -> None:
    target = lookup(qualified)
    assert target is not _MISSING, qualified
    is_class = isinstance(target, type)
    params = list(inspect.signature(target.__init__ if is_class else target).parameters)
    if is_class:
        params = params[1:]
    assert params[index] == "dim"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = torch.randn(2, 3, 4)
        out = target()(x) if is_class else target(x)
    assert any("Implicit dimension choice" in str(w.message) for w in caught)
    # The legacy choice for 3-D input is dim 0, the batch dimension.
    name = qualified.rsplit(".", 1)[1].lower()
    expected = {"softmax": x.softmax(0), "logsoftmax": x.log_softmax(0), "log_softmax": x.log_softmax(0),
                "softmin": (-x).softmax(0)}[name]
    assert torch.allclose(out, expected)


# --- TL205 -------------------------------------------------------------------------


@pytest.mark.parametrize("qualified, default", sorted(DROPOUT_FUNCTIONS.items()))
def test_dropout_training_default(qualified: str, default: bool) -> None:
    fn = lookup(qualified)
    assert fn is not _MISSING, qualified
    params = list(inspect.signature(fn).parameters.values())
    assert params[DROPOUT_TRAINING_INDEX].name == "training"
    assert params[DROPOUT_TRAINING_INDEX].default is default


# --- TL207 -------------------------------------------------------------------------


def _negative_views(a):
    yield "slice", a[::-1]
    for qualified in sorted(NUMPY_NEGATIVE_STRIDE_FUNCTIONS):
        yield qualified, lookup(qualified)(a)


@pytest.mark.parametrize("qualified", sorted(ARRAY_TO_TENSOR))
def test_negative_strides_raise_value_error(qualified: str) -> None:
    convert = lookup(qualified)
    assert convert is not _MISSING, qualified
    a = np.arange(12.0).reshape(3, 4)
    for label, view in _negative_views(a):
        assert min(view.strides) < 0, label
        with pytest.raises(ValueError, match="negative"):
            convert(view)
        assert torch.equal(torch.as_tensor(view.copy()), torch.as_tensor(np.array(view))), label
        convert(view.copy())  # the fix


def test_only_from_numpy_rejects_lists() -> None:
    for qualified in sorted(ARRAY_TO_TENSOR - NDARRAY_ONLY_TO_TENSOR):
        lookup(qualified)([1.0, 2.0])
    for qualified in sorted(NDARRAY_ONLY_TO_TENSOR):
        with pytest.raises(TypeError):
            lookup(qualified)([1.0, 2.0])


def test_rot90_multiple_of_four_is_not_flipped() -> None:
    a = np.arange(12.0).reshape(3, 4)
    for k in (0, 4, -4, 8):
        assert min(np.rot90(a, k).strides) > 0
    for k in (1, 2, 3, -1, 5):
        assert min(np.rot90(a, k).strides) < 0


def test_stride_permuting_views_keep_negative_strides() -> None:
    flipped = np.arange(24.0).reshape(2, 3, 4)[:, :, ::-1]
    views = [flipped.T]
    views += [getattr(flipped, m)(*((1, 0) if m == "swapaxes" else ())) for m in NDARRAY_STRIDE_PERMUTING_METHODS]
    for qualified in NUMPY_STRIDE_PERMUTING_FUNCTIONS:
        fn = lookup(qualified)
        views.append(fn(flipped) if qualified.endswith("transpose") else fn(flipped, 0, 1))
    for view in views:
        assert min(view.strides) < 0


def test_ndarray_factories_exist() -> None:
    for qualified in sorted(q for q in NDARRAY_FACTORIES if q.startswith("numpy.")):
        assert callable(lookup(qualified)), qualified


# --- TL208 -------------------------------------------------------------------------


def test_nan_constants_are_nan() -> None:
    present = [q for q in sorted(NAN_CONSTANTS) if lookup(q) is not _MISSING]
    assert {"math.nan", "numpy.nan", "torch.nan"} <= set(present)
    for qualified in present:
        value = lookup(qualified)
        assert isinstance(value, float) and math.isnan(value), qualified
        assert not (value == value)
    assert float(" -NaN ") != float(" -NaN ")
    x = torch.tensor([1.0, float("nan")])
    assert not (x == float("nan")).any()
    assert torch.equal(torch.isnan(x), torch.tensor([False, True]))


# --- TL215 / TL216 ------------------------------------------------------------------


def test_dot_of_2d_tensors_raises_and_flattening_gives_the_old_value() -> None:
    """TL215's premise: dot takes 1-D tensors only today; flattening is the pre-0.4 meaning."""
    a, b = torch.ones(2, 3), torch.arange(6.0).view(2, 3)
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        a.dot(b)
    assert a.reshape(-1).dot(b.reshape(-1)).item() == (a * b).sum().item()


def test_a_0_dim_target_next_to_a_batch_of_one_raises() -> None:
    """TL216's premise: an element of a 1-D target tensor is 0-dim, and a loss over a batch of one rejects it."""
    criterion = torch.nn.CrossEntropyLoss()
    inputs, targets = torch.randn(4, 3), torch.tensor([0, 2, 1, 0])
    assert targets[1].dim() == 0 and next(iter(targets)).dim() == 0
    with pytest.raises(ValueError, match="batch_size"):
        criterion(inputs[1:2], targets[1])
    criterion(inputs[1:2], targets[1:2])  # the shape (1,) target old torch gave
