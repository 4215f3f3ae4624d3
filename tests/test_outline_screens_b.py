"""The outline screens of TL201-TL213 and TL301-TL304 on their tricky cases.

Each flagged snippet must pass its rule's screen, with the same findings
with and without screens; each near-miss (which the rule cannot flag) must
be screened out, so the file never reaches libcst for that rule.
"""

from __future__ import annotations

import ast
import random
import textwrap

import pytest

from torchlint.analysis.outline import Outline, names_where
from torchlint.engine.linter import Engine
from torchlint.rules import rule_by_code
from torchlint.rules.rule import Rule

# The engine that asks a rule with an outline screen only that screen (the
# textual ones miss aliases: ``from torch import load as restore``).
OUTLINE_ONLY_ENGINE = hasattr(Rule, "has_outline_screen")

# (code, snippet the rule flags)
FLAGGED = [
    # TL201 on a parameter an ``isinstance`` test with a tensor class (through an
    # import alias) proves a tensor
    ("TL201", """
        from torch import Tensor as T
        def move(batch, device):
            if isinstance(batch, T):
                batch.to(device)
    """),
    # TL201 on what a plain function of the file returns: a tensor, through a
    # name, in a function the narrowing cuts (the screen reads it in the whole file)
    ("TL201", """
        import torch
        def ones():
            made = torch.ones(3)
            return made
        def zeros():
            return ones()
        class Trainer:
            def step(self):
                weights = zeros()
                weights.cuda()
    """),
    # TL201 on a member of self: a base class of the file assigns it a tensor, or its
    # __init__ is handed one; two classes assign it, one a tensor; a cycle of members
    ("TL201", """
        import torch
        class Base:
            def __init__(self):
                self.w = torch.zeros(3)
        class Child(Base):
            def move(self):
                self.w.cuda()
    """),
    ("TL201", """
        import torch
        class Base:
            def __init__(self, w):
                self.w = w
        class Child(Base):
            def __init__(self):
                super().__init__(torch.zeros(3))
            def move(self):
                self.w.cuda()
    """),
    ("TL201", """
        import torch
        class Holder:
            def __init__(self):
                self.w = Holder2()
        class Holder2:
            def __init__(self):
                self.w = torch.zeros(3)
            def move(self):
                self.w.cuda()
    """),
    ("TL201", """
        import torch
        class A:
            def __init__(self):
                self.b = torch.zeros(3)
                self.a = self.b + 0
            def move(self):
                self.a.cuda()
    """),
    # TL201: a tensor reached through .data, a loader's batches through enumerate
    ("TL201", """
        import torch
        x = torch.zeros(3)
        x.data.cuda()
    """),
    ("TL201", """
        from torch.utils.data import DataLoader as Loader

        def train(dataset):
            for step, (images, labels) in enumerate(Loader(dataset)):
                labels.long()
    """),
    ("TL201", """
        from torch.utils.data import DataLoader
        from tqdm import tqdm as progress

        def train(dataset):
            for images, labels in progress(DataLoader(dataset)):
                images.float()
    """),
    # TL202: a name bound to a name bound to .cuda(); the device through torch.device
    ("TL202", """
        import torch
        x = torch.ones(3).cuda()
        y = x
        y.numpy()
    """),
    ("TL202", """
        import torch
        z = torch.ones(2).to(torch.float16).to(torch.device("cuda"))
        print((z * 2).data[0].numpy())
    """),
    ("TL202", """
        from torch import cuda as gpu
        x = gpu.FloatTensor(3)
        x.numpy()
    """),
    # TL214: an aliased torch.load; map_location by keyword, weights_only missing
    ("TL214", """
        from torch import load as restore
        state = restore("model.pt", map_location="cpu")
    """),
    # TL203: torch.load through an aliased module, map_location missing, in a file using CUDA
    ("TL203", """
        import torch.serialization as ser
        state = ser.load("model.pt", weights_only=True)
        model = model.cuda() if gpu else model
    """),
    # TL204: an aliased functional softmax, dim=None, a Softmax module by a module alias
    ("TL204", """
        from torch.nn.functional import softmax as sm
        probs = sm(logits)
    """),
    ("TL204", """
        import torch.nn.functional as F
        probs = F.log_softmax(logits, None)
    """),
    ("TL204", """
        from torch import nn as tnn
        head = tnn.Sequential(tnn.Linear(4, 2), tnn.Softmax())
    """),
    # TL205: an aliased dropout in forward
    ("TL205", """
        import torch.nn as nn
        from torch.nn.functional import dropout as drop


        class Net(nn.Module):
            def forward(self, x):
                return drop(x, 0.5)
    """),
    # TL206: a bare statement in a file importing torch
    ("TL206", """
        import torch
        model = torch.nn.Linear(2, 2)
        model.load_state_dict(torch.load("w.pt", weights_only=True), strict=False)
    """),
    # TL207: an aliased np.flip, a name bound to a reversed slice of an array
    ("TL207", """
        import torch
        from numpy import flip as mirror
        t = torch.tensor(mirror(a))
    """),
    ("TL207", """
        import numpy as np
        import torch
        a = np.zeros((3, 4))
        b = a[:, ::-1]
        t = torch.from_numpy(b.T)
    """),
    # TL208: an aliased NaN constant; a name bound to float("nan")
    ("TL208", """
        from math import nan as NOT_A_NUMBER
        if loss == NOT_A_NUMBER:
            pass
    """),
    ("TL208", """
        missing = float(" NaN ")
        if value != missing:
            pass
    """),
    # TL209: an aliased loss function, the counter of enumerate as the number
    ("TL209", """
        import torch
        from torch.nn.functional import cross_entropy as ce

        def train(model, batches):
            total = 0
            for x, y in batches:
                loss = ce(model(x), y)
                loss.backward()
                total += loss
            print(float(total))  # returned, the total might be differentiated by a caller
    """),
    ("TL209", """
        import torch.nn as nn

        def train(model, batches):
            criterion = nn.CrossEntropyLoss()
            for total, (x, y) in enumerate(batches):
                total = total + criterion(model(x), y) * 2
    """),
    # TL210: os.environ through an alias, after a CUDA call
    ("TL210", """
        import torch
        from os import environ as env
        torch.cuda.set_device(0)
        env["CUDA_VISIBLE_DEVICES"] = "1"
    """),
    ("TL210", """
        import os
        import torch
        x = torch.zeros(2).cuda()
        os.environ.update({"CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
    """),
    # TL211: a module alias, a keyword through an aliased class, a missing import
    ("TL211", """
        import torch.nn as tnn
        layer = tnn.Conv2D(3, 8, 3)
    """),
    ("TL211", """
        from torch.utils.data import DataLoader as DL
        loader = DL(dataset, num_worker=2)
    """),
    ("TL211", """
        from torch.optim import AdamW8
    """),
    ("TL211", """
        import torch
        x = torch.ones(2)
        x.require_grad = True
    """),
    # TL212: an aliased checkpoint
    ("TL212", """
        from torch.utils.checkpoint import checkpoint as ckpt
        y = ckpt(block, x)
    """),
    # TL213: a uint8 mask through a name and a slice; torch.where's condition by keyword
    ("TL213", """
        import torch
        x = torch.randn(3)
        mask = (x > 0).byte()
        y = x[mask[:2]]
    """),
    ("TL213", """
        import torch
        keep = torch.ones(3, dtype=torch.uint8)
        y = torch.where(condition=keep, input=a, other=b)
    """),
    ("TL213", """
        import torch
        x = torch.randn(3)
        mask = (x > 0).byte()
        y = x.masked_fill(mask.to(device=x.device), 0.0)
    """),
    # TL301: an aliased torch.log, exp(x) - 1, log of a sum of exps
    ("TL301", """
        from torch import log as ln
        y = ln(1 + x)
    """),
    ("TL301", """
        import torch
        y = torch.exp(x) - 1
        z = torch.log(torch.exp(x).sum(-1))
    """),
    # TL302 (opt-in): an aliased DataLoader in training code
    ("TL302", """
        from torch.utils.data import DataLoader as DL

        def train(model, dataset, optimizer):
            for x, y in DL(dataset, batch_size=8):
                loss = model(x, y)
                loss.backward()
    """),
    # TL303 (opt-in): positional and keyword False
    ("TL303", """
        import torch
        optimizer.zero_grad(False)
    """),
    # TL304 (opt-in): cudnn through an alias; lowercase true
    ("TL304", """
        from torch.backends import cudnn as cd
        cd.enabled = False
    """),
    ("TL304", """
        import torch
        torch.backends.cudnn.benchmark = true
    """),
]

