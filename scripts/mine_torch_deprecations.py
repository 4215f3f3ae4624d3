#!/usr/bin/env python
"""Write torchlint/knowledge/data/torch_deprecations_mined.json: torch's own deprecations, as data.

The deprecation table (``torchlint/knowledge/deprecations.py``) is written by
hand; this script measures it against what torch releases say about
themselves. It reads torch's (and functorch's) ``.py`` files as syntax trees,
never importing them, and records every deprecation a user can trigger:

* ``warnings.warn(msg, DeprecationWarning | FutureWarning | PendingDeprecationWarning)``,
  and ``UserWarning`` (or no category) whose message says deprecated/removed;
* callables decorated with ``@deprecated(...)`` (``typing_extensions`` or
  ``warnings``);
* removed-function stubs: a function whose whole body raises with a message
  that says removed/deprecated (and a function that only forwards to one);
* deprecated parameters: a warning under an ``if`` that tests one of the
  enclosing function's parameters (or ``self.<parameter>``) records that
  parameter as the keyword.

Each finding is attached to its enclosing function or class and then to the
public names through which users reach it, read from the syntax trees too:
the bindings of every public module (``from m import n``, ``__all__``, star
imports) are followed to the defining module (``torch.jit.script`` is defined
in ``torch.jit._script``). Findings no public name reaches are kept with an
empty ``names`` list (the review marks them internal).

Releases: the installed torch (2.13) and, with ``--wheel``, the wheels of
later ones (2.14.1, 2.15.0; read with zipfile, only their ``.py``/``.pyi``
members). The output is one table: each item says, per release, whether torch
warns, raises, no longer has it, or is silent about it, and from that in which
release it was deprecated, removed and un-deprecated. Without ``--wheel`` the
committed statuses of the releases not installed stand, so CI never needs a
wheel.

The output is sorted and carries no line numbers, so it changes only when
torch does. Run it after upgrading torch or for a new release:
``python scripts/mine_torch_deprecations.py --wheel torch-2.15.0-....whl``
(download a wheel with ``pip download --no-deps --only-binary :all:
--python-version 3.11 --platform manylinux_2_28_x86_64 torch==2.15.0``);
``--stdout`` prints instead of writing; ``--report`` prints the coverage
report against the reviewed table (``torchlint.knowledge.deprecation_review``:
by namespace, then per release flagged of detectable and fixed of exact) and
the table's fixes by import spelling (measured by running the fixer on a
snippet of each); ``--report-only`` prints the same report for the committed
data without mining; ``--unflagged`` lists, per release, the detectable items
not flagged with the review's reason.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import re
import sys
import zipfile
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

REPO = Path(__file__).resolve().parent.parent
OUTPUT = REPO / "torchlint" / "knowledge" / "data" / "torch_deprecations_mined.json"
FORMAT = 2  # 2: one table over several releases (``releases``, per-item ``status``)

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

# The namespaces users import: an item's names in them come first (its id is
# the first name). Private modules users import by name anyway count as public.
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


def _module_name(relative: str) -> str:
    """``torch/nn/__init__.py`` -> ``torch.nn``; ``torch/_C/__init__.pyi`` -> ``torch._C``."""
    parts = relative.rsplit(".", 1)[0].split("/")
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
    """The message of a function whose body only raises (after assignments that word the message:
    torch 2.14's ``qr`` first picks the ``mode`` it names)."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    while len(body) > 1 and isinstance(body[0], ast.Assign):
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
            tested = sorted({_tested_name(n) for n in ast.walk(node.test)} & params)
            if tested:
                return tested[0]
    return None


def _tested_name(node: ast.AST) -> str:
    """``x`` for ``x`` and for ``self.x`` (a parameter an ``__init__`` stored first: ``if self.use_cuda:``)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return ""


class _Walker:
    def __init__(self, module: str, tree: ast.Module, is_package: bool = False) -> None:
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
            if isinstance(node, ast.ImportFrom) and (node.module or node.level):
                source = _absolute(module, is_package, node.level, node.module)
                for alias in node.names:
                    self.imported[alias.asname or alias.name] = (source, alias.name)
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


class Release:
    """One torch release's Python sources, read as text and never imported: the installed torch
    (a site-packages folder) or a wheel (a zip archive, of which only the ``.py``/``.pyi`` members
    are read). ``files`` maps a path inside the package root (``torch/nn/init.py``) to a reader."""

    def __init__(self, version: str, files: Dict[str, Callable[[], str]]) -> None:
        self.version = version
        self.files = files
        self._texts: Dict[str, str] = {}

    def text(self, relative: str) -> str:
        if relative not in self._texts:
            self._texts[relative] = self.files[relative]()
        return self._texts[relative]

    @classmethod
    def installed(cls) -> "Release":
        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("torch is not installed")
        root = Path(list(spec.submodule_search_locations)[0]).parent
        files: Dict[str, Callable[[], str]] = {}
        for package in PACKAGES:
            for path in sorted((root / package).rglob("*.py*")):
                if path.suffix in (".py", ".pyi"):
                    files[path.relative_to(root).as_posix()] = partial(path.read_text, encoding="utf-8",
                                                                       errors="replace")
        return cls(_version_of(files["torch/version.py"]()), files)

    @classmethod
    def wheel(cls, path: Path) -> "Release":
        archive = zipfile.ZipFile(path)
        read = lambda name: archive.read(name).decode("utf-8", errors="replace")  # noqa: E731
        files = {name: partial(read, name) for name in sorted(archive.namelist())
                 if name.split("/")[0] in PACKAGES and name.endswith((".py", ".pyi"))}
        return cls(_version_of(files["torch/version.py"]()), files)


def _version_of(version_py: str) -> str:
    """``2.14.1`` from torch/version.py's ``__version__ = '2.14.1+cu130'``."""
    match = re.search(r"__version__\s*=\s*['\"]([^'\"+]+)", version_py)
    if match is None:
        raise SystemExit("torch/version.py names no version")
    return match.group(1)


def _source_files(release: Release) -> Iterator[Tuple[str, str]]:
    """(module, path) of every ``.py`` file users run."""
    for relative in release.files:
        if not relative.endswith(".py"):
            continue
        if any(relative.startswith(skip) for skip in SKIPPED_DIRS) or "/test" in relative:
            continue
        yield _module_name(relative), relative


HELPER = re.compile(r"^_?warn|deprecat", re.IGNORECASE)


def _may_deprecate(text: str) -> bool:
    """Can the file hold a finding of its own? A warning needs a deprecation category or words
    that say deprecated/removed, a decorator says ``deprecated``, a raising stub says removed."""
    return bool(SAYS_DEPRECATED.search(text)) or any(category in text for category in DEPRECATION_CATEGORIES)


def mine_sources(release: Release) -> List[Finding]:
    """Parse only the files that can matter (most of torch's 2,000 files cannot: parsing is most
    of the generator's time): those that may word a deprecation, then those that call one of
    the deprecating helpers found there (``functorch.vmap`` calls ``warn_deprecated``). The
    walkers stay in file order, so the first message of a repeated id is the same as ever."""
    texts = {(module, path): release.text(path) for module, path in _source_files(release)}
    walkers: Dict[Tuple[str, str], _Walker] = {}

    def parse(keys: Sequence[Tuple[str, str]]) -> None:
        for key in keys:
            try:
                walkers[key] = _Walker(key[0], ast.parse(texts[key]), key[1].endswith("/__init__.py"))
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
      is deprecated (``nn.init.constant = _make_deprecate(constant_)``);
    * a removed function's stub that raises: a function that only forwards
      to it raises too (torch 2.14's ``Tensor.cholesky`` calls
      ``torch._linalg_utils.cholesky``).
    """
    stubs = {(f.module, f.qualname): f for f in findings if f.how == "raises" and f.kind == "function"}
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
            stub = stubs.get(callee)
            if stub is not None and _forwards(scopes[-1]) and len(scopes) <= 2:
                derived.append(_forwarding_finding(walker.module, scopes, stub))
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


def _forwards(function: ast.AST) -> bool:
    """The function's body is one call, after its docstring and imports."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    body = [s for s in function.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return len(body) == 1 and isinstance(body[0], (ast.Return, ast.Expr)) and isinstance(body[0].value, ast.Call)


def _forwarding_finding(module: str, scopes: Sequence[ast.AST], stub: Finding) -> Finding:
    kind = "method" if len(scopes) == 2 and isinstance(scopes[0], ast.ClassDef) else "function"
    return Finding(module, ".".join(s.name for s in scopes), kind, "raises", stub.category, stub.message)


# --- public names -----------------------------------------------------------------------
#
# Which public names reach a definition, read from the syntax trees of the
# release's modules (a wheel is never imported): every binding of a public
# module (``def``, ``class``, assignment, ``from m import n [as a]``,
# ``from m import *`` through ``__all__``, ``import m as a``) is followed to
# the module that defines it. Bindings inside ``if``/``try``/``with`` blocks
# count (torch binds much of its namespace under conditions).

# torch/__init__.py copies the C functions in a loop (``globals()[name] = ...``)
# that no syntax tree shows: their names are the stubs' (``torch._C._VariableFunctions``).
FALLBACKS = {"torch": "torch._C._VariableFunctions"}

Binding = Tuple[str, str, str]  # ("def" | "from" | "instance" | "module", module, name)


def _is_public_module(name: str) -> bool:
    return name in PUBLIC_PRIVATE_MODULES or not any(part.startswith("_") for part in name.split("."))


def _absolute(module: str, is_package: bool, level: int, target: Optional[str]) -> str:
    """The module a ``from .x import y`` in ``module`` names."""
    if not level:
        return target or ""
    parts = module.split(".")
    base = parts[: len(parts) - level + (1 if is_package else 0)]
    return ".".join(base + ([target] if target else []))


def _top_level(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """A module's statements, those under ``if``/``try``/``with`` included (not those in defs)."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.For, ast.While)):
            yield from _top_level(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_level(node.body + node.orelse + node.finalbody
                                  + [s for h in node.handlers for s in h.body])
        elif isinstance(node, ast.With):
            yield from _top_level(node.body)


class StaticNames:
    """The bindings of a release's modules, from their syntax trees."""

    def __init__(self, release: Release) -> None:
        self.release = release
        self.paths: Dict[str, str] = {}  # module -> file; a .py wins over its .pyi stub
        for relative in release.files:
            module = _module_name(relative)
            if relative.endswith(".py") or module not in self.paths:
                self.paths[module] = relative
        self._trees: Dict[str, Optional[ast.Module]] = {}
        self._bindings: Dict[str, Dict[str, Binding]] = {}

    def tree(self, module: str) -> Optional[ast.Module]:
        if module not in self._trees:
            path = self.paths.get(module)
            try:
                self._trees[module] = ast.parse(self.release.text(path)) if path else None
            except SyntaxError:
                self._trees[module] = None
        return self._trees[module]

    def bindings(self, module: str) -> Dict[str, Binding]:
        if module not in self._bindings:
            self._bindings[module] = {}  # a cycle of star imports reads it empty
            self._bindings[module] = self._read_bindings(module)
        return self._bindings[module]

    def _read_bindings(self, module: str) -> Dict[str, Binding]:
        tree = self.tree(module)
        if tree is None:
            return {}
        is_package = self.paths[module].rsplit("/", 1)[-1].startswith("__init__.")
        found: Dict[str, Binding] = {}
        for node in _top_level(tree.body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found[node.name] = ("def", module, node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
                for target in targets:
                    if not isinstance(target, ast.Name):
                        continue
                    if isinstance(value, ast.Name):  # symeig = _symeig
                        found[target.id] = ("from", module, value.id) if value.id != target.id else found.get(
                            target.id, ("def", module, target.id))
                    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
                        found[target.id] = ("instance", module, value.func.id)
                    else:
                        found[target.id] = ("def", module, target.id)
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(module, is_package, node.level, node.module)
                for alias in node.names:
                    if alias.name == "*":
                        for name in self.exported(source):
                            found.setdefault(name, ("from", source, name))
                        continue
                    submodule = f"{source}.{alias.name}"
                    found[alias.asname or alias.name] = (
                        ("module", submodule, "") if submodule in self.paths else ("from", source, alias.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        found[alias.asname] = ("module", alias.name, "")
        return found

    def exported(self, module: str) -> List[str]:
        """What ``from module import *`` binds: ``__all__`` where it is a literal, else the public bindings."""
        tree = self.tree(module)
        if tree is None:
            return []
        names: List[str] = []
        for node in _top_level(tree.body):
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and isinstance(
                    getattr(node, "value", None), (ast.List, ast.Tuple)):
                names += [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
        return names or [n for n in self.bindings(module) if not n.startswith("_")]

    def resolve(self, module: str, name: str, depth: int = 0) -> Optional[Binding]:
        """Where ``module.name`` is defined: ("def", module, name), ("module", module, ""), an
        instance of a class (``reduce_op = _ReduceOp()``), or None where nothing binds it."""
        binding = self.bindings(module).get(name)
        if binding is None:
            if f"{module}.{name}" in self.paths:
                return ("module", f"{module}.{name}", "")
            fallback = FALLBACKS.get(module)
            return self.resolve(fallback, name, depth + 1) if fallback and depth < 30 else None
        kind, source, source_name = binding
        if kind == "from" and depth < 30:
            if source not in self.paths:  # compiled, without a stub: taken as defined there
                return ("def", source, source_name)
            return self.resolve(source, source_name, depth + 1) or ("def", source, source_name)
        if kind == "instance":
            made = self.resolve(module, source_name, depth + 1) if depth < 30 else None
            if made is not None and made[0] == "def" and self.class_def(made[1], made[2]) is not None:
                return ("instance", made[1], made[2])
            return ("def", module, name)  # made by a factory (``constant = _make_deprecate(constant_)``)
        return binding

    def public_modules(self) -> List[str]:
        return sorted(m for m in self.paths if _is_public_module(m) and m.split(".")[0] in PACKAGES
                      and not any(m.replace(".", "/").startswith(s) for s in SKIPPED_DIRS))

    # -- does a name exist in this release ---------------------------------------------

    def exists(self, qualified: str) -> bool:
        """Does ``qualified`` (``torch.qr``, ``torch.Tensor.qr``, ``torch.cuda.green_contexts``) name
        something in this release? Unknown counts as yes: a name is gone only where the release's
        sources show that nothing binds it."""
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            module = ".".join(parts[:cut])
            if module in self.paths:
                return self._has_path(module, parts[cut:])
        return True

    def _has_path(self, module: str, path: List[str]) -> bool:
        if not path:
            return True
        found = self.resolve(module, path[0])
        if found is None:
            return self._may_be_dynamic(module, path[0])
        kind, source, name = found
        if kind == "module":
            return self._has_path(source, path[1:])
        return not path[1:] or self._class_has(source, name, path[1])

    def _may_be_dynamic(self, module: str, name: str) -> bool:
        """A module-level ``__getattr__`` may serve a name its text spells."""
        tree = self.tree(module)
        serves = tree is not None and any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body)
        return serves and repr(name)[1:-1] in self.release.text(self.paths[module])

    def class_def(self, module: str, name: str) -> Optional[ast.ClassDef]:
        tree = self.tree(module)
        if tree is None:
            return None
        return next((n for n in _top_level(tree.body) if isinstance(n, ast.ClassDef) and n.name == name), None)

    def _class_has(self, module: str, name: str, member: str, depth: int = 0) -> bool:
        cls = self.class_def(module, name)
        if cls is None or depth > 10:
            return True  # not a class the sources show (a C type without a stub, an instance): unknown
        for node in cls.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == member:
                return True
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            if any(isinstance(t, ast.Name) and t.id == member for t in targets):
                return True
        for base in cls.bases:
            dotted = _dotted(base)
            if dotted is None:
                return True
            head, _, rest = dotted.partition(".")
            found = self.resolve(module, head)
            if found is None:
                return True
            if found[0] == "module" and rest:
                base_module, _, base_name = f"{found[1]}.{rest}".rpartition(".")
                found = self.resolve(base_module, base_name)
            if found is None or found[0] != "def" or found[2] in ("object", "Generic", "Protocol"):
                continue
            if self._class_has(found[1], found[2], member, depth + 1):
                return True
        return False

    def function_def(self, defined: str) -> Optional[ast.AST]:
        """The def of ``module:Qual.name`` (a class: its ``__init__``), or None."""
        module, _, qualname = defined.partition(":")
        tree = self.tree(module)
        body: Sequence[ast.stmt] = tree.body if tree is not None else []
        node: Optional[ast.AST] = None
        for part in qualname.split(".") if qualname else []:
            node = next((n for n in _top_level(body) if isinstance(
                n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part), None)
            if node is None:
                return None
            body = node.body
        if isinstance(node, ast.ClassDef):
            node = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        return node

    def accepts_keyword(self, defined: str, keyword: str) -> Optional[bool]:
        """Does the function still take ``keyword``? None where its def is not found."""
        function = self.function_def(defined)
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        return function.args.kwarg is not None or keyword in _params(function)


def public_names(findings: Sequence[Finding], names: StaticNames) -> Dict[Tuple[str, str], List[str]]:
    """(defining module, top-level name) -> names that hold that object: public
    names first (fewest dots), then private ones (``torch.distributed._all_gather_base``).

    Module-level instances of a defining class (``torch.distributed.reduce_op``)
    count as its names too (listed in ``INSTANCES``).
    """
    wanted = {(f.module, f.qualname.split(".")[0]) for f in findings if f.qualname}
    found: Dict[Tuple[str, str], Set[str]] = {key: set() for key in wanted}
    found.update({(f.module, ""): set() for f in findings if not f.qualname})
    for module in names.public_modules():
        if (module, "") in found:
            found[(module, "")].add(module)
        for attr in names.bindings(module):
            if attr.startswith("__"):
                continue
            target = names.resolve(module, attr)
            if target is None or (target[1], target[2]) not in wanted:
                continue
            if target[0] == "instance":
                INSTANCES.add(f"{module}.{attr}")
            found[(target[1], target[2])].add(f"{module}.{attr}")
    return {key: sorted(values, key=_preference) for key, values in found.items()}


def _preference(name: str) -> Tuple[bool, bool, int, str]:
    """Public names first, those of the namespaces users import (``NAMESPACES``) before other
    modules', then the shortest."""
    return (any(p.startswith("_") for p in name.split(".")), name.rsplit(".", 1)[0] not in NAMESPACES,
            name.count("."), name)


INSTANCES: Set[str] = set()  # names found as instances of a defining class (``torch.distributed.reduce_op``)


# --- the data file ----------------------------------------------------------------------


def mine_release(release: Release, names: StaticNames) -> Dict[str, Dict[str, object]]:
    """One release's deprecations by id: what it warns about, and the removed APIs that raise."""
    INSTANCES.clear()
    findings = mine_sources(release)
    reach = public_names(findings, names)
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
    return items


# --- releases: one table over the mined releases ----------------------------------------
#
# Each release is mined on its own; the table then records, per item and
# release, its status there: ``warns`` (torch warns on use), ``raises`` (a
# stub that raises: removed), ``gone`` (nothing binds the name, or the
# function no longer takes the keyword: removed, or not yet added), ``silent``
# (it exists and torch no longer, or not yet, warns). From the statuses:
# ``deprecated`` is the first release that warns, ``removed`` the first that
# raises or lacks it after one that had it (or the first release mined, where
# it raises there already), ``undeprecated`` the first silent one after a
# release that warned. Releases are compared as mined; none is imported.

def status_in(item: Dict[str, object], mined: Dict[str, Dict[str, object]], names: StaticNames) -> str:
    """The status of an item (mined in some release) in one release, given what that release mined."""
    found = mined.get(str(item["id"]))
    if found is not None:
        return "raises" if found["how"] == "raises" else "warns"
    keyword = item.get("keyword")
    if keyword:
        accepted = names.accepts_keyword(str(item["defined"]), str(keyword))
        if accepted is not None:
            return "silent" if accepted else "gone"
    known = item["names"] or [str(item["defined"]).replace(":", ".")]
    return "silent" if any(names.exists(str(n)) for n in known) else "gone"  # type: ignore[union-attr]


def history(statuses: Dict[str, str], releases: Sequence[str]) -> Dict[str, Optional[str]]:
    """``deprecated`` / ``removed`` / ``undeprecated``: the first release of each, from the statuses."""
    deprecated = removed = undeprecated = None
    existed = warned = False
    for index, release in enumerate(releases):
        status = statuses.get(release)
        if status == "warns":
            deprecated = deprecated or release
            warned, existed, undeprecated = True, True, None
        elif status == "raises" and removed is None and (existed or index == 0):
            removed = release
        elif status == "gone" and removed is None and existed:
            removed = release
        elif status == "silent":
            existed = True
            if warned and undeprecated is None and removed is None:
                undeprecated = release
    return {"deprecated": deprecated, "removed": removed, "undeprecated": undeprecated}


HISTORY = ("deprecated", "removed", "undeprecated")


def _release_key(version: str) -> Tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def build_table(mined: Dict[str, Dict[str, Dict[str, object]]], names: Dict[str, StaticNames], installed: str,
                previous: Optional[Dict[str, object]] = None) -> Dict[str, object]:
    """The one table over all releases. ``mined``: release -> its items by id, for the releases mined
    now (``installed`` among them); the statuses of ``previous`` (the committed table) stand for the
    releases not mined now."""
    kept = {str(i["id"]): i for i in (previous or {}).get("items", [])}  # type: ignore[union-attr]
    old_releases = [str(r) for r in (previous or {}).get("releases", [])]  # type: ignore[union-attr]
    releases = sorted(set(old_releases) | set(mined), key=_release_key)
    items: Dict[str, Dict[str, object]] = {}
    for release in releases:  # an item's fields are the first mining's
        for item_id, item in (mined.get(release) or {}).items():
            items.setdefault(item_id, dict(item))
    for item_id, item in kept.items():
        if item_id not in items and any(r not in mined for r in item.get("status", {})):  # type: ignore[union-attr]
            items[item_id] = {k: v for k, v in item.items() if k not in ("status", *HISTORY)}
    for item_id, item in items.items():
        statuses = {r: s for r, s in kept.get(item_id, {}).get("status", {}).items() if r not in mined}
        for release in mined:
            statuses[release] = status_in(item, mined[release], names[release])
        item["status"] = {r: statuses[r] for r in releases if r in statuses}
        item.update(history(item["status"], releases))
    return {
        "format": FORMAT,
        "torch": installed,
        "releases": releases,
        "items": [items[key] for key in sorted(items)],
    }


def mine(wheels: Sequence[Path] = (), previous: Optional[Dict[str, object]] = None) -> Dict[str, object]:
    """The installed torch and the given wheels, mined and diffed into one table."""
    releases = [Release.installed(), *(Release.wheel(w) for w in wheels)]
    installed = releases[0].version
    names = {r.version: StaticNames(r) for r in releases}
    mined = {r.version: mine_release(r, names[r.version]) for r in releases}
    missing = [r for r in (previous or {}).get("releases", []) if r not in mined]  # type: ignore[union-attr]
    known = {p["id"] for p in (previous or {}).get("items", [])}  # type: ignore[union-attr]
    unknown = [i for i in mined[installed] if i not in known] if missing else []
    if unknown:  # their statuses in those releases would be guessed: say so
        sys.stderr.write(f"new items have no status for {', '.join(missing)}: mine those wheels again "
                         f"(--wheel): {', '.join(unknown[:5])}\n")
    return build_table(mined, names, installed, previous)


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
    from torchlint.core.settings import Settings
    from torchlint.engine.linter import Engine
    from torchlint.knowledge.deprecations import ENTRIES, FUNCTION_CTX, Kind
    from torchlint.rules import rule_by_code

    NOT_NAME_LIKE = (Kind.METHOD, Kind.KEYWORD, Kind.MODULE, Kind.SET_ARGUMENT, Kind.INSTANCE_METHOD,
                     Kind.KEYWORD_VALUE, Kind.CLASS_DECORATOR, Kind.PLAIN_METHOD)
    rules = [rule_by_code("TL108"), rule_by_code("TL109"), rule_by_code("TL117")]  # TL117: the opt-in ones
    results: Dict[str, Dict[str, object]] = {}
    for entry in ENTRIES:
        if entry.kind in NOT_NAME_LIKE or entry.old.startswith(FUNCTION_CTX):
            continue
        # a project moving to the first release that reports the entry (all_gather_into_tensor: 2.13)
        engine = Engine(rules, Settings(target_torch_version=entry.first_target()))
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
    parser.add_argument("--unflagged", action="store_true",
                        help="list, per release, the detectable items not flagged and why (committed data)")
    parser.add_argument("--wheel", type=Path, action="append", default=[],
                        help="a torch wheel to mine as well (read as a zip, never installed); without one, the "
                             "committed statuses of the releases not installed stand")
    args = parser.parse_args(argv)
    if args.unflagged:
        sys.path.insert(0, str(REPO))
        from torchlint.knowledge.deprecation_review import load_mined, unflagged_report

        sys.stdout.write(unflagged_report(load_mined(args.output)))
        return 0
    if args.report_only:
        text = OUTPUT.read_text(encoding="utf-8")
    else:
        previous = json.loads(OUTPUT.read_text(encoding="utf-8")) if OUTPUT.exists() else None
        text = render(mine(args.wheel, previous if previous and previous.get("format") == FORMAT else None))
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
