"""Which files to check: explicit paths, and directories searched recursively.

Directories skip version control, virtualenvs (any folder holding a
``pyvenv.cfg``), caches and build output; a file named explicitly is always
checked. Each file is yielded once, in sorted order, whatever the overlap of
the paths given.
"""

from __future__ import annotations

import os
from typing import Iterator, Optional, Sequence, Tuple

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")
SKIPPED_DIRECTORIES = frozenset({
    ".git", ".hg", ".svn", ".bzr", "__pycache__", ".tox", ".nox", ".venv", "venv", ".eggs",
    "build", "dist", "site-packages", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    "__pypackages__", "_build", "buck-out", ".ipynb_checkpoints",
})


def discover(paths: Sequence[str]) -> Iterator[Tuple[str, Optional[str]]]:
    """Yield (file, None) for each file to check, (path, error) for bad paths."""
    seen = set()
    for path in paths:
        if os.path.isdir(path):
            files = sorted(_walk(path))
        elif os.path.exists(path):
            files = [path]
        elif os.path.lexists(path):
            yield path, "broken symbolic link"
            continue
        else:
            yield path, "no such file or directory"
            continue
        for file in files:
            key = os.path.realpath(file)
            if key not in seen:
                seen.add(key)
                yield file, None


def _walk(root: str) -> Iterator[str]:
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(
            d for d in subdirectories
            if d not in SKIPPED_DIRECTORIES
            and not d.endswith(".egg-info")
            and not os.path.exists(os.path.join(directory, d, "pyvenv.cfg"))
        )
        for name in files:
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.join(directory, name)
