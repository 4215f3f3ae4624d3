"""Which ``torch.save`` calls of a file wrote what a ``torch.load`` of it reads.

A load and a save meet when they name the same path: the same expression
(``path``, ``args.resume``, ``os.path.join(d, "best.pth")``), or paths ending
in the same file name that a string literal spells whole
(``os.path.join(out_dir, 'best.pth')`` and ``ckpt_dir + '/best.pth'``). TL214
asks what the file holds (tensors or pickled objects); TL206 whether the file
holds a deliberate subset of a state dict.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import FileContext
from torchlint.analysis.scopes import ClassScope
from torchlint.knowledge.torch_api import TORCH_SAVE


def path_argument(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    """The argument passed as ``keyword``, or else the ``position``-th positional one."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) > position and not any(a.star for a in positional[:position + 1]):
        return positional[position].value
    return None


def _key(path: cst.BaseExpression) -> str:
    return " ".join(cst.Module(body=[]).code_for_node(path).split())


_Saves = Dict[str, List[Tuple[cst.BaseExpression, cst.Call]]]


def saves_read_by(load: cst.Call, file: FileContext) -> List[Tuple[cst.BaseExpression, cst.Call]]:
    """The ``(object, torch.save call)`` pairs of the file that write where ``load``
    (a ``torch.load`` call) reads; the file's calls must have been gathered."""
    source = path_argument(load, 0, "f")
    if source is None:
        return []
    by_path, by_name = file.memo(("saved files", "saves"), lambda: _saves_by_path(file))
    return by_path.get(_key(source)) or by_name.get(_file_name(source) or "", [])


def written_by_the_loading_code(load: cst.Call, file: FileContext) -> bool:
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
    for _, save in by_path.get(key, ()):
        there = scope_of(save)
        if there is here and here is not here.globals and order.get(id(save), 0) < order.get(id(load), 0):
            return True
        if (key.startswith("self.") and there is not None and isinstance(here.parent, ClassScope)
                and there.parent is here.parent):
            return True
    return False


def _saves_by_path(file: FileContext) -> Tuple[_Saves, _Saves]:
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
            name = _file_name(path)
            if name is not None:
                by_name.setdefault(name, []).append((obj, node))
    return by_path, by_name


def _file_name(path: cst.BaseExpression) -> Optional[str]:
    """The file name a path expression ends in, when a string literal spells it whole:
    ``best.pth`` of ``os.path.join(out_dir, 'best.pth')``, ``out_dir + '/best.pth'``,
    ``'%s/best.pth' % out_dir`` or ``f'{out_dir}/best.pth'``; a name with an extension
    and nothing formatted into it (``'model_%d.pth' % epoch`` names many files)."""
    leaf = _last_leaf(path)
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


