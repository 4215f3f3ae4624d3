"""Which module-level names of a module hold its run's configuration.

Research code keeps its settings in a global built by a configuration library
(``__C = edict()``, ``cfg = __C`` and ``__C.TRAIN.COEFF.KL = 2.0`` in
``config.py``, then ``from config import cfg`` wherever a setting is read).
What such an object holds comes from the module's literals and from parsed
files (YAML, JSON): numbers, strings and lists of them, never a tensor. A
module importing the name may then read ``cfg.TRAIN.COEFF.KL * loss`` as a
number times a loss, which adds no dimension.

A name counts only where every top-level binding of it is such a call or
another such name, and no statement of the module stores anything but a
literal (or a call of literals) into one of them (``cfg.MEAN = torch.zeros(3)``
would put a tensor there). Stores made by other modules are not read: they are
options as well where they come from the command line (``cfg.GPU_ID = args.gpu``).
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Set

from torchlint.analysis.outline import Outline, import_bindings
from torchlint.knowledge.torch_api import CONFIGURATION_SOURCES


def configuration_globals(outline: Outline) -> FrozenSet[str]:
    """The names ``outline``'s module binds at its top level to a configuration object."""
    return outline.memo("configuration globals", lambda: frozenset(_configuration_globals(outline)))


def _configuration_globals(outline: Outline) -> Set[str]:
    tree = outline.tree
    if not isinstance(tree, ast.Module):
        return set()
    imported = import_bindings(outline)
    bound: Dict[str, List[ast.AST]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(statement.value)
    found: Set[str] = set()
    changed = True
    while changed:  # ``cfg = __C`` after ``__C = edict()``: to a fixed point
        changed = False
        for name, values in bound.items():
            if name not in found and all(_configuration(value, imported, found) for value in values):
                found.add(name)
                changed = True
    # ``__C.TRAIN.LR = 0.1`` stores through one name of the group, ``cfg`` reads another.
    return found if all(_only_literals_stored(outline, name, imported) for name in found) else set()


def _configuration(value: ast.AST, imported: Dict[str, List], found: Set[str]) -> bool:
    if isinstance(value, ast.Name):
        return value.id in found
    if not isinstance(value, ast.Call):
        return False
    return _qualified(value.func, imported) in CONFIGURATION_SOURCES


def _qualified(func: ast.AST, imported: Dict[str, List]) -> str:
    parts: List[str] = []
    while isinstance(func, ast.Attribute):
        parts.insert(0, func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return ""
    targets = imported.get(func.id, [])
    if not targets:
        return ".".join([func.id, *parts])  # a builtin (``dict``) or a name of the module
    if len(targets) != 1:
        return ""
    head = targets[0] if targets[0] is not None else func.id
    return ".".join([head, *parts])


def _only_literals_stored(outline: Outline, name: str, imported: Dict[str, List]) -> bool:
    """Does every store into ``name``'s attributes or items (``name.A.B = v``,
    ``name['k'] = v``) anywhere in the module store a literal or a configuration?"""
    for node in outline.nodes(ast.Assign):
        for target in node.targets:  # type: ignore[attr-defined]
            if _rooted_at(target, name) and not _literal(node.value, imported):  # type: ignore[attr-defined]
                return False
    for node in outline.nodes(ast.AugAssign):
        if _rooted_at(node.target, name) and not _literal(node.value, imported):  # type: ignore[attr-defined]
            return False
    return True


def _rooted_at(target: ast.AST, name: str) -> bool:
    if not isinstance(target, (ast.Attribute, ast.Subscript)):
        return False
    while isinstance(target, (ast.Attribute, ast.Subscript)):
        target = target.value
    return isinstance(target, ast.Name) and target.id == name


def _literal(value: ast.AST, imported: Dict[str, List]) -> bool:
    """A constant, a container of constants, or a configuration call (``edict()``)."""
    try:
        ast.literal_eval(value)
        return True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(value, ast.Call):
        # ``edict()``, ``np.array([[102.98, 115.95, 122.77]])``: a container made of literals
        callee = _qualified(value.func, imported)
        return (callee in CONFIGURATION_SOURCES or callee.startswith("numpy.") or callee in _CONTAINERS) and all(
            _literal(arg, imported) for arg in value.args) and all(_literal(k.value, imported) for k in value.keywords)
    if isinstance(value, ast.UnaryOp):
        return _literal(value.operand, imported)
    return isinstance(value, ast.BinOp) and _literal(value.left, imported) and _literal(value.right, imported)


_CONTAINERS = frozenset({"dict", "list", "tuple", "set", "builtins.dict", "builtins.list", "builtins.tuple"})
