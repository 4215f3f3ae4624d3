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
# Qualified names under these are torch's own: never a project definition.
TORCH_PACKAGES = ("torch.", "torchvision.", "torchaudio.", "torchtext.", "builtins.")
# Methods no common Python library's objects share with torch.Tensor (not
# numpy's, pandas', Python's, nor torch's own modules': ``requires_grad_`` is an
# ``nn.Module`` method too): calling one is evidence the receiver is a tensor.
TENSOR_ONLY_METHODS = frozenset({
    "masked_select", "masked_fill", "masked_fill_", "masked_scatter", "unsqueeze", "unsqueeze_", "contiguous",
    "detach", "detach_", "index_select", "expand_as", "type_as", "view_as", "narrow",
    "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor",
})
# Library functions that compare the installed torch's version with their arguments:
# the qualified name -> how they are called. "operator": ``is_torch_version(">=",
# "1.11.0")`` (diffusers, accelerate); "at least": ``is_torch_greater_or_equal("2.3")``
# (transformers). Code that imports them asks which torch is installed, as with its own
# version helpers (``analysis/version_gates.py``, ``analysis/version_tests.py``).
TORCH_VERSION_HELPERS: Mapping[str, str] = {
    "diffusers.utils.is_torch_version": "operator",
    "diffusers.utils.import_utils.is_torch_version": "operator",
    "accelerate.utils.is_torch_version": "operator",
    "accelerate.utils.versions.is_torch_version": "operator",
    "transformers.utils.is_torch_greater_or_equal": "at least",
    "transformers.utils.import_utils.is_torch_greater_or_equal": "at least",
}
# Tensor methods whose result may have more dimensions than the receiver
# (``x.view(1)`` of a 0-dim tensor has one).
SHAPE_CHANGING_METHODS = frozenset({
    "view", "reshape", "unsqueeze", "unsqueeze_", "expand", "expand_as", "repeat", "flatten", "view_as",
    "reshape_as", "resize_", "resize_as_", "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor",
    "repeat_interleave", "tile", "atleast_1d", "atleast_2d", "unfold", "broadcast_to",
})
# Functions returning a tuple of gradient tensors, one per input.
GRADIENT_FUNCTIONS = frozenset({"torch.autograd.grad", "torch.autograd.functional.vjp"})
# ``isinstance(x, C)`` with one of these proves ``x`` a tensor.
TENSOR_CLASSES = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})
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

# Loss libraries written for torch >= 0.4 whose losses reduce with torch's reductions
# (a mean by default): what they give to ``.backward()`` is 0-dim. Any other package
# the project imports but does not hold is unread: its loss may be ``torch.FloatTensor(1)``
# (one element, one dimension), so ``.backward()`` alone proves no 0-dim tensor there.
ZERO_DIM_LOSS_PACKAGES: FrozenSet[str] = frozenset({
    "pytorch_metric_learning",  # losses reduce through a reducer, MeanReducer by default
    "kornia",  # kornia.losses: reduction="mean" by default
    "monai",  # monai.losses: reduction="mean" by default
    "segmentation_models_pytorch",  # smp.losses: the mean of the per-element loss
})

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

# The native functions behind functional's losses, which copies of torch 0.3/0.4's
# ``functional.py`` kept in a project call (``torch._C._nn.nll_loss(input, target, weight,
# size_average, ignore_index, reduce)``): until torch 1.0 their parameters were functional's,
# in the same order (later ones take a reduction enum there instead).
NATIVE_NN = "torch._C._nn."
NATIVE_LOSSES: Mapping[str, str] = {
    **{NATIVE_NN + name.rsplit(".", 1)[1]: name for name in LOSS_FUNCTION_PARAMS},
    NATIVE_NN + "nll_loss2d": FUNCTIONAL + "nll_loss",
}


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
    "gt", "ge", "requires_grad_", "masked_select", "masked_scatter", "new_zeros", "new_ones", "new_full",
    "new_empty", "new_tensor", "nonzero", "new",
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

# torch functions of one tensor, element by element: the result has the input's shape
# (``torch.abs(x)`` of a 0-dim tensor is 0-dim).
UNARY_ELEMENTWISE_FUNCTIONS: FrozenSet[str] = frozenset(
    "torch." + name for name in (
        "abs", "exp", "log", "sqrt", "sigmoid", "tanh", "relu", "neg", "sign", "floor", "ceil", "log1p",
        "expm1", "sin", "cos", "rsqrt", "reciprocal", "square", "round", "trunc", "frac", "log2", "log10",
        "exp2", "erf", "erfc", "erfinv", "lgamma", "digamma", "tan", "asin", "acos", "atan", "sinh", "cosh",
        "asinh", "acosh", "atanh", "logit", "nan_to_num", "logical_not", "isnan", "isinf", "isfinite",
    )
)

