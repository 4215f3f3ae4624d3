#!/usr/bin/env python
"""Write torchlint/knowledge/data/torch_api_snapshot.json: torch's public API as data.

torchlint must know torch's API without importing torch (linting has to be
fast and work where torch is not installed), so this script imports the
installed torch once and records, for a fixed list of namespaces:

* the public names of each namespace (``dir()``, the class attributes of
  modules that replace their class, names a module-level ``__getattr__``
  answers, and submodules on disk, which ``import torch.x.y`` binds);
* for callables, their parameters (name and kind) so that an unknown keyword
  can be told from a valid one. ``inspect.signature`` gives them for Python
  code; for builtins they come from the union of the overloads declared in
  the ``.pyi`` stubs shipped in the wheel and of the argument-parser
  signatures compiled into ``libtorch_python`` (the ground truth for
  builtins that have no stub, e.g. ``torch.linalg``);
* functions that were removed but left as stubs raising RuntimeError
  (``torch.solve``, ...), which are not valid API.

Run it after upgrading torch: ``python scripts/snapshot_torch_api.py``.
``--stdout`` prints the snapshot instead of writing it (the test suite uses
it to check the committed file is current).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import pkgutil
import re
import sys
import types
import warnings
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

REPO = Path(__file__).resolve().parent.parent
OUTPUT = REPO / "torchlint" / "knowledge" / "data" / "torch_api_snapshot.json"
FORMAT = 1

# Namespaces users reach by attribute. Left out on purpose: torch.distributed
# and torch.multiprocessing (their contents depend on the platform and build),
# torch.ops / torch.classes (open: any attribute is created on demand), and
# classes (torch.Tensor, nn.Module): their attributes are not namespaces.
NAMESPACES: Tuple[str, ...] = (
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.nn.utils",
    "torch.nn.utils.rnn",
    "torch.nn.utils.parametrize",
    "torch.nn.utils.parametrizations",
    "torch.nn.parallel",
    "torch.nn.attention",
    "torch.optim",
    "torch.optim.lr_scheduler",
    "torch.optim.swa_utils",
    "torch.utils",
    "torch.utils.data",
    "torch.utils.checkpoint",
    "torch.cuda",
    "torch.cuda.amp",
    "torch.amp",
    "torch.cpu",
    "torch.mps",
    "torch.autograd",
    "torch.autograd.functional",
    "torch.linalg",
    "torch.fft",
    "torch.special",
    "torch.distributions",
    "torch.backends",
    "torch.backends.cudnn",
    "torch.backends.cuda",
    "torch.backends.mps",
    "torch.backends.mkldnn",
    "torch.backends.cpu",
    "torch.backends.opt_einsum",
    "torch.jit",
    "torch.onnx",
    "torch.testing",
    "torch.random",
    "torch.hub",
    "torch.sparse",
    "torch.func",
    "torch.profiler",
    "torch.export",
    "torch.compiler",
    "torch.nested",
    "torch.accelerator",
)

# Stub files in the wheel, by the module whose objects they declare.
STUBS: Dict[str, str] = {
    "torch._C._VariableFunctions": "_C/_VariableFunctions.pyi",
    "torch._C": "_C/__init__.pyi",
    "torch._C._nn": "_C/_nn.pyi",
    "torch.nn.functional": "nn/functional.pyi",
}

PROBE = "torchlint_snapshot_probe_no_such_name"

Param = Tuple[str, str]  # (name, kind) with kind one of the codes below
POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, VAR_POSITIONAL, KEYWORD_ONLY, VAR_KEYWORD = "p", "k", "a", "o", "w"
_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD: POSITIONAL_OR_KEYWORD,
    inspect.Parameter.VAR_POSITIONAL: VAR_POSITIONAL,
    inspect.Parameter.KEYWORD_ONLY: KEYWORD_ONLY,
    inspect.Parameter.VAR_KEYWORD: VAR_KEYWORD,
}


# --- members -------------------------------------------------------------------


def _public(name: str) -> bool:
    return not name.startswith("_") and name.isidentifier()


def _source_names(module: types.ModuleType) -> Set[str]:
    """Identifiers a module's source binds at top level or spells as strings
    (candidates for what its ``__getattr__`` answers)."""
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py"):
        return set()
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    names: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            names.add(node.value)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _has(module: types.ModuleType, name: str) -> bool:
    try:
        getattr(module, name)
    except Exception:  # AttributeError, or a lazy import that fails on this build
        return False
    return True


def members(module: types.ModuleType) -> Tuple[Set[str], Set[str], bool]:
    """(public names, submodules on disk, open?) of a module. Open: any attribute name resolves."""
    names = {n for n in dir(module) if _public(n)}
    if type(module) is not types.ModuleType:  # e.g. torch.backends.cudnn's CudnnModule
        names |= {n for n in dir(type(module)) if _public(n)}
    candidates = set(getattr(module, "__all__", ())) | _source_names(module)
    names |= {n for n in candidates if _public(n) and n not in names and _has(module, n)}
    on_disk = {info.name for info in pkgutil.iter_modules(getattr(module, "__path__", None) or ()) if _public(info.name)}
    return names | on_disk, on_disk, _has(module, PROBE)


# --- removed functions -----------------------------------------------------------


def is_removed_stub(obj: object) -> bool:
    """A Python function whose whole body raises an error saying it was removed."""
    if not isinstance(obj, types.FunctionType):
        return False
    try:
        tree = ast.parse(inspect.getsource(obj).lstrip())
    except (OSError, TypeError, SyntaxError, IndentationError):
        return False
    function = tree.body[0]
    if not isinstance(function, ast.FunctionDef):
        return False
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]  # docstring
    if len(body) != 1 or not isinstance(body[0], ast.Raise):
        return False
    text = " ".join(
        n.value for n in ast.walk(body[0]) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    )
    return "removed" in text.lower()


# --- signatures ------------------------------------------------------------------


def from_inspect(obj: object) -> Optional[List[Param]]:
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [(p.name, _KINDS[p.kind]) for p in signature.parameters.values()]


def _from_arguments(args: ast.arguments, drop_first: bool) -> List[Param]:
    params: List[Param] = [(a.arg, POSITIONAL_ONLY) for a in args.posonlyargs]
    params += [(a.arg, POSITIONAL_OR_KEYWORD) for a in args.args]
    if drop_first and params:
        params = params[1:]
    # Old-style positional-only spelling in stubs: ``__x``.
    params = [(n, POSITIONAL_ONLY if n.startswith("__") and not n.endswith("__") else k) for n, k in params]
    if args.vararg is not None:
        params.append((args.vararg.arg, VAR_POSITIONAL))
    params += [(a.arg, KEYWORD_ONLY) for a in args.kwonlyargs]
    if args.kwarg is not None:
        params.append((args.kwarg.arg, VAR_KEYWORD))
    return params


class Stubs:
    """Function and class-constructor overloads declared in the wheel's stubs."""

    def __init__(self, torch_dir: Path) -> None:
        self.functions: Dict[Tuple[str, str], List[List[Param]]] = {}
        for module, relative in STUBS.items():
            path = torch_dir / relative
            if path.exists():
                self._read(module, ast.parse(path.read_text(encoding="utf-8")))

    def _read(self, module: str, tree: ast.Module) -> None:
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault((module, node.name), []).append(_from_arguments(node.args, False))
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name in ("__init__", "__new__"):
                        overloads = self.functions.setdefault((module, node.name), [])
                        overloads.append(_from_arguments(item.args, True))

    def get(self, module: str, name: str) -> List[List[Param]]:
        return self.functions.get((module, name), [])


