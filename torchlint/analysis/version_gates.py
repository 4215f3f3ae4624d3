"""Code that a torch version gate protects.

Projects that support several torch releases write both spellings on
purpose and choose at run time:

    if _TORCH_GREATER_EQUAL_2_4:            # a flag from torch.__version__
        scaler = torch.amp.GradScaler("cuda")
    else:
        scaler = torch.cuda.amp.GradScaler()

    try:
        state = torch.load(path, weights_only=True)
    except TypeError:                       # a torch without the keyword
        state = torch.load(path)

Both branches are compatibility code: reporting the old spelling there as
deprecated asks the user to break the old torch they support. A *gate* is

- an ``if`` (or a conditional expression) whose test asks which torch is
  installed: it reads ``torch.__version__`` (or ``torch.version``), calls
  ``hasattr``/``getattr`` on a torch module, asks a packaging library
  about the installed "torch" distribution
  (``compare_version("torch", operator.ge, "2.4.0")`` and
  ``RequirementCache("torch>=2.2")`` of lightning_utilities,
  ``importlib.metadata.version("torch")``), calls a library's torch version
  helper (``is_torch_version(">=", "1.11.0")`` of diffusers and accelerate,
  ``is_torch_greater_or_equal`` of transformers), or reads a flag this file
  assigns from such a test (``_TORCH_2 = torch.__version__ >= "2"``), or
  calls a function of the project whose ``return`` asks such a test
  (``is_torch_version("<", "2.2")``); a name alone is never taken as
  evidence, wherever it comes from;
- likewise an ``if`` reading a flag another module of the project assigns
  from such a test, however it is imported: ``from pkg.typing import
  WITH_PT20``, or through the module, ``pkg.typing.WITH_PT20`` after ``import
  pkg.typing`` (torch_geometric), ``typing.WITH_PT20`` after ``from pkg import
  typing``. The project model (``analysis/project.py``, ``is_version_flag``)
  finds the module and asks it for its ``version_flags``; a name a module
  outside the project binds, or one that module assigns from anything else,
  gates nothing;
- a flag may also hold the torch version itself, read through a function of
  the same file that asks a packaging library about the distribution its
  parameter names (diffusers: ``_torch_available, _torch_version =
  _is_package_available("torch")``, where the function returns ``pkg_exists,
  importlib_metadata.version(pkg_name)``): only the item that is the version
  is a flag, not whether torch is installed;
- a ``try`` with a handler for ``ImportError``, ``ModuleNotFoundError``,
  ``AttributeError`` or ``TypeError`` that falls back on torch: the handler
  uses torch, or the body imports from torch and the handler catches an
  import error;
- a ``try`` whose handler catches everything (``except:``, ``except
  Exception:``) and repeats a torch call of the body without a keyword the
  body passes (``torch.load(f, weights_only=False)``, then ``torch.load(f)``):
  the fallback for a torch without that keyword;
- a ``try`` whose body is a gate and whose handler catches everything and
  runs what one of the gate's branches runs (``try: if is_torch_min_version(
  "2.4"): ... else: old`` ``except: old``): the answer for when asking the
  version fails.

Everything is read from Python's tree of the whole file, so checking a cut
file (``engine/narrowing.py``) sees the same gates.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

from torchlint.analysis.outline import (
    Names, Outline, attributes_named, calls_to, dotted, qualified_names, returned_values,
)
from torchlint.core.settings import parse_version
from torchlint.knowledge.releases import module_release, name_releases
from torchlint.knowledge.torch_api import ADDED_KEYWORDS, TORCH_VERSION_HELPERS, is_torch_name

LineRange = Tuple[int, int]

_FALLBACK_ERRORS = {"ImportError", "ModuleNotFoundError", "AttributeError", "TypeError"}
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}
# Handlers that catch everything: a fallback only where the handler repeats a torch
# call of the body without a keyword the body passes (``_drops_a_keyword``).
_ANY_ERROR = {"Exception", "BaseException"}
_PROBES = {"hasattr", "getattr"}
# Library functions that answer which version of a named distribution is
# installed; a call whose first argument names torch asks about torch.
_DISTRIBUTION_QUERIES = frozenset({
    "lightning_utilities.compare_version",
    "lightning_utilities.core.imports.compare_version",
    "lightning_utilities.RequirementCache",
    "lightning_utilities.core.imports.RequirementCache",
    "importlib.metadata.version",
    "importlib_metadata.version",
    "pkg_resources.get_distribution",
})
_DISTRIBUTION_QUERY_NAMES = Names(_DISTRIBUTION_QUERIES)
_TORCH_VERSION_QUERY_NAMES = Names(frozenset(TORCH_VERSION_HELPERS))
# "torch", or a requirement on it ("torch>=2.2"); not "torchvision", "torch_xla".
_TORCH_REQUIREMENT = re.compile(r"\s*torch\s*(?:$|[<>=!~;\[])")


def gated_ranges(outline: Outline, imported_flags: FrozenSet[str] = frozenset(),
                 lines: Optional[Iterable[int]] = None) -> Tuple[LineRange, ...]:
    """First and last line of every statement or expression a gate chooses between.

    ``imported_flags``: names this file imports that the module defining them
    assigns from a version test (its ``version_flags``), as the project model
    finds them (``from pkg.imports import _TORCH_GREATER_EQUAL_2_4``), and the
    dotted chains reading such a flag through its module
    (``pkg.typing.WITH_PT20`` after ``import pkg.typing``); this file alone
    never shows that. ``lines``: only the gates holding one of
    these lines are wanted (those of a file's findings), not every one."""
    wanted = None if lines is None else sorted(set(lines))
    key = f"version gates {','.join(sorted(imported_flags))} at {wanted}"
    return outline.memo(key, lambda: tuple(_find(outline, imported_flags, wanted)))


def version_flags(outline: Outline) -> FrozenSet[str]:
    """The names this file assigns from a test of the torch version: what a
    module importing them may use as a gate."""
    return outline.memo("version flags", lambda: frozenset(_version_flags(outline)))


def newest_tried_first(outline: Outline) -> Optional[Tuple[int, ...]]:
    """The newest first release among the torch names the file imports in a ``try``
    whose ``ImportError`` handler imports the same names from another torch module
    (``try: from torch.distributed.tensor import DTensor`` / ``except ImportError: from
    torch.distributed._tensor import DTensor``: 2.5). The file then runs on a torch older
    than that, where the import fails, with the other spelling; a rename elsewhere in the
    file to a name no older breaks it. A handler that gives up instead (``pytest.skip``,
    ``raise``) or sets the names to None shows no torch the renamed code runs on. None
    when no fallback names a release known to be newer than the oldest mined
    (``knowledge/releases.py``)."""
    names = name_releases()
    found: List[Tuple[int, ...]] = []
    for node in outline.nodes(ast.Try) + outline.nodes(getattr(ast, "TryStar", ast.Try)):
        handlers = [h for h in node.handlers if _caught(h.type) & _IMPORT_ERRORS]  # type: ignore[attr-defined]
        rebound = {name for handler in handlers for name in _torch_imported_names(handler.body)}
        for statement in node.body:  # type: ignore[attr-defined]
            for inner in ast.walk(statement):
                if not (isinstance(inner, ast.ImportFrom) and not inner.level and is_torch_name(inner.module or "")):
                    continue
                module = inner.module or ""
                found.extend(parse_version(release) for release in (
                    names.get(f"{module}.{alias.name}") or module_release(module)
                    for alias in inner.names if (alias.asname or alias.name) in rebound) if release)
    return max(found) if found else None


def _torch_imported_names(statements: List[ast.stmt]) -> Set[str]:
    """The names ``statements`` bind by importing them from a torch module."""
    bound: Set[str] = set()
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.ImportFrom) and not node.level and is_torch_name(node.module or ""):
                bound.update(alias.asname or alias.name for alias in node.names)
    return bound