# torch functions elementwise over tensors and numbers that broadcast: as many dimensions
# as the largest operand (a number counts as 0-dim).
BROADCASTING_FUNCTIONS: FrozenSet[str] = frozenset(
    "torch." + name for name in (
        "add", "sub", "mul", "div", "true_divide", "floor_divide", "pow", "fmod", "remainder", "atan2",
        "maximum", "minimum", "fmax", "fmin", "hypot", "clamp", "clip", "where", "lerp", "eq", "ne", "gt", "lt",
        "ge", "le", "logical_and", "logical_or", "logical_xor",
    )
)

# torch functions whose result is 0-dim whatever they are given (they accept 1-D
# vectors, or 2-D matrices for the trace, and give one number).
ALWAYS_SCALAR_FUNCTIONS: FrozenSet[str] = frozenset("torch." + name for name in ("dot", "vdot", "dist", "trace"))

# torch functions that reduce to 0-dim when given only the input.
SCALAR_FUNCTIONS: FrozenSet[str] = frozenset(
    "torch." + name for name in ("sum", "mean", "prod", "std", "var", "norm", "dot", "vdot", "trace", "all", "any",
                                 "count_nonzero", "nansum", "nanmean", "amax", "amin")
)

TENSOR_FACTORIES: FrozenSet[str] = (
    UNARY_ELEMENTWISE_FUNCTIONS | BROADCASTING_FUNCTIONS | ALWAYS_SCALAR_FUNCTIONS | SCALAR_FUNCTIONS) | frozenset(
    "torch." + name
    for name in (
        "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand", "randn",
        "randint", "randperm", "arange", "range", "linspace", "logspace", "eye", "zeros_like",
        "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
        "cat", "concat", "concatenate", "stack", "hstack", "vstack", "matmul", "mm", "bmm",
        "einsum", "where", "exp", "log", "sqrt", "abs", "sigmoid", "tanh", "relu", "softmax",
        "log_softmax", "clamp", "flatten", "squeeze", "unsqueeze", "reshape", "transpose",
        "permute", "sum", "mean", "prod", "std", "var", "norm", "argmax", "argmin", "cumsum",
        "pow", "mul", "add", "sub", "div", "neg", "sign", "floor", "ceil", "log1p", "expm1", "sin", "cos",
        "rsqrt", "reciprocal", "square", "masked_select", "index_select", "gather", "nonzero", "eq", "ne", "gt", "lt",
        "ge", "le", "logical_not", "logical_and", "logical_or", "mv", "outer", "trace", "dot", "vdot",
        "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
        "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor",
    )
)

# torch functions whose result lives where their tensor arguments do (unless a
# ``device=`` says otherwise): the operations among ``TENSOR_FACTORIES`` and the
# ``*_like`` factories. ``torch.nn.functional`` works the same way.
DEVICE_PRESERVING: FrozenSet[str] = frozenset(
    name for name in TENSOR_FACTORIES
    if name.endswith("_like") or name.rsplit(".", 1)[1] not in {
        "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand", "randn",
        "randint", "randperm", "arange", "range", "linspace", "logspace", "eye"}
    and not name.endswith("Tensor")
)

# torch functions that sample indices from probabilities: a tensor with as many
# dimensions as the probabilities (one row of samples per row).
INDEX_SAMPLERS: FrozenSet[str] = frozenset({"torch.multinomial"})

# Functions that read a checkpoint (a state dict, or a dict holding one) from a file or URL.
CHECKPOINT_LOADERS: FrozenSet[str] = frozenset({
    "torch.load", "torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url",
    "safetensors.torch.load_file", "safetensors.torch.load",
})

# torch functions that give the 0-dim extremum of their only argument, and other
# things with more arguments (a (values, indices) pair, an elementwise result).
EXTREMUM_FUNCTIONS: FrozenSet[str] = frozenset("torch." + name for name in ("max", "min", "median"))


CUDA_TENSOR_TYPES: FrozenSet[str] = frozenset(
    "torch.cuda." + name
    for name in (
        "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
        "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor",
    )
)

VARIABLE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})