# (code, snippet the rule cannot flag and its screen must reject)
NEAR_MISSES = [
    # TL215: ``dot`` of operands whose number of dimensions nothing in the file shows
    ("TL215", """
        import torch
        def score(query, key):
            return query.dot(key) + torch.dot(query, key)
    """),
    # TL201: an ``isinstance`` test with another class proves nothing about tensors
    ("TL201", """
        import torch
        from quant import QuantLinear
        def move(model, device):
            for module in model.modules():
                if isinstance(module, QuantLinear):
                    module.cuda(device)
    """),
    # TL201: ``.add`` on what plain functions of the file return: a set, None,
    # a call of another such function, itself (recursion knows nothing)
    ("TL201", """
        import torch
        def get_pairs(word):
            pairs = set()
            for a, b in zip(word, word[1:]):
                pairs.add((a, b))
            return pairs
        def nothing():
            return
        def again(word):
            return get_pairs(word) if word else again(word[1:])
        def bpe(word):
            pairs = get_pairs(word)
            pairs.add(1)
            none = nothing()
            none.add(1)
            more = again(word)
            more.add(1)
            return torch.tensor(len(pairs))
    """),
    # TL201: what the file's own classes make is never a tensor, in a class whose
    # base is another module's too (its members are the class's own)
    ("TL201", """
        import torch
        class Trie:
            def add(self, word):
                return word
        class Tokenizer:
            def __init__(self):
                self.trie = Trie()
            def grow(self, word):
                self.trie.add(word)
    """),
    ("TL201", """
        import torch
        from .base import Base
        class Embedding:
            def to(self, device):
                return self
        class Model(Base):
            def __init__(self):
                self.embedding = Embedding()
            def move(self, device):
                self.embedding.to(device)
    """),
    ("TL201", """
        import torch.nn as nn
        class Net(nn.Module):
            pass
        net = Net()
        net.cuda()
    """),
    ("TL201", """
        seen = set()
        seen.add(1)
    """),
    ("TL201", """
        import torch


        class Net(torch.nn.Module):
            def setup(self):
                self.weight.cuda()
                self.float()
    """),
    ("TL202", """
        import torch
        v = torch.ones(3).cuda()
        print(v.to("cpu").numpy())
    """),
    ("TL202", """
        import torch
        x = torch.ones(3)
        print(x.numpy())
    """),
    ("TL203", """
        import torch
        state = torch.load("model.pt", "cpu", weights_only=True)
        other = torch.load("model.pt", **options)
    """),
    ("TL203", """
        import json
        config = json.load(open("config.json"))
    """),
    ("TL214", """
        import torch
        state = torch.load("model.pt", "cpu", weights_only=True)
        other = torch.load("model.pt", **options)
    """),
    ("TL214", """
        import json
        config = json.load(open("config.json"))
    """),
    ("TL204", """
        from torch.nn.functional import softmax as sm
        a = sm(logits, -1)
        b = sm(logits, dim=1)
        c = sm(logits, **options)
    """),
    ("TL204", """
        from scipy.special import softmax
        probs = softmax(scores)
    """),
    ("TL205", """
        import torch.nn.functional as F

        def augment(x):
            return F.dropout(x, 0.5)


        class Net:
            def forward(self, x):
                return F.dropout(x, 0.5, self.training)
    """),
    ("TL206", """
        import torch
        result = model.load_state_dict(state, strict=False)
        model.load_state_dict(state, strict=True)
    """),
    ("TL206", """
        model.load_state_dict(state, strict=False)  # no torch import
    """),
    ("TL207", """
        import torch
        t = torch.tensor(list(range(5))[::-1])
        u = torch.tensor(x[::2])
    """),
    ("TL208", """
        import math
        y = math.nan
        if x < y or x == 1.0:
            pass
    """),
    ("TL209", """
        import torch.nn.functional as F

        def train(model, batches):
            total = 0
            for x, y in batches:
                loss = F.cross_entropy(model(x), y)
                total += loss.item()
    """),
    ("TL209", """
        import torch.nn.functional as F

        def train(model, batches):
            total = 0
            loss = F.cross_entropy(model(batches[0]), batches[1])
            total += loss  # not in a loop
    """),
    ("TL210", """
        import os
        import torch
        torch.cuda.set_device(0)
        os.environ["MASTER_PORT"] = "29500"
    """),
    ("TL211", """
        import torch
        import torch.distributions
        x = torch.zeros(3)
        y = torch.distributions.Normal(0, 1)
    """),
    ("TL211", """
        from torch.utils.data import DataLoader as DL
        loader = DL(dataset, num_workers=2, **options)
        model._requires_grad = False
    """),
    ("TL212", """
        from torch.utils.checkpoint import checkpoint as ckpt
        y = ckpt(block, x, use_reentrant=False)
        z = ckpt(block, x, **options)
    """),
    ("TL213", """
        import torch
        image = x.to(torch.uint8)
        image = torch.where(image > 255, 255, image)
    """),
    ("TL301", """
        import torch
        y = torch.log(x + 2)
        z = torch.exp(x) - 2
        w = torch.log(torch.exp(x - m).sum(-1))
    """),
    ("TL302", """
        from torch.utils.data import DataLoader

        def evaluate(model, dataset):
            for x, y in DataLoader(dataset, num_workers=4):
                model(x.cuda())
    """),
    ("TL303", """
        optimizer.zero_grad(set_to_none=True)
        optimizer.zero_grad()
    """),
    ("TL304", """
        from torch.backends import cudnn as cd
        cd.enabled = True
        cd.benchmark = True
    """),
]


