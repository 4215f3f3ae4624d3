"""Parse with libcst only the parts of a file that can hold findings.

A file that passes the screens usually holds one or two findings in a
thousand lines, and libcst's parse and torchlint's walk cost in proportion
to the whole file. So, when checking (not fixing), each top-level ``def`` and
``class`` is screened on its own: the active rules' outline screens are
asked about the file with every *other* def and class cut down to a stub.
A statement no rule accepts is cut in the text libcst parses too: its body
becomes an empty string literal over the same lines, so every line keeps
its number. In a
class some rule accepts, each method is screened the same way, with the
class's other methods stubbed.

A stub keeps the statement's header (decorators, name, parameters, bases).
A top-level def or class cut this way that no kept code names, directly or
through the header of another such stub, loses its header too
(``cutting.unreferenced``): its name is bound for no kept name.
Questions about the whole file ("does it import torch anywhere?") are
answered from the whole file's tree, by rules (``Resolver``) and screens
(``Outline.imports_from``) alike.

This is exact, not a heuristic, for rules that are *statement-local*
(``Rule.whole_file`` is False): what such a rule decides inside a top-level
statement depends only on that statement, on the rest of the module kept
verbatim (imports, assignments, ``if``/``try`` blocks: everything but defs and
classes), on the headers of other defs and classes, and on facts about the
whole file taken from Python's tree of it (never from libcst's); inside a
method, only on the method, its class's header and class-level code, and
the headers of the other methods. Then:

- a cut statement holds no finding: the screens, which never say no to a
  file the rule would flag, said no for the file where only that statement
  is whole, and the rule decides there as in the real file;
- a kept statement gets the same findings as in the real file;
- findings in a cut statement's header are dropped: it was screened out.

A def or class holding ``global`` is never stubbed: it binds module names.
A candidate in module-level code (or in a def's header, which stubs keep)
passes every statement's screen. Such a file is parsed whole, unless the
rule's screen can say where its candidates are (``Rule.screen_candidates``):
then the defs, classes and methods spanning a candidate's line are kept, and
the others are screened by the other rules. A cut one holds no candidate, so
no finding of that rule.
"""

from __future__ import annotations

import ast
import copy
from bisect import bisect_left
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

from torchlint.analysis.cutting import (  # noqa: F401
    MIN_BODY_LINES, cut_body, cut_whole, cuttable, first_line, last_line, unreferenced,
)
from torchlint.analysis.outline import Outline
from torchlint.core.source import MODULE, SourceFile
from torchlint.engine.splicing import spliced_module
from torchlint.rules.rule import Rule

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_STUBBABLE = (*_FUNCTIONS, ast.ClassDef)


@dataclass(frozen=True)
class Narrowed:
    """The text libcst parses instead of the file, and what it left out."""

    source: SourceFile
    stubbed: Tuple[Tuple[int, int], ...]  # first and last line of each cut statement

    def keeps(self, line: int) -> bool:
        """Is ``line`` (from 1) in a statement kept whole?"""
        return not any(first <= line <= last for first, last in self.stubbed)

    def parsed_part(self, tree: ast.Module) -> ast.Module:
        """Python's tree of what libcst parses of the narrowed text (for the
        depth guard): the top-level statements kept whole, the cut ones as
        their headers (decorators, parameters, bases). A class with methods
        cut is kept whole: more than libcst parses, never less."""
        cut = set(self.stubbed)
        return ast.Module(body=[_stub(s) if (first_line(s), last_line(s)) in cut else s for s in tree.body],
                          type_ignores=[])


