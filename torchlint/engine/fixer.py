"""Apply fixes to a parsed module, keeping only those that leave valid code.

Edits are keyed on nodes of the original tree and run bottom-up, each on the
node as already updated by edits below it, so nested fixes compose. Two fixes
claiming the same node conflict: the later one waits for the next round of
the engine's fix loop. The debris the applied fixes leave (imports they
orphaned, self-assignments they made) is removed in the same step
(``tidy.py``). The result is re-parsed by libcst and compiled by Python's own
compiler; a fix that breaks it is discarded and reported, never written.
"""

from __future__ import annotations

import ast
import difflib
import warnings
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

import libcst as cst

from torchlint.core.diagnostic import EditFn, Fix
from torchlint.core.source import SourceFile
from torchlint.engine.tidy import ImportedElsewhere, tidy


@dataclass
class FixRound:
    code: str
    applied: List[Fix] = field(default_factory=list)
    deferred: List[Fix] = field(default_factory=list)
    discarded: List[Tuple[Fix, str]] = field(default_factory=list)


class _EditTransformer(cst.CSTTransformer):
    def __init__(self, edits: Dict[cst.CSTNode, EditFn]) -> None:
        super().__init__()
        self._edits = edits

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel]:
        edit = self._edits.get(original_node)
        if edit is None:
            return updated_node
        return edit(updated_node)


def apply_fixes(module: cst.Module, fixes: Sequence[Fix],
                imported_elsewhere: Optional[ImportedElsewhere] = None) -> FixRound:
    """Apply as many of ``fixes`` as can go together into ``module``;
    ``imported_elsewhere`` says which names other modules take from it (``tidy``)."""
    chosen: List[Fix] = []
    deferred: List[Fix] = []
    claimed: Dict[cst.CSTNode, Fix] = {}
    for fix in fixes:
        if any(edit.node in claimed for edit in fix.edits):
            deferred.append(fix)
            continue
        for edit in fix.edits:
            claimed[edit.node] = fix
        chosen.append(fix)

    code, error = _render(module, chosen, imported_elsewhere)
    if error is None:
        return FixRound(code, applied=chosen, deferred=deferred)

    # Something broke the code: find out which fixes.
    result = FixRound(module.code, deferred=deferred)
    original_error = _compile_error(module.code)
    if original_error is not None:
        # The compiler refuses the file as it is: no fix can be shown to keep it valid.
        result.discarded.extend((fix, f"the file itself does not compile ({original_error})") for fix in chosen)
        return result
    kept: List[Fix] = []
    _sort_out(module, chosen, kept, result.discarded, imported_elsewhere)
    if kept:
        code, error = _render(module, kept, imported_elsewhere)
        if error is None:
            result.code = code
            result.applied = kept
        else:
            result.discarded.extend((fix, error) for fix in kept)
    return result


def _sort_out(module: cst.Module, fixes: Sequence[Fix], kept: List[Fix],
              discarded: List[Tuple[Fix, str]], imported_elsewhere: Optional[ImportedElsewhere]) -> None:
    """Split ``fixes`` (which break the code together) into those that work
    and those that break it on their own, by halves: a few broken fixes
    among thousands cost a few dozen renderings of the module, not one per
    fix (each rendering is as long as the file)."""
    middle = len(fixes) // 2
    for half in (fixes[:middle], fixes[middle:]):
        if not half:
            continue
        _, error = _render(module, half, imported_elsewhere)
        if error is None:
            kept.extend(half)
        elif len(half) == 1:
            discarded.append((half[0], error))
        else:
            _sort_out(module, half, kept, discarded, imported_elsewhere)


def _render(module: cst.Module, fixes: Sequence[Fix],
            imported_elsewhere: Optional[ImportedElsewhere] = None) -> Tuple[str, Union[str, None]]:
    edits = {edit.node: edit.apply for fix in fixes for edit in fix.edits}
    try:
        updated = module.visit(_EditTransformer(edits))
        imports = sorted({name for fix in fixes for name in fix.required_imports})
        if imports:
            updated = _add_imports(updated, imports)
        # imports the fixes orphaned, self-assignments they made
        updated = tidy(module, updated, imported_elsewhere=imported_elsewhere)
        code = updated.code
    except Exception as exc:  # a fix that cannot be built is a discarded fix
        return module.code, f"the fix could not be built ({type(exc).__name__}: {exc})"
    error = validate(code)
    return code, error


