"""Re-check a changed text by analysing only the top-level statement that changed.

An editor changes a file one keystroke at a time, almost always inside
one function or class. ``recheck`` takes the previous text's complete
result (``Checked``) and the new text, and when the change lies within one
top-level ``def`` or ``class`` it:

- parses only that statement's new text with Python (its lines, which
  start a fresh logical line at column 0 and end where the next top-level
  statement starts) and splices it into the previous tree, so the new
  file's tree is had without parsing the file;
- checks the new file with every other def and class cut (``narrowing.focus``):
  the changed statement gets exactly the findings a whole check gives it,
  since its rules decide from it, module-level code, the other statements'
  headers and facts about the whole file taken from the spliced tree (the
  argument of ``narrowing.py``);
- keeps every other statement's findings from before, moved by the lines
  the change added or removed.

Keeping them is exact only when nothing they depend on changed. The other
statements, module-level code and every header but the changed one are the
same text; what remains are the facts about the whole file rules read
from Python's tree (names bound or deleted anywhere, imports, attributes
read and assigned, torch version gates). A change is taken incrementally
only when

- the statement's *shape* is the same: the set of its statements' forms
  with numbers blanked (``_shape``), and its own header. Every fact above
  is a union over the statements' forms, so a change of a number, or one
  that moves or repeats statements, keeps them; a new name, attribute,
  string, import or operator does not;
- and when the def or class is named anywhere else in the file (code,
  comment or string), the statement is the same but for positions:
  inference elsewhere may follow the name into it (the project model:
  what calling it returns, what an attribute of its instances holds, read
  from the registered text), and there a number can matter (``t[0]``);
- (this covers torch version gates too: a flag assigned inside the
  statement may gate code elsewhere, but which names are flags depends on
  the forms of the file's assignments, names, attributes and calls, not on
  numbers);
- no rule that reads the whole file (``Rule.whole_file``) runs, nor the
  report of unused ``# noqa`` codes (it needs every statement's findings),
  and no ``__future__`` import changes how the statement parses.

Otherwise ``recheck`` returns None and the caller checks the whole text.
``tests/test_incremental.py`` compares the results with whole checks over
edits of every kind.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import FrozenSet, List, Optional, Sequence, Tuple

from torchlint.analysis.project import STANDALONE, ModuleRef
from torchlint.core.diagnostic import Diagnostic, ParseError
from torchlint.core.noqa import file_is_exempt
from torchlint.core.source import SourceFile, python_tree
from torchlint.engine.linter import DEPTH_CHECKED, CheckResult, Engine, check_depth
from torchlint.engine.narrowing import (
    carry_parses,
    carry_screens,
    focus,
    focus_honoured,
    focused_rules,
    outline_of_statements,
    statement_index,
)

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
LineRange = Tuple[int, int]


@dataclass
class Checked:
    """A text, Python's tree of it, and its complete findings."""

    source: SourceFile  # its ``tree`` is made
    diagnostics: List[Diagnostic]

    @property
    def tree(self) -> ast.Module:
        return self.source.tree


@dataclass
class Rechecked:
    checked: Checked
    result: CheckResult  # the engine's result for the focused check: its internal errors


