"""``# noqa`` handling: unit tests of torchlint.core.noqa against flake8's rules,
and end-to-end checks that the CLI and flake8 suppress the same findings.

flake8's semantics (flake8/defaults.py, violation.py, processor.py): the
reported line (or, for a line inside a multi-line token range such as a
triple-quoted string or a backslash continuation, the whole range) is searched
for ``# noqa``, case-insensitively; ``# noqa: CODES`` lists codes matched as
prefixes (case-sensitively); ``# noqa:`` followed by no valid code is a
blanket noqa. ``# flake8: noqa`` at the start of a line skips the whole file.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import run_flake8, run_torchlint

from torchlint.core.noqa import NoqaIndex, file_is_exempt
from torchlint.core.source import SourceFile

HEADER = "import torch\nimport torch.nn.functional as F\nx = torch.zeros(1, 1, 2, 2)\n"
UPSAMPLE = "F.upsample(x, scale_factor=2)"
TL103_MESSAGE = "TL103 `upsample` is deprecated; use `interpolate(...)`"


def is_exempt(text: str) -> bool:
    return file_is_exempt(SourceFile(text))


class _BothWays:
    """A ``NoqaIndex`` made from the text alone (it tokenizes the file) and
    one made after Python's tree (it tokenizes only when a line asked about
    shares a top-level statement with ``noqa``): every answer must agree."""

    def __init__(self, text: str) -> None:
        self.alone = NoqaIndex(SourceFile(text))
        parsed = SourceFile(text)
        try:
            parsed.tree
        except Exception:  # untokenizable texts: the tree's way is not taken
            parsed = SourceFile(text)
        self.with_tree = NoqaIndex(parsed)

    def suppresses(self, line: int, code: str) -> bool:
        answer = self.alone.suppresses(line, code)
        assert self.with_tree.suppresses(line, code) == answer, (line, code)
        return answer


def index_of(text: str) -> "_BothWays":
    return _BothWays(text)


def index(*lines: str) -> "_BothWays":
    return index_of("".join(line + "\n" for line in lines))


# --------------------------------------------------------------------------
# NoqaIndex: the comment on the reported line
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "comment, code, suppressed",
    [
        ("# noqa", "TL103", True),
        ("# noqa", "TL201", True),
        ("# NOQA", "TL103", True),
        ("# NoQa", "TL103", True),
        ("# noqa: TL103", "TL103", True),
        ("# noqa:TL103", "TL103", True),
        ("# noqa: TL103", "TL101", False),
        ("# NOQA: TL103", "TL103", True),
        ("# noqa: TL1", "TL103", True),
        ("# noqa: TL1", "TL106", True),
        ("# noqa: TL1", "TL201", False),
        ("# noqa: TL10", "TL103", True),
        ("# noqa: TL11", "TL103", False),
        ("# noqa:TL101,TL2", "TL202", True),
        ("# noqa:TL101,TL2", "TL101", True),
        ("# noqa:TL101,TL2", "TL103", False),
        ("# noqa: TL101, TL103", "TL103", True),
        ("# noqa: TL101 TL103", "TL103", True),
        ("# noqa: E501", "TL103", False),
        ("# noqa: E501,TL103", "TL103", True),
        ("# noqa: E501, W291", "TL103", False),
        ("# noqa: TL103 -- the old API is needed here", "TL103", True),
        ("# noqa: TL103 -- the old API is needed here", "TL201", False),
        # flake8's code pattern needs letters then digits: anything else is a blanket noqa
        ("# noqa: TL", "TL103", True),
        ("# noqa: TL", "TL201", True),
        ("# noqa:", "TL103", True),
        ("# noqa : TL201", "TL103", True),
        ("# noqa - TL201", "TL103", True),
        # codes are compared case-sensitively, as flake8 does
        ("# noqa: tl103", "TL103", False),
        # "# noqa" must be spelled with one space
        ("#noqa", "TL103", False),
        ("#  noqa", "TL103", False),
        ("# no qa", "TL103", False),
        # anywhere in the line, even after another comment
        ("# type: ignore  # noqa: TL103", "TL103", True),
        ("# see issue #12 # noqa", "TL103", True),
    ],
)
def test_inline_noqa_like_flake8(comment, code, suppressed):
    noqa = index("import torch", f"y = t.cuda()  {comment}", "z = 1")
    assert noqa.suppresses(2, code) is suppressed
    # only that line
    assert noqa.suppresses(1, code) is False
    assert noqa.suppresses(3, code) is False


def test_noqa_text_inside_a_string_counts_as_flake8_searches_the_raw_line():
    noqa = index("import torch", 'y = t.cuda(); s = "# noqa"')
    assert noqa.suppresses(2, "TL201")


def test_lines_out_of_range_and_sources_without_noqa():
    noqa = index("x = 1  # noqa")
    assert noqa.suppresses(1, "TL101")
    assert not noqa.suppresses(0, "TL101")
    assert not noqa.suppresses(2, "TL101")
    assert not noqa.suppresses(99, "TL101")
    assert not index("x = 1", "y = 2  # a comment").suppresses(2, "TL101")
    assert not index_of("").suppresses(1, "TL101")


def test_crlf_source():
    noqa = index_of("import torch\r\ny = 1  # noqa: TL103\r\nz = 2\r\n")
    assert noqa.suppresses(2, "TL103")
    assert not noqa.suppresses(3, "TL103")


# --------------------------------------------------------------------------
# NoqaIndex: multi-line token ranges share the comment of their last line
# --------------------------------------------------------------------------


def test_multiline_string_shares_the_comment_of_its_last_line():
    noqa = index(
        "import torch",  # 1
        'y = t.cuda() if """',  # 2
        "some text",  # 3
        '""" else None  # noqa: TL201',  # 4
        "z = t.cuda()",  # 5
    )
    for line in (2, 3, 4):
        assert noqa.suppresses(line, "TL201"), line
        assert not noqa.suppresses(line, "TL103"), line
    assert not noqa.suppresses(1, "TL201")
    assert not noqa.suppresses(5, "TL201")


