"""Which rules run: ``--select`` / ``--ignore`` with flake8's prefix matching.

A code is selected when its longest matching ``select`` prefix is longer than
its longest matching ``ignore`` prefix, so ``--select TL --ignore TL1`` drops
TL1xx while ``--select TL101 --ignore TL1`` keeps TL101, as in flake8.
"""

from __future__ import annotations

import re
from typing import Iterable, List, Optional, Sequence

from torchlint.rule import Rule

_SELECTOR = re.compile(r"^TL[0-9]{0,3}$")


class SelectionError(ValueError):
    pass


def parse_codes(text: Optional[str]) -> List[str]:
    if not text:
        return []
    return [part.strip().upper() for part in re.split(r"[,\s]+", text) if part.strip()]


def select_rules(rules: Sequence[Rule], select: Optional[str], ignore: Optional[str]) -> List[Rule]:
    selected = parse_codes(select)
    ignored = parse_codes(ignore)
    known = [rule.code for rule in rules]
    for selector in (*selected, *ignored):
        if not _SELECTOR.match(selector) or not any(code.startswith(selector) for code in known):
            raise SelectionError(f"unknown rule selector {selector!r} (rule codes look like TL101)")
    return [rule for rule in rules if is_selected(rule, selected, ignored)]


def is_selected(rule: Rule, selected: Iterable[str], ignored: Iterable[str]) -> bool:
    selected = list(selected)
    if not selected:
        if not rule.enabled_by_default:
            return False
        selected = ["TL"]
    select_length = _longest_prefix(rule.code, selected)
    return select_length > _longest_prefix(rule.code, ignored)


def _longest_prefix(code: str, prefixes: Iterable[str]) -> int:
    return max((len(p) for p in prefixes if code.startswith(p)), default=-1)
