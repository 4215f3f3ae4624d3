"""TL211: misspelled torch names, keywords and `requires_grad`."""

from __future__ import annotations

import ast
import functools
import re
from typing import Dict, FrozenSet, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.inference import Kind
from torchlint.analysis.outline import Outline, bindings, qualified_names
from torchlint.analysis.scopes import ImportAssignment
from torchlint.analysis.screens import Screen, argument_text, top_level
from torchlint.core.census import AttributeIndex
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge import api_snapshot
from torchlint.knowledge.deprecations import is_removed_api
from torchlint.knowledge.torch_api import (
    EXTENSION_ATTRIBUTES,
    KEYWORDS_NOW_POSITIONAL,
    REMOVED_KEYWORDS,
    is_torch_name,
)
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting

REQUIRES_GRAD = "requires_grad"

# Exceptions whose handler shows the code expects the name may be missing
# (version-compatibility code): references inside such a ``try`` are left alone.
_ATTRIBUTE_ERRORS = frozenset({"AttributeError", "ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
_CALL_ERRORS = frozenset({"TypeError", "Exception", "BaseException"})



_IMPORT_LINE = re.compile(r"^[ \t]*import[ \t]+([^\n#;]+)", re.MULTILINE)
_FROM_LINE = re.compile(r"^[ \t]*from[ \t]+(torch[\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[^\n#;]+)", re.MULTILINE)
_KEYWORD = re.compile(r"(?<![=!<>])\b(\w+)\s*=(?!=)")
_ATTRIBUTE_STORE = re.compile(r"\.\s*(\w*(?:req|grad)\w*)\s*=(?!=)")


class _MisspellingScreen(Screen):
    """Can a file contain a TL211 finding? Decided on the text, with the snapshot.

    Mirrors what the rule can see: names rooted in ``import torch...`` /
    ``from torch... import`` statements. A chain through an imported alias
    that leaves a snapshotted namespace, a call of a known callable with a
    keyword it does not take, an import of a missing name, or an attribute
    assignment close to ``requires_grad`` makes the file a candidate;
    anything unclear does too.
    """

    def search(self, source: str) -> bool:
        if "torch" not in source:
            return False
        if any(
            name != REQUIRES_GRAD and api_snapshot.similarity(name, REQUIRES_GRAD) >= 0.85
            for name in _ATTRIBUTE_STORE.findall(source)
        ):
            return True
        aliases: Dict[str, str] = {}
        for match in _IMPORT_LINE.finditer(source):
            for part in match.group(1).split(","):
                words = part.split()
                if not words or not words[0].startswith("torch"):
                    continue
                if _leaves_api(words[0]):
                    return True
                if len(words) == 3 and words[1] == "as":
                    aliases[words[2]] = words[0]
                else:
                    aliases["torch"] = "torch"
        for match in _FROM_LINE.finditer(source):
            module = match.group(1)
            if _leaves_api(module):
                return True
            members = api_snapshot.namespace_members(module)
            for part in match.group(2).strip("() \n").split(","):
                words = part.split()
                if not words or words[0] == "*":
                    continue
                if members is not None and words[0] not in members and not words[0].startswith("_"):
                    return True
                aliases[words[2] if len(words) == 3 and words[1] == "as" else words[0]] = f"{module}.{words[0]}"
        return bool(aliases) and self._chains_leave_api(source, aliases)

    def _chains_leave_api(self, source: str, aliases: Dict[str, str]) -> bool:
        heads = "|".join(sorted(map(re.escape, aliases), key=len, reverse=True))
        chain = re.compile(rf"(?<![\w.])({heads})((?:\s*\.\s*\w+)*)(\s*\()?")
        for match in chain.finditer(source):
            qualified = aliases[match.group(1)]
            for segment in re.findall(r"\w+", match.group(2)):
                members = api_snapshot.namespace_members(qualified)
                if members is None:
                    break
                if segment not in members and not segment.startswith("_"):
                    return True
                qualified = f"{qualified}.{segment}"
            if match.group(3) and self._unknown_keyword(source, match.end(), qualified):
                return True
        return False

    @staticmethod
    def _unknown_keyword(source: str, start: int, qualified: str) -> bool:
        params = api_snapshot.signature(qualified)
        if params is None or params.var_keyword:
            return False
        arguments = argument_text(source, start)
        if arguments is None:
            return True
        return any(not params.accepts_keyword(k) for k in _KEYWORD.findall(top_level(arguments)))


def _leaves_api(dotted: str) -> bool:
    """``torch.nn.functinal``: a dotted module path that leaves a snapshotted namespace."""
    parts = dotted.split(".")
    for index in range(1, len(parts)):
        members = api_snapshot.namespace_members(".".join(parts[:index]))
        if members is None:
            return False
        if parts[index] not in members and not parts[index].startswith("_"):
            return True
    return False

class MisspelledTorchApi(Rule):
    code = "TL211"
    name = "misspelled-torch-api"
    summary = "Misspelled torch names and keywords (`torch.set_num_threds`, `num_worker=`, `.require_grad =`)"
    why = (
        "Python finds a misspelled name only when the line runs: `torch.set_num_threds(4)` raises "
        "AttributeError, `DataLoader(ds, num_worker=2)` raises TypeError, possibly hours into a job, and "
        "`x.require_grad = True` raises nothing at all: it sets an unrelated attribute and the tensor "
        "still does not require grad. torchlint carries a snapshot of torch's public API (names of "
        "`torch`, `torch.nn`, `torch.nn.functional`, `torch.optim`, `torch.utils.data`, `torch.cuda`, "
        "`torch.backends.cudnn` and other namespaces, and the parameters of their callables) and "
        "reports references that are not in it. Names newer than the snapshot's torch cannot be known, "
        "so references guarded by `hasattr`, a version check or `try`/`except AttributeError` are "
        "left alone, as are private names, namespaces outside the snapshot and removed functions "
        "(reported by TL108)."
    )
    # A branch that runs only on another torch (``elif WITH_PT111:`` with the flag read from
    # torch.__version__ in another module of the project) uses that torch's API on purpose.
    version_gated = True
    fix_safety = FixSafety.UNSAFE
    fix_description = (
        "Renames the misspelled attribute or keyword to the only close match (difflib ratio >= 0.85, "
        "clearly ahead of any other candidate); no fix when several names are equally close, when the "
        "correction changes a name's capitalised first letter (`nn.relu` vs `nn.ReLU`), or for "
        "imports whose bound name would change. `x.require_grad = v` becomes `x.requires_grad = v`; on "
        "a known `nn.Module` it becomes `m.requires_grad_(v)`. Unsafe: code that used to crash (or "
        "silently do nothing) now runs and does what it says."
    )
    triggers = (_MisspellingScreen(),)

    flagged = (
        Example(
            """
            import torch
            torch.set_num_threds(torch.get_num_threads())
            """,
            """
            import torch
            torch.set_num_threads(torch.get_num_threads())
            """,
            runnable=True,
            raises="AttributeError",
        ),
        Example(
            """
            import torch
            from torch.utils.data import DataLoader, TensorDataset
            ds = TensorDataset(torch.arange(8.0))
            loader = DataLoader(ds, bath_size=4, shuffle=False, num_worker=0)
            batches = [b for (b,) in loader]
            """,
            """
            import torch
            from torch.utils.data import DataLoader, TensorDataset
            ds = TensorDataset(torch.arange(8.0))
            loader = DataLoader(ds, batch_size=4, shuffle=False, num_workers=0)
            batches = [b for (b,) in loader]
            """,
            count=2,
            runnable=True,
            raises="TypeError",
        ),
        Example(
            """
            import torch
            w = torch.ones(3)
            w.require_grad = True
            loss = (w * 2).sum()
            loss.backward()
            grad = w.grad
            """,
            """
            import torch
            w = torch.ones(3)
            w.requires_grad = True
            loss = (w * 2).sum()
            loss.backward()
            grad = w.grad
            """,
            runnable=True,
            raises="RuntimeError",
        ),
        Example(
            """
            import torch.nn as nn
            model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
            for param in model.parameters():
                param.require_grad = False
            """,
            """
            import torch.nn as nn
            model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
            for param in model.parameters():
                param.requires_grad = False
            """,
        ),
        Example(
            """
            import torch
            import torch.nn as nn
            layer = nn.Conv2D(3, 8, kernel_size=3)
            y = layer(torch.ones(1, 3, 8, 8))
            """,
            """
            import torch
            import torch.nn as nn
            layer = nn.Conv2d(3, 8, kernel_size=3)
            y = layer(torch.ones(1, 3, 8, 8))
            """,
            runnable=True,
            raises="AttributeError",
        ),
        Example(
            """
            import torch
            x = torch.arange(6.0).reshape(2, 3)
            total = torch.sum(x, dims=1)
            """,
            """
            import torch
            x = torch.arange(6.0).reshape(2, 3)
            total = torch.sum(x, dim=1)
            """,
            runnable=True,
            raises="TypeError",
        ),
        Example(
            """
            import torch
            torch.backends.cudnn.benchmarks = True
            """,
            """
            import torch
            torch.backends.cudnn.benchmark = True
            """,
        ),
        Example(
            """
            import torch.nn as nn
            encoder = nn.Linear(4, 4)
            encoder.require_grad = False
            """,
            """
            import torch.nn as nn
            encoder = nn.Linear(4, 4)
            encoder.requires_grad_(False)
            """,
        ),
        Example(
            """
            import torch.nn.functional as F
            y = F.conv4d(x, w)  # conv1d? conv2d? conv3d?: no fix
            from torch.optim import AdamW8
            import torch.utils.tensorbord
            from torch.utils.dat import DataLoader
            """,
            count=4,
        ),
        Example(
            """
            import torch


            def configure(model):
                assert torch.__version__ >= "1.0"  # a floor: the lines below run on today's torch too
                if not hasattr(model, "training"):  # a probe, but not of torch.set_num_threds
                    return model
                torch.set_num_threds(4)
                return model
            """,
            """
            import torch


            def configure(model):
                assert torch.__version__ >= "1.0"  # a floor: the lines below run on today's torch too
                if not hasattr(model, "training"):  # a probe, but not of torch.set_num_threds
                    return model
                torch.set_num_threads(4)
                return model
            """,
        ),
        Example(
            """
            import torch
            opt = torch.optim.SGD(params, lr=0.1, momentom=0.9)
            z = torch.zeros(3, require_grad=True)
            """,
            """
            import torch
            opt = torch.optim.SGD(params, lr=0.1, momentum=0.9)
            z = torch.zeros(3, requires_grad=True)
            """,
            count=2,
        ),
    )
    accepted = (
        """
        import torch
        _OLD_TORCH = torch.__version__ < "1.12"


        def reduce(src, index):
            if _OLD_TORCH:  # the prototype signature of torch 1.11
                return torch.scatter_reduce(src, 0, index, reduce="sum", output_size=3)
            return torch.zeros(3).scatter_reduce(0, index, src, reduce="sum")
        """,
        """
        import torch
        torch.set_num_threads(4)
        x = torch.sum(torch.ones(2, 3), axis=0, keepdims=True)  # numpy spellings torch accepts
        loader = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2)
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        w = torch.ones(3, requires_grad=True)
        """,
        """
        import torch
        if hasattr(torch, "compile_everything"):
            model = torch.compile_everything(model)
        try:
            from torch.nn.attention import flex_attention_v2
        except ImportError:
            flex_attention_v2 = None
        try:
            fast = torch.some_future_function
        except AttributeError:
            fast = None
        if torch.__version__ >= "3":
            torch.newer_api()
        if is_torch_gaudi9_available():  # the condition names the platform
            torch.gaudi9.set_device(0)
        """,
        """
        import torch
        torch.my_helper = lambda x: x  # a name the file adds itself
        y = torch.my_helper(1)
        torch.backends.cudnn.my_flag = True  # nothing like it in torch: deliberate
        """,
        """
        import torch
        import torch_npu  # a device plugin that adds torch.npu
        x = torch.ones(1).to("npu")
        torch.npu.synchronize()
        """,
        """
        import torch
        ops = torch.ops.aten.add  # namespaces outside the snapshot
        y = torch.Tensor.add(x, x)
        z = torch.distributed.is_initialized()
        private = torch._C._get_tracing_state()
        """,
        """
        import torch
        class Config:
            def __init__(self, require_grad):
                self.require_grad = require_grad  # the class's own attribute
        cfg = Config(True)
        if cfg.require_grad:
            pass
        encoder = torch.nn.Linear(2, 2)
        encoder._requires_grad = False  # private: a marker of the program's own
        """,
        """
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, **settings)
        max_pool = torch.nn.functional.max_pool2d(x, 2, return_indices=False)  # takes **kwargs
        """,
        """
        import numpy as np
        np.set_num_threds(4)
        def DataLoader(ds, num_worker=0):
            return ds
        loader = DataLoader([], num_worker=2)
        """,
        """
        import torch


        def export(model, x, path):  # the torch 2.1-2.8 exporter, screened by the assert
            assert hasattr(torch.onnx, "dynamo_export"), "Dynamo ONNX export requires PyTorch >= 2.1"
            options = torch.onnx.ExportOptions(dynamic_shapes=True)
            torch.onnx.dynamo_export(model, x, export_options=options).save(path)


        def stateful_loader(ds):
            if not hasattr(torch.utils.data, "StatefulDataLoader"):
                raise RuntimeError("needs a newer torch")
            return torch.utils.data.StatefulDataLoader(ds, snapshot_every_n_steps=10)
        """,
        """
        import torch
        try:
            loader = torch.utils.data.DataLoader(ds, in_order_v2=True)
        except TypeError:
            loader = torch.utils.data.DataLoader(ds)
        """,
        """
        import torch
        from torch.nn.modules.conv import Conv2d
        from torch.utils.data.dataloader import DataLoader
        layer = Conv2d(3, 8, kernel_size=3, padding_mode="zeros")
        loader = DataLoader(ds, batch_size=4, persistent_workers=False)
        """,
    )

    def __init__(self) -> None:
        self._facts: Optional[_FileFacts] = None

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # What each check can flag, on Python's tree, with the snapshot (lookups memoised):
        # an attribute assignment close to ``requires_grad`` in a file importing torch;
        # an import of a torch module or name the snapshot lacks; an attribute chain
        # rooted at a name a torch import binds that leaves a snapshotted namespace; a
        # call through such a name with a keyword its snapshotted signature lacks.
        # Each needs an import of torch somewhere in the file.
        if not outline.imports_from("torch"):
            return False
        index = outline.attribute_index()
        if any(_near_requires_grad(name) for name in index.stored):
            return True  # an attribute assigned (``x.requires_gard = True``), in any kind of assignment
        for node in outline.nodes(ast.Import):
            if any(_missing_module_path(alias.name) for alias in node.names):
                return True
        for node in outline.nodes(ast.ImportFrom):
            if node.level or node.module is None or node.names[0].name == "*":
                continue
            if _missing_module_path(node.module):
                return True
            if any(_missing_member(node.module, alias.name) for alias in node.names):
                return True
        heads = _torch_heads(bindings(outline))
        if not heads:
            return False
        resolved: Dict[int, Tuple[str, ...]] = {}
        callees = {name for name, bases in heads.items() if _link(bases, "").strict}
        for node, bases in _chain_links(index, heads, resolved):
            link = _link(bases, node.attr)
            if link.missing:
                return True
            resolved[id(node)] = link.names
            if link.strict:
                callees.add(node.attr)
        # Calls through a resolved name whose snapshotted signature takes no ``**kwargs``,
        # filed under the name's last part (``Outline.calls``).
        for call in outline.calls(*callees):
            if call.keywords:
                func = call.func
                names = heads.get(func.id, ()) if isinstance(func, ast.Name) else resolved.get(id(func), ())
                if names and any(
                    _unknown_keyword(q, k.arg) for q in names for k in call.keywords if k.arg is not None
                ):
                    return True
        return False

    def _file_facts(self, ctx: NodeContext) -> "_FileFacts":
        facts = self._facts
        if facts is None or facts.module is not ctx.file.module:
            facts = self._facts = _FileFacts(ctx.file.module)
        return facts

    # -- attributes: torch.set_num_threds, nn.Conv2D, cudnn.benchmarks = True ----

    def check_Attribute(self, node: cst.Attribute, ctx: NodeContext) -> Iterator[Finding]:
        if not _rooted_in_import(node, ctx):
            return
        qualified = ctx.resolver.resolve_torch(node)
        if qualified is None:
            return
        namespace, _, attr = qualified.rpartition(".")
        if attr != node.attr.value or not _reportable(qualified):
            return
        members = api_snapshot.namespace_members(namespace)
        if members is None or attr in members:
            return
        facts = self._file_facts(ctx)
        if facts.guarded(node, _ATTRIBUTE_ERRORS, attr):
            return
        if ctx.file.call_of(node) is not None:
            members = members - api_snapshot.submodules(namespace)  # a module is never what was called
        suggestion = api_snapshot.closest(attr, members)
        if node in facts.store_targets:
            if suggestion is None:
                return  # adding an attribute of one's own, not misspelling one
            effect = "assigning it has no effect"
        else:
            if qualified in _assigned_names(ctx.resolver.file_outline()):
                return  # the file sets it itself
            effect = "AttributeError at run time"
        message = f"`{qualified}` is not in torch {api_snapshot.torch_minor_version()}'s API"
        correction = api_snapshot.unambiguous_correction(attr, members)
        fix = Fix([Edit(node, edits.rename_attr(correction))], safe=False) if correction else None
        yield Finding(node.attr, _did_you_mean(message, suggestion, f"`{attr}` is not in torch's API"), fix,
                      detail=effect)

    # -- imports: from torch.optim import AdamW8; import torch.utils.tensorbord --

    def check_ImportFrom(self, node: cst.ImportFrom, ctx: NodeContext) -> Iterator[Finding]:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = cst.helpers.get_full_name_for_node(node.module) or ""
        missing = self._missing_module(node, node.module, module, ctx)
        if missing is not None:
            yield missing
            return
        members = api_snapshot.namespace_members(module)
        if members is None:
            return
        for alias in node.names:
            name = cst.helpers.get_full_name_for_node(alias.name)
            if not name or name in members or not _reportable(f"{module}.{name}"):
                continue
            if self._file_facts(ctx).guarded(node, _ATTRIBUTE_ERRORS, name):
                continue
            message = f"`{module}.{name}` is not in torch {api_snapshot.torch_minor_version()}'s API (ImportError)"
            message = fitting(message, f"`{name}` is not in `{module}` (ImportError)", f"`{name}` is not in torch's API")
            correction = api_snapshot.unambiguous_correction(name, members)
            fix = None
            if correction and alias.asname is not None:  # the bound name stays the same
                fix = Fix([Edit(alias, _rename_imported(correction))], safe=False)
            yield Finding(alias.name, _did_you_mean(message, api_snapshot.closest(name, members)), fix)

    def check_Import(self, node: cst.Import, ctx: NodeContext) -> Iterator[Finding]:
        for alias in node.names:
            dotted = cst.helpers.get_full_name_for_node(alias.name) or ""
            missing = self._missing_module(node, alias.name, dotted, ctx)
            if missing is not None:
                yield missing

    def _missing_module(
        self, statement: cst.CSTNode, name_node: cst.CSTNode, dotted: str, ctx: NodeContext
    ) -> Optional[Finding]:
        """``torch.nn.functinal`` in an import: the first part that does not exist."""
        parts = dotted.split(".")
        if parts[0] != "torch":
            return None
        for index in range(1, len(parts)):
            namespace, child = ".".join(parts[:index]), parts[index]
            members = api_snapshot.namespace_members(namespace)
            if members is None or not _reportable(f"{namespace}.{child}"):
                return None
            if child in members:
                continue
            if self._file_facts(ctx).guarded(statement, _ATTRIBUTE_ERRORS, child):
                return None
            message = f"`{namespace}.{child}` is not in torch {api_snapshot.torch_minor_version()}'s API"
            candidates = api_snapshot.submodules(namespace) or members  # imports name modules
            return Finding(name_node, _did_you_mean(message, api_snapshot.closest(child, candidates),
                                                    f"`{child}` is not in `{namespace}`"),
                           detail="ModuleNotFoundError at run time")
        return None

    # -- keywords: DataLoader(ds, num_worker=2) ----------------------------------

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        keywords = [arg for arg in node.args if arg.keyword is not None]
        if not keywords or not isinstance(node.func, (cst.Name, cst.Attribute)):
            return
        qualified = ctx.resolver.resolve_torch(node.func)
        if qualified is None or not _reportable(qualified):
            return
        params = api_snapshot.signature(qualified)
        if params is None or params.var_keyword:
            return
        accepted = params.keywords
        facts = self._file_facts(ctx) if any(arg.keyword.value not in accepted for arg in keywords) else None
        # renamed or made positional, not misspelled: TL116's
        removed = {*REMOVED_KEYWORDS.get(qualified, {}), *KEYWORDS_NOW_POSITIONAL.get(qualified, ())}
        unknown = [
            arg for arg in keywords
            if arg.keyword.value not in accepted and arg.keyword.value not in removed
            and not facts.guarded(node, _CALL_ERRORS, arg.keyword.value)
        ]
        callee = qualified.rsplit(".", 1)[1]
        passed = {arg.keyword.value for arg in keywords}
        real_names = [n for n, _ in params.parameters if n in accepted]  # not the numpy aliases
        for arg in unknown:
            keyword = arg.keyword.value
            if keyword in params.positional_only:
                yield Finding(arg, f"`{keyword}` is positional-only in `{callee}`; pass it by position (TypeError)")
                continue
            version = api_snapshot.torch_minor_version()
            message = f"unknown keyword `{keyword}` for `{callee}` in torch {version}"
            correction = api_snapshot.unambiguous_correction(keyword, real_names)
            fix = None
            if correction and correction not in passed:
                fix = Fix([Edit(arg, _rename_keyword(correction))], safe=False)
            yield Finding(arg, _did_you_mean(message, api_snapshot.closest(keyword, real_names),
                                             f"unknown keyword `{keyword}` (TypeError)"), fix,
                          detail="TypeError at run time")

    # -- x.require_grad = True ----------------------------------------------------

    def check_Assign(self, node: cst.Assign, ctx: NodeContext) -> Iterator[Finding]:
        for target in node.targets:
            attribute = target.target
            if not isinstance(attribute, cst.Attribute):
                continue
            name = attribute.attr.value
            if name == REQUIRES_GRAD or name.startswith("_") or api_snapshot.similarity(name, REQUIRES_GRAD) < 0.85:
                continue  # a private name (``m._requires_grad = False``) is a deliberate marker
            finding = self._requires_grad_typo(node, attribute, ctx)
            if finding is not None:
                yield finding

    def _requires_grad_typo(self, node: cst.Assign, attribute: cst.Attribute, ctx: NodeContext) -> Optional[Finding]:
        if not ctx.resolver.imports("torch"):
            return None
        name = attribute.attr.value
        value = ctx.inference.value(attribute.value)
        if value.kind in _NEVER_TENSORS or _is_self_of_plain_class(attribute.value, ctx):
            return None
        if value.kind is Kind.UNKNOWN and name in _read_attributes(ctx.resolver.file_outline()):
            return None  # the program's own attribute, set and read back
        if value.kind is Kind.MODULE:
            fix = None
            if len(node.targets) == 1:
                fix = Fix([Edit(node, _call_requires_grad_(attribute.value, node.value))], safe=False)
            return Finding(
                attribute.attr,
                fitting(f"`{name}` is not an nn.Module attribute; call `.requires_grad_({edits.expression_code(node.value)})`",
                        f"`{name}` is not an nn.Module attribute; call `.requires_grad_(...)`"),
                fix,
                detail="assigning it does nothing",
            )
        return Finding(
            attribute.attr,
            fitting(f"`{name}` is not a tensor attribute; did you mean `{REQUIRES_GRAD}`?",
                    f"not a tensor attribute; did you mean `{REQUIRES_GRAD}`?"),
            Fix([Edit(attribute, edits.rename_attr(REQUIRES_GRAD))], safe=False),
            detail="assigning it does nothing",
        )


# --- helpers -----------------------------------------------------------------------

# Values no tensor can be: assigning any attribute to them is the program's own business.
_NEVER_TENSORS = (Kind.LOADER, Kind.NUMBER, Kind.OPTIONS, Kind.FUNCTION)


def _chain_links(index: AttributeIndex, heads: Dict[str, Tuple[str, ...]],
                 resolved: Dict[int, Tuple[str, ...]]) -> Iterator[Tuple[ast.Attribute, Tuple[str, ...]]]:
    """Each link of an attribute chain rooted at a name of ``heads``, with what
    the chain before it names: the first links from the attributes on each
    head's name, the later ones from the attributes on attributes, in reverse
    (the walk lists a node before the nodes under it, so a link's value comes
    first and the caller has ``resolved`` it). Chains rooted elsewhere
    (``self.x``) are never read."""
    for head, bases in heads.items():
        for node in index.on_name.get(head, ()):
            yield node, bases
    if resolved:
        known = resolved.get
        for node in reversed(index.on_attribute):
            bases = known(id(node.value))
            if bases:
                yield node, bases


def _torch_heads(bound: Dict[str, Tuple[str, ...]]) -> Dict[str, Tuple[str, ...]]:
    """The names of ``bound`` (``outline.bindings``) that some torch import binds."""
    return {name: qualified for name, qualified in bound.items() if any(is_torch_name(q) for q in qualified)}


class _Link(NamedTuple):
    """One link of an attribute chain through a torch import, as the screen sees it."""

    names: Tuple[str, ...]  # what the chain up to this link may name
    missing: bool  # ``check_Attribute`` would report one of them
    strict: bool  # one of them has a snapshotted signature without ``**kwargs`` (a keyword can be unknown)


# (what the chain before names, the attribute) -> the link: chains through torch
# repeat across a project's files (``torch.cat``, ``nn.Linear``, ``F.relu``).
_LINKS: Dict[Tuple[Tuple[str, ...], str], _Link] = {}
_LINKS_KEPT = 65536


def _link(bases: Tuple[str, ...], attribute: str) -> _Link:
    """The link ``attribute`` after a chain naming ``bases`` (``""``: the chain itself)."""
    key = (bases, attribute)
    found = _LINKS.get(key)
    if found is None:
        names = tuple([f"{base}.{attribute}" for base in bases]) if attribute else bases
        strict = False
        for name in names:
            params = api_snapshot.signature(name) if is_torch_name(name) else None
            strict = strict or (params is not None and not params.var_keyword)
        found = _Link(names, any(_missing_attribute(q) for q in names) if attribute else False, strict)
        if len(_LINKS) >= _LINKS_KEPT:
            _LINKS.clear()
        _LINKS[key] = found
    return found


@functools.lru_cache(maxsize=4096)
def _near_requires_grad(name: str) -> bool:
    if name == REQUIRES_GRAD or name.startswith("_") or not _NEAR_LENGTHS[0] <= len(name) <= _NEAR_LENGTHS[1]:
        return False
    # difflib's ratio is 2 * matches / total length, and there are no more matches
    # than letters the two names share (case ignored)
    lowered = name.lower()
    shared = sum(min(lowered.count(letter), count) for letter, count in _REQUIRES_GRAD_LETTERS)
    if 2 * shared < 0.85 * (len(name) + len(REQUIRES_GRAD)):
        return False
    return api_snapshot.similarity(name, REQUIRES_GRAD) >= 0.85


_REQUIRES_GRAD_LETTERS = tuple((letter, REQUIRES_GRAD.count(letter)) for letter in sorted(set(REQUIRES_GRAD)))
# The lengths a name close enough can have: with m matches, at most the shorter
# length, 2 * m >= 0.85 * (len(name) + 13) holds only for 10 to 17 letters.
_NEAR_LENGTHS = (
    next(n for n in range(1, 100) if 2 * min(n, len(REQUIRES_GRAD)) >= 0.85 * (n + len(REQUIRES_GRAD))),
    max(n for n in range(1, 100) if 2 * min(n, len(REQUIRES_GRAD)) >= 0.85 * (n + len(REQUIRES_GRAD))),
)


@functools.lru_cache(maxsize=4096)
def _missing_module_path(dotted: str) -> bool:
    """``torch.nn.functinal``: ``check_Import``/``_missing_module`` would report it."""
    parts = dotted.split(".")
    if parts[0] != "torch":
        return False
    for index in range(1, len(parts)):
        namespace, child = ".".join(parts[:index]), parts[index]
        members = api_snapshot.namespace_members(namespace)
        if members is None or not _reportable(f"{namespace}.{child}"):
            return False
        if child not in members:
            return True
    return False


@functools.lru_cache(maxsize=16384)
def _missing_member(module: str, name: str) -> bool:
    """``from torch.optim import AdamW8``: ``check_ImportFrom`` would report it."""
    members = api_snapshot.namespace_members(module)
    return members is not None and name not in members and _reportable(f"{module}.{name}")


@functools.lru_cache(maxsize=16384)
def _missing_attribute(qualified: str) -> bool:
    """``torch.set_num_threds``: ``check_Attribute`` would report it."""
    if not is_torch_name(qualified) or not _reportable(qualified):
        return False
    namespace, _, attr = qualified.rpartition(".")
    members = api_snapshot.namespace_members(namespace)
    return members is not None and attr not in members


@functools.lru_cache(maxsize=16384)
def _unknown_keyword(qualified: str, keyword: str) -> bool:
    """``DataLoader(num_worker=2)``: ``check_Call`` would report it."""
    if not is_torch_name(qualified) or not _reportable(qualified):
        return False
    params = api_snapshot.signature(qualified)
    return (params is not None and not params.var_keyword and keyword not in params.keywords
            and keyword not in REMOVED_KEYWORDS.get(qualified, {})
            and keyword not in KEYWORDS_NOW_POSITIONAL.get(qualified, ()))


def _did_you_mean(message: str, suggestion: Optional[str], shorter: str = "") -> str:
    """``message`` with the suggestion, or ``shorter`` with it if that is too long."""
    if not suggestion:
        return fitting(message, shorter) if shorter else message
    variants = [f"{message}; did you mean `{suggestion}`?"]
    if shorter:
        variants += [f"{shorter}; did you mean `{suggestion}`?"]
    return fitting(*variants, f"did you mean `{suggestion}`?")


def _reportable(qualified: str) -> bool:
    """Public, not removed (TL108), not added by a torch extension."""
    if any(part.startswith("_") for part in qualified.split(".")):
        return False
    return not (
        is_removed_api(qualified) or qualified in api_snapshot.removed() or qualified in EXTENSION_ATTRIBUTES
    )


def _rooted_in_import(node: cst.Attribute, ctx: NodeContext) -> bool:
    """Cheap screen before name resolution: ``a.b.c`` whose ``a`` is only ever imported."""
    root: cst.BaseExpression = node
    while isinstance(root, cst.Attribute):
        root = root.value
    if not isinstance(root, cst.Name):
        return False
    assignments = ctx.resolver.assignments(root)
    return bool(assignments) and all(isinstance(a, ImportAssignment) for a in assignments)


def _is_self_of_plain_class(expr: cst.BaseExpression, ctx: NodeContext) -> bool:
    """``self`` in a method of a class that is not an nn.Module."""
    if not isinstance(expr, cst.Name):
        return False
    classdef = ctx.enclosing_class_of_method()
    function = ctx.enclosing(cst.FunctionDef)
    if classdef is None or not isinstance(function, cst.FunctionDef):
        return False
    params = function.params.posonly_params or function.params.params
    if not params or params[0].name.value != expr.value:
        return False
    return not ctx.inference.is_module_class(classdef)


def _rename_keyword(new: str):
    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Arg) and node.keyword is not None
        return node.with_changes(keyword=node.keyword.with_changes(value=new))

    return apply


def _rename_imported(new: str):
    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.ImportAlias)
        return node.with_changes(name=cst.Name(new))

    return apply


