"""The torch facts in ``torchlint.knowledge.torch_api``, checked against real torch.

torchlint never imports torch at lint time, so its tables of loss signatures,
renames and the legacy reduction mapping are data; these tests keep that data
equal to what the installed torch (2.13) actually does.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
from typing import Any, Tuple

import pytest

torch = pytest.importorskip("torch")
import torch.nn  # noqa: E402
import torch.nn._reduction  # noqa: E402
import torch.nn.functional  # noqa: E402

from torchlint.knowledge.torch_api import (  # noqa: E402
    LOSS_FUNCTION_PARAMS,
    LOSS_MODULE_PARAMS,
    LOSS_PARAMS,
    ALWAYS_SCALAR_FUNCTIONS,
    BROADCASTING_FUNCTIONS,
    SCALAR_FUNCTIONS,
    SHAPE_KEEPING_FUNCTIONS,
    SHAPE_KEEPING_MODULES,
    UNARY_ELEMENTWISE_FUNCTIONS,
    RENAMES,
    legacy_reduction,
)
from torchlint.rules import all_rules  # noqa: E402

LEGACY = ("size_average", "reduce")
_MISSING = object()


def lookup(qualified: str) -> Any:
    """``torch.nn.functional.upsample`` -> the object, via imports and a getattr chain."""
    parts = qualified.split(".")
    obj: Any = importlib.import_module(parts[0])
    for index, part in enumerate(parts[1:], start=1):
        value = getattr(obj, part, _MISSING)
        if value is _MISSING:
            try:  # a submodule not imported by its parent
                value = importlib.import_module(".".join(parts[: index + 1]))
            except ImportError:
                return _MISSING
        obj = value
    return obj


def module_params(cls: type) -> Tuple[str, ...]:
    return tuple(inspect.signature(cls.__init__).parameters)[1:]


def function_params(fn: Any) -> Tuple[str, ...]:
    return tuple(inspect.signature(fn).parameters)


# --- loss signatures -------------------------------------------------------------


@pytest.mark.parametrize("qualified, params", sorted(LOSS_MODULE_PARAMS.items()), ids=sorted(LOSS_MODULE_PARAMS))
def test_loss_module_signature(qualified: str, params: Tuple[str, ...]) -> None:
    cls = lookup(qualified)
    assert cls is not _MISSING, f"{qualified} does not exist in torch {torch.__version__}"
    assert isinstance(cls, type) and issubclass(cls, torch.nn.Module)
    assert module_params(cls) == params
    signature = inspect.signature(cls.__init__)
    for name in params:
        # TL106 maps positional arguments by index: every listed parameter must be positional.
        assert signature.parameters[name].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, name


@pytest.mark.parametrize("qualified, params", sorted(LOSS_FUNCTION_PARAMS.items()), ids=sorted(LOSS_FUNCTION_PARAMS))
def test_loss_function_signature(qualified: str, params: Tuple[str, ...]) -> None:
    fn = lookup(qualified)
    assert fn is not _MISSING, f"{qualified} does not exist in torch {torch.__version__}"
    assert callable(fn)
    assert function_params(fn) == params
    signature = inspect.signature(fn)
    for name in params:
        assert signature.parameters[name].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, name


@pytest.mark.parametrize("qualified", sorted(LOSS_PARAMS), ids=sorted(LOSS_PARAMS))
def test_every_listed_loss_accepts_the_legacy_arguments(qualified: str) -> None:
    params = LOSS_PARAMS[qualified]
    assert set(LEGACY) <= set(params)
    assert "reduction" in params


def test_loss_tables_are_disjoint_and_merged() -> None:
    assert not set(LOSS_MODULE_PARAMS) & set(LOSS_FUNCTION_PARAMS)
    assert dict(LOSS_PARAMS) == {**LOSS_MODULE_PARAMS, **LOSS_FUNCTION_PARAMS}


def test_no_legacy_loss_module_is_missing() -> None:
    missing = []
    for name in dir(torch.nn):
        obj = getattr(torch.nn, name)
        if not (isinstance(obj, type) and issubclass(obj, torch.nn.Module)):
            continue
        try:
            params = module_params(obj)
        except (TypeError, ValueError):
            continue
        if set(LEGACY) & set(params) and f"torch.nn.{name}" not in LOSS_MODULE_PARAMS:
            missing.append(f"torch.nn.{name}{params}")
    assert missing == [], "modules accepting size_average/reduce missing from LOSS_MODULE_PARAMS"


def test_no_legacy_loss_function_is_missing() -> None:
    missing = []
    unsigned = []
    for name in dir(torch.nn.functional):
        obj = getattr(torch.nn.functional, name)
        if not callable(obj) or isinstance(obj, type):
            continue
        try:
            params = function_params(obj)
        except (TypeError, ValueError):
            # builtins without a Python signature: their docs must not offer the legacy arguments
            doc = getattr(obj, "__doc__", None) or ""
            if "size_average" in doc:
                unsigned.append(name)
            continue
        if set(LEGACY) & set(params) and f"torch.nn.functional.{name}" not in LOSS_FUNCTION_PARAMS:
            missing.append(f"torch.nn.functional.{name}{params}")
    assert missing == [], "functionals accepting size_average/reduce missing from LOSS_FUNCTION_PARAMS"
    assert unsigned == [], "functionals without a signature document size_average; check them by hand"


# --- renames -----------------------------------------------------------------------


@pytest.mark.parametrize("old", sorted(RENAMES), ids=sorted(RENAMES))
def test_rename_targets_exist(old: str) -> None:
    rename = RENAMES[old]
    assert rename.old == old
    old_obj, new_obj = lookup(rename.old), lookup(rename.new)
    assert old_obj is not _MISSING, f"{rename.old} does not exist in torch {torch.__version__}"
    assert new_obj is not _MISSING, f"{rename.new} does not exist in torch {torch.__version__}"
    assert callable(old_obj) and callable(new_obj)
    assert rename.old != rename.new
    if rename.extra_keywords:
        # The keywords the fix adds must be parameters of the replacement.
        new_params = function_params(new_obj)
        for keyword, _value in rename.extra_keywords:
            assert keyword in new_params, f"{rename.new} has no parameter {keyword!r}"


def test_rename_codes_belong_to_rules() -> None:
    codes = {rule.code for rule in all_rules()}
    assert {rename.code for rename in RENAMES.values()} <= codes


# --- legacy reduction mapping --------------------------------------------------------


@pytest.mark.parametrize(
    "size_average, reduce",
    list(itertools.product((None, True, False), repeat=2)),
    ids=[f"size_average={a}-reduce={b}" for a, b in itertools.product((None, True, False), repeat=2)],
)
def test_legacy_reduction_matches_torch(size_average, reduce) -> None:
    legacy_get_string = torch.nn._reduction.legacy_get_string
    kwargs = {}
    if "emit_warning" in inspect.signature(legacy_get_string).parameters:
        kwargs["emit_warning"] = False
    assert legacy_reduction(size_average, reduce) == legacy_get_string(size_average, reduce, **kwargs)


# --- dtypes, masks, loss values, CUDA initialisation, checkpointing (TL209-TL213) ---

import warnings  # noqa: E402

from torchlint.knowledge import torch_api as api  # noqa: E402


@pytest.mark.parametrize("qualified, name", sorted(api.DTYPES.items()))
def test_dtype_table(qualified: str, name: str) -> None:
    dtype = lookup(qualified)
    assert isinstance(dtype, torch.dtype) and dtype == getattr(torch, name)


@pytest.mark.parametrize("qualified, name", sorted(api.TENSOR_TYPE_DTYPES.items()))
def test_tensor_type_dtype_table(qualified: str, name: str) -> None:
    assert lookup(qualified) is not _MISSING
    # .type() accepts the type's name and converts to its dtype (CPU types only here).
    if not qualified.startswith("torch.cuda."):
        assert torch.zeros(2).type(qualified).dtype == getattr(torch, name)
        assert lookup(qualified)([1]).dtype == getattr(torch, name)


@pytest.mark.parametrize("method, name", sorted(api.DTYPE_METHODS.items()))
def test_dtype_methods(method: str, name: str) -> None:
    assert getattr(torch.zeros(2), method)().dtype == getattr(torch, name)


@pytest.mark.parametrize("method", sorted(api.DTYPE_KEEPING_METHODS))
def test_dtype_keeping_methods_exist(method: str) -> None:
    assert callable(getattr(torch.Tensor, method, None))


def test_size_methods_return_numbers() -> None:
    x = torch.zeros(2, 3)
    for method in api.SIZE_METHODS:
        result = getattr(x, method)(0) if method == "size" else getattr(x, method)()
        assert isinstance(result, int), method


@pytest.mark.parametrize("method", sorted(api.NON_DIFFERENTIABLE_METHODS))
def test_non_differentiable_methods_drop_the_graph(method: str) -> None:
    loss = (torch.ones(3, requires_grad=True) * 2).sum()
    assert loss.requires_grad
    assert not getattr(loss, method)(*([0.0] if method in ("eq", "ne", "lt", "le", "gt", "ge") else [])).requires_grad


def test_grad_contexts() -> None:
    for qualified in api.NO_GRAD_CONTEXTS:
        with lookup(qualified)():
            assert not (torch.ones(1, requires_grad=True) * 2).requires_grad, qualified
    for qualified in api.SET_GRAD_ENABLED:
        with lookup(qualified)(False):
            assert not (torch.ones(1, requires_grad=True) * 2).requires_grad, qualified
    for qualified in api.AUTOGRAD_FUNCTIONS:
        assert callable(lookup(qualified)), qualified


def test_cuda_initialising_functions_exist() -> None:
    for qualified in api.CUDA_INITIALISING_FUNCTIONS:
        assert callable(lookup(qualified)), qualified
    # device_count asks NVML first; manual_seed is deferred: neither pins CUDA_VISIBLE_DEVICES.
    assert "torch.cuda.device_count" not in api.CUDA_INITIALISING_FUNCTIONS
    assert "torch.cuda.manual_seed" not in api.CUDA_INITIALISING_FUNCTIONS
    source = inspect.getsource(torch.cuda.is_available)
    assert "_cuda_getDeviceCount" in source  # cudaGetDeviceCount runs cuInit


@pytest.mark.parametrize("qualified", sorted(api.CHECKPOINT_FUNCTIONS))
def test_checkpoint_without_use_reentrant_warns_and_defaults_to_true(qualified: str) -> None:
    fn = lookup(qualified)
    assert "use_reentrant" in inspect.signature(fn).parameters
    source = inspect.getsource(fn)
    assert "if use_reentrant is None:" in source and "use_reentrant = True" in source


def _mask_call(target: str, fn: Any, mask: Any) -> Any:
    x = torch.arange(4.0)
    position, keyword = (api.MASK_METHODS if target == "method" else api.MASK_FUNCTIONS)[fn]
    extra = {"masked_fill": [0.0], "masked_fill_": [0.0], "masked_select": [], "masked_scatter": [torch.zeros(4)],
             "masked_scatter_": [torch.zeros(4)], "where": [x, -x]}
    if target == "method":
        args = [mask] + extra[fn] if fn != "where" else [mask, -x]
        return getattr(x.clone(), fn)(*args)
    short = fn.rsplit(".", 1)[1]
    args = [mask] + extra[short] if short == "where" else [x, mask] + extra[short]
    assert args[position] is mask
    return lookup(fn)(*args)


@pytest.mark.parametrize("target, fn", [("method", m) for m in sorted(api.MASK_METHODS)]
                         + [("function", f) for f in sorted(api.MASK_FUNCTIONS)])
def test_mask_arguments_warn_or_raise_with_uint8_and_agree_with_bool(target: str, fn: str) -> None:
    mask = torch.tensor([2, 0, 1, 0], dtype=torch.uint8)
    expected = _mask_call(target, fn, mask.bool())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = _mask_call(target, fn, mask)
        except RuntimeError:
            return  # rejected outright
    if not fn.endswith("where"):  # where's warning is shown once per process
        assert caught, f"{fn} accepted a uint8 mask silently"
    assert torch.equal(result, expected)


def test_uint8_indexing_warns_and_agrees_with_bool() -> None:
    x = torch.arange(4.0)
    mask = torch.tensor([2, 0, 1, 0], dtype=torch.uint8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = x[mask]
    assert caught and torch.equal(result, x[mask.bool()])
    with pytest.raises(RuntimeError):
        x[mask] = 0.0


@pytest.mark.parametrize("qualified", sorted(__import__("torchlint.knowledge.torch_api", fromlist=["x"]).REMOVED_KEYWORDS))
def test_removed_keywords_are_gone_and_their_new_names_exist(qualified: str) -> None:
    """TL116's table: the old keyword raises TypeError today, the new one is a parameter."""
    from torchlint.knowledge.torch_api import REMOVED_KEYWORDS

    parameters = inspect.signature(lookup(qualified)).parameters
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    for old, new in REMOVED_KEYWORDS[qualified].items():
        assert old not in parameters and new in parameters


