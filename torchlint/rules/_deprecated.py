"""Shared logic of the rules driven by ``torchlint.knowledge.deprecations`` (TL108, TL109).

A subclass names the ``STATUS`` of the entries it reports and words the
message; this class finds the entries' uses and interprets their rewrites:

* references through imports (``torch.qr``, ``th.cuda.amp.autocast``,
  ``nn.NLLLoss2d``): every rewrite kind applies; ``Rename`` reuses the rename
  machinery of ``_renames`` (also for from-imports and their uses);
* from-imports of an entry (``from torch.cuda.amp import autocast``): a
  ``Rename`` is fixed in the import (``_renames``); any other rewrite is
  applied to every use of the imported name, all or none, and the fixer's
  tidy step drops the import the uses no longer need;
* ``import`` / ``from`` of a removed module (``torch._six``);
* Tensor methods (``b.solve(A)``) where inference knows the receiver is a
  tensor; the autograd context attribute (``ctx.saved_variables``) on the
  first parameter of a method of an autograd ``Function`` subclass;
* deprecated keywords (``backward(grad_variables=...)``).

Entries whose replacement is newer than the oldest supported torch
(``--torch-version``) are skipped; a rewrite that needs a newer torch than the
message is dropped (flag only). Which rule reports an entry, if any, depends
on the torch the project moves to (``--target-torch-version``): an entry
removed in 2.14 is TL108's for a target of 2.14 or later and TL109's before;
one deprecated only in a later release, or no longer deprecated there, is not
reported (``Deprecation.status_for``). ``OPT_IN`` picks the entries a subclass
reports: TL108/TL109 the default ones, TL117 those torch only documents
(``Deprecation.opt_in``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import ClassVar, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple, Union

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import (
    Names,
    Outline,
    any_of,
    attributes_named,
    calls_to,
    keyword_arguments,
    may_be_tensor,
    references,
    uses_of_imported,
)
from torchlint.analysis.screens import referenced
from torchlint.core.diagnostic import Edit, Fix
from torchlint.core.settings import Settings, Version, parse_version
from torchlint.knowledge.deprecations import (
    ALL,
    FUNCTION_CTX,
    NEWEST_RELEASE,
    TENSOR,
    CallRewrite,
    Deprecation,
    DropArgument,
    InclusiveRange,
    Kind,
    ReadAs,
    Ref,
    Rename,
    RenameKeyword,
    ReplaceCall,
    Status,
    WrapResult,
    reported_entries,
)
from torchlint.knowledge.torch_api import Rename as ApiRename
from torchlint.rules import edits
from torchlint.rules._renames import RenamedSymbolRule, spell_code, spell_qualified
from torchlint.rules.rule import MAX_MESSAGE, Finding


class DeprecatedApiRule(RenamedSymbolRule):
    STATUS: ClassVar[Status]
    OPT_IN: ClassVar[bool] = False  # the entries reported only when asked for (``Deprecation.opt_in``)
    gathers = ("Decorator",)  # a decorator's rewrite differs from a call's (``_decorator_fix``)
    RENAMES = {}  # the table replaces the rename mapping; see _rename_of
    # Filled from the table for each subclass:
    ENTRIES: ClassVar[Tuple[Deprecation, ...]]
    _by_old: ClassVar[Dict[str, Deprecation]]  # names reached through imports, by qualified name
    _methods: ClassVar[Dict[str, Deprecation]]  # Tensor methods, by method name
    _ctx_attrs: ClassVar[Dict[str, Deprecation]]  # autograd ctx attributes, by name
    _instance_methods: ClassVar[Dict[str, Tuple[Deprecation, ...]]]  # methods of instances a factory made, by name
    _keywords: ClassVar[Tuple[Deprecation, ...]]
    _missing: ClassVar[Tuple[Deprecation, ...]]  # calls that leave out a keyword (``torch.cross`` without dim)
    _sets: ClassVar[Tuple[Deprecation, ...]]  # calls given a set (``torch.optim.SGD({...})``)
    _values: ClassVar[Tuple[Deprecation, ...]]  # calls given a value torch warns about (``onnx.export(dynamo=False)``)
    _value_methods: ClassVar[FrozenSet[str]]  # the Tensor methods among them (``x.stft(..., return_complex=False)``)
    _class_decorators: ClassVar[Dict[str, Deprecation]]  # decorators of a class (``@torch.no_grad()``), by name
    _plain_methods: ClassVar[Dict[str, Deprecation]]  # methods torch wants as classmethods, by method name
    _modules: ClassVar[Tuple[Deprecation, ...]]
    _names: ClassVar[frozenset]  # every entry's last name component

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        table = cls.table()
        on_ctx = FUNCTION_CTX + "."
        cls.ENTRIES = table
        cls._by_old = {name: e for e in table
                       if e.kind not in CALL_KINDS and not e.old.startswith(on_ctx)
                       for name in (e.old, *e.aliases)}
        cls._missing = tuple(e for e in table if e.kind is Kind.MISSING_KEYWORD)
        cls._screen_missing = Names([name for e in cls._missing for name in (e.old, *e.aliases)])
        cls._sets = tuple(e for e in table if e.kind is Kind.SET_ARGUMENT)
        cls._screen_sets = Names([name for e in cls._sets for name in (e.old, *e.aliases)])
        cls._values = tuple(e for e in table if e.kind is Kind.KEYWORD_VALUE)
        cls._plain_methods = {e.name: e for e in table if e.kind is Kind.PLAIN_METHOD}
        cls._class_decorators = {name: e for e in table if e.kind is Kind.CLASS_DECORATOR for name in (e.old, *e.aliases)}
        cls._screen_values = Names([name for e in cls._values for name in (e.old, *e.aliases)])
        cls._value_methods = frozenset(e.old.rsplit(".", 1)[1] for e in cls._values if _is_tensor_method(e))
        cls._methods = {e.name: e for e in table if e.kind is Kind.METHOD}
        cls._ctx_attrs = {e.name: e for e in table if e.old.startswith(on_ctx)}
        made = [e for e in table if e.kind is Kind.INSTANCE_METHOD]
        cls._instance_methods = {e.name: tuple(m for m in made if m.name == e.name) for e in made}
        cls._keywords = tuple(e for e in table if e.kind is Kind.KEYWORD)
        cls._modules = tuple(e for e in table if e.kind is Kind.MODULE)
        # a SET_ARGUMENT entry is called through any of its names (``torch.optim.SGD``)
        # and a KEYWORD_VALUE entry's value may be passed by position (``torch.jit.ignore(True)``)
        cls._names = frozenset(e.name for e in table) | {
            name.rsplit(".", 1)[1] for e in cls._sets for name in e.aliases} | {
            name.rsplit(".", 1)[1] for e in cls._values for name in (e.old, *e.aliases)} | {
            name.rsplit(".", 1)[1] for name in cls._class_decorators}
        # What a file must contain to use an entry: its last name component,
        # used as an attribute, imported, or (for keyword entries) passed.
        cls.triggers = (
            referenced(cls._names - {e.name for e in cls._keywords}, [e.name for e in cls._keywords]),
            *([re.compile(rf"\bdef\s+(?:{'|'.join(map(re.escape, cls._plain_methods))})\b")]
              if cls._plain_methods else []),
        )
        cls._screen_by_old = Names(cls._by_old)
        cls._screen_keywords = tuple((Names([e.old, *e.aliases]), e.keyword) for e in cls._keywords)

    @classmethod
    def table(cls) -> Tuple[Deprecation, ...]:
        """The entries the rule reports: torch's, by status and opt-in (TL119 has torchaudio's)."""
        return reported_entries(cls.STATUS, cls.OPT_IN)

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        return any_of(cls.screen_candidates(outline))

    @classmethod
    def screen_candidates(cls, outline: Outline) -> Iterator[ast.AST]:
        # What a finding needs (see the check_* methods): a reference to an
        # entry through an import; an import of a removed module; a Tensor
        # method on a receiver inference may know (whether it is a tensor is
        # left to the rule); an autograd ctx attribute on a name; a deprecated
        # keyword spelled in a call of its callable. The fix of a from-import
        # rewrites the uses of the name it binds: they count as candidates too.
        for node in references(outline, cls._screen_by_old):
            yield node
            if isinstance(node, ast.ImportFrom):
                yield from uses_of_imported(outline, node)
        for node in attributes_named(outline, cls._methods):
            if may_be_tensor(outline, node.value):
                yield node
        for node in attributes_named(outline, {**cls._ctx_attrs, **cls._instance_methods}):
            if isinstance(node.value, ast.Name):
                yield node
        if cls._modules:
            yield from _imports_of_modules(outline, [e.old for e in cls._modules])
        if cls._missing:
            yield from calls_to(outline, cls._screen_missing)
        if cls._values:
            yield from calls_to(outline, cls._screen_values)
            yield from (node for node in attributes_named(outline, cls._value_methods)
                        if may_be_tensor(outline, node.value))
        if cls._class_decorators:
            yield from (node for node in outline.nodes(ast.ClassDef) if node.decorator_list)
        if cls._plain_methods:
            yield from (node for node in outline.nodes(ast.FunctionDef) if node.name in cls._plain_methods)
        if cls._sets:
            yield from (call for call in calls_to(outline, cls._screen_sets) if any(
                _is_set_ast(arg) for arg in [*call.args, *(k.value for k in call.keywords)]))
        spelled = keyword_arguments(outline)
        for names, keyword in cls._screen_keywords:
            if keyword in spelled:
                yield from (call for call in calls_to(outline, names) if any(k.arg == keyword for k in call.keywords))

    def message(self, entry: Deprecation) -> str:  # type: ignore[override]
        raise NotImplementedError

    # -- applicability ------------------------------------------------------------

    def _applies(self, entry: Deprecation, ctx: NodeContext) -> bool:
        settings = ctx.file.settings
        return (entry.status_for(_target(settings)) is self.STATUS
                and entry.versions.applies_to(settings.torch_version))

    def _fixable(self, entry: Deprecation, ctx: NodeContext) -> bool:
        return entry.rewrite is not None and entry.fix_versions.applies_to(ctx.file.settings.torch_version)

    def detail(self, entry: Deprecation) -> str:
        """What the message leaves out (``--output-format full``)."""
        return ""

    def _finding(self, node: cst.CSTNode, entry: Deprecation, fix: Optional[Fix]) -> Finding:
        message = self.message(entry)
        detail = "; ".join(part for part in (replacement_note(entry, message), self.detail(entry)) if part)
        return Finding(node, message, fix, detail=detail)

    # -- references: torch.qr(...), b.solve(A), ctx.saved_variables ----------------

    def check_Attribute(self, node: cst.Attribute, ctx: NodeContext) -> Iterator[Finding]:
        name = node.attr.value
        if name not in self._names:
            return
        qualified = ctx.resolver.resolve(node)
        if qualified is not None:
            entry = self._by_old.get(qualified)
            if entry is not None and entry.called and ctx.file.call_of(node) is None:
                return  # a reference that is not a call: no warning (``isinstance(s, torch.FloatStorage)``)
            if entry is not None and self._applies(entry, ctx):
                fix = self._reference_fix(node, entry, ctx) if self._fixable(entry, ctx) else None
                yield self._finding(node.attr, entry, fix)
            return  # an imported name is never a tensor or a ctx
        entry = self._methods.get(name)
        if entry is not None and self._applies(entry, ctx) and ctx.inference.is_tensor(node.value):
            fix = None
            if self._fixable(entry, ctx) and isinstance(entry.rewrite, Rename):
                fix = Fix([Edit(node, edits.rename_attr(entry.rewrite.new.rsplit(".", 1)[1]))])
            elif self._fixable(entry, ctx) and isinstance(entry.rewrite, CallRewrite):
                call = ctx.file.call_of(node)
                fix = _method_call_fix(call, entry.rewrite, ctx) if call is not None else None
            yield self._finding(node.attr, entry, fix)
            return
        for entry in self._instance_methods.get(name, ()):
            if self._applies(entry, ctx) and _made_by(node.value, entry.made_by, ctx):
                yield self._finding(node.attr, entry, None)
                return
        entry = self._ctx_attrs.get(name)
        if entry is not None and self._applies(entry, ctx) and _is_autograd_ctx(node.value, ctx):
            fix = None
            if self._fixable(entry, ctx) and isinstance(entry.rewrite, Rename):
                fix = Fix([Edit(node, edits.rename_attr(entry.rewrite.new.rsplit(".", 1)[1]))])
            yield self._finding(node.attr, entry, fix)

    def _reference_fix(self, node: Union[cst.Attribute, cst.Name], entry: Deprecation,
                       ctx: NodeContext) -> Optional[Fix]:
        """The fix of one use of ``entry``: ``torch.qr`` spelled through a module, or ``qr`` bound by a
        from-import (every rewrite but ``Rename``, which from-imports fix in the import itself)."""
        rewrite = entry.rewrite
        if isinstance(rewrite, Rename):
            assert isinstance(node, cst.Attribute)
            return self._attribute_fix(node, _rename_of(entry), ctx)
        if isinstance(rewrite, ReadAs):
            if ctx.file.call_of(node) is not None or ctx.file.is_store_target(node):
                return None  # ``torch.has_cuda()`` fails anyway; a call cannot be assigned to
            spelled = spell_qualified(rewrite.call, node, ctx)
            if spelled is None:
                return None
            return Fix([Edit(node, edits.replace_with_expression(spelled[0] + "()"))], required_imports=spelled[1])
        if isinstance(rewrite, CallRewrite):
            call = ctx.file.call_of(node)
            if call is None:
                return _decorator_fix(node, rewrite, ctx) if rewrite.decorator else None
            return _call_fix(call, rewrite, ctx)
        if isinstance(rewrite, InclusiveRange):
            call = ctx.file.call_of(node)
            return _range_fix(call, rewrite, ctx) if call is not None else None
        return None

    # -- imports --------------------------------------------------------------------

    def check_Import(self, node: cst.Import, ctx: NodeContext) -> Iterator[Finding]:
        for alias in node.names:
            entry = self._module_entry(cst.helpers.get_full_name_for_node(alias.name) or "")
            if entry is not None and self._applies(entry, ctx):
                yield self._finding(alias.name, entry, None)

    def check_ImportFrom(self, node: cst.ImportFrom, ctx: NodeContext) -> Iterator[Finding]:
        if node.relative or node.module is None:
            return
        module = cst.helpers.get_full_name_for_node(node.module) or ""
        entry = self._module_entry(module)
        if entry is not None:
            if not self._applies(entry, ctx):
                return
            if entry.members and module == entry.old and not isinstance(node.names, cst.ImportStar):
                # One finding per imported name, each with its own replacement
                # (``string_classes`` -> ``(str, bytes)``, ``int_classes`` -> ``int``).
                for alias in node.names:
                    name = cst.helpers.get_full_name_for_node(alias.name) or ""
                    yield self._finding(alias.name, entry.member(name), None)
                return
            yield self._finding(node.module, entry, None)
            return
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            entry = self._by_old.get(f"{module}.{cst.helpers.get_full_name_for_node(alias.name)}")
            if entry is None or not self._applies(entry, ctx):
                continue
            if entry.called and not self._imported_name_called(node, alias, ctx):
                continue
            fix = None
            if self._fixable(entry, ctx) and isinstance(entry.rewrite, Rename):
                fix = self._import_fix(node, alias, _rename_of(entry), ctx)
            elif self._fixable(entry, ctx):
                fix = self._imported_uses_fix(node, alias, entry, ctx)
            yield self._finding(alias.name, entry, fix)

    def _imported_uses_fix(self, node: cst.ImportFrom, alias: cst.ImportAlias, entry: Deprecation,
                           ctx: NodeContext) -> Optional[Fix]:
        """``from torch import qr`` ... ``qr(A, False)`` -> ``torch.linalg.qr(A, mode='complete')``.

        Every use of the imported name is rewritten as the qualified spelling
        would be (the same rewrite, the new name spelled through the file's
        imports or an added ``import torch``), all in one fix or not at all.
        The import itself is left to the fixer's tidy step, which drops it
        once the fix leaves it unused (and keeps it while the name is still
        used elsewhere, e.g. in ``__all__``).
        """
        bound = alias.evaluated_alias or alias.evaluated_name
        scope = ctx.resolver.scope_of(node)
        if scope is None or len(scope.assignments[bound]) != 1:
            return None  # rebound elsewhere: a use may not be the import's
        references = self._references(node, bound, ctx)
        if not references:
            return None
        fixes = [self._reference_fix(reference, entry, ctx) for reference in references]
        if any(fix is None for fix in fixes):
            return None
        required = tuple(dict.fromkeys(name for fix in fixes for name in fix.required_imports))
        return Fix([edit for fix in fixes for edit in fix.edits], safe=all(fix.safe for fix in fixes),
                   required_imports=required)

    def _imported_name_called(self, node: cst.ImportFrom, alias: cst.ImportAlias, ctx: NodeContext) -> bool:
        """Is the name a from-import binds called somewhere (``FloatStorage(4)``)? An entry that warns
        only when called is reported at the import then, as the other from-imports are."""
        bound = alias.evaluated_alias or alias.evaluated_name
        uses = self._references(node, bound, ctx) or []
        return any(ctx.file.call_of(use) is not None for use in uses)

    def _module_entry(self, name: str) -> Optional[Deprecation]:
        for entry in self._modules:
            if name == entry.old or name.startswith(entry.old + "."):
                return entry
        return None

    # -- keywords: torch.autograd.backward(..., grad_variables=g) -------------------

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        if self._missing:
            yield from self._missing_keyword(node, ctx)
        if self._sets:
            yield from self._set_argument(node, ctx)
        if self._values:
            yield from self._keyword_value(node, ctx)
        if not self._keywords:
            return
        given = {arg.keyword.value: arg for arg in node.args if arg.keyword is not None}
        candidates = [e for e in self._keywords if e.keyword in given]
        if not candidates:
            return
        callee = ctx.resolver.resolve(node.func)
        for entry in candidates:
            if callee not in (entry.old, *entry.aliases) or not self._applies(entry, ctx):
                continue
            arg = given[entry.keyword]
            fix = None
            rewrite = entry.rewrite
            if self._fixable(entry, ctx) and isinstance(rewrite, RenameKeyword) and rewrite.new not in given:
                fix = Fix([Edit(arg, _rename_keyword(rewrite.new))])
            elif (self._fixable(entry, ctx) and isinstance(rewrite, DropArgument)
                  and edits.without_side_effects(arg.value)):  # ``profiler_metrics=metrics()`` runs code
                fix = Fix([Edit(node, edits.remove_keywords([entry.keyword]))])
            yield self._finding(arg, entry, fix)

    def _missing_keyword(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        """``torch.cross(a, b)``: a call that leaves out a keyword whose default is deprecated."""
        callee = None
        for entry in self._missing:
            if edits.has_star_args(node):
                return  # the keyword may be in **kwargs
            given = {arg.keyword.value for arg in node.args if arg.keyword is not None}
            positional = sum(arg.keyword is None for arg in node.args)
            if entry.keyword in given or (entry.position is not None and positional > entry.position):
                continue
            callee = callee or ctx.resolver.resolve(node.func)
            if callee in (entry.old, *entry.aliases) and self._applies(entry, ctx):
                yield self._finding(node.func, entry, None)

    def _set_argument(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        """``torch.optim.SGD({w, b}, lr=0.1)``: a set where torch wants an ordered collection."""
        callee = None
        for entry in self._sets:
            arg = _argument(node, entry.keyword, entry.position)
            if arg is None or not _is_set(arg.value):
                continue
            callee = callee or ctx.resolver.resolve(node.func)
            if callee in (entry.old, *entry.aliases) and self._applies(entry, ctx):
                yield self._finding(arg, entry, None)

    def check_ClassDef(self, node: cst.ClassDef, ctx: NodeContext) -> Iterator[Finding]:
        """``@torch.no_grad()`` on a class: torch's grad-mode decorators are for functions. A plain-method
        ``__torch_function__`` in a class with no other base than a tensor class."""
        if self._plain_methods:
            yield from self._plain_method(node, ctx)
        if not self._class_decorators:
            return
        for decorator in node.decorators:
            target = decorator.decorator
            target = target.func if isinstance(target, cst.Call) else target
            entry = self._class_decorators.get(ctx.resolver.resolve(target) or "")
            if entry is not None and self._applies(entry, ctx):
                yield self._finding(decorator.decorator, entry, None)

    def _plain_method(self, node: cst.ClassDef, ctx: NodeContext) -> Iterator[Finding]:
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        for statement in body:
            entry = self._plain_methods.get(statement.name.value) if isinstance(statement, cst.FunctionDef) else None
            if entry is None or not self._applies(entry, ctx) or statement.decorators:
                continue  # a decorated one is a classmethod, or something the rule cannot see through
            bases = [ctx.resolver.resolve(arg.value) for arg in node.bases if arg.keyword is None]
            if any(arg.keyword is not None for arg in node.bases) or any(
                    base not in (*entry.made_by, "object") for base in bases):
                continue  # a mode (TorchFunctionMode) or a project base: its method may rightly be plain
            yield self._finding(statement.name, entry, None)

    def _keyword_value(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        """``torch.onnx.export(m, x, f, dynamo=False)``: a value torch warns about, spelled in the call."""
        callee = None
        for entry in self._values:
            arg = _argument(node, entry.keyword, entry.position)
            if arg is None or not _warned_value(entry, arg.value, ctx):
                continue
            callee = callee or ctx.resolver.resolve(node.func)
            called = (_tensor_method_call(node, entry, callee, ctx) if _is_tensor_method(entry)
                      else callee in (entry.old, *entry.aliases))
            if called and self._applies(entry, ctx):
                fix = self._value_fix(node, arg, entry, ctx) if self._fixable(entry, ctx) else None
                yield self._finding(arg, entry, fix)

    def _value_fix(self, node: cst.Call, arg: cst.Arg, entry: Deprecation, ctx: NodeContext) -> Optional[Fix]:
        """``spawn(f, start_method='fork')`` -> ``spawn(f)``; ``ignore(True)`` -> ``torch.jit.unused``."""
        rewrite = entry.rewrite
        if isinstance(rewrite, DropArgument):
            later = node.args[node.args.index(arg) + 1:]
            if arg.keyword is None and any(a.keyword is None for a in later):
                return None  # a positional after it would shift
            index = node.args.index(arg)
            return Fix([Edit(node, lambda call: edits.set_args(call, [a for i, a in enumerate(call.args)
                                                                       if i != index]))])
        if isinstance(rewrite, ReplaceCall) and len(node.args) == 1:
            spelled = spell_qualified(rewrite.new, node, ctx)
            if spelled is None:
                return None
            return Fix([Edit(node, edits.replace_with_expression(spelled[0]))], required_imports=spelled[1])
        if isinstance(rewrite, WrapResult):
            spelled = spell_qualified(rewrite.new, node, ctx)
            if spelled is None:
                return None
            return Fix([Edit(node, _wrapped_call(node.args.index(arg), rewrite.value, spelled[0]))],
                       required_imports=spelled[1])
        return None

    def _old_attrs(self) -> frozenset:
        return self._names


def _is_tensor_method(entry: Deprecation) -> bool:
    return entry.old.startswith(TENSOR + ".")


def _tensor_method_call(node: cst.Call, entry: Deprecation, callee: Optional[str], ctx: NodeContext) -> bool:
    """``x.stft(...)`` where inference knows ``x`` is a tensor (a name that resolves through an
    import is a module's function, not a method)."""
    func = node.func
    return (callee is None and isinstance(func, cst.Attribute) and func.attr.value == entry.old.rsplit(".", 1)[1]
            and ctx.inference.is_tensor(func.value))


def _wrapped_call(index: int, value: str, outer: str):
    """``f(..., k=False)`` -> ``outer(f(..., k=True))``: the argument at ``index`` given ``value``, the
    call's own parentheses kept outside."""
    def apply(call: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(call, cst.Call)
        args = list(call.args)
        args[index] = args[index].with_changes(value=cst.parse_expression(value))
        inner = call.with_changes(args=args, lpar=(), rpar=())
        return cst.Call(func=cst.parse_expression(outer), args=[cst.Arg(inner)], lpar=call.lpar, rpar=call.rpar)

    return apply


def _made_by(receiver: cst.BaseExpression, makers: Sequence[str], ctx: NodeContext) -> bool:
    """``receiver`` is a name last assigned a call of one of ``makers`` (``GreenContext.create(...)``)."""
    value = ctx.inference.dominating_value(receiver) if isinstance(receiver, cst.Name) else None
    return isinstance(value, cst.Call) and ctx.resolver.resolve(value.func) in makers


# entries about a call's arguments
# entries not matched as names (about a call's arguments, or a class)
CALL_KINDS = (Kind.KEYWORD, Kind.MISSING_KEYWORD, Kind.SET_ARGUMENT, Kind.KEYWORD_VALUE, Kind.CLASS_DECORATOR,
              Kind.PLAIN_METHOD)


def _warned_value(entry: Deprecation, value: cst.BaseExpression, ctx: NodeContext) -> bool:
    """Is ``value`` one torch warns about for a KEYWORD_VALUE entry? Only a literal, or a name that
    resolves to a member of the enum the entry lists, is known; anything computed is not reported."""
    known, literal = edits.literal_value(value)
    if not known and isinstance(value, (cst.Name, cst.Attribute)):
        resolved = ctx.resolver.resolve(value)
        enums = {ref.qualified.rsplit(".", 1)[0] for ref in (*entry.values, *entry.unless) if isinstance(ref, Ref)}
        known = resolved is not None and resolved.rsplit(".", 1)[0] in enums
        literal = Ref(resolved) if known else None
    if not known:
        return False
    return literal in entry.values if entry.values else literal not in entry.unless
SET_MAKERS = ("set", "frozenset")


def _argument(node: cst.Call, keyword: Optional[str], position: Optional[int]) -> Optional[cst.Arg]:
    """The argument passed as ``keyword`` or at ``position`` (positionals before it all plain)."""
    for index, arg in enumerate(node.args):
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg
        elif arg.star:
            return None
        elif index == position:
            return arg
    return None


def _is_set(expr: cst.BaseExpression) -> bool:
    """A set display or comprehension, or a ``set(...)`` / ``frozenset(...)`` call."""
    if isinstance(expr, (cst.Set, cst.SetComp)):
        return True
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in SET_MAKERS


def _is_set_ast(expr: ast.AST) -> bool:
    """``_is_set`` on the outline's tree."""
    if isinstance(expr, (ast.Set, ast.SetComp)):
        return True
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in SET_MAKERS


def _imports_of_modules(outline: Outline, modules: Sequence[str]) -> Iterator[ast.AST]:
    """The imports (``import m``, ``from m import n``, not relative) of one of ``modules`` or a submodule of one."""
    def removed(name: str) -> bool:
        return any(name == m or name.startswith(m + ".") for m in modules)

    for node in outline.nodes(ast.Import):
        if any(removed(alias.name) for alias in node.names):
            yield node
    for node in outline.nodes(ast.ImportFrom):
        if not node.level and node.module and removed(node.module):
            yield node


MESSAGE_LIMIT = MAX_MESSAGE  # one limit for every rule's message
_DOTTED = re.compile(r"^(@?)((?:[A-Za-z_][A-Za-z0-9_]*\.)+)([A-Za-z_][A-Za-z0-9_]*)")


def _shorten(code: str, keep: int) -> str:
    """``torch.distributed.checkpoint.load`` -> ``checkpoint.load`` (keep=2): the last ``keep`` components."""
    match = _DOTTED.match(code)
    if match is None:
        return code
    parts = (match.group(2) + match.group(3)).split(".")
    return match.group(1) + ".".join(parts[-keep:]) + code[match.end():]


def _relative_to(code: str, old: str) -> str:
    """``torch.distributed.all_gather_single`` -> ``all_gather_single`` when ``old`` lives in the same
    module (``torch.distributed.all_gather_into_tensor``): read next to the old name, the bare name is
    unambiguous. A replacement in another module is returned unchanged."""
    match = _DOTTED.match(code)
    module = old.rsplit(".", 1)[0] + "."
    if match is None or match.group(2) != module:
        return code
    return match.group(1) + match.group(3) + code[match.end():]


def concise_message(entry: Deprecation, *statuses: str) -> str:
    """``"`torch.qr` is deprecated since torch 1.9; use `torch.linalg.qr(A)`"``, shortened to fit.

    ``statuses`` are the verb phrases, longest first (``is deprecated since
    torch 1.9``, ``is deprecated``). The old name is always the full dotted
    path (``torch.distributed.nn.all_gather``: a shortened ``nn.all_gather``
    reads as ``torch.nn``'s); to fit, the replacement loses its leading
    components (never below two, or the bare name where it shares the old
    name's module), then the status its versions, then the advice, which
    the finding's detail still gives (``DeprecatedApiRule._finding``). Only
    a name too long for any message (``torch.distributed.fsdp.FullyShardedDataParallel.
    flatten_sharded_optim_state_dict``) loses leading components, keeping the last three
    or two."""
    old = entry.display
    new = entry.short_replacement.strip("`")
    parts = new.split("` or `") if new else []
    if entry.short_replacement and not entry.short_replacement.startswith("`"):
        shapes = ["use " + entry.short_replacement]  # prose advice ("the Python 3 standard library")
    elif parts:
        shapes = ["use `" + "` or `".join(_shorten(part, keep) for part in parts) + "`" for keep in (99, 3, 2)]
        shapes.append("use `" + "` or `".join(_relative_to(part, entry.old) for part in parts) + "`")
    else:
        shapes = ["remove it"]
    candidates = [f"`{old}` {status}; {advice}" for status in statuses for advice in shapes]
    candidates += [f"`{old}` {status}" for status in statuses]
    if entry.kind is not Kind.KEYWORD:
        candidates += [f"`{_shorten(old, keep)}` {statuses[-1]}" for keep in (3, 2)]
    for message in candidates:
        if len(message) <= MESSAGE_LIMIT:
            return message
    return candidates[-1]


def replacement_note(entry: Deprecation, message: str) -> str:
    """``use `torch.distributed._functional_collectives.all_gather_single```: the replacement in full,
    for the detail of a message that had to shorten or leave it out ("" when the message names it)."""
    if not entry.short_replacement.startswith("`"):
        return ""
    head, _ = split_replacement(entry.replacement)
    named = all(f"`{part}`" in message for part in entry.short_replacement.strip("`").split("` or `"))
    return "" if named else f"use {head}"


def deprecated_message(entry: Deprecation) -> str:
    """The one-line message of a deprecated (not removed) entry: TL109's and TL117's."""
    since = f" since torch {entry.deprecated}" if entry.deprecated else ""
    return concise_message(entry, f"is deprecated{since}", "is deprecated")


def _target(settings: Settings) -> Optional[Version]:
    """The torch the file moves to: as configured, else the newest release known, unless the floor
    is newer still."""
    if settings.target_torch_version is not None:
        return settings.target_torch_version
    floor = settings.torch_version
    return floor if floor is not None and floor > parse_version(NEWEST_RELEASE) else None


def entry_table(table: Sequence[Deprecation]) -> str:
    """The entries as a markdown table, for the rule docs: with why each is reported by default or opt-in."""
    rows = ["| API | use instead | since torch | releases | fix | reported |",
            "| --- | --- | --- | --- | --- | --- |"]
    for entry in table:
        replacement = entry.replacement
        if entry.members:
            replacement += ": " + ", ".join(f"{new} for `{name}`" for name, new in entry.members)
        rows.append(f"| `{entry.display}` | {replacement} | {entry.since or 'any'} | {_releases(entry)} "
                    f"| {_fix_kind(entry)} | {entry.reporting} |")
    return "\n".join(rows)


def _releases(entry: Deprecation) -> str:
    """``deprecated 1.9, removed 2.14``: the torch releases that changed the entry, where known."""
    parts = [f"{what} {version}" for what, version in (
        ("deprecated", entry.deprecated), ("removed", entry.removed), ("no longer deprecated", entry.undeprecated))
        if version]
    return ", ".join(parts) or "-"


def _fix_kind(entry: Deprecation) -> str:
    rewrite = entry.rewrite
    if rewrite is None:
        return "none"
    kind = {
        Rename: "rename",
        RenameKeyword: "rename",
        ReadAs: "call",
        InclusiveRange: "integer literals",
        DropArgument: "drop the argument",
        ReplaceCall: "name",
        WrapResult: "wrap the result",
        CallRewrite: "keyword arguments" if isinstance(rewrite, CallRewrite) and rewrite.passthrough == ALL
        and not rewrite.params else "rewrite",
    }[type(rewrite)]
    since = getattr(rewrite, "since", None)
    kind = f"{kind} (torch >= {since})" if since else kind
    return kind if getattr(rewrite, "safe", True) else f"{kind}, unsafe"


def _rename_of(entry: Deprecation) -> ApiRename:
    assert isinstance(entry.rewrite, Rename)
    return ApiRename(entry.old, entry.rewrite.new, "")


def _rename_keyword(new: str):
    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Arg) and node.keyword is not None
        return node.with_changes(keyword=node.keyword.with_changes(value=new))

    return apply


def _is_autograd_ctx(expr: cst.BaseExpression, ctx: NodeContext) -> bool:
    """``expr`` is the first parameter of a method of an autograd Function subclass."""
    if not isinstance(expr, cst.Name):
        return False
    function = ctx.enclosing(cst.FunctionDef)
    owner = ctx.enclosing_class_of_method()
    if function is None or owner is None or not ctx.inference.is_autograd_function_class(owner):
        return False
    params = function.params.posonly_params or function.params.params
    if not params or params[0].name.value != expr.value:
        return False
    bindings = ctx.resolver.assignments(expr)
    return bool(bindings) and all(getattr(b, "node", None) is params[0] for b in bindings)


# --- call rewrites ---------------------------------------------------------------------


@dataclass(frozen=True)
class _NewArg:
    """One argument of the rewritten call: an old argument (by index) or code."""

    keyword: Optional[str]
    index: Optional[int] = None  # the old argument's position in call.args
    code: Optional[str] = None  # or new source code (already spelled for the file)
    pack: Tuple[int, ...] = ()  # or a list of the old arguments at these positions
    keep: bool = False  # pass the old Arg node through untouched


def _bind(call: cst.Call, params: Sequence[str]) -> Optional[Dict[str, int]]:
    """Old parameter name -> index in ``call.args``; None if a positional does not fit."""
    bound: Dict[str, int] = {}
    for index, arg in enumerate(call.args):
        if arg.keyword is not None:
            continue
        if index >= len(params):
            return None
        bound[params[index]] = index
    return bound


def _call_fix(call: cst.Call, rewrite: CallRewrite, ctx: NodeContext) -> Optional[Fix]:
    planned = _plan_call(call, rewrite, ctx, call)
    if planned is None:
        return None
    func, plan, required = planned
    return Fix([Edit(call, _rebuild_call(func, plan))], safe=rewrite.safe, required_imports=required)


def _method_call_fix(call: cst.Call, rewrite: CallRewrite, ctx: NodeContext) -> Optional[Fix]:
    """``A.qr(some=False)`` -> ``torch.linalg.qr(A, mode='complete')``: the receiver is the first argument."""
    if not isinstance(call.func, cst.Attribute):
        return None

    def with_receiver(node: cst.Call) -> cst.Call:
        assert isinstance(node.func, cst.Attribute)
        receiver = node.func.value
        if getattr(receiver, "lpar", None) and not isinstance(receiver, cst.GeneratorExp):
            receiver = receiver.with_changes(lpar=[], rpar=[])  # ``(a + 1).qr()`` -> ``qr(a + 1)``
        return node.with_changes(args=[cst.Arg(value=receiver), *node.args])

    if _has_comment([call.func]):
        return None
    planned = _plan_call(with_receiver(call), rewrite, ctx, call)
    if planned is None:
        return None
    func, plan, required = planned
    rebuild = _rebuild_call(func, plan)
    return Fix([Edit(call, lambda node: rebuild(with_receiver(node)))], safe=rewrite.safe, required_imports=required)


def _plan_call(call: cst.Call, rewrite: CallRewrite, ctx: NodeContext,
               anchor: cst.CSTNode) -> Optional[Tuple[str, List["_NewArg"], Tuple[str, ...]]]:
    """The new callee (spelled for the file), the new arguments and the imports they need.

    ``call`` may be a call built for planning (a method call with its receiver
    as first argument); ``anchor`` is the node in the file that names are
    spelled at."""
    if edits.has_star_args(call) or _has_comment(call.args):
        return None  # comments between arguments cannot follow them when they move
    required: List[str] = []

    def spelled(code: str) -> Optional[str]:
        result = spell_code(code, anchor, ctx)
        if result is None:
            return None
        required.extend(result[1])
        return result[0]

    plan: List[_NewArg] = []
    for code in rewrite.lead:
        text = spelled(code)
        if text is None:
            return None
        plan.append(_NewArg(None, code=text))
    positional = [i for i, a in enumerate(call.args) if a.keyword is None]
    keywords = {a.keyword.value: i for i, a in enumerate(call.args) if a.keyword is not None}
    if rewrite.varargs:
        if len(positional) < rewrite.min_args:
            return None
        plan.append(_NewArg(None, pack=tuple(positional)))
        bound: Dict[str, int] = {}
    else:
        if positional and not rewrite.params:
            return None  # e.g. torch.cuda.amp.autocast(True): the positions differ
        bound = _bind(call, rewrite.params)
        if bound is None:
            return None
        for name, index in keywords.items():
            if name in rewrite.params:
                if name in bound:
                    return None  # given twice: the original raises
                bound[name] = index
    mapped = set(rewrite.args) | {old for _, old in rewrite.keywords}
    unknown = [p for p in bound if p not in mapped]
    if unknown:
        return None  # an old parameter the new function has no place for
    passed_through = [name for name in keywords if name not in rewrite.params]
    if rewrite.passthrough != ALL and any(name not in rewrite.passthrough for name in passed_through):
        return None
    missing_before = False
    for param in rewrite.args:
        if param not in bound:
            missing_before = True
            continue
        if missing_before:
            return None  # a gap in the positional arguments
        value = _translate(call, bound[param], rewrite, param, ctx)
        if value is _NO_FIX:
            return None
        if value is None:
            plan.append(_NewArg(None, index=bound[param]))
        elif value is _DROPPED:
            missing_before = True
        else:
            text = spelled(value)
            if text is None:
                return None
            plan.append(_NewArg(None, code=text))
    defaults = dict(rewrite.defaults)
    for new_keyword, param in rewrite.keywords:
        if param in bound:
            value = _translate(call, bound[param], rewrite, param, ctx)
            if value is _NO_FIX:
                return None
            if value is None:
                plan.append(_NewArg(new_keyword, index=bound[param]))
                continue
            if value is _DROPPED:
                continue
            code = value
        elif param in defaults:
            code = defaults[param]
        else:
            continue
        text = spelled(code)
        if text is None:
            return None
        plan.append(_NewArg(new_keyword, code=text))
    for name in passed_through:
        plan.append(_NewArg(name, index=keywords[name], keep=True))
    for new_keyword, code in rewrite.extra:
        if new_keyword in keywords:
            return None
        text = spelled(code)
        if text is None:
            return None
        plan.append(_NewArg(new_keyword, code=text))
    func = spell_qualified(rewrite.new, anchor, ctx)
    if func is None:
        return None
    required.extend(func[1])
    return func[0], plan, tuple(dict.fromkeys(required))


class _CommentFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_Comment(self, node: cst.Comment) -> None:
        self.found = True


def _has_comment(nodes: Sequence[cst.CSTNode]) -> bool:
    finder = _CommentFinder()
    for node in nodes:
        node.visit(finder)
    return finder.found


_NO_FIX = object()
_DROPPED = object()


def _translate(call: cst.Call, index: int, rewrite: CallRewrite, param: str, ctx: NodeContext):
    """None: keep the argument's value; code: replace it; _DROPPED; _NO_FIX."""
    table = rewrite.literals.get(param)
    if table is None:
        return None
    value = call.args[index].value
    resolved = ctx.resolver.resolve(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
    if resolved is not None and Ref(resolved) in table:
        code = table[Ref(resolved)]
    else:
        known, literal = edits.literal_value(value)
        if not known or isinstance(literal, Ref) or literal not in table:
            return _NO_FIX
        code = table[literal]
    return _DROPPED if code is None else code


def _rebuild_call(func_code: str, plan: Sequence[_NewArg]):
    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        old_args = node.args
        new_args: List[cst.Arg] = []
        for item in plan:
            if item.keep:
                assert item.index is not None
                new_args.append(old_args[item.index])
                continue
            if item.index is not None:
                value = old_args[item.index].value
            elif item.pack:
                value = _list_of([old_args[i].value for i in item.pack])
            else:
                assert item.code is not None
                value = cst.parse_expression(item.code)
            new_args.append(cst.Arg(value=value) if item.keyword is None else edits.keyword_arg(item.keyword, value))
        return edits.set_args(node.with_changes(func=cst.parse_expression(func_code)), new_args)

    return apply


def _list_of(values: Sequence[cst.BaseExpression]) -> cst.List:
    """``[a, b, c]``."""
    separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return cst.List(
        elements=[
            cst.Element(value=v, comma=separator if n < len(values) - 1 else cst.MaybeSentinel.DEFAULT)
            for n, v in enumerate(values)
        ]
    )


def _decorator_fix(node: Union[cst.Attribute, cst.Name], rewrite: CallRewrite, ctx: NodeContext) -> Optional[Fix]:
    """``@torch.cuda.amp.custom_fwd`` -> ``@torch.amp.custom_fwd(device_type='cuda')`` (also ``@custom_fwd``
    after ``from torch.cuda.amp import custom_fwd``)."""
    if node not in ctx.file.memo(("deprecated", "decorators"), lambda: _decorator_expressions(ctx)):
        return None
    func = spell_qualified(rewrite.new, node, ctx)
    if func is None:
        return None
    required = list(func[1])
    parts = []
    for keyword, code in rewrite.extra:
        spelled = spell_code(code, node, ctx)
        if spelled is None:
            return None
        required.extend(spelled[1])
        parts.append(f"{keyword}={spelled[0]}")
    expression = f"{func[0]}({', '.join(parts)})"
    return Fix([Edit(node, edits.replace_with_expression(expression))], safe=rewrite.safe,
               required_imports=tuple(dict.fromkeys(required)))


def _decorator_expressions(ctx: NodeContext) -> FrozenSet[cst.CSTNode]:
    """Every bare decorator expression of the file (``custom_fwd`` in ``@custom_fwd``), computed once per file."""
    return frozenset(decorator.decorator for decorator in ctx.file.nodes(cst.Decorator))  # type: ignore[attr-defined]


# --- torch.range -> torch.arange ---------------------------------------------------------


_RANGE_PARAMS = ("start", "end", "step")


def _range_fix(call: cst.Call, rewrite: InclusiveRange, ctx: NodeContext) -> Optional[Fix]:
    if edits.has_star_args(call):
        return None
    bound = _bind(call, _RANGE_PARAMS)
    if bound is None:
        return None
    keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    if keywords & set(_RANGE_PARAMS):
        return None  # named bounds: keep it simple
    if "start" not in bound or "end" not in bound:
        return None
    values = {name: _integer(call.args[index].value) for name, index in bound.items()}
    if any(v is None for v in values.values()):
        return None
    start, end, step = values["start"], values["end"], values.get("step", 1)
    if step == 0 or (end - start) * step < 0:
        return None  # torch.range raises for these
    end_exclusive = end + (1 if step > 0 else -1)
    as_float = "dtype" not in keywords  # torch.range returns the default floating dtype
    numbers = [start, end_exclusive] + ([step] if "step" in bound else [])
    texts = [repr(float(n)) if as_float else str(n) for n in numbers]
    func = spell_qualified(rewrite.new, call, ctx)
    if func is None:
        return None

    def apply(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        args = list(node.args)
        for position, text in enumerate(texts):
            args[position] = args[position].with_changes(value=cst.parse_expression(text))
        return node.with_changes(func=cst.parse_expression(func[0]), args=args)

    return Fix([Edit(call, apply)], required_imports=func[1])


def _integer(expr: cst.BaseExpression) -> Optional[int]:
    """The value of an integer literal such as ``3`` or ``-1``."""
    if isinstance(expr, cst.Integer) or (
        isinstance(expr, cst.UnaryOperation)
        and isinstance(expr.operator, (cst.Minus, cst.Plus))
        and isinstance(expr.expression, cst.Integer)
    ):
        value = ast.literal_eval(edits.expression_code(expr))
        return value if isinstance(value, int) else None
    return None


def split_replacement(replacement: str) -> Tuple[str, str]:
    """A table's replacement text as (the replacement, the note in its
    trailing parentheses): "`torch.linalg.solve(A, B)` (arguments reversed)"
    -> ("`torch.linalg.solve(A, B)`", "arguments reversed")."""
    if not replacement.endswith(")"):
        return replacement, ""
    depth, in_code = 0, False
    for index in range(len(replacement) - 1, -1, -1):
        char = replacement[index]
        if char == "`":
            in_code = not in_code
        elif not in_code and char == ")":
            depth += 1
        elif not in_code and char == "(":
            depth -= 1
            if depth == 0:
                head = replacement[:index].rstrip()
                return (head, replacement[index + 1:-1]) if head else (replacement, "")
    return replacement, ""
