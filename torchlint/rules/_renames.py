"""Shared logic of rules that flag a deprecated torch callable with a twin.

Subclasses give a ``RENAMES`` table (from ``torch_api``); this class finds
attribute references (``F.upsample``, ``nn.init.normal``) and from-imports
(``from torch.nn.functional import upsample``) and builds exact fixes:

* attribute reference, same module: rename the attribute;
* attribute reference, other module (``F.sigmoid`` -> ``torch.sigmoid``):
  spell the new module the way the file imports it, adding ``import torch``
  when the name is free;
* from-import: rewrite the import and, where the bound name changes, every
  use of it, all in one fix; no fix when a use cannot be rewritten.

Calls gain the replacement's ``extra_keywords``; a reference that is not
called cannot gain them, so it is flagged without a fix.

``spell_qualified`` / ``spell_root`` / ``spell_code`` write a torch name (or
table code such as ``torch.float32``) the way a file imports torch; the
table-driven rules (``_deprecated``, TL110) use them too.
"""

from __future__ import annotations

import ast
import re
from typing import ClassVar, FrozenSet, Iterator, List, Mapping, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Names, Outline, any_of, qualified_names, references
from torchlint.analysis.scopes import ClassScope, GlobalScope, ImportAssignment
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.torch_api import Rename
from torchlint.rules import edits
from torchlint.rules.rule import Finding, Rule


