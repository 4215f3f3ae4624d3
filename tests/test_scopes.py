"""torchlint's own scope analysis answers as libcst's ScopeProvider does.

``torchlint/analysis/scopes.py`` replaces libcst's ScopeProvider (three
traversals that rebuild every node) with one direct walk. Name resolution was
written and reviewed against libcst's model, so the two are compared here,
node by node: the scope of every node, the qualified names of every name and
dotted name, the bindings each name sees, the reads of every binding, and the
order in which nodes reach the collecting visitor. Compared on tricky snippets
and on every file of real packages nobody here wrote (downloaded).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List

import libcst as cst
import pytest
from libcst.metadata import QualifiedNameSource, ScopeProvider

from torchlint.analysis import scopes as ours
from torchlint.analysis.context import analyse
from torchlint.analysis.names import Resolver

REPO = Path(__file__).resolve().parent.parent

SNIPPETS = [
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.nn import init
    from torch.nn.functional import upsample as up, sigmoid
    y = F.relu(x) + torch.nn.functional.tanh(x) + up(x) + sigmoid(x)
    init.normal(w)
    """,
    """
    import torch.nn
    import torch.utils.data as data
    torch.nn.functional.relu(x); torch.cuda.is_available(); data.DataLoader(ds)
    print(len(x)); int.from_bytes(b)
    """,
    """
    import torch
    class F:
        relu = 1
    F.relu(x)
    def f(torch):
        return torch.sigmoid(x)
    def g():
        torch = 3
        return torch.sigmoid(x)
    lambda torch: torch.tanh(x)
    """,
    """
    from torch.nn import functional as F
    F.sigmoid(x)
    F = None
    F.sigmoid(x)
    """,
    """
    import torch
    def outer():
        x = torch.zeros(3)
        class Inner:
            x = 1
            def method(self, y=x):
                return x, y, self
        return [x for x in range(3) if x] + [torch for _ in x], {k: v for k, v in x}, (t for t in x)
    """,
    """
    import torch
    def f():
        global torch
        import torch.nn as torch
        return torch.ReLU()
    def g():
        t = 1
        def h():
            nonlocal t
            t = torch.ones(1)
        return t
    """,
    """
    from typing import TYPE_CHECKING, List, cast, NewType, TypeVar, Literal
    import torch
    def f(x: "torch.Tensor", y: List["torch.Tensor"]) -> "torch.nn.Module":
        z = cast("torch.Tensor", x)
        T = TypeVar("T", "torch.Tensor", int)
        N = NewType("N", "torch.Tensor")
        L = Literal["torch.Tensor"]
        w: "torch.Tensor" = z
        return z
    """,
    """
    import torch
    for i, (a, *b) in enumerate(torch.ones(3)):
        del a
    with torch.no_grad() as g, open(p) as (h, k):
        pass
    try:
        import apex
    except ImportError as e:
        apex = None
    if (n := torch.numel(x)) > 0:
        x.data[0] += n
    x[0], x.a = 1, 2
    """,
    """
    import os, torch
    from . import sibling
    from .pkg.mod import thing as t
    from ..up import *
    @torch.no_grad()
    @sibling.deco
    def run(model, *args, flag: bool = torch.cuda.is_available(), **kwargs) -> torch.Tensor:
        return t(model)(*args, **kwargs)
    class Net(torch.nn.Module, metaclass=sibling.Meta):
        @staticmethod
        def forward(x: torch.Tensor = torch.zeros(1)):
            return Net, x
    """,
    """
    import torch
    match command:
        case [torch.float32, *rest] if rest:
            pass
        case {"k": v, **others}:
            pass
        case Point(x=0, y=torch) as p:
            pass
    async def a():
        async with torch.cuda.stream(s) as st:
            async for q in aiter(st):
                await q
    """,
]

