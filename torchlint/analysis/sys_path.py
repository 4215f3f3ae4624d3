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

Where a folder goes matters as much: ``sys.path.insert(0, lib)`` puts it
before the script's own folder, so ``lib/helpers.py`` shadows a
``helpers.py`` beside the script; ``append`` (or an insert further down)
puts it after every folder already there.
"""

from __future__ import annotations

import ast
import os
from typing import Dict, List, NamedTuple, Optional, Tuple

_PATH_FUNCTIONS = {"join", "dirname", "abspath", "realpath", "normpath"}


class AddedFolders(NamedTuple):
    """The folders a module puts on ``sys.path``: ``first``, inserted in front
    (the last inserted first, as Python searches them), and ``last``, appended."""

    first: List[str]
    last: List[str]


def added_folders(tree: ast.Module, path: str) -> AddedFolders:
    """The folders the module at ``path`` puts on ``sys.path`` at its top level."""
    known: Dict[str, str] = {"__file__": path}
    adders: Dict[str, bool] = {}  # function name -> does it insert in front
    found = AddedFolders([], [])
    for statement in tree.body:
        in_front = _adds_its_parameter(statement) if isinstance(statement, ast.FunctionDef) else None
        if in_front is not None:
            adders[statement.name] = in_front
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
                added_path, in_front = added
                folder = os.path.normpath(
                    added_path if os.path.isabs(added_path) else os.path.join(os.path.dirname(path), added_path))
                if in_front:
                    found.first.insert(0, folder)
                else:
                    found.last.append(folder)
    return found


def _formatted(expr: Optional[ast.AST], known: Dict[str, str]) -> Optional[str]:
    """A path spelled by string formatting of known paths: ``'%s/../common' % here``,
    ``'{}/lib'.format(here)``, ``f'{here}/lib'``, ``here + '/lib'``."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left, right = _path(expr.left, known), _path(expr.right, known)
        return left + right if left is not None and right is not None else None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod) and isinstance(expr.left, ast.Constant) \
            and isinstance(expr.left.value, str):
        values = expr.right.elts if isinstance(expr.right, ast.Tuple) else [expr.right]
        parts = [_path(value, known) for value in values]
        template = expr.left.value
        if any(part is None for part in parts) or template.count("%") != len(parts) or \
                template.count("%s") != len(parts):
            return None
        return template % tuple(parts)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "format" \
            and isinstance(expr.func.value, ast.Constant) and isinstance(expr.func.value.value, str) \
            and not expr.keywords:
        parts = [_path(argument, known) for argument in expr.args]
        template = expr.func.value.value
        if any(part is None for part in parts) or template.count("{}") != len(parts) or \
                template.count("{") != len(parts):
            return None
        return template.format(*parts)
    if isinstance(expr, ast.JoinedStr):
        pieces = []
        for value in expr.values:
            if isinstance(value, ast.FormattedValue):
                if value.format_spec is not None or value.conversion != -1:
                    return None
                piece = _path(value.value, known)
            else:
                piece = _path(value, known)
            if piece is None:
                return None
            pieces.append(piece)
        return "".join(pieces)
    return None


def _added(call: ast.Call, adders: Dict[str, bool], known: Dict[str, str]) -> Optional[Tuple[str, bool]]:
    """The folder a top-level call puts on ``sys.path``, and whether in front."""
    argument, in_front = None, False
    if _is_sys_path_call(call.func):
        argument, in_front = (call.args[-1] if call.args else None), _inserts_in_front(call)
    elif isinstance(call.func, ast.Name) and call.func.id in adders and call.args:
        argument, in_front = call.args[0], adders[call.func.id]
    folder = _path(argument, known) if argument is not None else None
    return (folder, in_front) if folder is not None else None


def _inserts_in_front(call: ast.Call) -> bool:
    """``sys.path.insert(0, ...)``: before the script's own folder."""
    return (isinstance(call.func, ast.Attribute) and call.func.attr == "insert" and len(call.args) == 2
            and isinstance(call.args[0], ast.Constant) and call.args[0].value == 0
            and type(call.args[0].value) is int)


def _is_sys_path_call(func: ast.AST) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr in ("insert", "append")
            and isinstance(func.value, ast.Attribute) and func.value.attr == "path"
            and isinstance(func.value.value, ast.Name) and func.value.value.id == "sys")


def _adds_its_parameter(function: ast.FunctionDef) -> Optional[bool]:
    """``def add_path(path): ... sys.path.insert(0, path)``: whether it puts the
    folder in front (None: it does not put its parameter on ``sys.path``)."""
    if not function.args.args:
        return None
    parameter = function.args.args[0].arg
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and _is_sys_path_call(node.func) and node.args:
            last = node.args[-1]
            if isinstance(last, ast.Name) and last.id == parameter:
                return _inserts_in_front(node)
    return None


def _path(expr: Optional[ast.AST], known: Dict[str, str]) -> Optional[str]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ast.Name):
        return known.get(expr.id)
    spelled = _formatted(expr, known)
    if spelled is not None:
        return spelled
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