class RenamedSymbolRule(Rule):
    RENAMES: ClassVar[Mapping[str, Rename]]

    def message(self, rename: Rename) -> str:
        raise NotImplementedError

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        return any_of(cls.screen_candidates(outline))

    @classmethod
    def screen_candidates(cls, outline: Outline) -> Iterator[ast.AST]:
        # Every finding is an attribute chain resolving through an import to
        # an old name, or a from-import of one. The fix of a from-import
        # outside module-level code rewrites the uses in its own scope only.
        return references(outline, cls._screen_names())

    @classmethod
    def _screen_names(cls) -> Names:
        names = cls.__dict__.get("_screen_names_cache")
        if names is None:
            names = Names(cls.RENAMES)
            cls._screen_names_cache = names
        return names

    # -- attribute references: F.upsample(...), nn.init.normal(w) -------------

    def check_Attribute(self, node: cst.Attribute, ctx: NodeContext) -> Iterator[Finding]:
        if node.attr.value not in self._old_attrs():
            return
        qualified = ctx.resolver.resolve(node)
        rename = self.RENAMES.get(qualified) if qualified else None
        if rename is None:
            return
        if ctx.file.call_of(node) is None and rename.old_module in patched_modules(ctx.resolver.file_outline()):
            return  # the function object itself, kept to restore a module the file patches
        yield Finding(node.attr, self.message(rename), self._attribute_fix(node, rename, ctx))

    def _attribute_fix(self, node: cst.Attribute, rename: Rename, ctx: NodeContext) -> Optional[Fix]:
        call = ctx.file.call_of(node)
        if rename.extra_keywords and call is None:
            return None
        fix_edits: List[Edit] = []
        required: Tuple[str, ...] = ()
        if rename.new_module == rename.old_module:
            fix_edits.append(Edit(node, edits.rename_attr(rename.new_attr)))
        else:
            spelled = spell_qualified(rename.new, node, ctx)
            if spelled is None:
                return None
            code, required = spelled
            fix_edits.append(Edit(node, edits.replace_with_expression(code)))
        if call is not None and rename.extra_keywords:
            if edits.has_star_args(call):
                return None  # the keywords might already be in **kwargs
            fix_edits.append(Edit(call, edits.add_keywords(rename.extra_keywords)))
        return Fix(fix_edits, safe=True, required_imports=required)

    # -- from-imports: from torch.nn.functional import upsample -----------------

    def check_ImportFrom(self, node: cst.ImportFrom, ctx: NodeContext) -> Iterator[Finding]:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = cst.helpers.get_full_name_for_node(node.module)
        for alias in node.names:
            name = cst.helpers.get_full_name_for_node(alias.name)
            rename = self.RENAMES.get(f"{module}.{name}")
            if rename is not None:
                yield Finding(alias.name, self.message(rename), self._import_fix(node, alias, rename, ctx))

    def _import_fix(
        self, node: cst.ImportFrom, alias: cst.ImportAlias, rename: Rename, ctx: NodeContext
    ) -> Optional[Fix]:
        bound = alias.evaluated_alias or alias.evaluated_name
        scope = ctx.resolver.scope_of(node)
        binds = scope.assignment_target(bound) if scope is not None else None
        if isinstance(binds, (GlobalScope, ClassScope)):  # also ``global NAME`` in a function
            # Other modules may import this name (``from .imports import *``,
            # ``__all__``), a class attribute is read as ``Box.name``: the module
            # or class must keep binding it, to the same thing, so its uses
            # (anywhere) stay as they are.
            if rename.extra_keywords or rename.new_module != rename.old_module:
                return None if rename.extra_keywords else self._moved_import_fix(node, alias, rename, bound, ctx)
            return Fix([Edit(alias, _rename_alias_keeping(rename.new_attr, bound))])
        if binds is not scope:
            return None  # ``nonlocal NAME``: the uses are the enclosing function's, bound elsewhere too
        references = self._references(node, bound, ctx)
        if references is None:
            return None
        return self._local_import_fix(node, alias, rename, bound, references, ctx)

    def _local_import_fix(
        self, node: cst.ImportFrom, alias: cst.ImportAlias, rename: Rename, bound: str,
        references: List[cst.Name], ctx: NodeContext,
    ) -> Optional[Fix]:
        calls = [ctx.file.call_of(ref) for ref in references]
        if rename.extra_keywords and any(c is None or edits.has_star_args(c) for c in calls):
            return None
        fix_edits: List[Edit] = [
            Edit(call, edits.add_keywords(rename.extra_keywords)) for call in calls if rename.extra_keywords
        ]
        if rename.new_module == rename.old_module:
            if alias.asname is None:
                if not self._name_is_free_or_same(rename, ctx, node):
                    return None
                fix_edits.extend(Edit(ref, edits.rename_name(rename.new_attr)) for ref in references)
                if _imports_name(node, rename.new_attr):
                    # ``from F import upsample, interpolate``: drop the old name.
                    fix_edits.append(Edit(node, edits.remove_import_alias(alias.evaluated_name)))
                    return Fix(fix_edits)
            fix_edits.append(Edit(alias, _rename_alias(rename.new_attr)))
            return Fix(fix_edits)
        return self._moved_import_fix(node, alias, rename, bound, ctx, fix_edits)

    def _moved_import_fix(
        self, node: cst.ImportFrom, alias: cst.ImportAlias, rename: Rename, bound: str, ctx: NodeContext,
        fix_edits: Optional[List[Edit]] = None,
    ) -> Optional[Fix]:
        """The callable lives in another module: import it from there instead."""
        fix_edits = list(fix_edits or [])
        new_import = f"from {rename.new_module} import {rename.new_attr}"
        if alias.asname is not None:
            new_import += f" as {bound}"
        elif rename.new_attr != bound:
            return None
        if len(node.names) == 1:
            fix_edits.append(Edit(node, lambda n: cst.parse_statement(new_import).body[0]))
        else:
            line = ctx.file.statement_line_of(node)
            if line is None:
                return None
            fix_edits.append(Edit(node, edits.remove_import_alias(alias.evaluated_name)))
            fix_edits.append(Edit(line, _append_line(new_import)))
        return Fix(fix_edits)

    def _references(self, node: cst.ImportFrom, bound: str, ctx: NodeContext) -> Optional[List[cst.Name]]:
        scope = ctx.resolver.scope_of(node)
        if scope is None:
            return None
        references: List[cst.Name] = []
        for assignment in scope.assignments[bound]:
            if isinstance(assignment, ImportAssignment) and assignment.node is node:
                for access in assignment.references:
                    if not isinstance(access.node, cst.Name):
                        return None  # e.g. a use inside a string annotation
                    references.append(access.node)
        return references

    def _name_is_free_or_same(self, rename: Rename, ctx: NodeContext, at: cst.CSTNode) -> bool:
        scope = ctx.resolver.scope_of(at)
        if scope is None:
            return False
        if rename.new_attr not in scope:
            return True
        names = {qn.name for qn in scope.get_qualified_names_for(rename.new_attr)}
        return names == {rename.new}

    def _old_attrs(self) -> frozenset:
        cached = self.__dict__.get("_old_attr_cache")
        if cached is None:
            cached = frozenset(old.rsplit(".", 1)[1] for old in self.RENAMES)
            self.__dict__["_old_attr_cache"] = cached
        return cached