# Keywords torch renamed and later stopped accepting (TypeError today), by
# callee: ``torch.Tensor.<method>`` for a method of a tensor. TL116 rewrites
# them; TL211 leaves them alone (they are not misspellings).
REMOVED_KEYWORDS: Dict[str, Dict[str, str]] = {
    "torch.autograd.backward": {"retain_variables": "retain_graph"},
    "torch.Tensor.backward": {"retain_variables": "retain_graph"},
}

# Keywords that became positional arguments (``TensorDataset(*tensors)`` since
# torch 0.4): the old keywords, in the order of the positions they stand for.
KEYWORDS_NOW_POSITIONAL: Dict[str, Tuple[str, ...]] = {
    "torch.utils.data.TensorDataset": ("data_tensor", "target_tensor"),
    "torch.utils.data.dataset.TensorDataset": ("data_tensor", "target_tensor"),
}

# Base classes of custom autograd functions (``class MyFn(Function)``).
AUTOGRAD_FUNCTION_BASES: FrozenSet[str] = frozenset({
    "torch.autograd.Function", "torch.autograd.function.Function", "torch.autograd.function.InplaceFunction",
})

# torch functions taking a ``dtype=`` keyword that must be a torch.dtype.
DTYPE_FACTORIES: FrozenSet[str] = frozenset(
    "torch." + name
    for name in (
        "tensor", "as_tensor", "asarray", "scalar_tensor", "zeros", "ones", "empty", "full", "empty_strided",
        "arange", "range", "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm",
        "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
        "tril_indices", "triu_indices",
    )
)

# Tensor methods taking a ``dtype=`` keyword (``x.new_zeros(3, dtype=...)``).
DTYPE_TENSOR_METHODS: FrozenSet[str] = frozenset({"new_tensor", "new_zeros", "new_ones", "new_empty", "new_full"})

PARAMETER_CLASSES: FrozenSet[str] = frozenset({
    NN + "Parameter", NN + "parameter.Parameter", NN + "UninitializedParameter",
    NN + "parameter.UninitializedParameter", NN + "UninitializedBuffer", NN + "Buffer",
})

MODULE_BASES: FrozenSet[str] = frozenset({NN + "Module", NN + "modules.module.Module"})

DATALOADERS: FrozenSet[str] = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})

# ``nn.DataParallel(model)``: a module that holds the model as ``.module``; reading
# any other attribute of the model's through it raises AttributeError.
PARALLEL_WRAPPERS: FrozenSet[str] = frozenset({NN + "DataParallel", NN + "parallel.DataParallel",
                                               NN + "parallel.data_parallel.DataParallel"})
# The attributes such a wrapper has of its own (besides nn.Module's private ones).
PARALLEL_WRAPPER_ATTRIBUTES: FrozenSet[str] = frozenset({
    "module", "device_ids", "dim", "output_device", "src_device_obj", "device_type", "training",
})

# What builds a run's configuration: parsed files and the dictionaries configs are kept in.
# Inference takes what they hold for options (``Kind.OPTIONS``): numbers, strings and lists
# of them, never a tensor (``cfg.TRAIN.COEFF.KL * loss`` adds no dimension).
CONFIGURATION_SOURCES: FrozenSet[str] = frozenset({
    "easydict.EasyDict", "yacs.config.CfgNode", "json.load", "json.loads", "yaml.load", "yaml.safe_load",
    "yaml.full_load", "toml.load", "toml.loads", "tomllib.load", "tomllib.loads", "configparser.ConfigParser",
    "configparser.RawConfigParser", "configparser.SafeConfigParser", "ConfigParser.ConfigParser",
    "ConfigParser.RawConfigParser", "ConfigParser.SafeConfigParser", "omegaconf.OmegaConf.load",
    "omegaconf.OmegaConf.create", "ml_collections.ConfigDict",
    # TensorFlow's hyperparameter sets, which 2017-2018 speech code (Tacotron, DeepVoice3
    # ports) kept its settings in.
    "tensorflow.contrib.training.HParams", "tensorflow.contrib.training.python.training.hparam.HParams",
})

# Objects holding a run's command-line flags (never a tensor): Google's flags libraries,
# which 2017-2018 research code (SPINN, TensorFlow ports) parsed its options with.
CONFIGURATION_OBJECTS: FrozenSet[str] = frozenset({
    "gflags.FLAGS", "absl.flags.FLAGS", "tensorflow.flags.FLAGS", "tensorflow.app.flags.FLAGS",
    "tensorflow.compat.v1.flags.FLAGS", "tensorflow.compat.v1.app.flags.FLAGS",
})

# Wrappers that iterate what they wrap, item by item.
ITERATION_WRAPPERS: FrozenSet[str] = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm"})

