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

import __future__
import ast
import gc
import io
import re
import tokenize
import warnings
from bisect import bisect_right
from contextlib import contextmanager
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Iterator,
    Dict,
    List,
    Optional,
    Tuple,
    TypeVar,
    Union,
)

from torchlint.core.census import Census, take_census
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
    (flake8 parses every file anyway). ``data``: the bytes the text was
    decoded from, when read from a file: what the result cache's key hashes
    and what the file must still hold before a fix replaces it.
    ``identity``: the (device, inode) of that file: the only file a fix may
    replace.
    """

    __slots__ = ("text", "encoding", "top_level_await", "data", "identity", "_memo")

    def __init__(self, text: str, encoding: str = "utf-8", tree: Optional[ast.Module] = None,
                 top_level_await: bool = False, data: bytes = b"") -> None:
        self.text = text
        self.encoding = encoding
        self.top_level_await = top_level_await  # a notebook's code: IPython runs ``await`` outside functions
        self.data = data
        self.identity: Optional[Tuple[int, int]] = None
        self._memo: Dict[str, Any] = {} if tree is None else {"tree": tree}

    def rewritten(self, text: str) -> "SourceFile":
        """A new text for the same file (a round of fixes): same encoding and kind."""
        return SourceFile(text, self.encoding, top_level_await=self.top_level_await)

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

    def memoized(self, key: str) -> Optional[object]:
        """What ``memo`` holds for ``key``, without computing it (None: nothing yet)."""
        return self._memo.get(key)

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
            tree, census = _checked_tree(self.text, self.top_level_await)
            self._memo["census"] = census
            self._memo["tree"] = tree
            return tree

    @property
    def census(self) -> Census:
        """The nodes of Python's tree by type (``census.py``): the one walk over it."""
        return self.memo("census", lambda: take_census(self.tree))

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
        return self.memo(MODULE, lambda: libcst_tree(self.text))


# The memo key of ``module``: a caller that can make the same tree faster
# (``engine/splicing.py``) sets it before anyone asks.
MODULE = "module"


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector while a parser builds a tree.

    A parse allocates a node per token, each counted toward a collection,
    and every node is alive until the parse ends: the collections it
    triggers find nothing (a tree holds no cycles) but walk everything the
    process holds, which made parsing in a run 2.5 times as slow as alone.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def python_tree(text: str, top_level_await: bool = False) -> ast.Module:
    """Python's tree of ``text``; ``ParseError`` where CPython refuses it,
    its parser or (``_compiler_may_refuse``) its compiler."""
    return _checked_tree(text, top_level_await)[0]


def _checked_tree(text: str, top_level_await: bool) -> Tuple[ast.Module, Census]:
    """``python_tree``, and the census of the tree its checks took."""
    try:
        with no_cycle_collection():
            tree = ast.parse(text)
        census = take_census(tree)
        if _compiler_may_refuse(text, tree, census):
            flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if top_level_await else 0
            with warnings.catch_warnings():  # the code generator's SyntaxWarnings are not ours to print
                warnings.simplefilter("ignore")
                compile(tree, "<source>", "exec", flags=flags, dont_inherit=True)
        return tree, census
    except SyntaxError as exc:
        line = exc.lineno or 1
        python2 = python2_feature(exc.msg, text, line)
        message = f"Python 2 code ({python2}); torchlint checks Python 3" if python2 else exc.msg
        raise ParseError(message, line, max((exc.offset or 1) - 1, 0)) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ParseError(str(exc) or type(exc).__name__, 1, 0) from None


# Nodes the compiler checks in ways the walk of ``_misplaced`` does not follow:
# ``await`` and ``async for``/``with`` outside ``async def`` (anywhere in an
# expression), declarations, ``match``, ``except*``.
_RARELY_SEEN = (ast.Await, ast.AsyncFor, ast.AsyncWith, ast.Global, ast.Nonlocal,
                *(getattr(ast, name) for name in ("Match", "TryStar") if hasattr(ast, name)))
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCKS = (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)
# CPython refuses more than 20 nested blocks (loops, with, try); fewer than
# this many cannot come close, wherever the count starts.
_FEW_BLOCKS = 15
_YIELDS = (ast.Yield, ast.YieldFrom)


def _compiler_may_refuse(source: str, tree: ast.Module, census: Census) -> bool:
    """Whether ``compile`` could refuse what ``ast.parse`` accepted.

    The compiler (symbol table, code generation) rejects a misplaced
    ``from __future__`` import, ``return`` / ``yield`` / ``await`` /
    ``break`` / ``nonlocal`` where they have no meaning, conflicting
    ``global`` declarations, and more. Compiling costs about half a parse,
    so it runs only when the census holds a node the compiler checks in
    ways not followed here (``_RARELY_SEEN``, an async comprehension, a
    ``yield`` in an ``async def``), when the text names ``__debug__`` or
    ``__future__`` in doubt, or when a walk over the statements finds one
    the compiler checks out of place (``return`` outside a function,
    ``break`` outside a loop) or a ``yield`` that is not a statement's value
    in a function (the census counts every ``yield``: the walk must meet
    them all).
    """
    by_type = census.by_type
    if any(kind in by_type for kind in _RARELY_SEEN):
        return True
    yields = census.count(*_YIELDS)
    if yields and ast.AsyncFunctionDef in by_type:
        return True  # ``yield from`` or ``return value`` in an async generator
    if any(comprehension.is_async for comprehension in by_type.get(ast.comprehension, ())):
        return True
    if "__debug__" in source or _doubtful_future(source, tree):
        return True
    walk = _Misplaced(starred=ast.Starred in by_type)
    return walk.misplaced(tree.body, function=None, in_loop=False, blocks=0) or walk.yields != yields


