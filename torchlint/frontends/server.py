"""``torchlint server``: a Language Server Protocol server over stdio (pygls).

Editors get findings as they type and code actions that apply the fixes:
one quick fix per finding that has one (safe fixes preferred, unsafe ones
labelled), "Fix all safe torchlint problems" (also as the
``source.fixAll.torchlint`` action that editors run on save) and "Add
``# noqa: CODE``". The edits are the fixer's own (``engine.textedits``),
so a quick fix or fix-all leaves the buffer exactly as ``torchlint --fix``
leaves the file.

Each document is checked with the configuration the CLI would use for it:
the closest ``pyproject.toml`` / ``setup.cfg`` at or above the document's
folder (``run.config``), re-read when one of those files changes. The
server stays warm: the options, the loaded rules and their engines live as
long as that configuration does, and results are kept per text, so saving an
unchanged buffer or undoing an edit checks nothing. Each document's last
complete check is kept too: a change confined to one def or class re-checks
only it and keeps the other statements' findings, when that is exact
(``engine/incremental.py``); the results equal a whole check's.

Changes are debounced from the leading edge: a change after a quiet spell is
checked at once (the answer comes as fast as the check), while changes that
arrive within ``debounceMs`` of the end of the last check are gathered and
only the newest text is checked and published when that time is up.

A buffer that does not parse (half-typed code) gets one error diagnostic
saying where, as ruff's server does (``showSyntaxErrors: false`` in the
initialization options turns it off), and no findings; a rule that raises
is logged to the client and the other rules' findings are still published.

Also: pull diagnostics (``textDocument/diagnostic``; an editor that pulls is
not pushed to), hover with a rule's docs (on a ``# noqa:`` code or a
finding), notebooks (their code cells checked as one module, as the CLI
checks an ``.ipynb``), the editor's settings (``select``, ``ignore``, torch
versions, ``unsafeFixes``: as command-line options), ``torchlint.showSettings``
for bug reports, and quick fixes that go on with the fixes their line leads
to. The project modules a document's findings rest on are watched (the
editor's file watcher, or a poll of the files read): when one changes on
disk, the documents depending on it are checked again with a fresh project
model. A document over the CLI's size limit is not checked, only noted.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import sys
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, TextIO, Tuple
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import PositionCodec

from torchlint import __version__
from torchlint.core.dependencies import LISTING, PROBE, TREE, listing_digest, probe
from torchlint.core.diagnostic import Diagnostic, Fix, ParseError, Unsupported
from torchlint.core.noqa import add_noqa
from torchlint.core.settings import SettingsError
from torchlint.core.source import SourceFile
from torchlint.engine.incremental import Checked, carry_footprints, kept_for_next, prepare, recheck
from torchlint.engine.narrowing import carry_parses
from torchlint.engine.textedits import TextEdit, apply_edits, edits_between, preview_fix, preview_on_repaired
from torchlint.rules import rule_specs
from torchlint.run.config import CONFIG_FILES, ConfigError, Options, resolve
from torchlint.run.fileio import MAX_SOURCE_BYTES, current_digest, long_line
from torchlint.run.reporters.base import rule_url
from torchlint.run.selection import SelectionError
from torchlint.run.session import Linter

if TYPE_CHECKING:  # pragma: no cover
    from torchlint.engine.linter import CheckResult

SOURCE = "torchlint"
FIX_ALL_KIND = "source.fixAll.torchlint"
FIX_ALL_TITLE = "Fix all safe torchlint problems"
FIX_ALL_COMMAND = "torchlint.applyFixAll"
DEFAULT_DEBOUNCE_MS = 200
DEFAULT_POLL_MS = 2000  # how often files the findings rest on are looked at, when the editor cannot watch them
SHOW_SETTINGS_COMMAND = "torchlint.showSettings"
WATCH_REGISTRATION = "torchlint-watched-files"
RESULTS_KEPT = 32  # texts whose findings are remembered (undo, redo, saves)
PROJECTS_KEPT = 16  # configurations whose engines stay loaded
DOCUMENTS_KEPT = 16  # documents whose last check (text and Python's tree) is kept to re-check changes
DEPENDENCIES_KEPT = 64  # documents, open or closed, whose dependencies are known (their results are kept)
CHAIN_ROUNDS = 4  # fixes a quick fix chains on its line (``--fix`` makes at most MAX_FIX_ROUNDS)
SETTLE_AFTER_MS = 100  # a pause after publishing, without changes, in which the next change is prepared

logger = logging.getLogger("torchlint.server")


# --------------------------------------------------------------------------
# The warm state: configuration, engines and results (no LSP in here)
# --------------------------------------------------------------------------


@dataclass
class Project:
    """The options and engines of one configuration."""

    options: Options
    linter: Linter
    excluded: Dict[str, bool] = field(default_factory=dict)  # path -> excluded by the configuration

    def excludes(self, path: str) -> bool:
        """``options.is_excluded_with_parents(path)``, worked out once per path:
        it matches every pattern against each parent folder (2 ms a check)."""
        known = self.excluded.get(path)
        if known is None:
            known = self.excluded[path] = self.options.is_excluded_with_parents(path)
        return known


@dataclass
class Outcome:
    """What checking one text gave: findings, or why there are none."""

    diagnostics: List[Diagnostic] = field(default_factory=list)
    parse_error: Optional[ParseError] = None  # the text is not valid Python
    skipped: Optional[str] = None  # valid Python torchlint cannot analyse, or an excluded file
    notice: Optional[str] = None  # why the document was not checked, shown in the editor (too large)
    config_error: Optional[str] = None
    internal_errors: List[str] = field(default_factory=list)


@dataclass
class CellsOutcome:
    """What checking a notebook's cells gave: (cell index, finding in the cell), or why there are none."""

    diagnostics: List[Tuple[int, Diagnostic]] = field(default_factory=list)
    notice: Optional[str] = None
    config_error: Optional[str] = None


