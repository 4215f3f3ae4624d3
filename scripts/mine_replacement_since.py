#!/usr/bin/env python
"""Write torchlint/knowledge/data/replacement_since.json: from which torch release
each deprecation's replacement exists.

TL108/TL109 skip an entry when its replacement is newer than the project's
oldest supported torch (``--torch-version``, or the floor a project declares):
telling a project on torch 1.13 to use ``TreeSpec.is_leaf()``, which came in
2.2, asks it to drop torch releases it supports. The table in
``knowledge/deprecations.py`` gives that version by hand (``since``) where it
was looked up; this script finds it in the torch sources of each release, so
that an entry without a hand-given version is not taken to be as old as torch.

Input: a folder with one subfolder per release (``2.1.0/torch/...``), each
holding that release's ``.py``/``.pyi`` files (unzip them from any wheel of
the release: ``unzip -q WHEEL 'torch/*.py' 'torch/*.pyi' -d DIR/2.1.0``; the
macOS wheels are the smallest). For every entry the names its replacement
needs are ``replacement_names`` (``knowledge/deprecations.py``): the entry's
``new`` names, its rewrite's target, the keyword a keyword rename introduces,
and the ``torch.``/``Tensor.`` names its message spells in backticks. A name
exists in a release when its module is a file there and that module (or, for
``torch.Tensor``, the tensor classes) defines it: a ``def``, ``class``,
assignment or import of that name, read with ``ast``. The first release from
which every name exists, and keeps existing, is the name's; an entry's replacement exists
from the first release having any of its names (``knowledge/deprecations.py``
reads the file and makes an entry's ``since`` no earlier than that). Names the
sources cannot show (bound in C with no stub) are listed as unknown, and an
entry with one of those keeps its hand-given ``since``.

The public names of ``PUBLIC_TWINS`` (TL114) are mined too: their hand-given
``since`` must be no earlier than the release the sources show. And so is the
first release of every torch module newer than the oldest release read
(``modules``): a file that imports one unconditionally cannot run on an older
torch, which bounds its floor from below (``analysis/import_floor.py``).

Run: ``python scripts/mine_replacement_since.py DIR`` (``--stdout`` prints).
``tests/test_deprecations_table.py`` checks that the committed file covers
every entry's names as the table spells them now, and that each name it lists
exists in the installed torch.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from functools import lru_cache
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple, Union

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from torchlint.core.settings import parse_version  # noqa: E402
from torchlint.knowledge.deprecations import ENTRIES, REPLACEMENT_SINCE_FILE, replacement_names  # noqa: E402
from torchlint.knowledge.torch_api import PUBLIC_TWINS  # noqa: E402

FORMAT = 1
# Where torch binds the Tensor methods: the Python class, and the stub of its C base.
_TENSOR_CLASSES = (("torch/_tensor.py", "Tensor"), ("torch/_C/__init__.pyi", "TensorBase"),
                   ("torch/_C/__init__.pyi", "_TensorBase"))
# Stubs of the functions torch binds in C at the top of the ``torch`` namespace.
_TORCH_STUBS = ("torch/_C/_VariableFunctions.pyi", "torch/_C/__init__.pyi")


class Release:
    """The sources of one torch release."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @lru_cache(maxsize=None)
    def tree(self, relative: str) -> Optional[ast.Module]:
        path = self.root / relative
        if not path.is_file():
            return None
        try:
            return ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            return None

    def module_file(self, dotted: str) -> Optional[str]:
        base = dotted.replace(".", "/")
        for candidate in (f"{base}.py", f"{base}/__init__.py", f"{base}.pyi", f"{base}/__init__.pyi"):
            if (self.root / candidate).is_file():
                return candidate
        return None

    def has(self, qualified: str) -> Optional[bool]:
        """Does the release define ``qualified`` (None: its sources cannot tell)?"""
        found = self.lookup(qualified, 0)
        return found if found is None or isinstance(found, bool) else True

    def has_keyword(self, function: str, keyword: str) -> Optional[bool]:
        """Does ``function`` (a Python def or class of the release) take ``keyword``?"""
        found = self.lookup(function, 0)
        if not isinstance(found, ast.AST):
            return found
        if isinstance(found, ast.ClassDef):
            found = _defined(found.body, "__init__")
        if not isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        args = found.args
        if keyword in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}:
            return True
        return None if args.kwarg else False

    def lookup(self, qualified: str, depth: int) -> Union[None, bool, ast.AST]:
        """The statement defining ``qualified``, imports followed; True for a module;
        False when the release lacks it; None when its sources cannot tell."""
        if depth > 8:
            return None
        parts = qualified.split(".")
        if parts[:2] == ["torch", "Tensor"] and len(parts) == 3:
            return self._tensor_has(parts[2])
        for cut in range(len(parts), 0, -1):
            module = self.module_file(".".join(parts[:cut]))
            if module is not None:
                break
        else:
            return False
        dotted, rest = ".".join(parts[:cut]), parts[cut:]
        if not rest:
            return True
        tree = self.tree(module)
        if tree is None:
            return None
        package = module.endswith(("__init__.py", "__init__.pyi"))
        found = _defined(tree.body, rest[0])
        if found is None and dotted == "torch":
            stubs = [self.tree(stub) for stub in _TORCH_STUBS]
            found = next((f for f in (_defined(s.body, rest[0]) for s in stubs if s is not None) if f is not None),
                         None)
        if found is None:
            if len(rest) > 1:
                return False  # neither a submodule (a file) nor a name the module binds
            return self._through_star_imports(tree, dotted, package, rest[0], depth)
        if isinstance(found, ast.ImportFrom):
            source = _absolute(found, dotted, package)
            original = next(a.name for a in found.names if (a.asname or a.name) == rest[0])
            return self.lookup(".".join([source, original, *rest[1:]]), depth + 1)
        if isinstance(found, ast.Import):
            alias = next(a for a in found.names if (a.asname or a.name.split(".")[0]) == rest[0])
            return self.lookup(".".join([alias.name, *rest[1:]]), depth + 1)
        if len(rest) == 1:
            return found
        if isinstance(found, ast.ClassDef) and len(rest) == 2:
            member = _defined(found.body, rest[1])
            if member is not None:
                return member
            return None if found.bases else False  # inherited from a base: not followed
        return None

    def _through_star_imports(self, tree: ast.Module, module: str, package: bool, name: str,
                              depth: int) -> Union[None, bool, ast.AST]:
        """``name`` not bound in ``module`` itself: bound by one of its ``from m import *``
        (at the top or under an ``if``/``try``)?"""
        answers = []
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                answers.append(self.lookup(".".join([_absolute(node, module, package), name]), depth + 1))
        found = next((a for a in answers if a is not None and a is not False), None)
        if found is not None:
            return found
        # torch's own ``globals()`` loop binds its C functions, which the stubs list
        if None in answers or (module != "torch" and any(isinstance(n, ast.Name) and n.id == "globals"
                                                         for n in ast.walk(tree))):
            return None
        return False

    def _tensor_has(self, method: str) -> Optional[bool]:
        for relative, name in _TENSOR_CLASSES:
            tree = self.tree(relative)
            cls = _defined(tree.body, name) if tree is not None else None
            if isinstance(cls, ast.ClassDef) and _defined(cls.body, method) is not None:
                return True
        return False


