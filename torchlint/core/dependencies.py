"""How a check names what its findings depend on, and where an import leads.

A dependency is a module of the project the check read (its path, with the
digest of the bytes read), or a place where an import looked for a module
(``PROBE`` + the place, ``folder/name`` without a suffix, with what it found
there: ``NOTHING``, ``MODULE``, ``PACKAGE`` or ``NAMESPACE``). Every place an
import resolution probed is one, in order, the one that answered included: a
module added at an earlier place shadows the one found, and a package
appearing, vanishing or losing its ``__init__.py`` changes the answer too.

``resolve`` is the one way torchlint follows an import through a search path
and ``probe`` the one way it looks at a place, so that the run that records
the probes and the warm run that checks them agree. Kept here, below the
analysis that records them and the run that checks them, so that a warm run,
which only checks them, never loads the analysis.
"""

import hashlib
import os
import stat
from typing import Callable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

PROBE = "probe:"
# What a place holds for an import, by Python's precedence within one folder.
NOTHING = ""
PACKAGE = "package"  # folder/name/__init__.py: a regular package
MODULE = "module"  # folder/name.py
NAMESPACE = "namespace"  # the folder folder/name without __init__.py: a namespace portion


# A folder's listing of modules (``LISTING`` + the folder): what an answer that
# read every module of a folder depends on besides their bytes (one appearing).
LISTING = "listing:"
# How many modules a folder may hold for its listing to be read at all.
MAX_LISTED = 200


def listed_modules(folder: str) -> Optional[List[str]]:
    """The ``.py`` files of ``folder`` (not in its subfolders, no symlinks), sorted;
    None when it cannot be read or holds more than ``MAX_LISTED``."""
    try:
        names = sorted(entry.name for entry in os.scandir(folder)
                       if entry.name.endswith(".py") and entry.is_file(follow_symlinks=False))
    except (OSError, ValueError):
        return None
    return names if len(names) <= MAX_LISTED else None


# The files by which a folder may ship its modules to other projects (``py_modules``).
_METADATA = ("setup.py", "setup.cfg", "pyproject.toml")


def ships_modules(folder: str) -> bool:
    """Does ``folder``'s packaging metadata ship its top-level modules (``py_modules``,
    ``py-modules``)? Then anyone may import them, not only the scripts beside them."""
    for name in _METADATA:
        try:
            with open(os.path.join(folder, name), "rb") as handle:
                data = handle.read(1 << 20)
        except OSError:
            continue
        if b"py_modules" in data or b"py-modules" in data:
            return True
    return False


# ``LISTING`` + a project root + ``TREE``: the listing of every module under the root
# (``tree_modules``), for an answer that read all of a scripts project's modules.
TREE = os.sep + "**"
# How many modules a scripts project may hold for them all to be read.
MAX_TREE = 300
# Folders Python never imports a project's code from.
_SKIPPED_FOLDERS = frozenset({"__pycache__", "site-packages", "node_modules", "build", "dist"})


def walk_python_files(root: str) -> Iterator[str]:
    """The ``.py`` files under ``root``, skipping hidden folders, ``__pycache__``, virtual
    environments (a ``pyvenv.cfg`` inside), ``site-packages``, ``node_modules`` and build
    output; symlinks are not followed (a link to ``/`` would walk the machine)."""
    for folder, folders, files in os.walk(root, followlinks=False):
        folders[:] = [name for name in folders
                      if not name.startswith(".") and name not in _SKIPPED_FOLDERS
                      and not os.path.isfile(os.path.join(folder, name, "pyvenv.cfg"))]
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                if not os.path.islink(path):
                    yield path


def tree_modules(root: str) -> Optional[List[str]]:
    """Every module file under ``root``, sorted; None when it holds more than ``MAX_TREE``
    or cannot be read."""
    found: List[str] = []
    try:
        for path in walk_python_files(root):
            found.append(path)
            if len(found) > MAX_TREE:
                return None
    except (OSError, ValueError):
        return None
    return sorted(found)


