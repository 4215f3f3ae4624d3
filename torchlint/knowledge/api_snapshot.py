"""torch's public API as data, read without importing torch.

``scripts/snapshot_torch_api.py`` imports a real torch and writes
``torchlint/knowledge/data/torch_api_snapshot.json``: the public names of a fixed list
of namespaces (``torch``, ``torch.nn``, ``torch.nn.functional``,
``torch.optim``, ``torch.utils.data``, ``torch.cuda``, ...) and the parameters
of the callables in them. Rules ask this module whether an attribute exists
(``namespace_members``), which keywords a callable takes (``signature``) and
what a misspelled name was probably meant to be (``closest``). The file is
read on first use and once per process; ``tests/test_api_snapshot.py`` fails
when it no longer matches the installed torch.
"""

from __future__ import annotations

import difflib
import functools
import json
import pkgutil
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, List, Mapping, Optional, Tuple

DATA_FILE = "torch_api_snapshot.json"

POSITIONAL_ONLY = "positional_only"
POSITIONAL_OR_KEYWORD = "positional_or_keyword"
VAR_POSITIONAL = "var_positional"
KEYWORD_ONLY = "keyword_only"
VAR_KEYWORD = "var_keyword"

# torch's C++ argument parser accepts these numpy spellings for its parameters
# (torch/csrc/utils/python_arg_parser.cpp, numpy_compatibility_arg_names):
# ``torch.sum(x, axis=0, keepdims=True)`` is valid.
NUMPY_ALIASES: Mapping[str, Tuple[str, ...]] = {
    "dim": ("axis",),
    "keepdim": ("keepdims",),
    "input": ("x", "a", "x1"),
    "other": ("x2",),
}


@dataclass(frozen=True)
class Params:
    """The parameters of a torch callable (for a class: its constructor's)."""

    parameters: Tuple[Tuple[str, str], ...]  # (name, kind), kinds as the constants above
    argument_parser: bool = False  # parsed by torch's C++ argument parser (numpy aliases apply)

    @property
    def names(self) -> Tuple[str, ...]:
        return tuple(name for name, _ in self.parameters)

    @property
    def var_keyword(self) -> bool:
        """Takes ``**kwargs``: any keyword is accepted."""
        return any(kind == VAR_KEYWORD for _, kind in self.parameters)

    @property
    def var_positional(self) -> bool:
        return any(kind == VAR_POSITIONAL for _, kind in self.parameters)

    @property
    def keywords(self) -> FrozenSet[str]:
        """Names that may be passed as ``name=value``."""
        names = {n for n, k in self.parameters if k in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)}
        if self.argument_parser:
            names.update(alias for n in list(names) for alias in NUMPY_ALIASES.get(n, ()))
        return frozenset(names)

    @property
    def positional_only(self) -> FrozenSet[str]:
        return frozenset(n for n, k in self.parameters if k == POSITIONAL_ONLY)

    def accepts_keyword(self, name: str) -> bool:
        return self.var_keyword or name in self.keywords


def parse_params(encoded: str) -> Params:
    """``"@input,/,dim,*,out,**kw"`` -> Params (the snapshot's notation)."""
    argument_parser = encoded.startswith("@")
    parts = [p for p in encoded.lstrip("@").split(",") if p]
    kinds: List[Tuple[str, str]] = []
    if "/" in parts:
        index = parts.index("/")
        kinds += [(name, POSITIONAL_ONLY) for name in parts[:index]]
        parts = parts[index + 1:]
    keyword_only = False
    for part in parts:
        if part.startswith("**"):
            kinds.append((part[2:], VAR_KEYWORD))
        elif part == "*":
            keyword_only = True
        elif part.startswith("*"):
            kinds.append((part[1:], VAR_POSITIONAL))
            keyword_only = True
        else:
            kinds.append((part, KEYWORD_ONLY if keyword_only else POSITIONAL_OR_KEYWORD))
    return Params(tuple(kinds), argument_parser)


class Snapshot:
    """The parsed data file."""

    def __init__(self, data: Mapping) -> None:
        self.torch_version: str = data["torch_version"]
        self.removed: FrozenSet[str] = frozenset(data["removed"])
        self.open_namespaces: FrozenSet[str] = frozenset(data["open_namespaces"])
        self.namespaces: Dict[str, FrozenSet[str]] = {ns: frozenset(names) for ns, names in data["namespaces"].items()}
        self.modules: Dict[str, FrozenSet[str]] = {ns: frozenset(names) for ns, names in data["modules"].items()}
        self._signatures: Mapping[str, str] = data["signatures"]
        self._aliases: Mapping[str, Mapping[str, str]] = data["aliases"]
        self._params: Dict[str, Params] = {}

    def canonical(self, qualified: str) -> str:
        """``torch.nn.modules.linear.Linear`` -> ``torch.nn.Linear`` (where it is exported)."""
        module, _, name = qualified.rpartition(".")
        exported_from = self._aliases.get(module, {}).get(name)
        return f"{exported_from}.{name}" if exported_from else qualified

    def signature(self, qualified: str) -> Optional[Params]:
        key = self.canonical(qualified)
        params = self._params.get(key)
        if params is None:
            encoded = self._signatures.get(key)
            if encoded is None:
                return None
            params = self._params[key] = parse_params(encoded)
        return params


