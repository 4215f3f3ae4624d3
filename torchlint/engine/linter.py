"""The engine: one parse and one traversal per file, whatever the rules.

``Engine.check`` finds problems in a source text; ``Engine.fix`` applies
fixes in rounds until nothing more can be fixed (bounded), re-checking the
rewritten code each round, so a second ``--fix`` never changes anything.
"""

from __future__ import annotations

import __future__
import ast
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Type

import libcst as cst

from torchlint.analysis.context import NodeContext, analyse
from torchlint.analysis.outline import Outline, child_nodes
from torchlint.core.diagnostic import Diagnostic, ParseError, Unsupported
from torchlint.core.noqa import NoqaIndex, file_is_exempt
from torchlint.core.settings import Settings
from torchlint.core.source import physical_lines
from torchlint.engine.fixer import apply_fixes, keep_lost_text
from torchlint.engine.narrowing import Narrowed, narrow
from torchlint.engine.positions import positions
from torchlint.rules.rule import Rule

MAX_FIX_ROUNDS = 10
# Deepest syntax tree (in ast levels) torchlint analyses; see ``check_depth``.
MAX_DEPTH = 2500


@dataclass
class CheckResult:
    diagnostics: List[Diagnostic]
    module: Optional[cst.Module] = None  # what libcst parsed: with stubs when ``narrowed``
    internal_errors: List[str] = field(default_factory=list)
    narrowed: bool = False


@dataclass
class FixResult:
    source: str
    diagnostics: List[Diagnostic]  # what remains after fixing
    fixed: Counter = field(default_factory=Counter)  # code -> number of fixes applied
    discarded: List[Tuple[Diagnostic, str]] = field(default_factory=list)
    internal_errors: List[str] = field(default_factory=list)
    converged: bool = True


