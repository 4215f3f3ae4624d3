"""What torchlint does about each deprecation torch reports about itself.

``scripts/mine_torch_deprecations.py`` mines the installed torch (2.13) and
the wheels of later releases (2.14.1, 2.15.0) for every deprecation a user can
trigger and writes ``data/torch_deprecations_mined.json``: one table whose
items say in which release each was deprecated, removed or un-deprecated.
Mining cannot know the replacement, whether a rewrite is exact, or whether a
use can be seen in source code at all; this module is the review of each mined
item, and ``tests/test_mined_deprecations.py`` fails on any item it does not
decide. An item is decided when:

* an entry of the deprecation table (``deprecations.ENTRIES``) has its key
  (``torch.qr``, ``torch.autograd.grad(only_inputs=)``) or lists it as an
  alias, or ``COVERED_BY`` names the entry that covers it;
* another rule covers it (``OTHER_RULES``, plus the renames of
  ``torch_api.RENAMES``: ``F.upsample`` is TL103's);
* it matches an ``OUT_OF_SCOPE`` pattern, with the reason.

The reasons fall in three scopes: ``INTERNAL`` (no public name reaches it:
private modules, functions and methods), ``RUNTIME`` (whether torch warns
depends on values, types, the Python version or the environment, which static
analysis cannot see), and ``NOT_MODELED`` (detectable in source, left out for
the reason given). Only the last counts as detectable-but-not-flagged in the
coverage figures.

This module is read by the tests and the generator's report, never while
linting.
"""

from __future__ import annotations

import enum
import fnmatch
import json
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple, Union

from torchlint.core.settings import Version, parse_version
from torchlint.knowledge.deprecations import ENTRIES, Deprecation
from torchlint.knowledge.torch_api import RENAMES

MINED_FILE = Path(__file__).resolve().parent / "data" / "torch_deprecations_mined.json"


class Scope(enum.Enum):
    INTERNAL = "internal"
    RUNTIME = "runtime"
    NOT_MODELED = "not modeled"


I, RT, NM = Scope.INTERNAL, Scope.RUNTIME, Scope.NOT_MODELED

# Mined id -> the table entry key that covers it (where the ids differ), or the keys of several
# entries, one per release that changed what torch warns about there (``Decision.entry_for``).
COVERED_BY: Mapping[str, Union[str, Tuple[str, ...]]] = {
    "torch.nn.utils.weight_norm.WeightNorm.apply": "torch.nn.utils.weight_norm",
    "torch.utils._pytree._register_pytree_node(maybe_from_str_fn=)": "torch.utils._pytree._register_pytree_node",
    "torch.distributed.fsdp.FullyShardedDataParallel._warn_legacy_optim_state_dict":
        "torch.distributed.fsdp.FullyShardedDataParallel.full_optim_state_dict",
    "torch.distributed.fsdp.FullyShardedDataParallel._warn_optim_input(optim_input=)":
        "torch.distributed.fsdp.FullyShardedDataParallel.full_optim_state_dict",
    "torch.jit._script:_script_impl(optimize=)": "torch.jit.script(optimize=)",
    "torch.jit.ignore": "torch.jit.ignore(drop_on_export=)",
    "torch.utils.data.dataloader._BaseDataLoaderIter(loader=)": "torch.utils.data.DataLoader(pin_memory_device=)",
    "torch:__getattr__": "torch.has_cuda",  # torch.has_cuda, has_cudnn, has_mps, has_mkldnn
    "torch:__getattr__(name=)": "torch.set_vital",
    "torch.nn.attention.flex_attention.flex_attention": "torch.nn.attention.flex_attention.flex_attention(return_lse=)",
    "torch.ao.quantization.quantize_fx._prepare_fx(prepare_custom_config=)": "torch.ao.quantization.quantize_fx.prepare_fx",
    "torch.ao.quantization.quantize_fx._convert_fx(convert_custom_config=)": "torch.ao.quantization.quantize_fx.convert_fx",
    # profile() warns about fields of the config, which users set where they make it. torch 2.14.1:
    # profiler_metrics and profiler_measure_per_kernel ("deprecated and ignored", its _ExperimentalConfig
    # docstring too); torch 2.15.0 no longer takes them (its torch/_C/_profiler.pyi drops both and its
    # libtorch_python.so holds neither name: a TypeError) and warns about adjust_profiler_step instead,
    # the entry that covers the item there (the first reported; the removed fields are TL108's).
    "torch.autograd.profiler.profile(experimental_config=)": tuple(
        f"torch._C._profiler._ExperimentalConfig({field}=)"
        for field in ("adjust_profiler_step", "profiler_metrics", "profiler_measure_per_kernel")),
    # torch warns from handle_torch_function (and C++) when a class's __torch_function__ is a plain method
    "torch.autograd.handle_torch_function": "torch.Tensor.__torch_function__",
    # torch's grad-mode context managers share the base that warns when one decorates a class
    "torch.autograd.forward_ad._DecoratorContextManager.__call__(orig_func=)": "@torch.no_grad on a class",
    # the warning when both are given; every such call passes broadcast_buffers, which warns alone too
    "torch.nn.parallel.DistributedDataParallel(forward_sync_buffers=)":
        "torch.nn.parallel.DistributedDataParallel(broadcast_buffers=)",
}