@functools.lru_cache(maxsize=None)
def load() -> Snapshot:
    """The snapshot shipped with torchlint, read once."""
    data = pkgutil.get_data("torchlint.knowledge", "data/" + DATA_FILE)
    if data is None:  # pragma: no cover - a loader without get_data
        raise FileNotFoundError(DATA_FILE)
    return Snapshot(json.loads(data.decode("utf-8")))


def torch_version() -> str:
    """The torch version the snapshot was taken from, e.g. ``"2.13.0"``."""
    return load().torch_version


def torch_minor_version() -> str:
    """``"2.13"``."""
    return ".".join(torch_version().split(".")[:2])


def namespace_members(qualified_module: str) -> Optional[FrozenSet[str]]:
    """Public names of a snapshotted namespace; None if it is not snapshotted.

    Removed functions that survive as error-raising stubs (``torch.solve``)
    are not members: see ``removed()``.
    """
    snapshot = load()
    if qualified_module in snapshot.open_namespaces:
        return None
    return snapshot.namespaces.get(qualified_module)


def submodules(qualified_module: str) -> FrozenSet[str]:
    """The members of a namespace that are modules (``torch`` -> ``nn``, ``fft``, ...)."""
    return load().modules.get(qualified_module, frozenset())


def is_namespace(qualified_module: str) -> bool:
    return namespace_members(qualified_module) is not None


def removed() -> FrozenSet[str]:
    """Functions still present only to raise "was removed" errors, e.g. ``torch.solve``."""
    return load().removed


def signature(qualified_callable: str) -> Optional[Params]:
    """Parameters of a torch callable (a class: its constructor), or None if unknown."""
    return load().signature(qualified_callable)


def similarity(a: str, b: str) -> float:
    """How alike two names are, ignoring case (difflib's ratio, 0..1)."""
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()


def _ranked(name: str, candidates: Iterable[str], cutoff: float) -> List[Tuple[float, float, str]]:
    lowered = name.lower()
    ranked = []
    for candidate in candidates:
        if candidate == name:
            continue
        matcher = difflib.SequenceMatcher(None, lowered, candidate.lower())
        if matcher.real_quick_ratio() < cutoff or matcher.quick_ratio() < cutoff:
            continue
        ratio = matcher.ratio()
        if ratio >= cutoff:
            exact_case = difflib.SequenceMatcher(None, name, candidate).ratio()
            ranked.append((ratio, exact_case, candidate))
    # Best first; ties broken by the case-sensitive ratio, then alphabetically.
    ranked.sort(key=lambda r: (-r[0], -r[1], r[2]))
    return ranked


def closest(name: str, candidates: Iterable[str], cutoff: float = 0.7) -> Optional[str]:
    """The candidate ``name`` most likely misspells ("did you mean"), if any is close."""
    ranked = _ranked(name, candidates, cutoff)
    return ranked[0][2] if ranked else None


def unambiguous_correction(name: str, candidates: Iterable[str], cutoff: float = 0.85) -> Optional[str]:
    """The one candidate ``name`` certainly misspells, for an automatic rename.

    Needs a candidate at least ``cutoff`` alike that beats every other close
    candidate (``Conv4d`` is as close to ``Conv1d`` as to ``Conv3d``: none),
    with the same capitalised first letter (class names and function names
    differ in kind, not just spelling).
    """
    ranked = _ranked(name, candidates, cutoff)
    if not ranked:
        return None
    best_ratio, best_exact_case, best = ranked[0]
    for ratio, exact_case, _ in ranked[1:]:
        if ratio < best_ratio:
            break  # ranked: every later candidate is less alike
        # Equally alike ignoring case (``tensr``: ``tensor`` or ``Tensor``):
        # only the exact case may decide, and only clearly.
        if exact_case >= best_exact_case or best_exact_case < cutoff:
            return None
    if best[:1].isupper() != name[:1].isupper():
        return None  # ``nn.relu`` -> ``nn.ReLU`` turns a function call into a class
    return best
