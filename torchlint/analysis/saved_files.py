"""Which ``torch.save`` calls of a file wrote what a ``torch.load`` of it reads.

A load and a save meet when they name the same path: the same expression
(``path``, ``args.resume``, ``os.path.join(d, "best.pth")``), or paths ending
in the same file name that a string literal spells whole
(``os.path.join(out_dir, 'best.pth')`` and ``ckpt_dir + '/best.pth'``). TL214
asks what the file holds (tensors or pickled objects, ``what_is_saved``);
TL203 whether its tensors are all on the CPU (``holds_cpu_values_only``);
TL206 whether the file holds a deliberate subset of a state dict.

When the file itself never saves there, the scripts beside it may: a
``preprocess.py`` that saves a vocabulary to ``data/vocab.pt`` and a
``train.py`` that loads ``data/vocab.pt``. Across modules only a file name a
string literal spells whole matches (``path`` in one module says nothing of
``path`` in another); ``folder_saves`` answers for one module of the folder,
the project model (``Project.saves_in_folder``) asks each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

import libcst as cst

from torchlint.analysis.checkpoint_paths import path_argument, path_key as _key
from torchlint.analysis.inference import Kind, Value
from torchlint.analysis.scopes import ClassScope
from torchlint.knowledge.torch_api import TORCH_SAVE

if TYPE_CHECKING:
    from torchlint.analysis.context import FileContext
    from torchlint.analysis.inference import Inference

# What a ``torch.save`` call writes, as far as the code shows.
WEIGHTS = "weights"  # tensors, state dicts, plain containers and numbers: weights_only=True loads it
PICKLED = "pickled"  # a whole module or an instance of a class: only weights_only=False loads it
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Saved:
    kind: str
    what: str = ""  # for a message: "a whole module (`model`)"


_Saves = Dict[str, List[Tuple[cst.BaseExpression, cst.Call]]]


def saves_read_by(load: cst.Call, file: "FileContext") -> List[Tuple[cst.BaseExpression, cst.Call]]:
    """The ``(object, torch.save call)`` pairs of the file that write where ``load``
    (a ``torch.load`` call) reads; the file's calls must have been gathered."""
    source = path_argument(load, 0, "f")
    if source is None:
        return []
    by_path, by_name = file.memo(("saved files", "saves"), lambda: _saves_by_path(file))
    return by_path.get(_key(source)) or by_name.get(_file_name(source, file.inference) or "", [])


def written_by_the_loading_code(load: cst.Call, file: "FileContext") -> bool:
    """Did the code around ``load`` write the file itself, to the same path
    expression: earlier in the same def (a test's round trip: the same run,
    on the same machine), or, for a path the object holds (``self.path``), in
    a method of the same class (a cache the class writes and reads back)?"""
    source = path_argument(load, 0, "f")
    if source is None:
        return False
    key = _key(source)
    by_path, _ = file.memo(("saved files", "saves"), lambda: _saves_by_path(file))
    scope_of = file.resolver.scope_of
    here = scope_of(load)
    if here is None:
        return False
    order = file.memo(("saved files", "order"), lambda: {id(n): i for i, n in enumerate(file.nodes(cst.Call))})
    for saved, save in by_path.get(key, ()):
        there = scope_of(save)
        earlier = order.get(id(save), 0) < order.get(id(load), 0)
        if there is here and here is not here.globals and earlier:
            return True
        if there is here and _in_other_branches(load, save, here.node if here is not here.globals else file.module) \
                and not _holds_model_state(saved, file.inference):
            # ``if exists(p): x = load(p)`` / ``else: x = make(); save(x, p)``: its own cache of
            # what it computes. Not a trained model's state: that file may come from a GPU run.
            return True
        if there is here and earlier and _runs_unconditionally(save, file):
            return True  # a script that saves at its top level, then reads the file back (a tutorial)
        if (key.startswith("self.") and there is not None and isinstance(here.parent, ClassScope)
                and there.parent is here.parent):
            return True
    return False