def narrow(source: SourceFile, tree: ast.Module, rules: Sequence[Rule], outline: Optional[Outline] = None
           ) -> Optional[Narrowed]:
    """``source`` with the defs, classes and methods no rule of ``rules`` can
    flag cut to their headers; None when nothing is cut. ``outline`` is the
    outline of ``tree``, if the caller has it.

    With a ``focus`` set on ``source``, every def and class but the focused
    one is cut without asking the screens (its findings are not wanted),
    and the focused one is narrowed as usual; None then means the whole
    file is analysed (a rule needs the whole file, or nothing can be cut).
    """
    focused = source.memo(_FOCUS, lambda: None)
    if any(rule.whole_file for rule in rules):
        return None
    lines = list(source.lines)  # cut in place below
    statements = tree.body
    stubs, screens = _prepared(source, tree, outline)
    focus = _focused_statement(statements, focused)
    if focused is not None and focus is None:
        return None  # the lines are not one def or class: check the whole file
    candidates = _Candidates(screens.whole_file)
    broad: List[Rule] = []
    if focus is None:
        if not stubs:
            return None
        broad = screens.accepting(rules)
        if not all(candidates.located(rule) for rule in broad):
            # A screen accepts the module with every def and class stubbed:
            # adding a body back only adds nodes, so it accepts each of them
            # too, and cannot say which one holds findings. Stopping here keeps
            # narrowing linear: screening every def with the rest of a large
            # module (thousands of module-level candidates) is quadratic.
            return None
        rules = [rule for rule in rules if rule not in broad]
    wanted = _Wanted(broad, rules, candidates, screens)
    cut: List[ast.stmt] = []
    for index in stubs:
        statement = statements[index]
        if not cuttable(statement, lines):
            continue
        if focus is not None and index != focus:
            cut.append(statement)  # not asked about: its findings are kept from before
        elif not wanted.by(statement, index):
            cut.append(statement)
        elif isinstance(statement, ast.ClassDef):
            cut.extend(_methods_to_cut(statement, index, wanted, lines))
    if focus is not None:
        source.memo(_FOCUS_HONOURED, lambda: True)
    elif not cut:
        return None
    whole = {id(statement) for statement in unreferenced(statements, cut)}
    for statement in cut:
        (cut_whole if id(statement) in whole else cut_body)(statement, lines)
    narrowed = SourceFile("".join(lines))
    if focus is not None:
        _splice_from_earlier(source, narrowed, lines, tree)
    return Narrowed(narrowed, tuple((first_line(s), last_line(s)) for s in cut))


def _splice_from_earlier(source: SourceFile, narrowed: SourceFile, lines: List[str], tree: ast.Module) -> None:
    """Let ``narrowed``'s libcst module be assembled from the pieces the
    last focused check of this document parsed (``splicing.py``), parsing only
    the new ones; parsed whole when that cannot be done."""
    cache = source.memo(_PIECES, dict)
    try:
        narrowed.memo(MODULE, lambda: spliced_module(narrowed.text, lines, tree, cache))
    except Exception:  # CannotSplice, or a piece libcst refuses alone: libcst's answer on the whole text decides
        cache.clear()


def carry_parses(old: SourceFile, new: SourceFile) -> None:
    """Let ``new`` (a later text of the same document) re-use the libcst
    pieces ``old``'s focused check parsed. They are keyed by their text, so
    any later text may use them; ``old`` must not be checked again."""
    pieces = old.memo(_PIECES, lambda: None)
    if pieces is not None:
        new.memo(_PIECES, lambda: pieces)


_PIECES = "narrowing: libcst pieces"


# Keys of ``SourceFile.memo``: the lines a caller wants findings for, and
# whether ``narrow`` honoured that.
_FOCUS = "narrowing focus"
_FOCUS_HONOURED = "narrowing focus honoured"


def focus(source: SourceFile, first: int, last: int) -> None:
    """Ask ``narrow`` to keep only the top-level def or class spanning lines
    ``first`` to ``last`` of ``source`` (from 1), cutting every other one:
    for a caller that keeps the other statements' findings from an earlier
    check (the language server after a change confined to one statement)."""
    source.memo(_FOCUS, lambda: (first, last))


