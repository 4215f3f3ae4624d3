"""Every module file of a project, listed for the questions no import answers
(which modules import a given one: ``Project.names_imported_elsewhere``).

The walk covers the folders imports are looked up in (``project_files``):
the project roots and the root of the module asked about. Folders Python
never imports project code from are skipped: hidden ones, ``__pycache__``,
virtual environments (a ``pyvenv.cfg`` inside), ``site-packages`` and
``node_modules``. Symlinked folders are not followed (a link to ``/`` would
walk the machine). The listing is made once per root and run.
"""

from __future__ import annotations

from typing import Dict, Iterable, Iterator, List

from torchlint.core.dependencies import walk_python_files


def python_files(roots: Iterable[str], cache: Dict[str, List[str]]) -> Iterator[str]:
    """The ``.py`` files under ``roots`` (each listed once, in a stable order)."""
    seen = set()
    for root in roots:
        if root not in cache:
            cache[root] = sorted(walk_python_files(root))
        for path in cache[root]:
            if path not in seen:
                seen.add(path)
                yield path