def validate(code: str) -> Union[str, None]:
    """None if ``code`` is valid Python for both libcst and the compiler.

    Compiled to bytecode, not only parsed: the compiler's later passes
    reject code the parser accepts (a name used before its ``global``
    declaration, ``return`` outside a function...). Nothing is run.
    """
    error = _compile_error(code)
    if error is not None:
        return f"the fix would produce invalid code ({error})"
    try:
        cst.parse_module(code)
    except Exception as exc:
        return f"the fix would produce code libcst cannot parse ({exc})"
    return None


def _compile_error(code: str) -> Optional[str]:
    """Why Python's compiler refuses ``code`` (compiled only, never run); None if it accepts it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the user's own SyntaxWarnings are not the fix's business
            # Top-level ``await`` is valid in notebooks, the only place it is found.
            compile(code, "<fixed>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return str(exc)
    except (RecursionError, MemoryError) as exc:
        return f"too complex for the compiler: {type(exc).__name__}"
    return None


def _add_imports(module: cst.Module, names: Sequence[str]) -> cst.Module:
    """Insert ``import NAME`` after the docstring and ``__future__`` imports."""
    body = list(module.body)
    position = import_position(body)
    new_lines = [
        cst.SimpleStatementLine(body=[cst.Import(names=[cst.ImportAlias(name=cst.parse_expression(name))])])
        for name in names
    ]
    return module.with_changes(body=[*body[:position], *new_lines, *body[position:]])


def import_position(body: Sequence[cst.CSTNode]) -> int:
    """Where in ``body`` an added import goes: after the docstring and ``__future__`` imports."""
    position = 0
    for index, statement in enumerate(body):
        if _is_docstring(statement) and index == 0 or _is_future_import(statement):
            position = index + 1
            continue
        break
    return position


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_future_import(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and any(
            isinstance(small, cst.ImportFrom)
            and isinstance(small.module, cst.Name)
            and small.module.value == "__future__"
            for small in statement.body
        )
    )


def keep_lost_text(original: SourceFile, round_trip: SourceFile, fixed: SourceFile) -> Optional[str]:
    """``fixed`` with the characters libcst lost from ``original`` put back.

    libcst does not render everything it parses: form feeds that start the
    line of a module-level statement, and a final lone ``\\r``, are gone from
    ``round_trip`` (its rendering of ``original``), and so from ``fixed``,
    rendered from the same tree. Lines the fixes left alone are taken from
    ``original``; rewritten lines get their form feeds and line ending back.
    None when ``original`` and ``round_trip`` do not line up that way.
    """
    if round_trip.text == original.text:
        return fixed.text
    o_lines, r_lines, f_lines = original.lines, round_trip.lines, fixed.lines
    if len(o_lines) != len(r_lines) or any(_core(o) != _core(r) for o, r in zip(o_lines, r_lines)):
        return None
    out: List[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, r_lines, f_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            out.extend(o_lines[i1:i2])
        elif i2 - i1 == j2 - j1:
            out.extend(_repair(o, r, f) for o, r, f in zip(o_lines[i1:i2], r_lines[i1:i2], f_lines[j1:j2]))
        else:
            new = list(f_lines[j1:j2])
            if new and i1 < i2:
                new[0] = _repair(o_lines[i1], r_lines[i1], new[0], ending=False)
                new[-1] = _repair(o_lines[i2 - 1], r_lines[i2 - 1], new[-1], prefix=False)
            out.extend(new)
    return "".join(out)


def _core(line: str) -> str:
    return line.lstrip("\x0c").rstrip("\r\n")


def _repair(o: str, r: str, f: str, prefix: bool = True, ending: bool = True) -> str:
    """Line ``f`` (rewritten from ``r``) with the form feeds and ending ``o`` had and ``r`` lost."""
    o_feeds, r_feeds = len(o) - len(o.lstrip("\x0c")), len(r) - len(r.lstrip("\x0c"))
    if prefix and o_feeds > r_feeds and f.startswith(r[:r_feeds]) and not f.startswith(o[:o_feeds]):
        f = o[:o_feeds] + f[r_feeds:]
    o_end, r_end, f_end = (line[len(line.rstrip("\r\n")):] for line in (o, r, f))
    if ending and o_end != r_end and f_end == r_end:
        f = f[:len(f) - len(f_end)] + o_end
    return f
