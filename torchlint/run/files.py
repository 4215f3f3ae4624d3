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
import subprocess
from typing import Callable, Dict, FrozenSet, Iterator, Optional, Sequence, Tuple

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
            files = sorted(_walk(path, excluded))
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


def _walk(root: str, excluded: Callable[[str], bool]) -> Iterator[str]:
    for directory, subdirectories, files in os.walk(root):
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


class GitIgnored:
    """Which paths git ignores (``.gitignore``, ``.git/info/exclude``, the
    global excludes file), for directory searches.

    Asks git once per work tree, not once per file: ``git ls-files --others
    --ignored --exclude-standard --directory`` lists the ignored files and
    folders (an ignored folder as one entry, never its contents), so a
    search prunes it without walking in. Files git tracks are never in the
    list, even if a pattern matches them. Outside a work tree, or without a
    working ``git``, nothing is ignored.
    """

    def __init__(self) -> None:
        self._roots: Dict[str, Optional[str]] = {}  # directory -> its work tree (None: not in one)
        self._ignored: Dict[str, FrozenSet[str]] = {}  # work tree -> ignored absolute paths

    def __call__(self, path: str) -> bool:
        absolute = os.path.abspath(path)
        root = self._root_of(os.path.dirname(absolute))
        if root is None:
            return False
        if root not in self._ignored:
            self._ignored[root] = _list_ignored(root)
        return absolute in self._ignored[root]

    def _root_of(self, directory: str) -> Optional[str]:
        if directory not in self._roots:
            parent = os.path.dirname(directory)
            if os.path.exists(os.path.join(directory, ".git")):
                self._roots[directory] = directory
            else:
                self._roots[directory] = None if parent == directory else self._root_of(parent)
        return self._roots[directory]


def _list_ignored(root: str) -> FrozenSet[str]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"],
            cwd=root, capture_output=True, timeout=60, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return frozenset()  # no git, or not a usable work tree: ignore nothing
    names = os.fsdecode(listed).split("\0")
    return frozenset(os.path.normpath(os.path.join(root, name)) for name in names if name)
