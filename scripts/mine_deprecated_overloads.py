#!/usr/bin/env python
"""Write torchlint/knowledge/data/torch_deprecated_overloads.json: torch's scalar-first overloads, as data.

torch keeps the pre-0.4 argument orders of ``add``, ``sub``, ``addcmul``,
``addcdiv``, ``addmm`` and their kin (``p.add_(-lr, grad)``,
``torch.addmm(beta, M, alpha, a, b)``) as deprecated overloads that warn
"This overload of add_ is deprecated". torch lists them in one file, shipped
in every wheel with its code generator: ``torchgen/packaged/autograd/deprecated.yaml``.
Each entry gives the old signature and the call it stands for::

    - name: addmm(Scalar beta, Tensor self, Scalar alpha, Tensor mat1, Tensor mat2) -> Tensor
      aten: addmm(self, mat1, mat2, beta, alpha)

which is the rewrite: the tensors in the ``aten`` order, by position; each
scalar as the keyword of its name (``beta=``, ``alpha=``, ``value=``); a
literal ``1`` there is the default, left out.

For every entry the script records the Python forms it has (a ``torch.``
function, a ``Tensor`` method: the in-place ``add_`` only the method, ``out=``
only the function) and, from the ``.pyi`` stubs torch ships (``torch/_C/``),
how many positional arguments the current signatures of the same name take:
a call with more than that can only be the deprecated overload. The stubs
also confirm that each scalar's name is a keyword of the current signature.

Run it after upgrading torch: ``python scripts/mine_deprecated_overloads.py``;
``--stdout`` prints instead of writing. ``tests/test_deprecated_overloads.py``
checks the committed file against the installed torch and runs every entry.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
OUTPUT = REPO / "torchlint" / "knowledge" / "data" / "torch_deprecated_overloads.json"
FORMAT = 1

SIGNATURE = re.compile(r"^(?P<name>\w+)\((?P<params>.*)\)\s*->")
CALL = re.compile(r"^(?P<name>\w+)\((?P<args>.*)\)$")


@dataclass(frozen=True)
class Entry:
    """One line pair of ``deprecated.yaml``."""

    name: str  # ``add_``
    params: Tuple[Tuple[str, str], ...]  # (type, name) before ``*``: (("Tensor", "self"), ("Scalar", "alpha"), ...)
    out: bool  # has a keyword-only ``out``
    aten_args: Tuple[str, ...]  # the arguments of the call it stands for: names, or a literal ``1``


def parse_entry(signature: str, aten: str) -> Entry:
    match = SIGNATURE.match(signature)
    assert match, signature
    params, out = [], False
    keyword_only = False
    for part in (p.strip() for p in match.group("params").split(",")):
        if part == "*":
            keyword_only = True
            continue
        kind, name = part.rsplit(" ", 1)
        kind = kind.split("(")[0]  # ``Tensor(a!)``: the alias annotation says nothing here
        if keyword_only:
            assert name == "out", signature
            out = True
        else:
            params.append((kind, name))
    call = CALL.match(aten.strip())
    assert call, aten
    return Entry(match.group("name"), tuple(params), out, tuple(a.strip() for a in call.group("args").split(",")))


def read_entries(path: Path) -> List[Entry]:
    import yaml

    return [parse_entry(item["name"], item["aten"]) for item in yaml.safe_load(path.read_text(encoding="utf-8"))]


# --- the current signatures, from the stubs --------------------------------------------------


@dataclass(frozen=True)
class Stub:
    positional: Tuple[str, ...]  # parameter names before ``*`` (without ``self`` for methods)
    keywords: Tuple[str, ...]  # keyword-only names


def _stub(function: ast.FunctionDef, method: bool) -> Stub:
    positional = [a.arg for a in function.args.posonlyargs + function.args.args]
    if method:
        positional = positional[1:]
    return Stub(tuple(positional), tuple(a.arg for a in function.args.kwonlyargs))


def read_stubs(torch_dir: Path) -> Dict[Tuple[str, str], List[Stub]]:
    """(form, name) -> the overloads the stubs declare."""
    stubs: Dict[Tuple[str, str], List[Stub]] = {}
    functions = ast.parse((torch_dir / "_C" / "_VariableFunctions.pyi").read_text(encoding="utf-8"))
    for node in functions.body:
        if isinstance(node, ast.FunctionDef):
            stubs.setdefault(("function", node.name), []).append(_stub(node, method=False))
    tensor = ast.parse((torch_dir / "_C" / "__init__.pyi").read_text(encoding="utf-8"))
    for node in tensor.body:
        if isinstance(node, ast.ClassDef) and node.name == "TensorBase":
            for member in node.body:
                if isinstance(member, ast.FunctionDef):
                    stubs.setdefault(("method", member.name), []).append(_stub(member, method=True))
    return stubs


# --- the records -------------------------------------------------------------------------


def python_name(name: str, form: str) -> str:
    """The Python name of a schema parameter: the function calls ``self`` ``input``."""
    return "input" if name == "self" and form == "function" else name


def forms(entry: Entry, torch) -> Iterator[str]:
    """The Python forms of an entry: ``out=`` exists only on the function, ``add_`` only on tensors."""
    if hasattr(torch.Tensor, entry.name) and not entry.out:
        yield "method"
    if hasattr(torch, entry.name):
        yield "function"


def record(entry: Entry, form: str, stubs: Dict[Tuple[str, str], List[Stub]],
           deprecated: Sequence[Tuple[str, ...]]) -> dict:
    """``deprecated``: the parameter names of every deprecated signature of the name (the
    stubs declare them too, calling ``input`` ``self``)."""
    params = [(kind, name) for kind, name in entry.params if not (form == "method" and name == "self")]
    old = [python_name(name, form) for _, name in params]
    scalars = [python_name(name, form) for kind, name in params if kind == "Scalar"]
    moved = [a for a in entry.aten_args if a != "1" and a != "out"]  # ``1``: the default
    new = [python_name(a, form) for a in moved if a in {n for k, n in entry.params if k == "Tensor"}
           and not (form == "method" and a == "self")]
    keywords = [python_name(a, form) for a in moved if python_name(a, form) in scalars]
    current = [s for s in stubs.get((form, entry.name), []) if s.positional not in deprecated]
    assert current, f"no current signature of {form} {entry.name} in the stubs"
    missing = [k for k in keywords if not any(k in s.keywords for s in current)]
    assert not missing, f"{form} {entry.name}: {missing} are not keywords of the current signature"
    assert sorted(new + keywords) == sorted(old), (entry, form)
    return {
        "name": entry.name,
        "form": form,
        "old": old,
        "scalars": scalars,
        "new": new,
        "keywords": keywords,
        "out": entry.out,
        "current_positional": max(len(s.positional) for s in current),
    }


def _spellings(entry: Entry) -> Iterator[Tuple[str, ...]]:
    """The positional names of ``entry`` as the stubs may declare them: as a function, as a method."""
    names = tuple(name for _, name in entry.params)
    yield names
    yield tuple(name for name in names if name != "self")


def mine() -> dict:
    import torch
    import torchgen

    source = Path(torchgen.__file__).parent / "packaged" / "autograd" / "deprecated.yaml"
    stubs = read_stubs(Path(torch.__file__).parent)
    entries = read_entries(source)
    records: Dict[Tuple[str, str, Tuple[str, ...]], dict] = {}
    for entry in entries:
        deprecated = [signature for other in entries if other.name == entry.name
                      for signature in _spellings(other)]
        for form in forms(entry, torch):
            item = record(entry, form, stubs, deprecated)
            key = (item["name"], item["form"], tuple(item["old"]))
            if key in records:
                # The same overload with and without ``out=``: one record that may take it.
                records[key]["out"] = records[key]["out"] or item["out"]
            else:
                records[key] = item
    overloads = [records[key] for key in sorted(records)]
    return {
        "format": FORMAT,
        "torch": torch.__version__.split("+")[0],
        "source": "torchgen/packaged/autograd/deprecated.yaml",
        "overloads": overloads,
    }


def render(data: dict) -> str:
    lines = ["{"]
    for key in ("format", "torch", "source"):
        lines.append(f"  {json.dumps(key)}: {json.dumps(data[key])},")
    lines.append('  "overloads": [')
    items = [f"    {json.dumps(item, sort_keys=True)}" for item in data["overloads"]]
    lines.append(",\n".join(items))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stdout", action="store_true", help="print the data instead of writing it")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where to write the data")
    args = parser.parse_args(argv)
    text = render(mine())
    if args.stdout:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
