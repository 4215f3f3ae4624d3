"""TL203: `torch.load(...)` relying on the defaults of `map_location` and `weights_only`."""

from typing import Iterator, List, Optional

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.outline import (
    Outline,
    calls_resolving_to,
    keyword_value,
    leading_positional,
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

MAP_LOCATION = (
    "without `map_location=`: tensors go back to the device they were saved from, so a GPU checkpoint "
    "fails to load on a machine without one; pass e.g. `map_location='cpu'`"
)
WEIGHTS_ONLY = (
    "without `weights_only=`: whether it may run arbitrary pickled code depends on the torch version "
    "(no since 2.6, yes before); pass `weights_only=True`"
)
BOTH = (
    "without `map_location=` and `weights_only=`: a GPU checkpoint fails to load on a machine without "
    "one (pass e.g. `map_location='cpu'`), and whether it may run arbitrary pickled code depends on the "
    "torch version (pass `weights_only=True`)"
)

SHORT = {
    ("map_location",): "without `map_location=`: a GPU checkpoint fails to load without a GPU",
    ("weights_only",): "without `weights_only=`: may run pickled code on torch < 2.6",
    ("map_location", "weights_only"): "without `map_location=` and `weights_only=`",
}


class TorchLoadDefaults(Rule):
    code = "TL203"
    name = "torch-load-implicit-arguments"
    summary = "`torch.load(...)` without `map_location=` or an explicit `weights_only=`"
    why = (
        "`torch.load` restores every tensor to the device it was saved from, so a checkpoint written on a "
        "GPU raises `RuntimeError: Attempting to deserialize object on a CUDA device but "
        "torch.cuda.is_available() is False` on a CPU-only machine (or lands on `cuda:0` when you wanted "
        "another device) unless `map_location=` says where tensors go. `weights_only=` decides whether "
        "the file is unpickled in full, which runs arbitrary code from an untrusted checkpoint: it exists "
        "since torch 1.13 and its default changed from full unpickling to `True` in torch 2.6, so the same "
        "call is unsafe on older torch and refuses pickled objects (whole modules, custom classes) on "
        "newer torch. Saying it explicitly makes the call mean the same thing everywhere. One finding per "
        "call names what is missing. With `--torch-version` 2.6 or later only `map_location` is checked "
        "(the default is already safe), and before 1.13 only `map_location` exists."
    )
    fix_safety = FixSafety.UNSAFE
    fix_description = (
        "Adds `weights_only=True`. It changes nothing from torch 2.6 on (it is the default there), but on "
        "older torch it stops loading pickled objects other than tensors and plain containers, so the fix "
        "is unsafe; use `weights_only=False` instead only for checkpoints you trust. A missing "
        "`map_location` is reported but not fixed: the right device cannot be guessed."
    )
    triggers = (CallWithout("load", "map_location", "weights_only"),)
    requires = ("torch",)
    references = (
        "https://pytorch.org/docs/stable/generated/torch.load.html",
        "https://pytorch.org/docs/stable/notes/serialization.html#weights-only",
    )

    flagged = (
        Example(
            """
            import io
            import torch
            buffer = io.BytesIO()
            torch.save({"weight": torch.arange(4.0)}, buffer)
            buffer.seek(0)
            state = torch.load(buffer, map_location="cpu")
            weight = state["weight"]
            """,
            """
            import io
            import torch
            buffer = io.BytesIO()
            torch.save({"weight": torch.arange(4.0)}, buffer)
            buffer.seek(0)
            state = torch.load(buffer, map_location="cpu", weights_only=True)
            weight = state["weight"]
            """,
            runnable=True,
        ),
        Example(
            """
            import torch
            from torch import load
            model.load_state_dict(load("checkpoint.pt", "cpu"))
            optimizer.load_state_dict(torch.load(path, map_location=device)["optimizer"])
            """,
            """
            import torch
            from torch import load
            model.load_state_dict(load("checkpoint.pt", "cpu", weights_only=True))
            optimizer.load_state_dict(torch.load(path, map_location=device, weights_only=True)["optimizer"])
            """,
            count=2,
        ),
        Example(
            """
            import torch
            state = torch.load("checkpoint.pt", weights_only=True)
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
        """
        def load(path):
            return open(path).read()
        text = load("notes.txt")
        """,
    )

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A call of torch.load (however imported) without ``**kwargs`` that lacks
        # ``weights_only=`` or ``map_location`` (by keyword or second position).
        index = TORCH_LOAD_POSITIONAL.index("map_location")
        for call in calls_resolving_to(outline, TORCH_LOAD):
            if any(k.arg is None for k in call.keywords):
                continue
            if keyword_value(call, "weights_only") is None:
                return True
            if keyword_value(call, "map_location") is None and leading_positional(call) <= index:
                return True
        return False

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        if ctx.resolver.resolve(node.func) not in TORCH_LOAD:
            return
        if any(arg.star == "**" for arg in node.args):
            return  # the keywords may be in there
        oldest = ctx.file.settings.torch_version
        missing: List[str] = []
        if not _has_argument(node, "map_location"):
            missing.append("map_location")
        weights_only_applies = oldest is None or WEIGHTS_ONLY_SINCE <= oldest < WEIGHTS_ONLY_DEFAULT_SINCE
        if weights_only_applies and edits.keyword(node, "weights_only") is None:
            missing.append("weights_only")
        if not missing:
            return
        spelled = edits.expression_code(node.func)
        explanation = BOTH if len(missing) == 2 else (MAP_LOCATION if missing == ["map_location"] else WEIGHTS_ONLY)
        # weights_only=True next to a pickle_module raises ("Can not safely load
        # weights when explicit pickle_module is specified"): no fix then.
        fix = _fix(node) if "weights_only" in missing and not _has_argument(node, "pickle_module") else None
        short = SHORT[tuple(missing)]
        yield Finding(node, fitting(f"`{spelled}()` {short}", short[0].upper() + short[1:]), fix,
                      detail=f"`{spelled}()` {explanation}")


def _has_argument(call: cst.Call, name: str) -> bool:
    if edits.keyword(call, name) is not None:
        return True
    index = TORCH_LOAD_POSITIONAL.index(name)
    for position, arg in enumerate(call.args):
        if arg.keyword is not None:
            break
        if arg.star == "*":
            return True  # may be inside *args
        if position == index:
            return True
    return False


def _fix(call: cst.Call) -> Optional[Fix]:
    return Fix([Edit(call, edits.add_keywords((("weights_only", "True"),)))], safe=False)