def _source(snippet: str) -> str:
    return textwrap.dedent(snippet).lstrip("\n")


def _key(diagnostics):
    return [(d.code, d.line, d.column, d.message) for d in diagnostics]


@pytest.mark.parametrize("code,snippet", FLAGGED, ids=[f"{c}-{i}" for i, (c, _) in enumerate(FLAGGED)])
def test_flagged_snippet_passes_the_screen(code: str, snippet: str) -> None:
    rule = rule_by_code(code)
    source = _source(snippet)
    assert rule.may_match_tree(Outline(ast.parse(source)))
    if not OUTLINE_ONLY_ENGINE and not rule.may_match(source):
        pytest.skip("the textual screen misses it; the engine that skips it for outlined rules is not here")
    screened = Engine([rule]).check(source).diagnostics
    unscreened = Engine([rule], screens=False).check(source).diagnostics
    assert screened, f"{code} should flag:\n{source}"
    assert _key(screened) == _key(unscreened)


@pytest.mark.parametrize("code,snippet", NEAR_MISSES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(NEAR_MISSES)])
def test_near_miss_is_screened_out(code: str, snippet: str) -> None:
    rule = rule_by_code(code)
    source = _source(snippet)
    assert not Engine([rule], screens=False).check(source).diagnostics, "the rule flags it: not a near miss"
    assert not rule.may_match_tree(Outline(ast.parse(source)))


