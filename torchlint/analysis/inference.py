"""What kind of value is an expression: a tensor, a module, a data loader?

A small, conservative abstract interpreter over one file. It reads local
bindings (assignments, tuple unpacking, ``for`` targets, augmented
assignments) and the shapes of expressions (torch factories, nn
constructors, calls of modules, tensor methods, arithmetic). A name's value is
the agreement of *all* its bindings in scope: one binding of unknown kind makes
the name unknown. Rules flag only what this reports as known, so an unknown
value never produces a finding.

A container bound empty (``losses = {}``, ``self.history = []``) and filled
in place (``losses[k] = v``, ``self.history.append(v)``) holds what all those
stores agree on; a filling call inference does not follow (``update``,
``extend``, ``c[k] += v``) makes its elements unknown.

A value that is a Python number (or None) on some runs and a tensor on the
others (``total = 0`` before ``total += loss`` in a loop) is UNKNOWN with
``unless_number``: only where the code uses it as only a tensor can be used
(``total.data``, ``total.type_as(w)``: no number has those) does the tensor
count; arithmetic keeps the either-or, and ``None + x`` gives nothing.

A tensor's number of dimensions (``Value.ndim``; 0 is ``scalar``) comes from
the sizes the code spells (``torch.zeros(4, 5)``, ``x.view(-1)``,
``torch.LongTensor(5)``, a literal's nesting) and follows integer indexing
(``x[i, j]`` takes two), iteration (one), reductions along a dimension
(``x.sum(1)``, ``x.max(1)[0]``), sorting and elementwise work. A parameter
of a script's def takes what all the file's calls pass (``call_site_value``).
"""

from __future__ import annotations

import bisect
import builtins
import copy
import enum
import re
from dataclasses import dataclass, field, replace
from typing import (
    Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple, Union,
)

import libcst as cst
from libcst.helpers import get_full_name_for_node

from torchlint.analysis.checkpoint_paths import path_argument, path_key
from torchlint.analysis.names import Resolver
from torchlint.analysis.outline import differentiated_callees, parameters_from_calls
from torchlint.analysis.scopes import Assignment, ClassScope, ImportAssignment
from torchlint.analysis.specialise import (
    NOT_NONE, TENSOR0, UNKNOWN_ARGUMENT, Arguments, branch_runs, call_arguments, decided, given_constants)
from torchlint.knowledge import torch_api as api
from torchlint.knowledge.lr_schedules import lr_schedule_makers
from torchlint.knowledge.torchvision_api import CLASSIFIER_OUTPUTS_2D


class Kind(enum.Enum):
    UNKNOWN = "unknown"
    TENSOR = "tensor"
    MODULE = "module"
    LOADER = "loader"  # a torch DataLoader
    NUMBER = "number"  # a Python int/float literal or arithmetic on them
    OBJECT = "object"  # an instance of a project class that is not an nn.Module
    TUPLE = "tuple"  # a tuple of known length: ``items`` holds the value of each element
    MAPPING = "mapping"  # a dict whose values all have the value ``element``
    NONE = "none"  # Python's None
    # The command line's options: an ``argparse.ArgumentParser``, what it parses and
    # what that holds (strings, numbers, lists of them); never a tensor.
    OPTIONS = "options"
    FUNCTION = "function"  # a def of the file nested in another (``returns``: what calling it gives)
    # An optimizer's learning-rate schedule (``torch.optim.lr_scheduler.StepLR(...)``,
    # transformers' ``get_linear_schedule_with_warmup(...)``): its state is numbers only.
    SCHEDULE = "schedule"


@dataclass(frozen=True)
class Value:
    kind: Kind
    scalar: bool = False  # TENSOR: known to be 0-dim
    cuda: Optional[bool] = None  # known to live on a CUDA device (True) or not (False)
    module_class: Optional[str] = None  # MODULE: qualified class, when it is a torch.nn class
    reduces: bool = False  # MODULE: a loss module whose call returns a 0-dim tensor
    dtype: Optional[str] = None  # TENSOR (or unknown kind): torch dtype name when visible, e.g. "uint8"
    loss: bool = False  # TENSOR: a loss value (a loss function/module result, or math on one), not detached
    # MODULE/OBJECT: the project class it is an instance of, as "package.module.Class"
    # (``ProjectLink`` answers what its calls, methods and attributes give).
    instance_of: Optional[str] = None
    items: Tuple["Value", ...] = ()  # TUPLE: the elements; MODULE, FUNCTION: what it may be (``_callable_alternatives``)
    element: Optional["Value"] = None  # MAPPING: what every value is
    # UNKNOWN: a Python number on some runs, else this tensor (``total = 0`` and then
    # ``total += loss`` in a loop that may run no pass). Only where the code uses
    # the value as only a tensor is used (``used_as_tensor``) does it count.
    unless_number: Optional["Value"] = None
    ndim: Optional[int] = None  # TENSOR: how many dimensions, when the code shows it (0: ``scalar``)
    # UNKNOWN: what it is where it is a tensor, for code that proves one (``x.max()``: 0-dim).
    if_tensor: Optional["Value"] = None
    # MAPPING: the values of some constant string keys, where they differ from ``element``
    # (an optimizer's param group: ``group['params']`` lists tensors, ``group['lr']`` is not one).
    keys: Tuple[Tuple[str, "Value"], ...] = ()
    # FUNCTION: what calling it gives (a trainer method returning its inner ``train`` step).
    returns: Optional["Value"] = None
    # FUNCTION: the callables it names, a call then calls (``criterion = losses.mse`` or
    # ``loss_fn=F.cross_entropy`` passed on): project keys or torch names, joined like
    # ``instance_of`` where it may be one of several.
    calls: Optional[str] = None
    # TENSOR: exactly one element on every run (0-dim, or ``torch.zeros(1)``), and 0-dim
    # on some of them: a loss attribute first set to ``Variable(torch.zeros(1))`` and
    # then to a criterion's 0-dim value. ``.item()`` reads both; ``[0]`` fails on the second.
    one_element: bool = False
    partly_scalar: bool = False

    def __post_init__(self) -> None:
        # One fact, two spellings: 0-dim and ``scalar`` say the same.
        if self.scalar and self.ndim is None:
            object.__setattr__(self, "ndim", 0)
        elif self.ndim == 0 and not self.scalar:
            object.__setattr__(self, "scalar", True)
        if self.scalar:
            object.__setattr__(self, "one_element", True)
            object.__setattr__(self, "partly_scalar", False)  # 0-dim on every run says more
        if not self.one_element:
            object.__setattr__(self, "partly_scalar", False)

    @property
    def zero_dim_on_some_run(self) -> bool:
        """A 0-dim tensor on every run, or one element on every run and 0-dim on some."""
        return self.kind is Kind.TENSOR and (self.scalar or self.partly_scalar)


UNKNOWN = Value(Kind.UNKNOWN)


@dataclass(frozen=True)
class CallTarget:
    """A parameter of a project def, as its calls are asked about
    (``call_sites.py``): the def (a function's ``key``, or the method ``method``
    of the class ``key``), its own name, the parameter, where it sits among the
    arguments a call passes positionally (for a method called on an instance,
    after ``self``; None: keyword-only), and what its default gives (None: it
    has none)."""

    key: str
    method: Optional[str]
    name: str
    parameter: str
    position: Optional[int]
    default: Optional[Value]
    static: bool = False  # a ``@staticmethod``: a call through the class passes no instance first

TENSOR = Value(Kind.TENSOR)
# ``self.param_groups`` of an optimizer: dicts whose ``'params'`` list tensors.
PARAM_GROUPS = Value(Kind.TUPLE, element=Value(Kind.MAPPING, keys=(
    (api.PARAMS_KEY, Value(Kind.TUPLE, element=TENSOR)),)))
MODULE = Value(Kind.MODULE)
NUMBER = Value(Kind.NUMBER)
# ``x.size()``, ``x.shape``: a tuple of lengths, however many dimensions ``x`` has.
SIZES = Value(Kind.TUPLE, element=NUMBER)
NONE = Value(Kind.NONE)
OPTIONS = Value(Kind.OPTIONS)
# A binding whose value depends on itself (``x = x.cuda()``): no information.
_PENDING = Value(Kind.UNKNOWN, cuda=None, module_class="<pending>")
# Python 2's builtins: 2017 code checked here still names them (it runs, or ran, where they exist).
_PYTHON2_BUILTINS = frozenset({
    "xrange", "unicode", "basestring", "long", "raw_input", "reduce", "unichr", "file", "execfile", "cmp",
    "buffer", "apply", "intern", "coerce", "reload",
})
# What may bind a module's names without a statement spelling them.
_UNSEEN_BINDINGS = re.compile(r"\bglobals\s*\(|\blocals\s*\(|\bvars\s*\(|\bexec\s*\(|__builtins__")


def _star_imports(module: Optional[cst.Module]) -> Iterator[str]:
    """The modules ``from M import *`` names anywhere in ``module``, as spelled (".utils")."""
    pending: List[cst.CSTNode] = [module] if module is not None else []
    while pending:
        node = pending.pop()
        if isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar):
            dots = "." * len(node.relative)
            name = get_full_name_for_node(node.module) if node.module is not None else ""
            yield dots + (name or "")
        elif isinstance(node, (cst.Module, cst.BaseSuite, cst.BaseCompoundStatement, cst.SimpleStatementLine)):
            pending.extend(node.children)
# Reductions whose second parameter is the dimension (None: every dimension).
_DIM_SECOND = frozenset({"torch.sum", "torch.mean"})
# What a parameter holding a call's constant (``specialise.py``) reads as.
_CONSTANT_VALUES: Mapping[str, Value] = {"None": NONE, "0": NUMBER, "number": NUMBER, "True": UNKNOWN, "False": UNKNOWN,
                                          TENSOR0: Value(Kind.TENSOR, scalar=True)}


@dataclass(frozen=True)
class Binding:
    """Where a name gets its value: ``how`` is "assign", "for" or "aug".

    ``path`` indexes into tuple targets: in ``a, (b, c) = v``, c has (1, 1).
    """

    how: str
    value: cst.BaseExpression
    path: Tuple[int, ...] = ()


@dataclass(frozen=True)
class NestedStore:
    """A store into an element of a container: ``c[k]['value'] = v`` (``key``
    'value', the binding of ``v``). ``key`` None: not a constant string (or
    deeper down, ``c[a][b][d] = v``); ``binding`` None: what goes in is not
    followed (``c[k]['n'] += v``, ``c[k].append(v)``)."""

    key: Optional[str]
    binding: Optional[Binding]


def meet(values: Iterable[Value]) -> Value:
    """The value all of ``values`` agree on; self-dependent ones are neutral."""
    result: Optional[Value] = None
    for value in values:
        if value is _PENDING:
            continue
        if result is None:
            result = value
            continue
        if value.kind is not result.kind:
            tensor = _unless_number(result, value)
            if tensor is not None:
                # The values still to come meet it too: the answer must not depend on
                # the order of the bindings (a set's, which changes with unrelated code).
                result = Value(Kind.UNKNOWN, unless_number=tensor)
                continue
            either = _if_tensor(result, value)
            if either is None and result.kind in _CALLABLE and value.kind in _CALLABLE:
                # ``criterion = losses.dice`` on one branch, ``nn.BCELoss()`` on the other.
                alternatives = _callable_alternatives(result, value)
                either = Value(Kind.FUNCTION, items=alternatives) if alternatives else None
            if either is None:
                return UNKNOWN
            result = either
            continue
        if value.kind is Kind.TUPLE:
            if len(value.items) != len(result.items):
                return UNKNOWN
            element = meet((result.element, value.element)) if result.element and value.element else None
            result = Value(Kind.TUPLE, items=tuple(meet(pair) for pair in zip(result.items, value.items)),
                           element=element)
            continue
        if value.kind is Kind.MAPPING:
            other = dict(value.keys)
            keys = tuple((key, meet((known, other[key]))) for key, known in result.keys if key in other)
            result = Value(Kind.MAPPING, element=meet((result.element or UNKNOWN, value.element or UNKNOWN)),
                           keys=keys)
            continue
        result = Value(
            result.kind,
            scalar=result.scalar and value.scalar,
            cuda=result.cuda if result.cuda == value.cuda else None,
            module_class=result.module_class if result.module_class == value.module_class else None,
            reduces=result.reduces and value.reduces,
            dtype=result.dtype if result.dtype == value.dtype else None,
            loss=result.loss and value.loss,
            instance_of=_either(result.instance_of, value.instance_of),
            unless_number=(meet((result.unless_number, value.unless_number))
                           if result.unless_number is not None and value.unless_number is not None else None),
            ndim=result.ndim if result.ndim == value.ndim else None,
            if_tensor=(meet((result.if_tensor, value.if_tensor))
                       if result.if_tensor is not None and value.if_tensor is not None else None),
            returns=(meet((result.returns, value.returns))
                     if result.returns is not None and value.returns is not None else None),
            calls=_either(result.calls, value.calls),
            one_element=result.one_element and value.one_element,
            partly_scalar=result.scalar or result.partly_scalar or value.scalar or value.partly_scalar,
            items=_callable_alternatives(result, value),
        )
    return result if result is not None else UNKNOWN


_CALLABLE = frozenset({Kind.MODULE, Kind.FUNCTION})
_ALTERNATIVES = 4  # more, and a call of the value is not followed


def _callable_alternatives(one: Value, other: Value) -> Tuple[Value, ...]:
    """The modules and functions a name may hold (``loss = nn.MSELoss()`` on one branch,
    the project's ``GridLoss()`` or ``losses.dice`` on the other), each whole, so that a
    call of it gives what every one of them gives; () when they are one, too many, or
    functions alone (``calls`` joins those)."""
    if one.kind not in _CALLABLE or (one.kind is other.kind is Kind.FUNCTION and not one.items and not other.items):
        return ()
    alternatives = tuple(dict.fromkeys((one.items or (one,)) + (other.items or (other,))))
    return alternatives if 1 < len(alternatives) <= _ALTERNATIVES else ()


def _unless_number(one: Value, other: Value) -> Optional[Value]:
    """The tensor two values of different kinds agree on where neither is a
    Python number or None (one is, the other a tensor or such an either-or:
    ``total = None``, then ``total = loss if total is None else total + loss``)."""
    sides = []
    for value in (one, other):
        if value.kind is Kind.TENSOR:
            sides.append(value)
        elif value.kind is Kind.UNKNOWN and value.unless_number is not None:
            sides.append(value.unless_number)
        elif value.kind not in (Kind.NUMBER, Kind.NONE):
            return None
    tensor = meet(sides) if sides else None
    return tensor if tensor is not None and tensor.kind is Kind.TENSOR else None


def _if_tensor(one: Value, other: Value) -> Optional[Value]:
    """Where one of two values of different kinds is a full reduction of something unknown
    (``if_tensor``) and the other a Python number, None, or a tensor: unknown, and where a
    tensor, what the tensors agree on (``loss = 0``, then ``loss += x.abs().mean()``)."""
    tensors = []
    for value in (one, other):
        if value.kind is Kind.UNKNOWN and value.if_tensor is not None:
            tensors.append(value.if_tensor)
        elif value.kind is Kind.TENSOR:
            tensors.append(value)
        elif value.kind not in (Kind.NUMBER, Kind.NONE):
            return None
    if not any(v.kind is Kind.UNKNOWN and v.if_tensor is not None for v in (one, other)):
        return None
    tensor = meet(tensors)
    return Value(Kind.UNKNOWN, if_tensor=tensor) if tensor.kind is Kind.TENSOR else None


# The methods of Python's int and float (a number-or-tensor calling one of these may be the number).
_NUMBER_METHODS = frozenset(name for kind in (int, float) for name in dir(kind) if not name.startswith("__"))

# Calls that make an empty dict.
_EMPTY_MAPPINGS = frozenset({"builtins.dict", "collections.OrderedDict"})
# Kinds of values that are never None (and whose truth may be unknown).
_NEVER_NONE = frozenset({Kind.TENSOR, Kind.MODULE, Kind.OBJECT, Kind.LOADER, Kind.SCHEDULE})
# Constructors taking sizes (``torch.FloatTensor(2, 3)``) or data (``torch.Tensor([0])``), and those taking data only.
_LEGACY_CONSTRUCTORS = frozenset(name.rpartition(".")[2] for name in api.ARRAY_TO_TENSOR if name.endswith("Tensor"))
_DATA_CONSTRUCTORS = _LEGACY_CONSTRUCTORS | {"tensor", "as_tensor"}
# Tensor methods whose result has as many elements as the receiver, whatever their
# arguments: conversions, copies and elementwise functions of the tensor alone.
_ELEMENT_KEEPING_METHODS = api.NDIM_KEEPING_METHODS - {
    "add", "sub", "mul", "div", "pow", "eq", "ne", "lt", "le", "gt", "ge", "narrow", "index_select", "gather"}

class _MethodLayout:
    """A method's top-level statements, as ``Inference._assigned_earlier_in_method`` reads
    them: which small statement sits in which of them, the ``self.x = e`` each plain
    statement makes, and the attributes of ``self`` each may bind (None: it calls a method
    of ``self``, which may bind any)."""

    def __init__(self) -> None:
        self.statement_index: Dict[int, int] = {}
        self.plain: Dict[Tuple[int, str], cst.BaseExpression] = {}
        self.binds: List[Optional[Set[str]]] = []

    @classmethod
    def of(cls, function: cst.FunctionDef, self_name: str) -> "_MethodLayout":
        layout = cls()
        body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
        for index, statement in enumerate(body):
            finder = _SelfBindings(self_name)
            statement.visit(finder)
            for small in finder.smalls:
                layout.statement_index[id(small)] = index
            layout.binds.append(None if finder.calls_self else finder.bound)
            if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
                only = statement.body[0]
                if isinstance(only, cst.Assign) and len(only.targets) == 1:
                    target = only.targets[0].target
                    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                            and target.value.value == self_name:
                        layout.plain[(index, target.attr.value)] = only.value
        return layout


class _SelfBindings(cst.CSTVisitor):
    """The small statements of a statement, the attributes of ``self`` it binds, and
    whether it calls a method of ``self``."""

    def __init__(self, self_name: str) -> None:
        self.self_name = self_name
        self.smalls: List[cst.CSTNode] = []
        self.bound: Set[str] = set()
        self.calls_self = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.BaseSmallStatement):
            self.smalls.append(node)
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for target in targets:
                for part in _target_parts(target):
                    if isinstance(part, cst.Attribute) and isinstance(part.value, cst.Name) \
                            and part.value.value == self.self_name:
                        self.bound.add(part.attr.value)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and isinstance(node.func.value, cst.Name) and node.func.value.value == self.self_name:
            self.calls_self = True
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        return True


