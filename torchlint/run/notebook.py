"""Jupyter notebooks (``.ipynb``): lint and fix the code cells.

A notebook runs its cells in one namespace, so names imported in one cell are
used in the next: the code cells are linted as one module, their texts joined
with a marker comment line before each, and every position is mapped back to
``(cell, line, column)``. Cells are numbered from 1 among *all* cells, as
Jupyter shows them, and reported like ruff does: ``nb.ipynb:cell 3:2:5``.

IPython syntax is not Python: at the start of a logical line, ``%magic``,
``!shell``, ``x = !cmd`` / ``x = %magic`` and ``obj?`` / ``?obj`` help lines
are masked (replaced by a unique placeholder name at the same indentation) so
libcst can parse the cell, and restored verbatim afterwards. A cell starting
with a cell magic is skipped unless its body is Python (``%%time``,
``%%timeit``, ``%%capture``, ...). Notebooks whose kernel language is not
Python are skipped.

``--fix`` rewrites only the ``source`` value of the cells that changed, in
place in the JSON text: everything else (outputs, metadata, key order,
indentation, escaping, line endings, the final newline) stays byte-identical.
Unchanged lines of a changed cell keep their original JSON encoding; new ones
are encoded like the rest of the file (raw UTF-8 or ``\\uXXXX`` escapes).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Sequence, Tuple

from torchlint.core.dependencies import content_digest
from torchlint.core.diagnostic import Diagnostic, ParseError, Unsupported
from torchlint.core.source import SourceError, SourceFile
from torchlint.run.fileio import MAX_NOTEBOOK_BYTES, CheckedTree, read_identified, write_atomically
from torchlint.run.report import FileReport, format_location, patch_path, report_internal, skip

if TYPE_CHECKING:  # pragma: no cover - the engine loads libcst, which a cached run never needs
    from torchlint.engine.linter import Engine

NOTEBOOK_SUFFIX = ".ipynb"

# Cell magics whose body is Python (the list ruff uses); other cell magics
# (%%bash, %%writefile, %%html, ...) make the whole cell something else.
PYTHON_CELL_MAGICS = frozenset({"capture", "debug", "prun", "pypy", "python", "python3", "time", "timeit"})

_BOM = "\ufeff"
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_HELP = re.compile(r"^\s*(\?{1,2}\S|[A-Za-z_*][\w.*]*\?{1,2}\s*$)")
_ASSIGNED_MAGIC = re.compile(r"^\s*[A-Za-z_]\w*(\s*,\s*[A-Za-z_]\w*)*\s*=\s*[%!]")
_NON_ASCII_ESCAPE = re.compile(r"\\u(?!00[0-7])[0-9a-fA-F]{4}")


class NotebookError(Exception):
    """A file that is not a notebook torchlint can read; the message is for the user."""


def is_notebook(path: str) -> bool:
    return path.endswith(NOTEBOOK_SUFFIX)


# --------------------------------------------------------------------------
# reading: the JSON, its code cells and where their sources are in the text
# --------------------------------------------------------------------------


@dataclass
class Cell:
    number: int  # 1-based among all cells
    text: str  # the cell's source, joined
    span: Tuple[int, int]  # where the source value is in the JSON text
    items: Optional[List[Tuple[int, int]]]  # spans of the list items; None for a string source


@dataclass
class Notebook:
    text: str  # the JSON text, BOM removed
    bom: bool
    cells: List[Cell]  # the code cells
    python: bool  # the kernel language is Python (or not stated)

    def raw(self, span: Tuple[int, int]) -> str:
        return self.text[span[0]:span[1]]


def parse_notebook(data: bytes) -> Notebook:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotebookError(f"not a notebook: not UTF-8 ({exc})") from None
    bom = text.startswith(_BOM)
    if bom:
        text = text[1:]
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not a notebook: invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:  # json recurses once per level: [[[[...]]]]
        raise NotebookError("not a notebook: the JSON is nested too deeply to read") from None
    if not isinstance(document, dict):
        raise NotebookError("not a notebook: the JSON is not an object")
    version = document.get("nbformat")
    if version is None:
        raise NotebookError('not a notebook: no "nbformat" version')
    if version != 4:
        raise NotebookError(f"unsupported notebook format nbformat={version!r} (torchlint reads nbformat 4)")
    cells = document.get("cells")
    if not isinstance(cells, list):
        raise NotebookError('not a notebook: no "cells" list')
    try:
        spans = _source_spans(text)
    except RecursionError:  # deep nesting below the cells (in outputs or metadata)
        raise NotebookError("not a notebook: the JSON is nested too deeply to read") from None
    code_cells: List[Cell] = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise NotebookError(f"not a notebook: cell {index + 1} has no cell_type")
        if cell["cell_type"] != "code":
            continue
        source = cell.get("source")
        if isinstance(source, str):
            items = None
        elif isinstance(source, list) and all(isinstance(item, str) for item in source):
            items = _element_spans(text, spans[index][0])
            source = "".join(source)
        else:
            raise NotebookError(f"not a notebook: cell {index + 1} has no source text")
        code_cells.append(Cell(index + 1, source, spans[index], items))
    return Notebook(text, bom, code_cells, _is_python(document.get("metadata")))


def _is_python(metadata: object) -> bool:
    if not isinstance(metadata, dict):
        return True
    for key, name in (("language_info", "name"), ("kernelspec", "language")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(name), str):
            return section[name].lower().startswith("python")
    return True


def _skip(text: str, i: int) -> int:
    return _WS.match(text, i).end()


def _members(text: str, i: int) -> Iterator[Tuple[str, int, int]]:
    """(key, value start, value end) of the JSON object starting at ``text[i]``."""
    i = _skip(text, i + 1)
    if text[i] == "}":
        return
    while True:
        key, i = json.decoder.scanstring(text, i + 1)
        i = _skip(text, _skip(text, i) + 1)  # past the colon
        _, end = _DECODER.raw_decode(text, i)
        yield key, i, end
        i = _skip(text, end)
        if text[i] == "}":
            return
        i = _skip(text, i + 1)  # past the comma


def _element_spans(text: str, i: int) -> List[Tuple[int, int]]:
    """Spans of the elements of the JSON array starting at ``text[i]``."""
    spans = []
    i = _skip(text, i + 1)
    if text[i] == "]":
        return spans
    while True:
        _, end = _DECODER.raw_decode(text, i)
        spans.append((i, end))
        i = _skip(text, end)
        if text[i] == "]":
            return spans
        i = _skip(text, i + 1)


def _source_spans(text: str) -> Dict[int, Tuple[int, int]]:
    """Cell index -> span of its ``source`` value (the text is valid JSON)."""
    spans: Dict[int, Tuple[int, int]] = {}
    for key, start, _ in _members(text, _skip(text, 0)):
        if key != "cells":
            continue
        spans.clear()  # a repeated key: json.loads keeps the last one
        if text[start] != "[":
            continue
        for index, (cell_start, _) in enumerate(_element_spans(text, start)):
            if text[cell_start] != "{":
                continue
            for cell_key, value_start, value_end in _members(text, cell_start):
                if cell_key == "source":
                    spans[index] = (value_start, value_end)
    return spans


# --------------------------------------------------------------------------
# the code cells as one module: masking IPython syntax, mapping positions
# --------------------------------------------------------------------------


@dataclass
class Layout:
    """The code cells joined into one Python module."""

    text: str
    token: str  # the unique word in marker and placeholder lines
    cells: List[Cell]  # the linted cells, in order (marker k introduces cells[k])
    magics: Dict[str, str] = field(default_factory=dict)  # placeholder -> original line, indentation removed
    added_newline: Dict[int, bool] = field(default_factory=dict)  # k -> the cell had no final newline

    def marker(self, k: int) -> str:
        return f"# {self.token} cell {k}"

    def placeholder(self, j: int) -> str:
        return f"{self.token}_magic_{j}"

    def starts(self, text: str) -> Optional[List[int]]:
        """The 1-based line of each cell's marker in ``text``; None if any is missing, repeated or out of order."""
        found: List[int] = []
        wanted = re.compile(rf"^# {re.escape(self.token)} cell (\d+)$")
        for number, line in enumerate(SourceFile(text).lines, start=1):
            match = wanted.match(line.rstrip("\r\n"))
            if match:
                if int(match.group(1)) != len(found):
                    return None
                found.append(number)
        return found if len(found) == len(self.cells) else None

    def locate(self, starts: Sequence[int], line: int) -> Tuple[Optional[int], int]:
        """(cell number, line in the cell) of a line of the joined text."""
        k = sum(1 for start in starts if start < line) - 1
        if k < 0:
            return None, line
        return self.cells[k].number, line - starts[k]

    def split(self, text: str) -> Optional[List[str]]:
        """Each cell's text from the joined (maybe fixed) text, IPython lines restored."""
        starts = self.starts(text)
        if starts is None:
            return None
        for placeholder in self.magics:
            if len(re.findall(rf"\b{re.escape(placeholder)}\b", text)) != 1:
                return None
        lines = SourceFile(text).lines
        bounds = [start - 1 for start in starts] + [len(lines)]
        preamble = "".join(lines[: bounds[0]])  # e.g. an import a fix added above the first marker
        cells = []
        for k in range(len(self.cells)):
            cell = "".join(lines[bounds[k] + 1: bounds[k + 1]])
            if k == 0:
                cell = preamble + cell
            cell = re.sub(rf"\b{re.escape(self.token)}_magic_\d+\b", lambda m: self.magics[m.group(0)], cell)
            if self.added_newline.get(k) and cell.endswith("\n"):
                cell = cell[:-1]
            cells.append(cell)
        return cells


