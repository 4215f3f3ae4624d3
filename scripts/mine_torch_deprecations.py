#!/usr/bin/env python
"""Write torchlint/knowledge/data/torch_deprecations_mined.json: torch's own deprecations, as data.

The deprecation table (``torchlint/knowledge/deprecations.py``) is written by
hand; this script measures it against what the installed torch says about
itself. It reads torch's (and functorch's) ``.py`` files as syntax trees and
records every deprecation a user can trigger:

* ``warnings.warn(msg, DeprecationWarning | FutureWarning | PendingDeprecationWarning)``,
  and ``UserWarning`` (or no category) whose message says deprecated/removed;
* callables decorated with ``@deprecated(...)`` (``typing_extensions`` or
  ``warnings``);
* removed-function stubs: a function whose whole body raises with a message
  that says removed/deprecated;
* deprecated parameters: a warning under an ``if`` that tests one of the
  enclosing function's parameters records that parameter as the keyword.

Each finding is attached to its enclosing function or class and then to the
public names through which users reach it: the script imports torch and a
fixed list of public namespaces and looks up which public attributes hold the
defining object (``torch.jit.script`` is defined in ``torch.jit._script``).
Findings no public name reaches are kept with an empty ``names`` list (the
review marks them internal).

The output is sorted and carries no line numbers, so it changes only when
torch does. Run it after upgrading torch:
``python scripts/mine_torch_deprecations.py``; ``--stdout`` prints instead of
writing; ``--report`` prints the coverage report against the reviewed table
(``torchlint.knowledge.deprecation_review``) and the table's fixes by import
spelling (measured by running the fixer on a snippet of each); ``--report-only``
prints the same report for the committed data without mining.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

REPO = Path(__file__).resolve().parent.parent
OUTPUT = REPO / "torchlint" / "knowledge" / "data" / "torch_deprecations_mined.json"
FORMAT = 1

PACKAGES = ("torch", "functorch")

# Source trees that users do not run: torch's own test helpers, code
# generators and vendored third-party code.
SKIPPED_DIRS = (
    "torch/testing/_internal",
    "torch/_numpy/testing",
    "torch/utils/data/datapipes/gen_pyi.py",
    "torch/utils/hipify",
    "torch/_vendor",
    "torch/include",
    "torch/share",
)

# Public namespaces imported to find which public names reach a definition.
# Private modules users import by name anyway count as public here.
NAMESPACES: Tuple[str, ...] = (
    "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils", "torch.nn.utils.rnn",
    "torch.nn.utils.parametrize", "torch.nn.utils.parametrizations", "torch.nn.utils.stateless",
    "torch.nn.utils.weight_norm", "torch.nn.utils.spectral_norm", "torch.nn.parallel", "torch.nn.attention",
    "torch.nn.attention.flex_attention", "torch.nn.modules", "torch.optim", "torch.optim.lr_scheduler",
    "torch.optim.swa_utils", "torch.utils", "torch.utils.data", "torch.utils.checkpoint",
    "torch.utils.cpp_extension", "torch.utils.tensorboard", "torch.utils.benchmark", "torch.utils._pytree",
    "torch.utils.hooks", "torch.utils.mobile_optimizer", "torch.cuda", "torch.cuda.amp", "torch.cpu",
    "torch.cpu.amp", "torch.amp", "torch.mps", "torch.xpu", "torch.autograd", "torch.autograd.functional",
    "torch.autograd.graph", "torch.autograd.profiler", "torch.autograd.forward_ad", "torch.linalg", "torch.fft",
    "torch.special", "torch.distributions", "torch.backends", "torch.backends.cudnn", "torch.backends.cuda",
    "torch.backends.mps", "torch.backends.mkldnn", "torch.jit", "torch.onnx", "torch.testing", "torch.random",
    "torch.hub", "torch.sparse", "torch.func", "torch.profiler", "torch.export", "torch.compiler",
    "torch.nested", "torch.accelerator", "torch.library", "torch.fx", "torch.fx.experimental.symbolic_shapes",
    "torch.quantization", "torch.ao.quantization", "torch.ao.quantization.quantize_fx",
    "torch.ao.quantization.qconfig", "torch.ao.nn.quantized", "torch.ao.nn.quantized.functional",
    "torch.distributed", "torch.distributed.fsdp", "torch.distributed.checkpoint",
    "torch.distributed.checkpoint.state_dict", "torch.distributed.tensor", "torch.distributed.elastic.metrics",
    "torch.distributed.algorithms.ddp_comm_hooks", "torch.distributed.optim", "torch.distributed.rpc",
    "torch.distributed._functional_collectives", "torch.distributed.nn", "torch.masked", "torch.overrides",
    "torch.storage", "torch.serialization", "torch.types", "torch.multiprocessing", "functorch",
    "functorch.compile", "functorch.experimental",
)
PUBLIC_PRIVATE_MODULES = ("torch.utils._pytree", "torch.distributed._functional_collectives")

DEPRECATION_CATEGORIES = {"DeprecationWarning", "FutureWarning", "PendingDeprecationWarning"}
SAYS_DEPRECATED = re.compile(r"deprecat|will be removed|has been removed|was removed|is removed|no longer supported",
                             re.IGNORECASE)
MESSAGE_LIMIT = 160


@dataclass
class Finding:
    module: str  # defining module, e.g. torch.jit._script
    qualname: str  # enclosing definition, e.g. script or Module.register_backward_hook ("" at module level)
    kind: str  # function, class, method, attribute, module
    how: str  # warn, decorator, raises
    category: str
    message: str
    keyword: Optional[str] = None
    names: List[str] = field(default_factory=list)
    nested: bool = False  # the warning is in a closure of the function (a factory of deprecated functions)


# --- reading the sources ----------------------------------------------------------------


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _text(node: Optional[ast.AST]) -> str:
    """A message as written: constants joined, formatted values as ``{}``."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _text(node.left) + ("" if isinstance(node.op, ast.Add) else "") + _text(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _text(node.func.value)
    return "{}"