def _target_parts(target: cst.BaseExpression) -> List[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [part for element in target.elements for part in _target_parts(element.value)]
    return [target]


def _value_token(value: Value) -> Optional[str]:
    """The token a specialisation gives a parameter holding ``value``: None's, a 0-dim
    tensor's; None for anything else."""
    if value.kind is Kind.NONE:
        return "None"
    if value.kind is Kind.TENSOR and value.scalar:
        return TENSOR0
    return None


# Index tensors that select by mask rather than by position.
_MASK_DTYPES = frozenset({"bool", "uint8"})


def _matmul_ndim(a: Optional[int], b: Optional[int]) -> Optional[int]:
    """Dimensions of ``torch.matmul`` of operands with ``a`` and ``b`` dimensions: a 1-D
    operand loses its dimension in the product, batch dimensions broadcast."""
    if a is None or b is None or a == 0 or b == 0:
        return None  # a 0-dim operand raises
    if a == 1 and b == 1:
        return 0
    if a == 1 or b == 1:
        return max(a, b) - 1
    return max(a, b)


# What a value of these kinds can never be, or hold: a tensor.
_HOLDS_NO_TENSOR = frozenset({Kind.UNKNOWN, Kind.MODULE, Kind.OBJECT, Kind.NUMBER, Kind.NONE, Kind.OPTIONS,
                              Kind.FUNCTION, Kind.SCHEDULE})


class SavedInFolder(NamedTuple):
    """The saves of the modules beside a checked one to a path ending in one file name."""

    kind: str  # what they write: ``saved_files.WEIGHTS``, ``PICKLED`` or ``UNKNOWN``
    what: str  # for a message: "an instance of the class `Vocab`"
    code: str  # the code of one such save
    module: str  # the file name of its module
    cpu_only: bool  # every such save holds CPU values only


class ProjectLink:
    """What inference may ask about the definitions of the user's project
    (``project.py`` answers from every module; this default knows nothing).

    A project definition is named by an opaque key (``absolute``, ``local``).
    """

    def absolute(self, qualified: str) -> Optional[str]:
        """A name imported in the checked file (maybe relative: ".loss.MyLoss")
        as the key of a project definition; None when it is not one."""
        return None

    def local(self, name: str) -> Optional[str]:
        """The key of the checked file's own top-level definition ``name``."""
        return None

    def call_value(self, qualified: str, arguments: Optional[Arguments] = None) -> Optional[Value]:
        """What calling the project function or class ``qualified`` gives (with
        ``arguments``, on a call passing them: ``specialise.py``)."""
        return None

    def opaque(self, qualified: str) -> bool:
        """Is the imported name ``qualified`` from a package nothing here can read or
        knows: not torch's, not the project's (imported, not held), not one of the
        loss libraries ``torch_api.ZERO_DIM_LOSS_PACKAGES`` knows? False when unknown."""
        return False

    def member_value(self, owner: str, member: str, called: bool, numbers: bool = True,
                     arguments: Optional[Arguments] = None) -> Value:
        """An instance of class ``owner``: its attribute ``member``, or what
        calling its method ``member`` returns (``called``, with ``arguments`` when
        the call's constants are asked about); "__call__" is the instance called
        (``forward`` for an nn.Module). Without ``numbers``, the attribute's
        assignments of Python numbers and None are left out."""
        return UNKNOWN

    def star_exports(self, spelled: str) -> Optional[Dict[str, str]]:
        """What ``from spelled import *`` binds: name -> qualified name; None when unknown."""
        return None

    def member_parameter(self, owner: str, member: str) -> Optional[Tuple[int, str]]:
        """The parameter of ``owner.__init__`` (position after ``self``, name) that is
        all the class ever assigns to its attribute ``member``; None otherwise."""
        return None

    def forwarded(self, qualified: str) -> Mapping[str, Tuple[str, str]]:
        """The parameters the project function ``qualified`` passes on to a
        torch call as a keyword: parameter -> (torch callee, keyword)."""
        return {}

    def member_forwarded(self, owner: str, method: str) -> Mapping[str, Tuple[str, str]]:
        """``forwarded`` for the method ``method`` of the project class ``owner``."""
        return {}

    def autograd_function(self, key: str) -> bool:
        """Is the project class ``key`` a torch.autograd.Function (directly or through its bases)?"""
        return False

    def function_classes(self, spelled: str) -> FrozenSet[str]:
        """The autograd Function classes of the project module an import spelled
        ``spelled`` reaches (by their names there); empty when unknown."""
        return frozenset()

    def call_may_give_tensor(self, spelled: str) -> bool:
        """May calling the name an import spells (``.utils.make``) give a tensor,
        or a tuple or dict that may hold one, as inference sees the call? Not
        when the name is no project definition (inference then knows nothing
        of the call, torch's aside), nor when calling it gives a module, an
        object, a number or nothing known."""
        key = self.absolute(spelled)
        if key is None:
            return False
        value = self.call_value(key)
        return value is None or value.kind not in _HOLDS_NO_TENSOR

    def returns_integer_valued(self, qualified: str, given_whole_arguments: bool = True) -> bool:
        """Given integer-valued arguments (or, without ``given_whole_arguments``, whatever
        the arguments), does the project function ``qualified`` return integer-valued
        results only (``integral.py``)?"""
        return False

    def parameter_value(self, qualified: str, parameter: str) -> Value:
        """What every call of the project function ``qualified`` in its own module
        agrees its parameter ``parameter`` is (the caller has made sure those
        calls are all there are)."""
        return UNKNOWN

    def result_may_be_differentiated(self, qualified: str) -> bool:
        """May a caller of the project function ``qualified`` (all its calls are in its
        own module) differentiate what it returns? True when unknown."""
        return True

    def returned_parameters(self, qualified: str, arguments: Optional[Arguments] = None,
                            ) -> Tuple[Optional[Tuple[int, str]], ...]:
        """``Inference.returned_parameters`` of the project function ``qualified`` (for a
        call passing ``arguments``)."""
        return ()

    def is_configuration(self, qualified: str) -> bool:
        """Is the imported name ``qualified`` a project module's global holding its run's
        configuration (``configs.py``): options, never a tensor?"""
        return False

    def defines_method(self, owner: str, method: str) -> bool:
        """Does the project class ``owner`` define ``method`` in its own body (an override)?"""
        return False

    def static_method(self, owner: str, method: str) -> bool:
        """Is ``method`` a ``@staticmethod`` the project class ``owner`` defines in its body?"""
        return False

    def callable_key(self, qualified: str) -> Optional[str]:
        """The key of the project def or class that ``qualified`` names, where one top-level
        ``def``/``class`` of its module alone binds it; None for anything else."""
        return None

    def parameter_from_project(self, target: "CallTarget") -> Value:
        """What every call of a def of a helper module in a folder of scripts
        (``utils.py`` beside ``train.py``), in that module and its neighbours,
        agrees it passes for one parameter (``call_sites.py``)."""
        return UNKNOWN

    def saves_in_folder(self, file_name: str) -> Optional["SavedInFolder"]:
        """What the other modules of this one's folder ``torch.save`` to a path
        ending in ``file_name``. None: no module there saves to it, or the folder
        cannot be read."""
        return None

    def shipped_checkpoint_on_cpu(self, relative: str) -> bool:
        """Is ``relative`` (a path from this module's folder) a checkpoint file shipped with
        the project whose tensors were all saved from the CPU (``checkpoint_files.py``)?"""
        return False

    def used_only_by_gpu_programs(self) -> bool:
        """Is every module that may import this one (a helper, no program itself, with no
        mode without CUDA) a program that runs on a GPU only (``device_gates.py``)? Then
        its code never runs on a machine without CUDA."""
        return False

    def patched_torch_names(self) -> FrozenSet[str]:
        """The torch names (``torch.load``) a module of the project rebinds before the
        checked file's code runs (``torch.load = project_load``): there they call the
        project's replacement."""
        return frozenset()


NO_PROJECT = ProjectLink()


@dataclass
class FileFacts:
    """What the traversal collects for inference besides plain bindings."""

    # A function -> the values its ``return`` statements give (None: a bare ``return``).
    returns: Dict[cst.FunctionDef, List[Optional[cst.BaseExpression]]] = field(default_factory=dict)
    # ... and the block each of those ``return`` statements is in (in the same order).
    return_blocks: Dict[cst.FunctionDef, List[Optional["Block"]]] = field(default_factory=dict)
    generators: Set[cst.FunctionDef] = field(default_factory=set)  # functions that ``yield``
    # The body (or ``else`` body) of an ``if`` -> the ``if`` and which way its test went there.
    branches: Dict[cst.CSTNode, Tuple[cst.If, bool]] = field(default_factory=dict)
    # An ``elif`` -> the ``if`` whose ``else`` it is.
    elif_of: Dict[cst.If, cst.If] = field(default_factory=dict)
    # A function -> the names its calls take as arguments as they are (``helper(x, average)``).
    passed_names: Dict[cst.FunctionDef, List[cst.Name]] = field(default_factory=dict)
    # A function -> the ``if`` statements in its body (``elif`` included).
    function_tests: Dict[cst.FunctionDef, List[cst.If]] = field(default_factory=dict)
    # ``self.attr = value`` (and tuple targets): the ``self`` read, the attribute, the binding.
    attribute_bindings: List[Tuple[cst.Name, str, Binding]] = field(default_factory=list)
    # ``name.backward()`` with no gradient given: only a one-element tensor accepts that.
    backward_receivers: List[cst.Name] = field(default_factory=list)
    # ``name.size(0)`` (a literal dimension): only a tensor has that method.
    sized_receivers: List[cst.Name] = field(default_factory=list)
    # ``range(name)`` (or Python 2's ``xrange``): the callee and the name it counts to.
    counted_names: List[Tuple[cst.Name, cst.Name]] = field(default_factory=list)
    # A name read in a ``while`` test -> the loop: its body's bindings come round to it.
    while_tests: Dict[cst.Name, cst.While] = field(default_factory=dict)
    # A read of a name inside ``if isinstance(name, T):`` / ``if torch.is_tensor(name):`` (or after
    # ``if not ...: return``) -> the ``(callee, type)`` of that test, checked when asked.
    guarded: Dict[cst.Name, Tuple[cst.BaseExpression, Optional[cst.BaseExpression]]] = field(default_factory=dict)
    # Every name (read or bound) -> the block it is in, linked to the enclosing blocks.
    block_of: Dict[cst.Name, Optional["Block"]] = field(default_factory=dict)
    # Every name -> the small statement it is in (``x = x.data[0]`` binds after it reads).
    statement_of: Dict[cst.Name, cst.CSTNode] = field(default_factory=dict)
    # What goes into a container a name or ``self.attr`` holds: ``c[k] = v`` and ``c.append(v)``
    # give ``v``; ``c.update(...)`` and other filling calls give None (anything may go in).
    # The container is the ``cst.Name`` itself, or ``(self_name, attr)`` for an attribute.
    item_stores: List[Tuple[object, Union[None, Binding, "NestedStore"]]] = field(default_factory=list)
    # A ``NestedStore`` in place of the binding: a store into one of the container's elements.
    # Every call of the file (where a project function's parameters get their values).
    calls: List[cst.Call] = field(default_factory=list)
    # Every parameter -> the def it belongs to.
    param_function: Dict[cst.Param, cst.FunctionDef] = field(default_factory=dict)
    # Every call inside a small statement -> that statement.
    call_statement: Dict[cst.Call, cst.CSTNode] = field(default_factory=dict)
    # The module walked (the body of its global scope, which libcst's scope does not hold).
    module: Optional[cst.Module] = None
    # The bodies of ``try`` and ``with`` statements: an exception may leave them at any statement
    # and the code after them (or a handler) go on.
    guarded_bodies: Set[cst.CSTNode] = field(default_factory=set)


@dataclass(frozen=True)
class Block:
    """An indented block (or a one-line suite, or the module's top level), linked to the block around it."""

    node: cst.CSTNode
    parent: Optional["Block"]
    loop: bool = False  # the body of a ``for`` or ``while``: run again after its end

    def encloses(self, other: Optional["Block"]) -> bool:
        while other is not None:
            if other is self:
                return True
            other = other.parent
        return False


# What ``_dominating_end`` finds: a name's bindings in order, how many come before
# the read (the last dominating it), and those of the read's own statement.
_Dominated = Tuple[Sequence[object], int, Sequence[object]]


class _Chain:
    """The bindings a set of reads may see, sorted and indexed once.

    Each read used to sort its bindings, find itself among their reads and
    walk every later binding: n rebindings of a name (``loss = loss + x``,
    n times) cost n² then. ``warmed``: how many of ``reads`` (in order) have
    been evaluated first, so that a long chain is evaluated from its start
    instead of recursing once per link."""

    __slots__ = ("assignments", "ordered", "indices", "by_statement", "one_scope", "reads", "read_indices", "warmed")

    def __init__(self, assignments: FrozenSet, statement_of: Mapping[cst.Name, cst.CSTNode]) -> None:
        self.assignments = assignments  # kept: the cache is keyed by its id
        self.ordered = sorted(assignments, key=lambda a: a.index)
        self.indices = [a.index for a in self.ordered]
        self.by_statement: Dict[object, List[object]] = {}
        for assignment in self.ordered:
            self.by_statement.setdefault(statement_of.get(assignment.node), []).append(assignment)
        self.one_scope = len({a.scope for a in self.ordered}) == 1
        self.reads: Optional[List[cst.Name]] = None
        self.read_indices: List[int] = []
        self.warmed = 0


# Above this many earlier reads of a chain not yet evaluated, they are
# evaluated first, in order (``Inference._warm``): the recursion then stays
# shallow. Below it, the order of evaluation is the one it always was.
_WARM_AFTER = 32

# A value resting on a chain of other values deeper than this (``a1 = a0 + 1``,
# ``a2 = a1 + 1``, ... or ``b = a.t`` links through different names) is
# evaluated from the chain's far end first (``Inference._prewarm``), so that
# evaluating it recurses a few levels, not once per link.
_DEEP_CHAIN = 48


class Inference:
    def __init__(
        self,
        resolver: Resolver,
        bindings: Mapping[cst.Name, Binding],
        self_params: Mapping[cst.Param, cst.ClassDef],
        facts: Optional[FileFacts] = None,
        project: ProjectLink = NO_PROJECT,
    ) -> None:
        self._resolver = resolver
        self._bindings = bindings
        self._self_params = self_params
        self._layouts: Dict[cst.FunctionDef, _MethodLayout] = {}
        self._facts = facts if facts is not None else FileFacts()
        self.project = project
        self._cache: Dict[cst.CSTNode, Value] = {}
        self._binds_unseen: Optional[bool] = None  # ``_may_bind_unseen``, worked out once
        self._module_classes: Dict[cst.ClassDef, bool] = {}
        self._function_classes: Dict[cst.ClassDef, bool] = {}
        self._optimizer_classes: Dict[cst.ClassDef, bool] = {}
        self._returns: Dict[cst.FunctionDef, Value] = {}
        self._attributes: Optional[Dict[cst.ClassDef, Dict[str, List[Binding]]]] = None
        self._backward: Optional[Set[Tuple[object, str]]] = None
        self._differentiated_by_name: Dict[Tuple[object, str], FrozenSet[object]] = {}
        self._sized_names: Optional[Set[Tuple[object, str]]] = None
        self._counted_names: Optional[Set[object]] = None
        self._stores: Optional[Dict[object, List[Optional[Binding]]]] = None
        self._chains: Dict[int, Optional[_Chain]] = {}
        self._moves: Optional[Dict[Tuple[object, str], List[Tuple[int, Optional[bool]]]]] = None
        self._differentiated: Optional[Set[object]] = None
        # What other analyses work out once per file over this inference (``call_sites.py``'s index).
        self.memo: Dict[str, object] = {}
        self._depth = 0  # value() calls in progress
        # The expressions value() is working out, outermost first (``_evaluating``: each
        # one's place there), and for each, the lowest place whose value it was given
        # as still pending (``_lows``) and the values it holds only provisionally
        # (``_provisional``): see ``value``.
        self._evaluating: Dict[cst.CSTNode, int] = {}
        self._lows: List[int] = []
        self._provisional: List[List[cst.CSTNode]] = []
        # What calls with constant arguments return (``specialise.py``): (def, constants) -> value.
        self._specialised: Dict[Tuple[cst.FunctionDef, FrozenSet[Tuple[cst.Param, str]]], Value] = {}
        # In an inference specialised to a call's constants (``_specialised_return``): the
        # inference it was copied from (which answers for every node outside ``_inside``),
        # the def's parameters that hold constants, and the def's nodes.
        self._origin: Optional["Inference"] = None
        self._given: Mapping[cst.Param, str] = {}
        self._inside: FrozenSet[cst.CSTNode] = frozenset()
        # How deep the not yet evaluated values below each expression go (``_prewarm``).
        self._heights: Dict[cst.CSTNode, int] = {}

    @property
    def resolver(self) -> Resolver:
        return self._resolver

    @property
    def file_calls(self) -> List[cst.Call]:
        """Every call of the file, in order."""
        return self._facts.calls

    # -- the questions rules ask ------------------------------------------

    def value(self, expr: cst.BaseExpression) -> Value:
        if self._origin is not None and expr not in self._inside:
            return self._origin.value(expr)  # no constant reaches there: the plain answer
        cached = self._cache.get(expr)
        if cached is None:
            if self._depth == 0:
                self._prewarm(expr)
                cached = self._cache.get(expr)
                if cached is not None:
                    return cached if cached is not _PENDING else self._pending(expr)
            if isinstance(expr, cst.Name):
                self._warm(expr)
                cached = self._cache.get(expr)
                if cached is not None:
                    return cached if cached is not _PENDING else self._pending(expr)
            self._cache[expr] = _PENDING  # breaks cycles through self-references
            return self._evaluated(expr)
        return cached if cached is not _PENDING else self._pending(expr)

    def _pending(self, expr: cst.BaseExpression) -> Value:
        """``expr`` is still being worked out: the values being worked out above its own
        evaluation rest on it, so they are provisional (``_evaluated``)."""
        place = self._evaluating.get(expr)
        if place is not None and self._lows and place < self._lows[-1]:
            self._lows[-1] = place
        return _PENDING

    def _evaluated(self, expr: cst.BaseExpression) -> Value:
        """Work out ``expr``'s value and cache it. A value worked out while one it rests
        on was still pending (a cycle: ``d = 0`` then ``d = f(d)`` in a loop) took that
        one as no information. It stays cached only until the pending evaluation ends:
        asked again after that, it is worked out afresh, with what the other one came
        to. Kept for good, it would make the answer depend on which question came first
        (``d`` a number where it was asked first from inside its own binding)."""
        place = len(self._lows)
        self._evaluating[expr] = place
        self._lows.append(place)
        self._provisional.append([])
        self._depth += 1
        try:
            value = self._evaluate(expr)
        finally:
            self._depth -= 1
            low = self._lows.pop()
            provisional = self._provisional.pop()
            del self._evaluating[expr]
        self._cache[expr] = value
        if low < place:
            # Rests on an evaluation still in progress: provisional with respect to it.
            self._lows[-1] = min(self._lows[-1], low)
            self._provisional[low].append(expr)
            self._provisional[low].extend(provisional)
        else:
            for stale in provisional:
                self._cache.pop(stale, None)
        return value

    def is_tensor(self, expr: cst.BaseExpression) -> bool:
        return self.value(expr).kind is Kind.TENSOR

    def is_scalar_tensor(self, expr: cst.BaseExpression) -> bool:
        value = self.value(expr)
        return value.kind is Kind.TENSOR and value.scalar

    def used_as_tensor(self, expr: cst.BaseExpression) -> Value:
        """The value of ``expr`` where the code uses it as only a tensor can be
        used (``expr.data``): bindings to Python numbers cannot be what reaches
        there (``total = 0`` before ``total += loss`` in a loop), so they are
        left out of the agreement."""
        value = self.value(expr)
        if value.kind is not Kind.UNKNOWN or value.if_tensor is not None:
            return value  # known, or a tensor wherever it is one: what the read's binding gave
        if value.unless_number is not None:
            return value.unless_number
        if isinstance(expr, cst.Name):
            values = [self._accumulated_value(a, expr.value) for a in self._resolver.assignments(expr)]
            known = [v for v in values if v.kind is not Kind.NUMBER]
            if known and len(known) < len(values):
                return meet(known)
        elif isinstance(expr, cst.Attribute):
            owners = self._attribute_owners(expr.value, expr.attr.value)
            if owners is not None:
                return self._member(owners, expr.attr.value, called=False, numbers=False)
        return value

    def read_from_file(self, expr: cst.BaseExpression) -> bool:
        """Does ``expr`` hold what a checkpoint load returned (``torch.load``,
        ``load_state_dict_from_url``, safetensors' ``load_file``) on some run,
        or a part of it (a subscript, ``.get()``, an unfiltered comprehension
        over its ``.items()`` that renames keys)? A filtered comprehension is
        a subset chosen on purpose; a call of anything else, unknown: no."""
        return bool(self.checkpoint_loads(expr))

    def checkpoint_loads(self, expr: cst.BaseExpression, depth: int = 0) -> List[cst.Call]:
        """The checkpoint loads whose result (or a part of it) ``expr`` may hold,
        as ``read_from_file`` follows them."""
        if depth > 12:
            return []
        if isinstance(expr, cst.Call):
            if self._resolver.resolve(expr.func) in api.CHECKPOINT_LOADERS:
                return [expr]
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("get", "pop", "copy"):
                return self.checkpoint_loads(func.value, depth + 1)
            return []
        if isinstance(expr, cst.Subscript):
            return self.checkpoint_loads(expr.value, depth + 1)
        if isinstance(expr, cst.IfExp):
            return self.checkpoint_loads(expr.body, depth + 1) + self.checkpoint_loads(expr.orelse, depth + 1)
        if isinstance(expr, cst.DictComp) and not expr.for_in.ifs and expr.for_in.inner_for_in is None:
            items = expr.for_in.iter
            if isinstance(items, cst.Call) and isinstance(items.func, cst.Attribute) and items.func.attr.value == "items":
                return self.checkpoint_loads(items.func.value, depth + 1)
            return []
        if isinstance(expr, cst.Name):
            dominating = self.dominating_value(expr)
            if dominating is not None:
                return self.checkpoint_loads(dominating, depth + 1)
            values = self.bound_values(expr)
            return [load for value in values or () for load in self.checkpoint_loads(value, depth + 1)]
        return []

    def bound_in(self, name: cst.Name, block: cst.CSTNode) -> List[Binding]:
        """The bindings of ``name``'s variable made inside the indented block ``block``."""
        found = []
        for assignment in self._resolver.assignments(name):
            node = getattr(assignment, "node", None)
            binding = self._bindings.get(node) if isinstance(node, cst.Name) else None
            around = self._facts.block_of.get(node) if binding is not None else None
            while around is not None and around.node is not block:
                around = around.parent
            if around is not None:
                found.append(binding)
        return found

    def is_self_of_class(self, expr: cst.BaseExpression) -> bool:
        """Is ``expr`` a method's ``self``: an instance of a class the file defines (read
        from the bindings alone, without evaluating anything)?"""
        return isinstance(expr, cst.Name) and self._self_class(expr) is not None

    def is_module(self, expr: cst.BaseExpression) -> bool:
        return self.value(expr).kind is Kind.MODULE

    def on_cuda(self, expr: cst.BaseExpression) -> bool:
        """Known to be on a CUDA device (a tensor, or anything moved there)."""
        return self.value(expr).cuda is True

    def initial_value(self, name: cst.Name) -> Value:
        """What an accumulator starts as: the value its bindings agree on,
        leaving out the updates of itself (``total += x``, ``total = total + x``)."""
        values = []
        for assignment in self._resolver.assignments(name):
            node = getattr(assignment, "node", None)
            binding = self._bindings.get(node) if isinstance(node, cst.Name) else None
            if binding is not None and _updates(binding, node.value):
                continue
            values.append(self._assignment_value(assignment))
        return meet(values) if values else UNKNOWN

    def defines_method(self, classdef: cst.ClassDef, method: str) -> bool:
        """Does ``classdef`` define ``method`` in its own body?"""
        return _method(classdef, method) is not None

    def is_static_method(self, classdef: cst.ClassDef, method: str) -> bool:
        """Is ``method`` a ``@staticmethod`` of ``classdef``'s own body (called through the
        class, it takes no instance first)?"""
        found = _method(classdef, method)
        return found is not None and [get_full_name_for_node(d.decorator) for d in found.decorators] == ["staticmethod"]

    def receiver_value(self, receiver: cst.BaseExpression) -> Value:
        """The value of ``receiver`` in ``receiver.attr`` or ``receiver.method()``: a run
        that gets there did not hold None (``_receiver_value``)."""
        return self._receiver_value(receiver)

    def is_module_class(self, classdef: cst.ClassDef) -> bool:
        """Does this class derive from torch.nn.Module (directly or via the file)?"""
        return self._derives_from(classdef, self._module_classes, self._is_module_base)

    def _is_module_base(self, qualified: str) -> bool:
        """torch's ``nn.Module`` or one of its classes, or a project class the project model
        knows to be one (``class RLNMT(NMT)``, ``NMT`` an ``nn.Module`` of ``from nmt import *``)."""
        if qualified in api.MODULE_BASES or api.is_nn_class(qualified):
            return True
        key = self.project.absolute(qualified)
        made = self.project.call_value(key) if key is not None else None
        return made is not None and made.kind is Kind.MODULE

    def _derives_from(self, classdef: cst.ClassDef, known: Dict[cst.ClassDef, bool],
                      is_torch_base: Callable[[str], bool]) -> bool:
        """Does ``classdef`` have a base that ``is_torch_base`` accepts, directly or through
        classes of the file? ``known``: the answers so far for this family of bases."""
        answer = known.get(classdef)
        if answer is None:
            known[classdef] = False  # cycles: no
            answer = any(self._is_base(base.value, known, is_torch_base)
                         for base in classdef.bases if base.keyword is None)
            known[classdef] = answer
        return answer

    def _is_base(self, base: cst.BaseExpression, known: Dict[cst.ClassDef, bool],
                 is_torch_base: Callable[[str], bool]) -> bool:
        qualified = self._resolver.resolve(base)
        if qualified is not None:
            return is_torch_base(qualified)
        local = self._local_class(base)
        return local is not None and self._derives_from(local, known, is_torch_base)

    def bound_values(self, name: cst.Name) -> Optional[Tuple[cst.BaseExpression, ...]]:
        """The expressions ``name`` is assigned in its scope, when that is all it is.

        For rules with their own notion of value (a NumPy view, a NaN
        constant): every binding must be a plain ``name = expr`` (or
        ``name: T = expr`` / ``name := expr``); any other binding (a
        parameter, import, loop target, unpacking, ``+=``, ``global``) gives
        None.
        """
        assignments = self._resolver.assignments(name)
        if not assignments:
            return None
        values = []
        for assignment in assignments:
            node = getattr(assignment, "node", None)
            binding = self._bindings.get(node) if isinstance(node, cst.Name) else None
            if binding is None or binding.how != "assign" or binding.path:
                return None
            values.append(binding.value)
        return tuple(values)

    def bindings_of(self, name: cst.Name) -> Optional[List[Binding]]:
        """Every binding of ``name`` in its scope (assignments, unpacking included, loop
        targets, augmented assignments), when that is all it has; None when some other
        binding (a parameter, an import, ``global``) gives it a value too."""
        assignments = self._resolver.assignments(name)
        if not assignments:
            return None
        found: List[Binding] = []
        for assignment in assignments:
            node = getattr(assignment, "node", None)
            binding = self._bindings.get(node) if isinstance(node, cst.Name) else None
            if binding is None:
                return None
            found.append(binding)
        return found

    def dominating_value(self, read: cst.Name) -> Optional[cst.BaseExpression]:
        """The expression ``read`` holds on every run that reaches it: that of
        the last plain ``name = expr`` before it, in a block enclosing it
        (earlier bindings are overwritten), when no later binding can come
        round a loop to it first. None when unsure (another kind of binding,
        a binding in a branch, another scope, a ``global`` rebinding)."""
        scope = self._resolver.scope_of(read)
        assignments = self._resolver.assignments(read)
        if not all(isinstance(getattr(a, "node", None), cst.Name) and a.scope is scope
                   and self._resolver.scope_of(a.node) is scope for a in assignments):
            return None
        chain = self._chain(assignments)
        statement = self._facts.statement_of.get(read)
        if statement is None or chain is None:
            return None  # a compound statement's header, such as a ``while`` test read on every turn
        same = chain.by_statement.get(statement, [])
        if any(all(a.node is not n for n in _assigned_names(statement)) for a in same):
            return None  # ``(x := f()) + x``: a binding inside the statement that may come first
        read_at = self._read_index(read, chain)
        end = _last_kept(chain.ordered, bisect.bisect_left(chain.indices, read_at), same) if read_at is not None else 0
        if end == 0:
            return None
        last = chain.ordered[end - 1]
        binding = self._bindings.get(last.node)
        if binding is None or binding.how != "assign" or binding.path:
            return None
        block = self._facts.block_of.get(last.node)
        if block is not None and not block.encloses(self._facts.block_of.get(read)):
            return None
        if self._comes_round(read, chain, end, same):
            return None
        return binding.value

    def is_autograd_function_class(self, classdef: cst.ClassDef) -> bool:
        """Does this class derive from torch.autograd.Function (directly or via the file)?"""
        known = self._function_classes.get(classdef)
        if known is None:
            self._function_classes[classdef] = False  # cycles: not a Function
            known = any(self._is_function_base(base.value) for base in classdef.bases if base.keyword is None)
            self._function_classes[classdef] = known
        return known

    def local_class(self, func: cst.BaseExpression) -> Optional[cst.ClassDef]:
        """The class of this file a name is bound to (its only binding), if any."""
        return self._local_class(func)

    def imported_function_class(self, func: cst.BaseExpression) -> bool:
        """Does ``func`` name an autograd Function class that another module of
        the project defines (``from .functions.roi_pool import RoIPoolFunction``)?"""
        if self.local_definition(func) is not None:
            return False
        qualified = self._resolver.resolve(func)
        key = self.project.absolute(qualified) if qualified is not None else None
        return key is not None and self.project.autograd_function(key)

    # -- what the project model asks of the module defining something -------

    def function_return(self, function: cst.FunctionDef, arguments: Optional[Arguments] = None,
                        bound: bool = False) -> Value:
        """What calling ``function`` returns: what all its ``return`` statements agree on.
        With ``arguments`` (a call's, ``bound`` for a method called on an instance), what
        that call returns, where its constants decide an ``if`` of the def."""
        if self._origin is not None:
            return self._origin.function_return(function, arguments, bound)
        if arguments is not None:
            given = given_constants(function, arguments, bound)
            if given and self._decides_a_test(function, given):
                return self._specialised_return(function, given)
        known = self._returns.get(function)
        if known is None:
            self._returns[function] = _PENDING  # recursion: no information
            known = self._function_return(function)
            self._returns[function] = known
        return known

    def class_member(self, classdef: cst.ClassDef, member: str, called: bool, numbers: bool = True,
                     arguments: Optional[Arguments] = None) -> Value:
        """An instance of ``classdef``: attribute ``member``, or what calling
        method ``member`` returns (``called``; "__call__" is the instance called).
        Without ``numbers``, assignments of Python numbers and None to the attribute
        are left out (see ``used_as_tensor``)."""
        if called and member == "__call__" and self.is_module_class(classdef) and _method(classdef, "__call__") is None:
            member = "forward"  # nn.Module.__call__ runs forward, unless the class overrides __call__ itself
        elif called and member == "__call__" and self.is_autograd_function_class(classdef):
            return self._function_instance_call(classdef)
        method = _method(classdef, member)
        if called:
            if method is None:
                return self._inherited(classdef, member, called, numbers, arguments)
            return self.function_return(method, arguments, bound=True)
        if method is not None:
            decorators = {cst.helpers.get_full_name_for_node(d.decorator) for d in method.decorators}
            return self.function_return(method) if "property" in decorators else UNKNOWN
        bindings = self._attribute_bindings().get(classdef, {}).get(member)
        if not bindings:
            passed = self._passed_to_base(classdef, member)
            return passed if passed is not None else self._inherited(classdef, member, called, numbers)
        values = [self._filled(binding, (classdef, member)) or self._binding_value(binding) for binding in bindings]
        known = [v for v in values if numbers or v.kind not in (Kind.NUMBER, Kind.NONE)]
        return meet(known) if known else UNKNOWN

    def _function_instance_call(self, classdef: cst.ClassDef) -> Value:
        """``Fn()(x)`` of an autograd Function class (the style before torch 0.4, which had
        ``forward`` take ``self``): what ``forward`` returns, given back as tensors. Only
        tensors may come out of such a call, so a ``forward`` whose returns are no tuple
        displays returns one tensor, whatever inference knows of it."""
        forward = _method(classdef, "forward")
        if forward is None:
            return UNKNOWN
        value = self.function_return(forward)
        if value.kind is Kind.TENSOR or value.kind is Kind.TUPLE:
            return value
        returned = self._facts.returns.get(forward)
        if value.kind is Kind.UNKNOWN and returned and not any(
                r is None or isinstance(r, (cst.Tuple, cst.List)) for r in returned):
            return TENSOR
        return UNKNOWN

    def init_parameter(self, classdef: cst.ClassDef, member: str) -> Optional[Tuple[int, str]]:
        """The ``__init__`` parameter that is the only value ``classdef`` assigns to
        ``self.member`` (``self.criterion = criterion``): (position after ``self``, name)."""
        init = _method(classdef, "__init__")
        bindings = self._attribute_bindings().get(classdef, {}).get(member)
        if init is None or not bindings or len(bindings) != 1:
            return None
        binding = bindings[0]
        if binding.how != "assign" or binding.path or not isinstance(binding.value, cst.Name):
            return None
        nodes = {getattr(a, "node", None) for a in self._resolver.assignments(binding.value)}
        params = list(init.params.params)
        if len(nodes) != 1 or not params or init.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT):
            return None
        (node,) = nodes
        for index, param in enumerate(params[1:]):
            if param is node:
                return index, param.name.value
        return None

    def _passed_to_base(self, classdef: cst.ClassDef, member: str) -> Optional[Value]:
        """``self.member`` of a class whose ``__init__`` hands its base class's
        ``__init__`` the value the base stores there: ``super().__init__(name,
        nn.NLLLoss())`` for a base's ``self.criterion = criterion``. None when unknown."""
        init = _method(classdef, "__init__")
        bases = [base for base in classdef.bases if base.keyword is None]
        if init is None or len(bases) != 1:
            return None
        key = self._class_key(bases[0].value)
        if key is None:
            return None
        calls = [call for call in _calls_within(init) if self._calls_base_init(call, bases[0].value)]
        if len(calls) != 1:
            return None
        parameter = self.project.member_parameter(key, member)
        if parameter is None:
            return None
        args = list(calls[0].args)
        if isinstance(calls[0].func.value, cst.Name):  # ``Base.__init__(self, ...)``
            args = args[1:]
        if any(arg.star for arg in args):
            return None
        position, name = parameter
        for index, arg in enumerate(args):
            if (arg.keyword is None and index == position) or (arg.keyword is not None and arg.keyword.value == name):
                return self.value(arg.value)
        return None

    def _calls_base_init(self, call: cst.Call, base: cst.BaseExpression) -> bool:
        """``super().__init__(...)``, ``super(Cls, self).__init__(...)`` or ``Base.__init__(self, ...)``."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "__init__":
            return False
        owner = func.value
        if isinstance(owner, cst.Call):
            return self._resolver.resolve(owner.func) == "builtins.super"
        return (cst.helpers.get_full_name_for_node(owner) == cst.helpers.get_full_name_for_node(base)
                and bool(call.args) and call.args[0].keyword is None)

    def forwards(self, function: cst.FunctionDef) -> Dict[str, Tuple[str, str]]:
        """The parameters ``function`` passes on unchanged as a keyword of a
        torch call (or of a project function that does): parameter -> (torch
        callee, keyword). ``def to_var(x, volatile=False): return Variable(x,
        volatile=volatile)`` gives ``{"volatile": ("torch.autograd.Variable", "volatile")}``."""
        params = function.params
        names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        found: Dict[str, Tuple[str, str]] = {}
        for call in _calls_within(function):
            for arg in call.args:
                if arg.keyword is None or not isinstance(arg.value, cst.Name) or arg.value.value not in names:
                    continue
                if not all(isinstance(getattr(a, "node", None), cst.Param) for a in self._resolver.assignments(arg.value)):
                    continue  # rebound in the body: not the caller's value
                target = self.forwarded_to(call, arg.keyword.value)
                if target is not None:
                    found[arg.value.value] = target
        return found

    def returned_parameters(self, function: cst.FunctionDef, arguments: Optional[Arguments] = None,
                            ) -> Tuple[Optional[Tuple[int, str]], ...]:
        """Which parameter each returned value is, unchanged, where every ``return`` of
        ``function`` agrees: ``return model, loss`` gives ``((position, "model"), None)``
        (one item per tuple element; one item for a value that is no tuple literal).
        A parameter rebound in the body, or one the body may move or reshape in place
        (``model.cuda()``, ``x.squeeze_()``), is not the caller's value. Empty: none.
        With a call's ``arguments``, only the returns a run under its constants may reach
        count (``if total is None: return new`` for a call passing None)."""
        if self._origin is not None:
            return self._origin.returned_parameters(function, arguments)
        if arguments is not None:
            given = given_constants(function, arguments, False)
            if given and self._decides_a_test(function, given):
                return self._specialised_copy(function, given)._returned_parameters(function)
        return self._returned_parameters(function)

    def _returned_parameters(self, function: cst.FunctionDef) -> Tuple[Optional[Tuple[int, str]], ...]:
        if function in self._facts.generators:
            return ()
        returned = self._facts.returns.get(function)
        if returned and self._origin is not None:
            returned = self._reachable_returns(function, returned)
        if not returned or any(value is None for value in returned):
            return ()
        params = function.params
        positions = {p.name.value: (i, p) for i, p in enumerate((*params.posonly_params, *params.params))}
        shapes = [value.elements if isinstance(value, cst.Tuple) else (value,) for value in returned]  # type: ignore[union-attr]
        if len({len(shape) for shape in shapes}) != 1 or any(
                isinstance(e, cst.StarredElement) for shape in shapes for e in shape):
            return ()
        changed = self._changed_in_place(function)
        found: List[Optional[Tuple[int, str]]] = []
        for items in zip(*shapes):
            values = [item.value if isinstance(item, cst.Element) else item for item in items]
            names = {value.value for value in values if isinstance(value, cst.Name)}
            if len(names) != 1 or len(values) != sum(isinstance(v, cst.Name) for v in values):
                found.append(None)
                continue
            (name,) = names
            where = positions.get(name)
            if where is None or name in changed or not all(
                    getattr(a, "node", None) is where[1] for v in values for a in self._resolver.assignments(v)):
                found.append(None)
                continue
            found.append((where[0], name))
        return tuple(found) if any(item is not None for item in found) else ()

    def built_and_never_moved(self, name: cst.Name) -> bool:
        """Is ``name`` a module this code builds (``vgg = Vgg16()``, its only binding) whose
        every use is a method call that keeps it where it is (``vgg.parameters()``,
        ``vgg.state_dict()``)? Its tensors are on the CPU, where a new module's are. Handed to
        anything (``nn.DataParallel(vgg).cuda()``), stored, or moved: unknown."""
        binding = self.only_binding(name)
        if binding is None or binding.how != "assign" or binding.path or not isinstance(binding.value, cst.Call):
            return False
        built = self.value(binding.value)
        if built.kind is not Kind.MODULE or built.cuda is not None:
            return built.kind is Kind.MODULE and built.cuda is False
        receivers = {id(call.func.value) for call in self._facts.calls
                     if isinstance(call.func, cst.Attribute) and call.func.attr.value not in _DEVICE_CHANGING}
        accesses = [access.node for assignment in self._resolver.assignments(name) for access in assignment.references]
        return bool(accesses) and all(id(node) in receivers for node in accesses)

    def _changed_in_place(self, function: cst.FunctionDef) -> Set[str]:
        """The names ``function`` calls a method on that moves, converts or reshapes its
        receiver in place (a module's ``.cuda()``, a tensor's ``.squeeze_()``)."""
        return {call.func.value.value for call in _calls_within(function)
                if isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)
                and call.func.attr.value in _IN_PLACE_MOVES}

    def method_forwards(self, classdef: cst.ClassDef, name: str) -> Dict[str, Tuple[str, str]]:
        method = _method(classdef, name)
        return self.forwards(method) if method is not None else {}

    def forwarded_to(self, call: cst.Call, keyword: str) -> Optional[Tuple[str, str]]:
        """Which torch call receives ``keyword`` of ``call``: (callee, keyword), for
        a torch callee itself or a project function that passes it on."""
        callee = self._resolver.resolve(call.func)
        if callee is not None and callee.startswith(api.TORCH_PACKAGES):
            return (callee, keyword)
        if isinstance(call.func, cst.Attribute):  # a method of a project class: ``self.to_var(x, volatile=True)``
            receiver = self.value(call.func.value)
            if receiver.instance_of is not None:
                for owner in receiver.instance_of.split(_OWNERS):
                    found = self.project.member_forwarded(owner, call.func.attr.value).get(keyword)
                    if found is not None:
                        return found
                return None
        key = self.project.absolute(callee) if callee is not None else None
        if key is None:
            local = self.local_definition(call.func)
            key = self._definition_name(local) if isinstance(local, cst.FunctionDef) else None
        return self.project.forwarded(key).get(keyword) if key is not None else None

    def _inherited(self, classdef: cst.ClassDef, member: str, called: bool, numbers: bool,
                   arguments: Optional[Arguments] = None) -> Value:
        """``member`` as the first base class of the project that defines it gives it."""
        for base in classdef.bases:
            if base.keyword is not None:
                continue
            if self._resolver.resolve(base.value) in api.CONFIGURATION_SOURCES:
                # ``class RunFile(configparser.ConfigParser)``: what it inherits (``getfloat``,
                # ``sections``) reads the run's settings, as the parser's own instances do.
                return OPTIONS
            key = self._class_key(base.value)
            if key is None:
                continue
            value = self.project.member_value(key, member, called, numbers, arguments)
            if value.kind is not Kind.UNKNOWN:
                return value
        return UNKNOWN

    def _class_key(self, expr: cst.BaseExpression) -> Optional[str]:
        """The project's key of the class ``expr`` names (defined here or imported)."""
        local = self.local_definition(expr)
        if isinstance(local, cst.ClassDef):
            return self._definition_name(local)
        qualified = self._resolver.resolve(expr)
        return self.project.absolute(qualified) if qualified is not None else None

    def _function_return(self, function: cst.FunctionDef) -> Value:
        if function in self._facts.generators or function.asynchronous is not None:
            return UNKNOWN
        returned = self._facts.returns.get(function)
        if returned and self._origin is not None:
            returned = self._reachable_returns(function, returned)
        if not returned or any(value is None for value in returned):
            return UNKNOWN  # falls off its end, or returns None somewhere
        return meet(self.value(value) for value in returned if value is not None)

    # -- a call's constant arguments (``specialise.py``) -------------------------

    def _decides_a_test(self, function: cst.FunctionDef, given: Mapping[cst.Param, str]) -> bool:
        """Does a constant ``given`` decide an ``if`` of ``function``, or go on to a call
        (where it may decide the callee's)?"""
        token_of = self._token_reader(given)
        return any(decided(statement.test, token_of) is not None
                   for statement in self._facts.function_tests.get(function, ())) or any(
            token_of(name) not in (None, NOT_NONE) for name in self._facts.passed_names.get(function, ()))

    def _token_reader(self, given: Mapping[cst.Param, str]):
        """The constant a name reads, where its only binding is a parameter ``given`` holds."""
        def token_of(name: cst.Name) -> Optional[str]:
            assignments = self._resolver.assignments(name)
            if len(assignments) == 1:
                return given.get(getattr(next(iter(assignments)), "node", None))  # type: ignore[arg-type]
            # Rebound only after the read (``if y is not None: y = Variable(y)``): the
            # parameter's binding is the one every run brings to it.
            dominated = self._dominating_end(name, assignments) if assignments else None
            if dominated is None:
                return None
            ordered, end, _ = dominated
            last = getattr(ordered[end - 1], "node", None) if end > 0 else None
            return given.get(last) if isinstance(last, cst.Param) else None  # type: ignore[arg-type]
        return token_of

    def _call_arguments(self, call: cst.Call) -> Optional[Arguments]:
        """``call``'s constants (``specialise.call_arguments``); in a def specialised to
        a call's constants, a parameter passed on (``helper(x, average)``) passes its own."""
        arguments = call_arguments(call)
        if arguments is None:
            return arguments
        if self._origin is not None:
            token_of = self._token_reader(self._given)
            arguments = tuple((keyword, token_of(arg.value) or token if isinstance(arg.value, cst.Name) else token)
                              for (keyword, token), arg in zip(arguments, call.args))
        return arguments

    def _asked_with_arguments(self, call: cst.Call, ask: Callable[[Optional[Arguments]], Optional[Value]]
                              ) -> Optional[Value]:
        """``ask(arguments)`` of a project callee with ``call``'s constants; where that says
        nothing, again with the names it passes that hold a tensor, a module or an instance
        marked not None: ``if y is not None:`` in the callee is then decided for
        ``self.mlp(embed, labels)``. Second, because reading the arguments asks questions of
        its own, which may come back round to the one being answered."""
        arguments = self._call_arguments(call)
        value = ask(arguments)
        if arguments is None or (value is not None and value != UNKNOWN):
            return value
        marked = tuple((keyword, NOT_NONE if token == UNKNOWN_ARGUMENT and isinstance(arg.value, cst.Name)
                        and self.value(arg.value).kind in _NEVER_NONE else token)
                       for (keyword, token), arg in zip(arguments, call.args))
        if marked == arguments:
            return value
        again = ask(marked)
        return again if again is not None and again != UNKNOWN else value

    def _specialised_return(self, function: cst.FunctionDef, given: Mapping[cst.Param, str]) -> Value:
        """What ``function`` returns to a call giving its parameters the constants
        ``given``: worked out by a copy of this inference whose own cache holds the
        values of the def's nodes under those constants."""
        key = (function, frozenset(given.items()))
        known = self._specialised.get(key)
        if known is None:
            self._specialised[key] = _PENDING  # recursion: no information
            known = self._specialised_copy(function, given)._function_return(function)
            self._specialised[key] = known
        return known

    def _specialised_copy(self, function: cst.FunctionDef, given: Mapping[cst.Param, str]) -> "Inference":
        """A copy of this inference whose own cache holds the values of ``function``'s
        nodes under the constants ``given``."""
        special = copy.copy(self)
        special._origin, special._given = self, dict(given)
        special._inside = _nodes_of(function)
        special._cache, special._heights, special._chains, special._returns = {}, {}, {}, {}
        special._differentiated, special.memo, special._depth, special._specialised = None, {}, 0, {}
        special._layouts = {}
        special._evaluating, special._lows, special._provisional = {}, [], []
        special._differentiated_by_name = {}
        return special

    def _runs(self, block: Optional["Block"]) -> Optional[bool]:
        """Under the constants given: does ``block`` run whenever the block around it
        does (True), never (False), or is that unknown (None)?"""
        if block is None or self._origin is None:
            return None
        return branch_runs(self._facts.branches.get(block.node), self._facts.elif_of, self._token_reader(self._given))

    def _dead(self, block: Optional["Block"]) -> bool:
        """Can ``block`` not run under the constants given (it, or a block around it)?"""
        while block is not None:
            if self._runs(block) is False:
                return True
            block = block.parent
        return False

    def _lifted(self, block: "Block") -> "Block":
        """The block around ``block`` that runs exactly when it does, under the constants given."""
        while block.parent is not None and self._runs(block) is True:
            block = block.parent
        return block

    def _encloses(self, block: "Block", other: Optional["Block"]) -> bool:
        """Does every run reaching ``other`` pass through ``block``'s start (under the constants given)?"""
        if block.encloses(other):
            return True
        return self._origin is not None and self._lifted(block).encloses(other)

    def _reachable_returns(self, function: cst.FunctionDef, returned: List[Optional[cst.BaseExpression]]
                           ) -> List[Optional[cst.BaseExpression]]:
        """The ``return`` values of ``function`` that a run under the constants given may
        reach: not those in a block that cannot run, nor those after a return that always runs."""
        reachable = []
        ended: List["Block"] = []  # blocks every run of which has returned by now
        for value, block in zip(returned, self._facts.return_blocks.get(function, ())):
            if self._dead(block) or any(done.encloses(block) for done in ended):
                continue  # cannot run, or comes after a return that always runs first
            reachable.append(value)
            if block is not None:
                lifted = self._lifted(block)
                if lifted.node is function.body:
                    break  # every run returns here: the returns after it are never reached
                ended.append(lifted)
        return reachable

    def _live(self, assignments):
        """``assignments`` less those in a block that cannot run under the constants given."""
        if self._origin is None:
            return assignments
        live = frozenset(a for a in assignments if not self._dead(self._facts.block_of.get(getattr(a, "node", None))))
        return live if live and len(live) < len(assignments) else assignments

    def _attribute_bindings(self) -> Dict[cst.ClassDef, Dict[str, List[Binding]]]:
        if self._attributes is None:
            by_class: Dict[cst.ClassDef, Dict[str, List[Binding]]] = {}
            for receiver, attribute, binding in self._facts.attribute_bindings:
                classdef = self._self_class(receiver)
                if classdef is not None:
                    by_class.setdefault(classdef, {}).setdefault(attribute, []).append(binding)
            self._attributes = by_class
        return self._attributes

    def _self_class(self, name: cst.Name) -> Optional[cst.ClassDef]:
        """The class whose instance ``name`` is, when it is a method's ``self``."""
        nodes = {getattr(a, "node", None) for a in self._resolver.assignments(name)}
        if len(nodes) != 1:
            return None
        (node,) = nodes
        return self._self_params.get(node) if isinstance(node, cst.Param) else None

    def _assigned_earlier_in_method(self, read: cst.Attribute) -> Optional[cst.BaseExpression]:
        """``self.x`` read in a method that itself did ``self.x = e`` in an earlier statement
        of its body, with nothing between that may bind it again (no other assignment to
        ``self.x``, no call of a method of ``self``): ``e``, what every run reads there
        (``self.opt = self.parser.parse_args()`` ... ``return self.opt``, where ``__init__``
        set ``self.opt = None``)."""
        receiver = read.value
        if not isinstance(receiver, cst.Name) or self._self_class(receiver) is None:
            return None
        scope = self._resolver.scope_of(receiver)
        function = getattr(scope, "node", None)
        small = self._facts.statement_of.get(receiver)
        if not isinstance(function, cst.FunctionDef) or small is None:
            return None
        layout = self._method_layout(function, receiver.value)
        index = layout.statement_index.get(id(small))
        if index is None:
            return None
        member = read.attr.value
        here = layout.binds[index]
        if here is None or member in here:
            return None  # the statement holding the read may bind it first
        for position in range(index - 1, -1, -1):
            bound = layout.binds[position]
            if bound is None:
                return None  # a method of ``self`` called there may bind it
            if member in bound:
                return layout.plain.get((position, member))  # a plain ``self.x = e``, else unsure
        return None

    def _method_layout(self, function: cst.FunctionDef, self_name: str) -> "_MethodLayout":
        known = self._layouts.get(function)
        if known is None:
            known = self._layouts[function] = _MethodLayout.of(function, self_name)
        return known

    # -- evaluation ---------------------------------------------------------

    def _evaluate(self, expr: cst.BaseExpression) -> Value:
        if isinstance(expr, cst.Name):
            return NONE if expr.value == "None" else self._name_value(expr)
        if isinstance(expr, cst.Call):
            return self._call_value(expr)
        if isinstance(expr, cst.Attribute):
            base = self._receiver_value(expr.value)
            if (base.kind is Kind.TENSOR or base.cuda) and expr.attr.value in api.TENSOR_ATTRIBUTES:
                data = expr.attr.value == "data"
                return replace(base, scalar=base.scalar and data, ndim=base.ndim if data or base.ndim else None,
                               loss=base.loss and expr.attr.value not in ("data", "grad"))
            if expr.attr.value == api.PARAM_GROUPS and self._optimizer_self(expr.value):
                return PARAM_GROUPS
            if base.kind is Kind.OPTIONS:
                return OPTIONS  # ``args.lr``: what the command line gave
            if base.kind is Kind.TUPLE and base.keys:
                return dict(base.keys).get(expr.attr.value, UNKNOWN)  # a namedtuple's field
            assigned = self._assigned_earlier_in_method(expr)
            if assigned is not None:
                return self.value(assigned)
            owners = self._attribute_owners(expr.value, expr.attr.value, base)
            if owners is not None:
                return self._member(owners, expr.attr.value, called=False)
            qualified = self._resolver.resolve(expr)
            if expr.attr.value == "shape" and qualified is None and base.kind in (Kind.TENSOR, Kind.UNKNOWN):
                return SIZES  # a tensor's (or an array's) lengths
            if (base.kind is Kind.FUNCTION and base.calls is not None and _OWNERS not in base.calls
                    and self.project.static_method(base.calls, expr.attr.value)):
                # ``Utils.dice``: a static method of a project class, reached through the class.
                return Value(Kind.FUNCTION, returns=self.project.member_value(base.calls, expr.attr.value, called=True))
            if base.kind is not Kind.UNKNOWN:
                return UNKNOWN
            if qualified in api.CONFIGURATION_OBJECTS:
                return OPTIONS  # ``FLAGS = gflags.FLAGS``: the command line's flags
            return self._callable_reference(qualified)
        if isinstance(expr, (cst.Integer, cst.Float)):
            return NUMBER
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return UNKNOWN  # ``not x`` is a Python bool, whatever x is
            return self.value(expr.expression)
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.MatrixMultiply):
                return self._matrix_product(expr.left, expr.right)
            return self._arithmetic((expr.left, expr.right))
        if isinstance(expr, cst.Comparison):
            operands = [expr.left] + [target.comparator for target in expr.comparisons]
            result = self._arithmetic(operands)
            return result if result.kind is Kind.TENSOR else UNKNOWN
        if isinstance(expr, cst.Subscript):
            base = self.value(expr.value)
            if base.kind is Kind.TENSOR:
                if base.scalar and _data_attribute(expr.value) and _constant_index(expr) is not None:
                    # ``x.sum().data[0]``: the number torch 0.3 read (IndexError today: TL101).
                    return NUMBER
                return Value(Kind.TENSOR, cuda=base.cuda, dtype=base.dtype, ndim=self._indexed_ndim(base.ndim, expr))
            keyed = dict(base.keys).get(constant_key(expr)) if base.kind is Kind.MAPPING and base.keys else None
            if keyed is not None:
                return keyed
            if base.kind is Kind.MAPPING and base.element is not None:
                return base.element
            if base.kind is Kind.OPTIONS:
                return OPTIONS  # ``config['lr']``, ``args.sizes[0]``
            if base.kind is Kind.UNKNOWN and _is_shape(expr.value) and _constant_index(expr) is not None:
                return NUMBER  # ``x.size()[0]``, ``x.shape[0]``: a length, of a tensor or an array
            tensor = base.if_tensor if base.kind is Kind.UNKNOWN else None
            if tensor is not None and tensor.kind is Kind.TENSOR and tensor.ndim:
                # ``x.nonzero()[:, 0]``: if it is a tensor, a column of it (what the other
                # values it may be make of the subscript, the rule asking decides).
                ndim = self._indexed_ndim(tensor.ndim, expr)
                if ndim is not None and ndim >= 0:
                    return Value(Kind.UNKNOWN, if_tensor=Value(Kind.TENSOR, cuda=tensor.cuda, dtype=tensor.dtype,
                                                               ndim=ndim))
            if base.kind is Kind.TUPLE:
                index = _constant_index(expr)
                if not base.items and base.element is not None and (
                        index is not None or not isinstance(expr.slice[0].slice, cst.Slice)) and len(expr.slice) == 1:
                    return base.element  # a sequence of unknown length, all alike
                if index is not None and -len(base.items) <= index < len(base.items):
                    return base.items[index]
            return UNKNOWN
        if isinstance(expr, cst.Tuple):
            if any(isinstance(e, cst.StarredElement) for e in expr.elements):
                return UNKNOWN
            return Value(Kind.TUPLE, items=tuple(self.value(e.value) for e in expr.elements))
        if isinstance(expr, cst.Dict):
            if not expr.elements or any(not isinstance(e, cst.DictElement) for e in expr.elements):
                return UNKNOWN
            return self._keyed_mapping([(_literal_string(e.key), e.value) for e in expr.elements])
        if isinstance(expr, cst.DictComp):
            return Value(Kind.MAPPING, element=UNKNOWN)  # a dict; what its values are is not followed
        if isinstance(expr, cst.IfExp):
            return meet((self._narrowed(expr.body, expr.test, True), self._narrowed(expr.orelse, expr.test, False)))
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
            # ``[torch.mean(x) for x in losses]``: a sequence whose elements all are what
            # the element expression gives.
            return Value(Kind.TUPLE, element=self.value(expr.elt))
        if isinstance(expr, cst.Lambda):
            # ``cost = lambda z, y: (...).mean()``: calling it gives what its body gives
            # (its parameters unknown), as a nested def's value carries what it returns.
            return Value(Kind.FUNCTION, returns=self.value(expr.body))
        return UNKNOWN

    def _keyed_mapping(self, entries: Sequence[Tuple[Optional[str], cst.BaseExpression]]) -> Value:
        """A dict made with these (key, value) entries: what its values agree on, and the
        value of each constant string key (``errs["policy_err"]`` of ``dict(logpi=logpi,
        policy_err=err)``: the loss, not the meet with the log-probabilities)."""
        values = [(key, self.value(value)) for key, value in entries]
        keys = dict((key, value) for key, value in values if key is not None)
        return Value(Kind.MAPPING, element=meet(value for _, value in values), keys=tuple(keys.items()))

    def _narrowed(self, branch: cst.BaseExpression, test: cst.BaseExpression, holds: bool) -> Value:
        """The value of ``branch`` of ``b if test else o``, where ``test`` holds (``holds``)
        or not: the name ``x`` itself where the test proves it a Python number
        (``x if isinstance(x, int) else x.mean()``) is one."""
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
        if negated:
            test, holds = test.expression, not holds
        if holds and isinstance(branch, cst.Name) and isinstance(test, cst.Call) and len(test.args) == 2 \
                and self._resolver.resolve(test.func) == "builtins.isinstance" \
                and isinstance(test.args[0].value, cst.Name) and test.args[0].value.value == branch.value \
                and all(self._resolver.resolve(kind) in _NUMBER_TYPES for kind in _type_names(test.args[1].value)):
            return NUMBER
        return self.value(branch)

    def _matrix_product(self, left: cst.BaseExpression, right: cst.BaseExpression) -> Value:
        """``a @ b`` (``torch.matmul``): a tensor whose dimensions follow from the operands'."""
        a, b = self.value(left), self.value(right)
        if a.kind is not Kind.TENSOR and b.kind is not Kind.TENSOR:
            return UNKNOWN  # NumPy arrays, or a class's ``__matmul__``
        cuda = True if a.cuda or b.cuda else (False if a.cuda is False and b.cuda is False else None)
        ndim = _matmul_ndim(a.ndim if a.kind is Kind.TENSOR else None, b.ndim if b.kind is Kind.TENSOR else None)
        return Value(Kind.TENSOR, cuda=cuda, ndim=ndim, scalar=ndim == 0, one_element=ndim == 0)

    def _arithmetic(self, operands: Sequence[cst.BaseExpression]) -> Value:
        values = [self.value(op) for op in operands]
        if any(v.unless_number is not None for v in values):
            # A number or a tensor in arithmetic: a number then (None raises), else
            # the tensor's arithmetic.
            tensor = self._arithmetic_of([v.unless_number or v for v in values], operands)
            return Value(Kind.UNKNOWN, unless_number=tensor) if tensor.kind is Kind.TENSOR else UNKNOWN
        if any(v.if_tensor is not None for v in values) and all(
                v.if_tensor is not None or v.kind in (Kind.NUMBER, Kind.OPTIONS, Kind.TENSOR) for v in values):
            # ``x.sum() / (n * m)``, ``x`` unknown: if the reduction was a tensor's, so is the
            # quotient, with its dimensions (a NumPy scalar stays one). Beside a tensor
            # (``a.mean() + f(b).mean()``) the result is a tensor either way, and a NumPy
            # scalar adds no dimension, as a 0-dim tensor would not.
            tensor = self._arithmetic_of([v.if_tensor or v for v in values], operands)
            if tensor.kind is Kind.TENSOR and any(v.kind is Kind.TENSOR for v in values):
                return tensor
            return Value(Kind.UNKNOWN, if_tensor=tensor) if tensor.kind is Kind.TENSOR else UNKNOWN
        return self._arithmetic_of(values, operands)

    def _arithmetic_of(self, values: Sequence[Value], operands: Sequence[cst.BaseExpression]) -> Value:
        if any(v.kind is Kind.NONE for v in values):
            # ``None + x`` raises: no run gets a value here (``total + x if total is not None
            # else x``), so it takes no part in what the bindings agree on.
            return _PENDING
        tensors = [v for v in values if v.kind is Kind.TENSOR]
        if not tensors:
            if all(v.kind is Kind.NUMBER for v in values):
                return NUMBER
            if all(v.kind in (Kind.NUMBER, Kind.OPTIONS) for v in values):
                return OPTIONS  # ``args.num_atoms * x.size(0)``: what the options hold, never a tensor
            return UNKNOWN
        # A command-line option beside a tensor is a number (a string or list there raises,
        # or repeats a list): it adds no dimension.
        scalar = all(v.kind in (Kind.NUMBER, Kind.OPTIONS) or (v.kind is Kind.TENSOR and v.scalar)
                     or (v.kind is Kind.UNKNOWN and _full_reduction(op)) for v, op in zip(values, operands))
        cuda = True if any(v.cuda for v in tensors) else (False if all(v.cuda is False for v in tensors) else None)
        # Broadcasting: as many dimensions as the operand with the most.
        dims = [0 if v.kind in (Kind.NUMBER, Kind.OPTIONS) or (v.kind is Kind.UNKNOWN and _full_reduction(op))
                else (v.ndim if v.kind is Kind.TENSOR else None) for v, op in zip(values, operands)]
        ndim = max(dims) if None not in dims else None  # type: ignore[type-var]
        # One element beside numbers and 0-dim values stays one: ``torch.zeros(1) + loss``.
        one_element = all(v.kind in (Kind.NUMBER, Kind.OPTIONS) or (v.kind is Kind.TENSOR and v.one_element)
                          or (v.kind is Kind.UNKNOWN and _full_reduction(op)) for v, op in zip(values, operands))
        return Value(Kind.TENSOR, scalar=scalar, cuda=cuda, loss=any(v.loss for v in tensors), ndim=ndim,
                     one_element=one_element)

    def _receiver_value(self, receiver: cst.BaseExpression) -> Value:
        """The value of ``receiver`` in ``receiver.attr``: a run that reads an attribute of
        it did not hold None there (``args = None`` at module level, ``args =
        parser.parse_args()`` in ``main``), so a binding to None takes no part."""
        value = self.value(receiver)
        if (value == UNKNOWN or value.kind is Kind.NONE) and isinstance(receiver, cst.Name):
            assignments = self._resolver.assignments(receiver)
            if len(assignments) > 1:
                # ``model = None``, then ``model = Net()`` under an ``if`` whose ``else``
                # raises: whichever binding reaches, the run that reads an attribute of
                # it did not hold None.
                values = [self._assignment_value(a) for a in assignments]
                kept = [v for v in values if v.kind is not Kind.NONE]
                if kept and len(kept) < len(values):
                    return meet(kept)
        return value

    def _name_value(self, name: cst.Name) -> Value:
        guard = self._facts.guarded.get(name)
        if guard is not None and self._proves_tensor(*guard):
            return TENSOR
        assignments = self._resolver.assignments(name)
        if not assignments:
            return UNKNOWN
        if all(isinstance(a, ImportAssignment) and isinstance(a.node, cst.ImportFrom) for a in assignments):
            qualified = self._resolver.resolve(name)
            if qualified in api.CONFIGURATION_OBJECTS or (
                    qualified is not None and not qualified.startswith(api.TORCH_PACKAGES)
                    and self.project.is_configuration(qualified)):
                return OPTIONS  # ``from config import cfg``: the run's settings
            return self._callable_reference(qualified)
        if self._origin is not None:
            token = self._token_reader(self._given)(name)
            if token is not None and token != NOT_NONE:
                return _CONSTANT_VALUES.get(token, UNKNOWN)  # a parameter holding the call's constant
            assignments = self._live(assignments)
        dominated = self._dominating_end(name, assignments)
        last = self._last_value(name, *dominated) if dominated is not None else None
        if last is not None:
            if last.kind is Kind.UNKNOWN and self._differentiated_as_bound(name, dominated):  # type: ignore[arg-type]
                return Value(Kind.TENSOR, scalar=True, loss=True)
            if last.if_tensor is not None and self._backward_of_binding(name, dominated):  # type: ignore[arg-type]
                # ``loss = x.pow(2).sum()``, then ``loss.backward()``: only a tensor has that.
                return last.if_tensor
            if last == UNKNOWN and len(assignments) == 1 and self._counted(name):
                return NUMBER  # ``batch_size = n * k`` and ``range(batch_size)``: an integer
            return last
        reaching = [a for a in assignments if not self._bound_after_read(a, name)]
        if reaching and len(reaching) < len(assignments):
            assignments = frozenset(reaching)
        values = self._updated_in_place(assignments, [self._assignment_value(a) for a in assignments])
        if self._backward_called(name):
            values = [self._one_element_if_differentiated(a, v, name) for a, v in zip(assignments, values)]
        value = meet(values)
        if value.kind is Kind.UNKNOWN and len(values) > 1:
            live = [v for a, v in zip(assignments, values) if not self._overwritten(a, name)]
            if live and len(live) < len(values):
                values = live
                value = meet(values)
        if value.kind is Kind.MODULE:
            moved = self._moved_in_place(name)
            if moved is not None:
                return replace(value, cuda=moved)
        if value.kind is Kind.UNKNOWN and all(v.kind in (Kind.UNKNOWN, Kind.TENSOR) for v in values) and (
                self._backward_called(name) or self._from_differentiated_callee(assignments)) and not any(
                self._opaque_result(a) for a in assignments):
            # ``name.backward()`` in the same scope: only a one-element tensor takes that, and
            # one torch or the project computed is a reduction's, 0-dim since torch 0.4.
            return Value(Kind.TENSOR, scalar=True, loss=True)
        if value.kind is Kind.UNKNOWN and len(values) == 1 and self._sized(name):
            # ``name.size(0)`` in the scope of its only binding (a parameter, say): a tensor.
            return TENSOR
        if value == UNKNOWN and len(values) == 1 and self._counted(name):
            return NUMBER  # ``range(name)`` in the scope of its only binding: an integer
        return value

    def _bound_after_read(self, assignment, read: cst.Name) -> bool:
        """Is ``assignment`` made by the statement that holds ``read`` (``loss =
        loss.data[0] / n``), in no loop of the def? The statement reads the name before
        it binds it, and runs once: its own binding reaches none of its reads."""
        node = getattr(assignment, "node", None)
        statement = self._facts.statement_of.get(read)
        if statement is None or self._facts.statement_of.get(node) is not statement \
                or not isinstance(statement, (cst.Assign, cst.AnnAssign)) or node is read:
            return False
        scope = self._resolver.scope_of(read)
        body = getattr(getattr(scope, "node", None), "body", None)
        block = self._facts.block_of.get(node)
        while block is not None:
            if block.loop:
                return False  # run again: the binding reaches the read the next time round
            if block.node is body or block.parent is None:
                return True  # the def's body, or the module's top level
            block = block.parent
        return False

    def _overwritten(self, assignment, read: cst.Name) -> bool:
        """Is ``assignment`` bound anew by a plain assignment further down its block before
        any statement could leave the block (``k += d``, then ``k = max(min(1, k), 0)``),
        with ``read`` outside that stretch? Then the value it gives reaches no other read."""
        node = getattr(assignment, "node", None)
        small = self._facts.statement_of.get(node)
        block = self._facts.block_of.get(node)
        if small is None or block is None or self._facts.statement_of.get(read) is None:
            return False
        guarded = block
        while guarded is not None:
            if guarded.node in self._facts.guarded_bodies:
                return False  # an exception may carry the value out of the block
            guarded = guarded.parent
        body = getattr(block.node, "body", None)
        if not isinstance(body, Sequence):
            return False
        lines = [line.body if isinstance(line, cst.SimpleStatementLine) else None for line in body]
        start = next((i for i, smalls in enumerate(lines) if smalls is not None and small in smalls), None)
        if start is None:
            return False
        after = list(lines[start])
        after = after[after.index(small) + 1:]
        for smalls in [after, *lines[start + 1:]]:
            if smalls is None:
                return False  # a compound statement: it may break, continue or return
            for statement in smalls:
                if statement is self._facts.statement_of.get(read):
                    return False
                if isinstance(statement, (cst.Break, cst.Continue, cst.Return, cst.Raise)):
                    return False
                if isinstance(statement, cst.Assign) and any(
                        isinstance(target.target, cst.Name) and target.target.value == read.value
                        for target in statement.targets):
                    return True
        return False

    def _updated_in_place(self, assignments, values: List[Value]) -> List[Value]:
        """``t += x`` on a tensor updates it in place: ``t`` keeps its shape, dtype and
        device whatever ``x`` is. Where every plain binding of the name gives a tensor,
        its augmented ones give what those do (``result = torch.zeros(1)``, then
        ``result += term`` in a loop: still one dimension)."""
        updates = [getattr(self._bindings.get(getattr(a, "node", None)), "how", None) == "aug"
                   for a in assignments]
        if not any(updates) or all(updates):
            return values
        plain = [value for value, update in zip(values, updates) if not update]
        if any(value.kind is not Kind.TENSOR for value in plain):
            return values
        updated = meet(plain)
        return [updated if update else value for value, update in zip(values, updates)]

    def _moved_in_place(self, read: cst.Name) -> Optional[bool]:
        """Where a module is at ``read`` after a statement of its scope moved it in
        place (``model.cuda()``, ``model.to('cpu')``: a module moves itself, a
        tensor would not) before the read, with a binding between them to tell
        the order: True on a CUDA device, False on the CPU. The move may sit under
        a test (``if torch.cuda.is_available():``, ``if args.cuda:``): that is the
        program's GPU mode, where the module is then on the GPU. None when no
        such statement comes first, or where it moved it is unknown."""
        scope = self._resolver.scope_of(read)
        access = scope.access_of(read) if scope is not None else None
        if access is None:
            return None
        moves = [(index, device) for index, device in self._in_place_moves().get((scope, read.value), ())
                 if index < access.index]
        if not moves:
            return None
        last = max(index for index, _ in moves)
        devices = {device for index, device in moves if index == last}
        return devices.pop() if len(devices) == 1 else None

    def _in_place_moves(self) -> Dict[Tuple[object, str], List[Tuple[int, Optional[bool]]]]:
        """(scope, name) -> the statements ``name.cuda()`` / ``.cpu()`` / ``.to(...)`` there:
        how many bindings the scope had made by then, and where they move it."""
        if self._moves is None:
            self._moves = {}
            for call in self._facts.calls:
                func = call.func
                statement = self._facts.call_statement.get(call)
                if not (isinstance(statement, cst.Expr) and statement.value is call
                        and isinstance(func, cst.Attribute) and func.attr.value in ("cuda", "cpu", "to")
                        and isinstance(func.value, cst.Name)):
                    continue
                scope = self._resolver.scope_of(func.value)
                access = scope.access_of(func.value) if scope is not None else None
                if access is not None:
                    device = _device_after(func.attr.value, call, None)
                    self._moves.setdefault((scope, func.value.value), []).append((access.index, device))
        return self._moves

    def _attribute_owners(self, receiver: cst.BaseExpression, member: str,
                          base: Optional[Value] = None) -> Optional[str]:
        """The project classes whose attribute ``receiver.member`` reads (``Value.instance_of``).

        A name also bound to ``nn.DataParallel(model)`` (``if multi_gpu: net =
        nn.DataParallel(net)``) still reads the model's attribute: the wrapper
        has no ``member`` of its own, so reading it there raises AttributeError
        and no value of the wrapper's gets past the read."""
        base = base if base is not None else self.value(receiver)
        if base.instance_of is not None or base.kind not in (Kind.MODULE, Kind.UNKNOWN) or not isinstance(
                receiver, cst.Name):
            return base.instance_of
        if member in api.PARALLEL_WRAPPER_ATTRIBUTES or member.startswith("_"):
            return None
        assignments = self._resolver.assignments(receiver)
        if len(assignments) < 2 or any(isinstance(a, ImportAssignment) for a in assignments):
            return None
        values = [self._assignment_value(a) for a in assignments]
        kept = [v for v in values if v.module_class not in api.PARALLEL_WRAPPERS]
        return meet(kept).instance_of if kept and len(kept) < len(values) else None

    def _member(self, owners: str, member: str, called: bool, numbers: bool = True,
                arguments: Optional[Arguments] = None) -> Value:
        """What all the classes an instance may be of agree ``member`` gives."""
        return meet(self.project.member_value(owner, member, called, numbers, arguments)
                    for owner in owners.split(_OWNERS))

    def _accumulated_value(self, assignment, name: str) -> Value:
        """A binding's value; for ``name = name + x`` (an accumulation), what is added."""
        node = getattr(assignment, "node", None)
        binding = self._bindings.get(node) if isinstance(node, cst.Name) else None
        if binding is not None and binding.how == "assign" and _updates(binding, name):
            return self.value(binding.value.right)
        return self._assignment_value(assignment)

    def _chain(self, assignments) -> Optional[_Chain]:
        """The index of ``assignments`` (None unless every one binds a Name or a parameter)."""
        key = id(assignments)
        if key not in self._chains:
            # Names, and parameters: a parameter binds first, and a later assignment of its
            # def (``x = torch.mean(x)``, then ``return x``) overwrites it like any other.
            named = bool(assignments) and all(isinstance(getattr(a, "node", None), (cst.Name, cst.Param))
                                              for a in assignments)
            self._chains[key] = _Chain(assignments, self._facts.statement_of) if named else None
        chain = self._chains[key]
        return chain if chain is None or chain.assignments is assignments else None

    def _warm(self, read: cst.Name) -> None:
        """Evaluate the reads of ``read``'s bindings that come before it, in
        order, when many are not evaluated yet: each then finds the one
        before it evaluated, and no chain of rebindings (``loss = loss + x``
        a thousand times) recurses once per link."""
        assignments = self._resolver.assignments(read)
        chain = self._chain(assignments) if len(assignments) > _WARM_AFTER else None
        if chain is None:
            return
        scope = self._resolver.scope_of(read)
        if chain.reads is None:
            reads = sorted(((access.index, access.node) for access in scope.reads_of(read.value)
                            if isinstance(access.node, cst.Name)), key=lambda pair: pair[0])
            chain.reads = [node for _, node in reads]
            chain.read_indices = [index for index, _ in reads]
        read_at = self._read_index(read, chain)
        if read_at is None:
            return
        end = bisect.bisect_left(chain.read_indices, read_at)
        if end - chain.warmed <= _WARM_AFTER:
            return
        start, chain.warmed = chain.warmed, end  # before evaluating: the reads below must not warm again
        for earlier in chain.reads[start:end]:
            self.value(earlier)

    def _prewarm(self, root: cst.BaseExpression) -> None:
        """Evaluate what ``root``'s value rests on from the far end first when
        that goes deeper than ``_DEEP_CHAIN`` values: each is then evaluated
        with what it reads already known. Both walks are loops, and every node
        is measured once (``_heights``) and evaluated once, so a chain of n
        links costs n steps and no recursion proportional to n. Shallow values
        are left to the plain evaluation (its order decides cycles, as it always did)."""
        heights, cache = self._heights, self._cache
        if root in heights:
            return
        finished: List[cst.CSTNode] = []
        visiting: Set[cst.CSTNode] = {root}
        stack: List[Tuple[cst.CSTNode, List[cst.CSTNode]]] = [(root, self._operands(root))]
        while stack:
            node, below = stack[-1]
            while below and (below[-1] in heights or below[-1] in visiting or below[-1] in cache):
                below.pop()
            if below:
                child = below.pop()
                visiting.add(child)
                stack.append((child, self._operands(child)))
                continue
            stack.pop()
            heights[node] = 1 + max((heights.get(operand, 0) for operand in self._operands(node)
                                     if operand not in cache), default=0)
            finished.append(node)
        if heights[root] <= _DEEP_CHAIN:
            return
        self._depth += 1  # the values below are known by the time each is asked: no nested warming
        try:
            for node in finished[:-1]:
                self.value(node)
        finally:
            self._depth -= 1

    def _operands(self, expr: cst.CSTNode) -> List[cst.CSTNode]:
        """The expressions ``expr``'s value is made from (an over-approximation of
        what ``_evaluate`` asks): a name's bound values, an operation's operands."""
        if isinstance(expr, cst.Name):
            assignments = self._resolver.assignments(expr)
            if len(assignments) > _WARM_AFTER:
                return []  # one name rebound many times: ``_warm`` evaluates its chain in order
            bound = (self._bindings.get(getattr(a, "node", None)) for a in assignments)
            return [binding.value for binding in bound if binding is not None]
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            return [expr.value]
        if isinstance(expr, cst.BinaryOperation):
            return [expr.left, expr.right]
        if isinstance(expr, cst.UnaryOperation):
            return [expr.expression]
        if isinstance(expr, cst.Comparison):
            return [expr.left, *(target.comparator for target in expr.comparisons)]
        if isinstance(expr, cst.Call):
            receiver = [expr.func.value] if isinstance(expr.func, cst.Attribute) else []
            return receiver + [arg.value for arg in expr.args]
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            return [element.value for element in expr.elements]
        if isinstance(expr, cst.Dict):
            return [element.value for element in expr.elements if isinstance(element, cst.DictElement)]
        if isinstance(expr, cst.IfExp):
            return [expr.body, expr.orelse]
        return []

    def _dominating_binding(self, read: cst.Name, dominated: "_Dominated") -> Optional[object]:
        """The binding the value of ``read`` comes from (``dominated``: what
        ``_dominating_end`` found), when it is a plain assignment that holds the
        read's value as it is (no augmented assignment after it)."""
        ordered, end, _ = dominated
        last = ordered[end - 1] if end > 0 else None
        binding = self._bindings.get(last.node) if last is not None else None
        block = self._facts.block_of.get(last.node) if last is not None else None
        if binding is None or binding.how == "aug" or block is None or not self._encloses(
                block, self._facts.block_of.get(read)):
            return None
        return last

    def _dominating_end(self, read: cst.Name, assignments) -> Optional["_Dominated"]:
        """When the last binding before ``read`` is in a block enclosing it (so every
        run reaching ``read`` passed it: earlier bindings are overwritten): the
        bindings of its name in order, how many come before it, and those of its
        own statement (left out). ``_last_value`` reads the value from them (an
        augmented assignment keeps a tensor's shape: it goes on to the binding before it)."""
        chain = self._chain(assignments)
        if chain is None:
            return None
        statement = self._facts.statement_of.get(read)
        same = chain.by_statement.get(statement, []) if statement is not None else []
        if len(same) == len(chain.ordered):
            return None
        if not chain.one_scope and len({a.scope for a in chain.ordered if a not in same}) != 1:
            return None
        if len(chain.ordered) == 1:
            return None  # one binding: the plain agreement says the same
        end = len(chain.ordered)
        read_at = self._read_index(read, chain)
        if read_at is not None:
            # A binding after the read reaches it only round a loop (then nothing dominates).
            end = _last_kept(chain.ordered, bisect.bisect_left(chain.indices, read_at), same)
            if end == 0 or self._comes_round(read, chain, end, same):
                return None
        return chain.ordered, _last_kept(chain.ordered, end, same), same

    def _read_index(self, read: cst.Name, chain: _Chain) -> Optional[int]:
        """Where ``read`` is among its scope's bindings (None: not a read with a binding before it)."""
        scope = self._resolver.scope_of(read)
        access = scope.access_of(read) if scope is not None else None
        if access is None:
            return None
        first = chain.ordered[0]
        if chain.one_scope and first.scope is access.scope and first.index >= access.index:
            return None  # made before every binding of its own scope: it reads none of these
        return access.index

    def _comes_round(self, read: cst.Name, chain: _Chain, end: int, same: Sequence[object]) -> bool:
        """Can a binding after ``chain.ordered[end - 1]`` (the binding before the read, ``last``)
        reach ``read`` round a loop that ``last`` is outside of: a loop body enclosing both the
        binding and the read but not ``last``."""
        last = chain.ordered[end - 1]
        read_block, block = self._facts.block_of.get(read), self._facts.block_of.get(last.node)
        loop = self._facts.while_tests.get(read)  # a ``while`` test is read again after its body
        loops: List[Block] = []  # the loop bodies enclosing the read but not ``last``
        around = read_block
        while around is not None:
            if not around.encloses(block) and around.loop:
                loops.append(around)
            around = around.parent
        if not loops and loop is None:
            return False  # the usual case, answered without looking at every later binding
        later = [*same, *(a for a in chain.ordered[end:] if a not in same)]
        for binding in later:
            around = self._facts.block_of.get(binding.node)
            while around is not None:
                if any(around is other for other in loops) or (loop is not None and around.node is loop.body):
                    return True
                around = around.parent
        return False

    def _last_value(self, read: cst.Name, ordered: Sequence, end: int, skipped: Sequence[object] = ()) -> Optional[Value]:
        """The value of ``read`` from ``ordered[end - 1]`` (its last binding, leaving out
        ``skipped``), through augmented assignments back to a plain one; a loop, not
        a recursion per augmented assignment."""
        augmented: List[Binding] = []
        target: cst.Name = read
        value: Optional[Value] = None
        while end > 0:
            last = ordered[end - 1]
            block = self._facts.block_of.get(last.node)
            binding = self._bindings.get(last.node)
            if binding is None or block is None or not self._encloses(block, self._facts.block_of.get(target)):
                break
            if binding.how != "aug":
                value = self._filled(binding, self._name_container(last.node)) or self._binding_value(binding)
                break
            augmented.append(binding)
            target, end = last.node, _last_kept(ordered, end - 1, skipped)
        if augmented and end == 0:
            return None
        for binding in reversed(augmented):
            if value is None:
                return None
            if value.kind is Kind.TENSOR:
                continue
            added = self.value(binding.value)
            value = added if value.kind is Kind.NUMBER and added.kind is Kind.TENSOR else None
        return value

    def _differentiated_as_bound(self, read: cst.Name, dominated: "_Dominated") -> bool:
        """Is ``read``'s value, from the plain assignment that dominates it, the result
        of a callee the file differentiates with no gradient (``loss = 0``, ``loss +=
        ...``, then ``loss = compute_loss(...)`` where ``compute_loss``'s results go to
        ``.backward()``)? A ``.backward()`` of the name alone is not enough here: it
        proves one element, and ``loss = ctc(...) / n`` may be a 1-element 1-D tensor."""
        binding = self._dominating_binding(read, dominated)
        bound = self._bindings.get(binding.node) if binding is not None else None
        if bound is None or bound.how != "assign" or not isinstance(bound.value, cst.Call):
            return False
        return self._differentiated_result(bound)

    def _differentiated_result(self, bound: Binding) -> bool:
        """Is what ``bound`` (``x = f(...)``, or ``_, loss = f(...)``) takes from its call a
        result of the callee the file differentiates with no gradient, at the same place?"""
        if bound.path:
            # ``_, loss, acc = classifier(batch)`` and ``loss.backward()``: that element of
            # the callee's results is what the file differentiates.
            return not self._opaque_callee(bound.value.func) and (
                self._callee_key(bound.value.func), tuple(bound.path)) in self._differentiated_callees()
        return self._differentiated_call(bound.value)

    def _backward_of_binding(self, read: cst.Name, dominated: "_Dominated") -> bool:
        """Does a ``.backward()`` call receive the value ``read`` has: a receiver of the
        same name whose value comes from the same plain assignment?"""
        binding = self._dominating_binding(read, dominated)
        return binding is not None and binding in self._differentiated_bindings(read)

    def _differentiated_bindings(self, read: cst.Name) -> FrozenSet[object]:
        """The bindings of ``read``'s name that are the last before a ``name.backward()``
        with no gradient in its scope, in a block enclosing the call (plain or augmented):
        each gives a one-element tensor, the only kind that takes that call."""
        scope = self._resolver.scope_of(read)
        key = (scope, read.value)
        known = self._differentiated_by_name.get(key)
        if known is not None:
            return known
        found: Set[object] = set()
        if self._backward_called(read):
            for receiver in self._facts.backward_receivers:
                if receiver.value != read.value or self._resolver.scope_of(receiver) is not scope:
                    continue
                assignments = self._resolver.assignments(receiver)
                dominated = self._dominating_end(receiver, assignments) if assignments else None
                if dominated is None:
                    continue
                ordered, end, _ = dominated
                last = ordered[end - 1] if end > 0 else None
                block = self._facts.block_of.get(last.node) if last is not None else None
                if block is not None and self._encloses(block, self._facts.block_of.get(receiver)):
                    found.add(last)
        self._differentiated_by_name[key] = frozenset(found)
        return self._differentiated_by_name[key]

    def _one_element_if_differentiated(self, assignment, value: Value, read: cst.Name) -> Value:
        """``value``, the tensor ``assignment`` binds, with one element where the binding
        is the last before a ``name.backward()`` with no gradient in its scope: only a
        one-element tensor takes that (an augmented ``loss += x * coeff`` too: what is
        added broadcasts into one element, so it has one)."""
        if value.kind is not Kind.TENSOR or value.one_element or assignment not in self._differentiated_bindings(read):
            return value
        return replace(value, one_element=True)

    def _backward_called(self, name: cst.Name) -> bool:
        if self._backward is None:
            self._backward = {(self._resolver.scope_of(r), r.value) for r in self._facts.backward_receivers}
        return (self._resolver.scope_of(name), name.value) in self._backward

    def only_binding(self, name: cst.Name) -> Optional[Binding]:
        """How a name read gets its value, when one assignment, ``for`` or
        augmented assignment is all that binds it (None otherwise)."""
        assignments = self._resolver.assignments(name)
        if len(assignments) != 1:
            return None
        node = getattr(next(iter(assignments)), "node", None)
        return self._bindings.get(node) if isinstance(node, cst.Name) else None

    def _from_differentiated_callee(self, assignments) -> bool:
        """Is the name's only binding ``name = f(...)`` of a callee another call of
        which gives a value the file differentiates with no gradient
        (``loss = self.criterion(o, t)`` then ``loss.backward()`` in the train loop)?
        The callee returns one-element tensors then, in the eval loop beside it too.
        The same callee: ``self.attr`` of the same class, or a name with the same bindings."""
        if len(assignments) != 1:
            return False
        node = getattr(next(iter(assignments)), "node", None)
        binding = self._bindings.get(node) if isinstance(node, cst.Name) else None
        if binding is None or binding.how != "assign" or not isinstance(binding.value, cst.Call):
            return False
        return self._differentiated_result(binding)

    def _differentiated_call(self, call: cst.Call) -> bool:
        """Does the file differentiate, with no gradient, a result of ``call``'s callee,
        one torch's reductions or the project's code makes? An opaque package's loss
        (``torchbiomed.loss.dice_loss``, built on ``torch.FloatTensor(1)``) is one
        element when differentiated, which is not 0 dimensions."""
        if self._opaque_callee(call.func):
            return False
        key = self._callee_key(call.func)
        if key is not None and key in self._differentiated_callees():
            return True
        # The train loop may sit in a def the narrowed text cut: the whole file's tree says.
        spelled = self._spelled_callee(call.func)
        return spelled is not None and spelled in differentiated_callees(self._resolver.file_outline())

    def _opaque_result(self, assignment) -> bool:
        """Is the binding ``name = f(...)`` of a callee from an opaque package?"""
        binding = self._bindings.get(getattr(assignment, "node", None))
        return (binding is not None and not binding.path and isinstance(binding.value, cst.Call)
                and self._opaque_callee(binding.value.func))

    def _opaque_callee(self, func: cst.BaseExpression, depth: int = 0) -> bool:
        """``func`` imported from an opaque package (``ProjectLink.opaque``), or a name
        bound once to an instance of such a package's class (``criterion = bioloss.DiceLoss()``)."""
        qualified = self._resolver.resolve(func)
        if qualified is not None:
            return self.project.opaque(qualified)
        if depth or not isinstance(func, cst.Name):
            return False
        binding = self.only_binding(func)
        return (binding is not None and binding.how == "assign" and not binding.path
                and isinstance(binding.value, cst.Call) and self._opaque_callee(binding.value.func, 1))

    def _spelled_callee(self, func: cst.BaseExpression) -> Optional[Tuple[Optional[str], str]]:
        """A callee as ``outline.differentiated_callees`` names it: a module-level
        name (every binding it may see is at module level), or ``self.attr`` in a
        method of a top-level class."""
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            classdef = self._self_class(func.value)
            if classdef is not None:
                top = any(statement is classdef for statement in self._facts.module.body)
                return (classdef.name.value, func.attr.value) if top else None
        root = func
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name):
            return None
        spelled = get_full_name_for_node(func)
        # Every binding the root may see is at module level (or there is none: a global read).
        if spelled is not None and all(
                isinstance(a, Assignment) and a.scope is a.scope.globals and not isinstance(a.node, cst.Param)
                for a in self._resolver.assignments(root)):
            return None, spelled
        return None

    def _differentiated_callees(self) -> Set[object]:
        """``_callee_key``s of the calls whose results a ``.backward()`` with no gradient proves."""
        if self._differentiated is None:
            self._differentiated = set()
            for receiver in self._facts.backward_receivers:
                # The binding the differentiated value comes from: the one dominating the
                # call, or the only one. (``loss = ctc(...)``, ``loss = loss / n``,
                # ``loss.backward()`` differentiates a quotient: it says nothing of ``ctc``'s shape.)
                assignments = self._resolver.assignments(receiver)
                dominated = self._dominating_end(receiver, assignments)
                last = self._dominating_binding(receiver, dominated) if dominated is not None else None
                if last is None and len(assignments) == 1:
                    last = next(iter(assignments))
                binding = self._bindings.get(getattr(last, "node", None)) if last is not None else None
                if binding is not None and binding.how == "assign" and isinstance(binding.value, cst.Call):
                    key = self._callee_key(binding.value.func)
                    if key is not None:
                        # An element of what the callee returns (``_, loss = f(x)``) by its place.
                        self._differentiated.add((key, tuple(binding.path)) if binding.path else key)
        return self._differentiated

    def _callee_key(self, func: cst.BaseExpression) -> Optional[object]:
        """What a callee expression names, alike wherever it is spelled: ``self.attr``
        by (class, attribute), a name by its bindings; None for anything else."""
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            classdef = self._self_class(func.value)
            return (classdef, func.attr.value) if classdef is not None else None
        if isinstance(func, cst.Name):
            nodes = [getattr(a, "node", a) for a in self._resolver.assignments(func)]
            if any(isinstance(node, cst.Param) for node in nodes):
                return None  # a parameter: what each call is given may differ (``out.backward(grad)``)
            return frozenset(id(node) for node in nodes) or None
        return None

    def _sized(self, name: cst.Name) -> bool:
        if self._sized_names is None:
            self._sized_names = {(self._resolver.scope_of(r), r.value) for r in self._facts.sized_receivers}
        return (self._resolver.scope_of(name), name.value) in self._sized_names

    def _counted(self, name: cst.Name) -> bool:
        """Does a ``range(...)`` (``xrange`` in Python 2) read what ``name``'s bindings give
        (also from a comprehension, a scope of its own)?"""
        if self._counted_names is None:
            self._counted_names = {
                binding for func, counted in self._facts.counted_names
                if self._resolver.resolve(func) == "builtins.range"
                or (func.value == "xrange" and not self._resolver.assignments(func))  # Python 2's
                for binding in self._resolver.assignments(counted)}
        bindings = self._resolver.assignments(name)
        return bool(bindings) and bindings <= self._counted_names

    def _proves_tensor(self, callee: cst.BaseExpression, kind: Optional[cst.BaseExpression]) -> bool:
        """``isinstance(x, torch.Tensor)`` or ``torch.is_tensor(x)``: a test only a tensor passes."""
        name = self._resolver.resolve(callee)
        if name == "torch.is_tensor":
            return kind is None
        return name == "builtins.isinstance" and kind is not None and self._resolver.resolve(kind) in api.TENSOR_CLASSES

    def _assignment_value(self, assignment) -> Value:
        node = getattr(assignment, "node", None)  # builtins have no node
        if isinstance(assignment, ImportAssignment):
            return UNKNOWN
        if isinstance(node, cst.Param):
            classdef = self._self_params.get(node)
            given = self._given.get(node) if self._origin is not None else None
            if classdef is None and given is not None and given != NOT_NONE and given in _CONSTANT_VALUES:
                return _CONSTANT_VALUES[given]  # what the call being worked out passes
            if classdef is None:
                return self._parameter_value(node)
            owner = self._definition_name(classdef)
            if self.is_module_class(classdef):
                return Value(Kind.MODULE, instance_of=owner)
            return Value(Kind.OBJECT, instance_of=owner) if owner is not None else UNKNOWN
        if isinstance(node, cst.Name):
            binding = self._bindings.get(node)
            if binding is not None and binding.how == "assign" and self._raises_name_error(binding.value):
                return _PENDING  # ``args = parser.parse_args()`` with no ``parser`` anywhere: never bound so
            if binding is not None:
                return self._filled(binding, self._name_container(node)) or self._binding_value(binding)
        if isinstance(node, cst.FunctionDef) and self._definition_name(node) is None and self._nested(node):
            # A def inside a def: no project key names it, so its value carries what it returns
            # (to the code that calls it, or that its enclosing def returns it to).
            return Value(Kind.FUNCTION, returns=self.function_return(node))
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            key = self._definition_name(node)
            return Value(Kind.FUNCTION, calls=key) if key is not None else UNKNOWN
        return UNKNOWN

    def _raises_name_error(self, value: cst.BaseExpression) -> bool:
        """Does evaluating ``value`` start with a name nothing binds (``parser.parse_args(...)``
        in a module that never defines ``parser``, imports it, or may bind it unseen)? It
        raises ``NameError`` then: the assignment never completes."""
        head = value
        while isinstance(head, (cst.Attribute, cst.Call, cst.Subscript)):
            head = head.func if isinstance(head, cst.Call) else head.value
        if not isinstance(head, cst.Name) or self._resolver.assignments(head):
            return False
        spelled = head.value
        if hasattr(builtins, spelled) or spelled in _PYTHON2_BUILTINS or (
                spelled.startswith("__") and spelled.endswith("__")):
            return False
        return not self._may_bind_unseen()

    def _may_bind_unseen(self) -> bool:
        """May the module bind names no statement spells: a star import of a module whose
        names the project model does not know (those it knows are bindings, as spelled),
        ``globals()``, ``locals()``, ``vars()``, ``exec``, ``__builtins__``?"""
        if self._binds_unseen is None:
            module = self._facts.module
            text = module.code if module is not None else ""
            self._binds_unseen = module is None or bool(_UNSEEN_BINDINGS.search(text)) or any(
                self.project.star_exports(spelled) is None for spelled in _star_imports(module))
        return self._binds_unseen

    def _nested(self, function: cst.FunctionDef) -> bool:
        scope = self._resolver.scope_of(function)
        return scope is not None and scope is not scope.globals and not isinstance(scope, ClassScope)

    def _parameter_value(self, param: cst.Param) -> Value:
        """A parameter of a top-level def takes what its calls agree on, when the
        file's calls are all the calls there are: the def is only ever called
        here (never passed on as a value) in a script (``if __name__ ==
        "__main__":``) or under a private name. A library's public function
        may be called from anywhere with anything: unknown."""
        function = self._facts.param_function.get(param)
        if function is None or param.star not in ("", cst.MaybeSentinel.DEFAULT):
            return UNKNOWN
        key = self._definition_name(function)
        if key is not None and self._only_called_here(function.name.value):
            return self.project.parameter_value(key, param.name.value)
        target = self._call_target(function, param)
        return self.project.parameter_from_project(target) if target is not None else UNKNOWN

    def _call_target(self, function: cst.FunctionDef, param: cst.Param) -> Optional["CallTarget"]:
        """``param`` of a top-level def, or of a method of a top-level class called on
        its instances, as the project's calls of it are asked about; None for a
        decorated def (a decorator may call it any way) or another parameter."""
        found = self._def_target(function)
        if found is None:
            return None
        target, positional = found
        if param not in positional and param not in function.params.kwonly_params:
            return None  # ``self``, ``*args``
        position = positional.index(param) if param in positional else None
        default = self.value(param.default) if param.default is not None else None
        return replace(target, parameter=param.name.value, position=position, default=default)

    def _def_target(self, function: cst.FunctionDef) -> Optional[Tuple["CallTarget", List[cst.Param]]]:
        """The def as its calls are asked about (``CallTarget`` with no parameter yet), and
        the parameters a call passes positionally; None for a def no key names, or one a
        decorator other than ``@staticmethod`` wraps (it may call it any way)."""
        if function.asynchronous is not None:
            return None
        decorators = [cst.helpers.get_full_name_for_node(d.decorator) for d in function.decorators]
        static = decorators == ["staticmethod"]
        if decorators and not static:
            return None
        positional = [*function.params.posonly_params, *function.params.params]
        key, method = self._definition_name(function), None
        if key is None:
            if static:
                scope = self._resolver.scope_of(function)
                classdef = scope.node if isinstance(scope, ClassScope) else None
            else:
                classdef = self._self_params.get(positional[0]) if positional else None
                positional = positional[1:]
            key = self._definition_name(classdef) if isinstance(classdef, cst.ClassDef) else None
            if key is None:
                return None
            method = function.name.value
            if method == "__init__" and not static:
                # ``Trainer(config, loader)`` passes ``__init__``'s parameters after ``self``: the
                # class's calls are its constructor's (any other use of the class, a subclass
                # or a handed-on reference, leaves the parameter unknown).
                return CallTarget(key, None, classdef.name.value, "", None, None), positional
        return CallTarget(key, method, function.name.value, "", None, None, static), positional

    def forwarding_target(self, call: cst.Call, target: "CallTarget") -> Optional["CallTarget"]:
        """Where ``call`` hands on its def's own ``*args`` / ``**kwargs`` (``model =
        GANimation(*args, **kwargs)`` in ``def get_by_name(model_name, *args, **kwargs)``)
        and ``target``'s argument is among them: that def's parameter whose callers pass
        it (what they give after ``model_name``). None where the call passes anything
        else starred, or the argument is not handed on."""
        scope = self._resolver.scope_of(call)
        function = getattr(scope, "node", None)
        if not isinstance(function, cst.FunctionDef):
            return None
        found = self._def_target(function)
        if found is None:
            return None
        outer, positional = found
        params = function.params
        star = params.star_arg.name.value if isinstance(params.star_arg, cst.Param) else None
        double = params.star_kwarg.name.value if params.star_kwarg is not None else None
        leading, starred, keywords = 0, False, False
        for arg in call.args:
            if arg.star == "*":
                if starred or star is None or not self._only_parameter(arg.value, star):
                    return None
                starred = True
            elif arg.star == "**":
                if double is None or not self._only_parameter(arg.value, double):
                    return None
                keywords = True
            elif arg.keyword is None:
                if starred:
                    return None
                leading += 1
        if target.position is not None and target.position < leading:
            return None  # passed here, not handed on
        position = None
        if target.position is not None and starred:
            position = len(positional) + target.position - leading
        elif not keywords:
            return None
        return replace(outer, parameter=target.parameter, position=position, default=target.default)

    def _only_parameter(self, expr: cst.BaseExpression, name: str) -> bool:
        """Is ``expr`` the name ``name`` bound only as its def's parameter?"""
        if not isinstance(expr, cst.Name) or expr.value != name:
            return False
        assignments = self._resolver.assignments(expr)
        return len(assignments) == 1 and isinstance(getattr(next(iter(assignments)), "node", None), cst.Param)

    def definition_key(self, definition: cst.CSTNode) -> Optional[str]:
        """The key by which the project knows a top-level def or class of this file."""
        return self._definition_name(definition)

    def _only_called_here(self, name: str) -> bool:
        return name in parameters_from_calls(self._resolver.file_outline())

    def call_site_value(self, function: cst.FunctionDef, parameter: str) -> Value:
        """What the calls of ``function`` in this file agree its ``parameter`` is
        (a call missing it gives the default); unknown when none passes it
        visibly (``*args``, ``**kwargs``)."""
        params = list(function.params.posonly_params) + list(function.params.params)
        names = [p.name.value for p in params]
        found = [p for p in params + list(function.params.kwonly_params) if p.name.value == parameter]
        if not found:
            return UNKNOWN
        position = names.index(parameter) if parameter in names else None
        values = []
        for call in self._facts.calls:
            if self.local_definition(call.func) is not function:
                continue
            if any(arg.star for arg in call.args):
                return UNKNOWN
            argument = _passed(call, position, parameter)
            if argument is None:
                argument = found[0].default
            if argument is None:
                return UNKNOWN
            values.append(self.value(argument))
        return meet(values)

    def callers_may_differentiate(self, function: cst.FunctionDef) -> bool:
        """May what ``function`` returns be differentiated where it is called? False only
        for a top-level def whose calls are all in this file (``parameters_from_calls``)
        and none of whose callers differentiates anything (``result_may_be_differentiated``),
        answered from the whole module, whatever part of it is being checked."""
        key = self._definition_name(function)
        if key is None or function.name.value not in parameters_from_calls(self._resolver.file_outline()):
            return True
        return self.project.result_may_be_differentiated(key)

    def result_may_be_differentiated(self, function: cst.FunctionDef) -> bool:
        """May a call of ``function`` in this file hand its result to autograd? Not when
        every call either drops the result or binds it to plain names in a def (or the
        module) that runs no backward, ``torch.autograd`` call or ``scaler.scale`` and
        returns none of those names. True at the first doubt."""
        calls = [call for call in self._facts.calls if self.local_definition(call.func) is function]
        if not calls:
            return True
        for call in calls:
            statement = self._facts.call_statement.get(call)
            if isinstance(statement, cst.Expr) and statement.value is call:
                continue
            if not (isinstance(statement, cst.Assign) and statement.value is call):
                return True
            names = {n.value for t in statement.targets for n in _plain_targets(t.target)}
            if not names or self._differentiates_around(call, names):
                return True
        return False

    def differentiates_where(self, node: cst.CSTNode) -> bool:
        """Does the def (or module code) holding ``node`` differentiate anything
        (a backward, ``torch.autograd.grad``, ``scaler.scale``)? True at the first doubt."""
        return self._differentiates_around(node, set())

    def _differentiates_around(self, call: cst.CSTNode, names: Set[str]) -> bool:
        """Does the def (or module) holding ``call`` differentiate anything, or return ``names``?"""
        scope = self._resolver.scope_of(call)
        if scope is None:
            return True
        body = self._facts.module if scope is scope.globals else getattr(scope, "node", None)
        if body is None:
            return True
        finder = _AutogradUse(self._resolver, names, body)
        body.visit(finder)
        return finder.found

    def _filled(self, binding: Binding, container: object) -> Optional[Value]:
        """An empty list or dict bound here, then filled in place (``losses = {}``,
        ``losses[k] = v`` or ``losses.append(v)`` anywhere the container is named so):
        a sequence or mapping of what all the stores agree on. None when the
        binding is no empty container or nothing is stored."""
        if binding.how != "assign" or binding.path or container is None:
            return None
        made = self._empty_container(binding.value)
        if made is None:
            return self._stored_into(binding, container)
        stores = self._item_stores().get(container, [])
        direct = [store for store in stores if not isinstance(store, NestedStore)]
        if not direct:
            return None
        if any(store is None for store in direct):
            return UNKNOWN
        element = meet(self._binding_value(store) for store in direct)
        element = self._after_nested_stores(element, [s for s in stores if isinstance(s, NestedStore)])
        return Value(made, element=element) if made is Kind.MAPPING else Value(Kind.TUPLE, element=element)

    def _stored_into(self, binding: Binding, container: object) -> Optional[Value]:
        """A dict or list made with elements (``{"<pad>": 0}``), then stored into
        in place: its elements meet what the stores put there (a list of them, its
        length no longer known). None when nothing is stored, or the value is no
        dict or list (``x[0] = 1`` on a tensor changes no kind)."""
        stores = self._item_stores().get(container)
        if not stores or not isinstance(binding.value, (cst.Dict, cst.List)):
            return None
        if any(store is None or isinstance(store, NestedStore) for store in stores):
            return UNKNOWN
        if isinstance(binding.value, cst.List):
            if any(not isinstance(e, cst.Element) for e in binding.value.elements):
                return UNKNOWN  # ``[*a]``
            held = [self.value(e.value) for e in binding.value.elements]
        else:
            made = self._binding_value(binding)
            if made.kind is not Kind.MAPPING or made.element is None:
                return UNKNOWN
            held = [made.element]
        element = meet([*held, *(self._binding_value(store) for store in stores)])
        return Value(Kind.MAPPING if isinstance(binding.value, cst.Dict) else Kind.TUPLE, element=element)

    def _after_nested_stores(self, element: Value, nested: List[NestedStore]) -> Value:
        """The elements of a container after stores into them: a dict element
        (``{'placeholder': p}``) with ``c[k]['value'] = v`` holds ``v`` under
        'value' and either under any other key; any other store into an element
        leaves it unknown."""
        if not nested:
            return element
        if element.kind is not Kind.MAPPING or any(n.key is None or n.binding is None for n in nested):
            return UNKNOWN
        stored: Dict[str, List[Value]] = {}
        for store in nested:
            stored.setdefault(store.key, []).append(self._binding_value(store.binding))
        keys = dict(element.keys)
        for key, values in stored.items():
            # Read before the store, the key held what the element was made with (if it had it).
            keys[key] = meet([*values, keys[key]] if key in keys else values)
        anything = meet([element.element or UNKNOWN, *(v for values in stored.values() for v in values)])
        return Value(Kind.MAPPING, element=anything, keys=tuple(keys.items()))

    def _empty_container(self, expr: cst.BaseExpression) -> Optional[Kind]:
        """MAPPING for ``{}``/``dict()``/``OrderedDict()``, TUPLE for ``[]``/``list()``; else None."""
        if isinstance(expr, cst.Dict) and not expr.elements:
            return Kind.MAPPING
        if isinstance(expr, cst.List) and not expr.elements:
            return Kind.TUPLE
        if isinstance(expr, cst.Call) and not expr.args:
            callee = self._resolver.resolve(expr.func)
            if callee in _EMPTY_MAPPINGS:
                return Kind.MAPPING
            if callee == "builtins.list":
                return Kind.TUPLE
        return None

    def _name_container(self, name: cst.Name) -> object:
        return (self._resolver.scope_of(name), name.value)

    def _item_stores(self) -> Dict[object, List[Optional[Binding]]]:
        """Container -> what goes into it: a name by (scope, name), ``self.attr`` by (class, attr)."""
        if self._stores is None:
            stores: Dict[object, List[Optional[Binding]]] = {}
            for container, store in self._facts.item_stores:
                if isinstance(container, cst.Name):
                    key: object = self._name_container(container)
                else:
                    receiver, attribute = container
                    classdef = self._self_class(receiver)
                    key = (classdef, attribute) if classdef is not None else None
                if key is not None:
                    stores.setdefault(key, []).append(store)
            self._stores = stores
        return self._stores

    def _binding_value(self, binding: Binding) -> Value:
        if binding.how == "assign":
            return self._unpack(binding.value, binding.path)
        if binding.how == "for":
            return self._iterated(binding.value, binding.path)
        if binding.how == "aug":
            # ``total += loss``: adds to whatever total was; only the right
            # side brings information.
            added = self.value(binding.value)
            if added is _PENDING:
                # ``avg += (loss - avg) / n``, asked from inside its own right side: no
                # information, as ``avg = avg + (loss - avg) / n`` gives none there.
                return _PENDING
            if added.kind is Kind.UNKNOWN and added.if_tensor is not None:
                return Value(Kind.UNKNOWN, if_tensor=added.if_tensor)  # ``loss += x.abs().mean()``
            if added.kind is Kind.UNKNOWN and added.unless_number is not None:
                return Value(Kind.UNKNOWN, unless_number=added.unless_number)  # ``loss += helper(...)``
            return added if added.kind in (Kind.TENSOR, Kind.NUMBER) else UNKNOWN
        return UNKNOWN

    def _unpack(self, value: cst.BaseExpression, path: Tuple[int, ...]) -> Value:
        for depth, index in enumerate(path):
            if not isinstance(value, (cst.Tuple, cst.List)):
                return _element(self.value(value), path[depth:])
            elements = value.elements
            if any(isinstance(e, cst.StarredElement) for e in elements) or index >= len(elements):
                return UNKNOWN
            value = elements[index].value
        return self.value(value)

    def _iterated(self, iterable: cst.BaseExpression, path: Tuple[int, ...]) -> Value:
        """The value of a ``for`` target at ``path`` over ``iterable``."""
        if isinstance(iterable, cst.Call) and iterable.args and iterable.args[0].keyword is None:
            callee = self._resolver.resolve(iterable.func)
            inner = iterable.args[0].value
            if callee == "builtins.enumerate":
                if not path:
                    return UNKNOWN
                return NUMBER if path[0] == 0 and len(path) == 1 else (
                    self._iterated(inner, path[1:]) if path[0] == 1 else UNKNOWN)
            if callee in api.ITERATION_WRAPPERS:
                return self._iterated(inner, path)
            if callee == "builtins.zip":
                # ``for group, lr in zip(self.param_groups, lrs)``: each target walks its own iterable.
                zipped = [arg.value for arg in iterable.args if arg.keyword is None and not arg.star]
                if not path or len(zipped) != len(iterable.args) or path[0] >= len(zipped):
                    return UNKNOWN
                return self._iterated(zipped[path[0]], path[1:])
            if callee == "builtins.range" and not path:
                return NUMBER
        if isinstance(iterable, cst.Call) and not iterable.args and isinstance(iterable.func, cst.Attribute):
            # ``d.values()`` / ``d.items()`` of a mapping whose values all agree.
            mapping = self.value(iterable.func.value)
            method = iterable.func.attr.value
            if mapping.kind is Kind.MAPPING and mapping.element is not None:
                if method == "values":
                    return _element(mapping.element, path)
                if method == "items" and path[:1] == (1,):
                    return _element(mapping.element, path[1:])
            return UNKNOWN if mapping.kind is Kind.MAPPING else self._iterated_value(iterable, path)
        return self._iterated_value(iterable, path)

    def _iterated_value(self, iterable: cst.BaseExpression, path: Tuple[int, ...]) -> Value:
        source = self.value(iterable)
        if source.kind is Kind.TUPLE and not source.items and source.element is not None:
            return _element(source.element, path)  # a list filled with values all alike
        if source.kind is Kind.LOADER:
            # A batch itself may be a list or dict; its unpacked parts are tensors.
            return TENSOR if path else UNKNOWN
        if source.kind is Kind.TENSOR and not path:
            # Each step is one slice along the first dimension.
            return Value(Kind.TENSOR, cuda=source.cuda, ndim=source.ndim - 1 if source.ndim else None)
        return UNKNOWN

    def _call_value(self, call: cst.Call) -> Value:
        func = call.func
        if isinstance(func, cst.Attribute):
            method_value = self._method_call_value(call, func)
            if method_value is not None:
                return method_value
        callee_name = self._resolver.resolve(func)
        if callee_name is not None:
            known = self._known_callee_value(call, callee_name)
            if known.kind is Kind.UNKNOWN and not callee_name.startswith(api.TORCH_PACKAGES):
                absolute = self.project.absolute(callee_name)
                arguments = self._call_arguments(call)
                if absolute is not None and arguments is not None:
                    fed = self._self_fed_call(call, absolute, arguments)
                    if fed is not None:
                        return fed
                project_value = self.project.call_value(absolute, arguments) if absolute is not None else None
                returned = self.project.returned_parameters(absolute, arguments) if absolute is not None else ()
                if project_value is None and returned:
                    # A call inside the answer being worked out (``model, loss = train(model)``
                    # in a loop, whose ``model`` the call sites give): what it passes back is
                    # still known.
                    project_value = Value(Kind.TUPLE, items=(UNKNOWN,) * len(returned)) if len(returned) > 1 else UNKNOWN
                if project_value is not None:
                    return self._passed_back(call, returned, project_value)
                return known
            return known
        definitions = self._project_definitions(func)
        if definitions:
            arguments = self._call_arguments(call)
            made = [self.project.call_value(key, arguments) for key in definitions]
            if None not in made:
                return meet(made)  # type: ignore[arg-type]
        fields = self._namedtuple_fields(func)
        if fields is not None:
            return self._namedtuple_value(call, fields)
        callee = self.value(func)
        if callee.kind is Kind.UNKNOWN and isinstance(func, cst.Name):
            callee = self._called_binding(func)
        if callee.kind is Kind.UNKNOWN and isinstance(func, cst.Attribute):
            # ``self.criterion = None`` in ``__init__``, a loss module later: a call that runs
            # did not call None (or a number).
            owners = self._attribute_owners(func.value, func.attr.value)
            if owners is not None:
                callee = self._member(owners, func.attr.value, called=False, numbers=False)
        if callee.kind is Kind.FUNCTION and callee.items:
            return meet(self._alternative_call_value(call, alternative) for alternative in callee.items)
        if callee.kind is Kind.MODULE:
            return self._asked_with_arguments(call, lambda arguments: self._module_call_value(callee, arguments, call))
        if callee.kind is Kind.OBJECT and callee.instance_of is not None:
            return self._asked_with_arguments(call, lambda arguments: self._member(
                callee.instance_of, "__call__", called=True, arguments=arguments))
        if callee.kind is Kind.FUNCTION and callee.returns is not None:
            return callee.returns
        local = self.local_definition(func)
        if local is not None:
            key = self._definition_name(local)
            arguments = self._call_arguments(call)
            fed = self._self_fed_call(call, key, arguments) if key is not None and arguments is not None else None
            if fed is not None:
                return fed
            project_value = self.project.call_value(key, arguments) if key is not None else None
            if project_value is not None:
                return self._passed_back(call, self.project.returned_parameters(key, arguments), project_value)  # type: ignore[arg-type]
            if isinstance(local, cst.ClassDef) and self.is_module_class(local):
                return MODULE
            if isinstance(local, cst.FunctionDef) and key is not None and self._in_compound_statement(local):
                # A def of the module the project model does not key (one under ``if
                # __name__ == "__main__":``: it keys only top-level statements).
                return self.function_return(local, self._call_arguments(call))
        elif callee.kind is Kind.FUNCTION and callee.calls is not None:
            return self._referenced_call(call, callee.calls)  # ``criterion = losses.mse``, then ``criterion(a, b)``
        return UNKNOWN

    def _called_binding(self, name: cst.Name) -> Value:
        """What a called name holds where it may also hold None (``criterion=None`` and
        ``if criterion is None: criterion = losses.mse``): a call that runs did not call
        None, so the other bindings decide."""
        values = [self._assignment_value(a) for a in self._resolver.assignments(name)]
        called = [v for v in values if v.kind is not Kind.NONE]
        if not called or len(called) == len(values) or not all(v.kind in _CALLABLE for v in called):
            return UNKNOWN
        return meet(called)

    def _alternative_call_value(self, call: cst.Call, callee: Value) -> Value:
        """What ``call`` gives where its callee is ``callee``, one of the modules and
        functions the called name may hold."""
        if callee.kind is Kind.MODULE:
            return self._asked_with_arguments(call, lambda arguments: self._module_call_value(callee, arguments, call))
        if callee.returns is not None:
            return callee.returns
        return self._referenced_call(call, callee.calls) if callee.calls is not None else UNKNOWN

    def _reloaded(self, load: cst.Call) -> Optional[Value]:
        """``torch.load(path)`` of what its own def saved to the same path expression
        before (``torch.save(model, best)`` in the epochs, then ``model =
        torch.load(best)`` to test the best): what those saves wrote, back on the device
        it was saved from (``map_location``: anywhere). None when no save comes first."""
        source = path_argument(load, 0, "f")
        scope = self._resolver.scope_of(load)
        if source is None or scope is None or scope is scope.globals:
            return None
        key, saved, past_load = path_key(source), [], False
        for call in self._facts.calls:
            past_load = past_load or call is load
            path = path_argument(call, 1, "f")
            if path is None or self._resolver.resolve(call.func) not in api.TORCH_SAVE or \
                    self._resolver.scope_of(call) is not scope or path_key(path) != key:
                continue
            obj = path_argument(call, 0, "obj")
            if obj is None or (past_load and not saved):
                return None  # the first save comes after the load: a file of an earlier run
            saved.append(self.value(obj))
        if not saved:
            return None
        value = replace(meet(saved), loss=False)
        return replace(value, cuda=None) if path_argument(load, 1, "map_location") is not None else value

    def _callable_reference(self, qualified: Optional[str]) -> Value:
        """The value of a name for a callable, not called here (``criterion =
        losses.symmetric_mse``, ``loss_fn=F.cross_entropy``): a FUNCTION a later call
        of it calls, for a def or class of the project and for torch's losses, reductions,
        functions of ``torch.nn.functional`` and ``nn`` classes; UNKNOWN for anything else."""
        if qualified is None:
            return UNKNOWN
        if qualified.startswith(api.TORCH_PACKAGES):
            known = (qualified in api.LOSS_FUNCTION_PARAMS or qualified.startswith(api.FUNCTIONAL)
                     or api.is_nn_class(qualified) or qualified in _DIM_SECOND
                     # ``self._Tensor = torch.cuda.FloatTensor if gpu else torch.Tensor``
                     or qualified in api.CUDA_TENSOR_TYPES or qualified in api.ARRAY_TO_TENSOR)
            return Value(Kind.FUNCTION, calls=qualified) if known else UNKNOWN
        key = self.project.callable_key(qualified)
        return Value(Kind.FUNCTION, calls=key) if key is not None else UNKNOWN

    def _referenced_call(self, call: cst.Call, callables: str) -> Value:
        """What calling a FUNCTION value gives: what each callable it may name
        returns for these arguments, where they agree."""
        made = []
        for name in callables.split(_OWNERS):
            if name.startswith(api.TORCH_PACKAGES):
                made.append(self._known_callee_value(call, name))
                continue
            value = self.project.call_value(name, self._call_arguments(call))
            if value is None:
                return UNKNOWN
            made.append(self._passed_back(call, self.project.returned_parameters(name), value))
        return meet(made)

    def _in_compound_statement(self, definition: cst.CSTNode) -> bool:
        """Is ``definition``, of the module's scope, inside an ``if``, ``try`` or ``with``
        rather than one of the module's top-level statements?"""
        module = self._facts.module
        return module is not None and not any(statement is definition for statement in module.body)

    def _namedtuple_fields(self, func: cst.BaseExpression) -> Optional[List[str]]:
        """The fields of the namedtuple class ``func`` names, where its one binding is
        ``Context = namedtuple("Context", "model, optimizer, criterion")`` (or a list of
        the names); None for anything else."""
        if not isinstance(func, cst.Name):
            return None
        assignments = self._resolver.assignments(func)
        if len(assignments) != 1:
            return None
        node = getattr(next(iter(assignments)), "node", None)
        binding = self._bindings.get(node) if isinstance(node, cst.Name) else None
        made = binding.value if binding is not None and binding.how == "assign" and not binding.path else None
        if not isinstance(made, cst.Call) or self._resolver.resolve(made.func) != "collections.namedtuple":
            return None
        spec = made.args[1].value if len(made.args) >= 2 and made.args[1].keyword is None else None
        if isinstance(spec, cst.SimpleString):
            text = _literal_string(spec)
            return text.replace(",", " ").split() if text is not None else None
        if isinstance(spec, (cst.List, cst.Tuple)):
            names = [_literal_string(e.value) if isinstance(e, cst.Element) else None for e in spec.elements]
            return names if None not in names else None  # type: ignore[return-value]
        return None

    def _namedtuple_value(self, call: cst.Call, fields: List[str]) -> Value:
        """A namedtuple instance: a tuple whose items its fields also name."""
        if any(arg.star for arg in call.args):
            return Value(Kind.TUPLE)
        given: Dict[str, Value] = {}
        positional = [arg for arg in call.args if arg.keyword is None]
        for name, arg in zip(fields, positional):
            given[name] = self.value(arg.value)
        for arg in call.args:
            if arg.keyword is not None:
                given[arg.keyword.value] = self.value(arg.value)
        items = tuple(given.get(name, UNKNOWN) for name in fields)
        return Value(Kind.TUPLE, items=items, keys=tuple(zip(fields, items)))

    def _self_fed_call(self, call: cst.Call, key: str, arguments: Arguments) -> Optional[Value]:
        """``total = add_err(total, loss)`` in a loop: a call of a project function whose
        result is bound to a name it is passed, so that argument holds what the name held
        before (``total = None``) on the first run and the call's own result after. Worked
        out as a fixed point over what each argument holds (a literal's constant, None, a
        0-dim tensor): the call under the first runs' arguments, then under its own result
        for the fed one; where both agree that is the value, else None (ask as usual)."""
        fed = self._fed_argument(call)
        if fed is None:
            return None
        position, name = fed
        before = [self._assignment_value(a) for a in self._resolver.assignments(name)
                  if self._bindings.get(getattr(a, "node", None)) is None
                  or self._bindings[a.node].value is not call]
        first_token = _value_token(meet(before)) if before else None
        tokens = [_value_token(self.value(arg.value)) if token == UNKNOWN_ARGUMENT else token
                  for (_, token), arg in zip(arguments, call.args)]
        if first_token is None or any(token is None for token in tokens):
            return None
        given = [(keyword, token) for (keyword, _), token in zip(arguments, tokens)]
        given[position] = (given[position][0], first_token)
        first = self._project_call(call, key, tuple(given))  # type: ignore[arg-type]
        again = _value_token(first)
        if again is None:
            return None
        given[position] = (given[position][0], again)
        second = self._project_call(call, key, tuple(given))  # type: ignore[arg-type]
        if _value_token(second) != again:
            return None  # no fixed point among the values the arguments may hold
        return meet((first, second))

    def _fed_argument(self, call: cst.Call) -> Optional[Tuple[int, cst.Name]]:
        """The position and name of the argument that ``call``'s own result is bound to
        (``total = add_err(total, loss)``); None when there is none."""
        statement = self._facts.call_statement.get(call)
        if not (isinstance(statement, cst.Assign) and statement.value is call and len(statement.targets) == 1):
            return None
        target = statement.targets[0].target
        if not isinstance(target, cst.Name):
            return None
        for position, arg in enumerate(call.args):
            if arg.keyword is None and not arg.star and isinstance(arg.value, cst.Name) \
                    and arg.value.value == target.value:
                return position, arg.value
        return None

    def _project_call(self, call: cst.Call, key: str, arguments: Arguments) -> Value:
        """What calling the project function ``key`` as ``call`` does gives, under ``arguments``."""
        value = self.project.call_value(key, arguments)
        return self._passed_back(call, self.project.returned_parameters(key, arguments), value or UNKNOWN)

    def _passed_back(self, call: cst.Call, returned: Sequence[Optional[Sequence]], value: Value) -> Value:
        """What ``call`` of a project function gives back where the function returns a
        parameter unchanged (``returned_parameters``): the very argument the call passed
        (``model, loss = train(epoch, model)`` in a loop: ``model`` stays what it was)."""
        if not returned or any(arg.star for arg in call.args):
            return value
        passed = [_passed(call, item[0], item[1]) if item is not None else None for item in returned]
        if value.kind is Kind.TUPLE and len(value.items) == len(returned) and len(returned) > 1:
            return replace(value, items=tuple(self.value(argument) if argument is not None else known
                                              for argument, known in zip(passed, value.items)))
        if len(returned) == 1 and passed[0] is not None:
            return self.value(passed[0])
        return value

    def _project_definitions(self, func: cst.BaseExpression) -> List[str]:
        """The keys of the project definitions the imports of ``func``'s name reach, where it
        has several: ``try: from forget_mult import F`` / ``except ImportError: from
        .forget_mult import F`` (two spellings of one module), or one model class of several
        chosen by an ``if`` (``from models.vae import VAE`` / ``else: from models.conv
        import VAE``): the call makes one of them. Empty when some binding is not an import
        of the project's."""
        names = self._resolver.qualified_names(func)
        if len(names) < 2 or any(name.startswith("<local>.") for name in names):
            return []
        keys = {self.project.absolute(name) for name in names}
        return [] if None in keys else sorted(keys)  # type: ignore[arg-type]

    def _numpy_call(self, expr: cst.BaseExpression) -> bool:
        """Is ``expr`` a call of a NumPy function (``np.prod(x.size())``): a NumPy value."""
        if not isinstance(expr, cst.Call):
            return False
        callee = self._resolver.resolve(expr.func)
        return callee is not None and callee.startswith("numpy.")

    def _method_call_value(self, call: cst.Call, func: cst.Attribute,
                           receiver: Optional[Value] = None) -> Optional[Value]:
        """The value of ``receiver.method(...)``; None when the method says nothing."""
        method = func.attr.value
        receiver = receiver if receiver is not None else self._receiver_value(func.value)
        if receiver.unless_number is not None and method not in _NUMBER_METHODS:
            # Python numbers (and None) have no such method: a run that gets past it had the tensor.
            return self._method_call_value(call, func, receiver.unless_number)
        if method == "item" and not call.args and (
                receiver.kind is Kind.TENSOR or receiver.if_tensor is not None or self._numpy_call(func.value)):
            # ``x.sum().item()``, ``np.prod(shape).item()``: a tensor's or a NumPy value's
            # one element, as a Python number.
            return NUMBER
        if receiver.kind is Kind.UNKNOWN and receiver.if_tensor is not None:
            # ``x.mean().sqrt()``: where ``x.mean()`` is a tensor, what the tensor's method
            # gives; a method only tensors have proves it was one.
            as_tensor = self._method_call_value(call, func, receiver.if_tensor)
            if as_tensor is not None and as_tensor.kind is Kind.TENSOR:
                return as_tensor if method in api.TENSOR_ONLY_METHODS else Value(Kind.UNKNOWN, if_tensor=as_tensor)
        if receiver.kind is Kind.MODULE:
            if method in ("cuda", "to", "cpu", "float", "double", "half", "train", "eval"):
                return replace(receiver, cuda=_device_after(method, call, receiver.cuda))
            known = self._project_method_value(receiver, method, call)
            if known is None and method in api.PARAMETER_METHODS and not call.args:
                return _parameters_value(method)
            return known
        if receiver.kind is Kind.OBJECT:
            return self._project_method_value(receiver, method, call)
        if (receiver.kind is Kind.FUNCTION and receiver.calls is not None and _OWNERS not in receiver.calls
                and self.project.static_method(receiver.calls, method)):
            # ``Utils.dice(a, b)``: a static method called through its project class.
            return self._asked_with_arguments(call, lambda arguments: self.project.member_value(
                receiver.calls, method, called=True, arguments=arguments))
        if receiver.kind is Kind.OPTIONS:
            if method == "parse_known_args":
                return Value(Kind.TUPLE, items=(OPTIONS, OPTIONS))  # (options, the strings left over)
            return OPTIONS  # ``parser.parse_args()``, ``args.name.split(',')``
        if receiver.kind is Kind.TENSOR or receiver.cuda or receiver.dtype is not None:
            # A tensor, or something visibly sent to the GPU (only tensors
            # and modules have .cuda(), and modules have no tensor methods),
            # or visibly given a tensor dtype.
            if receiver.kind is Kind.TENSOR and method in api.SIZE_METHODS and (method != "size" or call.args):
                return NUMBER
            if receiver.kind is Kind.TENSOR and method == "size":
                return SIZES
            if receiver.kind is Kind.TENSOR and (method in api.SORTING_METHODS or (
                    method in ("max", "min") and self._dimension_only(call))):
                # (values, indices): sorted as large as the input, or reduced along the dimension.
                ndim = receiver.ndim if method in api.SORTING_METHODS else self._ndim_after(method, call, receiver.ndim)
                part = Value(Kind.TENSOR, cuda=receiver.cuda, ndim=ndim)
                return Value(Kind.TUPLE, items=(replace(part, dtype=receiver.dtype), replace(part, dtype="int64")))
            if method not in api.TENSOR_RETURNING_METHODS and not method.endswith("_"):
                return UNKNOWN
            if method in ("max", "min") and call.args:
                return UNKNOWN  # with a dim these return (values, indices); with a tensor, elementwise
            scalar = receiver.kind is Kind.TENSOR and (
                (receiver.scalar and method not in api.SHAPE_CHANGING_METHODS)
                or (method in api.FULL_REDUCTIONS and not call.args))
            ndim = self._ndim_after(method, call, receiver.ndim) if receiver.kind is Kind.TENSOR else None
            # In place, a method cannot change the receiver's shape (``x.zero_()``).
            kept = receiver.kind is Kind.TENSOR and (method in _ELEMENT_KEEPING_METHODS or (
                method.endswith("_") and method not in api.SHAPE_CHANGING_METHODS))
            made_of_one = method in _SIZED_NEW and bool(ndim) and _sizes_all_one(call, method)
            return Value(receiver.kind, scalar=scalar, cuda=_device_after(method, call, receiver.cuda),
                         dtype=self._dtype_after(method, call, receiver.dtype),
                         loss=receiver.loss and method not in api.NON_DIFFERENTIABLE_METHODS and method not in _SIZED_NEW,
                         ndim=ndim if not scalar else None,
                         one_element=(kept and receiver.one_element) or made_of_one,
                         partly_scalar=kept and receiver.partly_scalar)
        if receiver.kind is Kind.UNKNOWN and (method in api.TENSOR_ONLY_METHODS or (
                method in ("view", "new") and call.args
                and all(a.keyword is None and _integer_literal(a.value) for a in call.args))):
            # ``x.view(-1)``: NumPy's ``view`` takes a dtype, never a size; only a tensor takes sizes
            # (and only a tensor's legacy ``x.new(1)`` makes one of such sizes). A keyword is no
            # size: ``dl.new(num_workers=0)`` is a fastai loader's copy.
            # Only a tensor has this method: the receiver is one, and so is what it gives.
            return self._method_call_value(call, func, TENSOR)
        if method == "size" and len(call.args) == 1 and isinstance(call.args[0].value, cst.Integer):
            return NUMBER  # ``x.size(0)``: a tensor's length along a dimension
        if method == "size" and not call.args and receiver.kind is Kind.UNKNOWN:
            return SIZES  # ``x.size()``: a tensor's lengths (``x.size()[0]``, ``b, n, _ = x.size()``)
        if method in ("cuda", "to", "type") and receiver.kind is Kind.UNKNOWN:
            cuda = _device_after(method, call, None) if method != "type" else None
            dtype = self._dtype_after(method, call, None) if method != "cuda" else None
            if cuda or dtype == "uint8":
                # Modules convert only to floating dtypes (.to() refuses others, .type() fails
                # on their parameters): a uint8 conversion is a tensor's.
                return Value(Kind.UNKNOWN, cuda=True if cuda else None, dtype=dtype)
            return None
        if method == "byte" and not call.args and receiver.kind is Kind.UNKNOWN:
            return Value(Kind.UNKNOWN, dtype="uint8")  # only tensors have .byte()
        if method in api.FULL_REDUCTIONS and not call.args and (
                isinstance(func.value, cst.Comparison) or _dtype_conversion(func.value)):
            # ``(pred == y).sum()``: an elementwise comparison reduced to one
            # number; with ``.data[0]`` after it, only torch fits. ``b.float().mean()``:
            # a module converts to float but has no ``mean``, an array or a DataFrame
            # has no ``float()``: only a tensor gets there, reduced to 0-dim.
            return Value(Kind.TENSOR, scalar=True)
        if method == "nonzero" and not call.args and receiver.kind is Kind.UNKNOWN:
            # Of a tensor, one row of indices per nonzero element (2-D whatever its shape); of
            # an array or a Series, a tuple of arrays, which no ``[:, 0]`` or ``.data`` reads.
            return Value(Kind.UNKNOWN, if_tensor=Value(Kind.TENSOR, ndim=2, dtype="int64", cuda=receiver.cuda))
        if method in api.FULL_REDUCTIONS and not call.args and receiver.kind is Kind.UNKNOWN:
            # ``x.max()``: of a tensor, a 0-dim tensor; of an array a NumPy scalar, of a
            # DataFrame a Series (whose old ``.data`` took ``[0]``). Where the code proves
            # a tensor (``.data.cpu().numpy()``), it was the 0-dim one.
            return Value(Kind.UNKNOWN, if_tensor=Value(Kind.TENSOR, scalar=True, cuda=receiver.cuda))
        return None

    def _ndim_after(self, method: str, call: cst.Call, ndim: Optional[int]) -> Optional[int]:
        """How many dimensions ``<tensor of ndim>.method(...)`` has; None: unknown."""
        if method == "new" and any(isinstance(a.value, (cst.List, cst.Tuple)) for a in call.args):
            return None  # ``x.new([1, 2])``: the data, not sizes
        if method in api.RESHAPE_METHODS or (method in _SIZED_NEW and method != "new_full"):
            return self._sizes(call)
        if method == "new_full" and call.args and call.args[0].keyword is None:
            return self._sizes(cst.Call(func=call.func, args=call.args[:1]))
        if method == "nonzero" and not call.args:
            return 2  # one row of indices per nonzero element, whatever the input's shape
        if method in ("masked_select", "flatten", "ravel") and (method == "masked_select" or not call.args):
            return 1
        if method == "expand":
            return self._sizes(call)
        if method == "gather":
            return self._gathered_ndim(call, 1)
        if method == "matmul" and len(call.args) == 1 and call.args[0].keyword is None:
            other = self.value(call.args[0].value)
            return _matmul_ndim(ndim, other.ndim if other.kind is Kind.TENSOR else None)
        if ndim is None:
            return None
        if method in api.DIM_REDUCTIONS:
            if not call.args:
                return 0
            if not self._dimension_only(call):
                return None
            keepdim = _keyword(call, "keepdim")
            positional = [a for a in call.args if a.keyword is None]
            if keepdim is None and len(positional) > 1:
                keepdim = positional[1].value
            if keepdim is None or (isinstance(keepdim, cst.Name) and keepdim.value == "False"):
                return ndim - 1 if ndim > 0 else None
            return ndim if isinstance(keepdim, cst.Name) and keepdim.value == "True" else None
        if method == "unsqueeze":
            return ndim + 1
        if method in api.NDIM_KEEPING_METHODS or (method.endswith("_") and method not in api.SHAPE_CHANGING_METHODS):
            return ndim
        return None

    def _gathered_ndim(self, call: cst.Call, position: int) -> Optional[int]:
        """``gather`` gives a tensor shaped as its index (argument ``position``, or ``index=``)."""
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        index = _keyword(call, "index") or (positional[position] if len(positional) > position else None)
        value = self.value(index) if index is not None else UNKNOWN
        return value.ndim if value.kind is Kind.TENSOR else None

    def _dimension_only(self, call: cst.Call) -> bool:
        """Is the one dimension argument of a reduction an integer (``x.max(1)``, ``x.sum(dim=0)``),
        not a tensor (``x.max(y)`` is elementwise) or a tuple of dimensions?"""
        dims = [a.value for a in call.args if a.keyword is None][:1] + [
            a.value for a in call.args if a.keyword is not None and a.keyword.value == "dim"]
        return len(dims) == 1 and self._is_integer(dims[0])

    def _is_integer(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Integer):
            return True
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            return isinstance(expr.expression, cst.Integer)
        return not isinstance(expr, cst.Float) and self.value(expr).kind is Kind.NUMBER

    def _sizes(self, call: cst.Call) -> Optional[int]:
        """The number of sizes ``view``/``reshape``/a sized factory is given: ``(2, 3)``, ``(n, -1)``."""
        args = list(call.args)
        if any(a.star or a.keyword is not None for a in args) or not args:
            return None
        if len(args) == 1 and isinstance(args[0].value, (cst.Tuple, cst.List)):
            elements = args[0].value.elements
            return len(elements) if all(isinstance(e, cst.Element) and self._is_integer(e.value)
                                        for e in elements) else None
        return len(args) if all(self._is_integer(a.value) for a in args) else None

    def _indexed_ndim(self, ndim: Optional[int], expr: cst.Subscript) -> Optional[int]:
        """How many dimensions ``x[...]`` keeps of ``ndim``: an integer index takes one, a
        slice keeps it, ``None`` adds one; any other index (a tensor, ``...``) makes it unknown."""
        if ndim is None:
            return None
        for element in expr.slice:
            index = element.slice
            if isinstance(index, cst.Slice):
                continue
            if isinstance(index.value, cst.Name) and index.value.value == "None":
                ndim += 1
            elif self._is_integer(index.value):
                ndim -= 1
            else:
                tensor = self.value(index.value)
                if tensor.kind is not Kind.TENSOR or tensor.ndim is None:
                    return None
                if tensor.dtype in _MASK_DTYPES or isinstance(index.value, cst.Comparison):
                    # A mask over every dimension (``x[x > 0]``): the selected elements, 1-D.
                    return 1 if len(expr.slice) == 1 and tensor.ndim == ndim else None
                if tensor.ndim == 0:
                    ndim -= 1  # a 0-dim index tensor (``p[idx.data[0]]``) picks like an integer
                elif len(expr.slice) == 1:
                    ndim += tensor.ndim - 1  # the indexed dimension becomes the index's shape
                else:
                    return None  # several index tensors broadcast together
        return ndim if ndim >= 0 else None

    def _factory_ndim(self, callee: str, call: cst.Call) -> Optional[int]:
        """How many dimensions a torch factory or function gives, from its arguments."""
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if _keyword(call, "out") is not None:
            return None  # the result is ``out``, whatever its shape
        if callee in api.SIZE_FACTORIES:
            return self._sizes(call)
        if callee in api.PRODUCT_NDIM:
            return api.PRODUCT_NDIM[callee]
        if callee == "torch.gather":
            return self._gathered_ndim(call, 2)
        if callee == "torch.masked_select" or (callee in ("torch.flatten", "torch.ravel") and len(call.args) == 1):
            return 1
        if callee == "torch.nonzero" and len(call.args) == 1 and call.args[0].keyword is None:
            return 2  # one row of indices per nonzero element, whatever the input's shape
        if callee == "torch.matmul" and len(positional) == 2:
            a, b = self.value(positional[0]), self.value(positional[1])
            return _matmul_ndim(a.ndim if a.kind is Kind.TENSOR else None, b.ndim if b.kind is Kind.TENSOR else None)
        if callee in api.ONE_DIM_FACTORIES:
            return 1
        if callee == "torch.eye":
            return 2
        if callee in api.ARRAY_TO_TENSOR:
            data = positional[0] if len(positional) == 1 else None
            if callee.endswith("Tensor") and not isinstance(data, (cst.List, cst.Tuple)):
                # The legacy constructors take sizes too: ``torch.FloatTensor(2, 3)``, ``torch.Tensor(n)``.
                return self._sizes(call) if all(a.keyword is None for a in call.args) else None
            return literal_rank(data) if data is not None else None
        first = self.value(positional[0]) if positional else UNKNOWN
        if callee in api.BROADCASTING_FUNCTIONS:
            return self._broadcast_ndim(callee, call)
        if (callee in api.UNARY_ELEMENTWISE_FUNCTIONS and len(call.args) == 1) or callee == "torch.multinomial":
            return first.ndim if first.kind is Kind.TENSOR else None
        if callee in ("torch.cat", "torch.stack") and positional and isinstance(positional[0], (cst.List, cst.Tuple)):
            parts = meet(self.value(e.value) for e in positional[0].elements if isinstance(e, cst.Element))
            if parts.kind is Kind.TENSOR and parts.ndim is not None:
                return parts.ndim + (callee == "torch.stack")
        return None

    def _project_method_value(self, receiver: Value, method: str, call: cst.Call) -> Optional[Value]:
        """What the method of a project class returns to ``call``; None (ask what the
        attribute holds, and call that) when no method of its class says."""
        if receiver.instance_of is None:
            return None
        value = self._asked_with_arguments(call, lambda arguments: self._member(
            receiver.instance_of, method, called=True, arguments=arguments))
        # An unknown kind may still carry a fact (``loss = 0`` then ``loss += criterion(...)``
        # returned: a tensor unless a number); only a value that says nothing asks further.
        return None if value == UNKNOWN else value

    def _known_callee_value(self, call: cst.Call, callee: str) -> Value:
        if callee in api.CUDA_TENSOR_TYPES:
            made = self._factory_ndim("torch." + callee.rpartition(".")[2], call)
            return Value(Kind.TENSOR, cuda=True, dtype=api.TENSOR_TYPE_DTYPES.get(callee), ndim=made,
                         one_element=bool(made) and _made_of_one_element(callee, call))
        if callee in ("builtins.len", "builtins.int", "builtins.float"):
            return NUMBER
        if callee == "argparse.ArgumentParser" or callee in api.CONFIGURATION_SOURCES:
            return OPTIONS
        if callee == "builtins.vars" and len(call.args) == 1 and self.value(call.args[0].value).kind is Kind.OPTIONS:
            return Value(Kind.MAPPING, element=OPTIONS)  # the options by name
        if callee == "builtins.sum" and call.args and len(call.args) <= 2 and not any(a.star for a in call.args):
            return self._builtin_sum(call)
        if callee in ("builtins.min", "builtins.max") and len(call.args) >= 2 and not any(a.star for a in call.args):
            # Python compares the arguments (``bool(a < b)``): only numbers and one-element
            # tensors get through, so the result is as good as a number in arithmetic.
            return NUMBER
        if callee in ("builtins.min", "builtins.max") and len(call.args) == 1 and call.args[0].keyword is None \
                and isinstance(call.args[0].value, (cst.List, cst.Tuple)) and len(call.args[0].value.elements) >= 2 \
                and not any(isinstance(e, cst.StarredElement) for e in call.args[0].value.elements):
            return NUMBER  # ``min([warmup_beta, args.max_beta])``: the elements compared, as above
        if callee in api.GRADIENT_FUNCTIONS:
            return Value(Kind.TUPLE, element=TENSOR)  # one gradient tensor per input
        if callee in api.VARIABLE or callee in api.PARAMETER_CLASSES:
            wrapped = self.value(call.args[0].value) if call.args and call.args[0].keyword is None else UNKNOWN
            return Value(Kind.TENSOR, scalar=wrapped.scalar, cuda=wrapped.cuda, ndim=wrapped.ndim,
                         one_element=wrapped.one_element, partly_scalar=wrapped.partly_scalar)
        if callee in api.DATALOADERS:
            return Value(Kind.LOADER)
        if callee in lr_schedule_makers():
            return Value(Kind.SCHEDULE)
        if callee in api.TORCH_LOAD:
            return self._reloaded(call) or UNKNOWN
        if callee == "builtins.dict" and call.args and all(arg.keyword is not None and not arg.star for arg in call.args):
            # ``dict(logpi=logpi, policy_err=err)``: a value per keyword.
            return self._keyed_mapping([(arg.keyword.value, arg.value) for arg in call.args])  # type: ignore[union-attr]
        if callee in _EMPTY_MAPPINGS and len(call.args) == 1 and call.args[0].keyword is None \
                and isinstance(call.args[0].value, cst.Call) and not call.args[0].star:
            pairs = call.args[0].value
            if self._resolver.resolve(pairs.func) == "builtins.zip" and len(pairs.args) == 2 \
                    and not any(arg.star or arg.keyword for arg in pairs.args):
                # ``dict(zip(names, losses))``: a value per name, each one of ``losses``.
                return Value(Kind.MAPPING, element=self._iterated(pairs.args[1].value, ()))
        if api.is_nn_class(callee):
            if callee in api.PARAMETER_CLASSES:
                return TENSOR
            return Value(Kind.MODULE, module_class=callee,
                         reduces=api.is_loss_class(callee) and _reduces(call, api.LOSS_PARAMS.get(callee))
                         and not self._reduction_reassigned())
        if callee.startswith(api.MODEL_FACTORY_PREFIXES) and not callee.rsplit(".", 1)[1][:1].isupper():
            # A torchvision classifier is known by its builder: its output is (N, classes).
            return Value(Kind.MODULE, module_class=callee) if callee in CLASSIFIER_OUTPUTS_2D else MODULE
        token_of = self._token_reader(self._given) if self._origin is not None else None
        if callee in api.LOSS_FUNCTION_PARAMS or (
            callee.startswith(api.FUNCTIONAL) and callee.endswith("_loss")
        ):
            return Value(Kind.TENSOR, scalar=_reduces(call, api.LOSS_PARAMS.get(callee), token_of), loss=True)
        if callee in api.NATIVE_LOSSES:
            # A copy of functional.py calling the native loss: its flags are the copy's own
            # parameters (read as this call's constants) or literals; an enum computed there
            # is torch 1.0's spelling, not read.
            plain = all(isinstance(arg.value, cst.Name) for arg in call.args[2:])
            return Value(Kind.TENSOR, loss=True,
                         scalar=plain and _reduces(call, api.LOSS_PARAMS[api.NATIVE_LOSSES[callee]], token_of))
        if callee.startswith(api.FUNCTIONAL):
            ndim = self._first_argument_ndim(call) if callee in api.SHAPE_KEEPING_FUNCTIONS else None
            return Value(Kind.TENSOR, cuda=self._inputs_on_cuda(call), ndim=ndim)
        if callee in api.EXTREMUM_FUNCTIONS:
            # ``torch.max(x)`` is the 0-dim maximum; with a dim it is a (values, indices)
            # pair and with a second tensor the elementwise maximum.
            only_input = len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star
            if only_input:
                return Value(Kind.TENSOR, scalar=True)
            return self._sorted_value(call, callee) if len(call.args) >= 2 else UNKNOWN
        if callee in ("torch.sort", "torch.topk"):
            return self._sorted_value(call, callee)
        if callee in api.INDEX_SAMPLERS and call.args and call.args[0].keyword is None:
            # Sample indices: one row per row of the probabilities, as many dimensions.
            source = self.value(call.args[0].value)
            return Value(Kind.TENSOR, cuda=source.cuda, dtype="int64",
                         ndim=source.ndim if source.kind is Kind.TENSOR else None)
        if callee == "torch.nonzero" and _keyword(call, "as_tuple") is not None:
            return UNKNOWN  # a tuple of index tensors where ``as_tuple`` is true
        if callee in api.TENSOR_FACTORIES:
            positional = [a for a in call.args if a.keyword is None]
            scalar = (len(positional) == 1 and len(call.args) == 1 and (
                callee in api.SCALAR_FUNCTIONS
                or (callee in api.UNARY_ELEMENTWISE_FUNCTIONS and self.is_scalar_tensor(positional[0].value)))
            ) or (callee in _DIM_SECOND and len(positional) == 2 == len(call.args)
                  and self.value(positional[1].value).kind is Kind.NONE  # ``torch.sum(x, None)``: all of x
                  ) or callee in api.ALWAYS_SCALAR_FUNCTIONS or self._norm_of_all(callee, call)
            dtype = api.TENSOR_TYPE_DTYPES.get(callee)
            keyword = _keyword(call, "dtype")
            if keyword is not None:
                dtype = self._dtype_of(keyword)
            ndim = None if scalar else self._factory_ndim(callee, call)
            cuda = _device_keyword(call)
            if callee in api.DEVICE_PRESERVING and _keyword(call, "device") is None:
                cuda = self._inputs_on_cuda(call)
            return Value(Kind.TENSOR, scalar=scalar, cuda=cuda, dtype=dtype, ndim=ndim,
                         one_element=bool(ndim) and _made_of_one_element(callee, call))
        return UNKNOWN

    def _norm_of_all(self, callee: str, call: cst.Call) -> bool:
        """``torch.norm(x, 2)``, ``torch.norm(x, p=1)``: the norm of every element, 0-dim
        (a third argument, or ``dim=``, names dimensions to keep)."""
        return callee == "torch.norm" and len(call.args) == 2 and not call.args[0].keyword and (
            call.args[1].keyword is None or call.args[1].keyword.value == "p") and not any(a.star for a in call.args)

    def _broadcast_ndim(self, callee: str, call: cst.Call) -> Optional[int]:
        """How many dimensions an elementwise function of tensors and numbers gives: as
        many as its largest operand (numbers and None count as none); unknown when
        one operand's dimensions are."""
        if any(arg.star for arg in call.args) or (callee == "torch.where" and len(call.args) != 3):
            return None  # ``torch.where(mask)`` gives the indices, a tuple
        dims = []
        for arg in call.args:
            value = self.value(arg.value)
            if value.kind is Kind.TENSOR and value.ndim is not None:
                dims.append(value.ndim)
            elif value.kind in (Kind.NUMBER, Kind.OPTIONS, Kind.NONE):
                dims.append(0)
            else:
                return None
        return max(dims) if dims else None

    def _builtin_sum(self, call: cst.Call) -> Value:
        """``sum([p.norm() ** 2 for p in params])``: ``0 + a + b + ...`` of what the list
        (a comprehension or a literal) holds; of tensors, a tensor as large as they are."""
        items = call.args[0].value
        if isinstance(items, (cst.ListComp, cst.GeneratorExp)):
            parts = [items.elt]
        elif isinstance(items, (cst.List, cst.Tuple)) and items.elements and all(
                isinstance(e, cst.Element) for e in items.elements):
            parts = [e.value for e in items.elements]
        else:
            return UNKNOWN
        if len(call.args) == 2 and self.value(call.args[1].value).kind is not Kind.NUMBER:
            return UNKNOWN  # a start of unknown kind (a list, a tensor of other dimensions)
        element = meet(self.value(part) for part in parts)
        if element.kind is Kind.TENSOR:
            return Value(Kind.TENSOR, scalar=element.scalar, cuda=element.cuda, loss=element.loss, ndim=element.ndim)
        if element.kind is Kind.UNKNOWN and element.if_tensor is not None:
            return Value(Kind.UNKNOWN, if_tensor=element.if_tensor)
        return NUMBER if element.kind is Kind.NUMBER else UNKNOWN

    def _inputs_on_cuda(self, call: cst.Call) -> Optional[bool]:
        """Where an operation's result lives: with its tensor arguments (or those in
        a list or tuple of them, ``torch.cat([a, b])``). True when one is known to be
        on a CUDA device (a CPU tensor beside it raises, 0-dim ones aside), False
        when the first is known to be on the CPU and none is known to be elsewhere."""
        devices = []
        for arg in call.args:
            if arg.star or (arg.keyword is not None and arg.keyword.value != "input"):
                continue
            value = arg.value
            parts = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
            devices.extend(self.value(part).cuda for part in parts)
        if any(devices):
            return True
        return False if devices and devices[0] is False else None

    def _sorted_value(self, call: cst.Call, callee: str) -> Value:
        """``torch.sort(x, 1)`` / ``torch.topk(x, k)``: (values, indices) as large as ``x``;
        ``torch.max(x, 1)``: the pair reduced along the dimension; unknown otherwise."""
        args = [a for a in call.args if not a.star]
        if not args or args[0].keyword is not None or len(args) != len(call.args):
            return UNKNOWN
        source = self.value(args[0].value)
        if source.kind is not Kind.TENSOR:
            return UNKNOWN
        rest = cst.Call(func=call.func, args=call.args[1:])
        if callee in ("torch.sort", "torch.topk"):
            ndim = source.ndim
        elif self._dimension_only(rest):
            ndim = self._ndim_after("max", rest, source.ndim)
        else:
            return UNKNOWN  # ``torch.max(a, b)``: elementwise
        part = Value(Kind.TENSOR, cuda=source.cuda, ndim=ndim)
        return Value(Kind.TUPLE, items=(replace(part, dtype=source.dtype), replace(part, dtype="int64")))

    def _reduction_reassigned(self) -> bool:
        """Does the file set a ``reduction``/``reduce`` attribute (``criterion.reduction =
        'none'``)? Then no loss module built here is known to reduce."""
        stored = self._resolver.file_outline().attribute_index().stored
        return "reduction" in stored or "reduce" in stored

    def _module_call_value(self, module: Value, arguments: Optional[Arguments] = None,
                           call: Optional[cst.Call] = None) -> Value:
        if module.items:
            # One of several modules: what all of their calls agree on (on the device it was sent to).
            return meet(self._module_call_value(alternative if module.cuda is None else replace(
                alternative, cuda=module.cuda), arguments, call) for alternative in module.items)
        if module.instance_of is not None:
            return self._member(module.instance_of, "__call__", called=True, arguments=arguments)
        if module.reduces:
            return Value(Kind.TENSOR, scalar=True, cuda=module.cuda, loss=True)
        if module.module_class in CLASSIFIER_OUTPUTS_2D:
            return Value(Kind.TENSOR, cuda=module.cuda, ndim=2)
        if module.module_class is not None and module.module_class not in api.TUPLE_RETURNING_MODULES:
            ndim = None
            if call is not None and module.module_class.rsplit(".", 1)[1] in api.SHAPE_KEEPING_MODULES:
                ndim = self._first_argument_ndim(call)  # ``self.fc(x)``: as many dimensions as ``x``
            return Value(Kind.TENSOR, cuda=module.cuda, loss=api.is_loss_class(module.module_class), ndim=ndim)
        return UNKNOWN  # user modules may return tuples or dicts

    def _first_argument_ndim(self, call: cst.Call) -> Optional[int]:
        """How many dimensions the first argument of ``call`` has, where it is a tensor that shows it."""
        if not call.args or call.args[0].keyword is not None or call.args[0].star:
            return None
        first = self.value(call.args[0].value)
        return first.ndim if first.kind is Kind.TENSOR else None

    def _dtype_of(self, expr: cst.BaseExpression) -> Optional[str]:
        """``torch.uint8`` -> "uint8"; tensor types (``torch.ByteTensor``, 'torch.ByteTensor') too."""
        text = _literal_string(expr)
        qualified = text if text is not None else self._resolver.resolve(expr)
        if qualified is None:
            return None
        return api.DTYPES.get(qualified) or api.TENSOR_TYPE_DTYPES.get(qualified)

    def _dtype_after(self, method: str, call: cst.Call, before: Optional[str]) -> Optional[str]:
        """The dtype of ``x.method(...)`` for a receiver of dtype ``before``."""
        if method in api.DTYPE_METHODS:
            return api.DTYPE_METHODS[method] if not call.args else None
        if method in ("to", "type"):
            for arg in call.args:
                if arg.keyword is None or arg.keyword.value in ("dtype", "dst_type"):
                    dtype = self._dtype_of(arg.value)
                    if dtype is not None:
                        return dtype
                    if method == "to" and arg.keyword is None and _device_literal(arg.value) is not None:
                        continue  # ``.to('cuda')`` keeps the dtype
                    return None
            return before if method == "to" and call.args else None
        if method in api.DTYPE_KEEPING_METHODS or method.endswith("_"):
            return before
        return None

    def _local_class(self, func: cst.BaseExpression) -> Optional[cst.ClassDef]:
        local = self.local_definition(func)
        return local if isinstance(local, cst.ClassDef) else None

    def local_definition(self, func: cst.BaseExpression) -> Optional[cst.CSTNode]:
        """The def or class of this file a name is bound to (its only binding), if any."""
        if not isinstance(func, cst.Name):
            return None
        nodes = {getattr(a, "node", None) for a in self._resolver.assignments(func)}
        if len(nodes) == 1:
            (node,) = nodes
            if isinstance(node, (cst.ClassDef, cst.FunctionDef)):
                return node
        return None

    def own_method(self, func: cst.BaseExpression) -> Optional[cst.FunctionDef]:
        """The def ``self.name`` calls inside a method: the method of that name in the
        class's own body (None when the class does not define it there)."""
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return None
        classdef = self._self_class(func.value)
        if classdef is None:
            return None
        found = [s for s in classdef.body.body if isinstance(s, cst.FunctionDef) and s.name.value == func.attr.value]
        return found[0] if len(found) == 1 and not found[0].decorators else None

    def _definition_name(self, definition: cst.CSTNode) -> Optional[str]:
        """The key by which the project knows a top-level def or class of this file."""
        scope = self._resolver.scope_of(definition)
        if scope is None or scope is not scope.globals:
            return None
        return self.project.local(definition.name.value)

    def is_optimizer_class(self, classdef: cst.ClassDef) -> bool:
        """Does this class derive from a torch optimizer (directly or via the file)?"""
        return self._derives_from(classdef, self._optimizer_classes, api.is_optimizer_class)

    def _optimizer_self(self, receiver: cst.BaseExpression) -> bool:
        """Is ``receiver`` the ``self`` of a method of an optimizer class?"""
        classdef = self._self_class(receiver) if isinstance(receiver, cst.Name) else None
        return classdef is not None and self.is_optimizer_class(classdef)

    def _is_function_base(self, base: cst.BaseExpression) -> bool:
        qualified = self._resolver.resolve(base)
        if qualified is not None:
            return qualified in api.AUTOGRAD_FUNCTION_BASES
        local = self._local_class(base)
        return local is not None and self.is_autograd_function_class(local)