NODE_TYPES = (cst.Name, cst.Attribute)
# Whitespace and punctuation: libcst gives them a scope, nothing asks for it, our walk skips them.
TOKENS = (cst.BaseParenthesizableWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Newline, cst.Comment,
          cst.Comma, cst.Dot, cst.Colon, cst.AssignEqual, cst.Semicolon, cst.LeftParen, cst.RightParen,
          cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace,
          cst.BaseBinaryOp, cst.BaseUnaryOp, cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseAugOp, cst.Asynchronous,
          cst.ImportStar)


def libcst_scopes(module: cst.Module):
    wrapper = cst.metadata.MetadataWrapper(module, unsafe_skip_copy=True)
    return wrapper.resolve(ScopeProvider)


class _Adapted:
    """libcst's qualified names, with sources spelled as ours."""

    SOURCES = {QualifiedNameSource.IMPORT: ours.IMPORT, QualifiedNameSource.BUILTIN: ours.BUILTIN,
               QualifiedNameSource.LOCAL: ours.LOCAL}

    @classmethod
    def names(cls, names) -> set:
        return {(qn.name, cls.SOURCES[qn.source]) for qn in names}


def _binding_key(assignment) -> tuple:
    return (type(assignment).__name__, assignment.name, id(getattr(assignment, "node", None)))


def differences(source: str, limit: int = 5) -> List[str]:
    """How our scope analysis of ``source`` differs from libcst's (empty when it does not)."""
    module = cst.parse_module(source)
    expected = libcst_scopes(module)
    actual = ours.walk(module, ours.Listener())
    problems: List[str] = []

    def report(message: str) -> None:
        if len(problems) < limit:
            problems.append(message)

    in_file = _Recorder(cst.CSTNode)
    module.visit(in_file)
    in_file_ids = {id(node) for node in in_file.seen}  # not the nodes of parsed string annotations
    their_ids: Dict[int, object] = {}
    for node, scope in expected.items():
        if scope is None or isinstance(node, TOKENS) or id(node) not in in_file_ids:
            continue
        mine = actual.get(node)
        if mine is None:
            report(f"no scope for {type(node).__name__} {module.code_for_node(node)[:40]!r}")
            continue
        kind = type(scope).__name__
        if type(mine).__name__ != kind:
            report(f"{type(node).__name__} {module.code_for_node(node)[:40]!r}: {type(mine).__name__} != {kind}")
        their_ids.setdefault(id(scope), mine)
        if their_ids[id(scope)] is not mine:
            report(f"{type(node).__name__} {module.code_for_node(node)[:40]!r}: scopes do not line up")
        if isinstance(node, NODE_TYPES):
            theirs_names = _Adapted.names(scope.get_qualified_names_for(node))
            our_names = {(qn.name, qn.source) for qn in mine.get_qualified_names_for(node)}
            if theirs_names != our_names:
                report(f"qualified names of {module.code_for_node(node)[:40]!r}: {sorted(our_names)} != "
                       f"{sorted(theirs_names)}")
        if isinstance(node, cst.Name):
            name = node.value
            theirs_bindings = {_binding_key(a) for a in scope[name]} if name in scope else set()
            our_bindings = {_binding_key(a) for a in mine[name]} if name in mine else set()
            if theirs_bindings != our_bindings:
                report(f"bindings of {name!r}: {sorted(our_bindings)} != {sorted(theirs_bindings)}")
    for node in actual:
        if node not in expected and id(node) in in_file_ids:
            report(f"extra scope for {type(node).__name__} {module.code_for_node(node)[:40]!r}")
    # The reads of every binding (an import's uses are renamed by its fixes).
    for scope in {id(s): s for s in expected.values() if s is not None}.values():
        mine = their_ids.get(id(scope))
        if mine is None:
            continue
        for assignment in scope.assignments:
            matching = [a for a in mine.assignments[assignment.name] if _binding_key(a) == _binding_key(assignment)]
            if len(matching) != 1:
                report(f"binding {assignment.name!r} missing or repeated")
                continue
            theirs_reads = {id(access.node) for access in assignment.references}
            our_reads = {id(access.node) for access in matching[0].references}
            if theirs_reads != our_reads:
                report(f"reads of {assignment.name!r}: {len(our_reads)} != {len(theirs_reads)}")
    return problems


