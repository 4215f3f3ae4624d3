"""The project model: what the user's own modules define, for inference across files.

A 2018 training script gets its losses from the project's loss classes
(``loss_l, loss_c = criterion(out, targets)``), its helpers' results
(``loss = train(...)``) and its names through ``from model import *``. Checking
one file, torchlint asks the project about the names it imports:

- what a star import binds (``exports``, from Python's tree of the module:
  ``__all__``, or its public top-level names, following further star imports);
- what calling a project function returns, what an instance of a project
  class gives when called (``forward`` for an ``nn.Module``), what its methods
  return and what its attributes hold (the assignments ``self.x = ...`` in its
  methods), answered by the same inference that checks a file, run over the
  defining module (parsed whole, once, when first asked).

Modules are found by a ``Finder`` (the run layer's, over the file system:
the importer's own folder, the project roots); ``register`` gives the text
being checked, which wins over the file on disk. A module that cannot be read
or parsed is simply unknown: every question about it answers "unknown".
torchlint never imports or runs the code: everything comes from its text.
"""

from __future__ import annotations

import ast
import os
import re
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Mapping, Optional, Set, Tuple, TypeVar

import libcst as cst

from torchlint.analysis.cutting import (
    _DEFINITIONS,
    _ending,
    _header,
    _names_in,
    cut_body,
    body_on_own_lines,
    cuttable,
    first_line,
    last_line,
)
from torchlint.analysis.import_floor import may_need_a_release, needed_release
from torchlint.analysis.integral import IntegerValues
from torchlint.analysis.call_sites import calls_passing
from torchlint.analysis.checkpoint_files import holds_cpu_tensors_only
from torchlint.analysis.device_gates import gpu_only_program, has_cpu_mode, runs_as_program
from torchlint.analysis.inference import UNKNOWN, CallTarget, Inference, Kind, ProjectLink, SavedInFolder, Value, meet
from torchlint.analysis.outline import Outline, dotted
from torchlint.analysis.saved_files import combine, folder_saves
from torchlint.analysis.summaries import SummaryStore, decode, encode
from torchlint.analysis.sys_path import added_folders
from torchlint.analysis.configs import configuration_globals
from torchlint.analysis.version_gates import version_flags
from torchlint.analysis.version_tests import VersionHelper, called_with_versions, oldest_release_told_apart, version_helpers
from torchlint.analysis.specialise import Arguments, spelled as spelled_arguments
from torchlint.core.dependencies import LISTING, PROBE, TREE, Resolution, content_digest
from torchlint.core.diagnostic import ParseError, Unsupported
from torchlint.core.legacy_syntax import async_keyword_sites, may_be_python2, python3_reading, rename_async_keywords
from torchlint.core.settings import Settings
from torchlint.core.source import SourceFile
from torchlint.knowledge import torch_api as api


@dataclass(frozen=True)
class ModuleRef:
    """One module of the project: ``key`` identifies it (its path), ``name`` is
    its dotted name from its root ("pkg.sub.mod"), used for relative imports."""

    key: str
    name: str
    is_package: bool = False


class Finder:
    """Where the project's modules are; this one knows none (one text checked alone)."""

    # Does a module this finder does not find lie outside the project (True: it
    # searched the file system), or is the project simply unknown (False)?
    searches_files = False

    def module_for(self, path: str) -> ModuleRef:
        """The module a checked file (or buffer) named ``path`` is."""
        stem = path.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
        return ModuleRef(path, stem or "__main__")

    def digest(self, key: str) -> Optional[str]:
        """The digest of the bytes read for module ``key`` (for the result cache);
        for ``PROBE`` + a place, what an import found there (``core.dependencies``)."""
        return None

    def digest_of_text(self, key: str, text: str) -> Optional[str]:
        """The digest of module ``key``'s bytes if they decode to ``text`` (a
        text handed over without its bytes, flake8's), else None."""
        return None

    def resolve(self, name: str, importer: ModuleRef, first: Tuple[str, ...] = (),
                last: Tuple[str, ...] = ()) -> Resolution:
        """Where an import of absolute ``name`` in ``importer`` leads (the file of
        the project's module, or None) and every place probed on the way
        (``core.dependencies.resolve``); ``first``, ``last``: folders the importer
        puts on ``sys.path`` in front of the others and after them."""
        return Resolution(None, False, ())

    def read(self, module: ModuleRef) -> Optional[SourceFile]:
        return None

    def neighbours(self, near: ModuleRef) -> Optional[List[ModuleRef]]:
        """The modules in ``near``'s folder (``near`` too), for the calls of a
        helper module's defs in the scripts beside it. None when they cannot be
        listed (this finder knows no files, or the folder holds too many)."""
        return None

    def scripts_project(self, near: ModuleRef) -> Optional[Tuple[str, List[ModuleRef]]]:
        """The root of the project ``near`` belongs to and every module under it, where
        that project is not a distribution (no packaging metadata from the root down to
        ``near``'s folder) and small enough to read whole: then only its own modules
        import ``near``, and its defs' calls are all there. None otherwise."""
        return None

    def project_modules(self, near: ModuleRef) -> Optional[Iterator[ModuleRef]]:
        """Every module of the project ``near`` belongs to (its root and the project
        roots), for questions no import answers: who imports ``near``. None when
        they cannot all be listed (this finder knows no files)."""
        return None


T = TypeVar("T")
# The folders a module puts on ``sys.path``: in front of the others, and after them.
_Added = Tuple[Tuple[str, ...], Tuple[str, ...]]
# How many modules of a package ``Project.oldest_release_needed`` reads at most.
PACKAGE_NEEDS_MODULES = 3000
# How many of the project's modules ``names_imported_elsewhere`` reads at most;
# beyond it every name is taken as imported (the tidy step then keeps the import).
MAX_IMPORTER_SCAN = 5000

STANDALONE = ModuleRef("<text>", "__main__")
# How many modules keep their trees and analysis between questions, and how
# many checked texts stay registered: memory stays bounded on large trees
# (a module asked about again after being released is parsed again). Kept
# trees are walked by every full collection of the host process (flake8):
# four analysed modules needed no analysis twice on transformers or on the
# judged 2018 repositories, where 8 and 24 cost more collector time. While one
# check asks, up to ``ANALYSED_DURING_CHECK`` stay: a question about a parameter
# reads every caller of its def, whose own parameters ask their callers, and with
# four kept a 9-module project was analysed 278 times for one check (26 s), with
# eight 23 times (1.7 s). At the check's end the bound is four again.
ANALYSED_KEPT = 4
ANALYSED_DURING_CHECK = 12
REGISTERED_KEPT = 4
# A definition longer than this is not analysed (its answers are unknown): a
# 4,000-line Trainer class costs a second of parsing for every question about
# it, and what such classes hold is rarely a tensor a rule can use.
MAX_DEFINITION_LINES = 1500
# How many defs deep a parameter's value is followed through the calls of a
# folder of scripts (``parameter_from_project``): a chain of forwarding
# functions is then bounded in time and stack, whatever its length.
MAX_PASSED_ON = 8
# The key of a module's analysis with every def and class cut (not a Python name).
# How many modules ``run_first`` reads at most.
RUN_FIRST_MODULES = 16
TOLD_APART = "told apart, helpers too"  # the question: the oldest torch release a module's version tests tell apart
_HEADERS = "<headers>"
_WHOLE = "<whole>"  # an analysis of the module with nothing cut