def _holds_model_state(obj: cst.BaseExpression, inference: "Inference", depth: int = 0) -> bool:
    """Does a saved object hold a module or a state (``model``, ``model.state_dict()``,
    ``optimizer.state_dict()``, a dict or list holding one, a name bound to one)?"""
    if depth > 3:
        return True
    if isinstance(obj, cst.Call) and isinstance(obj.func, cst.Attribute) and obj.func.attr.value == "state_dict":
        return True
    if isinstance(obj, cst.Dict):
        return any(not isinstance(e, cst.DictElement) or _holds_model_state(e.value, inference, depth + 1)
                   for e in obj.elements)
    if isinstance(obj, (cst.List, cst.Tuple)):
        return any(not isinstance(e, cst.Element) or _holds_model_state(e.value, inference, depth + 1)
                   for e in obj.elements)
    if isinstance(obj, cst.Name):
        values = inference.bound_values(obj) or ()
        if any(_holds_model_state(value, inference, depth + 1) for value in values):
            return True
    return inference.value(obj).kind is Kind.MODULE


def _in_other_branches(load: cst.Call, save: cst.Call, within: Optional[cst.CSTNode]) -> bool:
    """Are ``load`` and ``save`` in the two branches of one ``if`` of ``within`` (a def or
    the module)? The code then reads the file where it exists and writes it where it
    does not: what it reads is what it made, on the machine that reads it."""
    if within is None:
        return False
    for statement in _ifs(within):
        if statement.orelse is None:
            continue
        body, orelse = _holds(statement.body, load), _holds(statement.orelse, load)
        if body == orelse:
            continue  # in neither branch (or in an inner ``if``: asked there)
        if _holds(statement.orelse if body else statement.body, save):
            return True
    return False


def _ifs(within: cst.CSTNode) -> List[cst.If]:
    found: List[cst.If] = []

    class _Ifs(cst.CSTVisitor):
        def visit_If(self, node: cst.If) -> None:
            found.append(node)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is within  # the ifs of this def, not of defs inside it

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

    within.visit(_Ifs())
    return found


