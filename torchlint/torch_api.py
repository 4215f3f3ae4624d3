"""What torchlint knows about torch's API, as data.

Every rule and the inference engine read their torch facts from here; nothing
else in the package spells a torch name. The loss signatures are checked
against real torch by ``tests/test_torch_api_tables.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, Mapping, Optional, Tuple

NN = "torch.nn."
FUNCTIONAL = "torch.nn.functional."
INIT = "torch.nn.init."


# --- Renamed and moved functions (TL103, TL104, TL105) ----------------------


@dataclass(frozen=True)
class Rename:
    """A deprecated callable and its exact replacement.

    ``extra_keywords`` are added to every call so the replacement computes what
    the old function did (``upsample_bilinear`` always used align_corners).
    """

    old: str
    new: str
    code: str
    extra_keywords: Tuple[Tuple[str, str], ...] = ()

    @property
    def old_module(self) -> str:
        return self.old.rsplit(".", 1)[0]

    @property
    def new_module(self) -> str:
        return self.new.rsplit(".", 1)[0]

    @property
    def old_attr(self) -> str:
        return self.old.rsplit(".", 1)[1]

    @property
    def new_attr(self) -> str:
        return self.new.rsplit(".", 1)[1]


_INIT_RENAMED = (
    "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
    "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse",
)

RENAMES: Mapping[str, Rename] = {
    r.old: r
    for r in (
        Rename(FUNCTIONAL + "upsample", FUNCTIONAL + "interpolate", "TL103"),
        Rename(FUNCTIONAL + "upsample_nearest", FUNCTIONAL + "interpolate", "TL103",
               (("mode", "'nearest'"),)),
        Rename(FUNCTIONAL + "upsample_bilinear", FUNCTIONAL + "interpolate", "TL103",
               (("mode", "'bilinear'"), ("align_corners", "True"))),
        Rename(FUNCTIONAL + "sigmoid", "torch.sigmoid", "TL104"),
        Rename(FUNCTIONAL + "tanh", "torch.tanh", "TL104"),
        *(Rename(INIT + name, INIT + name + "_", "TL105") for name in _INIT_RENAMED),
    )
}


def renames_for(code: str) -> Dict[str, Rename]:
    return {old: r for old, r in RENAMES.items() if r.code == code}


# --- Legacy loss arguments (TL106) -------------------------------------------

# Parameter names in positional order, from torch 2.13 (module __init__ without
# self; functionals with their inputs). Only callables that accept the legacy
# size_average / reduce arguments are listed.
LOSS_MODULE_PARAMS: Mapping[str, Tuple[str, ...]] = {
    NN + "BCELoss": ("weight", "size_average", "reduce", "reduction"),
    NN + "BCEWithLogitsLoss": ("weight", "size_average", "reduce", "reduction", "pos_weight"),
    NN + "CosineEmbeddingLoss": ("margin", "size_average", "reduce", "reduction"),
    NN + "CrossEntropyLoss": ("weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing"),
    NN + "HingeEmbeddingLoss": ("margin", "size_average", "reduce", "reduction"),
    NN + "KLDivLoss": ("size_average", "reduce", "reduction", "log_target"),
    NN + "L1Loss": ("size_average", "reduce", "reduction"),
    NN + "MSELoss": ("size_average", "reduce", "reduction"),
    NN + "MarginRankingLoss": ("margin", "size_average", "reduce", "reduction"),
    NN + "MultiLabelMarginLoss": ("size_average", "reduce", "reduction"),
    NN + "MultiLabelSoftMarginLoss": ("weight", "size_average", "reduce", "reduction"),
    NN + "MultiMarginLoss": ("p", "margin", "weight", "size_average", "reduce", "reduction"),
    NN + "NLLLoss": ("weight", "size_average", "ignore_index", "reduce", "reduction"),
    NN + "NLLLoss2d": ("weight", "size_average", "ignore_index", "reduce", "reduction"),
    NN + "PoissonNLLLoss": ("log_input", "full", "size_average", "eps", "reduce", "reduction"),
    NN + "SmoothL1Loss": ("size_average", "reduce", "reduction", "beta"),
    NN + "SoftMarginLoss": ("size_average", "reduce", "reduction"),
    NN + "TripletMarginLoss": ("margin", "p", "eps", "swap", "size_average", "reduce", "reduction"),
}

LOSS_FUNCTION_PARAMS: Mapping[str, Tuple[str, ...]] = {
    FUNCTIONAL + "binary_cross_entropy": ("input", "target", "weight", "size_average", "reduce", "reduction"),
    FUNCTIONAL + "binary_cross_entropy_with_logits": (
        "input", "target", "weight", "size_average", "reduce", "reduction", "pos_weight"),
    FUNCTIONAL + "cosine_embedding_loss": (
        "input1", "input2", "target", "margin", "size_average", "reduce", "reduction"),
    FUNCTIONAL + "cross_entropy": (
        "input", "target", "weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing"),
    FUNCTIONAL + "hinge_embedding_loss": ("input", "target", "margin", "size_average", "reduce", "reduction"),
    FUNCTIONAL + "kl_div": ("input", "target", "size_average", "reduce", "reduction", "log_target"),
    FUNCTIONAL + "l1_loss": ("input", "target", "size_average", "reduce", "reduction", "weight"),
    FUNCTIONAL + "margin_ranking_loss": (
        "input1", "input2", "target", "margin", "size_average", "reduce", "reduction"),
    FUNCTIONAL + "mse_loss": ("input", "target", "size_average", "reduce", "reduction", "weight"),
    FUNCTIONAL + "multi_margin_loss": (
        "input", "target", "p", "margin", "weight", "size_average", "reduce", "reduction"),
    FUNCTIONAL + "multilabel_margin_loss": ("input", "target", "size_average", "reduce", "reduction"),
    FUNCTIONAL + "multilabel_soft_margin_loss": (
        "input", "target", "weight", "size_average", "reduce", "reduction"),
    FUNCTIONAL + "nll_loss": (
        "input", "target", "weight", "size_average", "ignore_index", "reduce", "reduction"),
    FUNCTIONAL + "poisson_nll_loss": (
        "input", "target", "log_input", "full", "size_average", "eps", "reduce", "reduction"),
    FUNCTIONAL + "smooth_l1_loss": ("input", "target", "size_average", "reduce", "reduction", "beta"),
    FUNCTIONAL + "soft_margin_loss": ("input", "target", "size_average", "reduce", "reduction"),
    FUNCTIONAL + "triplet_margin_loss": (
        "anchor", "positive", "negative", "margin", "p", "eps", "swap", "size_average", "reduce", "reduction"),
}

LOSS_PARAMS: Mapping[str, Tuple[str, ...]] = {**LOSS_MODULE_PARAMS, **LOSS_FUNCTION_PARAMS}


def legacy_reduction(size_average: Optional[bool], reduce: Optional[bool]) -> str:
    """torch/nn/_reduction.py's legacy_get_string: None counts as True."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