def focused_rules(source: SourceFile, tree: ast.Module, rules: Sequence[Rule],
                  star_exports: Optional[Callable[[str], Optional[Mapping[str, str]]]] = None,
                  whole_file: Optional[Outline] = None) -> Optional[List[Rule]]:
    """The rules of ``rules`` that may flag the focused statement of ``source``:
    those whose outline screen accepts the module with every other def and
    class stubbed (as ``narrow`` screens it), and those without one whose
    textual screen accepts the text; None when no def or class is focused.
    ``star_exports``: what the project's star imports bind, as the engine's
    outline of the file knows it.

    Only these can flag it: a rule the screens turn away for that module
    cannot flag the statement there, and decides in it as in the file."""
    statements = tree.body
    focus = _focused_statement(statements, source.memo(_FOCUS, lambda: None))
    if focus is None:
        return None
    _, screens = _prepared(source, tree, whole_file, star_exports)
    outline = screens.outline(focus, statements[focus])
    return [rule for rule in rules
            if (rule.may_match_tree(outline) if rule.has_outline_screen() else rule.may_match(source.text))]


def _prepared(source: SourceFile, tree: ast.Module, outline: Optional[Outline], star_exports=None
              ) -> Tuple[Dict[int, ast.stmt], "_Screens"]:
    """The stubs of ``tree``'s defs and classes, and the screens of the module
    with them stubbed; made once per text."""

    def prepare() -> Tuple[Dict[int, ast.stmt], "_Screens"]:
        whole_file = outline if outline is not None else Outline(tree, star_exports=star_exports)
        moved = source.memoized(_MOVED)
        if moved is not None:  # an earlier text's, its statements moved (``carry_screens``)
            stubs, screens = moved
            return stubs, screens.about(whole_file)
        stubs = _stubs(tree.body, whole_file)
        outlined = [stubs.get(i, statement) for i, statement in enumerate(tree.body)]
        return stubs, _Screens(outlined, whole_file)

    return source.memo(_PREPARED, prepare)


_PREPARED = "narrowing screens"


def carry_screens(old: SourceFile, new: SourceFile, changed: Optional[int] = None, delta: int = 0,
                  same_forms: bool = True) -> None:
    """Let ``new`` re-use what ``old``'s narrowing prepared (each statement's
    stub and outline), if it did. ``changed`` None: ``new`` is the same text.
    Otherwise ``new``'s tree holds the same statement objects at the same
    lines as ``old``'s but for top-level statement ``changed``, a def or
    class whose header has the same form and holds no ``global``
    (``engine/incremental.py``): focused screening replaces that statement's
    slot, so the screens see exactly what preparing anew gives. Only while
    the same statement keeps changing: another one's stub would be stale.
    ``delta``: the lines ``changed`` gained; the statements after it (their
    nodes already moved by the caller) and their stubs sit ``delta`` lines further.
    ``same_forms`` False: ``changed`` now holds forms it did not (some other
    statement holds them): the old outline of the whole file, which still
    holds the old statement, does not say where the new one's candidates are."""
    prepared = old.memo(_PREPARED, lambda: None)
    replaced = old.memo(_REPLACED, lambda: None)
    if prepared is None or (changed is not None and replaced not in (None, changed)):
        return
    new.memo(_REPLACED, lambda: replaced if changed is None else changed)
    if not delta and same_forms:
        new.memo(_PREPARED, lambda: prepared)
        return
    # The statements after ``changed`` moved ``delta`` lines: their nodes were
    # moved in place (the stubs share their headers' nodes), the stubs' own
    # nodes are moved here. What the old screens learnt about the whole file
    # is not carried: some of it is by line (candidates, class facts).
    stubs, screens = prepared
    for index, stub in stubs.items():
        if delta and index > changed:
            stub.lineno += delta
            stub.end_lineno += delta
    new.memo(_MOVED, lambda: (stubs, screens))


