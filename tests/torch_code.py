"""Hypothesis strategies for torch-flavoured Python source.

``hypothesmith`` writes syntactically valid Python but almost never a torch
call, so the rules would hardly run. ``torch_programs()`` builds programs from
what the rules themselves say they flag and accept (every rule's
``flagged`` examples and ``accepted`` snippets): it picks a few snippets,
keeps their imports at the top, shuffles the other statements, renames local
variables consistently, wraps runs of statements in functions, methods,
classes, loops, ``with``/``try``/``if`` blocks, and sprinkles comments, blank
lines and ``# noqa``. Only programs CPython compiles are produced.

``differential_program(seed, index)`` builds programs that still run (for
the differential fix test, tests/differential.py): the runnable examples,
rewritten by mutations that keep what they compute. ``computed_values`` and
``same_value`` say what a run computed and whether two runs agree (shared
with tests/test_runtime_torch.py).
"""

from __future__ import annotations

import ast
import inspect
import keyword
import math
import random
import re
import symtable
import warnings
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

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
# Flagged examples whose original runs under today's torch but computes what the pitfall makes
# (``Example.differs``): their fix changes the values on purpose.
_DIFFERING = frozenset(example.code for rule in all_rules() for example in rule.flagged if example.differs)
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


# --------------------------------------------------------------------------
# Programs that still run: mutations that keep what a program computes
# --------------------------------------------------------------------------
#
# ``torch_programs()`` above wraps statements under undefined conditions
# (``if cond:``), so its programs rarely run. The differential fix test
# (tests/differential.py) needs programs that run under torch and compute the
# same values however they are spelled: each mutation below rewrites a
# program into one that computes the same module-level values and prints the
# same text (aliases renamed consistently, blocks that always run, globals
# declared, values copied out of class bodies). They are plain functions of a
# ``random.Random`` so a (seed, index) pair names one program for ever.


def runnable_snippets() -> List[str]:
    """Every rule's flagged examples that run under torch (``runnable``), in rule order."""
    return list(dict.fromkeys(
        example.code for rule in all_rules() for example in rule.flagged if example.runnable and example.python3))


