"""``edits.set_args`` keeps the layout of multi-line calls when arguments are added."""

from __future__ import annotations

import libcst as cst
import pytest

from torchlint.rules import edits


def _add(code: str) -> str:
    call = cst.parse_expression(code)
    assert isinstance(call, cst.Call)
    new = edits.add_keywords((("weights_only", "True"),))(call)
    return cst.Module(body=[]).code_for_node(new)


@pytest.mark.parametrize(
    "code, expected",
    [
        ("load(f)", "load(f, weights_only=True)"),
        ("load(f,)", "load(f, weights_only=True,)"),
        ("load(f, 'cpu')", "load(f, 'cpu', weights_only=True)"),
        (
            "load(\n    f,\n    map_location='cpu',\n)",
            "load(\n    f,\n    map_location='cpu',\n    weights_only=True,\n)",
        ),
        (
            "load(\n    f,\n    map_location='cpu'\n)",
            "load(\n    f,\n    map_location='cpu',\n    weights_only=True\n)",
        ),
        ("load(\n    f,\n)", "load(\n    f,\n    weights_only=True,\n)"),
        ("load(\n    f\n)", "load(\n    f,\n    weights_only=True\n)"),
        # the comments between arguments stay where they were, never copied (issue 34's campaign)
        ("load(f,  # the file\n     'cpu')", "load(f,  # the file\n     'cpu',\n     weights_only=True)"),
        ("load(  # why\n    f)", "load(  # why\n    f,\n    weights_only=True)"),
        ("load(f,\n     # a line of its own\n     'cpu')",
         "load(f,\n     # a line of its own\n     'cpu',\n     weights_only=True)"),
    ],
)
def test_added_keyword_follows_the_call_layout(code: str, expected: str) -> None:
    assert _add(code) == expected