@pytest.mark.parametrize("snippet", SNIPPETS, ids=range(len(SNIPPETS)))
def test_snippets_are_analysed_as_libcst_does(snippet):
    assert differences(textwrap.dedent(snippet)) == []


class _Recorder(cst.CSTVisitor):
    def __init__(self, wanted) -> None:
        super().__init__()
        self.wanted, self.seen = wanted, []

    def on_visit(self, node) -> bool:
        if isinstance(node, self.wanted):
            self.seen.append(node)
        return True


def test_the_walk_hands_the_collector_every_node_libcst_visits():
    source = "\n".join(textwrap.dedent(s) for s in SNIPPETS)
    module = cst.parse_module(source)
    wanted = (cst.Call, cst.Attribute, cst.Name, cst.Subscript, cst.Assign, cst.AugAssign, cst.ImportFrom,
              cst.Import, cst.ClassDef, cst.FunctionDef, cst.Comparison, cst.BinaryOperation, cst.Expr, cst.Arg,
              cst.Param, cst.SimpleString, cst.CompFor, cst.AsName, cst.ImportAlias, cst.Decorator, cst.Lambda)
    recorder = _Recorder(wanted)
    module.visit(recorder)
    file_context, collected = analyse(module, wanted)
    ours_seen = [node for nodes in collected.values() for node, _ in nodes]
    assert len(ours_seen) == len(recorder.seen)
    assert {id(n) for n in ours_seen} == {id(n) for n in recorder.seen}
    # Each node type in libcst's order (comprehensions aside, which are read in evaluation order).
    for node_type in (cst.Call, cst.Assign, cst.ImportFrom, cst.FunctionDef):
        assert [n for n in ours_seen if type(n) is node_type] == [n for n in recorder.seen if type(n) is node_type]


def test_frames_enclose_what_libcst_would():
    module = cst.parse_module(textwrap.dedent("""
        @torch.no_grad()
        def f(x=torch.zeros(1)):
            for i in x:
                with ctx:
                    torch.ones(i)
        class C:
            y = torch.tensor(2)
    """))
    _, collected = analyse(module, [cst.Call])

    def frames(frame):
        out = []
        while frame is not None:
            out.append(type(frame.node).__name__)
            frame = frame.parent
        return out

    by_code = {module.code_for_node(n): frames(f) for n, f in collected[cst.Call]}
    assert by_code["torch.no_grad()"] == ["FunctionDef"]
    assert by_code["torch.zeros(1)"] == ["FunctionDef"]
    assert by_code["torch.ones(i)"] == ["With", "For", "FunctionDef"]
    assert by_code["torch.tensor(2)"] == ["ClassDef"]


def test_resolver_answers_through_our_scopes():
    module = cst.parse_module("import torch.nn.functional as F\nclass G: pass\ny = F.relu(x) + G.relu(x)\n")
    file_context, collected = analyse(module, [cst.Call])
    calls = {module.code_for_node(n.func): n for n, _ in collected[cst.Call]}
    resolver: Resolver = file_context.resolver
    assert resolver.resolve(calls["F.relu"].func) == "torch.nn.functional.relu"
    assert resolver.resolve(calls["G.relu"].func) is None
    assert resolver.name_for_module("torch.nn.functional", calls["F.relu"]) == "F"
    assert resolver.is_unbound("numpy", calls["F.relu"]) and not resolver.is_unbound("G", calls["F.relu"])


def bound_name_differences(source: str) -> List[str]:
    """Where the names Python's tree says the file binds (``outline.bound_names``,
    which answers ``Resolver.is_unbound`` for the whole file) differ from the
    bindings libcst's scopes record, in every scope."""
    from libcst.metadata import BuiltinAssignment

    from torchlint.analysis.outline import Outline, bound_names

    scopes = libcst_scopes(cst.parse_module(source))
    theirs = {a.name for scope in {id(s): s for s in scopes.values() if s is not None}.values()
              for a in scope.assignments if not isinstance(a, BuiltinAssignment)}
    ours_names = bound_names(Outline(ast.parse(source)))
    return [f"only libcst: {sorted(theirs - ours_names)}", f"only ours: {sorted(ours_names - theirs)}"] \
        if theirs != ours_names else []


