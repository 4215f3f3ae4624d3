"""The engine: one parse and one traversal per file, whatever the rules.

``Engine.check`` finds problems in a source text; ``Engine.fix`` applies
fixes in rounds until nothing more can be fixed (bounded), re-checking the
rewritten code each round, so a second ``--fix`` never changes anything.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Dict, List, Mapping, Optional, Sequence, Set, Tuple, Type, Union

import libcst as cst

from torchlint.analysis.context import FileContext, NodeContext, analyse
from torchlint.analysis.outline import Outline
from torchlint.core.census import Census, child_nodes
from torchlint.analysis.project import STANDALONE, ModuleRef, Project
from torchlint.analysis.version_gates import gated_ranges, is_gated, names_that_may_gate, project_spellings
from torchlint.core.diagnostic import Diagnostic, Fix, ParseError, Unsupported
from torchlint.core.fix_policy import DEFAULT_FIX_POLICY, FixPolicy
from torchlint.core.noqa import UNUSED_NOQA, file_is_exempt, noqa_index, unused_noqa
from torchlint.core.settings import Settings
from torchlint.analysis.import_floor import with_import_floor
from torchlint.core.source import MODULE, SourceFile, libcst_parsing
from torchlint.engine.fixer import apply_fixes, keep_lost_text
from torchlint.engine.tidy import ImportedElsewhere
from torchlint.engine.narrowing import Narrowed, narrow
from torchlint.engine.positions import Locator
from torchlint.engine.splicing import chunked_module
from torchlint.rules import all_rules
from torchlint.rules.rule import Rule, SyntaxRepair

MAX_FIX_ROUNDS = 10
# Deepest syntax tree (in ast levels) torchlint analyses; see ``check_depth``.
MAX_DEPTH = 2500
DEPTH_CHECKED = "depth checked"  # SourceFile.memo key: the tree passed ``check_depth``


@dataclass
class CheckResult:
    diagnostics: List[Diagnostic]
    module: Optional[cst.Module] = None  # what libcst parsed: with stubs when ``narrowed``
    internal_errors: List[str] = field(default_factory=list)
    narrowed: bool = False
    top_of: Mapping[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)  # node -> top-level statement
    locator: Optional[Locator] = None  # where the nodes of ``module`` are (with findings only)
    suppressed: List[Tuple[int, str]] = field(default_factory=list)  # (line, code) findings `# noqa` hid
    # Set when Python 3 could not parse the source and a rule's syntax repair
    # made it parseable: ``module`` and the fixes belong to ``repair.text``.
    repair: Optional[SyntaxRepair] = None
    # Which names other modules of the project take from this one: previews of
    # fixes keep their imports as ``--fix`` does (``tidy``); None for a text alone.
    imported_elsewhere: Optional[ImportedElsewhere] = None


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
        self, rules: Sequence[Rule], settings: Settings = Settings(), honour_noqa: bool = True, screens: bool = True,
        report_unused_noqa: bool = False, project: Optional[Project] = None,
        fix_policy: FixPolicy = DEFAULT_FIX_POLICY,
    ) -> None:
        self.settings = settings
        # Which fixes may be applied and how safe each is (``fixable``, ``extend-safe-fixes``...).
        self.fix_policy = fix_policy
        # The user's project (``analysis/project.py``): what its other modules
        # define. Without one, each text is checked alone.
        self.project = project if project is not None else Project(settings=settings)
        # Also report `# noqa: TL...` codes that suppressed nothing (as TL001).
        self.report_unused_noqa = report_unused_noqa and honour_noqa
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
        # node type -> the rules that read every node of that type (``Rule.gathers``)
        self._gathered: Dict[Type[cst.CSTNode], List[Rule]] = {}
        for rule in self.rules:
            for node_type in rule.gathered_types():
                self._gathered.setdefault(node_type, []).append(rule)

    def _outline(self, tree: ast.Module, module: ModuleRef, census: Optional[Census] = None) -> Outline:
        """The outline of ``tree`` (whose census is ``census``, if known), asking
        the project model what its imports bring."""
        link = self.project.link(module)
        return Outline(tree, star_exports=link.star_exports, function_classes=link.function_classes, census=census,
                       call_may_give_tensor=link.call_may_give_tensor)

    def module_for(self, path: Optional[str]) -> ModuleRef:
        """Which module of the project the file ``path`` is (None: a text alone)."""
        return self.project.finder.module_for(path) if path else STANDALONE

    def rules_for(self, source: str, tree: Optional[ast.Module] = None, module: ModuleRef = STANDALONE) -> List[Rule]:
        """The rules that may flag ``source``: those whose textual screen
        passes, then (given Python's ``tree`` of it) whose outline screen
        passes too. Only they run, and only files with some are analysed."""
        return self._screen(source, tree, module)[0]

    def _screen(self, source: str, tree: Optional[ast.Module], module: ModuleRef = STANDALONE,
                census: Optional[Census] = None) -> Tuple[List[Rule], Optional[Outline]]:
        """``rules_for``, and the outline of ``tree`` if it made one."""
        if not self.screens:
            return list(self.rules), None
        if tree is None:
            return [r for r in self.rules if r.may_match(source)], None
        # A rule with an outline screen is asked only that: it is sharper
        # than the textual one and, over the walk already paid for, cheaper
        # than scanning the text with a rule's regexes.
        textual = [r for r in self._textual_only if r.may_match(source)]
        outline = self._outline(tree, module, census)
        sharp = {id(r) for r in self._outlined if r.may_match_tree(outline)}
        return [r for r in self.rules if id(r) in sharp or r in textual], outline

    def check(self, source: Union[str, SourceFile], syntax_checked: bool = False, whole: bool = False,
              module: ModuleRef = STANDALONE, screened: Optional[Sequence[Rule]] = None,
              outline: Optional[Outline] = None) -> CheckResult:
        """Find problems in ``source`` (see ``_check``), and unused ``# noqa`` codes if asked.

        ``module`` says which module of the project ``source`` is. ``screened``:
        the rules that may flag the part of ``source`` the caller wants findings
        for, screened by the caller (``engine/incremental.py``), which may also
        give the outline of the whole file (with the project's star exports)."""
        source = SourceFile.of(source)
        try:
            result = self._check(source, syntax_checked, whole, module, screened, outline)
        finally:
            self.project.checked(module)
        result.diagnostics = self.fix_policy.apply(result.diagnostics)
        if self.report_unused_noqa and not file_is_exempt(source):
            running = [rule.code for rule in self.rules]
            for line, column, code in unused_noqa(source, result.suppressed, running):
                result.diagnostics.append(Diagnostic(
                    UNUSED_NOQA, f"unused `noqa` code {code}: nothing to suppress on this line", line, column))
            result.diagnostics.sort(key=Diagnostic.sort_key)
        return result

    def _check(self, source: Union[str, SourceFile], syntax_checked: bool = False, whole: bool = False,
               module: ModuleRef = STANDALONE, screened: Optional[Sequence[Rule]] = None,
               given_outline: Optional[Outline] = None) -> CheckResult:
        """Find problems in ``source``; raises ParseError for invalid Python.

        ``syntax_checked`` says the caller already compiled the text with
        Python's own parser (flake8 hands its tree over in the
        ``SourceFile``; the fix loop's rewritten texts come from valid code).
        Otherwise the source is parsed here first: every file, so no syntax
        error goes unreported.

        Only the statements that can hold findings are parsed with libcst
        (``narrowing.py``) unless ``whole`` asks for the module of the whole
        file, which fixing needs.
        """
        source = SourceFile.of(source)
        if not syntax_checked:
            try:
                source.tree  # raises ParseError
            except Unsupported:
                raise
            except ParseError as error:
                return self._check_repaired(source, error, whole, module)
        tree = None
        if source.parsed or not self.screens or any(r.may_match(source.text) for r in self.rules):
            tree = source.tree  # a rewritten text in the fix loop: its tree sharpens the screen
        self.project.register(module, source)
        census = source.census if tree is not None else None  # the walk the parse made
        if screened is None:
            active, outline = self._screen(source.text, tree, module, census)
        else:
            active = list(screened)
            outline = given_outline or self._outline(tree, module, census)
        if not active:
            return CheckResult([])
        if self.honour_noqa and file_is_exempt(source):  # asked only here: few files get this far
            return CheckResult([])
        narrowed = None if whole or not self.screens else narrow(source, tree, active, outline)
        _guard_depth(source, tree, narrowed)
        if tree is not None:
            _parse_in_pieces(narrowed.source if narrowed is not None else source, tree)
        parsed = _parse_narrowed(narrowed) if narrowed is not None else None
        if parsed is None:
            if narrowed is not None:
                _guard_depth(source, tree, None)  # the whole text is parsed after all
            narrowed, parsed = None, source.module
        try:
            return self._check_module(parsed, source, active, tree, narrowed, outline, module)
        except RecursionError:
            raise Unsupported("too deeply nested to analyse", 1, 0) from None

    def _repair(self, source: SourceFile) -> Optional[Tuple[Rule, SyntaxRepair]]:
        # A repair by a rule that is not selected (``--select TL101`` on a file with ``async=``)
        # still lets the other rules read the file; its sites are then neither reported nor fixed.
        selected = {rule.code for rule in self.rules}
        for rule in [*self.rules, *(r for r in _repairing_rules() if r.code not in selected)]:
            repair = rule.repair_syntax(source.text)
            if repair is not None:
                return rule, repair
        return None

    def _check_repaired(self, source: SourceFile, error: ParseError, whole: bool, module: ModuleRef) -> CheckResult:
        """Check a ``source`` Python 3 rejects, if a rule can repair it at the
        token level (``async=``): findings of the repaired text, at their
        places in ``source``, and one finding per repaired site."""
        found = self._repair(source)
        if found is None:
            raise error
        rule, repair = found
        repaired = SourceFile(repair.text, source.encoding)
        try:
            repaired.tree
        except ParseError as still:
            raise type(still)(still.message, still.line, repair.original_column(still.line, still.column)) from None
        if self.honour_noqa and file_is_exempt(source):
            return CheckResult([])
        checked = self.check(repaired, syntax_checked=True, whole=whole, module=module)
        for diagnostic in checked.diagnostics:
            diagnostic.column = repair.original_column(diagnostic.line, diagnostic.column)
        noqa = noqa_index(source)
        reported = any(r is rule for r in self.rules)
        for site in repair.sites if reported else ():
            if not (self.honour_noqa and noqa.suppresses(site.line, rule.code)):
                fix = Fix((), safe=True) if site.safe else None  # applied as text by ``fix``
                checked.diagnostics.append(Diagnostic(rule.code, site.message, site.line, site.column, fix))
        checked.diagnostics.sort(key=Diagnostic.sort_key)
        checked.repair = repair
        return checked

    def _check_module(self, module: cst.Module, source: SourceFile, active: Sequence[Rule],
                      tree: Optional[ast.Module] = None, narrowed: Optional[Narrowed] = None,
                      outline: Optional[Outline] = None, ref: ModuleRef = STANDALONE) -> CheckResult:
        settings = self.settings
        if settings.torch_version is not None:
            # the file's own torch imports may show it cannot run on that floor; only a
            # floor is raised: no parse for the others
            settings = with_import_floor(settings, tree if tree is not None else source.tree)
            active = [rule for rule in active if rule.torch_versions.applies_to(settings.torch_version)]
        active_ids = {id(rule) for rule in active}
        wanted = [t for t, handlers in self._handlers.items() if any(id(r) in active_ids for r, _ in handlers)]
        gathered = [t for t, rules in self._gathered.items()
                    if t not in wanted and any(id(r) in active_ids for r in rules)]
        file_context, collected = analyse(module, [*wanted, *gathered], settings, tree, outline,
                                          self.project.link(ref))
        found, errors = self._run_rules(wanted, collected, file_context, active_ids)
        if found and settings.torch_version is None:
            # Without a declared floor, the torch the project's version tests show is the
            # floor (``_shown_floor``). A floor only takes findings away, so it is asked
            # only where there are some (most files have none, and the question reads
            # the modules run before the file); the rules then run again on the same
            # analysis, which no setting shapes.
            shown = self._shown_floor(ref)
            if shown is not None:
                settings = with_import_floor(shown, tree if tree is not None else source.tree)
                active_ids = {id(rule) for rule in active if rule.torch_versions.applies_to(settings.torch_version)}
                file_context.settings = settings
                found, errors = self._run_rules(wanted, collected, file_context, active_ids)
        diagnostics: List[Diagnostic] = []
        suppressed: List[Tuple[int, str]] = []
        if found:
            parsed = narrowed.source if narrowed is not None else source
            locator = Locator(module, parsed, tree, file_context.top_of, file_context.method_of, file_context.line_holding)
            places = locator.ranges({id(f.node): f.node for _, f in found}.values())
            noqa = noqa_index(source) if self.honour_noqa else None  # flake8 applies `# noqa` itself
            lines = source.lines if "\x0c" in source.text else None
            gates = _version_gates(found, places, tree, outline, self.project, ref)
            moot = _moot_ranges(found, places, tree, outline)
            for rule, finding in found:
                (line, column), (end_line, end_column) = places[finding.node]
                if narrowed is not None and not narrowed.keeps(line):
                    continue  # in a stub's header: the real statement was screened out
                if gates and rule.respects_version_gates() and is_gated(gates, line):
                    continue  # compatibility code a torch version gate chooses
                if id(rule) in moot and is_gated(moot[id(rule)], line):
                    continue  # code that runs only where the problem cannot arise
                if noqa is not None and noqa.suppresses(line, rule.code):
                    suppressed.append((line, rule.code))
                    continue
                if lines is not None and lines[line - 1].startswith("\x0c"):
                    shifted = _form_feed_column(lines[line - 1], column, file_context.module, finding.node)
                    end_column += shifted - column if end_line == line else 0
                    column = shifted
                diagnostics.append(Diagnostic(rule.code, finding.message, line, column, finding.fix,
                                              end_line=end_line, end_column=end_column, detail=finding.detail))
        else:
            locator = None
        file_context.release()
        diagnostics.sort(key=Diagnostic.sort_key)
        return CheckResult(_dedupe(diagnostics), file_context.module, errors, narrowed is not None,
                           file_context.top_of, locator, suppressed,
                           imported_elsewhere=self._imported_elsewhere(ref))

    def _imported_elsewhere(self, module: ModuleRef) -> Optional[ImportedElsewhere]:
        if module is STANDALONE:
            return None
        project = self.project
        return lambda names: project.names_imported_elsewhere(module, names)

    def _run_rules(self, wanted: List[Type[cst.CSTNode]], collected: Mapping, file_context: "FileContext",
                   active_ids: Set[int]) -> Tuple[List[Tuple[Rule, object]], List[str]]:
        """The findings of the rules ``active_ids`` names on the nodes the traversal collected."""
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
        return found, errors

    def _shown_floor(self, ref: ModuleRef) -> Optional[Settings]:
        """The settings of a file whose project declares no floor, where its code shows
        one: the oldest torch release that the project's own version tests, in the file
        or in the modules run before it, tell apart from the next (``if
        torch.__version__ >= "1.11"`` shows a torch 1.10 in use; ``version_tests.py``),
        else, for a distribution declaring no torch floor (``floor_from_code``), the
        newest release whose API that code, or its package's, uses unconditionally
        (``torch.load(..., weights_only=False)`` needs 1.13;
        ``import_floor.needed_release``); and no older than, for a package declaring its
        Python but no torch, the first torch for that Python (``least_torch_version``). The code runs
        there, and nothing in it shows an older torch: advice whose replacement that
        torch lacks (TL112's ``weights=`` needs 1.12, ``torch.amp.GradScaler`` 2.3), or
        about a problem gone by then, does not fit the project. None: nothing shows one
        (old code: advice is for the torch it moves to)."""
        settings = self.settings
        # Version tests say outright which torch the code serves: what else it uses
        # unconditionally (a deprecated helper calling torch.compile) does not outvote them.
        told_apart = self.project.oldest_release_told_apart(ref)
        code = told_apart if told_apart is not None or not settings.floor_from_code else \
            self.project.oldest_release_needed(ref)
        shown = [release for release in (code, settings.least_torch_version) if release is not None]
        if not shown:
            return None
        floor = max(tuple(release[:3]) + (0,) * (3 - len(release)) for release in shown)
        if settings.target_torch_version is not None and settings.target_torch_version < floor:
            return None  # asked to check against an older target: leave the user's settings be
        return replace(settings, torch_version=floor)

    def fix(self, source: Union[str, SourceFile], unsafe: bool = False, module: ModuleRef = STANDALONE) -> FixResult:
        original = SourceFile.of(source)
        result = FixResult(original.text, [])
        checked = self.check(original, whole=True, module=module)
        reported = Counter(d.code for d in checked.diagnostics)  # what a check of the file says
        try:
            return self._fix_loop(original, checked, result, unsafe, module)
        finally:
            # A fix counts the findings it made go: one fix may answer several findings
            # (TL111's whole Function), or make another's unnecessary (TL107 drops the
            # volatile= TL102 would), so the count is what a check reported less what
            # remains, as ``--diff`` and a check of the file will agree.
            if result.source != original.text:
                result.fixed = reported - Counter(d.code for d in result.diagnostics)

    def _fix_loop(self, original: SourceFile, checked: CheckResult, result: FixResult, unsafe: bool,
                  module: ModuleRef) -> FixResult:
        if checked.repair is not None:
            repaired = self._apply_repair(checked, result)
            if repaired is None:
                return result
            original = SourceFile(repaired, original.encoding)
            checked = self.check(original, whole=True, module=module)
        current = original
        round_trip: Optional[str] = None  # libcst's rendering of the original
        for _ in range(MAX_FIX_ROUNDS):
            if current is not original:
                checked = self.check(current, syntax_checked=True, whole=True, module=module)
            result.internal_errors.extend(checked.internal_errors)
            if round_trip is None and checked.module is not None:
                round_trip = checked.module.code
            # One fix may answer several findings (TL111 turns a whole legacy Function
            # into the new style): each of them counts as fixed, as each was reported fixable.
            by_fix: Dict[int, List[Diagnostic]] = {}
            for diagnostic in checked.diagnostics:
                if diagnostic.fix is not None and (diagnostic.fix.safe or unsafe):
                    by_fix.setdefault(id(diagnostic.fix), []).append(diagnostic)
            if not by_fix or checked.module is None:
                return self._finish(result, original, round_trip, current, checked.diagnostics, module)
            fixes = [owners[0].fix for owners in by_fix.values()]
            fix_round = apply_fixes(checked.module, fixes, checked.imported_elsewhere)  # type: ignore[arg-type]
            for fix, reason in fix_round.discarded:
                result.discarded.append((by_fix[id(fix)][0], reason))
            for fix in fix_round.applied:
                for owner in by_fix[id(fix)]:
                    result.fixed[owner.code] += 1
            if fix_round.code == current.text:
                return self._finish(result, original, round_trip, current, checked.diagnostics, module)
            current = original.rewritten(fix_round.code)
        result.converged = False
        return self._finish(result, original, round_trip, current, None, module)

    def _apply_repair(self, checked: CheckResult, result: FixResult) -> Optional[str]:
        """The repaired text if every repaired site has a fix (safe, not
        suppressed), counted in ``result``; otherwise None, with ``result``
        saying that nothing in the file can be fixed."""
        repair = checked.repair
        assert repair is not None
        sites = {(s.line, s.column) for s in repair.sites}
        repairs = [d for d in checked.diagnostics if (d.line, d.column) in sites and d.fix is not None
                   and not d.fix.edits]
        if len(repairs) == len(sites):
            result.fixed[repairs[0].code] += len(repairs)
            return repair.text
        result.diagnostics = checked.diagnostics
        reason = ("the file keeps syntax Python 3 cannot parse (see the other findings, or select the rule "
                  "that repairs it), so it cannot be rewritten")
        result.discarded.extend((d, reason) for d in checked.diagnostics if d.fix is not None and d not in repairs)
        return None

    def _finish(self, result: FixResult, original: SourceFile, round_trip: Optional[str], current: SourceFile,
                diagnostics: Optional[List[Diagnostic]], module: ModuleRef = STANDALONE) -> FixResult:
        """The fixed text, with what libcst's rendering dropped from the original restored."""
        if current.text != original.text and round_trip is not None and round_trip != original.text:
            restored = keep_lost_text(original, SourceFile(round_trip), current)
            if restored is None:  # cannot line the texts up: write nothing rather than lose characters
                result.discarded.extend(
                    (d, "the fixed code would lose characters libcst does not keep")
                    for d in self.check(original, module=module).diagnostics if d.fix is not None)
                result.fixed.clear()
                restored = original.text
            if restored != current.text:
                current, diagnostics = original.rewritten(restored), None
        result.source = current.text
        result.diagnostics = diagnostics if diagnostics is not None else self.check(current, module=module).diagnostics
        return result


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


def _guard_depth(source: SourceFile, tree: ast.Module, narrowed: Optional[Narrowed]) -> None:
    """``check_depth`` over what libcst will parse: ``narrowed``'s text, else all of ``source``."""
    if len(source.text) <= MAX_DEPTH:
        return  # shorter sources cannot nest that deep
    if narrowed is not None:
        _check_kept_depth(source, tree, narrowed)
    else:
        # Memoized: the language server marks a text whose statements it checked one by one.
        source.memo(DEPTH_CHECKED, lambda: check_depth(tree) or True)


def _check_kept_depth(source: SourceFile, tree: ast.Module, narrowed: Narrowed) -> None:
    """``check_depth`` over what libcst will parse of ``source`` narrowed (a cut
    body is a string literal there, its header is not cut); nothing when the
    whole of ``source`` passed already."""
    if source.memoized(DEPTH_CHECKED) is True:
        return
    check_depth(narrowed.parsed_part(tree))


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


def _version_gates(found: Sequence[Tuple[Rule, object]], places: Mapping[cst.CSTNode, Tuple[Tuple[int, int], ...]],
                   tree: Optional[ast.Module], outline: Optional[Outline],
                   project: Project, ref: ModuleRef) -> Tuple[Tuple[int, int], ...]:
    """The lines torch version gates protect around the findings whose rule
    respects them (at ``places``); the gates may test flags the project's
    other modules derive from the torch version."""
    lines = [places[finding.node][0][0] for rule, finding in found  # type: ignore[attr-defined]
             if rule.respects_version_gates()]
    if tree is None or not lines:
        return ()
    outline = outline if outline is not None else Outline(tree)
    tested = names_that_may_gate(outline, lines)  # only they can be flags gating a finding
    imported = frozenset(local for local, spelled in project_spellings(outline, tested).items()
                         if project.is_version_flag(spelled, ref))
    return gated_ranges(outline, imported, lines)


def _moot_ranges(found: Sequence[Tuple[Rule, object]], places: Mapping[cst.CSTNode, Tuple[Tuple[int, int], ...]],
                 tree: Optional[ast.Module], outline: Optional[Outline]) -> Dict[int, Sequence[Tuple[int, int]]]:
    """Each rule's ``moot_ranges`` in the file, for the rules with findings that have them."""
    lines: Dict[int, List[int]] = {}
    rules: Dict[int, Rule] = {}
    for rule, finding in found:
        if rule.has_moot_ranges():
            lines.setdefault(id(rule), []).append(places[finding.node][0][0])  # type: ignore[attr-defined]
            rules[id(rule)] = rule
    if not lines or tree is None:
        return {}
    outline = outline if outline is not None else Outline(tree)
    return {key: rules[key].moot_ranges(outline.whole_file, found_at) for key, found_at in lines.items()}


# A text longer than this is parsed by libcst in pieces of PIECE_CHARS
# characters (``splicing.chunked_module``): the native parser's working memory,
# several times the tree it returns, is then bounded by a piece, not the file.
# Measured (bench/RESULTS.md): a 0.93 MB file peaked at 774 MB parsed whole.
PIECES_FROM = 128_000
PIECE_CHARS = 32_000


def _parse_in_pieces(source: SourceFile, tree: ast.Module) -> None:
    """Let ``source``'s libcst module (``tree``'s statements are its own, line
    for line) be parsed in pieces when it is large; parsed whole as ever when
    that cannot be done (libcst's error, if any, then comes from the whole text)."""
    if len(source.text) <= PIECES_FROM:
        return
    lines = source.lines
    try:
        with libcst_parsing():
            source.memo(MODULE, lambda: chunked_module(source.text, lines, tree, PIECE_CHARS))
    except Exception:  # CannotSplice, or a piece libcst refuses alone
        return


def _parse_narrowed(narrowed: Narrowed) -> Optional[cst.Module]:
    """libcst's tree of the narrowed text; None (parse the file whole) if it
    fails, so narrowing never changes whether a file can be analysed."""
    try:
        return narrowed.source.module
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


@lru_cache(maxsize=1)
def _repairing_rules() -> Tuple[Rule, ...]:
    """Every rule with a token-level syntax repair (TL115's ``async=``), selected or not."""
    return tuple(rule for rule in all_rules() if type(rule).repair_syntax.__func__ is not Rule.repair_syntax.__func__)
