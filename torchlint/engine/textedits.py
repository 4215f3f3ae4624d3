"""A fix as text edits: what ``--output-format json``, ``sarif`` and ``full`` show.

Fixes are libcst node rewrites; to show one without applying it, the module
is rendered with that fix alone and compared with the original text. The
differences become minimal ``TextEdit``s (replace this range with that text)
with 1-based rows and columns counted in characters, like the diagnostics.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Set, Tuple

from torchlint.core.diagnostic import Fix
from torchlint.core.source import SourceFile

if TYPE_CHECKING:  # pragma: no cover
    import libcst as cst

    from torchlint.core.diagnostic import Diagnostic
    from torchlint.engine.positions import Locator
    from torchlint.engine.tidy import ImportedElsewhere
    from torchlint.engine.tidy import Counts
    from torchlint.rules.rule import SyntaxRepair


@dataclass(frozen=True)
class TextEdit:
    """Replace the text from ``start`` up to (not including) ``end`` with ``content``.

    Positions are (row, column), both 1-based, columns in characters.
    """

    start: Tuple[int, int]
    end: Tuple[int, int]
    content: str


def preview_fix(module: cst.Module, fix: Fix,
                imported_elsewhere: Optional["ImportedElsewhere"] = None) -> Optional[List[TextEdit]]:
    """The edits ``fix`` alone makes to ``module``; None if it cannot be applied.
    ``imported_elsewhere``: which names other modules take from it (``tidy``)."""
    from torchlint.engine.fixer import apply_fixes  # libcst: only when there are fixes to show

    result = apply_fixes(module, [fix], imported_elsewhere)
    if not result.applied:
        return None
    return edits_between(SourceFile(module.code), SourceFile(result.code))


def preview_on_repaired(repair: "SyntaxRepair", diagnostic: "Diagnostic",
                        edits: Optional[List[TextEdit]]) -> Optional[List[TextEdit]]:
    """The preview of ``diagnostic``'s fix in a file read through a syntax
    repair (TL115), in the columns of the file as written: a repaired site's
    fix is the text it replaces; another fix's ``edits``, made on the repaired
    text, are moved back."""
    for site in repair.sites:
        if (site.line, site.column) == (diagnostic.line, diagnostic.column) and diagnostic.fix is not None \
                and not diagnostic.fix.edits:
            start = (site.line, site.column + 1)
            return [TextEdit(start, (site.line, start[1] + len(site.old)), site.new)]
    if not edits:
        return edits
    return [TextEdit((e.start[0], repair.original_column(e.start[0], e.start[1] - 1) + 1),
                     (e.end[0], repair.original_column(e.end[0], e.end[1] - 1) + 1), e.content)
            for e in edits]


class FixPreviewer:
    """``preview_fix`` for the fixes of one module, without rendering, diffing
    and re-parsing the whole module for each one.

    A fix is applied to the outermost nodes it edits only; each one's text
    before and after is diffed and shifted to where the node starts (the
    ``locator`` of the check knows, generating only the top-level statements
    involved). A rewritten expression must still parse. A fix that drops a
    name is diffed on its whole top-level statements instead, tidied there
    as the fixer would (``_statement_edits``). What that cannot place (an
    edit that removes or splits a statement, a node whose text starts before
    its position, an import added anywhere but before a plain statement, an
    import the fix orphans) takes ``preview_fix``'s whole-module route.
    """

    def __init__(self, module: Optional[cst.Module], locator: Optional[Locator],
                 imported_elsewhere: Optional["ImportedElsewhere"] = None) -> None:
        self.module = module
        self.locator = locator
        self.imported_elsewhere = imported_elsewhere
        self._checked: Optional[SourceFile] = None
        self._facts: Optional[_ModuleFacts] = None
        self._unit_cache: Dict[Tuple[int, Optional[int]], _Unit] = {}
        self._statement_rows: Optional[List[int]] = None

    def preview(self, fix: Fix) -> Optional[List[TextEdit]]:
        if self.module is None:
            return None  # a file repaired at the token level (TL115): no tree to preview on
        if self.locator is None:
            return preview_fix(self.module, fix, self.imported_elsewhere)
        try:
            edits = self._local_edits(fix)
        except _Unplaceable:
            return preview_fix(self.module, fix, self.imported_elsewhere)
        except Exception:  # a fix that cannot be built is not offered (as in apply_fixes)
            return None
        return edits

    def _local_edits(self, fix: Fix) -> Optional[List[TextEdit]]:
        import libcst as cst

        from torchlint.engine.fixer import _EditTransformer
        from torchlint.engine.tidy import name_uses

        assert self.locator is not None
        places = {}
        for edit in fix.edits:
            place = self.locator.range(edit.node)
            if place is None or isinstance(edit.node, (cst.Module, cst.BaseStatement, cst.BaseSmallStatement)):
                raise _Unplaceable
            places[edit.node] = place
        outermost = [node for node, place in places.items()
                     if not any(other is not node and _inside(place, around) for other, around in places.items())]
        transformer = _EditTransformer({edit.node: edit.apply for edit in fix.edits})
        edits: List[TextEdit] = []
        uses: Counter = Counter()  # how the fix changes the name uses (``tidy.name_uses``)
        self_assigning = False
        for node in outermost:
            updated = node.visit(transformer)
            if not isinstance(updated, cst.CSTNode):
                raise _Unplaceable
            before, after = self.module.code_for_node(node), self.module.code_for_node(updated)
            if isinstance(updated, cst.BaseExpression) and not _parses_as_expression(after):
                return None  # as apply_fixes: a fix that breaks the code is not offered
            uses.update(name_uses(updated))
            uses.subtract(name_uses(node))
            self_assigning = self_assigning or _may_assign_itself(node, updated)
            (line, column), _ = places[node]
            if not self._text_starts_with(before, line, column):
                raise _Unplaceable  # the node's text does not start where its position does
            for edit in edits_between(SourceFile(before), SourceFile(after)):
                edits.append(TextEdit(_shift(edit.start, line, column), _shift(edit.end, line, column), edit.content))
        if self_assigning or self._orphans(uses, fix.required_imports):
            # The fix may make a self-assignment (``x = Variable(x)`` -> ``x = x``)
            # or leave an import unused, which the fixer's tidy step removes:
            # shown on the statements the fix changes (or the whole module).
            edits = self._statement_edits(outermost, transformer, fix.required_imports)
        if fix.required_imports:
            edits.append(self._import_edit(fix))
        return sorted(edits, key=lambda e: e.start)

    def _statement_edits(self, nodes: List["cst.CSTNode"], transformer: "cst.CSTTransformer",
                         required_imports: Sequence[str]) -> List[TextEdit]:
        """The edits of a fix (on ``nodes``) that drops a name, as ``preview_fix``
        makes them but on the statements holding ``nodes`` only (``_units``): the
        tidy step's work there (self-assignments the fix made) is in them. A fix
        that orphans an import, or whose statement goes, is ``_Unplaceable``:
        only the whole module shows that. The module's name uses, imports and
        self-assignments are counted once for all fixes, and each statement's
        once for all fixes in it, so previewing every fix of a file costs
        about one rendering of it, not one per finding."""
        import libcst as cst

        from torchlint.engine.tidy import name_uses, tidy_statement

        tops = self._module_facts()
        changes = []
        delta: Counter = Counter()
        for unit in self._units(nodes):
            updated = unit.statement.visit(transformer)
            if not isinstance(updated, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                raise _Unplaceable
            delta.update(name_uses(updated))
            delta.subtract(unit.uses)
            changes.append((unit, updated))
        if self._orphans(delta, required_imports):
            raise _Unplaceable  # an import the fix orphans: removed where it is, in the whole module
        edits: List[TextEdit] = []
        for unit, updated in changes:
            tidied = tidy_statement(updated, tops.counts.self_assignments | tops.counts.self_pairs)
            if tidied is None:
                raise _Unplaceable
            after = self._render(tidied, unit.indent)
            if unit.ends_file:
                after = _without_line_break(after)
            for edit in edits_between(SourceFile(unit.code), SourceFile(after)):
                edits.append(TextEdit(_shift(edit.start, unit.row, 0), _shift(edit.end, unit.row, 0), edit.content))
        return edits

    def _orphans(self, delta: Counter, required_imports: Sequence[str]) -> bool:
        """Would the change ``delta`` in the name uses leave an import unused?"""
        dropped = [name for name, count in delta.items() if count < 0]
        if not dropped:
            return False
        module = self._module_facts().counts
        imported = module.imported | {name.split(".")[0] for name in required_imports}
        return any(module.uses[name] + delta[name] <= 0 < module.uses[name] and name in imported for name in dropped)

    def _units(self, nodes: List["cst.CSTNode"]) -> List["_Unit"]:
        """The statements to preview ``nodes``' edits on: each node's method,
        when the nodes of its top-level class are all in that method (a large
        class holds most of a file, and a file's fixes are spread over its
        methods); else its top-level statement."""
        assert self.locator is not None
        tops = self._module_facts()
        by_top: Dict[int, Set[Optional[int]]] = {}
        for node in nodes:
            top = (self.locator.top_of or {}).get(node)
            index = tops.index.get(id(top)) if top is not None else None
            if index is None:
                raise _Unplaceable
            method = (self.locator.method_of or {}).get(node)
            by_top.setdefault(index, set()).add(id(method) if method is not None else None)
        units = []
        for index, methods in sorted(by_top.items()):
            method = next(iter(methods)) if len(methods) == 1 else None
            key = (index, method)
            if key not in self._unit_cache:
                self._unit_cache[key] = self._unit(index, method)
            units.append(self._unit_cache[key])
        return units

    def _unit(self, index: int, method_id: Optional[int]) -> "_Unit":
        """Top-level statement ``index`` (or its member whose id is ``method_id``)
        with its code, the row it starts on and its name uses."""
        import libcst as cst

        from torchlint.engine.tidy import name_uses

        assert self.module is not None
        statement = self.module.body[index]
        if method_id is not None and isinstance(statement, cst.ClassDef) and isinstance(
                statement.body, cst.IndentedBlock):
            method = next((m for m in statement.body.body if id(m) == method_id), None)
            if method is not None:
                unit = self._member_unit(statement, method)
                if unit is not None:
                    return unit
        code = self.module.code_for_node(statement)
        ends_file = self._ends_file(code, self._rows()[index])
        if ends_file:
            code = _without_line_break(code)
        row = self._statement_row(index, code)
        return _Unit(statement, "", code, row, ends_file, name_uses(statement))

    def _member_unit(self, classdef: "cst.ClassDef", method: "cst.CSTNode") -> Optional["_Unit"]:
        """``method`` of the top-level ``classdef``, rendered at the class body's
        indentation, placed where the locator places it; None when its text
        is not the source's there."""
        from torchlint.engine.positions import _generate
        from torchlint.engine.tidy import name_uses

        assert self.module is not None and self.locator is not None
        place = self.locator.range(method)
        if place is None:
            return None
        indent = classdef.body.indent if classdef.body.indent is not None else self.module.default_indent
        ranges, code = _generate(method, self.module, (indent,))
        row = place[0][0] - (ranges[method].start.line - 1)  # its leading comments and decorators above
        if row < 1:
            return None
        ends_file = self._ends_file(code, row)
        if ends_file:
            code = _without_line_break(code)
        if not self._text_starts_with(code, row, 0):
            return None
        return _Unit(method, indent, code, row, ends_file, name_uses(method))

    def _ends_file(self, code: str, row: int) -> bool:
        """Does ``code``, at ``row``, end the file but for the line break it ends
        with (a file without a final line break: the module's rendering leaves
        that out, a statement's own keeps it)?"""
        starts, text = self._source().line_starts, self._source().text
        if row > len(starts) - 1:
            return False
        trimmed = _without_line_break(code)
        return trimmed != code and len(text) == starts[row - 1] + len(trimmed) and text.endswith(trimmed)

    def _render(self, node: "cst.CSTNode", indent: str) -> str:
        """``node``'s code as the module renders it, at ``indent``."""
        from libcst._nodes.internal import CodegenState

        assert self.module is not None
        if not indent:
            return self.module.code_for_node(node)
        state = CodegenState(default_indent=self.module.default_indent, default_newline=self.module.default_newline)
        state.increase_indent(indent)
        node._codegen(state)
        return "".join(state.tokens)

    def _statement_row(self, index: int, text: str) -> int:
        """The row where top-level statement ``index``, whose code is ``text``,
        starts; checked against the source and the locator (the same statement
        text may be repeated elsewhere in the file)."""
        import libcst as cst

        assert self.module is not None and self.locator is not None
        statement = self.module.body[index]
        row = self._rows()[index]
        place = self.locator.range(statement)
        if place is None or not self._text_starts_with(text, row, 0):
            raise _Unplaceable  # the statement's text is not where the module's rendering puts it
        own_row = place[0][0]  # after its leading comments (for a def: maybe after its decorators)
        exact = isinstance(statement, cst.SimpleStatementLine)
        if (exact and own_row != row + len(statement.leading_lines)) or \
                not row <= own_row < row + max(1, len(_LINE_BREAK.findall(text))):
            raise _Unplaceable
        return row

    def _module_facts(self) -> "_ModuleFacts":
        """What the tidy step counts in the module before any fix, counted once."""
        if self._facts is None:
            from torchlint.engine.tidy import counts

            module = self.module
            assert module is not None
            self._facts = _ModuleFacts(index={id(statement): i for i, statement in enumerate(module.body)},
                                       counts=counts(module))
        return self._facts

    def _rows(self) -> List[int]:
        """The row each top-level statement's text (leading comments included) starts on."""
        if self._statement_rows is None:
            module = self.module
            assert module is not None
            rows, row = [], 1 + len(module.header)
            for statement in module.body:
                rows.append(row)
                row += len(_LINE_BREAK.findall(module.code_for_node(statement)))
            self._statement_rows = rows
        return self._statement_rows

    def _source(self) -> SourceFile:
        """The checked source."""
        if self._checked is None:
            assert self.locator is not None and self.module is not None
            self._checked = self.locator.source if self.locator.source is not None else SourceFile(self.module.code)
        return self._checked

    def _text_starts_with(self, text: str, line: int, column: int) -> bool:
        """Does the checked source hold ``text`` at ``line`` (1-based), ``column`` (0-based)?"""
        starts = self._source().line_starts
        if line > len(starts) - 1:
            return False
        return self._source().text.startswith(text, starts[line - 1] + column)

    def _import_edit(self, fix: Fix) -> TextEdit:
        """``import NAME`` lines where ``apply_fixes`` puts them: before the
        statement after the docstring and ``__future__`` imports (its leading
        comments included)."""
        import libcst as cst

        from torchlint.engine.fixer import import_position

        assert self.locator is not None
        body = self.module.body
        position = import_position(body)
        if position >= len(body) or not isinstance(body[position], cst.SimpleStatementLine):
            raise _Unplaceable
        statement = body[position]
        place = self.locator.range(statement)
        if place is None:
            raise _Unplaceable
        row = place[0][0] - len(statement.leading_lines)
        newline = self.module.default_newline
        text = "".join(f"import {name}{newline}" for name in sorted(set(fix.required_imports)))
        return TextEdit((row, 1), (row, 1), text)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class _ModuleFacts:
    index: Dict[int, int]  # id of a top-level statement -> its place in the body
    counts: "Counts"  # ``tidy.counts`` of the module