# --- Tensors, modules and devices (shared inference) -------------------------

# Tensor methods that return a new tensor and leave the receiver alone. On an
# nn.Module several of these (cuda, cpu, to, float, ...) work in place instead.
TENSOR_RETURNING_METHODS: FrozenSet[str] = frozenset({
    "cuda", "cpu", "to", "float", "double", "half", "bfloat16", "long", "int", "short",
    "char", "byte", "bool", "type", "type_as", "detach", "contiguous", "clone",
    "pin_memory", "t", "transpose", "permute", "view", "view_as", "reshape", "reshape_as",
    "flatten", "squeeze", "unsqueeze", "clamp", "abs", "add", "sub", "mul", "div", "neg",
    "expand", "expand_as", "repeat", "narrow", "masked_fill", "index_select", "gather",
    "exp", "log", "sqrt", "pow", "sign", "round", "floor", "ceil", "sigmoid", "tanh", "relu",
    "softmax", "log_softmax", "matmul", "mm", "bmm", "sum", "mean", "max", "min", "prod",
    "norm", "std", "var", "argmax", "argmin", "cumsum", "eq", "ne", "lt", "le",
    "gt", "ge", "requires_grad_",
})

# Methods whose bare call is a no-op on a tensor (TL201): conversions and
# copies whose result is the only thing they produce.
DISCARDED_RESULT_METHODS: FrozenSet[str] = frozenset({
    "cuda", "cpu", "to", "float", "double", "half", "bfloat16", "long", "int", "short",
    "char", "byte", "bool", "type", "type_as", "detach", "contiguous", "clone",
    "pin_memory", "t", "transpose", "permute", "view", "reshape", "flatten", "squeeze",
    "unsqueeze", "clamp", "abs", "add", "mul", "sub", "div",
})

# Methods keeping the receiver's device.
DEVICE_CHANGING_METHODS: FrozenSet[str] = frozenset({"cuda", "cpu", "to", "pin_memory"})