class Engine:
    def __init__(
        self, rules: Sequence[Rule], settings: Settings = Settings(), honour_noqa: bool = True, screens: bool = True
    ) -> None:
        self.settings = settings
        # Without screens every rule analyses every file: slow, and only for
        # tests proving that the screens never hide a finding.
        self.screens = screens
        self.rules = [rule for rule in rules if rule.torch_versions.applies_to(settings.torch_version)]
        self.honour_noqa = honour_noqa
        self._outlined = [r for r in self.rules if r.has_outline_screen()]
        self._textual_only = [r for r in self.rules if not r.has_outline_screen()]
        # node type -> [(rule, bound check method)], in rule order
        self._handlers: Dict[Type[cst.CSTNode], List[Tuple[Rule, object]]] = {}
        for rule in self.rules:
            for node_type, method in rule.node_handlers():
                self._handlers.setdefault(node_type, []).append((rule, getattr(rule, method)))

    def rules_for(self, source: str, tree: Optional[ast.Module] = None) -> List[Rule]:
        """The rules that may flag ``source``: those whose textual screen
        passes, then (given Python's ``tree`` of it) whose outline screen
        passes too. Only they run, and only files with some are analysed."""
        return self._screen(source, tree)[0]

    def _screen(self, source: str, tree: Optional[ast.Module]) -> Tuple[List[Rule], Optional[Outline]]:
        """``rules_for``, and the outline of ``tree`` if it made one."""
        if not self.screens:
            return list(self.rules), None
        if tree is None:
            return [r for r in self.rules if r.may_match(source)], None
        # A rule with an outline screen is asked only that: it is sharper
        # than the textual one and, over the walk already paid for, cheaper
        # than scanning the text with a rule's regexes.
        textual = [r for r in self._textual_only if r.may_match(source)]
        outline = Outline(tree)
        sharp = {id(r) for r in self._outlined if r.may_match_tree(outline)}
        return [r for r in self.rules if id(r) in sharp or r in textual], outline

    def check(self, source: str, syntax_checked: bool = False, tree: Optional[ast.Module] = None,
              whole: bool = False, top_level_await: bool = False) -> CheckResult:
        """Find problems in ``source``; raises ParseError for invalid Python.

        ``syntax_checked`` says the caller already compiled ``source`` with
        Python's own parser; ``tree`` is that parser's tree, if the caller has
        it (flake8 does). Otherwise the source is parsed here first: every
        file, so no syntax error goes unreported. ``top_level_await``: the
        source is a notebook's, where IPython runs ``await`` outside functions.

        Only the statements that can hold findings are parsed with libcst
        (``narrowing.py``) unless ``whole`` asks for the module of the whole
        file, which fixing needs.
        """
        if tree is None and not syntax_checked:
            tree = check_syntax(source, top_level_await)
        if self.honour_noqa and file_is_exempt(source):
            return CheckResult([])
        if tree is None and (not self.screens or any(r.may_match(source) for r in self.rules)):
            # a rewritten text in the fix loop: its tree sharpens the screen
            tree = check_syntax(source, top_level_await)
        active, outline = self._screen(source, tree)
        if not active:
            return CheckResult([])
        if len(source) > MAX_DEPTH:  # shorter sources cannot nest that deep
            check_depth(tree)
        narrowed = None if whole or not self.screens else narrow(source, tree, active, outline)
        module = _parse_narrowed(narrowed) if narrowed is not None else None
        if module is None:
            narrowed, module = None, parse(source)
        try:
            return self._check_module(module, source, active, tree, narrowed, outline)
        except RecursionError:
            raise Unsupported("too deeply nested to analyse", 1, 0) from None

    def _check_module(self, module: cst.Module, source: str, active: Sequence[Rule],
                      tree: Optional[ast.Module] = None, narrowed: Optional[Narrowed] = None,
                      outline: Optional[Outline] = None) -> CheckResult:
        active_ids = {id(rule) for rule in active}
        wanted = [t for t, handlers in self._handlers.items() if any(id(r) in active_ids for r, _ in handlers)]
        file_context, collected = analyse(module, wanted, self.settings, tree, outline)
        found: List[Tuple[Rule, object]] = []
        errors: List[str] = []
        for node_type in wanted:
            handlers = [(r, h) for r, h in self._handlers[node_type] if id(r) in active_ids]
            for node, frame in collected.get(node_type, ()):
                context = NodeContext(file_context, frame)
                for rule, handler in handlers:
                    try:
                        found.extend((rule, finding) for finding in handler(node, context))
                    except Exception as exc:  # a rule bug must not stop the run
                        errors.append(f"{rule.code} raised {type(exc).__name__}: {exc}")
        diagnostics: List[Diagnostic] = []
        if found:
            parsed = narrowed.text if narrowed is not None else source
            starts = positions(module, {id(f.node): f.node for _, f in found}.values(), parsed, tree,
                               file_context.top_of)
            noqa = NoqaIndex(source)
            lines = physical_lines(source) if "\x0c" in source else None
            for rule, finding in found:
                line, column = starts[finding.node]
                if narrowed is not None and not narrowed.keeps(line):
                    continue  # in a stub's header: the real statement was screened out
                if self.honour_noqa and noqa.suppresses(line, rule.code):
                    continue
                if lines is not None and lines[line - 1].startswith("\x0c"):
                    column = _form_feed_column(lines[line - 1], column, file_context.module, finding.node)
                diagnostics.append(Diagnostic(rule.code, finding.message, line, column, finding.fix))
        diagnostics.sort(key=Diagnostic.sort_key)
        return CheckResult(_dedupe(diagnostics), file_context.module, errors, narrowed is not None)

    def fix(self, source: str, unsafe: bool = False, top_level_await: bool = False) -> FixResult:
        result = FixResult(source, [])
        current = source
        round_trip: Optional[str] = None  # libcst's rendering of ``source``
        for _ in range(MAX_FIX_ROUNDS):
            checked = self.check(current, syntax_checked=current is not source, whole=True,
                                 top_level_await=top_level_await)
            result.internal_errors.extend(checked.internal_errors)
            if round_trip is None and checked.module is not None:
                round_trip = checked.module.code
            by_fix: Dict[int, Diagnostic] = {}
            for diagnostic in checked.diagnostics:
                if diagnostic.fix is not None and (diagnostic.fix.safe or unsafe):
                    by_fix.setdefault(id(diagnostic.fix), diagnostic)
            if not by_fix or checked.module is None:
                return self._finish(result, source, round_trip, current, checked.diagnostics, top_level_await)
            fixes = [d.fix for d in by_fix.values()]
            fix_round = apply_fixes(checked.module, fixes)
            owner = {id(d.fix): d for d in by_fix.values()}
            for fix, reason in fix_round.discarded:
                result.discarded.append((owner[id(fix)], reason))
            for fix in fix_round.applied:
                result.fixed[owner[id(fix)].code] += 1
            if fix_round.code == current:
                return self._finish(result, source, round_trip, current, checked.diagnostics, top_level_await)
            current = fix_round.code
        result.converged = False
        return self._finish(result, source, round_trip, current, None, top_level_await)

    def _finish(self, result: FixResult, source: str, round_trip: Optional[str], current: str,
                diagnostics: Optional[List[Diagnostic]], top_level_await: bool = False) -> FixResult:
        """The fixed text, with what libcst's rendering dropped from ``source`` restored."""
        if current != source and round_trip is not None and round_trip != source:
            restored = keep_lost_text(source, round_trip, current)
            if restored is None:  # cannot line the texts up: write nothing rather than lose characters
                result.discarded.extend(
                    (d, "the fixed code would lose characters libcst does not keep")
                    for d in self.check(source, top_level_await=top_level_await).diagnostics if d.fix is not None)
                result.fixed.clear()
                restored = source
            if restored != current:
                current, diagnostics = restored, None
        result.source = current
        if diagnostics is None:
            diagnostics = self.check(current, top_level_await=top_level_await).diagnostics
        result.diagnostics = diagnostics
        return result


