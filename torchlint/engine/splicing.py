"""libcst's tree of a text assembled from its top-level statements parsed one by one, re-using earlier parses.

The language server checks a changed file by analysing one def or class
with every other one cut to a stub (``narrowing.focus``). Consecutive
narrowed texts then differ in one or two top-level statements, but libcst
would parse all of them again: on a 2,000-line file with 150 stubs, that
parse was most of the time of answering an edit. libcst's nodes hold no
positions (they are computed from the code), so a statement parsed once
can be placed in any later module whose text holds it, however many lines
before it were added or removed.

The text is cut into *pieces* at the ends of top-level statements (Python's
tree says where): a piece is a statement with the blank and comment lines
before it. Each piece is parsed alone, or taken from ``cache`` when an
earlier text held the same piece, and the module is assembled from them.
It is libcst's module of the whole text but for which statement owns a
comment line indented under the end of a block (the next one, instead of
the block's footer); the code it generates is the text's, character for
character (``tests/test_splicing.py`` compares both with whole parses).

libcst takes two settings from the text that change its nodes: the first
line ending (``default_newline``) and the first indentation
(``default_indent``; a block indented by it has ``indent=None``). Both are
in the *head*: the pieces up to and including the first compound statement
with an indented body, parsed together as the start of the text. Every
later piece is parsed after a prelude that sets the same two values, and
the prelude's statements are dropped.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Tuple

from torchlint.analysis.cutting import first_line, last_line

# A parsed piece: its statements, and the module's footer and trailing-newline flag (used for the last piece).
Piece = Tuple[Tuple[object, ...], Tuple[object, ...], bool]
PieceCache = Dict[Tuple[str, str, str], Piece]

_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Import, ast.ImportFrom, ast.Pass, ast.Return,
           ast.Delete, ast.Raise, ast.Assert, ast.Global, ast.Nonlocal, ast.Break, ast.Continue)
_HEAD = "head"


class CannotSplice(Exception):
    """The pieces do not assemble into libcst's module of the text: parse it whole."""


def spliced_module(text: str, lines: Sequence[str], tree: ast.Module, cache: PieceCache,
                   piece_chars: int = 0) -> "object":
    """libcst's module of ``text`` (whose ``lines`` and top-level statements
    are those of ``tree``), with every piece not in ``cache`` parsed and
    ``cache`` left holding exactly the pieces of this text.

    ``piece_chars``: a piece is a run of statements of about that many
    characters (at least one statement), not one statement (``chunked_module``).

    Raises ``CannotSplice`` when it cannot assemble it (no compound
    statement, a piece that does not parse alone as its statements), and
    libcst's errors as ``parse_module`` does."""
    import libcst as cst

    spans = _statement_spans(tree, len(lines))
    head_end = _head_end(tree, spans)
    only_simple = head_end is None and piece_chars and all(isinstance(s, _SIMPLE) for s in tree.body)
    if only_simple:
        head_end = 0  # no block anywhere: libcst's default indentation is the module's
    block_at = head_end  # the first indented block: it sets libcst's default indentation
    if piece_chars and head_end is not None:
        # The head ends where a piece may start: not before a comment indented under a block.
        while head_end + 1 < len(spans) and not _owned_by_next(lines, spans, head_end + 1):
            head_end += 1
    if head_end is None or head_end == len(spans) - 1:
        raise CannotSplice("nothing after the head to re-use")
    used: PieceCache = {}

    def piece(key: Tuple[str, str, str], parse) -> Piece:
        found = cache.get(key)
        if found is None:
            found = parse()
        used[key] = found
        return found

    head_text = "".join(lines[:spans[head_end][1]])
    head_key = (_HEAD, "", head_text)

    def parse_head() -> Piece:
        module = cst.parse_module(head_text)
        block = getattr(module.body[block_at], "body", None) if len(module.body) > block_at else None
        if len(module.body) != head_end + 1 or not (only_simple or isinstance(block, cst.IndentedBlock)):
            raise CannotSplice("the head does not end with an indented block")
        settings = (module.default_newline, module.default_indent, module.header)
        return tuple(module.body), settings, module.has_trailing_newline  # type: ignore[return-value]

    head_statements, (newline, indent, header), _ = piece(head_key, parse_head)
    prelude = f"if 1:{newline}{indent}pass{newline}pass{newline}"
    statements: List[object] = list(head_statements)
    footer: Tuple[object, ...] = ()
    trailing_newline = True
    for first, last in _pieces(lines, spans, head_end + 1, piece_chars):
        start = spans[first - 1][1]
        end = spans[last][1] if last + 1 < len(spans) else len(lines)
        chunk = "".join(lines[start:end])

        def parse_piece(chunk: str = chunk, count: int = last - first + 1) -> Piece:
            module = cst.parse_module(prelude + chunk)
            if (len(module.body) != 2 + count or module.default_newline != newline
                    or module.default_indent != indent):
                raise CannotSplice("a piece is not its statements")
            return tuple(module.body[2:]), tuple(module.footer), module.has_trailing_newline

        own, footer, trailing_newline = piece((newline, indent, chunk), parse_piece)
        statements.extend(own)
    cache.clear()
    cache.update(used)
    return cst.Module(body=statements, header=header, footer=footer, default_indent=indent,
                      default_newline=newline, has_trailing_newline=trailing_newline)


