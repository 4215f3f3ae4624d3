"""Which findings' fixes may be applied, and how safe each counts: ruff's
``fixable`` / ``unfixable`` / ``extend-fixable`` and ``extend-safe-fixes`` /
``extend-unsafe-fixes``.

Codes and prefixes compete as in ``select`` / ``ignore``: the longest
matching prefix decides, so ``unfixable = ["TL1"]`` with
``extend-fixable = ["TL102"]`` leaves TL102's fix and drops the other TL1xx
fixes. A finding whose rule is not fixable is reported without its fix (no
``--fix`` applies it, no output offers it), as ruff does. A safety override
changes a fix from unsafe to safe or back; where both name a rule equally
specifically, ``extend-unsafe-fixes`` wins (ruff's order).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Dict, Iterable, List, Tuple

from torchlint.core.diagnostic import Diagnostic, Fix


@dataclass(frozen=True)
class FixPolicy:
    fixable: Tuple[str, ...] = ("TL",)
    unfixable: Tuple[str, ...] = ()
    extend_safe_fixes: Tuple[str, ...] = ()
    extend_unsafe_fixes: Tuple[str, ...] = ()

    @property
    def is_default(self) -> bool:
        return self == DEFAULT_FIX_POLICY

    def is_fixable(self, code: str) -> bool:
        return _longest_prefix(code, self.fixable) > _longest_prefix(code, self.unfixable)

    def is_safe(self, code: str, safe: bool) -> bool:
        """The safety a fix of ``code`` that its rule calls ``safe`` has here."""
        as_safe = _longest_prefix(code, self.extend_safe_fixes)
        as_unsafe = _longest_prefix(code, self.extend_unsafe_fixes)
        if as_unsafe >= 0 and as_unsafe >= as_safe:
            return False
        if as_safe >= 0:
            return True
        return safe

    def apply(self, diagnostics: List[Diagnostic]) -> List[Diagnostic]:
        """``diagnostics`` with the policy's fixes: dropped or made (un)safe.

        One fix may answer several findings (the fixer applies it once, by
        identity): a changed fix stays one object for all of them."""
        if self.is_default:
            return diagnostics
        changed: Dict[Tuple[int, bool], Fix] = {}
        result = []
        for diagnostic in diagnostics:
            fix = diagnostic.fix
            if fix is None:
                result.append(diagnostic)
                continue
            if not self.is_fixable(diagnostic.code):
                result.append(dataclasses.replace(diagnostic, fix=None))
                continue
            safe = self.is_safe(diagnostic.code, fix.safe)
            if safe != fix.safe:
                key = (id(fix), safe)
                if key not in changed:
                    changed[key] = dataclasses.replace(fix, safe=safe)
                diagnostic = dataclasses.replace(diagnostic, fix=changed[key])
            result.append(diagnostic)
        return result


DEFAULT_FIX_POLICY = FixPolicy()


def _longest_prefix(code: str, prefixes: Iterable[str]) -> int:
    return max((len(p) for p in prefixes if code.startswith(p)), default=-1)