def check_syntax(source: str, top_level_await: bool = False) -> ast.Module:
    """Reject what CPython rejects, with its message, before libcst sees it.

    Besides better messages this protects libcst's native parser, which can
    overflow its stack on nesting CPython refuses (e.g. 3000 parentheses).
    """
    try:
        tree = ast.parse(source)
        if _compiler_may_refuse(source, tree):
            flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if top_level_await else 0
            with warnings.catch_warnings():  # the code generator's SyntaxWarnings are not ours to print
                warnings.simplefilter("ignore")
                compile(tree, "<source>", "exec", flags=flags, dont_inherit=True)
        return tree
    except SyntaxError as exc:
        raise ParseError(exc.msg, exc.lineno or 1, max((exc.offset or 1) - 1, 0)) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ParseError(str(exc) or type(exc).__name__, 1, 0) from None


# Expressions the parser accepts anywhere but the compiler only inside
# (async) functions; the statements of that kind are found by ``_misplaced``.
_COMPILER_CHECKED_WORDS = ("yield", "await", "async", "__debug__")
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DECLARATIONS = (ast.Global, ast.Nonlocal)
_BLOCKS = (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)
# CPython refuses more than 20 nested blocks (loops, with, try); fewer than
# this many cannot come close, wherever the count starts.
_FEW_BLOCKS = 15


def _compiler_may_refuse(source: str, tree: ast.Module) -> bool:
    """Whether ``compile`` could refuse what ``ast.parse`` accepted.

    The compiler (symbol table, code generation) rejects a misplaced
    ``from __future__`` import, ``return`` / ``yield`` / ``await`` /
    ``break`` / ``nonlocal`` where they have no meaning, conflicting
    ``global`` declarations, and more. Compiling costs about half a parse,
    so it runs only when the text holds a word involved in the rarer cases,
    or a walk over the statements finds one the compiler checks out of place
    (``return`` outside a function, ``break`` outside a loop) or rarely seen
    (``global``, ``match``, a bare ``except:`` ...).
    """
    if any(word in source for word in _COMPILER_CHECKED_WORDS) or _doubtful_future(source, tree):
        return True
    return _misplaced(tree.body, function=None, in_loop=False, blocks=0)


