"""The outline screens (``may_match_tree``) of TL101-TL114: tricky cases.

Each flagged snippet must pass the rule's screen and give the same findings
with the screens as without them; each near-miss is one the rule does not
flag (checked without screens) and the outline screen rejects, so the screen
is sharp where it matters: aliased imports, keywords through ``**kwargs``,
positional arguments, nested attribute chains.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from torchlint.analysis.outline import Outline
from torchlint.engine.linter import Engine
from torchlint.rules import rule_by_code


def _findings(engine: Engine, source: str):
    return [(d.code, d.line, d.column, d.message) for d in engine.check(source).diagnostics]


FLAGGED = [
    # -- TL101: .data[0]
    ("TL101", """
        import torch
        pred, y = torch.ones(3), torch.zeros(3)
        correct = (pred == y).sum().data[0]
        """),
    ("TL101", """
        import torch.nn as nn
        criterion = nn.MSELoss()
        loss = criterion(out, y)
        total = loss.data[0,]
        """),
    ("TL101", """
        import torch
        loss = torch.ones(3).sum()
        total = loss.data[(0)]
        """),
    # -- TL102: volatile
    ("TL102", """
        from torch.autograd import Variable as V
        v = V(x, volatile=True, **options)
        """),
    ("TL102", """
        import torch
        x = torch.zeros(3)
        x.volatile = True
        """),
    # -- TL103: upsample (aliases of the module, nested chains, aliased from-imports)
    ("TL103", """
        from torch.nn import functional as fn
        y = fn.upsample_nearest(x, scale_factor=2)
        """),
    ("TL103", """
        import torch.nn.functional
        y = torch.nn.functional.upsample(x, scale_factor=2)
        """),
    ("TL103", """
        import torch as th
        y = th.nn.functional.upsample_bilinear(x, scale_factor=2).clamp(0, 1)
        """),
    ("TL103", """
        def up(x):
            from torch.nn.functional import upsample as resize
            return resize(x, scale_factor=2)
        """),
    # -- TL104: F.sigmoid / F.tanh
    ("TL104", """
        from torch.nn import functional
        y = functional.tanh(x)
        """),
    ("TL104", """
        from torch.nn.functional import sigmoid as gate, relu
        y = gate(relu(x))
        """),
    ("TL104", """
        import torch.nn as nn
        act = nn.functional.sigmoid  # a reference, not a call
        """),
    # -- TL105: init without underscore
    ("TL105", """
        from torch.nn import init as I
        I.normal(w, std=0.02)
        """),
    ("TL105", """
        import torch
        torch.nn.init.xavier_uniform(w, gain=2.0)
        """),
    ("TL105", """
        from torch.nn.init import orthogonal, normal as gauss
        """),
    # -- TL106: legacy loss arguments
    ("TL106", """
        from torch.nn import CrossEntropyLoss as CE
        loss = CE(weight, False)(logits, target)
        """),
    ("TL106", """
        import torch.nn.functional as F
        value = F.cross_entropy(logits, target, w, True)
        """),
    ("TL106", """
        import torch.nn as nn
        criterion = nn.BCELoss(size_average=args.average, **extra)
        """),
    ("TL106", """
        import torch
        value = torch.nn.functional.nll_loss(a, b, reduction="elementwise_mean")
        """),
    ("TL106", """
        import torch.nn as nn
        criterion = nn.MSELoss(None, False)
        """),
    ("TL106", """
        import torch.nn.functional as F
        value = F.binary_cross_entropy_with_logits(x, y, w, False)
        """),
    # -- TL107: Variable wrappers
    ("TL107", """
        import torch.autograd as ag
        v = ag.Variable(x)
        """),
    ("TL107", """
        from torch.autograd.variable import Variable as Var
        v = Var(x, requires_grad=True)
        """),
    # -- TL108: removed APIs (methods on known tensors, modules, from-imports)
    ("TL108", """
        import torch
        a, b = torch.randn(3, 3), torch.randn(3, 1)
        x, lu = b.solve(a)
        """),
    ("TL108", """
        import torch._six
        """),
    ("TL108", """
        from torch.utils.ffi import create_extension
        """),
    ("TL108", """
        from torch import symeig as eigh
        """),
    # -- TL109: deprecated APIs (aliases, keywords, ctx attributes)
    ("TL109", """
        from torch import autograd as ag
        ag.backward(t, grad_variables=g)
        """),
    ("TL109", """
        from torch.cuda import amp
        with amp.autocast():
            pass
        """),
    ("TL108", """
        import torch
        x = torch.randn(4, 4)
        q, r = x.qr()
        """),  # removed in torch 2.14, the default target
    ("TL109", """
        import torch


        class Fn(torch.autograd.Function):
            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_variables
                return grad * x
        """),
    # -- TL110: tensor types as dtype
    ("TL110", """
        import torch as th
        from torch.cuda import HalfTensor as H
        y = th.randn(8, dtype=H)
        """),
    ("TL110", """
        import torch
        y = torch.ones(2)
        z = y.new_zeros(3, dtype=torch.DoubleTensor)
        """),
    # -- TL111: legacy autograd Functions (aliases, subclasses through the file)
    ("TL111", """
        from torch.autograd import Function as Fn


        class Double(Fn):
            def forward(self, x):
                return x * 2
        """),
    ("TL111", """
        import torch


        class Scale(torch.autograd.function.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2


        class Base(Scale):
            pass


        fn = Base()
        """),
    # -- TL112: torchvision pretrained
    ("TL112", """
        from torchvision.models import resnet50 as r50
        model = r50(True)
        """),
    ("TL112", """
        import torchvision
        model = torchvision.models.detection.fasterrcnn_resnet50_fpn(pretrained_backbone=False, **kw)
        """),
    # -- TL113: v2 ToTensor
    ("TL113", """
        import torchvision.transforms.v2 as T
        steps = [T.Resize(256), T.ToTensor()]
        """),
    ("TL113", """
        from torchvision.transforms.v2.functional import to_tensor as tt
        """),
    # -- TL114: private aliases with public twins
    ("TL114", """
        import torch.utils.data
        batch = torch.utils.data._utils.collate.default_convert(samples)
        """),
    ("TL114", """
        from torch._utils import is_compiling as compiling
        """),
    # -- TL216: the loss through a local name, the target an element of a known tensor
    ("TL216", """
        import torch
        import torch.nn as nn
        criterion = nn.CrossEntropyLoss()
        outputs = torch.randn(3, 5)
        targets = torch.tensor([1, 0, 4])
        for output, target in zip(outputs, targets):
            loss = criterion(output.unsqueeze(0), target)
        """),
    # -- TL216: the loss a member of self, in a class whose base is torch's
    ("TL216", """
        import torch
        import torch.nn as nn
        class Trainer(nn.Module):
            def __init__(self):
                super().__init__()
                self.criterion = nn.CrossEntropyLoss()
            def step(self, outputs):
                targets = torch.tensor([1, 0, 4])
                for i in range(3):
                    loss = self.criterion(outputs[i].unsqueeze(0), targets[i])
        """),
    # -- TL216: the 1-D shape from ``.view(-1)``, through a chain of names
    ("TL216", """
        import torch
        import torch.nn as nn
        criterion = nn.NLLLoss()
        outputs = torch.randn(3, 5)
        labels = torch.zeros(3, 1).long().view(-1)
        targets = labels
        for i in range(3):
            loss = criterion(outputs[i:i + 1], targets[i])
        """),
]

NEAR_MISSES = [
    # TL216: the target is a plain name no loop binds, and a slice: nothing
    # ``_element_source`` follows (transformers' loss calls look like this).
    ("TL216", """
        import torch.nn as nn
        def loss_of(logits, labels):
            loss = nn.CrossEntropyLoss()(logits, labels)
            return loss + nn.CrossEntropyLoss()(logits, labels[:, 1:])
        """),
    # TL216: element-like targets, but the callee is a torch function that is no
    # loss, a builtin, or the element's tensor holds nothing inference can know.
    ("TL216", """
        import torch
        import torch.nn.functional as F
        def pick(x, index, pads, config, keys):
            loss = F.cross_entropy(x, index)
            rows = torch.gather(x, 1, index[0])
            padded = F.pad(x, pads[0])
            setting = getattr(config, keys[0])
            for key in keys:
                print(x, key)
            return loss, rows, padded, setting
        """),
    # TL216: element-like targets of a loss, from tensors whose shape the file
    # never shows (a parameter, a member, the result of a project function):
    # ``shapes.ndim`` reads a shape only from the call that made it.
    ("TL216", """
        import torch
        import torch.nn as nn
        def labels_of(batch):
            return batch["labels"]
        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.criterion = nn.CrossEntropyLoss()
            def forward(self, logits, labels, batch):
                self.targets = labels
                known = labels_of(batch)
                for i in range(3):
                    loss = self.criterion(logits[i:i + 1], labels[i])
                    loss = loss + self.criterion(logits[i:i + 1], self.targets[i])
                    loss = loss + self.criterion(logits[i:i + 1], known[i])
                for label in known:
                    loss = loss + self.criterion(logits[:1], label)
                return loss
        """),
    # TL216: element-like second arguments of calls that build an instance of a
    # class of the file, or call a method a torch base class gives ``self``.
    ("TL216", """
        import torch
        import torch.nn as nn
        class Block(nn.Module):
            def __init__(self, channels, kernel):
                super().__init__()
        class Stack(nn.Module):
            def __init__(self, channels):
                super().__init__()
                criterion = nn.CrossEntropyLoss()
                kernels = torch.tensor([1, 3, 5])
                self.blocks = [Block(channels, kernels[i]) for i in range(3)]
                for i in range(3):
                    self.add_module(str(i), kernels[i])
        """),
    ("TL101", """
        class Dataset:
            def first(self):
                return self.data[0]
        """),
    ("TL101", """
        import torch
        first = torch.data[0]
        """),
    ("TL102", """
        from torch.autograd import Variable
        v = Variable(x, **{"volatile": True})
        """),
    ("TL102", """
        class Config:
            def __init__(self):
                self.volatile = True
        """),
    ("TL103", """
        from mylib import F
        y = F.upsample(x)
        """),
    ("TL103", """
        y = torch.nn.functional.upsample(x)  # torch is not imported
        """),
    ("TL103", """
        def resize(x, upsample):
            return upsample(x)
        """),
    ("TL104", """
        import torch.nn.functional as F
        y = x.sigmoid() + F.relu(x) + torch.tanh(x)
        """),
    ("TL105", """
        import numpy as np
        from torch.nn import init
        init.normal_(w)
        w = np.random.normal(size=3)
        """),
    ("TL106", """
        import torch.nn as nn
        import torch.nn.functional as F
        criterion = nn.CrossEntropyLoss(reduction="sum")
        value = F.cross_entropy(logits, target, ignore_index=-100)
        legacy_defaults = nn.MSELoss(size_average=None, reduce=None, reduction="sum")
        unpacked = F.cross_entropy(logits, target, *rest)
        hidden = nn.MSELoss(**kwargs)
        none_first = nn.L1Loss(None)
        """),
    ("TL106", """
        from functools import reduce
        total = reduce(lambda a, b: a + b, [1, 2, 3])
        """),
    ("TL106", """
        from torch.nn.modules.loss import _Loss
        class MyLoss(_Loss):
            pass
        value = my_loss(x, y, size_average=False)
        """),
    ("TL107", """
        import tensorflow as tf
        v = tf.Variable(3.0)
        """),
    ("TL107", """
        from torch.autograd import Variable
        def is_tensor(x):
            return isinstance(x, Variable)
        """),
    ("TL108", """
        import torch
        w = torch.linalg.solve(a, b)
        values = np.linalg.eig(m)
        """),
    ("TL109", """
        import torch
        q, r = torch.linalg.qr(a)
        loss.backward(grad_variables=g)
        """),
    ("TL110", """
        import numpy as np
        a = np.zeros(3, dtype=np.FloatTensor)
        """),
    ("TL111", """
        import torch


        class Net(torch.nn.Module):
            def forward(self, x):
                return x


        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * x


        y = Square.apply(Net()(1))
        """),
    ("TL111", """
        from sympy import Function


        class f(Function):
            def forward(self, x):
                return x


        g = f()(1)
        """),
    ("TL112", """
        import torchvision
        model = torchvision.models.resnet50(weights=None)
        config = dict(pretrained=True)
        """),
    ("TL113", """
        from torchvision import transforms
        steps = transforms.Compose([transforms.ToTensor()])
        """),
    ("TL114", """
        import torch
        torch._dynamo.config.cache_size_limit = 64
        """),
]


def _id(case):
    code, source = case
    return code + ":" + textwrap.dedent(source).strip().splitlines()[-1][:40]


@pytest.mark.parametrize("code, source", FLAGGED, ids=[_id(c) for c in FLAGGED])
def test_flagged_snippet_passes_the_screen(code: str, source: str) -> None:
    source = textwrap.dedent(source).lstrip("\n")
    rule = rule_by_code(code)
    assert rule.may_match(source), "the textual screen already rejects it"
    assert rule.may_match_tree(Outline(ast.parse(source)))
    screened = _findings(Engine([rule]), source)
    assert screened, f"{code} does not flag the snippet"
    assert screened == _findings(Engine([rule], screens=False), source)


@pytest.mark.parametrize("code, source", NEAR_MISSES, ids=[_id(c) for c in NEAR_MISSES])
def test_near_miss_is_screened_out(code: str, source: str) -> None:
    source = textwrap.dedent(source).lstrip("\n")
    rule = rule_by_code(code)
    assert rule.may_match(source), "a near-miss for the outline: the textual screen passes it"
    assert _findings(Engine([rule], screens=False), source) == [], f"{code} flags the near-miss"
    assert not rule.may_match_tree(Outline(ast.parse(source)))