def _names_in(node: cst.CSTNode, attributes: bool = True) -> Set[str]:
    """Every identifier spelled in ``node`` (bound, used or imported; attribute names unless told)."""
    names: Set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            names.add(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            if attributes:
                return True
            attribute.value.visit(self)
            return False

    node.visit(Names())
    return names


def _fresh(module: cst.Module, stem: str, rng) -> str:
    """A name ``module`` does not spell yet."""
    taken = _names_in(module)
    for _ in range(100):
        name = f"{stem}{rng.randrange(100)}" if stem in taken or rng.random() < 0.3 else stem
        if name not in taken:
            return name
    raise AssertionError("no fresh name")


def _top_level(module: cst.Module) -> List[int]:
    """Indexes of the module's statements that are not ``__future__`` imports."""
    return [i for i, statement in enumerate(module.body) if not _is_future(statement)]


def _dotted(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


# -- import aliases ---------------------------------------------------------

_ALIAS_STEMS = {"torch": "T", "nn": "N", "F": "fn", "functional": "fn", "init": "I", "autograd": "ag",
                "np": "numpy_", "th": "tc"}


def mutate_import_alias(module: cst.Module, rng) -> Optional[cst.Module]:
    """``import torch`` -> ``import torch as T``, ``import torch.nn as nn`` ->
    ``from torch import nn as N`` (and back): the name changes everywhere it is used."""
    choices = []
    for index in _top_level(module):
        statement = module.body[index]
        if not _is_import_line(statement) or len(statement.body) != 1 or not isinstance(statement.body[0], cst.Import):
            continue
        for alias in statement.body[0].names:
            dotted = _dotted(alias.name)
            bound = alias.asname.name.value if alias.asname else dotted
            if dotted and dotted.split(".")[0] in ("torch", "numpy") and "." not in bound:
                choices.append((index, dotted, bound))
    if not choices:
        return None
    index, dotted, bound = rng.choice(choices)
    new = _fresh(module, _ALIAS_STEMS.get(bound, bound + "_"), rng)
    head, _, last = dotted.rpartition(".")
    root = dotted.split(".")[0]
    spelled_out = head and bound != root and root not in _local_names(module) and rng.random() < 0.3
    if spelled_out:  # ``import torch.nn.functional as F`` -> ``import torch.nn.functional``, ``F.x`` -> its path
        line, renamer = f"import {dotted}\n", _Respell(bound, dotted)
    elif head and rng.random() < 0.5:
        line, renamer = f"from {head} import {last} as {new}\n", _Rename({bound: new})
    else:
        line, renamer = f"import {dotted} as {new}\n", _Rename({bound: new})
    statement = module.body[index]
    others = [alias for alias in statement.body[0].names if _dotted(alias.name) != dotted]
    renamed = [s.visit(renamer) for s in module.body]
    replacement = [cst.parse_statement(line)]
    if others:  # ``import torch, numpy as np``: keep the other names
        keep = statement.body[0].with_changes(names=[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in others])
        replacement.insert(0, statement.with_changes(body=[keep]))
    body = [*renamed[:index], *replacement, *renamed[index + 1:]]
    if bound == dotted.split(".")[0] and head:
        # ``import torch.nn`` bound ``torch`` too: keep it bound for ``torch.nn.X`` spelled elsewhere
        body.insert(index, cst.parse_statement(f"import {dotted.split('.')[0]}\n"))
    return module.with_changes(body=body)


class _Respell(_Rename):
    """Every use of a variable spelled as a dotted path instead (``F`` -> ``torch.nn.functional``)."""

    def __init__(self, name: str, dotted: str) -> None:
        super().__init__({})
        self.name, self.dotted = name, dotted

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return cst.parse_expression(self.dotted) if updated.value == self.name else updated


def _local_names(module: cst.Module) -> Set[str]:
    """Names the module binds other than by imports (assignments, defs, parameters...)."""
    visitor = _Bound()
    module.visit(visitor)
    return visitor.names


class _NamesOfModule(cst.CSTTransformer):
    """``A.attr`` -> ``attr`` outside imports; records every bare ``A`` left."""

    def __init__(self, alias: str) -> None:
        super().__init__()
        self.alias = alias
        self.attrs: Set[str] = set()

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if isinstance(updated.value, cst.Name) and updated.value.value == self.alias:
            self.attrs.add(updated.attr.value)
            return updated.attr.with_changes(lpar=updated.lpar, rpar=updated.rpar)
        return updated


def mutate_from_import(module: cst.Module, rng) -> Optional[cst.Module]:
    """``import torch.nn.functional as F`` ... ``F.upsample(x)`` -> ``from
    torch.nn.functional import upsample`` ... ``upsample(x)``."""
    namespace = _import_namespace(module)
    choices = []
    for index in _top_level(module):
        statement = module.body[index]
        if _is_import_line(statement) and len(statement.body) == 1 and isinstance(statement.body[0], cst.Import) \
                and len(statement.body[0].names) == 1 and statement.body[0].names[0].asname is not None:
            alias = statement.body[0].names[0]
            if inspect.ismodule(namespace.get(alias.asname.name.value)):
                choices.append((index, _dotted(alias.name), alias.asname.name.value))
    if not choices:
        return None
    index, dotted, bound = rng.choice(choices)
    taken = _names_in(module, attributes=False)
    rewriter = _NamesOfModule(bound)
    body = [statement.visit(rewriter) for statement in module.body]
    rest = cst.Module(body=[s for i, s in enumerate(body) if i != index])
    if not rewriter.attrs or bound in _names_in(rest) or rewriter.attrs & taken:
        return None  # ``F`` used bare, or a name the program already spells
    body[index] = cst.parse_statement(f"from {dotted} import {', '.join(sorted(rewriter.attrs))}\n")
    return module.with_changes(body=body)


# -- a local named like a torch module --------------------------------------

DECOY_CLASS = '''\
class _Decoy:
    """Stands for whatever a local named like a torch module holds: calls report their spelling."""

    def __init__(self, spelling):
        self._spelling = spelling  # (not ``path``: ``os.path`` must reach ``__getattr__``)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Decoy(self._spelling + "." + name)

    def __call__(self, *args, **kwargs):
        return "%s(%d, %s)" % (self._spelling, len(args), sorted(kwargs))
'''


class _CallsOnModules(cst.CSTVisitor):
    """Calls whose callee is a dotted name (``F.upsample``, ``torch.range``)."""

    def __init__(self) -> None:
        self.calls: List[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        dotted = _dotted(node.func)
        if dotted and "." in dotted and not any(arg.star for arg in node.args):
            self.calls.append(node)


def _module_calls(module: cst.Module) -> List[cst.Call]:
    """The calls into what the module imports (``F.upsample``, not ``loss.backward``)."""
    calls, imported = _CallsOnModules(), _ImportBound()
    module.visit(calls)
    module.visit(imported)
    return [call for call in calls.calls if _dotted(call.func).split(".")[0] in imported.names]


_CALLS: Dict[str, List[cst.Call]] = {}


def _snippet_calls(code: str) -> List[cst.Call]:
    if code not in _CALLS:
        _CALLS[code] = _module_calls(_module(code))
    return _CALLS[code]


def _decoy_call(call: cst.Call) -> cst.Call:
    """``call`` with every argument value 0 (the decoy ignores them; they need no variables)."""
    zero = cst.Integer("0")
    return call.with_changes(args=[arg.with_changes(value=zero) for arg in call.args])


def mutate_shadowing(module: cst.Module, rng) -> Optional[cst.Module]:
    """Append a function whose parameters are named like the torch modules the
    program calls into, called with stand-ins: a rule that takes the parameter
    for the module rewrites the calls, and the value the function returns changes."""
    found = [call for snippet in rng.sample(_SNIPPETS, 3) for call in _snippet_calls(snippet)]
    found += _module_calls(module)
    if not found:
        return None
    calls = rng.sample(found, min(3, len(found)))
    roots = sorted({_dotted(call.func).split(".")[0] for call in calls})
    result = _fresh(module, "shadowed", rng)
    function = _fresh(module, "_uses_locals", rng)
    returned = ", ".join(cst.Module([]).code_for_node(_decoy_call(call)) for call in calls)
    decoys = [f"_Decoy({root!r})" for root in roots]
    kind = rng.choice(["parameters", "local assignments", "module rebinding"])
    if kind == "parameters":
        uses = (f"def {function}({', '.join(roots)}):\n    return [{returned}]\n\n\n"
                f"{result} = {function}({', '.join(decoys)})\n")
    elif kind == "local assignments":
        assigned = "".join(f"    {root} = {decoy}\n" for root, decoy in zip(roots, decoys))
        uses = f"def {function}():\n{assigned}    return [{returned}]\n\n\n{result} = {function}()\n"
    else:  # the program's own names rebound at the end: only the code after sees the stand-ins
        assigned = "".join(f"{root} = {decoy}\n" for root, decoy in zip(roots, decoys))
        uses = f"{assigned}{result} = [{returned}]\n"
    text = f"{DECOY_CLASS}\n\n{uses}"
    return module.with_changes(body=[*module.body, *cst.parse_module(text).body])


# -- keyword and positional forms of arguments ------------------------------


def _import_namespace(module: cst.Module) -> Dict[str, object]:
    """What the module's top-level imports bind (to look callees' signatures up)."""
    namespace: Dict[str, object] = {}
    for statement in module.body:
        if _is_import_line(statement):
            try:
                exec(compile(cst.Module([statement]).code, "<imports>", "exec"), namespace)
            except Exception:
                continue
    return namespace


def _signature(call: cst.Call, namespace: Dict[str, object]):
    dotted = _dotted(call.func)
    if not dotted:
        return None
    parts = dotted.split(".")
    value = namespace.get(parts[0])
    try:
        for part in parts[1:]:
            value = getattr(value, part)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return inspect.signature(value) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return _documented_signature(value)


_DOCUMENTED = re.compile(r"\A\s*\w+\((.*)\)\s*->")


def _documented_signature(value) -> Optional[inspect.Signature]:
    """A torch builtin's signature as its docstring's first line writes it
    (``range(start=0, end, step=1, *, out=None, ...) -> Tensor``); None without one."""
    match = _DOCUMENTED.match(getattr(value, "__doc__", None) or "")
    if match is None:
        return None
    parameters, kind, defaulted = [], inspect.Parameter.POSITIONAL_OR_KEYWORD, False
    for part in _top_level_parts(match.group(1)):
        if part == "*":
            kind = inspect.Parameter.KEYWORD_ONLY
            continue
        name = re.match(r"\**(\w+)", part)
        if name is None:
            return None
        if kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and "=" not in part and defaulted:
            return None  # ``arange(start=0, end, ...)``: overloads (``arange(3)`` is ``end=3``)
        defaulted = defaulted or "=" in part
        if part.startswith("*"):
            parameters.append(inspect.Parameter(name.group(1), inspect.Parameter.VAR_POSITIONAL))
            kind = inspect.Parameter.KEYWORD_ONLY
        else:
            parameters.append(inspect.Parameter(name.group(1), kind))
    try:
        return inspect.Signature(parameters)
    except ValueError:
        return None


def _top_level_parts(text: str) -> List[str]:
    """``text`` split at the commas outside brackets."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return [part for part in [*parts, current.strip()] if part]


def _reargued(call: cst.Call, signature, rng) -> Optional[cst.Call]:
    """``call`` with trailing positional arguments passed by keyword, or leading
    keywords passed by position, as the callee's signature allows."""
    parameters = list(signature.parameters.values())
    positional = [arg for arg in call.args if arg.keyword is None]
    keywords = [arg for arg in call.args if arg.keyword is not None]
    if any(arg.star for arg in call.args) or list(call.args[:len(positional)]) != positional:
        return None
    by_keyword = [i for i in range(len(positional)) if i < len(parameters)
                  and all(p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters[i:len(positional)])]
    if by_keyword and (not keywords or rng.random() < 0.5):
        start = rng.choice(by_keyword)
        moved = [arg.with_changes(keyword=cst.Name(parameters[i].name), equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
            for i, arg in zip(range(start, len(positional)), positional[start:])]
        args = [*positional[:start], *moved, *keywords]
    else:
        named = {arg.keyword.value: arg for arg in keywords}
        args = list(positional)
        while len(args) < len(parameters) and parameters[len(args)].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD \
                and parameters[len(args)].name in named:
            arg = named.pop(parameters[len(args)].name)
            args.append(arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT))
        if len(args) == len(positional):
            return None
        args.extend(arg for arg in keywords if arg.keyword.value in named)
    last = len(args) - 1
    args = [arg.with_changes(comma=cst.MaybeSentinel.DEFAULT if i == last else cst.Comma(
        whitespace_after=cst.SimpleWhitespace(" "))) for i, arg in enumerate(args)]
    return call.with_changes(args=args)


def mutate_arguments(module: cst.Module, rng) -> Optional[cst.Module]:
    """Pass calls' arguments by keyword instead of by position, or the reverse."""
    namespace = _import_namespace(module)
    visitor = _CallsOnModules()
    module.visit(visitor)
    candidates = []
    for call in visitor.calls:
        signature = _signature(call, namespace)
        if signature is not None and call.args:
            candidates.append((call, signature))
    rng.shuffle(candidates)
    changed = None
    for call, signature in candidates:  # the first that can change, then each other one at even odds
        new = _reargued(call, signature, rng)
        if new is not None and (changed is None or rng.random() < 0.5):
            changed = (changed or module).deep_replace(call, new)
    return changed


# -- comments and line continuations inside expressions ---------------------


def _commented(text: str) -> cst.ParenthesizedWhitespace:
    return cst.ParenthesizedWhitespace(
        first_line=cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(text)),
        indent=True, last_line=cst.SimpleWhitespace("        "))


CONTINUATION = cst.SimpleWhitespace(" \\\n        ")


def mutate_layout(module: cst.Module, rng) -> Optional[cst.Module]:
    """A comment after a call's ``(``, an argument's comma or its last
    argument, or a backslash continuation before an attribute's dot or after
    an argument's ``=``."""
    visitor = _CallsOnModules()
    module.visit(visitor)
    calls = [call for call in visitor.calls if call.args]
    if not calls:
        return None
    call = rng.choice(calls)
    kind = rng.choice(["comment after (", "comment after comma", "comment before )", "continuation before dot",
                       "continuation after ="])
    keywords = [i for i, arg in enumerate(call.args) if arg.keyword is not None]
    if kind == "comment before )":
        args = list(call.args)
        args[-1] = args[-1].with_changes(whitespace_after_arg=_commented("# the last argument"))
        new = call.with_changes(args=args)
    elif kind == "continuation after =" and keywords:
        args = list(call.args)
        index = rng.choice(keywords)
        args[index] = args[index].with_changes(equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=CONTINUATION))
        new = call.with_changes(args=args)
    elif kind == "comment after (":
        new = call.with_changes(whitespace_before_args=_commented("# F.upsample(x) torch.load(f)"))
    elif kind == "comment after comma" and len(call.args) > 1:
        index = rng.randrange(len(call.args) - 1)
        arg = call.args[index]
        comma = arg.comma if isinstance(arg.comma, cst.Comma) else cst.Comma()
        args = list(call.args)
        args[index] = arg.with_changes(comma=comma.with_changes(whitespace_after=_commented("# noqa-free note")))
        new = call.with_changes(args=args)
    elif isinstance(call.func, cst.Attribute):
        new = call.with_changes(func=call.func.with_changes(dot=cst.Dot(whitespace_before=CONTINUATION)))
    else:
        return None
    return module.deep_replace(call, new)


# -- wrapping statements into blocks that always run ------------------------


class _ImportBound(cst.CSTVisitor):
    """Names an import binds (``import torch.nn`` binds ``torch``)."""

    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is not None:
            self.names.add(node.asname.name.value)
        elif isinstance(node.name, (cst.Name, cst.Attribute)):
            self.names.add(_dotted(node.name).split(".")[0])


def _bound_names(statements: Sequence[cst.BaseStatement]) -> List[str]:
    """Every name the statements may bind (more is harmless in ``global``)."""
    names: Set[str] = set()
    for statement in statements:
        for visitor in (_Bound(), _ImportBound()):
            statement.visit(visitor)
            names |= visitor.names
    return sorted(names)


def _class_level_names(box: cst.ClassDef) -> List[str]:
    """The names ``box``'s body binds (its attributes), as Python's compiler sees them."""
    table = symtable.symtable(cst.Module([box]).code, "<box>", "exec")
    (body,) = [child for child in table.get_children() if child.get_name() == box.name.value]
    return sorted(symbol.get_name() for symbol in body.get_symbols()
                  if symbol.is_local() and (symbol.is_assigned() or symbol.is_imported())
                  and not symbol.get_name().startswith("__"))


def _statements(text: str) -> List[cst.BaseStatement]:
    return list(cst.parse_module(text).body)


BLOCKS = ("function with globals", "class body", "if", "try", "for", "match", "while")


def _wrapped(kind: str, run: Sequence[cst.BaseStatement], module: cst.Module, rng) -> List[cst.BaseStatement]:
    """``run`` inside a block of ``kind``, binding the same module-level names."""
    if kind == "function with globals":
        name = _fresh(module, "_body", rng)
        names = [n for n in _bound_names(run) if n != name]
        head = [cst.SimpleStatementLine([cst.Global([cst.NameItem(cst.Name(n)) for n in names])])] if names else []
        function = cst.FunctionDef(cst.Name(name), cst.Parameters(), _block([*head, *run]))
        return [function, *_statements(f"{name}()\n")]
    if kind == "class body":
        # copied out one by one, as static analysis can follow (``globals().update(vars(Box))``
        # would bind names no linter can see)
        name = _fresh(module, "_Box", rng)
        box = cst.ClassDef(cst.Name(name), _block(run))
        copies = "".join(f"{bound} = getattr({name}, {bound!r}, None)\n" for bound in _class_level_names(box))
        return [box, *(_statements(copies) if copies else [])]
    if kind == "if":
        test = rng.choice(["True", "not False", "1 < 2"])
        orelse = cst.Else(_block([])) if rng.random() < 0.5 else None
        return [cst.If(cst.parse_expression(test), _block(run), orelse=orelse)]
    if kind == "try":
        if rng.random() < 0.5:
            return [cst.Try(_block(run), finalbody=cst.Finally(_block([])))]
        handler = cst.ExceptHandler(_block(_statements("raise\n")), type=cst.Name("ZeroDivisionError"))
        return [cst.Try(_block(run), handlers=[handler], orelse=cst.Else(_block([])))]
    if kind == "for":
        return [cst.For(cst.Name(_fresh(module, "_once", rng)), cst.parse_expression("range(1)"), _block(run))]
    if kind == "while":
        return [cst.While(cst.Name("True"), _block([*run, *_statements("break\n")]))]
    if kind == "match":
        case = cst.MatchCase(pattern=cst.MatchValue(cst.Integer("0")), body=_block(run))
        other = cst.MatchCase(pattern=cst.MatchAs(), body=_block([]))
        return [cst.Match(subject=cst.Integer("0"), cases=[case, other])]
    raise ValueError(kind)


def mutate_block(module: cst.Module, rng) -> Optional[cst.Module]:
    """Wrap a run of top-level statements into a block that runs them once."""
    indexes = _top_level(module)
    if not indexes:
        return None
    start = rng.choice(indexes)
    stop = rng.choice([i + 1 for i in indexes if i >= start])
    kind = rng.choice(BLOCKS)
    body = list(module.body)
    body[start:stop] = _wrapped(kind, body[start:stop], module, rng)
    return module.with_changes(body=body)


# -- wrapping one assigned expression ---------------------------------------

EXPRESSION_FORMS = ("lambda", "comprehension", "generator", "walrus", "walrus printed", "match capture",
                    "decorator", "function", "class attribute", "printed")


def _assignments(module: cst.Module) -> List[int]:
    """Top-level ``name = value`` / ``a, b = value`` statements and bare expression statements."""
    found = []
    for index in _top_level(module):
        statement = module.body[index]
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            continue
        small = statement.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                small.targets[0].target, (cst.Name, cst.Tuple)):
            found.append(index)
        elif isinstance(small, cst.Expr):
            found.append(index)
    return found


