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
gate by itself, since ``--cuda`` may be passed on a machine without one.

What the code does is evidence, though. The statements of a block after one
that calls ``.cuda()`` itself (``model = Net().cuda()``, not behind a
condition) run only once that call worked: on a GPU. Those before it, back to
one that may leave the block, lead to it: a machine without CUDA stops there
whatever they did (``state = torch.load(path)``, then ``model.cuda()``, or a training
loop whose body moves each batch with ``.cuda()``, itself or through a def of the file it
calls: the loop is taken to run). And a test that
switches such calls on (``if args.cuda: model.cuda()``) is the program's GPU
mode: the code under the same test (``if args.cuda:``, the ``else`` of ``if
not args.cuda:``) runs in that mode, where a machine without CUDA stops at
those calls anyway. So is the branch of an ``if``/``else`` that loads without
``map_location=`` where the other branch loads with it: the author wrote that
one for machines without CUDA. And a script with no CPU mode at all (run as a
program, calling ``.cuda()`` in statements of its own, never behind a test,
with no ``'cpu'`` device or ``map_location`` anywhere) runs on a GPU or not at all.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Tuple

from torchlint.analysis.outline import Outline, calls_resolving_to, may_resolve_to

LineRange = Tuple[int, int]

_IS_AVAILABLE = frozenset({"torch.cuda.is_available"})
_LOADS = frozenset({"torch.load"})
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
    ``torch.cuda.is_available()`` is true, after a ``.cuda()`` call of its block,
    or under the test that switches such calls on. ``lines``: only ranges holding one
    of them are wanted (a file's findings); the others may be left out."""
    wanted = None if lines is None else frozenset(lines)
    key = f"cuda-only ranges at {sorted(wanted) if wanted is not None else None}"
    return outline.memo(key, lambda: tuple(sorted(set(_find(outline, wanted)))))


def _find(outline: Outline, wanted: Optional[FrozenSet[int]]) -> Iterator[LineRange]:
    asks = bool(calls_resolving_to(outline, _IS_AVAILABLE))
    if not asks and not outline.calls("cuda") and not outline.calls("load"):
        return  # no test of the file can ask, and nothing needs a GPU (most files)
    if not asks and _gpu_only_script(outline):
        yield 1, max(getattr(node, "end_lineno", None) or node.lineno for node in outline.tree.body)
        return
    flags = _availability_flags(outline) if asks else frozenset()
    modes = _cuda_mode_tests(outline)
    defs = {node.name: node for node in outline.tree.body if isinstance(node, ast.FunctionDef)}
    for kind, fields in _BLOCKS.items():
        for node in outline.nodes(kind):
            for field in fields:
                block = getattr(node, field, None) or []
                found_in = list(_gated_in(outline, block, flags, modes))
                after = _after_cuda_call(block)
                if after:
                    found_in.append(_span(after))
                found_in.extend(_span([statement]) for statement in _before_cuda_call(block, defs))
                for found in found_in:
                    if wanted is None or any(found[0] <= line <= found[1] for line in wanted):
                        yield found


def gpu_only_program(outline: Outline) -> bool:
    """``_gpu_only_script``, for the project model: a module that runs as a program on a GPU only."""
    return _gpu_only_script(outline)


def has_cpu_mode(outline: Outline) -> bool:
    """Does the module show a mode without CUDA: a ``.cuda()`` behind a test or a conditional
    expression, a ``'cpu'`` device or a ``map_location``?"""
    return outline.memo("cpu mode", lambda: _cpu_mode(outline))


def _cpu_mode(outline: Outline) -> bool:
    if any(_needs_cuda(node.body) or _needs_cuda(node.orelse) for node in outline.nodes(ast.If)):
        return True  # ``if args.cuda: model.cuda()``: a switch, so a mode without it
    if any(any(isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
               and inner.func.attr == "cuda" for inner in ast.walk(node)) for node in outline.nodes(ast.IfExp)):
        return True
    if any(keyword.arg == "map_location" for keyword in outline.nodes(ast.keyword)):
        return True
    return any(isinstance(node.value, str) and node.value.startswith("cpu") for node in outline.nodes(ast.Constant))


def runs_as_program(outline: Outline) -> bool:
    """Does the module run as a program (``if __name__ == "__main__":``)?"""
    return any(isinstance(node.test, ast.Compare) and isinstance(node.test.left, ast.Name)
               and node.test.left.id == "__name__" for node in outline.nodes(ast.If))


def _gpu_only_script(outline: Outline) -> bool:
    """A script written for a GPU and nothing else: run as a program (``if __name__ ==
    "__main__":``), it calls ``.cuda()`` in statements of its own (in a def's body or the
    module's, or a loop of them), and has no CPU mode at all: no ``.cuda()`` behind a test or a
    conditional expression, no ``'cpu'`` device, no ``map_location``. A machine without
    CUDA stops at those calls whatever a load did."""
    def unconditional_cuda() -> bool:
        bodies = [outline.tree.body] + [node.body for node in outline.nodes(ast.FunctionDef)]
        while bodies:
            body = bodies.pop()
            if _needs_cuda(body):
                return True
            # A loop's or a ``with``'s body is the def's main work, not a branch of it.
            bodies.extend(statement.body for statement in body
                          if isinstance(statement, (ast.For, ast.While, ast.With)))
        return False

    return outline.memo("gpu-only script", lambda: runs_as_program(outline) and unconditional_cuda()
                        and not has_cpu_mode(outline))


def _needs_cuda(block: Sequence[ast.stmt]) -> bool:
    """Does a statement of ``block`` itself (not a branch of it) call ``.cuda()``?"""
    return any(_is_cuda_statement(statement) for statement in block)


def _after_cuda_call(block: Sequence[ast.stmt]) -> Sequence[ast.stmt]:
    """The statements of ``block`` after the first one that calls ``.cuda()`` itself
    (``model = Net().cuda()``): they run only once that call worked, on a GPU."""
    for index, statement in enumerate(block):
        if _is_cuda_statement(statement):
            return block[index + 1:]
    return ()


def _before_cuda_call(block: Sequence[ast.stmt], defs: Optional[Dict[str, ast.FunctionDef]] = None
                      ) -> Sequence[ast.stmt]:
    """The statements of ``block`` (defs and classes aside) before its last one that reaches ``.cuda()``,
    back to the nearest that may leave the block (a ``return``, ``raise``, ``break`` or
    ``continue`` in it): a run that executes them goes on to that call, so on a machine
    without CUDA it fails there whatever they did (``state = torch.load(path)``, then
    ``model.load_state_dict(state)``, then ``model.cuda()``)."""
    last = max((index for index, statement in enumerate(block) if _reaches_cuda(statement, defs or {})),
               default=None)
    if last is None:
        return ()
    first = last
    while first > 0 and not _may_leave(block[first - 1]):
        first -= 1
    # a def or class between runs nothing here: its body is not on the way to the call
    return [s for s in block[first:last] if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def _reaches_cuda(statement: ast.stmt, defs: Dict[str, ast.FunctionDef], depth: int = 0) -> bool:
    """Does a run of ``statement`` call ``.cuda()``: itself, a loop or ``with`` whose body
    does before anything in it may leave (a training loop moving each batch to the GPU; the
    loop is taken to run, as the program's main work), or a call of a def of the file whose
    body does (``for epoch in ...: train(loader, model)``, ``train`` moving each batch)?"""
    if _is_cuda_statement(statement):
        return True
    if isinstance(statement, (ast.For, ast.While, ast.With)):
        return _body_reaches_cuda(statement.body, defs, depth, rounds_go_on=not isinstance(statement, ast.With))
    called = _called_def(statement, defs)
    return called is not None and depth < 3 and _body_reaches_cuda(called.body, defs, depth + 1)


def _body_reaches_cuda(body: Sequence[ast.stmt], defs: Dict[str, ast.FunctionDef], depth: int,
                       rounds_go_on: bool = False) -> bool:
    for inner in body:
        if _reaches_cuda(inner, defs, depth):
            return True
        # a ``continue`` skips one round (``except: continue`` around a bad batch), not the loop
        if _may_leave(inner, rounds_go_on=rounds_go_on):
            return False
    return False


def _called_def(statement: ast.stmt, defs: Dict[str, ast.FunctionDef]) -> Optional[ast.FunctionDef]:
    """The def of the file that ``statement`` calls as the whole of it (``train(...)``,
    ``loss = train(...)``)."""
    value = statement.value if isinstance(statement, (ast.Expr, ast.Assign)) else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return defs.get(value.func.id)
    return None


def _may_leave(statement: ast.stmt, rounds_go_on: bool = False) -> bool:
    """May a run leave the block during ``statement`` (without an exception of its own)?
    A def or class never does: its body runs when called, not here. With ``rounds_go_on``
    (a loop's body), a ``continue`` only ends the round."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    leaving = (ast.Return, ast.Raise, ast.Break) if rounds_go_on else (ast.Return, ast.Raise, ast.Break, ast.Continue)
    return any(isinstance(node, leaving) for node in _walk_here(statement))


def _walk_here(statement: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``statement`` that run with it: not the bodies of the defs, classes and
    lambdas in it (their ``return`` leaves them, not this block)."""
    pending = [statement]
    while pending:
        node = pending.pop()
        yield node
        pending.extend(child for child in ast.iter_child_nodes(node)
                       if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)))


