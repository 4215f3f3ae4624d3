"""``# noqa`` exactly as flake8 applies it, so the CLI and the plugin agree.

flake8 searches the reported line for ``# noqa`` (optionally
``# noqa: CODE[,CODE]``, codes matched as prefixes); a line inside a
multi-line string or a backslash continuation shares the comment of the
whole token range. ``# flake8: noqa`` on a line of its own skips the file.

``add_noqa`` writes the comments ``--add-noqa`` adds, on the line where that
search finds them: the last line of the token range.
"""

from __future__ import annotations

import ast
import re
import tokenize
from bisect import bisect_left, bisect_right
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

from torchlint.core.source import SourceFile

NOQA_INLINE = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
NOQA_FILE = re.compile(r"\s*# flake8[:=]\s*noqa", re.IGNORECASE)
_CODE_SEPARATORS = re.compile(r"[,\s]+")


def file_is_exempt(source: SourceFile) -> bool:
    # Most files mention ``noqa`` (``# noqa: F401``); few mention flake8.
    return _mentions(source)[1] and any(NOQA_FILE.match(line) for line in source.lines)


def noqa_index(source: SourceFile) -> "NoqaIndex":
    """The ``# noqa`` index of ``source``, made once per text."""
    return source.memo("noqa", lambda: NoqaIndex(source))


def _mentions_noqa(source: SourceFile) -> bool:
    return _mentions(source)[0]


def _mentions(source: SourceFile) -> Tuple[bool, bool]:
    """Does the text hold ``noqa``, and ``noqa`` and ``flake8``, in any case?
    (One lowering of the text answers both: it costs more than the searches.)"""

    def compute() -> Tuple[bool, bool]:
        lowered = source.text.lower()
        noqa = "noqa" in lowered
        return noqa, noqa and "flake8" in lowered

    return source.memo("mentions_noqa", compute)


class NoqaIndex:
    """Answers "is this code suppressed on this line?" for one source text."""

    def __init__(self, source: SourceFile) -> None:
        # Only what the answers need, never ``source`` itself: the index is
        # kept in the source's memo, and a reference back would make a cycle
        # that holds the file's trees until the garbage collector runs.
        self._lines = source.lines
        self._mentions_noqa = _mentions_noqa(source)
        # Tokenizing the file to find token ranges costs more than the rest
        # of checking a large file: it is done only when a line asked about
        # shares a top-level statement with a line holding ``noqa``.
        self._mapping: Optional[Dict[int, str]] = None if self._mentions_noqa else {}
        self._source = source.text, source.encoding  # not ``source``: see above
        self._statements = _statement_blocks(source.tree, self._lines) if self._mentions_noqa and source.parsed \
            else None
        self._noqa_lines = [number for number, line in enumerate(self._lines, 1) if "noqa" in line.lower()] \
            if self._statements is not None else []

    def suppresses(self, line: int, code: str) -> bool:
        if not self._mentions_noqa:
            return False
        text = self._logical_text(line)
        match = NOQA_INLINE.search(text)
        if match is None:
            return False
        codes = match.group("codes")
        if codes is None:
            return True
        listed = [c for c in _CODE_SEPARATORS.split(codes.strip()) if c]
        return code in listed or code.startswith(tuple(listed))

    def _logical_text(self, line: int) -> str:
        if self._mapping is None and not self._near_noqa(line):
            return self._lines[line - 1] if 1 <= line <= len(self._lines) else ""
        if self._mapping is None:
            self._mapping = _token_line_mapping(SourceFile(*self._source), self._lines)
        text = self._mapping.get(line)
        if text is None and 1 <= line <= len(self._lines):
            text = self._lines[line - 1]
        return text or ""

    def _near_noqa(self, line: int) -> bool:
        """Could the token range holding ``line`` hold ``noqa``? A token range
        lies within a top-level statement (or is one line between them)."""
        if self._statements is None:
            return True  # no tree: only the tokens can tell
        first = last = line
        at = bisect_right(self._statements, (line, _AFTER_ALL)) - 1
        if at >= 0 and self._statements[at][1] >= line:
            first, last = self._statements[at]
        at = bisect_left(self._noqa_lines, first)
        return at < len(self._noqa_lines) and self._noqa_lines[at] <= last


_AFTER_ALL = 1 << 62


def _statement_blocks(tree: ast.Module, lines: List[str]) -> List[Tuple[int, int]]:
    """First and last line of each run of top-level statements sharing lines
    (``a = 1; b = (...)``), decorators included, and the lines a trailing
    backslash joins to the last one: no token range crosses their ends."""
    blocks: List[Tuple[int, int]] = []
    for statement in tree.body:
        decorators = getattr(statement, "decorator_list", None)
        first = decorators[0].lineno if decorators else statement.lineno
        last = statement.end_lineno or statement.lineno
        while last < len(lines) and lines[last - 1].rstrip("\r\n").endswith("\\"):
            last += 1
        if blocks and first <= blocks[-1][1]:
            blocks[-1] = (blocks[-1][0], max(last, blocks[-1][1]))
        else:
            blocks.append((first, last))
    return blocks


def _token_line_mapping(source: SourceFile, lines: List[str]) -> Dict[int, str]:
    """Map each line to the joined text of the token range it belongs to."""
    mapping: Dict[int, str] = {}
    for first, last in _token_ranges(source):
        joined = "".join(lines[first - 1:last])
        for number in range(first, last + 1):
            mapping[number] = joined
    return mapping


def _token_ranges(source: SourceFile) -> Iterator[Tuple[int, int]]:
    """(first, last) line of each token range ending at a NEWLINE or NL token."""
    first, last = None, None
    for token in source.tokens:
        if token.type in (tokenize.ENDMARKER, tokenize.DEDENT):
            continue
        start, end = token.start[0], token.end[0]
        first = start if first is None else min(first, start)
        last = end if last is None else max(last, end)
        if token.type in (tokenize.NL, tokenize.NEWLINE):
            yield first, last
            first, last = None, None


