"""Deprecated and removed torch APIs, as data (read by TL108 and TL109).

One ``Deprecation`` per old API: its qualified name and kind, the text of the
replacement for the message, the torch version from which the replacement
exists (``since``), the versions that deprecated and removed the old API where
known, and, only when the rewrite is exact, a small declarative ``rewrite``:

* ``Rename(new)``: the name becomes ``new``; arguments untouched. Valid for
  calls, plain references and from-imports alike.
* ``CallRewrite``: a call becomes a call of another function with its
  arguments mapped by parameter name (reordered, renamed, literal values
  translated, a leading device string added, ...). Anything the mapping does
  not cover (``*args``, an unknown keyword, a non-literal where a literal is
  needed) means no fix.
* ``InclusiveRange(new)``: ``torch.range``'s inclusive end, for integer
  literal arguments only.
* ``ReadAs(call)``: reading the attribute is calling ``call()``.
* ``RenameKeyword(new)``: one keyword argument of a function is renamed.

Code strings in rewrites spell torch as ``torch``; the fixer respells it the
way the checked file imports torch. Rules never spell these names themselves.
Every entry is checked against the installed torch by
``tests/test_deprecations_table.py``: replacements exist, removed APIs are
gone or raise, deprecated ones warn (where ``warns``), rewrites compute what
the old API computed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Tuple, Union

from torchlint.core.settings import VersionRange, versions


class Kind(enum.Enum):
    FUNCTION = "function"
    METHOD = "method"  # a Tensor method: ``old`` is ``torch.Tensor.<name>``
    ATTRIBUTE = "attribute"
    MODULE = "module"
    CLASS = "class"
    KEYWORD = "keyword"  # ``keyword`` of the function ``old``


class Status(enum.Enum):
    DEPRECATED = "deprecated"  # still works in current torch (TL109)
    REMOVED = "removed"  # absent, or a stub that raises, in current torch (TL108)


# --- rewrites -------------------------------------------------------------------


@dataclass(frozen=True)
class Rename:
    """The old name becomes ``new`` (a qualified name); nothing else changes."""

    new: str
    since: Optional[str] = None  # the fix needs a newer torch than the message


@dataclass(frozen=True)
class Ref:
    """A literal key that matches an argument resolving to this torch name."""

    qualified: str


Literal = Union[bool, int, str, None, Ref]
DROP = None  # in ``CallRewrite.literals``: the argument is left out


@dataclass(frozen=True)
class CallRewrite:
    """A call of the old function becomes a call of ``new``, arguments mapped.

    ``params`` are the old function's parameters in positional order (what
    positional arguments bind to). The new call gets ``lead`` (code), then
    the old arguments named in ``args`` as positionals, then ``keywords``
    (new keyword <- old parameter), then the old keywords listed in
    ``passthrough`` (``ALL`` passes every other keyword), then ``extra``.
    ``literals`` translate an old parameter's literal value into new code
    (``DROP`` leaves it out); a non-literal value there means no fix.
    ``defaults`` supply an old parameter that was not passed, where the new
    function's default differs. ``varargs``: every positional argument goes
    into one list (at least ``min_args`` of them). ``decorator``: a bare
    ``@old`` becomes ``@new(<extra>)``. ``keywords_only``: positional
    arguments mean no fix (their order differs).
    """

    new: str
    params: Tuple[str, ...] = ()
    args: Tuple[str, ...] = ()
    keywords: Tuple[Tuple[str, str], ...] = ()
    passthrough: Union[Tuple[str, ...], str] = ()
    literals: Mapping[str, Mapping[Literal, Optional[str]]] = field(default_factory=dict)
    defaults: Tuple[Tuple[str, str], ...] = ()
    lead: Tuple[str, ...] = ()
    extra: Tuple[Tuple[str, str], ...] = ()
    varargs: bool = False
    min_args: int = 0
    decorator: bool = False
    since: Optional[str] = None


ALL = "*"


@dataclass(frozen=True)
class InclusiveRange:
    """``torch.range(s, e, step)`` -> ``new(s, e ± 1, step)`` for integer literals.

    Without an explicit ``dtype`` the arguments become float literals, since
    ``torch.range`` returns the default floating dtype and ``arange`` of
    integers would not.
    """

    new: str
    since: Optional[str] = None


@dataclass(frozen=True)
class ReadAs:
    """Reading the old attribute is calling ``call()``."""

    call: str
    since: Optional[str] = None


@dataclass(frozen=True)
class RenameKeyword:
    """The keyword argument is renamed to ``new`` (no fix if both are given)."""

    new: str
    since: Optional[str] = None


Rewrite = Union[Rename, CallRewrite, InclusiveRange, ReadAs, RenameKeyword]


# --- entries --------------------------------------------------------------------


@dataclass(frozen=True)
class Deprecation:
    old: str
    kind: Kind
    status: Status
    replacement: str  # message text, markdown
    since: Optional[str] = None  # the replacement exists from this torch on
    deprecated: Optional[str] = None  # torch version that deprecated ``old``, where known
    removed: Optional[str] = None  # torch version that removed ``old``, where known
    rewrite: Optional[Rewrite] = None  # None: flag only (no exact rewrite)
    new: Tuple[str, ...] = ()  # replacement names that must exist (checked by the tests)
    keyword: Optional[str] = None  # KEYWORD entries: the deprecated keyword
    warns: bool = True  # DEPRECATED entries: current torch warns when it is used

    @property
    def exact_fix(self) -> bool:
        """The table knows an exact rewrite (otherwise the entry is reported only)."""
        return self.rewrite is not None

    @property
    def versions(self) -> VersionRange:
        """Where the advice holds: the replacement must exist in the oldest torch."""
        return versions(since=self.since)

    @property
    def fix_versions(self) -> VersionRange:
        since = getattr(self.rewrite, "since", None) or self.since
        return versions(since=since)

    @property
    def name(self) -> str:
        """The last component: what has to occur in a file that uses ``old``."""
        return self.keyword or self.old.rsplit(".", 1)[1]

    @property
    def display(self) -> str:
        """``torch.solve``, ``Tensor.solve``, ``grad_variables=``, ``ctx.saved_variables``."""
        if self.kind is Kind.KEYWORD:
            return f"{self.keyword}="
        if self.kind is Kind.METHOD:
            return "Tensor." + self.name
        if self.old.startswith(FUNCTION_CTX + "."):
            return "ctx." + self.name
        return self.old


TENSOR = "torch.Tensor"
FUNCTION_CTX = "torch.autograd.function.FunctionCtx"
LINALG = "torch.linalg."

D = Status.DEPRECATED
R = Status.REMOVED


def _removed_linalg(name: str, replacement: str, since: str, new: Tuple[str, ...], method: bool = True,
                    rewrite: Optional[Rewrite] = None, deprecated: Optional[str] = "1.9") -> Tuple[Deprecation, ...]:
    entries = [Deprecation("torch." + name, Kind.FUNCTION, R, replacement, since, deprecated, rewrite=rewrite, new=new)]
    if method:
        entries.append(Deprecation(f"{TENSOR}.{name}", Kind.METHOD, R, replacement, since, deprecated, new=new))
    return tuple(entries)


_FLOAT_TENSOR_TYPES = {
    "FloatTensor": "torch.float32",
    "DoubleTensor": "torch.float64",
    "HalfTensor": "torch.float16",
    "BFloat16Tensor": "torch.bfloat16",
}

ENTRIES: Tuple[Deprecation, ...] = (
    # -- removed (TL108): stubs that raise RuntimeError, or absent ------------------
    *_removed_linalg("solve", "`torch.linalg.solve(A, B)` (arguments reversed; returns only the solution)",
                     "1.8", (LINALG + "solve",)),
    *_removed_linalg("symeig", "`torch.linalg.eigh(A, UPLO='U')` or `torch.linalg.eigvalsh(A, UPLO='U')` "
                     "(the default triangle changed from upper to lower)", "1.8",
                     (LINALG + "eigh", LINALG + "eigvalsh")),
    *_removed_linalg("eig", "`torch.linalg.eig(A)` or `torch.linalg.eigvals(A)` (complex results)", "1.9",
                     (LINALG + "eig", LINALG + "eigvals")),
    *_removed_linalg("lstsq", "`torch.linalg.lstsq(A, B).solution` (arguments reversed; no padded residual rows)",
                     "1.9", (LINALG + "lstsq",)),
    *_removed_linalg(
        "matrix_rank", "`torch.linalg.matrix_rank(A)` (`symmetric=` is now `hermitian=`)", "1.8",
        (LINALG + "matrix_rank",), method=False,
        rewrite=CallRewrite(LINALG + "matrix_rank", params=("input", "tol", "symmetric"), args=("input",),
                            keywords=(("hermitian", "symmetric"),)),
    ),
    *_removed_linalg("gels", "`torch.linalg.lstsq(A, B).solution` (arguments reversed)", "1.9",
                     (LINALG + "lstsq",), deprecated=None),
    *_removed_linalg("gesv", "`torch.linalg.solve(A, B)` (arguments reversed; returns only the solution)", "1.8",
                     (LINALG + "solve",), deprecated=None),
    *_removed_linalg(
        "potrf", "`torch.linalg.cholesky(A, upper=True)` (potrf returned the upper factor by default)", "1.10",
        (LINALG + "cholesky",), deprecated=None,
        rewrite=CallRewrite(LINALG + "cholesky", params=("a", "upper"), args=("a",),
                            keywords=(("upper", "upper"),), defaults=(("upper", "True"),), passthrough=("out",)),
    ),
    *_removed_linalg(
        "potrs", "`torch.cholesky_solve(B, U, upper=True)` (potrs assumed the upper factor by default)", "1.1",
        ("torch.cholesky_solve",), deprecated=None,
        rewrite=CallRewrite("torch.cholesky_solve", params=("b", "u", "upper"), args=("b", "u"),
                            keywords=(("upper", "upper"),), defaults=(("upper", "True"),), passthrough=("out",)),
    ),
    *_removed_linalg("trtrs", "`torch.linalg.solve_triangular(A, B, upper=...)` (arguments reversed; returns only "
                     "the solution)", "1.11", (LINALG + "solve_triangular",), deprecated=None),
    *_removed_linalg("btrifact", "`torch.linalg.lu_factor(A)`", "1.11", (LINALG + "lu_factor",), deprecated=None),
    *_removed_linalg("btrisolve", "`torch.linalg.lu_solve(LU, pivots, B)` (arguments reordered)", "1.13",
                     (LINALG + "lu_solve",), deprecated=None),
    Deprecation("torch.set_deterministic", Kind.FUNCTION, R, "`torch.use_deterministic_algorithms`", "1.8", "1.8",
                rewrite=Rename("torch.use_deterministic_algorithms"), new=("torch.use_deterministic_algorithms",)),
    Deprecation("torch.is_deterministic", Kind.FUNCTION, R, "`torch.are_deterministic_algorithms_enabled`", "1.8",
                "1.8", rewrite=Rename("torch.are_deterministic_algorithms_enabled"),
                new=("torch.are_deterministic_algorithms_enabled",)),
    Deprecation("torch._six", Kind.MODULE, R, "the Python 3 standard library (`math.inf`, `collections.abc`, `str`)"),
    Deprecation("torch.utils.ffi", Kind.MODULE, R, "C++ extensions (`torch.utils.cpp_extension`)", "1.0",
                removed="1.0", new=("torch.utils.cpp_extension",)),
    # The Lua Torch ``nn`` ports; the 1.0 release notes list it as removed
    # (https://github.com/pytorch/pytorch/releases/tag/v1.0.0).
    Deprecation("torch.legacy", Kind.MODULE, R, "`torch.nn` (modules) and `torch.optim` (optimizers)", "1.0",
                removed="1.0", new=("torch.nn", "torch.optim")),
    # -- deprecated (TL109): still work, most warn ----------------------------------
    Deprecation("torch.range", Kind.FUNCTION, D,
                "`torch.arange(start, end + 1, step)` (arange excludes `end`; range returns floating point)",
                rewrite=InclusiveRange("torch.arange"), new=("torch.arange",)),
    Deprecation("torch.chain_matmul", Kind.FUNCTION, D, "`torch.linalg.multi_dot([a, b, ...])`", "1.9", "1.9",
                rewrite=CallRewrite(LINALG + "multi_dot", varargs=True, min_args=2, passthrough=("out",)),
                new=(LINALG + "multi_dot",)),
    Deprecation("torch.lu", Kind.FUNCTION, D,
                "`torch.linalg.lu_factor(A)` (which raises on singular input; `torch.linalg.lu_factor_ex` does not)",
                "1.11", "1.13", new=(LINALG + "lu_factor", LINALG + "lu_factor_ex")),
    Deprecation(f"{TENSOR}.lu", Kind.METHOD, D, "`torch.linalg.lu_factor(A)`", "1.11", "1.13",
                new=(LINALG + "lu_factor",)),
    Deprecation("torch.lu_solve", Kind.FUNCTION, D, "`torch.linalg.lu_solve(LU, pivots, B)` (arguments reordered)",
                "1.13", "1.13",
                rewrite=CallRewrite(LINALG + "lu_solve", params=("input", "LU_data", "LU_pivots"),
                                    args=("LU_data", "LU_pivots", "input"), passthrough=("out",)),
                new=(LINALG + "lu_solve",)),
    Deprecation(f"{TENSOR}.lu_solve", Kind.METHOD, D, "`torch.linalg.lu_solve(LU, pivots, B)`", "1.13", "1.13",
                new=(LINALG + "lu_solve",)),
    Deprecation("torch.cholesky", Kind.FUNCTION, D, "`torch.linalg.cholesky(A)` (`upper=` is a keyword there)",
                "1.8", "1.9",
                rewrite=CallRewrite(LINALG + "cholesky", params=("input", "upper"), args=("input",),
                                    keywords=(("upper", "upper"),), passthrough=("out",), since="1.10"),
                new=(LINALG + "cholesky",)),
    Deprecation(f"{TENSOR}.cholesky", Kind.METHOD, D, "`torch.linalg.cholesky(A)`", "1.8", "1.9",
                new=(LINALG + "cholesky",)),
    Deprecation("torch.qr", Kind.FUNCTION, D, "`torch.linalg.qr(A, mode='reduced')` (`some=False` is "
                "`mode='complete'`)", "1.8", "1.9",
                rewrite=CallRewrite(LINALG + "qr", params=("input", "some"), args=("input",),
                                    keywords=(("mode", "some"),), passthrough=("out",),
                                    literals={"some": {True: DROP, False: "'complete'"}}),
                new=(LINALG + "qr",)),
    Deprecation(f"{TENSOR}.qr", Kind.METHOD, D, "`torch.linalg.qr(A)`", "1.8", "1.9", new=(LINALG + "qr",)),
    Deprecation("torch.triangular_solve", Kind.FUNCTION, D,
                "`torch.linalg.solve_triangular(A, B, upper=...)` (arguments reversed; returns only the solution)",
                "1.11", new=(LINALG + "solve_triangular",)),
    Deprecation("torch.ger", Kind.FUNCTION, D, "`torch.outer`", "1.7", rewrite=Rename("torch.outer"),
                new=("torch.outer",), warns=False),
    Deprecation(f"{TENSOR}.ger", Kind.METHOD, D, "`Tensor.outer`", "1.7", rewrite=Rename(f"{TENSOR}.outer"),
                new=(f"{TENSOR}.outer",), warns=False),
    Deprecation("torch.cuda.amp.autocast", Kind.CLASS, D, "`torch.amp.autocast('cuda', ...)`", "1.10", "2.4",
                rewrite=CallRewrite("torch.amp.autocast", lead=("'cuda'",), passthrough=ALL),
                new=("torch.amp.autocast",)),
    Deprecation("torch.cpu.amp.autocast", Kind.CLASS, D, "`torch.amp.autocast('cpu', ...)`", "1.10", "2.4",
                rewrite=CallRewrite("torch.amp.autocast", lead=("'cpu'",), passthrough=ALL),
                new=("torch.amp.autocast",)),
    Deprecation("torch.cuda.amp.GradScaler", Kind.CLASS, D, "`torch.amp.GradScaler('cuda', ...)`", "2.3", "2.4",
                rewrite=CallRewrite("torch.amp.GradScaler", lead=("'cuda'",), passthrough=ALL),
                new=("torch.amp.GradScaler",)),
    Deprecation("torch.cpu.amp.GradScaler", Kind.CLASS, D, "`torch.amp.GradScaler('cpu', ...)`", "2.3", "2.4",
                rewrite=CallRewrite("torch.amp.GradScaler", lead=("'cpu'",), passthrough=ALL),
                new=("torch.amp.GradScaler",)),
    Deprecation("torch.cuda.amp.custom_fwd", Kind.FUNCTION, D, "`torch.amp.custom_fwd(device_type='cuda')`", "2.4",
                "2.4",
                rewrite=CallRewrite("torch.amp.custom_fwd", params=("fwd",), args=("fwd",),
                                    passthrough=("cast_inputs",), extra=(("device_type", "'cuda'"),), decorator=True),
                new=("torch.amp.custom_fwd",)),
    Deprecation("torch.cuda.amp.custom_bwd", Kind.FUNCTION, D, "`torch.amp.custom_bwd(device_type='cuda')`", "2.4",
                "2.4",
                rewrite=CallRewrite("torch.amp.custom_bwd", params=("bwd",), args=("bwd",),
                                    extra=(("device_type", "'cuda'"),), decorator=True),
                new=("torch.amp.custom_bwd",)),
    Deprecation("torch.cuda.memory_cached", Kind.FUNCTION, D, "`torch.cuda.memory_reserved`", "1.4", "1.4",
                rewrite=Rename("torch.cuda.memory_reserved"), new=("torch.cuda.memory_reserved",)),
    Deprecation("torch.cuda.max_memory_cached", Kind.FUNCTION, D, "`torch.cuda.max_memory_reserved`", "1.4", "1.4",
                rewrite=Rename("torch.cuda.max_memory_reserved"), new=("torch.cuda.max_memory_reserved",)),
    Deprecation("torch.cuda.reset_max_memory_cached", Kind.FUNCTION, D, "`torch.cuda.reset_peak_memory_stats`",
                "1.4", "1.4", rewrite=Rename("torch.cuda.reset_peak_memory_stats"),
                new=("torch.cuda.reset_peak_memory_stats",)),
    Deprecation("torch.testing.assert_allclose", Kind.FUNCTION, D,
                "`torch.testing.assert_close` (stricter: it also checks dtypes; different default tolerances)",
                "1.9", "1.12", new=("torch.testing.assert_close",)),
    Deprecation("torch.nn.utils.clip_grad_norm", Kind.FUNCTION, D, "`torch.nn.utils.clip_grad_norm_`", "0.4", "0.4",
                rewrite=Rename("torch.nn.utils.clip_grad_norm_"), new=("torch.nn.utils.clip_grad_norm_",)),
    Deprecation("torch.nn.utils.weight_norm", Kind.FUNCTION, D,
                "`torch.nn.utils.parametrizations.weight_norm` (the state_dict keys change)", "2.1",
                new=("torch.nn.utils.parametrizations.weight_norm",)),
    Deprecation("torch.nn.NLLLoss2d", Kind.CLASS, D, "`torch.nn.NLLLoss` (a drop-in replacement)",
                rewrite=Rename("torch.nn.NLLLoss"), new=("torch.nn.NLLLoss",)),
    Deprecation("torch.set_default_tensor_type", Kind.FUNCTION, D,
                "`torch.set_default_dtype` (plus `torch.set_default_device` for CUDA tensor types)", "1.0", "2.1",
                rewrite=CallRewrite("torch.set_default_dtype", params=("t",), args=("t",), literals={"t": {
                    **{Ref("torch." + name): dtype for name, dtype in _FLOAT_TENSOR_TYPES.items()},
                    **{"torch." + name: dtype for name, dtype in _FLOAT_TENSOR_TYPES.items()},
                }}),
                new=("torch.set_default_dtype",)),
    Deprecation("torch.backends.cuda.sdp_kernel", Kind.FUNCTION, D,
                "`torch.nn.attention.sdpa_kernel(backends)` (it takes a list of backends)", "2.3",
                new=("torch.nn.attention.sdpa_kernel",)),
    Deprecation("torch.has_cuda", Kind.ATTRIBUTE, D, "`torch.backends.cuda.is_built()`", "1.1", "2.1",
                rewrite=ReadAs("torch.backends.cuda.is_built"), new=("torch.backends.cuda.is_built",)),
    Deprecation("torch.has_cudnn", Kind.ATTRIBUTE, D, "`torch.backends.cudnn.is_available()`", "1.0", "2.1",
                rewrite=ReadAs("torch.backends.cudnn.is_available"), new=("torch.backends.cudnn.is_available",)),
    Deprecation("torch.has_mps", Kind.ATTRIBUTE, D, "`torch.backends.mps.is_built()`", "1.12", "2.1",
                rewrite=ReadAs("torch.backends.mps.is_built"), new=("torch.backends.mps.is_built",)),
    Deprecation("torch.has_mkldnn", Kind.ATTRIBUTE, D, "`torch.backends.mkldnn.is_available()`", "1.1", "2.1",
                rewrite=ReadAs("torch.backends.mkldnn.is_available"), new=("torch.backends.mkldnn.is_available",)),
    Deprecation(f"{FUNCTION_CTX}.saved_variables", Kind.ATTRIBUTE, D, "`ctx.saved_tensors`",
                rewrite=Rename(f"{FUNCTION_CTX}.saved_tensors")),
    Deprecation("torch.autograd.backward", Kind.KEYWORD, D, "`grad_tensors=`", keyword="grad_variables",
                rewrite=RenameKeyword("grad_tensors")),
)


def entries(status: Status) -> Tuple[Deprecation, ...]:
    return tuple(e for e in ENTRIES if e.status is status)


def by_old(status: Status) -> Dict[str, Deprecation]:
    """Name-like entries (not keywords) by qualified old name."""
    return {e.old: e for e in entries(status) if e.kind is not Kind.KEYWORD}


def is_removed_api(qualified: str) -> bool:
    """A removed torch name, or anything under it (``torch._six.string_classes``)."""
    removed = by_old(Status.REMOVED)
    return any(qualified == name or qualified.startswith(name + ".") for name in removed)


# --- legacy tensor types used as dtypes (TL110) -------------------------------------

# ``torch.FloatTensor`` and friends are tensor types, not dtypes: ``dtype=``
# rejects them with a TypeError. The dtype each stands for, and whether it is
# the CUDA variant (which also meant ``device='cuda'``).
_TENSOR_TYPE_DTYPES = {
    "FloatTensor": "torch.float32",
    "DoubleTensor": "torch.float64",
    "HalfTensor": "torch.float16",
    "BFloat16Tensor": "torch.bfloat16",
    "ByteTensor": "torch.uint8",
    "CharTensor": "torch.int8",
    "ShortTensor": "torch.int16",
    "IntTensor": "torch.int32",
    "LongTensor": "torch.int64",
    "BoolTensor": "torch.bool",
}

LEGACY_TENSOR_TYPES: Mapping[str, Tuple[str, bool]] = {
    **{"torch." + name: (dtype, False) for name, dtype in _TENSOR_TYPE_DTYPES.items()},
    **{"torch.cuda." + name: (dtype, True) for name, dtype in _TENSOR_TYPE_DTYPES.items()},
}