# Parser signatures as compiled into libtorch_python, e.g.
# "sum(Tensor input, IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor out=None)".
_PARSER_SIGNATURE = re.compile(rb"[\x00-\x2f]([A-Za-z_][A-Za-z0-9_]*)\(([^\x00()]*)\)(?:\|[a-z_]+)?(?=\x00)")
_PARSER_TYPE = re.compile(r"^[A-Za-z_:][A-Za-z0-9_:<>*]*(\[\d*\])?\??$")


class ParserSignatures:
    """The PythonArgParser signatures of torch's generated bindings, by name.

    Functions and Tensor methods of the same name are merged (the union only
    widens what is accepted, so it can hide a typo but never invent one).
    """

    def __init__(self, torch_dir: Path) -> None:
        self.signatures: Dict[str, List[List[Param]]] = {}
        for library in sorted((torch_dir / "lib").glob("libtorch_python*")):
            data = library.read_bytes()
            for match in _PARSER_SIGNATURE.finditer(data):
                params = self._parse(match.group(2).decode("ascii", "replace"))
                if params is not None:
                    self.signatures.setdefault(match.group(1).decode(), []).append(params)

    @staticmethod
    def _parse(text: str) -> Optional[List[Param]]:
        params: List[Param] = []
        kind = POSITIONAL_OR_KEYWORD
        for part in filter(None, (p.strip() for p in _split_top_level(text))):
            if part == "*":
                kind = KEYWORD_ONLY
                continue
            declaration = part.split("=", 1)[0].split()
            if len(declaration) != 2 or not _PARSER_TYPE.match(declaration[0]) or not declaration[1].isidentifier():
                return None  # not a parser signature
            params.append((declaration[1], kind))
        return params

    def get(self, name: str) -> List[List[Param]]:
        return self.signatures.get(name, [])