PRINTABLE = ("Tensor", "int", "float", "bool", "str", "tuple", "list", "Size")


def _expression_form(kind: str, target: Optional[str], value: str, module: cst.Module, rng) -> Optional[str]:
    """The statements that bind ``target`` (None: evaluate only) to ``value`` in form ``kind``."""
    assign = f"{target} = " if target else ""
    if kind == "lambda":
        return f"{assign}(lambda: {value})()\n"
    if kind == "comprehension":
        return f"{assign}[{value} for _ in range(1)][0]\n"
    if kind == "generator":
        return f"{assign}next({value} for _ in (0,))\n"
    if kind == "function":
        name = _fresh(module, "_compute", rng)
        return f"def {name}():\n    return {value}\n{assign}{name}()\n"
    if kind == "class attribute":
        name = _fresh(module, "_Holder", rng)
        return f"class {name}:\n    value = {value}\n{assign}{name}.value\n"
    if kind == "decorator" and target and target.isidentifier():
        return f"@(lambda _f: _f())\ndef {target}():\n    return {value}\n"
    if kind == "walrus" and target and target.isidentifier():
        return f"({target} := {value})\n"
    if kind == "walrus printed" and target and target.isidentifier():
        return f"print(({target} := {value}) is None)\n"
    if kind == "match capture" and target and target.isidentifier():
        return f"match {value}:\n    case {target}:\n        pass\n"
    if kind == "printed" and target:
        # values only: an object's repr shows its address, and its class's module (an alias moved);
        # of an object, its library: a deprecated class's documented successor has another name
        # (NLLLoss2d -> NLLLoss), and the values compared after the run say whether it acts the same
        shown = (f"{target} if type({target}).__name__ in {PRINTABLE!r} "
                 f"else type({target}).__module__.split('.')[0]")
        return f"{assign}{value}\nprint({shown})\n"
    return None


