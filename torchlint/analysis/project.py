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
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis.inference import UNKNOWN, Inference, Kind, ProjectLink, Value
from torchlint.core.diagnostic import ParseError, Unsupported
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

    def module_for(self, path: str) -> ModuleRef:
        """The module a checked file (or buffer) named ``path`` is."""
        stem = path.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
        return ModuleRef(path, stem or "__main__")

    def digest(self, key: str) -> Optional[str]:
        """The digest of the bytes read for module ``key`` (for the result cache)."""
        return None

    def find(self, name: str, importer: ModuleRef) -> Optional[ModuleRef]:
        """The module an import of absolute ``name`` in ``importer`` reaches, if it is the project's."""
        return None

    def read(self, module: ModuleRef) -> Optional[SourceFile]:
        return None


STANDALONE = ModuleRef("<text>", "__main__")


class _Facts:
    """What a module's top level binds, from Python's tree of it."""

    def __init__(self, tree: ast.Module) -> None:
        self.imports: Dict[str, List[Tuple[str, str]]] = {}  # name -> [(module spelled, attribute or "")]
        self.defined: Dict[str, List[ast.AST]] = {}  # name -> defs, classes and assignments binding it
        self.stars: List[str] = []  # modules star-imported, as spelled
        self.all: Optional[List[str]] = None
        for statement in _top_level(tree.body):
            self._note(statement)

    def _note(self, statement: ast.AST) -> None:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    self.imports.setdefault(alias.asname, []).append((alias.name, ""))
                else:
                    root = alias.name.split(".", 1)[0]
                    self.imports.setdefault(root, []).append((root, ""))
        elif isinstance(statement, ast.ImportFrom):
            module = "." * statement.level + (statement.module or "")
            for alias in statement.names:
                if alias.name == "*":
                    self.stars.append(module)
                else:
                    self.imports.setdefault(alias.asname or alias.name, []).append((module, alias.name))
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.defined.setdefault(statement.name, []).append(statement)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                for name in _target_names(target):
                    self.defined.setdefault(name, []).append(statement)
                    if name == "__all__":
                        self.all = _string_list(statement.value) if isinstance(statement, ast.Assign) else None

    def public(self) -> List[str]:
        """The names ``from this import *`` binds (star-imported ones aside)."""
        if self.all is not None:
            return list(self.all)
        return [name for name in (*self.imports, *self.defined) if not name.startswith("_")]


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

    def __init__(self, ref: ModuleRef, source: SourceFile) -> None:
        self.ref = ref
        self.source = source
        self._facts: Optional[_Facts] = None
        self._inference: Optional[Inference] = None
        self._definitions: Optional[Dict[str, cst.CSTNode]] = None
        self.broken = False

    def facts(self) -> Optional[_Facts]:
        if self._facts is None and not self.broken:
            try:
                self._facts = _Facts(self.source.tree)
            except (ParseError, Unsupported, RecursionError, ValueError):
                self.broken = True
        return self._facts

    def analysed(self, project: "Project") -> Optional[Tuple[Inference, Dict[str, cst.CSTNode]]]:
        if self._inference is None and not self.broken:
            from torchlint.analysis.context import analyse  # context builds on this layer's inference

            try:
                module = self.source.module
                context, _ = analyse(module, (), project.settings, self.source.tree, project=project.link(self.ref))
            except (ParseError, Unsupported, RecursionError, ValueError, cst.ParserSyntaxError):
                self.broken = True
                return None
            self._inference = context.inference
            self._definitions = {}
            for statement in module.body:
                if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                    name = statement.name.value
                    # Defined twice (``if``/``else``, redefinition): which one runs is unknown.
                    self._definitions[name] = None if name in self._definitions else statement
        if self._inference is None or self._definitions is None:
            return None
        return self._inference, self._definitions


