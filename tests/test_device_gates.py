"""Code that runs only where CUDA is available (``analysis/device_gates.py``):
TL203's ``torch.load`` without ``map_location=`` cannot meet a machine
without CUDA there, so it is not reported; the same load anywhere else is."""

from __future__ import annotations

import ast
import json
import textwrap

import pytest
from conftest import run_flake8, run_torchlint

from torchlint.analysis.device_gates import cuda_only_ranges
from torchlint.analysis.outline import Outline
from torchlint.engine.linter import Engine
from torchlint.rules import all_rules

ENGINE = Engine(all_rules())


def tl203_lines(source: str):
    checked = ENGINE.check(textwrap.dedent(source).lstrip())
    return [d.line for d in checked.diagnostics if d.code == "TL203"]


# Each snippet marks the loads that must be reported with "# flagged".
CASES = {
    "the branch of an availability test": """
        import torch
        if torch.cuda.is_available():
            state = torch.load("a.pt", weights_only=True)
        else:
            state = torch.load("a.pt", weights_only=True)  # flagged
        """,
    "the else of a negated test, and an elif chain in it": """
        import torch
        def restore(path, strict):
            if not torch.cuda.is_available():
                return torch.load(path, map_location="cpu", weights_only=True)
            elif strict:
                return torch.load(path, weights_only=True)
            else:
                return torch.load(path, weights_only=False)
        """,
    "an early exit": """
        import sys
        import torch
        def restore(path):
            early = torch.load(path, weights_only=True)  # flagged
            if not torch.cuda.is_available():
                sys.exit("needs a GPU")
            return torch.load(path, weights_only=True)
        def other(path):
            if not torch.cuda.is_available():
                raise RuntimeError("needs a GPU")
            return torch.load(path, weights_only=True)
        """,
    "an early exit through an imported exit": """
        from sys import exit as leave
        import torch
        def restore(path):
            if not torch.cuda.is_available():
                leave(1)
            return torch.load(path, weights_only=True)
        """,
    "a test that does not leave the block": """
        import torch
        def restore(path):
            if not torch.cuda.is_available():
                print("running on the CPU")
            return torch.load(path, weights_only=True)  # flagged
        """,
    "an assertion": """
        import torch
        assert torch.cuda.is_available(), "needs a GPU"
        state = torch.load("a.pt", weights_only=True)
        """,
    "a flag assigned from the test, also inside a conjunction": """
        import torch
        def main(args):
            use_cuda = args.cuda and torch.cuda.is_available()
            if use_cuda:
                return torch.load(args.path, weights_only=True)
            return torch.load(args.path, weights_only=True)  # flagged
        """,
    "a flag bound another way too": """
        import torch
        use_cuda = torch.cuda.is_available()
        def restore(path, use_cuda=True):
            if use_cuda:
                return torch.load(path, weights_only=True)  # flagged
        """,
    "a flag reassigned from elsewhere": """
        import torch
        use_cuda = torch.cuda.is_available()
        use_cuda = settings.cuda
        if use_cuda:
            state = torch.load("a.pt", weights_only=True)  # flagged
        """,
    "a disjunction": """
        import torch
        def restore(path, force):
            if force or torch.cuda.is_available():
                return torch.load(path, weights_only=True)  # flagged
        """,
    "the test through a from-import": """
        import torch
        from torch.cuda import is_available
        if is_available():
            state = torch.load("a.pt", weights_only=True)
        """,
    "after a .cuda() call of the same block": """
        import torch
        def evaluate(path, gpu):
            net = Net().cuda()
            state = torch.load(path, weights_only=True)
            return net, state
        def maybe(path, gpu):
            net = Net().cuda() if gpu else Net()
            return torch.load(path, weights_only=True)  # flagged
        """,
    "before a .cuda() call of the same block that every run reaches": """
        import torch
        def resume(path):
            state = torch.load(path, weights_only=True)
            model.load_state_dict(state)
            model.cuda()
        def resume_or_stop(path, only_check):
            state = torch.load(path, weights_only=True)  # flagged
            if only_check:
                return state
            model.cuda()
        def later(path):
            state = torch.load(path, weights_only=True)  # flagged
            def move():
                model.cuda()
            return state
        state = torch.load("a.pt", weights_only=True)  # a def in between runs nothing
        def gpu():
            model.cuda()
        model.cuda()
        """,
    "under the test that switches .cuda() on": """
        import torch
        if args.cuda:
            model.cuda()
        def restore(path):
            if args.cuda:
                return torch.load(path, weights_only=True)
            if not args.cuda:
                return torch.load(path, map_location="cpu", weights_only=True)
            else:
                return torch.load(path, weights_only=True)
        def other(path):
            if args.gpu:
                return torch.load(path, weights_only=True)  # flagged
        """,
    "the other branch loads with map_location": """
        import torch
        model = model.cuda() if torch.cuda.is_available() else model
        def restore(path, device_id):
            if device_id < 0:
                state = torch.load(path, map_location="cpu", weights_only=True)
            else:
                state = torch.load(path, weights_only=True)
            return state
        def neither(path, device_id):
            if device_id < 0:
                state = torch.load(path, weights_only=True)  # flagged
            else:
                state = torch.load(path, weights_only=True)  # flagged
            return state
        """,
    "a script with no CPU mode at all": """
        import torch
        def train(model, loader):
            for data, target in loader:
                data, target = data.cuda(), target.cuda()
        if __name__ == "__main__":
            state = torch.load("best.pt", weights_only=True)
            train(model, loader)
        """,
    "a script with a CPU mode": """
        import torch
        def train(model, loader):
            for data, target in loader:
                data, target = data.cuda(), target.cuda()
        if __name__ == "__main__":
            state = torch.load("best.pt", weights_only=True)  # flagged
            if not args.cpu:
                model.cuda()
        """,
    "a module that is not run as a program": """
        import torch
        def to_gpu(x):
            x = x.cuda()
            return x
        def restore(path):
            return torch.load(path, weights_only=True)  # flagged
        """,
    "a name that only says cuda": """
        import torch
        def restore(path, args):
            if args.cuda:
                return torch.load(path, weights_only=True)  # flagged
        """,
    # LinearStyleTransfer: a switch for the models, but the training loop moves every
    # loss to the GPU whatever it says: no run gets past a machine without CUDA
    "before a training loop that moves each batch to the GPU": """
        import torch
        if args.cuda:
            net.cuda()
        if args.finetune:
            net.load_state_dict(torch.load(args.finetune, weights_only=True))
        def adjust_learning_rate(optimizer, step):
            return 0.1 ** step
        for step in range(args.steps):
            try:
                batch = next(loader)
            except StopIteration:
                continue
            loss = net(batch).cuda()
            loss.backward()
        """,
    # facenet: main() resumes, then runs train() every epoch, which moves each batch to the GPU
    "before a call of a def of the file that moves each batch to the GPU": """
        import torch
        def train(loader, model):
            model.train()
            for data, label in loader:
                output = model(data.cuda())
        def evaluate(loader, model):
            for data, label in loader:
                if args.cuda:
                    data = data.cuda()
        def main():
            if args.resume:
                checkpoint = torch.load(args.resume, weights_only=True)
            for epoch in range(args.epochs):
                train(loader, model)
        def check():
            if args.resume:
                checkpoint = torch.load(args.resume, weights_only=True)  # flagged
            for epoch in range(args.epochs):
                evaluate(loader, model)
        """,
    "before a loop that may end before its GPU call": """
        import torch
        if args.cuda:
            net.cuda()
        if args.finetune:
            net.load_state_dict(torch.load(args.finetune, weights_only=True))  # flagged
        for step in range(args.steps):
            if step > args.limit:
                break
            loss = net(next(loader)).cuda()
        """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_loads_that_run_only_with_cuda_are_not_reported(name):
    source = textwrap.dedent(CASES[name]).lstrip()
    expected = [number for number, line in enumerate(source.splitlines(), 1) if "# flagged" in line]
    assert tl203_lines(source) == expected


def test_the_ranges_around_given_lines_are_those_of_the_whole_file():
    source = textwrap.dedent(CASES["an early exit"]).lstrip()
    outline = Outline(ast.parse(source))
    every = cuda_only_ranges(outline)
    assert every == ((7, 7), (11, 11))
    assert cuda_only_ranges(outline, [11]) == ((11, 11),)
    assert cuda_only_ranges(outline, [3]) == ()


def test_a_file_without_the_test_has_no_ranges():
    outline = Outline(ast.parse("import torch\nif torch.cuda.device_count():\n    x = 1\n"))
    assert cuda_only_ranges(outline) == ()


def test_the_command_and_flake8_agree(tmp_path):
    path = tmp_path / "restore.py"
    path.write_text(textwrap.dedent(CASES["the branch of an availability test"]).lstrip())
    cli = run_torchlint([str(path), "--no-cache", "--isolated", "--select", "TL203"])
    flake8 = run_flake8([str(path), "--select", "TL203"])
    assert cli.returncode == 1 and flake8.returncode == 1
    assert [line.split(":")[1] for line in cli.stdout.splitlines() if "restore.py:" in line] == ["5"]
    assert [line.split(":")[1] for line in flake8.stdout.splitlines()] == ["5"]


HELPER = """\
import torch


def restore(model, path):
    model.load_state_dict(torch.load(path, weights_only=True))
    return model


def targets(labels):
    return labels.cuda()
"""

GPU_SCRIPT = """\
import torch
from helper import restore


def main(path):
    model = restore(torch.nn.Linear(2, 2), path).cuda()
    for batch in loader:
        model(batch.cuda())


if __name__ == "__main__":
    main("ckpt.pt")
"""


def _helper_findings(tmp_path, scripts):
    (tmp_path / "helper.py").write_text(HELPER)
    for name, text in scripts.items():
        (tmp_path / name).write_text(text)
    result = run_torchlint([str(tmp_path), "--no-cache", "--select", "TL203", "--output-format", "json"])
    return sorted((d["filename"].rsplit("/", 1)[-1], d["location"]["row"]) for d in json.loads(result.stdout))


def test_a_helper_only_gpu_only_programs_import_is_not_reported(tmp_path):
    # easy-faster-rcnn: model.py's load runs only under train.py, eval.py and infer.py, which all
    # build Model().cuda() with no CPU mode: a machine without CUDA never gets to it
    assert _helper_findings(tmp_path, {"train.py": GPU_SCRIPT, "eval.py": GPU_SCRIPT}) == []


def test_a_helper_a_program_with_a_cpu_mode_imports_is_reported(tmp_path):
    with_cpu_mode = GPU_SCRIPT.replace("model = restore(torch.nn.Linear(2, 2), path).cuda()",
                                       "model = restore(torch.nn.Linear(2, 2), path)\n"
                                       "    if torch.cuda.is_available():\n        model.cuda()")
    assert _helper_findings(tmp_path, {"train.py": GPU_SCRIPT, "demo.py": with_cpu_mode}) == [("helper.py", 5)]
