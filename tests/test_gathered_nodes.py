"""``Rule.gathers``: a rule that needs every node of a type reads them from the
single traversal (``ctx.file.nodes``) instead of walking the tree again, and
gets exactly the nodes a walk of libcst's tree would find."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Iterator, List

import libcst as cst
import pytest

from torchlint.analysis.context import analyse
from torchlint.engine.linter import Engine
from torchlint.rules.rule import Finding, Rule

KINDS = (cst.Call, cst.Assign, cst.Name, cst.Decorator, cst.For, cst.Attribute)

VARIED = textwrap.dedent('''
    import torch
    from torch import nn

    @torch.no_grad()
    def infer(model, batches, *, scale=lambda x: x * 2):
        outputs = [model(b).sum() for b in batches if b is not None]
        table = {k: v for k, v in zip("ab", outputs)}
        for index, (key, value) in enumerate(table.items()):
            print(index, key, scale(value))
        return outputs

    class Net(nn.Module):
        @property
        def width(self) -> int:
            return 3

        def forward(self, x):
            global seen
            seen = x
            while x.sum() > 0:
                x = x - 1
            with torch.no_grad() as _, open("f") as handle:
                handle.write(str(x))
            try:
                y = x[0:2, ...]
            except (IndexError, ValueError) as error:
                raise RuntimeError(error) from None
            return (yield from [y]) if False else y
''')


class _Walked(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found: dict = {kind: [] for kind in KINDS}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if type(node) in self.found:
            self.found[type(node)].append(node)
        return True


def _sources() -> List[str]:
    package = Path(__file__).resolve().parent.parent / "torchlint"
    return [VARIED] + [path.read_text(encoding="utf-8") for path in sorted(package.glob("rules/tl1*.py"))[:6]]


@pytest.mark.parametrize("index", range(len(_sources())))
def test_the_traversal_gathers_what_a_walk_of_the_tree_finds(index):
    module = cst.parse_module(_sources()[index])
    file_context, _ = analyse(module, KINDS)
    walked = _Walked()
    module.visit(walked)
    for kind in KINDS:
        gathered = file_context.nodes(kind)
        assert len(gathered) == len({id(node) for node in gathered}), kind  # each node once
        assert {id(node) for node in gathered} == {id(node) for node in walked.found[kind]}, kind


class _DecoratedDefs(Rule):
    """A rule for this test: flags each def that the file decorates."""

    code = "TL998"
    name = "decorated-def"
    summary = "a decorated def"
    gathers = ("Decorator",)

    def check_FunctionDef(self, node: cst.FunctionDef, ctx) -> Iterator[Finding]:
        decorators = {id(d) for d in ctx.file.nodes(cst.Decorator)}
        if any(id(d) in decorators for d in node.decorators):
            yield Finding(node.name, "decorated")


def test_a_rule_reads_the_nodes_it_gathers():
    source = "import functools\n@functools.cache\ndef f():\n    pass\ndef g():\n    pass\n"
    checked = Engine([_DecoratedDefs()], screens=False).check(source)
    assert [(d.code, d.line) for d in checked.diagnostics] == [("TL998", 3)]
