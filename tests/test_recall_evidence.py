"""Evidence that makes a value known, found on 2017-2018 code (issue 14), with its lookalikes.

Each case mirrors a miss of the hand-judged evaluation (bench/labels/old_code.tsv):
a loss helper that reduces after a loop (faster-rcnn's ``_smooth_l1_loss``), a model
that is wrapped in ``nn.DataParallel`` on one branch only, and a ``forward`` that
reshapes its input without keeping the result. Every case has negatives: the same
shape of code without the evidence is not flagged.
"""

import json
import os
import subprocess
import sys
import textwrap

from torchlint.engine.linter import Engine
from torchlint.rules import all_rules


def _codes(source):
    engine = Engine(all_rules())
    return sorted((d.line, d.code) for d in engine.check(textwrap.dedent(source)).diagnostics)


def _write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _cli_findings(root, *codes):
    result = subprocess.run(
        [sys.executable, "-m", "torchlint.frontends.cli", "--isolated", "--no-cache", "--output-format", "json",
         "--exit-zero", "--select", ",".join(codes), "."],
        cwd=root, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return sorted((os.path.normpath(item["filename"]), item["location"]["row"], item["code"])
                  for item in json.loads(result.stdout))


# -- a binding written after a read reaches it only through a loop ----------------------

SMOOTH_L1 = """\
import torch


def smooth_l1_loss(pred, target, weights, dims=(1,)):
    diff = weights * torch.abs(pred - target)
    loss = diff
    for i in sorted(dims, reverse=True):
        loss = loss.sum(i)
    loss = loss.mean()
    return loss
"""


def test_a_reduction_after_a_loop_of_reductions_is_0_dim_across_modules(tmp_path):
    _write(tmp_path, {
        "utils.py": SMOOTH_L1,
        "train.py": """\
            from utils import smooth_l1_loss


            def step(pred, target, weights):
                loss = smooth_l1_loss(pred, target, weights)
                return loss.data[0]
            """,
    })
    assert _cli_findings(tmp_path, "TL101") == [("train.py", 6, "TL101")]


def test_a_later_binding_says_nothing_about_an_earlier_read():
    # ``net`` may be a module here (``.cuda()`` moves a module in place): the tensor bound
    # after the call is not what the call sees.
    assert _codes("""
        import torch

        def later(load):
            net = load()
            net.cuda()
            net = torch.zeros(3)
            return net
        """) == []


def test_a_later_binding_in_the_same_loop_or_a_while_test_still_reaches_the_read():
    assert _codes("""
        import torch

        def first(x):
            v = torch.zeros(3).sum()
            print(v.data[0])
            v = x

        def looped(x):
            v = torch.zeros(3).sum()
            for _ in range(3):
                print(v.data[0])
                v = x

        def tested(x):
            v = torch.zeros(3).sum()
            while v.data[0] > 0:
                v = x

        def one_line(x):
            v = torch.zeros(3).sum()
            for _ in range(3): print(v.data[0]); v = x
        """) == [(6, "TL101")]


# -- nn.DataParallel on one branch: the model's own attributes still read the model -----

MODEL = """\
import torch.nn as nn
import torch.nn.functional as F


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.loss_cls = 0

    def forward(self, x, y):
        out = self.fc(x)
        self.loss_cls = F.cross_entropy(out, y)
        return out
"""


def test_an_attribute_read_through_a_name_also_bound_to_data_parallel(tmp_path):
    _write(tmp_path, {
        "model.py": MODEL,
        "train.py": """\
            import torch.nn as nn
            from model import Detector


            def train(multi_gpu, batches, load):
                net = Detector()
                if multi_gpu:
                    net = nn.DataParallel(net)
                for x, y in batches:
                    net(x, y)
                    print(net.loss_cls.data[0])
                    print(net.device_ids[0])
                other = Detector()
                if multi_gpu:
                    other = nn.Sequential(other)
                print(other.loss_cls.data[0])
                third = Detector()
                if multi_gpu:
                    third = load()
                print(third.loss_cls.data[0])
            """,
    })
    # ``other`` may be an nn.Sequential (a module of torch's that is not a DataParallel),
    # ``third`` anything: neither is known to reach the model's attribute.
    assert _cli_findings(tmp_path, "TL101") == [("train.py", 11, "TL101")]


# -- ``x.size(0)``: only a tensor has that method ----------------------------------------


def test_a_parameter_whose_size_is_read_is_a_tensor():
    assert _codes("""
        import torch
        import torch.nn as nn

        class RNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = nn.RNN(input_size=5, hidden_size=5, batch_first=True)

            def forward(self, x):
                h_0 = torch.zeros(x.size(0), 1, 5)
                x.view(x.size(0), 6, 5)
                out, _ = self.rnn(x, h_0)
                return out
        """) == [(12, "TL201")]


def test_size_without_a_literal_dimension_or_of_a_rebound_name_is_no_evidence():
    assert _codes("""
        import numpy as np

        def shape_only(x):
            n = x.size()
            x.view(n)

        def attribute(a):
            n = a.size
            a.view(np.uint8)

        def rebound(x, other):
            x.view(3, 2)
            x = other
            n = x.size(0)

        def elsewhere(x, y):
            n = y.size(0)
            x.view(n)
        """) == []



def test_a_full_reduction_of_an_unknown_next_to_a_0_dim_tensor_stays_0_dim():
    # ``rpn_loss`` is a tensor (its ``size(0)`` is read), ``rcnn_loss`` unknown: ``rcnn_loss.sum()``
    # is one value whatever it is, so the sum of both reductions is 0-dim. A reduction along a
    # dimension, or an unknown operand that is not reduced, says nothing.
    assert _codes("""
        def step(model, batch):
            _, rpn_loss, rcnn_loss = model(batch)
            loss = (rpn_loss.sum() + rcnn_loss.sum()) / rpn_loss.size(0)
            print(loss.data[0])
            along = (rpn_loss.sum() + rcnn_loss.sum(1)) / rpn_loss.size(0)
            print(along.data[0])
            plain = rpn_loss.sum() + rcnn_loss
            print(plain.data[0])
        """) == [(5, "TL101")]


def test_backward_does_not_make_a_tensor_of_unknown_shape_0_dim():
    # ``w`` is 1-D: ``l`` has one element (``backward()`` takes it) but one dimension.
    assert _codes("""
        import torch

        w = torch.Tensor([1.0])

        def loss(x, y):
            return (x * w - y) ** 2

        l = loss(1.0, 2.0)
        l.backward()
        print(l.data[0])
        """) == []


# -- lengths and elementwise functions keep a 0-dim tensor 0-dim ---------------------------


def test_a_length_from_size_or_shape_is_a_number_in_arithmetic_with_a_0_dim_tensor():
    assert _codes("""
        import torch

        def pullaway(embeddings, similarity):
            batch_size = embeddings.size()[0]
            loss = (torch.sum(similarity) - batch_size) / (batch_size * (batch_size - 1))
            print(loss.data[0])
            rows = embeddings.shape[0]
            print((torch.sum(similarity) / rows).data[0])
            sizes = embeddings.size()[1:]
            print((torch.sum(similarity) * sizes).data[0])
            other = embeddings.sizes()[0]
            print((torch.sum(similarity) * other).data[0])
        """) == [(7, "TL101"), (9, "TL101")]


def test_an_elementwise_function_of_a_0_dim_tensor_is_0_dim():
    assert _codes("""
        import torch

        def began(real, fake, images):
            real_err = torch.mean(torch.abs(real - images))
            fake_err = torch.mean(torch.abs(fake - images))
            measure = real_err + torch.abs(0.75 * real_err - fake_err)
            print(measure.data[0])
            per_pixel = torch.abs(real - images)
            print(per_pixel.data[0])
            clamped = torch.abs(real_err, out=images)
            print(clamped.data[0])
        """) == [(8, "TL101")]


# -- an attribute the base class sets from its constructor's parameter -------------------

BASE_LOSS = """\
import torch.nn as nn


class Loss(object):
    def __init__(self, name, criterion):
        self.name = name
        self.criterion = criterion
        self.acc_loss = 0

    def reset(self):
        self.acc_loss = 0


class Twice(object):
    def __init__(self, criterion):
        self.criterion = criterion

    def swap(self, other):
        self.criterion = other
"""


def test_an_attribute_a_subclass_hands_to_its_base_constructor(tmp_path):
    _write(tmp_path, {
        "base.py": BASE_LOSS,
        "losses.py": """\
            import torch.nn as nn
            from base import Loss, Twice


            class NLLLoss(Loss):
                def __init__(self, weight=None):
                    super(NLLLoss, self).__init__("Avg NLLLoss", nn.NLLLoss(weight=weight))

                def eval_batch(self, outputs, target):
                    self.acc_loss += self.criterion(outputs, target)

                def get_loss(self):
                    return self.acc_loss.data[0]


            class Named(Loss):
                def __init__(self, criterion):
                    Loss.__init__(self, "named", criterion=nn.MSELoss())

                def get_loss(self, x, y):
                    return self.criterion(x, y).data[0]


            class Given(Loss):
                def __init__(self, criterion):
                    super().__init__("given", criterion)

                def get_loss(self, x, y):
                    return self.criterion(x, y).data[0]


            class Forwarded(Loss):
                def __init__(self, *args):
                    super().__init__(*args)

                def get_loss(self, x, y):
                    return self.criterion(x, y).data[0]


            class Swapped(Twice):
                def __init__(self):
                    super().__init__(nn.MSELoss())

                def get_loss(self, x, y):
                    return self.criterion(x, y).data[0]
            """,
    })
    # Given: the caller's criterion, unknown; Forwarded: which argument is which is unknown;
    # Swapped: the base assigns its attribute elsewhere too.
    assert _cli_findings(tmp_path, "TL101") == [("losses.py", 13, "TL101"), ("losses.py", 21, "TL101")]
