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
  ``importlib.metadata.version("torch")``), or reads a flag this file
  assigns from such a test (``_TORCH_2 = torch.__version__ >= "2"``), or
  calls a function of the project whose ``return`` asks such a test
  (``is_torch_version("<", "2.2")``); a name alone is never taken as
  evidence, wherever it comes from;
- a ``try`` with a handler for ``ImportError``, ``ModuleNotFoundError``,
  ``AttributeError`` or ``TypeError`` that falls back on torch: the handler
  uses torch, or the body imports from torch and the handler catches an
  import error.

Everything is read from Python's tree of the whole file, so checking a cut
file (``engine/narrowing.py``) sees the same gates.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from torchlint.analysis.outline import Names, Outline, attributes_named, calls_to, dotted, qualified_names
from torchlint.knowledge.torch_api import is_torch_name

LineRange = Tuple[int, int]

_FALLBACK_ERRORS = {"ImportError", "ModuleNotFoundError", "AttributeError", "TypeError"}
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}
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
# "torch", or a requirement on it ("torch>=2.2"); not "torchvision", "torch_xla".
_TORCH_REQUIREMENT = re.compile(r"\s*torch\s*(?:$|[<>=!~;\[])")


def gated_ranges(outline: Outline, imported_flags: FrozenSet[str] = frozenset(),
                 lines: Optional[Iterable[int]] = None) -> Tuple[LineRange, ...]:
    """First and last line of every statement or expression a gate chooses between.

    ``imported_flags``: names this file imports that the module defining them
    assigns from a version test (its ``version_flags``), as the project model
    finds them (``from pkg.imports import _TORCH_GREATER_EQUAL_2_4``); this
    file alone never shows that. ``lines``: only the gates holding one of
    these lines are wanted (those of a file's findings), not every one."""
    wanted = None if lines is None else sorted(set(lines))
    key = f"version gates {','.join(sorted(imported_flags))} at {wanted}"
    return outline.memo(key, lambda: tuple(_find(outline, imported_flags, wanted)))


def version_flags(outline: Outline) -> FrozenSet[str]:
    """The names this file assigns from a test of the torch version: what a
    module importing them may use as a gate."""
    return outline.memo("version flags", lambda: frozenset(_version_flags(outline)))


def names_that_may_gate(outline: Outline, lines: Iterable[int]) -> FrozenSet[str]:
    """The names that can make an ``if`` (or conditional expression) holding
    one of ``lines`` a gate: those its test reads and, to a fixed point, those
    read by a value assigned to one of them (a flag derived from a flag).
    Only an imported one of these needs the project model's answer on
    whether it is a flag (which reads the module defining it)."""
    wanted = sorted(set(lines))
    tests = [node.test for node in outline.nodes(ast.If) + outline.nodes(ast.IfExp)  # type: ignore[attr-defined]
             if _holds_one(_span(node), wanted)]
    if not tests:
        return frozenset()
    found = {node.id for test in tests for node in ast.walk(test) if isinstance(node, ast.Name)}
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
            for node in ast.walk(value):
                if isinstance(node, ast.Name) and node.id not in found:
                    found.add(node.id)
                    if node.id in values:
                        waiting.append(node.id)
    return frozenset(found)


def is_gated(ranges: Iterable[LineRange], line: int) -> bool:
    return any(first <= line <= last for first, last in ranges)


def _find(outline: Outline, imported_flags: FrozenSet[str], lines: Optional[List[int]]) -> List[LineRange]:
    def holding(nodes: List[ast.AST]) -> List[ast.AST]:
        if lines is None:
            return nodes
        return [node for node in nodes if _holds_one(_span(node), lines)]

    ranges: List[LineRange] = []
    if _find_tests(outline, imported_flags):
        tests = holding(outline.nodes(ast.If) + outline.nodes(ast.IfExp))
        flags = _version_flags(outline, imported_flags) if tests else set()
        for node in tests:
            if _asks_for_torch_version(outline, node.test, flags):  # type: ignore[attr-defined]
                ranges.append(_span(node))
    for node in holding(outline.nodes(ast.Try) + outline.nodes(getattr(ast, "TryStar", ast.Try))):
        if _is_torch_fallback(outline, node):  # type: ignore[arg-type]
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
        or any(True for _ in calls_to(outline, _DISTRIBUTION_QUERY_NAMES))))


def _version_flags(outline: Outline, imported_flags: FrozenSet[str] = frozenset()) -> Set[str]:
    """Names this file assigns from a test of the torch version, to a fixed point
    (a flag derived from a flag is one too), and the imported flags."""
    if not _find_tests(outline, imported_flags):
        return set()
    assignments = [(node.targets, node.value) for node in outline.nodes(ast.Assign)]
    assignments += [([node.target], node.value) for node in outline.nodes(ast.AnnAssign) if node.value is not None]
    helpers = [(node.name, _returned(node)) for node in getattr(outline.tree, "body", ())
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    flags: Set[str] = set(imported_flags)
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


def _returned(function: ast.AST) -> List[ast.AST]:
    """The values ``function``'s own ``return`` statements give (not those of defs nested in it)."""
    found: List[ast.AST] = []
    pending = list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            found.append(node.value)
        pending.extend(ast.iter_child_nodes(node))
    return found


def _asks_for_torch_version(outline: Outline, test: ast.AST, flags: Set[str]) -> bool:
    for node in ast.walk(test):
        if isinstance(node, ast.Name) and node.id in flags:
            return True
        if isinstance(node, ast.Attribute) and node.attr in ("__version__", "version") and _is_torch(outline, node.value):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _PROBES \
                and node.args and _is_torch(outline, node.args[0]):
            return True
        if isinstance(node, ast.Call) and _queries_torch_distribution(outline, node):
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
        if not caught & _FALLBACK_ERRORS:
            continue
        if any(_uses_torch(outline, statement) for statement in handler.body):
            return True
        if caught & _IMPORT_ERRORS and any(_imports_torch(statement) for statement in node.body):
            return True
    return False


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
