"""The calls that make an optimizer's learning-rate schedule, mined by
``scripts/mine_lr_schedules.py`` into ``data/lr_schedules.json``: torch's
scheduler classes, and the factories of transformers that return one.

A schedule's state is Python numbers only, so a file saved from one (or read
back into one) holds no tensor on a GPU. Nothing here is typed by hand;
``tests/test_lr_schedules.py`` checks the torch part against the installed torch.
"""

from __future__ import annotations

import json
import pkgutil
from functools import lru_cache
from typing import FrozenSet

LR_SCHEDULES_DATA = "lr_schedules.json"


@lru_cache(maxsize=1)
def lr_schedule_makers() -> FrozenSet[str]:
    """Qualified names whose call returns a learning-rate schedule."""
    raw = pkgutil.get_data("torchlint.knowledge", "data/" + LR_SCHEDULES_DATA)
    data = json.loads(raw.decode("utf-8")) if raw else {}
    return frozenset(data.get("torch", ())) | frozenset(data.get("transformers", ()))