def recheck(engine: Engine, previous: Checked, text: str, module: ModuleRef = STANDALONE) -> Optional[Rechecked]:
    """The findings of ``text`` from ``previous``'s and a check of the one
    statement that changed; None when that would not be exact (see the
    module's docstring) and the whole text must be checked.

    ``previous`` must not be used afterwards: its tree is re-used, shifted."""
    if engine.report_unused_noqa or "__future__" in text:
        return None
    old_lines, source = previous.source.lines, SourceFile(text)
    new_lines = source.lines
    change = _changed_statement(previous.tree, old_lines, new_lines)
    if change is None:
        return None
    index, (first, old_end), delta = change
    old_statement = previous.tree.body[index]
    new_statement = _parse_statement(new_lines, first, old_end + delta, type(old_statement))
    if new_statement is None or _binds_outside(old_statement) or _binds_outside(new_statement):
        return None
    new_footprint = _footprint(new_statement)
    footprints = previous.source.memoized(_FOOTPRINTS)
    old_footprint = footprints[index] if footprints is not None else _footprint(old_statement)
    if new_footprint != old_footprint:
        # Made once per document, when a change first alters a statement's forms.
        footprints = _footprints(previous.source)
        if not _same_union(footprints, index, new_footprint):
            return None
    if _named_elsewhere(old_statement.name, old_lines, first, old_end) and _form(new_statement) != _form(old_statement):
        # Inference elsewhere may follow the name into this def or class (the
        # project model: what a call returns, an attribute holds), where any
        # change, a number included, may change what it finds.
        return None
    indexes = list(_statement_indexes(previous.source))
    depth_checked = _depth_checked(previous.source)
    tree = _splice(previous.tree, index, new_statement, delta, indexes[index + 1:])
    checked = Checked(SourceFile(text, source.encoding, tree=tree), [])
    focus(checked.source, first, _last_line(new_statement))
    carry_parses(previous.source, checked.source)
    # Every other statement is where it was, or moved by ``delta`` lines with
    # its stub: what narrowing prepared for them still holds.
    carry_screens(previous.source, checked.source, index, delta, same_forms=new_footprint == old_footprint)
    carry_footprints(previous.source, checked.source)
    if footprints is not None:
        footprints[index] = new_footprint
        checked.source.memo(_FOOTPRINTS, lambda: footprints)
        by_text = checked.source.memo(_FOOTPRINTS_BY_TEXT, dict)
        # The replaced text goes: the table holds the document's current defs
        # only (it grew by a def's text on every edit, with nothing whole-checked).
        by_text.pop("".join(old_lines[first - 1:_last_line(old_statement)]), None)
        by_text["".join(new_lines[first - 1:_last_line(new_statement)])] = new_footprint
    # The other statements' nodes are the same objects (moved): only the new
    # one is walked, for the outline of the file and for its depth.
    indexes[index] = statement_index(new_statement)
    checked.source.memo(_INDEXES, lambda: indexes)
    if depth_checked:
        check_depth(ast.Module(body=[new_statement], type_ignores=[]))  # raises Unsupported as a whole check would
        checked.source.memo(DEPTH_CHECKED, lambda: True)
    link = engine.project.link(module)
    star_exports = link.star_exports
    outline = outline_of_statements(tree, indexes, star_exports, link.function_classes, link.call_may_give_tensor)
    # The screens of the whole file need not run again: only the rules that
    # may flag the changed statement matter (``narrowing.focused_rules``).
    screened = focused_rules(checked.source, tree, engine.rules, star_exports, outline)
    kept = [_moved(d, old_end, delta) for d in previous.diagnostics if not first <= d.line <= old_end]
    if screened is not None and not screened and not engine.report_unused_noqa:
        if not (engine.honour_noqa and file_is_exempt(checked.source)):
            checked.diagnostics = kept  # no rule can flag the changed statement
            return Rechecked(checked, CheckResult([]))
    result = engine.check(checked.source, syntax_checked=True, module=module, screened=screened, outline=outline)
    if not (focus_honoured(checked.source) and result.narrowed):
        checked.diagnostics = list(result.diagnostics)  # the whole file was analysed after all
        return Rechecked(checked, result)
    found = [d for d in result.diagnostics if first <= d.line <= old_end + delta]
    checked.diagnostics = sorted(kept + found, key=Diagnostic.sort_key)
    return Rechecked(checked, result)


def kept_for_next(source: SourceFile) -> SourceFile:
    """``source`` with only what re-checking its next text needs: the text,
    Python's tree and what was derived from it once (the screens' stubs,
    libcst's pieces, each statement's node index, the depth check), not
    libcst's trees of the check."""
    kept = SourceFile(source.text, source.encoding, tree=source.tree)
    carry_screens(source, kept)
    carry_parses(source, kept)
    footprints = source.memo(_FOOTPRINTS, lambda: None)
    if footprints is not None:
        kept.memo(_FOOTPRINTS, lambda: footprints)
    carry_footprints(source, kept)
    indexes = source.memo(_INDEXES, lambda: None)
    if indexes is not None:
        kept.memo(_INDEXES, lambda: indexes)
    if _depth_checked(source):
        kept.memo(DEPTH_CHECKED, lambda: True)
    return kept


def prepare(checked: Checked) -> None:
    """Work out now what the next ``recheck`` of ``checked``'s document would
    otherwise work out first: each top-level statement's node index and each
    def's and class's footprint (about 140 ms for 2,000 lines, once per
    document). The server calls it after publishing a whole check's findings,
    while the editor is idle; nothing it makes changes a finding."""
    if checked.source.parsed:
        _statement_indexes(checked.source)
        _footprints(checked.source)


_INDEXES = "incremental: the node index of each top-level statement"


def _statement_indexes(source: SourceFile) -> List[dict]:
    return source.memo(_INDEXES, lambda: [statement_index(statement) for statement in source.tree.body])