def _call_requires_grad_(receiver: cst.BaseExpression, value: cst.BaseExpression):
    """``m.require_grad = v`` -> ``m.requires_grad_(v)``."""

    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Assign)
        call = cst.Call(
            func=cst.Attribute(value=node.targets[0].target.value, attr=cst.Name(REQUIRES_GRAD + "_")),
            args=[cst.Arg(value=node.value)],
        )
        return cst.Expr(value=call, semicolon=node.semicolon)

    return apply


class _FileFacts:
    """Where each node of libcst's tree sits (its parents, whether it is
    assigned to), computed when first asked (only files with a candidate
    finding pay for it)."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        collector = _FactsCollector()
        module.visit(collector)
        self.parents = collector.parents
        self.store_targets: FrozenSet[cst.Attribute] = frozenset(collector.store_targets)

    def guarded(self, node: cst.CSTNode, exceptions: FrozenSet[str], name: str) -> bool:
        """Inside version- or platform-compatibility code: a ``try`` catching
        ``exceptions``, or a branch whose condition asks ``hasattr``/``getattr``,
        a version, or mentions ``name`` (``if is_torch_npu_available():``), or
        a block that an earlier line screened with a probe of the name or of
        its namespace (``assert hasattr(torch.onnx, "dynamo_export")``,
        ``if not hasattr(...): raise``)."""
        child, parent = node, self.parents.get(node)
        while parent is not None:
            if isinstance(parent, (cst.IndentedBlock, cst.Module)) and _screened_earlier(parent.body, child, node, name):
                return True
            if isinstance(parent, cst.Try) and child is parent.body and any(
                _catches(handler, exceptions) for handler in parent.handlers
            ):
                return True
            if isinstance(parent, (cst.If, cst.While, cst.IfExp)) and _is_compat_test(parent.test, name):
                return True
            if isinstance(parent, cst.BooleanOperation) and (
                _is_compat_test(parent.left, name) or _is_compat_test(parent.right, name)
            ):
                return True
            child, parent = parent, self.parents.get(parent)
        return False


def _screened_earlier(body: Sequence[cst.BaseStatement], statement: cst.CSTNode,
                      node: cst.CSTNode, name: str) -> bool:
    """Does a statement before ``statement`` in ``body`` stop the block unless
    a ``hasattr``/``getattr`` probe of ``name`` or of its namespace passes? An
    ``assert`` of the probe, or an ``if`` on it whose branch always leaves
    (``raise``, ``return``, ``continue``, ``break``): the lines after it run
    only on a torch that has the name. A version floor (``assert
    torch.__version__ >= "1.0"``) is no such screen: the lines after it also
    run on today's torch."""
    namespace = cst.helpers.get_full_name_for_node(node.value) if isinstance(node, cst.Attribute) else None
    for earlier in body:
        if earlier is statement:
            return False
        if isinstance(earlier, cst.SimpleStatementLine):
            tests = [small.test for small in earlier.body if isinstance(small, cst.Assert)]
        elif isinstance(earlier, cst.If) and earlier.orelse is None and _always_leaves(earlier.body):
            tests = [earlier.test]
        else:
            continue
        if any(_probes(test, namespace, name) for test in tests):
            return True
    return False