def build_layout(notebook: Notebook) -> Layout:
    token = "torchlint_nb"
    every_text = "".join(cell.text for cell in notebook.cells)
    while token in every_text:
        token += "_"
    layout = Layout("", token, [])
    parts: List[str] = []
    for cell in notebook.cells:
        masked = _mask_cell(cell.text, layout)
        if masked is None:
            continue  # a cell magic whose body is not Python
        k = len(layout.cells)
        layout.cells.append(cell)
        layout.added_newline[k] = bool(masked) and not masked.endswith(("\n", "\r"))
        parts.append(layout.marker(k) + "\n")
        parts.append(masked + ("\n" if layout.added_newline[k] else ""))
    layout.text = "".join(parts)
    return layout


def _mask_cell(text: str, layout: Layout) -> Optional[str]:
    lines = SourceFile(text).lines
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        words = lines[first].lstrip()[2:].split()
        if not words or words[0] not in PYTHON_CELL_MAGICS:
            return None
    scanner = _LineScanner()
    magic_continues = False
    out = []
    for line in lines:
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        stripped = body.lstrip()
        if magic_continues or (scanner.at_statement_start() and _is_ipython(stripped)):
            placeholder = layout.placeholder(len(layout.magics))
            layout.magics[placeholder] = stripped
            out.append(body[: len(body) - len(stripped)] + placeholder + ending)
            magic_continues = body.endswith("\\")
            continue
        scanner.feed(body)
        out.append(line)
    return "".join(out)