# Mined id -> another rule that flags it.
OTHER_RULES: Mapping[str, str] = {
    "torch.autograd.Function": "TL111",  # instantiating a Function: the legacy (non-static) style
    "torch.autograd.Function.__call__": "TL111",
    "torch.nn.functional._get_softmax_dim": "TL204",  # softmax without dim=
    "torch.nn._reduction:get_enum(reduction=)": "TL106",  # reduction='elementwise_mean'
}

# (fnmatch pattern on mined ids, scope, reason), first match wins.
OUT_OF_SCOPE: Tuple[Tuple[str, Scope, str], ...] = (
    # -- runtime conditions ----------------------------------------------------------
    ("torch.jit.script", RT, "warns only on Python 3.14+ (a runtime condition)"),
    ("torch.jit.script_method", RT, "warns only on Python 3.14+"),
    ("torch.jit.trace", RT, "warns only on Python 3.14+"),
    ("torch.jit.trace_module", RT, "warns only on Python 3.14+"),
    ("torch.jit.save", RT, "warns only on Python 3.14+"),
    ("torch.jit.load", RT, "warns only on Python 3.14+"),
    ("torch.hub.get_dir", RT, "warns when the TORCH_HUB environment variable is set"),
    ("torch.hub.load_state_dict_from_url", RT, "warns when the TORCH_MODEL_ZOO environment variable is set"),
    ("torch.export.load", RT, "depends on the version of the file loaded"),
    ("torch.cuda.nccl.reduce(output=)", RT, "warns when `output` is a list (a runtime type)"),
    ("torch.nn.Module.state_dict", RT, "positional arguments to a module's method: the receiver's type is runtime"),
    ("torch.nn.Module._maybe_warn_non_full_backward_hook*", RT,
     "depends on the module's inputs and outputs at run time (register_full_backward_hook is TL-independent)"),
    ("torch.nn.quantizable.MultiheadAttention._forward_impl*", RT, "depends on the mask's dtype"),
    ("torch.nn.functional._canonical_mask*", RT, "depends on the masks' dtypes"),
    ("torch.nn.functional.embedding_bag(input=)", RT, "depends on the arguments' shapes (old argument order)"),
    ("torch.cuda.comm.gather(destination=)", RT, "depends on the value -1 at run time"),
    ("torch.optim.lr_scheduler.*.step(epoch=)", RT, "a method of a scheduler instance: the receiver's type is runtime"),
    ("torch.GradScaler.step(optimizer=)", RT, "depends on the optimizer's step signature"),
    ("torch.distributions.Distribution.sample_n", RT, "a method of a distribution instance (receiver type)"),
    ("torch.autograd.profiler.FunctionEvent.*", RT, "attributes of profiler events (receiver type)"),
    ("torch.autograd.profiler_util.FormattedTimesMixin.cuda_time", RT, "attribute of profiler events"),
    ("torch.profiler._KinetoProfile.export_memory_timeline", RT, "a method of a profiler instance"),
    ("torch.*.TreeSpec.children_specs", RT, "attribute of a TreeSpec instance"),
    ("torch.utils.data.ConcatDataset.cummulative_sizes", RT, "attribute of a dataset instance"),
    ("torch.utils.data.IterDataPipe.__getattr__", RT, "attribute access on datapipe instances"),
    ("torch.utils.data.MapDataPipe.__getattr__", RT, "attribute access on datapipe instances"),
    ("torch.distributed.checkpoint.staging.AsyncStager.synchronize_staging", RT, "a method of a stager instance"),
    ("torch.distributed.fsdp.FSDPModule.set_reduce_scatter_divide_factor", RT, "a method of an FSDP module instance"),
    ("torch.distributed.tensor.distribute_module(*", RT, "depends on the callback's arity"),
    ("torch.distributed.*.WorkerSpec", RT, "depends on the `fn` field's value"),
    ("torch.distributed.nn.functional._deprecated", RT, "the helper: its callers are table entries"),
    ("torch.ao.quantization.UniformQuantizationObserverBase(reduce_range=)", RT,
     "warned by every observer subclass when reduce_range is true (a value)"),
    ("torch.utils.model_dump.main", RT, "a command-line entry point (python -m torch.utils.model_dump)"),
    # -- detectable, left out --------------------------------------------------------
    ("torch.fx.experimental.symbolic_shapes.ShapeEnv.*", RT, "methods and attributes of a ShapeEnv instance"),
    ("torch.fx.experimental.unification.multipledispatch.Dispatcher.resolve", RT, "a method of a Dispatcher instance"),
    # -- internal --------------------------------------------------------------------
    ("torch._*", I, "private module (leading underscore)"),
    ("functorch.einops._parsing:*", I, "private module"),
    ("torch.*._*:*", I, "private module"),
    *((f"torch.ao.quantization.quantize_fx.{name}(*", I, "the FX quantization implementation "
       "(torch.ao.quantization.fx); users call quantize_fx's *_fx functions") for name in ("convert", "fuse", "prepare")),
    ("torch.distributed._*", I, "private name"),
    ("torch.distributed.checkpoint.*.ShardedTensor.*", I, "ShardedTensor internals"),
    ("torch.distributed.checkpoint.state_dict._*", I, "private function"),
    ("torch.distributed.device_mesh._MeshEnv.*", I, "private class"),
    ("torch.*DeviceMesh._*", I, "private method"),
    ("torch.utils.checkpoint._*", I, "private class"),
    ("torch.distributed.distributed_c10d._*", I, "private function"),
    ("torch.distributed.fsdp.fully_sharded_data_parallel._*", I, "private function"),
    ("torch.distributed.optim._*", I, "private classes"),
    ("torch.distributed.optim.functional_*._*", I, "private helper"),
    ("torch.jit.RecursiveScriptModule._*", I, "private method"),
    ("torch.nn.modules.conv._*", I, "private class"),
    ("torch.nn.init._make_deprecate", I, "the factory: the functions it makes are TL105's"),
    ("torch.nn.functional._*", I, "private function"),
    ("torch.utils._pytree._is_*", I, "private function"),
    ("torch.utils.cpp_extension._*", I, "private function"),
    ("torch.utils.data.dataloader._*", I, "private class"),
    ("torch.utils.data.datapipes.datapipe._*", I, "private helper"),
    ("torch.hub._*", I, "private function"),
    ("torch.cuda.amp.autocast_mode._*", I, "private function"),
    ("torch.cuda.memory._*", I, "private function"),
)


