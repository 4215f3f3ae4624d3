"""Findings' positions computed per statement equal libcst's PositionProvider's."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import PositionProvider

from torchlint.analysis.context import analyse
from torchlint.core.source import SourceFile
from torchlint.engine.positions import Locator, positions

REPO = Path(__file__).resolve().parent.parent

SOURCES = {
    "plain": "import torch\ny = torch.zeros(1)\n",
    "comments and blank lines": "# header\n\n# about f\n\ndef f():\n    # inside\n    return torch.ones(2)\n\n\nx = f()\n",
    "decorators": "@a.b\n\n@c(torch.x)\n# between\nclass C:\n    @d\n    def m(self): return torch.y\n",
    "semicolons": "a = torch.a; b = torch.b\nc = 1;\n",
    "continuations": "x = \\\n    torch.f(\n        1,\n    )\ny = [\n    torch.g\n]\n",
    "crlf": "import torch\r\nif x:\r\n    y = torch.h(1)\r\n",
    "cr": "import torch\rx = torch.i(2)\r",
    "form feed": "import torch\n\x0c\ndef f():\n    return torch.j\n\x0cx = torch.k\n",
    "tabs": "if x:\n\ty = torch.l\n",
    "no final newline": "x = torch.m",
    "strings spanning lines": 's = """\nline\n"""\nt = torch.n(s)\n',
    "unicode": "ü = 'ß'\nx = torch.o(ü)  # ö\n",
}


def _check(source: str):
    module = cst.parse_module(source)
    tree = ast.parse(source)
    file_context, collected = analyse(module, [cst.Call, cst.Attribute, cst.Name, cst.ImportAlias, cst.Assign])
    nodes = [node for found in collected.values() for node, _ in found]
    expected = cst.metadata.MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    wanted = {node: (expected[node].start.line, expected[node].start.column) for node in nodes}
    assert positions(module, nodes, SourceFile(source), tree, file_context.top_of) == wanted
    locator = Locator(module, SourceFile(source), tree, file_context.top_of)
    ends = {node: (expected[node].end.line, expected[node].end.column) for node in nodes}
    assert {node: end for node, (_, end) in locator.ranges(nodes).items()} == ends
    return locator._by_statement


@pytest.mark.parametrize("name", SOURCES)
def test_positions_equal_libcst(name):
    fast = _check(SOURCES[name])
    if name != "form feed":  # libcst moves a line's leading form feed: the text check falls back
        assert fast, "the per-statement way was not taken"


def test_positions_on_our_own_code_equal_libcst():
    taken = 0
    for path in sorted((REPO / "torchlint").rglob("*.py")):
        taken += _check(path.read_text(encoding="utf-8"))
    assert taken > 40