def _depth_checked(source: SourceFile) -> bool:
    """Did the whole tree pass ``check_depth``? (Without computing it.)"""
    return source.memo(DEPTH_CHECKED, lambda: False) is True


def _changed_statement(tree: ast.Module, old: Sequence[str], new: Sequence[str]
                       ) -> Optional[Tuple[int, LineRange, int]]:
    """(index, region, lines added) of the top-level def or class whose region
    (its lines and the blank or comment lines up to the next statement)
    holds every changed line; None if the change reaches beyond one."""
    if old == new:
        return None
    same_start = 0
    limit = min(len(old), len(new))
    while same_start < limit and old[same_start] == new[same_start]:
        same_start += 1
    same_end = 0
    while same_end < limit - same_start and old[-1 - same_end] == new[-1 - same_end]:
        same_end += 1
    first_changed, last_changed = same_start + 1, len(old) - same_end  # old lines; empty when only added
    body = tree.body
    for index, statement in enumerate(body):
        start = _first_line(statement)
        end = _first_line(body[index + 1]) - 1 if index + 1 < len(body) else len(old)
        if not start <= first_changed <= end + 1 or last_changed > end:
            continue
        if first_changed == end + 1 and first_changed <= len(old):
            continue  # lines added before the next statement's first line: also its region
        if not isinstance(statement, _DEFINITIONS) or statement.col_offset != 0:
            return None
        if index > 0 and _last_line(body[index - 1]) >= start:
            return None  # shares a line with the statement before (``x = 1; def``... cannot, but be sure)
        if _last_line(statement) > end:
            return None
        return index, (start, end), len(new) - len(old)
    return None


def _parse_statement(lines: Sequence[str], first: int, last: int, kind: type) -> Optional[ast.stmt]:
    """Lines ``first`` to ``last`` of a text parsed alone: one top-level
    statement of ``kind``, placed at its lines; None when they are not.

    Python's parser accepts the whole new text exactly when it accepts
    these lines: the text before them is unchanged and ends a logical line
    at indentation 0, the text after them is unchanged and starts one, and
    a region that parses alone leaves the tokenizer in that state. The
    compiler's checks (``python_tree``) are per function and class scope."""
    text = "".join(lines[first - 1:last])
    try:
        module = python_tree(text)
    except ParseError:
        return None
    if len(module.body) != 1 or type(module.body[0]) is not kind:
        return None
    statement = module.body[0]
    ast.increment_lineno(statement, first - 1)
    return statement


def _splice(tree: ast.Module, index: int, statement: ast.stmt, delta: int, later: Sequence[dict]) -> ast.Module:
    """``tree`` with statement ``index`` replaced, the statements after it moved
    ``delta`` lines. ``later``: the node index of each statement after it
    (``statement_index``), which lists every node that has a position, so the
    move is a loop over them rather than a walk (``ast.increment_lineno``)."""
    body = list(tree.body)
    body[index] = statement
    if delta:
        for nodes_by_type in later:
            for kind, nodes in nodes_by_type.items():
                if "lineno" not in kind._attributes:  # ``arguments``, ``comprehension``: no position
                    continue
                for node in nodes:
                    node.lineno += delta
                    end = node.end_lineno
                    if end is not None:
                        node.end_lineno = end + delta
    return ast.Module(body=body, type_ignores=[])


def _moved(d: Diagnostic, last: int, delta: int) -> Diagnostic:
    if not delta or d.line <= last:
        return d
    end_line = d.end_line + delta if d.end_line is not None else None
    return replace(d, line=d.line + delta, end_line=end_line)


# -- what a statement contributes to facts about the whole file -----------------


def _footprint(statement: ast.stmt) -> Tuple[object, FrozenSet[object]]:
    """The statement's own form (its header: name, decorators, parameters,
    bases) and the set of the forms of every statement in it, each with
    the statements it holds left out and numbers blanked to their type."""
    forms = set()
    pending: List[ast.AST] = [statement]
    own = None
    while pending:
        node = pending.pop()
        form = _shape(node, pending)
        own = form if own is None else own
        forms.add(form)
    return own, frozenset(forms)


_FOOTPRINTS = "incremental: the footprint of each top-level def and class"


_FOOTPRINTS_BY_TEXT = "incremental: the footprint of each def and class, by its text"


