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
* ``DropArgument()``, ``ReplaceCall(new)``, ``WrapResult(new, value)``: for
  arguments torch ignores, a call that returns a name, and a value whose result
  another function converts (``torch.view_as_real`` of ``stft(return_complex=True)``).

Code strings in rewrites spell torch as ``torch``; the fixer respells it the
way the checked file imports torch. Rules never spell these names themselves.
Every entry is checked against the installed torch by
``tests/test_deprecations_table.py``: replacements exist, removed APIs are
gone or raise, deprecated ones warn (where ``warns``), rewrites compute what
the old API computed.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field, replace
from typing import Dict, Mapping, Optional, Tuple, Union

from torchlint.core.settings import Version, VersionRange, parse_version, versions
from torchlint.knowledge.releases import REPLACEMENT_SINCE_DATA, REPLACEMENT_SINCE_FILE, name_releases  # noqa: F401

# The torch releases the table was mined from (scripts/mine_torch_deprecations.py);
# the newest is the version a project moves to unless it says otherwise
# (``--target-torch-version``).
KNOWN_RELEASES = ("2.13", "2.14", "2.15")
NEWEST_RELEASE = KNOWN_RELEASES[-1]


class Kind(enum.Enum):
    FUNCTION = "function"
    METHOD = "method"  # a Tensor method: ``old`` is ``torch.Tensor.<name>``
    ATTRIBUTE = "attribute"
    MODULE = "module"
    CLASS = "class"
    KEYWORD = "keyword"  # ``keyword`` of the function ``old``
    MISSING_KEYWORD = "missing keyword"  # ``old`` called without ``keyword`` (nor an argument at ``position``)
    # ``old`` called with a set (a set display or comprehension, ``set(...)``) as
    # ``keyword`` or the argument at ``position``: torch 2.15's ``Optimizer({...})``
    SET_ARGUMENT = "set argument"
    # ``old`` is ``<class>.<method>``, called on an instance one of ``made_by``
    # made (``ctx = GreenContext.create(...)``; ``ctx.set_context()``)
    INSTANCE_METHOD = "instance method"
    # ``old`` called with ``keyword`` (or the argument at ``position``) given a
    # value torch warns about: a literal in ``values``, or a known literal not in
    # ``unless`` (``torch.onnx.export(dynamo=False)``, ``spawn(start_method='fork')``).
    # A Tensor method (``torch.Tensor.stft``) is matched on a receiver inference
    # knows is a tensor, ``position`` counting after the receiver.
    KEYWORD_VALUE = "keyword value"
    # ``old`` (or an alias), called or bare, decorating a class: ``@torch.no_grad()`` on a class
    CLASS_DECORATOR = "class decorator"
    # ``old`` is ``<class>.<method>``: a class of the user's, with no base but ``made_by`` (or none),
    # defines the method as a plain method where torch wants a classmethod (``__torch_function__``)
    PLAIN_METHOD = "plain method"


class Status(enum.Enum):
    DEPRECATED = "deprecated"  # still works in the torch the project moves to (TL109)
    REMOVED = "removed"  # absent, or a stub that raises, there (TL108)


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
    # False: the result differs for some inputs, so the fix is offered with
    # ``--unsafe-fixes`` only and the entry has no exact fix (``exact_fix``).
    safe: bool = True


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


@dataclass(frozen=True)
class DropArgument:
    """KEYWORD_VALUE and KEYWORD entries: the argument is left out, since torch ignores its value
    (``spawn(..., start_method='fork')`` always spawns; torch 2.14 ignores ``profiler_metrics=``).
    A KEYWORD entry's value must run no code."""

    since: Optional[str] = None


@dataclass(frozen=True)
class ReplaceCall:
    """KEYWORD_VALUE entries: a call given only the warned value becomes the name ``new``, which
    is what the call returned (``@torch.jit.ignore(True)`` -> ``@torch.jit.unused``)."""

    new: str
    since: Optional[str] = None


@dataclass(frozen=True)
class WrapResult:
    """KEYWORD_VALUE entries: the call is given ``value`` (code) instead of the warned value, and its
    result is passed to ``new``, which turns it into what the warned value returned
    (``torch.stft(..., return_complex=False)`` -> ``torch.view_as_real(torch.stft(..., return_complex=True))``)."""

    new: str
    value: str
    since: Optional[str] = None


Rewrite = Union[Rename, CallRewrite, InclusiveRange, ReadAs, RenameKeyword, DropArgument, ReplaceCall, WrapResult]


# --- entries --------------------------------------------------------------------


