"""TL210: CUDA_VISIBLE_DEVICES set after CUDA was initialised: it has no effect."""

import ast
from typing import Iterator, List, Optional, Sequence, Tuple

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Outline, bindings, may_resolve_to
from torchlint.knowledge.torch_api import (
    CUDA_INIT_ENVIRONMENT,
    CUDA_INITIALISING_FUNCTIONS,
    CUDA_TENSOR_TYPES,
)
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule

_ENVIRON = "os.environ"
_SETTERS = (_ENVIRON + ".setdefault", "os.putenv")


def _variable(node: object) -> bool:
    """A string literal naming a CUDA environment variable."""
    return isinstance(node, ast.Constant) and node.value in CUDA_INIT_ENVIRONMENT


class CudaEnvironmentAfterInit(Rule):
    code = "TL210"
    name = "cuda-env-after-init"
    summary = "`CUDA_VISIBLE_DEVICES` set after CUDA was initialised has no effect"
    why = (
        "The CUDA driver reads `CUDA_VISIBLE_DEVICES` (and `CUDA_DEVICE_ORDER`) once, when it initialises. "
        "Setting them from Python afterwards (`os.environ[...] = ...`, `os.environ.setdefault`, "
        "`os.environ.update`, `os.putenv`) changes nothing: the process keeps seeing every GPU, and the "
        "job silently runs on the wrong device or on all of them.\n\n"
        "The rule follows the statements that certainly run before the assignment, in order: the module's "
        "top-level code (including `if`/`with`/`try` blocks and `if __name__ == \"__main__\":`), and for an "
        "assignment inside a function, the function's own earlier statements plus the module-level code "
        "before its `def`. Code in other functions, in branches that may not run, and in imported modules "
        "is not followed.\n\n"
        "What counts as initialising CUDA, from the torch 2.13 sources: `.cuda()` and any call whose result "
        "is visibly on a CUDA device (`.to('cuda')`, `torch.zeros(..., device='cuda')`), the "
        "`torch.cuda.*Tensor` constructors, and the `torch.cuda` functions that call `cuInit` or "
        "`_lazy_init`: `is_available()` (it asks `cudaGetDeviceCount`, which initialises the driver, unless "
        "`PYTORCH_NVML_BASED_CUDA_CHECK=1`), `init`, `set_device`, `current_device`, `get_device_name`, "
        "`get_device_capability`, `get_device_properties`, `synchronize`, `mem_get_info`, "
        "`current_stream`, `default_stream`, `is_bf16_supported`, `can_device_access_peer`, "
        "`ipc_collect`, `cudart`, `current_blas_handle`. Not counted: `device_count()` (it asks NVML first "
        "and re-reads `CUDA_VISIBLE_DEVICES` until CUDA is initialised), `is_initialized()`, "
        "`manual_seed()` (deferred until initialisation), `empty_cache()` and the memory statistics (no-ops "
        "before it). `import torch` itself does not initialise CUDA."
    )
    fix_safety = FixSafety.NONE
    whole_file = True  # a class body runs where it stands: its CUDA calls initialise CUDA for what follows
    triggers = tuple(sorted(CUDA_INIT_ENVIRONMENT))

    references = (
        "https://pytorch.org/docs/stable/notes/cuda.html",
    )
    flagged = (
        Example(
            """
            import os
            import torch

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            os.environ["CUDA_VISIBLE_DEVICES"] = "1"
            """,
        ),
        Example(
            """
            import os
            import torch
            import torch.nn as nn

            model = nn.Linear(10, 2).cuda()

            if __name__ == "__main__":
                os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0,1")
                os.environ.update({"CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
            """,
            count=2,
        ),
        Example(
            """
            from os import environ
            import torch


            def main(gpu):
                torch.cuda.set_device(0)
                environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
            """,
        ),
    )
    accepted = (
        """
        import os
        os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"

        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        """,
        """
        import os
        import torch

        n = torch.cuda.device_count()  # asks NVML: does not initialise CUDA
        torch.cuda.manual_seed_all(0)  # deferred until CUDA initialises
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
        """,
        """
        import os
        import torch


        def setup():
            torch.cuda.set_device(0)  # not run before the assignment below


        os.environ["CUDA_VISIBLE_DEVICES"] = "1"
        setup()
        """,
        """
        import os
        import torch

        if os.environ.get("USE_GPU"):
            x = torch.ones(3).cuda()  # may not run
        os.environ["CUDA_VISIBLE_DEVICES"] = "1"
        print(os.environ["CUDA_VISIBLE_DEVICES"])
        """,
        """
        import torch
        from settings import environ

        torch.cuda.init()
        environ["CUDA_VISIBLE_DEVICES"] = "1"  # not os.environ
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A statement that sets CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER: ``os.environ[...] = ``,
        # ``os.environ.setdefault/update(...)`` or ``os.putenv(...)`` (os however imported).
        if not any(q == "os" or q.startswith("os.") for names in bindings(outline).values() for q in names):
            return False
        for node in outline.nodes(ast.Assign):
            for target in node.targets:
                if (isinstance(target, ast.Subscript) and _variable(target.slice)
                        and may_resolve_to(outline, target.value, (_ENVIRON,))):
                    return True
        for statement in outline.nodes(ast.Expr):
            call = statement.value
            if not isinstance(call, ast.Call):
                continue
            if may_resolve_to(outline, call.func, _SETTERS):
                positional = [a for a in call.args if not isinstance(a, ast.Starred)]
                if positional and _variable(positional[0]):
                    return True
            elif may_resolve_to(outline, call.func, (_ENVIRON + ".update",)):
                if any(k.arg in CUDA_INIT_ENVIRONMENT for k in call.keywords) or any(
                    isinstance(a, ast.Dict) and any(_variable(key) for key in a.keys) for a in call.args
                ):
                    return True
        return False

    def check_Module(self, node: cst.Module, ctx: NodeContext) -> Iterator[Finding]:
        walker = _Walker(ctx)
        walker.block(node.body, None)
        yield from walker.findings


class _Walker:
    """Follows statements in execution order, remembering the first CUDA-initialising call that surely ran."""

    def __init__(self, ctx: NodeContext) -> None:
        self.ctx = ctx
        self.findings: List[Finding] = []

    def block(self, statements: Sequence[cst.CSTNode], init: Optional[cst.Call]) -> Optional[cst.Call]:
        for statement in statements:
            init = self.statement(statement, init)
        return init

    def statement(self, node: cst.CSTNode, init: Optional[cst.Call]) -> Optional[cst.Call]:
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                init = init or self.first_init(small)
                self.check_environment(small, init)
            return init
        if isinstance(node, cst.FunctionDef):
            # Runs later, but certainly after what ran before its definition.
            self.block(_body(node.body), init)
            return init
        if isinstance(node, cst.ClassDef):
            return self.block(_body(node.body), init)
        if isinstance(node, cst.If):
            init = init or self.first_init(node.test)
            self.block(_body(node.body), init)
            if isinstance(node.orelse, cst.If):
                self.statement(node.orelse, init)  # elif: its test runs only sometimes
            elif node.orelse is not None:
                self.block(_body(node.orelse.body), init)
            return init
        if isinstance(node, (cst.For, cst.While)):
            init = init or self.first_init(node.iter if isinstance(node, cst.For) else node.test)
            self.block(_body(node.body), init)
            if node.orelse is not None:
                self.block(_body(node.orelse.body), init)
            return init
        if isinstance(node, cst.With):
            for item in node.items:
                init = init or self.first_init(item.item)
            return self.block(_body(node.body), init)
        if isinstance(node, cst.Try):
            self.block(_body(node.body), init)
            for handler in node.handlers:
                self.block(_body(handler.body), init)
            if node.orelse is not None:
                self.block(_body(node.orelse.body), init)
            if node.finalbody is not None:
                return self.block(_body(node.finalbody.body), init)
            return init
        return init

    def first_init(self, node: cst.CSTNode) -> Optional[cst.Call]:
        finder = _InitFinder(self.ctx)
        node.visit(finder)
        return finder.found

    def check_environment(self, small: cst.CSTNode, init: Optional[cst.Call]) -> None:
        if init is None:
            return
        for target, variable in _environment_writes(small, self.ctx):
            code = edits.expression_code(init)
            if len(code) > 60:
                code = code[:57] + "..."
            self.findings.append(Finding(
                target,
                f"`{variable}` is set after CUDA was initialised: it has no effect",
                detail=f"CUDA was initialised by `{code}`; set it before anything touches CUDA (at the top of "
                       "the entry script, before importing code that uses CUDA) or in the shell",
            ))


class _InitFinder(cst.CSTVisitor):
    def __init__(self, ctx: NodeContext) -> None:
        super().__init__()
        self._ctx = ctx
        self.found: Optional[cst.Call] = None

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False  # runs later, if at all

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return False

    def leave_Call(self, node: cst.Call) -> None:
        # leave_: arguments run before the call, so the innermost call is found first.
        if self.found is None and _initialises_cuda(node, self._ctx):
            self.found = node


def _initialises_cuda(call: cst.Call, ctx: NodeContext) -> bool:
    callee = ctx.resolver.resolve(call.func)
    if callee is not None:
        return callee in CUDA_INITIALISING_FUNCTIONS or callee in CUDA_TENSOR_TYPES or ctx.inference.on_cuda(call)
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "cuda":
        return True  # only tensors and modules have .cuda()
    return ctx.inference.on_cuda(call)


def _environment_writes(small: cst.CSTNode, ctx: NodeContext) -> Iterator[Tuple[cst.CSTNode, str]]:
    """(node to report, variable) for each CUDA environment variable ``small`` sets."""
    if isinstance(small, cst.Assign):
        for target in small.targets:
            variable = _environ_key(target.target, ctx)
            if variable is not None:
                yield target.target, variable
        return
    call = small.value if isinstance(small, cst.Expr) else None
    if not isinstance(call, cst.Call):
        return
    callee = ctx.resolver.resolve(call.func)
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    if callee in (_ENVIRON + ".setdefault", "os.putenv") and positional:
        variable = _literal_variable(positional[0].value)
        if variable is not None:
            yield call, variable
    elif callee == _ENVIRON + ".update":
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in CUDA_INIT_ENVIRONMENT:
                yield call, arg.keyword.value
            elif arg.keyword is None and not arg.star and isinstance(arg.value, cst.Dict):
                for element in arg.value.elements:
                    if isinstance(element, cst.DictElement):
                        variable = _literal_variable(element.key)
                        if variable is not None:
                            yield call, variable


def _environ_key(target: cst.BaseExpression, ctx: NodeContext) -> Optional[str]:
    if not (isinstance(target, cst.Subscript) and len(target.slice) == 1):
        return None
    if ctx.resolver.resolve(target.value) != _ENVIRON:
        return None
    index = target.slice[0].slice
    return _literal_variable(index.value) if isinstance(index, cst.Index) else None


def _literal_variable(expr: cst.BaseExpression) -> Optional[str]:
    known, value = edits.literal_value(expr)
    return value if known and value in CUDA_INIT_ENVIRONMENT else None


def _body(block: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    if isinstance(block, cst.IndentedBlock):
        return block.body
    assert isinstance(block, cst.SimpleStatementSuite)  # ``if x: a; b``
    return [cst.SimpleStatementLine(body=block.body)]
