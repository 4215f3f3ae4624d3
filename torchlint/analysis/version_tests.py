"""Which torch releases a module's own version tests tell apart.

A project that declares no torch floor may still show, in its code, that it
runs on old releases: ``WITH_PT112 = WITH_PT20 or int(torch.__version__.split('.')[1])
>= 12`` (torch_geometric) only makes sense if some supported torch is older
than 1.12. Each test of the torch version is evaluated here at every release
of ``RELEASES``; where its answer changes between two neighbours, the module
evidently runs on the older one. Without a declared floor, the oldest such
release stands for the floor (``Engine._settings_for``): the code shows it
runs there, and nothing in it shows an older torch. Advice that needs a newer
torch (TL112's ``weights=`` needs torch 1.12), or about a problem gone by
then (``F.sigmoid`` warns only before 2.0), does not fit the project.

Evaluated, never executed: a small interpreter over Python's tree knows
constants, the names this module assigns once, ``torch.__version__``,
``int``/``str``, ``.split``, indexing, comparisons, ``and``/``or``/``not``,
tuples and the packaging spellings of a version (``version.parse``,
``Version``, ``LooseVersion``, ``parse_version``), and the project's version
helpers: a top-level def whose one ``return`` that reads the torch version
compares it with its parameters (torchao's ``def torch_version_at_least(v):
return parse_version(torch.__version__) >= parse_version(v)``), called with
the arguments of the test (``torch_version_at_least("2.10.0")`` tells 2.9
apart), whether this module defines it or imports it from another module of
the project (``version_helpers`` reads a module's; the project model finds
the imported ones), and a one-parameter def of the module applied to the
torch version and to a version string on the two sides of a comparison (a
parser of the project's own, which must keep the order of versions for the
comparison to mean anything). Anything else makes the test unknown, and an unknown test
tells nothing apart. A guard whose body only raises (``if torch.__version__ <
"1.9": raise ImportError(...)``) tells the release it refuses apart from the
rest: it is left out.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Set, Tuple

from torchlint.analysis.outline import Outline, qualified_names, returned_values
from torchlint.knowledge.torch_api import TORCH_VERSION_HELPERS

Release = Tuple[int, int]

# The torch releases a test is evaluated at, oldest first.
RELEASES: Tuple[Release, ...] = (
    (0, 4), *((1, minor) for minor in range(0, 14)), *((2, minor) for minor in range(0, 16)))

# How a version string becomes comparable, in the libraries projects use.
_VERSION_PARSERS = frozenset((
    "packaging.version.parse", "packaging.version.Version", "pkg_resources.parse_version",
    "distutils.version.LooseVersion", "distutils.version.StrictVersion", "looseversion.LooseVersion",
))
_DEPTH = 20


class _Unknown(Exception):
    """The expression's value cannot be worked out here."""


class _ParsedVersion(tuple):
    """A version as its release numbers, trailing zeros dropped (``1.12.0`` == ``1.12``)."""

    @classmethod
    def of(cls, text: Any) -> "_ParsedVersion":
        if isinstance(text, _ParsedVersion):
            return text
        if isinstance(text, tuple) and all(isinstance(part, int) for part in text):
            numbers = list(text)
        elif isinstance(text, str):
            match = re.match(r"\s*v?(\d+(?:\.\d+)*)", text)
            if match is None:
                raise _Unknown(text)
            numbers = [int(part) for part in match.group(1).split(".")]
        else:
            raise _Unknown(text)
        while len(numbers) > 1 and numbers[-1] == 0:
            numbers.pop()
        return cls(numbers)


class _TorchVersion(str):
    """``torch.__version__`` at one release: a string that compares as a version."""