@dataclass(frozen=True)
class Deprecation:
    old: str
    kind: Kind
    status: Status
    replacement: str  # message text, markdown
    since: Optional[str] = None  # the replacement exists from this torch on
    deprecated: Optional[str] = None  # torch version that deprecated ``old``, where known
    # torch version that removed ``old``, where known. A DEPRECATED entry with
    # ``removed`` is reported as removed (TL108) for code moving to that
    # version or later (``--target-torch-version``), as deprecated before.
    removed: Optional[str] = None
    # torch version that stopped deprecating ``old``: not reported for code
    # moving to it or later (torch 2.15 took back ``all_gather_into_tensor``'s).
    undeprecated: Optional[str] = None
    rewrite: Optional[Rewrite] = None  # None: flag only (no exact rewrite)
    new: Tuple[str, ...] = ()  # replacement names that must exist (checked by the tests)
    keyword: Optional[str] = None  # KEYWORD entries: the deprecated keyword
    warns: bool = True  # DEPRECATED entries: current torch warns when it is used
    aliases: Tuple[str, ...] = ()  # other qualified names of the same object (``torch.ao.quantization.prepare``)
    position: Optional[int] = None  # MISSING_KEYWORD, SET_ARGUMENT entries: the keyword's positional index
    made_by: Tuple[str, ...] = ()  # INSTANCE_METHOD entries: the calls that make the instance
    # Why the entry is reported only when asked for (TL117, opt-in); empty:
    # reported by default (TL108/TL109), for the reason ``reporting`` gives.
    opt_in: str = ""
    # MODULE entries: the replacement of each name the module held, as a from-import
    # names them (``from torch._six import string_classes`` -> ``(str, bytes)``).
    members: Tuple[Tuple[str, str], ...] = ()
    # KEYWORD_VALUE entries: the values torch warns about, or those it does not
    # (any other known literal warns); a value the file computes is not reported.
    values: Tuple["Literal", ...] = ()
    unless: Tuple["Literal", ...] = ()
    # Only a call of ``old`` is reported: a plain reference does not warn
    # (``isinstance(s, torch.FloatStorage)``) or names something else too
    # (``torch.autograd.variable`` is also the module of ``Variable``).
    called: bool = False
    # False where the replacement torch names lacks what the old API is used for (the
    # functional ``broadcast`` has no backward): such an entry is opt-in, told why.
    working_replacement: bool = True

    def member(self, name: str) -> "Deprecation":
        """The entry of one name a removed module held (``torch._six.string_classes``), with its own
        replacement where the table knows it, else the module's."""
        replacement = dict(self.members).get(name, self.replacement)
        return replace(self, old=f"{self.old}.{name}", kind=Kind.ATTRIBUTE, replacement=replacement, members=())

    @property
    def reporting(self) -> str:
        """Why the entry is reported by default, or is opt-in: how certain the
        static match is and what the finding offers (the docs' table shows it).

        The policy: a default finding needs a signal from torch itself (the
        API raises, or warns on use) or an exact fix; a deprecation torch
        only documents, with no exact rewrite, is opt-in, and so is one whose
        replacement lacks what the old API is used for (``working_replacement``).
        """
        if self.opt_in:
            return f"opt-in: {self.opt_in}"
        match = {
            Kind.METHOD: "only where inference knows the receiver is a tensor",
            Kind.KEYWORD: "the keyword, in a call of the resolved callable",
            Kind.MISSING_KEYWORD: "a call of the resolved callable without the keyword",
            Kind.SET_ARGUMENT: "a call of the resolved callable with a set display or `set(...)` there",
            Kind.INSTANCE_METHOD: "a call on a name last assigned what the class's factory made",
            Kind.KEYWORD_VALUE: "a literal value torch warns about, in a call of " + (
                "the method on a receiver inference knows is a tensor" if self.old.startswith(TENSOR + ".")
                else "the resolved callable"),
            Kind.CLASS_DECORATOR: "the resolved name, called or not, as a decorator of a class",
            Kind.PLAIN_METHOD: "the method defined without `@classmethod` in a class with no other base than "
                               "a tensor class",
        }.get(self.kind, "a call of the name, resolved through the file's imports" if self.called
              else "the name, resolved through the file's imports")
        if self.status is Status.REMOVED:
            signal = "the code fails on current torch"
        elif self.warns:
            signal = "torch warns on use"
        else:
            signal = "torch documents it; an exact fix is offered" if self.exact_fix else "torch signals it on use"
        if self.status is Status.DEPRECATED and self.removed:
            signal += f", and the code fails from torch {self.removed} on"
        return f"default: {signal}; matches {match}"

    def status_for(self, target: Optional[Version] = None) -> Optional[Status]:
        """What the entry is for code moving to torch ``target`` (None: the newest release known):
        removed, deprecated, or nothing to report (deprecated only later, or no longer)."""
        if self.status is Status.REMOVED:
            return Status.REMOVED
        target = target or parse_version(NEWEST_RELEASE)
        if self.undeprecated and target >= parse_version(self.undeprecated):
            return None
        if self.removed and target >= parse_version(self.removed):
            return Status.REMOVED
        if self.deprecated and target < parse_version(self.deprecated):
            return None
        return Status.DEPRECATED

    def first_target(self, status: Optional[Status] = None) -> Version:
        """The oldest known release a project can move to and be told about the entry (with
        ``status``, where given): where tests and measurements look at it."""
        for version in map(parse_version, KNOWN_RELEASES):
            found = self.status_for(version)
            if found is not None and status in (None, found):
                return version
        raise ValueError(f"{self.key} is reported for no known release")

    def may_be(self, status: Status) -> bool:
        """Can the entry have ``status`` for some target version (which rule may report it)?"""
        if status is Status.REMOVED:
            return self.status is Status.REMOVED or self.removed is not None
        return self.status is Status.DEPRECATED

    @property
    def exact_fix(self) -> bool:
        """The table knows an exact rewrite: one that keeps behaviour for every input."""
        return self.rewrite is not None and getattr(self.rewrite, "safe", True)

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
        return self.keyword if self.kind in (Kind.KEYWORD, Kind.KEYWORD_VALUE) else self.old.rsplit(".", 1)[1]

    @property
    def short_replacement(self) -> str:
        """The replacement's first code span (``torch.linalg.qr(A)``), for the one-line message."""
        if self.replacement.startswith("nothing"):
            return ""
        either = _EITHER.match(self.replacement)
        if either is not None:  # two replacements a human chooses between: name both
            return either.group(0)
        if "`" in self.replacement:
            return "`" + self.replacement.split("`")[1] + "`"
        return self.replacement

    @property
    def key(self) -> str:
        """How the mined data names this entry: ``torch.qr``, ``torch.autograd.grad(only_inputs=)``."""
        if self.kind is Kind.MISSING_KEYWORD:
            return f"{self.old}(without {self.keyword}=)"
        if self.kind is Kind.CLASS_DECORATOR:
            return f"@{self.old} on a class"
        return (f"{self.old}({self.keyword}=)" if self.kind in (Kind.KEYWORD, Kind.SET_ARGUMENT, Kind.KEYWORD_VALUE)
                else self.old)

    @property
    def display(self) -> str:
        """``torch.solve``, ``Tensor.solve``, ``grad_variables=``, ``ctx.saved_variables``."""
        if self.kind is Kind.KEYWORD:
            return f"{self.old.rsplit('.', 1)[1]}({self.keyword}=)"
        if self.kind is Kind.MISSING_KEYWORD:
            return f"{self.old} without {self.keyword}="
        if self.kind is Kind.CLASS_DECORATOR:
            return f"@{self.old.rsplit('.', 1)[1]} on a class"
        if self.kind is Kind.PLAIN_METHOD:
            return f"plain-method {self.old.rsplit('.', 1)[1]}"
        if self.kind is Kind.KEYWORD_VALUE:
            shown = self.values or self.unless
            value = shown[0].qualified.rsplit(".", 2)[-2:] if isinstance(shown[0], Ref) else [repr(shown[0])]
            op = "=" if self.values else "!="
            owner = "Tensor." if self.old.startswith(TENSOR + ".") else ""
            return f"{owner}{self.old.rsplit('.', 1)[1]}({self.keyword}{op}{'.'.join(value)})"
        if self.kind is Kind.SET_ARGUMENT:
            return f"{self.old.rsplit('.', 1)[1]}({self.keyword}={{...}})"
        if self.kind is Kind.INSTANCE_METHOD:
            return ".".join(self.old.rsplit(".", 2)[1:])  # GreenContext.set_context
        if self.kind is Kind.METHOD:
            return "Tensor." + self.name
        if self.old.startswith(FUNCTION_CTX + "."):
            return "ctx." + self.name
        return self.old


TENSOR = "torch.Tensor"
_EITHER = re.compile(r"`[^`]+` or `[^`]+`")
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


