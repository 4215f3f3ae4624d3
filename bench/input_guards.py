"""What the input guards of issue 18 cost on a real tree (default: transformers).

    python bench/input_guards.py [DIR]

Prints, over every ``*.py`` under DIR that Python parses: the time of
``ast.parse``; of measuring the depth of Python's tree (``ast_depth``, the
guard before issue 18) and of ``check_depth`` (libcst's depth, measured on
Python's tree); of the compile-stage screen and of ``compile`` on the files it lets
through, against compiling every file. Timings are process CPU seconds.
"""

from __future__ import annotations

import ast
import sys
import time
from pathlib import Path

from torchlint.core.census import child_nodes, take_census
from torchlint.core import source as source_module
from torchlint.engine.linter import check_depth

DEFAULT = "/work/corpora/cache/src/transformers-5.23.0"


def main(root: str) -> None:
    texts = []
    for path in sorted(Path(root).rglob("*.py")):
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            pass
    clock = time.process_time
    totals = dict(parse=0.0, ast_depth=0.0, depth=0.0, census=0.0, screen=0.0, compile_screened=0.0, compile_all=0.0)
    files = screened = 0
    for text in texts:
        start = clock()
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        files += 1
        parsed = clock()
        _ast_depth(tree)
        ast_depth = clock()
        try:
            check_depth(tree)
        except Exception:  # Unsupported: too deep
            pass
        depth = clock()
        census = take_census(tree)  # the file's one walk, which the outline reuses
        counted = clock()
        refuse = source_module._compiler_may_refuse(text, tree, census)
        screen = clock()
        if refuse:
            screened += 1
            _compile(tree)
        compiled = clock()
        _compile(tree)
        everything = clock()
        totals["parse"] += parsed - start
        totals["ast_depth"] += ast_depth - parsed
        totals["depth"] += depth - ast_depth
        totals["census"] += counted - depth
        totals["screen"] += screen - counted
        totals["compile_screened"] += compiled - screen
        totals["compile_all"] += everything - compiled
    print(f"{files} files under {root}; the screen sends {screened} to compile()")
    for name, seconds in totals.items():
        print(f"  {name:17} {seconds:7.2f} s  ({seconds / totals['parse']:.0%} of ast.parse)")


def _ast_depth(tree: ast.AST) -> int:
    """The depth of Python's tree, level by level: what ``check_depth`` measured before issue 18."""
    level, depth = [tree], 0
    while level:
        depth += 1
        level = list(child_nodes(level))
    return depth


def _compile(tree: ast.Module) -> None:
    try:
        compile(tree, "<bench>", "exec", dont_inherit=True)
    except SyntaxError:
        pass


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else DEFAULT)