def _probes(test: cst.BaseExpression, namespace: Optional[str], name: str) -> bool:
    """Does ``test`` call ``hasattr``/``getattr`` on ``namespace`` or for ``name``?"""
    finder = _ProbeFinder()
    test.visit(finder)
    for obj, attr in finder.probes:
        if attr == name or (namespace is not None and cst.helpers.get_full_name_for_node(obj) == namespace):
            return True
    return False


class _ProbeFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.probes: List[Tuple[cst.BaseExpression, Optional[str]]] = []

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in ("hasattr", "getattr") and len(node.args) >= 2:
            attr = node.args[1].value
            text = attr.evaluated_value if isinstance(attr, cst.SimpleString) else None
            self.probes.append((node.args[0].value, text if isinstance(text, str) else None))


def _always_leaves(block: cst.BaseSuite) -> bool:
    """Does the block end in ``raise``, ``return``, ``continue`` or ``break``?"""
    last = block.body[-1] if block.body else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1] if last.body else None
    return isinstance(last, (cst.Raise, cst.Return, cst.Continue, cst.Break))


def _catches(handler: cst.ExceptHandler, exceptions: FrozenSet[str]) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    for element in types:
        expr = element.value if isinstance(element, cst.Element) else element
        name = cst.helpers.get_full_name_for_node(expr) or ""
        if name.rsplit(".", 1)[-1] in exceptions:
            return True
    return False