def chunked_module(text: str, lines: Sequence[str], tree: ast.Module, piece_chars: int) -> "object":
    """libcst's module of a large ``text``, parsed about ``piece_chars``
    characters of top-level statements at a time.

    libcst's native parser holds several times the tree it returns while it
    works (about 1,000 bytes per byte of source at its peak against about 100
    for the tree the file keeps), so a parse of the whole of a 1 MB file
    peaked at 0.5 GB. In pieces the peak is the tree plus one piece's
    working memory: bounded by the file, not by how much of it is code."""
    return spliced_module(text, lines, tree, {}, piece_chars)


def _pieces(lines: Sequence[str], spans: Sequence[Tuple[int, int]], start: int,
            piece_chars: int) -> List[Tuple[int, int]]:
    """The statements (first and last index in ``spans``) of each piece after the head:
    one statement each, or runs of about ``piece_chars`` characters."""
    if not piece_chars:
        return [(number, number) for number in range(start, len(spans))]
    pieces: List[Tuple[int, int]] = []
    first, size = start, 0
    for number in range(start, len(spans)):
        end = spans[number][1] if number + 1 < len(spans) else len(lines)
        size += sum(len(line) for line in lines[spans[number - 1][1]:end])
        if number + 1 == len(spans) or (size >= piece_chars and _owned_by_next(lines, spans, number + 1)):
            pieces.append((first, number))
            first, size = number + 1, 0
    return pieces


def _owned_by_next(lines: Sequence[str], spans: Sequence[Tuple[int, int]], number: int) -> bool:
    """Do the lines between statement ``number`` and the one before belong to
    statement ``number`` in libcst's module of the whole text, so that a piece
    may start with them? Not an indented comment: libcst gives that to the
    footer of the block above it (a line of blanks is left alone too)."""
    gap = lines[spans[number - 1][1]:spans[number][0] - 1]
    return not any(line[:1] in (" ", "\t", "\x0c") for line in gap)


def _statement_spans(tree: ast.Module, line_count: int) -> List[Tuple[int, int]]:
    """(first line, last line) of each of libcst's top-level statements:
    Python's, with statements sharing a line (``a = 1; b = 2``) joined."""
    spans: List[Tuple[int, int]] = []
    for statement in tree.body:
        first, last = first_line(statement), last_line(statement)
        if spans and first <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(last, spans[-1][1]))
        else:
            spans.append((first, last))
    if not spans or spans[-1][1] > line_count:
        raise CannotSplice("the tree is not of these lines")
    return spans


def _head_end(tree: ast.Module, spans: List[Tuple[int, int]]) -> Optional[int]:
    """The index of the span of the first compound statement whose body starts on a line of its own."""
    by_first = {first: index for index, (first, _) in enumerate(spans)}
    for statement in tree.body:
        if isinstance(statement, _SIMPLE):
            continue
        body = getattr(statement, "body", None)
        if isinstance(body, list) and body and body[0].lineno > statement.lineno:
            return by_first.get(first_line(statement))
        return None  # ``if x: y`` first: the indentation comes later, keep it simple
    return None