def _holds(tree: cst.CSTNode, target: cst.CSTNode) -> bool:
    """Is ``target`` (the very node) inside ``tree``?"""
    found = []

    class _Find(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if node is target:
                found.append(node)
            return not found

    tree.visit(_Find())
    return bool(found)


def _runs_unconditionally(call: cst.Call, file: "FileContext") -> bool:
    """Is ``call`` in a statement of the module's own body (no ``if``, loop, ``try`` or
    ``with`` around it)? Every run of the script then runs it before what follows."""
    line = file.line_of_call(call)
    return line is not None and file.module is not None and any(line is statement for statement in file.module.body)


def _saves_by_path(file: "FileContext") -> Tuple[_Saves, _Saves]:
    """Every ``torch.save(obj, path)`` of the file, by the code of ``path``, and by the file
    name it spells (``os.path.join(out_dir, 'best.pth')``: ``best.pth``)."""
    by_path: _Saves = {}
    by_name: _Saves = {}
    resolve = file.resolver.resolve

    for node in file.nodes(cst.Call):
        if resolve(node.func) not in TORCH_SAVE:  # type: ignore[attr-defined]
            continue
        obj, path = path_argument(node, 0, "obj"), path_argument(node, 1, "f")  # type: ignore[arg-type]
        if obj is not None and path is not None:
            by_path.setdefault(_key(path), []).append((obj, node))
            name = _file_name(path, file.inference)
            if name is not None:
                by_name.setdefault(name, []).append((obj, node))
    return by_path, by_name


def _file_name(path: cst.BaseExpression, inference: Optional["Inference"] = None, depth: int = 0) -> Optional[str]:
    """The file name a path expression ends in, when a string literal spells it whole:
    ``best.pth`` of ``os.path.join(out_dir, 'best.pth')``, ``out_dir + '/best.pth'``,
    ``'%s/best.pth' % out_dir`` or ``f'{out_dir}/best.pth'``; a name with an extension
    and nothing formatted into it (``'model_%d.pth' % epoch`` names many files). With
    ``inference``, a name is followed to the value every run reaches it with
    (``save_path = os.path.join(d, name)``), and a file name that is all a formatting
    template (``'{}_net_{}.pth'.format(label, epoch)``) is that template: the naming
    scheme of a family of files, which the code that writes them and the code that
    reads them spell alike."""
    leaf = _last_leaf(path)
    if isinstance(leaf, cst.Name) and inference is not None and depth < 4:
        value = inference.dominating_value(leaf)
        return _file_name(value, inference, depth + 1) if value is not None else None
    template = _template(leaf) if inference is not None else None
    if template is not None:
        return template
    whole = True  # the literal is the whole path, or follows a separate directory part
    if isinstance(leaf, cst.BinaryOperation) and isinstance(leaf.operator, cst.Modulo):
        leaf, whole = leaf.left, False
    if isinstance(leaf, cst.SimpleString):
        text = leaf.evaluated_value
    elif isinstance(leaf, cst.FormattedString) and leaf.parts and isinstance(leaf.parts[-1], cst.FormattedStringText):
        text, whole = leaf.parts[-1].value, len(leaf.parts) == 1
    else:
        return None
    if not isinstance(text, str) or (not whole and "/" not in text):
        return None
    name = text.replace("\\", "/").rsplit("/", 1)[-1]
    if "." not in name.strip(".") or any(mark in name for mark in "%{}*"):
        return None
    return name


def _template(leaf: cst.BaseExpression) -> Optional[str]:
    """``'{}_net_{}.pth'.format(...)`` or ``'net_%d.pth' % n`` with no folder in the literal:
    the template, as the key of the files it names (marked as one: ``{}_net_{}.pth``)."""
    if isinstance(leaf, cst.Call) and isinstance(leaf.func, cst.Attribute) and leaf.func.attr.value == "format" \
            and isinstance(leaf.func.value, cst.SimpleString):
        text = leaf.func.value.evaluated_value
    elif isinstance(leaf, cst.BinaryOperation) and isinstance(leaf.operator, cst.Modulo) \
            and isinstance(leaf.left, cst.SimpleString):
        text = leaf.left.evaluated_value
    else:
        return None
    if not isinstance(text, str) or "/" in text or "\\" in text or not any(mark in text for mark in "%{"):
        return None
    extension = text.rsplit(".", 1)[-1] if "." in text else ""
    return text if extension and not any(mark in extension for mark in "%{}") else None


def _last_leaf(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The last part of a path expression: ``'best.pth'`` of ``os.path.join(d, 'best.pth')``,
    ``d + '/best.pth'`` or ``Path(d) / 'best.pth'``."""
    while True:
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Divide)):
            expr = expr.right
        elif (isinstance(expr, cst.Call) and _called_name(expr.func) == "join" and expr.args
              and all(a.keyword is None and not a.star for a in expr.args)):
            expr = expr.args[-1].value
        else:
            return expr


def _called_name(func: cst.BaseExpression) -> Optional[str]:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else None




def loaded_file_name(load: cst.Call, inference: Optional["Inference"] = None) -> Optional[str]:
    """The file name a string literal spells whole in the path ``load`` reads (``_file_name``)."""
    source = path_argument(load, 0, "f")
    return _file_name(source, inference) if source is not None else None


def folder_saves(inference: "Inference", file_name: str) -> List[Tuple[Saved, bool, str]]:
    """Each ``torch.save`` of a module (its ``inference``) to a path ending in
    ``file_name``: what it writes, whether it holds CPU values only, and its code."""
    resolve = inference.resolver.resolve
    found = []
    for call in inference.file_calls:
        if resolve(call.func) not in TORCH_SAVE:
            continue
        obj, path = path_argument(call, 0, "obj"), path_argument(call, 1, "f")
        if obj is not None and path is not None and _file_name(path, inference) == file_name:
            found.append((what_is_saved(obj, inference), holds_cpu_values_only(obj, inference), _key(call)))
    return found


def what_is_saved(obj: cst.BaseExpression, inference: "Inference", depth: int = 0) -> Saved:
    """What saving ``obj`` writes: WEIGHTS, PICKLED or UNKNOWN."""
    if depth > 4:
        return Saved(UNKNOWN)
    if isinstance(obj, _PLAIN) or (isinstance(obj, cst.Name) and obj.value in ("True", "False", "None")):
        return Saved(WEIGHTS)
    if isinstance(obj, cst.Call) and isinstance(obj.func, cst.Attribute) and obj.func.attr.value == "state_dict":
        return Saved(WEIGHTS)
    if inference.is_module(obj):
        return Saved(PICKLED, f"a whole module (`{_shortened(_key(obj), 30)}`)")
    if inference.is_tensor(obj) or _holds_numbers_only(inference.value(obj)):
        return Saved(WEIGHTS)
    if isinstance(obj, cst.Call):
        local = inference.local_class(obj.func)
        if local is not None:
            return Saved(PICKLED, f"an instance of the class `{local.name.value}`")
        return Saved(UNKNOWN)
    if isinstance(obj, cst.Dict):
        parts: List[cst.BaseExpression] = []
        for element in obj.elements:
            if not isinstance(element, cst.DictElement):
                return Saved(UNKNOWN)
            parts.extend((element.key, element.value))
        return combine([what_is_saved(part, inference, depth + 1) for part in parts])
    if isinstance(obj, (cst.List, cst.Tuple)):
        if any(not isinstance(e, cst.Element) for e in obj.elements):
            return Saved(UNKNOWN)
        return combine([what_is_saved(e.value, inference, depth + 1) for e in obj.elements])
    if isinstance(obj, cst.Name):
        values = inference.bound_values(obj)
        if values:
            return combine([what_is_saved(value, inference, depth + 1) for value in values])
    return Saved(UNKNOWN)


def combine(parts: Sequence[Saved]) -> Saved:
    """Saves of several values: pickled if any is, weights if all are."""
    for part in parts:
        if part.kind == PICKLED:
            return part
    if all(part.kind == WEIGHTS for part in parts):
        return Saved(WEIGHTS)
    return Saved(UNKNOWN)


_PLAIN = (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
_GRAD_SCALERS = frozenset({"torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.cpu.amp.GradScaler",
                           "torch.amp.grad_scaler.GradScaler"})


# Methods whose result holds no tensor on a GPU: a copy on the CPU, or NumPy values and numbers.
_TO_THE_CPU = frozenset({"cpu", "numpy", "tolist", "item"})


def holds_cpu_values_only(obj: cst.BaseExpression, inference: "Inference", depth: int = 0) -> bool:
    """Is every tensor a saved object holds on the CPU (or does it hold none)?"""
    if isinstance(obj, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return True
    if isinstance(obj, cst.Dict):
        return all(isinstance(e, cst.DictElement) and holds_cpu_values_only(e.value, inference, depth)
                   for e in obj.elements)
    if (isinstance(obj, cst.Call) and not obj.args and isinstance(obj.func, cst.Attribute)
            and obj.func.attr.value == "state_dict"):
        owner = obj.func.value
        moved = isinstance(owner, cst.Call) and isinstance(owner.func, cst.Attribute) and owner.func.attr.value == "cpu"
        return (moved or inference.value(owner).cuda is False or _holds_numbers_state(owner, inference)
                or (isinstance(owner, cst.Name) and inference.built_and_never_moved(owner)))
    if (isinstance(obj, cst.Call) and not obj.args and isinstance(obj.func, cst.Attribute)
            and obj.func.attr.value in _TO_THE_CPU):
        return True  # ``tensor.detach().cpu()``, ``x.numpy()``: moved off the GPU, or no tensor at all
    if isinstance(obj, (cst.List, cst.Tuple, cst.Set)):
        return all(isinstance(e, cst.Element) and holds_cpu_values_only(e.value, inference, depth)
                   for e in obj.elements)
    if isinstance(obj, cst.Name) and depth < 4:
        values = inference.bound_values(obj)
        if values and all(holds_cpu_values_only(value, inference, depth + 1) for value in values):
            return True
    return _holds_numbers_only(inference.value(obj), options=True)


def _holds_numbers_only(value: Value, options: bool = False) -> bool:
    """A number or None, or a tuple or dict of them (``word2idx[w] = len(word2idx)``); with
    ``options``, the command line's options too (``parser.parse_args()``, ``vars()`` of
    them): no tensor, but an ``argparse.Namespace`` is a pickled object to ``weights_only``."""
    if value.kind in (Kind.NUMBER, Kind.NONE) or (options and value.kind is Kind.OPTIONS):
        return True
    if value.kind == Kind.TUPLE:
        return bool(value.items) and all(_holds_numbers_only(item, options) for item in value.items)
    return value.kind == Kind.MAPPING and value.element is not None and _holds_numbers_only(value.element, options)


def _is_grad_scaler(expr: cst.BaseExpression, inference: "Inference") -> bool:
    """``torch.amp.GradScaler()``, or a name (or ``self.scaler``) only ever bound to one: its state is numbers."""
    if isinstance(expr, cst.Call):
        return inference.resolver.resolve(expr.func) in _GRAD_SCALERS
    binding = inference.only_binding(expr) if isinstance(expr, cst.Name) else None
    return binding is not None and binding.how == "assign" and not binding.path and _is_grad_scaler(binding.value, inference)


def _holds_numbers_state(owner: cst.BaseExpression, inference: "Inference") -> bool:
    """Is ``owner`` an object whose ``state_dict()`` is numbers only: a GradScaler or an
    optimizer's learning-rate schedule (``knowledge/lr_schedules.py``)?"""
    return _is_grad_scaler(owner, inference) or inference.value(owner).kind is Kind.SCHEDULE


def read_into_numbers_state(load: cst.Call, file: "FileContext") -> bool:
    """Does the code pass what ``load`` reads straight to the ``load_state_dict`` of an
    object whose state is numbers only (``scheduler.load_state_dict(torch.load(p))``)?
    The file then holds such a state, which a run of the code wrote: no tensor."""
    owners = file.memo(("saved files", "loaded into"), lambda: _loaded_into(file))
    owner = owners.get(id(load))
    return owner is not None and _holds_numbers_state(owner, file.inference)


def _loaded_into(file: "FileContext") -> Dict[int, cst.BaseExpression]:
    """For each call passed as the whole argument of ``x.load_state_dict(...)``: ``x``."""
    owners: Dict[int, cst.BaseExpression] = {}
    for node in file.nodes(cst.Call):
        func = node.func
        if (isinstance(func, cst.Attribute) and func.attr.value == "load_state_dict" and len(node.args) == 1
                and isinstance(node.args[0].value, cst.Call) and node.args[0].keyword is None):
            owners[id(node.args[0].value)] = func.value
    return owners


def _shortened(code: str, limit: int) -> str:
    return code if len(code) <= limit else code[:limit - 3] + "..."


# --- files shipped with the project -------------------------------------------------

_SAME_PATH = frozenset({"os.path.abspath", "os.path.realpath", "os.path.normpath", "builtins.str", "os.fspath",
                        "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"})
_SAME_PATH_METHODS = frozenset({"resolve", "absolute"})
_HERE = "__file__"


def shipped_file(load: cst.Call, inference: "Inference", program: bool) -> Optional[str]:
    """The path, from the loading module's folder, of the file ``load`` reads, where the
    code builds it from the module's own place (``os.path.join(os.path.dirname(__file__),
    'x.pt')``, ``Path(__file__).parent / 'x.pt'``, ``str(parent) + '/x.pt'``) or, in a
    ``program``, spells it relative (``'./oracle.trc'``: a script is run from its folder)."""
    source = path_argument(load, 0, "f")
    place = _place(source, inference, 0) if source is not None else None
    if place is None:
        return None
    anchored, path = place
    if not (anchored or program) or path in ("", ".", _HERE) or path.endswith("/" + _HERE):
        return None
    return path


def _place(expr: cst.BaseExpression, inference: "Inference", depth: int) -> Optional[Tuple[bool, str]]:
    """(whether the path starts from ``__file__``, the path relative to the module's folder,
    ``__file__`` standing for the module itself); None: not a path the code spells."""
    if depth > 8:
        return None
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
        text = expr.evaluated_value
        if not isinstance(text, str) or not text or text.startswith(("/", "~", "\\")) or ":" in text:
            return None
        return False, text
    if isinstance(expr, cst.Name):
        if expr.value == _HERE:
            return True, _HERE
        value = inference.dominating_value(expr)
        return _place(value, inference, depth + 1) if value is not None else None
    if isinstance(expr, cst.Attribute) and expr.attr.value == "parent":
        inner = _place(expr.value, inference, depth + 1)
        return (inner[0], _parent(inner[1])) if inner is not None else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Divide, cst.Add)):
        left = _place(expr.left, inference, depth + 1)
        literal = expr.right.evaluated_value if isinstance(expr.right, cst.SimpleString) else None
        if isinstance(expr.operator, cst.Add) and isinstance(literal, str):
            right: Optional[Tuple[bool, str]] = (False, literal)  # '/x.pt' after a folder's text
        else:
            right = _place(expr.right, inference, depth + 1)
        if left is None or right is None or right[0]:
            return None
        if isinstance(expr.operator, cst.Add):  # ``str(folder) + '/x.pt'``: text put together
            if not left[0]:
                return False, left[1] + right[1]
            if not right[1].startswith("/"):
                return None
            return True, _join(left[1], right[1][1:])
        return left[0], _join(left[1], right[1])
    if isinstance(expr, cst.Call):
        return _called_place(expr, inference, depth)
    return None


