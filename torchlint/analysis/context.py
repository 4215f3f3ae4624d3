"""One traversal per file: collect what rules want and what inference needs.

The walker records, in a single pass, every node some enabled rule handles
(with its enclosing functions, classes and loops), every local binding and
every method's ``self`` parameter. Rules run afterwards over the collected
nodes, when all bindings of the file are known.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import (
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
    Type,
    TypeVar,
)

import libcst as cst

from torchlint.analysis.inference import NO_PROJECT, Binding, Block, FileFacts, Inference, NestedStore, ProjectLink, constant_key
from torchlint.analysis.names import Resolver
from torchlint.analysis.outline import Outline, free_names
from torchlint.analysis.scopes import Listener, walk
from torchlint.core.settings import Settings

T = TypeVar("T")


@dataclass(frozen=True)
class Frame:
    """An enclosing FunctionDef, ClassDef, For, While or With, linked to its parent."""

    node: cst.CSTNode
    parent: Optional["Frame"]


class FileContext:
    """Shared knowledge about one file: names, values, and its source."""

    def __init__(
        self, module: cst.Module, resolver: Resolver, inference: Inference, collector: "Collector", settings: Settings
    ) -> None:
        self.module = module
        self.settings = settings
        self.top_of: Dict[cst.CSTNode, cst.CSTNode] = {}  # node -> its top-level statement
        self.method_of: Dict[cst.CSTNode, cst.CSTNode] = {}  # node -> its method of a top-level class
        self.resolver = resolver
        self.inference = inference
        self._collector = collector
        self._memo: Dict[object, object] = {}

    def release(self) -> None:
        """Let go of the file's scopes now that its check is over (``scopes.release``)."""
        self.resolver.release()
        self._memo.clear()

    def call_of(self, callee: cst.CSTNode) -> Optional[cst.Call]:
        """The Call whose ``func`` is ``callee``, if it is called."""
        return self._collector.call_of.get(callee)

    def statement_line_of(self, small: cst.CSTNode) -> Optional[cst.SimpleStatementLine]:
        return self._collector.line_of.get(small)

    def line_holding(self, node: cst.CSTNode) -> Optional[cst.SimpleStatementLine]:
        """The statement line holding the expression ``node``, found through
        the name it starts with (``F.sigmoid(x)``: ``F``); None when it
        starts with no name or is not in a simple statement."""
        while not isinstance(node, cst.Name):
            if isinstance(node, (cst.Attribute, cst.Subscript)):
                node = node.value
            elif isinstance(node, cst.Call):
                node = node.func
            elif isinstance(node, cst.Arg):
                node = node.value
            else:
                return None
        small = self._collector.facts.statement_of.get(node)
        return self._collector.line_of.get(small) if small is not None else None

    def line_of_call(self, call: cst.Call) -> Optional[cst.SimpleStatementLine]:
        """The statement line holding ``call`` (None: in a compound statement's header)."""
        small = self._collector.facts.call_statement.get(call)
        return self._collector.line_of.get(small) if small is not None else None

    def nodes(self, kind: Type[cst.CSTNode]) -> List[cst.CSTNode]:
        """Every node of exactly type ``kind`` in the analysed module, in the
        order of the traversal: for a rule that ``gathers`` that type, or
        handles it with a ``check_`` method."""
        return [node for node, _ in self._collector.collected.get(kind, ())]

    def is_store_target(self, expr: cst.CSTNode) -> bool:
        """Is ``expr`` assigned to or deleted (``x.a = 1``, ``x.a += 1``, ``del x.a``)?"""
        return expr in self._collector.store_targets

    def memo(self, key: object, compute: Callable[[], T]) -> T:
        """A fact about the whole file, computed once (``key`` names it, e.g.
        ``("TL302", "trains")``): for rules whose finding at one node depends
        on code anywhere else in the file."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]  # type: ignore[return-value]


@dataclass(frozen=True)
class NodeContext:
    """Where a node sits: its file and its enclosing frames."""

    file: FileContext
    frame: Optional[Frame]

    @property
    def resolver(self) -> Resolver:
        return self.file.resolver

    @property
    def inference(self) -> Inference:
        return self.file.inference

    def project_patches(self, qualified_names: Iterable[str]) -> bool:
        """Does a module of the project that runs before this file rebind one of
        these torch names (``torch.load = torch_load``)? Then the file calls the
        project's replacement, whatever it spells."""
        patched = self.file.memo("project patches", self.inference.project.patched_torch_names)
        return any(name in patched for name in qualified_names)

    def enclosing(self, *types: Type[cst.CSTNode]) -> Optional[cst.CSTNode]:
        frame = self.frame
        while frame is not None:
            if isinstance(frame.node, types):
                return frame.node
            frame = frame.parent
        return None

    def enclosing_class_of_method(self) -> Optional[cst.ClassDef]:
        """The class whose method directly contains this node, if any."""
        frame = self.frame
        while frame is not None and not isinstance(frame.node, cst.FunctionDef):
            frame = frame.parent
        if frame is not None and frame.parent is not None and isinstance(frame.parent.node, cst.ClassDef):
            return frame.parent.node
        return None

    def in_loop(self) -> bool:
        """Inside a for/while loop of the same function."""
        frame = self.frame
        while frame is not None and not isinstance(frame.node, (cst.FunctionDef, cst.ClassDef)):
            if isinstance(frame.node, (cst.For, cst.While)):
                return True
            frame = frame.parent
        return False

    def enclosing_in_function(self, *types: Type[cst.CSTNode]) -> Iterator[cst.CSTNode]:
        """Enclosing frames of ``types``, innermost first, up to and including
        the nearest function or class (what governs this node when it runs:
        e.g. the ``with`` blocks around it and its function's decorators)."""
        frame = self.frame
        while frame is not None:
            if isinstance(frame.node, types):
                yield frame.node
            if isinstance(frame.node, (cst.FunctionDef, cst.ClassDef)):
                return
            frame = frame.parent


