"""TL114: private torch paths of names that have a public spelling."""

from __future__ import annotations

from typing import Iterator, Mapping

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.screens import referenced
from torchlint.analysis.version_gates import newest_tried_first
from torchlint.core.settings import parse_version
from torchlint.knowledge.torch_api import (
    PUBLIC_TWINS,
    PUBLIC_TWINS_BY_PRIVATE,
    PublicTwin,
    Rename,
)
from torchlint.rules._renames import RenamedSymbolRule
from torchlint.rules.rule import Example, Finding, FixSafety, fitting

RENAMES: Mapping[str, Rename] = {twin.private: Rename(twin.private, twin.public, "TL114") for twin in PUBLIC_TWINS}

# Every private path has a component starting with "_", and any reference to it
# spells that component (in an import or an attribute chain).
_PRIVATE_PARTS = tuple(sorted({
    part for twin in PUBLIC_TWINS for part in twin.private.split(".") if part.startswith("_")
}))


class PrivateAlias(RenamedSymbolRule):
    code = "TL114"
    name = "private-alias-with-public-twin"
    summary = (
        "A torch name used through a private module (`torch.utils.data._utils.collate.default_collate`) "
        "that has a public spelling (`torch.utils.data.default_collate`)"
    )
    why = (
        "Modules and names starting with an underscore are torch internals: they move or disappear between "
        "releases without deprecation (`torch._six` did, and `torch.distributed._tensor` is now only a shim "
        "for `torch.distributed.tensor`), while the public names are kept stable. Each entry of torchlint's "
        "table is a private path of an object that torch also exports publicly: the very same object "
        "(`default_collate`, `get_worker_info`, the `torch.func` transforms under `torch._functorch`, DTensor, "
        "FSDP2's `fully_shard`) or a public function that only calls the private one (`torch.compiler.reset` "
        "and friends over `torch._dynamo`; `torch._utils.is_compiling` even warns and defers to "
        "`torch.compiler.is_compiling`); the table is checked against torch 2.13. Each entry applies only "
        "when the oldest torch you support (`--torch-version`) already has the public name, and not in a file "
        "whose `try` imports a torch name no older than it and, on `ImportError`, imports the same name from "
        "another torch module: that file runs on a torch where the import fails."
    )
    fix_safety = FixSafety.SAFE
    fix_description = (
        "Renames the reference to the public name: `from private import name` imports it from the public "
        "module (its uses are untouched), an attribute chain is rewritten where the public module is "
        "imported under a plain name. Otherwise it is reported without a fix."
    )
    triggers = (referenced(_PRIVATE_PARTS),)
    references = ("https://github.com/pytorch/pytorch/pull/69862",)
    RENAMES = RENAMES

    def message(self, rename: Rename) -> str:
        twin = PUBLIC_TWINS_BY_PRIVATE[rename.old]
        how = "a public wrapper of it" if twin.wrapper else "the same object"
        return fitting(f"`{rename.old}` is private; use `{rename.new}` ({how})",
                       f"`{rename.old}` is private; use `{rename.new}`",
                       f"private; use `{rename.new}` ({how})",
                       f"private; use `{rename.new}`")

    flagged = (
        Example(
            """
            from torch._utils import is_compiling
            flag = is_compiling()
            """,
            """
            from torch.compiler import is_compiling
            flag = is_compiling()
            """,
            runnable=True,
        ),
        Example(
            """
            import torch
            from torch.utils.data._utils.collate import default_collate
            loader = torch.utils.data.DataLoader(range(4), batch_size=2, collate_fn=default_collate)
            """,
            """
            import torch
            from torch.utils.data import default_collate
            loader = torch.utils.data.DataLoader(range(4), batch_size=2, collate_fn=default_collate)
            """,
        ),
        Example(
            """
            import torch.utils.data
            batch = torch.utils.data._utils.collate.default_convert(samples)
            """,
            """
            import torch.utils.data
            batch = torch.utils.data.default_convert(samples)
            """,
        ),
        Example(
            """
            from torch.distributed._tensor import DTensor, Shard, init_device_mesh
            from torch._functorch.apis import vmap as batched
            """,
            """
            from torch.distributed.device_mesh import init_device_mesh
            from torch.distributed.tensor import Shard
            from torch.distributed.tensor import DTensor
            from torch.func import vmap as batched
            """,
            count=4,
        ),
    )
    accepted = (
        """
        import torch
        from torch.utils.data import default_collate, get_worker_info
        torch.compiler.reset()
        is_compiling = torch.compiler.is_compiling()
        """,
        """
        import torch
        from torch.utils.data._utils.collate import collate, default_collate_fn_map  # no public twin
        torch._dynamo.config.cache_size_limit = 64
        """,
        """
        from mylib._utils import is_compiling  # not torch
        flag = is_compiling()
        """,
        """
        # verl: the file falls back to the private module where the public one is missing
        # (torch before 2.5), so it supports that torch: the public name would break it.
        from torch.distributed._tensor import Placement, Shard

        try:
            from torch.distributed.tensor import DTensor
        except ImportError:
            from torch.distributed._tensor import DTensor
        """,
    )

    def check_Attribute(self, node: cst.Attribute, ctx: NodeContext) -> Iterator[Finding]:
        for finding in super().check_Attribute(node, ctx):
            qualified = ctx.resolver.resolve(node)
            if qualified is not None and self._applies(qualified, ctx):
                yield finding

    def check_ImportFrom(self, node: cst.ImportFrom, ctx: NodeContext) -> Iterator[Finding]:
        module = cst.helpers.get_full_name_for_node(node.module) if node.module is not None else None
        for finding in super().check_ImportFrom(node, ctx):
            if self._applies(f"{module}.{cst.helpers.get_full_name_for_node(finding.node)}", ctx):
                yield finding

    def _applies(self, private: str, ctx: NodeContext) -> bool:
        twin: PublicTwin = PUBLIC_TWINS_BY_PRIVATE[private]
        tried = ctx.file.memo(("TL114", "tried first"), lambda: newest_tried_first(ctx.resolver.file_outline()))
        if tried is not None and twin.since is not None and parse_version(twin.since) >= tried:
            return False  # the file falls back where an import this new fails: it supports an older torch
        oldest = ctx.file.settings.torch_version
        return oldest is None or twin.since is None or oldest >= parse_version(twin.since)
