"""One checked text and everything derived from it (``SourceFile``).

A ``SourceFile`` is made once per text torchlint checks (a file read from
disk, stdin, flake8's lines, a notebook's code, each round of the fix loop)
and passed around instead of the bare ``str``. What several modules need is
computed on first use and kept: physical lines and line offsets, Python's
tree, tokens, libcst's module. Higher layers keep what they derive from it
(the ``# noqa`` index) in its ``memo``.

Bytes are decoded with the encoding Python itself would use (PEP 263 cookie
or UTF-8 BOM); line endings are left as they are (the parsers keep them).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from bisect import bisect_right
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Optional,
    Tuple,
    TypeVar,
    Union,
)

from torchlint.core.diagnostic import ParseError, Unsupported
from torchlint.core.legacy_syntax import python2_feature

if TYPE_CHECKING:  # pragma: no cover
    import libcst as cst

T = TypeVar("T")


class SourceError(Exception):
    """A file that cannot be read or decoded; the message is for the user."""


class SourceFile:
    """A text to check, with what is derived from it computed once, lazily.

    ``encoding`` is the codec the text was decoded with ("utf-8-sig" when
    the file starts with a BOM): fixed text is written back with it.
    ``tree``, when given, is Python's tree of the text made by the caller
    (flake8 parses every file anyway).
    """

    __slots__ = ("text", "encoding", "_memo")

    def __init__(self, text: str, encoding: str = "utf-8", tree: Optional[ast.Module] = None) -> None:
        self.text = text
        self.encoding = encoding
        self._memo: Dict[str, Any] = {} if tree is None else {"tree": tree}

    @classmethod
    def of(cls, source: Union[str, "SourceFile"]) -> "SourceFile":
        return source if isinstance(source, SourceFile) else cls(source)

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()``, once per text: for what other modules derive from it."""
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = compute()
            return value

    @property
    def lines(self) -> List[str]:
        """Lines as Python counts them: broken at \\n, \\r\\n and \\r only, endings kept.

        ``str.splitlines`` also breaks at form feeds and Unicode separators,
        which would shift every line number after one.
        """
        return self.memo("lines", lambda: io.StringIO(self.text, newline="").readlines())

    @property
    def line_starts(self) -> List[int]:
        """The offset of each line's first character, then the text's length."""

        def compute() -> List[int]:
            starts = [0]
            for line in self.lines:
                starts.append(starts[-1] + len(line))
            return starts

        return self.memo("line_starts", compute)

    def offset(self, line: int, column: int) -> int:
        """The character offset of 1-based ``line`` and 0-based ``column``."""
        return self.line_starts[line - 1] + column

    def position(self, offset: int) -> Tuple[int, int]:
        """1-based line and 0-based column of character ``offset`` (the text's
        length is the position just after its last character)."""
        starts, count = self.line_starts, len(self.lines)
        line = bisect_right(starts, offset, hi=count)  # the last line starting at or before it
        if line == 0:  # an empty text
            return 1, offset
        if offset == starts[-1] and self.lines[-1].endswith(("\n", "\r")):
            return count + 1, 0  # after the final line break
        return line, offset - starts[line - 1]

    @property
    def parsed(self) -> bool:
        """Has Python's tree been made (or handed over) already?"""
        return "tree" in self._memo

    @property
    def tree(self) -> ast.Module:
        """Python's tree; raises ``ParseError`` where CPython rejects the text.

        Besides better messages this protects libcst's native parser, which
        can overflow its stack on nesting CPython refuses (e.g. 3000
        parentheses).
        """
        try:
            return self._memo["tree"]
        except KeyError:
            tree = self._memo["tree"] = python_tree(self.text)
            return tree

    @property
    def tokens(self) -> List[tokenize.TokenInfo]:
        """Python's tokens; empty when the text does not tokenize."""

        def compute() -> List[tokenize.TokenInfo]:
            try:
                return list(tokenize.generate_tokens(io.StringIO(self.text).readline))
            except (tokenize.TokenError, SyntaxError, IndentationError):
                return []

        return self.memo("tokens", compute)

    @property
    def module(self) -> "cst.Module":
        """libcst's tree of the whole text, which CPython's parser must accept;
        raises ``Unsupported`` where libcst cannot parse it."""
        return self.memo("module", lambda: libcst_tree(self.text))


def python_tree(text: str) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError as exc:
        line = exc.lineno or 1
        python2 = python2_feature(exc.msg, text, line)
        message = f"Python 2 code ({python2}); torchlint checks Python 3" if python2 else exc.msg
        raise ParseError(message, line, max((exc.offset or 1) - 1, 0)) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ParseError(str(exc) or type(exc).__name__, 1, 0) from None


def libcst_tree(text: str) -> "cst.Module":
    """libcst's tree of ``text``, which CPython's parser has accepted.

    Raises ``Unsupported`` when libcst cannot parse it anyway (its parser
    lags CPython's grammar in places).
    """
    import libcst as cst  # checking a file that no rule can match never needs it

    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        # libcst's raw_line can point past the error; its message has the real place.
        where = re.search(r"error at (\d+):(\d+)", exc.message)
        line, column = (int(where.group(1)), int(where.group(2))) if where else (exc.raw_line, exc.raw_column)
        detail = re.sub(r"^parser error: (error at \d+:\d+: )?", "", exc.message).split("\n")[0]
        detail = detail if len(detail) <= 60 else detail[:57] + "..."
        raise Unsupported(f"libcst cannot parse this valid Python ({detail})", line, column) from None
    except RecursionError:
        raise Unsupported("too deeply nested to parse", 1, 0) from None
    except Exception as exc:  # libcst's native parser can raise other errors
        raise Unsupported(f"libcst cannot parse this valid Python ({str(exc) or type(exc).__name__})", 1, 0) from None


def decode(data: bytes) -> SourceFile:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceError(f"cannot determine the encoding: {exc}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceError(f"cannot decode as {encoding}: {exc}") from None
    return SourceFile(text, encoding)
