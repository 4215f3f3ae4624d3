"""Old code that Python 3 cannot parse, read at the token level.

Two kinds matter to torch users migrating 2017-2019 code. Torch's own
keyword ``async=`` (``x.cuda(async=True)``, renamed ``non_blocking=`` in torch
0.4) became a syntax error when ``async`` turned into a keyword in Python 3.7:
``async_keyword_sites`` finds each such keyword argument so that the file can
be read as Python 3 with it renamed. Python 2 files (``print x``,
``except E, e``, backticks, ...) cannot be helped: ``python2_feature`` names the
Python 2 construct behind a syntax error, so the user is told in one line.
Kept in ``core`` because Python's own parse (``source.python_tree``) names it.
"""

from __future__ import annotations

import io
import keyword
import re
import tokenize
from dataclasses import dataclass
from typing import List, Optional


# The torch methods whose ``async=`` torch 0.4 renamed ``non_blocking=``
# (Tensor.cuda, Tensor.type, Tensor.copy_; Tensor.to accepted it in 0.4).
TORCH_ASYNC_METHODS = frozenset({"cuda", "to", "type", "copy_"})
NEW_KEYWORD = "non_blocking"


@dataclass(frozen=True)
class AsyncKeyword:
    """``async=`` passed as a keyword argument, at a 1-based line and 0-based column."""

    line: int
    column: int
    method: Optional[str]  # ``cuda`` in ``x.cuda(async=True)``; None if the callee is not ``<x>.<name>``

    @property
    def torch_method(self) -> bool:
        return self.method in TORCH_ASYNC_METHODS


def async_keyword_sites(source: str) -> List[AsyncKeyword]:
    """Every ``async=`` keyword argument of a call in ``source``; empty when
    the text has none or cannot be tokenized."""
    if "async" not in source:
        return []
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
                  if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT,
                                    tokenize.DEDENT)]
    except (tokenize.TokenError, SyntaxError):
        return []
    sites: List[AsyncKeyword] = []
    # For each open bracket: the called method's name, "" for another call, None when not a call.
    callees: List[Optional[str]] = []
    for index, token in enumerate(tokens):
        if token.type != tokenize.OP:
            if (token.type == tokenize.NAME and token.string == "async" and callees and callees[-1] is not None
                    and tokens[index - 1].string in ("(", ",")
                    and index + 1 < len(tokens) and tokens[index + 1].string == "="):
                sites.append(AsyncKeyword(token.start[0], token.start[1], callees[-1] or None))
            continue
        if token.string in ("(", "[", "{"):
            callees.append(_callee(tokens, index) if token.string == "(" else None)
        elif token.string in (")", "]", "}") and callees:
            callees.pop()
    return sites


def _callee(tokens: List[tokenize.TokenInfo], index: int) -> Optional[str]:
    """For the ``(`` at ``index``: the method name of a call ``<x>.<name>(``,
    "" for another call, None for a definition or a parenthesised expression."""
    before = tokens[index - 1] if index else None
    if before is None:
        return None
    if before.type == tokenize.NAME and not _is_keyword(before.string):
        two_before = tokens[index - 2].string if index >= 2 else ""
        if two_before in ("def", "class"):
            return None
        return before.string if two_before == "." else ""
    return "" if before.string in (")", "]") else None


def _is_keyword(word: str) -> bool:
    return keyword.iskeyword(word) and word not in ("True", "False", "None")


def rename_async_keywords(source: str, sites: List[AsyncKeyword]) -> str:
    """``source`` with ``async`` renamed ``non_blocking`` at each of ``sites``."""
    lines = _lines(source)
    for site in sorted(sites, key=lambda s: (s.line, -s.column)):
        text = lines[site.line - 1]
        lines[site.line - 1] = text[:site.column] + NEW_KEYWORD + text[site.column + len("async"):]
    return "".join(lines)


def original_column(sites: List[AsyncKeyword], line: int, column: int) -> int:
    """A column of the renamed text, as a column of the original one."""
    growth = len(NEW_KEYWORD) - len("async")
    shift = 0
    for site in sites:
        if site.line == line and site.column + shift < column:
            shift += growth
    return max(column - shift, 0)


# --- Python 2 -------------------------------------------------------------------

_MESSAGES = (
    ("Missing parentheses in call to 'print'", "a `print` statement"),
    ("Missing parentheses in call to 'exec'", "an `exec` statement"),
    ("multiple exception types must be parenthesized", "`except E, e:`"),
    ("leading zeros in decimal integer literals", "an octal literal like `0777`"),
)
_LINES = (
    (re.compile(r"`"), "a backtick repr"),
    (re.compile(r"<>"), "the `<>` operator"),
    (re.compile(r"\b\d+[lL]\b"), "a long literal like `10L`"),
    (re.compile(r"^\s*raise\s+[\w.]+\s*,"), "`raise E, message`"),
    (re.compile(r"\b[uU][rR]['\"]"), "a `ur''` string"),
    (re.compile(r"^\s*print\s*(>>|$)"), "a `print` statement"),
)


def _lines(source: str) -> List[str]:
    return io.StringIO(source, newline="").readlines()  # as Python counts lines


def python2_feature(message: str, source: str, line: int) -> Optional[str]:
    """The Python 2 construct behind the syntax error ``message`` at ``line``
    of ``source`` (e.g. "a `print` statement"), None if nothing says Python 2."""
    for start, feature in _MESSAGES:
        if message.startswith(start):
            return feature
    lines = _lines(source)
    text = lines[line - 1] if 1 <= line <= len(lines) else ""
    code = text.split("#", 1)[0]
    for pattern, feature in _LINES:
        if pattern.search(code):
            return feature
    return None