def _doubtful_future(source: str, tree: ast.Module) -> bool:
    """``__future__`` named anywhere but in known features imported at the
    start of the file (after the docstring), where the compiler wants them."""
    mentions = source.count("__future__")
    if not mentions:
        return False
    body = tree.body
    start = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
    leading = 0
    for statement in body[start:]:
        if not (isinstance(statement, ast.ImportFrom) and statement.module == "__future__" and not statement.level):
            break
        if any(alias.name not in __future__.all_feature_names for alias in statement.names):
            return True
        leading += 1
    return mentions > leading


def _misplaced(body: List[ast.stmt], function: Optional[ast.AST], in_loop: bool, blocks: int) -> bool:
    """A statement in ``body`` the compiler may refuse there (see ``_compiler_may_refuse``)."""
    if blocks > _FEW_BLOCKS:
        return True
    for statement in body:
        kind = type(statement)
        if kind is ast.Return and function is None:
            return True
        if kind in (ast.Break, ast.Continue) and not in_loop:
            return True
        if kind in _DECLARATIONS or kind.__name__ in ("Match", "TryStar"):
            return True
        if kind in (ast.AsyncFor, ast.AsyncWith) and not isinstance(function, ast.AsyncFunctionDef):
            return True
        if kind in (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For) and _starred(statement):
            return True
        if kind is ast.ImportFrom and function is not None and any(a.name == "*" for a in statement.names):
            return True
        if kind is ast.Try and any(h.type is None for h in statement.handlers[:-1]):
            return True
        if isinstance(statement, _FUNCTIONS) or kind is ast.ClassDef:
            if _repeated_names(statement):
                return True
            if _misplaced(statement.body, statement if kind is not ast.ClassDef else None, False, blocks):
                return True
            continue
        loop = kind in _LOOPS
        inner_blocks = blocks + 1 if kind in _BLOCKS else blocks
        for part in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(statement, part, None)
            if not inner:
                continue
            if part == "handlers":
                inner = [line for handler in inner for line in handler.body]
            # a loop's ``else`` is outside the loop
            if _misplaced(inner, function, in_loop or (loop and part == "body"), inner_blocks):
                return True
    return False


def _starred(statement: ast.stmt) -> bool:
    """``*a = b``, ``a = *b`` or ``a, *b, *c = d``: starred expressions the compiler refuses."""
    targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
    if any(isinstance(node, ast.Starred) for node in [*targets, getattr(statement, "value", None)]):
        return True
    return any(sum(isinstance(item, ast.Starred) for item in getattr(node, "elts", ())) > 1 for node in targets)


def _repeated_names(definition: ast.stmt) -> bool:
    """A parameter named twice (``def f(a, a)``) or a class keyword given twice."""
    if isinstance(definition, ast.ClassDef):
        names = [keyword.arg for keyword in definition.keywords if keyword.arg is not None]
    else:
        arguments = definition.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
        names = [argument.arg for argument in every if argument is not None]
    return len(names) != len(set(names))


def check_depth(tree: ast.AST) -> None:
    """Refuse (as ``Unsupported``) trees libcst would nest deeper than ``MAX_DEPTH`` levels.

    Valid Python can nest far deeper than torchlint can analyse (a generated
    ``a + a + ...`` of 10,000 terms): libcst's parser slows down
    quadratically with the depth and crashes the interpreter (a segfault,
    not an exception) near 10,000 levels, and the analysis recurses. The
    depth is libcst's, not Python's: some constructs are flat in ``ast`` but
    a chain of nested nodes in libcst (``_libcst_levels``). Measured level by
    level, without recursion.
    """
    pending: Dict[int, List[ast.AST]] = {1: [tree]}  # depth -> nodes at that depth
    while pending:
        depth = min(pending)
        if depth > MAX_DEPTH:
            raise Unsupported(f"nested more than {MAX_DEPTH} levels deep, too deep to analyse", 1, 0)
        level = pending.pop(depth)
        if not _FLAT_IN_AST.isdisjoint(map(type, level)):  # rare: most levels take the fast path
            level = _deepen_flat(level, depth, pending)
        children = list(child_nodes(level))
        if children:
            pending.setdefault(depth + 1, []).extend(children)