class _Facts:
    """What a module's top level binds, from Python's tree of it."""

    def __init__(self, tree: ast.Module, path: str) -> None:
        # Folders the module puts on ``sys.path`` (``sys_path.py``), where its imports look too:
        # in front of every other folder, and after them.
        self.first_folders, self.last_folders = added_folders(tree, path) if os.path.isabs(path) else ([], [])
        self.imports: Dict[str, List[Tuple[str, str]]] = {}  # name -> [(module spelled, attribute or "")]
        self.defined: Dict[str, int] = {}  # name -> how many defs, classes and assignments bind it
        self.stars: List[str] = []  # modules star-imported, as spelled
        self.all: Optional[List[str]] = None
        # torch names the module rebinds when it runs (``torch.load = torch_load``): every
        # module importing it afterwards calls the project's replacement under torch's name.
        self.patched: List[str] = []
        # Every module a top-level import names, as spelled (``import a.b.c``: "a.b.c";
        # ``from .x import y``: ".x" and ".x.y", which may be a submodule).
        self.modules_imported: List[str] = []
        self.callables: List[str] = []  # names a top-level def or class binds
        for statement in _top_level(tree.body):
            self._note(statement)
        self.function_classes = self._function_classes(tree)

    def _function_classes(self, tree: ast.Module) -> List[str]:
        """The top-level classes deriving from torch's autograd ``Function``
        (through this module's imports) or from another of them: what an
        importer's screen asks before instantiating one (TL111)."""
        classes = [s for s in _top_level(tree.body) if isinstance(s, ast.ClassDef)]
        found: List[str] = []
        changed = True
        while changed:
            changed = False
            for classdef in classes:
                if classdef.name not in found and any(
                        self._qualified(base) in api.AUTOGRAD_FUNCTION_BASES or dotted(base) in found
                        for base in classdef.bases):
                    found.append(classdef.name)
                    changed = True
        return found

    def _qualified(self, expr: ast.AST) -> Optional[str]:
        """What a dotted name means through the module's imports (``F.x`` -> ``torch.nn.functional.x``)."""
        spelled = dotted(expr)
        if spelled is None:
            return None
        root, dot, rest = spelled.partition(".")
        imports = self.imports.get(root, ())
        if len(imports) != 1:
            return None
        module, attribute = imports[0]
        base = f"{module}.{attribute}" if attribute else module
        return base + dot + rest

    def _note(self, statement: ast.AST) -> None:
        if isinstance(statement, ast.Import):
            self.modules_imported.extend(alias.name for alias in statement.names)
            for alias in statement.names:
                if alias.asname:
                    self.imports.setdefault(alias.asname, []).append((alias.name, ""))
                else:
                    root = alias.name.split(".", 1)[0]
                    self.imports.setdefault(root, []).append((root, ""))
        elif isinstance(statement, ast.ImportFrom):
            module = "." * statement.level + (statement.module or "")
            self.modules_imported.append(module)
            self.modules_imported.extend(f"{module.rstrip('.')}.{alias.name}" if statement.module else module + alias.name
                                         for alias in statement.names if alias.name != "*")
            for alias in statement.names:
                if alias.name == "*":
                    self.stars.append(module)
                else:
                    self.imports.setdefault(alias.asname or alias.name, []).append((module, alias.name))
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.defined[statement.name] = self.defined.get(statement.name, 0) + 1
            self.callables.append(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                self._note_patch(target)
                for name in _target_names(target):
                    self.defined[name] = self.defined.get(name, 0) + 1
                    if name == "__all__":
                        self.all = _string_list(statement.value) if isinstance(statement, ast.Assign) else None

    def _note_patch(self, target: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            qualified = self._qualified(target)
            if qualified is not None and qualified.startswith(api.TORCH_PACKAGES):
                self.patched.append(qualified)

    def to_json(self) -> Dict[str, Any]:
        return {"added_folders": [self.first_folders, self.last_folders], "imports": self.imports, "defined": self.defined,
                "stars": self.stars, "all": self.all, "function_classes": self.function_classes,
                "patched": self.patched, "modules_imported": self.modules_imported, "callables": self.callables}

    @classmethod
    def from_json(cls, data: Any) -> "_Facts":
        """The facts ``to_json`` kept; ``ValueError`` for anything else."""
        facts = cls.__new__(cls)
        try:
            first, last = data["added_folders"]
            facts.first_folders, facts.last_folders = _strings(first), _strings(last)
            facts.imports = {name: [(module, attribute) for module, attribute in pairs]
                             for name, pairs in data["imports"].items()}
            facts.defined = {name: count for name, count in data["defined"].items() if type(count) is int}
            facts.stars = _strings(data["stars"])
            facts.all = None if data["all"] is None else _strings(data["all"])
            facts.function_classes = _strings(data["function_classes"])
            facts.patched = _strings(data["patched"])
            facts.modules_imported = _strings(data["modules_imported"])
            facts.callables = _strings(data["callables"])
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not the facts of a module: {exc}") from None
        if len(facts.defined) != len(data["defined"]) or not all(
                isinstance(part, str) for pairs in facts.imports.values() for pair in pairs for part in pair):
            raise ValueError("not the facts of a module")
        return facts

    def public(self) -> List[str]:
        """The names ``from this import *`` binds (star-imported ones aside)."""
        if self.all is not None:
            return list(self.all)
        return [name for name in (*self.imports, *self.defined) if not name.startswith("_")]


def _strings(data: Any) -> List[str]:
    if not isinstance(data, list) or not all(isinstance(item, str) for item in data):
        raise ValueError("not a list of names")
    return data


def _top_level(body: List[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements that bind module names: the body, into ``if``/``try``/``with`` blocks."""
    for statement in body:
        yield statement
        if isinstance(statement, (ast.If, ast.For, ast.While)):
            yield from _top_level(statement.body)
            yield from _top_level(statement.orelse)
        elif isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar":
            for block in (statement.body, statement.orelse, statement.finalbody):
                yield from _top_level(block)
            for handler in statement.handlers:
                yield from _top_level(handler.body)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            yield from _top_level(statement.body)


def _target_names(target: ast.AST) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _target_names(element)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


def _string_list(value: ast.AST) -> Optional[List[str]]:
    if isinstance(value, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
        return [e.value for e in value.elts]
    return None


class _Module:
    """A module of the project, read once; analysed with libcst when first asked a value."""

    def __init__(self, ref: ModuleRef, source: SourceFile, digest: Callable[[], Optional[str]] = lambda: None,
                 store: SummaryStore = SummaryStore()) -> None:
        self.ref = ref
        self.source = source
        self._digest_of: Optional[Callable[[], Optional[str]]] = digest  # asked when first needed
        self._digest: Optional[str] = None
        self._store = store
        self._summary: Optional[Dict[str, Any]] = None  # see ``summary``
        self.changed = False  # the summary learnt something to keep
        self._facts: Optional[_Facts] = None
        self._analyses: Dict[str, Optional[Tuple[Inference, cst.CSTNode]]] = {}  # name -> its analysis
        self._plan: Optional[_CutPlan] = None  # how to cut the text for one definition, once per module
        self._classes: Optional[FrozenSet[str]] = None  # the names of its top-level classes
        self._named_sets: Dict[str, FrozenSet[str]] = {}  # ``_names``: version flags, configurations
        self._version_helpers: Optional[Dict[str, VersionHelper]] = None
        self._version_calls: Optional[List[str]] = None
        self._needs: object = False  # ``oldest_release_needed``, once worked out
        self.broken = False

    @property
    def digest(self) -> Optional[str]:
        """The digest of the bytes ``source`` was decoded from (None: a text
        handed over without them, an editor's buffer): what its summary is
        kept for. Worked out when first needed: most checked texts never need it."""
        if self._digest_of is not None:
            self._digest, self._digest_of = self._digest_of(), None
        return self._digest

    @property
    def summary(self) -> Dict[str, Any]:
        """What earlier runs learnt about these bytes (``summaries.py``), read when first needed."""
        if self._summary is None:
            self._summary = self._store.load(self.ref.key, self.digest) if self.digest is not None else {}
        return self._summary

    def remember(self, field: str, data: Any) -> None:
        if self.digest is not None:
            self.summary[field] = data
            self.changed = True

    def facts(self) -> Optional[_Facts]:
        if self._facts is None and not self.broken:
            # A module read only for its facts is not parsed when a summary has them;
            # a checked one, already parsed, is quicker to read from its tree.
            if not self.source.parsed and self.summary.get("broken"):
                self.broken = True
                return None
            kept = self.summary.get("facts") if not self.source.parsed else None
            if kept is not None:
                try:
                    self._facts = _Facts.from_json(kept)
                    return self._facts
                except ValueError:
                    pass
            try:
                self._facts = _Facts(self.source.tree, self.ref.key)
            except (ParseError, Unsupported, RecursionError, ValueError):
                self.broken = True
                self.remember("broken", True)
            else:
                self.remember("facts", self._facts.to_json())
        return self._facts

    def program_facts(self) -> FrozenSet[str]:
        """What ``device_gates.py`` says of this module: "program" (it runs as one), "cpu mode"
        (it shows a mode without CUDA), "gpu-only program" (a program that runs on a GPU only)."""
        return self._names("device", lambda outline: frozenset(name for name, holds in (
            ("program", runs_as_program), ("cpu mode", has_cpu_mode), ("gpu-only program", gpu_only_program))
            if holds(outline)))

    def version_flags(self) -> FrozenSet[str]:
        """The names this module assigns from the torch version (``version_gates.py``)."""
        return self._names("flags", version_flags)

    def configuration_globals(self) -> FrozenSet[str]:
        """The names this module binds to its run's configuration (``configs.py``)."""
        return self._names("configs", configuration_globals)

    def _names(self, kept_as: str, compute: Callable[[Outline], FrozenSet[str]]) -> FrozenSet[str]:
        """Names ``compute`` finds in this module's outline, worked out once and kept in its
        summary as ``kept_as`` (a module read from its summary is not parsed for them)."""
        found = self._named_sets.get(kept_as)
        if found is None:
            kept = self.summary.get(kept_as) if not self.source.parsed else None
            if isinstance(kept, list) and all(isinstance(name, str) for name in kept):
                found = self._named_sets[kept_as] = frozenset(kept)
                return found
            try:
                found = compute(Outline(self.source.tree))
            except (ParseError, Unsupported, RecursionError, ValueError):
                found = frozenset()
            self._named_sets[kept_as] = found
            self.remember(kept_as, sorted(found))
        return found

    def called_with_versions(self) -> List[str]:
        """The names this module calls with a version string first, read once."""
        if self._version_calls is None:
            self._version_calls = called_with_versions(self.source.text)
        return self._version_calls

    def version_helpers(self) -> Dict[str, VersionHelper]:
        """The defs of this module that ask for the torch version in terms of their
        parameters (``version_tests.py``), worked out once per run."""
        if self._version_helpers is None:
            self._version_helpers = {}
            if "__version__" in self.source.text:
                try:
                    self._version_helpers = version_helpers(Outline(self.source.tree))
                except (ParseError, Unsupported, RecursionError, ValueError):
                    pass
        return self._version_helpers

    def oldest_release_told_apart(self, imported: Optional[Dict[str, VersionHelper]] = None
                                  ) -> Optional[Tuple[int, int]]:
        """The oldest torch release this module's version tests tell apart from the
        next (``version_tests.py``): the module evidently runs on it, or older.
        ``imported``: the version helpers it imports from other modules (not kept:
        the answer then depends on them, ``Project.oldest_release_told_apart``)."""
        if imported:
            try:
                return oldest_release_told_apart(Outline(self.source.tree), imported)
            except (ParseError, Unsupported, RecursionError, ValueError):
                return None
        if "__version__" not in self.source.text:
            return None  # no test of the torch version: the common case, known without a parse
        kept = self.summary.get("told apart", False) if not self.source.parsed else False
        if kept is None or (isinstance(kept, list) and len(kept) == 2 and all(type(n) is int for n in kept)):
            return tuple(kept) if kept is not None else None  # type: ignore[return-value]
        try:
            found = oldest_release_told_apart(Outline(self.source.tree))
        except (ParseError, Unsupported, RecursionError, ValueError):
            found = None
        self.remember("told apart", list(found) if found is not None else None)
        return found

    def oldest_release_needed(self) -> Optional[Tuple[int, ...]]:
        """The newest torch release something this module uses unconditionally arrived in
        (``import_floor.needed_release``). Kept in the summary; a text without any word
        that could show one needs nothing, known without a parse."""
        if not may_need_a_release(self.source.text):
            return None
        if self._needs is not False:
            return self._needs  # type: ignore[return-value]
        kept = self.summary.get("needs", False)
        if kept is None or (isinstance(kept, list) and all(type(n) is int for n in kept)):
            self._needs = tuple(kept) if kept is not None else None
            return self._needs  # type: ignore[return-value]
        try:
            found = needed_release(self.source.tree)
        except (ParseError, Unsupported, RecursionError, ValueError):
            found = None
        self.remember("needs", list(found) if found is not None else None)
        self._needs = found
        return found

    def defines_class(self, name: str) -> bool:
        """Is a top-level statement of this module ``class name``?"""
        if self._classes is None:
            try:
                self._classes = frozenset(s.name for s in self.source.tree.body if isinstance(s, ast.ClassDef))
            except (ParseError, Unsupported, RecursionError, ValueError):
                return False
        return name in self._classes

    def release(self) -> None:
        """Forget the trees and the analysis (memory); the facts stay, the rest is redone when asked."""
        self._analyses = {}
        self._plan = None
        self.forget_tree()

    def forget_tree(self) -> None:
        if self.source.parsed:
            self.source = SourceFile(self.source.text, self.source.encoding)

    def analysed(self, project: "Project", name: str, header: bool = False,
                 ) -> Optional[Tuple[Inference, cst.CSTNode]]:
        """The inference of this module and the def or class ``name`` in it,
        from a parse of the module with every other def and class cut to its
        header (``cutting.py``): what a question about ``name`` needs.
        ``header``: ``name`` is cut too, for questions its header answers
        (what calling a class makes); one parse serves every such question."""
        project.touch(self)
        key = _HEADERS if header else name
        if key not in self._analyses and not self.broken:
            self._analyses[key] = self._analyse(project, None if header else name)
        analysis = self._analyses.get(key)
        if analysis is None or not header:
            return analysis
        inference, module = analysis
        return _only_definition(module, name, inference)

    def analysed_whole(self, project: "Project", name: str) -> Optional[Tuple[Inference, cst.CSTNode]]:
        """The inference of the whole module, nothing cut, and its def or class ``name``."""
        analysis = self.whole(project)
        return _only_definition(analysis[1], name, analysis[0]) if analysis is not None else None

    def whole(self, project: "Project") -> Optional[Tuple[Inference, cst.Module]]:
        """The inference of the whole module, nothing cut, and its tree."""
        project.touch(self)
        if _WHOLE not in self._analyses and not self.broken:
            self._analyses[_WHOLE] = self._analyse(project, _WHOLE)
        return self._analyses.get(_WHOLE)  # type: ignore[return-value]

    def _analyse(self, project: "Project", name: Optional[str]) -> Optional[Tuple[Inference, cst.CSTNode]]:
        """The analysis of the module kept for ``name`` (None: every def and
        class cut to its header); with the def or class ``name``, or with the
        module itself when ``name`` is None."""
        from torchlint.analysis.context import analyse  # context builds on this layer's inference

        try:
            tree = self.source.tree
            if self._plan is None:
                self._plan = _CutPlan(self.source, tree)
            if name is not None and self._plan.longest(name) > MAX_DEFINITION_LINES:
                return None  # the cost of analysing it outweighs what it may tell: unknown
            text = self.source.text if name == _WHOLE else self._plan.text_for(name)
            kept = self.source if text == self.source.text else SourceFile(text, self.source.encoding)
            module = kept.module
            context, _ = analyse(module, (), project.settings, tree, project=project.link(self.ref))
        except (ParseError, Unsupported, RecursionError, ValueError, cst.ParserSyntaxError):
            self.broken = True
            return None
        if name is None or name == _WHOLE:
            return context.inference, module
        return _only_definition(module, name, context.inference)


def _only_definition(module: cst.Module, name: str, inference: Inference) -> Optional[Tuple[Inference, cst.CSTNode]]:
    """``inference`` with the top-level def or class ``name`` of ``module``;
    None when there is none, or several (``if``/``else``, a redefinition:
    which one runs is unknown)."""
    found = [s for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef)) and s.name.value == name]
    return (inference, found[0]) if len(found) == 1 else None


def _keeping(source: SourceFile, tree: ast.Module, name: Optional[str]) -> str:
    """``source`` with the bodies of its top-level defs and classes other than
    ``name`` cut (all of them when ``name`` is None; those that hold ``global``
    stay: they bind module names), and with ``name`` given, those nothing kept
    names cut whole (``cutting.unreferenced``)."""
    return _CutPlan(source, tree).text_for(name)


class _CutPlan:
    """How to cut one module's text for a question about one of its
    definitions, worked out once per module.

    Asked about each of n definitions (a chain of forwarding defs), the
    module used to be searched and cut whole n times, and each cut text
    still held every short def (too short to cut a body from): n parses of
    n defs. Now any def nothing kept names is cut whole, short or not, a run
    of them becomes one string literal, and what a def names is found once."""

    def __init__(self, source: SourceFile, tree: ast.Module) -> None:
        self.lines = list(source.lines)
        self.text = source.text
        self.body = tree.body
        self.spans = [(first_line(s), last_line(s)) for s in tree.body]
        self.cuttable: Set[int] = set()  # defs whose body is long enough to cut
        self.headers_only: Set[int] = set()  # defs whose body can be cut (not after the colon)
        self.candidates: Set[int] = set()  # defs that may go whole: no ``global`` (they bind module names)
        self.binders: Dict[str, List[ast.stmt]] = {}
        self.mentioning: Dict[str, List[ast.stmt]] = {}  # name -> the short defs that mention it
        self.fixed: Set[str] = set()  # what the module-level code (and every def kept whole) names
        self._names: Dict[int, Set[str]] = {}
        self.position = {id(s): index for index, s in enumerate(tree.body)}
        self.anchors: List[int] = []  # the statements always kept: module-level code, defs with ``global``
        self.lengths: Dict[str, int] = {}  # each def's and class's lines, by name (the longest)
        endings = [_ending(line) for line in self.lines]
        self.endings = "".join(endings)
        self.offsets = [0]
        for ending in endings:
            self.offsets.append(self.offsets[-1] + len(ending))
        for index, (statement, (first, last)) in enumerate(zip(tree.body, self.spans)):
            if isinstance(statement, _DEFINITIONS):
                self.lengths[statement.name] = max(self.lengths.get(statement.name, 0), last - first + 1)
            if not isinstance(statement, _DEFINITIONS) or "global" in "".join(self.lines[first - 1:last]):
                _names_in([statement], self.fixed)
                self.anchors.append(index)
                continue
            self.candidates.add(id(statement))
            self.binders.setdefault(statement.name, []).append(statement)
            if cuttable(statement, self.lines):
                self.cuttable.add(id(statement))
                self.headers_only.add(id(statement))
                continue
            # A short def stays whole where it names the def asked about (its calls
            # tell that def's parameters); elsewhere its header is enough.
            for mentioned in self._names_of(statement, whole=True):
                self.mentioning.setdefault(mentioned, []).append(statement)
            if body_on_own_lines(statement, self.lines):
                self.headers_only.add(id(statement))

    def _names_of(self, statement: ast.stmt, whole: bool) -> Set[str]:
        key = id(statement) * 2 + whole
        if key not in self._names:
            found: Set[str] = set()
            _names_in([statement] if whole else _header(statement), found)
            self._names[key] = found
        return self._names[key]

    def _kept(self, name: str) -> Tuple[Set[int], Set[int]]:
        """The defs kept whole (``name``'s, and the short ones that name it)
        and those whose header is kept (named by something kept)."""
        whole = {id(s) for s in (*self.binders.get(name, ()), *self.mentioning.get(name, ()))}
        headers: Set[int] = set()
        waiting = list(self.fixed)
        for statement in (*self.binders.get(name, ()), *self.mentioning.get(name, ())):
            waiting.extend(self._names_of(statement, whole=True))
        seen: Set[str] = set()
        while waiting:
            found = waiting.pop()
            if found in seen:
                continue
            seen.add(found)
            for statement in self.binders.get(found, ()):
                key = id(statement)
                if key in whole or key in headers:
                    continue
                if key in self.headers_only:
                    headers.add(key)
                    waiting.extend(self._names_of(statement, whole=False))
                else:
                    whole.add(key)  # too short to cut: kept as it is, with what its body names
                    waiting.extend(self._names_of(statement, whole=True))
        return whole, headers

    def text_for(self, name: Optional[str]) -> str:
        if name is None:  # every header: every long body cut, nothing cut whole
            lines = list(self.lines)
            for statement in self.body:
                if id(statement) in self.cuttable:
                    cut_body(statement, lines)
            return "".join(lines) if self.cuttable else self.text
        whole, headers = self._kept(name)
        kept = sorted([*self.anchors, *(self.position[key] for key in whole | headers)])
        lines = self.lines
        if headers:
            lines = list(self.lines)  # a copy to cut the kept headers' bodies in
            for key in headers:
                cut_body(self.body[self.position[key]], lines)
        pieces: List[str] = []
        done = 0  # the lines before this one are in ``pieces``
        previous = -1
        for position in (*kept, len(self.body)):
            if position > previous + 1:  # the definitions in between, nothing kept names: one literal
                first, last = self.spans[previous + 1][0], self.spans[position - 1][1]
                pieces.extend(lines[done:first - 1])
                pieces.append(self._literal(first, last))
                done = last
            previous = position
        pieces.extend(lines[done:])
        return "".join(pieces)

    def longest(self, name: str) -> int:
        """How many lines the top-level def or class ``name`` spans (the longest, if several)."""
        return self.lengths.get(name, 0)

    def _literal(self, first: int, last: int) -> str:
        """Lines ``first`` to ``last`` as one string literal (``cut_whole``), keeping their line endings."""
        if first == last:
            return '""' + _ending(self.lines[first - 1])
        middle = self.endings[self.offsets[first]:self.offsets[last - 1]]  # lines first + 1 .. last - 1
        return '"""' + _ending(self.lines[first - 1]) + middle + '"""' + _ending(self.lines[last - 1])


class Project:
    """The project's modules, known lazily through ``finder``; one per run (or per editor)."""

    def __init__(self, finder: Finder = Finder(), settings: Settings = Settings(),
                 store: SummaryStore = SummaryStore()) -> None:
        self.finder = finder
        self.settings = settings
        # Where what is learnt about a module is kept for later runs
        # (``summaries.py``): its facts, version flags and answers.
        self.store = store
        self._cut_short = 0  # questions answered "unknown" for recursion: their askers' answers are not kept
        self._passed_on = 0  # folder call-site questions being answered, one inside another
        self._named: Dict[str, ModuleRef] = {}  # key -> module, for the modules kept answers read
        self._touched: Dict[str, _Module] = {}  # the modules read since the last check ended
        self._modules: Dict[str, Optional[_Module]] = {}  # key -> module (None: unreadable)
        self._registered: Dict[str, _Module] = {}  # the texts being checked (the last few)
        self._analysed: "OrderedDict[int, _Module]" = OrderedDict()  # the modules holding trees, oldest first
        self._busy: Set[Tuple[str, str]] = set()  # questions being answered: recursion gives "unknown"
        # Keys of the modules read and the places imports probed, in order: the cache's dependencies.
        self.consulted: Dict[str, None] = {}
        # (absolute name, importer, folders added) -> where the import led and the places probed
        self._resolved: Dict[Tuple[str, ModuleRef, _Added], Tuple[Optional[ModuleRef], Tuple[str, ...]]] = {}
        # importer key -> (its module, the folders it adds, the helpers imported): ``_added_folders``
        self._folders: Dict[str, Tuple[Optional[_Module], _Added, Tuple[str, ...]]] = {}
        self._answering: List[str] = []  # the modules whose answers are being worked out, innermost last
        # module key -> modules read and places probed to work out its answers, in order
        self._depends: Dict[str, Dict[str, None]] = {}
        # key -> its imports (``_imports_of``), for the questions of who imports a module
        self._import_index: Dict[str, Optional[Tuple[Tuple[Optional[str], Tuple[str, ...]], ...]]] = {}
        # module key -> whether its text touches ``sys.path`` (``_path_importers``), read once per run
        self._touches_sys_path: Dict[str, bool] = {}
        # key -> what ``from it import *`` binds: torch's name for it, or None for the project's own
        self._exported: Dict[str, Optional[Dict[str, Optional[str]]]] = {}
        # package key -> (the oldest release its modules run first tell apart, the keys read for it)
        self._package_floors: Dict[Tuple[str, str], Tuple[Optional[Tuple[int, ...]], Tuple[str, ...]]] = {}

    # -- the modules ---------------------------------------------------------

    def register(self, ref: ModuleRef, source: SourceFile) -> None:
        """The text of ``ref`` being checked (it wins over the file on disk)."""
        known = self._registered.pop(ref.key, None)
        if known is None or known.source.text != source.text:
            known = _Module(ref, source, self._digest_of_text(ref, source), self.store)
            self._modules.pop(ref.key, None)  # the file on disk may differ from the text checked
        self._registered[ref.key] = known  # the newest last
        while len(self._registered) > REGISTERED_KEPT:
            oldest = next(iter(self._registered))
            self._registered.pop(oldest).release()

    def _digest_of_text(self, ref: ModuleRef, source: SourceFile) -> Callable[[], Optional[str]]:
        # The closures hold the bytes or the text, never ``source``: its trees must go with the check.
        data, text, finder = source.data, source.text, self.finder
        if data:
            return lambda: content_digest(data)
        return lambda: finder.digest_of_text(ref.key, text)

    def checked(self, ref: ModuleRef) -> None:
        """The check of ``ref``'s registered text is over: its trees and analyses
        go now rather than when it drops out of the registered few, and so do
        the trees of modules read for it but not analysed. Kept, they were
        walked by every later collection of the host process (flake8 spent a
        fifth of its time so on transformers); texts and facts stay for the
        questions other modules ask."""
        registered = self._registered.get(ref.key)
        if registered is not None:
            registered.release()
        self._release_analysed(ANALYSED_KEPT)
        # Only the modules this check reached can hold a tree or news for
        # their summary (a run reaches thousands, a check a few).
        touched, self._touched = self._touched, {}
        for module in (*self._registered.values(), *touched.values()):
            if module.changed:  # what it learnt goes to the store for later runs and other workers
                module.changed = False
                self.store.save(module.ref.key, module.digest, module.summary)
        # Modules read for their facts or version flags alone: what the check
        # asked of them is kept, their trees are not (a module is mostly read
        # for what its imports bind, and asked nothing needing a tree again).
        for module in touched.values():
            if id(module) not in self._analysed and module.ref.key not in self._registered:
                module.forget_tree()

    def touch(self, module: _Module) -> None:
        """``module`` is being analysed: keep its trees, releasing the least recently used beyond a bound."""
        self._analysed.pop(id(module), None)
        self._analysed[id(module)] = module
        self._release_analysed(ANALYSED_DURING_CHECK)

    def _release_analysed(self, kept: int) -> None:
        """Release the trees of the least recently analysed modules beyond ``kept``."""
        while len(self._analysed) > kept:
            _, oldest = self._analysed.popitem(last=False)
            oldest.release()

    def link(self, ref: ModuleRef) -> "ModuleLink":
        return ModuleLink(self, ref)

    def module(self, ref: ModuleRef) -> Optional[_Module]:
        self._note_use(ref.key)
        registered = self._registered.get(ref.key)
        if registered is not None:
            return registered
        if ref.key not in self._modules:
            source = _readable(self.finder.read(ref))
            self._modules[ref.key] = (
                _Module(ref, source, lambda: self.finder.digest(ref.key), self.store) if source is not None else None)
        module = self._modules[ref.key]
        if module is not None:
            self._touched[ref.key] = module
        return module

    def _note_use(self, key: str) -> None:
        """``key`` is read: by the check (``consulted``) and by every module whose
        answer is being worked out (their answers, kept, depend on it too)."""
        self.consulted[key] = None
        self.consulted.update(self._depends.get(key, {}))
        for asker in self._answering:
            if asker != key:
                self._depends.setdefault(asker, {})[key] = None

    def find(self, spelled: str, importer: ModuleRef) -> Optional[ModuleRef]:
        """The project module an import spelled ``spelled`` (maybe relative) in ``importer`` reaches."""
        absolute = absolute_module(spelled, importer)
        if absolute is None:
            return None
        if absolute == importer.name:
            return importer
        return self._resolve(absolute, importer, self._added_folders(importer))

    def _resolve(self, absolute: str, importer: ModuleRef, added: _Added = ((), ())) -> Optional[ModuleRef]:
        """The project module an import of ``absolute`` in ``importer`` leads to, resolved
        once per run; every place probed on the way is a dependency of whatever is
        being worked out, each time it is asked: a module appearing at one of them
        (before the one found, or instead of nothing) would change the answers."""
        question = (absolute, importer, added)
        resolved = self._resolved.get(question)
        if resolved is None:
            resolution = self.finder.resolve(absolute, importer, *added)
            found = (ModuleRef(resolution.path, absolute, resolution.is_package)
                     if resolution.path is not None else None)
            resolved = self._resolved[question] = (found, tuple(PROBE + place for place, _ in resolution.probes))
        for probed in resolved[1]:
            self._note_use(probed)
        return resolved[0]

    def _added_folders(self, importer: ModuleRef) -> _Added:
        """The folders ``importer`` (or a module it imports first thing, like
        ``import _init_paths``) puts on ``sys.path``, in front and after; worked
        out once per module and text, like the answers of ``find`` that use them."""
        module = self.known(importer.key) or self.module(importer)
        kept = self._folders.get(importer.key)
        if kept is not None and kept[0] is module:
            for spelled in kept[2]:  # resolved and read again for the asker's dependencies
                helper = self._resolve(spelled, importer)
                if helper is not None:
                    self.module(helper)
            return kept[1]
        folders, helpers = self._work_out_added_folders(importer, module)
        self._folders[importer.key] = (module, folders, helpers)
        return folders

    def _work_out_added_folders(self, importer: ModuleRef, module: Optional[_Module]
                                ) -> Tuple[_Added, Tuple[str, ...]]:
        """The folders, and the helper modules imported (as spelled) to find them."""
        facts = module.facts() if module is not None else None
        if facts is None:
            return ((), ()), ()
        first, last = list(facts.first_folders), list(facts.last_folders)
        helpers: List[str] = []
        for imports in facts.imports.values():
            for spelled, attribute in imports:
                if attribute or spelled.startswith(".") or "." in spelled:
                    continue
                helpers.append(spelled)
                helper = self._resolve(spelled, importer)
                helper_module = self.module(helper) if helper is not None else None
                helper_facts = helper_module.facts() if helper_module is not None else None
                if helper_facts is not None:
                    first.extend(helper_facts.first_folders)
                    last.extend(helper_facts.last_folders)
        return (tuple(dict.fromkeys(first)), tuple(dict.fromkeys(last))), tuple(helpers)

    def dependencies(self, checked: ModuleRef) -> Dict[str, str]:
        """The modules the last check consulted (``consulted``: read directly, or
        read while working out an answer it used): key -> digest of the bytes
        read, and the places its imports probed: ``PROBE`` + place -> what was
        found there. The checked module itself is left out."""
        digests = {}
        for key in self.consulted:
            digest = self.finder.digest(key) if key != checked.key else None
            if digest is not None:
                digests[key] = digest
        return digests

    # -- who imports a module ------------------------------------------------

    def names_imported_elsewhere(self, ref: ModuleRef, names: FrozenSet[str]) -> FrozenSet[str]:
        """Those of ``names`` (bound in ``ref``) that another module of the project may
        take from ``ref``: ``from ref import *`` (names without a leading underscore),
        ``from ref import name``, or ``import ref`` and ``.name`` in its text. The
        fixer's tidy step keeps such an import even where ``ref`` no longer uses it
        (``from torch.autograd import Variable`` serving ``from model import *``).
        Every name when the project has too many modules to read them all."""
        modules = self.finder.project_modules(ref) if names else None
        if modules is None:
            return frozenset()  # a text alone: nothing else can import it
        kept: Set[str] = set()
        for count, other in enumerate(modules):
            if count >= MAX_IMPORTER_SCAN:
                return names
            if other.key != ref.key:
                kept |= self._names_taken(ref, other, names)
                if kept == names:
                    break
        return frozenset(kept)

    def _names_taken(self, ref: ModuleRef, importer: ModuleRef, names: FrozenSet[str]) -> Set[str]:
        """Of ``names``, those ``importer`` takes from ``ref``."""
        imports = self._imports_of(importer)
        if imports is None:
            return set(names)  # too deep to read: it may take any of them
        taken: Set[str] = set()
        as_module = False  # ``import ref`` or ``from pkg import ref``: then ``ref.name`` may follow
        for spelled, aliases in imports:
            if spelled is None:  # import a.b, c
                as_module = as_module or any(self._reaches(alias, importer, ref) for alias in aliases)
            elif self._reaches(spelled, importer, ref):
                if "*" in aliases:
                    taken |= self._star_taken(importer, names)
                taken.update(names & set(aliases))
            else:
                as_module = as_module or any(self._reaches(_submodule(spelled, alias), importer, ref)
                                             for alias in aliases)
        if as_module:
            source = self.finder.read(importer)
            text = source.text if source is not None else ""
            taken.update(name for name in names if f".{name}" in text)
        return taken

    def _star_taken(self, importer: ModuleRef, names: FrozenSet[str]) -> Set[str]:
        """Of ``names`` (public ones), those ``from ref import *`` gives ``importer`` a use of:
        every one for a package's ``__init__`` (it re-exports them), else those its text names."""
        public = {name for name in names if not name.startswith("_")}
        if importer.is_package:
            return public
        source = self.finder.read(importer)
        words = set(re.findall(r"[A-Za-z_]\w*", source.text)) if source is not None else public
        return public & words

    def _imports_of(self, module: ModuleRef) -> Optional[Tuple[Tuple[Optional[str], Tuple[str, ...]], ...]]:
        """``module``'s imports, read once per run: (``from`` module as spelled, or None
        for ``import``; the names). None when it cannot be read as Python."""
        if module.key not in self._import_index:
            self._import_index[module.key] = _imports_in(_readable(self.finder.read(module)))
        return self._import_index[module.key]

    def _imports_module(self, importer: ModuleRef, ref: ModuleRef) -> bool:
        """Does ``importer`` import ``ref`` (``import ref``, ``from ref import ...``)? Yes when unknown."""
        imports = self._imports_of(importer)
        if imports is None:
            return True
        if any(self._reaches(alias, importer, ref) if spelled is None
               else self._reaches(spelled, importer, ref) or self._reaches(_submodule(spelled, alias), importer, ref)
               for spelled, aliases in imports for alias in aliases):
            return True
        if not self._puts_on_sys_path(importer):
            return False
        # ``sys.path.append('%s/../common' % here)`` then ``from helpers import report``.
        added = self._added_folders(importer)
        for spelled, aliases in imports:
            for name in ([spelled] if spelled is not None else list(aliases)):
                absolute = absolute_module(name, importer)
                found = self._resolve(absolute, importer, added) if absolute is not None else None
                if found is not None and found.key == ref.key:
                    return True
        return False

    def _reaches(self, spelled: str, importer: ModuleRef, ref: ModuleRef) -> bool:
        """Does an import spelled ``spelled`` in ``importer`` reach ``ref``? Asked of the
        finder alone: the answer is for a fix, not a dependency of a check."""
        absolute = absolute_module(spelled, importer)
        if absolute is None:
            return False
        if absolute == ref.name and os.path.dirname(ref.key) == os.path.dirname(importer.key):
            return True  # a script importing its neighbour
        return self.finder.resolve(absolute, importer).path == ref.key

    # -- torch names the project rebinds --------------------------------------

    def patched_torch_names(self, ref: ModuleRef) -> FrozenSet[str]:
        """The torch names (``torch.load``) that ``ref`` or the modules certainly run
        before its code (``run_first``) rebind."""
        return frozenset(name for _, facts in self.run_first(ref) for name in facts.patched)

    def oldest_release_told_apart(self, ref: ModuleRef) -> Optional[Tuple[int, int]]:
        """The oldest torch release that the version tests of ``ref``, of the modules its
        top-level imports name (and the packages holding them), of the packages holding
        ``ref``, and of what runs first for its top package (``run_first``, worked out
        once per run) tell apart from the next: the project evidently runs on it
        (``version_tests.py``). None: no such test."""
        return self._around(ref, "told apart", self._told_apart, min)

    def oldest_release_needed(self, ref: ModuleRef) -> Optional[Tuple[int, ...]]:
        """The newest torch release that something the code of ``ref``, or of the modules
        ``oldest_release_told_apart`` reads, uses unconditionally arrived in (a torch
        module, a mined name, ``weights_only=``; ``import_floor.needed_release``): the
        code was written for that torch or a newer one. None: nothing newer than the
        oldest release mined."""
        found = [self._around(ref, "needed", lambda module, facts=None: module.oldest_release_needed(), max)]
        holding = _packages_of(ref.name)
        top = self.find(holding[0], ref) if ref.is_package or len(holding) > 1 else None
        if top is not None and top.is_package:
            found.append(self._package_needs(top))
        releases = [release for release in found if release is not None]
        return max(releases) if releases else None

    def _package_needs(self, top: ModuleRef) -> Optional[Tuple[int, ...]]:
        """The newest release a module of the package ``top`` (any of them, up to
        ``PACKAGE_NEEDS_MODULES``) needs: a package is released whole, and what one of
        its modules needs, installing it needs. Worked out once per run."""
        return self._package_answer(top, "needed by any", lambda module, facts=None: module.oldest_release_needed(),
                                    max, self._package_modules)

    def _package_modules(self, top: ModuleRef) -> Iterator[Tuple[_Module, Optional[_Facts]]]:
        """The modules in the folder of the package ``top``, up to ``PACKAGE_NEEDS_MODULES``."""
        folder = os.path.dirname(top.key) + os.sep
        inside = (ref for ref in self.finder.project_modules(top) or () if ref.key.startswith(folder))
        for count, ref in enumerate(inside):
            if count >= PACKAGE_NEEDS_MODULES:
                return
            module = self.known(ref.key) or self.module(ref)
            if module is not None:
                yield module, None

    def _around(self, ref: ModuleRef, question: str, ask: Callable[..., Optional[Tuple[int, ...]]],
                combine: Callable[[List[Tuple[int, ...]]], Tuple[int, ...]]) -> Optional[Tuple[int, ...]]:
        """``ask`` of ``ref``, of the modules its top-level imports name with the packages
        holding them, of the packages holding ``ref``, and of the modules run first for its
        top package and for the top module of each import (``_package_answer``: a test
        file importing ``torchao`` runs what ``torchao`` runs first), combined."""
        module = self.known(ref.key) or self.module(ref)
        facts = module.facts() if module is not None else None
        if module is None or facts is None:
            return None
        found = [ask(module, facts)]
        holding = _packages_of(ref.name)
        holding = holding if ref.is_package else holding[:-1]
        imported_names = _imported_packages(facts, ref)
        for name in dict.fromkeys(list(holding[1:]) + imported_names):
            other = self.find(name, ref)
            imported = (self.known(other.key) or self.module(other)) if other is not None and other.key != ref.key else None
            if imported is not None:
                found.append(ask(imported))
        tops = holding[:1] + [name.partition(".")[0] for name in imported_names]
        for name in dict.fromkeys(tops):
            top = self.find(name, ref)
            if top is not None:
                found.append(self._package_answer(top, question, ask, combine))
        releases = [release for release in found if release is not None]
        return combine(releases) if releases else None

    def _package_answer(self, top: ModuleRef, question: str, ask: Callable[..., Optional[Tuple[int, ...]]],
                        combine: Callable[[List[Tuple[int, ...]]], Tuple[int, ...]],
                        modules: Optional[Callable[[ModuleRef], Iterator[Tuple[_Module, Optional[_Facts]]]]] = None
                        ) -> Optional[Tuple[int, ...]]:
        """``ask`` of the modules run first for the package ``top`` (or of ``modules(top)``),
        combined, worked out once per run for all its modules; what was read for it is
        noted as read by every check that asks (its dependencies)."""
        modules = modules if modules is not None else self.run_first
        kept = self._package_floors.get((top.key, question))
        if kept is None:
            outer, self.consulted = self.consulted, {}
            try:
                releases = [release for module, facts in modules(top)
                            if (release := ask(module, facts)) is not None]
            finally:
                read, self.consulted = self.consulted, outer
            kept = self._package_floors[(top.key, question)] = (combine(releases) if releases else None, tuple(read))
        for key in kept[1]:
            self._note_use(key)
        return kept[0]

    def _told_apart(self, module: _Module, facts: Optional[_Facts] = None) -> Optional[Tuple[int, int]]:
        """``module``'s oldest release told apart, its calls of version helpers that
        other modules of the project define included (``torch_version_at_least("2.10")``).
        A text with neither ``__version__`` nor such a call tells nothing: known
        without a parse (most modules)."""
        calls = module.called_with_versions()
        if not calls:
            return module.oldest_release_told_apart()
        facts = facts if facts is not None else module.facts()
        if facts is None:
            return None
        called = [name for name in calls if len(facts.imports.get(name, ())) == 1 and facts.imports[name][0][1]]
        if not called:
            return module.oldest_release_told_apart()
        return self._guarded(module, TOLD_APART, None, lambda: self._remembered(
            module, TOLD_APART, lambda: self._work_out_told_apart(module, facts, called)))

    def _work_out_told_apart(self, module: _Module, facts: _Facts, called: List[str]) -> Optional[Tuple[int, int]]:
        imported: Dict[str, VersionHelper] = {}
        for name in called:
            spelled, attribute = facts.imports[name][0]
            found = self.definition(f"{spelled}.{attribute}", module.ref)
            defining = self.module(found[0]) if found is not None else None
            helper = defining.version_helpers().get(found[1]) if defining is not None and found is not None else None
            if helper is not None:
                imported[name] = helper
        return module.oldest_release_told_apart(imported)

    def run_first(self, ref: ModuleRef) -> Iterator[Tuple[_Module, _Facts]]:
        """``ref`` and the modules certainly run before its code, with their facts: the
        packages holding it, the modules its top-level imports reach with the packages
        holding them, and so on, breadth first, up to ``RUN_FIRST_MODULES`` modules
        (what lies beyond is not known)."""
        queue, seen, read = [ref], {ref.key}, 0
        packages = _packages_of(ref.name)
        holding: List[str] = packages if ref.is_package else packages[:-1]
        while queue and read < RUN_FIRST_MODULES:
            current = queue.pop(0)
            module = self.known(current.key) or self.module(current)
            facts = module.facts() if module is not None else None
            read += 1
            if module is None or facts is None:
                continue
            yield module, facts
            names = (list(holding) if current is ref else []) + _imported_packages(facts, current)
            for name in dict.fromkeys(names):
                found = self.find(name, current)
                if found is not None and found.key not in seen:
                    seen.add(found.key)
                    queue.append(found)

    # -- star imports --------------------------------------------------------

    def star_exports(self, spelled: str, importer: ModuleRef) -> Optional[Dict[str, str]]:
        """What ``from spelled import *`` binds in ``importer``: name -> qualified
        name (torch's, or "spelled.name" for what the project defines)."""
        ref = self.find(spelled, importer)
        exports = self._exports(ref, set()) if ref is not None else None
        if exports is None:
            return None
        return {name: outside or f"{spelled}.{name}" for name, outside in exports.items()}

    def _exports(self, ref: ModuleRef, seen: Set[str]) -> Optional[Dict[str, Optional[str]]]:
        if ref.key in self._exported:
            self._note_use(ref.key)
            return self._exported[ref.key]
        module = self.module(ref)
        facts = module.facts() if module is not None else None
        if facts is None or ref.key in seen:
            return None
        seen.add(ref.key)
        exports: Dict[str, Optional[str]] = {}
        self._answering.append(ref.key)
        try:
            for star in facts.stars:
                inner = self.find(star, ref)
                exports.update((inner is not None and self._exports(inner, seen)) or {})
        finally:
            self._answering.pop()
        for name in facts.public():
            exports[name] = self._export_target(ref, facts, name)
        self._exported[ref.key] = exports
        return exports

    def function_classes(self, spelled: str, importer: ModuleRef) -> FrozenSet[str]:
        """The autograd Function classes the project module ``from spelled import ...``
        reaches defines at its top level (``_Facts.function_classes``)."""
        ref = self.find(spelled, importer)
        module = self.module(ref) if ref is not None else None
        facts = module.facts() if module is not None else None
        return frozenset(facts.function_classes) if facts is not None else frozenset()

    def _export_target(self, ref: ModuleRef, facts: _Facts, name: str) -> Optional[str]:
        """The outside name ``name`` was imported as (``import torch.nn as nn``:
        "torch.nn"), or None for the project's own (and anything unclear)."""
        imports = facts.imports.get(name, ())
        if len(imports) == 1 and name not in facts.defined:
            module, attribute = imports[0]
            if not module.startswith(".") and self.find(module, ref) is None:
                return f"{module}.{attribute}" if attribute else module
        return None

    # -- definitions -----------------------------------------------------------

    def definition(self, qualified: str, importer: ModuleRef, depth: int = 0) -> Optional[Tuple[ModuleRef, str]]:
        """The project def or class a dotted name (as spelled in ``importer``)
        refers to, following re-exports: (its module, its name)."""
        if depth > 8:
            return None
        module_part, _, name = qualified.rpartition(".")
        if not module_part or not name:
            return None
        ref = self.find(module_part, importer)
        if ref is None:
            return None
        return self._defined_in(ref, name, depth)

    def is_configuration(self, qualified: str, importer: ModuleRef) -> bool:
        """Is ``qualified`` (as imported in ``importer``) a global of a project module
        holding its run's configuration (``from miscc.config import cfg``)?"""
        module_part, _, name = qualified.rpartition(".")
        ref = self.find(module_part, importer) if module_part and name else None
        module = self.module(ref) if ref is not None else None
        if module is None:
            return False
        self._note_use(module.ref.key)
        return name in module.configuration_globals()

    def is_version_flag(self, qualified: str, importer: ModuleRef) -> bool:
        """Is ``qualified`` (as imported in ``importer``) a flag the project derives
        from the torch version (``_TORCH_GREATER_EQUAL_2_4 = compare_version(...)``)?"""
        found = self.definition(qualified, importer)
        module = self.module(found[0]) if found is not None else None
        return module is not None and found[1] in module.version_flags()

    def _defined_in(self, ref: ModuleRef, name: str, depth: int) -> Optional[Tuple[ModuleRef, str]]:
        if depth > 8:
            return None  # star imports that go round (``from util import *`` reaching back): not found
        module = self.module(ref)
        facts = module.facts() if module is not None else None
        if facts is None:
            return None
        if name in facts.defined:
            return (ref, name)
        imports = facts.imports.get(name, ())
        if len(imports) == 1:
            spelled, attribute = imports[0]
            if attribute:
                return self.definition(f"{spelled}.{attribute}", ref, depth + 1)
            return None
        for star in facts.stars:
            inner = self.find(star, ref)
            if inner is not None:
                found = self._defined_in(inner, name, depth + 1)
                if found is not None:
                    return found
        return None

    def _definition_node(self, ref: ModuleRef, name: str, header: bool = False,
                         ) -> Optional[Tuple[Inference, cst.CSTNode]]:
        """The inference of ``ref`` and the def or class ``name`` in it (see
        ``_Module.analysed``; ``header``: a class is asked only about its header)."""
        module = self.module(ref)
        facts = module.facts() if module is not None else None
        if facts is None or facts.defined.get(name) != 1:
            return None  # not defined there, or bound more than once: which binding runs is unknown
        return module.analysed(self, name, header=header and module.defines_class(name))

    def call_value(self, ref: ModuleRef, name: str, arguments: Optional[Arguments] = None) -> Optional[Value]:
        module = self.module(ref)
        if module is None:
            return None
        asked = name + ("()" if arguments is None else spelled_arguments(arguments))
        return self._remembered(module, asked, lambda: self._call_value(ref, name, asked, arguments))

    def _call_value(self, ref: ModuleRef, name: str, asked: str, arguments: Optional[Arguments]) -> Optional[Value]:
        question = (ref.key, asked)
        if question in self._busy:
            self._cut_short += 1
            return None
        self._busy.add(question)
        self._answering.append(ref.key)
        try:
            # Calling a class makes an instance: what kind, its header says.
            found = self._definition_node(ref, name, header=True)
            if found is None:
                return None
            inference, node = found
            if isinstance(node, cst.FunctionDef):
                return inference.function_return(node, arguments)
            if isinstance(node, cst.ClassDef):
                key = _key(ref, name)
                if inference.is_module_class(node):
                    return Value(Kind.MODULE, instance_of=key)
                # An autograd Function's instance too: called (the pre-0.4 style), it runs
                # ``forward`` (``class_member``).
                return Value(Kind.OBJECT, instance_of=key)
            return None
        finally:
            self._busy.discard(question)
            self._answering.pop()

    def known(self, ref_key: str) -> Optional[_Module]:
        """A module already read, by key (the registered text first), or one a
        kept answer names (``instance_of``): a fresh analysis would have read it."""
        module = self._registered.get(ref_key) or self._modules.get(ref_key)
        if module is None and ref_key in self._named and ref_key not in self._modules:
            module = self.module(self._named[ref_key])
        if module is not None:
            self._touched[ref_key] = module
        return module

    def member_value(self, key: str, member: str, called: bool, numbers: bool = True,
                     arguments: Optional[Arguments] = None) -> Value:
        call = (spelled_arguments(arguments) if arguments is not None else "()") if called else ""
        question = member + call + ("" if numbers else "!")
        return self._answer(key, question, cst.ClassDef, UNKNOWN, lambda inference, classdef: inference.class_member(
            classdef, member, called, numbers, arguments if called else None))

    def member_parameter(self, key: str, member: str) -> Optional[Tuple[int, str]]:
        return self._answer(key, member + "/parameter", cst.ClassDef, None,
                            lambda inference, classdef: inference.init_parameter(classdef, member))

    def forwarded(self, key: str) -> Mapping[str, Tuple[str, str]]:
        return self._answer(key, "forwards", cst.FunctionDef, {},
                            lambda inference, function: inference.forwards(function))

    def returned_parameters(self, key: str, arguments: Optional[Arguments] = None,
                            ) -> Tuple[Optional[Tuple[int, str]], ...]:
        asked = "returned parameters" + (spelled_arguments(arguments) if arguments is not None else "")
        found = self._answer(key, asked, cst.FunctionDef, (),
                             lambda inference, function: inference.returned_parameters(function, arguments))
        # A kept answer comes back as lists.
        return tuple(tuple(item) if item is not None else None for item in found)  # type: ignore[misc]

    def member_forwarded(self, key: str, method: str) -> Mapping[str, Tuple[str, str]]:
        return self._answer(key, method + "/forwards", cst.ClassDef, {},
                            lambda inference, classdef: inference.method_forwards(classdef, method))

    def defines_method(self, key: str, method: str) -> bool:
        return self._answer(key, method + "/defined", cst.ClassDef, False,
                            lambda inference, classdef: inference.defines_method(classdef, method))

    def static_method(self, key: str, method: str) -> bool:
        return self._answer(key, method + "/static", cst.ClassDef, False,
                            lambda inference, classdef: inference.is_static_method(classdef, method))

    def autograd_function(self, key: str) -> bool:
        return self._answer(key, "autograd Function", cst.ClassDef, False,
                            lambda inference, classdef: inference.is_autograd_function_class(classdef))

    def returns_integer_valued(self, key: str, given_whole_arguments: bool = True) -> bool:
        question = "integer-valued" if given_whole_arguments else "integer-valued whatever the arguments"
        return self._answer(key, question, cst.FunctionDef, False,
                            lambda inference, function: IntegerValues(inference.resolver, inference)
                            .returns_integer_valued(function, given_whole_arguments))

    def parameter_value(self, key: str, parameter: str) -> Value:
        """What the calls of the top-level def ``key`` in its module agree its
        ``parameter`` is, from an analysis of the whole module (the calls are in
        other defs, which answering other questions cuts)."""
        ref_key, name = _split_key(key)
        module = self.known(ref_key)
        if module is None:
            return UNKNOWN
        question = f"{name}({parameter})"
        return self._remembered(module, question, lambda: self._work_out_whole(
            module, key, name, question, UNKNOWN,
            lambda inference, function: inference.call_site_value(function, parameter)))

    def parameter_from_project(self, target: CallTarget) -> Value:
        """What the calls of ``target`` agree its parameter is, in its module and in
        the modules beside it that import it, where those calls are all there are:
        its module is a helper of a folder of scripts (no package: nothing outside
        the folder imports it by that name), and every use of the def in those
        modules is a call whose arguments inference reads (``call_sites.py``).
        The answer depends on every module of the folder and on their listing."""
        ref_key, name = _split_key(target.key)
        module = self.known(ref_key)
        if module is None:
            return UNKNOWN
        question = f"{name}.{target.method or ''}({target.parameter}@{target.position}) in the folder"
        return self._remembered(module, question, lambda: self._work_out_folder_calls(module, target, question))

    def _work_out_folder_calls(self, module: _Module, target: CallTarget, question: str) -> Value:
        asked = (target.key, question)
        if asked in self._busy or self._passed_on >= MAX_PASSED_ON:
            self._cut_short += 1  # recursion, or a value handed down too many defs: unknown, and not kept
            return UNKNOWN
        self._busy.add(asked)
        self._answering.append(module.ref.key)
        self._passed_on += 1
        try:
            callers = self._possible_callers(module.ref)
            if callers is None:
                return UNKNOWN
            values: List[Value] = []
            subclasses: List[str] = []  # classes built by ``target``'s constructor (no __init__ of theirs)
            for ref in callers:
                found = self._calls_in(ref, module.ref, target, subclasses if target.method is None else None)
                if found is None:
                    return UNKNOWN
                values.extend(found)
            for key in dict.fromkeys(subclasses):
                # ``ShapeTrainer(opts)`` passes ``Trainer.__init__``'s parameters: ask its calls too
                values.append(self.parameter_from_project(replace(target, key=key, name=_split_key(key)[1])))
            return meet(values) if values else UNKNOWN
        finally:
            self._passed_on -= 1
            self._busy.discard(asked)
            self._answering.pop()

    def _possible_callers(self, ref: ModuleRef) -> Optional[List[ModuleRef]]:
        """The modules that may call ``ref``'s defs: a top-level module's folder (a helper
        beside its scripts), or every module of a scripts project for a module of one of
        its packages (``utils/training.py`` called from ``experiment.py``); None when
        they cannot all be known."""
        if "." not in ref.name and not ref.is_package:
            neighbours = self.finder.neighbours(ref)
            if neighbours is not None:
                self._note_use(LISTING + os.path.dirname(ref.key))
                return neighbours + self._path_importers(ref)
            return neighbours
        project = self.finder.scripts_project(ref)
        if project is None:
            return None
        root, modules = project
        self._note_use(LISTING + root + TREE)
        return modules

    def _path_importers(self, ref: ModuleRef) -> List[ModuleRef]:
        """The modules of ``ref``'s scripts project outside its folder that put the folder on
        ``sys.path`` (``sys.path.append('%s/../common' % here)``): they import its helpers
        by their plain names, and call them, like the scripts beside them."""
        project = self.finder.scripts_project(ref)
        if project is None:
            return []
        root, modules = project
        self._note_use(LISTING + root + TREE)
        folder = os.path.normpath(os.path.dirname(ref.key))
        found = []
        for other in modules:
            if os.path.normpath(os.path.dirname(other.key)) == folder:
                continue
            if not self._puts_on_sys_path(other):
                continue
            first, last = self._added_folders(other)
            if any(os.path.normpath(added) == folder for added in (*first, *last)):
                found.append(other)
        return found

    def _puts_on_sys_path(self, ref: ModuleRef) -> bool:
        """Does ``ref``'s text mention ``sys.path`` (its file read once per run)?"""
        known = self._touches_sys_path.get(ref.key)
        if known is None:
            source = self.finder.read(ref)
            known = self._touches_sys_path[ref.key] = source is not None and "sys.path" in source.text
        return known

    def _calls_in(self, ref: ModuleRef, defining: ModuleRef, target: CallTarget,
                  subclasses: Optional[List[str]] = None) -> Optional[List[Value]]:
        """What the calls of ``target`` in module ``ref`` pass (none where it does not
        import ``defining``); None when a use of it there is not a call read."""
        if ref.key != defining.key and not self._imports_module(ref, defining):
            self._note_use(ref.key)  # were it to import the helper, its calls would count
            return []
        other = self.module(ref)
        whole = other.whole(self) if other is not None else None
        if whole is None:
            return None
        inference, tree = whole
        return calls_passing(inference, tree, inference.file_calls, target, subclasses)

    def saves_in_folder(self, ref: ModuleRef, file_name: str) -> Optional[SavedInFolder]:
        """``ProjectLink.saves_in_folder`` for the module ``ref``; the answer depends
        on every module of the folder and on its listing."""
        module = self.known(ref.key) or self.module(ref)
        if module is None:
            return None
        question = f"saves {file_name!r} in the folder"
        found = self._remembered(module, question, lambda: self._work_out_folder_saves(module, file_name, question))
        return SavedInFolder(*found) if found is not None else None  # a kept answer comes back a plain tuple

    def shipped_checkpoint_on_cpu(self, ref: ModuleRef, relative: str) -> bool:
        """``ProjectLink.shipped_checkpoint_on_cpu`` for the module ``ref``: the file is read
        (never unpickled), and the check depends on its bytes."""
        if not os.path.isabs(ref.key):
            return False  # a text without a place: no file beside it
        path = os.path.normpath(os.path.join(os.path.dirname(ref.key), relative))
        if not os.path.isfile(path):
            return False
        self._note_use(path)
        return holds_cpu_tensors_only(path)

    def used_only_by_gpu_programs(self, ref: ModuleRef) -> bool:
        """``ProjectLink.used_only_by_gpu_programs`` for the module ``ref``; the answer depends
        on every module that may import it and on their listing."""
        module = self.known(ref.key) or self.module(ref)
        if module is None:
            return False
        question = "used only by GPU programs"
        return bool(self._remembered(module, question, lambda: self._work_out_gpu_users(module, question)))

    def _work_out_gpu_users(self, module: _Module, question: str) -> bool:
        return self._guarded(module, question, False, lambda: self._gpu_users(module))

    def _gpu_users(self, module: _Module) -> bool:
        facts = module.program_facts()
        if "program" in facts or "cpu mode" in facts:
            return False  # a program itself (device_gates.py asks it), or one with a CPU mode
        callers = self._possible_callers(module.ref)
        if callers is None:
            return False
        users = [ref for ref in callers if ref.key != module.ref.key and self._imports_module(ref, module.ref)]
        if not users:
            return False
        for ref in users:
            other = self.module(ref)
            if other is None:
                return False
            facts = other.program_facts()
            if "gpu-only program" in facts:
                continue
            # another helper (``evaluator.py``) counts when only such programs use it in turn
            if "program" in facts or not self.used_only_by_gpu_programs(ref):
                return False
        return True

    def _work_out_folder_saves(self, module: _Module, file_name: str, question: str) -> Optional[SavedInFolder]:
        return self._guarded(module, question, None, lambda: self._folder_saves(module, file_name))

    def _guarded(self, module: _Module, question: str, default: T, compute: Callable[[], T]) -> T:
        """``compute()``, the answer to ``question`` about ``module``, with the modules read noted
        for it; ``default`` (and not kept) when it is asked again while being worked out."""
        asked = (module.ref.key, question)
        if asked in self._busy:
            self._cut_short += 1
            return default
        self._busy.add(asked)
        self._answering.append(module.ref.key)
        try:
            return compute()
        finally:
            self._busy.discard(asked)
            self._answering.pop()

    def _folder_saves(self, module: _Module, file_name: str) -> Optional[SavedInFolder]:
        writers = self._possible_writers(module.ref)
        if writers is None:
            return None
        found = []
        for ref in writers:
            other = self.module(ref) if ref.key != module.ref.key else None
            # A module whose text never spells the name saves nothing there: not analysed.
            if other is None or file_name not in other.source.text:
                continue
            whole = other.whole(self)
            if whole is None:
                return None  # a module that cannot be read may save anything there
            found.extend((saved, cpu, code, os.path.basename(ref.key))
                         for saved, cpu, code in folder_saves(whole[0], file_name))
        if not found:
            return None
        saved = combine([saved for saved, _, _, _ in found])
        _, _, code, where = next(f for f in found if f[0].kind == saved.kind)
        return SavedInFolder(saved.kind, saved.what, code, where, all(cpu for _, cpu, _, _ in found))

    def _possible_writers(self, ref: ModuleRef) -> Optional[List[ModuleRef]]:
        """The modules that may save a file ``ref`` loads by name: every module of its scripts
        project (``utils/vgg.py`` writing the weights ``main.py`` loads), or else the
        scripts of its folder; None when they cannot all be listed."""
        project = self.finder.scripts_project(ref)
        if project is not None:
            root, modules = project
            self._note_use(LISTING + root + TREE)
            return modules
        neighbours = self.finder.neighbours(ref)
        if neighbours is not None:
            self._note_use(LISTING + os.path.dirname(ref.key))
        return neighbours

    def result_may_be_differentiated(self, key: str) -> bool:
        """May a caller of the top-level def ``key`` (all in its module) differentiate its result?"""
        ref_key, name = _split_key(key)
        module = self.known(ref_key)
        if module is None:
            return True
        question = f"{name}() differentiated"
        return self._remembered(module, question, lambda: self._work_out_whole(
            module, key, name, question, True,
            lambda inference, function: inference.result_may_be_differentiated(function)))

    def _work_out_whole(self, module: _Module, key: str, name: str, question: str, default: T,
                        compute: Callable[[Inference, cst.FunctionDef], T]) -> T:
        """``compute`` over the top-level def ``name`` in an analysis of the whole module."""
        asked = (key, question)
        if asked in self._busy:
            self._cut_short += 1
            return default
        self._busy.add(asked)
        self._answering.append(module.ref.key)
        try:
            found = module.analysed_whole(self, name)
            if found is None or not isinstance(found[1], cst.FunctionDef):
                return default
            return compute(*found)
        finally:
            self._busy.discard(asked)
            self._answering.pop()

    def _answer(self, key: str, question: str, kind: type, default: T,
                compute: Callable[[Inference, cst.CSTNode], T]) -> T:
        """``compute`` over the definition ``key`` names (a ``kind`` node) in the
        inference of its module; ``default`` when it is not one, or when the same
        question is being answered already (recursion knows nothing)."""
        ref_key, name = _split_key(key)
        module = self.known(ref_key)
        if module is None:
            return default
        return self._remembered(module, f"{name}.{question}",
                                lambda: self._work_out(module, key, name, question, kind, default, compute))

    def _work_out(self, module: _Module, key: str, name: str, question: str, kind: type, default: T,
                  compute: Callable[[Inference, cst.CSTNode], T]) -> T:
        asked = (key, question)
        ref_key = module.ref.key
        if asked in self._busy:
            self._cut_short += 1
            return default
        self._busy.add(asked)
        self._answering.append(ref_key)
        try:
            found = self._definition_node(module.ref, name)
            if found is None or not isinstance(found[1], kind):
                return default
            return compute(*found)
        finally:
            self._busy.discard(asked)
            self._answering.pop()


    # -- answers kept between runs -------------------------------------------------

    def _remembered(self, module: _Module, question: str, compute: Callable[[], T]) -> T:
        """The answer to ``question`` about ``module``: the one its summary keeps
        while every module read to work it out is unchanged, else ``compute()``
        (kept in turn, unless recursion cut it short: then it depends on what
        was being asked first)."""
        answers = module.summary.get("answers")
        kept = answers.get(question) if isinstance(answers, dict) else None
        if kept is not None:
            answer = self._still_valid(kept)
            if answer is not _STALE:
                self._note_use(module.ref.key)
                return answer  # type: ignore[return-value]
        cut_short = self._cut_short
        answer = compute()
        if cut_short == self._cut_short and module.digest is not None:
            self._keep(module, question, answer)
        return answer

    def _still_valid(self, kept: Any) -> Any:
        if not (isinstance(kept, list) and len(kept) == 3 and isinstance(kept[1], dict)
                and isinstance(kept[2], dict)):
            return _STALE
        encoded, read, names = kept
        if any(self._digest_now(key) != digest for key, digest in read.items()):
            return _STALE
        try:
            answer = decode(encoded)
            refs = [ModuleRef(key, name, is_package) for key, (name, is_package) in names.items()
                    if isinstance(name, str) and isinstance(is_package, bool)]
        except (ValueError, TypeError, RecursionError):
            return _STALE
        for ref in refs:
            # The answer may name their classes (``instance_of``): the next
            # question about one must find its module as a fresh analysis would.
            self._named.setdefault(ref.key, ref)
        for key in read:
            self._note_use(key)  # the check depends on them as if it had read them
        return answer

    def _keep(self, module: _Module, question: str, answer: Any) -> None:
        read = {key: self._digest_now(key) for key in self._depends.get(module.ref.key, {})}
        if any(digest is None for digest in read.values()):
            return  # it read a text without known bytes (an editor's buffer)
        try:
            encoded = encode(answer)
        except TypeError:
            return
        if _PENDING_NAME in repr(encoded):
            return  # an answer in the middle of a cycle
        answers = module.summary.get("answers")
        if not isinstance(answers, dict):
            answers = {}
        names = {key: [known.ref.name, known.ref.is_package] for key in read
                 for known in [self._registered.get(key) or self._modules.get(key)] if known is not None}
        answers[question] = [encoded, read, names]
        module.remember("answers", answers)

    def _digest_now(self, key: str) -> Optional[str]:
        """The digest of module ``key``'s bytes as this run knows them."""
        module = self.known(key)
        if module is not None:
            return module.digest
        return self.finder.digest(key)


_STALE = object()
_PENDING_NAME = "<pending>"  # ``inference._PENDING``'s mark: a binding still being worked out


class ModuleLink(ProjectLink):
    """The project as seen from one of its modules (what inference there asks)."""

    def __init__(self, project: Project, ref: ModuleRef) -> None:
        self._project = project
        self.ref = ref

    def local(self, name: str) -> Optional[str]:
        return _key(self.ref, name)

    def absolute(self, qualified: str) -> Optional[str]:
        if qualified.startswith(api.TORCH_PACKAGES):
            return None
        found = self._project.definition(qualified, self.ref)
        return _key(*found) if found is not None else None

    def opaque(self, qualified: str) -> bool:
        package = qualified.split(".", 1)[0]
        if not package or package + "." in api.TORCH_PACKAGES or package in api.ZERO_DIM_LOSS_PACKAGES:
            return False  # relative (the project's), torch's, or known
        if not self._project.finder.searches_files:
            return False  # one text checked alone: where its imports lead is unknown
        return self._project.find(package, self.ref) is None

    def callable_key(self, qualified: str) -> Optional[str]:
        key = self.absolute(qualified)
        if key is None:
            return None
        ref_key, name = _split_key(key)
        module = self._project.known(ref_key)
        facts = module.facts() if module is not None else None
        return key if facts is not None and facts.defined.get(name) == 1 and name in facts.callables else None

    def call_value(self, qualified: str, arguments: Optional[Arguments] = None) -> Optional[Value]:
        ref_key, name = _split_key(qualified)
        module = self._project.known(ref_key)
        if module is None and ref_key == self.ref.key:
            module = self._project.module(self.ref)
        if module is None:
            return None
        return self._project.call_value(module.ref, name, arguments)

    def member_value(self, owner: str, member: str, called: bool, numbers: bool = True,
                     arguments: Optional[Arguments] = None) -> Value:
        return self._project.member_value(owner, member, called, numbers, arguments)

    def forwarded(self, qualified: str) -> Mapping[str, Tuple[str, str]]:
        ref_key, _ = _split_key(qualified)
        if self._project.known(ref_key) is None and ref_key == self.ref.key:
            self._project.module(self.ref)
        return self._project.forwarded(qualified)

    def returned_parameters(self, qualified: str, arguments: Optional[Arguments] = None,
                            ) -> Tuple[Optional[Tuple[int, str]], ...]:
        self._know(qualified)
        return self._project.returned_parameters(qualified, arguments)

    def is_configuration(self, qualified: str) -> bool:
        return self._project.is_configuration(qualified, self.ref)

    def star_exports(self, spelled: str) -> Optional[Dict[str, str]]:
        return self._project.star_exports(spelled, self.ref)

    def member_forwarded(self, owner: str, method: str) -> Mapping[str, Tuple[str, str]]:
        return self._project.member_forwarded(owner, method)

    def member_parameter(self, owner: str, member: str) -> Optional[Tuple[int, str]]:
        return self._project.member_parameter(owner, member)

    def defines_method(self, owner: str, method: str) -> bool:
        return self._project.defines_method(owner, method)

    def static_method(self, owner: str, method: str) -> bool:
        return self._project.static_method(owner, method)

    def autograd_function(self, key: str) -> bool:
        return self._project.autograd_function(key)

    def function_classes(self, spelled: str) -> FrozenSet[str]:
        return self._project.function_classes(spelled, self.ref)

    def returns_integer_valued(self, qualified: str, given_whole_arguments: bool = True) -> bool:
        self._know(qualified)
        return self._project.returns_integer_valued(qualified, given_whole_arguments)

    def parameter_value(self, qualified: str, parameter: str) -> Value:
        self._know(qualified)
        return self._project.parameter_value(qualified, parameter)

    def result_may_be_differentiated(self, qualified: str) -> bool:
        self._know(qualified)
        return self._project.result_may_be_differentiated(qualified)

    def parameter_from_project(self, target: CallTarget) -> Value:
        self._know(target.key)
        return self._project.parameter_from_project(target)

    def saves_in_folder(self, file_name: str) -> Optional[SavedInFolder]:
        return self._project.saves_in_folder(self.ref, file_name)

    def used_only_by_gpu_programs(self) -> bool:
        return self._project.used_only_by_gpu_programs(self.ref)

    def shipped_checkpoint_on_cpu(self, relative: str) -> bool:
        return self._project.shipped_checkpoint_on_cpu(self.ref, relative)

    def patched_torch_names(self) -> FrozenSet[str]:
        return self._project.patched_torch_names(self.ref)

    def _know(self, qualified: str) -> None:
        """Read the module defining ``qualified`` when it is the checked one, not yet read."""
        ref_key, _ = _split_key(qualified)
        if self._project.known(ref_key) is None and ref_key == self.ref.key:
            self._project.module(self.ref)


def _key(ref: ModuleRef, name: str) -> str:
    return f"{ref.key}\x00{name}"


def _split_key(key: str) -> Tuple[str, str]:
    ref_key, _, name = key.rpartition("\x00")
    return ref_key, name


def _readable(source: Optional[SourceFile]) -> Optional[SourceFile]:
    """``source`` as the project model reads it, so that what it defines is known
    to the modules importing it: with ``async`` used as a name (``x.cuda(async=True)``,
    a syntax error since Python 3.7) renamed ``non_blocking``, and a Python 2 module
    (``print x``, ``except E, e:``) read as the Python 3 text ``python3_reading``
    makes of it. The module itself is still reported where it is checked (TL115,
    or unparsable), and a Python 2 one is never fixed."""
    if source is None:
        return None
    sites = async_keyword_sites(source.text)
    if sites:
        source = SourceFile(rename_async_keywords(source.text, sites), source.encoding)
    if not may_be_python2(source.text):
        return source
    reading = python3_reading(source.text)
    if reading is None or reading == source.text:
        return source
    try:
        ast.parse(source.text)
        return source  # Python 3 after all (``print [x]`` is a subscript there)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    try:
        ast.parse(reading)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source
    return SourceFile(reading, source.encoding)


def _imports_in(source: Optional[SourceFile]) -> Optional[Tuple[Tuple[Optional[str], Tuple[str, ...]], ...]]:
    """The imports of ``source`` (``_imports_of``); None when they cannot be known.
    A file Python cannot compile imports nothing: it never runs."""
    if source is None or "import" not in source.text:
        return ()
    try:
        tree = ast.parse(source.text)
    except (SyntaxError, ValueError):
        return ()
    except (RecursionError, MemoryError):
        return None
    found: List[Tuple[Optional[str], Tuple[str, ...]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found.append(("." * node.level + (node.module or ""), tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.Import):
            found.append((None, tuple(alias.name for alias in node.names)))
    return tuple(found)


def _submodule(spelled: str, name: str) -> str:
    """The module ``from spelled import name`` imports where ``name`` is one
    (``from net import msg_net_v1``; ``from . import utils``)."""
    return spelled + name if spelled.endswith(".") else f"{spelled}.{name}"


def _packages_of(name: str) -> List[str]:
    """``a.b.c`` and the packages importing it runs first: ``a``, ``a.b``, ``a.b.c``."""
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts) + 1)]


def _imported_packages(facts: "_Facts", importer: ModuleRef) -> List[str]:
    """The modules ``importer``'s top-level imports name, each with the packages
    holding it (importing them runs those first)."""
    names: List[str] = []
    for spelled in facts.modules_imported:
        absolute = absolute_module(spelled, importer)
        if absolute is not None:
            names.extend(_packages_of(absolute))
    return names


def absolute_module(spelled: str, importer: ModuleRef) -> Optional[str]:
    """``spelled`` (".loss", "..utils.box", "model") as an absolute module name seen from ``importer``."""
    level = len(spelled) - len(spelled.lstrip("."))
    if not level:
        return spelled
    package = importer.name if importer.is_package else importer.name.rpartition(".")[0]
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    rest = spelled[level:]
    return ".".join([*base, rest] if rest else base) or None
