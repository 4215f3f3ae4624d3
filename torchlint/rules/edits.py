"""Small, reusable node rewrites that rules combine into fixes.

Every function here takes the node as already updated by the fixer and
returns its replacement; none of them looks anything up. Argument lists keep
the user's spacing: a removed argument takes its comma with it, an added
keyword copies the separator style of the existing arguments.
"""

from __future__ import annotations

from typing import Callable, Iterable, List, Optional, Sequence, Tuple, Union

import libcst as cst

from torchlint.core.diagnostic import Edit


def rename_attr(new_attr: str) -> Callable[[cst.CSTNode], cst.CSTNode]:
    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Attribute)
        return node.with_changes(attr=node.attr.with_changes(value=new_attr))

    return apply


def rename_name(new_name: str) -> Callable[[cst.CSTNode], cst.CSTNode]:
    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Name)
        return node.with_changes(value=new_name)

    return apply


def replace_with_expression(code: str) -> Callable[[cst.CSTNode], cst.CSTNode]:
    """Replace an expression by ``code``, keeping its parentheses."""

    def apply(node: cst.CSTNode) -> cst.CSTNode:
        new = cst.parse_expression(code)
        lpar = getattr(node, "lpar", ())
        rpar = getattr(node, "rpar", ())
        return new.with_changes(lpar=lpar, rpar=rpar) if lpar else new

    return apply


def set_args(call: cst.Call, args: Sequence[cst.Arg]) -> cst.Call:
    """Replace the argument list, fixing up commas so the call stays valid.

    What followed the original last argument (its trailing comma, the line
    break before ``)``) stays at the end; an argument that is no longer last
    takes the separator the call already uses between its arguments.
    """
    args = list(args)
    fixed: List[cst.Arg] = []
    original_last = call.args[-1] if call.args else None
    for index, arg in enumerate(args):
        last = index == len(args) - 1
        was_last = original_last is not None and arg.value is original_last.value
        if last:
            # Keep a trailing comma only if the original last argument had one.
            keep = original_last is not None and isinstance(original_last.comma, cst.Comma)
            changes = {"comma": original_last.comma if keep else cst.MaybeSentinel.DEFAULT}
            if original_last is not None and not was_last:
                changes["whitespace_after_arg"] = original_last.whitespace_after_arg
            arg = arg.with_changes(**changes)
        elif was_last:
            arg = arg.with_changes(comma=_separator(call), whitespace_after_arg=cst.SimpleWhitespace(""))
        elif not isinstance(arg.comma, cst.Comma):
            arg = arg.with_changes(comma=_separator(call))
        fixed.append(arg)
    return call.with_changes(args=fixed)


def _separator(call: cst.Call) -> cst.Comma:
    """The separator the call uses between its arguments, its line breaks without its comments
    (``f(x,  # why x`` must not put ``# why x`` after every argument added)."""
    for arg in call.args[:-1]:
        if isinstance(arg.comma, cst.Comma):
            return arg.comma.with_changes(whitespace_after=_without_comments(arg.comma.whitespace_after))
    if isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        # One argument on its own line: put the others on lines like it.
        return cst.Comma(whitespace_after=_without_comments(call.whitespace_before_args))
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _without_comments(whitespace: cst.BaseParenthesizableWhitespace) -> cst.BaseParenthesizableWhitespace:
    if not isinstance(whitespace, cst.ParenthesizedWhitespace):
        return whitespace
    return whitespace.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])


