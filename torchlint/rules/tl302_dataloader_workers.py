"""TL302 (opt-in): a training DataLoader without worker processes, or without pinned memory for CUDA."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterator, List, Optional, Set

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import (
    Outline,
    calls_resolving_to,
    dotted,
    has_splat,
    is_literal,
    iterated,
    keyword_value,
)
from torchlint.knowledge.torch_api import (
    DATALOADER_NUM_WORKERS_POSITION,
    DATALOADER_PIN_MEMORY_POSITION,
    DATALOADERS,
    ITERATION_WRAPPERS,
)
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, Rule, fitting

WORKERS = (
    "loads every batch in the training process (`num_workers` is 0), so the model waits while data is read "
    "and transformed; pass `num_workers=` (e.g. 4)"
)
PINNED = (
    "feeds batches that are copied to CUDA, from pageable memory; pass `pin_memory=True` (and copy with "
    "`.to(device, non_blocking=True)`)"
)

SHORT = {
    WORKERS: "loads batches in the training process; pass `num_workers=`",
    PINNED: "copies batches to CUDA unpinned; pass `pin_memory=True`",
}


class DataLoaderWorkers(Rule):
    code = "TL302"
    gathers = ("Call", "Assign", "For")  # whether the file trains, how loaders are named and iterated
    name = "dataloader-without-workers"
    summary = (
        "A `DataLoader` in training code without `num_workers` (or with 0), or without `pin_memory` when its "
        "batches go to CUDA (opt-in)"
    )
    why = (
        "`DataLoader` defaults to `num_workers=0`: every batch is loaded, decoded and augmented in the training "
        "process itself, between optimisation steps, and the GPU sits idle meanwhile (the PyTorch profiler's "
        "pattern matcher calls this a \"synchronized data loader\"; TorchFix reported it as TOR401). "
        "With `num_workers > 0` worker processes prepare the next batches in parallel. Batches copied to a "
        "GPU come from pageable memory unless `pin_memory=True`, which makes the copy faster and lets "
        "`.to(device, non_blocking=True)` overlap it with compute. The rule is opt-in because the right "
        "setting depends on the machine: workers cost memory and start-up time, need a picklable dataset and, "
        "inside Docker, enough shared memory (setting `num_workers=0` to cure `Bus error` / killed "
        "workers hides what is really a `--shm-size` / `--ipc=host` problem), and an `IterableDataset` yields "
        "duplicates unless it shards with `get_worker_info()`. It looks only at files that train (call "
        "`.backward()`), reports a missing or zero `num_workers` there, and a missing `pin_memory` where a loop "
        "over the loader moves its batches to CUDA (`.cuda()`, `.to('cuda')`, or `non_blocking=True`)."
    )
    triggers = ("DataLoader",)
    enabled_by_default = False
    whole_file = True  # whether the file trains is a fact of the whole file
    references = (
        "https://pytorch.org/docs/stable/data.html#multi-process-data-loading",
        "https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html",
    )

    flagged = (
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=32, shuffle=True)
            for inputs, targets in loader:
                loss = torch.nn.functional.cross_entropy(model(inputs), targets)
                loss.backward()
            """,
        ),
        Example(
            """
            import torch
            train_loader = torch.utils.data.DataLoader(dataset, batch_size=64, num_workers=0)
            for step, (x, y) in enumerate(train_loader):
                x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
                criterion(model(x), y).backward()
                optimizer.step()
            """,
        ),
        Example(
            """
            from torch.utils import data
            loader = data.DataLoader(dataset, batch_size=8, num_workers=4)
            for batch in loader:
                batch = batch.to("cuda")
                model(batch).sum().backward()
            """,
        ),
    )
    accepted = (
        """
        import os
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(dataset, batch_size=32, num_workers=os.cpu_count() // 2, pin_memory=True)
        for x, y in loader:
            x = x.cuda(non_blocking=True)
            loss_fn(model(x), y.cuda()).backward()
        """,
        """
        import torch
        from torch.utils.data import DataLoader
        test_loader = DataLoader(dataset, batch_size=256)  # no training in this file
        with torch.no_grad():
            outputs = [model(x) for x in test_loader]
        """,
        """
        import torch
        from torch.utils.data import DataLoader
        options = {"num_workers": 8, "pin_memory": True}
        loader = DataLoader(dataset, **options)  # arguments unknown
        for x in loader:
            model(x.cuda()).sum().backward()
        """,
        """
        from mylib import DataLoader
        loader = DataLoader(dataset)
        loss.backward()
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A DataLoader call (however imported) without ``*``/``**`` that lacks
        # ``num_workers`` (or passes 0) in a file calling ``.backward()``, or that lacks
        # ``pin_memory``, is assigned to a name or attribute some ``for`` loop iterates
        # (through enumerate/tqdm), in a file calling ``.cuda()``/``.to()``.
        loaders = [call for call in calls_resolving_to(outline, DATALOADERS) if not has_splat(call)]
        if not loaders:
            return False
        trains = any(isinstance(c.func, ast.Attribute) for c in outline.calls("backward"))
        unpinned = set()
        for call in loaders:
            workers = _ast_argument(call, "num_workers", DATALOADER_NUM_WORKERS_POSITION)
            if trains and (workers is None or is_literal(workers, 0)):
                return True
            if _ast_argument(call, "pin_memory", DATALOADER_PIN_MEMORY_POSITION) is None:
                unpinned.add(id(call))
        if not unpinned or not any(isinstance(c.func, ast.Attribute) for c in outline.calls("cuda", "to")):
            return False
        targets = {
            dotted(node.targets[0]) for node in outline.nodes(ast.Assign)
            if len(node.targets) == 1 and id(node.value) in unpinned
        }
        for kind in (ast.For, ast.AsyncFor):
            for loop in outline.nodes(kind):
                if dotted(iterated(outline, loop.iter)) in targets:
                    return True
        return False

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        if ctx.resolver.resolve(node.func) not in DATALOADERS:
            return
        if any(arg.star for arg in node.args):
            return  # the arguments may be in *args / **kwargs
        facts = ctx.file.memo(("TL302", "facts"), lambda: _file_facts(ctx))
        problems: List[str] = []
        if facts.trains:
            workers = _argument(node, "num_workers", DATALOADER_NUM_WORKERS_POSITION)
            if workers is None or (isinstance(workers, cst.Integer) and workers.evaluated_value == 0):
                problems.append(WORKERS)
        target = facts.assigned.get(node)
        if target is not None and target in facts.cuda_loops:
            if _argument(node, "pin_memory", DATALOADER_PIN_MEMORY_POSITION) is None:
                problems.append(PINNED)
        if problems:
            spelled = edits.expression_code(node.func)
            short = SHORT[problems[0]] if len(problems) == 1 else (
                "has no `num_workers=` nor `pin_memory=True`: slow loading and copies")
            yield Finding(node, fitting(f"`{spelled}(...)` {short}", short[0].upper() + short[1:]),
                          detail=f"`{spelled}(...)` " + "; it also ".join(problems))


def _ast_argument(call: ast.Call, name: str, position: int) -> Optional[ast.AST]:
    value = keyword_value(call, name)
    if value is not None:
        return value
    return call.args[position] if len(call.args) > position else None


def _argument(call: cst.Call, name: str, position: int) -> Optional[cst.BaseExpression]:
    arg = edits.keyword(call, name)
    if arg is not None:
        return arg.value
    positional = [a for a in call.args if a.keyword is None]
    return positional[position].value if len(positional) > position else None


@dataclass
class _Facts:
    trains: bool = False
    assigned: Dict[cst.Call, str] = field(default_factory=dict)  # DataLoader(...) call -> its target's code
    cuda_loops: Set[str] = field(default_factory=set)  # loaders whose loop moves batches to CUDA


def _file_facts(ctx: NodeContext) -> _Facts:
    facts = _Facts()
    for call in ctx.file.nodes(cst.Call):
        func = call.func  # type: ignore[attr-defined]
        if isinstance(func, cst.Attribute) and func.attr.value == "backward":
            facts.trains = True
            break
    for node in ctx.file.nodes(cst.Assign):
        if len(node.targets) == 1 and isinstance(node.value, cst.Call):  # type: ignore[attr-defined]
            target = node.targets[0].target  # type: ignore[attr-defined]
            if isinstance(target, (cst.Name, cst.Attribute)):
                facts.assigned[node.value] = edits.expression_code(target)  # type: ignore[attr-defined]
    for loop in ctx.file.nodes(cst.For):
        loader = _iterated(loop.iter, ctx)  # type: ignore[attr-defined]
        if loader is None:
            continue
        names = _target_names(loop.target)  # type: ignore[attr-defined]
        if names and _moves_to_cuda(loop.body, names, ctx):  # type: ignore[attr-defined]
            facts.cuda_loops.add(loader)
    return facts


def _iterated(expr: cst.BaseExpression, ctx: NodeContext) -> Optional[str]:
    """The code of what a ``for`` iterates, through ``enumerate(...)`` and ``tqdm(...)``."""
    while isinstance(expr, cst.Call) and expr.args and expr.args[0].keyword is None:
        callee = ctx.resolver.resolve(expr.func)
        if callee != "builtins.enumerate" and callee not in ITERATION_WRAPPERS:
            return None
        expr = expr.args[0].value
    if isinstance(expr, (cst.Name, cst.Attribute)):
        return edits.expression_code(expr)
    return None


def _target_names(target: cst.BaseExpression) -> FrozenSet[str]:
    if isinstance(target, cst.Name):
        return frozenset({target.value})
    if isinstance(target, (cst.Tuple, cst.List)):
        names: Set[str] = set()
        for element in target.elements:
            names |= _target_names(element.value)
        return frozenset(names)
    return frozenset()


def _moves_to_cuda(body: cst.CSTNode, names: FrozenSet[str], ctx: NodeContext) -> bool:
    finder = _CudaMoveFinder(names, ctx)
    body.visit(finder)
    return finder.found


class _CudaMoveFinder(cst.CSTVisitor):
    """``x.cuda()``, ``x.to('cuda')`` or ``x.to(device, non_blocking=True)`` on a loop variable."""

    def __init__(self, names: FrozenSet[str], ctx: NodeContext) -> None:
        super().__init__()
        self.names = names
        self.ctx = ctx
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("cuda", "to"):
            return
        root = func.value
        while isinstance(root, (cst.Attribute, cst.Subscript)):
            root = root.value
        if not isinstance(root, cst.Name) or root.value not in self.names:
            return
        non_blocking = edits.keyword(node, "non_blocking")
        if func.attr.value == "cuda" or self.ctx.inference.on_cuda(node) or (
            non_blocking is not None and edits.literal_value(non_blocking.value) == (True, True)
        ):
            self.found = True
