"""TL214: `torch.load(...)` without `weights_only=`, fixed from what the file saves there."""

from typing import Iterator, Tuple

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import Outline, calls_resolving_to, keyword_value
from torchlint.analysis.saved_files import (
    PICKLED,
    UNKNOWN,
    WEIGHTS,
    Saved,
    combine,
    loaded_file_name,
    saves_read_by,
    what_is_saved,
)
from torchlint.analysis.screens import CallWithout
from torchlint.core.diagnostic import Edit, Fix
from torchlint.knowledge.torch_api import (
    TORCH_LOAD,
    TORCH_LOAD_POSITIONAL,
    WEIGHTS_ONLY_DEFAULT_SINCE,
    WEIGHTS_ONLY_SINCE,
)
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting

UNKNOWN_MESSAGE = (
    "without `weights_only=`: since torch 2.6 it loads only tensors, state dicts and plain containers "
    "and raises `UnpicklingError` for anything else (a whole module, an instance of a class); before 2.6 "
    "it unpickles the file in full, which may run arbitrary code. Pass `weights_only=True` for tensors "
    "and state dicts, or `weights_only=False` only for a file you trust"
)
# The one-line message leads with what breaks for a user moving to torch 2.6 or later.
UNKNOWN_SHORT = "without `weights_only=`: on torch 2.6+ it raises for anything but tensors"
OLD_FLOOR_MESSAGE = (
    "The project supports torch {floor}, older than the torch 1.13 that added the keyword: pass it only "
    "where the installed torch has it (a version check), or raise the project's floor; no fix is offered"
)
WEIGHTS_MESSAGE = (
    "without `weights_only=`: before torch 2.6 it unpickles arbitrary code; the program saves only tensors "
    "and state dicts there (`{save}`), so pass `weights_only=True`"
)
PICKLED_MESSAGE = (
    "of a file this program saves {what} into (`{save}`): since torch 2.6 that raises `UnpicklingError` "
    "unless `weights_only=False`, which runs the pickled code in the file: pass it only if you trust "
    "the file"
)