# torch 2.13's typed storages: calling one warns that TypedStorage is deprecated.
_CUDA_STORAGES = ("BFloat16Storage", "BoolStorage", "ByteStorage", "CharStorage", "ComplexDoubleStorage",
                  "ComplexFloatStorage", "DoubleStorage", "FloatStorage", "HalfStorage", "IntStorage", "LongStorage",
                  "ShortStorage")
_TYPED_STORAGES = _CUDA_STORAGES + ("QInt32Storage", "QInt8Storage", "QUInt2x4Storage", "QUInt4x2Storage",
                                    "QUInt8Storage", "TypedStorage")
# torch.sparse's legacy constructors (``torch.sparse.FloatTensor(i, v, size)``): C++ warns on each call.
_SPARSE_TENSOR_TYPES = ("BFloat16Tensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor", "HalfTensor",
                        "IntTensor", "LongTensor", "ShortTensor")

_FLOAT_TENSOR_TYPES = {
    "FloatTensor": "torch.float32",
    "DoubleTensor": "torch.float64",
    "HalfTensor": "torch.float16",
    "BFloat16Tensor": "torch.bfloat16",
}

# --- entries reviewed from torch 2.13's own deprecations ------------------------------
#
# scripts/mine_torch_deprecations.py lists what torch 2.13 itself warns about
# (knowledge/data/torch_deprecations_mined.json); knowledge/deprecation_review.py
# records, for every mined item, the entry below that covers it or why it is out
# of scope. Entries also list what torch warns about from C++ or only in its
# docs (the autocast functions, torch.norm, torch.svd, the Upsampling modules).
# Where the version that introduced a replacement is not known, ``since`` is
# the version it was verified in (2.13): conservative for ``--torch-version``.

FUNC = "torch.func."
DIST = "torch.distributed."
QUANT = "torch.ao.quantization."
# The torch release from which torchao, the replacement of torch.ao.quantization, can be counted on.
TORCHAO_FLOOR = "2.13"
TO_COMPILE = "`torch.compile` (TorchScript is deprecated)"


def _functorch(name: str, exact: bool = True, replacement: Optional[str] = None) -> Deprecation:
    new = FUNC + name
    return Deprecation("functorch." + name, Kind.FUNCTION, D, replacement or f"`{new}`", "2.0", "2.0",
                       rewrite=Rename(new) if exact else None, new=(new,) if exact else ())


def _autocast(old: str, new: str, device: str, param: Optional[str]) -> Deprecation:
    params = (param,) if param else ()
    device_code = f"'{device}'"
    rendered = f"`torch.{new}({device_code}{', ' + param if param else ''})`"
    return Deprecation("torch." + old, Kind.FUNCTION, D, rendered, "2.4", "2.4",
                       rewrite=CallRewrite("torch." + new, params=params, args=params, lead=(device_code,)),
                       new=("torch." + new,))


_AUTOCAST_DEVICES = (("cpu", "cpu"), ("gpu", "cuda"), ("ipu", "ipu"), ("xla", "xla"))