@dataclass(frozen=True)
class _Unit:
    """A statement fixes are previewed on, as the source holds it."""
    statement: "cst.CSTNode"
    indent: str  # the indentation it is rendered at (a class's member: the class body's)
    code: str  # its code, as the source holds it
    row: int  # the row its code starts on
    ends_file: bool  # the file ends with it, without a final line break
    uses: Counter  # ``tidy.name_uses`` of it


class _Unplaceable(Exception):
    """A fix the local preview cannot place: use the whole-module route."""


def _without_line_break(text: str) -> str:
    match = _LINE_BREAK.search(text, len(text) - 2)
    return text[:match.start()] if match is not None and match.end() == len(text) else text


def _may_assign_itself(node: "cst.CSTNode", updated: "cst.CSTNode") -> bool:
    """Could ``updated``, what a fix makes of ``node``, be an assignment's value
    equal to its target: a name or a tuple or list of names (``x = Variable(x)``
    -> ``x = x``), or a dotted name unwrapped from a larger expression
    (``self.x = Variable(self.x)`` -> ``self.x = self.x``; a rename such as
    ``F.sigmoid`` -> ``torch.sigmoid`` is neither)?"""
    import libcst as cst

    def names(expr: "cst.CSTNode", dotted: bool) -> bool:
        def one(item: "cst.CSTNode") -> bool:
            while dotted and isinstance(item, cst.Attribute):
                item = item.value
            return isinstance(item, cst.Name)

        if one(expr):
            return True
        return isinstance(expr, (cst.Tuple, cst.List)) and all(
            isinstance(element, cst.Element) and one(element.value) for element in expr.elements)

    return names(updated, dotted=False) or (names(updated, dotted=True) and not names(node, dotted=True))


