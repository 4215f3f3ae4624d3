"""TL217: an element taken out of a tensor used as a dict key (a number before torch 0.4)."""

import ast
from typing import FrozenSet, Iterator

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.inference import Kind
from torchlint.analysis.outline import Outline
from torchlint.core.diagnostic import Edit, Fix
from torchlint.rules.rule import Example, Finding, FixSafety, Rule

_LOOKUPS = frozenset({"get", "pop", "setdefault"})


class TensorDictKey(Rule):
    code = "TL217"
    name = "tensor-dict-key"
    summary = "A tensor element used as a dict key: tensors hash by identity, so the lookup misses; use `.item()`"
    why = (
        "Before torch 0.4, indexing a tensor down to one element (`topi[0][0]`, `torch.multinomial(p, 1)[0]`) "
        "or iterating over a 1-D tensor gave a Python number, and code used it as a dictionary key "
        "(`index2word[ni]`, `counts[label] += 1`). Since 0.4 it gives a 0-dim tensor. A tensor hashes by "
        "its identity, not its value, so the lookup raises `KeyError: tensor(3)` and counting by such keys "
        "makes a new entry for every element. The rule fires where the file (or the project) shows that "
        "the container is a dict (a literal, a comprehension, `dict()`, `{}` filled in place) and that the "
        "key is an element of a tensor: a 0-dim tensor, an integer-indexed element, or the target of a "
        "`for` loop over a tensor."
    )
    fix_safety = FixSafety.SAFE
    fix_description = "Reads the number out of the key: `d[k]` becomes `d[k.item()]`, what the key was before torch 0.4."
    triggers = ("[", ".get(", ".pop(", ".setdefault(")
    requires = ("torch",)
    references = ("https://pytorch.org/blog/pytorch-0_4_0-migration-guide/",)
    # Opt-in for now: its screen lets many modern files through (a dict and a
    # for loop are everywhere), and their keys' values cost the project model.
    enabled_by_default = False

    flagged = (
        Example(
            """
            import torch
            idx2word = {i: w for i, w in enumerate(["the", "cat", "sat"])}
            p = torch.tensor([0.0, 1.0, 0.0])
            word_id = torch.multinomial(p, 1)[0]
            print(idx2word[word_id])
            """,
            """
            import torch
            idx2word = {i: w for i, w in enumerate(["the", "cat", "sat"])}
            p = torch.tensor([0.0, 1.0, 0.0])
            word_id = torch.multinomial(p, 1)[0]
            print(idx2word[word_id.item()])
            """,
            runnable=True,
            raises="KeyError",
        ),
        Example(
            """
            import torch
            labels = torch.tensor([1, 0, 1])
            counts = {}
            for label in labels:
                counts[label] = counts.get(label, 0) + 1
            print(sorted(counts.values()))
            """,
            """
            import torch
            labels = torch.tensor([1, 0, 1])
            counts = {}
            for label in labels:
                counts[label.item()] = counts.get(label.item(), 0) + 1
            print(sorted(counts.values()))
            """,
            count=2,
            differs=True,  # torch >= 0.4 counts each element apart: [1, 1, 1], not [1, 2]
        ),
    )
    accepted = (
        """
        import torch
        words = ["the", "cat", "sat"]
        word_id = torch.multinomial(torch.tensor([0.0, 1.0, 0.0]), 1)[0]
        print(words[word_id])  # a list takes a 0-dim integer tensor as an index
        """,
        """
        import torch
        idx2word = {0: "the", 1: "cat"}
        word_id = torch.multinomial(torch.tensor([1.0, 0.0]), 1)[0]
        print(idx2word[word_id.item()], idx2word[int(word_id)])
        """,
        """
        import torch
        cache = {}
        def remember(t, value):
            cache[t] = value  # a tensor of the caller's, as an identity key: not flagged
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A lookup in a name or attribute the file binds to a dict it makes, with a
        # key that may be an element of a tensor: itself a subscript by position,
        # or a name bound to one or by a ``for`` loop.
        made = dict_names(outline.whole_file)
        if not made:
            return False
        elements = _element_names(outline.whole_file)
        lookups = [(node.value, node.slice) for node in outline.nodes(ast.Subscript)]
        lookups += [(call.func.value, call.args[0]) for call in outline.calls(*_LOOKUPS)  # type: ignore[attr-defined]
                    if call.args and isinstance(call.func, ast.Attribute)]
        return any(_container_name(container) in made and (
            _by_position(key) or (isinstance(key, ast.Name) and key.id in elements)) for container, key in lookups)

    def check_Subscript(self, node: cst.Subscript, ctx: NodeContext) -> Iterator[Finding]:
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return
        yield from self._check(node.value, node.slice[0].slice.value, ctx)

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in _LOOKUPS and node.args
                and node.args[0].keyword is None and not node.args[0].star):
            return
        yield from self._check(func.value, node.args[0].value, ctx)

    def _check(self, container: cst.BaseExpression, key: cst.BaseExpression, ctx: NodeContext) -> Iterator[Finding]:
        spelled = container.attr.value if isinstance(container, cst.Attribute) else getattr(container, "value", None)
        if spelled not in dict_names(ctx.resolver.file_outline().whole_file):
            return  # the screen's condition: a dict the file makes
        if not _is_tensor_element(key, ctx) or ctx.inference.value(container).kind is not Kind.MAPPING:
            return  # the key first: the container's value may take the project model
        yield Finding(key, "a tensor element as a dict key hashes by identity, so the lookup misses; use `.item()`",
                      Fix([Edit(key, _item)]),
                      detail="before torch 0.4 the element was a Python number")


_DICT_MAKERS = frozenset({"dict", "OrderedDict", "defaultdict", "Counter"})


def dict_names(outline: Outline) -> FrozenSet[str]:
    """The names, and attribute names, the file assigns a dict it makes: a
    literal, a comprehension, ``dict()``, ``OrderedDict()``, ``defaultdict()``."""
    def compute() -> FrozenSet[str]:
        found = set()
        for kind in (ast.Assign, ast.AnnAssign):
            for node in outline.nodes(kind):
                value = node.value
                if not (isinstance(value, (ast.Dict, ast.DictComp)) or (
                        isinstance(value, ast.Call) and _last_name(value.func) in _DICT_MAKERS)):
                    continue
                for target in getattr(node, "targets", None) or [node.target]:
                    name = _container_name(target)
                    if name is not None:
                        found.add(name)
        return frozenset(found)

    return outline.memo("TL217 dict names", compute)


def _element_names(outline: Outline) -> FrozenSet[str]:
    """Names bound to a subscript by position, or by a ``for`` loop."""
    def compute() -> FrozenSet[str]:
        found = set()
        for node in outline.nodes(ast.Assign):
            if _by_position(node.value):
                found.update(t.id for t in node.targets if isinstance(t, ast.Name))
        for kind in (ast.For, ast.comprehension):
            for node in outline.nodes(kind):
                if isinstance(node.target, ast.Name):
                    found.add(node.target.id)
        return frozenset(found)

    return outline.memo("TL217 element names", compute)


def _by_position(expr: ast.AST) -> bool:
    """``t[0]``, ``t[i][j]``: a subscript whose index is no string literal and no slice."""
    return isinstance(expr, ast.Subscript) and not isinstance(expr.slice, ast.Slice) and not (
        isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, str))


def _container_name(expr: ast.AST):
    if isinstance(expr, ast.Name):
        return expr.id
    return expr.attr if isinstance(expr, ast.Attribute) else None


def _last_name(func: ast.AST):
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def _is_tensor_element(key: cst.BaseExpression, ctx: NodeContext) -> bool:
    """Is ``key`` a tensor freshly taken out of another: an integer-indexed element,
    a ``for`` target over a tensor (through a name's only binding), or 0-dim? The
    shape of the code first, the values after: most keys are no such thing."""
    if isinstance(key, cst.Subscript):
        return _integer_indexed(key) and ctx.inference.value(key.value).kind is Kind.TENSOR
    binding = ctx.inference.only_binding(key) if isinstance(key, cst.Name) else None
    if binding is None or binding.path:
        return False
    if binding.how == "assign" and isinstance(binding.value, cst.Subscript):
        made = binding.value
        return _integer_indexed(made) and ctx.inference.value(made.value).kind is Kind.TENSOR
    if binding.how == "for":
        return ctx.inference.value(binding.value).kind is Kind.TENSOR
    if binding.how == "assign" and isinstance(binding.value, cst.Call):
        value = ctx.inference.value(key)
        return value.kind is Kind.TENSOR and value.ndim == 0
    return False


def _integer_indexed(subscript: cst.Subscript) -> bool:
    """``t[i]``, ``t[0][0]``, ``t[i, j]``: every index a single position, no slice."""
    return all(isinstance(element.slice, cst.Index) and not isinstance(element.slice.value, (cst.SimpleString,))
               for element in subscript.slice)


def _item(node: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(node, cst.BaseExpression)
    return cst.Call(func=cst.Attribute(value=node, attr=cst.Name("item")))