def test_noqa_inside_a_multiline_string_covers_the_whole_range():
    # flake8 searches the joined physical lines, string contents included
    noqa = index(
        'doc = """  # noqa: TL103',  # 1
        '"""; y = 2',  # 2
        "z = 3",  # 3
    )
    assert noqa.suppresses(1, "TL103")
    assert noqa.suppresses(2, "TL103")
    assert not noqa.suppresses(3, "TL103")


def test_backslash_continuation_shares_the_comment():
    noqa = index(
        "y = 1 + \\",  # 1
        "    2  # noqa",  # 2
        "z = 3",  # 3
    )
    assert noqa.suppresses(1, "TL101")
    assert noqa.suppresses(2, "TL101")
    assert not noqa.suppresses(3, "TL101")


def test_bracketed_continuation_lines_do_not_share_the_comment():
    # inside brackets each physical line ends with its own NL token, so
    # flake8 does not extend a trailing "# noqa" to the opening line
    noqa = index(
        "y = F.upsample(",  # 1
        "    x,",  # 2
        ")  # noqa",  # 3
    )
    assert not noqa.suppresses(1, "TL103")
    assert not noqa.suppresses(2, "TL103")
    assert noqa.suppresses(3, "TL103")


def test_untokenizable_source_falls_back_to_the_physical_line():
    noqa = index(
        "y = t.cuda()  # noqa: TL201",  # 1
        'z = """never closed',  # 2
        "w = 1  # noqa",  # 3
    )
    assert noqa.suppresses(1, "TL201")
    assert not noqa.suppresses(1, "TL103")
    assert noqa.suppresses(3, "TL103")


LINE_BREAKS_PYTHON_IGNORES = {
    "form-feed": "\x0c",
    "file-separator": "\x1c",
    "next-line": "\x85",
    "line-separator": "\u2028",
}


@pytest.mark.parametrize("char", LINE_BREAKS_PYTHON_IGNORES.values(), ids=LINE_BREAKS_PYTHON_IGNORES.keys())
def test_line_numbers_follow_python_not_str_splitlines(char):
    # str.splitlines() also breaks at \x0c, \x1c, \x85, \u2028 ...; Python's
    # tokenizer, libcst and flake8 do not, so neither may the noqa lookup.
    noqa = index_of(
        "import torch\n"  # 1
        f"# a page break {char} in a comment\n"  # 2
        "y = t.cuda()  # noqa\n"  # 3
        "z = t.cuda()\n"  # 4
    )
    assert noqa.suppresses(3, "TL201")
    assert not noqa.suppresses(4, "TL201")
    assert not noqa.suppresses(2, "TL201")


def test_a_form_feed_line_does_not_shift_line_numbers():
    noqa = index_of("import torch\n\x0c\ny = t.cuda()  # noqa\nz = t.cuda()\n")
    assert noqa.suppresses(3, "TL201")
    assert not noqa.suppresses(4, "TL201")


# --------------------------------------------------------------------------
# file_is_exempt: "# flake8: noqa" on a line of its own
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, exempt",
    [
        ("# flake8: noqa", True),
        ("    # flake8: noqa", True),
        ("\t# flake8: noqa", True),
        ("# FLAKE8: NOQA", True),
        ("# Flake8: NoQA", True),
        ("# flake8:noqa", True),
        ("# flake8=noqa", True),
        ("# flake8:   noqa", True),
        ("# flake8: noqa: E501", True),  # flake8 skips the file here too
        ("x = 1  # flake8: noqa", False),  # on a code line: not a file-level noqa
        ("x = 1  # FLAKE8: NOQA", False),
        ("#flake8: noqa", False),
        ("# flake8 noqa", False),
        ("# noqa", False),
        ("# flake8: qa", False),
    ],
)
def test_file_is_exempt_like_flake8(line, exempt):
    source = f"import torch\n{line}\ny = t.cuda()\n"
    assert is_exempt(source) is exempt
    assert is_exempt(source.replace("\n", "\r\n")) is exempt


def test_file_level_noqa_anywhere_in_the_file():
    assert is_exempt("import torch\ny = 1\n\n# flake8: noqa\n")
    assert is_exempt("# flake8: noqa")
    assert not is_exempt("import torch\ny = 1\n")
    assert not is_exempt("")