class Workbench:
    """Checks and fixes document texts the way the CLI would check their files."""

    def __init__(self, defaults: argparse.Namespace) -> None:
        # The CLI's options as parsed from an empty command line: each
        # document gets what its configuration file says over these.
        self._defaults = defaults
        self._projects: Dict[Tuple, Project] = {}
        self._results: "OrderedDict[Tuple, Outcome]" = OrderedDict()
        self._fixed: "OrderedDict[Tuple, Tuple[str, Any]]" = OrderedDict()  # whole checks and fix-all
        self._checked: Dict[Tuple, Checked] = {}  # (configuration, path) -> its last complete check
        # (configuration, path) -> the project modules its findings were worked
        # out from (a module's path, or PROBE + a place an import looked) -> digest
        # of the bytes read: a change on disk there makes them stale.
        self._dependencies: Dict[Tuple, Dict[str, str]] = {}
        self._seen: Dict[str, Optional[Tuple[int, int]]] = {}  # dependency -> (mtime, size) at the last look

    # -- configuration ---------------------------------------------------

    def project_for(self, path: str) -> Tuple[Tuple, Project]:
        """The configuration of ``path``, loaded once per state of the config files above it."""
        directory = os.path.dirname(os.path.abspath(path))
        key = _config_signature(directory)
        project = self._projects.get(key)
        if project is None:
            # Folders that see the same configuration files share one project:
            # what ``resolve`` takes from the folder itself (the default
            # exclusions) are names, the same in every folder.
            options = resolve(self._defaults, rule_specs(), cwd=directory)
            project = Project(options, Linter(options, keep_summaries=False))
            self._projects[key] = project
            while len(self._projects) > PROJECTS_KEPT:  # old states of edited configuration files
                del self._projects[next(iter(self._projects))]
        return key, project

    def warm(self, directory: str) -> None:
        """Load what checking a file in ``directory`` first needs (its configuration,
        the rules, their engine, libcst's parser) before any file is opened."""
        path = os.path.join(directory, "__init__.py")
        try:
            _, project = self.project_for(path)
            project.excludes(path)  # compiles the exclusion patterns
            engine = project.linter.engine_for(path)
            engine.check(SourceFile("import torch\n\n\ndef f(x):\n    return x.data[0]\n"))
        except Exception:  # a bad configuration is reported with the first document
            logger.debug("warming up in %s failed", directory, exc_info=True)

    # -- checking --------------------------------------------------------

    def check(self, path: str, text: str) -> Outcome:
        """The findings in ``text``, as ``torchlint --stdin-filename path`` reports them."""
        refused = too_large(text)
        if refused is not None:  # not checked, nor kept: a few such texts would fill the memory
            return Outcome(notice=f"torchlint: not checked: {refused}")
        try:
            key, project = self.project_for(path)
        except (ConfigError, SelectionError, SettingsError) as exc:
            return Outcome(config_error=str(exc))
        cache_key = (key, path, text)
        cached = self._results.get(cache_key)
        if cached is not None:
            self._results.move_to_end(cache_key)
            return cached
        outcome = self._check(project, path, text, key)
        self._results[cache_key] = outcome
        while len(self._results) > RESULTS_KEPT:
            self._results.popitem(last=False)
        return outcome

    def _check(self, project: Project, path: str, text: str, key: Tuple = ()) -> Outcome:
        if project.excludes(path):
            return Outcome(skipped="excluded by the configuration")
        engine = project.linter.engine_for(path)
        # The last complete check of this document: a change confined to one
        # def or class re-checks only it (``engine.incremental``).
        previous = self._checked.pop((key, path), None)
        engine.project.consulted.clear()  # what this check reads: its dependencies
        if previous is not None:
            try:
                rechecked = recheck(engine, previous, text, engine.module_for(path))
            except Exception:  # not exact or not possible: the whole check below decides
                logger.warning("incremental check of %s failed; checking it whole", path, exc_info=True)
                rechecked = None
            if rechecked is not None:
                light = _light(rechecked.checked.diagnostics)
                checked = rechecked.checked
                self._keep(key, path, Checked(kept_for_next(checked.source), light))
                # The kept findings still rest on what the earlier checks read.
                self._depend(key, path, engine, keep_earlier=True)
                engine.project.consulted.clear()
                return Outcome(light, internal_errors=list(rechecked.result.internal_errors))
            engine.project.consulted.clear()
        source = SourceFile(text)
        try:
            result = engine.check(source, module=engine.module_for(path))
        except Unsupported as exc:
            return Outcome(skipped=f"{exc.line}:{exc.column + 1}: {exc.message}")
        except ParseError as exc:
            return Outcome(parse_error=exc)
        except RecursionError:
            return Outcome(skipped="too deeply nested to analyse")
        except Exception as exc:  # a bug must not take the editor's diagnostics down with it
            logger.exception("checking %s failed", path)
            return Outcome(internal_errors=[f"{type(exc).__name__}: {exc}"])
        self._depend(key, path, engine, keep_earlier=False)
        engine.project.consulted.clear()
        # Keep what publishing needs; the fixes hold parse trees.
        light = _light(result.diagnostics)
        if result.repair is None and source.parsed:
            # Only the text and Python's tree: not libcst's trees the check made.
            kept = kept_for_next(source)
            if previous is not None:  # libcst's pieces of its last focused check: keyed by text, still good
                carry_parses(previous.source, kept)
                carry_footprints(previous.source, kept)  # so are the statements' footprints
            self._keep(key, path, Checked(kept, light))
        return Outcome(light, internal_errors=list(result.internal_errors))

    def _keep(self, key: Tuple, path: str, checked: Checked) -> None:
        self._checked[(key, path)] = checked
        while len(self._checked) > DOCUMENTS_KEPT:
            del self._checked[next(iter(self._checked))]

    def settle(self, path: str) -> None:
        """Work out what the next change of ``path`` would otherwise pay for first
        (``incremental.prepare``): called once its findings are published."""
        for (_, kept_path), checked in list(self._checked.items()):
            if kept_path == path:
                try:
                    prepare(checked)
                except Exception:  # the next check works it out itself, or checks whole
                    logger.debug("preparing %s for its next change failed", path, exc_info=True)

    def forget(self, path: str) -> None:
        """The document at ``path`` was closed: drop what is kept to re-check it."""
        for kept in [k for k in self._checked if k[1] == path]:
            del self._checked[kept]
        # Its dependencies stay: its results, kept per text, are answered again
        # when it is reopened, unless a file they rest on changed meanwhile.

    def check_cells(self, path: str, cells: Sequence[str]) -> "CellsOutcome":
        """The findings in a notebook's code ``cells`` (texts, in order), checked as
        one module as the CLI checks an ``.ipynb`` (``run.notebook``): (cell index, finding at its line in the cell)."""
        refused = too_large("".join(cells))
        if refused is not None:
            return CellsOutcome(notice=f"torchlint: not checked: {refused}")
        try:
            key, project = self.project_for(path)
        except (ConfigError, SelectionError, SettingsError) as exc:
            return CellsOutcome(config_error=str(exc))
        if project.excludes(path):
            return CellsOutcome()
        layout = _cells_layout(cells)
        cache_key = ("cells", key, path, layout.text)
        cached = self._results.get(cache_key)
        if cached is not None:
            return cached  # type: ignore[return-value]
        engine = project.linter.engine_for(path)
        engine.project.consulted.clear()
        try:  # IPython runs ``await`` at the top level of a cell
            result = engine.check(SourceFile(layout.text, top_level_await=True), module=engine.module_for(path))
        except (ParseError, Unsupported, RecursionError):
            return CellsOutcome()  # a half-typed cell: nothing until it parses
        self._depend(key, path, engine, keep_earlier=False)
        engine.project.consulted.clear()
        starts = layout.starts(layout.text) or []
        found = []
        for d in _light(result.diagnostics):
            number, line = layout.locate(starts, d.line)
            if number is None:
                continue
            end_line = None if d.end_line is None else d.end_line - d.line + line
            found.append((number - 1, replace(d, line=line, end_line=end_line)))
        outcome = CellsOutcome(found)
        self._results[cache_key] = outcome  # type: ignore[assignment]
        while len(self._results) > RESULTS_KEPT:
            self._results.popitem(last=False)
        return outcome

    def cell_fixes(self, path: str, cells: Sequence[str], index: int, first: int, last: int
                   ) -> Tuple[List[Tuple[Diagnostic, Optional[Dict[int, str]], List[Tuple[str, bool]]]], bool]:
        """``fixes`` for a notebook: the findings on lines ``first`` to ``last`` of code
        cell ``index`` of ``cells`` (placed in the cell), each with the new texts of
        the cells its fix changes (by index; None: no fix, or one that would move code
        between cells) and the fixes it chains (``chained_fix``), and whether any
        finding of the notebook has a safe fix. The cells are one module, as in
        ``check_cells``: a fix may also change another cell (an import it leaves unused)."""
        layout = _cells_layout(cells)
        text, starts = layout.text, layout.starts(layout.text)
        at = next((k for k, cell in enumerate(layout.cells) if cell.number == index + 1), None)
        if starts is None or at is None:
            return [], False  # a cell magic whose body is not Python: not checked

        def compute(project: Project) -> WholeCheck:
            engine = project.linter.engine_for(path)  # IPython runs ``await`` at the top level of a cell
            return WholeCheck(engine.check(SourceFile(text, top_level_await=True), whole=True,
                                           module=engine.module_for(path)))

        whole: Optional[WholeCheck] = self._memo("whole cells", path, text, compute, default=None)
        if whole is None:
            return [], False
        start, end = starts[at], starts[at + 1] if at + 1 < len(starts) else len(SourceFile(text).lines) + 1
        found = []
        for number, d in enumerate(whole.result.diagnostics):
            if not (start < d.line < end and first <= d.line - start <= last):
                continue
            edits, then, changed = whole.preview(number), [], None
            if edits:
                safe = d.fix is not None and d.fix.safe
                edits, then = self.chained_fix(path, text, d.line, edits, unsafe=not safe)
                fixed = layout.split(apply_edits(SourceFile(text), edits))
                if fixed is not None:
                    changed = {cell.number - 1: new for cell, new in zip(layout.cells, fixed)
                               if new != cells[cell.number - 1]}
            end_line = None if d.end_line is None else d.end_line - start
            found.append((replace(d, line=d.line - start, end_line=end_line), changed or None, then))
        any_safe = any(d.fix is not None and d.fix.safe for d in whole.result.diagnostics)
        return found, any_safe

    @staticmethod
    def cell_noqa(cells: Sequence[str], index: int, line: int, code: str) -> Optional[Dict[int, str]]:
        """Code cell ``index`` with ``# noqa: code`` on its ``line`` (``--add-noqa``'s
        edit), by index; None when nothing changes. Made on the joined cells, where
        IPython lines are masked (the tokenizer reads a cell's ``%magic`` as an error)."""
        layout = _cells_layout(cells)
        starts = layout.starts(layout.text)
        at = next((k for k, cell in enumerate(layout.cells) if cell.number == index + 1), None)
        if starts is None or at is None:
            return None
        noted, changed, _ = add_noqa(SourceFile(layout.text), [(starts[at] + line, code)])
        texts = layout.split(noted) if changed else None
        if texts is None:
            return None
        return {cell.number - 1: new for cell, new in zip(layout.cells, texts) if new != cells[cell.number - 1]} or None

    def fix_all_cells(self, path: str, cells: Sequence[str]) -> Optional[Dict[int, str]]:
        """``fix_all`` for a notebook's code ``cells``: the new texts of the cells
        ``torchlint --fix`` changes (by index), as it fixes an ``.ipynb``; None when
        nothing changes or a fix would move code between cells."""
        layout = _cells_layout(cells)

        def compute(project: Project) -> Optional[Dict[int, str]]:
            engine = project.linter.engine_for(path)
            fixed = engine.fix(SourceFile(layout.text, top_level_await=True), unsafe=project.options.unsafe_fixes,
                               module=engine.module_for(path)).source
            texts = layout.split(fixed) if fixed != layout.text else None
            if texts is None:
                return None
            changed = {cell.number - 1: new for cell, new in zip(layout.cells, texts) if new != cells[cell.number - 1]}
            return changed or None

        return self._memo("fix_all cells", path, layout.text, compute, default=None)

    def settings_of(self, path: str) -> Dict[str, Any]:
        """The settings a check of ``path`` runs with, and where they come from."""
        try:
            key, project = self.project_for(path)
        except (ConfigError, SelectionError, SettingsError) as exc:
            return {"path": path, "configuration_error": str(exc)}
        options = project.options
        return {
            "path": path,
            "configuration_files": [name for name, _, _ in key],
            "rules": [rule.code for rule in options.rules_for(path)],
            "torch_version": None if options.torch_version is None else str(options.torch_version),
            "torch_version_source": getattr(options, "torch_version_source", None),
            "target_torch_version": (None if options.target_torch_version is None
                                     else str(options.target_torch_version)),
            "unsafe_fixes": options.unsafe_fixes,
            "excluded": project.excludes(path),
            "depends_on": sorted({d for (k, p), deps in self._dependencies.items()
                                  if k == key and p == path for d in deps if not d.startswith((PROBE, LISTING))}),
        }

    # -- the project on disk ---------------------------------------------------

    def _depend(self, key: Tuple, path: str, engine, keep_earlier: bool) -> None:
        """Record what the check just made read (the project model's modules, and
        the places where imports found nothing), with their digests."""
        try:
            found = engine.project.dependencies(engine.module_for(path))
        except Exception:  # the model's bookkeeping must not cost the findings
            logger.warning("dependencies of %s unknown", path, exc_info=True)
            found = {}
        recorded = self._dependencies.get((key, path), {}) if keep_earlier else {}
        recorded.update(found)
        self._dependencies.pop((key, path), None)
        self._dependencies[(key, path)] = recorded  # the newest last
        while len(self._dependencies) > DEPENDENCIES_KEPT:
            (old_key, old_path), _ = next(iter(self._dependencies.items()))
            self._forget_results(old_key, old_path)  # no longer known when they go stale
        for dependency in found:
            if dependency not in self._seen:
                self._seen[dependency] = _state_of(dependency)

    def _forget_results(self, key: Tuple, path: str) -> None:
        self._checked.pop((key, path), None)
        self._dependencies.pop((key, path), None)
        for cached in [k for k in self._results if k[-3:-1] == (key, path)]:
            del self._results[cached]
        for memo in [k for k in self._fixed if k[1] == key and k[2] == path]:
            del self._fixed[memo]

    def changed_on_disk(self) -> List[str]:
        """The dependencies whose modification time or size changed since the last
        look (a poll for clients that cannot watch files)."""
        changed = []
        for dependency in {d for deps in self._dependencies.values() for d in deps}:
            now = _state_of(dependency)
            if now != self._seen.get(dependency):
                self._seen[dependency] = now
                changed.append(_paths_of(dependency)[0])
        return changed

    def stale_documents(self, paths: Optional[Sequence[str]] = None) -> List[str]:
        """The documents whose findings rest on a file (of ``paths``, or any) that
        changed on disk: what is kept for them goes, and so does the project model
        of their configuration (it holds what it read of the old file)."""
        wanted = None if paths is None else {os.path.abspath(p) for p in paths}
        stale: List[Tuple] = []
        for (key, path), deps in self._dependencies.items():
            for dependency, digest in deps.items():
                if wanted is not None and not _touched(dependency, wanted):
                    continue
                if current_digest(dependency) != digest:
                    stale.append((key, path))
                    break
        for key, path in stale:
            self._projects.pop(key, None)
            self._forget_results(key, path)
        for dependency in list(self._seen):
            if wanted is None or _touched(dependency, wanted):
                self._seen[dependency] = _state_of(dependency)
        return sorted({path for _, path in stale})

    # -- fixing ------------------------------------------------------------

    def fixes(self, path: str, text: str, first: int, last: int
              ) -> Tuple[List[Tuple[Diagnostic, Optional[List[TextEdit]]]], bool]:
        """The findings on lines ``first`` to ``last`` (from 1) with the edits of
        their own fix (None: no fix), and whether any finding of the text has a safe fix.

        Each preview renders the whole module once, so only the findings
        asked about are previewed (editors ask at every cursor move).
        """

        def compute(project: Project) -> WholeCheck:
            engine = project.linter.engine_for(path)
            return WholeCheck(engine.check(text, whole=True, module=engine.module_for(path)))

        whole: Optional[WholeCheck] = self._memo("whole", path, text, compute, default=None)
        if whole is None:
            return [], False
        found = [(index, d) for index, d in enumerate(whole.result.diagnostics) if first <= d.line <= last]
        any_safe = any(d.fix is not None and d.fix.safe for d in whole.result.diagnostics)
        return [(d, whole.preview(index)) for index, d in found], any_safe

    def chained_fix(self, path: str, text: str, line: int, edits: List[TextEdit], unsafe: bool
                    ) -> Tuple[List[TextEdit], List[Tuple[str, bool]]]:
        """The edits of a finding's fix (``edits``, on ``line``) followed by the fixes
        it leads to on the lines it rewrote, as ``torchlint --fix`` goes on
        (``Variable(x, volatile=True)``: TL102 drops ``volatile=``, then TL107 the
        wrapper), and the code and safety of each fix after the first. Unsafe fixes are chained
        only when ``unsafe`` (the first fix is unsafe) or the settings ask for them
        (``unsafe-fixes``), as ``--fix --unsafe-fixes`` would apply them."""

        def compute(project: Project) -> Tuple[List[TextEdit], List[Tuple[str, bool]]]:
            engine = project.linter.engine_for(path)
            module = engine.module_for(path)
            allow_unsafe = unsafe or project.options.unsafe_fixes
            current, codes = apply_edits(SourceFile(text), edits), []
            first, last = _moved_region(edits, line, line)  # what replaced the line, and what its fix rewrote
            for _ in range(CHAIN_ROUNDS):
                result = engine.check(current, whole=True, module=module)
                next_fix = next((d for d in result.diagnostics if d.fix is not None and (d.fix.safe or allow_unsafe)
                                 and first <= d.line <= last and result.module is not None), None)
                if next_fix is None:
                    break
                more = preview_fix(result.module, next_fix.fix, result.imported_elsewhere)
                if not more:
                    break
                current = apply_edits(SourceFile(current), more)
                codes.append((next_fix.code, next_fix.fix.safe))
                first, last = _moved_region(more, first, last)
            if not codes:
                return edits, []
            return _edits(text, current), codes

        key = ("chain", line, tuple(edits), unsafe)
        return self._memo(key, path, text, compute, default=(edits, []))

    def fix_all(self, path: str, text: str) -> Optional[str]:
        """``text`` as ``torchlint --fix`` leaves it (with ``--unsafe-fixes`` when the
        configuration or the editor's settings ask for them); None when nothing changes."""

        def compute(project: Project):
            engine = project.linter.engine_for(path)
            fixed = engine.fix(text, unsafe=project.options.unsafe_fixes, module=engine.module_for(path)).source
            return fixed if fixed != text else None

        return self._memo("fix_all", path, text, compute, default=None)

    def _memo(self, what: str, path: str, text: str, compute, default):
        if too_large(text) is not None:
            return default
        try:
            key, project = self.project_for(path)
        except (ConfigError, SelectionError, SettingsError):
            return default
        if project.excludes(path):
            return default
        memo_key = (what, key, path, text)
        if memo_key in self._fixed:
            self._fixed.move_to_end(memo_key)
            return self._fixed[memo_key]
        try:
            value = compute(project)
        except (ParseError, RecursionError):
            value = default
        except Exception:  # a rule or fixer bug: offer nothing rather than fail the request
            logger.exception("fixing %s failed", path)
            value = default
        self._fixed[memo_key] = value
        while len(self._fixed) > 4:  # whole parse trees: keep few
            self._fixed.popitem(last=False)
        return value


