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
import re
from dataclasses import replace
from typing import Dict, Iterator, List, Optional, Tuple

from torchlint.core.settings import Settings, Version, parse_version
from torchlint.knowledge.releases import module_release, name_releases, newer_modules
from torchlint.knowledge.torch_api import KEYWORD_SINCE


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


# --- what a module's code needs, for a project that declares no floor -----------------


def needed_release(tree: ast.Module) -> Optional[Version]:
    """The newest torch release that something ``tree`` uses outside a ``try`` and
    outside a test of the torch version or of what torch has (``if hasattr(...)``)
    arrived in: a torch module it imports (anywhere), a name or keyword whose first
    release was mined (``knowledge/releases.py``; ``torch.compile``, 2.0), or a keyword
    of ``KEYWORD_SINCE`` it passes (``torch.load(..., weights_only=False)``, 1.13).
    The code was written for that torch or a newer one (``Engine._shown_floor``).
    None: nothing newer than the oldest release mined."""
    aliases = _aliases(tree)
    releases: List[Version] = []
    for node in _unguarded(tree.body):
        for module in _modules_imported(node):
            release = module_release(module)
            if release is not None:
                releases.append(parse_version(release))
        if isinstance(node, (ast.Attribute, ast.Name)):
            release = _NAMED.get(_dotted(node, aliases) or "")
            if release is not None:
                releases.append(release)
        if isinstance(node, ast.Call):
            called = _dotted(node.func, aliases)
            for keyword in node.keywords if called else ():
                release = _KEYWORDS.get((called, keyword.arg or ""))
                if release is not None:
                    releases.append(release)
    return max(releases) if releases else None


def _mined_names() -> Tuple[Dict[str, Version], Dict[Tuple[str, str], Version]]:
    names: Dict[str, Version] = {}
    keywords: Dict[Tuple[str, str], Version] = {
        key: parse_version(".".join(map(str, since))) for key, since in KEYWORD_SINCE.items()}
    for name, release in name_releases().items():
        if release is None:
            continue
        if name.endswith("=)"):  # ``torch.nn.Hardtanh(max_val=)``: a keyword of a callable
            callee, _, keyword = name[:-2].partition("(")
            keywords[(callee, keyword)] = parse_version(release)
        else:
            names[name] = parse_version(release)
    return names, keywords


_NAMED, _KEYWORDS = _mined_names()
# The words a text must hold for ``needed_release`` to find a name or keyword in it:
# the last part of each mined name, and each keyword (most modules hold none, and
# are known without a parse).
_EVIDENCE_WORDS = frozenset([name.rpartition(".")[2] for name in _NAMED] + [keyword for _, keyword in _KEYWORDS])
_WORD = re.compile(r"[A-Za-z_]\w*")
_TORCH_MODULE = re.compile(
    r"\bfrom[ \t]+(torch(?:\.\w+)*)[ \t]+import[ \t]+(?:\(([\w\s,]*)\)|([\w \t,]+))|\btorch(?:\.\w+)+")


def may_need_a_release(text: str) -> bool:
    """Can ``needed_release`` find anything in a module of this text? A cheap screen:
    a word of a mined name or keyword, or a torch module newer than the oldest
    release mined, spelled dotted or imported from its package."""
    if "torch" not in text:
        return False
    if not _EVIDENCE_WORDS.isdisjoint(_WORD.findall(text)):
        return True
    newer = newer_modules()
    for match in _TORCH_MODULE.finditer(text):
        names = match.group(2) or match.group(3)
        spelled = [match.group(0)] if match.group(1) is None else [match.group(1)] + [
            f"{match.group(1)}.{name.split()[0]}" for name in names.split(",") if name.split()]
        if any(module_release(module) is not None or module in newer for module in spelled):
            return True
    return False


def _unguarded(statements: List[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of ``statements`` but those in a ``try`` statement or under an ``if``
    that asks about the torch version or about what torch has: how code that supports
    older torch asks."""
    todo: List[ast.AST] = [statement for statement in statements if not _serves_older_torch(statement)]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(child for child in ast.iter_child_nodes(node) if not _serves_older_torch(child))


def _serves_older_torch(node: ast.AST) -> bool:
    """A ``try`` statement, or an ``if`` asking about the torch version or what torch has."""
    return isinstance(node, ast.Try) or (isinstance(node, ast.If) and _asks_about_torch(node.test))


def _asks_about_torch(test: ast.expr) -> bool:
    """``torch.__version__ >= ...``, ``is_torch_version(...)``, ``TORCH_2``, ``hasattr(torch, ...)``."""
    for node in ast.walk(test):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        if "version" in name.lower() or _RELEASE_FLAG.search(name) or name in ("hasattr", "getattr"):
            return True
    return False


# A flag of a release: ``TORCH_2``, ``is_torch_2_1``, ``WITH_PT23``, ``_PT_GE_2_0``.
_RELEASE_FLAG = re.compile(r"(?:torch|pt)\w*\d", re.IGNORECASE)


def _modules_imported(node: ast.AST) -> List[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.startswith("torch.")]
    if isinstance(node, ast.ImportFrom) and not node.level and node.module and (
            node.module == "torch" or node.module.startswith("torch.")):
        return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*"]
    return []


def _aliases(tree: ast.Module) -> Dict[str, str]:
    """The names the module's imports bind to torch: ``nn`` -> ``torch.nn``."""
    bound: Dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "torch" or alias.name.startswith("torch."):
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound["torch"] = "torch"
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module and (
                node.module == "torch" or node.module.startswith("torch.")):
            for alias in node.names:
                if alias.name != "*":
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def _dotted(node: ast.AST, aliases: Dict[str, str]) -> Optional[str]:
    """``nn.Hardtanh`` as ``torch.nn.Hardtanh``, where its first name is a torch import."""
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])