def _split_top_level(text: str) -> List[str]:
    """Split on commas outside brackets (``c10::List<std::optional<Tensor>>``, ``dims={0,1}``)."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "<[{":
            depth += 1
        elif char in ">]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def merge(overloads: Sequence[Sequence[Param]]) -> List[Param]:
    """One parameter list accepting what any overload accepts."""
    kinds: Dict[str, Set[str]] = {}
    order: List[str] = []
    var_positional = var_keyword = None
    for overload in overloads:
        for name, kind in overload:
            if kind == VAR_POSITIONAL:
                var_positional = var_positional or name
            elif kind == VAR_KEYWORD:
                var_keyword = var_keyword or name
            else:
                if name not in kinds:
                    kinds[name] = set()
                    order.append(name)
                kinds[name].add(kind)

    def merged_kind(found: Set[str]) -> str:
        if found == {POSITIONAL_ONLY}:
            return POSITIONAL_ONLY
        if found == {KEYWORD_ONLY}:
            return KEYWORD_ONLY
        return POSITIONAL_OR_KEYWORD

    final = {name: merged_kind(kinds[name]) for name in order}
    params = [(n, k) for n, k in final.items() if k == POSITIONAL_ONLY]
    params += [(n, k) for n, k in final.items() if k == POSITIONAL_OR_KEYWORD]
    if var_positional:
        params.append((var_positional, VAR_POSITIONAL))
    params += [(n, k) for n, k in final.items() if k == KEYWORD_ONLY]
    if var_keyword:
        params.append((var_keyword, VAR_KEYWORD))
    return params


def encode(params: Sequence[Param]) -> str:
    """Python's own spelling: ``a,/,b,*args,c,**kw`` (``*`` alone opens keyword-only)."""
    parts: List[str] = []
    kinds = [k for _, k in params]
    for index, (name, kind) in enumerate(params):
        if kind == VAR_POSITIONAL:
            parts.append("*" + name)
        elif kind == VAR_KEYWORD:
            parts.append("**" + name)
        else:
            if kind == KEYWORD_ONLY and VAR_POSITIONAL not in kinds[:index] and KEYWORD_ONLY not in kinds[:index]:
                parts.append("*")
            parts.append(name)
        if kind == POSITIONAL_ONLY and (index + 1 == len(params) or kinds[index + 1] != POSITIONAL_ONLY):
            parts.append("/")
    return ",".join(parts)


def stub_modules(obj: object, namespace: str) -> List[str]:
    """Which stub modules may declare ``obj`` (reached as ``namespace.X``)."""
    found = [namespace] if namespace in STUBS else []
    qualname = getattr(obj, "__qualname__", "") or ""
    owner = getattr(obj, "__self__", None)
    if qualname.startswith("_VariableFunctionsClass."):
        found.append("torch._C._VariableFunctions")
    elif isinstance(owner, types.ModuleType):
        found.append(owner.__name__)
    if isinstance(obj, type) or namespace == "torch":
        found += ["torch._C", "torch._C._VariableFunctions"]
    return [m for m in dict.fromkeys(found) if m in STUBS]


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: set for classes defined in Python


def signature_of(obj: object, namespace: str, stubs: Stubs, parser: ParserSignatures) -> Optional[Tuple[str, bool]]:
    """(encoded parameters, parsed-by-torch's-argument-parser?) or None."""
    params = from_inspect(obj)
    if params is not None:
        return encode(params), False
    name = getattr(obj, "__name__", None)
    if not isinstance(name, str):
        return None
    if isinstance(obj, type) and obj.__flags__ & _HEAP_TYPE:
        return None  # a Python class without a usable signature (e.g. torch.Tensor): unknown
    overloads: List[List[Param]] = []
    for module in stub_modules(obj, namespace):
        overloads += stubs.get(module, name)
    from_parser = parser.get(name)
    if not overloads and not from_parser:
        return None
    return encode(merge(overloads + from_parser)), True


def _defined_in_torch(obj: object) -> bool:
    module = getattr(obj, "__module__", None)
    if isinstance(obj, (types.BuiltinFunctionType, types.BuiltinMethodType)) and module is None:
        owner = getattr(obj, "__self__", None)
        module = getattr(owner, "__module__", None) if not isinstance(owner, types.ModuleType) else owner.__name__
    return isinstance(module, str) and (module == "torch" or module.startswith("torch."))


