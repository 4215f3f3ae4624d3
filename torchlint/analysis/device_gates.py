"""Code that runs only where CUDA is available.

Old training scripts often choose how to load a checkpoint by asking:

    if torch.cuda.is_available():
        state = torch.load(path)                    # runs only with a GPU
    else:
        state = torch.load(path, map_location="cpu")

A problem that only a machine without CUDA meets (TL203: a GPU checkpoint
fails to load there) cannot happen in the first branch. This module finds
such code, on Python's tree of the whole file:

- the body of an ``if`` whose test *implies* CUDA is available, and the
  ``else`` of one whose test is ``not`` such a test;
- the rest of a block after ``if not <test>:`` that always leaves the block
  (``raise``, ``return``, ``continue``, ``break``, ``sys.exit()``), or after
  ``assert <test>``.

A test implies CUDA when it is a call of ``torch.cuda.is_available``
(however imported), an ``and`` with such an operand, or a name of the file
every binding of which is such a test (``use_cuda = torch.cuda.is_available()``).
A name is never taken as evidence by its spelling: ``if args.cuda:`` is not a
gate, since ``--cuda`` may be passed on a machine without one.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Tuple

from torchlint.analysis.outline import Outline, calls_resolving_to, may_resolve_to

LineRange = Tuple[int, int]

_IS_AVAILABLE = frozenset({"torch.cuda.is_available"})
_EXITS = frozenset({"sys.exit", "os._exit"})
_EXIT_BUILTINS = frozenset({"exit", "quit"})
# Statements holding lists of statements, and the fields holding them.
_BLOCKS = {
    ast.Module: ("body",), ast.FunctionDef: ("body",), ast.AsyncFunctionDef: ("body",), ast.ClassDef: ("body",),
    ast.If: ("body", "orelse"), ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",),
    ast.Try: ("body", "orelse", "finalbody"), ast.ExceptHandler: ("body",),
}


def cuda_only_ranges(outline: Outline, lines: Optional[Iterable[int]] = None) -> Tuple[LineRange, ...]:
    """First and last line of each run of statements that executes only where
    ``torch.cuda.is_available()`` is true. ``lines``: only ranges holding one
    of them are wanted (a file's findings); the others may be left out."""
    wanted = None if lines is None else frozenset(lines)
    key = f"cuda-only ranges at {sorted(wanted) if wanted is not None else None}"
    return outline.memo(key, lambda: tuple(sorted(set(_find(outline, wanted)))))


def _find(outline: Outline, wanted: Optional[FrozenSet[int]]) -> Iterator[LineRange]:
    if not calls_resolving_to(outline, _IS_AVAILABLE):
        return  # no test of the file can ask (most files)
    flags = _availability_flags(outline)
    for kind, fields in _BLOCKS.items():
        for node in outline.nodes(kind):
            for field in fields:
                block = getattr(node, field, None) or []
                for found in _gated_in(outline, block, flags):
                    if wanted is None or any(found[0] <= line <= found[1] for line in wanted):
                        yield found


def _gated_in(outline: Outline, block: Sequence[ast.stmt], flags: FrozenSet[str]) -> Iterator[LineRange]:
    """The CUDA-only runs a statement of ``block`` makes: its branches, or the rest of the block."""
    for index, statement in enumerate(block):
        if isinstance(statement, ast.If):
            if _implies_cuda(outline, statement.test, flags):
                yield _span(statement.body)
            elif _denies_cuda(outline, statement.test, flags):
                if statement.orelse:
                    yield _span(statement.orelse)
                elif _always_leaves(outline, statement.body) and index + 1 < len(block):
                    yield _span(block[index + 1:])
        elif isinstance(statement, ast.Assert) and _implies_cuda(outline, statement.test, flags):
            if index + 1 < len(block):
                yield _span(block[index + 1:])


def _implies_cuda(outline: Outline, test: ast.expr, flags: FrozenSet[str]) -> bool:
    if isinstance(test, ast.Call):
        return not test.args and not test.keywords and may_resolve_to(outline, test.func, _IS_AVAILABLE)
    if isinstance(test, ast.Name):
        return test.id in flags
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_implies_cuda(outline, value, flags) for value in test.values)
    return False


def _denies_cuda(outline: Outline, test: ast.expr, flags: FrozenSet[str]) -> bool:
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _implies_cuda(
        outline, test.operand, flags)


def _availability_flags(outline: Outline) -> FrozenSet[str]:
    """Names every binding of which, anywhere in the file, is a test implying
    CUDA (``use_cuda = args.cuda and torch.cuda.is_available()``). A name
    bound any other way (a parameter, a loop variable, an import, ``+=``...)
    is no flag: its value may come from elsewhere."""
    implying: Dict[str, bool] = {}
    assigned: Dict[str, int] = {}
    for node in outline.nodes(ast.Assign):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            implying[name] = implying.get(name, True) and _implies_cuda(outline, node.value, frozenset())
            assigned[name] = assigned.get(name, 0) + 1
    candidates = {name for name, implies in implying.items() if implies}
    if not candidates:
        return frozenset()
    stores: Dict[str, int] = {}
    for name in outline.nodes(ast.Name):
        if name.id in candidates and not isinstance(name.ctx, ast.Load):
            stores[name.id] = stores.get(name.id, 0) + 1
    bound_otherwise = _bound_without_store(outline)
    return frozenset(name for name in candidates
                     if stores.get(name, 0) == assigned[name] and name not in bound_otherwise)


def _bound_without_store(outline: Outline) -> FrozenSet[str]:
    """Names bound by something other than a ``Name`` target: parameters,
    imports, defs, classes, ``except ... as``, ``global``/``nonlocal``."""
    found = {arg.arg for arg in outline.nodes(ast.arg)}
    for kind in (ast.Import, ast.ImportFrom):
        for node in outline.nodes(kind):
            found.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    for kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        found.update(node.name for node in outline.nodes(kind))
    found.update(node.name for node in outline.nodes(ast.ExceptHandler) if node.name)
    for kind in (ast.Global, ast.Nonlocal):
        for node in outline.nodes(kind):
            found.update(node.names)
    return frozenset(found)


def _always_leaves(outline: Outline, body: List[ast.stmt]) -> bool:
    """Does ``body`` end with a statement that never falls through?"""
    last = body[-1]
    if isinstance(last, (ast.Raise, ast.Return, ast.Continue, ast.Break)):
        return True
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        func = last.value.func
        if isinstance(func, ast.Name) and func.id in _EXIT_BUILTINS:
            return True
        return may_resolve_to(outline, func, _EXITS)  # sys.exit(...), however imported
    return False


def _span(statements: Sequence[ast.stmt]) -> LineRange:
    first = statements[0]
    last = statements[-1]
    start = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
    return start, getattr(last, "end_lineno", None) or last.lineno