def _footprints(source: SourceFile) -> List[Optional[Tuple[object, FrozenSet[object]]]]:
    """The footprint of each top-level def and class of ``source`` (None for
    other statements), kept up to date by ``recheck``. A statement's footprint
    depends only on its text (it leaves positions out), so the footprints an
    earlier text of the document worked out (``carry_footprints``) are looked
    up by text: after a whole check only the changed statement is walked."""

    def compute() -> List[Optional[Tuple[object, FrozenSet[object]]]]:
        known = source.memo(_FOOTPRINTS_BY_TEXT, dict)
        lines, found, current = source.lines, [], {}
        for statement in source.tree.body:
            if not isinstance(statement, _DEFINITIONS):
                found.append(None)
                continue
            text = "".join(lines[_first_line(statement) - 1:_last_line(statement)])
            footprint = known.get(text)
            if footprint is None:
                footprint = _footprint(statement)
            current[text] = footprint
            found.append(footprint)
        known.clear()  # only this text's statements: bounded by the file
        known.update(current)
        return found

    return source.memo(_FOOTPRINTS, compute)


def carry_footprints(old: SourceFile, new: SourceFile) -> None:
    """Let ``new`` (a later text of the same document) look up the footprints ``old``'s statements had."""
    known = old.memoized(_FOOTPRINTS_BY_TEXT)
    if known is not None:
        new.memo(_FOOTPRINTS_BY_TEXT, lambda: known)


def _same_union(footprints: Sequence[Optional[Tuple[object, FrozenSet[object]]]], index: int,
                new: Tuple[object, FrozenSet[object]]) -> bool:
    """Is the union of the forms of every def and class the same with
    statement ``index``'s footprint replaced by ``new``, its own form (header)
    unchanged? Facts about the whole file are unions over these forms, so a
    line added or removed whose forms some other def or class also holds (a
    line duplicated, deleted or pasted from elsewhere) leaves them as they were."""
    old = footprints[index]
    if old is None or old[0] != new[0]:
        return False
    changed = old[1] ^ new[1]
    if not changed:
        return True
    for position, footprint in enumerate(footprints):
        if footprint is None or position == index:
            continue
        changed = changed - footprint[1]
        if not changed:
            return True
    return False


def _shape(node: ast.AST, statements: List[ast.AST]) -> object:
    """``node`` as nested tuples, positions left out, numbers as their type;
    lists of statements (bodies) are left out and added to ``statements``."""
    if isinstance(node, ast.Constant):
        value = node.value
        number = isinstance(value, (int, float, complex)) and not isinstance(value, bool)
        return "Constant", type(value).__name__ if number else repr(value)
    parts: List[object] = [type(node).__name__]
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            if value and isinstance(value[0], (ast.stmt, ast.excepthandler)) or name == "cases":
                statements.extend(value)
                parts.append((name, "block"))
            else:
                parts.append((name, tuple(_shape(item, statements) if isinstance(item, ast.AST) else item
                                          for item in value)))
        elif isinstance(value, ast.AST):
            parts.append((name, _shape(value, statements)))
        else:
            parts.append((name, value))
    return tuple(parts)


def _named_elsewhere(name: str, lines: Sequence[str], first: int, last: int) -> bool:
    """Is ``name`` spelled anywhere outside lines ``first`` to ``last`` (code,
    comment or string alike)? Nothing can reach a def or class unnamed."""
    return _spelled(name, "".join(lines[:first - 1])) or _spelled(name, "".join(lines[last:]))


def _spelled(name: str, text: str) -> bool:
    """Does ``text`` hold ``name`` as a whole word (as ``(?<!\\w)name(?!\\w)`` would
    find it)? ``str.find`` skips to each spelling: a regular expression that
    starts with a look-behind tries every position (1.5 ms for 1,000 lines)."""
    at = text.find(name)
    while at != -1:
        end = at + len(name)
        if (at == 0 or not _is_word(text[at - 1])) and (end == len(text) or not _is_word(text[end])):
            return True
        at = text.find(name, at + 1)
    return False


def _is_word(character: str) -> bool:
    return character.isalnum() or character == "_"  # what ``\w`` matches in a str pattern


def _form(statement: ast.stmt) -> str:
    """The whole statement, positions left out."""
    return ast.dump(statement, include_attributes=False)


def _binds_outside(statement: ast.stmt) -> bool:
    """Does the statement hold ``global`` or ``nonlocal``, binding names of the module?"""
    return any(isinstance(node, (ast.Global, ast.Nonlocal)) for node in ast.walk(statement))


def _first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", None)
    return decorators[0].lineno if decorators else statement.lineno


def _last_line(statement: ast.stmt) -> int:
    return statement.end_lineno or statement.lineno