# A call whose first argument is a version string (``torch_version_at_least("2.10.0")``,
# ``is_torch_version(">=", "1.11")``): the name called, where a module may ask a version
# helper of another module of the project.
# The pattern starts at the parenthesis (a literal the search skips to quickly); the
# name before it is read backwards (``called_with_versions``).
_VERSION_ARGUMENT = re.compile(r"""\(\s*(?:["'][<>=!]{1,2}["']\s*,\s*)?["']v?\d+\.\d+""")
_NAME_BEFORE = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)$")


def called_with_versions(text: str) -> List[str]:
    """The names ``text`` calls with a version string first (``torch_version_at_least("2.10.0")``,
    ``is_torch_version(">=", "1.11")``), in order, each once."""
    names: Dict[str, None] = {}
    for match in _VERSION_ARGUMENT.finditer(text):
        before = _NAME_BEFORE.search(text, max(0, match.start() - 64), match.start())
        if before is not None:
            names[before.group(1)] = None
    return list(names)


class VersionHelper(NamedTuple):
    """A def asking for the torch version in terms of its parameters."""
    parameters: Tuple[str, ...]
    test: ast.AST  # the one value it returns that reads the torch version
    outline: Outline  # the module it is written in: what its names mean
    assigned: Dict[str, ast.AST]  # the names that module assigns once


def version_helpers(outline: Outline) -> Dict[str, VersionHelper]:
    """The top-level defs of this module whose returns include exactly one value that
    reads the torch version (other returns, ``if is_fbcode(): return True``, are
    special cases that do not depend on it), with plain positional parameters."""
    assigned = _assigned_once(outline)
    reading = _names_reading_the_version(outline, assigned)
    found: Dict[str, VersionHelper] = {}
    for statement in outline.tree.body:
        if not isinstance(statement, ast.FunctionDef):
            continue
        arguments = statement.args
        if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.posonlyargs:
            continue
        tests = [value for value in returned_values(statement) if _reads_torch_version(outline, value, reading)]
        if len(tests) == 1:
            found[statement.name] = VersionHelper(tuple(a.arg for a in arguments.args), tests[0], outline, assigned)
    return found


def oldest_release_told_apart(outline: Outline, imported: Mapping[str, VersionHelper] = {}) -> Optional[Release]:
    """The oldest release of ``RELEASES`` that a test of the torch version in this
    module answers differently from the next one (None: no such test evaluates).
    ``imported``: the version helpers of other modules this one imports, by the
    name it calls them."""
    assigned = _assigned_once(outline)
    helpers = {**imported, **version_helpers(outline)}
    tests = [node.value for node in outline.nodes(ast.Assign) if len(node.targets) == 1]
    tests += [node.test for kind in (ast.If, ast.IfExp, ast.While) for node in outline.nodes(kind)
              if not _only_raises(node)]
    reading = _names_reading_the_version(outline, assigned, helpers)
    oldest: Optional[Release] = None
    for test in tests:
        if not _reads_torch_version(outline, test, reading, helpers):
            continue
        answers = [_answer(outline, test, assigned, release, helpers) for release in RELEASES]
        for older, newer, release in zip(answers, answers[1:], RELEASES):
            if older is not None and newer is not None and older != newer:
                oldest = release if oldest is None else min(oldest, release)
                break
    return oldest


def _only_raises(node: ast.AST) -> bool:
    body = getattr(node, "body", None)
    return isinstance(body, list) and bool(body) and all(isinstance(s, (ast.Raise, ast.Expr)) for s in body) \
        and isinstance(body[-1], ast.Raise) and not getattr(node, "orelse", None)


def _assigned_once(outline: Outline) -> Dict[str, ast.AST]:
    """Names bound by exactly one plain assignment anywhere in the module -> the value."""
    counts: Dict[str, int] = {}
    values: Dict[str, ast.AST] = {}
    for node in outline.nodes(ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name):
                counts[target.id] = counts.get(target.id, 0) + 1
                values[target.id] = node.value
    for node in (*outline.nodes(ast.AugAssign), *outline.nodes(ast.AnnAssign)):
        if isinstance(node.target, ast.Name):
            counts[node.target.id] = counts.get(node.target.id, 0) + 2
    return {name: value for name, value in values.items() if counts[name] == 1}