# Built-in modules whose forward returns a tuple, not one tensor.
# nn modules whose output has as many dimensions as their (first) input: layers that
# map features, convolutions and average pools, normalisations, activations, dropout,
# padding and resampling (max pools may return indices too, so they are not here).
# ``tests/test_torch_api_tables.py`` runs each under torch to check it.
SHAPE_KEEPING_MODULES: FrozenSet[str] = frozenset({
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
    "LPPool1d", "LPPool2d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", "LayerNorm", "GroupNorm", "LocalResponseNorm", "Dropout", "Dropout1d", "Dropout2d",
    "Dropout3d", "AlphaDropout", "ReLU", "ReLU6", "LeakyReLU", "PReLU", "RReLU", "ELU", "SELU", "CELU", "GELU",
    "SiLU", "Mish", "Sigmoid", "Tanh", "Hardtanh", "Hardsigmoid", "Hardswish", "Softplus", "Softsign",
    "Softshrink", "Hardshrink", "Tanhshrink", "Threshold", "LogSigmoid", "Softmax", "LogSoftmax", "Softmin",
    "Softmax2d", "GLU", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "ZeroPad2d", "ConstantPad1d",
    "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "PixelShuffle", "Identity",
})

# torch.nn.functional's counterparts: the result has as many dimensions as the first argument.
SHAPE_KEEPING_FUNCTIONS: FrozenSet[str] = frozenset(FUNCTIONAL + name for name in (
    "linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "batch_norm", "instance_norm", "layer_norm", "group_norm", "local_response_norm", "normalize", "dropout",
    "dropout2d", "dropout3d", "alpha_dropout", "relu", "relu6", "leaky_relu", "prelu", "rrelu", "elu", "selu",
    "celu", "gelu", "silu", "mish", "sigmoid", "tanh", "hardtanh", "hardsigmoid", "hardswish", "softplus",
    "softsign", "softshrink", "hardshrink", "tanhshrink", "threshold", "logsigmoid", "softmax", "log_softmax",
    "softmin", "glu", "pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
))

TUPLE_RETURNING_MODULES: FrozenSet[str] = frozenset(
    NN + name for name in ("RNN", "LSTM", "GRU", "MultiheadAttention", "RNNBase")
)

# Factories whose result is a model (an nn.Module), e.g. torchvision builders.
MODEL_FACTORY_PREFIXES: Tuple[str, ...] = ("torchvision.models.", "timm.create_model", "torch.hub.load")


def is_nn_class(qualified: str) -> bool:
    """``torch.nn.Linear``, ``torch.nn.modules.conv.Conv2d``, ``torch.nn.modules.loss._Loss``: a class in torch.nn."""
    if not qualified.startswith(NN):
        return False
    tail = qualified.rsplit(".", 1)[1]
    if tail.startswith("_") and qualified.startswith(NN + "modules."):
        tail = tail.lstrip("_")  # the modules' private bases: ``_Loss``, ``_WeightedLoss``, ``_ConvNd``, ``_BatchNorm``
    return tail[:1].isupper() and not qualified.startswith((FUNCTIONAL, INIT, NN + "utils."))


OPTIM = "torch.optim."
# An optimizer's ``param_groups`` is a list of dicts whose ``'params'`` entry lists the
# parameters (tensors) it updates.
PARAM_GROUPS = "param_groups"
PARAMS_KEY = "params"
# Module methods that give the module's parameters (``named_parameters``: as (name, tensor)).
PARAMETER_METHODS = frozenset({"parameters", "named_parameters"})


def is_optimizer_class(qualified: str) -> bool:
    """``torch.optim.Optimizer``, ``torch.optim.Adam``, ``torch.optim.optimizer.Optimizer``:
    every class torch.optim exports is an optimizer."""
    if qualified == OPTIM + "optimizer.Optimizer":
        return True
    return qualified.startswith(OPTIM) and qualified.count(".") == 2 and qualified.rsplit(".", 1)[1][:1].isupper()


def is_loss_class(qualified: str) -> bool:
    return is_nn_class(qualified) and qualified.endswith(("Loss", "Loss2d"))


_LOSS_FUNCTION_TAILS = frozenset(name.rsplit(".", 1)[1] for name in LOSS_FUNCTION_PARAMS)


def is_torch_name(qualified: str) -> bool:
    """``torch`` or a name in it (``torch.nn.functional.relu``); not ``torchvision``."""
    return qualified == "torch" or qualified.startswith("torch.")