class Project:
    """The project's modules, known lazily through ``finder``; one per run (or per editor)."""

    def __init__(self, finder: Finder = Finder(), settings: Settings = Settings()) -> None:
        self.finder = finder
        self.settings = settings
        self._modules: Dict[str, Optional[_Module]] = {}  # key -> module (None: unreadable)
        self._registered: Dict[str, _Module] = {}
        self._busy: Set[Tuple[str, str]] = set()  # questions being answered: recursion gives "unknown"
        self.consulted: Set[str] = set()  # keys of the modules read, for the cache's dependencies

    # -- the modules ---------------------------------------------------------

    def register(self, ref: ModuleRef, source: SourceFile) -> None:
        """The text of ``ref`` being checked (it wins over the file on disk)."""
        known = self._registered.get(ref.key)
        if known is None or known.source.text != source.text:
            self._registered[ref.key] = _Module(ref, source)

    def link(self, ref: ModuleRef) -> "ModuleLink":
        return ModuleLink(self, ref)

    def module(self, ref: ModuleRef) -> Optional[_Module]:
        registered = self._registered.get(ref.key)
        if registered is not None:
            return registered
        if ref.key not in self._modules:
            source = self.finder.read(ref)
            self._modules[ref.key] = _Module(ref, source) if source is not None else None
        self.consulted.add(ref.key)
        return self._modules[ref.key]

    def find(self, spelled: str, importer: ModuleRef) -> Optional[ModuleRef]:
        """The project module an import spelled ``spelled`` (maybe relative) in ``importer`` reaches."""
        absolute = absolute_module(spelled, importer)
        if absolute is None:
            return None
        if absolute == importer.name:
            return importer
        return self.finder.find(absolute, importer)

    def dependencies(self, checked: ModuleRef) -> Dict[str, str]:
        """The modules the last check consulted (``consulted``), and every
        project module they import, directly or not (a value found in one may
        come from those): key -> digest of the bytes read. The checked
        module itself is left out."""
        pending = [key for key in self.consulted if key != checked.key]
        closure: Set[str] = set()
        while pending:
            key = pending.pop()
            if key in closure:
                continue
            closure.add(key)
            module = self.known(key)
            facts = module.facts() if module is not None else None
            if facts is None:
                continue
            spelled = [m for imports in facts.imports.values() for m, _ in imports] + facts.stars
            for name in spelled:
                found = self.find(name, module.ref)
                if found is not None and found.key != checked.key:
                    self.module(found)
                    pending.append(found.key)
        digests = {}
        for key in sorted(closure):
            digest = self.finder.digest(key)
            if digest is not None:
                digests[key] = digest
        return digests

    # -- star imports --------------------------------------------------------

    def star_exports(self, spelled: str, importer: ModuleRef) -> Optional[Dict[str, str]]:
        """What ``from spelled import *`` binds in ``importer``: name -> qualified
        name (torch's, or "spelled.name" for what the project defines)."""
        ref = self.find(spelled, importer)
        return self._exports(ref, spelled, set()) if ref is not None else None

    def _exports(self, ref: ModuleRef, spelled: str, seen: Set[str]) -> Optional[Dict[str, str]]:
        module = self.module(ref)
        facts = module.facts() if module is not None else None
        if facts is None or ref.key in seen:
            return None
        seen.add(ref.key)
        exports: Dict[str, str] = {}
        for star in facts.stars:
            inner = self.find(star, ref)
            found = self._exports(inner, star, seen) if inner is not None else None
            for name, target in (found or {}).items():
                exports[name] = target if not target.startswith(star + ".") else f"{spelled}.{name}"
        for name in facts.public():
            exports[name] = self._export_target(ref, facts, name, spelled)
        return exports

    def _export_target(self, ref: ModuleRef, facts: _Facts, name: str, spelled: str) -> str:
        """Torch's name for what ``name`` was imported as (``import torch.nn as nn``:
        "torch.nn"), or "spelled.name" for the project's own (and anything unclear)."""
        imports = facts.imports.get(name, ())
        if len(imports) == 1 and name not in facts.defined:
            module, attribute = imports[0]
            if not module.startswith(".") and self.find(module, ref) is None:
                return f"{module}.{attribute}" if attribute else module
        return f"{spelled}.{name}"

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

    def _defined_in(self, ref: ModuleRef, name: str, depth: int) -> Optional[Tuple[ModuleRef, str]]:
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

    def _definition_node(self, ref: ModuleRef, name: str) -> Optional[Tuple[Inference, cst.CSTNode]]:
        module = self.module(ref)
        analysed = module.analysed(self) if module is not None else None
        if analysed is None:
            return None
        inference, definitions = analysed
        node = definitions.get(name)
        return (inference, node) if node is not None else None

    def call_value(self, ref: ModuleRef, name: str) -> Optional[Value]:
        question = (ref.key, name + "()")
        if question in self._busy:
            return None
        self._busy.add(question)
        try:
            found = self._definition_node(ref, name)
            if found is None:
                return None
            inference, node = found
            if isinstance(node, cst.FunctionDef):
                return inference.function_return(node)
            if isinstance(node, cst.ClassDef):
                key = _key(ref, name)
                if inference.is_module_class(node):
                    return Value(Kind.MODULE, instance_of=key)
                if inference.is_autograd_function_class(node):
                    return None
                return Value(Kind.OBJECT, instance_of=key)
            return None
        finally:
            self._busy.discard(question)

    def known(self, ref_key: str) -> Optional[_Module]:
        """A module already read, by key (the registered text first)."""
        return self._registered.get(ref_key) or self._modules.get(ref_key)

    def member_value(self, key: str, member: str, called: bool) -> Value:
        ref_key, name = _split_key(key)
        question = (key, member + ("()" if called else ""))
        if question in self._busy:
            return UNKNOWN
        module = self.known(ref_key)
        if module is None:
            return UNKNOWN
        self._busy.add(question)
        try:
            found = self._definition_node(module.ref, name)
            if found is None or not isinstance(found[1], cst.ClassDef):
                return UNKNOWN
            inference, classdef = found
            return inference.class_member(classdef, member, called)
        finally:
            self._busy.discard(question)

    def forwarded(self, key: str) -> Mapping[str, Tuple[str, str]]:
        ref_key, name = _split_key(key)
        question = (key, "forwards")
        module = self.known(ref_key)
        if module is None or question in self._busy:
            return {}
        self._busy.add(question)
        try:
            found = self._definition_node(module.ref, name)
            if found is None or not isinstance(found[1], cst.FunctionDef):
                return {}
            inference, function = found
            return inference.forwards(function)
        finally:
            self._busy.discard(question)

    def is_module_class(self, ref: ModuleRef, name: str) -> Optional[bool]:
        found = self._definition_node(ref, name)
        if found is None or not isinstance(found[1], cst.ClassDef):
            return None
        inference, classdef = found
        return inference.is_module_class(classdef)