@pytest.mark.parametrize("char", LINE_BREAKS_PYTHON_IGNORES.values(), ids=LINE_BREAKS_PYTHON_IGNORES.keys())
def test_file_level_noqa_after_a_character_python_does_not_break_lines_at(char):
    # For Python and flake8 this is one code line, so the file is not exempt.
    assert not is_exempt(f"import torch\nx = 1  {char}# flake8: noqa\n")
    assert not is_exempt(f'import torch\ns = "a{char}# flake8: noqa"\n')


# --------------------------------------------------------------------------
# end to end: the CLI and flake8 suppress the same findings
# --------------------------------------------------------------------------

PARITY_FILES = {
    # a finding on the first line of a multi-line string range; the noqa
    # ends the range two lines below (suppressed), a second finding follows
    "multiline_string.py": (
        HEADER
        + f'y = {UPSAMPLE} if """\n'  # 4
        + "text\n"  # 5
        + '""" else None  # noqa: TL103\n'  # 6
        + f"z = {UPSAMPLE}\n",  # 7
        [7],
    ),
    # the noqa is inside the string of the range
    "noqa_in_string.py": (
        HEADER
        + f'y = {UPSAMPLE}, """ # noqa\n'  # 4
        + '"""\n'  # 5
        + f'z = {UPSAMPLE}, """\n'  # 6
        + '# noqa"""\n'  # 7
        + f'w = {UPSAMPLE}, """\n'  # 8
        + '"""\n',  # 9
        [8],
    ),
    # a wrong code on the last line of the range does not suppress
    "multiline_wrong_code.py": (
        HEADER + f'y = {UPSAMPLE} if """\n"""  else None  # noqa: TL201\n',
        [4],
    ),
    "continuation.py": (
        HEADER + f"y = {UPSAMPLE} + \\\n    1  # noqa: TL1\nz = {UPSAMPLE}\n",
        [6],
    ),
    "bracketed.py": (
        HEADER + "y = F.upsample(\n    x,\n)  # noqa\n",
        [4],
    ),
    "form_feed.py": (
        HEADER + "\x0c\n" + f"y = {UPSAMPLE}  # noqa\n" + f"z = {UPSAMPLE}\n",  # 5, 6
        [6],
    ),
    "form_feed_in_comment.py": (
        HEADER + "# page \x0c break\n" + f"y = {UPSAMPLE}  # noqa\n" + f"z = {UPSAMPLE}\n",  # 5, 6
        [6],
    ),
    "exempt.py": ("# flake8: noqa\n" + HEADER + f"y = {UPSAMPLE}\n", []),
    "exempt_indented.py": (HEADER + "if True:\n    # FLAKE8: NOQA\n    pass\n" + f"y = {UPSAMPLE}\n", []),
    "exempt_on_code_line.py": (HEADER + f"y = {UPSAMPLE}  # flake8: noqa\n", [4]),
    "exempt_after_form_feed.py": (HEADER + "w = 1  \x0c# flake8: noqa\n" + f"y = {UPSAMPLE}\n", [5]),
}


@pytest.fixture(scope="module")
def parity_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("noqa-parity")
    for name, (source, _) in PARITY_FILES.items():
        (d / name).write_bytes(source.encode())
    names = sorted(PARITY_FILES)
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        cli = pool.submit(run_torchlint, names, d)
        flake8 = pool.submit(run_flake8, ["--select", "TL", *names], d)
        return cli.result(), flake8.result()


def _lines_for(stdout: str, name: str):
    return [line for line in stdout.splitlines() if line.startswith(f"{name}:")]


@pytest.mark.parametrize("name", sorted(PARITY_FILES))
def test_flake8_suppresses_exactly_what_it_documents(parity_runs, name):
    source, reported = PARITY_FILES[name]
    _, flake8 = parity_runs
    expected = [f"{name}:{line}:{source.split(chr(10))[line - 1].index('upsample') + 1}: {TL103_MESSAGE}"
                for line in reported]
    assert _lines_for(flake8.stdout, name) == expected


@pytest.mark.parametrize("name", sorted(PARITY_FILES))
def test_cli_suppresses_the_same_findings_as_flake8(parity_runs, name):
    cli, flake8 = parity_runs
    assert cli.stderr == ""
    assert _lines_for(cli.stdout, name) == _lines_for(flake8.stdout, name)


def test_a_file_is_tokenized_only_for_a_line_sharing_a_statement_with_noqa(monkeypatch) -> None:
    import torchlint.core.noqa as noqa_module

    tokenized = []
    real = noqa_module._token_line_mapping
    monkeypatch.setattr(noqa_module, "_token_line_mapping", lambda *a: tokenized.append(1) or real(*a))
    source = SourceFile("import os  # noqa: F401,TL101\n\n\ndef f(x):\n    y = (x +\n         1)\n    return y\n")
    source.tree
    noqa = NoqaIndex(source)
    assert not noqa.suppresses(5, "TL101") and not noqa.suppresses(6, "TL101")
    assert tokenized == []
    assert noqa.suppresses(1, "TL101")
    assert tokenized == [1]
