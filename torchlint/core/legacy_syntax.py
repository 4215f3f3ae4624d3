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

# The roles of ``async`` where Python 3.7 rejects it.
ARGUMENT = "argument"  # ``x.cuda(async=True)``
PARAMETER = "parameter"  # ``def cuda(self, device=None, async=False)``
NAME = "name"  # ``async = True``, ``if async:``, ``x.cuda(non_blocking=async)``
ATTRIBUTE = "attribute"  # ``args.async``

# ``async`` before these is Python's own keyword (``async def``, ``async for``, ``async with``).
_ASYNC_STATEMENTS = frozenset({"def", "for", "with"})


@dataclass(frozen=True)
class AsyncKeyword:
    """``async`` used as an identifier, at a 1-based line and 0-based column."""

    line: int
    column: int
    method: Optional[str]  # ARGUMENT: ``cuda`` in ``x.cuda(async=True)``, ``f`` in ``f(async=1)``; else None
    role: str = ARGUMENT
    function: Optional[str] = None  # PARAMETER: the function whose parameter it is

    @property
    def torch_method(self) -> bool:
        return self.role == ARGUMENT and self.method in TORCH_ASYNC_METHODS


def async_keyword_sites(source: str) -> List[AsyncKeyword]:
    """Every ``async`` of ``source`` used as an identifier (a keyword argument,
    a parameter, a variable, an attribute); empty when the text has none or
    cannot be tokenized. ``async def`` / ``for`` / ``with`` are left alone."""
    if "async" not in source:
        return []
    return _identifier_sites(source, "async") or []


def _identifier_sites(source: str, word: str) -> Optional[List[AsyncKeyword]]:
    """Each use of the name ``word`` in ``source``, with its role; None when
    the text cannot be tokenized."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
                  if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT,
                                    tokenize.DEDENT)]
    except (tokenize.TokenError, SyntaxError):
        return None
    sites: List[AsyncKeyword] = []
    brackets: List[_Bracket] = []  # what each open bracket opens
    for index, token in enumerate(tokens):
        if token.type == tokenize.NAME and token.string == word:
            site = _site(tokens, index, brackets[-1] if brackets else None)
            if site is not None:
                sites.append(site)
        elif token.type == tokenize.OP and token.string in ("(", "[", "{"):
            brackets.append(_bracket(tokens, index))
        elif token.type == tokenize.OP and token.string in (")", "]", "}") and brackets:
            brackets.pop()
    return sites


@dataclass(frozen=True)
class _Bracket:
    call: bool = False  # a call's argument list
    method: Optional[str] = None  # the called name: ``cuda`` in ``x.cuda(``, ``f`` in ``f(``
    function: Optional[str] = None  # a ``def``'s parameter list: the function's name


def _site(tokens: List[tokenize.TokenInfo], index: int, bracket: Optional[_Bracket]) -> Optional[AsyncKeyword]:
    before = tokens[index - 1].string if index else ""
    after = tokens[index + 1].string if index + 1 < len(tokens) else ""
    if after in _ASYNC_STATEMENTS and before != ".":
        return None  # Python's own ``async def`` / ``async for`` / ``async with``
    line, column = tokens[index].start
    if before == ".":
        return AsyncKeyword(line, column, None, ATTRIBUTE)
    if bracket is not None and bracket.function is not None and before in ("(", ",", "*", "**"):
        return AsyncKeyword(line, column, None, PARAMETER, bracket.function)
    if bracket is not None and bracket.call and after == "=" and before in ("(", ","):
        return AsyncKeyword(line, column, bracket.method or None, ARGUMENT)
    if before == "lambda" or (before in (",", "*", "**") and _in_lambda_parameters(tokens, index)):
        return AsyncKeyword(line, column, None, PARAMETER)
    return AsyncKeyword(line, column, None, NAME)


def _in_lambda_parameters(tokens: List[tokenize.TokenInfo], index: int) -> bool:
    """Is the name at ``index`` among a ``lambda``'s parameters (before its colon)?"""
    for back in range(index - 1, -1, -1):
        token = tokens[back]
        if token.string == "lambda":
            return True
        if token.type == tokenize.OP and token.string in (":", "(", ")", "[", "]", "{", "}", ";"):
            return False
    return False


def _bracket(tokens: List[tokenize.TokenInfo], index: int) -> _Bracket:
    """What the bracket at ``index`` opens: a call (with the called name), a
    ``def``'s parameter list, or anything else."""
    if tokens[index].string != "(" or not index:
        return _Bracket()
    before = tokens[index - 1]
    if before.type == tokenize.NAME and not _is_keyword(before.string):
        two_before = tokens[index - 2].string if index >= 2 else ""
        if two_before == "def":
            return _Bracket(function=before.string)
        if two_before == "class":
            return _Bracket()
        return _Bracket(call=True, method=before.string)
    return _Bracket(call=True) if before.string in (")", "]") else _Bracket()


def _is_keyword(word: str) -> bool:
    return keyword.iskeyword(word) and word not in ("True", "False", "None")


def renamable_names(source: str, sites: List[AsyncKeyword]) -> bool:
    """Can every ``async`` parameter and variable of ``source`` become
    ``non_blocking`` exactly: does the file use ``non_blocking`` only as a
    keyword argument or an attribute (so no name is captured or shadowed)?"""
    if not any(site.role in (PARAMETER, NAME) for site in sites):
        return True
    if NEW_KEYWORD not in source:
        return True
    taken = _identifier_sites(source, NEW_KEYWORD)
    return taken is not None and all(site.role in (ARGUMENT, ATTRIBUTE) for site in taken)


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