def _is_compat_test(test: cst.BaseExpression, name: str) -> bool:
    finder = _CompatTestFinder(name)
    test.visit(finder)
    return finder.found


class _CompatTestFinder(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name.lower() if len(name) >= 3 else "\0"  # too short to be telling
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in ("hasattr", "getattr"):
            self.found = True

    def visit_Name(self, node: cst.Name) -> None:
        text = node.value.lower()
        if "version" in text or node.value == "TYPE_CHECKING" or self.name in text:
            self.found = True

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if self.name in node.value.lower():
            self.found = True


class _FactsCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.parents: Dict[cst.CSTNode, cst.CSTNode] = {}
        self.store_targets: List[cst.Attribute] = []
        self._stack: List[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._stack:
            self.parents[node] = self._stack[-1]
        self._stack.append(node)
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self._note_target(target.target)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            self._note_target(node.target)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._stack.pop()

    def _note_target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Attribute):
            self.store_targets.append(target)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._note_target(element.value)


# --- facts about the whole file, from Python's tree of it --------------------------
# (Checking may leave parts of the file out of libcst's tree: ``narrowing.py``.)


def _assigned_attributes(outline: Outline) -> List[ast.Attribute]:
    """Attributes the file assigns to: ``x.a = ...``, ``x.a: T = ...``,
    ``x.a += ...``, also as an element of a tuple or list target."""

    def compute() -> List[ast.Attribute]:
        found: List[ast.Attribute] = []
        targets: List[ast.AST] = [t for node in outline.nodes(ast.Assign) for t in node.targets]
        targets += [node.target for node in (*outline.nodes(ast.AnnAssign), *outline.nodes(ast.AugAssign))]
        while targets:
            target = targets.pop()
            if isinstance(target, ast.Attribute):
                found.append(target)
            elif isinstance(target, (ast.Tuple, ast.List)):
                targets.extend(element.value if isinstance(element, ast.Starred) else element
                               for element in target.elts)
        return found

    return outline.memo("TL211 assigned attributes", compute)


def _read_attributes(outline: Outline) -> FrozenSet[str]:
    """Names of the attributes the file reads: every attribute it does not assign to."""

    def compute() -> FrozenSet[str]:
        assigned = {id(node) for node in _assigned_attributes(outline)}
        return frozenset(node.attr for node in outline.nodes(ast.Attribute) if id(node) not in assigned)

    return outline.memo("TL211 read attributes", compute)


def _assigned_names(outline: Outline) -> FrozenSet[str]:
    """Qualified names the file assigns through its imports (``torch.my_helper = ...``)."""
    return outline.memo("TL211 assigned names", lambda: frozenset(
        name for node in _assigned_attributes(outline) for name in qualified_names(outline, node)))
