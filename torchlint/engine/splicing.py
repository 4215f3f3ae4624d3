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
    used: PieceCache = {}

    def piece(key: Tuple[str, str, str], parse) -> Piece:
        found = cache.get(key)
        if found is None:
            found = parse()
        used[key] = found
        return found

    big_bodies = _big_bodies(tree, spans, lines, piece_chars) if piece_chars else {}
    if head_end is None or (head_end == len(spans) - 1 and head_end not in big_bodies):
        raise CannotSplice("nothing after the head to re-use")
    head_is_all = head_end == len(spans) - 1  # one big def or class: its body is parsed in parts
    head_text = "".join(lines[:len(lines) if head_is_all else spans[head_end][1]])
    head_key = (_HEAD, "", head_text)
    settings_of_head: List[str] = []  # the head's newline and indentation, for the parts of its last body

    def parse_head() -> Piece:
        parts = _body_parts(big_bodies.get(head_end), 0, len(lines) if head_is_all else spans[head_end][1])
        module = cst.parse_module("".join(lines[:parts[0][1]]))
        block = getattr(module.body[block_at], "body", None) if len(module.body) > block_at else None
        if len(module.body) != head_end + 1 or not (only_simple or isinstance(block, cst.IndentedBlock)):
            raise CannotSplice("the head does not end with an indented block")
        settings_of_head[:] = [module.default_newline, module.default_indent]
        body, (footer, trailing_newline) = _grown(module.body, parts, lines, settings_of_head)
        if len(parts) == 1:
            footer, trailing_newline = tuple(module.footer), module.has_trailing_newline
        settings = (module.default_newline, module.default_indent, module.header, footer)
        return body, settings, trailing_newline  # type: ignore[return-value]

    head_statements, (newline, indent, header, footer), trailing_newline = piece(head_key, parse_head)
    prelude = f"if 1:{newline}{indent}pass{newline}pass{newline}"
    statements: List[object] = list(head_statements)
    for first, last in _pieces(lines, spans, head_end + 1, piece_chars):
        start = spans[first - 1][1]
        end = spans[last][1] if last + 1 < len(spans) else len(lines)
        chunk = "".join(lines[start:end])

        def parse_piece(start: int = start, end: int = end, count: int = last - first + 1,
                        parts: List[Tuple[int, int]] = _body_parts(big_bodies.get(last), start, end)) -> Piece:
            module = cst.parse_module(prelude + "".join(lines[parts[0][0]:parts[0][1]]))
            if (len(module.body) != 2 + count or module.default_newline != newline
                    or module.default_indent != indent):
                raise CannotSplice("a piece is not its statements")
            body, footer = _grown(module.body[2:], parts, lines, [newline, indent])
            if len(parts) == 1:
                return body, tuple(module.footer), module.has_trailing_newline
            return body, footer[0], footer[1]

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


# Top-level defs and classes whose body may be parsed in parts (a def of
# 100 KB cost libcst 2.3 times a def of 50 KB: its parse grows faster than the text).
_WITH_BODY = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _big_bodies(tree: ast.Module, spans: Sequence[Tuple[int, int]], lines: Sequence[str],
                piece_chars: int) -> Dict[int, List[int]]:
    """For each top-level def or class over ``piece_chars`` characters, by its
    index in ``spans``: the lines (0-based) where its later body parts start.
    A part starts at a statement of the body with nothing but empty lines
    before it (a comment may belong to the footer of the block above)."""
    starts = {first_line(statement): statement for statement in tree.body}
    found: Dict[int, List[int]] = {}
    for index, (first, last) in enumerate(spans):
        statement = starts.get(first)
        if not isinstance(statement, _WITH_BODY) or last_line(statement) != last:
            continue
        if sum(len(line) for line in lines[first - 1:last]) <= piece_chars:
            continue
        body_spans = _statement_spans(statement.body, last)  # type: ignore[arg-type]
        if body_spans[0][0] <= statement.lineno:
            continue  # ``def f(): return 1``
        cuts, size = [], 0
        for (_, previous_end), (start, end) in zip(body_spans, body_spans[1:]):
            size += sum(len(line) for line in lines[previous_end:end])
            gap = lines[previous_end:start - 1]
            if size >= piece_chars and all(line in ("\n", "\r\n", "\r") for line in gap):
                cuts.append(previous_end)
                size = 0
        if cuts:
            found[index] = cuts
    return found


def _body_parts(cuts: Optional[List[int]], start: int, end: int) -> List[Tuple[int, int]]:
    """The lines [from, to) of a piece's first part (all of it, but for a
    big body's later parts), then of each later part of its last statement's body."""
    bounds = [start, *(cuts or ()), end]
    return list(zip(bounds, bounds[1:]))


def _grown(statements: Sequence[object], parts: List[Tuple[int, int]], lines: Sequence[str],
           settings: List[str]) -> Tuple[Tuple[object, ...], Tuple[Tuple[object, ...], bool]]:
    """``statements`` with the body of the last grown by the statements of
    ``parts[1:]``, each parsed alone under ``if 1:``; and the module footer and
    trailing-newline flag of the last part's parse."""
    import libcst as cst

    if len(parts) == 1:
        return tuple(statements), ((), True)
    newline, indent = settings
    prelude = f"if 1:{newline}{indent}pass{newline}pass{newline}if 1:{newline}"
    grown = statements[-1]
    block = getattr(grown, "body", None)
    if not isinstance(block, cst.IndentedBlock) or block.footer:
        raise CannotSplice("the first part does not end with its block's statements")
    body: List[object] = list(block.body)
    footer: Tuple[Tuple[object, ...], bool] = ((), True)
    for number, (start, end) in enumerate(parts[1:], 1):
        module = cst.parse_module(prelude + "".join(lines[start:end]))
        wrapper = module.body[-1] if len(module.body) == 3 else None
        if (not isinstance(wrapper, cst.If) or wrapper.orelse is not None or module.default_newline != newline
                or module.default_indent != indent or not isinstance(wrapper.body, cst.IndentedBlock)):
            raise CannotSplice("a part of a body is not its statements")
        body.extend(wrapper.body.body)
        if number < len(parts) - 1 and (wrapper.body.footer or module.footer):
            raise CannotSplice("a part of a body ends with lines of its own")
        footer = (tuple(module.footer), module.has_trailing_newline)
        block = block.with_changes(footer=wrapper.body.footer)
    return (*statements[:-1], grown.with_changes(body=block.with_changes(body=body))), footer


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


def _statement_spans(tree: "ast.Module | List[ast.stmt]", line_count: int) -> List[Tuple[int, int]]:
    """(first line, last line) of each of libcst's top-level statements (or
    of a body's): Python's, with statements sharing a line (``a = 1; b = 2``) joined."""
    spans: List[Tuple[int, int]] = []
    for statement in (tree.body if isinstance(tree, ast.Module) else tree):
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
