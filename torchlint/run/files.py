"""Which files to check: explicit paths, and directories searched recursively.

Directories skip version control, virtualenvs (any folder holding a
``pyvenv.cfg``), caches and build output (``DEFAULT_EXCLUDE``, which a
configuration's ``exclude`` replaces); a file named explicitly is always
checked unless ``force_exclude`` is set. Each file is yielded once, in sorted
order, whatever the overlap of the paths given.
"""

from __future__ import annotations

import errno
import os
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")
SKIPPED_DIRECTORIES = frozenset({
    ".git", ".hg", ".svn", ".bzr", "__pycache__", ".tox", ".nox", ".venv", "venv", ".eggs",
    "build", "dist", "site-packages", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".torchlint_cache",
    "__pypackages__", "_build", "buck-out", ".ipynb_checkpoints",
})
# The same, as the name patterns a configuration's ``exclude`` replaces.
DEFAULT_EXCLUDE = (*sorted(SKIPPED_DIRECTORIES), "*.egg-info")


def _skipped_by_default(path: str) -> bool:
    name = os.path.basename(os.path.normpath(path))
    return name in SKIPPED_DIRECTORIES or name.endswith(".egg-info")


def discover(
    paths: Sequence[str],
    is_excluded: Optional[Callable[[str], bool]] = None,
    force_excluded: Optional[Callable[[str], bool]] = None,
) -> Iterator[Tuple[str, Optional[str]]]:
    """Yield (file, None) for each file to check, (path, error) for bad paths.

    ``is_excluded(path)`` says which folders and files a search skips
    (default: the built-in list). ``force_excluded(path)``, when given, drops
    paths named explicitly too (``--force-exclude``).
    """
    excluded = is_excluded or _skipped_by_default
    seen = set()
    for path in paths:
        if force_excluded is not None and force_excluded(path):
            continue
        if os.path.isdir(path):
            unlisted: List[Tuple[str, str]] = []
            files = sorted(_walk(path, excluded, unlisted))
            yield from unlisted
        elif os.path.exists(path):
            files = [path]
        elif os.path.lexists(path):
            yield path, "symbolic link loop" if _loops(path) else "broken symbolic link"
            continue
        else:
            yield path, "no such file or directory"
            continue
        for file in files:
            key = os.path.realpath(file)
            if key not in seen:
                seen.add(key)
                yield file, None


def _loops(path: str) -> bool:
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _walk(root: str, excluded: Callable[[str], bool], unlisted: List[Tuple[str, str]]) -> Iterator[str]:
    """The files to check under ``root``; each directory that cannot be
    listed goes into ``unlisted`` as (path, error): its files are unknown,
    which must not pass for "nothing to check"."""

    def cannot_list(exc: OSError) -> None:
        unlisted.append((exc.filename or root, f"cannot list the directory: {exc.strerror or exc}"))

    for directory, subdirectories, files in os.walk(root, onerror=cannot_list):
        subdirectories[:] = sorted(
            d for d in subdirectories
            if not excluded(os.path.join(directory, d))
            and not os.path.exists(os.path.join(directory, d, "pyvenv.cfg"))
        )
        for name in files:
            if name.endswith(SOURCE_SUFFIXES):
                path = os.path.join(directory, name)
                if not excluded(path):
                    yield path
