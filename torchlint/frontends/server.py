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
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, TextIO, Tuple
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import PositionCodec

from torchlint import __version__
from torchlint.core.diagnostic import Diagnostic, Fix, ParseError, Unsupported
from torchlint.core.noqa import add_noqa
from torchlint.core.settings import SettingsError
from torchlint.core.source import SourceFile
from torchlint.engine.incremental import Checked, kept_for_next, recheck
from torchlint.engine.narrowing import carry_parses
from torchlint.engine.textedits import TextEdit, edits_between, preview_fix, preview_on_repaired
from torchlint.rules import rule_specs
from torchlint.run.config import CONFIG_FILES, ConfigError, Options, resolve
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
RESULTS_KEPT = 32  # texts whose findings are remembered (undo, redo, saves)
PROJECTS_KEPT = 16  # configurations whose engines stay loaded
DOCUMENTS_KEPT = 16  # documents whose last check (text and Python's tree) is kept to re-check changes

logger = logging.getLogger("torchlint.server")


# --------------------------------------------------------------------------
# The warm state: configuration, engines and results (no LSP in here)
# --------------------------------------------------------------------------


@dataclass
class Project:
    """The options and engines of one configuration."""

    options: Options
    linter: Linter


@dataclass
class Outcome:
    """What checking one text gave: findings, or why there are none."""

    diagnostics: List[Diagnostic] = field(default_factory=list)
    parse_error: Optional[ParseError] = None  # the text is not valid Python
    skipped: Optional[str] = None  # valid Python torchlint cannot analyse, or an excluded file
    config_error: Optional[str] = None
    internal_errors: List[str] = field(default_factory=list)


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

    # -- checking --------------------------------------------------------

    def check(self, path: str, text: str) -> Outcome:
        """The findings in ``text``, as ``torchlint --stdin-filename path`` reports them."""
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
        if project.options.is_excluded_with_parents(path):
            return Outcome(skipped="excluded by the configuration")
        engine = project.linter.engine_for(path)
        # The last complete check of this document: a change confined to one
        # def or class re-checks only it (``engine.incremental``).
        previous = self._checked.pop((key, path), None)
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
                return Outcome(light, internal_errors=list(rechecked.result.internal_errors))
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
        # Keep what publishing needs; the fixes hold parse trees.
        light = _light(result.diagnostics)
        if result.repair is None and source.parsed:
            # Only the text and Python's tree: not libcst's trees the check made.
            kept = kept_for_next(source)
            if previous is not None:  # libcst's pieces of its last focused check: keyed by text, still good
                carry_parses(previous.source, kept)
            self._keep(key, path, Checked(kept, light))
        return Outcome(light, internal_errors=list(result.internal_errors))

    def _keep(self, key: Tuple, path: str, checked: Checked) -> None:
        self._checked[(key, path)] = checked
        while len(self._checked) > DOCUMENTS_KEPT:
            del self._checked[next(iter(self._checked))]

    def forget(self, path: str) -> None:
        """The document at ``path`` was closed: drop what is kept to re-check it."""
        for kept in [k for k in self._checked if k[1] == path]:
            del self._checked[kept]

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

    def fix_all(self, path: str, text: str) -> Optional[str]:
        """``text`` as ``torchlint --fix`` (safe fixes only) leaves it; None when nothing changes."""

        def compute(project: Project):
            engine = project.linter.engine_for(path)
            fixed = engine.fix(text, unsafe=False, module=engine.module_for(path)).source
            return fixed if fixed != text else None

        return self._memo("fix_all", path, text, compute, default=None)

    def _memo(self, what: str, path: str, text: str, compute, default):
        try:
            key, project = self.project_for(path)
        except (ConfigError, SelectionError, SettingsError):
            return default
        if project.options.is_excluded_with_parents(path):
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
                    edits = preview_fix(self.result.module, d.fix)
                except Exception:  # a fixer bug: no quick fix for this finding
                    logger.exception("previewing the %s fix failed", d.code)
            if d.fix is not None and self.result.repair is not None:  # TL115: back to the text as written
                edits = preview_on_repaired(self.result.repair, d, edits)
            self._previews[index] = edits
        return self._previews[index]


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