def _inside(inner: Tuple[Tuple[int, int], Tuple[int, int]], outer: Tuple[Tuple[int, int], Tuple[int, int]]) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1]


def _shift(position: Tuple[int, int], line: int, column: int) -> Tuple[int, int]:
    """A 1-based (row, column) in a node's text, made absolute: the node starts at ``line``, 0-based ``column``."""
    row, col = position
    return (line, col + column) if row == 1 else (row + line - 1, col)


def _parses_as_expression(code: str) -> bool:
    import ast

    try:
        ast.parse(f"(\n{code}\n)", mode="eval")
    except (SyntaxError, ValueError):
        return False
    return True


def edits_between(before: SourceFile, after: SourceFile) -> List[TextEdit]:
    """Minimal edits turning ``before`` into ``after`` (line hunks, trimmed to the characters that differ)."""
    old_lines, new_lines = before.lines, after.lines
    old_offsets = before.line_starts
    edits: List[TextEdit] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        old = "".join(old_lines[i1:i2])
        new = "".join(new_lines[j1:j2])
        prefix = _common_prefix(old, new)
        while prefix and _splits_word(old, new, prefix):
            prefix -= 1
        suffix = _common_prefix(old[prefix:][::-1], new[prefix:][::-1])
        while suffix and _splits_word(old, new, len(old) - suffix, len(new) - suffix):
            suffix -= 1
        start = old_offsets[i1] + prefix
        end = old_offsets[i1] + len(old) - suffix
        edits.append(TextEdit(_position(before, start), _position(before, end), new[prefix:len(new) - suffix]))
    return edits