def keyword_arg(name: str, value: Union[str, cst.BaseExpression]) -> cst.Arg:
    """``name=value``; ``value`` is source code or an expression node."""
    return cst.Arg(
        value=cst.parse_expression(value) if isinstance(value, str) else value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def add_keywords(keywords: Sequence[Tuple[str, str]]) -> Callable[[cst.CSTNode], cst.CSTNode]:
    """Append ``name=value`` keywords (value given as source code)."""

    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        args = list(node.args) + [keyword_arg(name, value) for name, value in keywords]
        return set_args(node, _before_double_star(args))

    return apply


def _before_double_star(args: List[cst.Arg]) -> List[cst.Arg]:
    """Keep ``**kwargs`` last: Python allows keywords after it, but it reads badly."""
    plain = [a for a in args if a.star != "**"]
    stars = [a for a in args if a.star == "**"]
    return plain + stars


def without_side_effects(expr: cst.BaseExpression) -> bool:
    """Can ``expr`` be dropped from the program without changing what it does? Names,
    literals, attribute reads and operators on such; not a call, ``:=``, ``await`` or
    ``yield`` anywhere in it (``volatile=next(it)`` advances the iterator)."""
    if isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString,
                         cst.ConcatenatedString, cst.Ellipsis)):
        return True
    if isinstance(expr, cst.Attribute):
        return without_side_effects(expr.value)
    if isinstance(expr, cst.UnaryOperation):
        return without_side_effects(expr.expression)
    if isinstance(expr, (cst.BinaryOperation, cst.BooleanOperation)):
        return without_side_effects(expr.left) and without_side_effects(expr.right)
    if isinstance(expr, cst.Comparison):
        return without_side_effects(expr.left) and all(without_side_effects(c.comparator) for c in expr.comparisons)
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return all(isinstance(e, cst.Element) and without_side_effects(e.value) for e in expr.elements)
    if isinstance(expr, cst.IfExp):
        return all(without_side_effects(part) for part in (expr.test, expr.body, expr.orelse))
    return False


# Expressions that may run code with effects when evaluated (a call, an
# assignment expression, a suspension) or that define code run later.
_RUNS_CODE = (cst.Call, cst.NamedExpr, cst.Await, cst.Yield, cst.Lambda, cst.ListComp, cst.SetComp,
              cst.DictComp, cst.GeneratorExp)


def runs_no_code(expr: cst.BaseExpression) -> bool:
    """Is ``expr`` made of reads, literals and operators only (``-group['lr']``,
    ``exp_avg / denom``), so that evaluating it changes nothing another argument
    reads? Unlike ``without_side_effects``, subscripts count as reads."""
    found: List[bool] = []

    class _Finder(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, _RUNS_CODE):
                found.append(True)
            return not found

    expr.visit(_Finder())
    return not found