UNUSED_NOQA = "TL001"  # what --report-unused-noqa reports (as ruff's RUF100)


def unused_noqa(source: SourceFile, suppressed: Sequence[Tuple[int, str]], running: Sequence[str]) -> List[Tuple[int, int, str]]:
    """(line, 0-based column, code) of each code in a ``# noqa: ...`` comment
    that suppressed nothing: one naming a rule that ran (``running``, by code
    or prefix) without a finding of it on the comment's statement. Codes of
    other tools and of rules that did not run are left alone, and so is a
    bare ``# noqa`` (it may be there for another flake8 plugin)."""
    if not _mentions_noqa(source):
        return []
    covering: Dict[int, Tuple[int, int]] = {}
    for first, last in _token_ranges(source):
        for number in range(first, last + 1):
            covering[number] = (first, last)
    unused = []
    for token in source.tokens:
        if token.type != tokenize.COMMENT:
            continue
        match = NOQA_INLINE.search(token.string)
        if match is None or match.group("codes") is None:
            continue
        line = token.start[0]
        first, last = covering.get(line, (line, line))
        used = [code for number, code in suppressed if first <= number <= last]
        for code in (c.upper() for c in _CODE_SEPARATORS.split(match.group("codes").strip()) if c):
            if not any(rule.startswith(code) for rule in running):
                continue
            if not any(found.startswith(code) for found in used):
                unused.append((line, token.start[1] + match.start(), code))
    return unused


def add_noqa(source: SourceFile, findings: Sequence[Tuple[int, str]], reason: str = "") -> Tuple[str, int, List[str]]:
    """Add ``# noqa: CODE`` comments so that every (line, code) finding is suppressed.

    ``reason`` (``--add-noqa=REASON``, as in ruff) follows the codes of each
    comment written: ``# noqa: TL214 reviewed in #12``; a comment that already
    says something after its codes keeps its own words.

    The comment goes at the end of the line where flake8's search looks (the
    last line of the finding's token range); codes join an existing
    ``# noqa: X`` comment there. Nothing else in the text changes. Returns the
    new text, the number of lines changed, and a message for each finding
    that could not be suppressed that way (its line is left unchanged).
    """
    lines = source.lines
    target_of: Dict[int, int] = {}
    for first, last in _token_ranges(source):
        for number in range(first, last + 1):
            target_of[number] = last
    comments: Dict[int, Tuple[int, str]] = {}
    for token in source.tokens:
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = (token.start[1], token.string)

    wanted: Dict[int, Set[str]] = {}
    for line, code in findings:
        wanted.setdefault(target_of.get(line, line), set()).add(code)

    new_lines = list(lines)
    for target, codes in wanted.items():
        if not 1 <= target <= len(lines):
            continue
        new_lines[target - 1] = _with_noqa(lines[target - 1], comments.get(target), codes, reason)

    def unsuppressed_targets(text: str) -> Set[int]:
        index = NoqaIndex(SourceFile(text))
        return {target_of.get(line, line) for line, code in findings if not index.suppresses(line, code)}

    # A comment that does not work (another `# noqa` on the line decides,
    # e.g. inside a string) is taken back and reported.
    failed = unsuppressed_targets("".join(new_lines))
    for target in failed:
        new_lines[target - 1] = lines[target - 1]
    failures = [
        f"{line}: cannot add `# noqa: {code}` (another `# noqa` on that line decides)"
        for line, code in findings if target_of.get(line, line) in failed
    ]
    new_source = "".join(new_lines)
    if new_source != source.text and not _same_code(source.text, new_source):  # pragma: no cover - a safety net
        return source.text, 0, [f"{line}: adding `# noqa: {code}` would change the code" for line, code in findings]
    changed = sum(1 for old, new in zip(lines, new_lines) if old != new)
    return new_source, changed, failures


def check_noqa_reason(reason: str) -> None:
    """Raise ValueError for a reason that cannot follow the codes of a
    ``# noqa`` comment: one that reads as another code, or spans lines."""
    if "\n" in reason or "\r" in reason:
        raise ValueError("the reason must be one line")
    if _CODE_START.match(reason):
        raise ValueError(f"the reason {reason!r} starts like a rule code, and would be read as one: "
                         "begin it with a word (e.g. 'reviewed: ...')")


_CODE_START = re.compile(r"[A-Z]+[0-9]+\b", re.IGNORECASE)


def _with_noqa(line: str, comment: Optional[Tuple[int, str]], codes: Set[str], reason: str = "") -> str:
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    if comment is not None:
        column, text = comment
        match = NOQA_INLINE.search(text)
        if match is not None and match.group("codes"):
            listed = [c for c in _CODE_SEPARATORS.split(match.group("codes").strip()) if c]
            new = sorted(c for c in codes if not (c in listed or c.startswith(tuple(listed))))
            if not new:
                return line
            end = column + match.start("codes") + len(match.group("codes").rstrip(", \t"))
            rest = body[end:]
            if reason and not rest.strip():
                rest = " " + reason
            return body[:end] + ", " + ", ".join(new) + rest + ending
    if body.endswith(("  ", "\t")):
        separator = ""
    elif body.endswith(" "):
        separator = " "
    else:
        separator = "  "
    return body + separator + "# noqa: " + ", ".join(sorted(codes)) + (" " + reason if reason else "") + ending


def _same_code(before: str, after: str) -> bool:
    try:
        return ast.dump(ast.parse(before)) == ast.dump(ast.parse(after))
    except (SyntaxError, ValueError):
        return False
