#!/usr/bin/env python
"""Write torchlint/knowledge/data/lr_schedules.json: the calls that make an
optimizer's learning-rate schedule.

A schedule's ``state_dict()`` holds Python numbers only (base rates, the step
count, the last rates, the plateau's best metric as a float), so a file saved
from one, or read back into one, has no tensor on a GPU: TL203 does not ask
for ``map_location=`` there (``analysis/saved_files.py``).

Two sources, both read, never typed by hand:
- torch: every public class of ``torch.optim.lr_scheduler`` and
  ``torch.optim.swa_utils`` that derives from the schedulers' base class
  (``LRScheduler``, ``_LRScheduler`` before 2.0) or is ``ReduceLROnPlateau``,
  from the installed torch;
- transformers (``--transformers DIR``, the folder holding the ``transformers``
  package's sources, e.g. an unpacked wheel): each function of
  ``transformers/optimization.py`` whose every ``return`` calls one of torch's
  schedulers or another such function (``get_linear_schedule_with_warmup``
  returns ``LambdaLR(...)``), under its module's name and, where the package's
  ``__init__.py`` names it, under ``transformers`` too.

Run: ``python scripts/mine_lr_schedules.py [--transformers DIR] [--stdout]``;
without ``--transformers`` the committed file's transformers part is kept.
``tests/test_lr_schedules.py`` checks the torch part against the installed
torch and the transformers reading on a small copy of that file's shape.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import sys
from pathlib import Path
from typing import Dict, Iterable, List, Set

OUT = Path(__file__).resolve().parent.parent / "torchlint" / "knowledge" / "data" / "lr_schedules.json"
TORCH_MODULES = ("torch.optim.lr_scheduler", "torch.optim.swa_utils")


def torch_schedules() -> List[str]:
    """The qualified names of the installed torch's public scheduler classes."""
    import importlib

    lr_scheduler = importlib.import_module("torch.optim.lr_scheduler")
    bases = tuple(getattr(lr_scheduler, name) for name in ("LRScheduler", "_LRScheduler", "ReduceLROnPlateau")
                  if hasattr(lr_scheduler, name))
    found: Set[str] = set()
    for module_name in TORCH_MODULES:
        module = importlib.import_module(module_name)
        for name, obj in vars(module).items():
            if name.startswith("_") or not inspect.isclass(obj) or not issubclass(obj, bases):
                continue
            if obj.__name__ in ("LRScheduler", "_LRScheduler"):
                continue  # the base class: a subclass of the user's may keep tensors
            found.add(f"{module_name}.{name}")
    return sorted(found)


def transformers_schedules(package: Path, torch_classes: Iterable[str]) -> List[str]:
    """Functions of ``package/optimization.py`` (``package`` is the ``transformers``
    folder) that return torch schedulers, qualified as the package exports them."""
    source = (package / "optimization.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    torch_names = {name.rsplit(".", 1)[1] for name in torch_classes}
    imported = _names_imported_from(tree, TORCH_MODULES) & torch_names
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    makers: Set[str] = set(imported)
    changed = True
    while changed:  # a function returning another maker's call is one too
        changed = False
        for name, node in functions.items():
            if name not in makers and not name.startswith("_") and _returns_only_calls_of(node, makers):
                makers.add(name)
                changed = True
    found = sorted(name for name in makers if name in functions)
    exported = _exported_names(package / "__init__.py")
    qualified = [f"transformers.optimization.{name}" for name in found]
    qualified += [f"transformers.{name}" for name in found if name in exported]
    return sorted(qualified)


def _names_imported_from(tree: ast.Module, modules: Iterable[str]) -> Set[str]:
    wanted = set(modules)
    names: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in wanted:
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def _returns_only_calls_of(function: ast.FunctionDef, makers: Set[str]) -> bool:
    """Does every ``return`` of ``function`` (not of defs nested in it) call a maker?"""
    returns = [node for node in _own_nodes(function) if isinstance(node, ast.Return)]
    return bool(returns) and all(
        isinstance(r.value, ast.Call) and isinstance(r.value.func, ast.Name) and r.value.func.id in makers
        for r in returns)


def _own_nodes(function: ast.FunctionDef) -> Iterable[ast.AST]:
    stack: List[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _exported_names(init: Path) -> Set[str]:
    """The string constants of the package's ``__init__.py`` (its lazy import table names
    each export as a string) and the names it imports."""
    if not init.is_file():
        return set()
    tree = ast.parse(init.read_text(encoding="utf-8"))
    names = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    names |= {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
              for alias in node.names}
    return names


def _transformers_version(package: Path) -> str:
    for line in (package / "__init__.py").read_text(encoding="utf-8").splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip("\"'")
    return "unknown"


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transformers", type=Path, help="the transformers package folder to read")
    parser.add_argument("--stdout", action="store_true", help="print instead of writing the file")
    args = parser.parse_args(argv)
    import torch

    torch_part = torch_schedules()
    data: Dict[str, object] = json.loads(OUT.read_text(encoding="utf-8")) if OUT.is_file() else {}
    data.update({"generated_by": "scripts/mine_lr_schedules.py", "torch_version": torch.__version__.split("+")[0],
                 "torch": torch_part})
    if args.transformers is not None:
        if not (args.transformers / "optimization.py").is_file() or not (args.transformers / "__init__.py").is_file():
            parser.error(f"{args.transformers} is not the transformers package folder "
                         "(it needs optimization.py and __init__.py)")
        data["transformers_version"] = _transformers_version(args.transformers)
        data["transformers"] = transformers_schedules(args.transformers, torch_part)
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if args.stdout:
        sys.stdout.write(text)
    else:
        OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
