"""Folders a module adds to ``sys.path``, read from its text.

Research code of 2017-2019 often imports its own packages from a folder it
puts on ``sys.path`` first: ``import _init_paths`` at the top of a training
script, where ``_init_paths.py`` says ``add_path(osp.join(this_dir, 'lib'))``.
The project model follows that evidence to find those packages. Only what
can be worked out without running anything counts: string literals,
``__file__``, module-level names bound to such paths, ``os.path`` functions
that compute paths (``join``, ``dirname``, ``abspath``, ...), and calls of
``sys.path.insert``/``append`` or of a function of the module that passes its
parameter on to one of them.
"""

from __future__ import annotations

import ast
import os
from typing import Dict, List, Optional, Set

_PATH_FUNCTIONS = {"join", "dirname", "abspath", "realpath", "normpath"}


def added_folders(tree: ast.Module, path: str) -> List[str]:
    """The folders the module at ``path`` puts on ``sys.path`` at its top level."""
    known: Dict[str, str] = {"__file__": path}
    adders: Set[str] = set()
    found: List[str] = []
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef) and _adds_its_parameter(statement):
            adders.add(statement.name)
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(
                statement.targets[0], ast.Name):
            value = _path(statement.value, known)
            if value is not None:
                known[statement.targets[0].id] = value
            else:
                known.pop(statement.targets[0].id, None)
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            added = _added(statement.value, adders, known)
            if added is not None:
                folder = os.path.normpath(added if os.path.isabs(added) else os.path.join(os.path.dirname(path), added))
                found.append(folder)
    return found


def _added(call: ast.Call, adders: Set[str], known: Dict[str, str]) -> Optional[str]:
    argument = None
    if _is_sys_path_call(call.func):
        argument = call.args[-1] if call.args else None
    elif isinstance(call.func, ast.Name) and call.func.id in adders and call.args:
        argument = call.args[0]
    return _path(argument, known) if argument is not None else None


def _is_sys_path_call(func: ast.AST) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr in ("insert", "append")
            and isinstance(func.value, ast.Attribute) and func.value.attr == "path"
            and isinstance(func.value.value, ast.Name) and func.value.value.id == "sys")


def _adds_its_parameter(function: ast.FunctionDef) -> bool:
    """``def add_path(path): ... sys.path.insert(0, path)``."""
    if not function.args.args:
        return False
    parameter = function.args.args[0].arg
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and _is_sys_path_call(node.func) and node.args:
            last = node.args[-1]
            if isinstance(last, ast.Name) and last.id == parameter:
                return True
    return False


def _path(expr: Optional[ast.AST], known: Dict[str, str]) -> Optional[str]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ast.Name):
        return known.get(expr.id)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _PATH_FUNCTIONS:
        parts = [_path(argument, known) for argument in expr.args]
        if not parts or any(part is None for part in parts) or expr.keywords:
            return None
        name = expr.func.attr
        if name == "join":
            return os.path.join(*parts)
        if len(parts) != 1:
            return None
        return os.path.dirname(parts[0]) if name == "dirname" else os.path.normpath(parts[0])
    return None
