"""The oldest torch a file can run on, as its own imports show it.

A file that imports a torch module unconditionally, at its top level
(``from torch.nn.attention import sdpa_kernel``, ``import torch.distributed.tensor``),
cannot even be imported on a torch before the release that module arrived in
(``knowledge/releases.py``, mined from the releases' sources). Whatever older
floor the project declares, the code of that file runs on that release or a
newer one: a replacement that exists there is one the file can use, and a
default that changed before it is already the file's. Without a declared
floor nothing changes: a lower bound does not say which older releases the
project means to support. Imports inside ``try``, ``if`` or a
def are left out: they are how code that supports older torch asks.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Iterator, Optional

from torchlint.core.settings import Settings, Version, parse_version
from torchlint.knowledge.releases import module_release


def import_floor(tree: ast.Module) -> Optional[Version]:
    """The newest of the releases the file's top-level torch imports need; None without one."""
    releases = [parse_version(release) for release in _needed_releases(tree)]
    return max(releases) if releases else None


def with_import_floor(settings: Settings, tree: Optional[ast.Module]) -> Settings:
    """``settings`` whose oldest torch is no older than what the file's imports need."""
    if settings.torch_version is None:
        # No floor declared: what the file needs bounds the oldest torch it runs on from
        # below, but says nothing of which older ones the project means to support.
        return settings
    floor = import_floor(tree) if tree is not None else None
    if floor is None or settings.torch_version >= floor:
        return settings
    if settings.target_torch_version is not None and settings.target_torch_version < floor:
        return settings  # asked to check against an older target: leave the user's settings be
    return replace(settings, torch_version=floor)


def _needed_releases(tree: ast.Module) -> Iterator[str]:
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            modules = [alias.name for alias in statement.names]
        elif isinstance(statement, ast.ImportFrom) and not statement.level and statement.module:
            base = statement.module
            modules = [base] + [f"{base}.{alias.name}" for alias in statement.names if alias.name != "*"]
        else:
            continue
        for module in modules:
            if module == "torch" or module.startswith("torch."):
                release = module_release(module)
                if release is not None:
                    yield release