def _least_fixed_point(source: str, seeds: set) -> set:
    """The names with a binding that holds, read the slow way: every binding,
    again and again until nothing changes (a name holds when it is a seed, or
    is assigned a name that holds)."""
    pairs = [(node.targets[0].id, node.value) for node in ast.parse(source).body]
    known: set = set()
    changed = True
    while changed:
        changed = False
        for name, value in pairs:
            if name not in known and (isinstance(value, ast.Name) and value.id in known
                                      or isinstance(value, ast.Call) and value.func.id in seeds):
                known.add(name)
                changed = True
    return known


def _holds_for(seeds: set):
    def holds(value: ast.AST, known) -> bool:
        if isinstance(value, ast.Call):
            return value.func.id in seeds
        return isinstance(value, ast.Name) and value.id in known
    return holds


def test_names_where_answers_the_least_fixed_point_name_by_name() -> None:
    # Random assignments between a few names (cycles, self-assignments, names
    # bound several times), asked in a random order: each answer is the one
    # of the fixed point over the whole file.
    rng = random.Random(14)
    names = [f"n{i}" for i in range(9)]
    for _ in range(300):
        lines = []
        for _ in range(rng.randrange(1, 14)):
            target, other = rng.choice(names), rng.choice(names)
            lines.append(f"{target} = {other}" if rng.random() < 0.8 else f"{target} = make()")
        source = "\n".join(lines) + "\n"
        expected = _least_fixed_point(source, {"make"})
        answers = names_where(Outline(ast.parse(source)), "key", _holds_for({"make"}))
        for name in rng.sample(names, len(names)):
            assert (name in answers) == (name in expected), (source, name)