# --- the snapshot ----------------------------------------------------------------

LEGEND = (
    "namespaces: public attribute names of each module (submodules on disk included); "
    "modules: which of those names are modules; "
    "removed: functions that exist only to raise 'removed' errors (not in namespaces); "
    "signatures: parameters in Python's def syntax without defaults or annotations "
    "(a,/ positional-only; * or *args opens keyword-only; **kw any keyword); a leading @ marks "
    "torch's C++ argument parser, which also accepts numpy-style names (axis, keepdims, x, a, x1, x2); "
    "aliases: defining module -> {name: public namespace that exports it}"
)


def _alias(obj: object, qualified: str) -> Optional[Tuple[str, str]]:
    """(defining module, name) when ``obj`` is also importable from where it is defined."""
    module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(name, str) or "." in name:
        return None
    if f"{module}.{name}" == qualified or name != qualified.rsplit(".", 1)[1]:
        return None
    if any(part.startswith("_") for part in module.split(".")) or not module.startswith("torch."):
        return None
    if getattr(sys.modules.get(module), name, None) is not obj:
        return None
    return module, name


def snapshot() -> dict:
    warnings.simplefilter("ignore")
    import torch

    torch_dir = Path(torch.__file__).parent
    stubs = Stubs(torch_dir)
    parser = ParserSignatures(torch_dir)
    modules = {name: importlib.import_module(name) for name in NAMESPACES}

    namespaces: Dict[str, List[str]] = {}
    submodules: Dict[str, List[str]] = {}
    open_namespaces: List[str] = []
    removed: List[str] = []
    signatures: Dict[str, str] = {}
    aliases: Dict[str, Dict[str, str]] = {}
    for namespace, module in modules.items():
        names, modules_here, is_open = members(module)
        if is_open:
            open_namespaces.append(namespace)
        modules_here = set(modules_here)
        for name in sorted(names):
            qualified = f"{namespace}.{name}"
            try:
                obj = getattr(module, name)
            except Exception:
                continue  # a submodule that cannot be imported on this build
            if isinstance(obj, types.ModuleType):
                modules_here.add(name)
                continue
            if not callable(obj):
                continue
            if is_removed_stub(obj):
                removed.append(qualified)
                continue
            if not _defined_in_torch(obj):
                continue  # e.g. functools.partial imported into a torch module
            found = signature_of(obj, namespace, stubs, parser)
            if found is None:
                continue
            signatures[qualified] = ("@" if found[1] else "") + found[0]
            alias = _alias(obj, qualified)
            if alias is not None and alias[0] not in modules:
                aliases.setdefault(alias[0], {}).setdefault(alias[1], namespace)
        gone = {r.rsplit(".", 1)[1] for r in removed if r.rsplit(".", 1)[0] == namespace}
        namespaces[namespace] = sorted(names - gone)
        submodules[namespace] = sorted(modules_here)
    return {
        "format": FORMAT,
        "torch_version": torch.__version__.split("+")[0],
        "generated_by": "scripts/snapshot_torch_api.py",
        "legend": LEGEND,
        "open_namespaces": sorted(open_namespaces),
        "removed": sorted(removed),
        "namespaces": namespaces,
        "modules": submodules,
        "signatures": dict(sorted(signatures.items())),
        "aliases": {module: dict(sorted(names.items())) for module, names in sorted(aliases.items())},
    }


def dumps(data: dict) -> str:
    """Compact JSON that diffs well: one name, signature or alias module per line."""

    def compact(value: object) -> str:
        return json.dumps(value, separators=(",", ":"))

    def block(key: str, lines: List[str], opening: str, closing: str) -> List[str]:
        return [f"{json.dumps(key)}:{opening}", ",\n".join(lines), closing]

    out: List[str] = []
    for key, value in data.items():
        if key == "namespaces":
            inner = [
                "\n".join(block(ns, [",".join(json.dumps(n) for n in names[i:i + 1]) for i in range(len(names))],
                                 "[", "]"))
                for ns, names in value.items()
            ]
            out.append("\n".join(block(key, inner, "{", "}")))
        elif key in ("signatures", "aliases", "modules"):
            out.append("\n".join(block(key, [f"{json.dumps(k)}:{compact(v)}" for k, v in value.items()], "{", "}")))
        else:
            out.append(f"{json.dumps(key)}:{compact(value)}")
    return "{\n" + ",\n".join(out) + "\n}\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stdout", action="store_true", help="print the snapshot instead of writing it")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    text = dumps(snapshot())
    if args.stdout:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {args.output} ({len(text.encode()):,} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