def _is_cuda_statement(statement: ast.stmt) -> bool:
    return isinstance(statement, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)) and _calls_cuda(statement)


def _calls_cuda(node: ast.AST) -> bool:
    """A ``.cuda(...)`` call that runs whenever ``node`` does (not behind ``x if c else y``,
    ``and``/``or``, a lambda or a comprehension)."""
    if isinstance(node, (ast.IfExp, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                         ast.GeneratorExp)):
        return False
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "cuda":
        return True
    return any(_calls_cuda(child) for child in ast.iter_child_nodes(node))


def _cpu_load_branch(outline: Outline, statement: ast.If) -> Optional[List[ast.stmt]]:
    """The branch of an ``if``/``else`` that loads with ``map_location=`` while the other
    loads without one (None otherwise)."""
    if not statement.orelse:
        return None
    body, orelse = _loads(outline, statement.body), _loads(outline, statement.orelse)
    if not body or not orelse:
        return None
    if all(body) and not any(orelse):
        return statement.body
    if all(orelse) and not any(body):
        return statement.orelse
    return None


def _loads(outline: Outline, statements: Sequence[ast.stmt]) -> List[bool]:
    """For each ``torch.load`` call in ``statements``: does it pass ``map_location``?"""
    return [len(node.args) > 1 or any(k.arg == "map_location" for k in node.keywords)
            for statement in statements for node in ast.walk(statement)
            if isinstance(node, ast.Call) and may_resolve_to(outline, node.func, _LOADS)]