def _called_place(call: cst.Call, inference: "Inference", depth: int) -> Optional[Tuple[bool, str]]:
    args = [a.value for a in call.args if a.keyword is None and not a.star]
    if len(args) != len(call.args):
        return None
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in _SAME_PATH_METHODS and not args:
        return _place(func.value, inference, depth + 1)
    qualified = inference.resolver.resolve(func)
    if qualified == "os.path.dirname" and len(args) == 1:
        inner = _place(args[0], inference, depth + 1)
        return (inner[0], _parent(inner[1])) if inner is not None else None
    if qualified in _SAME_PATH and len(args) == 1:
        return _place(args[0], inference, depth + 1)
    if qualified == "os.path.join" and args:
        parts = [_place(a, inference, depth + 1) for a in args]
        if any(part is None for part in parts) or any(part[0] for part in parts[1:]):  # type: ignore[index]
            return None
        path = parts[0][1]  # type: ignore[index]
        for part in parts[1:]:
            path = _join(path, part[1])  # type: ignore[index]
        return parts[0][0], path  # type: ignore[index]
    return None


def _parent(path: str) -> str:
    """The folder holding ``path`` (``__file__``: the module's folder, "")."""
    if path in ("", "."):
        return ".."
    if path == ".." or path.endswith("/.."):
        return path + "/.."
    head = path.rstrip("/").rpartition("/")[0]
    return head


def _join(folder: str, name: str) -> str:
    if folder in ("", "."):
        return name
    return folder.rstrip("/") + "/" + name
