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
from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple

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


def listing_digest(folder: str) -> str:
    """What ``LISTING`` + ``folder`` compares: the names of its modules, and whether it ships them."""
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
