"""Which expressions hold whole numbers only, as the code shows it.

An expression is *integer-valued* when every number it holds is an integer:
``torch.arange(n)``, differences and absolute values of such tensors, sizes
(``len(x)``, ``x.shape[0]``), parameters annotated ``int`` or ``Tuple[int,
int]``, ``torch.floor(...)``. Casting to a float dtype keeps the values whole.
TL301 asks this: ``log(1 + x)`` loses nothing when ``x`` is a whole number
(``1 + x`` is exact and ``x`` is 0 or at least 1 in size), so ``log1p`` gains
nothing there.

Conservative: what the code does not show is not integer-valued. A name's
value is followed through the statements of its function (``if``/``else``
arms apart, loops and ``try`` joined), including in-place updates of it
(``x /= 2``, ``x[:, 0] /= n``, ``x.div_(...)``). A project function is
integer-valued when, given integer-valued arguments, all its ``return``
statements are (``ProjectLink.returns_integer_valued``).
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import libcst as cst

from torchlint.analysis.inference import Inference
from torchlint.analysis.names import Resolver
from torchlint.knowledge import torch_api as api

# How many names deep a value is followed before giving up (unknown: not integer-valued).
MAX_DEPTH = 8

# torch functions whose result is whole whatever their input (roundings, signs, sizes, indices, counts).
_WHOLE_RESULT = frozenset(
    "torch." + name for name in (
        "floor", "ceil", "trunc", "sign", "sgn", "argmax", "argmin", "argsort", "nonzero", "count_nonzero",
        "bincount", "randint", "randint_like", "randperm", "zeros", "ones", "zeros_like", "ones_like", "eye",
        "numel", "tril_indices", "triu_indices",
    )
)
# torch functions that only select, rearrange, combine or negate the numbers of their tensor arguments.
_SAME_NUMBERS = frozenset(
    "torch." + name for name in (
        "abs", "absolute", "neg", "negative", "stack", "cat", "concat", "concatenate", "hstack", "vstack",
        "dstack", "meshgrid", "flatten", "reshape", "permute", "transpose", "swapaxes", "squeeze", "unsqueeze",
        "t", "flip", "fliplr", "flipud", "roll", "narrow", "select", "index_select", "gather", "take",
        "masked_select", "tile", "repeat_interleave", "broadcast_to", "unbind", "split", "chunk", "tensor",
        "as_tensor", "clone", "where", "max", "min", "amax", "amin", "maximum", "minimum", "sum", "cumsum",
        "prod", "diff", "clamp", "clip", "relu",
    )
)
# Legacy constructors: given one list or tuple, a tensor of its numbers; given sizes, uninitialised memory.
_DATA_CONSTRUCTORS = frozenset("torch." + name for name in ("Tensor", "FloatTensor", "DoubleTensor", "LongTensor",
                                                            "IntTensor", "HalfTensor"))
# Tensor methods whose result is whole whatever the receiver.
_WHOLE_METHODS = frozenset((
    "floor", "ceil", "trunc", "sign", "sgn", "long", "int", "short", "byte", "char", "bool", "argmax", "argmin",
    "argsort", "nonzero", "numel", "nelement", "dim", "ndimension", "size", "count_nonzero", "bit_length",
))
# Tensor methods that keep whole numbers whole (casts to any float dtype included).
_KEEPING_METHODS = frozenset((
    "abs", "neg", "float", "double", "half", "bfloat16", "to", "type", "contiguous", "clone", "detach", "cpu",
    "cuda", "view", "view_as", "reshape", "reshape_as", "permute", "transpose", "flatten", "unflatten", "squeeze",
    "unsqueeze", "expand", "expand_as", "repeat", "t", "flip", "roll", "narrow", "select", "index_select",
    "gather", "unbind", "split", "chunk", "sum", "cumsum", "prod", "max", "min", "amax", "amin", "item",
    "tolist", "clamp", "clip", "diff", "relu",
))
# Tensor methods that combine the receiver's numbers with those of some arguments (the
# others are dimensions, indices or masks): method -> (position, keyword) of each such argument.
# Whole when the receiver and those arguments are (``zeros.scatter_add_(0, index, ones)``).
_COMBINING_METHODS: Dict[str, Tuple[Tuple[int, str], ...]] = {
    **{name: ((2, "src"),) for name in ("scatter_add", "scatter_add_")},
    **{name: ((2, "source"), (-1, "alpha")) for name in ("index_add", "index_add_")},
    **{name: ((2, "src"), (-1, "value")) for name in ("scatter", "scatter_")},
    **{name: ((1, "value"),) for name in ("masked_fill", "masked_fill_")},
    **{name: ((2, "value"),) for name in ("index_fill", "index_fill_")},
    **{name: ((0, "other"), (-1, "alpha")) for name in ("add", "add_", "sub", "sub_")},
    **{name: ((0, "other"),) for name in ("mul", "mul_")},
}
# Builtins and math functions with whole results.
_WHOLE_BUILTINS = frozenset((
    "builtins.len", "builtins.int", "builtins.ord", "builtins.sum", "math.floor", "math.ceil", "math.trunc",
    "math.factorial", "math.comb", "math.perm", "math.gcd", "math.lcm", "math.isqrt",
))
_WHOLE_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo, cst.LeftShift,
                    cst.RightShift, cst.BitAnd, cst.BitOr, cst.BitXor)
# Annotations whose values hold integers only: ``int``, ``Tuple[int, int]``, ``List[int]``, ``tuple[int, ...]``.
_INT_CONTAINERS = frozenset(("Tuple", "tuple", "List", "list", "Sequence", "Set", "set", "FrozenSet",
                             "frozenset"))


class IntegerValues:
    """Answers ``integer_valued(expr)`` for the expressions of one file."""

    def __init__(self, resolver: Resolver, inference: Inference) -> None:
        self._resolver = resolver
        self._inference = inference
        self._assume_parameters: Optional[cst.FunctionDef] = None  # its parameters: integer-valued
        self._names: Dict[cst.Name, bool] = {}  # a read -> its answer (False while being worked out)

    def integer_valued(self, expr: cst.BaseExpression, function: Optional[cst.FunctionDef]) -> bool:
        """Does ``expr``, read in ``function`` (None: at module level, where
        names are not followed), hold whole numbers only?"""
        return self._whole(expr, function, 0)

    def returns_integer_valued(self, function: cst.FunctionDef, given_whole_arguments: bool = True) -> bool:
        """Given integer-valued arguments (or, without ``given_whole_arguments``,
        whatever the arguments), is every value ``function`` returns integer-valued?"""
        returns = list(_returns(function))
        if not returns or any(value is None for value in returns) or _yields(function):
            return False
        self._assume_parameters = function if given_whole_arguments else None
        try:
            return all(self._whole(value, function, 0) for value in returns if value is not None)
        finally:
            self._assume_parameters = None

    # -- expressions ---------------------------------------------------------

    def _whole(self, expr: cst.BaseExpression, function: Optional[cst.FunctionDef], depth: int) -> bool:
        if isinstance(expr, cst.Integer):
            return True
        if isinstance(expr, cst.Float):
            return float(expr.evaluated_value).is_integer()
        if isinstance(expr, cst.UnaryOperation):
            return not isinstance(expr.operator, cst.Not) and self._whole(expr.expression, function, depth)
        if isinstance(expr, cst.BinaryOperation):
            return isinstance(expr.operator, _WHOLE_OPERATORS) and self._all_whole(
                (expr.left, expr.right), function, depth)
        if isinstance(expr, cst.IfExp):
            return self._all_whole((expr.body, expr.orelse), function, depth)
        if isinstance(expr, (cst.Tuple, cst.List)):
            return self._all_whole((e.value for e in expr.elements), function, depth)
        if isinstance(expr, cst.Subscript):
            return self._whole(expr.value, function, depth)  # indexing picks some of its numbers
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in ("shape", "ndim"):
                return True
            return expr.attr.value in ("T", "mT", "data") and self._whole(expr.value, function, depth)
        if isinstance(expr, cst.Name):
            return self._name_whole(expr, function, depth)
        if isinstance(expr, cst.Call):
            return self._call_whole(expr, function, depth)
        return False

    def _all_whole(self, exprs: Iterable[cst.BaseExpression], function: Optional[cst.FunctionDef],
                   depth: int) -> bool:
        return all(self._whole(e, function, depth) for e in exprs)

    def _call_whole(self, call: cst.Call, function: Optional[cst.FunctionDef], depth: int) -> bool:
        func = call.func
        callee = self._resolver.resolve(func)
        if callee is not None:
            return self._known_call_whole(call, callee, function, depth)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in _WHOLE_METHODS:
                return True
            if method in ("round",) and not call.args:
                return True
            if method in _KEEPING_METHODS:
                return self._whole(func.value, function, depth)
            if method in _COMBINING_METHODS:
                return self._combined_whole(call, _COMBINING_METHODS[method], function, depth)
            return False
        local = self._local_function(func)
        if local is not None:
            key = self._global_function_key(local)
            return key is not None and self._project_call_whole(call, key, function, depth)
        return False

    def _known_call_whole(self, call: cst.Call, callee: str, function: Optional[cst.FunctionDef],
                          depth: int) -> bool:
        if callee in _WHOLE_RESULT or callee in _WHOLE_BUILTINS:
            return True
        if callee in ("builtins.round", "torch.round"):
            return len(call.args) == 1  # no ``ndigits`` / ``decimals``
        if callee in ("torch.arange", "torch.range"):
            return self._arange_whole(call, function, depth)
        if callee == "torch.full":
            fill = _argument(call, 1, "fill_value")
            return fill is not None and self._whole(fill, function, depth)
        if callee in _SAME_NUMBERS:
            return bool(call.args) and self._arguments_whole(call, function, depth)
        if callee in _DATA_CONSTRUCTORS:
            # ``torch.Tensor([1.0])`` holds the numbers of its list; ``torch.Tensor(3)`` is uninitialised
            data = call.args[0].value if len(call.args) == 1 and call.args[0].keyword is None else None
            return isinstance(data, (cst.List, cst.Tuple)) and self._whole(data, function, depth)
        if callee.startswith(api.TORCH_PACKAGES) or callee.startswith(("builtins.", "math.", "numpy.")):
            return False
        key = self._inference.project.absolute(callee)
        return key is not None and self._project_call_whole(call, key, function, depth)

    def _project_call_whole(self, call: cst.Call, key: str, function: Optional[cst.FunctionDef],
                            depth: int) -> bool:
        """A call of the project function ``key``: whole when its results are whatever
        the arguments (``degree()``: ones added into zeros), or given whole arguments."""
        project = self._inference.project
        if self._arguments_whole(call, function, depth, options=False) and project.returns_integer_valued(key):
            return True
        return project.returns_integer_valued(key, given_whole_arguments=False)

    def _combined_whole(self, call: cst.Call, numbers: Tuple[Tuple[int, str], ...],
                        function: Optional[cst.FunctionDef], depth: int) -> bool:
        """A combining method (``_COMBINING_METHODS``): its receiver and the arguments
        holding numbers whole; a ``*args``/``**kwargs`` call is not known."""
        if any(arg.star for arg in call.args):
            return False
        if not self._whole(call.func.value, function, depth):  # type: ignore[attr-defined]
            return False
        for position, keyword in numbers:
            if position < 0:  # a keyword-only option (``alpha=``): whole when given
                given = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == keyword),
                             None)
                if given is not None and not self._whole(given, function, depth):
                    return False
                continue
            argument = _argument(call, position, keyword)
            if argument is None or not self._whole(argument, function, depth):
                return False
        return True

    def _arange_whole(self, call: cst.Call, function: Optional[cst.FunctionDef], depth: int) -> bool:
        """``arange(end)`` counts 0, 1, 2, ...: whole whatever ``end``; ``arange(start, end, step)``
        is whole when ``start`` and ``step`` are."""
        positional = [a for a in call.args if a.keyword is None]
        if any(a.star for a in call.args):
            return False
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        if len(positional) == 1 and not keywords & {"start", "end", "step"}:
            return True
        start = _argument(call, 0, "start")
        step = _argument(call, 2, "step")
        return start is not None and self._whole(start, function, depth) and (
            step is None or self._whole(step, function, depth))

    def _arguments_whole(self, call: cst.Call, function: Optional[cst.FunctionDef], depth: int,
                         options: bool = True) -> bool:
        """Every number passed in (tensors and sequences alike) whole; with ``options``
        (a torch callee), its keyword options that are no numbers (``dim=``, ``device=``,
        ``dtype=``, ``indexing=``) aside."""
        for arg in call.args:
            if options and arg.keyword is not None and arg.keyword.value in _OPTIONS:
                continue
            if not self._whole(arg.value, function, depth):
                return False
        return True

    def _global_function_key(self, local: cst.FunctionDef) -> Optional[str]:
        """The project key of a top-level def of the file (None for a nested one)."""
        key = self._inference.project.local(local.name.value)
        scope = self._resolver.scope_of(local)
        return key if scope is not None and scope is scope.globals else None

    def _local_function(self, func: cst.BaseExpression) -> Optional[cst.FunctionDef]:
        local = self._inference.local_definition(func)
        return local if isinstance(local, cst.FunctionDef) else None

    # -- names ---------------------------------------------------------------

    def _name_whole(self, name: cst.Name, function: Optional[cst.FunctionDef], depth: int) -> bool:
        known = self._names.get(name)
        if known is not None:
            return known
        if depth > MAX_DEPTH or function is None or not _binds_only_plainly(function, name.value):
            return False
        scope = self._resolver.scope_of(name)
        if getattr(scope, "node", None) is not function:
            return False  # a comprehension's or lambda's own variable, or a name of an enclosing scope
        self._names[name] = False  # a value depending on itself (``x = x / 2`` in a loop): unknown
        found = _Walk(self, function, name, depth).run() is True
        self._names[name] = found
        return found

    def item_whole(self, value: cst.BaseExpression, index: int, function: cst.FunctionDef, depth: int) -> bool:
        """Item ``index`` of what ``a, b = value`` unpacks: of a tuple display, or of the
        tuples every ``return`` of a def of this file gives (``self._align(...)`` in a method
        of the same class; parameters are not assumed whole there)."""
        if isinstance(value, (cst.Tuple, cst.List)):
            items = _plain_items(value)
            return items is not None and index < len(items) and self._whole(items[index], function, depth)
        if not isinstance(value, cst.Call):
            return False
        callee = self._local_function(value.func) or self._inference.own_method(value.func)
        if callee is None or _yields(callee):
            return False
        returns = list(_returns(callee))
        if not returns:
            return False
        for returned in returns:
            items = _plain_items(returned) if isinstance(returned, (cst.Tuple, cst.List)) else None
            if items is None or index >= len(items) or not self._whole(items[index], callee, depth):
                return False
        return True

    def parameter_whole(self, function: cst.FunctionDef, param: cst.Param) -> bool:
        """A parameter's numbers at the start of ``function``: annotated ``int`` (or a
        container of ints), or any parameter while ``returns_integer_valued`` assumes so."""
        if param is function.params.star_kwarg:
            return False
        if function is self._assume_parameters:
            return True
        return param is not function.params.star_arg and param.annotation is not None and \
            _int_annotation(param.annotation.annotation)

    def whole_at(self, expr: cst.BaseExpression, function: cst.FunctionDef, depth: int) -> bool:
        """``integer_valued`` for the walk, ``depth`` names deep."""
        return self._whole(expr, function, depth)


class _Walk:
    """Follows ``name`` through the statements of ``function`` up to the one
    that reads it: is it integer-valued on every path there?"""

    def __init__(self, values: IntegerValues, function: cst.FunctionDef, read: cst.Name, depth: int) -> None:
        self._values = values
        self._function = function
        self._read = read
        self._depth = depth

    def run(self) -> Optional[bool]:
        """True/False at the read; None when the read is not found in the function's own statements."""
        params = self._function.params
        name = self._read.value
        state = False
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.name.value == name:
                state = self._values.parameter_whole(self._function, param)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param) and star.name.value == name:
                state = self._values.parameter_whole(self._function, star)
        found, _ = self._block(_statements(self._function.body), state)
        return found

    def _block(self, statements: Sequence[cst.BaseStatement], state: bool) -> Tuple[Optional[bool], bool]:
        """(the value at the read if it is in ``statements``, else None; the value after them)."""
        for statement in statements:
            found, state = self._statement(statement, state)
            if found is not None:
                return found, state
        return None, state

    def _statement(self, statement: cst.BaseStatement, state: bool) -> Tuple[Optional[bool], bool]:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if _contains(small, self._read):
                    return state, state
                state = self._small(small, state)
            return None, state
        if isinstance(statement, cst.If):
            if _contains(statement.test, self._read):
                return state, state
            found, after_body = self._block(_statements(statement.body), state)
            if found is not None:
                return found, after_body
            orelse = statement.orelse
            if orelse is None:
                return None, state and after_body
            found, after_else = (self._statement(orelse, state) if isinstance(orelse, cst.If)
                                 else self._block(_statements(orelse.body), state))
            if found is not None:
                return found, after_else
            return None, after_body and after_else
        if isinstance(statement, (cst.For, cst.While)):
            if isinstance(statement, cst.For) and _contains(statement.iter, self._read):
                return state, state  # evaluated once, before the loop
            if isinstance(statement, cst.For) and _binds(statement.target, self._read.value):
                return None, False
            _, once = self._block(_statements(statement.body), state)
            entry = state and once  # the body may run again after itself
            if isinstance(statement, cst.While) and _contains(statement.test, self._read):
                return entry, entry  # tested before every round
            found, after_body = self._block(_statements(statement.body), entry)
            if found is not None:
                return found, after_body
            after = entry and after_body
            if statement.orelse is not None:
                found, after = self._block(_statements(statement.orelse.body), after)
                if found is not None:
                    return found, after
            return None, after
        if isinstance(statement, cst.Try):
            # Any statement of the body may have run before a handler: join everything.
            _, after_body = self._block(_statements(statement.body), state)
            joined = state and after_body
            parts = [statement.body, *(h.body for h in statement.handlers)]
            parts += [p.body for p in (statement.orelse, statement.finalbody) if p is not None]
            for part in parts:
                found, after = self._block(_statements(part), joined)
                if found is not None:
                    return found, after
                joined = joined and after
            return None, joined
        if isinstance(statement, cst.With):
            if any(_contains(item, self._read) for item in statement.items):
                return state, state
            if any(item.asname is not None and _binds(item.asname.name, self._read.value)
                   for item in statement.items):
                return None, False
            return self._block(_statements(statement.body), state)
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return None, state and statement.name.value != self._read.value
        return None, False  # match and others: not followed

    def _small(self, small: cst.BaseSmallStatement, state: bool) -> bool:
        name = self._read.value
        if isinstance(small, cst.Assign):
            value_whole: Optional[bool] = None
            for target in small.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    value_whole = self._whole(small.value)
                elif _binds(target.target, name):
                    index = _plain_index(target.target, name)
                    if index is None:
                        return False
                    value_whole = self._values.item_whole(small.value, index, self._function, self._depth + 1)
                elif _subscript_of(target.target, name):
                    state = state and self._whole(small.value)
            return state if value_whole is None else value_whole
        if isinstance(small, cst.AnnAssign):
            if isinstance(small.target, cst.Name) and small.target.value == name:
                return small.value is not None and self._whole(small.value)
            return state
        if isinstance(small, cst.AugAssign):
            target = small.target
            if (isinstance(target, cst.Name) and target.value == name) or _subscript_of(target, name):
                return state and isinstance(small.operator, _AUG_WHOLE) and self._whole(small.value)
            return state
        if isinstance(small, cst.Expr):
            call = small.value
            # ``x.div_(2)``, ``x.mul_(0.5)``: in-place updates; only those that keep whole numbers whole.
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
                    _receiver_is(call.func.value, name) and call.func.attr.value.endswith("_"):
                return state and call.func.attr.value in ("abs_", "neg_", "floor_", "ceil_", "trunc_", "sign_",
                                                          "zero_", "squeeze_", "unsqueeze_", "t_")
            return state
        if isinstance(small, (cst.Global, cst.Nonlocal, cst.Del, cst.Import, cst.ImportFrom)):
            return False if _contains_name(small, name) else state
        return state

    def _whole(self, expr: cst.BaseExpression) -> bool:
        return self._values.whole_at(expr, self._function, self._depth + 1)


