"""The oldest torch a project declares it supports, read from its own metadata.

When ``torch-version`` is not configured, this is the floor advice is judged
against (``--torch-version``): a project requiring ``torch>=2.0`` is not told
about problems that ended before 2.0, and gets no fix that needs a newer torch.

Read, never executed: ``[project] dependencies`` of ``pyproject.toml``,
``[options] install_requires`` of ``setup.cfg``, a literal
``install_requires=[...]`` in ``setup.py`` (parsed with ``ast``) and
``requirements*.txt`` and ``requirements/*.txt`` (not those for tests, docs or
development), then the ``Requires-Dist`` of a source distribution's
``PKG-INFO`` or of an unpacked wheel's ``*.dist-info/METADATA``, in that
order, in the project root: the nearest folder at or above the start that
holds one of the first three files, a ``PKG-INFO`` or a ``*.dist-info``, else
the nearest holding a ``requirements*.txt`` (a repository of scripts, whose
``pip freeze`` pins ``torch==0.4.0a0+9a2e8f3``). The first lower bound found
is the floor; an exact pin is one (``torch==1.4.0``: 1.4, a local version
label dropped). Requirement strings are parsed with ``packaging`` (PEP 508),
the library pip itself uses.

Optional dependencies (extras) count only when nothing else requires torch:
then the lowest bound an extra puts on torch, in the first of
``[project.optional-dependencies]``, ``[options.extras_require]``, a literal
``extras_require={...}`` and ``Requires-Dist: ...; extra == "..."`` that has
one, is the floor (diffusers requires ``torch>=1.4`` only through its "torch"
extra: it is meant to be used with such a torch). A requirement outside the
extras wins: the package runs with it whatever extra is chosen. Extras of the
project's own development (``test``, ``dev``, ``docs``...) do not count: a torch
they pin is the one its tests run on, not what it supports.

A package that declares no torch floor but a Python one (``requires-python``,
``python_requires``, ``Requires-Python``) is installed with no torch older
than the first release with wheels for that Python (``least_torch_release``;
mined from PyPI by ``scripts/mine_python_support.py``): a bound from below,
which the engine takes with what the code shows (below).

Not read here: a floor implied by the project's own code. The engine
uses it where none is declared, file by file (``Engine._settings_for``):
the oldest release the version tests of the file, or of the modules run
before it, tell apart from the next (``analysis/version_tests.py``). A
project that declares none but tests ``torch.__version__ >= "1.12"``
evidently runs on torch 1.11, and nothing in its code shows an older
one. It is worked out per file because only the project model knows
which modules run first; the code a project's version tests guard is
left alone as well (``analysis/version_gates.py``); ``torch-version``
says otherwise.
"""

from __future__ import annotations

import ast
import configparser
import glob
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, List, Optional, Tuple

if TYPE_CHECKING:
    from packaging.version import Version

from torchlint.core.settings import Version as TorchVersion, parse_version
from torchlint.knowledge.releases import first_release_for_python, oldest_release_on_pypi

try:  # pragma: no cover - depends on the Python version
    import tomllib
except ImportError:  # pragma: no cover
    import tomli as tomllib  # type: ignore[no-redefined]

_PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
_LOWER_BOUNDS = (">=", "~=", "==", "===", ">")
# A requirements file larger than this is not a requirements file.
_MAX_FILE_BYTES = 1 << 20


@dataclass(frozen=True)
class DeclaredFloor:
    version: TorchVersion
    where: str  # e.g. "pyproject.toml [project] dependencies: torch>=2.0"


def declared_torch_floor(start: str) -> Optional[DeclaredFloor]:
    root = project_root(start)
    if root is None:
        return None
    for where, requirements in _declarations(root):
        for text in requirements:
            version = _floor_of(text)
            if version is not None:
                return DeclaredFloor(version, f"{where}: {text.strip()}")
    return _floor_of_extras(root)