ENTRIES_2_13: Tuple[Deprecation, ...] = (
    # functorch was merged into torch.func (same signatures)
    *(_functorch(name) for name in ("vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
                                    "functionalize")),
    _functorch("make_functional", False, "`torch.func.functional_call` with the module's own parameters"),
    _functorch("make_functional_with_buffers", False, "`torch.func.functional_call` with the module's own "
               "parameters and buffers"),
    _functorch("combine_state_for_ensemble", False, "`torch.func.stack_module_state`"),
    # the device-specific autocast state functions (warn from C++)
    *(_autocast(f"get_autocast_{d}_dtype", "get_autocast_dtype", device, None) for d, device in _AUTOCAST_DEVICES),
    *(_autocast(f"set_autocast_{d}_dtype", "set_autocast_dtype", device, "dtype") for d, device in _AUTOCAST_DEVICES),
    *(_autocast(f"is_autocast_{d}_enabled", "is_autocast_enabled", device, None)
      for d, device in _AUTOCAST_DEVICES if d != "gpu"),
    *(_autocast(f"set_autocast_{d}_enabled", "set_autocast_enabled", device, "enabled")
      for d, device in _AUTOCAST_DEVICES if d != "gpu"),
    # linear algebra and nn (deprecated in the docs; torch does not warn)
    Deprecation("torch.norm", Kind.FUNCTION, D, "`torch.linalg.vector_norm` or `torch.linalg.matrix_norm`", "1.10",
                new=(LINALG + "vector_norm", LINALG + "matrix_norm"), warns=False,
                # torch.norm(x) alone is linalg.vector_norm(x) for strided CPU/CUDA tensors (torch 2.x's
                # torch.functional.norm calls it); sparse and MPS tensors take another path: unsafe.
                rewrite=CallRewrite(LINALG + "vector_norm", params=("input",), args=("input",), safe=False),
                opt_in="deprecated in its docs only (torch neither warns nor sets a removal date), and which "
                       "replacement is right depends on the input's dimensions: no exact fix (`torch.norm(x)` "
                       "alone gets an unsafe one). Common in working code (over a hundred findings in the old "
                       "packages the project checks)"),
    Deprecation("torch.svd", Kind.FUNCTION, D, "`torch.linalg.svd(A, full_matrices=not some)` (returns Vh, not V)",
                "1.8", new=(LINALG + "svd",), warns=False,
                opt_in="deprecated in its docs only (torch does not warn), and the replacement returns Vh where "
                       "svd returned V: no exact fix"),
    Deprecation("torch.nn.UpsamplingNearest2d", Kind.CLASS, D, "`torch.nn.Upsample(..., mode='nearest')`",
                new=("torch.nn.Upsample",), warns=False,
                rewrite=CallRewrite("torch.nn.Upsample", params=("size", "scale_factor"),
                                    keywords=(("size", "size"), ("scale_factor", "scale_factor")),
                                    extra=(("mode", "'nearest'"),))),
    Deprecation("torch.nn.UpsamplingBilinear2d", Kind.CLASS, D,
                "`torch.nn.Upsample(mode='bilinear', align_corners=True)`", new=("torch.nn.Upsample",),
                warns=False,
                rewrite=CallRewrite("torch.nn.Upsample", params=("size", "scale_factor"),
                                    keywords=(("size", "size"), ("scale_factor", "scale_factor")),
                                    extra=(("mode", "'bilinear'"), ("align_corners", "True")))),
    Deprecation("torch.nn.Container", Kind.CLASS, D, "`torch.nn.Module`", new=("torch.nn.Module",)),
    Deprecation("torch.nn.parallel.DistributedDataParallelCPU", Kind.CLASS, D,
                "`torch.nn.parallel.DistributedDataParallel`", new=("torch.nn.parallel.DistributedDataParallel",)),
    Deprecation("torch.nn.Hardtanh", Kind.KEYWORD, D, "`min_val=`", keyword="min_value",
                rewrite=RenameKeyword("min_val")),
    Deprecation("torch.nn.Hardtanh", Kind.KEYWORD, D, "`max_val=`", keyword="max_value",
                rewrite=RenameKeyword("max_val")),
    Deprecation("torch.nn.functional.gumbel_softmax", Kind.KEYWORD, D, "nothing (`eps` has no effect)", keyword="eps"),
    Deprecation("torch.nn.utils.stateless.functional_call", Kind.FUNCTION, D, "`torch.func.functional_call`", "2.0",
                "2.0",
                rewrite=CallRewrite(FUNC + "functional_call",
                                    params=("module", "parameters_and_buffers", "args", "kwargs"),
                                    args=("module", "parameters_and_buffers", "args", "kwargs"),
                                    passthrough=("tie_weights", "strict")),
                new=(FUNC + "functional_call",)),
    Deprecation("torch.nn.modules.rnn.apply_permutation", Kind.FUNCTION, D, "`tensor.index_select(dim, permutation)`",
                aliases=("torch.ao.nn.quantized.dynamic.modules.rnn.apply_permutation",)),
    Deprecation("torch.nn.parallel.scatter_gather.is_namedtuple", Kind.FUNCTION, D,
                "`isinstance(obj, tuple) and hasattr(obj, '_fields')`"),
    *(Deprecation(f"torch.nn.quantized.functional.{name}", Kind.FUNCTION, D,
                  "`torch.ao.nn.quantized.functional.interpolate`", new=("torch.ao.nn.quantized.functional.interpolate",),
                  aliases=(f"torch.ao.nn.quantized.functional.{name}",))
      for name in ("upsample", "upsample_bilinear", "upsample_nearest")),
    Deprecation("torch.nn.parallel.DistributedDataParallel", Kind.KEYWORD, D, "nothing (it has no effect)",
                keyword="check_reduction"),
    Deprecation("torch.nn.attention.flex_attention.create_block_mask", Kind.KEYWORD, D,
                "nothing (`_compile` is ignored)", keyword="_compile"),
    Deprecation("torch.sparse.to_sparse_semi_structured", Kind.KEYWORD, D, "nothing (transpose the input instead)",
                keyword="transposed"),
    # autograd, profiler
    Deprecation("torch.autograd.grad", Kind.KEYWORD, D, "nothing (`only_inputs` is ignored)", keyword="only_inputs"),
    Deprecation(f"{FUNCTION_CTX}.mark_shared_storage", Kind.ATTRIBUTE, D,
                "nothing (shared storages are tracked automatically)"),
    Deprecation("torch.autograd.gradcheck.get_numerical_jacobian", Kind.FUNCTION, D,
                "`torch.autograd.functional.jacobian`", new=("torch.autograd.functional.jacobian",)),
    Deprecation("torch.autograd.gradcheck.get_analytical_jacobian", Kind.FUNCTION, D,
                "`torch.autograd.functional.jacobian`", new=("torch.autograd.functional.jacobian",)),
    Deprecation("torch.autograd.gradcheck.vmap", Kind.FUNCTION, D, "`torch.vmap`", "2.0", new=("torch.vmap",),
                aliases=("torch._vmap_internals.vmap",)),
    Deprecation("torch.autograd.profiler_legacy.profile", Kind.CLASS, D, "`torch.autograd.profiler.profile`",
                new=("torch.autograd.profiler.profile",), warns=False,
                opt_in="marked for type checkers only (`@deprecated(category=None)`: torch does not warn); the "
                       "replacement's options differ: no exact fix"),
    # torch 2.14 dropped ``use_cuda`` from both signatures: passing it raises TypeError.
    Deprecation("torch.autograd.profiler.profile", Kind.KEYWORD, D, "`use_device='cuda'`", keyword="use_cuda",
                removed="2.14"),
    Deprecation("torch.profiler.profile", Kind.KEYWORD, D, "`activities=[ProfilerActivity.CUDA, ...]`",
                keyword="use_cuda", removed="2.14"),
    Deprecation("torch.cuda.reset_max_memory_allocated", Kind.FUNCTION, D,
                "`torch.cuda.reset_peak_memory_stats` (which resets every peak statistic)", "1.4", "1.4",
                new=("torch.cuda.reset_peak_memory_stats",)),
    Deprecation("torch.library.impl_abstract", Kind.FUNCTION, D, "`torch.library.register_fake`", "2.4", "2.4",
                new=("torch.library.register_fake",)),
    Deprecation("torch.cross", Kind.MISSING_KEYWORD, D, "`dim=` (the default was the first dimension of size 3)",
                keyword="dim", position=2),
    # Tensor methods (receiver known to be a tensor)
    Deprecation(f"{TENSOR}.resize", Kind.METHOD, D, "`Tensor.reshape` or the in-place `Tensor.resize_`"),
    Deprecation(f"{TENSOR}.resize_as", Kind.METHOD, D, "`Tensor.reshape_as` or the in-place `Tensor.resize_as_`"),
    Deprecation(f"{TENSOR}.storage", Kind.METHOD, D, "`Tensor.untyped_storage()`", "2.0",
                new=(f"{TENSOR}.untyped_storage",)),
    # torch.utils
    Deprecation("torch.utils._pytree._register_pytree_node", Kind.FUNCTION, D,
                "`torch.utils._pytree.register_pytree_node`", "2.2",
                rewrite=CallRewrite("torch.utils._pytree.register_pytree_node",
                                    params=("cls", "flatten_fn", "unflatten_fn", "to_str_fn", "maybe_from_str_fn"),
                                    args=("cls", "flatten_fn", "unflatten_fn"),
                                    passthrough=("serialized_type_name", "to_dumpable_context", "from_dumpable_context",
                                                 "flatten_with_keys_fn")),
                new=("torch.utils._pytree.register_pytree_node",)),
    Deprecation("torch.utils._pytree.pytree_to_str", Kind.FUNCTION, D, "`torch.utils._pytree.treespec_dumps`", "2.2",
                rewrite=CallRewrite("torch.utils._pytree.treespec_dumps", params=("treespec",), args=("treespec",)),
                new=("torch.utils._pytree.treespec_dumps",)),
    Deprecation("torch.utils._pytree.str_to_pytree", Kind.FUNCTION, D, "`torch.utils._pytree.treespec_loads`", "2.2",
                rewrite=CallRewrite("torch.utils._pytree.treespec_loads", params=("json",), args=("json",)),
                new=("torch.utils._pytree.treespec_loads",)),
    Deprecation("torch.utils._pytree.LeafSpec", Kind.CLASS, D, "`TreeSpec.is_leaf()`",
                new=("torch.utils._pytree.TreeSpec.is_leaf",)),
    Deprecation("torch.utils.data.DataLoader", Kind.KEYWORD, D, "nothing (the current accelerator is used)",
                keyword="pin_memory_device"),
    Deprecation("torch.utils.data.graph.traverse", Kind.FUNCTION, D, "`torch.utils.data.graph.traverse_dps`",
                new=("torch.utils.data.graph.traverse_dps",)),
    Deprecation("torch.utils.data.graph_settings.apply_shuffle_seed", Kind.FUNCTION, D, "nothing (remove the call)",
                "1.12", "1.12"),
    # torch.distributed
    Deprecation(DIST + "_all_gather_base", Kind.FUNCTION, D,
                f"`{DIST}all_gather_single` (torch 2.13), `all_gather_into_tensor` before",
                rewrite=Rename(DIST + "all_gather_single", since="2.13"), new=(DIST + "all_gather_single",)),
    Deprecation(DIST + "_reduce_scatter_base", Kind.FUNCTION, D,
                f"`{DIST}reduce_scatter_single` (torch 2.13), `reduce_scatter_tensor` before",
                rewrite=Rename(DIST + "reduce_scatter_single", since="2.13"), new=(DIST + "reduce_scatter_single",)),
    # torch 2.15 took these deprecations back (``gather_into_tensor``'s too, below): code moving to
    # 2.15 or later is not told to leave them.
    Deprecation(DIST + "all_gather_into_tensor", Kind.FUNCTION, D, f"`{DIST}all_gather_single`", "2.13", "2.13",
                undeprecated="2.15", rewrite=Rename(DIST + "all_gather_single"), new=(DIST + "all_gather_single",)),
    Deprecation(DIST + "reduce_scatter_tensor", Kind.FUNCTION, D, f"`{DIST}reduce_scatter_single`", "2.13", "2.13",
                undeprecated="2.15", rewrite=Rename(DIST + "reduce_scatter_single"),
                new=(DIST + "reduce_scatter_single",)),
    Deprecation(DIST + "reduce_op", Kind.ATTRIBUTE, D, f"`{DIST}ReduceOp`", "1.0",
                rewrite=Rename(DIST + "ReduceOp"), new=(DIST + "ReduceOp",)),
    Deprecation(DIST + "all_gather_coalesced", Kind.FUNCTION, D, f"`{DIST}all_gather` per tensor"),
    Deprecation(DIST + "all_reduce_coalesced", Kind.FUNCTION, D, f"`{DIST}all_reduce` per tensor"),
    # torch.distributed.nn's collectives exist for their backward; torch 2.12 deprecates them
    # for the functional collectives, which torch gave a backward only in 2.11
    # (``torch.library.register_autograd("_c10d_functional::all_reduce", ...)``): on an older
    # floor the replacement would silently drop the gradient.
    *(Deprecation(f"{DIST}nn.{name}", Kind.FUNCTION, D, f"`{DIST}_functional_collectives.{new}`", "2.11", "2.12",
                  aliases=(f"{DIST}nn.functional.{name}",))
      for name, new in (("all_gather", "all_gather_single"), ("all_reduce", "all_reduce"),
                        ("all_to_all_single", "all_to_all_single"),
                        ("reduce_scatter", "reduce_scatter_single"))),
    # The functional ``broadcast`` has no backward in any torch up to 2.14: code that
    # differentiates through the collective has nothing to move to yet.
    Deprecation(f"{DIST}nn.broadcast", Kind.FUNCTION, D, f"`{DIST}_functional_collectives.broadcast`", None, "2.12",
                aliases=(f"{DIST}nn.functional.broadcast",), working_replacement=False,
                opt_in="the replacement torch names has no backward (torch 2.14 registers none for "
                       "`_c10d_functional::broadcast`), while `torch.distributed.nn.broadcast` exists for its "
                       "backward: moving drops the gradient"),
    Deprecation(DIST + "checkpoint.load_state_dict", Kind.FUNCTION, D, f"`{DIST}checkpoint.load`", "2.2",
                new=(DIST + "checkpoint.load",)),
    Deprecation(DIST + "checkpoint.save_state_dict", Kind.FUNCTION, D, f"`{DIST}checkpoint.save`", "2.2",
                new=(DIST + "checkpoint.save",)),
    Deprecation(DIST + "elastic.metrics.profile", Kind.FUNCTION, D, "`@torch.distributed.elastic.metrics.prof`"),
    Deprecation(DIST + "elastic.metrics.publish_metric", Kind.FUNCTION, D,
                "`torch.distributed.elastic.metrics.put_metric`"),
    *(Deprecation(f"{DIST}fsdp.FullyShardedDataParallel.{name}", Kind.FUNCTION, D,
                  f"`{DIST}checkpoint.state_dict.get_state_dict` / `set_state_dict`")
      for name in ("full_optim_state_dict", "sharded_optim_state_dict", "shard_full_optim_state_dict",
                   "flatten_sharded_optim_state_dict", "scatter_full_optim_state_dict", "set_state_dict_type")),
    # torch.jit: TorchScript is deprecated in favour of torch.compile
    *(Deprecation(f"torch.jit.{name}", Kind.FUNCTION, D, TO_COMPILE)
      for name in ("fork", "wait", "freeze", "interface", "optimize_for_inference", "set_fusion_strategy")),
    *(Deprecation(f"torch.jit.{name}", Kind.KEYWORD, D, "nothing (`optimize` has no effect)", keyword="optimize")
      for name in ("script", "trace", "trace_module")),
    Deprecation("torch.jit.ignore", Kind.KEYWORD, D, "nothing (ignored functions are always dropped)",
                keyword="drop_on_export"),
    *(Deprecation(f"torch.jit.quantized.{name}", Kind.CLASS, R, "`torch.ao.nn.quantized.dynamic` modules")
      for name in ("QuantizedGRU", "QuantizedLSTM", "QuantizedLinear", "QuantizedRNNBase", "QuantizedRNNCell",
                   "QuantizedRNNCellBase")),
    *(Deprecation(f"torch.jit.quantized.{name}", Kind.FUNCTION, R, f"`{QUANT}quantize_dynamic`")
      for name in ("quantize_linear_modules", "quantize_rnn_cell_modules", "quantize_rnn_modules")),
    # quantization: torch.ao.quantization is deprecated in favour of torchao. torchao is a
    # package of its own that supports recent torch releases only: the advice holds for a
    # project whose floor is at least the first torch known to deprecate these (the mined
    # table's 2.13), where torchao is there; below it, moving means dropping older torch.
    *(Deprecation(f"torch.quantization.{name}", Kind.FUNCTION, D, "`torchao` (torch.ao.quantization is deprecated)",
                  since=TORCHAO_FLOOR, aliases=(QUANT + name, f"{QUANT}quantize.{name}"))
      for name in ("convert", "prepare", "prepare_qat", "quantize", "quantize_dynamic", "quantize_qat")),
    *(Deprecation(f"{QUANT}quantize_fx.{name}", Kind.FUNCTION, D, "`torchao` (torch.ao.quantization is deprecated)",
                  since=TORCHAO_FLOOR, aliases=(f"torch.quantization.quantize_fx.{name}",))
      for name in ("prepare_fx", "prepare_qat_fx", "convert_fx")),
    Deprecation(QUANT + "quantize_fx.fuse_fx", Kind.KEYWORD, D, "`FuseCustomConfig` objects for `fuse_custom_config=`",
                keyword="fuse_custom_config"),
    Deprecation(QUANT + "get_default_qconfig_dict", Kind.FUNCTION, D, f"`{QUANT}get_default_qconfig_mapping`",
                new=(QUANT + "get_default_qconfig_mapping",)),
    Deprecation(QUANT + "get_default_qat_qconfig_dict", Kind.FUNCTION, D,
                f"`{QUANT}get_default_qat_qconfig_mapping`", new=(QUANT + "get_default_qat_qconfig_mapping",)),
    Deprecation("torch.quantization.QConfigDynamic", Kind.CLASS, D, "`torch.ao.quantization.QConfig`",
                new=(QUANT + "QConfig",), aliases=(QUANT + "QConfigDynamic",)),
    Deprecation("torch.quantization.PlaceholderObserver", Kind.KEYWORD, D, "`is_dynamic=`", keyword="compute_dtype"),
    # fx (experimental, but public names)
    Deprecation("torch.fx.experimental.symbolic_shapes.ShapeGuardPrinter", Kind.CLASS, D,
                "`torch.fx.experimental.symbolic_shapes.ShapeGuardPythonPrinter`",
                new=("torch.fx.experimental.symbolic_shapes.ShapeGuardPythonPrinter",)),
    Deprecation("torch.fx.experimental.symbolic_shapes.guard_size_oblivious", Kind.FUNCTION, D,
                "`guard_or_false`, `guard_or_true` or `statically_known_true` (explicit unbacked handling)"),
    Deprecation("torch.fx.experimental.unification.multipledispatch.halt_ordering", Kind.FUNCTION, D,
                "nothing (remove the call)"),
    Deprecation("torch.fx.experimental.unification.multipledispatch.restart_ordering", Kind.FUNCTION, D,
                "`reorder()` on each dispatcher"),
    Deprecation("torch.set_vital", Kind.FUNCTION, D, "nothing (remove the call)"),
    Deprecation("torch.nn.attention.flex_attention.flex_attention", Kind.KEYWORD, D,
                "`return_aux=AuxRequest(lse=True)`", keyword="return_lse", warns=False),
    Deprecation("torch.utils.data.datapipes.iter.RoutedDecoder", Kind.CLASS, D, "`torchdata` (datapipes moved there)",
                aliases=("torch.utils.data.datapipes.iter.routeddecoder.RoutedDecoderIterDataPipe",)),
    # onnx: the TorchScript exporter's functions, reached through its backward-compatibility module
    *(Deprecation(f"torch.onnx.utils.{name}", Kind.FUNCTION, D, f"nothing ({why})")
      for name, why in (("disable_apex_o2_state_dict_hook", "copy its logic where it is needed"),
                        ("exporter_context", "remove the call; set the model's mode yourself"),
                        ("setup_onnx_logging", "remove the call"),
                        ("unconvertible_ops", "remove the call; its answer was not definitive"))),
    # Values torch warns about (issue 35): only a literal (or a resolved constant) of them is reported.
    Deprecation("torch.onnx.export", Kind.KEYWORD_VALUE, D, "`dynamo=True` (the default: the `torch.export`-based "
                "exporter)", keyword="dynamo", values=(False,)),
    Deprecation("torch.onnx.utils.export", Kind.KEYWORD_VALUE, D, "`model.train()` before exporting (the option "
                "will be removed)", keyword="training", position=6,
                values=tuple(Ref(f"torch.{m}.TrainingMode.TRAINING") for m in ("onnx", "_C._onnx"))),
    Deprecation("torch.onnx.utils.export", Kind.KEYWORD_VALUE, D, "nothing (only the default "
                "`OperatorExportTypes.ONNX` will remain)", keyword="operator_export_type", position=9,
                unless=tuple(Ref(f"torch.{m}.OperatorExportTypes.ONNX") for m in ("onnx", "_C._onnx"))),
    Deprecation("torch.jit.ignore", Kind.KEYWORD_VALUE, D, "`@torch.jit.unused`", keyword="drop", position=0,
                values=(True,), rewrite=ReplaceCall("torch.jit.unused"), new=("torch.jit.unused",)),
    Deprecation("torch.multiprocessing.spawn", Kind.KEYWORD_VALUE, D, "nothing (`spawn` always uses 'spawn'; "
                "`torch.multiprocessing.start_processes` takes another start method)", keyword="start_method", position=5, unless=("spawn",),
                rewrite=DropArgument()),
    # return_complex=False is view_as_real of the complex result (ATen computes it so): the same values,
    # shape, dtype, strides and gradients (tests/test_deprecation_rewrites_run.py runs both forms)
    *(Deprecation(old, Kind.KEYWORD_VALUE, D, "`torch.view_as_real(...stft(..., return_complex=True))` (the same "
                  "real tensor)", "1.8", keyword="return_complex", position=position, values=(False,),
                  aliases=aliases, rewrite=WrapResult("torch.view_as_real", "True"), new=("torch.view_as_real",))
      for old, position, aliases in (("torch.stft", 9, ("torch.functional.stft",)), (f"{TENSOR}.stft", 8, ()))),
    # torch 2.13 warns whenever it is given (the mined item is the warning when both are)
    Deprecation("torch.nn.parallel.DistributedDataParallel", Kind.KEYWORD, D, "`forward_sync_buffers=` (unlike "
                "`broadcast_buffers=False`, it still syncs buffers at init)", deprecated="2.13",
                keyword="broadcast_buffers", aliases=("torch.nn.parallel.distributed.DistributedDataParallel",)),
    # torch's grad-mode context managers decorate functions; on a class they warn (and will fail)
    *(Deprecation(f"torch.{name}", Kind.CLASS_DECORATOR, D, "the decorator on the class's methods",
                  aliases=(f"torch.autograd.grad_mode.{name.rsplit('.', 1)[-1]}",) if "." not in name else ())
      for name in ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
                   "autograd.set_multithreading_enabled", "autograd.forward_ad.dual_level")),
    # torch calls __torch_function__ on the class; a TorchFunctionMode's is a plain method rightly, so
    # only classes with no base but a tensor class (a Tensor subclass, a duck type) are matched
    Deprecation(f"{TENSOR}.__torch_function__", Kind.PLAIN_METHOD, D, "`@classmethod` (torch calls it on the "
                "class; `self` becomes `cls`)", made_by=(TENSOR, "torch.nn.Parameter", "torch.nn.parameter.Parameter")),
    # Calls only: the name also reaches a module, or a plain reference (``isinstance``) does not warn.
    Deprecation("torch.autograd.variable", Kind.FUNCTION, R, "`torch.tensor(...)`", called=True),
    *(Deprecation(f"torch.{name}", Kind.CLASS, D, "`torch.UntypedStorage` (or a tensor: "
                  "`torch.empty(n, dtype=...)`)", called=True, aliases=(
                      (f"torch.cuda.{name}",) if name in _CUDA_STORAGES else ()) + (
                      ("torch.storage.TypedStorage",) if name == "TypedStorage" else ()))
      for name in _TYPED_STORAGES),
    *(Deprecation(f"torch.sparse.{name}", Kind.CLASS, D, "`torch.sparse_coo_tensor` (`indices, values, size, "
                  "dtype=...`)", called=True) for name in _SPARSE_TENSOR_TYPES),
    # onnx
    Deprecation("torch.onnx.select_model_mode_for_export", Kind.FUNCTION, D,
                "nothing (set the training mode before exporting)", warns=False,
                opt_in="marked for type checkers only (`@deprecated(category=None)`: torch does not warn); "
                       "nothing replaces it"),
)


