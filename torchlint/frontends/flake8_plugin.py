"""flake8 plugin: the same engine and findings as the CLI, under code ``TL``.

flake8 hands us the file's ``lines`` (from stdin too, when the filename is
``-``), so we never re-open the file. flake8 applies ``# noqa`` itself; the
plugin never raises and never prints: a file libcst cannot parse, or any
internal failure, yields nothing rather than killing the whole flake8 run.

Opt-in rules (TL117, TL302-TL304) run only when named: ``--torchlint-enable
TL302,TL303`` (``torchlint-enable`` in flake8's config), or their full code in
``--select`` / ``--extend-select``. flake8's own ``--select TL`` shows every
code a plugin yields, so it cannot be what turns them on.
"""

from __future__ import annotations

import ast
import gc
import os
import sys
from typing import Iterator, List, Optional, Sequence, Tuple

from torchlint import __version__
from torchlint.core.settings import Settings, SettingsError, Version, parse_release
from torchlint.core.source import SourceFile, no_cycle_collection
from torchlint.analysis.project import Project
from torchlint.analysis.summaries import SummaryStore
from torchlint.engine.linter import Engine
from torchlint.rules import all_rules
from torchlint.run.config import cache_directory, find_config, project_root
from torchlint.run.project_files import FileFinder, project_roots
from torchlint.run.project_metadata import declared_torch_floor, declares_no_torch_floor, least_torch_release
from torchlint.run.selection import (
    SelectionError,
    enabled_rules,
    parse_codes,
    parse_enable,
)
from torchlint.run.summaries import DiskSummaries


def _version_option(options, name: str):
    """The version an option gives (None when not given); a bad one is a config
    error naming that option, on stderr like flake8's own."""
    text = getattr(options, name, None)
    if not text:
        return None
    try:
        return parse_release(text)
    except SettingsError as exc:
        sys.stderr.write(f"torchlint: error: --{name.replace('_', '-')}: {exc}\n")
        raise SystemExit(2) from None


def _declared_floor() -> Optional[Version]:
    """As the command does: without a configured torch version, the oldest
    torch the metadata of the project flake8 runs in declares."""
    declared = declared_torch_floor(os.getcwd())
    return declared.version if declared else None


def _least_release() -> Optional[Version]:
    """As the command does: where no floor is declared, the first torch for the Python
    the project's metadata declares (``least_torch_release``)."""
    least = least_torch_release(os.getcwd())
    return least.version if least else None


def _project(settings: Settings, keep_summaries: bool) -> Project:
    """The project model over the project flake8 runs in, as the command finds
    it (the configuration file's folder, else the git work tree): the same
    modules the command would consult, so the findings are the same. What it
    learns about them is kept in the command's cache directory, shared with
    the command and between flake8's workers (``run/summaries.py``)."""
    cwd = os.getcwd()
    try:
        config = find_config(cwd, all_rules())
    except Exception:  # a broken configuration is the command's to report
        config = None
    root = project_root(cwd, config)
    store = DiskSummaries(cache_directory(root), settings) if keep_summaries else SummaryStore()
    return Project(FileFinder(project_roots(root, ())), settings, store)


