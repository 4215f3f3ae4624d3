"""Hypothesis strategies for torch-flavoured Python source.

``hypothesmith`` writes syntactically valid Python but almost never a torch
call, so the rules would hardly run. ``torch_programs()`` builds programs from
what the rules themselves say they flag and accept (every rule's
``flagged`` examples and ``accepted`` snippets): it picks a few snippets,
keeps their imports at the top, shuffles the other statements, renames local
variables consistently, wraps runs of statements in functions, methods,
classes, loops, ``with``/``try``/``if`` blocks, and sprinkles comments, blank
lines and ``# noqa``. Only programs CPython compiles are produced.
"""

from __future__ import annotations

import ast
import keyword
import warnings
from typing import Dict, List, Sequence, Set

import libcst as cst
from hypothesis import assume
from hypothesis import strategies as st

from torchlint.rules import all_rules

IMPORTS = (cst.Import, cst.ImportFrom)


def snippets() -> List[str]:
    """Every flagged example and accepted snippet of every rule, opt-in rules included."""
    out: List[str] = []
    for rule in all_rules():
        out.extend(example.code for example in rule.flagged if example.python3)  # TL115: torch-era syntax
        out.extend(rule.accepted)
    return list(dict.fromkeys(out))


def compiles(source: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(source, "<fuzz>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


_SNIPPETS = snippets()
_PARSED: Dict[str, cst.Module] = {}


def _module(code: str) -> cst.Module:
    if code not in _PARSED:
        _PARSED[code] = cst.parse_module(code)
    return _PARSED[code]


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(isinstance(s, IMPORTS) for s in statement.body)


def _is_future(statement: cst.CSTNode) -> bool:
    return _is_import_line(statement) and any(
        isinstance(s, cst.ImportFrom) and isinstance(s.module, cst.Name) and s.module.value == "__future__"
        for s in statement.body
    )


class _Bound(cst.CSTVisitor):
    """Names a snippet binds locally (assignment targets, defs, parameters, loop and with targets)."""

    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_Import(self, node: cst.Import) -> bool:
        return False  # imported names keep their spelling: they are what the rules resolve

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def _targets(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Name):
            self.names.add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                self._targets(element.value)
        elif isinstance(node, cst.StarredElement):
            self._targets(node.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._targets(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._targets(node.name)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.names.add(node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.names.add(node.name.value)

    def visit_Param(self, node: cst.Param) -> None:
        self.names.add(node.name.value)


class _Rename(cst.CSTTransformer):
    """Rename variables (never attributes, keywords or imported module paths)."""

    def __init__(self, mapping: Dict[str, str]) -> None:
        super().__init__()
        self.mapping = mapping

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)  # only the receiver: ``x.attr`` keeps ``attr``
        return False

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(value=original.value.visit(self))

    def visit_Arg(self, node: cst.Arg) -> bool:
        return True

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)  # ``f(dim=1)`` keeps ``dim``

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        new = self.mapping.get(updated.value)
        return updated.with_changes(value=new) if new else updated


IDENTIFIERS = st.from_regex(r"\A[a-z_][a-z0-9_]{0,7}\Z").filter(
    lambda s: not keyword.iskeyword(s) and not keyword.issoftkeyword(s))

WRAPPERS = ("def", "method", "class", "for", "while", "with", "if", "try", "async")


def _block(statements: Sequence[cst.BaseStatement]) -> cst.IndentedBlock:
    return cst.IndentedBlock(body=list(statements) or [cst.SimpleStatementLine([cst.Pass()])])


def _wrap(kind: str, statements: Sequence[cst.BaseStatement], n: int) -> cst.BaseStatement:
    body = _block(statements)
    if kind == "def":
        return cst.FunctionDef(cst.Name(f"fn_{n}"), cst.Parameters(), body)
    if kind == "async":
        return cst.FunctionDef(cst.Name(f"afn_{n}"), cst.Parameters(), body, asynchronous=cst.Asynchronous())
    if kind == "method":
        method = cst.FunctionDef(cst.Name("forward"), cst.Parameters([cst.Param(cst.Name("self"))]), body)
        base = cst.Arg(cst.parse_expression("nn.Module"))
        return cst.ClassDef(cst.Name(f"Net{n}"), _block([method]), bases=[base])
    if kind == "class":
        return cst.ClassDef(cst.Name(f"Box{n}"), body)
    if kind == "for":
        return cst.For(cst.Name(f"step_{n}"), cst.parse_expression("range(3)"), body)
    if kind == "while":
        return cst.While(cst.parse_expression("flag"), body)
    if kind == "with":
        item = cst.WithItem(cst.parse_expression("torch.no_grad()"))
        return cst.With([item], body)
    if kind == "if":
        return cst.If(cst.parse_expression("cond"), body, orelse=cst.Else(_block([cst.SimpleStatementLine([cst.Pass()])])))
    if kind == "try":
        handler = cst.ExceptHandler(_block([cst.SimpleStatementLine([cst.Pass()])]),
                                    type=cst.Name("Exception"))
        return cst.Try(body, handlers=[handler])
    raise ValueError(kind)


@st.composite
def torch_programs(draw, max_snippets: int = 4) -> str:
    """A valid program made of rules' examples, shuffled, renamed and wrapped."""
    chosen = draw(st.lists(st.sampled_from(_SNIPPETS), min_size=1, max_size=max_snippets, unique=True))
    futures: List[cst.BaseStatement] = []
    imports: List[cst.BaseStatement] = []
    others: List[cst.BaseStatement] = []
    bound: Set[str] = set()
    for code in chosen:
        module = _module(code)
        visitor = _Bound()
        module.visit(visitor)
        bound |= visitor.names
        for statement in module.body:
            if _is_future(statement):
                futures.append(statement)
            elif _is_import_line(statement) and draw(st.integers(0, 9)) > 0:
                imports.append(statement)  # usually hoisted; sometimes left in place
            else:
                others.append(statement)
    # shuffle the statements (or keep the snippets' order)
    if draw(st.booleans()):
        others = draw(st.permutations(others))
    # rename some local variables consistently
    renamable = sorted(bound - {"self", "cls", "torch", "nn", "F", "np"})
    if renamable:
        old = draw(st.lists(st.sampled_from(renamable), unique=True, max_size=4))
        new = draw(st.lists(IDENTIFIERS, min_size=len(old), max_size=len(old), unique=True))
        mapping = dict(zip(old, new))
        if mapping:
            others = [statement.visit(_Rename(mapping)) for statement in others]
    # wrap runs of statements in blocks (nested up to 3 deep)
    for n in range(draw(st.integers(0, 3))):
        if not others:
            break
        start = draw(st.integers(0, len(others) - 1))
        stop = draw(st.integers(start + 1, len(others)))
        kind = draw(st.sampled_from(WRAPPERS))
        others = [*others[:start], _wrap(kind, others[start:stop], n), *others[stop:]]
    # comments, blank lines and noqa markers
    decorated: List[cst.BaseStatement] = []
    for statement in others:
        extra = draw(st.sampled_from(["", "", "", "comment", "blank", "noqa"]))
        if extra == "comment":
            statement = statement.with_changes(
                leading_lines=[*statement.leading_lines, cst.EmptyLine(comment=cst.Comment("# torch.load(x)  F.upsample"))])
        elif extra == "blank":
            statement = statement.with_changes(leading_lines=[cst.EmptyLine(), *statement.leading_lines])
        elif extra == "noqa" and isinstance(statement, cst.SimpleStatementLine):
            statement = statement.with_changes(trailing_whitespace=cst.TrailingWhitespace(
                whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment("# noqa: TL1")))
        decorated.append(statement)
    source = cst.Module(body=[*futures, *dict((id(s), s) for s in imports).values(), *decorated]).code
    assume(compiles(source))
    return source


def with_torch_prelude(source: str) -> str:
    """``source`` after torch imports, so that the rules analyse it (when still valid)."""
    prelude = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nimport numpy as np\n"
    combined = prelude + source
    return combined if compiles(combined) else source


def is_valid(source: str) -> bool:
    """What Python's parser accepts (compile() may still reject, e.g. ``return`` outside a function)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True