# --- entries reviewed from torch 2.14.1 and 2.15.0 -------------------------------------
#
# Mined from the releases' wheels (never imported); the replacement of a
# deprecation newer than the installed torch may not exist there, so the
# fixes name it with the ``since`` of the release that added it: a fix is
# offered only where the project's floor (``--torch-version``) has it.
# ``deprecated`` is the release that started warning: code moving to an older
# one is not told (``--target-torch-version``).

PROFILER = "torch.autograd.profiler."

GREEN_CONTEXT = "torch.cuda.GreenContext"

ENTRIES_2_14: Tuple[Deprecation, ...] = (
    *(Deprecation(f"{GREEN_CONTEXT}.{name}", Kind.INSTANCE_METHOD, D, "`torch.cuda.stream(ctx.Stream())` (a stream of the green context)",
                  deprecated="2.14", aliases=(f"torch.cuda.green_contexts.GreenContext.{name}",),
                  made_by=(f"{GREEN_CONTEXT}.create", "torch.cuda.green_contexts.GreenContext.create"))
      for name in ("set_context", "pop_context")),
    Deprecation(PROFILER + "profile", Kind.KEYWORD, D,
                "`with_stack=True` (`with_modules` only covered TorchScript models)", deprecated="2.14",
                keyword="with_modules"),
    Deprecation(DIST + "distributed_c10d._set_pg_timeout", Kind.FUNCTION, D, f"`{DIST}set_timeout` (torch 2.14)",
                # the fix keeps the module, so a from-import of it is fixed in place too
                deprecated="2.14", rewrite=Rename(DIST + "distributed_c10d.set_timeout", since="2.14")),
    Deprecation(DIST + "gather_into_tensor", Kind.FUNCTION, D, f"`{DIST}gather_single` (torch 2.14)", deprecated="2.14",
                undeprecated="2.15", rewrite=Rename(DIST + "gather_single", since="2.14")),
    # Fields of the profiler's config that torch 2.14 ignores (profile() warns when one is set) and
    # 2.15's constructor no longer takes (a TypeError). Leaving the argument out is exact where the
    # project's floor ignores it too (2.14); on 2.13 the fields still configure CUDA metrics.
    *(Deprecation("torch._C._profiler._ExperimentalConfig", Kind.KEYWORD, D, "nothing (torch 2.14 ignores it; "
                  "2.15 rejects it)", deprecated="2.14", removed="2.15", keyword=field,
                  aliases=("torch.profiler._ExperimentalConfig",), rewrite=DropArgument(since="2.14"))
      for field in ("profiler_metrics", "profiler_measure_per_kernel")),
)