class WholeCheck:
    """A check of the whole module (fixes need it), and its fixes' previews as they are asked for."""

    def __init__(self, result: "CheckResult") -> None:
        self.result = result
        self._previews: Dict[int, Optional[List[TextEdit]]] = {}

    def preview(self, index: int) -> Optional[List[TextEdit]]:
        if index not in self._previews:
            d = self.result.diagnostics[index]
            edits = None
            if d.fix is not None and self.result.module is not None:
                try:
                    edits = preview_fix(self.result.module, d.fix, self.result.imported_elsewhere)
                except Exception:  # a fixer bug: no quick fix for this finding
                    logger.exception("previewing the %s fix failed", d.code)
            if d.fix is not None and self.result.repair is not None:  # TL115: back to the text as written
                edits = preview_on_repaired(self.result.repair, d, edits)
            self._previews[index] = edits
        return self._previews[index]


def _cells_layout(cells: Sequence[str]):
    """A notebook's code cells (texts, in order) joined into one module as the CLI joins an ``.ipynb``'s."""
    from torchlint.run.notebook import Cell, Notebook, build_layout

    return build_layout(Notebook("", False, [Cell(n + 1, text, (0, 0), None) for n, text in enumerate(cells)], True))


def _config_signature(directory: str) -> Tuple:
    """The configuration files at or above ``directory``, with their modification
    times and sizes: a new key whenever a file that could configure it appears,
    changes or goes."""
    found: List[Tuple[str, int, int]] = []
    current = directory
    while True:
        for name in CONFIG_FILES:
            candidate = os.path.join(current, name)
            try:
                status = os.stat(candidate)
            except OSError:
                continue
            found.append((candidate, status.st_mtime_ns, status.st_size))
        parent = os.path.dirname(current)
        if parent == current:
            return tuple(found)
        current = parent