def declares_no_torch_floor(start: str) -> bool:
    """Is the project a distribution (not a folder of scripts) that declares no torch
    floor? Then its floor is what its code shows it needs (``Engine._shown_floor``):
    users install it with whatever torch they have."""
    root = project_root(start)
    return root is not None and _is_distribution(root) and declared_torch_floor(start) is None


def least_torch_release(start: str) -> Optional[DeclaredFloor]:
    """For a distribution that declares no torch floor (no requirement on torch, or one
    without a lower bound, extras included) but a Python one: the oldest torch pip can
    install with it, the first release with wheels for that Python
    (``knowledge/releases.py``): a package for Python 3.11 and newer never meets a
    torch older than 1.13. None where that says nothing: no ``Requires-Python``, or a
    Python the oldest torch on PyPI already served (a 2018 package declaring
    Python 2.7). The engine takes it, with what the code shows it needs, as the
    project's floor (``Engine._shown_floor``)."""
    if not declares_no_torch_floor(start):
        return None
    python, where = _python_floor(project_root(start))  # type: ignore[arg-type]
    release = first_release_for_python(python) if python is not None else None
    if release is None or _as_release(release) <= _as_release(oldest_release_on_pypi()):
        return None
    return DeclaredFloor(_as_release(release), f"no torch requirement; {where} >={python}: torch {release} is the "
                                               f"first release for Python {python}")


def _is_distribution(root: str) -> bool:
    """Does ``root`` describe a package (not only pin requirements for scripts)?"""
    return any(os.path.isfile(os.path.join(root, name)) for name in _PROJECT_FILES) or bool(
        _distribution_metadata(root))


def _python_floor(root: str) -> Tuple[Optional[str], str]:
    """The oldest Python minor ("3.11") the package declares, and where; (None, "") if none."""
    for where, text in _python_declarations(root):
        minor = _python_minor(text) if text else None
        if minor is not None:
            return minor, where
    return None, ""


def _python_declarations(root: str) -> Iterator[Tuple[str, Optional[str]]]:
    pyproject = _read(os.path.join(root, "pyproject.toml"))
    if pyproject is not None:
        try:
            value = tomllib.loads(pyproject).get("project", {}).get("requires-python")
        except (tomllib.TOMLDecodeError, AttributeError, RecursionError):
            value = None
        yield "pyproject.toml requires-python", value if isinstance(value, str) else None
    setup_cfg = _read(os.path.join(root, "setup.cfg"))
    if setup_cfg is not None:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(setup_cfg)
            yield "setup.cfg python_requires", parser.get("options", "python_requires", fallback=None)
        except configparser.Error:
            pass
    yield "setup.py python_requires", _setup_py_keyword(os.path.join(root, "setup.py"), "python_requires")
    for path in _distribution_metadata(root):
        text = _read(path) or ""
        found = [line.split(":", 1)[1].strip() for line in text.split("\n\n", 1)[0].splitlines()
                 if line.lower().startswith("requires-python:")]
        yield f"{os.path.relpath(path, root)} Requires-Python", found[0] if found else None


def _setup_py_keyword(path: str, keyword: str) -> Optional[str]:
    """A literal string ``keyword=`` of ``setup.py``'s calls."""
    text = _read(path)
    try:
        tree = ast.parse(text) if text is not None else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.keyword) and node.arg == keyword and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            return node.value.value
    return None