# Keywords of torch functions that hold no numbers of the result.
_OPTIONS = frozenset(("dim", "device", "dtype", "indexing", "out", "requires_grad", "keepdim", "layout",
                      "memory_format", "pin_memory", "axis"))
_AUG_WHOLE = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.FloorDivideAssign, cst.ModuloAssign)


def _statements(block: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    if isinstance(block, cst.IndentedBlock):
        return block.body
    return [cst.SimpleStatementLine(body=block.body)] if isinstance(block, cst.SimpleStatementSuite) else []


def _argument(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if position < len(positional):
        return positional[position].value
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    return None


def _int_annotation(annotation: cst.BaseExpression) -> bool:
    if isinstance(annotation, cst.Name):
        return annotation.value == "int"
    if isinstance(annotation, cst.Subscript):
        base = annotation.value
        base_name = base.attr.value if isinstance(base, cst.Attribute) else getattr(base, "value", None)
        if base_name not in _INT_CONTAINERS:
            return False
        elements = [e.slice.value for e in annotation.slice if isinstance(e.slice, cst.Index)]
        return bool(elements) and all(
            _int_annotation(e) or (isinstance(e, cst.Ellipsis) and i > 0) for i, e in enumerate(elements))
    return False


def _receiver_is(expr: cst.BaseExpression, name: str) -> bool:
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return isinstance(expr, cst.Name) and expr.value == name


def _subscript_of(target: cst.BaseExpression, name: str) -> bool:
    return isinstance(target, cst.Subscript) and _receiver_is(target, name)


def _plain_items(display: cst.BaseExpression) -> Optional[List[cst.BaseExpression]]:
    """The items of a tuple or list display without ``*``; None otherwise."""
    if not isinstance(display, (cst.Tuple, cst.List)):
        return None
    if any(isinstance(e, cst.StarredElement) for e in display.elements):
        return None
    return [e.value for e in display.elements]


def _plain_index(target: cst.BaseExpression, name: str) -> Optional[int]:
    """Where ``name`` sits in a flat tuple target (``a, name, _ = ...``); None when nested or starred."""
    items = _plain_items(target)
    if items is None:
        return None
    found = [i for i, item in enumerate(items) if isinstance(item, cst.Name) and item.value == name]
    return found[0] if len(found) == 1 else None


def _binds(target: cst.BaseExpression, name: str) -> bool:
    """Does the assignment target ``target`` bind ``name`` (plainly or in a tuple)?"""
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(e.value, name) for e in target.elements)
    if isinstance(target, cst.StarredElement):
        return _binds(target.value, name)
    return False


class _Finder(cst.CSTVisitor):
    def __init__(self, wanted) -> None:
        self.wanted = wanted
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found or self.wanted(node):
            self.found = True
            return False
        return True


def _contains(node: cst.CSTNode, target: cst.CSTNode) -> bool:
    finder = _Finder(lambda n: n is target)
    node.visit(finder)
    return finder.found


def _contains_name(node: cst.CSTNode, name: str) -> bool:
    finder = _Finder(lambda n: isinstance(n, cst.Name) and n.value == name)
    node.visit(finder)
    return finder.found


def _binds_only_plainly(function: cst.FunctionDef, name: str) -> bool:
    """No walrus (``(x := ...)``) binds ``name`` in ``function``: the walk sees every other binding."""
    finder = _Finder(lambda n: isinstance(n, cst.NamedExpr) and _binds(n.target, name))
    function.body.visit(finder)
    return not finder.found


class _Returns(cst.CSTVisitor):
    def __init__(self) -> None:
        self.values = []
        self.yields = False

    def visit_Return(self, node: cst.Return) -> None:
        self.values.append(node.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        self.yields = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False


def _collect(function: cst.FunctionDef) -> _Returns:
    visitor = _Returns()
    function.body.visit(visitor)
    return visitor


def _returns(function: cst.FunctionDef) -> Sequence[Optional[cst.BaseExpression]]:
    return _collect(function).values


def _yields(function: cst.FunctionDef) -> bool:
    return _collect(function).yields