def is_loss_callee(qualified: str) -> bool:
    """A loss function (``torch.nn.functional.mse_loss``) or loss class (``torch.nn.MSELoss``)."""
    return (
        qualified in LOSS_FUNCTION_PARAMS
        or (qualified.startswith(FUNCTIONAL) and qualified.endswith("_loss"))
        or is_loss_class(qualified)
    )


def may_name_loss(name: str) -> bool:
    """Can a callee's last name part be a loss's (``mse_loss``, ``CrossEntropyLoss``)? A cheap screen."""
    return name in _LOSS_FUNCTION_TAILS or name.endswith(("_loss", "Loss", "Loss2d"))


# --- Shapes (what analysis/shapes.py reads a tensor's number of dimensions from) ---

# Factories whose positional arguments are the sizes (``torch.zeros(2, 3)``, ``torch.zeros((2, 3))``).
SIZE_FACTORIES: FrozenSet[str] = frozenset("torch." + n for n in ("zeros", "ones", "empty", "rand", "randn"))
# Tensor methods whose positional arguments are the new sizes.
RESHAPE_METHODS: FrozenSet[str] = frozenset({"view", "reshape"})
# Tensor methods whose result has as many dimensions as the receiver (an in-place
# method, name ending in ``_``, keeps its receiver's too).
NDIM_KEEPING_METHODS: FrozenSet[str] = frozenset({
    "cuda", "cpu", "to", "float", "double", "half", "bfloat16", "long", "int", "short", "char", "byte",
    "bool", "type_as", "detach", "contiguous", "clone", "pin_memory", "t", "transpose", "permute", "clamp",
    "abs", "add", "sub", "mul", "div", "neg", "narrow", "masked_fill", "index_select", "gather", "exp", "log",
    "sqrt", "pow", "sign", "round", "floor", "ceil", "sigmoid", "tanh", "relu", "softmax", "log_softmax",
    "cumsum", "eq", "ne", "lt", "le", "gt", "ge", "requires_grad_",
})
# Tensor methods that reduce along a dimension when given one (``x.sum(1)``), to 0-dim without.
DIM_REDUCTIONS: FrozenSet[str] = FULL_REDUCTIONS | {"argmax", "argmin", "logsumexp"}
# Methods (and torch functions) giving a (values, indices) pair as large as the input: ``x.sort(1)``.
SORTING_METHODS: FrozenSet[str] = frozenset({"sort", "topk"})
# torch functions giving a tensor of one dimension, or two.
ONE_DIM_FACTORIES: FrozenSet[str] = frozenset("torch." + n for n in ("arange", "range", "linspace", "logspace",
                                                                      "randperm", "mv"))
# Products whose result has a fixed number of dimensions.
PRODUCT_NDIM: Mapping[str, int] = {"torch.mm": 2, "torch.outer": 2, "torch.ger": 2, "torch.bmm": 3}


# --- Risky patterns (TL203-TL208) ---------------------------------------------

# torch.load(f, map_location=None, pickle_module=None, *, weights_only=None,
# mmap=None, **pickle_load_args) in torch 2.13. ``weights_only`` exists since
# 1.13 and defaults to True since 2.6 (None before: full unpickling).
TORCH_LOAD: FrozenSet[str] = frozenset({"torch.load", "torch.serialization.load"})
TORCH_SAVE: FrozenSet[str] = frozenset({"torch.save", "torch.serialization.save"})
TORCH_LOAD_POSITIONAL: Tuple[str, ...] = ("f", "map_location", "pickle_module")
WEIGHTS_ONLY_SINCE: Tuple[int, ...] = (1, 13)
# Keywords whose first release a project's code shows it runs on or after, where none
# is mined (``knowledge/releases.py`` mines replacements' names): torch.load's
# ``weights_only`` (``analysis/import_floor.needed_release``).
KEYWORD_SINCE: Dict[Tuple[str, str], Tuple[int, ...]] = {
    ("torch.load", "weights_only"): WEIGHTS_ONLY_SINCE,
    ("torch.serialization.load", "weights_only"): WEIGHTS_ONLY_SINCE,
}
WEIGHTS_ONLY_DEFAULT_SINCE: Tuple[int, ...] = (2, 6)
# Keywords torch added to a function projects call on older torch too: a handler
# that repeats the call without one is the spelling for a torch before it
# (``analysis/version_gates.py``). Checked against the installed torch's signatures.
ADDED_KEYWORDS: Mapping[str, FrozenSet[str]] = {
    "torch.load": frozenset({"weights_only", "mmap"}),
    "torch.serialization.load": frozenset({"weights_only", "mmap"}),
}