_REPLACED = "narrowing screens: the statement changed since"
_MOVED = "narrowing screens: an earlier text's, its statements moved"


def focus_honoured(source: SourceFile) -> bool:
    """Did checking ``source`` analyse only its focused statement (and
    module-level code), so that findings elsewhere are missing?"""
    return source.memo(_FOCUS_HONOURED, lambda: False)


def _focused_statement(statements: List[ast.stmt], lines: Optional[Tuple[int, int]]) -> Optional[int]:
    if lines is None:
        return None
    for index, statement in enumerate(statements):
        if (first_line(statement), last_line(statement)) == lines and isinstance(statement, _STUBBABLE):
            return index
    return None


def _methods_to_cut(classdef: ast.ClassDef, index: int, wanted: "_Wanted", lines: List[str]) -> List[ast.stmt]:
    """The methods of a class that holds candidates which no rule accepts,
    screened one by one with the class's other methods stubbed: one level
    down, the same reasoning as for top-level statements (rules decide in a
    method from it, its class's header and class-level code, and the
    headers of the other methods)."""
    body = classdef.body
    methods = [k for k, member in enumerate(body) if isinstance(member, _FUNCTIONS)]
    shell = copy.copy(classdef)
    shell.body = [_stub(member) if k in methods else member for k, member in enumerate(body)]
    members = _Slots([_ShellHeader(shell), *shell.body])
    cut = []
    for k in methods:
        if not cuttable(body[k], lines):
            continue
        shell.body[k] = body[k]
        if not wanted.by(body[k], index, shell, lambda: members.assembled(k + 1, _index(body[k]))):
            cut.append(body[k])
        shell.body[k] = members.pieces[k + 1].node
    return cut


class _Candidates:
    """Each rule's candidates in the whole file (``Rule.screen_candidates``), by line, asked once per rule.

    A rule with candidates flags nothing inside a def, class or method that
    spans none of their lines; a rule without them may flag anything."""

    def __init__(self, whole_file: Outline) -> None:
        self._whole_file = whole_file
        self._lines: Dict[int, Optional[List[int]]] = {}

    def located(self, rule: Rule) -> bool:
        return self._lines_of(rule) is not None

    def within(self, rule: Rule, statement: ast.stmt) -> bool:
        """May ``rule`` flag something inside ``statement`` (decorators included)?"""
        lines = self._lines_of(rule)
        if lines is None:
            return True
        at = bisect_left(lines, first_line(statement))
        return at < len(lines) and lines[at] <= last_line(statement)

    def _lines_of(self, rule: Rule) -> Optional[List[int]]:
        key = id(rule)
        if key not in self._lines:
            found = rule.screen_candidates(self._whole_file)
            self._lines[key] = None if found is None else sorted({node.lineno for node in found})
        return self._lines[key]


class _Wanted:
    """Which defs, classes and methods a check needs whole.

    ``broad``: rules whose screens accept the module with every def and
    class stubbed; each says where its candidates are, and a statement
    spanning one is kept. ``rules``: the others, asked about a statement only
    if it spans one of their candidates (or they cannot say), then by their
    screens, on the module with that statement whole: sharper, and costlier."""

    def __init__(self, broad: Sequence[Rule], rules: Sequence[Rule], candidates: _Candidates,
                 screens: "_Screens") -> None:
        self._broad = broad
        self._rules = rules
        self._candidates = candidates
        self._screens = screens

    def by(self, statement: ast.stmt, index: int, replacement: Optional[ast.stmt] = None,
           nodes: Optional[Callable[[], "_NodeIndex"]] = None) -> bool:
        """Is ``statement`` (top-level statement ``index``, or a method of it:
        then ``replacement`` is that statement with only this method whole,
        whose nodes ``nodes`` gives) wanted?"""
        within = self._candidates.within
        if any(within(rule, statement) for rule in self._broad):
            return True
        asked = [rule for rule in self._rules if within(rule, statement)]
        if not asked:
            return False
        if replacement is None:
            return self._screens.accept(asked, index, statement)
        return self._screens.accept(asked, index, replacement, nodes() if nodes is not None else None)


