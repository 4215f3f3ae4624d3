"""libcst's module assembled from top-level statements parsed one by one
(``engine/splicing.py``), against libcst's parse of the whole text: the same
code character for character, the same nodes, and pieces re-used from one
text to the next."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest

from torchlint.core.source import SourceFile
from torchlint.engine.splicing import CannotSplice, spliced_module

ROOT = Path(__file__).resolve().parent.parent


def splice(text: str, cache=None):
    source = SourceFile(text)
    return spliced_module(text, source.lines, ast.parse(text), {} if cache is None else cache)


def assert_as_whole(text: str, cache=None) -> cst.Module:
    module = splice(text, cache)
    whole = cst.parse_module(text)
    assert module.code == text
    assert (module.default_indent, module.default_newline, module.has_trailing_newline) == (
        whole.default_indent, whole.default_newline, whole.has_trailing_newline)
    assert len(module.body) == len(whole.body)
    if "#" not in text:  # comments under a block's end may belong to the next statement instead
        assert module.deep_equals(whole)
    else:
        for mine, theirs in zip(module.body, whole.body):
            assert mine.with_changes(leading_lines=()).deep_equals(theirs.with_changes(leading_lines=())) or \
                isinstance(theirs, cst.BaseCompoundStatement)
    return module


CASES = {
    "plain": "import torch\n\n\ndef f(x):\n    return x\n\n\nclass A:\n    y = 1\n\n    def g(self):\n        pass\n",
    "crlf": "import torch\r\n\r\ndef f(x):\r\n    return x\r\n\r\nx = 1\r\ndef g():\r\n    pass\r\n",
    "tabs and two spaces": "def f():\n\treturn 1\ndef g():\n  return 2\nclass C:\n    a = 1\n",
    "no final newline": "def f():\n    return 1\nx = 2",
    "header and footer comments": "# a header\n\n# more\ndef f():\n    pass\n    # under the block\n# before g\n\ndef g():\n    pass\n# the end\n\n",
    "semicolons and decorators": "import os; import sys\ndef f():\n    pass\n@dec\n@dec2(1)\ndef g():\n    pass\na = 1; b = 2\n",
    "strings over lines": 'def f():\n    """doc\n\n    more"""\n    return """a\nb"""\nX = """\n"""\ndef g(): return 1\n',
    "form feed": "def f():\n    pass\n\x0c\ndef g():\n    pass\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_spliced_module_is_the_whole_parse(name):
    assert_as_whole(CASES[name])


def test_texts_it_does_not_splice():
    for text in ["x = 1\ny = 2\n", "if x: y = 1\ndef f():\n    pass\n", "def f():\n    pass\n"]:
        with pytest.raises(CannotSplice):
            splice(text)


def test_pieces_are_reused_and_only_the_current_ones_kept():
    first = CASES["plain"] + "\n\ndef h():\n    return 3\n"
    cache: dict = {}
    module = assert_as_whole(first, cache)
    pieces = dict(cache)
    assert len(pieces) == 3  # the head (import, f), class A, def h
    # Lines added before the last statements: their pieces are the same objects.
    second = first.replace("    return x\n", "    y = 1\n\n    return x + y\n")
    again = assert_as_whole(second, cache)
    assert again.body[-1] is module.body[-1] and again.body[-2] is module.body[-2]
    assert set(cache) != set(pieces) and len(cache) == 3
    third = second.replace("return 3", "return 4")
    assert_as_whole(third, cache)
    assert len(cache) == 3


def test_the_projects_own_modules():
    """Every module of torchlint itself (real code of every shape), spliced
    and then spliced again after an edit in the middle with the pieces kept."""
    files = sorted((ROOT / "torchlint").rglob("*.py"))
    spliced = 0
    for path in files[::3]:
        text = path.read_text(encoding="utf-8")
        cache: dict = {}
        try:
            assert_as_whole(text, cache)
        except CannotSplice:
            continue
        lines = text.splitlines(True)
        middle = len(lines) // 2
        edited = "".join(lines[:middle] + ["\n"] + lines[middle:]) if lines[middle].strip() == "" else text
        assert_as_whole(edited, cache)
        spliced += 1
    assert spliced >= 20


# --- chunked_module: the CLI's parse of a large text in pieces (issue 36, item 9) ------------------------------


def _chunked(text: str, piece_chars: int) -> cst.Module:
    from torchlint.engine.splicing import chunked_module

    source = SourceFile(text)
    return chunked_module(text, source.lines, source.tree, piece_chars)


@pytest.mark.parametrize("module", ["torch._refs", "torch.distributed.distributed_c10d", "torch.nn.modules.module"])
def test_a_text_parsed_in_pieces_is_the_whole_parse(module):
    """Two of these held comments indented under the end of a def, which
    libcst gives to the def's footer: no piece may start with them."""
    import importlib.util

    text = Path(importlib.util.find_spec(module).origin).read_text(encoding="utf-8")
    chunked = _chunked(text, 2_000)
    assert chunked.code == text
    assert chunked.deep_equals(cst.parse_module(text))