def mutate_expression(module: cst.Module, rng) -> Optional[cst.Module]:
    """Compute one assigned value through a lambda, a comprehension, a walrus, a
    ``match`` capture, a decorator, a function or a class attribute."""
    indexes = _assignments(module)
    if not indexes:
        return None
    index = rng.choice(indexes)
    small = module.body[index].body[0]
    code = cst.Module([]).code_for_node
    target = code(small.targets[0].target) if isinstance(small, cst.Assign) else None
    value = f"({code(small.value)})"  # a bare tuple, or a comment inside, needs them
    if "yield" in value or "await" in value:
        return None
    text = _expression_form(rng.choice(EXPRESSION_FORMS), target, value, module, rng)
    if text is None:
        return None
    body = list(module.body)
    body[index:index + 1] = _statements(text)
    return module.with_changes(body=body)


MUTATIONS = {
    "import alias": mutate_import_alias,
    "from-import": mutate_from_import,
    "shadowing": mutate_shadowing,
    "arguments": mutate_arguments,
    "layout": mutate_layout,
    "block": mutate_block,
    "expression": mutate_expression,
}


def _with_accepted_snippet(module: cst.Module, rng) -> cst.Module:
    """An accepted snippet first, inside ``try/except Exception`` (it names
    variables it never defines): the program still runs, and the rules see it."""
    snippet = _module(rng.choice([s for rule in all_rules() for s in rule.accepted]))
    handler = cst.ExceptHandler(_block(_statements("pass\n")), type=cst.Name("Exception"))
    guarded = cst.Try(_block([s for s in snippet.body if not _is_future(s)]), handlers=[handler])
    futures = [s for s in snippet.body if _is_future(s)] + [s for s in module.body if _is_future(s)]
    rest = [s for s in module.body if not _is_future(s)]
    return module.with_changes(body=[*dict((id(s), s) for s in futures).values(), guarded, *rest])


