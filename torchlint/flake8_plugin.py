"""flake8 plugin: the same engine and findings as the CLI, under code ``TL``.

flake8 hands us the file's ``lines`` (from stdin too, when the filename is
``-``), so we never re-open the file. flake8 applies ``# noqa`` itself; the
plugin never raises and never prints: a file libcst cannot parse, or any
internal failure, yields nothing rather than killing the whole flake8 run.
"""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Sequence, Tuple

from torchlint import __version__
from torchlint.engine import Engine
from torchlint.rules import all_rules

_ENGINE: Optional[Engine] = None


def _engine() -> Engine:
    global _ENGINE
    if _ENGINE is None:
        _ENGINE = Engine(all_rules(), honour_noqa=False)
    return _ENGINE


class TorchlintChecker:
    name = "torchlint"
    version = __version__

    def __init__(self, tree: ast.AST, lines: Sequence[str], filename: str = "") -> None:
        # ``tree`` is requested only so flake8 treats this as a tree plugin
        # (run once per file); we parse ``lines`` with libcst ourselves.
        self._lines = lines
        self._filename = filename

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        for line, column, text in self._findings():
            yield line, column, text, type(self)

    def _findings(self) -> List[Tuple[int, int, str]]:
        source = "".join(self._lines)
        try:
            result = _engine().check(source, syntax_checked=True)
        except Exception:  # parse failures and anything unforeseen: stay silent
            return []
        return [(d.line, d.column, f"{d.code} {d.message}") for d in result.diagnostics]
