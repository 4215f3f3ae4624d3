"""``SourceFile``: one checked text and what is derived from it, computed once."""

from __future__ import annotations

import ast

import pytest

from torchlint.core import source as source_module
from torchlint.core.diagnostic import ParseError, Unsupported
from torchlint.core.source import SourceFile, decode
from torchlint.engine.linter import Engine
from torchlint.rules import rule_by_code

TEXTS = ["", "x", "a\n", "a\nb", "a\r\nb\rc\n", "\n\n", "ab\ncd\n\nef", "x = 1\x0c\ny = '\u2028'\n"]


@pytest.mark.parametrize("text", TEXTS)
def test_lines_break_where_python_does(text):
    lines = SourceFile(text).lines
    assert "".join(lines) == text
    assert all(line.endswith(("\n", "\r")) for line in lines[:-1])
    # form feeds and Unicode separators do not end lines (str.splitlines would break there)
    assert len(lines) == text.count("\n") + text.count("\r") - text.count("\r\n") + (not text.endswith(("\n", "\r")) and text != "")


@pytest.mark.parametrize("text", TEXTS)
def test_offsets_and_positions_are_inverse(text):
    source = SourceFile(text)
    assert source.line_starts[0] == 0 and source.line_starts[-1] == len(text)
    for offset in range(len(text) + 1):
        if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
            continue  # never a position: an edit does not cut a line break in two
        line, column = source.position(offset)
        assert source.offset(line, column) == offset
        before = text[:offset]
        assert line == 1 + before.count("\n") + before.count("\r") - before.count("\r\n")


def test_each_derived_value_is_computed_once(monkeypatch):
    calls = []
    real = source_module._checked_tree
    monkeypatch.setattr(source_module, "_checked_tree", lambda text, *rest: calls.append(text) or real(text, *rest))
    source = SourceFile("import torch\nx = 1\n")
    assert source.tree is source.tree
    assert source.lines is source.lines
    assert source.tokens is source.tokens
    assert source.module is source.module
    assert calls == [source.text]


def test_a_tree_handed_over_is_used_as_is():
    tree = ast.parse("x = 1\n")
    source = SourceFile("x = 1\n", tree=tree)
    assert source.parsed and source.tree is tree


def test_invalid_python_raises_parse_error_with_cpythons_position():
    with pytest.raises(ParseError) as caught:
        SourceFile("x = (\n").tree
    assert caught.value.line == 1


def test_text_libcst_cannot_parse_is_unsupported():
    with pytest.raises(Unsupported):
        SourceFile("(x): int = 1\n").module


def test_tokens_of_a_text_that_does_not_tokenize_are_empty():
    assert SourceFile('s = """never closed\n').tokens == []


def test_decode_keeps_the_encoding_for_writing_back():
    assert decode("x = 'é'\n".encode("utf-8-sig")).encoding == "utf-8-sig"
    latin = decode(b"# -*- coding: latin-1 -*-\nx = '\xe9'\n")
    assert latin.encoding == "iso-8859-1" and latin.text.endswith("x = 'é'\n")


def test_one_check_parses_python_and_libcst_once(monkeypatch):
    """The engine asks the object, which parses each text once: the check of a
    file with findings makes one Python tree and one libcst module."""
    counts = {"python": 0, "libcst": 0}
    python_tree, libcst_tree = source_module._checked_tree, source_module.libcst_tree

    def count(kind, real):
        def wrapper(text, *rest):
            counts[kind] += 1
            return real(text, *rest)
        return wrapper

    monkeypatch.setattr(source_module, "_checked_tree", count("python", python_tree))
    monkeypatch.setattr(source_module, "libcst_tree", count("libcst", libcst_tree))
    source = SourceFile("import torch.nn.functional as F\ny = F.sigmoid(x)  # noqa: TL999\n")
    diagnostics = Engine([rule_by_code("TL104")]).check(source, whole=True).diagnostics
    assert [d.code for d in diagnostics] == ["TL104"]
    assert counts == {"python": 1, "libcst": 1}


def test_a_generator_of_yield_statements_is_not_compiled(monkeypatch):
    """Compiling costs about half a parse: a file whose every ``yield`` starts a
    statement inside a function is not compiled (the compiler would accept it);
    one with a ``yield`` the compiler may refuse still is."""
    import torchlint.core.source as source_module

    compiled = []
    monkeypatch.setattr(source_module, "compile", lambda *args, **kwargs: compiled.append(args), raising=False)
    SourceFile("def batches(xs):\n    for x in xs:\n        yield x\n    yield from xs\n").tree
    assert compiled == []
    SourceFile("def f(xs):\n    return [(yield x) for x in xs]\n").tree
    assert len(compiled) == 1


def test_files_whose_async_and_yield_are_ordinary_are_not_compiled(monkeypatch):
    """The census says what the compiler would look at: words in names and
    text (``async_op``, "yields") and yields that are statements' values in
    functions send nothing to ``compile``; a yield elsewhere does."""
    import torchlint.core.source as source_module

    compiled = []
    monkeypatch.setattr(source_module, "compile", lambda *args, **kwargs: compiled.append(args), raising=False)
    SourceFile('"""Yields batches, asynchronously."""\nwork = dist.all_reduce(t, async_op=True)\n').tree
    SourceFile("async def f(x):\n    return await x\n\n\ndef g(xs):\n    got = yield xs\n    yield got\n").tree
    assert len(compiled) == 1  # the ``await``
    SourceFile("def f(xs):\n    print((yield xs))\n").tree
    assert len(compiled) == 2


def test_the_outline_reuses_the_walk_the_parse_made(monkeypatch):
    """One traversal per file: the census taken for the compiler's checks is
    the outline's index of nodes."""
    import torchlint.analysis.outline as outline_module

    walks = []
    real = outline_module.take_census
    monkeypatch.setattr(outline_module, "take_census", lambda tree: walks.append(tree) or real(tree))
    source = SourceFile("import torch.nn.functional as F\ny = F.sigmoid(x)\n")
    diagnostics = Engine([rule_by_code("TL104")]).check(source).diagnostics
    assert [d.code for d in diagnostics] == ["TL104"]
    assert not [tree for tree in walks if isinstance(tree, ast.Module)]  # narrowing outlines statements alone
