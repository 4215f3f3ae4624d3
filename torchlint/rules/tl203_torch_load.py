"""TL203: `torch.load(...)` without `map_location=` (GPU checkpoints on CPU-only machines)."""

import ast
from typing import Iterator, Sequence, Tuple

import libcst as cst

from torchlint.analysis.context import NodeContext
from torchlint.analysis.device_gates import cuda_only_ranges, runs_as_program
from torchlint.analysis.outline import (
    Outline,
    calls_resolving_to,
    keyword_value,
    leading_positional,
)
from torchlint.analysis.saved_files import (
    holds_cpu_values_only,
    loaded_file_name,
    read_into_numbers_state,
    saves_read_by,
    shipped_file,
    written_by_the_loading_code,
)
from torchlint.analysis.screens import CallWithout
from torchlint.knowledge.torch_api import TORCH_LOAD, TORCH_LOAD_POSITIONAL
from torchlint.rules import edits
from torchlint.rules.rule import Example, Finding, FixSafety, Rule, fitting

MAP_LOCATION = (
    "without `map_location=`: tensors go back to the device they were saved from, so a GPU checkpoint "
    "fails to load on a machine without one; pass e.g. `map_location='cpu'`"
)



def uses_cuda(outline: Outline) -> bool:
    """Does the file use CUDA: ``.cuda``/``torch.cuda``, or a string naming a CUDA device?"""
    return outline.memo("uses cuda", lambda: any(True for _ in outline.attributes("cuda")) or any(
        isinstance(node.value, str) and node.value.startswith("cuda") for node in outline.nodes(ast.Constant)))