def _defined(body: Iterable[ast.stmt], name: str) -> Optional[ast.AST]:
    """The statement of ``body`` (its ``if``/``try`` arms included) that binds ``name``."""
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and statement.name == name:
            return statement
        if isinstance(statement, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for target in statement.targets for t in ast.walk(target)):
            return statement
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and \
                statement.target.id == name:
            return statement
        if isinstance(statement, ast.ImportFrom) and any((a.asname or a.name) == name for a in statement.names):
            return statement
        if isinstance(statement, ast.Import) and any((a.asname or a.name.split(".")[0]) == name
                                                     for a in statement.names):
            return statement
        if isinstance(statement, (ast.If, ast.Try)):
            arms: List[ast.stmt] = [*statement.body, *statement.orelse]
            if isinstance(statement, ast.Try):
                arms += [s for handler in statement.handlers for s in handler.body] + statement.finalbody
            found = _defined(arms, name)
            if found is not None:
                return found
    return None


def _absolute(node: ast.ImportFrom, module: str, package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not package:
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join(base + ([node.module] if node.module else []))


def exists(release: Release, name: str) -> Optional[bool]:
    """``name`` is ``torch.x.y`` or ``torch.f(keyword=)``."""
    if name.endswith("=)"):
        function, keyword = name[:-2].split("(")
        return release.has_keyword(function, keyword)
    return release.has(name)


def first_release(releases: List[Tuple[str, Release]], name: str) -> Tuple[Optional[str], str]:
    """(the first release from which ``name`` exists in every later release, None when that is
    the oldest one read; why not, when the sources cannot tell -- "" when they can)."""
    present: List[bool] = []
    for version, release in releases:
        answer = exists(release, name)
        if answer is None:
            return None, f"{version} cannot tell"
        present.append(answer)
    if not present[-1]:
        return None, "absent from the newest release read"
    first = len(present) - 1
    while first > 0 and present[first - 1]:
        first -= 1
    return (None if first == 0 else releases[first][0]), ""


def asked_names() -> List[str]:
    """Every name the tables need a first release for: the replacements of the deprecations,
    and the public twins of private paths (TL114)."""
    names = {name for entry in ENTRIES for name in replacement_names(entry)}
    names.update(twin.public for twin in PUBLIC_TWINS)
    return sorted(names)


def mine(root: Path) -> Dict[str, object]:
    versions = sorted((p.name for p in root.iterdir() if (p / "torch").is_dir()), key=parse_version)
    releases = [(".".join(v.split(".")[:2]), Release(root / v)) for v in versions]
    found: Dict[str, Optional[str]] = {}
    unknown: Dict[str, str] = {}
    for name in sorted(asked_names()):
        first, why = first_release(releases, name)
        if why:
            unknown[name] = why
        else:
            found[name] = first
    return {"format": FORMAT, "releases": [v for v, _ in releases], "names": found, "unknown": unknown,
            "modules": _module_releases(releases)}


def _module_releases(releases: List[Tuple[str, Release]]) -> Dict[str, str]:
    """Each torch module newer than the oldest release read -> the first release from which
    it exists in every later one: a file importing it unconditionally cannot run before."""
    present = [_modules_of(release.root) for _, release in releases]
    first: Dict[str, str] = {}
    for module in present[-1]:
        index = len(present) - 1
        while index > 0 and module in present[index - 1]:
            index -= 1
        if index > 0:
            first[module] = releases[index][0]
    return dict(sorted(first.items()))


def _modules_of(root: Path) -> set:
    modules = set()
    for path in (root / "torch").rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if all(part.isidentifier() for part in parts):
            modules.add(".".join(parts))
    return modules


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sources", type=Path, help="a folder of <release>/torch/ source trees")
    parser.add_argument("--stdout", action="store_true")
    args = parser.parse_args(argv)
    data = mine(args.sources)
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if args.stdout:
        sys.stdout.write(text)
    else:
        REPLACEMENT_SINCE_FILE.write_text(text, encoding="utf-8")
    names = data["names"]
    assert isinstance(names, dict)
    print(f"{len(names)} names mined, {sum(1 for first in names.values() if first)} newer than "
          f"{data['releases'][0]}, {len(data['unknown'])} unknown", file=sys.stderr)  # type: ignore[index]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