class TorchlintServer(LanguageServer):
    def __init__(self, defaults: argparse.Namespace) -> None:
        super().__init__(SOURCE, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.workbench = Workbench(defaults)
        self.debounce = DEFAULT_DEBOUNCE_MS / 1000
        self.show_syntax_errors = True
        self._pending: Dict[str, Any] = {}  # uri -> scheduled check (asyncio handle)
        self._last_check: Dict[str, float] = {}  # uri -> when it was last checked

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
        """Python buffers only (notebooks and other languages are left alone)."""
        document = self.open_document(uri)
        if document is None:
            return False
        return document.language_id == "python" or uri.endswith((".py", ".pyi"))

    def schedule(self, uri: str, now: bool = False) -> None:
        """Check ``uri`` at once, or (for changes) when the debounce time since its last check is up."""
        if uri in self._pending:
            if not now:
                return  # the pending check will read the newest text
            self._pending.pop(uri).cancel()
        wait = 0.0 if now else max(0.0, self._last_check.get(uri, 0.0) + self.debounce - time.monotonic())
        loop = asyncio.get_running_loop()
        self._pending[uri] = loop.call_later(wait, self.publish, uri)

    def forget(self, uri: str) -> None:
        handle = self._pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        self._last_check.pop(uri, None)
        self.workbench.forget(self.document_path(uri))
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def publish(self, uri: str) -> None:
        self._pending.pop(uri, None)
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

    def diagnostics_for(self, uri: str, text: str) -> List[types.Diagnostic]:
        outcome = self.workbench.check(self.document_path(uri), text)
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
        return [self.lsp_diagnostic(lines, codec, d) for d in outcome.diagnostics]

    @staticmethod
    def lsp_diagnostic(lines: Sequence[str], codec: PositionCodec, d: Diagnostic) -> types.Diagnostic:
        fix = None if d.fix is None else ("safe" if d.fix.safe else "unsafe")
        return types.Diagnostic(
            range=finding_range(lines, codec, d),
            message=d.message,
            severity=types.DiagnosticSeverity.Warning,
            source=SOURCE,
            code=d.code,
            code_description=types.CodeDescription(href=rule_url(d.code)),
            data={"fix": fix},
        )

    # -- code actions --------------------------------------------------------

    def code_actions(self, params: types.CodeActionParams) -> List[types.CodeAction]:
        uri = params.text_document.uri
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
            diagnostic = self.lsp_diagnostic(lines, codec, d)
            if edits:
                safe = d.fix is not None and d.fix.safe
                title = f"Fix {d.code}: {d.message}" + ("" if safe else " (unsafe)")
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
        text_edits = lsp_text_edits(text, self.workspace.position_codec, edits)
        capabilities = self.client_capabilities.workspace
        document_changes = bool(capabilities and capabilities.workspace_edit
                                and capabilities.workspace_edit.document_changes)
        if document_changes:
            # Versioned: the editor refuses the edit if the buffer changed since.
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                edits=text_edits)])
        return types.WorkspaceEdit(changes={uri: text_edits})

    def fix_all_edit(self, uri: str) -> Optional[types.WorkspaceEdit]:
        document = self.open_document(uri)
        if document is None or not self.wants(uri):
            return None
        text = document.source
        fixed = self.workbench.fix_all(self.document_path(uri), text)
        if fixed is None:
            return None
        return self.workspace_edit(uri, document.version, text, _edits(text, fixed))


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


def build_server(defaults: argparse.Namespace) -> TorchlintServer:
    server = TorchlintServer(defaults)

    @server.feature(types.INITIALIZE)
    def initialize(ls: TorchlintServer, params: types.InitializeParams) -> None:
        options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        if isinstance(options.get("debounceMs"), (int, float)) and options["debounceMs"] >= 0:
            ls.debounce = options["debounceMs"] / 1000
        if isinstance(options.get("showSyntaxErrors"), bool):
            ls.show_syntax_errors = options["showSyntaxErrors"]

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TorchlintServer, params: types.DidOpenTextDocumentParams) -> None:
        if ls.wants(params.text_document.uri):
            ls.schedule(params.text_document.uri, now=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TorchlintServer, params: types.DidChangeTextDocumentParams) -> None:
        if ls.wants(params.text_document.uri):
            ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: TorchlintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
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
