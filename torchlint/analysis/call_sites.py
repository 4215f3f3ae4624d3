"""What a def's calls across the project pass for one of its parameters.

A helper module of a folder of scripts (``utils.py`` beside ``train.py``,
no package) is called by its neighbours: ``logger.log({'loss_G': loss_G})``
in ``cyclegan.py`` tells what ``Logger.log``'s ``losses`` holds in
``utils.py``. ``calls_passing`` reads one module (the helper itself or a
neighbour that imports it) and returns what each of its calls of the def
passes for the parameter, or None when some use of the def there is no call
it can read: the def handed on as a value (``f = log``), or a call with
``*args`` of anything but the calling def's own ``*args`` (a factory's
``Gan(*args, **kwargs)`` passes what the factory's callers pass). Then the
calls seen are maybe not all the calls there are, and the parameter stays
unknown: a fact is evidence or nothing. A method call on a receiver inference
cannot tell apart from an instance of the def's class (``model.initialize(opt)``
with ``model`` one of a factory's classes, or unknown) may be the method's, so
it counts: one more value to meet, never fewer. So does a call through a name one
of several imports binds (``exp.train(args)``, ``exp`` one of two modules an
``if`` imports): it may be the def's. ``super(Net, self)`` and
``isinstance(x, Net)`` never call ``Net``. A class whose first base is the
def's class and that defines no ``__init__`` of its own (``class
ShapeTrainer(Trainer)``) is built by that class's constructor: its own calls
pass the constructor's parameters, and are asked about in turn.

The project model (``Project.parameter_from_project``) decides which modules
to read and meets the answers.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis.inference import UNKNOWN, CallTarget, Inference, Kind, Value, instance_classes

_CLASS_TESTS = frozenset({"super", "isinstance", "issubclass"})
# Receivers whose methods are never a project class's: a tensor, a number, None,
# a torch data loader, a tuple or a dict, a learning-rate schedule.
_NOT_AN_INSTANCE = frozenset({Kind.TENSOR, Kind.NUMBER, Kind.NONE, Kind.LOADER, Kind.TUPLE, Kind.MAPPING,
                              Kind.SCHEDULE})


class _Index:
    """One module's names and attributes by their spelling, and its calls by
    callee: one walk of the module for every def asked about."""

    def __init__(self, module: cst.Module, calls: List[cst.Call]) -> None:
        walk = _References()
        module.visit(walk)
        self._names, self._attributes, self._aliases = walk.names, walk.attributes, walk.aliases
        self.bases = walk.bases
        self.callees = {id(call.func): call for call in calls}
        # ``super(Net, self)``, ``isinstance(x, Net)``: uses of a class that never call it.
        self.inert = {id(arg.value) for call in calls if isinstance(call.func, cst.Name)
                      and call.func.value in _CLASS_TESTS for arg in call.args}

    def spelled(self, name: str) -> "_Spelled":
        """The names and attributes spelled ``name``, and the names of its import aliases
        (``from utils.training import train_vae as train``: every ``train``)."""
        names = list(self._names.get(name, []))
        for alias in self._aliases.get(name, ()):
            names.extend(self._names.get(alias, []))
        return _Spelled(names, self._attributes.get(name, []))


class _Spelled:
    def __init__(self, names: List[cst.Name], attributes: List[cst.Attribute]) -> None:
        self.names = names
        self.attributes = attributes


class _References(cst.CSTVisitor):
    """Every name and attribute by spelling (``name``, ``x.name``), but those that
    define or import something, name a parameter or a keyword argument."""

    def __init__(self) -> None:
        self.names: Dict[str, List[cst.Name]] = {}
        self.attributes: Dict[str, List[cst.Attribute]] = {}
        self.aliases: Dict[str, Set[str]] = {}  # imported name -> the names it is bound as
        self.bases: Dict[int, Tuple[cst.ClassDef, int]] = {}  # a class statement's base -> it, its position
        self._skipped: Set[int] = set()

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name) \
                        and isinstance(alias.name, cst.Name):
                    self.aliases.setdefault(alias.name.value, set()).add(alias.asname.name.value)
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._skipped.add(id(node.name))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._skipped.add(id(node.name))
        for position, base in enumerate(node.bases):
            self.bases[id(base.value)] = (node, position)

    def visit_Param(self, node: cst.Param) -> None:
        self._skipped.add(id(node.name))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._skipped.add(id(node.keyword))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._skipped.add(id(node.attr))
        self.attributes.setdefault(node.attr.value, []).append(node)

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self._skipped:
            self.names.setdefault(node.value, []).append(node)


def calls_passing(inference: Inference, module: cst.Module, calls: List[cst.Call],
                  target: CallTarget, subclasses: Optional[List[str]] = None) -> Optional[List[Value]]:
    """What each call of ``target`` in ``module`` passes for its parameter
    (``calls``: every call of the module); None when a use of it is not a call read here.
    With ``subclasses``, ``target`` a class's constructor: a class of the module whose
    first base it is, and that defines no ``__init__`` of its own, is constructed by it
    too; its key goes into ``subclasses`` (its own calls are asked about apart)."""
    index = inference.memo.get("call sites")
    if index is None:
        index = inference.memo["call sites"] = _Index(module, calls)
    references = index.spelled(target.name)
    callees = index.callees
    values: List[Value] = []
    found = (_function_references(inference, references, target) if target.method is None
             else _method_references(inference, references, target))
    if found is None:
        return None
    for reference, shift in found:
        call = callees.get(id(reference))
        if call is None:
            if id(reference) in index.inert:
                continue
            subclass = _inheriting_constructor(inference, index, reference) if subclasses is not None else None
            if subclass is not None:
                subclasses.append(subclass)
                continue
            return None  # handed on, stored, decorated: its calls are not all here
        value = _passed_value(inference, call, target, shift)
        if value is None:
            return None
        values.append(value)
    return values


def _inheriting_constructor(inference: Inference, index: _Index, reference: cst.CSTNode) -> Optional[str]:
    """The key of the class whose first base ``reference`` is, when that class defines no
    ``__init__`` (nor ``__new__``) and no decorator may write one: calling it runs the
    base's. None otherwise."""
    found = index.bases.get(id(reference))
    if found is None:
        return None
    classdef, position = found
    if position != 0 or classdef.decorators or any(  # ``@dataclass`` writes an __init__ of its own
            isinstance(s, cst.FunctionDef) and s.name.value in ("__init__", "__new__") for s in classdef.body.body):
        return None
    return inference.definition_key(classdef)


