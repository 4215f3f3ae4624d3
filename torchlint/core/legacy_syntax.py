"""Old code that Python 3 cannot parse, read at the token level.

Two kinds matter to torch users migrating 2017-2019 code. Torch's own
keyword ``async=`` (``x.cuda(async=True)``, renamed ``non_blocking=`` in torch
0.4) became a syntax error when ``async`` turned into a keyword in Python 3.7:
``async_keyword_sites`` finds each such keyword argument so that the file can
be read as Python 3 with it renamed. Python 2 files (``print x``,
``except E, e``, backticks, ...) are not checked: ``python2_feature`` names the
Python 2 construct behind a syntax error, so the user is told in one line. What
such a module defines still matters to the Python 3 scripts importing it (a loss
function, a base model class): ``python3_reading`` rewrites its statements,
line for line, into a text the project model can read.
Kept in ``core`` because Python's own parse (``source.python_tree``) names it.
"""

from __future__ import annotations

import io
import keyword
import re
import tokenize
from dataclasses import dataclass
from typing import List, Optional, Tuple


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


# --- Python 2 modules read as Python 3, for what other modules ask of them ------------

# A statement Python 3 refuses that the reading below rewrites: ``print x``,
# ``print >>f, x``, ``exec code``, ``except E, e:``, ``raise E, message``.
_PYTHON2_STATEMENT = re.compile(
    r"^[ \t]*(?:(?:print|exec)\b(?![ \t]*[(=.,)\]:]|[ \t]*$)|print[ \t]*$|except\b[^:#\n]*,|raise[ \t]+[\w.]+[ \t]*,)",
    re.MULTILINE)
_LINE_STARTS = frozenset({tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.NL, tokenize.ENCODING})


def may_be_python2(source: str) -> bool:
    """Does ``source`` hold a line that looks like a Python 2 statement the reading rewrites?"""
    return _PYTHON2_STATEMENT.search(source) is not None


def python3_reading(source: str) -> Optional[str]:
    """``source``, a Python 2 module, with its ``print`` / ``exec`` statements made calls,
    ``except E, e:`` made ``except E as e:`` and ``raise E, message`` made ``raise
    E(message)``: a text Python 3 can parse, line for line, for the project model to
    read what the module defines (a loss function the scripts beside it call). Its
    code is never checked or fixed. None when the text does not tokenize."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type != tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return None
    edits: List[Tuple[Tuple[int, int], Tuple[int, int], str]] = []  # (start, end, new text)
    for index, token in enumerate(tokens):
        if token.type != tokenize.NAME or (index and tokens[index - 1].type not in _LINE_STARTS
                                           and tokens[index - 1].string not in (";", ":")):
            continue
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if following is None:
            continue
        end = _statement_end(tokens, index)
        if token.string in ("print", "exec") and following.string not in ("(", "=", ".", ",", ")", "]", ":"):
            if following.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or following.string == ";":
                edits.append((token.end, token.end, "()"))
                continue
            start = following.end if following.string == ">>" else token.end  # ``print >>f, x``: print(f, x)
            edits.append((token.end, start, "("))
            edits.append((end, end, ")"))
        elif token.string == "except":
            comma = _top_level(tokens, index + 1, ",", stop=":")
            if comma is not None:
                edits.append((comma.start, comma.end, " as"))
        elif token.string == "raise":
            comma = _top_level(tokens, index + 1, ",")
            if comma is not None:
                edits.append((comma.start, comma.end, "("))
                edits.append((end, end, ")"))
    return _applied(source, edits) if edits else source


def _statement_end(tokens: List[tokenize.TokenInfo], index: int) -> Tuple[int, int]:
    """Where the simple statement starting at ``index`` ends: before its NEWLINE or ``;``."""
    depth = 0
    for token in tokens[index + 1:]:
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        elif depth <= 0 and (token.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or token.string == ";"):
            return token.start
    return tokens[-1].start


def _top_level(tokens: List[tokenize.TokenInfo], index: int, wanted: str, stop: str = "") -> Optional[tokenize.TokenInfo]:
    """The first ``wanted`` operator outside brackets from ``index`` to the statement's end (or ``stop``)."""
    depth = 0
    for token in tokens[index:]:
        if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or (depth == 0 and token.string in (";", stop)):
            return None
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        elif depth == 0 and token.type == tokenize.OP and token.string == wanted:
            return token
    return None


def _applied(source: str, edits: List[Tuple[Tuple[int, int], Tuple[int, int], str]]) -> str:
    """``source`` with each (start, end, text) edit made; positions are (1-based line, column)."""
    lines = _lines(source)
    for (line, column), (end_line, end_column), text in sorted(edits, reverse=True):
        if end_line != line:
            continue  # an edit spanning lines is never made (print >> at a line's end)
        current = lines[line - 1]
        lines[line - 1] = current[:column] + text + current[end_column:]
    return "".join(lines)