class _Screens:
    """Asks the rules' outline screens about the module of ``statements``
    with one of them replaced.

    Outlining each such module anew costs a walk of the whole module per
    statement screened: quadratic, and most of the time of checking a
    large file. Instead each statement is outlined once and the outline of
    a module is assembled from its statements' (``_Slots``): the same nodes,
    found by the same walk, in a different order (screens never rely on it).
    """

    def __init__(self, statements: List[ast.stmt], whole_file: Outline) -> None:
        self._statements = statements
        self._whole_file = whole_file
        self._slots = _Slots(statements)

    @property
    def whole_file(self) -> Outline:
        return self._whole_file

    def about(self, whole_file: Outline) -> "_Screens":
        """These screens (the same statements, outlined once) answering questions
        about the whole file from ``whole_file``."""
        screens = copy.copy(self)
        screens._whole_file = whole_file
        return screens

    def accept(self, rules: Sequence[Rule], index: Optional[int] = None, statement: Optional[ast.stmt] = None,
               nodes: Optional["_NodeIndex"] = None) -> bool:
        """Does some rule's screen accept the module with statement ``index``
        replaced by ``statement`` (whose nodes are ``nodes``, if known)?"""
        if not rules:
            return False
        alone = self.outline(index, statement, nodes)
        return any(rule.may_match_tree(alone) for rule in rules)

    def accepting(self, rules: Sequence[Rule]) -> List[Rule]:
        """The rules whose screens accept the module as given (every def and class stubbed)."""
        alone = self.outline()
        return [rule for rule in rules if rule.may_match_tree(alone)]

    def outline(self, index: Optional[int] = None, statement: Optional[ast.stmt] = None,
                nodes: Optional["_NodeIndex"] = None) -> Outline:
        """The outline of the module with statement ``index`` replaced (none: as given)."""
        if index is None:
            module, by_type = self._module(self._statements), self._slots.assembled()
        else:
            assert statement is not None
            statements = list(self._statements)
            statements[index] = statement
            module = self._module(statements)
            by_type = self._slots.assembled(index, nodes if nodes is not None else _index(statement))
        by_type[ast.Module] = [module]
        return _AssembledOutline(module, by_type, self._whole_file)

    @staticmethod
    def _module(statements: List[ast.stmt]) -> ast.Module:
        return ast.Module(body=statements, type_ignores=[])


_NodeIndex = Dict[type, List[ast.AST]]


def outline_of_statements(tree: ast.Module, indexes: Sequence[_NodeIndex],
                          star_exports: Optional[Callable[[str], Optional[Mapping[str, str]]]] = None,
                          function_classes: Optional[Callable[[str], FrozenSet[str]]] = None,
                          call_may_give_tensor: Optional[Callable[[str], bool]] = None) -> Outline:
    """``Outline(tree)`` assembled from the node index of each top-level
    statement (``statement_index``), in the order its walk finds them: the
    module, then each statement's nodes, from the last statement to the first."""
    by_type: _NodeIndex = {ast.Module: [tree]}
    for index in reversed(indexes):
        for kind, nodes in index.items():
            found = by_type.get(kind)
            if found is None:
                by_type[kind] = list(nodes)
            else:
                found.extend(nodes)
    return _AssembledOutline(tree, by_type, None, star_exports, function_classes, call_may_give_tensor)


def statement_index(statement: ast.stmt) -> _NodeIndex:
    """The nodes of ``statement`` by type, as ``Outline`` finds them."""
    return _index(statement)


def _index(node: ast.AST) -> _NodeIndex:
    """The nodes under ``node`` (itself included) by type, found as ``Outline`` finds them."""
    return _AssembledOutline.index_of(node)