def too_large(text: str) -> Optional[str]:
    """Why ``text`` is not checked, as the CLI says it of a file over
    ``MAX_SOURCE_BYTES`` or with a line over ``MAX_LINE_CHARS``; None if neither."""
    if len(text) * 4 <= MAX_SOURCE_BYTES:  # UTF-8 takes at most 4 bytes a character
        return long_line(SourceFile(text))
    size = len(text) if len(text) > MAX_SOURCE_BYTES else len(text.encode("utf-8", "surrogatepass"))
    if size <= MAX_SOURCE_BYTES:
        return long_line(SourceFile(text))
    return f"too large to check ({size / (1 << 20):.1f} MB; the limit is {MAX_SOURCE_BYTES / (1 << 20):.1f} MB)"


def _paths_of(dependency: str) -> Tuple[str, ...]:
    """The files whose change touches ``dependency``: a module's own path; for a
    place an import looked (``PROBE`` + folder/name), the module, package and
    folder that may appear or go there."""
    if dependency.startswith(LISTING):
        folder = dependency[len(LISTING):]
        # a module appearing in the folder (or anywhere under a root: ``TREE``), or going
        return (folder[: -len(TREE)] if folder.endswith(TREE) else folder,)
    if not dependency.startswith(PROBE):
        return (dependency,)
    place = dependency[len(PROBE):]
    return place + ".py", os.path.join(place, "__init__.py"), place


def _touched(dependency: str, paths: "set[str]") -> bool:
    """Does a change to one of ``paths`` touch ``dependency``? For a folder's
    listing, a module of the folder appearing or going does."""
    if dependency.startswith(LISTING):
        folder = dependency[len(LISTING):]
        if folder.endswith(TREE):  # every module under a root: one appearing anywhere below
            root = folder[: -len(TREE)]
            return any(path == root or path.startswith(root + os.sep) for path in paths)
        return any(path == folder or os.path.dirname(path) == folder for path in paths)
    return not paths.isdisjoint(_paths_of(dependency))


def _state_of(dependency: str) -> Optional[Tuple[object, ...]]:
    """What a poll compares: a module's modification time and size, what a place holds."""
    if dependency.startswith(PROBE):
        return (probe(dependency[len(PROBE):]),)
    if dependency.startswith(LISTING):
        return (listing_digest(dependency[len(LISTING):]),)
    try:
        status = os.stat(dependency)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


def _moved_region(edits: Sequence[TextEdit], first: int, last: int) -> Tuple[int, int]:
    """Lines ``first`` to ``last`` after ``edits``, widened to the edits that touch them."""
    shift_first = shift_last = 0
    for edit in edits:
        (start_row, _), (end_row, _) = edit.start, edit.end
        added = edit.content.count("\n") - (end_row - start_row)
        if end_row < first:
            shift_first += added
            shift_last += added
        elif start_row <= last:
            first = min(first, start_row)
            last = max(last, end_row)
            shift_last += added
    return first + shift_first, max(first + shift_first, last + shift_last)


# --------------------------------------------------------------------------
# Positions: torchlint counts characters from 1-based lines, LSP code units
# (UTF-16 unless the client chose otherwise) from 0-based lines
# --------------------------------------------------------------------------


def lsp_position(lines: Sequence[str], codec: PositionCodec, row: int, column: int) -> types.Position:
    """``row`` 1-based, ``column`` 0-based in characters."""
    if row - 1 >= len(lines):
        return types.Position(line=len(lines), character=0)
    return codec.position_to_client_units(lines, types.Position(line=row - 1, character=column))


def finding_range(lines: Sequence[str], codec: PositionCodec, d: Diagnostic) -> types.Range:
    """From the finding's start to its end where known, else to the end of the name or
    dotted name that starts there (at least one character), never past the line."""
    start = lsp_position(lines, codec, d.line, d.column)
    end_line = getattr(d, "end_line", None)
    end_column = getattr(d, "end_column", None)
    if end_line is not None and end_column is not None:
        return types.Range(start=start, end=lsp_position(lines, codec, end_line, end_column))
    text = lines[d.line - 1].rstrip("\r\n") if 0 < d.line <= len(lines) else ""
    end = d.column
    while end < len(text) and (text[end].isalnum() or text[end] in "_."):
        end += 1
    if end == d.column and end < len(text):
        end += 1
    return types.Range(start=start, end=lsp_position(lines, codec, d.line, end))


def lsp_text_edits(text: str, codec: PositionCodec, edits: Sequence[TextEdit]) -> List[types.TextEdit]:
    lines = SourceFile(text).lines

    def position(row_column: Tuple[int, int]) -> types.Position:
        row, column = row_column
        return lsp_position(lines, codec, row, column - 1)

    return [types.TextEdit(range=types.Range(start=position(e.start), end=position(e.end)), new_text=e.content)
            for e in edits]


# --------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------


NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(notebook_selector=[types.NotebookDocumentFilterWithCells(
    cells=[types.NotebookCellLanguage(language="python")], notebook="jupyter-notebook")])