def _cuda_mode_tests(outline: Outline) -> FrozenSet[str]:
    """Tests (a name or attribute: ``args.cuda``) of an ``if`` whose body calls ``.cuda()``
    itself: the program's switch for running on a GPU. Code under the same test
    runs in that mode, where a machine without CUDA stops at those calls anyway."""
    return outline.memo("cuda mode tests", lambda: frozenset(
        ast.dump(node.test) for node in outline.nodes(ast.If)
        if isinstance(node.test, (ast.Name, ast.Attribute)) and _needs_cuda(node.body)))


def _gated_in(outline: Outline, block: Sequence[ast.stmt], flags: FrozenSet[str],
              modes: FrozenSet[str] = frozenset()) -> Iterator[LineRange]:
    """The CUDA-only runs a statement of ``block`` makes: its branches, or the rest of the block."""
    for index, statement in enumerate(block):
        if isinstance(statement, ast.If):
            test = statement.test
            negated = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else None
            cpu_branch = _cpu_load_branch(outline, statement)
            if cpu_branch is not None:
                # ``if not args.cuda: torch.load(f, map_location=...) else: torch.load(f)``: the
                # author wrote the branch for machines without CUDA; the other is the GPU one.
                yield _span(statement.orelse if cpu_branch is statement.body else statement.body)
            if _implies_cuda(outline, test, flags) or ast.dump(test) in modes:
                yield _span(statement.body)
            elif _denies_cuda(outline, test, flags) or (negated is not None and ast.dump(negated) in modes):
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
