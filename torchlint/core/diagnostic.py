"""What a check produces (findings and their fixes), and why a file could not be checked.

Kept free of libcst so that reporting, the result cache and a fully cached
run never import the parser (about half a second of start-up).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Sequence, Tuple

if TYPE_CHECKING:  # pragma: no cover
    import libcst as cst


class ParseError(Exception):
    """The source is not valid Python; carries a 1-based line and 0-based column."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


class Unsupported(ParseError):
    """Valid Python (CPython's parser accepts it) that torchlint cannot analyse:
    libcst cannot parse it (e.g. ``(x): int``, libcst issue #1011) or it is
    nested too deeply. The file is skipped with a warning: the user's code is
    not at fault.
    """


# An edit rewrites one node of the original tree. It receives the node as
# updated by edits to its children, so edits on nested nodes compose.
EditFn = Callable[["cst.CSTNode"], "cst.CSTNode"]


@dataclass(frozen=True)
class Edit:
    node: cst.CSTNode
    apply: EditFn


@dataclass(eq=False)
class Fix:
    """A set of edits applied together or not at all.

    ``required_imports`` are top-level ``import X`` statements the fix needs;
    the fixer adds each once, after docstrings and ``__future__`` imports.
    """

    edits: Sequence[Edit]
    safe: bool = True
    required_imports: Tuple[str, ...] = ()


@dataclass
class Diagnostic:
    code: str
    message: str
    line: int  # 1-based
    column: int  # 0-based, in characters
    fix: Optional[Fix] = None
    # Notebooks only: the 1-based number of the cell among all the notebook's
    # cells (markdown ones included, as Jupyter shows them); line and column
    # are then within that cell. None for ordinary source files.
    cell: Optional[int] = None
    # Where the flagged node ends (line 1-based, column 0-based, exclusive),
    # when the engine knows it (the result cache keeps it too).
    end_line: Optional[int] = None
    end_column: Optional[int] = None
    # A longer explanation than the message, for ``--output-format full``.
    detail: str = ""

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.safe

    @property
    def unsafe_fixable(self) -> bool:
        return self.fix is not None and not self.fix.safe

    def sort_key(self) -> Tuple[int, int, str]:
        return (self.line, self.column, self.code)


__all__ = ["Diagnostic", "Edit", "EditFn", "Fix", "ParseError", "Unsupported"]