class _CallsWithin(cst.CSTVisitor):
    """The calls of one function's body; nested functions and classes are theirs."""

    def __init__(self, function: cst.FunctionDef) -> None:
        self.function = function
        self.calls: List[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.function

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False


def _last_kept(ordered: Sequence, end: int, skipped: Sequence[object]) -> int:
    """``end`` moved back past the bindings in ``skipped`` (those of the read's own statement)."""
    while end > 0 and any(ordered[end - 1] is other for other in skipped):
        end -= 1
    return end


def _calls_within(function: cst.FunctionDef) -> List[cst.Call]:
    """The calls in ``function``'s body (not in functions nested in it)."""
    visitor = _CallsWithin(function)
    function.visit(visitor)
    return visitor.calls


_OWNERS = "\x01"  # separates the classes an instance may be of, in ``Value.instance_of``


def instance_classes(value: Value) -> List[str]:
    """The keys of the project classes ``value`` may be an instance of (``Value.instance_of``)."""
    return value.instance_of.split(_OWNERS) if value.instance_of is not None else []


def _either(one: Optional[str], other: Optional[str]) -> Optional[str]:
    """An instance of one class or another: both keys (None: not known to be a project class)."""
    if one is None or other is None:
        return None
    if one == other:
        return one
    return _OWNERS.join(sorted(set(one.split(_OWNERS)) | set(other.split(_OWNERS))))


def _is_shape(expr: cst.BaseExpression) -> bool:
    """``x.size()`` or ``x.shape``: the sizes of a tensor's (or an array's) dimensions."""
    if isinstance(expr, cst.Call) and not expr.args:
        expr = expr.func
        return isinstance(expr, cst.Attribute) and expr.attr.value == "size"
    return isinstance(expr, cst.Attribute) and expr.attr.value == "shape"


def _dtype_conversion(expr: cst.BaseExpression) -> bool:
    """``b.float()``, ``b.long()``: a tensor's (or a module's) dtype method, no arguments."""
    return (isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value in api.DTYPE_METHODS)


def _nodes_of(function: cst.FunctionDef) -> FrozenSet[cst.CSTNode]:
    """Every node of ``function``, its parameters' defaults aside (evaluated where it is defined)."""
    found: List[cst.CSTNode] = []
    stack: List[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(node.children)
    return frozenset(found)


def _full_reduction(expr: cst.BaseExpression) -> bool:
    """``b.sum()``, ``b.mean()``: whatever ``b`` is (a tensor, a NumPy array), one value;
    next to a 0-dim tensor in arithmetic (``a.sum() + b.sum()``) the result stays 0-dim."""
    return (isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value in api.FULL_REDUCTIONS)


def _integer_literal(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, cst.Integer)


# Tensor methods making a new tensor of the sizes they are given (``x.new(1)``, the
# legacy spelling, with integer sizes only: ``x.new([1, 2])`` holds that data).
_SIZED_NEW = frozenset({"new", "new_zeros", "new_ones", "new_empty", "new_full"})


def _sizes_all_one(call: cst.Call, method: str) -> bool:
    """Are the sizes ``x.new_zeros(1)`` / ``x.new_full((1, 1), v)`` is given all 1?"""
    args = [a for a in call.args if a.keyword is None and not a.star]
    args = args[:1] if method == "new_full" else args
    if len(args) == 1 and isinstance(args[0].value, (cst.Tuple, cst.List)):
        sizes = [e.value for e in args[0].value.elements if isinstance(e, cst.Element)]
    else:
        sizes = [a.value for a in args]
    return bool(sizes) and all(isinstance(size, cst.Integer) and size.value == "1" for size in sizes)


def _made_of_one_element(callee: str, call: cst.Call) -> bool:
    """Does a factory call make one element: sizes all 1 (``torch.zeros(1)``,
    ``torch.FloatTensor(1, 1)``) or data of one number (``torch.Tensor([0])``)?"""
    args = list(call.args)
    if not args or any(a.star for a in args) or args[0].keyword is not None:
        return False
    first = args[0].value
    if callee.rpartition(".")[2] in _DATA_CONSTRUCTORS and isinstance(first, (cst.List, cst.Tuple)):
        while isinstance(first, (cst.List, cst.Tuple)):
            if len(first.elements) != 1 or not isinstance(first.elements[0], cst.Element):
                return False
            first = first.elements[0].value
        return literal_rank(first) == 0
    if callee not in api.SIZE_FACTORIES and callee.rpartition(".")[2] not in _LEGACY_CONSTRUCTORS:
        return False
    sizes = [a.value for a in args if a.keyword is None]
    if len(sizes) == 1 and isinstance(sizes[0], (cst.List, cst.Tuple)):
        sizes = [e.value for e in sizes[0].elements if isinstance(e, cst.Element)]
    # ``Integer.value`` is its spelling: ``evaluated_value`` runs ``literal_eval``, whose
    # closures are left to the cycle collector.
    return bool(sizes) and all(isinstance(s, cst.Integer) and s.value == "1" for s in sizes)


def literal_rank(expr: cst.BaseExpression) -> Optional[int]:
    """The nesting depth of a rectangular-looking literal of numbers: 0 for ``3``, 1 for
    ``[0, 2]``, 2 for ``[[1, 2], [3, 4]]``; None for anything else."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return 0
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return literal_rank(expr.expression)
    if isinstance(expr, (cst.List, cst.Tuple)) and expr.elements:
        ranks = {literal_rank(e.value) if isinstance(e, cst.Element) else None for e in expr.elements}
        rank = ranks.pop() if len(ranks) == 1 else None
        return rank + 1 if rank is not None else None
    return None


def _plain_targets(target: cst.BaseExpression) -> List[cst.Name]:
    """The names ``a`` and ``b`` of ``a, b = ...``; a target of another kind makes the list empty."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        found = [_plain_targets(e.value) if isinstance(e, cst.Element) else [] for e in target.elements]
        return [n for names in found for n in names] if all(found) else []
    return []


class _AutogradUse(cst.CSTVisitor):
    """A backward (``x.backward()``, ``torch.autograd.backward/grad``, ``scaler.scale(x)``)
    in a def (with the defs nested in it) or, for a module, in its own code, or a
    ``return``/``yield`` of one of ``names``. A module's defs and classes count
    only where they mention one of ``names`` (a global they may differentiate)."""

    def __init__(self, resolver: Resolver, names: Set[str], root: cst.CSTNode) -> None:
        super().__init__()
        self._resolver = resolver
        self._names = names
        self._root = root
        self.found = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> Optional[bool]:
        return self._enter(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> Optional[bool]:
        return self._enter(node)

    def _enter(self, node: cst.CSTNode) -> bool:
        if not isinstance(self._root, cst.Module):
            return not self.found  # a caller's own closures may differentiate: walk them
        self.found = self.found or _mentions_any(node, self._names)
        return False

    def visit_Call(self, node: cst.Call) -> Optional[bool]:
        func = node.func
        if (isinstance(func, cst.Attribute) and func.attr.value in ("backward", "scale")) or \
                self._resolver.resolve(func) in api.AUTOGRAD_FUNCTIONS:
            self.found = True
        return not self.found

    def visit_Return(self, node: cst.Return) -> Optional[bool]:
        self.found = self.found or (node.value is not None and _mentions_any(node.value, self._names))
        return not self.found

    def visit_Yield(self, node: cst.Yield) -> Optional[bool]:
        self.found = self.found or (node.value is not None and _mentions_any(node.value, self._names))
        return not self.found


def _mentions_any(expr: cst.CSTNode, names: Set[str]) -> bool:
    finder = _NameFinder(names)
    expr.visit(finder)
    return finder.found


class _NameFinder(cst.CSTVisitor):
    def __init__(self, names: Set[str]) -> None:
        super().__init__()
        self._names = names
        self.found = False

    def visit_Name(self, node: cst.Name) -> None:
        self.found = self.found or node.value in self._names


# Methods that move, convert or reshape their receiver in place (a module's device and
# dtype changes are in place; a tensor's are not, but a parameter may be either).
# Methods that may move a module's tensors to another device (or hand it to code that does).
_DEVICE_CHANGING = frozenset({"cuda", "to", "to_empty", "type", "apply", "_apply", "load_state_dict", "ipu", "xpu"})
_IN_PLACE_MOVES = frozenset({
    "cuda", "cpu", "to", "half", "float", "double", "bfloat16", "type", "share_memory_", "resize_",
    "resize_as_", "squeeze_", "unsqueeze_", "t_", "transpose_", "swapdims_", "swapaxes_", "set_",
    "as_strided_", "apply",
})


def _passed(call: cst.Call, position: Optional[int], name: str) -> Optional[cst.BaseExpression]:
    """The argument ``call`` passes for the parameter at ``position`` (None: keyword-only) named ``name``."""
    positional = [arg for arg in call.args if arg.keyword is None]
    if position is not None and position < len(positional):
        return positional[position].value
    return next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == name), None)


def _parameters_value(method: str) -> Value:
    """What a torch module's ``parameters()`` / ``named_parameters()`` iterate over."""
    if method == "named_parameters":
        return Value(Kind.TUPLE, element=Value(Kind.TUPLE, items=(UNKNOWN, TENSOR)))
    return Value(Kind.TUPLE, element=TENSOR)


def constant_key(subscript: cst.Subscript) -> Optional[str]:
    """``'params'`` of ``group['params']``."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    index = subscript.slice[0].slice.value
    return index.evaluated_value if isinstance(index, cst.SimpleString) else None


# The Python number types an ``isinstance`` test may name.
_NUMBER_TYPES = frozenset({"builtins.int", "builtins.float", "builtins.bool", "numbers.Number", "numbers.Real",
                           "numbers.Integral"})


def _type_names(kinds: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The types an ``isinstance`` test names: one, or each of a tuple of them."""
    if isinstance(kinds, cst.Tuple):
        return [e.value for e in kinds.elements] if kinds.elements else [kinds]
    return [kinds]


def _element(value: Value, path: Tuple[int, ...]) -> Value:
    """The part of a tuple ``value`` that unpacking reaches by ``path``."""
    if value is _PENDING:
        return _PENDING  # ``model, loss = train(model)`` in a loop: the part depends on itself too
    for index in path:
        if value.kind is Kind.TUPLE and not value.items and value.element is not None:
            value = value.element  # a sequence of values all alike: ``batch, length, _ = x.size()``
            continue
        if value.kind is not Kind.TUPLE or index >= len(value.items):
            return UNKNOWN
        value = value.items[index]
    return value


def _data_attribute(expr: cst.BaseExpression) -> bool:
    """``x.data``: a tensor's data, read as torch 0.3 read it."""
    return isinstance(expr, cst.Attribute) and expr.attr.value == "data"


def _constant_index(expr: cst.Subscript) -> Optional[int]:
    if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
        return None
    index = expr.slice[0].slice.value
    negative = isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus)
    if negative:
        index = index.expression
    if isinstance(index, cst.Integer):
        return -int(index.value, 0) if negative else int(index.value, 0)
    return None