@pytest.mark.parametrize("qualified", sorted(__import__("torchlint.knowledge.torch_api", fromlist=["x"]).KEYWORDS_NOW_POSITIONAL))
def test_keywords_now_positional_take_varargs_only(qualified: str) -> None:
    """TL116's table: the callable takes ``*tensors`` and no keywords at all."""
    parameters = inspect.signature(lookup(qualified)).parameters
    assert [p.kind for p in parameters.values()] == [inspect.Parameter.VAR_POSITIONAL]


# -- modules and functions that keep their input's number of dimensions --------------------

# Constructor arguments and an input shape for each module of SHAPE_KEEPING_MODULES.
_MODULE_CASES = {
    "Linear": ((4, 3), (2, 4)), "Bilinear": ((4, 4, 3), (2, 4)),
    "Conv1d": ((2, 2, 1), (1, 2, 5)), "Conv2d": ((2, 2, 1), (1, 2, 5, 5)), "Conv3d": ((2, 2, 1), (1, 2, 3, 3, 3)),
    "ConvTranspose1d": ((2, 2, 1), (1, 2, 5)), "ConvTranspose2d": ((2, 2, 1), (1, 2, 5, 5)),
    "ConvTranspose3d": ((2, 2, 1), (1, 2, 3, 3, 3)),
    "AvgPool1d": ((2,), (1, 2, 6)), "AvgPool2d": ((2,), (1, 2, 6, 6)), "AvgPool3d": ((2,), (1, 2, 4, 4, 4)),
    "AdaptiveAvgPool1d": ((2,), (1, 2, 6)), "AdaptiveAvgPool2d": ((2,), (1, 2, 6, 6)),
    "AdaptiveAvgPool3d": ((2,), (1, 2, 4, 4, 4)), "LPPool1d": ((2, 2), (1, 2, 6)), "LPPool2d": ((2, 2), (1, 2, 6, 6)),
    "BatchNorm1d": ((2,), (3, 2)), "BatchNorm2d": ((2,), (3, 2, 4, 4)), "BatchNorm3d": ((2,), (3, 2, 2, 2, 2)),
    "InstanceNorm1d": ((2,), (1, 2, 6)), "InstanceNorm2d": ((2,), (1, 2, 4, 4)),
    "InstanceNorm3d": ((2,), (1, 2, 3, 3, 3)), "LayerNorm": ((4,), (2, 3, 4)), "GroupNorm": ((1, 2), (3, 2, 4)),
    "LocalResponseNorm": ((2,), (1, 2, 4, 4)), "Dropout1d": ((), (1, 2, 6)), "Dropout2d": ((), (1, 2, 4, 4)),
    "Dropout3d": ((), (1, 2, 3, 3, 3)), "Softmax": ((1,), (2, 3)), "LogSoftmax": ((1,), (2, 3)),
    "Softmin": ((1,), (2, 3)), "Softmax2d": ((), (1, 2, 4, 4)), "Threshold": ((0.1, 0.0), (2, 3)),
    "Upsample": (((), {"scale_factor": 2}), (1, 2, 4, 4)), "UpsamplingNearest2d": (((), {"scale_factor": 2}), (1, 2, 4, 4)),
    "UpsamplingBilinear2d": (((), {"scale_factor": 2}), (1, 2, 4, 4)), "ZeroPad2d": ((1,), (1, 2, 4, 4)),
    "ConstantPad1d": ((1, 0.0), (1, 2, 4)), "ConstantPad2d": ((1, 0.0), (1, 2, 4, 4)),
    "ConstantPad3d": ((1, 0.0), (1, 2, 3, 3, 3)), "ReflectionPad1d": ((1,), (1, 2, 4)),
    "ReflectionPad2d": ((1,), (1, 2, 4, 4)), "ReplicationPad1d": ((1,), (1, 2, 4)),
    "ReplicationPad2d": ((1,), (1, 2, 4, 4)), "ReplicationPad3d": ((1,), (1, 2, 3, 3, 3)),
    "PixelShuffle": ((2,), (1, 4, 3, 3)),
}