class TorchlintServer(LanguageServer):
    def __init__(self, defaults: argparse.Namespace) -> None:
        converter = default_converter()
        super().__init__(SOURCE, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=NOTEBOOK_SYNC, converter_factory=lambda: converter)
        self.converter = converter  # the protocol's (de)serialization of messages
        self.defaults = defaults  # the CLI's options from an empty command line
        self.settings: Dict[str, Any] = {}  # what the editor set (``editor_settings``)
        self.workbench = Workbench(defaults)
        self.debounce = DEFAULT_DEBOUNCE_MS / 1000
        self.show_syntax_errors = True
        self.poll_interval = DEFAULT_POLL_MS / 1000
        self.watching = "none"  # how changes on disk are noticed: "client" (registered), "poll"
        self.settings_problems: List[str] = []
        self._pending: Dict[str, Any] = {}  # uri -> scheduled check (asyncio handle)
        self._last_check: Dict[str, float] = {}  # uri -> when it was last checked
        self._settling: Dict[str, Any] = {}  # uri -> its scheduled ``settle`` (asyncio handle)

    # -- settings from the editor ---------------------------------------------

    def apply_settings(self, settings: Any) -> List[str]:
        """Take the editor's settings (``initializationOptions``, or
        ``workspace/didChangeConfiguration``); the problems found with them."""
        options, problems = editor_settings(settings)
        if options != self.settings:
            self.settings = options
            self.workbench = Workbench(with_settings(self.defaults, options))
        return problems

    # -- documents ---------------------------------------------------------

    def document_path(self, uri: str) -> str:
        path = to_fs_path(uri)
        if path:
            return path
        # An unsaved buffer: configured like a file at the workspace root.
        root = self.workspace.root_path or os.getcwd()
        return os.path.join(root, "untitled.py")

    def open_document(self, uri: str):
        """The editor's buffer of ``uri``; None when it is not open (pygls would read the file)."""
        documents = self.workspace.text_documents
        return documents.get(uri) or documents.get(unquote(uri))

    def wants(self, uri: str) -> bool:
        """Python buffers only (other languages are left alone; a notebook's cells are checked with the notebook)."""
        document = self.open_document(uri)
        if document is None or self.workspace.get_notebook_document(cell_uri=uri) is not None:
            return False
        return document.language_id == "python" or uri.endswith((".py", ".pyi"))

    def notebook(self, uri: str):
        return self.workspace.get_notebook_document(notebook_uri=uri)

    @property
    def pulls(self) -> bool:
        """Does the editor ask for diagnostics (``textDocument/diagnostic``) rather than take them pushed?"""
        text_document = self.client_capabilities.text_document
        return bool(text_document and text_document.diagnostic)

    def schedule(self, uri: str, now: bool = False) -> None:
        """Check ``uri`` at once, or (for changes) when the debounce time since its last check is up."""
        settling = self._settling.pop(uri, None)
        if settling is not None:
            settling.cancel()  # not idle: the check prepares what it needs itself
        if uri in self._pending:
            if not now:
                return  # the pending check will read the newest text
            self._pending.pop(uri).cancel()
        wait = 0.0 if now else max(0.0, self._last_check.get(uri, 0.0) + self.debounce - time.monotonic())
        loop = asyncio.get_running_loop()
        self._pending[uri] = loop.call_later(wait, self.publish, uri)

    def forget(self, uri: str) -> None:
        for scheduled in (self._pending, self._settling):
            handle = scheduled.pop(uri, None)
            if handle is not None:
                handle.cancel()
        self._last_check.pop(uri, None)
        self.workbench.forget(self.document_path(uri))
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def publish(self, uri: str) -> None:
        self._pending.pop(uri, None)
        if self.notebook(uri) is not None:
            self.publish_notebook(uri)
            return
        if self.pulls:
            return  # the editor asks when it wants them
        try:
            document = self.open_document(uri)
            if document is None:
                return  # closed meanwhile
            text, version = document.source, document.version
            diagnostics = self.diagnostics_for(uri, text)
        except Exception:  # never let one document's problem stop the server
            logger.exception("publishing diagnostics for %s failed", uri)
            return
        finally:
            # The debounce time counts from the end of the check: the changes
            # that queued up while it ran are gathered into one check.
            self._last_check[uri] = time.monotonic()
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics))
        self.settle_soon(uri)

    def settle_soon(self, uri: str) -> None:
        """Once the findings are out and no change followed for ``SETTLE_AFTER_MS``,
        prepare the document's next change (``Workbench.settle``)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (called outside the server): the next change prepares itself
            return
        earlier = self._settling.pop(uri, None)
        if earlier is not None:
            earlier.cancel()
        self._settling[uri] = loop.call_later(SETTLE_AFTER_MS / 1000, self.settle, uri)

    def settle(self, uri: str) -> None:
        self._settling.pop(uri, None)
        if uri in self._pending or self.open_document(uri) is None:
            return  # a newer text is about to be checked, or the document closed
        self.workbench.settle(self.document_path(uri))

    def warm_protocol(self) -> None:
        """Make the converter's code for the messages of an editing session (cattrs
        writes it for each message type when first met: tens of ms on the first
        publish) while the editor waits for ``initialize``'s answer anyway."""
        try:
            document = {"uri": "file:///warm.py", "languageId": "python", "version": 1, "text": ""}
            self.converter.structure({"jsonrpc": "2.0", "method": types.TEXT_DOCUMENT_DID_OPEN,
                                      "params": {"textDocument": document}}, types.DidOpenTextDocumentNotification)
            self.converter.structure({"jsonrpc": "2.0", "method": types.TEXT_DOCUMENT_DID_CHANGE, "params": {
                "textDocument": {"uri": document["uri"], "version": 2},
                "contentChanges": [{"text": ""}, {"range": {"start": {"line": 0, "character": 0},
                                                           "end": {"line": 0, "character": 0}}, "text": ""}]}},
                types.DidChangeTextDocumentNotification)
            at = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=1))
            finding = types.Diagnostic(range=at, message="", severity=types.DiagnosticSeverity.Warning, source=SOURCE,
                                       code="TL101", code_description=types.CodeDescription(href="https://x"),
                                       data={"fix": None})
            self.converter.unstructure(types.PublishDiagnosticsNotification(
                method=types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, jsonrpc="2.0",
                params=types.PublishDiagnosticsParams(uri=document["uri"], version=1, diagnostics=[finding])))
        except Exception:  # only a head start: the real messages work without it
            logger.debug("warming up the protocol failed", exc_info=True)

    def diagnostics_for(self, uri: str, text: str) -> List[types.Diagnostic]:
        outcome = self.workbench.check(self.document_path(uri), text)
        return self.lsp_diagnostics(uri, text, outcome)

    def lsp_diagnostics(self, uri: str, text: str, outcome: Outcome) -> List[types.Diagnostic]:
        if outcome.notice is not None:
            self.window_log_message(types.LogMessageParams(
                type=types.MessageType.Warning, message=f"{outcome.notice}: {uri}"))
            return [_whole_file_diagnostic(outcome.notice, types.DiagnosticSeverity.Information)]
        for error in outcome.internal_errors:
            self.window_log_message(types.LogMessageParams(
                type=types.MessageType.Error, message=f"torchlint: internal error (please report it): {error}"))
        if outcome.config_error is not None:
            message = f"configuration error: {outcome.config_error}"
            return [_whole_file_diagnostic(message, types.DiagnosticSeverity.Error)]
        if outcome.parse_error is not None:
            if not self.show_syntax_errors:
                return []
            error = outcome.parse_error
            lines = SourceFile(text).lines
            start = lsp_position(lines, self.workspace.position_codec, error.line, error.column)
            return [types.Diagnostic(
                range=types.Range(start=start, end=start), message=f"SyntaxError: {error.message}",
                severity=types.DiagnosticSeverity.Error, source=SOURCE)]
        if outcome.skipped is not None:
            self.window_log_message(types.LogMessageParams(
                type=types.MessageType.Info, message=f"torchlint: skipped {uri}: {outcome.skipped}"))
            return []
        lines = SourceFile(text).lines
        codec = self.workspace.position_codec
        base = self.docs_base_url(self.document_path(uri))
        return [self.lsp_diagnostic(lines, codec, d, base) for d in outcome.diagnostics]

    def docs_base_url(self, path: str) -> Optional[str]:
        """The ``docs-base-url`` of ``path``'s configuration (None: the default pages)."""
        try:
            return self.workbench.project_for(path)[1].options.docs_base_url
        except Exception:  # a broken configuration is reported with the findings, not here
            return None

    @staticmethod
    def lsp_diagnostic(lines: Sequence[str], codec: PositionCodec, d: Diagnostic,
                       docs_base_url: Optional[str] = None) -> types.Diagnostic:
        fix = None if d.fix is None else ("safe" if d.fix.safe else "unsafe")
        return types.Diagnostic(
            range=finding_range(lines, codec, d),
            message=d.message,
            severity=types.DiagnosticSeverity.Warning,
            source=SOURCE,
            code=d.code,
            code_description=types.CodeDescription(href=rule_url(d.code, docs_base_url)),
            data={"fix": fix},
        )

    # -- code actions --------------------------------------------------------

    def code_actions(self, params: types.CodeActionParams) -> List[types.CodeAction]:
        uri = params.text_document.uri
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        if notebook is not None:
            return self.cell_code_actions(notebook, uri, params)
        document = self.open_document(uri)
        if document is None or not self.wants(uri):
            return []
        text, version = document.source, document.version
        path = self.document_path(uri)
        only = params.context.only
        actions: List[types.CodeAction] = []
        if _wanted(only, types.CodeActionKind.QuickFix):
            actions.extend(self.quick_fixes(uri, version, path, text, params.range))
        # Asked for every kind, the quick fixes already end with fix-all;
        # the source action is for clients that ask for it (on save).
        if only and _wanted(only, FIX_ALL_KIND):
            outcome = self.workbench.check(path, text)
            if any(d.fix is not None and d.fix.safe for d in outcome.diagnostics):
                actions.extend(self.fix_all_action(uri, version, path, text, FIX_ALL_KIND))
        return actions

    def fix_all_action(self, uri: str, version: Optional[int], path: str, text: str,
                       kind: str) -> List[types.CodeAction]:
        """"Fix all": its edit (a whole fix loop) computed only when the editor
        picks the action (codeAction/resolve), where the editor supports that."""
        if self.resolves_edits():
            return [types.CodeAction(title=FIX_ALL_TITLE, kind=kind, data={"uri": uri, "version": version})]
        fixed = self.workbench.fix_all(path, text)
        if fixed is None:
            return []
        return [types.CodeAction(title=FIX_ALL_TITLE, kind=kind,
                                 edit=self.workspace_edit(uri, version, text, _edits(text, fixed)))]

    def resolves_edits(self) -> bool:
        text_document = self.client_capabilities.text_document
        code_action = text_document.code_action if text_document else None
        support = code_action.resolve_support if code_action else None
        return bool(support and "edit" in support.properties)

    def resolve(self, action: types.CodeAction) -> types.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        document = self.open_document(data.get("uri", ""))
        if document is None or document.version != data.get("version"):
            return action  # the buffer changed or closed since: no edit
        action.edit = self.fix_all_edit(document.uri) or types.WorkspaceEdit(changes={})
        return action

    def quick_fixes(self, uri: str, version: Optional[int], path: str, text: str,
                    wanted: types.Range) -> List[types.CodeAction]:
        lines = SourceFile(text).lines
        codec = self.workspace.position_codec
        fixes, noqa = [], []
        found, any_safe = self.workbench.fixes(path, text, wanted.start.line + 1, wanted.end.line + 1)
        for d, edits in found:
            diagnostic = self.lsp_diagnostic(lines, codec, d, self.docs_base_url(path))
            if edits:
                safe = d.fix is not None and d.fix.safe
                # The fixes this one leads to on its line, as ``--fix`` goes on.
                edits, then = self.workbench.chained_fix(path, text, d.line, edits, unsafe=not safe)
                title = f"Fix {d.code}: {d.message}" + (" (then " + ", ".join(c for c, _ in then) + ")" if then else "")
                safe = safe and all(chained_safe for _, chained_safe in then)
                title += "" if safe else " (unsafe)"
                fixes.append(types.CodeAction(
                    title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                    is_preferred=safe, edit=self.workspace_edit(uri, version, text, edits)))
            with_noqa, changed, _ = add_noqa(SourceFile(text), [(d.line, d.code)])
            if changed:
                noqa.append(types.CodeAction(
                    title=f"Add `# noqa: {d.code}`", kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    edit=self.workspace_edit(uri, version, text, _edits(text, with_noqa))))
        actions = fixes + noqa
        if fixes and any_safe:
            actions.extend(self.fix_all_action(uri, version, path, text, types.CodeActionKind.QuickFix))
        return actions

    def workspace_edit(self, uri: str, version: Optional[int], text: str,
                       edits: Sequence[TextEdit]) -> types.WorkspaceEdit:
        return self.documents_edit([(uri, version, text, edits)])

    def documents_edit(self, changes: Sequence[Tuple[str, Optional[int], str, Sequence[TextEdit]]]
                       ) -> types.WorkspaceEdit:
        """One edit of several documents (a notebook's cells): (uri, version, text, edits) each."""
        codec = self.workspace.position_codec
        capabilities = self.client_capabilities.workspace
        document_changes = bool(capabilities and capabilities.workspace_edit
                                and capabilities.workspace_edit.document_changes)
        if document_changes:
            # Versioned: the editor refuses the edit if the buffer changed since.
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                edits=lsp_text_edits(text, codec, edits)) for uri, version, text, edits in changes])
        return types.WorkspaceEdit(changes={uri: lsp_text_edits(text, codec, edits) for uri, _, text, edits in changes})

    def fix_all_edit(self, uri: str) -> Optional[types.WorkspaceEdit]:
        document = self.open_document(uri)
        if document is None or not self.wants(uri):
            return None
        text = document.source
        fixed = self.workbench.fix_all(self.document_path(uri), text)
        if fixed is None:
            return None
        return self.workspace_edit(uri, document.version, text, _edits(text, fixed))

    # -- notebooks ------------------------------------------------------------

    def code_cells(self, notebook) -> List[Tuple[str, Optional[int], str]]:
        """(uri, version, text) of each code cell of ``notebook``, in order."""
        cells = []
        for cell in notebook.cells:
            if cell.kind == types.NotebookCellKind.Code:
                document = self.open_document(cell.document)
                cells.append((cell.document, document.version if document is not None else None,
                              document.source if document is not None else ""))
        return cells

    def cell_code_actions(self, notebook, uri: str, params: types.CodeActionParams) -> List[types.CodeAction]:
        """A cell's quick fixes, ``# noqa`` actions and fix-all, as ``code_actions`` gives a
        document's; the notebook's code cells are checked and fixed as one module, so
        one action may edit several cells."""
        cells = self.code_cells(notebook)
        index = next((n for n, (cell_uri, _, _) in enumerate(cells) if cell_uri == uri), None)
        if index is None:
            return []  # a markdown cell
        path, texts = self.document_path(notebook.uri), [text for _, _, text in cells]
        only = params.context.only
        actions: List[types.CodeAction] = []
        if _wanted(only, types.CodeActionKind.QuickFix):
            lines, codec, base = SourceFile(texts[index]).lines, self.workspace.position_codec, self.docs_base_url(path)
            found, any_safe = self.workbench.cell_fixes(path, texts, index, params.range.start.line + 1,
                                                        params.range.end.line + 1)
            fixes, noqa = [], []
            for d, changed, then in found:
                diagnostic = self.lsp_diagnostic(lines, codec, d, base)
                if changed:
                    safe = d.fix is not None and d.fix.safe and all(chained_safe for _, chained_safe in then)
                    title = f"Fix {d.code}: {d.message}" + (" (then " + ", ".join(c for c, _ in then) + ")"
                                                            if then else "") + ("" if safe else " (unsafe)")
                    fixes.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix,
                                                  diagnostics=[diagnostic], is_preferred=safe,
                                                  edit=self.cells_edit(cells, changed)))
                noted = self.workbench.cell_noqa(texts, index, d.line, d.code)
                if noted:
                    noqa.append(types.CodeAction(title=f"Add `# noqa: {d.code}`", kind=types.CodeActionKind.QuickFix,
                                                 diagnostics=[diagnostic], edit=self.cells_edit(cells, noted)))
            actions.extend(fixes + noqa)
            if fixes and any_safe:
                actions.extend(self.cells_fix_all_action(cells, path, types.CodeActionKind.QuickFix))
        if only and _wanted(only, FIX_ALL_KIND):
            actions.extend(self.cells_fix_all_action(cells, path, FIX_ALL_KIND))
        return actions

    def cells_fix_all_action(self, cells: Sequence[Tuple[str, Optional[int], str]], path: str,
                             kind: str) -> List[types.CodeAction]:
        changed = self.workbench.fix_all_cells(path, [text for _, _, text in cells])
        if not changed:
            return []
        return [types.CodeAction(title=FIX_ALL_TITLE, kind=kind, edit=self.cells_edit(cells, changed))]

    def cells_edit(self, cells: Sequence[Tuple[str, Optional[int], str]], changed: Dict[int, str]
                   ) -> types.WorkspaceEdit:
        """The edit that gives code cells (by index) their ``changed`` texts."""
        return self.documents_edit([(cells[n][0], cells[n][1], cells[n][2], _edits(cells[n][2], new))
                                    for n, new in sorted(changed.items())])

    def publish_notebook(self, uri: str) -> None:
        """Check a notebook's code cells as one module (as the CLI checks an
        ``.ipynb``) and publish each cell's findings to the cell."""
        try:
            by_cell = self.notebook_diagnostics(uri)
        except Exception:
            logger.exception("publishing diagnostics for %s failed", uri)
            return
        finally:
            self._last_check[uri] = time.monotonic()
        for cell_uri, diagnostics in by_cell.items():
            document = self.open_document(cell_uri)
            version = document.version if document is not None else None
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=cell_uri, version=version, diagnostics=diagnostics))

    def notebook_diagnostics(self, uri: str) -> Dict[str, List[types.Diagnostic]]:
        notebook = self.notebook(uri)
        if notebook is None:
            return {}
        cells = [cell.document for cell in notebook.cells if cell.kind == types.NotebookCellKind.Code]
        texts = {}
        for cell_uri in cells:
            document = self.open_document(cell_uri)
            texts[cell_uri] = document.source if document is not None else ""
        by_cell: Dict[str, List[types.Diagnostic]] = {cell_uri: [] for cell_uri in cells}
        found = self.workbench.check_cells(self.document_path(uri), [texts[c] for c in cells])
        if found.notice is not None or found.config_error is not None:
            message = found.notice or f"configuration error: {found.config_error}"
            if cells:
                by_cell[cells[0]] = [_whole_file_diagnostic(message, types.DiagnosticSeverity.Information)]
            return by_cell
        codec = self.workspace.position_codec
        base = self.docs_base_url(self.document_path(uri))
        for index, d in found.diagnostics:
            cell_uri = cells[index]
            by_cell[cell_uri].append(self.lsp_diagnostic(SourceFile(texts[cell_uri]).lines, codec, d, base))
        return by_cell

    # -- pull diagnostics, hover, settings ---------------------------------------

    def pull(self, uri: str, previous: Optional[str]) -> types.DocumentDiagnosticReport:
        document = self.open_document(uri)
        if document is None or not self.wants(uri):
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        text = document.source
        diagnostics = self.diagnostics_for(uri, text)
        self.settle_soon(uri)
        result_id = _result_id(diagnostics)
        if previous == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.RelatedFullDocumentDiagnosticReport(items=diagnostics, result_id=result_id)

    def hover(self, uri: str, position: types.Position) -> Optional[types.Hover]:
        """The docs of the rule whose code is under the cursor in a ``# noqa:``
        comment, or of the findings whose range holds the cursor."""
        document = self.open_document(uri)
        if document is None:
            return None
        lines = document.lines
        if position.line >= len(lines):
            return None
        line = lines[position.line]
        codes = noqa_codes_at(line, _character_at(line, position.character, self.workspace.position_codec))
        if not codes and self.wants(uri):
            text = document.source
            codec = self.workspace.position_codec
            outcome = self.workbench.check(self.document_path(uri), text)
            source_lines = SourceFile(text).lines
            for d in outcome.diagnostics:
                found = finding_range(source_lines, codec, d)
                if _holds(found, position) and d.code not in codes:
                    codes.append(d.code)
        pages = [page for page in (rule_page(code) for code in codes) if page]
        if not pages:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                        value="\n\n---\n\n".join(pages)))

    def show_settings(self, uri: Optional[str]) -> Dict[str, Any]:
        """What ``torchlint.showSettings`` answers: versions, the editor's settings,
        and for each open document (or ``uri``) the settings its check runs with."""
        import libcst
        import lsprotocol
        import pygls

        def version_of(module) -> str:
            return getattr(module, "__version__", None) or _distribution_version(module.__name__)

        info: Dict[str, Any] = {
            "torchlint": __version__, "python": sys.version.split()[0], "executable": sys.executable,
            "pygls": version_of(pygls), "lsprotocol": version_of(lsprotocol), "libcst": version_of(libcst),
            "editor_settings": dict(self.settings), "debounce_ms": round(self.debounce * 1000),
            "watching_files": self.watching, "diagnostics": "pull" if self.pulls else "push",
            "documents": {},
        }
        uris = [uri] if uri else [u for u in self.workspace.text_documents if self.wants(u)]
        uris += [] if uri else list(self.workspace.notebook_documents)
        for each in uris:
            info["documents"][each] = self.workbench.settings_of(self.document_path(each))
        return info

    def refresh_stale(self, paths: Optional[Sequence[str]] = None) -> None:
        """Re-check the open documents whose findings rest on files that changed on disk."""
        stale = set(self.workbench.stale_documents(paths))
        if not stale:
            return
        if self.pulls:
            workspace = self.client_capabilities.workspace
            diagnostics = workspace.diagnostics if workspace else None
            if diagnostics and diagnostics.refresh_support:
                self.workspace_diagnostic_refresh(None)
        for uri in [*self.workspace.text_documents, *self.workspace.notebook_documents]:
            if self.document_path(uri) in stale and (self.wants(uri) or self.notebook(uri) is not None):
                self.schedule(uri, now=True)

    async def poll(self) -> None:
        """For editors that cannot watch files: look at the files the findings rest on every ``poll_interval``."""
        while True:
            await asyncio.sleep(self.poll_interval)
            try:
                changed = self.workbench.changed_on_disk()
                if changed:
                    self.refresh_stale(changed)
            except Exception:
                logger.exception("looking for changed files failed")