def _method(classdef: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
    """The method ``name`` defined in the class body (the last, if redefined)."""
    found = None
    body = classdef.body.body if isinstance(classdef.body, cst.IndentedBlock) else ()
    for statement in body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
            found = statement
    return found


def _literal_string(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value if isinstance(expr.evaluated_value, str) else None
    return None


def _device_literal(expr: cst.BaseExpression) -> Optional[bool]:
    """True for 'cuda', 'cuda:0', torch.device('cuda'); False for 'cpu'; else None."""
    if isinstance(expr, cst.Call) and expr.args and cst.helpers.get_full_name_for_node(expr.func) in (
        "torch.device", "device"
    ):
        expr = expr.args[0].value
    text = _literal_string(expr)
    if text is None:
        return None
    if text == "cuda" or text.startswith("cuda:"):
        return True
    if text == "cpu":
        return False
    return None


def _keyword(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def _assigned_names(statement: cst.CSTNode) -> List[cst.Name]:
    """The names an assignment statement binds after reading its value (``a, b = ...``)."""
    if isinstance(statement, cst.Assign):
        pending = [t.target for t in statement.targets]
    elif isinstance(statement, (cst.AnnAssign, cst.AugAssign)):
        pending = [statement.target]
    else:
        return []
    names = []
    while pending:
        target = pending.pop()
        if isinstance(target, cst.Name):
            names.append(target)
        elif isinstance(target, (cst.Tuple, cst.List)):
            pending.extend(e.value for e in target.elements)
        elif isinstance(target, cst.StarredElement):
            pending.append(target.value)
    return names


def _updates(binding: Binding, name: str) -> bool:
    """``name += x`` or ``name = name + x``: a binding that updates ``name``."""
    if binding.how == "aug":
        return True
    value = binding.value
    return (
        binding.how == "assign"
        and not binding.path
        and isinstance(value, cst.BinaryOperation)
        and isinstance(value.left, cst.Name)
        and value.left.value == name
    )


def _device_keyword(call: cst.Call) -> Optional[bool]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "device":
            return _device_literal(arg.value)
    return False


def _device_after(method: str, call: cst.Call, before: Optional[bool]) -> Optional[bool]:
    if method == "cuda":
        return True
    if method == "cpu":
        return False
    if method == "to":
        for arg in call.args:
            if arg.keyword is None or arg.keyword.value == "device":
                device = _device_literal(arg.value)
                if device is not None:
                    return device
                if arg.keyword is None and _is_dtype_like(arg.value):
                    continue  # ``.to(torch.float16)`` keeps the device
                return None
        return before
    return before


def _is_dtype_like(expr: cst.BaseExpression) -> bool:
    name = cst.helpers.get_full_name_for_node(expr) or ""
    return name.startswith("torch.") and name.rsplit(".", 1)[1][:1].islower() and name.count(".") == 1


def _reduces(call: cst.Call, params: Optional[Sequence[str]] = None,
             token_of: Optional[Callable[[cst.Name], Optional[str]]] = None) -> bool:
    """Does a loss call/constructor reduce to a scalar (no reduction='none' / reduce=False,
    by keyword or by position: ``F.mse_loss(out, y, None, False)``, ``nn.L1Loss(None, False)``)?
    ``params``: the callee's parameters in order; unknown, any third positional argument may
    be one of those. ``token_of``: the constant a name holds, in a def specialised to a
    call's constants (``reduce=reduce``, the caller leaving ``reduce=True`` to its default)."""
    for index, arg in enumerate(call.args):
        if arg.star:
            return False  # ``**options`` may hold reduction="none"
        if arg.keyword is None:
            if params is None:
                if index >= 2:
                    return False
                continue
            if index >= len(params):
                return False
            key = params[index]
        else:
            key = arg.keyword.value
        constant = token_of(arg.value) if token_of is not None and isinstance(arg.value, cst.Name) else None
        if key == "reduction":
            return _literal_string(arg.value) in _REDUCTIONS or constant in ("'mean'", "'sum'", "'elementwise_mean'")
        if key == "reduce" and not (isinstance(arg.value, cst.Name) and arg.value.value in ("True", "None")) \
                and constant not in ("True", "None"):
            return False
    return True


_REDUCTIONS = ("mean", "sum", "elementwise_mean")