def _names_reading_the_version(outline: Outline, assigned: Dict[str, ast.AST],
                               helpers: Mapping[str, VersionHelper] = {}) -> Set[str]:
    """The names in ``assigned`` whose value reads ``torch.__version__`` (or calls a
    version helper), directly or through another such name (to a fixed point, each
    value walked once per round)."""
    reading = {name for name, value in assigned.items() if _reads_torch_version(outline, value, set(), helpers)}
    if not reading:
        return reading
    reads = {name: {node.id for node in ast.walk(value) if isinstance(node, ast.Name)}
             for name, value in assigned.items() if name not in reading}
    changed = True
    while changed:
        changed = False
        for name, names in reads.items():
            if name not in reading and names & reading:
                reading.add(name)
                changed = True
    return reading


def _reads_torch_version(outline: Outline, expr: ast.AST, reading: Set[str],
                         helpers: Mapping[str, VersionHelper] = {}) -> bool:
    return any(_is_torch_version(outline, node) or (isinstance(node, ast.Name) and node.id in reading)
               or (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers)
               or (isinstance(node, ast.Call) and _library_helper(outline, node) is not None)
               for node in ast.walk(expr))


def _library_helper(outline: Outline, call: ast.Call) -> Optional[str]:
    """How the library version helper ``call`` calls is called (``TORCH_VERSION_HELPERS``), if it is one."""
    return next((TORCH_VERSION_HELPERS[name] for name in qualified_names(outline, call.func)
                 if name in TORCH_VERSION_HELPERS), None)