ENTRIES_2_15: Tuple[Deprecation, ...] = (
    Deprecation("torch._C._profiler._ExperimentalConfig", Kind.KEYWORD, D, "nothing (`adjust_profiler_step` is "
                "ignored)", deprecated="2.15", keyword="adjust_profiler_step",
                aliases=("torch.profiler._ExperimentalConfig",)),
    Deprecation(PROFILER + "EnforceUnique", Kind.CLASS, D, "a `set` of the keys seen (it is removed in torch 2.17)",
                deprecated="2.15"),
    Deprecation(PROFILER + "load_nvprof", Kind.FUNCTION, D, "`torch.profiler` traces (nvprof support is removed "
                "in torch 2.17)", deprecated="2.15"),
    Deprecation(PROFILER + "parse_nvprof_trace", Kind.FUNCTION, D, "`torch.profiler` traces (nvprof support is "
                "removed in torch 2.17)", deprecated="2.15"),
    Deprecation(DIST + "checkpoint._fsspec_filesystem", Kind.MODULE, D,
                f"`{DIST}checkpoint.fsspec_filesystem` (torch 2.15)", deprecated="2.15"),
    Deprecation("torch.cuda.graph_annotations.clear_kernel_annotations", Kind.FUNCTION, D,
                "nothing (annotations are dropped with their graph)", deprecated="2.15"),
    # A set of parameters: its order, so the optimizer state's, changes between runs (a TypeError
    # in add_param_group already). Matched on torch's own optimizers, called with a set there.
    Deprecation("torch.optim.Optimizer", Kind.SET_ARGUMENT, D, "a `list` of the parameters (a set's order "
                "changes between runs)", deprecated="2.15", keyword="params", position=0,
                aliases=tuple(f"torch.optim.{name}" for name in (
                    "Adafactor", "Adadelta", "Adagrad", "Adam", "Adamax", "AdamW", "ASGD", "LBFGS", "Muon", "NAdam",
                    "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam"))),
)


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
    # What torch._six held (torch 1.x: ``string_classes = (str, bytes)``, ``int_classes = int``).
    Deprecation("torch._six", Kind.MODULE, R, "the Python 3 standard library", members=(
        ("inf", "`math.inf`"), ("nan", "`math.nan`"), ("string_classes", "`(str, bytes)`"),
        ("int_classes", "`int`"), ("container_abcs", "`collections.abc`"), ("PY3", "`True`"),
        ("PY2", "`False`"), ("FileNotFoundError", "the builtin `FileNotFoundError`"), ("queue", "`queue`"),
        ("builtins", "`builtins`"), ("exec_", "`exec`"),
        ("with_metaclass", "`class C(Base, metaclass=Meta)`"),
    )),
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
                rewrite=CallRewrite(LINALG + "lu_solve", params=("input", "LU_data", "LU_pivots"),
                                    args=("LU_data", "LU_pivots", "input")),
                new=(LINALG + "lu_solve",)),
    # torch 2.14 turned these four into stubs that raise (TL108 for code moving to 2.14 or later)
    Deprecation("torch.cholesky", Kind.FUNCTION, D, "`torch.linalg.cholesky(A)` (`upper=` is a keyword there)",
                "1.8", "1.9", removed="2.14",
                rewrite=CallRewrite(LINALG + "cholesky", params=("input", "upper"), args=("input",),
                                    keywords=(("upper", "upper"),), passthrough=("out",), since="1.10"),
                new=(LINALG + "cholesky",)),
    Deprecation(f"{TENSOR}.cholesky", Kind.METHOD, D, "`torch.linalg.cholesky(A)`", "1.8", "1.9", removed="2.14",
                rewrite=CallRewrite(LINALG + "cholesky", params=("input", "upper"), args=("input",),
                                    keywords=(("upper", "upper"),), since="1.10"),
                new=(LINALG + "cholesky",)),
    Deprecation("torch.qr", Kind.FUNCTION, D, "`torch.linalg.qr(A, mode='reduced')` (`some=False` is "
                "`mode='complete'`)", "1.8", "1.9", removed="2.14",
                rewrite=CallRewrite(LINALG + "qr", params=("input", "some"), args=("input",),
                                    keywords=(("mode", "some"),), passthrough=("out",),
                                    literals={"some": {True: DROP, False: "'complete'"}}),
                new=(LINALG + "qr",)),
    Deprecation(f"{TENSOR}.qr", Kind.METHOD, D, "`torch.linalg.qr(A)`", "1.8", "1.9", removed="2.14",
                rewrite=CallRewrite(LINALG + "qr", params=("input", "some"), args=("input",),
                                    keywords=(("mode", "some"),), literals={"some": {True: DROP, False: "'complete'"}}),
                new=(LINALG + "qr",)),
    Deprecation("torch.triangular_solve", Kind.FUNCTION, D,
                "`torch.linalg.solve_triangular(A, B, upper=...)` (arguments reversed; returns only the solution)",
                "1.11", new=(LINALG + "solve_triangular",)),
    Deprecation("torch.ger", Kind.FUNCTION, D, "`torch.outer`", "1.7", rewrite=Rename("torch.outer"),
                new=("torch.outer",), warns=False),
    Deprecation(f"{TENSOR}.ger", Kind.METHOD, D, "`Tensor.outer`", "1.7", rewrite=Rename(f"{TENSOR}.outer"),
                new=(f"{TENSOR}.outer",), warns=False),
    # ``torch.autocast`` since 1.10; ``torch.amp`` (the fix's spelling, as torch's warning says) since 1.12
    Deprecation("torch.cuda.amp.autocast", Kind.CLASS, D,
                "`torch.amp.autocast('cuda', ...)` (`torch.autocast('cuda', ...)` before torch 1.12)", "1.10", "2.4",
                rewrite=CallRewrite("torch.amp.autocast", lead=("'cuda'",), passthrough=ALL, since="1.12"),
                new=("torch.amp.autocast", "torch.autocast")),
    # ``torch.autocast`` since 1.10; ``torch.amp`` (the fix's spelling, as torch's warning says) since 1.12
    Deprecation("torch.cpu.amp.autocast", Kind.CLASS, D,
                "`torch.amp.autocast('cpu', ...)` (`torch.autocast('cpu', ...)` before torch 1.12)", "1.10", "2.4",
                rewrite=CallRewrite("torch.amp.autocast", lead=("'cpu'",), passthrough=ALL, since="1.12"),
                new=("torch.amp.autocast", "torch.autocast")),
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
    # -- reviewed from the mined data (knowledge/data/torch_deprecations_mined.json) --
    *ENTRIES_2_13,
    *ENTRIES_2_14,
    *ENTRIES_2_15,
)


