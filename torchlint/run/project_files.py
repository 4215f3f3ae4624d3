"""Where the project's modules are on disk, for the project model (``analysis/project.py``).

A checked file's module name comes from its packages, as Python gives it:
``layers/modules/multibox_loss.py`` under folders holding ``__init__.py`` is
``layers.modules.multibox_loss``, its root the first folder above without one
(a script's root is its own folder). An import is looked up, in order, under
the importer's root, the importer's own folder (a script importing its
neighbour), and the project roots: the configuration file's folder, its
``src/`` and the paths given on the command line; the folders the importer
puts on ``sys.path`` come first (``insert(0, ...)``) or last (``append``).

Only regular files of bounded size are read, and a module that cannot be
read or decoded is simply not found: the project model then knows nothing
about it, and the file importing it is checked as if it imported a third
party. Each module's digest is kept for the result cache, whose entries are
valid only while the modules they consulted are unchanged, and so is what
each place an import probed held (``core.dependencies.resolve``): a module
that appears earlier on the import path is noticed too.
"""

from __future__ import annotations

import os
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from torchlint.analysis.project import Finder, ModuleRef
from torchlint.core.dependencies import (
    LISTING, PROBE, Resolution, content_digest, declares_distribution, listed_modules, listing_digest, probe,
    resolve, ships_modules, tree_modules,
)
from torchlint.core.source import SourceError, SourceFile, decode
from torchlint.run.fileio import MAX_SOURCE_BYTES, current_digest, read_bytes
from torchlint.run.project_walk import python_files


class FileFinder(Finder):
    searches_files = True

    def __init__(self, roots: Iterable[str] = ()) -> None:
        self.roots: List[str] = []
        for root in roots:
            absolute = os.path.abspath(root)
            if os.path.isdir(absolute) and absolute not in self.roots:
                self.roots.append(absolute)
        self._files: Dict[str, bool] = {}  # path -> is a regular file (asked once)
        self._probed: Dict[str, str] = {}  # place -> what an import found there (asked once)
        self.digests: Dict[str, str] = {}  # key -> digest of the bytes read
        self._listed: Dict[str, List[str]] = {}  # root -> its .py files (``project_walk``)
        self._trees: Dict[str, Optional[List[str]]] = {}  # root -> ``tree_modules`` (asked once)

    def module_for(self, path: str) -> ModuleRef:
        """The module a checked file is, named from its packages."""
        absolute = os.path.abspath(path)
        folder, filename = os.path.split(absolute)
        stem = filename[:-3] if filename.endswith(".py") else filename.rsplit(".", 1)[0]
        is_package = stem == "__init__"
        parts = [] if is_package else [stem]
        while self._is_file(os.path.join(folder, "__init__.py")):
            folder, package = os.path.split(folder)
            parts.insert(0, package)
            if not package:
                break
        return ModuleRef(absolute, ".".join(parts) or stem, is_package)

    def resolve(self, name: str, importer: ModuleRef, first: Tuple[str, ...] = (),
                last: Tuple[str, ...] = ()) -> Resolution:
        """Where an import of ``name`` in ``importer`` leads, with the places probed."""
        return resolve(name, list(dict.fromkeys([*first, *self._search_path(importer), *last])), self._probe)

    def _probe(self, place: str) -> str:
        """What ``place`` holds for an import (looked at once per run)."""
        outcome = self._probed.get(place)
        if outcome is None:
            outcome = self._probed[place] = probe(place)
        return outcome

    def project_modules(self, near: ModuleRef) -> Optional[Iterator[ModuleRef]]:
        if not os.path.isabs(near.key):
            return None
        roots = [*self._search_path(near)[:1], *self.roots]
        return (self.module_for(path) for path in python_files(roots, self._listed))

    def scripts_project(self, near: ModuleRef) -> Optional[Tuple[str, List[ModuleRef]]]:
        if not os.path.isabs(near.key):
            return None
        containing = [root for root in self.roots if near.key.startswith(root + os.sep)]
        if not containing:
            return None
        root = min(containing, key=len)  # the widest: every module that may call
        imported_from = self._search_path(near)[0]  # the folder above its top package
        if imported_from != root and not imported_from.startswith(root + os.sep):
            return None  # the project's folder is itself in a package: importable from outside it
        folder = os.path.dirname(near.key)
        while True:
            if declares_distribution(folder):
                return None
            if folder == root or len(folder) <= len(root):
                break
            folder = os.path.dirname(folder)
        if root not in self._trees:
            self._trees[root] = tree_modules(root)
        paths = self._trees[root]
        if paths is None:
            return None
        return root, [self.module_for(path) for path in paths]

    def neighbours(self, near: ModuleRef) -> Optional[List[ModuleRef]]:
        if not os.path.isabs(near.key):
            return None
        folder = os.path.dirname(near.key)
        names = listed_modules(folder)
        if names is None or ships_modules(folder):
            return None  # too many to read, or importable by anyone
        return [self.module_for(os.path.join(folder, name)) for name in names]

    def read(self, module: ModuleRef) -> Optional[SourceFile]:
        try:
            data = read_bytes(module.key, MAX_SOURCE_BYTES)
            source = decode(data)
        except (SourceError, OSError, ValueError):
            return None
        self.digests[module.key] = content_digest(data)
        return source

    def digest(self, key: str) -> Optional[str]:
        """The digest of ``key``'s bytes: those read for the project model, else
        (a module the run checked, whose text the model was handed) the file's now."""
        if key.startswith(PROBE):
            return self._probe(key[len(PROBE):])  # what the import found there
        if key.startswith(LISTING):
            return listing_digest(key[len(LISTING):])  # which modules the folder holds
        if key not in self.digests and os.path.isabs(key):
            digest = current_digest(key)
            if digest is None:
                return None
            self.digests[key] = digest
        return self.digests.get(key)

    def digest_of_text(self, key: str, text: str) -> Optional[str]:
        if not os.path.isabs(key) or not key.endswith(".py"):
            return None
        try:
            data = read_bytes(key, MAX_SOURCE_BYTES)
            return content_digest(data) if decode(data).text == text else None
        except (SourceError, OSError, ValueError):
            return None

    def _search_path(self, importer: ModuleRef) -> List[str]:
        folders: List[str] = []
        if os.path.isabs(importer.key):
            own = os.path.dirname(importer.key)
            depth = importer.name.count(".") + (1 if importer.is_package else 0)
            root = own
            for _ in range(depth):
                root = os.path.dirname(root)
            folders.extend((root, own))
        folders.extend(self.roots)
        return list(dict.fromkeys(folders))

    def _is_file(self, path: str) -> bool:
        known = self._files.get(path)
        if known is None:
            known = self._files[path] = os.path.isfile(path)
        return known


def project_roots(root: str, paths: Iterable[str]) -> Tuple[str, ...]:
    """The folders imports are looked up in: the project root, its ``src/``, and
    the folders given (a file given counts by its folder)."""
    found = [root, os.path.join(root, "src")]
    for path in paths:
        found.append(path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path)))
    return tuple(found)