def _deepen_flat(level: List[ast.AST], depth: int, pending: Dict[int, List[ast.AST]]) -> List[ast.AST]:
    """Move the children of ``level``'s flat-in-ast nodes as deep as libcst
    will put them (into ``pending``); the other nodes, whose children come next."""
    plain: List[ast.AST] = []
    for node in level:
        extra = _libcst_levels(node) if type(node) in _FLAT_IN_AST else 0
        if depth + extra > MAX_DEPTH:
            raise Unsupported(f"nested more than {MAX_DEPTH} levels deep, too deep to analyse", 1, 0)
        if extra > 0:
            pending.setdefault(depth + 1 + extra, []).extend(child_nodes([node]))
        else:
            plain.append(node)
    return plain


# Nodes whose parts ``ast`` holds in one list or string but libcst nests one
# inside the other: ``a and b and c`` is BooleanOperation(BooleanOperation(a, b), c),
# ``import a.b.c`` an Attribute chain, ``[x for a in b for c in d]`` nested CompFors.
_FLAT_IN_AST = frozenset({ast.BoolOp, ast.alias, ast.ImportFrom, ast.ListComp, ast.SetComp, ast.GeneratorExp,
                          ast.DictComp})


def _libcst_levels(node: ast.AST) -> int:
    """How many levels libcst adds below ``node`` over Python's tree."""
    if isinstance(node, ast.BoolOp):
        return len(node.values) - 2
    if isinstance(node, ast.alias):
        return node.name.count(".")
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").count(".")
    return len(node.generators) - 1  # a comprehension


def parse(source: str) -> cst.Module:
    """libcst's tree of ``source``, which CPython's parser has accepted.

    Raises ``Unsupported`` when libcst cannot parse it anyway (its parser
    lags CPython's grammar in places).
    """
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        # libcst's raw_line can point past the error; its message has the real place.
        where = re.search(r"error at (\d+):(\d+)", exc.message)
        line, column = (int(where.group(1)), int(where.group(2))) if where else (exc.raw_line, exc.raw_column)
        detail = re.sub(r"^parser error: (error at \d+:\d+: )?", "", exc.message).split("\n")[0]
        detail = detail if len(detail) <= 60 else detail[:57] + "..."
        raise Unsupported(f"libcst cannot parse this valid Python ({detail})", line, column) from None
    except RecursionError:
        raise Unsupported("too deeply nested to parse", 1, 0) from None
    except Exception as exc:  # libcst's native parser can raise other errors
        raise Unsupported(f"libcst cannot parse this valid Python ({str(exc) or type(exc).__name__})", 1, 0) from None


def _parse_narrowed(narrowed: Narrowed) -> Optional[cst.Module]:
    """libcst's tree of the narrowed text; None (parse the file whole) if it
    fails, so narrowing never changes whether a file can be analysed."""
    try:
        return parse(narrowed.text)
    except Unsupported:
        return None


def _form_feed_column(line: str, column: int, module: cst.Module, node: cst.CSTNode) -> int:
    """The column of ``node`` on a line that starts with form feeds.

    libcst leaves a module-level line's leading form feeds out of its
    columns, Python (and every editor) counts them: find the node's text at
    the column, or as many characters further as there are form feeds.
    """
    text = module.code_for_node(node).split("\n")[0].split("\r")[0]
    feeds = len(line) - len(line.lstrip("\x0c"))
    if text and not line.startswith(text, column) and line.startswith(text, column + feeds):
        return column + feeds
    return column


def _dedupe(diagnostics: List[Diagnostic]) -> List[Diagnostic]:
    seen = set()
    unique = []
    for d in diagnostics:
        key = (d.code, d.line, d.column, d.message)
        if key not in seen:
            seen.add(key)
            unique.append(d)
    return unique