def _is_torch_version(outline: Outline, node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "__version__" and \
        "torch" in qualified_names(outline, node.value)


def _answer(outline: Outline, test: ast.AST, assigned: Dict[str, ast.AST], release: Release,
            helpers: Mapping[str, VersionHelper] = {}) -> Optional[bool]:
    try:
        return bool(_evaluate(outline, test, assigned, _TorchVersion(f"{release[0]}.{release[1]}.0"), 0, {}, helpers))
    except (_Unknown, TypeError, ValueError, IndexError, AttributeError, RecursionError):
        return None


def _evaluate(outline: Outline, node: ast.AST, assigned: Dict[str, ast.AST], version: _TorchVersion,
              depth: int, names: Dict[str, Any], helpers: Mapping[str, VersionHelper] = {}) -> Any:
    """``node``'s value at ``version``; ``names``: the names worked out so far (a
    helper's parameters: the arguments it was called with)."""
    if depth > _DEPTH:
        raise _Unknown("too deep")
    again = lambda child: _evaluate(outline, child, assigned, version, depth + 1, names, helpers)  # noqa: E731
    if isinstance(node, ast.Constant):
        return node.value
    if _is_torch_version(outline, node) or node is _TORCH_VERSION_NODE:
        return version
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        if node.id not in assigned:
            raise _Unknown(node.id)
        names[node.id] = again(assigned[node.id])
        return names[node.id]
    if isinstance(node, ast.Tuple):
        return tuple(again(element) for element in node.elts)
    if isinstance(node, ast.BoolOp):
        values = [again(value) for value in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not again(node.operand)
    if isinstance(node, ast.Compare):
        return _compare(again(node.left), node.ops, [again(c) for c in node.comparators])
    if isinstance(node, ast.Subscript):
        index = again(node.slice)
        if not isinstance(index, int):
            raise _Unknown("slice")
        return again(node.value)[index]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers:
        return _helper_call(node, helpers[node.func.id], version, depth, again)
    if isinstance(node, ast.Call):
        return _call(outline, node, again)
    raise _Unknown(type(node).__name__)


def _helper_call(node: ast.Call, helper: VersionHelper, version: _TorchVersion, depth: int, again: Any) -> Any:
    """A version helper's test, its parameters bound to the call's positional arguments
    (each one given, none left to a default), in the module it is written in."""
    if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args) or \
            len(node.args) != len(helper.parameters):
        raise _Unknown("arguments")
    bound = {name: again(arg) for name, arg in zip(helper.parameters, node.args)}
    # The helper's own names, not the caller's: a helper calling another of its module's
    # helpers is not followed (its ``helpers`` are empty here).
    return _evaluate(helper.outline, helper.test, helper.assigned, version, depth + 1, bound)


def _call(outline: Outline, node: ast.Call, again: Any) -> Any:
    if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
        raise _Unknown("arguments")
    func = node.func
    library = _library_helper(outline, node)
    if library is not None:
        return _library_answer(library, [again(arg) for arg in node.args], again(_TORCH_VERSION_NODE))
    if isinstance(func, ast.Attribute) and func.attr == "split":
        return str(again(func.value)).split(*[again(arg) for arg in node.args])
    names = set(qualified_names(outline, func))
    if isinstance(func, ast.Name) and func.id in ("int", "str") and len(node.args) == 1:
        value = again(node.args[0])
        return int(value) if func.id == "int" else str(value)
    if names & _VERSION_PARSERS and len(node.args) == 1:
        return _ParsedVersion.of(str(again(node.args[0])))
    if isinstance(func, ast.Name) and len(node.args) == 1 and _is_one_parameter_def(outline, func.id):
        # The module's own version parser (torchao: ``_parse_version(torch.__version__) >=
        # _parse_version("2.11.0")``, with a regular expression): only a parser that keeps the
        # order of versions makes comparing its results mean anything, so they compare as versions.
        value = again(node.args[0])
        if isinstance(value, str):
            return _ParsedVersion.of(value)
    raise _Unknown("call")


# Stands for ``torch.__version__`` where a library helper reads it itself.
_TORCH_VERSION_NODE = ast.Name(id="__torch_version__")
_OPERATOR_NAMES = {">=": ast.GtE, ">": ast.Gt, "<=": ast.LtE, "<": ast.Lt, "==": ast.Eq, "!=": ast.NotEq}


def _library_answer(kind: str, arguments: List[Any], version: Any) -> bool:
    """What a library version helper answers at ``version``: ``is_torch_version(op, v)``
    compares with the operator it is given, ``is_torch_greater_or_equal(v)`` with ``>=``."""
    if kind == "operator" and len(arguments) == 2 and arguments[0] in _OPERATOR_NAMES:
        return _compare(version, [_OPERATOR_NAMES[arguments[0]]()], [arguments[1]])
    if kind == "at least" and len(arguments) == 1:
        return _compare(version, [ast.GtE()], [arguments[0]])
    raise _Unknown("library helper")


def _is_one_parameter_def(outline: Outline, name: str) -> bool:
    defs = [s for s in outline.tree.body if isinstance(s, ast.FunctionDef) and s.name == name]
    return len(defs) == 1 and len(defs[0].args.args) == 1 and not (
        defs[0].args.vararg or defs[0].args.kwarg or defs[0].args.kwonlyargs or defs[0].args.posonlyargs)


_OPERATORS = {
    ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
}


def _compare(left: Any, operators: List[ast.cmpop], rights: List[Any]) -> bool:
    for operator, right in zip(operators, rights):
        compare = _OPERATORS.get(type(operator))
        if compare is None:
            raise _Unknown("operator")
        if isinstance(left, _TorchVersion) or isinstance(right, _TorchVersion):
            # torch.__version__ is a TorchVersion: it compares with strings and tuples as a version
            a, b = _ParsedVersion.of(_plain(left)), _ParsedVersion.of(_plain(right))
        else:
            a, b = left, right
        if not compare(a, b):
            return False
        left = right
    return True


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, _TorchVersion) else value
