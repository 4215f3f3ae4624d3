"""Jupyter notebooks: the code cells are linted and fixed; the rest of the JSON is kept byte for byte.

Notebooks are written by the tests as JSON the way real writers save them
(nbformat: ``json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False)``
plus a newline) and through the real CLI in a subprocess.
"""

from __future__ import annotations

import argparse
import json
import re

import pytest
from conftest import run_torchlint

from torchlint.engine.linter import Engine
from torchlint.rules import all_rules
from torchlint.run import notebook as nbmod
from torchlint.run.runner import process_file

UPSAMPLE_MESSAGE = "TL103 `upsample` is deprecated; use `interpolate(...)`"
SIGMOID_MESSAGE = "TL104 `F.sigmoid` is a deprecated alias; use `torch.sigmoid`"


def code(source, outputs=(), execution_count=None, **metadata):
    return {
        "cell_type": "code",
        "execution_count": execution_count,
        "metadata": dict(metadata),
        "outputs": list(outputs),
        "source": source if isinstance(source, str) else list(source),
    }


def markdown(source):
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def lines(text):
    """A cell source as nbformat stores it: a list of lines."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def notebook(*cells, language="python"):
    return {
        "cells": list(cells),
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": language, "name": "python3"},
            "language_info": {"name": language, "version": "3.11.7"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def nbformat_dumps(nb, ensure_ascii=False):
    """What nbformat.writes produces (and Jupyter saves)."""
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=ensure_ascii) + "\n"


def save(path, nb, ensure_ascii=False):
    path.write_bytes(nbformat_dumps(nb, ensure_ascii).encode("utf-8"))
    return path


STREAM_OUTPUT = {"name": "stdout", "output_type": "stream", "text": ["résultat: 1.0\n", "ok ✓\n"]}
IMAGE_OUTPUT = {
    "data": {"image/png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==\n",
             "text/plain": ["<Figure size 640x480 with 1 Axes>"]},
    "metadata": {"needs_background": "light"},
    "output_type": "display_data",
}

IMPORTS = "%matplotlib inline\nimport torch\nimport torch.nn.functional as F"
MODEL = (
    "!pip install --quiet torch\n"
    "x = torch.zeros(1, 1, 2, 2)\n"
    "y = F.upsample(x, scale_factor=2)  # größer\n"
    "F.upsample?\n"
    "z = F.sigmoid(x)"
)


def training_notebook():
    return notebook(
        markdown(["# Démo\n", "Upsampling with `F.upsample(x)` in prose is not code.\n"]),
        code(lines(IMPORTS), execution_count=1, tags=["setup"]),
        code(lines(MODEL), outputs=[STREAM_OUTPUT, IMAGE_OUTPUT], execution_count=2),
        markdown("The end 🎉"),
    )


def fixed_model(text=MODEL):
    return text.replace("F.upsample(x,", "F.interpolate(x,").replace("z = F.sigmoid(x)", "z = torch.sigmoid(x)")


def check(path, *extra, cwd=None):
    return run_torchlint([*extra, str(path) if cwd is None else path.name], cwd=cwd or path.parent)


# --------------------------------------------------------------------------
# positions and what is linted
# --------------------------------------------------------------------------


def test_findings_are_reported_by_cell_line_and_column(tmp_path):
    save(tmp_path / "nb.ipynb", training_notebook())
    result = check(tmp_path / "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    # Cells count from 1 among all cells (the markdown cell is cell 1); F was
    # imported in cell 2, so cell 3's F.upsample resolves to torch.
    assert result.stdout.splitlines() == [
        f"nb.ipynb:cell 3:3:7: {UPSAMPLE_MESSAGE}",
        f"nb.ipynb:cell 3:5:7: {SIGMOID_MESSAGE}",
        "Found 2 problems (2 fixable with --fix).",
    ]


def test_diagnostics_carry_the_cell_for_other_output_formats(tmp_path):
    path = save(tmp_path / "nb.ipynb", training_notebook())
    args = argparse.Namespace(fix=False, diff=False, unsafe_fixes=False)
    report = process_file(str(path), Engine(all_rules()), args)
    assert report.errors == []
    assert [(d.code, d.cell, d.line, d.column) for d in report.diagnostics] == [
        ("TL103", 3, 3, 6), ("TL104", 3, 5, 6),
    ]
    plain = tmp_path / "plain.py"
    plain.write_text("import torch.nn.functional as F\nF.sigmoid(x)\n")
    assert [d.cell for d in process_file(str(plain), Engine(all_rules()), args).diagnostics] == [None]


def test_ipython_lines_are_left_alone_and_the_rest_is_linted(tmp_path):
    source = (
        "import torch.nn.functional as F\n"
        "%time a = F.upsample(x, scale_factor=2)\n"  # a magic: not Python, not linted
        "!echo F.upsample(x)\n"
        "files = !ls *.pt\n"
        "t = %timeit -o F.sigmoid(x)\n"
        "??F.upsample\n"
        "F.interpolate?\n"
        "for i in range(2):\n"
        "    %time b = F.sigmoid(x)\n"
        "    c = F.sigmoid(x)\n"
        "d = (F.sigmoid(x)\n"
        "     % 2)\n"  # a continuation line: the modulo operator, not a magic
        'doc = """\n'
        "%d items\n"  # inside a string: text, not a magic
        '!important"""\n'
        "e = F.upsample(x, scale_factor=2) \\\n"
        "    if x is not None else None\n"
    )
    path = save(tmp_path / "nb.ipynb", notebook(code(lines(source))))
    result = check(path, cwd=tmp_path)
    assert result.stderr == ""
    assert [line.split(": ", 1)[0] for line in result.stdout.splitlines()[:-1]] == [
        "nb.ipynb:cell 1:10:11", "nb.ipynb:cell 1:11:8", "nb.ipynb:cell 1:16:7",
    ]
    result = check(path, "--fix", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    (cell,) = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert "".join(cell["source"]) == (
        source.replace("    c = F.sigmoid(x)", "    c = torch.sigmoid(x)")
        .replace("d = (F.sigmoid(x)", "d = (torch.sigmoid(x)")
        .replace("e = F.upsample(", "e = F.interpolate(")
        .replace("import torch.nn.functional as F\n", "import torch\nimport torch.nn.functional as F\n")
    )


def test_cell_magics(tmp_path):
    path = save(tmp_path / "nb.ipynb", notebook(
        code("import torch.nn.functional as F"),
        code("%%time\ny = F.upsample(x, scale_factor=2)"),  # Python body: linted
        code("%%bash\necho F.upsample(x)"),  # not Python: skipped
        code("%%writefile model.py\nimport torch.nn.functional as F\nF.sigmoid(x)"),  # a file's text: skipped
        code("\n%%timeit -n 3\nF.sigmoid(x)"),
    ))
    before = path.read_bytes()
    result = check(path, cwd=tmp_path)
    assert result.stdout.splitlines()[:-1] == [
        f"nb.ipynb:cell 2:2:7: {UPSAMPLE_MESSAGE}",
        f"nb.ipynb:cell 5:3:3: {SIGMOID_MESSAGE}",
    ]
    assert check(path, "--fix", cwd=tmp_path).returncode == 0
    cells = [c["source"] for c in json.loads(path.read_text())["cells"]]
    assert cells[1] == "%%time\ny = F.interpolate(x, scale_factor=2)"
    assert cells[2:4] == [c["source"] for c in json.loads(before)["cells"][2:4]]
    assert cells[4] == "\n%%timeit -n 3\ntorch.sigmoid(x)"
    assert cells[0] == "import torch\nimport torch.nn.functional as F"


def test_noqa_and_file_exemption_work_in_cells(tmp_path):
    nb = notebook(code("import torch.nn.functional as F"), code("y = F.sigmoid(x)  # noqa: TL104\nz = F.sigmoid(x)"))
    result = check(save(tmp_path / "a.ipynb", nb), cwd=tmp_path)
    assert result.stdout.splitlines()[:-1] == [f"a.ipynb:cell 2:2:7: {SIGMOID_MESSAGE}"]
    nb["cells"].append(code("# flake8: noqa"))
    result = check(save(tmp_path / "b.ipynb", nb), cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "All checks passed.\n")


def test_a_notebook_in_another_language_is_skipped(tmp_path):
    nb = notebook(code("import torch.nn.functional as F\nF.sigmoid(x)\nlibrary(torch)"), language="R")
    result = check(save(tmp_path / "r.ipynb", nb), cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "All checks passed.\n", "")


def test_top_level_await_is_fine(tmp_path):
    nb = notebook(code("import asyncio\nimport torch.nn.functional as F\nawait asyncio.sleep(0)"), code("F.sigmoid(x)"))
    path = save(tmp_path / "nb.ipynb", nb)
    assert check(path, cwd=tmp_path).stdout.splitlines()[0] == f"nb.ipynb:cell 2:1:3: {SIGMOID_MESSAGE}"
    assert check(path, "--fix", cwd=tmp_path).returncode == 0
    assert json.loads(path.read_text())["cells"][1]["source"] == "torch.sigmoid(x)"


# --------------------------------------------------------------------------
# --fix keeps the JSON byte-identical outside the changed cells
# --------------------------------------------------------------------------


@pytest.mark.parametrize("ensure_ascii", [False, True], ids=["utf8", "ascii-escapes"])
def test_fix_rewrites_only_the_changed_cell_like_nbformat_would(tmp_path, ensure_ascii):
    path = save(tmp_path / "nb.ipynb", training_notebook(), ensure_ascii)
    assert ("\\u00e9" in path.read_text()) is ensure_ascii  # the writers differ on non-ASCII text
    result = check(path, "--fix", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "Fixed 2 problems.\n"
    expected = training_notebook()
    expected["cells"][2]["source"] = lines(fixed_model())
    assert path.read_bytes() == nbformat_dumps(expected, ensure_ascii).encode("utf-8")
    # a second run finds nothing and changes nothing
    again = check(path, "--fix", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (0, "All checks passed.\n")
    assert path.read_bytes() == nbformat_dumps(expected, ensure_ascii).encode("utf-8")


@pytest.mark.parametrize("style", ["indent2-crlf-no-final-newline", "compact", "string-sources", "tabs-unsorted"])
def test_fix_keeps_any_json_layout(tmp_path, style):
    nb = training_notebook()
    if style == "indent2-crlf-no-final-newline":
        text = json.dumps(nb, indent=2, ensure_ascii=False).replace("\n", "\r\n")
    elif style == "compact":
        text = json.dumps(nb, separators=(",", ":"), ensure_ascii=False)
    elif style == "string-sources":
        for cell in nb["cells"]:
            cell["source"] = "".join(cell["source"])
        text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    else:
        nb = {key: nb[key] for key in ("nbformat_minor", "metadata", "nbformat", "cells")}
        text = json.dumps(nb, indent="\t", ensure_ascii=False) + "\n"
    path = tmp_path / "nb.ipynb"
    path.write_bytes(text.encode("utf-8"))
    assert check(path, "--fix", cwd=tmp_path).returncode == 0
    # exactly the two fixed lines differ; everything else is the same bytes
    expected = text.replace("y = F.upsample(x,", "y = F.interpolate(x,").replace("z = F.sigmoid(x)", "z = torch.sigmoid(x)")
    assert expected != text
    assert path.read_bytes() == expected.encode("utf-8")


def test_unchanged_lines_and_cells_keep_their_exact_encoding(tmp_path):
    # Hand-escaped JSON: "\u0041" for A, "\/" for /, "\u00e9" next to raw text.
    text = (
        '{"cells": [\n'
        ' {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null,\n'
        '  "source": ["import torch.nn.functional as F\\n", "p = \\"a\\/b\\"  # \\u00e9t\\u00e9\\n"]},\n'
        ' {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null,\n'
        '  "source": ["\\u0041 = 1\\n", "y = F.relu(F.sigmoid(x))\\n", "s = \\"caf\\u00e9\\""]}\n'
        '], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}\n'
    )
    path = tmp_path / "nb.ipynb"
    path.write_bytes(text.encode("ascii"))
    assert check(path, "--fix", cwd=tmp_path).returncode == 0
    # The import goes into cell 1 as a new, ASCII-escaped line; every other
    # line keeps its original escapes.
    expected = text.replace('["import torch.nn', '["import torch\\n", "import torch.nn').replace(
        '"y = F.relu(F.sigmoid(x))\\n"', '"y = F.relu(torch.sigmoid(x))\\n"'
    )
    assert path.read_text() == expected
    assert json.loads(expected)["cells"][1]["source"][0] == "A = 1\n"


def test_fix_adds_a_needed_import_to_the_first_code_cell(tmp_path):
    nb = notebook(
        markdown("intro"),
        code(lines('"""Setup."""\nimport torch.nn.functional as F')),
        code(lines("def gate(x):\n    return F.sigmoid(x)")),
    )
    path = save(tmp_path / "nb.ipynb", nb)
    assert check(path, "--fix", cwd=tmp_path).returncode == 0
    sources = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]
    # The import the fix orphaned goes.
    assert sources == ["intro", '"""Setup."""\nimport torch',
                       "def gate(x):\n    return torch.sigmoid(x)"]


def test_diff_shows_changed_cells_and_writes_nothing(tmp_path):
    path = save(tmp_path / "nb.ipynb", training_notebook())
    before = path.read_bytes()
    result = check(path, "--diff", cwd=tmp_path)
    assert result.returncode == 1
    assert path.read_bytes() == before
    assert result.stdout.startswith("--- a/nb.ipynb:cell 3\n+++ b/nb.ipynb:cell 3\n@@ ")
    assert "-y = F.upsample(x, scale_factor=2)  # größer\n+y = F.interpolate(x, scale_factor=2)  # größer\n" in result.stdout
    assert "+z = torch.sigmoid(x)\n\\ No newline at end of file\n" in result.stdout
    assert "cell 2" not in result.stdout


# --------------------------------------------------------------------------
# errors and discovery
# --------------------------------------------------------------------------

MALFORMED = {
    "invalid.ipynb": (b'{"cells": [', "not a notebook: invalid JSON (Expecting value at line 1 column 12)"),
    "list.ipynb": (b"[]", "not a notebook: the JSON is not an object"),
    "v3.ipynb": (b'{"nbformat": 3, "worksheets": []}', "unsupported notebook format nbformat=3 (torchlint reads nbformat 4)"),
    "noversion.ipynb": (b'{"cells": []}', 'not a notebook: no "nbformat" version'),
    "nocells.ipynb": (b'{"nbformat": 4, "metadata": {}}', 'not a notebook: no "cells" list'),
    "badcell.ipynb": (b'{"nbformat": 4, "cells": [{"cell_type": "code", "source": 3}]}', "not a notebook: cell 1 has no source text"),
    "notcell.ipynb": (b'{"nbformat": 4, "cells": ["x"]}', "not a notebook: cell 1 has no cell_type"),
    "latin1.ipynb": ('{"nbformat": 4, "cells": [], "x": "é"}'.encode("latin-1"), "not a notebook: not UTF-8"),
}


def test_malformed_notebooks_are_clear_errors_and_the_rest_is_checked(tmp_path):
    for name, (data, _) in MALFORMED.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "good.py").write_text("import torch.nn.functional as F\nF.sigmoid(x)\n")
    result = run_torchlint(["."], cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    errors = sorted(result.stderr.splitlines())
    assert len(errors) == len(MALFORMED)
    for name, (_, message) in MALFORMED.items():
        assert any(line.startswith(f"torchlint: error: ./{name}: {message}") for line in errors), (name, errors)
    assert result.stdout.splitlines()[0] == f"./good.py:2:3: {SIGMOID_MESSAGE}"
    for name, (data, _) in MALFORMED.items():
        assert (tmp_path / name).read_bytes() == data
    assert run_torchlint(["--fix", "."], cwd=tmp_path).returncode == 2


def test_syntax_error_is_reported_in_its_cell(tmp_path):
    path = save(tmp_path / "nb.ipynb", notebook(code("import torch"), markdown("x"), code(lines("x = 1\ndef f(:\n    pass"))))
    result = check(path, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "torchlint: error: nb.ipynb:cell 3:2:7: cannot parse: invalid syntax\n"


def test_directories_include_notebooks_but_not_checkpoints(tmp_path):
    nb = notebook(code(lines("import torch.nn.functional as F\nF.sigmoid(x)")))
    (tmp_path / "proj" / ".ipynb_checkpoints").mkdir(parents=True)
    save(tmp_path / "proj" / "nb.ipynb", nb)
    save(tmp_path / "proj" / ".ipynb_checkpoints" / "nb-checkpoint.ipynb", nb)
    (tmp_path / "proj" / "notes.json").write_text("{}")
    result = run_torchlint(["proj"], cwd=tmp_path)
    assert result.stdout.splitlines()[:-1] == [f"proj/nb.ipynb:cell 1:2:3: {SIGMOID_MESSAGE}"]


# --------------------------------------------------------------------------
# the masking itself
# --------------------------------------------------------------------------


def _layout(*sources):
    nb = nbmod.parse_notebook(json.dumps(notebook(*(code(s) for s in sources))).encode())
    return nbmod.build_layout(nb)


def test_masking_keeps_every_line_and_restores_it():
    source = "%pylab\nx = (1 +\n%2)\n  !ls\nobj?\ny = 1  # why?\n"
    layout = _layout(source, "%%bash\nls", "z = 2")
    body = layout.text.splitlines()
    assert body[0] == "# torchlint_nb cell 0"
    assert body[1:7] == ["torchlint_nb_magic_0", "x = (1 +", "%2)", "  torchlint_nb_magic_1", "torchlint_nb_magic_2",
                         "y = 1  # why?"]
    assert body[7:] == ["# torchlint_nb cell 1", "z = 2"]  # the %%bash cell is not part of the module
    assert [c.number for c in layout.cells] == [1, 3]
    assert layout.split(layout.text) == [source, "z = 2"]


def test_marker_word_never_collides_with_the_code():
    layout = _layout("torchlint_nb = 1\n%ls")
    assert layout.token == "torchlint_nb_"
    assert layout.split(layout.text) == ["torchlint_nb = 1\n%ls"]


def test_split_refuses_text_whose_cells_were_mixed_up():
    layout = _layout("a = 1", "%ls\nb = 2")
    assert layout.split(layout.text.replace("# torchlint_nb cell 1\n", "")) is None
    assert layout.split(layout.text.replace("torchlint_nb_magic_0", "x")) is None
    swapped = layout.text.replace("cell 0", "cell X").replace("cell 1", "cell 0").replace("cell X", "cell 1")
    assert layout.split(swapped) is None


def test_fixes_that_would_move_code_between_cells_are_not_written(tmp_path, monkeypatch):
    path = save(tmp_path / "nb.ipynb", training_notebook())
    before = path.read_bytes()
    engine = Engine(all_rules())
    real_fix = engine.fix

    def fix_that_loses_a_cell_boundary(text, unsafe=False, **options):
        result = real_fix(text, unsafe, **options)
        result.source = result.source.replace("# torchlint_nb cell 1\n", "")
        return result

    monkeypatch.setattr(engine, "fix", fix_that_loses_a_cell_boundary)
    report = process_file(str(path), engine, argparse.Namespace(fix=True, diff=False, unsafe_fixes=False,
                                                                paths=[str(tmp_path)]))
    assert report.warnings == [f"{path}: fixes not applied: they would move code between cells"]
    assert (report.fixed, report.errors) == (0, [])
    assert [(d.code, d.cell, d.line) for d in report.diagnostics] == [("TL103", 3, 3), ("TL104", 3, 5)]
    assert path.read_bytes() == before