def _python_minor(text: str) -> Optional[str]:
    """The lowest Python minor a ``Requires-Python`` specifier admits ("3.11" for ">=3.11.0")."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        specifiers = SpecifierSet(text.strip())
    except InvalidSpecifier:
        return None
    bounds = []
    for specifier in specifiers:
        if specifier.operator in _LOWER_BOUNDS:
            try:
                bounds.append(Version(specifier.version.replace(".*", "")))
            except InvalidVersion:
                continue
    if not bounds:
        return None
    release = tuple(max(bounds).release) + (0,)
    return f"{release[0]}.{release[1]}"


def _as_release(text: str) -> TorchVersion:
    return parse_version(text)


def _floor_of_extras(root: str) -> Optional[DeclaredFloor]:
    """With no requirement on torch outside them, the lowest bound the extras
    of the first declaration naming one put on torch (diffusers:
    ``Requires-Dist: torch>=1.4; extra == "torch"``): the package is used with
    torch only through them, so what they admit is what it supports."""
    for where, requirements in _extra_declarations(root):
        floors = [(version, text) for text in requirements for version in [_floor_of(text)] if version is not None]
        if floors:
            version, text = min(floors)
            return DeclaredFloor(version, f"{where}: {text.strip()}")
    return None


def project_root(start: str) -> Optional[str]:
    """The nearest folder at or above ``start`` that describes a package, else
    the nearest holding a ``requirements*.txt`` (a repository of scripts pins
    its torch there and nowhere else: ``torch==0.4.0a0+9a2e8f3``)."""
    directory = os.path.abspath(start)
    pinned: Optional[str] = None
    while True:
        if any(os.path.isfile(os.path.join(directory, name)) for name in _PROJECT_FILES) or _distribution_metadata(
                directory):
            return directory
        if pinned is None and glob.glob(os.path.join(glob.escape(directory), "requirements*.txt")):
            pinned = directory
        parent = os.path.dirname(directory)
        if parent == directory or os.path.isdir(os.path.join(directory, ".git")):
            return pinned
        directory = parent


def _declarations(root: str) -> Iterator[tuple]:
    yield "pyproject.toml [project] dependencies", _pyproject(os.path.join(root, "pyproject.toml"))
    yield "setup.cfg [options] install_requires", _setup_cfg(os.path.join(root, "setup.cfg"))
    yield "setup.py install_requires", _setup_py(os.path.join(root, "setup.py"))
    for path in sorted(glob.glob(os.path.join(root, "requirements*.txt"))):
        yield os.path.basename(path), _requirements_txt(path)
    for path in sorted(glob.glob(os.path.join(root, "requirements", "*.txt"))):
        if not _NOT_RUNTIME.search(os.path.basename(path)):
            yield os.path.relpath(path, root), _requirements_txt(path)
    for path in _distribution_metadata(root):
        yield f"{os.path.relpath(path, root)} Requires-Dist", _requires_dist(path)


def _extra_declarations(root: str) -> Iterator[tuple]:
    """The optional dependencies, in the order of ``_declarations``."""
    yield "pyproject.toml [project.optional-dependencies]", _pyproject(
        os.path.join(root, "pyproject.toml"), optional=True)
    yield "setup.cfg [options.extras_require]", _setup_cfg(os.path.join(root, "setup.cfg"), optional=True)
    yield "setup.py extras_require", _setup_py(os.path.join(root, "setup.py"), optional=True)
    for path in _distribution_metadata(root):
        yield f"{os.path.relpath(path, root)} Requires-Dist", _requires_dist(path, optional=True)


# Requirements files for other purposes than running the package.
_NOT_RUNTIME = re.compile(r"test|doc|dev|lint|example|bench|ci|typ", re.IGNORECASE)


def _distribution_metadata(root: str) -> List[str]:
    """A source distribution's ``PKG-INFO``, or the ``METADATA`` of the one wheel unpacked here."""
    if os.path.isfile(os.path.join(root, "PKG-INFO")):
        return [os.path.join(root, "PKG-INFO")]
    found = glob.glob(os.path.join(root, "*.dist-info", "METADATA"))
    return found if len(found) == 1 else []


def _requires_dist(path: str, optional: bool = False) -> List[str]:
    """The ``Requires-Dist`` requirements of a metadata file: those of no extra,
    or (``optional``) only those of an extra."""
    text = _read(path)
    if text is None:
        return []
    found = []
    for line in text.split("\n\n", 1)[0].splitlines():  # the headers end at the first blank line
        if line.lower().startswith("requires-dist:"):
            requirement = line.split(":", 1)[1].strip()
            marker = requirement.partition(";")[2]
            if ("extra" in marker) == optional and not (optional and _development_extra(marker)):
                found.append(requirement)
    return found