# --- from which torch each replacement exists, mined from the releases' sources ----

# A name spelled in backticks in a replacement's text: ``torch.nn.Upsample(...)``, ``Tensor.reshape``.
_SPELLED_NAME = re.compile(r"`((?:torch|Tensor)(?:\.\w+)+)")
_SPELLED_KEYWORD = re.compile(r"`(\w+)=`")


def replacement_names(entry: Deprecation) -> Tuple[str, ...]:
    """The names the replacement of ``entry`` needs, as ``scripts/mine_replacement_since.py``
    looks them up: ``new``, the names its text spells in backticks, and for a keyword entry
    the keyword it spells (``torch.nn.Hardtanh(min_val=)``). Names only a rewrite needs are
    the fix's (``fix_versions``), not the message's."""
    names = list(entry.new)
    for spelled in _SPELLED_NAME.findall(entry.replacement):
        names.append(TENSOR + spelled[len("Tensor"):] if spelled.startswith("Tensor.") else spelled)
    if entry.kind is Kind.KEYWORD:
        names += [f"{entry.old}({keyword}=)" for keyword in _SPELLED_KEYWORD.findall(entry.replacement)]
    fix_only = getattr(entry.rewrite, "new", None) if getattr(entry.rewrite, "since", None) else None
    return tuple(dict.fromkeys(n for n in names if n != fix_only))


