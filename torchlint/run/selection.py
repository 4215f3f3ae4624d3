"""Which rules run: ``--select`` / ``--ignore`` with flake8's prefix matching.

A code is selected when its longest matching ``select`` prefix is longer than
its longest matching ``ignore`` prefix, so ``--select TL --ignore TL1`` drops
TL1xx while ``--select TL101 --ignore TL1`` keeps TL101, as in flake8.
``extend-select`` prefixes are added to ``select`` (or to the default: every
rule enabled by default) and compete with ``ignore`` the same way.

Opt-in rules (``enabled_by_default = False``: performance hints and other
advice that is right only for some code) run only when named by their full
code, as in ruff: ``--select TL302`` enables TL302, ``--select TL`` or
``--select TL3`` does not. flake8 does its own selection, and its
``--select TL`` would show every code the plugin yields, so the plugin runs
opt-in rules only when they are named in ``--torchlint-enable`` (or, by full
code, in flake8's ``--select`` / ``--extend-select``): see ``enabled_rules``.
"""

from __future__ import annotations

import re
from typing import Iterable, List, Optional, Sequence, Union

from torchlint.rules.rule import Rule

_SELECTOR = re.compile(r"^TL[0-9]{0,3}$")
_CODE = re.compile(r"^TL[0-9]{3}$")


class SelectionError(ValueError):
    pass


def parse_codes(text: Optional[str]) -> List[str]:
    if not text:
        return []
    return [part.strip().upper() for part in re.split(r"[,\s]+", text) if part.strip()]


def check_selectors(selectors: Iterable[str], rules: Sequence[Rule]) -> None:
    """Raise SelectionError for a selector that matches no rule."""
    known = [rule.code for rule in rules]
    for selector in selectors:
        if not _SELECTOR.match(selector) or not any(code.startswith(selector) for code in known):
            raise SelectionError(f"unknown rule selector {selector!r} (rule codes look like TL101)")


def select_rules(
    rules: Sequence[Rule],
    select: Union[str, Sequence[str], None],
    ignore: Union[str, Sequence[str], None],
    extend_select: Union[str, Sequence[str], None] = None,
) -> List[Rule]:
    """The rules to run; each argument is a comma-separated string or a list of codes."""
    selected, ignored, extended = (_codes(x) for x in (select, ignore, extend_select))
    check_selectors((*selected, *ignored, *extended), rules)
    return [rule for rule in rules if is_selected(rule, selected, ignored, extended)]


def is_selected(rule: Rule, selected: Iterable[str], ignored: Iterable[str], extended: Iterable[str] = ()) -> bool:
    selected, extended = list(selected), list(extended)
    if not rule.enabled_by_default and rule.code not in (*selected, *extended):
        return False  # opt-in: a prefix (TL, TL3) does not turn it on, its full code does
    if not selected:
        selected = ["TL"]
    select_length = _longest_prefix(rule.code, [*selected, *extended])
    return select_length > _longest_prefix(rule.code, ignored)


def opt_in_codes(rules: Sequence[Rule]) -> List[str]:
    return [rule.code for rule in rules if not rule.enabled_by_default]


def parse_enable(text: Optional[str], rules: Sequence[Rule]) -> List[str]:
    """Full rule codes to switch on (``TL302,TL303``); prefixes are refused,
    so that enabling stays explicit."""
    codes = parse_codes(text)
    known = {rule.code for rule in rules}
    for code in codes:
        if not _CODE.match(code) or code not in known:
            raise SelectionError(f"unknown rule code {code!r} (give full codes such as TL302)")
    return codes


def enabled_rules(rules: Sequence[Rule], enable: Iterable[str]) -> List[Rule]:
    """The rules on by default, plus the opt-in rules whose full code is in ``enable``.

    For front ends that leave selection by prefix to someone else (flake8);
    codes in ``enable`` that are not full rule codes are ignored here.
    """
    wanted = {code.strip().upper() for code in enable}
    return [rule for rule in rules if rule.enabled_by_default or rule.code in wanted]


def _longest_prefix(code: str, prefixes: Iterable[str]) -> int:
    return max((len(p) for p in prefixes if code.startswith(p)), default=-1)


def _codes(value: Union[str, Sequence[str], None]) -> List[str]:
    if value is None or isinstance(value, str):
        return parse_codes(value)
    return [code.strip().upper() for code in value if code.strip()]