def patched_modules(outline: Outline) -> FrozenSet[str]:
    """The torch modules whose attributes the file replaces (``setattr(torch.nn.init,
    name, skip)``, ``torch.nn.init.normal = skip``). Such a file refers to their
    functions as objects, to put them back later (diffusers' ``no_init_weights``):
    an uncalled reference there is the original, not a call of a deprecated name."""
    def patched() -> FrozenSet[str]:
        found = set()
        for call in outline.calls("setattr"):
            if call.args and isinstance(call.func, ast.Name):
                found.update(qualified_names(outline, call.args[0]))
        for node in outline.nodes(ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute):
                    found.update(qualified_names(outline, target.value))
        return frozenset(found)
    return outline.memo("patched modules", patched)


def spell_qualified(qualified: str, at: cst.CSTNode, ctx: NodeContext) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """How to write the torch name ``qualified`` at ``at``: (code, imports to add).

    Through a plain import of its module (``F.interpolate``), else through
    the root package (``th.linalg.qr`` after ``import torch as th``: torch
    imports its public submodules), else as written plus ``import torch``
    when that name is bound nowhere in the file; None if it cannot be spelled.
    """
    module, attr = qualified.rsplit(".", 1)
    spelled = ctx.resolver.name_for_module(module, at)
    if spelled is not None:
        return f"{spelled}.{attr}", ()
    root, _, rest = qualified.partition(".")
    spelled_root = spell_root(root, at, ctx)
    if spelled_root is None:
        return None
    return f"{spelled_root[0]}.{rest}", spelled_root[1]


def spell_root(root: str, at: cst.CSTNode, ctx: NodeContext) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """The name a top-level package is bound to at ``at`` (``th`` after ``import torch as th``),
    or the package itself plus the import to add when the name is bound nowhere."""
    spelled = ctx.resolver.name_for_module(root, at)
    if spelled is not None:
        return spelled, ()
    if ctx.resolver.is_unbound(root, at):
        return root, (root,)
    return None


_TORCH_ROOT = re.compile(r"(?<![\w.'\"])torch(?=\.)")


def spell_code(code: str, at: cst.CSTNode, ctx: NodeContext) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """Table code such as ``torch.float32`` as it must read at ``at``: (code, imports to add)."""
    if not _TORCH_ROOT.search(code):
        return code, ()
    spelled = spell_root("torch", at, ctx)
    if spelled is None:
        return None
    return _TORCH_ROOT.sub(spelled[0], code), spelled[1]


def _imports_name(node: cst.ImportFrom, name: str) -> bool:
    return any(a.asname is None and a.evaluated_name == name for a in node.names)


def _rename_alias_keeping(new_name: str, bound: str):
    """``from m import old`` -> ``from m import new as old``: same binding, new target."""

    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.ImportAlias)
        return node.with_changes(name=cst.Name(new_name), asname=cst.AsName(name=cst.Name(bound)))

    return apply


def _rename_alias(new_name: str):
    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.ImportAlias)
        return node.with_changes(name=cst.Name(new_name))

    return apply


def _append_line(statement: str):
    def apply(node: cst.CSTNode):
        assert isinstance(node, cst.SimpleStatementLine)
        return cst.FlattenSentinel([node, cst.parse_statement(statement + "\n")])

    return apply