# torch 2.13's deprecation groups that its Python sources do not show (C++ warns, or a helper whose
# message the miner cannot follow), from issue 35: (group, a use torch 2.13 warns on, the table entry
# keys that flag it, or none and why it is not reported). tests/test_mined_deprecations.py runs each
# use under the installed torch and through the rules.
UNMINED_GROUPS: Tuple[Tuple[str, str, Tuple[str, ...], str], ...] = (
    ("legacy storages", "torch.FloatStorage(3)", tuple(f"torch.{n}" for n in (
        "FloatStorage", "DoubleStorage", "HalfStorage", "LongStorage", "IntStorage", "ByteStorage", "BoolStorage",
        "TypedStorage")), ""),
    ("legacy sparse constructors", "torch.sparse.FloatTensor(torch.tensor([[0], [0]]), torch.tensor([1.0]), (2, 2))",
     tuple(f"torch.sparse.{n}Tensor" for n in ("Float", "Double", "Long", "Int", "Byte", "Half")), ""),
    ("stft(return_complex=False)", "torch.stft(torch.ones(400), 64, window=torch.hann_window(64), "
     "return_complex=False)", ("torch.stft(return_complex=)",), ""),
    ("non-tuple sequence indexing", "torch.ones(3, 4)[[0, slice(None)]]", (),
     "only a list holding slice objects, None or Ellipsis triggers it (`x[[0, 1]]` is valid advanced indexing), "
     "and source cannot spell a slice in a list display except as `slice(...)`: the list is almost always built "
     "elsewhere (a runtime value)"),
)


