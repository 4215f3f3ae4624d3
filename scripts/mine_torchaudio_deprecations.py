#!/usr/bin/env python
"""Write torchlint/knowledge/data/torchaudio_deprecations_mined.json: torchaudio's 2.8/2.9 removals, as data.

torchaudio 2.8 deprecated most of its API (the I/O and backend functions
moved to TorchCodec, the prototype and C++-backed functions are dropped) and
2.9 removed it. This script reads torchaudio wheels as zip archives (never
installed, never imported) with ``scripts/mine_torch_deprecations.py``'s
machinery: its syntax-tree walker finds ``warnings.warn`` and ``@deprecated``;
this script adds torchaudio's own wrappers, which the walker cannot follow
because they are made by a factory (``dropping_support = deprecated(...)``,
``dropping_class_support(c)`` replacing ``c.__init__``, ``partial`` of one):

* a def or class decorated with one of them (``@dropping_support``);
* a module-level name bound to one applied to an object
  (``rnnt_loss = dropping_support(_rnnt_loss)``).

The releases are diffed into one table as torch's are (per item: ``warns``,
``raises``, ``gone`` or ``silent`` in each release, and from that the release
that deprecated and removed it). No torchaudio is installed here, so the
tests read the committed data; re-run after a new release:

    pip download --no-deps --only-binary :all: --python-version 3.11 \\
        --platform manylinux_2_28_x86_64 torchaudio==2.8.0 -d wheels/
    python scripts/mine_torchaudio_deprecations.py wheels/torchaudio-2.7.1-*.whl \\
        wheels/torchaudio-2.8.0-*.whl wheels/torchaudio-2.9.1-*.whl

``--report`` prints the counts by release and namespace (to stderr).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import sys
import zipfile
from functools import partial
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set

REPO = Path(__file__).resolve().parent.parent
OUTPUT = REPO / "torchlint" / "knowledge" / "data" / "torchaudio_deprecations_mined.json"
HELPERS_MODULE = "torchaudio/_internal/module_utils.py"
NAMESPACES = ("torchaudio", "torchaudio.functional", "torchaudio.transforms", "torchaudio.io", "torchaudio.backend",
              "torchaudio.sox_effects", "torchaudio.utils", "torchaudio.models", "torchaudio.pipelines",
              "torchaudio.prototype.functional", "torchaudio.kaldi_io", "torchaudio.compliance.kaldi",
              "torchaudio.models.decoder", "torchaudio.datasets")


def _miner():
    """scripts/mine_torch_deprecations.py as a module, set to read torchaudio."""
    spec = importlib.util.spec_from_file_location("mine_torch_deprecations", REPO / "scripts" /
                                                  "mine_torch_deprecations.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    module.PACKAGES = ("torchaudio",)
    module.NAMESPACES = NAMESPACES
    module.PUBLIC_PRIVATE_MODULES = ()
    module.FALLBACKS = {}
    return module


def release_of(miner, wheel: Path):
    archive = zipfile.ZipFile(wheel)
    read = lambda name: archive.read(name).decode("utf-8", errors="replace")  # noqa: E731
    files = {name: partial(read, name) for name in sorted(archive.namelist())
             if name.startswith("torchaudio/") and name.endswith((".py", ".pyi"))}
    return miner.Release(miner._version_of(files["torchaudio/version.py"]()), files)


def _helpers(release) -> Set[str]:
    """The names in torchaudio's module_utils that deprecate what they wrap: ``deprecated`` and
    ``wrap_deprecated``, names bound to a call of one, defs that call one."""
    if HELPERS_MODULE not in release.files:
        return set()
    tree = ast.parse(release.text(HELPERS_MODULE))
    found = {"deprecated", "wrap_deprecated"}
    changed = True
    while changed:  # helpers made of helpers (dropping_io_support = deprecated(...))
        changed = False
        for node in tree.body:
            names: List[str] = []
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                # a call of a helper, or partial(helper, ...) (dropping_class_io_support)
                if _called_name(node.value) in found or any(
                        isinstance(arg, ast.Name) and arg.id in found for arg in node.value.args):
                    names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.FunctionDef) and any(
                    isinstance(n, ast.Call) and _called_name(n) in found for n in ast.walk(node)):
                names = [node.name]
            for name in names:
                if name not in found:
                    found.add(name)
                    changed = True
    return found


def _called_name(call: ast.Call) -> Optional[str]:
    func = call.func
    while isinstance(func, ast.Call):  # deprecated("...")(f)
        func = func.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def wrapper_findings(miner, release) -> List[object]:
    """Findings for the defs, classes and names torchaudio wraps with its deprecating helpers."""
    helpers = _helpers(release) - {"wrap_deprecated"}
    findings: List[object] = []
    for module, relative in miner._source_files(release):
        if relative == HELPERS_MODULE:
            continue
        text = release.text(relative)
        if not any(h in text for h in helpers):
            continue
        tree = ast.parse(text)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                for decorator in node.decorator_list:
                    name = _called_name(decorator) if isinstance(decorator, ast.Call) else (
                        decorator.id if isinstance(decorator, ast.Name) else None)
                    if name in helpers:
                        kind = "class" if isinstance(node, ast.ClassDef) else "function"
                        findings.append(miner.Finding(module, node.name, kind, "decorator", "UserWarning",
                                                      _message(decorator, name)))
                        break
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                name = _called_name(node.value)
                if name in helpers:
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            findings.append(miner.Finding(module, target.id, "function", "decorator", "UserWarning",
                                                          _message(node.value, name)))
    return findings


def _message(node: ast.AST, helper: str) -> str:
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and isinstance(
            node.args[0].value, str) and helper == "deprecated":
        return node.args[0].value[:160]
    return f"deprecated by torchaudio's {helper} (removed in 2.9)"


def mine(wheels: Sequence[Path]) -> Dict[str, object]:
    miner = _miner()
    releases = sorted((release_of(miner, w) for w in wheels), key=lambda r: miner._release_key(r.version))
    names = {r.version: miner.StaticNames(r) for r in releases}
    original = miner.mine_sources
    mined: Dict[str, Dict[str, Dict[str, object]]] = {}
    for release in releases:
        miner.mine_sources = lambda r, _release=release: original(r) + wrapper_findings(miner, _release)
        mined[release.version] = miner.mine_release(release, names[release.version])
    miner.mine_sources = original
    table = miner.build_table(mined, names, releases[-1].version)
    table["package"] = "torchaudio"
    return table


def report(data: Dict[str, object]) -> str:
    items: List[Dict[str, object]] = data["items"]  # type: ignore[assignment]
    public = [i for i in items if i["names"]]
    lines = [f"torchaudio {', '.join(data['releases'])}: {len(items)} items mined, {len(public)} reachable "
             "by a public name", f"{'release':<10}{'warns':>7}{'raises':>8}{'gone':>6}{'silent':>8}"]
    for release in data["releases"]:  # type: ignore[union-attr]
        counts = {s: sum(i["status"].get(release) == s for i in public) for s in ("warns", "raises", "gone", "silent")}
        lines.append(f"{release:<10}{counts['warns']:>7}{counts['raises']:>8}{counts['gone']:>6}{counts['silent']:>8}")
    by_namespace: Dict[str, List[int]] = {}
    for item in public:
        group = ".".join(str(item["id"]).split("(")[0].split(".")[:2])
        row = by_namespace.setdefault(group, [0, 0])
        row[0] += 1
        row[1] += bool(item["removed"])
    lines += ["", f"{'namespace':<34}{'public':>7}{'removed':>8}"]
    lines += [f"{group:<34}{row[0]:>7}{row[1]:>8}" for group, row in sorted(by_namespace.items())]
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheels", type=Path, nargs="*", help="torchaudio wheels (read as zips, never installed)")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--report", action="store_true", help="print counts by release and namespace (stderr)")
    args = parser.parse_args(argv)
    if args.wheels:
        missing = [w for w in args.wheels if not w.is_file()]
        if missing:
            parser.error(f"no such wheel: {missing[0]}")
        data = mine(args.wheels)
        args.output.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    elif not args.output.exists():
        parser.error("give the torchaudio wheels to mine")
    else:
        data = json.loads(args.output.read_text(encoding="utf-8"))
    if args.report:
        sys.stderr.write(report(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
