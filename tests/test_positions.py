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

# Top-level classes: a node in a method is placed from the method alone.
CLASSES = {
    "methods": "import torch\n\n\nclass C(torch.nn.Module):\n    x = torch.p\n\n    # about f\n    def f(self):\n"
               "        return torch.q(1)\n\n    @staticmethod\n    @torch.r\n    def g(a=torch.s):\n"
               "        def inner():\n            return torch.t\n        return inner\n",
    "nested class": "class A:\n    class B:\n        def f(self):\n            return torch.u\n"
                    "    def g(self):\n        return [torch.v for _ in range(2)]\n",
    "tabs and strings": "class C:\n\tdef f(self):\n\t\ts = \"\"\"\nx\n\"\"\"\n\t\treturn torch.w(s)\n",
    "semicolons in a method": "class C:\n    def f(self): a = torch.x; return torch.y\n    z = 1; w = torch.z\n",
    "last, without a final newline": "class C:\n    def f(self):\n        return torch.a",
    "crlf": "class C:\r\n    def f(self):\r\n        # c\r\n        return torch.b\r\n",
    "async and comments after": "class C:\n    async def f(self):\n        await torch.c()\n    # trailing\n\n# end\n",
}


# Statement lines deep in defs: a node there is placed from its line alone.
NESTED = {
    "blocks": "import torch\n\ndef f(x):\n    if x:\n        a = torch.a(x)\n    elif x > 1:\n"
              "        # note\n        b = torch.b(x)\n    else:\n        for i in x:\n            c = torch.c(i)\n"
              "        else:\n            d = torch.d\n    while x:\n        x = torch.e(x); y = torch.f\n"
              "    try:\n        with x as y:\n            torch.g(y)\n    except (A, B):\n        torch.h\n"
              "    except C:\n        pass\n    else:\n        torch.i()\n    finally:\n        torch.j()\n"
              "    return torch.k\n",
    "in a method": "class C:\n    def f(self, x):\n        for i in x:\n            if i:\n"
                   "                return torch.a(i)\n",
    "one-line blocks": "def f(x):\n    if x: return torch.a(x)\n    for i in x: torch.b(i)\n"
                       "    if x:\n        torch.c(x)\n",
    "crlf and tabs": "def f(x):\r\n\tif x:\r\n\t\ty = torch.a(x)\r\n\treturn y\r\n",
    "match left alone": "def f(x):\n    match x:\n        case 1:\n            torch.a()\n    torch.b()\n",
}


def _check(source: str):
    module = cst.parse_module(source)
    tree = ast.parse(source)
    file_context, collected = analyse(module, [cst.Call, cst.Attribute, cst.Name, cst.ImportAlias, cst.Assign])
    nodes = [node for found in collected.values() for node, _ in found]
    expected = cst.metadata.MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    wanted = {node: (expected[node].start.line, expected[node].start.column) for node in nodes}
    assert positions(module, nodes, SourceFile(source), tree, file_context.top_of) == wanted
    ends = {node: (expected[node].end.line, expected[node].end.column) for node in nodes}
    locator = Locator(module, SourceFile(source), tree, file_context.top_of)
    assert {node: end for node, (_, end) in locator.ranges(nodes).items()} == ends
    by_method = Locator(module, SourceFile(source), tree, file_context.top_of, file_context.method_of)
    assert by_method.ranges(nodes) == {node: (wanted[node], ends[node]) for node in nodes}
    by_line = Locator(module, SourceFile(source), tree, file_context.top_of, file_context.method_of,
                      file_context.line_holding)
    assert by_line.ranges(nodes) == {node: (wanted[node], ends[node]) for node in nodes}
    _check.lines = sum(placed is not None for placed in by_line._lines.values())
    return locator._by_statement, sum(isinstance(key, tuple) and placed is not None
                                      for key, placed in by_method._generated.items())


@pytest.mark.parametrize("name", SOURCES)
def test_positions_equal_libcst(name):
    fast, _ = _check(SOURCES[name])
    if name != "form feed":  # libcst moves a line's leading form feed: the text check falls back
        assert fast, "the per-statement way was not taken"


@pytest.mark.parametrize("name", CLASSES)
def test_positions_in_methods_equal_libcst(name):
    fast, methods = _check(CLASSES[name])
    assert fast and methods, "the per-method way was not taken"


def test_positions_on_our_own_code_equal_libcst():
    taken = methods = lines = 0
    for path in sorted((REPO / "torchlint").rglob("*.py")):
        fast, by_method = _check(path.read_text(encoding="utf-8"))
        taken += fast
        methods += by_method
        lines += _check.lines
    assert taken > 40 and methods > 100 and lines > 1000


@pytest.mark.parametrize("name", NESTED)
def test_positions_from_statement_lines_equal_libcst(name):
    fast, _ = _check(NESTED[name])
    assert fast and _check.lines, "the per-line way was not taken"


def test_every_statement_line_of_the_blocks_is_placed_alone():
    # Each of the 10 statement lines holding a node in the if/elif/else,
    # for-else, while, try/with/except/else/finally blocks and the final return.
    _check(NESTED["blocks"])
    assert _check.lines == 10