class TorchLoadWeightsOnly(Rule):
    code = "TL214"
    gathers = ("Call",)  # the file's ``torch.save`` calls: what a loaded path holds
    name = "torch-load-weights-only"
    summary = "`torch.load(...)` without an explicit `weights_only=`; the value follows what the file saves"
    why = (
        "`weights_only=` decides whether `torch.load` unpickles the file in full, which runs arbitrary code "
        "from an untrusted checkpoint. It exists since torch 1.13 and its default changed from full "
        "unpickling to `True` in torch 2.6, so the same call is unsafe on older torch and, on newer torch, "
        "refuses files holding pickled objects (a whole `nn.Module`, instances of your classes) with "
        "`UnpicklingError: Weights only load failed`. Saying it explicitly makes the call mean the same "
        "thing everywhere. The right value depends on what the file holds, so torchlint looks for the "
        "`torch.save` calls of the same file that write to the same path (the same string, variable or "
        "expression) or to a path ending in the same file name (`os.path.join(out_dir, 'best.pth')` "
        "and `os.path.join(ckpt_dir, 'best.pth')`, `ckpt_dir + '/best.pth'`): a state dict or tensors "
        "call for `weights_only=True`; a whole module or an instance "
        "of a class needs `weights_only=False`, which is only safe for files you trust. When the file "
        "itself never saves there, the other modules of its folder are read for saves to a path ending in "
        "the same file name (a `preprocess.py` that saves `data/vocab.pt` for a `train.py` that loads it); "
        "other programs are not followed. With `--torch-version` 2.6 or later "
        "only loads of files saved with pickled objects are reported (the default is already safe for the "
        "rest). Under an older floor than 1.13, which lacks the keyword, the load is still reported, "
        "without a fix: the project also runs on the torch 1.13 to 2.5 where it unpickles in full. A "
        "project that rebinds `torch.load` to a wrapper of its own (`torch.load = torch_load` in a module "
        "that runs before the file's code) is left to that wrapper."
    )
    fix_safety = FixSafety.UNSAFE
    # ``weights_only=`` arrived in torch 1.13: a load in a torch-version fallback
    # (``except TypeError:`` after a load that passes it, or any handler repeating
    # that load without it; ``if torch.__version__ < ...``) is the spelling the older torch needs.
    version_gated = True
    fix_description = (
        "Adds `weights_only=True` when the file saves only state dicts, tensors and plain values at that "
        "path, and `weights_only=False` when it saves a whole module or an instance of a class there. "
        "Unsafe: a file at that path may come from somewhere else, and `weights_only=False` trusts it. "
        "No fix when nothing in the file or its folder shows what is saved there, or next to `pickle_module=` (with "
        "which `weights_only=True` always raises)."
    )
    triggers = (CallWithout("load", "weights_only"),)
    requires = ("torch",)
    whole_file = True  # the evidence is the file's torch.save calls, anywhere in it
    references = (
        "https://pytorch.org/docs/stable/generated/torch.load.html",
        "https://pytorch.org/docs/stable/notes/serialization.html#weights-only",
    )

    flagged = (
        Example(
            """
            import io
            import torch
            model = torch.nn.Linear(2, 2)
            buffer = io.BytesIO()
            torch.save(model.state_dict(), buffer)
            buffer.seek(0)
            state = torch.load(buffer, map_location="cpu")
            weight = state["weight"]
            """,
            """
            import io
            import torch
            model = torch.nn.Linear(2, 2)
            buffer = io.BytesIO()
            torch.save(model.state_dict(), buffer)
            buffer.seek(0)
            state = torch.load(buffer, map_location="cpu", weights_only=True)
            weight = state["weight"]
            """,
            runnable=True,
        ),
        Example(
            """
            import io
            import torch
            torch.manual_seed(0)
            model = torch.nn.Linear(2, 2)
            buffer = io.BytesIO()
            torch.save(model, buffer)
            buffer.seek(0)
            restored = torch.load(buffer, map_location="cpu")
            out = restored(torch.ones(2))
            """,
            """
            import io
            import torch
            torch.manual_seed(0)
            model = torch.nn.Linear(2, 2)
            buffer = io.BytesIO()
            torch.save(model, buffer)
            buffer.seek(0)
            restored = torch.load(buffer, map_location="cpu", weights_only=False)
            out = restored(torch.ones(2))
            """,
            runnable=True,
            raises="UnpicklingError",
        ),
        Example(
            """
            import os
            import tempfile
            import torch
            torch.manual_seed(0)


            def train(out_dir):
                net = torch.nn.Linear(2, 2)
                torch.save(net, os.path.join(out_dir, "best.pth"))


            def evaluate(ckpt_dir):
                net = torch.load(os.path.join(ckpt_dir, "best.pth"), map_location="cpu")
                return net(torch.ones(2))


            with tempfile.TemporaryDirectory() as folder:
                train(folder)
                out = evaluate(folder)
            """,
            """
            import os
            import tempfile
            import torch
            torch.manual_seed(0)


            def train(out_dir):
                net = torch.nn.Linear(2, 2)
                torch.save(net, os.path.join(out_dir, "best.pth"))


            def evaluate(ckpt_dir):
                net = torch.load(os.path.join(ckpt_dir, "best.pth"), map_location="cpu", weights_only=False)
                return net(torch.ones(2))


            with tempfile.TemporaryDirectory() as folder:
                train(folder)
                out = evaluate(folder)
            """,
            runnable=True,
            raises="UnpicklingError",
        ),
        Example(
            """
            import torch
            def save(model, optimizer, epoch):
                state = {"epoch": 3, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
                torch.save(state, "checkpoint.pt")
            def resume(model):
                model.load_state_dict(torch.load("checkpoint.pt", "cpu")["model"])
            """,
            """
            import torch
            def save(model, optimizer, epoch):
                state = {"epoch": 3, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
                torch.save(state, "checkpoint.pt")
            def resume(model):
                model.load_state_dict(torch.load("checkpoint.pt", "cpu", weights_only=True)["model"])
            """,
        ),
        Example(
            """
            import torch
            state = torch.load(args.resume, map_location="cpu")  # nothing shows what the file holds: no fix
            """,
        ),
        Example(
            # weights_only=True next to pickle_module always raises: flagged, no fix.
            """
            import pickle
            import torch
            model = torch.load("model.pt", map_location="cpu", pickle_module=pickle)
            """,
        ),
    )
    accepted = (
        """
        import torch

        def load(path, weights_only=True):
            try:
                return torch.load(path, map_location="cpu", weights_only=weights_only)
            except TypeError:  # a torch without the keyword (< 1.13)
                if not weights_only:
                    return torch.load(path, map_location="cpu")
                raise
        """,
        """
        import torch

        def restore(path):
            try:
                return torch.load(path, map_location="cpu", weights_only=False)
            except Exception:  # the same load, for a torch before the keyword
                return torch.load(path, map_location="cpu")
        """,
        """
        import torch
        state = torch.load("checkpoint.pt", map_location="cpu", weights_only=True)
        model = torch.load("model.pt", map_location=torch.device("cpu"), weights_only=False)
        """,
        """
        import torch
        options = {"map_location": "cpu", "weights_only": True}
        state = torch.load("checkpoint.pt", **options)  # arguments unknown: not flagged
        """,
        """
        import json
        import pickle
        config = json.load(open("config.json"))
        data = pickle.load(open("data.pkl", "rb"))
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A call of torch.load (however imported) without ``**kwargs`` or ``weights_only=``.
        return any(
            not any(k.arg is None for k in call.keywords) and keyword_value(call, "weights_only") is None
            for call in calls_resolving_to(outline, TORCH_LOAD)
        )

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        if ctx.resolver.resolve(node.func) not in TORCH_LOAD:
            return
        if any(arg.star == "**" for arg in node.args) or edits.keyword(node, "weights_only") is not None:
            return
        oldest = ctx.file.settings.torch_version
        if ctx.project_patches(TORCH_LOAD):
            return  # the project rebinds torch.load to its own wrapper, which decides the keyword
        saved, save = _evidence(node, ctx)
        if oldest is not None and oldest >= WEIGHTS_ONLY_DEFAULT_SINCE and saved.kind != PICKLED:
            return  # the default is already the safe choice
        spelled = edits.expression_code(node.func)
        if oldest is not None and oldest < WEIGHTS_ONLY_SINCE:
            # The risk is real on the project's torch 1.13-2.5, but the keyword does not
            # exist on its floor: a finding without a fix, saying how to keep both.
            floor = ".".join(map(str, oldest[:2]))
            yield Finding(node, fitting(f"`{spelled}()` {UNKNOWN_SHORT}", f"`torch.load()` {UNKNOWN_SHORT}"),
                          detail=f"`{spelled}()` {UNKNOWN_MESSAGE}. {OLD_FLOOR_MESSAGE.format(floor=floor)}")
            return
        if saved.kind == UNKNOWN:
            yield Finding(node, fitting(f"`{spelled}()` {UNKNOWN_SHORT}", f"`torch.load()` {UNKNOWN_SHORT}"),
                          detail=f"`{spelled}()` {UNKNOWN_MESSAGE}")
            return
        message = (WEIGHTS_MESSAGE.format(save=save) if saved.kind == WEIGHTS
                   else PICKLED_MESSAGE.format(what=saved.what, save=save))
        fix = None
        if not edits.passes_argument(node, "pickle_module", TORCH_LOAD_POSITIONAL):
            value = "True" if saved.kind == WEIGHTS else "False"
            fix = Fix([Edit(node, edits.add_keywords((("weights_only", value),)))], safe=False)
        short = (f"`{spelled}()` without `weights_only=`: the file saves only tensors there; pass `True`"
                 if saved.kind == WEIGHTS else f"`{spelled}()` of a file saved with pickled objects: needs `weights_only=False`")
        fallback = ("`torch.load()` without `weights_only=`: the file saves only tensors there"
                    if saved.kind == WEIGHTS else "`torch.load()` of pickled objects: needs `weights_only=False`")
        yield Finding(node, fitting(short, fallback), fix, detail=f"`{spelled}()` {message}")


def _short(code: str, limit: int = 60) -> str:
    code = " ".join(code.split())
    return code if len(code) <= limit else code[:limit - 3] + "..."


def _evidence(load: cst.Call, ctx: NodeContext) -> Tuple[Saved, str]:
    """What the program's ``torch.save`` calls write where ``load`` reads, and
    the code of one such call: this file's, else those of the scripts beside it
    that save to the same file name (``Project.saves_in_folder``)."""
    found = saves_read_by(load, ctx.file)
    if found:
        kinds = [(what_is_saved(obj, ctx.inference), call) for obj, call in found]
        saved = combine([kind for kind, _ in kinds])
        call = next((call for kind, call in kinds if kind == saved or kind.kind == PICKLED), None)
        return saved, _short(edits.expression_code(call)) if call is not None else ""
    name = loaded_file_name(load, ctx.inference)
    elsewhere = ctx.inference.project.saves_in_folder(name) if name is not None else None
    if elsewhere is None:
        return Saved(UNKNOWN), ""
    return Saved(elsewhere.kind, elsewhere.what), f"{_short(elsewhere.code)}` in `{elsewhere.module}"
