"""The path a ``torch.save`` or ``torch.load`` call names, and a key by which two
calls naming the same path expression meet (``saved_files.py``; inference's
reading of a file saved earlier in the same def)."""

from __future__ import annotations

from typing import Optional

import libcst as cst


def path_argument(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    """The argument passed as ``keyword``, or else the ``position``-th positional one."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) > position and not any(a.star for a in positional[:position + 1]):
        return positional[position].value
    return None


def path_key(path: cst.BaseExpression) -> str:
    """``path``'s code with its whitespace normalised: alike for one expression however spaced."""
    return " ".join(cst.Module(body=[]).code_for_node(path).split())
