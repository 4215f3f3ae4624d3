"""TL206: `load_state_dict(..., strict=False)` whose missing/unexpected keys are thrown away."""

import ast
import re
from typing import Dict, FrozenSet, Iterator, List, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.inference import Kind, constant_key
from torchlint.analysis.outline import Outline, is_literal, keyword_value, qualified_names
from torchlint.analysis.checkpoint_paths import path_argument
from torchlint.core.settings import versions
from torchlint.knowledge.torch_api import TORCH_LOAD, TORCH_SAVE
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule


class UncheckedNonStrictLoad(Rule):
    code = "TL206"
    name = "unchecked-non-strict-load"
    summary = "`model.load_state_dict(sd, strict=False)` as a statement ignores which keys did not load"
    why = (
        "`strict=False` makes `load_state_dict` skip every key that does not match instead of raising, "
        "and returns the skipped ones as `missing_keys` and `unexpected_keys`. Throwing that result away "
        "hides the usual mistakes: a `module.` prefix left by `nn.DataParallel`, a renamed layer, a "
        "checkpoint for another architecture; the model then silently keeps its random weights. The rule "
        "reports the call when it is a bare statement, in files that import torch, and the state was read "
        "from a file (`torch.load`, `load_state_dict_from_url`, safetensors' `load_file`, or a part of what "
        "they return): another module's `state_dict()`, a subset of the model's own keys or a dict built "
        "in place is a partial load by construction, and so is a file that the same file's `torch.save` "
        "calls only ever write with a filtered part of a state dict (`{n: p for n, p in "
        "self.state_dict().items() if p.requires_grad}`); assigning or checking "
        "the result (even `_ = ...`) is the explicit way to say the mismatch is expected, and so is a comment "
        "about strictness right above the call or at the end of its line (`# non-strict: the head differs`): "
        "the author wrote down the decision."
    )
    fix_safety = FixSafety.NONE
    fix_description = (
        "None: what to do with mismatched keys is your decision. Keep the result and check it, e.g. "
        "`result = model.load_state_dict(sd, strict=False)` then `assert not result.missing_keys, "
        "result.missing_keys`, or log `result.unexpected_keys`."
    )
    triggers = (re.compile(r"strict\s*=\s*False"),)
    references = ("https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.load_state_dict",)
    # The returned NamedTuple of missing/unexpected keys exists since torch 1.1.
    torch_versions = versions(since="1.1")

    flagged = (
        Example(
            """
            import torch
            import torchvision
            model = torchvision.models.resnet18()
            model.load_state_dict(torch.load("weights.pt", map_location="cpu", weights_only=True), strict=False)
            """,
        ),
        Example(
            """
            import torch
            import torch.nn as nn


            class Finetuned(nn.Module):
                def restore(self, path):
                    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
                    state = {k.replace("module.", ""): v for k, v in checkpoint["model"].items()}
                    self.backbone.load_state_dict(state, strict = False)
            """,
        ),
        Example(
            """
            import torch
            # load the pretrained backbone (a comment, but not about which keys may not match)
            model.load_state_dict(torch.load("backbone.pt", map_location="cpu", weights_only=True), strict=False)
            """,
        ),
        Example(
            # the file saves the whole state dict there: a partial load of it is a mismatch
            """
            import torch
            class Adapted(torch.nn.Module):
                def save(self, path):
                    torch.save(self.state_dict(), path)
                def load(self, path):
                    self.load_state_dict(torch.load(path, map_location="cpu", weights_only=True), strict=False)
            """,
        ),
    )
    accepted = (
        """
        import torch
        import torch.nn as nn
        model = nn.Linear(3, 4)
        state = torch.load("weights.pt", map_location="cpu", weights_only=True)
        result = model.load_state_dict(state, strict=False)
        assert not result.missing_keys, result.missing_keys
        print(model.load_state_dict(state, strict=False))
        model.load_state_dict(state)
        model.load_state_dict(state, strict=True)
        """,
        """
        import torch
        model.load_state_dict(state, strict=args.strict)  # not the literal False
        """,
        """
        import torch
        # choose non-strict loading, because the model's composition could have changed in the worker
        model.load_state_dict(checkpoint, strict=False)
        model.load_state_dict(checkpoint, strict=False)  # strict=False: the classifier head is new
        """,
        """
        import torch
        import torch.nn as nn
        # deliberate by construction: another module's weights, a subset of the model's own,
        # a dict built here, and a state of unknown origin
        controlnet.load_state_dict(unet.state_dict(), strict=False)
        loaded = torch.load("w.pt", map_location="cpu", weights_only=True)
        own = model.state_dict()
        model.load_state_dict({k: v for k, v in loaded.items() if k in own}, strict=False)
        model.load_state_dict({"bias": torch.zeros(4)}, strict=False)
        def restore(model, state):
            model.load_state_dict(state, strict=False)
        """,
        """
        import torch
        class Adapted(torch.nn.Module):
            def save(self, path):  # only the trained parameters: loading them back is partial by design
                trained = {n: p.detach() for n, p in self.state_dict(keep_vars=True).items() if p.requires_grad}
                torch.save(trained, path)
            def load(self, path):
                self.load_state_dict(torch.load(path, map_location="cpu", weights_only=True), strict=False)
        """,
        """
        import torch
        class Tagger:
            def save(self, path):  # the pretrained embeddings are saved apart: their keys are left out
                state = self.model.state_dict()
                for key in [k for k in state if k.startswith("embedding.")]:
                    del state[key]
                torch.save({"model": state, "vocab": self.vocab.state_dict()}, path)
            def load(self, path):
                checkpoint = torch.load(path, map_location="cpu", weights_only=True)
                self.model.load_state_dict(checkpoint["model"], strict=False)
        """,
        """
        from max import nn  # another framework's Module API, no torch in this file
        model = nn.Module()
        model.load_state_dict(state, strict=False)
        """,
        """
        import torch
        def restore(model, path):  # the keys are compared first: any mismatch but the buffers raises
            state = torch.load(path, map_location="cpu", weights_only=True)
            extra = {k for k in set(state.keys()) - set(model.state_dict().keys()) if not k.endswith(".bias")}
            if extra:
                raise ValueError(f"extra keys: {extra}")
            model.load_state_dict(state, strict=False)
        """,
        """
        import torch
        def restore(model, path):  # only a checkpoint of the older layout, which the test recognises
            state = torch.load(path, map_location="cpu", weights_only=True)
            if any("postdecoder" in key for key in state.keys()):
                model.load_state_dict(state, strict=False)
            else:
                model.load_state_dict(state)
        """,
        """
        import torch
        def restore(model, path):  # every parameter is then reported as loaded or not (laion-clap)
            state = torch.load(path, map_location="cpu", weights_only=True)
            model.load_state_dict(state, strict=False)
            for name, _ in model.named_parameters():
                print(name, "loaded" if name in state else "NOT LOADED")
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A statement ``<x>.load_state_dict(..., strict=False)`` in a file importing torch.
        if not outline.calls("load_state_dict") or not outline.imports_from("torch"):
            return False
        for statement in outline.nodes(ast.Expr):
            call = statement.value
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "load_state_dict"
                and is_literal(keyword_value(call, "strict"), False)
            ):
                return True
        return False

    def check_SimpleStatementLine(self, node: cst.SimpleStatementLine, ctx: NodeContext) -> Iterator[Finding]:
        for statement in node.body:
            if isinstance(statement, cst.Expr):
                for finding in self._check_statement(statement, ctx):
                    if not _explains_strictness(node):
                        yield finding

    def _check_statement(self, node: cst.Expr, ctx: NodeContext) -> Iterator[Finding]:
        call = node.value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
            return
        if call.func.attr.value != "load_state_dict":
            return
        strict = edits.keyword(call, "strict")
        if strict is None or not (isinstance(strict.value, cst.Name) and strict.value.value == "False"):
            return
        if not ctx.resolver.imports("torch"):
            return
        if ctx.inference.value(call.func.value).kind in (Kind.TENSOR, Kind.LOADER, Kind.NUMBER):
            return
        state = edits.argument(call, 0, "state_dict")
        loads = ctx.inference.checkpoint_loads(state) if state is not None else []
        if not loads:
            return  # another module's state_dict(), a subset of the model's own, a dict built here: on purpose
        entry = constant_key(state) if isinstance(state, cst.Subscript) else None
        if all(_saved_as_a_subset(load, ctx, entry) for load in loads):
            return  # the file only ever saves a chosen part of a state dict there
        if isinstance(state, cst.Name) and _keys_examined(call, state.value, ctx):
            return  # the code looked at which keys the state holds before loading it
        yield Finding(
            call,
            "`load_state_dict(..., strict=False)` result discarded: keys that did not load go unnoticed",
            detail="check the returned `missing_keys` and `unexpected_keys`",
        )


def _keys_examined(call: cst.Call, name: str, ctx: NodeContext) -> bool:
    """Does the code around the load look at the keys of the state ``name`` it loads: an
    ``if`` around the load testing them (``if any("postdecoder" in k for k in
    state.keys()):``, espnet), or a set difference of them computed before it in the
    same def (``set(state.keys()) - set(model.state_dict().keys())``, then a raise on
    what is extra or missing: bark)? Or, after it, does the def test the names of the
    module it loaded into against the state (``for n, _ in model.named_parameters():
    print(n, n in state)``, laion-clap)? The partial load is then what the author chose,
    or what the author reports."""
    scope = ctx.enclosing(cst.FunctionDef) or ctx.file.module
    finder = _KeyChecks(call, name)
    scope.visit(finder)
    return finder.examined or (finder.tested_after and _reads_own_names(scope, call.func.value))


# The methods that list a module's own names (``model.named_parameters()``): what a report
# of the keys that loaded compares the state with.
_OWN_NAMES = frozenset({"named_parameters", "named_buffers", "state_dict"})


def _reads_own_names(scope: cst.CSTNode, module: cst.BaseExpression) -> bool:
    """Does ``scope`` list the names of ``module`` (``model.named_parameters()``)?"""
    spelled = cst.Module([]).code_for_node(module)
    return any(isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
               and node.func.attr.value in _OWN_NAMES
               and cst.Module([]).code_for_node(node.func.value) == spelled for node in _walk(scope))


class _KeyChecks(cst.CSTVisitor):
    def __init__(self, call: cst.Call, name: str) -> None:
        self.call, self.name = call, name
        self.tests: List[bool] = []  # for each enclosing ``if``: does its test read the keys?
        self.differenced = False  # a set difference of the keys, before the load
        self.examined = False
        self.tested_after = False  # ``... in state`` after the load
        self.done = False

    def visit_If(self, node: cst.If) -> None:
        self.tests.append(_reads_keys(node.test, self.name))

    def leave_If(self, original_node: cst.If) -> None:
        self.tests.pop()

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not self.done and isinstance(node.operator, cst.Subtract) and (
                _reads_keys(node.left, self.name) or _reads_keys(node.right, self.name)):
            self.differenced = True

    def visit_Call(self, node: cst.Call) -> bool:
        if node is self.call and not self.done:
            self.examined = any(self.tests) or self.differenced
            self.done = True
            return False
        return True

    def visit_ComparisonTarget(self, node: cst.ComparisonTarget) -> None:
        if self.done and isinstance(node.operator, (cst.In, cst.NotIn)) \
                and isinstance(node.comparator, cst.Name) and node.comparator.value == self.name:
            self.tested_after = True


def _reads_keys(expr: cst.BaseExpression, name: str) -> bool:
    """``name.keys()`` somewhere in ``expr``, or ``... in name``."""
    for node in _walk(expr):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "keys" \
                and isinstance(node.func.value, cst.Name) and node.func.value.value == name and not node.args:
            return True
        if isinstance(node, cst.ComparisonTarget) and isinstance(node.operator, (cst.In, cst.NotIn)) \
                and isinstance(node.comparator, cst.Name) and node.comparator.value == name:
            return True
    return False


def _walk(node: cst.CSTNode):
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        pending.extend(current.children)


def _saved_as_a_subset(load: cst.Call, ctx: NodeContext, key: Optional[str] = None) -> bool:
    """Does the file write the path ``load`` reads (the same expression) with
    ``torch.save`` calls that all save a filtered part of a state dict
    (``{n: p for n, p in self.state_dict().items() if p.requires_grad}``,
    speechbrain's adapters; a state dict the saving def deletes keys from,
    stanza's)? With ``key``, the load reads that entry of the saved dict
    (``checkpoint['model']``): the saves must put such a part there. Then a
    partial load is the design. Read from the outline of the whole file, so a
    save in a def narrowing cut still counts."""
    if ctx.resolver.resolve(load.func) not in TORCH_LOAD:
        return False
    entry = key
    path = path_argument(load, 0, "f")
    path_key = _canonical(edits.expression_code(path)) if path is not None else None
    if path_key is None:
        return False
    saves = ctx.file.memo(("TL206", "saves"), lambda: _saves_by_path(ctx.resolver.file_outline()))
    found = saves.get(path_key, [])
    return bool(found) and all(whole or (entry is not None and entry in keys) for whole, keys in found)


def _canonical(code: str) -> Optional[str]:
    try:
        return ast.unparse(ast.parse(code.strip(), mode="eval").body)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _saves_by_path(outline: Outline) -> Dict[str, List[Tuple[bool, FrozenSet[str]]]]:
    """Every ``torch.save(obj, path)`` of the file by the code of ``path``: whether
    ``obj`` is a filtered part of a state dict (a name bound only to such in the
    save's def counts too), and the keys of a saved dict that hold one."""
    saves: Dict[str, List[Tuple[bool, FrozenSet[str]]]] = {}
    for function in (*outline.nodes(ast.FunctionDef), *outline.nodes(ast.AsyncFunctionDef)):
        for call in ast.walk(function):
            if not (isinstance(call, ast.Call) and TORCH_SAVE & set(qualified_names(outline, call.func))):
                continue
            if len(call.args) < 2 or any(isinstance(a, ast.Starred) for a in call.args[:2]):
                continue
            saved, path = call.args[0], call.args[1]
            saves.setdefault(ast.unparse(path), []).append(
                (_filtered_state_dict(saved, function), _filtered_entries(saved, function)))
    return saves


def _filtered_entries(expr: ast.AST, function: ast.AST) -> FrozenSet[str]:
    """The constant keys of a saved dict literal (or a name ``function`` binds only to
    one) whose value is a filtered part of a state dict."""
    if isinstance(expr, ast.Name):
        values = _bound_values(expr.id, function)
        expr = values[0] if len(values) == 1 else expr
    if not isinstance(expr, ast.Dict):
        return frozenset()
    return frozenset(key.value for key, value in zip(expr.keys, expr.values)
                     if isinstance(key, ast.Constant) and isinstance(key.value, str)
                     and _filtered_state_dict(value, function))


def _bound_values(name: str, function: ast.AST) -> List[ast.AST]:
    return [node.value for node in ast.walk(function) if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]


def _keys_deleted(name: str, function: ast.AST) -> bool:
    """Does ``function`` delete entries of ``name`` (``del state[k]``, ``state.pop(k)``)?"""
    for node in ast.walk(function):
        if isinstance(node, ast.Delete) and any(
                isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name
                for t in node.targets):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pop" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name and node.args:
            return True
    return False


def _state_dict_call(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "state_dict"


def _filtered_state_dict(expr: ast.AST, function: ast.AST) -> bool:
    """A dict comprehension with a filter over ``<something>.state_dict(...).items()``,
    or a name that ``function`` binds only to such."""
    if isinstance(expr, ast.Name):
        values = _bound_values(expr.id, function)
        made = [value for value in values if not (isinstance(value, ast.Constant) and value.value is None)]
        if made and all(_state_dict_call(value) for value in made) and _keys_deleted(expr.id, function):
            # ``state = model.state_dict()`` (or None, without a model), then ``del state[k]``
            # for the keys left out
            return True
        return bool(values) and all(isinstance(value, ast.DictComp) and _filtered_state_dict(value, function)
                                    for value in values)
    if not (isinstance(expr, ast.DictComp) and len(expr.generators) == 1 and expr.generators[0].ifs):
        return False
    items = expr.generators[0].iter
    return (isinstance(items, ast.Call) and isinstance(items.func, ast.Attribute) and items.func.attr == "items"
            and isinstance(items.func.value, ast.Call) and isinstance(items.func.value.func, ast.Attribute)
            and items.func.value.func.attr == "state_dict")


# A comment that speaks of the strictness of the load: "non-strict", "strict=False", "not strict".
_STRICTNESS = re.compile(r"strict", re.IGNORECASE)


def _explains_strictness(line: cst.SimpleStatementLine) -> bool:
    """Does a comment directly above ``line`` (no blank line between) or at
    its end mention strictness? That is the author recording the decision."""
    return any(_STRICTNESS.search(comment) for comment in edits.comments_at(line))