def test_names_where_reads_only_the_bindings_a_question_reaches() -> None:
    source = "a = b\nb = a\nc = make()\nd = c\n"
    read = []

    def holds(value: ast.AST, known) -> bool:
        read.append(ast.unparse(value))
        return _holds_for({"make"})(value, known)

    answers = names_where(Outline(ast.parse(source)), "key", holds)
    assert "d" in answers and read == ["c", "make()"]
    assert "a" not in answers and read[2:] == ["b", "a"]  # ``b`` leant on ``a`` being out: not kept
    assert "b" not in answers and read[4:] == ["a"]  # ``a`` is decided now
    assert "a" not in answers and "b" not in answers and len(read) == 5  # both kept


def test_names_where_asked_again_while_answering_does_not_recurse_forever() -> None:
    outline = Outline(ast.parse("a = b\nb = a\n"))
    seen = []

    def holds(value: ast.AST, known) -> bool:
        inner = names_where(outline, "key", holds)  # the same question, re-entered
        seen.append("a" in inner)
        return False

    assert "a" not in names_where(outline, "key", holds)
    assert seen == [False]


def test_a_chain_of_names_too_deep_answers_in() -> None:
    # Never too few, with a bounded stack: past the depth a name counts as in.
    source = "n0 = other()\n" + "".join(f"n{i + 1} = n{i}\n" for i in range(40))
    answers = names_where(Outline(ast.parse(source)), "key", _holds_for({"make"}))
    assert "n3" not in answers  # decided within the depth
    assert "n40" in answers


def test_only_names_of_ten_to_seventeen_letters_can_be_close_to_requires_grad():
    # TL211's screen skips the similarity measure outside these lengths: the
    # closest name of each length (``requires_grad`` cut short, or padded)
    # reaches the rule's 0.85 exactly inside them.
    from torchlint.knowledge import api_snapshot
    from torchlint.rules.tl211_misspelled_api import _NEAR_LENGTHS, REQUIRES_GRAD, _near_requires_grad

    for length in range(1, 30):
        closest = (REQUIRES_GRAD + "x" * length)[:length]
        close = api_snapshot.similarity(closest, REQUIRES_GRAD) >= 0.85
        assert close == (_NEAR_LENGTHS[0] <= length <= _NEAR_LENGTHS[1]), length
    assert _near_requires_grad("require_grad") and _near_requires_grad("requires_grads")
    assert not _near_requires_grad("requires") and not _near_requires_grad("requires_gradient_of")