def _concatenated(first: cst.Module, second: cst.Module, rng) -> cst.Module:
    """``second`` after ``first``, their imports sometimes hoisted to the top together."""
    if rng.random() < 0.5:
        return first.with_changes(body=[*first.body, *second.body])
    statements = [*first.body, *second.body]
    imports = [s for s in statements if _is_import_line(s)]
    return first.with_changes(body=[*dict.fromkeys(imports), *[s for s in statements if not _is_import_line(s)]])


class Program:
    """One generated program: its text and how it was made."""

    def __init__(self, index: int, origin: str, mutations: List[str], source: str,
                 pitfall_changes_values: bool = False) -> None:
        self.index = index
        self.origin = origin
        self.mutations = mutations
        self.source = source
        # Made from an example whose original computes what the pitfall makes (``Example.differs``).
        self.pitfall_changes_values = pitfall_changes_values


def differential_program(seed: int, index: int) -> Program:
    """Program ``index`` of the campaign ``seed``: a runnable example (sometimes
    any flagged example, or one after an accepted snippet), mutated 1 to 4 times."""
    rng = random.Random(f"{seed}:{index}")
    runnable = runnable_snippets()
    draw = rng.random()
    differs = False
    if draw < 0.6:
        base = rng.choice(runnable)
        origin = f"runnable example {runnable.index(base)}"
        module = _module(base)
    elif draw < 0.85:  # two examples in one file: one's fix must not break the other
        first, second = rng.sample(runnable, 2)
        origin = f"runnable examples {runnable.index(first)} + {runnable.index(second)}"
        module = _concatenated(_module(first), _module(second), rng)
    else:
        base = rng.choice(_SNIPPETS)
        origin = f"snippet {_SNIPPETS.index(base)}"
        module = _module(base)
        differs = base in _DIFFERING
    applied: List[str] = []
    if rng.random() < 0.15:
        module = _with_accepted_snippet(module, rng)
        applied.append("after an accepted snippet")
    for _ in range(rng.randint(1, 4)):
        name = rng.choice(sorted(MUTATIONS))
        try:
            mutated = MUTATIONS[name](module, rng)
        except cst.ParserSyntaxError:
            continue  # a form this source cannot take (a value libcst will not re-parse in place)
        if mutated is not None and compiles(mutated.code):
            module = mutated
            applied.append(name)
    return Program(index, origin, applied, module.code, pitfall_changes_values=differs)