@pytest.mark.parametrize("name", sorted(SHAPE_KEEPING_MODULES))
def test_a_shape_keeping_module_gives_its_inputs_number_of_dimensions(name: str) -> None:
    args, shape = _MODULE_CASES.get(name, ((), (2, 3, 4)))  # activations and dropout take anything
    args, keywords = args if len(args) == 2 and isinstance(args[1], dict) else (args, {})
    module = getattr(torch.nn, name)(*args, **keywords)
    inputs = [torch.randn(*shape)] * (2 if name == "Bilinear" else 1)
    assert module(*inputs).dim() == len(shape)


# An input shape and the further arguments for each function of SHAPE_KEEPING_FUNCTIONS.
_FUNCTION_CASES = {
    "linear": ((2, 4), (torch.randn(3, 4),)), "bilinear": ((2, 4), (torch.randn(2, 4), torch.randn(3, 4, 4))),
    "conv1d": ((1, 2, 5), (torch.randn(2, 2, 1),)), "conv2d": ((1, 2, 5, 5), (torch.randn(2, 2, 1, 1),)),
    "conv3d": ((1, 2, 3, 3, 3), (torch.randn(2, 2, 1, 1, 1),)),
    "conv_transpose1d": ((1, 2, 5), (torch.randn(2, 2, 1),)),
    "conv_transpose2d": ((1, 2, 5, 5), (torch.randn(2, 2, 1, 1),)),
    "conv_transpose3d": ((1, 2, 3, 3, 3), (torch.randn(2, 2, 1, 1, 1),)),
    "avg_pool1d": ((1, 2, 6), (2,)), "avg_pool2d": ((1, 2, 6, 6), (2,)), "avg_pool3d": ((1, 2, 4, 4, 4), (2,)),
    "adaptive_avg_pool1d": ((1, 2, 6), (2,)), "adaptive_avg_pool2d": ((1, 2, 6, 6), (2,)),
    "adaptive_avg_pool3d": ((1, 2, 4, 4, 4), (2,)),
    "batch_norm": ((3, 2, 4), (torch.zeros(2), torch.ones(2))), "instance_norm": ((1, 2, 6), ()),
    "layer_norm": ((2, 3, 4), ((4,),)), "group_norm": ((3, 2, 4), (1,)), "local_response_norm": ((1, 2, 4, 4), (2,)),
    "dropout2d": ((1, 2, 4, 4), ()), "dropout3d": ((1, 2, 3, 3, 3), ()), "prelu": ((2, 3), (torch.ones(1),)),
    "threshold": ((2, 3), (0.1, 0.0)), "softmax": ((2, 3), (1,)), "log_softmax": ((2, 3), (1,)),
    "softmin": ((2, 3), (1,)), "pad": ((1, 2, 4), ((1, 1),)), "interpolate": ((1, 2, 4, 4), (None, 2)),
    "upsample": ((1, 2, 4, 4), (None, 2)), "upsample_nearest": ((1, 2, 4, 4), (None, 2)),
    "upsample_bilinear": ((1, 2, 4, 4), (None, 2)), "pixel_shuffle": ((1, 4, 3, 3), (2,)),
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("qualified", sorted(SHAPE_KEEPING_FUNCTIONS))
def test_a_shape_keeping_function_gives_its_inputs_number_of_dimensions(qualified: str) -> None:
    name = qualified.rsplit(".", 1)[1]
    shape, rest = _FUNCTION_CASES.get(name, ((2, 3, 4), ()))
    assert lookup(qualified)(torch.randn(*shape), *rest).dim() == len(shape)


@pytest.mark.parametrize("qualified", sorted(UNARY_ELEMENTWISE_FUNCTIONS))
def test_an_elementwise_function_keeps_its_inputs_shape(qualified: str) -> None:
    function = lookup(qualified)
    for shape in ((), (2, 3)):
        assert function(torch.rand(shape) * 0.5 + 0.2).shape == shape


@pytest.mark.parametrize("qualified", sorted(BROADCASTING_FUNCTIONS))
def test_a_broadcasting_function_has_as_many_dimensions_as_its_largest_operand(qualified: str) -> None:
    function = lookup(qualified)
    operands = {"torch.where": lambda big: (torch.rand(()) > 0.5, big, 1.0),
                "torch.lerp": lambda big: (big, torch.rand(()), 0.5),
                "torch.clamp": lambda big: (big, 0.1, 0.9), "torch.clip": lambda big: (big, 0.1, 0.9)}
    make = operands.get(qualified, lambda big: (big, torch.rand(()) + 0.5))
    for shape in ((), (2, 3)):
        assert function(*make(torch.rand(shape) + 0.5)).dim() == len(shape)


@pytest.mark.parametrize("qualified", sorted(ALWAYS_SCALAR_FUNCTIONS | SCALAR_FUNCTIONS))
def test_a_scalar_function_gives_a_0_dim_tensor(qualified: str) -> None:
    function = lookup(qualified)
    if qualified in ALWAYS_SCALAR_FUNCTIONS:
        arguments = (torch.rand(3, 3),) if qualified == "torch.trace" else (torch.rand(3), torch.rand(3))
    else:
        arguments = (torch.rand(2, 3),)
    assert function(*arguments).dim() == 0