def table_keys() -> Dict[str, Deprecation]:
    """Every name a table entry answers to: its key and its aliases."""
    keys: Dict[str, Deprecation] = {}
    for entry in ENTRIES:
        keys[entry.key] = entry
        for alias in entry.aliases:
            keys[alias if entry.keyword is None else f"{alias}({entry.keyword}=)"] = entry
    return keys


def load_mined(path: Path = MINED_FILE) -> Dict[str, object]:
    return json.loads(path.read_text(encoding="utf-8"))


class Decision:
    """What torchlint does about one mined item."""

    def __init__(self, entry: Optional[Deprecation] = None, rule: Optional[str] = None,
                 scope: Optional[Scope] = None, reason: str = "", others: Tuple[Deprecation, ...] = ()) -> None:
        self.entry, self.rule, self.scope, self.reason = entry, rule, scope, reason
        self.entries: Tuple[Deprecation, ...] = (entry, *others) if entry is not None else ()

    def entry_for(self, version: Version) -> Optional[Deprecation]:
        """The entry that reports the item for code moving to ``version`` (the first of several that
        does; else the first entry): the fields of the profiler's config differ between releases."""
        return next((e for e in self.entries if e.status_for(version) is not None), self.entry)

    @property
    def flagged(self) -> bool:
        return self.entry is not None or self.rule is not None

    @property
    def detectable(self) -> bool:
        return self.flagged or self.scope is Scope.NOT_MODELED

    @property
    def exact(self) -> bool:
        if self.entry is not None:
            return self.entry.exact_fix
        return self.rule is not None and self.rule in ("TL103", "TL105")


def decide(item: Mapping[str, object], keys: Optional[Dict[str, Deprecation]] = None) -> Optional[Decision]:
    """The decision for a mined item, or None if the review has none."""
    keys = table_keys() if keys is None else keys
    item_id = str(item["id"])
    names = [str(n) for n in item.get("names", ())]  # type: ignore[union-attr]
    keyword = item.get("keyword")
    for name in [item_id, *(f"{n}({keyword}=)" if keyword else n for n in names)]:
        if name in keys:
            return Decision(entry=keys[name])
    if item_id in COVERED_BY:
        first, *others = covering_keys(item_id)
        return Decision(entry=keys[first], others=tuple(keys[k] for k in others))
    if item_id in OTHER_RULES:
        return Decision(rule=OTHER_RULES[item_id])
    for name in [item_id, *names]:
        if name in RENAMES:
            return Decision(rule=RENAMES[name].code)
    for pattern, scope, reason in OUT_OF_SCOPE:
        if fnmatch.fnmatchcase(item_id, pattern):
            return Decision(scope=scope, reason=reason)
    return None


def covering_keys(item_id: str) -> Tuple[str, ...]:
    """The table keys ``COVERED_BY`` gives for a mined id, as a tuple."""
    keys = COVERED_BY[item_id]
    return (keys,) if isinstance(keys, str) else keys


def namespace(item_id: str) -> str:
    """``torch.distributed``, ``torch.nn``, ``functorch``, ``torch`` (top level) for the report."""
    parts = item_id.split(":")[0].split("(")[0].split(".")
    if parts[0] != "torch" or len(parts) < 3:
        return parts[0] if parts[0] != "torch" else "torch"
    if parts[1] == "ao":
        return "torch.ao"
    return ".".join(parts[:2])


def coverage(mined: Mapping[str, object]) -> Dict[str, Dict[str, int]]:
    """Counts by namespace (and ``all``): mined, detectable, flagged, exact, undecided."""
    keys = table_keys()
    counts: Dict[str, Dict[str, int]] = {}
    for item in mined["items"]:  # type: ignore[index]
        decision = decide(item, keys)
        for group in ("all", namespace(str(item["id"]))):
            row = counts.setdefault(group, dict.fromkeys(("mined", "detectable", "flagged", "exact", "undecided"), 0))
            row["mined"] += 1
            if decision is None:
                row["undecided"] += 1
                continue
            row["detectable"] += decision.detectable
            row["flagged"] += decision.flagged
            row["exact"] += decision.exact
    return counts