# Callables whose ``dim`` defaults to None, meaning torch's legacy implicit
# choice (``_get_softmax_dim``: 0 for 0-, 1- and 3-dim input, else 1) with a
# UserWarning. Value: the positional index of ``dim``.
IMPLICIT_DIM_CALLABLES: Mapping[str, int] = {
    **{FUNCTIONAL + name: 1 for name in ("softmax", "log_softmax", "softmin")},
    **{NN + name: 0 for name in ("Softmax", "LogSoftmax", "Softmin")},
    **{NN + "modules.activation." + name: 0 for name in ("Softmax", "LogSoftmax", "Softmin")},
}

# Functional dropouts: f(input, p=0.5, training=<default>, inplace=False).
# Value: the default of ``training`` (the alpha variants default to False).
DROPOUT_FUNCTIONS: Mapping[str, bool] = {
    **{FUNCTIONAL + name: True for name in ("dropout", "dropout1d", "dropout2d", "dropout3d")},
    **{FUNCTIONAL + name: False for name in ("alpha_dropout", "feature_alpha_dropout")},
}
DROPOUT_TRAINING_INDEX = 2

# Torch constructors that read a NumPy array and raise ValueError ("At least
# one stride in the given numpy array is negative") on a negative-stride view.
ARRAY_TO_TENSOR: FrozenSet[str] = frozenset(
    "torch." + name
    for name in (
        "from_numpy", "tensor", "as_tensor", "asarray",
        "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
        "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor",
    )
)
# Of those, the ones that accept nothing but an ndarray.
NDARRAY_ONLY_TO_TENSOR: FrozenSet[str] = frozenset({"torch.from_numpy"})

# NumPy functions returning a view with a negative stride (rot90 unless k % 4 == 0).
NUMPY_NEGATIVE_STRIDE_FUNCTIONS: FrozenSet[str] = frozenset(
    "numpy." + name for name in ("flip", "fliplr", "flipud", "rot90")
)
# Views that permute an array's strides, keeping negative ones: numpy
# functions (array first) and ndarray methods / attributes.
NUMPY_STRIDE_PERMUTING_FUNCTIONS: FrozenSet[str] = frozenset(
    "numpy." + name for name in ("transpose", "swapaxes", "moveaxis")
)
NDARRAY_STRIDE_PERMUTING_METHODS: FrozenSet[str] = frozenset({"transpose", "swapaxes"})
NDARRAY_STRIDE_PERMUTING_ATTRIBUTES: FrozenSet[str] = frozenset({"T"})

# Calls known to return a numpy.ndarray.
NDARRAY_FACTORIES: FrozenSet[str] = frozenset(
    "numpy." + name
    for name in (
        "array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "copy",
        "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
        "arange", "linspace", "logspace", "eye", "identity", "load", "loadtxt", "genfromtxt",
        "frombuffer", "fromfile", "stack", "concatenate", "vstack", "hstack", "dstack",
        "random.rand", "random.randn", "random.random", "random.uniform", "random.normal",
    )
) | frozenset({"cv2.imread", "cv2.cvtColor", "cv2.resize", "imageio.imread", "imageio.v2.imread"})

# Names of a float NaN; ``float('nan')`` (any case, sign or surrounding space) too.
NAN_CONSTANTS: FrozenSet[str] = frozenset(
    {"math.nan", "cmath.nan", "numpy.nan", "numpy.NaN", "numpy.NAN", "torch.nan"}
)

# --- dtypes (TL213) -----------------------------------------------------------

_DTYPE_NAMES: Mapping[str, Tuple[str, ...]] = {
    "uint8": ("uint8",), "int8": ("int8",), "int16": ("int16", "short"), "int32": ("int32", "int"),
    "int64": ("int64", "long"), "bool": ("bool",), "float16": ("float16", "half"),
    "bfloat16": ("bfloat16",), "float32": ("float32", "float"), "float64": ("float64", "double"),
}

# Qualified torch dtype objects -> canonical dtype name.
DTYPES: Mapping[str, str] = {
    "torch." + alias: name for name, aliases in _DTYPE_NAMES.items() for alias in aliases
}

_TENSOR_TYPE_NAMES: Mapping[str, str] = {
    "ByteTensor": "uint8", "CharTensor": "int8", "ShortTensor": "int16", "IntTensor": "int32",
    "LongTensor": "int64", "BoolTensor": "bool", "HalfTensor": "float16", "BFloat16Tensor": "bfloat16",
    "FloatTensor": "float32", "DoubleTensor": "float64",
}