def _with_mined_since(entry: Deprecation, mined: Mapping[str, Optional[str]]) -> Deprecation:
    """A deprecated entry whose replacement the sources show to be newer than its ``since``
    (or than any torch, without one) takes that release: the replacement exists once any of
    the names it offers does. A removed entry fails on new torch whatever the replacement."""
    names = replacement_names(entry)
    if entry.status is not Status.DEPRECATED or not names or any(name not in mined for name in names):
        return entry
    firsts = [mined[name] for name in names]
    if any(first is None for first in firsts):
        return entry  # one of them exists in the oldest release mined
    first = min(firsts, key=lambda v: parse_version(v))  # type: ignore[arg-type,return-value]
    if entry.since is not None and parse_version(entry.since) >= parse_version(first):  # type: ignore[arg-type]
        return entry
    return replace(entry, since=first)


_MINED = name_releases()
ENTRIES = tuple(_with_mined_since(entry, _MINED) for entry in ENTRIES)


def entries(status: Status) -> Tuple[Deprecation, ...]:
    return tuple(e for e in ENTRIES if e.status is status)


def reported_entries(status: Status, opt_in: bool) -> Tuple[Deprecation, ...]:
    """The entries one rule may report: by default (TL108, TL109) or opt-in (TL117). An entry
    deprecated now and removed in a later release is in both TL109's and TL108's; which one
    reports it depends on the file's target version (``Deprecation.status_for``)."""
    return tuple(e for e in ENTRIES if e.may_be(status) and bool(e.opt_in) is opt_in)


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
