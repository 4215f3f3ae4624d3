"""From which torch release names and modules exist, mined from the releases' sources.

``scripts/mine_replacement_since.py`` reads the ``.py`` files of every release
from 1.8 on and writes ``data/replacement_since.json``: the first release of
each name a deprecation's replacement needs (``names``), and of each torch
module newer than the oldest release read (``modules``). Nothing here is
typed by hand; ``tests/test_deprecations_table.py`` checks the file against
the tables and the installed torch.
"""

from __future__ import annotations

import json
import pkgutil
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Mapping, Optional

REPLACEMENT_SINCE_DATA = "replacement_since.json"
REPLACEMENT_SINCE_FILE = Path(__file__).resolve().parent / "data" / REPLACEMENT_SINCE_DATA


@lru_cache(maxsize=1)
def _data() -> Dict[str, Any]:
    raw = pkgutil.get_data("torchlint.knowledge", "data/" + REPLACEMENT_SINCE_DATA)
    return json.loads(raw.decode("utf-8")) if raw else {}


def name_releases() -> Mapping[str, Optional[str]]:
    """Each replacement name -> the first torch release that has it (None: the oldest one mined)."""
    return _data().get("names", {})


def newer_modules() -> Mapping[str, str]:
    """Each torch module newer than the oldest release mined -> its first release."""
    return _data().get("modules", {})


def module_release(module: str) -> Optional[str]:
    """The first release from which the torch module ``module`` exists (and goes on existing);
    None when it is as old as the oldest release mined, or not known."""
    return _data().get("modules", {}).get(module)


PYTHON_SUPPORT_DATA = "torch_python_support.json"


@lru_cache(maxsize=1)
def _python_support() -> Dict[str, Any]:
    raw = pkgutil.get_data("torchlint.knowledge", "data/" + PYTHON_SUPPORT_DATA)
    return json.loads(raw.decode("utf-8")) if raw else {}


def oldest_release_on_pypi() -> str:
    """The oldest torch release PyPI publishes (``scripts/mine_python_support.py``)."""
    return _python_support().get("oldest", "1.0")


def first_release_for_python(python: str) -> Optional[str]:
    """The first torch release with a wheel for Python ``python`` ("3.11"); None for a
    Python PyPI never served torch for (too old, or newer than the data)."""
    return _python_support().get("first_release_for_python", {}).get(python)
