"""A check frees what it made as soon as it ends: no cycles.

A cycle among what a check allocates (a closure calling itself, scopes that
point at each other) keeps everything it reaches (parts of Python's tree,
libcst's nodes) alive until the cycle collector runs, and every collection
before then walks all of it: on transformers that was a million objects
and a third of a CPU second per run. These tests check a file the way the
CLI does, then ask the collector what it would free."""

from __future__ import annotations

import gc
import textwrap
from collections import Counter

import pytest

from torchlint.core.source import SourceFile
from torchlint.engine.linter import Engine
from torchlint.rules import all_rules

# Assignments of every kind the outline's screens read (``_binding_values``),
# unpacking included, and findings, so that the file reaches libcst and the
# rules' analysis too.
CHECKED = textwrap.dedent("""
    import torch
    import torch.nn.functional as F
    from torch.autograd import Variable

    weights, bias = torch.zeros(3), torch.ones(3)
    (a, b), c = (torch.zeros(2), torch.ones(2)), 3
    total: float = 0.0
    total += 1

    def step(model, batch):
        x = Variable(batch, volatile=True)
        for i, (inputs, target) in enumerate(batch):
            loss = (F.sigmoid(model(inputs)) - target).sum()
            weights.cuda()
            print(loss.data[0])
            if (n := loss.sum()) > 0:
                loss.backward()
        return x
""")


def _garbage_after(check) -> list:
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        check()
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


@pytest.fixture(scope="module")
def engine() -> Engine:
    engine = Engine(all_rules())
    engine.check(SourceFile(CHECKED))  # the first check fills the lazy tables: they are meant to stay
    return engine


def test_the_check_finds_something(engine):
    # The file must reach the analysis for the next test to mean anything.
    codes = {d.code for d in engine.check(SourceFile(CHECKED)).diagnostics}
    assert {"TL101", "TL102", "TL104", "TL201"} <= codes


def test_a_check_leaves_nothing_to_the_cycle_collector(engine):
    garbage = _garbage_after(lambda: engine.check(SourceFile(CHECKED)))
    kinds = Counter(type(o).__qualname__ for o in garbage)
    functions = sorted({o.__qualname__ for o in garbage if type(o).__name__ == "function"})
    assert not garbage, f"freed only by the collector: {dict(kinds)}; closures among them: {functions}"