# Called without arguments these reduce a tensor to 0-dim.
FULL_REDUCTIONS: FrozenSet[str] = frozenset({
    "sum", "mean", "max", "min", "prod", "norm", "std", "var", "median", "amax", "amin",
    "all", "any", "count_nonzero", "nansum", "nanmean",
})

# Attributes of a tensor that are tensors like it.
TENSOR_ATTRIBUTES: FrozenSet[str] = frozenset({"data", "grad", "T", "mT", "H", "mH", "real", "imag"})

TENSOR_FACTORIES: FrozenSet[str] = frozenset(
    "torch." + name
    for name in (
        "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand", "randn",
        "randint", "randperm", "arange", "range", "linspace", "logspace", "eye", "zeros_like",
        "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
        "cat", "concat", "concatenate", "stack", "hstack", "vstack", "matmul", "mm", "bmm",
        "einsum", "where", "exp", "log", "sqrt", "abs", "sigmoid", "tanh", "relu", "softmax",
        "log_softmax", "clamp", "flatten", "squeeze", "unsqueeze", "reshape", "transpose",
        "permute", "sum", "mean", "prod", "std", "var", "norm", "argmax", "argmin", "cumsum",
        "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
        "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor",
    )
)

# torch functions that reduce to 0-dim when given only the input.
SCALAR_FUNCTIONS: FrozenSet[str] = frozenset(
    "torch." + name for name in ("sum", "mean", "prod", "std", "var", "norm", "dot", "vdot", "trace")
)

CUDA_TENSOR_TYPES: FrozenSet[str] = frozenset(
    "torch.cuda." + name
    for name in (
        "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
        "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor",
    )
)

VARIABLE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})

PARAMETER_CLASSES: FrozenSet[str] = frozenset({
    NN + "Parameter", NN + "parameter.Parameter", NN + "UninitializedParameter",
    NN + "parameter.UninitializedParameter", NN + "UninitializedBuffer", NN + "Buffer",
})

MODULE_BASES: FrozenSet[str] = frozenset({NN + "Module", NN + "modules.module.Module"})

DATALOADERS: FrozenSet[str] = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})

# Wrappers that iterate what they wrap, item by item.
ITERATION_WRAPPERS: FrozenSet[str] = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm"})

# Built-in modules whose forward returns a tuple, not one tensor.
TUPLE_RETURNING_MODULES: FrozenSet[str] = frozenset(
    NN + name for name in ("RNN", "LSTM", "GRU", "MultiheadAttention", "RNNBase")
)

# Factories whose result is a model (an nn.Module), e.g. torchvision builders.
MODEL_FACTORY_PREFIXES: Tuple[str, ...] = ("torchvision.models.", "timm.create_model", "torch.hub.load")


def is_nn_class(qualified: str) -> bool:
    """``torch.nn.Linear``, ``torch.nn.modules.conv.Conv2d``: a class in torch.nn."""
    if not qualified.startswith(NN):
        return False
    tail = qualified.rsplit(".", 1)[1]
    return tail[:1].isupper() and not qualified.startswith((FUNCTIONAL, INIT, NN + "utils."))


def is_loss_class(qualified: str) -> bool:
    return is_nn_class(qualified) and qualified.endswith(("Loss", "Loss2d"))


# --- Removed APIs (TL108 reports them; TL211 leaves them to TL108) ----------------

# Gone from torch 2.x, or kept only as stubs that raise RuntimeError when called
# (torch.solve, symeig, eig, lstsq, matrix_rank: measured, see the snapshot's
# "removed" list). A name here, or anything under it, is not a misspelling.
REMOVED_APIS: FrozenSet[str] = frozenset({
    "torch.solve", "torch.symeig", "torch.eig", "torch.lstsq", "torch.matrix_rank",
    "torch.gels", "torch.gesv", "torch.potrf", "torch.potrs", "torch.trtrs",
    "torch.btrifact", "torch.btrisolve", "torch.set_deterministic",
    "torch._six", "torch.utils.ffi",
})


def is_removed_api(qualified: str) -> bool:
    return any(qualified == name or qualified.startswith(name + ".") for name in REMOVED_APIS)


# Attributes that torch extensions add to torch at import time (device plugins
# registered through the PrivateUse1 mechanism): not in any torch build.
EXTENSION_ATTRIBUTES: FrozenSet[str] = frozenset(
    "torch." + name
    for name in ("npu", "hpu", "mlu", "musa", "neuron", "tpu", "gcu", "dipu", "sdaa", "ipu", "xla", "dml", "vacc")
)
