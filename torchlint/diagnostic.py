"""What a check produces, and why a file could not be checked.

Kept free of libcst so that reporting, the result cache and a fully cached
run never import the parser (about half a second of start-up).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from torchlint.rule import Fix


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

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.safe

    @property
    def unsafe_fixable(self) -> bool:
        return self.fix is not None and not self.fix.safe

    def sort_key(self) -> Tuple[int, int, str]:
        return (self.line, self.column, self.code)


__all__ = ["Diagnostic", "ParseError", "Unsupported"]