def _light(diagnostics: Sequence[Diagnostic]) -> List[Diagnostic]:
    """The findings without their fixes' edits (which hold parse trees): publishing needs only whether they are safe."""
    return [d if d.fix is None else replace(d, fix=Fix((), safe=d.fix.safe)) for d in diagnostics]


def _edits(text: str, new_text: str) -> List[TextEdit]:
    return edits_between(SourceFile(text), SourceFile(new_text))


def _wanted(only: Optional[Sequence[str]], kind: str) -> bool:
    """Did the client ask for ``kind`` (``only`` lists kinds or their parents)?"""
    return not only or any(kind == asked or kind.startswith(asked + ".") for asked in only)


def _whole_file_diagnostic(message: str, severity: types.DiagnosticSeverity) -> types.Diagnostic:
    start = types.Position(line=0, character=0)
    return types.Diagnostic(range=types.Range(start=start, end=start), message=message,
                            severity=severity, source=SOURCE)


# --------------------------------------------------------------------------
# Editor settings: the CLI's options an editor may set
# --------------------------------------------------------------------------

# setting (as VS Code and ruff's server spell it, or as the configuration
# file does) -> (the CLI option's ``dest``, kind)
EDITOR_SETTINGS = {
    "select": ("select", "codes"), "ignore": ("ignore", "codes"),
    "extendSelect": ("extend_select", "codes"), "extend-select": ("extend_select", "codes"),
    "torchVersion": ("torch_version", "version"), "torch-version": ("torch_version", "version"),
    "targetTorchVersion": ("target_torch_version", "version"),
    "target-torch-version": ("target_torch_version", "version"),
    "unsafeFixes": ("unsafe_fixes", "bool"), "unsafe-fixes": ("unsafe_fixes", "bool"),
}
SERVER_OPTIONS = {"debounceMs", "showSyntaxErrors", "pollIntervalMs"}


