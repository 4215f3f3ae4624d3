"""torch's deprecated scalar-first overloads (``p.add_(-lr, grad)``), as data.

``scripts/mine_deprecated_overloads.py`` reads them from the list torch itself
keeps (``torchgen/packaged/autograd/deprecated.yaml``, shipped in every torch
wheel) and writes ``data/torch_deprecated_overloads.json``; nothing here is
typed in by hand. Each overload says the order of its old positional
arguments, which of them are scalars, and the call torch maps it to: the
tensors by position, each scalar as the keyword of its name. The file is read
on first use; ``tests/test_deprecated_overloads.py`` checks it against the
installed torch and runs every entry.
"""

from __future__ import annotations

import functools
import json
import pkgutil
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

DATA_FILE = "torch_deprecated_overloads.json"
FUNCTION = "function"  # ``torch.addmm(beta, M, a, b)``
METHOD = "method"  # ``M.addmm(beta, a, b)``: the receiver is ``self``/``input``


@dataclass(frozen=True)
class Overload:
    """One deprecated signature in one Python form."""

    name: str  # ``add_``
    form: str  # FUNCTION or METHOD
    old: Tuple[str, ...]  # the positional parameters, in the deprecated order
    scalars: Tuple[str, ...]  # which of them are scalars (the ones that move)
    new: Tuple[str, ...]  # the positional parameters of the current signature, in order
    keywords: Tuple[str, ...]  # the scalars, as keywords of the current signature
    out: bool  # takes ``out=`` (as a keyword in both signatures)
    # The most positional arguments any current signature of the name takes: a call
    # with more can only be the deprecated overload.
    current_positional: int

    @property
    def decided_by_arity(self) -> bool:
        return len(self.old) > self.current_positional

    def signature(self, old: bool) -> str:
        """``add_(alpha, other)`` / ``add_(other, *, alpha=)``, for messages."""
        if old:
            return f"{self.name}({', '.join(self.old)})"
        keywords = ", ".join(f"{k}=" for k in self.keywords)
        return f"{self.name}({', '.join(self.new)}, *, {keywords})"


@functools.lru_cache(maxsize=1)
def _table() -> Dict[Tuple[str, str, int], Overload]:
    data = pkgutil.get_data("torchlint.knowledge", "data/" + DATA_FILE)
    if data is None:  # pragma: no cover - a loader without get_data
        raise FileNotFoundError(DATA_FILE)
    table = {}
    for item in json.loads(data.decode("utf-8"))["overloads"]:
        overload = Overload(
            item["name"], item["form"], tuple(item["old"]), tuple(item["scalars"]), tuple(item["new"]),
            tuple(item["keywords"]), item["out"], item["current_positional"],
        )
        # One overload per name, form and arity: torch has no two of the same length.
        key = (overload.name, overload.form, len(overload.old))
        assert key not in table, key
        table[key] = overload
    return table


def overloads() -> Tuple[Overload, ...]:
    return tuple(_table().values())


@functools.lru_cache(maxsize=1)
def names() -> frozenset:
    """Every name that has a deprecated overload (``add``, ``add_``, ``addcmul_``, ...)."""
    return frozenset(name for name, _, _ in _table())


def lookup(name: str, form: str, positional: int) -> Optional[Overload]:
    """The deprecated overload of ``name`` called in ``form`` with ``positional`` arguments."""
    return _table().get((name, form, positional))