def _doubtful_future(source: str, tree: ast.Module) -> bool:
    """``__future__`` named anywhere but in known features imported at the
    start of the file (after the docstring), where the compiler wants them."""
    mentions = source.count("__future__")
    if not mentions:
        return False
    body = tree.body
    start = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
    leading = 0
    for statement in body[start:]:
        if not (isinstance(statement, ast.ImportFrom) and statement.module == "__future__" and not statement.level):
            break
        if any(alias.name not in __future__.all_feature_names for alias in statement.names):
            return True
        leading += 1
    return mentions > leading


class _Misplaced:
    """The walk over every statement of a file for ``_compiler_may_refuse``
    (which has already sent files holding a ``_RARELY_SEEN`` node to the compiler);
    ``yields`` counts the ``yield`` expressions met as a statement's value
    inside a function (``x = yield y``): the only place the walk sees them."""

    def __init__(self, starred: bool) -> None:
        self.starred = starred  # does the file hold a starred expression at all?
        self.yields = 0

    def misplaced(self, body: List[ast.stmt], function: Optional[ast.AST], in_loop: bool, blocks: int) -> bool:
        """A statement in ``body`` the compiler may refuse there.

        It runs over every statement of every file: the common simple
        statements are dealt with first, in as few tests as they need."""
        if blocks > _FEW_BLOCKS:
            return True
        for statement in body:
            kind = type(statement)
            if kind in _ASSIGNMENTS or kind is ast.Expr:
                if type(statement.value) in _YIELDS:  # type: ignore[attr-defined]
                    if function is None:
                        return True  # ``yield x`` or ``x = yield`` outside a function
                    self.yields += 1
                if self.starred and kind is not ast.Expr and _starred(statement):
                    return True
                continue
            if kind in _UNCHECKED:
                continue
            if kind is ast.Return:
                if function is None:
                    return True
                continue
            if kind is ast.Break or kind is ast.Continue:
                if not in_loop:
                    return True
                continue
            if kind is ast.For and self.starred and _starred(statement):
                return True
            if kind is ast.ImportFrom:
                if function is not None and any(a.name == "*" for a in statement.names):
                    return True
                continue
            if kind is ast.Try and any(h.type is None for h in statement.handlers[:-1]):
                return True
            if kind in _FUNCTIONS or kind is ast.ClassDef:
                if _repeated_names(statement):
                    return True
                if self.misplaced(statement.body, statement if kind is not ast.ClassDef else None, False, blocks):
                    return True
                continue
            loop = kind in _LOOPS
            inner_blocks = blocks + 1 if kind in _BLOCKS else blocks
            for part in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(statement, part, None)
                if not inner:
                    continue
                if part == "handlers":
                    inner = [line for handler in inner for line in handler.body]
                # a loop's ``else`` is outside the loop
                if self.misplaced(inner, function, in_loop or (loop and part == "body"), inner_blocks):
                    return True
        return False


_ASSIGNMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign)
# Simple statements the compiler accepts wherever the parser does.
_UNCHECKED = (ast.Pass, ast.Import, ast.Raise, ast.Assert, ast.Delete)


def _starred(statement: ast.stmt) -> bool:
    """``*a = b``, ``a = *b`` or ``a, *b, *c = d``: starred expressions the compiler refuses."""
    if type(getattr(statement, "value", None)) is ast.Starred:
        return True
    targets = statement.targets if type(statement) is ast.Assign else (statement.target,)  # type: ignore[attr-defined]
    for target in targets:
        kind = type(target)
        if kind is ast.Starred:
            return True
        if (kind is ast.Tuple or kind is ast.List) and sum(type(item) is ast.Starred for item in target.elts) > 1:
            return True
    return False


def _repeated_names(definition: ast.stmt) -> bool:
    """A parameter named twice (``def f(a, a)``) or a class keyword given twice."""
    if isinstance(definition, ast.ClassDef):
        names = [keyword.arg for keyword in definition.keywords if keyword.arg is not None]
    else:
        arguments = definition.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
        names = [argument.arg for argument in every if argument is not None]
    return len(names) != len(set(names))


def libcst_tree(text: str) -> "cst.Module":
    """libcst's tree of ``text``, which CPython's parser has accepted.

    Raises ``Unsupported`` when libcst cannot parse it anyway (its parser
    lags CPython's grammar in places).
    """
    import libcst as cst  # checking a file that no rule can match never needs it

    try:
        with libcst_parsing():
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


@contextmanager
def libcst_parsing() -> Iterator[None]:
    """What every parse with libcst runs under: no cyclic collection, no node validation."""
    with no_cycle_collection(), _unvalidated_nodes():
        yield


@contextmanager
def _unvalidated_nodes() -> Iterator[None]:
    """Let libcst's parser make nodes without validating each one.

    Every node libcst makes runs its ``_validate`` (``CSTNode.__post_init__``),
    which catches trees a program builds by hand wrongly; what its parser
    makes from source text is valid by construction (libcst's own comment
    there suggests moving validation out of parsing). Skipping it is 15 % of
    a parse (measured on 300 transformers modules). Nodes the rules build
    for fixes are made outside this and still validated.
    """
    from libcst._nodes.base import CSTNode

    validating = CSTNode.__dict__["__post_init__"]
    CSTNode.__post_init__ = _made_by_the_parser  # type: ignore[method-assign]
    try:
        yield
    finally:
        CSTNode.__post_init__ = validating  # type: ignore[method-assign]


def _made_by_the_parser(node: object) -> None:
    """``CSTNode.__post_init__`` while libcst parses (see ``_unvalidated_nodes``)."""


def decode(data: bytes) -> SourceFile:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceError(f"cannot determine the encoding: {exc}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceError(f"cannot decode as {encoding}: {exc}") from None
    return SourceFile(text, encoding, data=data)