def editor_settings(settings: Any) -> Tuple[Dict[str, Any], List[str]]:
    """The CLI options (by ``dest``) the editor's ``settings`` set, and what was
    wrong with them. They may be nested under ``"torchlint"`` or ``"settings"``
    (clients wrap them); codes as a list or a comma-separated string."""
    while isinstance(settings, dict) and len(settings) == 1 and next(iter(settings)) in ("torchlint", "settings"):
        settings = next(iter(settings.values()))
    if settings is None:
        return {}, []
    if not isinstance(settings, dict):
        return {}, [f"settings must be an object, not {type(settings).__name__}"]
    options: Dict[str, Any] = {}
    problems: List[str] = []
    for name, value in settings.items():
        if name in SERVER_OPTIONS:
            continue
        if name not in EDITOR_SETTINGS:
            problems.append(f"unknown setting {name!r} (known: {', '.join(sorted(EDITOR_SETTINGS))})")
            continue
        dest, kind = EDITOR_SETTINGS[name]
        if value is None:
            continue
        if kind == "codes" and isinstance(value, list) and all(isinstance(v, str) for v in value):
            options[dest] = ",".join(value)
        elif kind in ("codes", "version") and isinstance(value, str):
            options[dest] = value
        elif kind == "bool" and isinstance(value, bool):
            options[dest] = value
        else:
            problems.append(f"setting {name!r}: {value!r} is not a {'list of codes' if kind == 'codes' else kind}")
    return options, problems


def with_settings(defaults: argparse.Namespace, options: Dict[str, Any]) -> argparse.Namespace:
    """The CLI's options as if the editor's settings were given on the command line
    (so they win over the configuration file, as command-line options do)."""
    merged = argparse.Namespace(**vars(defaults))
    for dest, value in options.items():
        setattr(merged, dest, value)
    return merged


# --------------------------------------------------------------------------
# Hover: rule docs
# --------------------------------------------------------------------------

_NOQA = re.compile(r"#\s*noqa\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)", re.IGNORECASE)
_CODE = re.compile(r"[A-Za-z]+[0-9]+")


def noqa_codes_at(line: str, character: int) -> List[str]:
    """The code of a ``# noqa: TL101, TL203`` comment at ``character`` (0-based) of ``line``."""
    for noqa in _NOQA.finditer(line):
        for code in _CODE.finditer(noqa.group("codes")):
            start, end = noqa.start("codes") + code.start(), noqa.start("codes") + code.end()
            if start <= character <= end:
                return [code.group(0).upper()]
    return []