# --------------------------------------------------------------------------
# What a program computed, and whether two runs computed the same
# --------------------------------------------------------------------------


def computed_values(namespace: Dict[str, Any]) -> Dict[str, Any]:
    """The tensors, Python numbers and strings a program computed, by variable name."""
    return {
        name: value
        for name, value in namespace.items()
        if not name.startswith("__") and comparable(value)
    }


def comparable(value: Any) -> bool:
    import torch

    if isinstance(value, (torch.Tensor, int, float, bool, str)):
        return True
    return isinstance(value, (list, tuple)) and bool(value) and all(comparable(v) for v in value)


def same_value(original: Any, fixed: Any) -> Tuple[bool, str]:
    """Whether two runs computed the same value (floating tensors: allclose), and if not, why."""
    import torch

    if isinstance(original, (list, tuple)) or isinstance(fixed, (list, tuple)):
        if type(original) is not type(fixed) or len(original) != len(fixed):
            return False, f"{original!r} != {fixed!r}"
        for a, b in zip(original, fixed):
            same, why = same_value(a, b)
            if not same:
                return False, why
        return True, ""
    if isinstance(original, torch.Tensor) and isinstance(fixed, torch.Tensor):
        if original.shape != fixed.shape or original.dtype != fixed.dtype:
            return False, f"shape/dtype {tuple(original.shape)} {original.dtype} != {tuple(fixed.shape)} {fixed.dtype}"
        a, b = original.detach(), fixed.detach()
        if a.is_floating_point() or a.is_complex():
            same = torch.allclose(a, b, equal_nan=True)
        else:
            same = torch.equal(a, b)
        return same, "" if same else f"{a} != {b}"
    if isinstance(original, torch.Tensor) or isinstance(fixed, torch.Tensor):
        # e.g. `loss.data[0]` (a 0-dim tensor on old torch) vs `loss.item()` (a number)
        tensor, number = (original, fixed) if isinstance(original, torch.Tensor) else (fixed, original)
        if tensor.numel() != 1 or not isinstance(number, (int, float, bool)):
            return False, f"{tensor} is not a scalar to compare with {number!r}"
        same = math.isclose(tensor.item(), number, rel_tol=1e-6, abs_tol=1e-6) or tensor.item() == number
        return same, "" if same else f"{tensor.item()!r} != {number!r}"
    if isinstance(original, float) or isinstance(fixed, float):
        if not isinstance(original, (int, float)) or not isinstance(fixed, (int, float)):
            return False, f"{original!r} != {fixed!r}"
        same = math.isclose(original, fixed, rel_tol=1e-9, abs_tol=1e-12) or (
            math.isnan(original) and math.isnan(fixed))
        return same, "" if same else f"{original!r} != {fixed!r}"
    same = original == fixed and type(original) is type(fixed)
    return same, "" if same else f"{original!r} != {fixed!r}"


def imported_names(source: str) -> Set[str]:
    """Names the program binds by imports only (``from torch import has_cuda``), never by assignment."""
    module = cst.parse_module(source)
    imported, assigned = _ImportBound(), _Bound()
    module.visit(imported)
    module.visit(assigned)
    return imported.names - assigned.names