def coverage_report(mined: Mapping[str, object]) -> str:
    """A plain-text table of ``coverage`` by namespace, then ``release_coverage`` by release."""
    counts = coverage(mined)
    lines: List[str] = [f"torch {', '.join(map(str, mined.get('releases', [mined['torch']])))}: mined "
                        "deprecations and torchlint's coverage (detect = statically detectable; exact = exact "
                        "rewrite known)",
                        f"{'namespace':<22}{'mined':>7}{'detect':>8}{'flagged':>9}{'exact':>7}"]
    for group in ["all"] + sorted(g for g in counts if g != "all"):
        row = counts[group]
        lines.append(f"{group:<22}{row['mined']:>7}{row['detectable']:>8}{row['flagged']:>9}{row['exact']:>7}")
    lines += ["", "by release: what each one warns about or raises on, for code moving to it (flagged of "
              "detectable; fixed of exact, for a project whose floor is that release)",
              f"{'release':<10}{'mined':>7}{'detect':>8}{'flagged':>9}{'exact':>7}{'fixed':>7}"]
    for release, row in release_coverage(mined).items():
        lines.append(f"{release:<10}{row['mined']:>7}{row['detectable']:>8}{row['flagged']:>9}{row['exact']:>7}"
                     f"{row['fixed']:>7}")
    return "\n".join(lines) + "\n"


def in_release(mined: Mapping[str, object], release: str) -> List[Mapping[str, object]]:
    """The items a release warns about or raises on."""
    return [item for item in mined["items"]  # type: ignore[union-attr]
            if item.get("status", {}).get(release, "warns") in ("warns", "raises")]  # type: ignore[union-attr]


def unflagged(mined: Mapping[str, object], release: str) -> List[Tuple[str, str]]:
    """(mined id, why) of the items ``release`` warns about or raises on that are detectable but not
    reported for code moving to it: the reason the review gives, or the entry's later release."""
    keys = table_keys()
    version = parse_version(release)
    rows: List[Tuple[str, str]] = []
    for item in in_release(mined, release):
        decision = decide(item, keys)
        if decision is None or not decision.detectable:
            continue
        entry = decision.entry_for(version)
        if not decision.flagged:
            rows.append((str(item["id"]), decision.reason))
        elif entry is not None and entry.status_for(version) is None:
            rows.append((str(item["id"]), f"covered by {entry.key}, reported from torch {entry.deprecated} on"))
    return rows


def unflagged_report(mined: Mapping[str, object]) -> str:
    """``unflagged`` of every release, as text (``mine_torch_deprecations.py --unflagged``)."""
    lines: List[str] = []
    for release in mined.get("releases", [mined["torch"]]):  # type: ignore[union-attr]
        rows = unflagged(mined, str(release))
        lines.append(f"{release}: {len(rows)} detectable, not flagged")
        lines += [f"  {item_id}: {why}" for item_id, why in rows]
    return "\n".join(lines) + "\n"


def release_coverage(mined: Mapping[str, object]) -> Dict[str, Dict[str, int]]:
    """Per release: its items, the detectable ones, those flagged for code moving to it (an entry
    reported there: not deprecated later, nor taken back), and of the exact ones those whose fix a
    project with that floor gets."""
    keys = table_keys()
    counts: Dict[str, Dict[str, int]] = {}
    for release in mined.get("releases", [mined["torch"]]):  # type: ignore[union-attr]
        version = parse_version(str(release))
        row = counts.setdefault(str(release), dict.fromkeys(("mined", "detectable", "flagged", "exact", "fixed"), 0))
        for item in in_release(mined, str(release)):
            decision = decide(item, keys)
            row["mined"] += 1
            if decision is None:
                continue
            entry = decision.entry_for(version)
            reported = decision.flagged and (entry is None or entry.status_for(version) is not None)
            exact = entry.exact_fix if entry is not None else decision.exact
            row["detectable"] += decision.detectable
            row["flagged"] += reported
            row["exact"] += reported and exact
            row["fixed"] += reported and exact and (
                entry is None or entry.fix_versions.applies_to(version))
    return counts