def rule_page(code: str) -> Optional[str]:
    """The rule's docs page (as ``torchlint rule CODE`` prints it), with a link to it."""
    from torchlint.frontends.rule_command import find_rule, render_page
    from torchlint.rules import all_rules

    rule = find_rule(all_rules(), code)
    if rule is None:
        return None
    return render_page(rule).rstrip() + f"\n\n[{rule.code} online]({rule_url(rule.code)})"


def _character_at(line: str, units: int, codec: PositionCodec) -> int:
    """The character (0-based) at ``units`` client code units into ``line``."""
    position = codec.position_from_client_units([line], types.Position(line=0, character=units))
    return position.character


def _holds(found: types.Range, position: types.Position) -> bool:
    start, end = found.start, found.end
    return (start.line, start.character) <= (position.line, position.character) <= (end.line, end.character)


def _result_id(diagnostics: Sequence[types.Diagnostic]) -> str:
    import hashlib
    import json

    from lsprotocol import converters

    converter = converters.get_converter()
    payload = json.dumps([converter.unstructure(d) for d in diagnostics], sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def _distribution_version(name: str) -> str:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return "unknown"


def build_server(defaults: argparse.Namespace) -> TorchlintServer:
    server = TorchlintServer(defaults)

    @server.feature(types.INITIALIZE)
    def initialize(ls: TorchlintServer, params: types.InitializeParams) -> None:
        options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        if isinstance(options.get("debounceMs"), (int, float)) and options["debounceMs"] >= 0:
            ls.debounce = options["debounceMs"] / 1000
        if isinstance(options.get("showSyntaxErrors"), bool):
            ls.show_syntax_errors = options["showSyntaxErrors"]
        if isinstance(options.get("pollIntervalMs"), (int, float)) and options["pollIntervalMs"] >= 0:
            ls.poll_interval = options["pollIntervalMs"] / 1000
        ls.settings_problems = ls.apply_settings(options)  # said once the editor can show messages
        # The editor waits for this answer anyway: the first document opened
        # then finds the rules and engines loaded.
        ls.workbench.warm(ls.workspace.root_path or os.getcwd())
        ls.warm_protocol()

    @server.feature(types.INITIALIZED)
    async def initialized(ls: TorchlintServer, params: types.InitializedParams) -> None:
        for problem in ls.settings_problems:
            ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning,
                                                           message=f"torchlint: {problem}"))
        workspace = ls.client_capabilities.workspace
        watched = workspace.did_change_watched_files if workspace else None
        if watched and watched.dynamic_registration:
            # The editor watches the project's modules and configuration files for us.
            watchers = [types.FileSystemWatcher(glob_pattern=pattern)
                        for pattern in ("**/*.py", "**/*.pyi", *("**/" + name for name in CONFIG_FILES))]
            ls.watching = "client"
            try:
                await ls.client_register_capability_async(types.RegistrationParams(registrations=[types.Registration(
                    id=WATCH_REGISTRATION, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))
                return
            except Exception:
                logger.warning("the editor refused to watch files; polling them instead", exc_info=True)
        if ls.poll_interval > 0:
            ls.watching = "poll"
            asyncio.ensure_future(ls.poll())

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: TorchlintServer, params: types.DidChangeWatchedFilesParams) -> None:
        paths = [to_fs_path(change.uri) for change in params.changes]
        paths = [path for path in paths if path]
        if any(os.path.basename(path) in CONFIG_FILES for path in paths):
            for other in [*ls.workspace.text_documents, *ls.workspace.notebook_documents]:
                if ls.wants(other) or ls.notebook(other) is not None:
                    ls.schedule(other, now=True)
        ls.refresh_stale(paths)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: TorchlintServer, params: types.DidChangeConfigurationParams) -> None:
        for problem in ls.apply_settings(params.settings):
            ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning,
                                                           message=f"torchlint: {problem}"))
        if ls.pulls:
            workspace = ls.client_capabilities.workspace
            if workspace and workspace.diagnostics and workspace.diagnostics.refresh_support:
                ls.workspace_diagnostic_refresh(None)
        for other in [*ls.workspace.text_documents, *ls.workspace.notebook_documents]:
            if ls.wants(other) or ls.notebook(other) is not None:
                ls.schedule(other, now=True)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TorchlintServer, params: types.DidOpenTextDocumentParams) -> None:
        if ls.wants(params.text_document.uri):
            # Reopened after a module it imports changed: not the old findings.
            ls.refresh_stale(None)
            ls.schedule(params.text_document.uri, now=True)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_did_open(ls: TorchlintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, now=True)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_did_change(ls: TorchlintServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_did_save(ls: TorchlintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, now=True)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: TorchlintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        handle = ls._pending.pop(params.notebook_document.uri, None)
        if handle is not None:
            handle.cancel()
        for cell in params.cell_text_documents:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                    types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True,
                                            workspace_diagnostics=False))
    def document_diagnostic(ls: TorchlintServer, params: types.DocumentDiagnosticParams
                            ) -> types.DocumentDiagnosticReport:
        return ls.pull(params.text_document.uri, params.previous_result_id)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: TorchlintServer, params: types.HoverParams) -> Optional[types.Hover]:
        try:
            return ls.hover(params.text_document.uri, params.position)
        except Exception:
            logger.exception("hover in %s failed", params.text_document.uri)
            return None

    @server.command(SHOW_SETTINGS_COMMAND)
    def show_settings(ls: TorchlintServer, *arguments: Any) -> Dict[str, Any]:
        """The versions and settings in use (for a bug report): answered, and logged to the editor's output."""
        import json

        target = arguments[0] if arguments else None
        uri = target.get("uri") if isinstance(target, dict) else target if isinstance(target, str) else None
        info = ls.show_settings(uri)
        ls.window_log_message(types.LogMessageParams(type=types.MessageType.Info,
                                                     message="torchlint settings:\n" + json.dumps(info, indent=2)))
        return info

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TorchlintServer, params: types.DidChangeTextDocumentParams) -> None:
        if ls.wants(params.text_document.uri):
            ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: TorchlintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.refresh_stale([ls.document_path(uri)])  # a module other documents import, saved
        if uri.endswith(tuple("/" + name for name in CONFIG_FILES)):
            # A configuration changed: every open document may read it.
            for other in list(ls.workspace.text_documents):
                if ls.wants(other):
                    ls.schedule(other, now=True)
        elif ls.wants(uri):
            ls.schedule(uri, now=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TorchlintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND],
                                resolve_provider=True),
    )
    def code_action(ls: TorchlintServer, params: types.CodeActionParams) -> List[types.CodeAction]:
        try:
            return ls.code_actions(params)
        except Exception:
            logger.exception("code actions for %s failed", params.text_document.uri)
            return []

    @server.feature(types.CODE_ACTION_RESOLVE)
    def code_action_resolve(ls: TorchlintServer, action: types.CodeAction) -> types.CodeAction:
        try:
            return ls.resolve(action)
        except Exception:
            logger.exception("resolving %r failed", action.title)
            return action

    @server.command(FIX_ALL_COMMAND)
    async def apply_fix_all(ls: TorchlintServer, *arguments: Any) -> Optional[bool]:
        """For clients without code-action edits: fix the document named by
        ``{"uri": ...}`` (or the uri itself) through ``workspace/applyEdit``."""
        target = arguments[0] if arguments else None
        uri = target.get("uri") if isinstance(target, dict) else target
        if not isinstance(uri, str):
            raise ValueError(f"{FIX_ALL_COMMAND} needs a document: [{{\"uri\": ...}}]")
        edit = ls.fix_all_edit(uri)
        if edit is None:
            return False
        result = await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=FIX_ALL_TITLE))
        return bool(result.applied)

    return server


def main(argv: Sequence[str], stderr: TextIO, defaults: argparse.Namespace) -> int:
    """``defaults``: the CLI's options parsed from an empty command line."""
    parser = argparse.ArgumentParser(
        prog="torchlint server",
        description="Run torchlint as a language server (LSP over stdin and stdout) for editors.",
    )
    parser.add_argument("--log-level", choices=["error", "warning", "info", "debug"], default="warning",
                        help="what to log on stderr (default: warning)")
    args = parser.parse_args(list(argv))
    # stdout carries the protocol: logs go to stderr only.
    logging.basicConfig(stream=stderr, level=args.log_level.upper(),
                        format="torchlint server: %(levelname)s: %(message)s")
    # The protocol gets its own copies of stdin and stdout; the process's
    # stdout then goes to stderr, so a stray print anywhere cannot corrupt
    # the message stream.
    protocol_in = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    server = build_server(defaults)
    server.start_io(protocol_in, protocol_out)
    # LSP: exit status 0 after a shutdown request, 1 when told to exit without one.
    return 0 if getattr(server.protocol, "_shutdown", True) else 1