# Legacy tensor types (constructors, and `.type()` arguments) -> dtype name.
TENSOR_TYPE_DTYPES: Mapping[str, str] = {
    f"{module}.{type_name}": dtype
    for type_name, dtype in _TENSOR_TYPE_NAMES.items()
    for module in ("torch", "torch.cuda")
}

# Tensor methods that convert to one dtype when called without arguments.
DTYPE_METHODS: Mapping[str, str] = {
    "byte": "uint8", "char": "int8", "short": "int16", "int": "int32", "long": "int64", "bool": "bool",
    "half": "float16", "bfloat16": "bfloat16", "float": "float32", "double": "float64",
}

# Tensor methods whose result has the receiver's dtype (in-place `_` methods too).
DTYPE_KEEPING_METHODS: FrozenSet[str] = frozenset({
    "cuda", "cpu", "clone", "detach", "contiguous", "pin_memory", "t", "transpose", "permute",
    "view", "view_as", "reshape", "reshape_as", "flatten", "squeeze", "unsqueeze", "expand",
    "expand_as", "repeat", "narrow",
})

# Tensor methods returning Python numbers (`size` only with a dim).
SIZE_METHODS: FrozenSet[str] = frozenset({"size", "numel", "dim", "ndimension", "nelement", "element_size"})


# --- Loss accumulation (TL209) -------------------------------------------------

# Methods whose result carries no autograd graph even on a tensor that has one.
NON_DIFFERENTIABLE_METHODS: FrozenSet[str] = frozenset({
    "detach", "detach_", "eq", "ne", "lt", "le", "gt", "ge", "argmax", "argmin",
    "long", "int", "short", "char", "byte", "bool",
})

# Context managers / decorators that turn autograd recording off.
NO_GRAD_CONTEXTS: FrozenSet[str] = frozenset({
    "torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
    "torch.autograd.inference_mode", "torch.autograd.grad_mode.inference_mode",
})
SET_GRAD_ENABLED: FrozenSet[str] = frozenset({
    "torch.set_grad_enabled", "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled",
})

# Functions that differentiate a tensor passed to them.
AUTOGRAD_FUNCTIONS: FrozenSet[str] = frozenset({
    "torch.autograd.backward", "torch.autograd.grad",
})


# --- CUDA initialisation (TL210) -------------------------------------------------

# torch.cuda functions that initialise CUDA (the driver's cuInit, after which
# CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER are never read again), from the
# torch 2.13 sources: `is_available()` calls cudaGetDeviceCount (which runs
# cuInit) unless PYTORCH_NVML_BASED_CUDA_CHECK=1; the others call _lazy_init
# or cudaSetDevice. Not listed because they do not initialise: device_count()
# (asks NVML first and re-reads CUDA_VISIBLE_DEVICES until CUDA is
# initialised), is_initialized(), manual_seed()/manual_seed_all() (queued
# until initialisation), empty_cache() and the memory statistics (no-ops before it).
CUDA_INITIALISING_FUNCTIONS: FrozenSet[str] = frozenset(
    "torch.cuda." + name
    for name in (
        "is_available", "init", "set_device", "current_device", "get_device_name",
        "get_device_capability", "get_device_properties", "synchronize", "mem_get_info",
        "current_stream", "default_stream", "is_bf16_supported", "can_device_access_peer",
        "ipc_collect", "cudart", "current_blas_handle",
    )
)

# Environment variables the CUDA driver reads once, when it initialises.
CUDA_INIT_ENVIRONMENT: FrozenSet[str] = frozenset({"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"})


# --- Activation checkpointing (TL212) --------------------------------------------

# Checkpoint functions and the torch version that added their `use_reentrant`
# argument (checkpoint: 1.11, pytorch#69508; checkpoint_sequential: 2.0, pytorch#86331).
CHECKPOINT_FUNCTIONS: Mapping[str, str] = {
    "torch.utils.checkpoint.checkpoint": "1.11",
    "torch.utils.checkpoint.checkpoint_sequential": "2.0",
}


# --- Boolean masks (TL213) --------------------------------------------------------

# Tensor methods taking a mask, and the mask's position among their arguments.
MASK_METHODS: Mapping[str, Tuple[int, str]] = {
    "masked_fill": (0, "mask"), "masked_fill_": (0, "mask"), "masked_select": (0, "mask"),
    "masked_scatter": (0, "mask"), "masked_scatter_": (0, "mask"), "where": (0, "condition"),
}