def apply_edits(source: SourceFile, edits: List[TextEdit]) -> str:
    """``source`` with ``edits`` (non-overlapping) applied."""

    def offset(position: Tuple[int, int]) -> int:
        row, column = position
        return source.offset(row, column - 1)

    result = source.text
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        result = result[:offset(edit.start)] + edit.content + result[offset(edit.end):]
    return result


def _common_prefix(a: str, b: str) -> int:
    length = min(len(a), len(b))
    for index in range(length):
        if a[index] != b[index]:
            return index
    return length


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _splits_word(old: str, new: str, at_old: int, at_new: int = -1) -> bool:
    """Would cutting at these offsets split an identifier or a CRLF in two (in either text)?"""
    at_new = at_old if at_new < 0 else at_new

    def splits(text: str, at: int) -> bool:
        if not 0 < at < len(text):
            return False
        before, after = text[at - 1], text[at]
        return (_is_word(before) and _is_word(after)) or (before == "\r" and after == "\n")

    return splits(old, at_old) or splits(new, at_new)


def _position(text: SourceFile, offset: int) -> Tuple[int, int]:
    """1-based (row, column) of character ``offset``, with Python's line breaks.

    (\r\n is never split between two offsets: edits never cut a line break in two.)
    """
    row, column = text.position(offset)
    return row, column + 1