@pytest.mark.parametrize("snippet", SNIPPETS, ids=range(len(SNIPPETS)))
def test_names_bound_anywhere_are_those_libcst_records(snippet):
    assert bound_name_differences(textwrap.dedent(snippet)) == []


# -- real code -------------------------------------------------------------------


def _corpus_files(tmp_path_factory) -> List[Path]:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import corpus as bench
    finally:
        sys.path.pop(0)
    cache = tmp_path_factory.mktemp("scopes")
    package = bench.Package("torchvision", "0.2.1", "pure-Python wheel, 25 files")
    prepared = bench.prepare(package, cache, pip_options=("--retries", "1", "--timeout", "30"))
    if prepared.error:
        pytest.skip(f"cannot download {package.spec}: {prepared.error}")
    files = sorted(prepared.root.rglob("*.py"))
    # Plus this repository's own code: large, varied, and typed (string annotations).
    return files + sorted((REPO / "torchlint").rglob("*.py"))


def test_real_code_is_analysed_as_libcst_does(tmp_path_factory):
    files = _corpus_files(tmp_path_factory)
    assert len(files) > 60
    failures = {}
    for path in files:
        source = path.read_text(encoding="utf-8")
        try:
            ast.parse(source)
        except SyntaxError:
            continue
        problems = differences(source, limit=3) + bound_name_differences(source)
        if problems:
            failures[str(path)] = problems
    assert failures == {}


def _node_classes() -> List[type]:
    found, pending = set(), [cst.CSTNode]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                pending.append(sub)
    return sorted(found, key=lambda kind: (kind.__module__, kind.__qualname__))


def test_child_fields_follow_the_visiting_order_libcst_s_source_spells():
    """``child_fields`` reads the visiting order from the compiled method's
    constants; libcst's source (what it used to read, at ~50 ms on a document's
    first check) must give the same order for every node class."""
    import inspect
    import re

    visited = re.compile(r'visit_\w+\(\s*self,\s*"(\w+)"')
    compared = 0
    for kind in _node_classes():
        method = getattr(kind, "_visit_and_replace_children", None)
        try:
            source = inspect.getsource(method)
        except (OSError, TypeError):
            continue  # abstract: nothing visited
        order = list(dict.fromkeys(visited.findall(source)))
        declared = getattr(kind, "__dataclass_fields__", {})
        expected = [f for f in order + [f for f in declared if f not in order]
                    if not ours._WHITESPACE.match(f) and f != "__slots__"]
        assert list(ours.child_fields(kind)) == expected, kind
        compared += 1
    assert compared > 150  # every concrete node class of libcst


_BINDING_ORDER = """\
import sys
import libcst as cst
from torchlint.analysis.scopes import Listener, walk

source = "def f(a):\\n" + "".join(f"    x = a + {i}\\n" for i in range(40)) + "    return x\\n"
module = cst.parse_module(source)
scopes = walk(module, Listener())
returned = module.body[0].body.body[-1].body[0].value
print([binding.index for binding in scopes[returned][returned.value]])
"""


def test_the_bindings_of_a_name_come_in_one_order_whatever_the_hash_seed():
    # Inference asks about a name's bindings in the order its set of them gives; which
    # question meets a cycle first, and so what is remembered, followed that order, which
    # an identity hash (a memory address) made differ between runs.
    orders = set()
    for seed in ("1", "2", "3", "4"):
        done = subprocess.run([sys.executable, "-c", _BINDING_ORDER], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "PYTHONHASHSEED": seed})
        assert done.returncode == 0, done.stderr
        orders.add(done.stdout)
    assert len(orders) == 1