# torch functions taking a mask: (position, keyword).
MASK_FUNCTIONS: Mapping[str, Tuple[int, str]] = {
    "torch.masked_fill": (1, "mask"), "torch.masked_select": (1, "mask"),
    "torch.masked_scatter": (1, "mask"), "torch.where": (0, "condition"),
}

# Attributes that torch extensions add to torch at import time (device plugins
# registered through the PrivateUse1 mechanism): not in any torch build.
EXTENSION_ATTRIBUTES: FrozenSet[str] = frozenset(
    "torch." + name
    for name in ("npu", "hpu", "mlu", "musa", "neuron", "tpu", "gcu", "dipu", "sdaa", "ipu", "xla", "dml", "vacc")
)

# --- Private names with public twins (TL114) ----------------------------------------


@dataclass(frozen=True)
class PublicTwin:
    """A private path (a component starts with ``_``) and its public spelling.

    ``since``: the first torch where the public name exists. ``wrapper``: the
    public name is a function that only calls the private one (torch.compiler
    over torch._dynamo) rather than the very same object.
    """

    private: str
    public: str
    since: Optional[str] = None
    wrapper: bool = False


def _twins(private_module: str, public_module: str, names: Tuple[str, ...], since: Optional[str] = None,
           wrapper: bool = False) -> Tuple[PublicTwin, ...]:
    return tuple(PublicTwin(f"{private_module}.{n}", f"{public_module}.{n}", since, wrapper) for n in names)


_FUNC_TRANSFORMS = ("jacrev", "jacfwd", "hessian", "vjp", "jvp", "functionalize", "linearize")
_DTENSOR = ("DTensor", "Shard", "Replicate", "Partial", "Placement", "distribute_tensor", "distribute_module")

PUBLIC_TWINS: Tuple[PublicTwin, ...] = (
    # made public by pytorch#69862 (torch 1.11); TorchFix's TOR104/TOR105
    *_twins("torch.utils.data._utils.collate", "torch.utils.data", ("default_collate", "default_convert"), "1.11"),
    *_twins("torch.utils.data._utils.worker", "torch.utils.data", ("get_worker_info",), "1.2"),
    PublicTwin("torch._tensor.Tensor", "torch.Tensor"),
    *_twins("torch._lowrank", "torch", ("svd_lowrank", "pca_lowrank"), "1.5"),
    *_twins("torch.jit._script", "torch.jit", ("script", "ScriptModule")),
    *_twins("torch.jit._trace", "torch.jit", ("trace",)),
    *_twins("torch.fx._symbolic_trace", "torch.fx", ("symbolic_trace", "Tracer"), "1.8"),
    *_twins("torch._functorch.apis", "torch.func", ("vmap", "grad", "grad_and_value"), "2.0"),
    *_twins("torch._functorch.eager_transforms", "torch.func", _FUNC_TRANSFORMS, "2.0"),
    *_twins("torch._functorch.functional_call", "torch.func", ("functional_call",), "2.0"),
    *_twins("torch._dynamo", "torch.compiler",
            ("reset", "disable", "allow_in_graph", "list_backends", "assume_constant_result"), "2.1", wrapper=True),
    # torch._utils.is_compiling warns that it is deprecated and returns torch.compiler.is_compiling()
    PublicTwin("torch._utils.is_compiling", "torch.compiler.is_compiling", "2.3", wrapper=True),
    *_twins("torch.distributed._tensor", "torch.distributed.tensor", _DTENSOR, "2.5"),
    *_twins("torch.distributed._tensor", "torch.distributed.device_mesh", ("DeviceMesh", "init_device_mesh"), "2.2"),
    *_twins("torch.distributed._composable.fsdp", "torch.distributed.fsdp",
            ("fully_shard", "FSDPModule", "MixedPrecisionPolicy", "CPUOffloadPolicy"), "2.6"),
)

PUBLIC_TWINS_BY_PRIVATE: Mapping[str, PublicTwin] = {twin.private: twin for twin in PUBLIC_TWINS}


# --- Performance hints (TL302-TL304) ------------------------------------------------

DATALOADER_NUM_WORKERS_POSITION = 5  # DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, ...)
DATALOADER_PIN_MEMORY_POSITION = 7  # ..., collate_fn, pin_memory, ...

# `zero_grad(set_to_none=...)` exists from torch 1.7; its default became True in 2.0.
ZERO_GRAD_SET_TO_NONE_SINCE = "1.7"

CUDNN = "torch.backends.cudnn."
# Flags of torch.backends.cudnn that take a bool.
CUDNN_FLAGS: FrozenSet[str] = frozenset({"enabled", "benchmark", "deterministic", "allow_tf32"})