def _function_references(inference: Inference, references: "_Spelled", target: CallTarget):
    """The references to the function ``target.key``."""
    return [(node, 0) for node in (*references.names, *references.attributes)
            if _names_function(inference, node, target.key)]


def _names_function(inference: Inference, node: cst.BaseExpression, key: str) -> bool:
    local = inference.local_definition(node)
    if isinstance(local, (cst.FunctionDef, cst.ClassDef)):
        return inference.definition_key(local) == key
    # ``exp.train(args)`` where an ``if`` imported ``exp`` as one of two modules: a call
    # that may be the def's passes what it passes (one more value to meet, never fewer).
    return any(inference.project.absolute(name) == key
               for name in inference.resolver.qualified_names(node) if not name.startswith("<local>."))


def _method_references(inference: Inference, references: "_Spelled", target: CallTarget):
    """The references to the method ``target.method`` of class ``target.key`` on
    its instances (a bound call: ``target.position`` counts after ``self``), and
    called through the class with the instance first (``BaseModel.initialize(self,
    opt)`` in a subclass's override: one more argument before it), each with how
    many arguments the call passes before ``self``'s. A call on a receiver that may be
    an instance of the class, of a class inheriting the method, or of no class inference
    knows may be one of the method's: it counts (one more value to meet, never fewer)."""
    found = []
    for node in references.attributes:
        qualified = inference.resolver.resolve(node)
        if qualified is not None:
            owner = inference.project.absolute(qualified.rpartition(".")[0])
            if owner == target.key:
                # ``Logger.log(logger, ...)``: if not a call, seen below; a static method takes no instance.
                found.append((node, 0 if target.static else 1))
                continue
            continue  # ``np.log``, ``torch.log``: a module's function
        receiver = inference.receiver_value(node.value)  # a call on None raises: not a run's
        classes = instance_classes(receiver)
        if target.key in classes:
            # One class or one of several (``model`` made by a factory's branches): a call
            # that may be the method's passes what it passes (one more value to meet).
            found.append((node, 0))
        elif receiver.kind in _NOT_AN_INSTANCE or (receiver.kind is Kind.MODULE and receiver.instance_of is None):
            continue  # a tensor's ``.log()``, a torch module's method
        elif classes and all(inference.project.defines_method(key, target.method) for key in classes):
            continue  # an instance of a class with a method of its own of that name
        else:
            # A receiver inference does not know (``model`` of a factory one of whose classes
            # it cannot read), or an instance of a class that may inherit the method: the
            # call may be the method's, so what it passes is one more value to meet.
            found.append((node, 0))
    return found


def _passed_value(inference: Inference, call: cst.Call, target: CallTarget, shift: int = 0) -> Optional[Value]:
    """What ``call`` passes for the parameter (its default when left out); None when unknown.
    ``shift``: arguments the call passes before the parameters ``target.position`` counts
    (the instance, in a call through the class)."""
    if any(arg.star for arg in call.args):
        return _forwarded_value(inference, call, target, shift)
    positional = [arg for arg in call.args if arg.keyword is None]
    position = target.position + shift if target.position is not None else None
    if position is not None and position < len(positional):
        return inference.value(positional[position].value)
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == target.parameter:
            return inference.value(arg.value)
    return target.default


def _forwarded_value(inference: Inference, call: cst.Call, target: CallTarget, shift: int) -> Optional[Value]:
    """What a call handing on its def's ``*args`` / ``**kwargs`` passes for the parameter:
    what that def's own calls pass there (``GANimation(*args, **kwargs)`` in a factory
    function); a keyword the call names itself wins. None when unknown."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == target.parameter:
            return inference.value(arg.value)
    shifted = replace(target, position=target.position + shift) if target.position is not None else target
    outer = inference.forwarding_target(call, shifted)
    if outer is None:
        return None
    if shifted.position is not None and outer.position is None:
        return None  # handed on as a keyword only: a caller's positional argument cannot reach it
    value = inference.project.parameter_from_project(outer)
    return None if value == UNKNOWN else value
