#!/usr/bin/env python
"""Write torchlint/knowledge/data/torch_python_support.json: for each Python
minor version, the first torch release published on PyPI with a wheel for it.

A project that declares no torch requirement can be installed with any torch
its Python gets from pip: a package for Python 3.11 and newer meets torch 1.13
at the oldest (the first release with ``cp311`` wheels), never an older one.
``run/project_metadata.py`` reads this file to bound such a project's torch
from below (``least_torch_release``); the engine raises that bound with what
the code shows it needs (``Engine._shown_floor``).

Input: PyPI's JSON description of torch (``https://pypi.org/pypi/torch/json``),
fetched by this script or given as a file (``--json FILE``). Every final
release (``X.Y.Z``) is read; a wheel's ``cpXY`` tag names the Python it is for.
The oldest release on PyPI is recorded too (``oldest``): a Python it already
served may have met older torch from other indexes, so such a Python says only
that much.

Run: ``python scripts/mine_python_support.py [--json FILE] [--stdout]``.
``tests/test_project_metadata.py`` checks the committed file's shape and that
the running Python's entry is no newer than the installed torch.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import urllib.request
from pathlib import Path
from typing import Dict, Tuple

OUT = Path(__file__).resolve().parent.parent / "torchlint" / "knowledge" / "data" / "torch_python_support.json"
PYPI_JSON = "https://pypi.org/pypi/torch/json"
_FINAL = re.compile(r"\d+\.\d+\.\d+")
_PYTHON_TAG = re.compile(r"-cp(\d)(\d+)-")


def _release(version: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def mine(description: Dict) -> Dict:
    releases = sorted((v for v in description["releases"] if _FINAL.fullmatch(v)), key=_release)
    first: Dict[str, str] = {}
    for version in releases:
        for upload in description["releases"][version]:
            tag = _PYTHON_TAG.search(upload.get("filename", ""))
            if tag:
                first.setdefault(f"{tag.group(1)}.{tag.group(2)}", ".".join(version.split(".")[:2]))
    pythons = dict(sorted(first.items(), key=lambda item: _release(item[0])))
    return {"format": 1, "source": PYPI_JSON, "oldest": ".".join(releases[0].split(".")[:2]),
            "first_release_for_python": pythons}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="PyPI's JSON for torch, read instead of fetched")
    parser.add_argument("--stdout", action="store_true", help="print instead of writing the data file")
    args = parser.parse_args()
    if args.json is not None:
        description = json.loads(args.json.read_text())
    else:
        with urllib.request.urlopen(PYPI_JSON, timeout=60) as response:  # noqa: S310 (a fixed https URL)
            description = json.load(response)
    text = json.dumps(mine(description), indent=1) + "\n"
    if args.stdout:
        sys.stdout.write(text)
    else:
        OUT.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