def _short(message: str) -> str:
    message = " ".join(message.split())
    return message if len(message) <= MESSAGE_LIMIT else message[: MESSAGE_LIMIT - 3] + "..."


def _last_name(node: Optional[ast.AST]) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _dotted(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        prefix = _dotted(node.value)
        return None if prefix is None else f"{prefix}.{node.attr}"
    return None


def _is_warn(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr in ("warn", "warn_explicit") and _last_name(func.value) == "warnings"
    return isinstance(func, ast.Name) and func.id == "warn"


def _warning(call: ast.Call, strings: Dict[str, str]) -> Optional[Tuple[str, str]]:
    """(category, message) if the call warns of a deprecation."""
    args = list(call.args)
    category_node = args[1] if len(args) > 1 else None
    for keyword in call.keywords:
        if keyword.arg == "category":
            category_node = keyword.value
    message_node = args[0] if args else next((k.value for k in call.keywords if k.arg == "message"), None)
    message = _text(message_node)
    if isinstance(message_node, ast.Name) and message_node.id in strings:
        message = strings[message_node.id]
    category = _last_name(category_node) or "UserWarning"
    if category in DEPRECATION_CATEGORIES or SAYS_DEPRECATED.search(message):
        return category, message
    return None


def _decorator_deprecation(decorator: ast.AST, strings: Dict[str, str]) -> Optional[Tuple[str, str]]:
    if not isinstance(decorator, ast.Call) or _last_name(decorator.func) != "deprecated":
        return None
    message = _text(decorator.args[0]) if decorator.args else ""
    if decorator.args and isinstance(decorator.args[0], ast.Name):
        message = strings.get(decorator.args[0].id, message)
    category = "DeprecationWarning"
    for keyword in decorator.keywords:
        if keyword.arg == "category":
            category = _last_name(keyword.value) or "None"
    return category, message


def _raising_stub(function: ast.FunctionDef) -> Optional[str]:
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return None
    exc = body[0].exc
    message = _text(exc.args[0]) if isinstance(exc, ast.Call) and exc.args else ""
    return message if SAYS_DEPRECATED.search(message) else None


def _params(function: ast.AST) -> Set[str]:
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    a = function.args
    return {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs} - {"self", "cls"}


def _condition_keyword(path: Sequence[ast.AST], function: ast.AST) -> Optional[str]:
    """The enclosing function's parameter tested by the innermost ``if`` around the warning."""
    params = _params(function)
    for node in reversed(path):
        if node is function:
            return None
        if isinstance(node, (ast.If, ast.IfExp)):
            tested = sorted({n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)} & params)
            if tested:
                return tested[0]
    return None


class _Walker:
    def __init__(self, module: str, tree: ast.Module) -> None:
        self.module = module
        self.findings: List[Finding] = []
        self.strings = {  # module-level message constants: MSG = "... deprecated ..."
            t.id: _text(n.value)
            for n in tree.body
            if isinstance(n, ast.Assign) and isinstance(n.value, (ast.Constant, ast.JoinedStr, ast.BinOp))
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        self.calls: List[Tuple[List[ast.AST], str, str]] = []  # (scopes, callee (module, name), first string argument)
        self.imported: Dict[str, Tuple[str, str]] = {}  # local name -> (module, name), from ``from m import n``
        self.defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    self.imported[alias.asname or alias.name] = (node.module, alias.name)
        self.assignments: List[Tuple[str, str]] = []  # module level ``name = factory(...)``
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.assignments.append((target.id, node.value.func.id))
        self._walk(tree, [], [])

    def _walk(self, node: ast.AST, path: List[ast.AST], scopes: List[ast.AST]) -> None:
        path = path + [node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            scopes = scopes + [node]
            self._definition(node, scopes)
        if isinstance(node, ast.Call) and _is_warn(node):
            found = _warning(node, self.strings)
            if found is not None:
                self._add(scopes, "warn", found, path)
        elif isinstance(node, ast.Call) and scopes:
            callee = self._callee(node.func, scopes)
            if callee is not None:
                first = node.args[0] if node.args else None
                argument = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""
                self.calls.append((scopes, callee, argument))
        for child in ast.iter_child_nodes(node):
            self._walk(child, path, scopes)

    def _callee(self, func: ast.AST, scopes: Sequence[ast.AST]) -> Optional[Tuple[str, str]]:
        """(module, qualified name) of a called function: defined here, imported, ``torch.x.f``, or a
        method of this module's class (``Class.m(...)``, ``self.m(...)`` / ``cls.m(...)`` in the class)."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id in self.classes:
                return self.module, f"{func.value.id}.{func.attr}"
            owner = next((s for s in reversed(scopes) if isinstance(s, ast.ClassDef)), None)
            if owner is not None and func.value.id in ("self", "cls") and owner.name in self.classes:
                return self.module, f"{owner.name}.{func.attr}"
        if isinstance(func, ast.Name):
            if func.id in self.defined:
                return self.module, func.id
            return self.imported.get(func.id)
        if isinstance(func, ast.Attribute):
            prefix = _dotted(func.value)
            if prefix is not None and prefix.split(".")[0] in PACKAGES:
                return prefix, func.attr
        return None

    def _definition(self, node: ast.AST, scopes: List[ast.AST]) -> None:
        for decorator in node.decorator_list:
            found = _decorator_deprecation(decorator, self.strings)
            if found is not None:
                self._add(scopes, "decorator", found, [])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            message = _raising_stub(node)
            if message is not None:
                self._add(scopes, "raises", ("RuntimeError", message), [])

    def _add(self, scopes: List[ast.AST], how: str, found: Tuple[str, str], path: List[ast.AST]) -> None:
        # Attach to the outermost function of a nested chain (a closure is
        # reached through its maker) within the innermost classes.
        outer: List[ast.AST] = []
        for scope in scopes:
            outer.append(scope)
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
                break
        qualname = ".".join(s.name for s in outer)
        function = outer[-1] if outer else None
        kind = "module"
        if function is not None:
            kind = "class" if isinstance(function, ast.ClassDef) else "function"
            in_class = len(outer) > 1 and isinstance(outer[-2], ast.ClassDef)
            if kind == "function" and in_class:
                kind = "method"
                if function.name in ("__init__", "__new__", "__post_init__"):
                    kind, qualname = "class", ".".join(s.name for s in outer[:-1])
                elif any(_last_name(d) in ("property", "cached_property") for d in function.decorator_list):
                    kind = "attribute"
        keyword = _condition_keyword(path, function) if path and isinstance(
            function, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if keyword is not None and function is not outer[-1]:
            keyword = None
        category, message = found
        nested = len(scopes) > len(outer) and isinstance(scopes[len(outer)], (ast.FunctionDef, ast.AsyncFunctionDef))
        self.findings.append(Finding(self.module, qualname, kind, how, category, _short(message), keyword,
                                     nested=nested))


def _source_files() -> Iterator[Tuple[str, Path]]:
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(list(spec.submodule_search_locations)[0])
        for path in sorted(root.rglob("*.py")):
            relative = path.relative_to(root.parent).as_posix()
            if any(relative.startswith(skip) for skip in SKIPPED_DIRS) or "/test" in relative:
                continue
            yield _module_name(path, root), path


HELPER = re.compile(r"^_?warn|deprecat", re.IGNORECASE)


def _may_deprecate(text: str) -> bool:
    """Can the file hold a finding of its own? A warning needs a deprecation category or words
    that say deprecated/removed, a decorator says ``deprecated``, a raising stub says removed."""
    return bool(SAYS_DEPRECATED.search(text)) or any(category in text for category in DEPRECATION_CATEGORIES)


def mine_sources() -> List[Finding]:
    """Parse only the files that can matter (most of torch's 2,000 files cannot: parsing is most
    of the generator's time): those that may word a deprecation, then those that call one of
    the deprecating helpers found there (``functorch.vmap`` calls ``warn_deprecated``). The
    walkers stay in file order, so the first message of a repeated id is the same as ever."""
    texts = {(module, path): path.read_text(encoding="utf-8", errors="replace") for module, path in _source_files()}
    walkers: Dict[Tuple[str, Path], _Walker] = {}

    def parse(keys: Sequence[Tuple[str, Path]]) -> None:
        for key in keys:
            try:
                walkers[key] = _Walker(key[0], ast.parse(texts[key]))
            except SyntaxError:
                continue

    parse([key for key, text in texts.items() if _may_deprecate(text)])
    helpers = {f.qualname.rsplit(".", 1)[-1] for w in walkers.values() for f in w.findings
               if HELPER.search(f.qualname.rsplit(".", 1)[-1])}
    parse([key for key, text in texts.items() if key not in walkers and any(h in text for h in helpers)])
    ordered = [walkers[key] for key in texts if key in walkers]
    findings = [finding for walker in ordered for finding in walker.findings]
    return findings + _through_helpers(ordered, findings)


def _through_helpers(walkers: Sequence[_Walker], findings: Sequence[Finding]) -> List[Finding]:
    """Deprecations that torch words once, in a helper or a factory:

    * a top-level function named like ``_warn_...`` / ``warn_deprecated``
      that warns unconditionally: every function calling it is deprecated
      (``functorch.vmap`` calls ``warn_deprecated("vmap", "torch.vmap")``);
    * a factory whose closure warns: every module-level ``name = factory(...)``
      is deprecated (``nn.init.constant = _make_deprecate(constant_)``).
    """
    helpers: Dict[Tuple[str, str], Finding] = {}
    factories: Dict[Tuple[str, str], Finding] = {}
    for f in findings:
        if f.keyword or f.kind not in ("function", "method") or f.qualname.count(".") > (f.kind == "method"):
            continue
        if f.nested and f.kind == "function":
            factories[(f.module, f.qualname)] = f
        elif f.how == "warn" and HELPER.search(f.qualname.rsplit(".", 1)[-1]):
            helpers[(f.module, f.qualname)] = f
    derived: List[Finding] = []
    for walker in walkers:
        for name, factory in walker.assignments:
            found = factories.get((walker.module, factory))
            if found is not None:
                derived.append(Finding(walker.module, name, "function", "factory", found.category, found.message))
        for scopes, callee, argument in walker.calls:
            helper = helpers.get(callee)
            if helper is None or any(getattr(s, "name", "") == callee[1].rsplit(".", 1)[-1] for s in scopes):
                continue
            if any(HELPER.search(getattr(s, "name", "")) for s in scopes):
                continue  # a helper calling a helper
            outer: List[ast.AST] = []
            for scope in scopes:
                outer.append(scope)
                if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    break
            kind = "method" if len(outer) > 1 else ("class" if isinstance(outer[-1], ast.ClassDef) else "function")
            qualname = ".".join(s.name for s in outer)
            if kind == "method" and outer[-1].name == "__init__":
                kind, qualname = "class", ".".join(s.name for s in outer[:-1])
            message = helper.message.replace("{}", argument or "{}", 1)
            derived.append(Finding(walker.module, qualname, kind, "helper", helper.category, message))
    return derived


# --- public names -----------------------------------------------------------------------


def _is_public_module(name: str) -> bool:
    return name in PUBLIC_PRIVATE_MODULES or not any(part.startswith("_") for part in name.split("."))


def _import_quietly(name: str):
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def _defined_objects(findings: Sequence[Finding]) -> Dict[int, Tuple[str, str]]:
    """id(object) -> (defining module, top-level name), for every finding's definition."""
    objects: Dict[int, Tuple[str, str]] = {}
    for module_name, top in sorted({(f.module, f.qualname.split(".")[0]) for f in findings if f.qualname}):
        module = _import_quietly(module_name)
        obj = getattr(module, top, None) if module is not None else None
        if obj is not None:
            objects[id(obj)] = (module_name, top)
            unwrapped = inspect.unwrap(obj) if callable(obj) else obj
            objects.setdefault(id(unwrapped), (module_name, top))
    return objects


def public_names(findings: Sequence[Finding]) -> Dict[Tuple[str, str], List[str]]:
    """(defining module, top-level name) -> names that hold that object: public
    names first (fewest dots), then private ones (``torch.distributed._all_gather_base``).

    Objects are matched by identity, since ``__module__`` is often rewritten
    (``torch.Tensor.__module__ == "torch"``). Module-level instances of a
    defining class (``torch.distributed.reduce_op``) count as its names too.
    """
    for name in NAMESPACES:
        _import_quietly(name)
    objects = _defined_objects(findings)
    names: Dict[Tuple[str, str], Set[str]] = {key: set() for key in objects.values()}
    instances: Set[str] = set()
    names.update({(f.module, ""): set() for f in findings if not f.qualname})
    modules = {n: m for n, m in sorted(sys.modules.items()) if n.split(".")[0] in PACKAGES and m is not None}
    for name, module in modules.items():
        if (name, "") in names and _is_public_module(name):
            names[(name, "")].add(name)
        if not _is_public_module(name):
            continue
        try:
            members = dict(vars(module))
        except TypeError:
            continue
        for attr, obj in members.items():
            key = objects.get(id(obj))
            if key is None and objects.get(id(type(obj))) is not None:
                key = objects[id(type(obj))]
                instances.add(f"{name}.{attr}")
            if key is not None and not attr.startswith("__"):
                names[key].add(f"{name}.{attr}")
    order = lambda n: (any(p.startswith("_") for p in n.split(".")), n.count("."), n)  # noqa: E731
    INSTANCES.update(instances)
    return {key: sorted(values, key=order) for key, values in names.items()}


INSTANCES: Set[str] = set()  # names found as instances of a defining class (``torch.distributed.reduce_op``)


# --- the data file ----------------------------------------------------------------------


def mine() -> Dict[str, object]:
    warnings.simplefilter("ignore")  # importing namespaces and reading attributes warns
    import torch

    findings = mine_sources()
    reach = public_names(findings)
    items: Dict[str, Dict[str, object]] = {}
    for finding in findings:
        top, _, rest = finding.qualname.partition(".")
        bases = reach.get((finding.module, top), [])
        if rest in ("__getattr__", "__getattribute__") and bases and bases[0] in INSTANCES:
            rest, finding.kind = "", "attribute"  # reading any attribute of the instance warns
            bases = [b for b in bases if b in INSTANCES]
        suffix = ("." + rest if rest else "")
        names = [base + suffix for base in bases]
        defined = f"{finding.module}:{finding.qualname}" if finding.qualname else finding.module
        item_id = (names[0] if names else defined) + (f"({finding.keyword}=)" if finding.keyword else "")
        if item_id in items:
            continue  # a second warning in the same place: the first message stands
        items[item_id] = {
            "id": item_id,
            "names": names[:4],
            "defined": defined,
            "kind": "keyword" if finding.keyword else finding.kind,
            "keyword": finding.keyword,
            "how": finding.how,
            "category": finding.category,
            "message": finding.message,
        }
    return {
        "format": FORMAT,
        "torch": torch.__version__.split("+")[0],
        "items": [items[key] for key in sorted(items)],
    }


# --- how the table is applied: every import spelling ------------------------------------

SPELLINGS = ("attribute", "import-as", "from-import", "from-import-as")


def spellings(entry) -> Dict[str, str]:
    """A use of a name-like table entry in each import spelling."""
    from torchlint.knowledge.deprecations import CallRewrite, InclusiveRange, Kind

    module, name = entry.old.rsplit(".", 1)
    rewrite = entry.rewrite
    call = "(x)"
    if isinstance(rewrite, CallRewrite):
        count = max(2, rewrite.min_args) if rewrite.varargs else len(rewrite.args)
        names = list(rewrite.args) if not rewrite.varargs else [f"a{n}" for n in range(count)]
        # A parameter whose literal value is translated gets one of its literals.
        values = [repr(next(k for k in rewrite.literals[n] if isinstance(k, (str, bool, int))))
                  if n in rewrite.literals else f"a{i}" for i, n in enumerate(names)]
        call = "(" + ", ".join(values) + ")"
    elif isinstance(rewrite, InclusiveRange):
        call = "(0, 3)"
    use = "" if entry.kind is Kind.ATTRIBUTE else call
    return {
        "attribute": f"import {module}\ny = {module}.{name}{use}\n",
        "import-as": f"import {module} as m\ny = m.{name}{use}\n",
        "from-import": f"from {module} import {name}\ny = {name}{use}\n",
        "from-import-as": f"from {module} import {name} as nm\ny = nm{use}\n",
    }


def measure_table() -> Dict[str, Dict[str, object]]:
    """Table key -> {spelling: "fixed" | "flagged" | "missed"} for the name-like entries (functions,
    classes, attributes; not methods, keywords or ctx attributes), by running TL108, TL109 and TL117."""
    from torchlint.engine.linter import Engine
    from torchlint.knowledge.deprecations import ENTRIES, FUNCTION_CTX, Kind
    from torchlint.rules import rule_by_code

    engine = Engine([rule_by_code("TL108"), rule_by_code("TL109"), rule_by_code("TL117")])  # TL117: the opt-in ones
    results: Dict[str, Dict[str, object]] = {}
    for entry in ENTRIES:
        if entry.kind in (Kind.METHOD, Kind.KEYWORD, Kind.MODULE) or entry.old.startswith(FUNCTION_CTX):
            continue
        row: Dict[str, object] = {}
        for spelling, source in spellings(entry).items():
            if not engine.check(source).diagnostics:
                row[spelling] = "missed"
                continue
            fixed = engine.fix(source).source
            row[spelling] = "fixed" if fixed != source and not engine.check(fixed).diagnostics else "flagged"
        results[entry.key] = row
    return results


def fix_report(results: Dict[str, Dict[str, object]]) -> str:
    from torchlint.knowledge.deprecations import ENTRIES

    exact = {e.key for e in ENTRIES if e.exact_fix}
    lines = ["table entries by import spelling (name-like entries; exact = the table has an exact rewrite)",
             f"{'spelling':<16}{'entries':>8}{'flagged':>9}{'exact':>7}{'fixed':>7}{'fixed %':>9}"]
    for spelling in SPELLINGS:
        flagged = sum(r[spelling] != "missed" for r in results.values())
        fixed = sum(r[spelling] == "fixed" for k, r in results.items() if k in exact)
        total = len(exact & set(results))
        share = f"{100 * fixed / total:.1f}" if total else "-"
        lines.append(f"{spelling:<16}{len(results):>8}{flagged:>9}{total:>7}{fixed:>7}{share:>9}")
    return "\n".join(lines) + "\n"


def render(data: Dict[str, object]) -> str:
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stdout", action="store_true", help="print the data instead of writing it")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where to write the data")
    parser.add_argument("--report", action="store_true", help="print the coverage report (to stderr)")
    parser.add_argument("--report-only", action="store_true",
                        help="print the report for the committed data without mining torch (seconds, not minutes)")
    args = parser.parse_args(argv)
    if args.report_only:
        text = OUTPUT.read_text(encoding="utf-8")
    else:
        text = render(mine())
        if args.stdout:
            sys.stdout.write(text)
        else:
            args.output.write_text(text, encoding="utf-8")
    if args.report or args.report_only:
        sys.path.insert(0, str(REPO))
        from torchlint.knowledge.deprecation_review import coverage_report

        sys.stderr.write(coverage_report(json.loads(text)) + "\n" + fix_report(measure_table()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
