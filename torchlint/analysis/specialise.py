"""What a call's constant arguments decide in the function it calls.

``loss, RE, KL = self.calculate_loss(x, average=True)`` calls a method whose
``if average: loss = torch.mean(loss)`` makes its result 0-dim on that call
only; ``log_Bernoulli(x, mean)`` leaves ``dim=None`` to its default, and its
``torch.sum(log_bernoulli, dim)`` is then a full reduction. A function's
summary, the same whatever it is passed, meets both ways. Here a call is
reduced to the constants it passes (``True``, ``False``, ``None``, numbers,
strings; a parameter it leaves out takes a constant default, and a def
specialised so passes its parameters' constants on), and an ``if`` of the
function whose test reads only such parameters (``if average:``, ``if not
p:``, ``if mask is None:``, ``if reduction == 'mean':``, ``and``/``or`` of
those) is decided: inference
then evaluates what that call returns with the branch that cannot run left
out and the branch that always runs taken (``Inference.function_return``).
Parameters the function rebinds are not read as constants.
"""

from __future__ import annotations

from typing import Callable, Dict, Mapping, Optional, Sequence, Tuple

import libcst as cst

# A call's arguments as a specialisation reads them: (keyword, or "" for a
# positional argument; the constant passed, or UNKNOWN_ARGUMENT), in order.
Arguments = Tuple[Tuple[str, str], ...]
UNKNOWN_ARGUMENT = "?"
NOT_NONE = "object"  # something that is not None, of unknown truth (a tensor, a module)
# What inference knows an argument holds, where no literal says: a 0-dim tensor (not None,
# of unknown truth). Given for the calls whose result feeds their own argument
# (``total = add_err(total, loss)`` in a loop: ``Inference._self_fed_call``).
TENSOR0 = "tensor0"
# The truth of each constant a test can read.
TRUTH: Mapping[str, bool] = {"True": True, "False": False, "None": False, "0": False, "number": True}


def constant_token(expr: Optional[cst.BaseExpression]) -> str:
    """``True``/``False``/``None``, "0" or "number" for a literal number, "'text'" for a
    string literal (``repr``); UNKNOWN_ARGUMENT else."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return expr.value
    if isinstance(expr, cst.SimpleString):
        text = expr.evaluated_value
        return repr(text) if isinstance(text, str) else UNKNOWN_ARGUMENT
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    if isinstance(expr, (cst.Integer, cst.Float)):
        try:
            return "0" if float(expr.evaluated_value) == 0 else "number"
        except (ValueError, OverflowError):
            return UNKNOWN_ARGUMENT
    return UNKNOWN_ARGUMENT


def call_arguments(call: cst.Call) -> Optional[Arguments]:
    """What ``call`` passes, as constants; None when it unpacks (``*args``, ``**options``)."""
    if any(arg.star for arg in call.args):
        return None
    return tuple((arg.keyword.value if arg.keyword is not None else "", constant_token(arg.value))
                 for arg in call.args)


def spelled(arguments: Arguments) -> str:
    """``arguments`` as part of a question's text: ``(?,average=True)``."""
    return "(" + ",".join(f"{keyword}={token}" if keyword else token for keyword, token in arguments) + ")"


def given_constants(function: cst.FunctionDef, arguments: Arguments, bound: bool) -> Dict[cst.Param, str]:
    """The parameters of ``function`` that a call passing ``arguments`` gives a constant,
    its defaults for those it leaves out included (``bound``: a method called on an
    instance, its first parameter taken). Empty when an argument has no parameter."""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    if bound and not _is_static(function):
        positional = positional[1:]
    by_name = {param.name.value: param for param in (*positional, *params.kwonly_params)}
    passed: Dict[cst.Param, str] = {}
    index = 0
    for keyword, token in arguments:
        if keyword:
            param = by_name.get(keyword)
        else:
            param = positional[index] if index < len(positional) else None
            index += 1
        if param is None:
            return {}  # into ``*args`` or ``**options``: where the others go is unknown
        passed[param] = token
    for param in by_name.values():
        if param not in passed and param.default is not None:
            passed[param] = constant_token(param.default)
    return {param: token for param, token in passed.items() if token != UNKNOWN_ARGUMENT}


def _is_static(function: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
               for d in function.decorators)


def decided(test: cst.BaseExpression, token_of: Callable[[cst.Name], Optional[str]]) -> Optional[bool]:
    """How ``test`` comes out when the parameters ``token_of`` knows hold their
    constants; None when it reads anything else."""
    if isinstance(test, cst.Name):
        token = token_of(test)
        if token is not None and token.startswith("'"):
            return token != "''"  # a string: true unless empty
        return TRUTH.get(token) if token is not None else None
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = decided(test.expression, token_of)
        return None if inner is None else not inner
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name):
        return _compared(test.left, test.comparisons[0], token_of)
    if isinstance(test, cst.BooleanOperation):
        left, right = decided(test.left, token_of), decided(test.right, token_of)
        absorbing = isinstance(test.operator, cst.Or)  # True decides an ``or``, False an ``and``
        if left is absorbing or right is absorbing:
            return absorbing
        return None if left is None or right is None else not absorbing
    return None


def _compared(left: cst.Name, target: cst.ComparisonTarget,
              token_of: Callable[[cst.Name], Optional[str]]) -> Optional[bool]:
    """``p is None`` / ``p is not None``, ``p == 'mean'`` / ``p != 'mean'`` for a parameter holding a constant."""
    token = token_of(left)
    if token is None:
        return None
    comparator, operator = target.comparator, target.operator
    if isinstance(comparator, cst.Name) and comparator.value == "None" and isinstance(operator, (cst.Is, cst.IsNot)):
        return (token == "None") == isinstance(operator, cst.Is)
    if isinstance(comparator, cst.SimpleString) and isinstance(operator, (cst.Equal, cst.NotEqual)):
        other = constant_token(comparator)
        if other == UNKNOWN_ARGUMENT or not (token.startswith("'") or token in ("None", "True", "False")):
            return None  # a number may equal a string's nothing, but 1 == 1.0: leave numbers alone
        return (token == other) == isinstance(operator, cst.Equal)
    return None


def branch_runs(branch: Optional[Tuple[cst.If, bool]], elif_of: Mapping[cst.If, cst.If],
                token_of: Callable[[cst.Name], Optional[str]]) -> Optional[bool]:
    """Does the block ``branch`` describes (an ``if``'s body, True, or its ``else``
    body, False) run whenever the code around the ``if`` does (True), never
    (False), or is that unknown (None)? An ``elif``'s blocks run only when every
    test before it is false."""
    if branch is None:
        return None
    statement, way = branch
    before: Sequence[Optional[bool]] = []
    outer = elif_of.get(statement)
    while outer is not None:
        before = [*before, decided(outer.test, token_of)]
        outer = elif_of.get(outer)
    if any(earlier is True for earlier in before):
        return False
    test = decided(statement.test, token_of)
    if test is None:
        return None
    if test != way:
        return False
    return True if all(earlier is False for earlier in before) else None