_FRAME_TYPES = frozenset((cst.FunctionDef, cst.ClassDef, cst.For, cst.While, cst.With))


class Collector(Listener):
    """What the single traversal collects. ``wanted`` lists the node types rules handle."""

    def __init__(self, wanted: Sequence[Type[cst.CSTNode]]) -> None:
        self._wanted = frozenset(wanted)  # exact types: rules handle concrete node classes
        self.collected: Dict[Type[cst.CSTNode], List[Tuple[cst.CSTNode, Optional[Frame]]]] = {}
        self.bindings: Dict[cst.Name, Binding] = {}
        self.self_params: Dict[cst.Param, cst.ClassDef] = {}
        self.call_of: Dict[cst.CSTNode, cst.Call] = {}  # a callee expression -> its Call
        self.line_of: Dict[cst.CSTNode, cst.SimpleStatementLine] = {}  # small statement -> its line
        self.store_targets: Set[cst.CSTNode] = set()  # expressions assigned to or deleted
        self.facts = FileFacts()
        self._block: Optional[Block] = None
        self._statement: Optional[cst.CSTNode] = None  # the small statement being walked
        self._frame: Optional[Frame] = None
        self._guards = _Guards(self.facts.guarded)

    def on_visit(self, node: cst.CSTNode) -> None:
        kind = type(node)
        if kind is cst.Module:
            self.facts.module = node
            # Module-level code is a block too: a binding there dominates the reads after it.
            self._block = Block(node, None)
        if kind in self._wanted:
            self.collected.setdefault(kind, []).append((node, self._frame))
        if kind is cst.Try or kind is cst.TryStar or kind is cst.With:
            self.facts.guarded_bodies.add(node.body)
        if kind in _FRAME_TYPES:
            if kind is cst.FunctionDef:
                self._note_params(node)
                if self._frame is not None:
                    self._note_self_param(node, self._frame.node)
            self._frame = Frame(node, self._frame)
        if kind is cst.Call:
            self.call_of[node.func] = node
            self.facts.calls.append(node)
            if self._statement is not None:
                self.facts.call_statement[node] = self._statement
            self._note_backward(node)
            self._note_filling(node)
            self._note_passed_names(node)
        elif kind is cst.Name:
            self.facts.block_of[node] = self._block
            if self._statement is not None:
                self.facts.statement_of[node] = self._statement
            if self._frame is not None and type(self._frame.node) is cst.While:
                self._note_while_test(node, self._frame.node)
            if self._guards.active:
                self._guards.read(node)
        elif kind is cst.Return:
            function = self._function()
            if function is not None:
                self.facts.returns.setdefault(function, []).append(node.value)
                self.facts.return_blocks.setdefault(function, []).append(self._block)
        elif kind is cst.Yield:
            function = self._function()
            if function is not None:
                self.facts.generators.add(function)
        elif kind is cst.If or kind is cst.IndentedBlock:
            self._guards.enter(node)
            if kind is cst.If:
                self._note_branches(node)
            if kind is cst.IndentedBlock:
                self._block = Block(node, self._block, self._loop_body(node))
        elif kind is cst.SimpleStatementSuite:
            # ``if c: x = 1`` / ``for i in r: x = f(x)``: a block too, though on one line.
            self._block = Block(node, self._block, self._loop_body(node))
        elif kind is cst.SimpleStatementLine:
            for small in node.body:
                self.line_of[small] = node
        if isinstance(node, cst.BaseSmallStatement):
            self._statement = node
        handler = _BINDING_HANDLERS.get(kind)
        if handler is not None:
            handler(self, node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        kind = type(original_node)
        if original_node is self._statement:
            self._statement = None
        if kind in _FRAME_TYPES:
            assert self._frame is not None
            self._frame = self._frame.parent
        elif kind is cst.If or kind is cst.IndentedBlock or kind is cst.Module:
            self._guards.leave(original_node)
            if (kind is cst.IndentedBlock or kind is cst.Module) and self._block is not None:
                self._block = self._block.parent
        elif kind is cst.SimpleStatementSuite and self._block is not None:
            self._block = self._block.parent

    def _loop_body(self, block: cst.CSTNode) -> bool:
        """Is ``block`` the body of the ``for`` or ``while`` being walked (not its ``else``)?"""
        frame = self._frame
        return frame is not None and type(frame.node) in (cst.For, cst.While) and frame.node.body is block

    def _note_passed_names(self, node: cst.Call) -> None:
        """A name passed as it is to a call inside a def (``helper(x, average)``)."""
        names = [arg.value for arg in node.args if isinstance(arg.value, cst.Name)]
        function = self._function() if names else None
        if function is not None:
            self.facts.passed_names.setdefault(function, []).extend(names)

    def _note_branches(self, node: cst.If) -> None:
        """Which blocks ``node``'s test decides: its body, its ``else`` body, and an
        ``elif`` (reached only when the test is false)."""
        facts = self.facts
        facts.branches[node.body] = (node, True)
        if isinstance(node.orelse, cst.Else):
            facts.branches[node.orelse.body] = (node, False)
        elif isinstance(node.orelse, cst.If):
            facts.elif_of[node.orelse] = node
        function = self._function()
        if function is not None:
            facts.function_tests.setdefault(function, []).append(node)

    def _function(self) -> Optional[cst.FunctionDef]:
        """The innermost function being walked (a class body or module has none)."""
        frame = self._frame
        while frame is not None and not isinstance(frame.node, (cst.FunctionDef, cst.ClassDef)):
            frame = frame.parent
        return frame.node if frame is not None and isinstance(frame.node, cst.FunctionDef) else None

    def _note_while_test(self, name: cst.Name, loop: cst.While) -> None:
        """A name of ``loop``'s test (or ``else``, outside its body): read again after each pass."""
        block = self._block
        while block is not None and block.node is not loop.body:
            block = block.parent
        if block is None:
            self.facts.while_tests[name] = loop

    def _note_filling(self, call: cst.Call) -> None:
        """``c.append(v)`` puts ``v`` into the container ``c``; ``c.update(d)`` and the
        other filling methods put in what inference does not follow."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in _FILLING_METHODS:
            return
        container = _container(func.value)
        if container is None:
            nested = _element_of_container(func.value)
            if nested is not None:  # ``c[k].append(v)``: what the element holds is not followed
                self.facts.item_stores.append((nested[0], NestedStore(None, None)))
            return
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if func.attr.value == "append" and len(call.args) == 1 and len(positional) == 1:
            self.facts.item_stores.append((container, Binding("assign", positional[0].value)))
        else:
            self.facts.item_stores.append((container, None))

    def _note_backward(self, call: cst.Call) -> None:
        """``name.backward()`` with no gradient: evidence that ``name`` is a one-element tensor;
        ``name.size(0)``: that it is a tensor (NumPy's ``size`` is a number, not a method);
        ``range(name)``: that it is an integer."""
        func = call.func
        if (isinstance(func, cst.Attribute) and func.attr.value == "backward" and isinstance(func.value, cst.Name)
                and all(arg.keyword is not None and arg.keyword.value != "gradient" for arg in call.args)):
            self.facts.backward_receivers.append(func.value)
        elif (isinstance(func, cst.Attribute) and func.attr.value == "size" and isinstance(func.value, cst.Name)
                and len(call.args) == 1 and call.args[0].keyword is None and _is_integer(call.args[0].value)):
            self.facts.sized_receivers.append(func.value)
        elif isinstance(func, cst.Name) and func.value in ("range", "xrange"):
            for arg in call.args:
                if isinstance(arg.value, cst.Name) and arg.keyword is None and not arg.star:
                    self.facts.counted_names.append((func, arg.value))

    # -- bindings -----------------------------------------------------------

    def _bind(self, target: cst.BaseExpression, how: str, value: cst.BaseExpression, path=()) -> None:
        self.store_targets.add(target)
        if isinstance(target, cst.Name):
            self.bindings[target] = Binding(how, value, tuple(path))
            self._guards.rebound(target.value)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            # ``self.attr = value``: which class ``self`` belongs to is known after the walk.
            self.facts.attribute_bindings.append((target.value, target.attr.value, Binding(how, value, tuple(path))))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for index, element in enumerate(target.elements):
                if isinstance(element, cst.Element):
                    self._bind(element.value, how, value, (*path, index))
        elif isinstance(target, cst.Subscript):
            binding = Binding(how, value, tuple(path)) if how == "assign" else None
            container = _container(target.value)
            if container is not None:
                # ``c[k] += v`` keeps an element's kind only as far as ``v`` tells: unknown.
                self.facts.item_stores.append((container, binding))
                return
            nested = _element_of_container(target.value)
            if nested is not None:
                container, depth = nested
                key = constant_key(target) if depth == 1 else None
                self.facts.item_stores.append((container, NestedStore(key, binding if key is not None else None)))

    def _on_assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, "assign", node.value)

    def _on_ann_assign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, "assign", node.value)

    def _on_aug_assign(self, node: cst.AugAssign) -> None:
        # ``t @= w`` is no in-place update of a tensor: it binds a new product.
        self._bind(node.target, "matmul" if isinstance(node.operator, cst.MatrixMultiplyAssign) else "aug",
                   node.value)

    def _on_for(self, node: cst.For) -> None:
        self._bind(node.target, "for", node.iter)

    def _on_named_expr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, "assign", node.value)

    def _on_del(self, node: cst.Del) -> None:
        self._mark_stored(node.target)

    def _mark_stored(self, target: cst.BaseExpression) -> None:
        self.store_targets.add(target)
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._mark_stored(element.value)

    def _note_params(self, function: cst.FunctionDef) -> None:
        params = function.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            self.facts.param_function[param] = function

    def _note_self_param(self, function: cst.FunctionDef, owner: cst.CSTNode) -> None:
        if not isinstance(owner, cst.ClassDef):
            return
        decorators = {cst.helpers.get_full_name_for_node(d.decorator) for d in function.decorators}
        if decorators & {"staticmethod", "classmethod"}:
            return
        params = function.params.posonly_params or function.params.params
        if params:
            self.self_params[params[0]] = owner


# Methods that put something into a list or dict in place.
_FILLING_METHODS = frozenset({"append", "extend", "insert", "update", "setdefault", "__setitem__"})


def _container(expr: cst.BaseExpression) -> Optional[object]:
    """The container key of a subscripted or filled expression: a name, or ``(self, attr)``."""
    if isinstance(expr, cst.Name):
        return expr
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        return (expr.value, expr.attr.value)
    return None


def _element_of_container(expr: cst.BaseExpression) -> Optional[Tuple[object, int]]:
    """For ``c[k]`` (or ``c[a][b]``...): the container key of ``c`` and how many
    subscripts down the expression is; None when no container is at its root."""
    depth = 0
    while isinstance(expr, cst.Subscript):
        expr, depth = expr.value, depth + 1
    container = _container(expr) if depth else None
    return (container, depth) if container is not None else None


class _Guards:
    """Reads of a name where a test has proved it a tensor: inside ``if
    isinstance(x, torch.Tensor):`` / ``if torch.is_tensor(x):``, and after ``if not
    ...: return`` (or ``raise``, ``continue``, ``break``) until its block ends. A
    new binding of the name ends the guard. Which callee and type the test
    names is checked later, by inference, when it can resolve them."""

    def __init__(self, guarded: Dict[cst.Name, Tuple[cst.BaseExpression, Optional[cst.BaseExpression]]]) -> None:
        self._guarded = guarded
        self.active: List[Tuple[str, Tuple[cst.BaseExpression, Optional[cst.BaseExpression]], cst.CSTNode]] = []
        self._pending: Dict[cst.CSTNode, Tuple[str, Tuple[cst.BaseExpression, Optional[cst.BaseExpression]]]] = {}
        self._blocks: List[cst.CSTNode] = []

    def enter(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.IndentedBlock):
            self._blocks.append(node)
            guard = self._pending.pop(node, None)
            if guard is not None:
                self.active.append((guard[0], guard[1], node))
            return
        test = _tensor_test(node.test)
        if test is None:
            return
        name, proof, negated = test
        if not negated:
            self._pending[node.body] = (name, proof)
        elif isinstance(node.orelse, cst.Else):
            self._pending[node.orelse.body] = (name, proof)

    def leave(self, node: cst.CSTNode) -> None:
        self.active = [guard for guard in self.active if guard[2] is not node]
        if isinstance(node, cst.IndentedBlock) and self._blocks and self._blocks[-1] is node:
            self._blocks.pop()
        if isinstance(node, cst.If) and node.orelse is None and _always_leaves(node.body):
            test = _tensor_test(node.test)
            if test is not None and test[2]:
                # ``if not isinstance(x, T): return``: the rest of the block has a tensor.
                block = self._blocks[-1] if self._blocks else _MODULE_LEVEL
                self.active.append((test[0], test[1], block))

    def read(self, name: cst.Name) -> None:
        for guarded_name, proof, _ in self.active:
            if guarded_name == name.value:
                self._guarded[name] = proof

    def rebound(self, name: str) -> None:
        self.active = [guard for guard in self.active if guard[0] != name]


_MODULE_LEVEL = cst.Module(body=())  # stands for "until the end of the file"


def _tensor_test(test: cst.BaseExpression):
    """``isinstance(x, T)`` / ``f(x)`` with a name ``x`` (possibly under ``not``):
    (x, (callee, T or None), negated), for inference to check callee and T."""
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    if negated:
        test = test.expression
    if not isinstance(test, cst.Call) or any(arg.keyword is not None or arg.star for arg in test.args):
        return None
    args = test.args
    if not args or not isinstance(args[0].value, cst.Name) or len(args) > 2:
        return None
    kind = args[1].value if len(args) == 2 else None
    return args[0].value.value, (test.func, kind), negated


def _always_leaves(body: cst.BaseSuite) -> bool:
    """Does the block end by leaving (``return``, ``raise``, ``continue``, ``break``)?"""
    statements = body.body if isinstance(body, cst.IndentedBlock) else (body,)
    if not statements:
        return False
    last = statements[-1]
    smalls = last.body if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else ()
    return bool(smalls) and isinstance(smalls[-1], (cst.Return, cst.Raise, cst.Continue, cst.Break))


def _spelled_module(node: cst.ImportFrom) -> str:
    module = cst.helpers.get_full_name_for_node(node.module) if node.module is not None else ""
    return "." * len(node.relative) + (module or "")


_BINDING_HANDLERS = {
    cst.Assign: Collector._on_assign,
    cst.AnnAssign: Collector._on_ann_assign,
    cst.AugAssign: Collector._on_aug_assign,
    cst.For: Collector._on_for,
    cst.CompFor: Collector._on_for,  # ``[t.data[0] for t in targets]``: the same binding as a ``for`` statement
    cst.NamedExpr: Collector._on_named_expr,
    cst.Del: Collector._on_del,
}


def analyse(
    module: cst.Module, wanted: Sequence[Type[cst.CSTNode]], settings: Settings = Settings(),
    tree: Optional[ast.Module] = None, outline: Optional[Outline] = None, project: ProjectLink = NO_PROJECT,
) -> Tuple[FileContext, Mapping[Type[cst.CSTNode], List[Tuple[cst.CSTNode, Optional[Frame]]]]]:
    """The single traversal: scopes and bindings, and the nodes rules want.

    Questions about the whole file are answered from Python's ``tree`` of
    it, or its ``outline``: ``module`` may leave parts of the file out
    (``narrowing.py``). Without them, ``module`` is the whole file."""
    collector = Collector(wanted)
    tops: Dict[cst.CSTNode, cst.CSTNode] = {}
    def whole_file() -> Outline:
        nonlocal outline
        if outline is None:
            outline = Outline(tree if tree is not None else ast.parse(module.code), star_exports=project.star_exports,
                              function_classes=project.function_classes,
                              call_may_give_tensor=project.call_may_give_tensor)
        return outline

    def star_exports(node: cst.ImportFrom) -> Optional[Dict[str, str]]:
        free = free_names(whole_file())  # only a name the file reads and binds nowhere can come from it
        if not free:
            return None
        exports = project.star_exports(_spelled_module(node)) or {}
        return {name: target for name, target in exports.items() if name in free}

    methods: Dict[cst.CSTNode, cst.CSTNode] = {}
    scopes = walk(module, collector, tops, star_exports=star_exports, methods=methods)

    resolver = Resolver(scopes, whole_file)
    inference = Inference(resolver, collector.bindings, collector.self_params, collector.facts, project)
    file_context = FileContext(module, resolver, inference, collector, settings)
    file_context.top_of = tops
    file_context.method_of = methods
    return file_context, collector.collected


def _is_integer(expr: cst.BaseExpression) -> bool:
    """``0`` or ``-1``: a literal dimension."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, cst.Integer)