class TorchlintChecker:
    name = "torchlint"
    version = __version__
    _engine: Optional[Engine] = None
    _settings = Settings()
    _enable: Tuple[str, ...] = ()
    _keep_summaries = True
    _settled = False  # see ``_findings``

    @classmethod
    def add_options(cls, parser) -> None:
        parser.add_option(
            "--torch-version",
            metavar="X.Y",
            default=None,
            parse_from_config=True,
            help="torchlint: oldest torch the code must run on (default: the lowest torch the project's "
                 "metadata requires, else no constraint)",
        )
        parser.add_option(
            "--target-torch-version",
            metavar="X.Y",
            default=None,
            parse_from_config=True,
            help="torchlint: torch the code moves to; decides what is removed or deprecated there "
                 "(default: the newest release torchlint knows)",
        )
        parser.add_option(
            "--torchlint-enable",
            metavar="CODES",
            default=None,
            parse_from_config=True,
            help="torchlint: comma-separated opt-in rules to run, by full code (e.g. TL302,TL303)",
        )
        parser.add_option(
            "--torchlint-no-cache",
            action="store_true",
            default=False,
            parse_from_config=True,
            help="torchlint: do not read or write module summaries in the cache directory "
                 "(default: $TORCHLINT_CACHE_DIR, else .torchlint_cache at the project root)",
        )

    @classmethod
    def parse_options(cls, options) -> None:
        floor = _version_option(options, "torch_version")
        target = _version_option(options, "target_torch_version")
        try:
            floor = floor if floor is not None else _declared_floor()
            cls._settings = Settings(torch_version=floor, target_torch_version=target,
                                     least_torch_version=_least_release() if floor is None else None,
                                     floor_from_code=floor is None and declares_no_torch_floor(os.getcwd()))
        except SettingsError as exc:  # a floor newer than the target: say so on stderr, like flake8 does
            sys.stderr.write(f"torchlint: error: --torch-version / --target-torch-version: {exc}\n")
            raise SystemExit(2) from None
        try:
            enable = parse_enable(_text(getattr(options, "torchlint_enable", None)), all_rules())
        except SelectionError as exc:
            sys.stderr.write(f"torchlint: error: --torchlint-enable: {exc}\n")
            raise SystemExit(2) from None
        # A full code in flake8's own selection names the rule explicitly too.
        for option in ("select", "extend_select"):
            enable.extend(parse_codes(_text(getattr(options, option, None))))
        cls._enable = tuple(enable)
        cls._keep_summaries = not getattr(options, "torchlint_no_cache", False)
        cls._engine = None

        _parse_torch_era_syntax(_selected_in_flake8(options, "TL115"))

    @classmethod
    def engine(cls) -> Engine:
        if cls._engine is None:
            cls._engine = Engine(enabled_rules(all_rules(), cls._enable), cls._settings, honour_noqa=False,
                                 project=_project(cls._settings, cls._keep_summaries))
            # libcst, the rules and the torch tables now live as long as the
            # process: left to the collector, every collection flake8's own
            # checks trigger would walk them again (measured on transformers:
            # flake8's own work 1.2x as slow with the plugin loaded). Frozen,
            # they are left out of collections; nothing they hold is garbage.
            gc.freeze()
        return cls._engine

    def __init__(self, tree: ast.AST, lines: Sequence[str], filename: str = "") -> None:
        # flake8's own ast tree of the file: the outline screen reads it, so
        # most files are never parsed again; the rest are parsed from
        # ``lines`` with libcst. A tree of a repaired text (``async`` renamed)
        # is not the file's: the engine repairs and maps columns itself.
        self._repaired = getattr(tree, _REPAIRED, False)
        self._tree = tree if isinstance(tree, ast.Module) and not self._repaired else None
        self._lines = lines
        self._filename = filename

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        for line, column, text in self._findings():
            yield line, column, text, type(self)

    def _findings(self) -> List[Tuple[int, int, str]]:
        try:
            engine = self.engine()
            # What the check allocates dies with it: collections in between
            # would walk it all and free nothing (``run/session.py``). It must
            # be gone before collections resume too, or the first one walks it.
            with no_cycle_collection():
                found = self._check(engine)
            if not TorchlintChecker._settled:
                # The first check imported what the engine loads lazily and built
                # the tables rules fill on first use: frozen too, for the same reason.
                TorchlintChecker._settled = True
                gc.freeze()
        except Exception:  # parse failures and anything unforeseen: stay silent
            return []
        return found

    def _check(self, engine: Engine) -> List[Tuple[int, int, str]]:
        """The findings, as flake8 takes them: the text, its trees and the
        check's result are freed when this returns."""
        source = SourceFile("".join(self._lines), tree=self._tree)
        result = engine.check(source, syntax_checked=not self._repaired, module=engine.module_for(self._filename))
        return [(d.line, d.column, f"{d.code} {d.message}") for d in result.diagnostics]


def _text(value) -> Optional[str]:
    """flake8 hands options over as strings or, for comma-separated ones, lists."""
    if value is None or isinstance(value, str):
        return value
    return ",".join(str(part) for part in value)


# --- torch-era syntax ---------------------------------------------------------

_REPAIRED = "torchlint_repaired"  # set on a tree parsed from a repaired text


def _selected_in_flake8(options, code: str) -> bool:
    """Does flake8's ``--select``/``--ignore`` (and their extend- forms) let ``code`` through?"""
    try:
        from flake8.style_guide import Decision, DecisionEngine

        return DecisionEngine(options).decision_for(code) is Decision.Selected
    except Exception:  # another flake8 than the one we know: keep its E999
        return False


def _parse_torch_era_syntax(enabled: bool) -> None:
    """Let flake8 parse a file Python 3 rejects only for torch-era ``async``
    as TL115 repairs it (or, when ``enabled`` is False, undo that)."""
    try:
        from flake8.processor import FileProcessor
    except ImportError:
        return
    original = getattr(FileProcessor.build_ast, "torchlint_original", None)
    if not enabled:
        if original is not None:
            FileProcessor.build_ast = original
        return
    if original is not None:
        return
    plain = FileProcessor.build_ast

    def build_ast(processor) -> ast.AST:
        try:
            return plain(processor)
        except SyntaxError:
            tree = _repaired_tree("".join(processor.lines))
            if tree is None:
                raise  # flake8's E999, as without the plugin
            return tree

    build_ast.torchlint_original = plain  # type: ignore[attr-defined]
    FileProcessor.build_ast = build_ast


def _repaired_tree(text: str) -> Optional[ast.Module]:
    """Python's tree of ``text`` with its torch-era syntax repaired, marked as
    such; None when no rule repairs it or the repaired text still fails."""
    repaired = _repaired_text(text)
    if repaired is None:
        return None
    try:
        tree = ast.parse(repaired)
    except SyntaxError:
        return None
    setattr(tree, _REPAIRED, True)
    return tree


def _repaired_text(text: str) -> Optional[str]:
    for rule in TorchlintChecker.engine().rules:
        repair = rule.repair_syntax(text)
        if repair is not None:
            return repair.text
    return None