class TorchLoadMapLocation(Rule):
    code = "TL203"
    name = "torch-load-map-location"
    summary = "`torch.load(...)` without `map_location=` fails on CPU-only machines for GPU checkpoints"
    why = (
        "`torch.load` restores every tensor to the device it was saved from, so a checkpoint written on a "
        "GPU raises `RuntimeError: Attempting to deserialize object on a CUDA device but "
        "torch.cuda.is_available() is False` on a CPU-only machine (or lands on `cuda:0` when you wanted "
        "another device) unless `map_location=` says where tensors go. Reported where the file itself "
        "uses CUDA (`.cuda()`, `torch.cuda`, a `'cuda'` device): a loader in code that never touches a GPU "
        "(a dataset cache, an in-memory buffer) has no GPU tensors to bring back, and neither is a load that "
        "runs only where `torch.cuda.is_available()` is true, after a `.cuda()` call of its own block "
        "(`net = Net().cuda()` before the load: it ran on a GPU) or before one that every run of the "
        "block reaches (a machine without CUDA stops there anyway; a training loop whose body moves each batch "
        "with `.cuda()`, itself or through a def of the file, counts), in a script with no CPU mode at all "
        "(run as a program, calling `.cuda()` in statements of its own and never behind a test, with no "
        "`'cpu'` device or `map_location` anywhere) or in a helper module that only such scripts of the project import "
        "(directly or through other such helpers), or under the test that switches such calls "
        "on (`if args.cuda: model.cuda()`, then `if args.cuda:` / the `else` of `if not args.cuda:` around "
        "the load). Nor is a load of a file the program saved CPU values only into (a state dict after "
        "`.cpu()`, a learning-rate schedule's state, numbers, strings, the parsed command line, a dict of word "
        "indices), in the same file or, "
        "to a path ending in the same file name (or named by the same template, `'{}_net_{}.pth'.format(...)`), "
        "in another module of its folder; nor a load the program runs right after its own top-level save of "
        "the file, or reads where the file exists and writes where it does not (`if os.path.exists(p): x = torch.load(p)`, "
        "`else:` making `x` and saving it to `p`: its own cache, unless it saves a model or a state dict, which a GPU run "
        "of the same code may have written); nor a load passed straight to a learning-rate schedule's "
        "`load_state_dict` (its state is numbers); nor a checkpoint shipped with the project whose storages were all saved from the CPU: a "
        "path built from the module's place (`Path(__file__).parent / 'x.pt'`, `os.path.join(os.path.dirname("
        "__file__), 'x.pt')`) or, in a script, relative to it (`'./oracle.trc'`), to a file of up to 10 MB "
        "whose pickled data names no GPU device (read with `pickletools`, never unpickled). Whether the file "
        "may be unpickled in full (`weights_only=`) is TL214's question."
    )
    fix_safety = FixSafety.NONE
    triggers = (CallWithout("load", "map_location"),)
    requires = ("torch",)
    gathers = ("Call",)  # the file's ``torch.save`` calls: who wrote what a load reads
    whole_file = True  # that evidence may sit in another def of the file
    references = (
        "https://pytorch.org/docs/stable/generated/torch.load.html",
        "https://pytorch.org/docs/stable/notes/serialization.html#weights-only",
    )

    flagged = (
        Example(
            """
            import torch
            from torch import load
            if torch.cuda.is_available():
                model.cuda()
            model.load_state_dict(load("checkpoint.pt", weights_only=True))
            optimizer.load_state_dict(torch.load(path, weights_only=True)["optimizer"])
            """,
            count=2,
        ),
        Example(
            """
            import torch
            # A GPU module's state dict, saved by one run and resumed by another.
            def save(model, path):
                torch.save(model.cuda().state_dict(), path)
            def resume(model, path):
                model.load_state_dict(torch.load(path, weights_only=True))
            """,
        ),
        Example(
            """
            import pickle
            import torch
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model = torch.load("model.pt", pickle_module=pickle)
            """,
        ),
        Example(
            """
            import torch
            def restore(model, path, use_gpu):
                if use_gpu:  # the caller's flag: no proof that this machine has CUDA
                    return torch.load(path, weights_only=True)
                return torch.load(path, map_location="cpu", weights_only=True)

            def to_gpu(model):
                return model.cuda() if torch.cuda.is_available() else model
            """,
        ),
    )
    accepted = (
        """
        import torch


        def evaluate(path):
            net = Net().cuda()
            state = torch.load(path, weights_only=True)  # runs only once .cuda() worked: on a GPU
            net.load_state_dict(state)
            return net
        """,
        """
        import torch

        if not args.cuda:
            model = torch.load(path, map_location="cpu", weights_only=False)
        else:
            model = torch.load(path, weights_only=False)  # the GPU mode: model.cuda() below needs one anyway
        if args.cuda:
            model.cuda()
        """,
        """
        import torch
        state = torch.load("checkpoint.pt", map_location="cpu", weights_only=True)
        model = torch.load("model.pt", torch.device("cpu"), weights_only=False)
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
        """
        import torch
        # A dataset's cache, written and read by code that never uses a GPU.
        def read_cache(path):
            return torch.load(path, weights_only=True)
        """,
        """
        import torch
        # Code that runs only where CUDA is available cannot meet a machine without it.
        if torch.cuda.is_available():
            state = torch.load("checkpoint.pt", weights_only=True)
        else:
            state = torch.load("checkpoint.pt", map_location="cpu", weights_only=True)
        """,
        """
        import torch
        # The file the same test wrote two lines before: the same run, the same machine.
        def test_round_trip(tmp_path):
            torch.save({"w": torch.ones(2).cuda()}, tmp_path / "x.pt")
            assert torch.load(tmp_path / "x.pt", weights_only=True)["w"].sum() == 2
        """,
        """
        import torch
        # A tutorial script that saves at its top level, then reads the file back: the same run.
        device = "cuda" if torch.cuda.is_available() else "cpu"
        model = torch.nn.Linear(2, 2).to(device)
        torch.save(model.state_dict(), "model.pth")
        model.load_state_dict(torch.load("model.pth", weights_only=True))
        """,
        """
        import torch
        # A cache the class writes and reads back itself.
        class FeatureCache:
            def __init__(self, path):
                self.path = path
            def store(self, features):
                torch.save(features.cuda(), self.path)
            def fetch(self):
                return torch.load(self.path, weights_only=True)
        """,
        """
        import argparse
        import torch
        # Every save to the path writes CPU values: a state dict after .cpu(), a GradScaler's
        # numbers, the command line's arguments.
        def save(model, scaler, path):
            parser = argparse.ArgumentParser()
            torch.save({"model": model.cpu().state_dict(), "scaler": torch.amp.GradScaler("cuda").state_dict(),
                        "args": vars(parser.parse_args())}, path)
            model.cuda()
        def resume(model, path):
            state = torch.load(path, weights_only=True)
            model.load_state_dict(state["model"])
        """,
        """
        import os
        import torch
        from transformers import get_linear_schedule_with_warmup
        device = "cuda" if torch.cuda.is_available() else "cpu"
        # A learning-rate schedule's state is numbers; a file the def writes where it is
        # missing is its own cache.
        def resume(optimizer, folder):
            scheduler = get_linear_schedule_with_warmup(optimizer, 100, 1000)
            scheduler.load_state_dict(torch.load(folder + "/scheduler.pt", weights_only=True))
            return scheduler
        def features(path, texts):
            if os.path.exists(path):
                encoded = torch.load(path, weights_only=True)
            else:
                encoded = torch.tensor([len(t) for t in texts])
                torch.save(encoded, path)
            return encoded.to(device)
        """,
        """
        import sys
        import torch
        use_cuda = torch.cuda.is_available()
        def restore(path):
            if not use_cuda:
                sys.exit("this script needs a GPU")
            return torch.load(path, weights_only=True)
        """,
        """
        import torch
        device = "cuda" if torch.cuda.is_available() else "cpu"
        # Every save to the path writes a copy moved to the CPU: nothing to map.
        class Offloader:
            def store(self, tensor, file_path):
                cpu_tensor = tensor.detach().cpu()
                torch.save(cpu_tensor, file_path)
            def fetch(self, file_path):
                return torch.load(file_path, weights_only=True).to(device)
        """,
    )

    @staticmethod
    def _holds_no_gpu_tensor(load: cst.Call, ctx: NodeContext) -> bool:
        """Can the file ``load`` reads hold no tensor on a GPU? When the loading
        code wrote it itself (the same machine reads it back), or every save of
        the file to that path writes CPU values: a module's state dict after
        ``.cpu()``, a GradScaler's state (numbers), numbers and strings; the
        saves of this file, else those of the scripts beside it that save to
        the same file name (a vocabulary a ``preprocess.py`` writes)."""
        if written_by_the_loading_code(load, ctx.file) or read_into_numbers_state(load, ctx.file):
            return True
        saves = saves_read_by(load, ctx.file)
        if saves:
            return all(holds_cpu_values_only(obj, ctx.inference) for obj, _ in saves)
        name = loaded_file_name(load, ctx.inference)
        elsewhere = ctx.inference.project.saves_in_folder(name) if name is not None else None
        if elsewhere is not None:
            return elsewhere.cpu_only
        # A checkpoint shipped with the project: what it holds is in the file itself.
        shipped = shipped_file(load, ctx.inference, program=runs_as_program(ctx.resolver.file_outline()))
        return shipped is not None and ctx.inference.project.shipped_checkpoint_on_cpu(shipped)

    @classmethod
    def may_match_tree(cls, outline: Outline) -> bool:
        # A call of torch.load (however imported) without ``**kwargs`` that lacks
        # ``map_location`` (by keyword or second position), in a file that uses
        # CUDA anywhere (the check asks the whole file, and so does this).
        # The calls first: few files load, every file would be scanned for CUDA.
        index = TORCH_LOAD_POSITIONAL.index("map_location")
        return any(
            not any(k.arg is None for k in call.keywords)
            and keyword_value(call, "map_location") is None and leading_positional(call) <= index
            for call in calls_resolving_to(outline, TORCH_LOAD)
        ) and uses_cuda(outline.whole_file)

    @classmethod
    def moot_ranges(cls, outline: Outline, lines: Sequence[int]) -> Sequence[Tuple[int, int]]:
        # A load that runs only where CUDA is available cannot meet a machine without it.
        return cuda_only_ranges(outline, lines)

    def check_Call(self, node: cst.Call, ctx: NodeContext) -> Iterator[Finding]:
        if ctx.resolver.resolve(node.func) not in TORCH_LOAD:
            return
        if any(arg.star == "**" for arg in node.args):
            return  # the keywords may be in there
        if not uses_cuda(ctx.resolver.file_outline()):
            return  # nothing in the file puts tensors on a GPU
        if self._holds_no_gpu_tensor(node, ctx):
            return
        if ctx.inference.project.used_only_by_gpu_programs():
            return  # a helper only GPU-only programs import: its loads run where CUDA is
        if not edits.passes_argument(node, "map_location", TORCH_LOAD_POSITIONAL):
            spelled = edits.expression_code(node.func)
            yield Finding(node, fitting(f"`{spelled}()` without `map_location=`: a GPU checkpoint fails without a GPU",
                                        "`torch.load()` without `map_location=`: a GPU checkpoint fails without a GPU"),
                          detail=f"`{spelled}()` {MAP_LOCATION}")