def _read(path: str) -> Optional[str]:
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > _MAX_FILE_BYTES:
            return None
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def _pyproject(path: str, optional: bool = False) -> List[str]:
    """``[project] dependencies``, or (``optional``) every list of ``[project.optional-dependencies]``."""
    text = _read(path)
    if text is None:
        return []
    try:
        project = tomllib.loads(text).get("project", {})
        if optional:
            extras = project.get("optional-dependencies", {})
            lists = [v for k, v in extras.items() if not _is_development(k)] if isinstance(extras, dict) else []
        else:
            lists = [project.get("dependencies", [])]
    except (tomllib.TOMLDecodeError, AttributeError, RecursionError):
        return []  # torchlint's own configuration reports a broken file
    return [item for items in lists if isinstance(items, list) for item in items if isinstance(item, str)]


def _setup_cfg(path: str, optional: bool = False) -> List[str]:
    """``[options] install_requires``, or (``optional``) every extra of ``[options.extras_require]``."""
    text = _read(path)
    if text is None:
        return []
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
        if optional:
            values = [v for k, v in parser["options.extras_require"].items() if not _is_development(k)] \
                if parser.has_section("options.extras_require") else []
        else:
            values = [parser.get("options", "install_requires", fallback="")]
    except configparser.Error:
        return []
    return [line for value in values for line in value.splitlines() if line.strip()]


def _setup_py(path: str, optional: bool = False) -> List[str]:
    """A literal ``install_requires=[...]``, or (``optional``) the literal lists
    of a literal ``extras_require={...}``."""
    text = _read(path)
    if text is None:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    lists: List[ast.AST] = []
    for node in ast.walk(tree):
        if not optional and isinstance(node, ast.keyword) and node.arg == "install_requires":
            lists.append(node.value)
        elif optional and isinstance(node, ast.keyword) and node.arg == "extras_require" \
                and isinstance(node.value, ast.Dict):
            lists += [value for key, value in zip(node.value.keys, node.value.values)
                      if not (isinstance(key, ast.Constant) and _is_development(str(key.value)))]
    return [item.value for items in lists if isinstance(items, (ast.List, ast.Tuple))
            for item in items.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)]


# Extras that install the project's development tools, not a way to use it: a torch they
# pin is the one its own tests run on (torchlint's ``test`` extra), no floor of what it supports.
_DEVELOPMENT_EXTRAS = frozenset({"test", "tests", "testing", "dev", "develop", "development", "docs", "doc",
                                 "lint", "linting", "quality", "style", "typing", "types", "benchmark",
                                 "benchmarks", "ci"})


def _is_development(extra: str) -> bool:
    return extra.strip().lower().replace("_", "-") in _DEVELOPMENT_EXTRAS


def _development_extra(marker: str) -> bool:
    """Is a ``Requires-Dist`` marker (``extra == "test"``) one of a development extra?"""
    names = re.findall(r"""extra\s*==\s*['"]([^'"]+)['"]""", marker)
    return bool(names) and all(_is_development(name) for name in names)


def _requirements_txt(path: str) -> List[str]:
    text = _read(path)
    if text is None:
        return []
    lines = (line.split(" #", 1)[0].strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith(("#", "-"))]


def _floor_of(text: str) -> Optional[TorchVersion]:
    """The lowest torch ``text`` admits, if it is a requirement on torch with a lower bound."""
    # Imported here: most runs find no requirement to read, and packaging takes
    # a sixth of the time torchlint's start takes.
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

    try:
        requirement = Requirement(text.strip())
    except InvalidRequirement:
        return None
    if canonicalize_name(requirement.name) != "torch":
        return None
    bounds: List[Version] = []
    for specifier in requirement.specifier:
        if specifier.operator in _LOWER_BOUNDS:
            try:
                bounds.append(Version(specifier.version.replace(".*", "")))
            except InvalidVersion:
                continue
    return _as_torch_version(max(bounds)) if bounds else None


def _as_torch_version(version: Version) -> TorchVersion:
    release = tuple(version.release) + (0, 0, 0)
    return release[:3]

