"""Checking or fixing one file end to end: read, lint or fix, write.

Everything that can go wrong with one file ends up in its ``FileReport``;
nothing here prints, so the front end decides how to report.
"""

from __future__ import annotations

import argparse
import difflib
from collections import Counter
from typing import TYPE_CHECKING, Optional

from torchlint.core.dependencies import content_digest
from torchlint.core.diagnostic import ParseError, Unsupported
from torchlint.core.source import SourceError, SourceFile
from torchlint.engine.textedits import FixPreviewer, preview_on_repaired
from torchlint.run.fileio import CheckedTree, encode, read_source, write_atomically
from torchlint.run.notebook import process_notebook
from torchlint.run.report import FileReport, patch_path, report_internal, skip

if TYPE_CHECKING:  # pragma: no cover
    from torchlint.engine.linter import CheckResult, Engine


def process_file(
    path: str,
    engine: Engine,
    args: argparse.Namespace,
    text: Optional[SourceFile] = None,
    previews: bool = False,
) -> FileReport:
    """Check or fix ``path`` (``args.fix`` / ``args.diff`` / ``args.unsafe_fixes``).

    ``text``: the source, already read (stdin); then fixes are never written:
    the fixed text is left in ``report.fixed_source``. ``previews``: describe
    each remaining fix as text edits.
    """
    if path.endswith(".ipynb") and text is None:
        return process_notebook(path, engine, args, previews=previews)
    report = FileReport(path)
    if text is not None:
        source = text
    else:
        try:
            source = read_source(path)
        except SourceError as exc:
            report.errors.append(f"{path}: {exc}")
            return report
        if getattr(args, "cache_dir", None):  # only the result cache keys on it
            report.content_digest = content_digest(source.data)
    report.source = source.text
    module = engine.module_for(path)
    writing = args.fix and not args.diff and text is None
    tree = CheckedTree(getattr(args, "paths", None) or ["."]) if writing else None
    outside = tree.outside_reason(path) if tree is not None else None
    if outside is not None:  # a symlink out of the tree: checked, never written
        report.warnings.append(f"{path}: {outside}")
    try:
        if (args.fix or args.diff) and outside is None:
            result = engine.fix(source, unsafe=args.unsafe_fixes, module=module)
            report.diagnostics = result.diagnostics
            report.fixed = sum(result.fixed.values())
            report.fixed_by_code = Counter(result.fixed)
            for diagnostic, reason in result.discarded:
                report.warnings.append(
                    f"{path}:{diagnostic.line}:{diagnostic.column + 1}: {diagnostic.code} fix discarded: {reason}"
                )
            if not result.converged:
                report.warnings.append(f"{path}: fixes did not settle after repeated rounds; some were left out")
            report_internal(report, result.internal_errors)
            if result.source != source.text:
                report.source = result.source
                if args.diff:
                    report.diff = unified_diff(path, source.text, result.source)
                elif text is not None:
                    report.fixed_source = result.source
                else:
                    try:
                        write_atomically(path, encode(source, result.source), expected=source.data,
                                         identity=source.identity, tree=tree)
                    except SourceError as exc:
                        # Nothing was written: report what is still in the file.
                        report.errors.append(f"{path}: {exc}")
                        report.fixed = 0
                        report.fixed_by_code.clear()
                        report.source = source.text
                        report.diagnostics = engine.check(source, module=module).diagnostics
                        report.warnings.clear()
            if previews and any(d.fix for d in report.diagnostics):
                # The fixes of the final round belong to a tree we no longer
                # have: check the final text again to describe them.
                _add_previews(report, engine.check(report.source, whole=True, module=module))
        else:
            # Previews work on the narrowed module too: a fix only touches
            # statements that were kept, whose lines are the file's.
            engine.project.consulted.clear()
            checked = engine.check(source, module=module)
            if getattr(args, "cache_dir", None):  # what the result cache must watch
                report.dependencies = engine.project.dependencies(module)
            report.diagnostics = checked.diagnostics
            report_internal(report, checked.internal_errors)
            if previews:
                _add_previews(report, checked)
    except Unsupported as exc:
        skip(report, f"{path}:{exc.line}:{exc.column + 1}", exc.message)
    except ParseError as exc:
        report.diagnostics = []
        report.errors.append(f"{path}:{exc.line}:{exc.column + 1}: cannot parse: {exc.message}")
        report.parse_error_at = (None, exc.line, exc.column)
    except SourceError as exc:
        report.errors.append(f"{path}: {exc}")
    return report


def _add_previews(report: FileReport, checked: CheckResult) -> None:
    if checked.module is None:
        report.previews = [None] * len(report.diagnostics)
        return
    report.diagnostics = checked.diagnostics
    previewer = FixPreviewer(checked.module, checked.locator, checked.imported_elsewhere)
    report.previews = [previewer.preview(d.fix) if d.fix is not None else None for d in checked.diagnostics]
    if checked.repair is not None:
        _previews_of_repaired(report, checked)


def _previews_of_repaired(report: FileReport, checked: CheckResult) -> None:
    """Previews of a file read through a syntax repair (TL115), in the columns of the file as written."""
    repair = checked.repair
    assert repair is not None
    report.previews = [preview_on_repaired(repair, d, edits) for d, edits in zip(report.diagnostics, report.previews)]


def unified_diff(path: str, before: str, after: str) -> str:
    name = patch_path(path)
    lines = difflib.unified_diff(
        SourceFile(before).lines, SourceFile(after).lines, fromfile=f"a/{name}", tofile=f"b/{name}"
    )
    text = ""
    for line in lines:
        text += line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
    return text
