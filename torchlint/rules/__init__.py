"""The rule catalog: every rule torchlint ships, in code order.

Adding a rule is adding a module ``tlNNN_<what>.py`` here that defines one
``Rule`` subclass; it is found by its module name, so no list needs editing.
"""

import importlib
import pkgutil
from typing import List, Tuple, Type

from torchlint.rule import Rule


def _discover() -> Tuple[Type[Rule], ...]:
    classes = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("tl"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value.__module__ == module.__name__
                and "code" in vars(value)
            ):
                classes.append(value)
    codes = [cls.code for cls in classes]
    duplicates = sorted({code for code in codes if codes.count(code) > 1})
    if duplicates:
        raise RuntimeError(f"rule codes defined twice: {duplicates}")
    return tuple(sorted(classes, key=lambda cls: cls.code))


RULE_CLASSES: Tuple[Type[Rule], ...] = _discover()


def all_rules() -> List[Rule]:
    return [cls() for cls in RULE_CLASSES]


def rule_by_code(code: str) -> Rule:
    for cls in RULE_CLASSES:
        if cls.code == code:
            return cls()
    raise KeyError(code)