def names_that_may_gate(outline: Outline, lines: Iterable[int]) -> FrozenSet[str]:
    """The names that can make an ``if`` (or conditional expression) holding
    one of ``lines`` a gate: those its test reads and, to a fixed point, those
    read by a value assigned to one of them (a flag derived from a flag).
    Only an imported one of these needs the project model's answer on
    whether it is a flag (which reads the module defining it)."""
    wanted = sorted(set(lines))
    tests = [node.test for node in outline.nodes(ast.If) + outline.nodes(ast.IfExp)  # type: ignore[attr-defined]
             if _holds_one(_gate_span(outline, node), wanted)]
    if not tests:
        return frozenset()
    found = {name for test in tests for name in _names_read(test)}
    values: Dict[str, List[ast.AST]] = {}  # name -> the values assigned to it
    for node in outline.nodes(ast.Assign) + outline.nodes(ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
        if node.value is not None:  # type: ignore[attr-defined]
            for target in targets:
                if isinstance(target, ast.Name):
                    values.setdefault(target.id, []).append(node.value)  # type: ignore[attr-defined]
    waiting = [name for name in found if name in values]
    while waiting:
        for value in values.pop(waiting.pop(), ()):
            for name in _names_read(value):
                if name not in found:
                    found.add(name)
                    if name in values:
                        waiting.append(name)
    return frozenset(found)


def _names_read(expr: ast.AST) -> Iterator[str]:
    """The names ``expr`` reads and its dotted chains (``pkg.typing.WITH_PT20``:
    a flag read through the module that assigns it)."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            chain = dotted(node)
            if chain is not None:
                yield chain


def project_spellings(outline: Outline, names: Iterable[str]) -> Dict[str, str]:
    """Of ``names`` (a name or a dotted chain, as ``names_that_may_gate`` gives
    them), those an import binds, each with the name it stands for as the
    project model spells one (``Project.definition``: the module as imported,
    maybe relative, a dot, the name in it): ``from .typing import WITH_PT20``
    makes ``WITH_PT20`` ".typing.WITH_PT20"; ``import pkg.typing`` makes
    ``pkg.typing.WITH_PT20`` itself; ``from pkg import typing`` makes
    ``typing.WITH_PT20`` "pkg.typing.WITH_PT20". Whether that is a flag is the
    project model's question (``Project.is_version_flag``)."""
    modules: Dict[str, str] = {}  # bound name -> the module it is, as spelled
    members: Dict[str, str] = {}  # bound name -> "module.name" of a from-import
    for module, name, bound in outline.imported():
        if name == "*":
            continue
        if not name:
            # ``import a.b`` binds ``a``; ``import a.b as c`` binds ``c`` to a.b.
            modules[bound] = module if bound != module.split(".")[0] else bound
        else:
            members[bound] = f"{module}.{name}"
            modules[bound] = module + name if module.endswith(".") else f"{module}.{name}"
    found: Dict[str, str] = {}
    for spelled in names:
        head, dot, rest = spelled.partition(".")
        if not dot and head in members:
            found[spelled] = members[head]
        elif dot and head in modules:
            found[spelled] = f"{modules[head]}.{rest}"
    return found


def is_gated(ranges: Iterable[LineRange], line: int) -> bool:
    return any(first <= line <= last for first, last in ranges)


def _find(outline: Outline, imported_flags: FrozenSet[str], lines: Optional[List[int]]) -> List[LineRange]:
    def holding(nodes: List[ast.AST]) -> List[ast.AST]:
        if lines is None:
            return nodes
        return [node for node in nodes if _holds_one(_gate_span(outline, node), lines)]

    ranges: List[LineRange] = []
    testing = _find_tests(outline, imported_flags)
    flags: Set[str] = set()
    if testing:
        tests = holding(outline.nodes(ast.If) + outline.nodes(ast.IfExp))
        flags = _version_flags(outline, imported_flags) if tests else set()
        for node in tests:
            if _asks_for_torch_version(outline, node.test, flags):  # type: ignore[attr-defined]
                ranges.append(_gate_span(outline, node))
    for node in holding(outline.nodes(ast.Try) + outline.nodes(getattr(ast, "TryStar", ast.Try))):
        if _is_torch_fallback(outline, node) or (  # type: ignore[arg-type]
                testing and _repeats_a_gated_branch(outline, node, flags or _version_flags(outline, imported_flags))):  # type: ignore[arg-type]
            ranges.append(_span(node))
    return sorted(set(ranges))


def _holds_one(span: LineRange, lines: List[int]) -> bool:
    """Is one of ``lines`` (sorted) within ``span``?"""
    first, last = span
    at = bisect_left(lines, first)
    return at < len(lines) and lines[at] <= last


def _find_tests(outline: Outline, imported_flags: FrozenSet[str]) -> bool:
    """Can any expression of the file ask for the torch version? Each way
    ``_asks_for_torch_version`` recognises needs a node the outline files by
    name: without one, no assignment makes a flag and no ``if`` is a gate, and
    the walks over every assignment and test are skipped (most files)."""
    return bool(imported_flags) or outline.memo("may test the torch version", lambda: bool(
        any(True for _ in attributes_named(outline, ("__version__", "version")))
        or outline.calls(*_PROBES)
        or any(True for _ in calls_to(outline, _DISTRIBUTION_QUERY_NAMES))
        or any(True for _ in calls_to(outline, _TORCH_VERSION_QUERY_NAMES))))


def _version_flags(outline: Outline, imported_flags: FrozenSet[str] = frozenset()) -> Set[str]:
    """Names this file assigns from a test of the torch version, to a fixed point
    (a flag derived from a flag is one too), and the imported flags."""
    if not _find_tests(outline, imported_flags):
        return set()
    assignments = [(node.targets, node.value) for node in outline.nodes(ast.Assign)]
    assignments += [([node.target], node.value) for node in outline.nodes(ast.AnnAssign) if node.value is not None]
    functions = [node for node in getattr(outline.tree, "body", ())
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    helpers = [(node.name, returned_values(node)) for node in functions]
    flags: Set[str] = set(imported_flags)
    readers = _distribution_readers(outline, functions)
    for targets, value in assignments if readers else ():
        flags.update(_torch_versions_read(targets, value, readers))
    changed = True
    while changed:
        changed = False
        for targets, value in assignments:
            names = [t.id for t in targets if isinstance(t, ast.Name) and t.id not in flags]
            if names and _asks_for_torch_version(outline, value, flags):
                flags.update(names)
                changed = True
        for name, returned in helpers:
            # A version helper of the project (``def is_torch_version(op, v): return
            # compare(parse(_torch_version), op, v)``): calling it asks too.
            if name not in flags and any(_asks_for_torch_version(outline, value, flags) for value in returned):
                flags.add(name)
                changed = True
    return flags


# A def that asks for the version of the distribution one of its parameters
# names: that parameter's position and name, and which items of the tuple it
# returns are the version (None: what it returns is).
_Reader = Tuple[int, str, Optional[FrozenSet[int]]]


def _distribution_readers(outline: Outline, functions: List[ast.AST]) -> Dict[str, _Reader]:
    """The top-level defs that ask a packaging library for the version of the
    distribution a parameter names (diffusers' ``_is_package_available(pkg_name)``
    returns ``pkg_exists, importlib_metadata.version(pkg_name)``): called with
    "torch", the item holding that version is the torch version, and the name
    it is assigned to a flag; the other items (whether it is installed) are not."""
    readers: Dict[str, _Reader] = {}
    if not any(True for _ in calls_to(outline, _DISTRIBUTION_QUERY_NAMES)):
        return readers  # no packaging library asked here (most files): no def to walk
    for function in functions:
        parameters = [argument.arg for argument in function.args.posonlyargs + function.args.args]  # type: ignore[attr-defined]
        for position, parameter in enumerate(parameters):
            versions = _version_values(outline, function, parameter)
            if versions is not None:
                readers[function.name] = (position, parameter, versions)  # type: ignore[attr-defined]
                break
    return readers


def _version_values(outline: Outline, function: ast.AST, parameter: str) -> Optional[FrozenSet[int]]:
    """Which items of the tuples ``function`` returns hold the version of the
    distribution ``parameter`` names (an empty set: the whole value does), or
    None where no return gives it."""
    def queries(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and bool(node.args) and isinstance(node.args[0], ast.Name) \
            and node.args[0].id == parameter \
            and any(name in _DISTRIBUTION_QUERIES for name in qualified_names(outline, node.func))

    def holds(value: ast.AST) -> bool:
        return any(queries(node) or isinstance(node, ast.Name) and node.id in holders for node in ast.walk(value))

    holders = {target.id for node in ast.walk(function) if isinstance(node, ast.Assign)
               and any(queries(inner) for inner in ast.walk(node.value))
               for target in node.targets if isinstance(target, ast.Name)}
    positions: Set[int] = set()
    whole = False
    for value in returned_values(function):
        if isinstance(value, ast.Tuple):
            positions.update(index for index, item in enumerate(value.elts) if holds(item))
        elif holds(value):
            whole = True
    if whole:
        return frozenset()
    return frozenset(positions) if positions else None


def _torch_versions_read(targets: List[ast.AST], value: ast.AST, readers: Dict[str, _Reader]) -> Set[str]:
    """The names ``targets = value`` binds to the torch version through a reader
    (``_torch_available, _torch_version = _is_package_available("torch")``: ``_torch_version``)."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in readers):
        return set()
    position, parameter, items = readers[value.func.id]
    given = value.args[position] if position < len(value.args) else next(
        (keyword.value for keyword in value.keywords if keyword.arg == parameter), None)
    if not (isinstance(given, ast.Constant) and isinstance(given.value, str) and _TORCH_REQUIREMENT.match(given.value)):
        return set()
    found: Set[str] = set()
    for target in targets:
        if isinstance(target, ast.Name) and not items:
            found.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)) and items:
            found.update(item.id for index, item in enumerate(target.elts)
                         if index in items and isinstance(item, ast.Name))
    return found


def _asks_for_torch_version(outline: Outline, test: ast.AST, flags: Set[str]) -> bool:
    for node in ast.walk(test):
        if isinstance(node, ast.Name) and node.id in flags:
            return True
        if isinstance(node, ast.Attribute) and flags and dotted(node) in flags:
            return True  # a flag read through its module: ``pkg.typing.WITH_PT20``
        if isinstance(node, ast.Attribute) and node.attr in ("__version__", "version") and _is_torch(outline, node.value):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _PROBES \
                and node.args and _is_torch(outline, node.args[0]):
            return True
        if isinstance(node, ast.Call) and _queries_torch_distribution(outline, node):
            return True
        if isinstance(node, ast.Call) and any(name in TORCH_VERSION_HELPERS
                                              for name in qualified_names(outline, node.func)):
            return True
    return False


def _queries_torch_distribution(outline: Outline, call: ast.Call) -> bool:
    first = call.args[0] if call.args else None
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)
            and _TORCH_REQUIREMENT.match(first.value)):
        return False
    return any(name in _DISTRIBUTION_QUERIES for name in qualified_names(outline, call.func))


def _is_torch(outline: Outline, expr: ast.AST) -> bool:
    return any(is_torch_name(name) for name in qualified_names(outline, expr))


def _is_torch_fallback(outline: Outline, node: ast.Try) -> bool:
    for handler in node.handlers:
        caught = _caught(handler.type)
        if (handler.type is None or caught & _ANY_ERROR) and _drops_a_keyword(outline, node.body, handler.body):
            return True
        if not caught & _FALLBACK_ERRORS:
            continue
        if any(_uses_torch(outline, statement) for statement in handler.body):
            return True
        if caught & _IMPORT_ERRORS and any(_imports_torch(statement) for statement in node.body):
            return True
    return False


def _repeats_a_gated_branch(outline: Outline, node: ast.Try, flags: Set[str]) -> bool:
    """Does a handler of ``node`` that catches everything run what a branch of a version
    gate in the ``try`` body runs? ``try: if is_torch_min_version("2.4"): new / else: old``
    ``except: old``: the handler is the gate's answer for when asking the version fails,
    compatibility code like the branch it repeats."""
    branches = [ast.dump(ast.Module(body=branch, type_ignores=[]))
                for statement in node.body if isinstance(statement, ast.If)
                and _asks_for_torch_version(outline, statement.test, flags)
                for branch in (statement.body, statement.orelse) if branch]
    return bool(branches) and any(
        (handler.type is None or _caught(handler.type) & _ANY_ERROR)
        and ast.dump(ast.Module(body=handler.body, type_ignores=[])) in branches
        for handler in node.handlers)


def _drops_a_keyword(outline: Outline, body: List[ast.stmt], handler: List[ast.stmt]) -> bool:
    """Does the handler call a torch function the ``try`` body calls, without a keyword
    the body passes and torch added later (``torch.load(f, weights_only=False)``, then
    ``torch.load(f)``)? Even under a bare ``except:`` that is the spelling for a torch
    before the keyword (``ADDED_KEYWORDS``)."""
    passed: Dict[str, Set[str]] = {}
    for call in _torch_calls(outline, body):
        passed.setdefault(call[0], set()).update(call[1])
    return any(ADDED_KEYWORDS.get(name, frozenset()) & (passed.get(name, set()) - keywords)
               for name, keywords in _torch_calls(outline, handler))


def _torch_calls(outline: Outline, statements: List[ast.stmt]) -> Iterator[Tuple[str, Set[str]]]:
    """(qualified torch name, keywords passed) of each torch call in ``statements``."""
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and not any(k.arg is None for k in node.keywords):
                for name in qualified_names(outline, node.func):
                    if is_torch_name(name):
                        yield name, {k.arg for k in node.keywords if k.arg is not None}


def _caught(expr: Optional[ast.AST]) -> Set[str]:
    if expr is None:
        return set()  # a bare except is not a version fallback
    parts = expr.elts if isinstance(expr, ast.Tuple) else [expr]
    return {name.rsplit(".", 1)[-1] for name in (dotted(part) for part in parts) if name}


def _uses_torch(outline: Outline, statement: ast.AST) -> bool:
    return _imports_torch(statement) or any(
        isinstance(node, (ast.Name, ast.Attribute)) and _is_torch(outline, node) for node in ast.walk(statement))


def _imports_torch(statement: ast.AST) -> bool:
    for node in ast.walk(statement):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch" and not node.level:
            return True
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "torch" for alias in node.names):
            return True
    return False


def _span(node: ast.AST) -> LineRange:
    return node.lineno, getattr(node, "end_lineno", None) or node.lineno


def _gate_span(outline: Outline, node: ast.AST) -> LineRange:
    """The lines a gate ``node`` chooses between. An ``if`` without ``else`` whose
    body always leaves the block (``return``, ``raise``, ...) chooses for the rest
    of its block too: that is its ``else`` (``if WITH_PT24: return torch.load(f,
    weights_only=True)`` then ``return torch.load(f)`` for older torch). Only when
    the body gives a result of its own: after a guard that raises or returns
    nothing (``if torch.__version__ < "2": raise ImportError(...)``) the rest is
    the code for the torch it requires, not a fallback."""
    first, last = _span(node)
    if isinstance(node, ast.If) and not node.orelse and _returns_a_result(node.body):
        block = outline.memo("statement blocks", lambda: _statement_blocks(outline.tree))
        last = _span(block.get(id(node), [node])[-1])[1]
    return first, last


def _statement_blocks(tree: ast.AST) -> Dict[int, List[ast.stmt]]:
    """Every statement (by ``id``) -> the block of statements holding it. Only
    statements are visited, never the expressions in them."""
    blocks: Dict[int, List[ast.stmt]] = {}
    pending: List[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if not isinstance(block, list) or not block:
                continue
            if isinstance(block[0], ast.stmt):
                for statement in block:
                    blocks[id(statement)] = block
            pending.extend(block)  # statements, except handlers and match cases: visited for their bodies
    return blocks


_LEAVING = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _returns_a_result(block: List[ast.stmt]) -> bool:
    """Does every way through ``block`` leave it, one of them by ``return``ing
    something computed (not nothing or a constant)?"""
    return any(isinstance(exit, ast.Return) and exit.value is not None and not isinstance(exit.value, ast.Constant)
               for exit in _exits(block))


def _exits(block: List[ast.stmt]) -> List[ast.stmt]:
    """The statements by which ``block`` is left (``return``, ``raise``,
    ``continue``, ``break``) when every way through it ends in one; [] when
    some way falls through. Only the ends of the block are looked at, never
    its whole body (``_gate_span`` asks this of every ``if``)."""
    if not block:
        return []
    last = block[-1]
    if isinstance(last, _LEAVING):
        return [last]
    if isinstance(last, ast.If):
        body, orelse = _exits(last.body), _exits(last.orelse)
        return body + orelse if body and orelse else []
    if isinstance(last, (ast.With, ast.AsyncWith)):
        return _exits(last.body)
    if isinstance(last, ast.Try) or type(last).__name__ == "TryStar":
        final = _exits(last.finalbody)  # type: ignore[attr-defined]
        if final:
            return final
        completes = _exits(last.body) or _exits(last.orelse)  # type: ignore[attr-defined]
        handlers = [_exits(handler.body) for handler in last.handlers]  # type: ignore[attr-defined]
        if completes and all(handlers):
            return completes + [exit for exits in handlers for exit in exits]
    return []