def test_pieces_start_only_where_the_lines_before_belong_to_the_next_statement():
    block = "def f():\n    return 1\n    # indented: the def's footer\n\n# the next statement's\nx = 2\n"
    text = "import torch\n" + block * 40 + "y = 3\n"
    for piece_chars in (1, 50, 500):
        chunked = _chunked(text, piece_chars)
        assert chunked.code == text and chunked.deep_equals(cst.parse_module(text))


def test_a_text_of_simple_statements_only_is_parsed_in_pieces():
    text = "".join(f"y{i} = F.upsample(x)  # {i}\n" for i in range(300))
    chunked = _chunked(text, 200)
    assert chunked.code == text and chunked.deep_equals(cst.parse_module(text))


BIG_BODIES = {
    "one def, nothing after": "import torch\n\n\ndef g(a, b):\n    total = 0\n"
    + "    loss = F.mse_loss(a, b)\n    total = total + loss.data[0]\n" * 300,
    "nested blocks, comments and blank lines": "import torch\n\ndef g(a):\n" + "".join(
        f"    for i in x:\n        y{i} = 1\n\n    # c{i}\n    z = 2\n\n\n    if a:\n        pass\n"
        f"    else:\n        b = 3\n" for i in range(200)) + "# end\n    # indented end\n",
    "a class of methods": "class A:\n" + "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(300))
    + "x = 1\n",
    "crlf": "import torch\r\ndef g():\r\n" + "    a = 1\r\n" * 500 + "b = 2\r\n",
    "tabs, semicolons, trailing comments": "x = 1\ndef f():\n\tpass\ndef g():\n" + "\ta = 1; b = 2\n" * 400
    + "\t# t\n# u\n",
    "decorated, no final newline": "@dec\ndef g():\n" + "    a = [\n        1,\n    ]\n" * 300 + "    return a",
}


@pytest.mark.parametrize("name", sorted(BIG_BODIES))
@pytest.mark.parametrize("piece_chars", [40, 700, 5_000])
def test_a_big_def_or_class_body_is_parsed_in_parts(name, piece_chars, monkeypatch):
    """A def is one top-level statement, so cutting between those left a
    large one to libcst whole (a 381 KB def peaked at 391 MB against 123 MB
    in parts): its body is cut too, each part parsed under ``if 1:``."""
    text = BIG_BODIES[name]
    parses = []
    parse = cst.parse_module
    monkeypatch.setattr(cst, "parse_module", lambda code, *a, **k: parses.append(code) or parse(code, *a, **k))
    chunked = _chunked(text, piece_chars)
    monkeypatch.undo()
    assert chunked.code == text and chunked.deep_equals(cst.parse_module(text))
    assert max(map(len, parses)) < (len(text) / 2 if piece_chars < 5_000 else len(text)), [len(p) for p in parses]