def is_number_literal(expr: cst.BaseExpression) -> bool:
    """A number spelled in the code, or arithmetic on such (``1 - 0.9``, ``-1e-3``)."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not):
        return is_number_literal(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        return is_number_literal(expr.left) and is_number_literal(expr.right)
    return False


def reorder_keeps_meaning(moved: Sequence[cst.BaseExpression], passed: Sequence[cst.BaseExpression]) -> bool:
    """Can the arguments ``moved`` be evaluated after ``passed`` instead of before
    them (``f(a, b)`` -> ``f(b, x=a)``) and give the same values? Yes when the moved
    ones are numbers spelled in the code, or when no argument runs any code."""
    return all(is_number_literal(e) for e in moved) or all(runs_no_code(e) for e in (*moved, *passed))


def move_to_keywords(positional: Sequence[int], keywords: Sequence[Tuple[str, int]]) -> Callable[[cst.CSTNode], cst.CSTNode]:
    """Rewrite a call's leading positional arguments: keep those at ``positional``
    (indices into the old argument list, in their new order), then pass each
    ``(name, index)`` of ``keywords`` as ``name=``; the arguments after them (keywords,
    such as ``out=``) stay last."""
    count = len(positional) + len(keywords)

    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        old = list(node.args)
        moved = [old[i] for i in positional] + [keyword_arg(name, old[i].value) for name, i in keywords]
        return set_args(node, moved + old[count:])

    return apply


def remove_keywords(names: Iterable[str]) -> Callable[[cst.CSTNode], cst.CSTNode]:
    names = frozenset(names)

    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        kept = [a for a in node.args if not (a.keyword is not None and a.keyword.value in names)]
        return set_args(node, kept)

    return apply


_ATOMS = (
    cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString,
    cst.ConcatenatedString, cst.FormattedString, cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp,
    cst.SetComp, cst.GeneratorExp, cst.Ellipsis,
)


def parenthesized_if_needed(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` wrapped in parentheses unless it is an atom that can take ``.attr`` or an
    operator and stands on its own lines (an argument continued over lines inside the
    call's brackets, ``Variable(\n    t\n    .float())``, needs brackets of its own)."""
    if expr.lpar or (isinstance(expr, _ATOMS) and not _spans_lines_bare(expr)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _spans_lines_bare(expr: cst.BaseExpression) -> bool:
    """Does ``expr``'s code break a line outside any bracket of its own (valid only
    inside enclosing brackets)?"""
    code = expression_code(expr)
    if "\n" not in code:
        return False
    try:
        compile(code, "<expression>", "eval")
    except SyntaxError:
        return True
    return False


def moved_left(expr: cst.BaseExpression, width: int) -> cst.BaseExpression:
    """``expr`` whose first line moves ``width`` columns left (``Variable(t.view(a,\n
    b))`` unwrapped): its continuation lines move with it where they were aligned
    under it, every one at least four columns in from where the first line now
    starts, so they stay aligned; a hanging indent stays where it is."""
    finder = _ContinuationLines()
    expr.visit(finder)
    spaces = finder.found
    if width <= 0 or not spaces or any(" " * len(s.last_line.value) != s.last_line.value for s in spaces) \
            or min(len(space.last_line.value) for space in spaces) - width < 4:
        return expr
    return expr.visit(_MovedLeft(width))


class _ContinuationLines(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found: List[cst.ParenthesizedWhitespace] = []

    def visit_ParenthesizedWhitespace(self, node: cst.ParenthesizedWhitespace) -> None:
        self.found.append(node)


class _MovedLeft(cst.CSTTransformer):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.width = width

    def leave_ParenthesizedWhitespace(self, original_node: cst.ParenthesizedWhitespace,
                                      updated_node: cst.ParenthesizedWhitespace) -> cst.ParenthesizedWhitespace:
        return updated_node.with_changes(last_line=cst.SimpleWhitespace(updated_node.last_line.value[self.width:]))


def expression_code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def remove_import_alias(alias_name: str) -> Callable[[cst.CSTNode], cst.CSTNode]:
    """Drop one alias from a ``from X import a, b`` (never the only one)."""

    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar)
        kept = [a for a in node.names if cst.helpers.get_full_name_for_node(a.name) != alias_name]
        if not kept:
            raise ValueError("cannot remove the only imported name")
        last = kept[-1]
        original_last = node.names[-1]
        trailing = original_last.comma if node.rpar is not None else cst.MaybeSentinel.DEFAULT
        kept[-1] = last.with_changes(comma=trailing)
        return node.with_changes(names=kept)

    return apply


def edits_for(node_edits: Iterable[Tuple[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]]]) -> List[Edit]:
    return [Edit(node, fn) for node, fn in node_edits]


def literal_value(expr: cst.BaseExpression) -> Tuple[bool, object]:
    """(True, value) for True/False/None and simple strings; (False, None) otherwise."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return True, {"True": True, "False": False, "None": None}[expr.value]
    if isinstance(expr, cst.SimpleString):
        return True, expr.evaluated_value
    return False, None


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def argument(call: cst.Call, position: int, name: str) -> Optional[cst.BaseExpression]:
    """The value passed as parameter ``name`` (the ``position``-th positional one), by
    keyword or by position; None when it is not passed, or may be inside ``*args``."""
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == name:
                return arg.value
        elif index == position:
            return arg.value
    return None


def passes_argument(call: cst.Call, name: str, positional: Sequence[str]) -> bool:
    """Is parameter ``name`` passed, by keyword or by position (or maybe inside ``*args``)?
    ``positional`` names the callee's positional parameters in order."""
    if keyword(call, name) is not None:
        return True
    index = positional.index(name) if name in positional else -1
    for position, arg in enumerate(call.args):
        if arg.keyword is not None:
            break
        if arg.star == "*":
            return True  # may be inside *args
        if position == index:
            return True
    return False


def has_star_args(call: cst.Call) -> bool:
    return any(arg.star in ("*", "**") for arg in call.args)


def comments_at(line: cst.SimpleStatementLine) -> List[str]:
    """The comments at the end of ``line`` and in the lines directly above it (no blank line
    between): what its author wrote about it."""
    comments = []
    if line.trailing_whitespace.comment is not None:
        comments.append(line.trailing_whitespace.comment.value)
    for leading in reversed(line.leading_lines):
        if leading.comment is None:
            break
        comments.append(leading.comment.value)
    return comments