class _ShellHeader:
    """A class's own node and header (decorators, bases, keywords), without its body."""

    def __init__(self, classdef: ast.ClassDef) -> None:
        self.node = classdef
        header = copy.copy(classdef)
        header.body = []
        index = _index(header)
        index[ast.ClassDef] = [classdef if node is header else node for node in index[ast.ClassDef]]
        self.index = index


class _Piece:
    def __init__(self, node: ast.AST) -> None:
        self.node = node
        self.index = _index(node)


class _Slots:
    """The node index of a sequence of pieces (statements, or a class's header
    and members), outlined once each, and of the sequence with one piece
    replaced: list slices, not walks."""

    def __init__(self, parts: Sequence[object]) -> None:
        self.pieces = [part if isinstance(part, _ShellHeader) else _Piece(part) for part in parts]  # type: ignore
        self._base: _NodeIndex = {}
        self._spans: List[Dict[type, Tuple[int, int]]] = []
        for piece in self.pieces:
            spans = {}
            for kind, nodes in piece.index.items():
                found = self._base.setdefault(kind, [])
                spans[kind] = (len(found), len(found) + len(nodes))
                found.extend(nodes)
            self._spans.append(spans)

    def assembled(self, replaced: Optional[int] = None, nodes: Optional[_NodeIndex] = None) -> _NodeIndex:
        """The index of every piece, with piece ``replaced`` holding ``nodes`` instead (fresh lists)."""
        by_type = {kind: list(found) for kind, found in self._base.items()}
        if replaced is None:
            return by_type
        for kind, (start, end) in self._spans[replaced].items():
            del by_type[kind][start:end]
        for kind, found in (nodes or {}).items():
            by_type.setdefault(kind, []).extend(found)
        return by_type


class _AssembledOutline(Outline):
    """An ``Outline`` whose index of nodes by type is given, not walked."""

    def __init__(self, tree: ast.AST, by_type: _NodeIndex, whole_file: Optional[Outline],
                 star_exports: Optional[Callable[[str], Optional[Mapping[str, str]]]] = None,
                 function_classes: Optional[Callable[[str], FrozenSet[str]]] = None,
                 call_may_give_tensor: Optional[Callable[[str], bool]] = None) -> None:
        self._given = by_type
        super().__init__(tree, whole_file=whole_file, star_exports=star_exports, function_classes=function_classes,
                         call_may_give_tensor=call_may_give_tensor)

    def _file(self, tree: ast.AST) -> None:
        self._by_type = self._given

    def names_not_loaded(self) -> List[ast.Name]:
        # No walk set them aside: found among the names, once.
        return self.memo("names not loaded", lambda: [
            node for node in self.nodes(ast.Name) if node.ctx.__class__ is not ast.Load])

    @staticmethod
    def index_of(node: ast.AST) -> _NodeIndex:
        return Outline(node)._by_type


def _stubs(statements: List[ast.stmt], outline: Outline) -> Dict[int, ast.stmt]:
    """Index -> stub of each top-level def and class without ``global``."""
    top_of = _TopLevel(statements)
    holding_global = {top_of(node) for node in outline.nodes(ast.Global)}
    return {index: _stub(statement) for index, statement in enumerate(statements)
            if isinstance(statement, _STUBBABLE) and index not in holding_global}


def _stub(statement: ast.stmt) -> ast.stmt:
    """The statement's header, with ``pass`` for its body (for the screens)."""
    stub = copy.copy(statement)
    stub.body = [ast.Pass()]
    return stub


class _TopLevel:
    """The index of the top-level statement holding a node, from its line."""

    def __init__(self, statements: List[ast.stmt]) -> None:
        self._ends = [last_line(statement) for statement in statements]

    def __call__(self, node: ast.AST) -> int:
        return bisect_left(self._ends, node.lineno)  # type: ignore[attr-defined]