def declares_distribution(folder: str) -> bool:
    """Does ``folder`` hold a distribution's metadata (``setup.py``, a ``[project]`` or
    poetry table in ``pyproject.toml``, ``[metadata]`` in ``setup.cfg``, an unpacked
    wheel's ``.dist-info``)? Then other projects may import its modules and call its defs."""
    if os.path.isfile(os.path.join(folder, "setup.py")):
        return True
    for name, tables in (("pyproject.toml", (b"[project]", b"[tool.poetry]")), ("setup.cfg", (b"[metadata]",))):
        try:
            with open(os.path.join(folder, name), "rb") as handle:
                data = handle.read(1 << 20)
        except OSError:
            continue
        if any(table in data for table in tables):
            return True
    try:
        return any(entry.name.endswith((".dist-info", ".egg-info")) for entry in os.scandir(folder))
    except (OSError, ValueError):
        return True


def listing_digest(folder: str) -> str:
    """What ``LISTING`` + ``folder`` compares: the names of its modules, and whether it ships
    them; for a root + ``TREE``, every module under it and whether it is a distribution."""
    if folder.endswith(TREE):
        root = folder[: -len(TREE)]
        paths = tree_modules(root)
        if paths is None:
            return NOTHING
        return content_digest("\n".join([*(os.path.relpath(path, root) for path in paths),
                                         str(declares_distribution(root))]).encode())
    names = listed_modules(folder)
    if names is None:
        return NOTHING
    return content_digest("\n".join([*names, str(ships_modules(folder))]).encode())


def content_digest(data: bytes) -> str:
    """The hash of a file's bytes: results and module summaries are keyed by what was read."""
    return hashlib.blake2b(data, digest_size=20).hexdigest()


def probe(place: str) -> str:
    """What an import of ``name`` finds at ``place`` (``folder/name``), as
    Python's path finder looks: a regular package before a module of the same
    name, a folder without ``__init__.py`` (a namespace portion) last."""
    try:
        is_folder = stat.S_ISDIR(os.stat(place).st_mode)
    except (OSError, ValueError):
        is_folder = False
    if is_folder and os.path.isfile(os.path.join(place, "__init__.py")):
        return PACKAGE
    if os.path.isfile(place + ".py"):
        return MODULE
    return NAMESPACE if is_folder else NOTHING


class Resolution(NamedTuple):
    """Where an import led: the file of the module (None: not found, or a
    namespace package, which has no file), whether it is a package, and every
    place probed on the way, in order, with what was found there."""

    path: Optional[str]
    is_package: bool
    probes: Tuple[Tuple[str, str], ...]


def resolve(name: str, folders: Sequence[str], probe_place: Callable[[str], str] = probe) -> Resolution:
    """Where ``import name`` (absolute, dotted) leads from the search path
    ``folders``, as Python's path finder goes: each part is looked for in the
    folders of the package before it (the search path for the first), in
    order; a package or module ends the search for that part, namespace
    portions count only when no folder has either, and a module has no
    submodules. ``probe_place``: ``probe``, or a caching stand-in for it."""
    probes: List[Tuple[str, str]] = []
    path = list(folders)
    parts = name.split(".")
    for index, part in enumerate(parts):
        found, portions = None, []
        for folder in path:
            place = os.path.join(folder, part)
            outcome = probe_place(place)
            probes.append((place, outcome))
            if outcome in (PACKAGE, MODULE):
                found = (place, outcome)
                break
            if outcome == NAMESPACE:
                portions.append(place)
        last = index == len(parts) - 1
        if found is not None:
            place, outcome = found
            if last:
                is_package = outcome == PACKAGE
                return Resolution(os.path.join(place, "__init__.py") if is_package else place + ".py",
                                  is_package, tuple(probes))
            if outcome == MODULE:
                break  # ``import helpers.x`` where helpers is a module: an error in Python
            path = [place]
        elif portions and not last:
            path = portions
        else:
            break  # nothing, or a namespace package: no file to read
    return Resolution(None, False, tuple(probes))