def _is_ipython(stripped: str) -> bool:
    return (
        stripped.startswith(("%", "!"))
        or bool(_HELP.match(stripped))
        or bool(_ASSIGNED_MAGIC.match(stripped))
    )


class _LineScanner:
    """Tracks brackets, strings and backslash continuations across lines,
    to tell whether a line starts a new statement (only there is ``%`` a magic)."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: Optional[str] = None
        self.continued = False

    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.continued

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        commented = False
        while i < n:
            ch = line[i]
            if self.quote is not None:
                if ch == "\\":
                    i += 2
                    continue
                if line.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = None
                    continue
                i += 1
                continue
            if ch == "#":
                commented = True
                break
            if ch in "([{":
                self.depth += 1
            elif ch in ")]}":
                self.depth = max(0, self.depth - 1)
            elif ch in "'\"":
                self.quote = ch * 3 if line.startswith(ch * 3, i) else ch
                i += len(self.quote)
                continue
            i += 1
        escaped_newline = line.endswith("\\") and not commented
        if self.quote is not None and len(self.quote) == 1 and not escaped_newline:
            self.quote = None  # an unterminated one-line string: Python will say so
        self.continued = escaped_newline and self.quote is None


# --------------------------------------------------------------------------
# writing: new cell sources into the original JSON text
# --------------------------------------------------------------------------


def render(notebook: Notebook, new_texts: Dict[int, str]) -> str:
    """The JSON text with the sources of some cells (by number) replaced."""
    ensure_ascii = _uses_ascii_escapes(notebook.text)
    by_number = {cell.number: cell for cell in notebook.cells}
    text = notebook.text
    for number in sorted(new_texts, key=lambda n: by_number[n].span[0], reverse=True):
        cell = by_number[number]
        value = _encode_source(notebook, cell, new_texts[number], ensure_ascii)
        text = text[: cell.span[0]] + value + text[cell.span[1]:]
    return (_BOM if notebook.bom else "") + text


def _uses_ascii_escapes(text: str) -> bool:
    """Whether the writer escaped non-ASCII text (json's ensure_ascii)."""
    if any(ord(ch) > 0x7F for ch in text):
        return False
    return bool(_NON_ASCII_ESCAPE.search(text))  # otherwise nbformat's default: raw UTF-8


def _encode_source(notebook: Notebook, cell: Cell, text: str, ensure_ascii: bool) -> str:
    if cell.items is None:
        return json.dumps(text, ensure_ascii=ensure_ascii)
    old_raw = [notebook.raw(span) for span in cell.items]
    known = {json.loads(raw): raw for raw in old_raw}  # unchanged lines keep their exact encoding
    lines = _split_like(text, [json.loads(raw) for raw in old_raw])
    if not lines:
        return "[]"
    opening, separator, closing = _list_layout(notebook, cell)
    encoded = [known.get(line) or json.dumps(line, ensure_ascii=ensure_ascii) for line in lines]
    return "[" + opening + separator.join(encoded) + closing + "]"


def _split_like(text: str, old_items: List[str]) -> List[str]:
    """Split ``text`` into list items the way the notebook's writer did."""
    by_newline = re.findall(r"[^\n]*\n|[^\n]+$", text)
    if old_items and len(old_items) > 1 and any(not item.endswith("\n") for item in old_items[:-1]):
        return text.splitlines(keepends=True)  # the writer used str.splitlines
    return by_newline


def _list_layout(notebook: Notebook, cell: Cell) -> Tuple[str, str, str]:
    """(after '[', between items incl. the comma, before ']') as the file writes them."""
    for candidate in [cell] + [c for c in notebook.cells if c is not cell]:
        items = candidate.items
        if not items:
            continue
        opening = notebook.text[candidate.span[0] + 1: items[0][0]]
        closing = notebook.text[items[-1][1]: candidate.span[1] - 1]
        if len(items) > 1:
            separator = notebook.text[items[0][1]: items[1][0]]
        else:
            separator = "," + (opening or " ")
        return opening, separator, closing
    # No list with items anywhere: derive from the indentation of the "source" key.
    text = notebook.text
    line_start = text.rfind("\n", 0, cell.span[0]) + 1
    indent = re.match(r"[ \t]*", text[line_start:]).group(0)
    if line_start == 0:
        return "", ", ", ""
    unit = re.match(r"\{\r?\n([ \t]*)", text[_skip(text, 0):])
    step = unit.group(1) if unit else " "
    newline = "\r\n" if "\r\n" in text else "\n"
    return newline + indent + step, "," + newline + indent + step, newline + indent


# --------------------------------------------------------------------------
# one notebook end to end
# --------------------------------------------------------------------------


def process_notebook(path: str, engine: Engine, args: argparse.Namespace, previews: bool = False,
                     data: Optional[bytes] = None) -> FileReport:
    """Check or fix the notebook ``path``; with ``previews`` (check only),
    also each cell's text and each fix as edits within its cell. ``data``:
    its bytes, already read (stdin); then fixes are never written: the fixed
    JSON text is left in ``report.fixed_source``."""
    report = FileReport(path)
    data_given = data is not None
    identity = None
    if data is None:
        try:
            data, identity = read_identified(path, MAX_NOTEBOOK_BYTES)
        except SourceError as exc:
            report.errors.append(f"{path}: {exc}")
            return report
    report.content_digest = content_digest(data)
    try:
        notebook = parse_notebook(data)
    except NotebookError as exc:
        report.errors.append(f"{path}: {exc}")
        return report
    if not notebook.python:
        return report
    layout = build_layout(notebook)
    tree = CheckedTree(getattr(args, "paths", None) or ["."]) if args.fix and not args.diff and not data_given else None
    outside = tree.outside_reason(path) if tree is not None else None
    if outside is not None:  # a symlink out of the tree: checked, never written
        report.warnings.append(f"{path}: {outside}")
    try:
        if (args.fix or args.diff) and outside is None:
            _fix(path, engine, args, notebook, layout, report, write=not data_given, identity=identity, tree=tree)
        else:
            checked = engine.check(_source(layout.text))
            report.diagnostics = _map(layout, layout.text, checked.diagnostics)
            report_internal(report, checked.internal_errors)
            if previews:
                _add_cell_previews(report, layout, checked)
    except Unsupported as exc:
        cell, line = layout.locate(layout.starts(layout.text) or [], exc.line)
        skip(report, format_location(path, line, exc.column, cell), exc.message)
    except ParseError as exc:
        report.diagnostics = []
        cell, line = layout.locate(layout.starts(layout.text) or [], exc.line)
        report.errors.append(f"{format_location(path, line, exc.column, cell)}: cannot parse: {exc.message}")
        report.parse_error_at = (cell, line, exc.column)
    except SourceError as exc:
        report.errors.append(f"{path}: {exc}")
    return report


def _fix(path: str, engine: Engine, args: argparse.Namespace, notebook: Notebook, layout: Layout, report: FileReport,
         write: bool = True, identity: Optional[Tuple[int, int]] = None, tree: Optional[CheckedTree] = None) -> None:
    result = engine.fix(_source(layout.text), unsafe=args.unsafe_fixes)
    report_internal(report, result.internal_errors)
    new_cells = layout.split(result.source) if result.source != layout.text else None
    if result.source != layout.text and new_cells is None:
        # A fix moved code across a cell boundary (or lost one): keep the notebook as it is.
        report.warnings.append(f"{path}: fixes not applied: they would move code between cells")
        checked = engine.check(_source(layout.text), syntax_checked=True)
        report.diagnostics = _map(layout, layout.text, checked.diagnostics)
        return
    report.diagnostics = _map(layout, result.source, result.diagnostics)
    report.fixed = sum(result.fixed.values())
    starts = layout.starts(result.source) or []
    for diagnostic, reason in result.discarded:
        cell, line = layout.locate(starts, diagnostic.line)
        report.warnings.append(
            f"{format_location(path, line, diagnostic.column, cell)}: {diagnostic.code} fix discarded: {reason}"
        )
    if not result.converged:
        report.warnings.append(f"{path}: fixes did not settle after repeated rounds; some were left out")
    if new_cells is None:
        return
    changed = {cell.number: new for cell, new in zip(layout.cells, new_cells) if new != cell.text}
    if not changed:
        return
    if args.diff:
        report.diff = notebook_diff(path, layout.cells, changed)
        return
    if not write:
        report.fixed_source = render(notebook, changed)
        return
    try:
        read = ((_BOM if notebook.bom else "") + notebook.text).encode("utf-8")  # the file's bytes, as read
        write_atomically(path, render(notebook, changed).encode("utf-8"), expected=read, identity=identity,
                         tree=tree)
    except SourceError as exc:
        report.errors.append(f"{path}: {exc}")
        report.fixed = 0
        report.warnings.clear()
        checked = engine.check(_source(layout.text), syntax_checked=True)
        report.diagnostics = _map(layout, layout.text, checked.diagnostics)


def _source(text: str) -> SourceFile:
    """The joined code cells, as checked: IPython runs ``await`` at the top level."""
    return SourceFile(text, top_level_await=True)


def _add_cell_previews(report: FileReport, layout: Layout, checked) -> None:
    """Each cell's text, and each finding's fix as edits within its cell
    (None when the fix reaches outside the cell, e.g. an import it adds)."""
    from torchlint.engine.textedits import FixPreviewer, TextEdit

    starts = layout.starts(layout.text)
    texts = layout.split(layout.text)
    if starts is None or texts is None or checked.module is None:
        return
    report.cell_sources = {cell.number: text for cell, text in zip(layout.cells, texts)}
    bounds = {cell.number: (start, end) for cell, start, end in zip(layout.cells, starts, [*starts[1:], 1 << 30])}
    previewer = FixPreviewer(checked.module, checked.locator, checked.imported_elsewhere)
    previews = []
    for original, d in zip(checked.diagnostics, report.diagnostics):
        edits = previewer.preview(original.fix) if original.fix is not None and d.cell in bounds else None
        if edits is not None:
            start, end = bounds[d.cell]
            if all(start < e.start[0] and e.end[0] < end for e in edits):
                edits = [TextEdit((e.start[0] - start, e.start[1]), (e.end[0] - start, e.end[1]), e.content)
                         for e in edits]
            else:
                edits = None
        previews.append(edits)
    report.previews = previews


def _map(layout: Layout, text: str, diagnostics: Sequence[Diagnostic]) -> List[Diagnostic]:
    starts = layout.starts(text) or []
    mapped = []
    for d in diagnostics:
        cell, line = layout.locate(starts, d.line)
        end_line = None if d.end_line is None else d.end_line - d.line + line  # a node never spans cells
        mapped.append(dataclasses.replace(d, line=line, cell=cell, end_line=end_line))
    return mapped


def notebook_diff(path: str, cells: Sequence[Cell], changed: Dict[int, str]) -> str:
    """A unified diff per changed cell, headed ``a/nb.ipynb:cell 3``."""
    text = ""
    for cell in cells:
        if cell.number not in changed:
            continue
        lines = difflib.unified_diff(
            SourceFile(cell.text).lines, SourceFile(changed[cell.number]).lines,
            fromfile=f"a/{patch_path(path)}:cell {cell.number}", tofile=f"b/{patch_path(path)}:cell {cell.number}",
        )
        for line in lines:
            text += line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
    return text