class ModuleLink(ProjectLink):
    """The project as seen from one of its modules (what inference there asks)."""

    def __init__(self, project: Project, ref: ModuleRef) -> None:
        self._project = project
        self.ref = ref
        self.module = ref.name

    def local(self, name: str) -> Optional[str]:
        return _key(self.ref, name)

    def absolute(self, qualified: str) -> Optional[str]:
        if qualified.startswith(api.TORCH_PACKAGES):
            return None
        found = self._project.definition(qualified, self.ref)
        return _key(*found) if found is not None else None

    def call_value(self, qualified: str) -> Optional[Value]:
        ref_key, name = _split_key(qualified)
        module = self._project.known(ref_key)
        if module is None and ref_key == self.ref.key:
            module = self._project.module(self.ref)
        if module is None:
            return None
        return self._project.call_value(module.ref, name)

    def member_value(self, owner: str, member: str, called: bool) -> Value:
        return self._project.member_value(owner, member, called)

    def forwarded(self, qualified: str) -> Mapping[str, Tuple[str, str]]:
        ref_key, _ = _split_key(qualified)
        if self._project.known(ref_key) is None and ref_key == self.ref.key:
            self._project.module(self.ref)
        return self._project.forwarded(qualified)

    def star_exports(self, spelled: str) -> Optional[Dict[str, str]]:
        return self._project.star_exports(spelled, self.ref)


def _key(ref: ModuleRef, name: str) -> str:
    return f"{ref.key}\x00{name}"


def _split_key(key: str) -> Tuple[str, str]:
    ref_key, _, name = key.rpartition("\x00")
    return ref_key, name


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
