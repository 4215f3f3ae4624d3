"""Value facts that follow the code across statements (issue 33): containers filled
in place, and parameters that take the facts of their call sites.

Each case has a lookalike that must stay quiet: the same shape of code without
the evidence (a container something unknown goes into, a call site passing an
unknown value) is not flagged.
"""

import json
import subprocess
import sys
import textwrap

import pytest

from torchlint.engine.linter import Engine
from torchlint.rules import all_rules


def _lines(source, code="TL101"):
    engine = Engine(all_rules())
    return sorted(d.line for d in engine.check(textwrap.dedent(source)).diagnostics if d.code == code)


# -- containers filled in place ------------------------------------------------------

LOSS_DICT = """\
import torch
import torch.nn.functional as F


class Detector(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self._losses = {}

    def add_losses(self, scores, labels, boxes, targets):
        cross_entropy = F.cross_entropy(scores, labels)
        box = F.smooth_l1_loss(boxes, targets)
        self._losses['cross_entropy'] = cross_entropy
        self._losses['box'] = box
        self._losses['total'] = cross_entropy + box

    def train_step(self):
        return self._losses['cross_entropy'].data[0], self._losses['total'].data[0]

    def log(self):
        for name in self._losses.keys():
            print(name, self._losses[name].data[0])
        for name, value in self._losses.items():
            print(name, value.data[0])
"""


def test_a_dict_attribute_filled_only_with_0_dim_losses_gives_0_dim_values():
    assert _lines(LOSS_DICT) == [18, 18, 22, 24]


def test_a_dict_attribute_that_is_also_updated_from_elsewhere_is_unknown():
    source = LOSS_DICT.replace("        self._losses['total'] = cross_entropy + box\n",
                               "        self._losses['total'] = cross_entropy + box\n"
                               "        self._losses.update(extra_losses())\n")
    assert _lines(source) == []


def test_a_dict_attribute_one_of_whose_values_is_unknown_is_unknown():
    source = LOSS_DICT.replace("self._losses['box'] = box", "self._losses['box'] = boxes")
    assert _lines(source) == []


def test_a_local_list_filled_by_append_gives_its_elements():
    source = """\
    import torch.nn.functional as F


    def evaluate(pairs):
        losses = []
        for output, target in pairs:
            losses.append(F.mse_loss(output, target))
        print(losses[-1].data[0])
        for loss in losses:
            print(loss.data[0])
    """
    assert _lines(source) == [8, 10]


def test_a_list_filled_with_unknown_values_is_unknown():
    source = """\
    import torch.nn.functional as F


    def evaluate(pairs):
        losses = []
        for output, target in pairs:
            losses.append(F.mse_loss(output, target))
            losses.append(output)
        print(losses[-1].data[0])
    """
    assert _lines(source) == []


@pytest.mark.parametrize("store, flagged", [
    ("losses[k] = F.l1_loss(output, target)", [10, 12]),  # more 0-dim losses: still known
    ("losses[k] = output", []),  # a model output stored beside the loss: unknown
    ("losses.update(extra)", []),  # filled with what inference does not follow
])
def test_a_dict_or_list_made_with_elements_then_stored_into_meets_the_stores(store, flagged):
    # Before, ``{'mse': loss}`` kept the kind of its first elements whatever was stored later.
    source = f"""\
    import torch.nn.functional as F


    def evaluate(pairs, extra):
        losses = {{'mse': F.mse_loss(pairs[0][0], pairs[0][1])}}
        history = [F.mse_loss(pairs[0][0], pairs[0][1])]
        for k, (output, target) in pairs:
            {store}
            history.append({store.split(' = ')[-1] if ' = ' in store else 'extra'})
        print(losses['mse'].data[0])
        for value in history:
            print(value.data[0])
    """
    assert _lines(source) == flagged


def test_a_dict_subscript_augmented_in_place_is_unknown():
    source = """\
    import torch.nn.functional as F


    def evaluate(pairs):
        totals = {}
        totals['mse'] = F.mse_loss(*pairs[0])
        totals['mse'] += pairs[1]
        print(totals['mse'].data[0])
    """
    assert _lines(source) == []


# -- parameters take the facts of their call sites -----------------------------------

VALIDATE = """\
import torch


def validate(loader, model, criterion):
    for inputs, target in loader:
        loss = 0
        for output in model(inputs):
            loss += criterion(output, target)
        print(loss.data[0])


def main():
    criterion = torch.nn.MSELoss()
    validate([], torch.nn.Linear(2, 2), criterion)


if __name__ == "__main__":
    main()
"""


def _cli_lines(tmp_path, source, code="TL101"):
    (tmp_path / "train.py").write_text(textwrap.dedent(source))
    result = subprocess.run(
        [sys.executable, "-m", "torchlint.frontends.cli", "--isolated", "--no-cache", "--output-format", "json",
         "--exit-zero", "--select", code, "."], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return sorted(item["location"]["row"] for item in json.loads(result.stdout))


def test_a_parameter_of_a_script_function_takes_what_its_calls_pass():
    # The CLI cuts main() from what it parses around validate(); the project model
    # reads the whole module for the calls.
    assert _lines(VALIDATE) == [9]


def test_a_parameter_takes_its_call_sites_through_the_cli(tmp_path):
    assert _cli_lines(tmp_path, VALIDATE) == [9]


def test_a_parameter_one_of_whose_calls_passes_something_unknown_is_unknown():
    source = VALIDATE.replace("    validate([], torch.nn.Linear(2, 2), criterion)\n",
                              "    validate([], torch.nn.Linear(2, 2), criterion)\n"
                              "    validate([], torch.nn.Linear(2, 2), make_criterion())\n")
    assert _lines(source) == []


def test_a_public_function_of_a_library_module_may_be_called_from_anywhere():
    source = VALIDATE.replace('if __name__ == "__main__":\n    main()\n', "")
    assert _lines(source) == []


def test_a_private_function_of_a_library_module_takes_its_calls():
    source = VALIDATE.replace('if __name__ == "__main__":\n    main()\n', "").replace("validate(", "_validate(")
    assert _lines(source) == [9]


def test_a_function_passed_on_as_a_value_is_unknown():
    source = VALIDATE.replace("    validate([], torch.nn.Linear(2, 2), criterion)\n",
                              "    validate([], torch.nn.Linear(2, 2), criterion)\n    callbacks = [validate]\n")
    assert _lines(source) == []


def test_a_call_with_star_arguments_is_unknown():
    source = VALIDATE.replace("    validate([], torch.nn.Linear(2, 2), criterion)\n",
                              "    validate([], torch.nn.Linear(2, 2), criterion)\n    validate(*args)\n")
    assert _lines(source) == []


def test_a_missing_argument_takes_the_default():
    source = """\
    import torch


    def report(value=torch.zeros(3)):
        print(value.data[0])


    def main():
        report(torch.tensor(1.0).sum())
        report()


    if __name__ == "__main__":
        main()
    """
    assert _lines(source) == []  # the default is 1-D: .data[0] is its first element
    assert _lines(source.replace("torch.zeros(3)", "torch.zeros(3).sum()")) == [5]


def test_a_total_restarted_for_each_batch_is_no_running_total():
    # TL209: one batch's sum of per-output losses (the outputs' loop is no data loader).
    assert _lines(VALIDATE, "TL209") == []


# -- a total that is a number only when its loop ran no pass --------------------------

EPISODE = """\
import torch
mse = torch.nn.MSELoss()


def finish(values, targets):
    value_loss = 0
    for v, t in zip(values, targets):
        value_loss += mse(v, t)
    return targets, value_loss


def main():
    targets, value_loss = finish([], [])
    print(value_loss.data[0])
    total = value_loss + 1
    print(value_loss[0])


if __name__ == "__main__":
    main()
"""


def test_a_returned_accumulator_read_as_a_tensor_is_the_tensor_it_accumulates():
    # ``.data`` exists only on a tensor: the run that reaches it had the loop run.
    assert _lines(EPISODE) == [14]


def test_a_number_or_a_tensor_is_unknown_to_every_other_question():
    from torchlint.analysis.inference import NUMBER, TENSOR, Kind, Value, meet

    either = meet((NUMBER, Value(Kind.TENSOR, scalar=True)))
    assert either.kind is Kind.UNKNOWN and either.unless_number == Value(Kind.TENSOR, scalar=True)
    assert meet((either, TENSOR)).unless_number == TENSOR  # no longer known 0-dim
    assert meet((either, Value(Kind.MODULE))).unless_number is None


def test_a_number_or_a_tensor_survives_the_summary_cache():
    from torchlint.analysis.inference import NUMBER, Kind, Value, meet
    from torchlint.analysis.summaries import decode, encode

    either = meet((NUMBER, Value(Kind.TENSOR, scalar=True, loss=True)))
    assert decode(json.loads(json.dumps(encode(either)))) == either


def test_torch_autograd_backward_of_a_list_holding_the_total_differentiates_it():
    source = """\
    import torch
    import torch.autograd as autograd
    mse = torch.nn.MSELoss()


    def finish_episode(values, rewards):
        value_loss = 0
        for value, reward in zip(values, rewards):
            value_loss += mse(value, reward)
        nodes = [value_loss]
        autograd.backward(nodes, [torch.ones(1)])
    """
    assert _lines(source, "TL209") == []
    assert _lines(source.replace("autograd.backward(nodes, [torch.ones(1)])", "print(nodes)"), "TL209") == [9]


# -- dimensions: an element of a tensor of known rank ---------------------------------

RANKS = """\
import torch


def ranks(source, n, mask):
    ys, ix = torch.sort(torch.randn(3, 4), 1, True)
    for c in range(3):
        for q in range(2):
            print(ys[q, c].data[0])
    a = torch.zeros(4)
    print(a[1].data[0])
    b = torch.zeros(4, 5)
    print(b[1].data[0])
    print(b.sum(1)[0].data[0])
    print(b.max(1)[0][2].data[0])
    print(torch.Tensor([1, 2, 3])[0].data[0])
    print(torch.Tensor(3, 2)[0].data[0])
    print(torch.LongTensor(5)[0].data[0])
    for row in b:
        print(row.data[0])
    for value in a:
        print(value.data[0])
    flat = source.abs().view(-1)
    print(flat[int(n * 2)].data[0])
    print(flat[mask].data[0])
    print(torch.abs(a, out=b)[0].data[0])
"""


def test_an_element_of_a_tensor_of_known_rank_is_0_dim():
    assert _lines(RANKS) == [8, 10, 13, 14, 15, 17, 21, 23]


def test_the_flagged_ranks_raise_index_error_on_torch():
    torch = pytest.importorskip("torch")  # a torch run: skipped where torch is not installed

    b = torch.zeros(4, 5)
    ys, _ = torch.sort(torch.randn(3, 4), 1, True)
    for zero_dim in (ys[0, 1], torch.zeros(4)[1], b.sum(1)[0], b.max(1)[0][2], torch.Tensor([1, 2])[0],
                     torch.LongTensor(5)[0], next(iter(torch.zeros(4))), torch.randn(3).abs().view(-1)[1]):
        try:
            zero_dim.data[0]
        except IndexError:
            continue
        raise AssertionError(f"{zero_dim!r} has an element 0")
    for not_zero_dim in (b[1], torch.Tensor(3, 2)[0], next(iter(b))):
        not_zero_dim.data[0]  # a row: its first element


def test_a_comprehension_binds_its_target_like_a_for_statement():
    source = """\
    import torch


    def one_hot_targets(source, n):
        targets = source.view(-1)  # view(-1): only a tensor takes sizes
        rows = [t.data[0] for t in targets]
        names = [name.data[0] for name in n]
        return rows, names
    """
    assert _lines(source) == [6]


SPLIT_LOSS = """\
import torch
import torch.nn as nn


class SplitLoss(nn.Module):
    def forward(self, weight, hiddens, targets):
        total_loss = None
        for chunk in hiddens.split(2):
            entropy = -torch.log_softmax(chunk, dim=-1)
            total_loss = entropy.float().sum() if total_loss is None else total_loss + entropy.float().sum()
        return (total_loss / len(targets)).type_as(weight)


if __name__ == "__main__":
    crit = SplitLoss()
    c = crit(torch.ones(3), torch.ones(4, 3), torch.ones(4))
    print(c.exp().data[0])
"""


def test_a_total_started_as_none_is_the_tensor_a_tensor_only_method_proves():
    # ``type_as``: neither None nor a number has it; ``None + x`` raises, so that
    # branch adds nothing to what the bindings agree on.
    assert _lines(SPLIT_LOSS) == [17]


def test_a_number_method_proves_nothing():
    assert _lines(SPLIT_LOSS.replace(").type_as(weight)", ").conjugate()")) == []


def test_a_softmax_subclass_built_without_dim_warns_under_torch():
    # TL204's flagged example runs into torch's implicit-dimension warning.
    import warnings

    torch = pytest.importorskip("torch")  # a torch run: skipped where torch is not installed
    import torch.nn as nn

    class Bottle(object):
        def forward(self, input):
            size = input.size()
            out = super(Bottle, self).forward(input.view(size[0] * size[1], -1))
            return out.view(size[0], size[1], -1)

    class BottleSoftmax(Bottle, nn.Softmax):
        pass

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        BottleSoftmax()(torch.randn(2, 3, 4))
    assert any("Implicit dimension" in str(w.message) for w in caught)


# -- a per-element loss is no 0-dim tensor (issue 34: .item() would raise) -----------

PER_ELEMENT = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


def losses(out, y, target):
    a = F.mse_loss(out, y, None, False)
    print(a.data[0])
    b = nn.L1Loss(None, False)(out, y)
    print(b.data[0])
    c = nn.CrossEntropyLoss(None, None, -100, False)(out, target)
    print(c.data[0])
    d = F.mse_loss(out, y)
    print(d.data[0])
    e = nn.L1Loss(None, True)(out, y)
    print(e.data[0])
"""


def test_reduce_false_passed_by_position_is_a_per_element_loss():
    assert _lines(PER_ELEMENT) == [14, 16]


def test_a_loss_module_whose_reduction_is_set_later_is_not_known_to_reduce():
    source = """\
    import torch.nn as nn


    def evaluate(out, y):
        criterion = nn.MSELoss()
        criterion.reduction = "none"
        loss = criterion(out, y)
        print(loss.data[0])
    """
    assert _lines(source) == []
    kept = "".join(line for line in source.splitlines(True) if "reduction" not in line)
    assert _lines(kept) == [7]


def test_the_per_element_losses_have_more_than_one_element_under_torch():
    import warnings

    torch = pytest.importorskip("torch")  # a torch run: skipped where torch is not installed
    import torch.nn as nn
    import torch.nn.functional as F

    out, y, target = torch.randn(3, 4), torch.randn(3, 4), torch.tensor([0, 1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the legacy arguments warn
        for value in (F.mse_loss(out, y, None, False), nn.L1Loss(None, False)(out, y),
                      nn.CrossEntropyLoss(None, None, -100, False)(out, target)):
            assert value.dim() > 0 and value.numel() > 1  # .item() would raise


def test_tl215_asks_the_engine_for_the_rank_of_an_element():
    source = """\
    import torch


    def scores():
        x = torch.randn(4, 5, 6)
        rows = x[0]  # 2-D: torch.dot raises
        flat = x.sum(0).view(-1)  # 1-D
        return torch.dot(rows, rows), torch.dot(flat, flat), torch.dot(x[0][0], x[1][1])
    """
    assert _lines(source, "TL215") == [8]  # the first dot (one finding for the call)


def test_the_dot_of_a_2_d_element_raises_under_torch():
    torch = pytest.importorskip("torch")  # a torch run: skipped where torch is not installed

    x = torch.randn(4, 5, 6)
    try:
        torch.dot(x[0], x[0])
    except RuntimeError:
        return
    raise AssertionError("torch.dot of 2-D tensors ran")


TOP_LEVEL_CALLER = """\
import torch.nn.functional as F


def train_epoch(model, batches):
    running = 0
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        running += loss
    return running / len(batches)


if __name__ == "__main__":
    average = train_epoch(None, [])
    print(float(average))
"""


def test_a_returned_total_whose_top_level_caller_only_prints_it_is_flagged():
    # The caller is the module's own code (no def around it): it differentiates nothing.
    assert _lines(TOP_LEVEL_CALLER, "TL209") == [9]
    differentiated = TOP_LEVEL_CALLER.replace("    print(float(average))", "    average.backward()")
    assert _lines(differentiated, "TL209") == []


def test_a_module_level_def_that_differentiates_the_global_result_counts():
    source = TOP_LEVEL_CALLER.replace(
        '    print(float(average))', '    step()').replace(
        'if __name__', 'def step():\n    average.backward()\n\n\nif __name__')
    assert _lines(source, "TL209") == []


# -- parameters of a scripts folder's helper module take its neighbours' calls -------

HELPER = """\
import sys


class Logger:
    def __init__(self, epochs):
        self.epochs = epochs
        self.totals = {}

    def log(self, losses=None, epoch=0):
        for name in losses.keys():
            self.totals[name] = self.totals.get(name, 0) + losses[name].data[0]
            sys.stdout.write('%s %.4f' % (name, self.totals[name]))


def evaluate(model, criterion, batches):
    total = 0
    for inputs, targets in batches:
        total += criterion(model(inputs), targets).data[0]
    return total
"""

GAN_SCRIPT = """\
import torch
import torch.nn.functional as F
from utils import *

model = torch.nn.Linear(2, 2)
logger = Logger(10)
for epoch in range(10):
    x = torch.randn(4, 2)
    loss_G = F.mse_loss(model(x), x)
    loss_G.backward()
    logger.log({'loss_G': loss_G}, epoch=epoch)
"""

EVAL_SCRIPT = """\
import torch
import utils

criterion = torch.nn.MSELoss()
print(utils.evaluate(torch.nn.Linear(2, 2), criterion, []))
"""

TRAIN_SCRIPT = """\
import torch
from utils import evaluate


def train(model):
    crit = torch.nn.L1Loss()
    return evaluate(model, crit, [])
"""


def _folder_lines(folder, files, code="TL101", cached=False, options=(), fixes=False, paths=(".",)):
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(textwrap.dedent(text))
    cache = ["--cache-dir", str(folder / ".cache")] if cached else ["--no-cache"]
    result = subprocess.run(
        [sys.executable, "-m", "torchlint.frontends.cli", "--isolated", *cache, *options, "--output-format", "json",
         "--exit-zero", "--select", code, *paths], cwd=folder, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    if fixes:
        return sorted((item["filename"].rsplit("/", 1)[-1], item["location"]["row"],
                       item["fix"]["edits"][0]["content"] if item.get("fix") else None)
                      for item in json.loads(result.stdout))
    return sorted((item["filename"].rsplit("/", 1)[-1], item["location"]["row"])
                  for item in json.loads(result.stdout))


SCRIPTS_FOLDER = {"utils.py": HELPER, "cyclegan.py": GAN_SCRIPT, "eval.py": EVAL_SCRIPT, "train.py": TRAIN_SCRIPT}


def test_a_helper_module_s_parameters_take_what_the_scripts_beside_it_pass(tmp_path):
    # Logger.log's ``losses`` is the dict cyclegan.py passes (0-dim losses); evaluate's
    # ``criterion`` is a loss module in both eval.py and train.py's def.
    assert _folder_lines(tmp_path, SCRIPTS_FOLDER) == [("utils.py", 11), ("utils.py", 18)]


REPLAY = "import json\nfrom utils import Logger\nLogger(1).log(json.load(open('losses.json')))\n"


def test_one_neighbour_passing_something_unknown_leaves_the_parameter_unknown(tmp_path):
    files = dict(SCRIPTS_FOLDER, **{"replay.py": REPLAY})
    assert _folder_lines(tmp_path, files) == [("utils.py", 18)]


def test_a_method_called_on_a_receiver_of_unknown_class_counts_what_it_passes(tmp_path):
    # ``make_logger()`` may be a Logger: what its ``log`` call passes is one more value
    # ``losses`` may hold. A dict of 1-D tensors: its values are no longer known 0-dim.
    plot = "import torch\nimport utils\nutils.make_logger().log({'lr': torch.ones(3)})\n"
    assert _folder_lines(tmp_path, dict(SCRIPTS_FOLDER, **{"plot.py": plot})) == [("utils.py", 18)]
    # A dict of numbers: ``losses[name].data`` raises on a number, so a run that gets past
    # it had cyclegan.py's 0-dim losses.
    plot = "import utils\nutils.make_logger().log({'lr': 0.1})\n"
    assert _folder_lines(tmp_path, dict(SCRIPTS_FOLDER, **{"plot.py": plot})) == [("utils.py", 11), ("utils.py", 18)]


def test_a_function_handed_on_as_a_value_by_a_neighbour_leaves_it_unknown(tmp_path):
    files = dict(SCRIPTS_FOLDER, **{"hooks.py": "from utils import evaluate\nHOOKS = [evaluate]\n"})
    assert _folder_lines(tmp_path, files) == [("utils.py", 11)]


def test_a_module_the_folder_ships_to_other_projects_may_be_called_from_anywhere(tmp_path):
    files = dict(SCRIPTS_FOLDER, **{"setup.py": "from setuptools import setup\nsetup(py_modules=['utils'])\n"})
    assert _folder_lines(tmp_path, files) == []


def test_a_module_of_a_package_may_be_imported_from_anywhere(tmp_path):
    files = dict(SCRIPTS_FOLDER, **{"__init__.py": ""})
    assert _folder_lines(tmp_path, files) == []


def test_a_neighbour_added_later_is_seen_by_a_cached_run(tmp_path):
    assert _folder_lines(tmp_path, SCRIPTS_FOLDER, cached=True) == [("utils.py", 11), ("utils.py", 18)]
    assert _folder_lines(tmp_path, {"replay.py": REPLAY}, cached=True) == [("utils.py", 18)]


# -- a file another script of the folder saves (TL203, TL214) ------------------------

PREPROCESS = """\
import torch


class Vocab:
    def __init__(self, words):
        self.itos = list(words)


def build_index(lines):
    word2idx = {"<pad>": 0}
    for line in lines:
        for word in line.split():
            if word not in word2idx:
                word2idx[word] = len(word2idx)
    return word2idx


def main():
    index = build_index(open("corpus.txt"))
    torch.save({"word2idx": index, "size": len(index)}, "data/index.pt")
    torch.save(Vocab(index), "data/vocab.pt")
"""

LOADING_SCRIPT = """\
import torch


def main(model):
    if torch.cuda.is_available():
        model.cuda()
    index = torch.load("data/index.pt")
    vocab = torch.load(os.path.join(args.data, "vocab.pt"))
    state = torch.load("data/model.pt")
    return index, vocab, state
"""


def test_a_file_the_script_beside_it_saves_numbers_into_holds_no_gpu_tensor(tmp_path):
    # index.pt: a dict of numbers (``word2idx[word] = len(word2idx)``) written by
    # preprocess.py; vocab.pt: an instance of a project class (may hold anything);
    # model.pt: nobody in the folder saves it.
    files = {"preprocess.py": PREPROCESS, "train.py": LOADING_SCRIPT}
    assert _folder_lines(tmp_path, files, "TL203") == [("train.py", 8), ("train.py", 9)]


@pytest.mark.parametrize("change", [
    ('word2idx[word] = len(word2idx)', 'word2idx[word] = torch.tensor(len(word2idx)).cuda()'),  # GPU tensors in it
    ('    torch.save(Vocab', '    torch.save(torch.nn.Linear(2, 2).cuda().state_dict(), "data/index.pt")\n'
                           '    torch.save(Vocab'),  # a second save to the same name, a GPU state
])
def test_a_file_the_script_beside_it_may_save_gpu_tensors_into_stays_flagged(tmp_path, change):
    files = {"preprocess.py": PREPROCESS.replace(*change), "train.py": LOADING_SCRIPT}
    assert _folder_lines(tmp_path, files, "TL203") == [("train.py", 7), ("train.py", 8), ("train.py", 9)]


def test_a_neighbour_that_cannot_be_read_leaves_the_file_unknown(tmp_path):
    files = {"preprocess.py": PREPROCESS, "train.py": LOADING_SCRIPT,
             "export.py": "torch.save(model 'data/index.pt')\n"}
    assert _folder_lines(tmp_path, files, "TL203", paths=["train.py"]) == [("train.py", 7), ("train.py", 8), ("train.py", 9)]


def test_weights_only_follows_what_the_script_beside_it_saves(tmp_path):
    files = {"preprocess.py": PREPROCESS, "train.py": LOADING_SCRIPT}
    # On torch 2.6+ only the pickled Vocab breaks: it needs weights_only=False.
    assert _folder_lines(tmp_path, files, "TL214", options=["--torch-version", "2.6"], fixes=True) == [
        ("train.py", 8, ", weights_only=False")]
    # Under a 2.0 floor each load is flagged, and fixed from the neighbour's save; model.pt is unknown.
    assert _folder_lines(tmp_path, files, "TL214", options=["--torch-version", "2.0"], fixes=True) == [
        ("train.py", 7, ", weights_only=True"), ("train.py", 8, ", weights_only=False"), ("train.py", 9, None)]
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "TL214", "--torch-version",
                             "2.6", "train.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert [line.split(":")[1] for line in flake8.stdout.splitlines()] == ["8"], flake8.stdout + flake8.stderr


def test_a_cached_run_sees_the_neighbour_s_save_change(tmp_path):
    files = {"preprocess.py": PREPROCESS, "train.py": LOADING_SCRIPT}
    options = ["--torch-version", "2.6"]
    assert _folder_lines(tmp_path, files, "TL214", cached=True, options=options) == [("train.py", 8)]
    changed = {"preprocess.py": PREPROCESS.replace("torch.save(Vocab(index)", "torch.save(list(index)")}
    assert _folder_lines(tmp_path, changed, "TL214", cached=True, options=options) == []


# -- stores into a container's elements ----------------------------------------------

SUMMARIES = """\
import torch.nn.functional as F


class Network:
    def __init__(self):
        self._losses = {}
        self._summaries = {}

    def add_losses(self, scores, labels):
        self._losses['cross_entropy'] = F.cross_entropy(scores, labels)
        for k in self._losses.keys():
            self._summaries[k]['value'] = self._losses[k]

    def setup(self, names, placeholder):
        for key in names:
            self._summaries[key] = {'placeholder': placeholder(key)}

    def feed(self):
        return {s['placeholder']: s['value'].data[0] for s in self._summaries.values()}
"""


def test_a_key_stored_into_each_element_of_a_dict_attribute_holds_what_went_in():
    assert _lines(SUMMARIES) == [19]


def test_a_store_into_an_element_under_another_key_leaves_the_key_read_unknown():
    assert _lines(SUMMARIES.replace("s['value'].data[0]", "s['placeholder'].data[0]")) == []


def test_an_element_filled_by_a_method_call_is_unknown():
    source = SUMMARIES.replace("            self._summaries[k]['value'] = self._losses[k]\n",
                               "            self._summaries[k]['value'] = self._losses[k]\n"
                               "            self._summaries[k].update(extra)\n")
    assert _lines(source) == []


def test_a_store_of_a_number_under_a_key_the_element_had_makes_it_either():
    # Before the store the element held a loss under 'value'; after it, a number: either,
    # and ``.data`` is only the loss's (a number has none), read before the store anyway.
    source = """\
    import torch.nn.functional as F


    def report(pairs):
        stats = {}
        for name, (a, b) in pairs.items():
            stats[name] = {'value': F.mse_loss(a, b)}
        for name in stats:
            print(stats[name]['value'].data[0])
            stats[name]['value'] = 0.0
    """
    assert _lines(source) == [9]
    assert _lines(source.replace(".data[0]", ".item()")) == []


# -- where a tensor lives: operations keep their inputs' device; modules move in place ---

GATED_GPU = """\
import torch
import torch.nn as nn

model = nn.Linear(4, 3)
if torch.cuda.is_available():
    model.cuda()
x = torch.randn(2, 4)
if torch.cuda.is_available():
    x = x.cuda()
out = model(x)
print(out[0].data.numpy())
print(torch.softmax(out, 1).numpy())
print(torch.cat([torch.zeros(1, 3, device="cuda"), out.detach()]).numpy())
"""


def test_a_module_moved_under_the_availability_test_computes_on_the_gpu():
    assert _lines(GATED_GPU, "TL202") == [11, 12, 13]


def test_a_module_moved_back_before_the_call_computes_on_the_cpu():
    source = GATED_GPU.replace("x = torch.randn(2, 4)\n", "model.cpu()\nx = torch.randn(2, 4)\n")
    assert _lines(source, "TL202") == [14]  # only the explicit cuda factory's concatenation


def test_a_tensor_s_cuda_statement_moves_nothing():
    source = """\
    import torch

    x = torch.randn(2, 4)
    x.cuda()
    y = torch.softmax(x, 1)
    print(y.numpy())
    """
    assert _lines(source, "TL202") == []


def test_an_operation_on_a_tensor_brought_back_to_the_cpu_is_on_the_cpu():
    source = """\
    import torch

    x = torch.randn(2, 4).cuda()
    print(torch.softmax(x.cpu(), 1).numpy())
    print(torch.nn.functional.relu(x.cpu()).numpy())
    """
    assert _lines(source, "TL202") == []


def test_a_script_helper_s_parameter_takes_the_cuda_outputs_its_calls_pass():
    source = """\
    import torch


    def to_np(t):
        return t.data.numpy()


    if __name__ == "__main__":
        net = torch.nn.Linear(2, 2).cuda()
        print(to_np(net(torch.randn(1, 2).cuda())))
    """
    assert _lines(source, "TL202") == [5]
    assert _lines(source.replace(".cuda()", ""), "TL202") == []


# -- a callee whose result the file differentiates returns one-element tensors ----------

TRAIN_AND_EVAL = """\
from losses import make_loss


class Trainer:
    def __init__(self):
        self.crit = make_loss()
        self.metric = make_metric()

    def train(self, loader, model):
        for x, y in loader:
            loss = self.crit(model(x), y)
            loss.backward()

    def evaluate(self, loader, model):
        total = 0
        for x, y in loader:
            loss = self.crit(model(x), y)
            total += loss.data[0]
            score = self.metric(model(x), y)
            total += score.data[0]
        return total
"""


def test_the_eval_loop_s_loss_from_the_criterion_the_train_loop_differentiates_is_0_dim():
    assert _lines(TRAIN_AND_EVAL) == [18]


def test_a_criterion_named_alike_in_two_functions_is_the_same_callee():
    source = """\
    import torch
    from losses import build

    criterion = build()


    def train(model, x, y):
        loss = criterion(model(x), y)
        loss.backward()


    def evaluate(model, x, y):
        loss = criterion(model(x), y)
        return loss.data[0]


    def other(model, x, y, criterion):
        loss = criterion(model(x), y)
        return loss.data[0]
    """
    assert _lines(source) == [14]


THIRD_PARTY_LOSS = """\
from pytorch_metric_learning import losses

criterion = losses.TripletMarginLoss(margin=0.1)


def train(model, loader, optimizer):
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def evaluate(model, loader):
    total = 0
    for x, y in loader:
        loss = criterion(model(x), y)
        total += loss.data[0]
    return total


class Trainer:
    def __init__(self, model):
        self.model = model
        self.crit = losses.ArcFaceLoss(10, 128)

    def step(self, x, y):
        loss = self.crit(self.model(x), y)
        loss.backward()

    def validate(self, x, y):
        loss = self.crit(self.model(x), y)
        return loss.data[0]
"""


@pytest.mark.parametrize("change, flagged", [
    (None, [18, 33]),
    # The train loop passes a gradient: nothing says the loss has one element.
    (("loss.backward()", "loss.backward(torch.ones(1))"), []),
    # The train loop's criterion is its own local name: another callee.
    (("        loss = criterion(model(x), y)\n        optimizer", "        criterion = make()\n"
      "        loss = criterion(model(x), y)\n        optimizer"), [34]),  # (a line added above)
    # The eval loop's criterion is a parameter: each call may be given another loss.
    (("def evaluate(model, loader):", "def evaluate(model, loader, criterion):"), [33]),
])
def test_a_third_party_loss_the_train_loop_differentiates_is_0_dim_in_the_eval_loop(tmp_path, change, flagged):
    """Through the real command and flake8, which cut the defs and methods without
    a candidate (the train loop) from the text they analyse: the evidence comes
    from the whole file's tree (``outline.differentiated_callees``)."""
    source = THIRD_PARTY_LOSS if change is None else THIRD_PARTY_LOSS.replace(*change)
    assert _folder_lines(tmp_path, {"m.py": source}) == [("m.py", line) for line in flagged]
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "TL101", "m.py"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert [int(line.split(":")[1]) for line in flake8.stdout.splitlines()] == flagged, flake8.stderr


@pytest.mark.parametrize("body, flagged", [
    # The binding the read sees is a call of the callee whose result the backward
    # differentiates (the number binding before it is overwritten).
    ("    loss = 0\n    loss += model(x)\n    loss = compute_loss(x)\n    loss.backward()\n"
     "    return loss.data[0]\n", [9]),
    # Rebound after the backward: the read sees another value.
    ("    loss = 0\n    loss = compute_loss(x)\n    loss.backward()\n    loss = model(x)\n"
     "    return loss.data[0]\n", []),
    # A gradient passed: the differentiated value may have any shape.
    ("    loss = 0\n    loss = compute_loss(x)\n    loss.backward(torch.ones(2))\n    return loss.data[0]\n", []),
])
def test_a_read_dominated_by_a_call_of_a_differentiated_callee_is_0_dim(body, flagged):
    source = "import torch\n\n\ndef train(model, x):\n" + body
    assert _lines(source) == flagged


@pytest.mark.parametrize("module_code, flagged", [
    ("loss = 0\nloss = losses.compute_loss(x)\nprint(loss.data[0])\n", [8]),  # the callee train() differentiates
    ("loss = model(x)\nif c: loss = F.mse_loss(a, b)\nprint(loss.data[0])\n", []),  # one branch only
    ("loss = model(x)\nloss = F.mse_loss(a, b)\nprint(loss.data[0])\n", [8]),  # the last binding dominates
    ("loss = F.mse_loss(a, b)\nfor x in xs:\n    print(loss.data[0])\n    loss = model(x)\n", []),  # round the loop
])
def test_module_level_code_reads_the_binding_that_dominates_it(module_code, flagged):
    """Module-level code is a block like a def's (notebooks converted to scripts
    keep their training code there); ``losses.compute_loss`` is the callee the
    train function differentiates, though ``losses`` is never imported."""
    # The stand-ins are imported: a name nothing binds would make its assignment never complete.
    source = ("import torch\nimport torch.nn.functional as F\nfrom nets import model, x, xs, a, b, c\n\n\n" + module_code
              + "\n\ndef train(model, x):\n    loss = losses.compute_loss(model(x))\n    loss.backward()\n")
    assert _lines(source) == flagged


def test_a_quotient_differentiated_says_nothing_of_the_callee_s_shape():
    # A custom loss returning FloatTensor([total]) is one element and 1-D: its
    # quotient passes ``.backward()``, and ``.data[0]`` of it works.
    source = """\
    import torch
    from ctc import CTC

    criterion = CTC()


    def train(out, target, n):
        loss = criterion(out, target)
        loss = loss / n
        loss.backward()
        return loss.data[0]


    def evaluate(out, target):
        cost = criterion(out, target)
        return cost.data[0]
    """
    assert _lines(source) == []
    direct = source.replace("        loss = loss / n\n", "")
    assert _lines(direct) == [10, 15]


@pytest.mark.parametrize("read, flagged", [
    ("float(max_val.data.cpu().numpy()[0])", [9]),  # only a tensor's .data has .cpu(): a 0-dim one
    ("max_val.data.numpy()[0]", [9]),
    ("max_val.data[0]", [9]),  # a NumPy scalar's .data refuses [0] too; pandas >= 1.0 has no Series.data
])
def test_a_full_reduction_of_an_unknown_value_is_0_dim_where_the_code_proves_a_tensor(read, flagged):
    source = f"""\
    from torch.autograd import Variable


    def linear_quantize(input, bits):
        if bits == 1:
            return input
        min_val, max_val = input.min(), input.max()
        if isinstance(min_val, Variable):
            max_val = {read}
        return max_val
    """
    assert _lines(source) == flagged


def test_a_rebinding_under_an_if_does_not_come_round_to_a_read_before_it():
    # ``v = v.data.cpu().numpy()[0]`` reads the binding before the if: an
    # element of a sorted 1-D tensor. Only a loop body is run again.
    source = """\
    from torch.autograd import Variable


    def compute_integral_part(input, overflow_rate):
        sorted_value = input.abs().view(-1).sort(dim=0, descending=True)[0]
        v = sorted_value[int(overflow_rate * len(sorted_value))]
        if isinstance(v, Variable):
            v = v.data.cpu().numpy()[0]
        for step in range(3):
            print(v.data[0])
            v = input.sum(1)
        return v
    """
    assert _lines(source) == [8]


# -- an element of a tensor as a dict key (TL217) -------------------------------------

def test_a_decoded_index_looked_up_in_a_vocabulary_dict_attribute_is_a_tensor_key():
    source = """\
    import torch


    class Lang:
        def __init__(self):
            self.index2word = {0: "SOS", 1: "EOS"}


    def decode(lang, scores):
        topv, topi = torch.randn(1, 5).topk(1)
        ni = topi[0][0]
        words = list(lang.index2word.values())
        return Lang().index2word[ni], words[ni]
    """
    assert _lines(source, "TL217") == [13]


# -- what the code does to a value proves a tensor (fifth round) ----------------------

@pytest.mark.parametrize("first, second, flagged", [
    ("    loss.backward()\n", "    loss.backward()\n", [4, 7]),  # each binding differentiated: 0-dim
    # Differentiated or not, a full reduction's ``.data[0]`` works on none of torch >= 0.4,
    # NumPy (a scalar's ``.data`` refuses any index) and pandas >= 1.0 (no ``Series.data``).
    ("    loss.backward()\n", "", [4, 6]),
    ("", "", [3, 5]),
])
def test_a_full_reduction_the_code_differentiates_is_0_dim(first, second, flagged):
    source = ("def check(result_a, result_b):\n"
              "    loss = result_a.pow(2).sum()\n"
              f"{first}"
              "    print(loss.data[0])\n"
              "    loss = result_b.pow(2).sum()\n"
              f"{second}"
              "    print(loss.data[0])\n")
    assert _lines(source) == flagged


def test_a_rebinding_after_the_backward_is_not_differentiated():
    source = """\
    def check(result_a, frame):
        loss = result_a.pow(2).sum()
        loss.backward()
        loss = frame.pow(2)
        print(loss.data[0])
    """
    assert _lines(source) == []


LEGACY_FUNCTION = """\
import torch


class ForgetMult(torch.autograd.Function):
    def forward(self, f, x):
        result = f.new(x.size(0) + 1, x.size(1))
        self.save_for_backward(f, x)
        return result[1:, :]


class Pair(torch.autograd.Function):
    def forward(self, f, x):
        return f.new(1), x.new(1)


a = torch.rand(3, 4)
out = ForgetMult()(a, a)
print(out.abs().sum().data[0])
first, second = Pair()(a, a)
print((first - second).data[0])
"""


def test_an_instance_of_an_old_style_autograd_function_called_gives_a_tensor():
    # ``Fn()(x)`` runs ``forward``: only tensors come out of it. A tuple display gives a
    # tuple, whose parts stay unknown.
    assert _lines(LEGACY_FUNCTION) == [18]


def test_a_class_imported_both_ways_a_try_except_import_spells_it_is_followed(tmp_path):
    files = {
        "forget_mult.py": LEGACY_FUNCTION.split("\n\n\na = ")[0] + "\n",
        # ``out.pin_memory()`` alone is a lost copy of a tensor (TL201), nothing known of anything else.
        "qrnn.py": ("try:\n    from forget_mult import ForgetMult\n"
                    "except ImportError:\n    from .forget_mult import ForgetMult\n\n\n"
                    "def difference(f, x):\n"
                    "    out = ForgetMult()(f, x)\n"
                    "    out.pin_memory()\n"
                    "    return out\n"),
    }
    assert _folder_lines(tmp_path, files, code="TL201") == [("qrnn.py", 9)]
    files["qrnn.py"] = files["qrnn.py"].replace("from .forget_mult import", "from .other import")
    assert _folder_lines(tmp_path, files, code="TL201") == []  # two modules: either class may be called


COMMAND_LINE = """\
import argparse
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument('--div-flow', type=float, default=20)
args, _ = parser.parse_known_args()


def train(output, target, weight):
    epe = args.div_flow * F.l1_loss(output, target)
    print(epe.data[0])
    scaled = weight * F.l1_loss(output, target)
    print(scaled.data[0])
"""


def test_a_command_line_option_times_a_0_dim_loss_is_0_dim():
    # ``args.div_flow`` is what the command line gave, never a tensor; ``weight`` may be
    # one of any shape.
    assert _lines(COMMAND_LINE) == [11]


def test_options_from_another_parser_class_are_unknown():
    source = COMMAND_LINE.replace("argparse.ArgumentParser()", "make_parser()")
    assert _lines(source) == []


TRAINER = """\
import torch.nn as nn
import torch.nn.functional as F


class RVAE(nn.Module):
    def trainer(self, optimizer):
        def train(logits, target):
            cross_entropy = F.cross_entropy(logits, target)
            return cross_entropy, logits.sum(1)
        return train
"""

TRAIN_SCRIPT_OF_TRAINER = """\
from model import RVAE

model = RVAE()
train_step = model.trainer(None)
cross_entropy, per_row = train_step(logits, target)
print(cross_entropy.data.cpu().numpy()[0], per_row.data.cpu().numpy()[0])
"""


def test_a_step_function_a_method_returns_gives_what_it_returns(tmp_path):
    # ``train`` is nested in ``trainer``: calling what ``trainer`` returns runs it. Its
    # second result is a row per sample, still indexable.
    assert _folder_lines(tmp_path, {"model.py": TRAINER, "train.py": TRAIN_SCRIPT_OF_TRAINER}) == [("train.py", 6)]


def test_a_nested_def_called_where_it_is_defined_gives_what_it_returns():
    source = """\
    import torch.nn.functional as F


    def main(batches):
        def loss_fn(logits, target):
            return F.nll_loss(logits, target), logits.mean(1)

        for logits, target in batches:
            nll, mean = loss_fn(logits, target)
            print(nll.data[0], mean.data[0])
    """
    assert _lines(source) == [10]


def test_a_nested_def_rebound_to_something_else_is_unknown():
    source = """\
    import torch.nn.functional as F


    def main(batches, custom):
        def loss_fn(logits, target):
            return F.nll_loss(logits, target)

        if custom:
            loss_fn = custom
        for logits, target in batches:
            print(loss_fn(logits, target).data[0])
    """
    assert _lines(source) == []


def test_an_option_spelled_like_requires_grad_is_the_program_s_own_attribute():
    # TL211 asks whether an assigned attribute could be a tensor's misspelled requires_grad;
    # an argparse namespace never holds tensors.
    source = COMMAND_LINE + "\nargs.require_grad = False\n"
    assert _lines(source, "TL211") == []
    assert _lines(source.replace("args.require_grad", "weight.require_grad"), "TL211") == [15]


@pytest.mark.parametrize("saved, weights_only", [
    ("args", None),  # an argparse.Namespace: weights_only=True refuses it, so no fix says True
    ("{'state_dict': model.state_dict(), 'args': args}", None),
    ("model.state_dict()", "True"),
])
def test_the_parsed_command_line_saved_is_not_weights(tmp_path, saved, weights_only):
    files = {"train.py": f"""\
import argparse
import torch

parser = argparse.ArgumentParser()
args = parser.parse_args()
model = torch.nn.Linear(2, 2)
torch.save({saved}, 'checkpoint.pt')
state = torch.load('checkpoint.pt')
"""}
    found = _folder_lines(tmp_path, files, code="TL214", fixes=True)
    assert len(found) == 1 and found[0][:2] == ("train.py", 8)
    fix = found[0][2]
    if weights_only is None:
        assert fix is None or "weights_only=True" not in fix
    else:
        assert fix is not None and f"weights_only={weights_only}" in fix


def test_a_method_summing_losses_into_a_number_gives_a_tensor():
    # ``loss = 0`` then ``loss += criterion(...)``: the method returns a tensor unless a
    # number; the project's answer about the method kept that (it said "unknown" before).
    source = """\
    import torch.nn as nn


    class Generator(nn.Module):
        def batch_nll(self, inp, target):
            loss_fn = nn.NLLLoss()
            loss = 0
            for i in range(inp.size(0)):
                loss += loss_fn(inp[i], target[i])
            return loss


    gen = Generator()
    print((gen.batch_nll(None, None) / 20).data[0])
    """
    assert _lines(source) == [14]


def test_a_full_reduction_of_an_unknown_value_has_no_element_0():
    # A tensor's is 0-dim since torch 0.4; a NumPy scalar's ``.data`` refuses any index.
    source = """\
    def log_reward(R, log_value, step):
        log_value('avg_reward', R.mean().data[0], step)
        log_value('first_row', R.mean(0).data[0], step)
    """
    assert _lines(source) == [2]


OPAQUE_PACKAGE_LOSS = """\
import torch
from torch.autograd import Variable
{import_line}


def train(model, loader, optimizer):
    for data, target in loader:
        optimizer.zero_grad()
        output = model(Variable(data))
        loss = bioloss.dice_loss(output, Variable(target))
        loss.backward()
        optimizer.step()
        print(loss.data[0])
"""


@pytest.mark.parametrize("import_line, flagged", [
    # A package the project does not hold and torchlint does not know (torchbiomed, 2017):
    # its loss may be ``torch.FloatTensor(1)``, one element but one dimension, so
    # ``.backward()`` proves no 0-dim tensor.
    ("import torchbiomed.loss as bioloss", []),
    # The project's own module: computed by torch's reductions, 0-dim since torch 0.4.
    ("import losses as bioloss", [("train.py", 13)]),
])
def test_a_differentiated_loss_from_a_package_nothing_reads_is_one_element_not_0_dim(
        tmp_path, import_line, flagged):
    files = {"train.py": OPAQUE_PACKAGE_LOSS.format(import_line=import_line),
             "losses.py": "def dice_loss(output, target):\n    return ((output - target) ** 2).sum()\n"}
    assert _folder_lines(tmp_path, files) == flagged


def test_a_full_reduction_of_an_unknown_value_divided_by_numbers_keeps_its_0_dim_if_a_tensor():
    # ``neg_log_p.sum() / (target.size(0) * target.size(1))`` returned from a helper: a
    # tensor's quotient is 0-dim, a NumPy scalar's stays a scalar; a row of it is not.
    source = """\
    def nll_gaussian(preds, target, variance):
        neg_log_p = log_density(preds, target, variance)
        return neg_log_p.sum() / (target.size(0) * target.size(1))


    def per_row(preds, target):
        return preds.sum(1) / target.size(0)


    def report(output, target):
        print(nll_gaussian(output, target, 5e-5).data[0])
        print(per_row(output, target).data[0])
    """
    assert _lines(source) == [11]


CONSTRUCTED_TRAINER = {
    "config.py": """\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument('--gamma', type=float, default=0.5)


def get_config():
    config, unparsed = parser.parse_known_args()
    return config, unparsed
""",
    "trainer.py": """\
import torch
from torch import nn


class Trainer(object):
    def __init__(self, config, data_loader):
        self.gamma = config.gamma
        self.data_loader = data_loader

    def train(self, x, ae_x):
        l1 = nn.L1Loss()
        d_loss_real = l1(ae_x, x)
        d_loss_fake = l1(ae_x, x * 2)
        return (self.gamma * d_loss_real - d_loss_fake).data[0]
""",
    "main.py": """\
from trainer import Trainer
from config import get_config


def main(config):
    trainer = Trainer(config, None)
    trainer.train(None, None)


if __name__ == "__main__":
    config, unparsed = get_config()
    main(config)
""",
}


def test_a_constructor_s_parameter_takes_what_the_class_s_calls_pass(tmp_path):
    # ``self.gamma = config.gamma``, ``config`` the options main.py passes to ``Trainer(...)``:
    # an option times a 0-dim loss is 0-dim (BEGAN's trainer).
    assert _folder_lines(tmp_path, CONSTRUCTED_TRAINER) == [("trainer.py", 14)]


def test_a_class_used_otherwise_than_called_leaves_its_constructor_s_parameters_unknown(tmp_path):
    files = dict(CONSTRUCTED_TRAINER)
    files["gan.py"] = "from trainer import Trainer\n\n\nclass Other(Trainer):\n    pass\n"
    assert _folder_lines(tmp_path, files) == []



RL_NMT = {
    "nmt.py": """\
import torch.nn as nn


class NMT(nn.Module):
    def nll(self, scores, target):
        return nn.NLLLoss()(scores, target)
""",
    "rl_nmt.py": """\
import torch
from nmt import *


class RLNMT(NMT):
    def get_rl_loss(self, losses, sample_size=None):
        if sample_size is None:
            sample_size = self.args.sample_size
        batch_size = len(losses) * sample_size
        starts = torch.LongTensor([0 for _ in range(batch_size)])
        return torch.cat(losses).sum() / batch_size, starts


if __name__ == "__main__":
    model = RLNMT()
    if torch.cuda.is_available():
        model = model.cuda()
    loss_rl, starts = model.get_rl_loss([], sample_size=5)
    print(loss_rl.data[0], model.nll(None, None).data[0])
""",
}


def test_a_class_deriving_from_a_project_module_of_another_file_is_a_module(tmp_path):
    # ``class RLNMT(NMT)``, NMT an nn.Module of ``from nmt import *``: ``model.cuda()`` keeps
    # the module (and its methods' answers, its own and inherited), and ``range(batch_size)``
    # makes ``batch_size`` (a product with an option) an integer, so the quotient stays 0-dim.
    assert _folder_lines(tmp_path, RL_NMT) == [("rl_nmt.py", 19), ("rl_nmt.py", 19)]


def test_a_name_counted_to_by_range_is_no_tensor_only_when_range_reads_its_bindings(tmp_path):
    files = dict(RL_NMT)
    files["rl_nmt.py"] = files["rl_nmt.py"].replace("for _ in range(batch_size)", "for _ in range(3)")
    # Without ``sample_size=5`` the options' ``sample_size`` goes into ``batch_size``.
    files["rl_nmt.py"] = files["rl_nmt.py"].replace("get_rl_loss([], sample_size=5)", "get_rl_loss([])")
    assert _folder_lines(tmp_path, files) == [("rl_nmt.py", 19)]


def test_a_constant_argument_decides_a_test_of_its_parameter_rebound_only_after_the_test(tmp_path):
    # ``if sample_size is None: sample_size = ...``: with 5 passed the test is false and
    # ``sample_size`` stays 5, so ``batch_size`` is a number and the quotient 0-dim.
    files = dict(RL_NMT)
    files["rl_nmt.py"] = files["rl_nmt.py"].replace("for _ in range(batch_size)", "for _ in range(3)")
    assert _folder_lines(tmp_path, files) == [("rl_nmt.py", 19), ("rl_nmt.py", 19)]


# -- what a call's constant arguments decide (``analysis/specialise.py``) --------------------

AVERAGED_LOSS = """\
import torch


class VAE(torch.nn.Module):
    def calculate_loss(self, x, beta=1., average=False):
        RE = torch.sum(x * x, 1)
        KL = torch.sum(x, 1)
        loss = -RE + beta * KL
        if average:
            loss = torch.mean(loss)
            RE = torch.mean(RE)
        return loss, RE, KL

    def evaluate(self, x):
        loss, RE, KL = self.calculate_loss(x, average=True)
        print(loss.data[0], RE.data[0], KL.data[0])
        loss, RE, KL = self.calculate_loss(x)
        print(loss.data[0], RE.data[0], KL.data[0])
        loss, RE, KL = self.calculate_loss(x, 0.5, False)
        print(loss.data[0], RE.data[0], KL.data[0])
        loss, RE, KL = self.calculate_loss(x, 0.5, True)
        print(loss.data[0], RE.data[0], KL.data[0])
"""


def test_a_branch_a_call_s_constant_takes_decides_what_that_call_returns():
    # vae_vampprior's ``calculate_loss(x, average=True)``: 0-dim on that call only; the calls
    # leaving ``average`` to its default (or passing False) get the per-sample losses.
    assert _lines(AVERAGED_LOSS) == [16, 16, 22, 22]


def test_a_parameter_the_def_rebinds_is_not_read_as_the_call_s_constant():
    source = AVERAGED_LOSS.replace("        if average:\n", "        average = average or x.is_cuda\n        if average:\n")
    assert _lines(source) == []


def test_the_plain_summary_is_kept_apart_from_what_one_call_gets():
    # The general answer, asked first or last, stays the meet of both ways.
    calls = AVERAGED_LOSS.split("    def evaluate")[0]
    plain_first = calls + """\
    def evaluate(self, x):
        a = self.calculate_loss(x)[0].data[0]
        b = self.calculate_loss(x, average=True)[0].data[0]
        c = self.calculate_loss(x)[0].data[0]
"""
    assert _lines(plain_first) == [16]


DEFAULT_DIM = """\
import torch


def log_bernoulli(x, mean, average=False, dim=None):
    log_p = x * torch.log(mean) + (1. - x) * torch.log(1. - mean)
    if average:
        return torch.mean(log_p, dim)
    else:
        return torch.sum(log_p, dim)


def lower_bound(x, x_mean, kl):
    RE = log_bernoulli(x, x_mean)
    per_sample = log_bernoulli(x, x_mean, dim=1)
    mean_of_all = log_bernoulli(x, x_mean, True)
    return RE.data[0], (-RE + kl.sum()).data[0], per_sample.data[0], mean_of_all.data[0]
"""


def test_a_default_the_call_leaves_decides_the_branch_and_a_reduction_over_dim_none():
    # ``torch.sum(log_p, None)`` (the default ``dim``) reduces every dimension: 0-dim.
    assert _lines(DEFAULT_DIM) == [16, 16, 16]


@pytest.mark.parametrize("test, flagged", [
    ("if mask is None:", False),  # always taken: the 1-D sums
    ("if mask is not None:", True),  # never taken: the full sum
    ("if not mask is None and scale:", True),
    ("if mask is not None or scale:", True),
    ("if mask:", True),
    ("if mask is None and x.is_cuda:", False),  # not decided: either return
    ("if x.is_cuda:", False),
])
def test_tests_of_none_not_and_or_over_constants_are_decided(test, flagged):
    source = f"""\
import torch


def total(x, mask=None, scale=False):
    {test}
        return x.sum(1)
    return x.sum()


def report(x):
    return total(x).data[0]
"""
    assert _lines(source) == ([11] if flagged else [])


def test_an_elif_and_the_returns_after_an_always_taken_return_follow_the_constants():
    source = """\
import torch


def reduce(x, how="sum", average=True, per_row=False):
    if per_row:
        return x.sum(1)
    elif average:
        return x.mean()
    return x.sum(1)


def report(x):
    return reduce(x).data[0], reduce(x, per_row=True).data[0], reduce(x, average=False).data[0]
"""
    assert _lines(source) == [13]


def test_a_0_dim_tensor_plus_a_full_reduction_of_an_unknown_value_is_0_dim():
    # torch-light's capsule loss: ``self.margin_loss(...) + self.reconstruction_loss(...) * 0.05``,
    # the first a known 0-dim tensor, the second ``.mean()`` of a value nothing types.
    source = """\
import torch


def margin(x):
    return torch.mean(x * x)


def report(x, recon):
    loss = margin(x) + recon(x).mean() * 0.05
    return loss.data[0]
"""
    assert _lines(source) == [10]


def test_a_call_s_constant_decides_a_method_of_another_module(tmp_path):
    files = {
        "models.py": AVERAGED_LOSS.split("    def evaluate")[0],
        "training.py": """\
from models import VAE


def train(x):
    model = VAE()
    loss, RE, KL = model.calculate_loss(x, average=True)
    return loss.data[0], KL.data[0]
""",
    }
    assert _folder_lines(tmp_path, files) == [("training.py", 7)]


def test_a_trace_and_a_dot_product_are_0_dim():
    # TCN's poly_music: ``loss = -torch.trace(torch.matmul(y, log(out).t()) + ...)``.
    source = """\
import torch


def evaluate(y, out, a, b):
    loss = -torch.trace(torch.matmul(y, torch.log(out).t()) + torch.matmul(1 - y, torch.log(1 - out).t()))
    similarity = torch.dot(a, b)
    return loss.data[0], similarity.data[0]
"""
    assert _lines(source) == [7, 7]


def test_a_string_constant_and_a_parameter_passed_on_decide_the_callee_s_tests():
    source = """\
import torch


def reduce_loss(loss, reduction="mean"):
    if reduction == "none":
        return loss
    elif reduction != "sum":
        return loss.mean()
    return loss.sum()


def criterion(out, y, reduction="mean"):
    return reduce_loss((out - y) ** 2, reduction)


def report(out, y):
    a = criterion(out, y)
    b = criterion(out, y, reduction="none")
    c = criterion(out, y, "sum")
    return a.data[0], b.data[0], c.data[0]
"""
    assert _lines(source) == [20, 20]


def test_a_module_called_with_a_constant_gives_what_its_forward_returns_for_it():
    source = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x, with_loss=False):
        out = self.fc(x)
        if with_loss:
            return out.pow(2).mean()
        return out


net = Net()
x = torch.randn(3, 4)
print(net(x, with_loss=True).data[0], net(x).data[0])
"""
    assert _lines(source) == [19]


def test_python_s_sum_of_0_dim_tensors_is_0_dim():
    # sa-vae: ``sum([p.norm()**2 for p in model.parameters()]).data[0]``.
    source = """\
import torch


def norms(model, a, b, xs):
    total = sum([p.norm() ** 2 for p in model.parameters()]).data[0]
    pair = sum((a.sum(), b.mean())).data[0]
    rows = sum(x.sum(1) for x in xs).data[0]
    counts = sum([len(x) for x in xs])
    return total, pair, rows, counts
"""
    assert _lines(source) == [5, 6]


def test_a_parameter_rebound_in_its_def_is_what_the_rebinding_gave_after_it():
    # ARAE's ``MLP_D.forward``: ``x = layer(x)`` in a loop, then ``x = torch.mean(x)``, ``return x``.
    source = """\
import torch
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(4, 1)]

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        x = torch.mean(x)
        return x


def rows(x):
    before = x.data[0]
    x = x.sum(1)
    return x.data[0], before


critic = Critic()
print(critic(torch.randn(2, 4)).data[0])
"""
    assert _lines(source) == [24]


def test_numbers_adding_up_full_reductions_of_unknown_values_are_0_dim_where_a_tensor(tmp_path):
    # SfmLearner's loss helpers: ``loss = 0``, ``loss += (dx.abs().mean() + ...) * weight``,
    # returned; a nested helper adding tensors' means the same way, added up again.
    files = {
        "losses.py": """\
import torch


def gradient(pred):
    return pred[:, :, 1:] - pred[:, :, :-1], pred[:, :, :, 1:] - pred[:, :, :, :-1]


def smooth_loss(pred_map):
    loss = 0
    weight = 1.
    for scaled_map in pred_map:
        dx, dy = gradient(scaled_map)
        loss += (dx.abs().mean() + dy.abs().mean()) * weight
        weight /= 2.3
    return loss


def photometric_loss(targets, images):
    def one_scale(target, image):
        total = 0
        for i in range(3):
            total += (target - torch.tanh(image[i])).abs().mean()
        return total

    loss = 0
    for target, image in zip(targets, images):
        loss += one_scale(target, image)
    return loss
""",
        "train.py": """\
from losses import smooth_loss, photometric_loss


def log(depth, targets, images):
    loss_3 = smooth_loss(depth)
    loss_1 = photometric_loss(targets, images)
    return loss_3.data[0], loss_1.data[0]
""",
    }
    assert _folder_lines(tmp_path, files) == [("train.py", 7), ("train.py", 7)]


# -- a model class chosen by an ``if``; the calls of a scripts project's packages -------

VAE_CLASS = """\
import torch


class VAE(torch.nn.Module):
    def calculate_loss(self, x, average=False):
        loss = (x - 1) ** 2
        reconstruction = loss {op} 2
        if average:
            loss = torch.mean(loss)
            reconstruction = torch.mean(reconstruction)
        return loss, reconstruction
"""

CHOSEN_MODEL = {
    "models/__init__.py": "",
    "models/vae.py": VAE_CLASS.format(op="*"),
    "models/conv_vae.py": VAE_CLASS.format(op="+"),
    "utils/__init__.py": "",
    "utils/training.py": """\
def train_vae(epoch, model, loader):
    for x in loader:
        loss, reconstruction = model.calculate_loss(x, average=True)
        print(epoch, loss.data[0], reconstruction.data[0])
""",
    "utils/experiment.py": """\
def experiment(model, loader):
    from utils.training import train_vae as train
    for epoch in range(3):
        train(epoch, model, loader)
""",
    "experiment.py": """\
import argparse


def run(args):
    if args.model == "vae":
        from models.vae import VAE
    else:
        from models.conv_vae import VAE
    model = VAE()
    from utils.experiment import experiment
    experiment(model, [])


if __name__ == "__main__":
    run(argparse.ArgumentParser().parse_args())
""",
}


def test_a_class_chosen_by_an_if_is_each_of_them_and_package_defs_take_the_scripts_calls(tmp_path):
    # experiment.py picks one of two project classes; the model reaches
    # utils/training.py through two defs imported under other names.
    assert _folder_lines(tmp_path, CHOSEN_MODEL) == [("training.py", 4), ("training.py", 4)]


def test_a_class_chosen_among_a_project_class_and_another_is_unknown(tmp_path):
    files = dict(CHOSEN_MODEL)
    files["experiment.py"] = files["experiment.py"].replace("from models.conv_vae import VAE",
                                                            "from thirdparty.vae import VAE")
    assert _folder_lines(tmp_path, files) == []


def test_the_packages_of_a_distribution_may_be_called_from_other_projects(tmp_path):
    files = dict(CHOSEN_MODEL, **{"setup.py": "from setuptools import setup\nsetup(name='vae')\n"})
    assert _folder_lines(tmp_path, files) == []


def test_a_call_through_another_import_name_counts(tmp_path):
    files = dict(CHOSEN_MODEL)
    files["utils/experiment.py"] += """\

def evaluate(loader):
    from utils.training import train_vae as fit
    fit(0, load_model(), loader)
"""
    assert _folder_lines(tmp_path, files) == []


def test_a_call_of_a_helper_through_another_import_name_counts(tmp_path):
    files = {"utils.py": VALIDATE.replace('if __name__ == "__main__":\n    main()\n', ""),
             "train.py": """\
import torch
from utils import validate as check


def main(model):
    check([], model, make_criterion())


if __name__ == "__main__":
    main(torch.nn.Linear(2, 2))
"""}
    assert _folder_lines(tmp_path, files) == []
    files["train.py"] = files["train.py"].replace("make_criterion()", "torch.nn.MSELoss()")
    assert _folder_lines(tmp_path, files) == [("utils.py", 9)]


def test_a_caller_added_anywhere_in_the_project_is_seen_by_a_cached_run(tmp_path):
    assert _folder_lines(tmp_path, CHOSEN_MODEL, cached=True) == [("training.py", 4), ("training.py", 4)]
    caller = """\
from utils.training import train_vae

train_vae(0, load_model(), [])
"""
    assert _folder_lines(tmp_path, {"tools/evaluate.py": caller}, cached=True) == []


# -- in-place updates, defs under the main guard, numbers read the 0.3 way -----------

ONE_ELEMENT_SUM = """\
import torch


if __name__ == "__main__":
    def calc_loss(batch):
        result = torch.zeros(1)
        for x in batch:
            result += x.sum()
        return result / len(batch), {}

    for batch in loader:
        loss, monitor = calc_loss(batch)
        loss.backward()
        print(loss.data[0])
"""


def test_an_in_place_update_keeps_the_tensors_shape():
    # ``result += x.sum()`` updates the 1-element 1-D tensor in place: ``.data[0]`` works,
    # and the ``.backward()`` proves one element, not 0 dimensions.
    assert _lines(ONE_ELEMENT_SUM) == []


def test_a_def_under_the_main_guard_gives_what_it_returns():
    source = ONE_ELEMENT_SUM.replace("torch.zeros(1)", "torch.zeros(1).sum()").replace("        loss.backward()\n", "")
    assert _lines(source) == [13]


def test_a_matrix_product_update_is_not_in_place():
    source = ONE_ELEMENT_SUM.replace("result += x.sum()", "result @= x")
    assert _lines(source) == [14]  # unknown after ``@=``: the backward proves what it is


def test_a_number_read_from_a_0_dim_tensor_divides_a_reduction_into_a_0_dim_tensor():
    source = """\
    import torch


    def step(lengths, log_p, mask):
        total = lengths.float().sum().data[0]
        loss = -(torch.log(log_p) * mask).sum() / total
        return loss.data[0]
    """
    assert _lines(source) == [5, 7]
    # divided by something unknown, the reduction may broadcast into a larger tensor
    assert _lines(source.replace("/ total", "/ lengths")) == [5]


def test_a_tensor_method_of_a_maybe_tensor_keeps_what_it_would_be():
    source = """\
    def ratios(layers):
        return [((layer.weight ** 2).mean().sqrt() / (layer.sigma ** 2).mean().sqrt()).data.cpu().numpy()[0]
                for layer in layers]
    """
    assert _lines(source) == [2]
    assert _lines(source.replace(".sqrt()", ".tolist()")) == []


BALANCE = """\
import torch


def train(loader, D, l1, gamma, lambda_k):
    k_t = 0
    for x, fake in loader:
        d_loss_real = l1(D(x), x)
        d_loss_fake = l1(D(fake), fake)
        d_loss = d_loss_real - k_t * d_loss_fake
        print(d_loss.data[0])
        balance = (0.5 * d_loss_real - d_loss_fake).data[0]
        k_t += lambda_k * balance
        k_t = max(min(1, k_t), 0)
"""


def test_a_binding_overwritten_further_down_its_block_reaches_no_other_read():
    # ``k_t += ...`` is bound anew on the next line: the loop's next pass reads a number.
    assert _lines(BALANCE.replace("l1(D", "torch.nn.functional.l1_loss(D")) == [10, 11]


def test_a_binding_that_may_leave_its_block_first_still_counts():
    source = BALANCE.replace("l1(D", "torch.nn.functional.l1_loss(D")
    assert _lines(source.replace("        k_t = max(", "        if k_t > 1:\n            continue\n        k_t = max(")) == [11]
    guarded = source.replace("        k_t += lambda_k * balance\n        k_t = max(min(1, k_t), 0)\n",
                             "        try:\n            k_t += lambda_k * balance\n"
                             "            k_t = max(min(1, k_t), 0)\n        except ValueError:\n            pass\n")
    assert _lines(guarded) == [11]


def test_arithmetic_of_command_line_options_and_numbers_is_no_tensor(tmp_path):
    files = {
        "utils.py": """\
import torch


def kl(preds, num_atoms, eps=1e-16):
    kl_div = preds * torch.log(preds + eps)
    return kl_div.sum() / (num_atoms * preds.size(0))
""",
        "train.py": """\
import argparse
import torch
from utils import *

parser = argparse.ArgumentParser()
args = parser.parse_args()


def train(prob):
    loss_kl = kl(prob, args.num_atoms)
    print(loss_kl.data[0])


if __name__ == "__main__":
    train(torch.zeros(3))
""",
    }
    assert _folder_lines(tmp_path, files) == [("train.py", 11)]
    files["train.py"] = files["train.py"].replace("kl(prob, args.num_atoms)", "kl(prob, weights)")
    assert _folder_lines(tmp_path, files) == []


def _passing_back(training_tail):
    files = dict(CHOSEN_MODEL)
    files["utils/training.py"] += training_tail
    files["utils/experiment.py"] = files["utils/experiment.py"].replace(
        "        train(epoch, model, loader)", "        model, score = train(epoch, model, loader)")
    return files


def test_a_function_returning_its_parameter_gives_back_what_the_call_passed(tmp_path):
    # The loop passes ``model`` round through ``train_vae``: it stays one of the two classes.
    assert _folder_lines(tmp_path, _passing_back("    return model, 0.0\n")) == [("training.py", 4), ("training.py", 4)]


def test_a_parameter_moved_in_place_or_rebound_is_not_given_back(tmp_path):
    assert _folder_lines(tmp_path, _passing_back("    model.cuda()\n    return model, 0.0\n")) == []
    assert _folder_lines(tmp_path, _passing_back("    model = load_model()\n    return model, 0.0\n")) == []


# -- a project's configuration object ------------------------------------------------

CONFIGURED = {
    "miscc/__init__.py": "",
    "miscc/config.py": """\
import numpy as np
from easydict import EasyDict as edict

__C = edict()
cfg = __C

__C.TRAIN = edict()
__C.TRAIN.COEFF = edict()
__C.TRAIN.COEFF.KL = 2.0
__C.PIXEL_MEANS = np.array([[[102.98, 115.95, 122.77]]])


def _merge_a_into_b(a, b):
    for key, value in a.items():
        b[key] = value


def cfg_from_file(filename):
    import yaml
    with open(filename) as f:
        loaded = edict(yaml.safe_load(f))
    _merge_a_into_b(loaded, __C)
""",
    "train.py": """\
import torch.nn as nn
from miscc.config import cfg


def step(mu1, mu2):
    like_mu = cfg.TRAIN.COEFF.KL * nn.MSELoss()(mu1, mu2)
    return like_mu.data[0]
""",
}


def test_a_configuration_global_holds_options_that_add_no_dimension(tmp_path):
    assert _folder_lines(tmp_path, CONFIGURED) == [("train.py", 7)]


def test_a_configuration_something_else_is_stored_into_is_unknown(tmp_path):
    files = dict(CONFIGURED)
    files["miscc/config.py"] += "\n__C.MEAN = torch.zeros(3)\n"
    assert _folder_lines(tmp_path, files) == []
    files["miscc/config.py"] = CONFIGURED["miscc/config.py"].replace("__C = edict()", "__C = make_config()")
    assert _folder_lines(tmp_path, files) == []


def test_a_parsed_configuration_file_holds_options():
    source = """\
    import json
    import torch.nn.functional as F

    with open("config.json") as f:
        config = json.load(f)


    def step(a, b):
        loss = config["weight"] * F.mse_loss(a, b)
        return loss.data[0]
    """
    assert _lines(source) == [10]
    assert _lines(source.replace("json.load(f)", "torch.load(f)")) == []


NAMED_CONTEXT = """\
from collections import namedtuple

import torch.nn as nn

Context = namedtuple("Context", "model, optimizer, criterion")


def create_context(model, optimizer):
    criterion = nn.KLDivLoss()
    return Context(model, optimizer, criterion)


def train(model, optimizer, loader):
    context = create_context(model, optimizer)
    for scores, target in loader:
        loss = context.criterion(scores, target)
        print(loss.data[0], context.model.data[0])
"""


def test_a_namedtuple_field_is_what_its_constructor_was_given():
    assert _lines(NAMED_CONTEXT) == [17]
    assert _lines(NAMED_CONTEXT.replace("Context(model, optimizer, criterion)",
                                        "Context(model, optimizer, criterion=make_criterion())")) == []
    assert _lines(NAMED_CONTEXT.replace('"model, optimizer, criterion"', '"model, criterion, optimizer"')) == []


def test_the_least_of_a_list_literal_is_as_good_as_a_number():
    source = """\
    import torch


    def step(kl, epoch, warmup, max_beta):
        beta = min([epoch / max([warmup, 1.]), max_beta])
        loss = beta * torch.sum(kl)
        return loss.data[0]
    """
    assert _lines(source) == [7]
    assert _lines(source.replace("min([epoch / max([warmup, 1.]), max_beta])", "min(betas)")) == []


def test_a_global_read_as_an_attribute_receiver_was_not_none():
    source = """\
    import argparse

    import torch.nn.functional as F

    args = None


    def train(a, b):
        loss = args.weight * F.mse_loss(a, b)
        print(loss.data[0])


    def main():
        global args
        args = argparse.ArgumentParser().parse_args()
        train(1, 2)
    """
    assert _lines(source) == [10]
    assert _lines(source.replace("argparse.ArgumentParser().parse_args()", "load_weights()")) == []


# -- callables passed around as values ----------------------------------------------------

def test_a_name_bound_to_a_project_function_calls_it():
    source = """\
    import torch


    def symmetric_mse(a, b):
        return torch.sum((a - b) ** 2) / a.size(1)


    def rowwise(a, b):
        return ((a - b) ** 2).sum(1)


    def train(a, b):
        criterion = symmetric_mse
        print(criterion(a, b).data[0])
    """
    assert _lines(source) == [14]
    assert _lines(source.replace("criterion = symmetric_mse", "criterion = rowwise")) == []


def test_a_callable_chosen_by_an_if_gives_what_every_choice_agrees_on(tmp_path):
    losses = """\
    import torch
    import torch.nn.functional as F


    def softmax_mse(a, b):
        return F.mse_loss(F.softmax(a, 1), F.softmax(b, 1), size_average=False) / a.size(1)


    def softmax_kl(a, b):
        return F.kl_div(F.log_softmax(a, 1), F.softmax(b, 1), size_average=False)


    def per_row(a, b):
        return (a - b).pow(2).sum(1)
    """
    train = """\
    import losses


    def train(kind, a, b):
        if kind == "mse":
            consistency = losses.softmax_mse
        else:
            consistency = losses.softmax_kl
        loss = consistency(a, b)
        print(loss.data[0])
    """
    assert _folder_lines(tmp_path / "both", {"losses.py": losses, "train.py": train}) == [("train.py", 10)]
    assert _folder_lines(tmp_path / "one_is_a_vector", {
        "losses.py": losses, "train.py": train.replace("losses.softmax_kl", "losses.per_row")}) == []


def test_a_torch_loss_passed_as_an_argument_is_called_inside():
    source = """\
    import torch.nn as nn
    import torch.nn.functional as F


    def _evaluate(model, batches, loss_fn):
        for x, y in batches:
            print(loss_fn(model(x), y).data[0])


    def main(model, batches):
        _evaluate(model, batches, F.cross_entropy)
        _evaluate(model, batches, loss_fn=nn.functional.nll_loss)
    """
    assert _lines(source) == [7]
    assert _lines(source.replace("nn.functional.nll_loss", "make_loss()")) == []


# -- a copy of torch 0.4's functional.py ---------------------------------------------------

VENDORED_NLL = """\
import torch


def nll_loss(input, target, weight=None, size_average=True, ignore_index=-100, reduce=True):
    if input.dim() == 2:
        return torch._C._nn.nll_loss(input, target, weight, size_average, ignore_index, reduce)
    n = input.size(0)
    if reduce:
        return torch._C._nn.nll_loss2d(input, target, weight, size_average, ignore_index, reduce)
    out = torch._C._nn.nll_loss2d(input, target, weight, size_average, ignore_index, reduce)
    return out.view(n, -1)


def cross_entropy(input, target, weight=None, size_average=True, ignore_index=-100, reduce=True):
    return nll_loss(torch.log_softmax(input, 1), target, weight, size_average, ignore_index, reduce)


def train(logits, target):
    ce = cross_entropy(logits, target, size_average=False)
    print(ce.data[0])
    kept = cross_entropy(logits, target, reduce=False)
    print(kept.data[0])
"""


def test_a_copy_of_functional_calling_the_native_losses_reduces_as_its_call_says():
    assert _lines(VENDORED_NLL) == [20]


def test_a_native_loss_given_a_reduction_enum_is_torch_1_spelling_and_unknown():
    source = VENDORED_NLL.replace("torch._C._nn.nll_loss(input, target, weight, size_average, ignore_index, reduce)",
                                  "torch._C._nn.nll_loss(input, target, weight, _Reduction.get_enum(reduction), "
                                  "ignore_index)").replace("input.dim() == 2", "True")
    assert _lines(source) == []


# -- configuration libraries ---------------------------------------------------------------

def test_tensorflow_hyperparameters_hold_options():
    source = """\
    import tensorflow as tf
    import torch.nn.functional as F

    hparams = tf.contrib.training.HParams(kl_weight=0.1, layers=4)


    def step(a, b):
        loss = hparams.kl_weight * F.mse_loss(a, b)
        print(loss.data[0])
    """
    assert _lines(source) == [9]
    assert _lines(source.replace("tf.contrib.training.HParams", "make_settings")) == []


# -- a file read back where the same def wrote it -------------------------------------------

ROUND_TRIP = {
    "models.py": """\
    import torch
    import torch.nn as nn


    class VAE(nn.Module):
        def calculate_loss(self, x, average=False):
            loss = x.sum(1)
            if average:
                loss = torch.mean(loss)
            return loss
    """,
    "training.py": """\
    def train_vae(epoch, model):
        model.train()
        return model, 0.0
    """,
    "experiment.py": """\
    import torch


    def experiment(model, path, x):
        from training import train_vae as train
        for epoch in range(3):
            model, loss = train(epoch, model)
            torch.save(model, path + '.model')
        best = torch.load(path + '.model')
        print(best.calculate_loss(x, average=True).data[0])
    """,
    "main.py": """\
    from models import VAE
    from experiment import experiment

    experiment(VAE(), 'runs/vae', None)
    """,
}


def test_a_load_of_what_the_same_def_saved_gives_back_the_object(tmp_path):
    assert _folder_lines(tmp_path / "saved", ROUND_TRIP) == [("experiment.py", 10)]
    elsewhere = dict(ROUND_TRIP, **{"experiment.py": ROUND_TRIP["experiment.py"].replace(
        "torch.load(path + '.model')", "torch.load(path + '.best')")})
    assert _folder_lines(tmp_path / "another_path", elsewhere) == []
    loaded_first = dict(ROUND_TRIP, **{"experiment.py": ROUND_TRIP["experiment.py"].replace(
        "    best = torch.load(path + '.model')\n", "").replace(
        "        from training", "        best = torch.load(path + '.model')\n        from training")})
    assert _folder_lines(tmp_path / "loaded_first", loaded_first) == []


# -- how many dimensions a layer's output has ------------------------------------------------

CLASSIFIER = """\
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv = nn.Conv2d(1, 10, 5)
        self.fc = nn.Linear(320, 10)

    def forward(self, x):
        x = F.relu(self.conv(x))
        x = x.view(-1, 320)
        return F.log_softmax(self.fc(x), dim=1)


def main(data):
    out = Net()(data)
    print(out[0][3].data[0], out[0].data[0])
"""


def test_a_layer_keeps_its_inputs_number_of_dimensions():
    # ``x.view(-1, 320)`` is 2-D, so are the Linear and log_softmax of it: one element of
    # one row is 0-dim, a row is not.
    assert _lines(CLASSIFIER) == [19]
    assert _lines(CLASSIFIER.replace("x = x.view(-1, 320)", "x = x.flatten(1)")) == []
    assert _lines(CLASSIFIER.replace("self.fc = nn.Linear(320, 10)", "self.fc = nn.LSTM(320, 10)")) == []


def test_a_torchvision_classifier_gives_one_row_of_logits_per_input():
    source = """\
    import torch.nn.functional as F
    from torchvision import models


    def confidence(image):
        model = models.alexnet(pretrained=True)
        output = model(image)
        print(F.softmax(output, 1)[0][3].data.numpy()[0], output[0].data[0])
    """
    assert _lines(source) == [8]
    assert _lines(source.replace("models.alexnet", "models.googlenet")) == []
    assert _lines(source.replace("models.alexnet", "models.segmentation.fcn_resnet50")) == []


def test_torch_functions_of_a_0_dim_loss_stay_0_dim():
    source = """\
    import torch
    import torch.nn as nn

    criterion = nn.CrossEntropyLoss()


    def step(o, t, a, b):
        loss = criterion(o, t)
        print(torch.pow(loss, 2).data[0], torch.clamp(loss, 0, 1).data[0], torch.round(loss).data[0])
        print(torch.dist(a, b).data[0], torch.norm(a - b, 2).data[0], torch.all(a > b).data[0])
        print(torch.where(loss > 0, loss, 0.0).data[0], torch.add(loss, a).data[0], torch.norm(a, 2, 1).data[0])
    """
    assert _lines(source) == [9, 9, 9, 10, 10, 10, 11]


def test_an_attribute_called_was_not_the_none_it_started_as():
    source = """\
    import torch.nn as nn


    class Solver(object):
        def __init__(self):
            self.criterion = None

        def build_model(self):
            self.criterion = nn.MSELoss()

        def test(self, prediction, target):
            mse = self.criterion(prediction, target)
            print(mse.data[0])
    """
    assert _lines(source) == [13]
    assert _lines(source.replace("self.criterion = nn.MSELoss()", "self.criterion = make_loss()")) == []


def test_a_full_reduction_bound_to_a_name_is_read_where_that_binding_reaches():
    source = """\
    def accuracy(y, y_hat):
        acc = y.eq(y_hat).sum()
        acc = acc.data[0] / y_hat.size(0)
        return acc
    """
    assert _lines(source) == [3]
    assert _lines(source.replace("y.eq(y_hat).sum()", "y.eq(y_hat).sum(1)")) == []


# -- a base class's method, called through the class by an override ------------------------

OPTIONS_THROUGH_BASE = {
    "options.py": """\
    import argparse


    class TrainOptions:
        def parse(self):
            self.opt = argparse.ArgumentParser().parse_args()
            return self.opt
    """,
    "models/__init__.py": "",
    "models/base_model.py": """\
    import torch


    class BaseModel():
        def initialize(self, opt):
            self.opt = opt
            self.criterionL1 = torch.nn.L1Loss()
    """,
    "models/gan_model.py": """\
    from .base_model import BaseModel


    class GANModel(BaseModel):
        def initialize(self, opt):
            BaseModel.initialize(self, opt)

        def losses(self, fake, real):
            self.loss_G_L1 = self.criterionL1(fake, real) * self.opt.lambda_L1
            return self.loss_G_L1.data[0]
    """,
    "models/models.py": """\
    def create_model(opt):
        model = None
        if opt.model == "gan":
            from .gan_model import GANModel
            model = GANModel()
        else:
            raise ValueError(opt.model)
        model.initialize(opt)
        return model
    """,
    "train.py": """\
    from options import TrainOptions
    from models.models import create_model

    opt = TrainOptions().parse()
    model = create_model(opt)
    """,
}


def test_a_base_method_called_through_the_class_takes_what_the_override_was_given(tmp_path):
    assert _folder_lines(tmp_path / "through", OPTIONS_THROUGH_BASE) == [("gan_model.py", 10)]
    unknown = dict(OPTIONS_THROUGH_BASE, **{"train.py": OPTIONS_THROUGH_BASE["train.py"].replace(
        "create_model(opt)", "create_model(load_settings())")})
    assert _folder_lines(tmp_path / "unknown", unknown) == []


def test_a_module_class_that_defines_call_itself_is_called_through_it():
    source = """\
    import torch.nn as nn


    class GANLoss(nn.Module):
        def __init__(self):
            super(GANLoss, self).__init__()
            self.loss = nn.MSELoss()

        def __call__(self, inputs, target):
            loss = 0.0
            for x in inputs:
                loss = loss + self.loss(x, target)
            return loss, inputs

        def forward(self, inputs, target):
            return inputs


    def step(criterion_inputs, target):
        loss, _ = GANLoss()(criterion_inputs, target)
        print(loss.data[0])
    """
    assert _lines(source) == [21]
    assert _lines(source.replace("    def __call__(self, inputs, target):", "    def unused(self, inputs, target):")) == []


def test_nonzero_gives_one_row_of_indices_per_element():
    source = """\
    import torch


    def pick(mask):
        m = torch.zeros(3, 4) > mask
        idx = m.nonzero()[:, 0]
        for i in range(len(idx)):
            print(idx[i].data[0], m.nonzero().data[0])
    """
    assert _lines(source) == [8]


# -- a module an ``if`` chooses: ``from net import v1 as exp``, then ``exp.train(args)`` ------

EXPERIMENT = """\
import torch


def train(args):
    criterion = torch.nn.MSELoss()
    x = torch.randn(4, 2)
    loss = args.weight * criterion(x, x)
    return loss.data[0]
"""

CHOOSING_MAIN = """\
import argparse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--net", default="v1")
    parser.add_argument("--weight", type=float, default=1.0)
    args = parser.parse_args()
    if args.net == "v1":
        from net import v1 as exp
    else:
        from net import v2 as exp
    exp.train(args)


if __name__ == "__main__":
    main()
"""


def test_a_call_through_a_module_an_if_chooses_passes_its_arguments_to_either(tmp_path):
    # ``args`` are the parsed options in both modules' ``train``: a number times a 0-dim loss.
    files = {"main.py": CHOOSING_MAIN, "net/__init__.py": "", "net/v1.py": EXPERIMENT, "net/v2.py": EXPERIMENT}
    assert _folder_lines(tmp_path, files) == [("v1.py", 8), ("v2.py", 8)]


def test_a_module_an_if_chooses_still_has_unknown_callers_where_one_passes_anything(tmp_path):
    files = {"main.py": CHOOSING_MAIN, "net/__init__.py": "", "net/v1.py": EXPERIMENT, "net/v2.py": EXPERIMENT,
             "replay.py": "from net import v1\nfrom tools import make_args\nv1.train(make_args())\n"}
    assert _folder_lines(tmp_path, files) == [("v2.py", 8)]


# -- one element on every run, 0-dim on some: ``.item()`` reads both, ``[0]`` fails on one ------

PLACEHOLDER_LOSSES = """\
import torch
from torch.autograd import Variable


class Model(object):
    def __init__(self, gpu):
        self._Tensor = torch.cuda.FloatTensor if gpu else torch.Tensor
        self.crit = torch.nn.MSELoss()
        self.loss_g = Variable(self._Tensor([0]))
        self.loss_d = Variable(torch.zeros(1, 1))
        self.loss_idt = Variable(self._Tensor([0]))
        self.running = torch.zeros(2)

    def step(self, x, y):
        self.loss_g = self.crit(x, y) * 10
        self.loss_d = self.crit(x, y).cuda()
        self.running = self.crit(x, y)

    def errors(self):
        return (self.loss_g.data[0], self.loss_d.data[0],
                self.loss_idt.data[0], self.running.data[0])


def baseline(rewards):
    average = torch.zeros(1)
    for step, r in enumerate(rewards):
        if step == 0:
            average = r.mean()
        else:
            average = average * 0.9 + 0.1 * r.mean()
        print(average.data[0])
"""


def test_a_placeholder_of_one_element_later_given_a_0_dim_value_is_flagged():
    # loss_g, loss_d and the moving average: one element on every run, 0-dim once set.
    # loss_idt keeps its (1,) placeholder; running was (2,) before: neither fails.
    assert _lines(PLACEHOLDER_LOSSES) == [20, 20, 31]


def test_one_element_facts_meet_and_survive_the_summary_cache():
    from torchlint.analysis.inference import Kind, Value, meet
    from torchlint.analysis.summaries import decode, encode

    placeholder = Value(Kind.TENSOR, ndim=1, one_element=True)
    either = meet((placeholder, Value(Kind.TENSOR, scalar=True, loss=True)))
    assert either.one_element and either.partly_scalar and not either.scalar and either.zero_dim_on_some_run
    assert not meet((either, Value(Kind.TENSOR, ndim=1))).zero_dim_on_some_run  # maybe many elements
    assert not meet((placeholder, placeholder)).partly_scalar
    assert decode(json.loads(json.dumps(encode(either)))) == either


def test_the_placeholders_read_with_item_run_under_torch():
    torch = pytest.importorskip("torch")
    placeholder = torch.zeros(1, 1)
    assert placeholder.data[0].shape == (1,)  # [0] of a (1, 1) placeholder: a row, no error
    with pytest.raises(IndexError):
        torch.nn.functional.mse_loss(torch.ones(3), torch.zeros(3)).data[0]
    assert placeholder.item() == 0.0


# -- a Python 2 helper module, a factory handing on *args, a base class storing the options ------

PY2_LOSSES = """\
import torch


def l2(a, b):
    print 'l2 of', a.size()
    return ((a - b) ** 2).mean()


def report(losses):
    for name, value in losses.items():
        print name, value
"""

PY2_USER = """\
import torch
from losses import l2

x, y = torch.randn(4, 2), torch.randn(4, 2)
loss = l2(x, y)
print(loss.data[0])
"""


def test_a_python_2_module_is_read_for_what_it_defines_and_still_reported_unparsable(tmp_path):
    files = {"losses.py": PY2_LOSSES, "train.py": PY2_USER}
    assert _folder_lines(tmp_path, files, paths=("train.py",)) == [("train.py", 6)]
    result = subprocess.run([sys.executable, "-m", "torchlint.frontends.cli", "--isolated", "--no-cache", "."],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "losses.py:5:" in result.stderr and "Python 2 code" in result.stderr


ASYNC_UTILS = """\
import torch


def to_gpu(t):
    return t.cuda(async=True)


def accuracy(out, truth):
    _, best = torch.max(out, 1)
    right = torch.sum(torch.eq(best, truth).float())
    return right, right / truth.size(0) * 100
"""

ASYNC_USER = """\
import torch
from utils import *

out, truth = torch.randn(8, 3), torch.randint(0, 3, (8,))
hits, percent = accuracy(out, truth)
print(percent.data[0])
"""


def test_a_module_using_async_as_a_keyword_is_read_for_what_it_defines(tmp_path):
    # ``t.cuda(async=True)`` makes utils.py a syntax error on Python 3.7+; the
    # script star-importing its ``accuracy`` still learns what that returns.
    files = {"utils.py": ASYNC_UTILS, "train.py": ASYNC_USER}
    assert _folder_lines(tmp_path, files, paths=("train.py",)) == [("train.py", 6)]
    assert _folder_lines(tmp_path, files, paths=("utils.py",), code="TL115") == [("utils.py", 5)]


CRITERIA = """\
import torch
import torch.nn as nn


class GridLoss(nn.Module):
    def forward(self, theta, target):
        return torch.mean((theta - target) ** 2)


class Losses(object):
    @staticmethod
    def dice(output, target, eps=1e-6):
        return 1 - (2 * (output * target).sum(1) / (output + target + eps).sum(1)).mean()


def epoch(kind, theta, target):
    if kind == "mse":
        loss_fn = nn.MSELoss()
    else:
        loss_fn = GridLoss()
    print(loss_fn(theta, target).data[0])
    if kind == "dice":
        criterion = Losses.dice
    else:
        criterion = nn.BCEWithLogitsLoss()
    print(criterion(theta, target).data[0])
    print(Losses.dice(theta, target).data[0])
"""


def test_a_name_holding_one_of_several_loss_modules_calls_what_they_all_give():
    # Line 21: nn.MSELoss() or the project's GridLoss(); line 26: a static method of a
    # project class or nn.BCEWithLogitsLoss(); line 27: the static method called through its class.
    assert _lines(CRITERIA) == [21, 26, 27]


def test_one_callable_of_several_that_gives_a_batch_leaves_the_call_unknown():
    source = CRITERIA.replace("nn.MSELoss()", "nn.MSELoss(reduction='none')").replace(
        "criterion = nn.BCEWithLogitsLoss()", "criterion = nn.Linear(4, 4)")
    assert _lines(source) == [27]


def test_a_method_reached_through_its_class_without_staticmethod_is_not_followed():
    # (one line fewer: the loss-module read is now line 20)
    assert _lines(CRITERIA.replace("    @staticmethod\n", "")) == [20]


KEYED_ERRORS = """\
import torch
import torch.nn as nn


class PolicyGradient(object):
    def __init__(self):
        self.policy_loss = nn.NLLLoss()

    def _errors(self, pi, a):
        logpi = (pi + 1e-6).log()
        return dict(logpi=logpi, policy_err=self.policy_loss(logpi, a), entropy_err=(logpi * pi).sum() / 8)

    def feed(self, pi, a):
        errs = self._errors(pi, a)
        print(errs["policy_err"].data[0], errs["entropy_err"].data[0], errs["logpi"].data[0])
        named = {"nll": self.policy_loss(pi, a), "logits": pi}
        print(named["nll"].data[0], named["logits"].data[0])
"""


def test_a_dict_made_with_keys_gives_each_key_its_own_value():
    # ``errs["logpi"]`` and ``named["logits"]`` are batches: ``[0]`` of them is a row, fine.
    assert _lines(KEYED_ERRORS) == [15, 15, 17]


def test_a_dict_stored_into_later_forgets_what_its_keys_held():
    source = KEYED_ERRORS.replace('        print(named["nll"]', '        named["nll"] = pi\n        print(named["nll"]')
    assert _lines(source) == [15, 15]


SELECTIVE = """\
import torch
from torch.autograd import Variable as V


def _selective_loss(logits, y, new, loss):
    if not new.any():
        return V(logits.data.new(1).zero_())
    b = new.nonzero().squeeze(1)
    return loss(logits.index_select(0, V(b)), y.index_select(0, V(b)))


def run(logits, y, new):
    ce = _selective_loss(logits, y, new, torch.nn.CrossEntropyLoss(size_average=False))
    print(ce.data[0])
    one = torch.zeros(3).new(1).zero_()
    print(one.data[0], torch.zeros(3).new_zeros((1, 1)).data[0], torch.zeros(3).new([1]).data[0])
"""


def test_a_loss_or_a_fresh_one_element_tensor_is_0_dim_on_some_runs():
    # ``x.new(1)`` (the legacy constructor) has one element, and keeps it through ``zero_()``;
    # a function returning it or a loss gives a 0-dim value on some runs. The (1,) and
    # (1, 1) tensors alone are no 0-dim reads.
    assert _lines(SELECTIVE) == [14]


def test_the_python_3_reading_keeps_every_line_and_parses():
    import ast

    from torchlint.core.legacy_syntax import may_be_python2, python3_reading

    source = ("try:\n    print >>sys.stderr, 'a', x\nexcept (IOError, OSError), e:\n"
              "    raise ValueError, 'bad %s' % e\nif x: print x,; print\nexec 'y = 1' in ns\nprint(x)\n")
    reading = python3_reading(source)
    assert may_be_python2(source) and reading.count("\n") == source.count("\n")
    ast.parse(reading)
    assert "except (IOError, OSError) as e:" in reading and "raise ValueError( 'bad %s' % e)" in reading
    assert not may_be_python2("print(x)\nprint (a, b)\nprint = log\n")


FACTORY_MODELS = {
    "models/__init__.py": "",
    "models/base.py": """\
        class BaseModel(object):
            def __init__(self, opt):
                self._opt = opt
                print 'created'


        class ModelsFactory:
            @staticmethod
            def get_by_name(model_name, *args, **kwargs):
                from .gan import Gan
                return Gan(*args, **kwargs)
        """,
    "models/gan.py": """\
        import torch
        from torch.autograd import Variable
        from .base import BaseModel


        class Gan(BaseModel):
            def __init__(self, opt):
                super(Gan, self).__init__(opt)
                self._crit = torch.nn.MSELoss()
                self._loss = Variable(torch.zeros(1))

            def step(self, x):
                self._loss = self._crit(x, x) * self._opt.weight

            def errors(self):
                return self._loss.data[0]
        """,
    "train.py": """\
        import argparse
        from models.base import ModelsFactory

        parser = argparse.ArgumentParser()
        parser.add_argument("--weight", type=float, default=1.0)
        opt = parser.parse_args()
        model = ModelsFactory.get_by_name("gan", opt)
        """,
}


_PYTHON3 = ("models/gan.py", "train.py")  # models/base.py is Python 2: reported unparsable


def test_options_handed_through_a_factory_s_star_args_reach_the_model_s_base_class(tmp_path):
    # ``self._opt`` is the parsed options: train.py -> get_by_name's *args -> Gan -> BaseModel.
    assert _folder_lines(tmp_path, FACTORY_MODELS, paths=_PYTHON3) == [("gan.py", 16)]


def test_a_factory_caller_passing_something_unknown_leaves_the_options_unknown(tmp_path):
    files = dict(FACTORY_MODELS, **{"replay.py": "from models.base import ModelsFactory\n"
                                                  "from tools import load\nModelsFactory.get_by_name('gan', load())\n"})
    assert _folder_lines(tmp_path, files, paths=_PYTHON3) == []


# -- a file a module elsewhere in the project saves from a module it built (TL203) ---------------

VGG_WRITER = """\
import os
import torch
import torch.nn as nn


class Vgg16(nn.Module):
    def __init__(self):
        super(Vgg16, self).__init__()
        self.conv = nn.Conv2d(3, 64, 3)


def init_vgg16(model_folder, weights):
    vgg = Vgg16()
    for src, dst in zip(weights, vgg.parameters()):
        dst.data[:] = src
    torch.save(vgg.state_dict(), os.path.join(model_folder, 'vgg16.weight'))
"""

VGG_LOADER = """\
import os
import torch
from myutils.vgg import Vgg16, init_vgg16


def main(folder, weights):
    init_vgg16(folder, weights)
    vgg = Vgg16()
    vgg.load_state_dict(torch.load(os.path.join(folder, "vgg16.weight")))
    return vgg.cuda()
"""


@pytest.mark.parametrize("saver_change, flagged", [
    ("", []),
    ("    vgg.cuda()\n", [("main.py", 9)]),  # moved to the GPU before the save
    ("    register(vgg)\n", [("main.py", 9)]),  # handed to code that may move it
])
def test_weights_a_module_elsewhere_saves_from_a_module_it_built_hold_cpu_tensors(tmp_path, saver_change, flagged):
    writer = VGG_WRITER.replace("    torch.save(", saver_change + "    torch.save(")
    files = {"myutils/__init__.py": "", "myutils/vgg.py": writer, "main.py": VGG_LOADER}
    assert _folder_lines(tmp_path, files, "TL203") == flagged


# -- flags objects, a tensor argument deciding ``if y is not None``, an unpacked differentiated result ---

@pytest.mark.parametrize("flags", ["import gflags\nFLAGS = gflags.FLAGS", "from absl import flags\nFLAGS = flags.FLAGS",
                                   "from absl.flags import FLAGS"])
def test_command_line_flags_objects_hold_no_tensor(flags):
    source = f"""\
import torch
{flags}
criterion = torch.nn.MSELoss()


def step(a, b):
    loss = FLAGS.weight * criterion(a, b)
    return loss.data[0]
"""
    assert _lines(source) == [len(flags.splitlines()) + 7]


NOT_NONE_ARGUMENT = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class MLP(nn.Module):
    def __init__(self):
        super(MLP, self).__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, y=None):
        logits = F.log_softmax(self.fc(x), dim=1)
        if y is not None:
            y = Variable(y)
            loss = F.nll_loss(logits, y)
            return logits, loss
        return logits


class Classifier(nn.Module):
    def __init__(self):
        super(Classifier, self).__init__()
        self.mlp = MLP()

    def forward(self, x):
        labels = torch.LongTensor(len(x))
        return self.mlp(x, labels)


def run(x):
    _, loss = Classifier()(x)
    return loss.data[0]
"""


def test_a_tensor_argument_decides_an_is_not_none_test_of_a_parameter_rebound_after_it():
    # ``labels`` is a tensor, never None: ``forward`` returns (logits, loss) to that call.
    assert _lines(NOT_NONE_ARGUMENT) == [33]
    assert _lines(NOT_NONE_ARGUMENT.replace("self.mlp(x, labels)", "self.mlp(x)")) == []


def test_the_not_none_argument_runs_under_torch():
    torch = pytest.importorskip("torch")
    namespace = {}
    exec(compile(NOT_NONE_ARGUMENT.replace("torch.LongTensor(len(x))", "torch.zeros(len(x), dtype=torch.long)"),
                 "<snippet>", "exec"), namespace)
    with pytest.raises(IndexError):
        namespace["run"](torch.randn(2, 4))


UNPACKED_LOSS = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x, y):
        return x, self.score(x, y)


def train(batches):
    model = Net()
    for x, y in batches:
        _, loss = model(x, y)
        loss.backward()
    _, held_out = model(x, y)
    _, first = model(x, y)[0], 1
    return held_out.data[0], first.data[0]
"""


def test_an_unpacked_result_the_file_differentiates_is_one_loss_wherever_unpacked_alike():
    # ``_, loss = model(x, y)`` then ``loss.backward()``: the second result of ``model``'s
    # calls is what the file differentiates, in the held-out unpacking too; ``first`` is not it.
    assert _lines(UNPACKED_LOSS) == [17]


# -- a helper folder other scripts put on sys.path: their calls count too ------------------------

PATH_HELPER = {
    "common/helpers.py": """\
        import torch


        def report(loss):
            return loss.data[0]
        """,
    "common/train.py": """\
        import torch
        from helpers import report

        criterion = torch.nn.MSELoss()
        report(criterion(torch.ones(3), torch.zeros(3)))
        """,
}


@pytest.mark.parametrize("other_call, flagged", [
    ("report(criterion(torch.ones(3), torch.zeros(3)))", [("helpers.py", 5)]),
    ("report(torch.zeros(2, 3))", []),  # a batch: report's parameter is not always 0-dim
])
def test_scripts_elsewhere_that_put_a_helper_folder_on_sys_path_are_its_callers_too(tmp_path, other_call, flagged):
    files = dict(PATH_HELPER, **{"attack/run.py": f"""\
        import os
        import sys
        import torch
        sys.path.append('%s/../common' % os.path.dirname(os.path.realpath(__file__)))
        from helpers import report

        criterion = torch.nn.MSELoss()
        {other_call}
        """})
    assert _folder_lines(tmp_path, files) == flagged


# -- lengths: ``x.size()`` and ``x.shape`` hold numbers ------------------------------

PARSER_LOSS = """\
import torch
import torch.nn.functional as F


class Parser(torch.nn.Module):
    def loss(self, scores, heads, mask=None):
        batch, max_len, _ = scores.size()
        log_probs = F.log_softmax(scores, dim=1)
        if mask is not None:
            log_probs = log_probs * mask.unsqueeze(2)
            num = mask.sum() - batch  # a 0-dim tensor, or a number
        else:
            num = float(max_len - 1) * batch
        return -log_probs.sum() / num, heads


def evaluate(scores, heads, mask):
    parser = Parser()
    loss, _ = parser.loss(scores, heads, mask=mask)
    return loss.data[0]


def flat(scores, target):
    size = scores.size()
    size = (size[0] * size[1], size[2])
    num = size[0] * size[1]
    return (F.nll_loss(scores.view(size), target, reduction="none").sum() / num).data[0]
"""


def test_lengths_unpacked_from_a_size_are_numbers_and_keep_a_quotient_0_dim():
    assert _lines(PARSER_LOSS) == [20, 27]


def test_a_quotient_by_something_unknown_is_not_known_0_dim():
    source = PARSER_LOSS.replace("batch, max_len, _ = scores.size()", "batch, max_len, _ = scores.lengths()")
    source = source.replace("num = size[0] * size[1]", "num = weights(size)")
    assert _lines(source) == []


def test_the_flagged_lengths_raise_index_error_on_torch():
    pytest.importorskip("torch")  # a torch run: skipped where torch is not installed
    script = PARSER_LOSS + textwrap.dedent("""
        import json
        found = []
        scores = torch.randn(2, 3, 3, requires_grad=True)
        for call in (lambda: evaluate(scores, None, torch.ones(2, 3)),
                     lambda: flat(torch.randn(2, 3, 4).log_softmax(2), torch.zeros(6, dtype=torch.long))):
            try:
                call()
                found.append("read")
            except IndexError:
                found.append("IndexError")
        print(json.dumps(found))
        """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == ["IndexError", "IndexError"]


# -- torch's private module bases (``_Loss``) make modules too -----------------------

DICE = """\
import torch
from torch.nn.modules.loss import _Loss


class DiceLoss(_Loss):
    def forward(self, input, target):
        s = torch.FloatTensor(1).zero_()  # a one-element vector, not a 0-dim tensor
        for i, c in enumerate(zip(input, target)):
            s = s + torch.dot(c[0], c[1])
        return 1 - s / (i + 1)


def train(x, y):
    criterion = DiceLoss()
    loss = criterion(x, y)
    loss.backward()
    return loss.data[0]
"""


def test_a_loss_class_on_a_private_torch_base_returns_what_its_forward_returns():
    # calling it runs forward: a (1,) tensor, whose .data[0] works, though it is differentiated
    assert _lines(DICE) == []
    assert _lines(DICE.replace("return 1 - s / (i + 1)", "return (1 - s / (i + 1)).sum()")) == [17]


def test_the_one_element_dice_loss_reads_fine_on_torch():
    pytest.importorskip("torch")  # a torch run: skipped where torch is not installed
    script = DICE + textwrap.dedent("""
        value = train(torch.rand(3, 4, requires_grad=True), torch.rand(3, 4))  # no IndexError
        assert isinstance(value.item(), float)
        """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


# -- a base class's constructor, called through a subclass of its own -----------------

TRAINER_BASE = """\
class Trainer(object):
    def __init__(self, opts):
        self.opts = opts
"""

SHAPE_TRAINER = """\
import argparse

import torch.nn.functional as F

from trainer import Trainer


class ShapeTrainer(Trainer):
    def step(self, out, target):
        opts = self.opts
        self.total_loss = opts.kp_loss_wt * F.mse_loss(out, target)
        return self.total_loss.data[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kp_loss_wt", type=float, default=1.0)
    ShapeTrainer(parser.parse_args()).step(None, None)


if __name__ == "__main__":
    main()
"""


def _trainer_lines(tmp_path, shape=SHAPE_TRAINER):
    (tmp_path / "trainer.py").write_text(TRAINER_BASE)
    (tmp_path / "train.py").write_text(shape)
    result = subprocess.run(
        [sys.executable, "-m", "torchlint.frontends.cli", "--isolated", "--no-cache", "--output-format", "json",
         "--exit-zero", "--select", "TL101", "."], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return sorted((item["filename"].rsplit("/", 1)[-1], item["location"]["row"]) for item in json.loads(result.stdout))


def test_an_inherited_constructor_takes_what_the_subclass_calls_pass(tmp_path):
    # the options a base class keeps (self.opts) scale a 0-dim loss: still 0-dim
    assert _trainer_lines(tmp_path) == [("train.py", 12)]


def test_a_subclass_with_a_constructor_of_its_own_leaves_the_parameter_unknown(tmp_path):
    own = SHAPE_TRAINER.replace("class ShapeTrainer(Trainer):\n",
                                "class ShapeTrainer(Trainer):\n    def __init__(self, opts):\n"
                                "        super().__init__(weights_of(opts))\n\n")
    assert _trainer_lines(tmp_path, own) == []


def test_a_subclass_called_with_something_unknown_leaves_it_unknown(tmp_path):
    unknown = SHAPE_TRAINER.replace("ShapeTrainer(parser.parse_args())", "ShapeTrainer(load_options())")
    assert _trainer_lines(tmp_path, unknown) == []


def test_a_decorated_subclass_may_have_a_constructor_of_its_own(tmp_path):
    decorated = SHAPE_TRAINER.replace("class ShapeTrainer(Trainer):\n", "@dataclass\nclass ShapeTrainer(Trainer):\n")
    decorated = decorated.replace("import argparse\n", "import argparse\nfrom dataclasses import dataclass\n")
    assert _trainer_lines(tmp_path, decorated) == []


def test_the_methods_taken_for_tensor_evidence_are_no_module_s_or_array_s():
    # ``model.requires_grad_(False).to(torch.float16)`` is a module (stable-audio-tools'
    # T5 encoder): a method modules or arrays have too proves nothing
    torch = pytest.importorskip("torch")
    import numpy

    from torchlint.knowledge.torch_api import TENSOR_ONLY_METHODS
    for method in TENSOR_ONLY_METHODS:
        assert hasattr(torch.Tensor, method), method
        assert not hasattr(torch.nn.Module, method), method
        assert not hasattr(numpy.ndarray, method), method


def test_a_module_moved_with_to_in_place_is_not_a_discarded_tensor():
    code = textwrap.dedent('''
        import torch
        from transformers import T5EncoderModel
        class Conditioner(torch.nn.Module):
            def __init__(self):
                super().__init__()
                model = T5EncoderModel.from_pretrained("t5-base").train(False).requires_grad_(False).to(torch.float16)
                if self.training:
                    self.model = model
                else:
                    self.__dict__["model"] = model
            def forward(self, texts, device):
                self.model.to(device)
                return texts
        ''')
    assert not [d for d in Engine(all_rules()).check(code).diagnostics if d.code == "TL201"]


_NEVER_BOUND = '''
import argparse
import torch.nn.functional as F
{star}
args = None


def create_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weight", type=float, default=1.0)
    return parser


def parse_dict_args(**kwargs):
    global args
    args = parser.parse_args(["--{{}}={{}}".format(k, v) for k, v in kwargs.items()])


def train(a, b):
    loss = args.weight * F.mse_loss(a, b)
    return loss.data[0]


if __name__ == "__main__":
    args = create_parser().parse_args()
'''


@pytest.mark.parametrize("star, reported", [
    # mean-teacher: ``parser`` is bound nowhere, so that assignment never completes (NameError);
    # ``args`` is the parsed command line, a number times a 0-dim loss is 0-dim
    ("", True),
    # a star import of a module nobody knows may bind ``parser``: nothing is concluded
    ("from unknown_helpers import *", False),
])
def test_an_assignment_reading_a_name_nothing_binds_never_completes(star, reported):
    code = _NEVER_BOUND.format(star=star)
    lines = [d.line for d in Engine(all_rules()).check(code).diagnostics if d.code == "TL101"]
    assert bool(lines) is reported, lines


def test_python_2_builtins_are_bound_names():
    # 2017 code calls ``reduce`` and ``xrange`` as builtins: the assignment may well complete
    code = textwrap.dedent('''
        import torch.nn.functional as F
        from nets import a, b, parts, summed
        loss = F.mse_loss(a, b)
        if summed:
            loss = reduce(lambda p, q: p + q, parts)
        print(loss.data[0])
        ''')
    assert not [d for d in Engine(all_rules()).check(code).diagnostics if d.code == "TL101"]
    assert [d.line for d in Engine(all_rules()).check(code.replace("reduce(", "reducer(")).diagnostics
            if d.code == "TL101"] == [7]


# -- how many dimensions torch's indexing and functions leave -------------------------

INDEXING_RANKS = """\
import torch
import torch.nn.functional as F
scores = torch.randn(10)
rows = torch.randn(4, 10)
logprob = F.log_softmax(scores, dim=0)
words = torch.LongTensor([3, 4])
print(logprob[words[0]].data[0])
print(rows[words[0]].data[0])
print(rows[rows > 0][0].data[0])
print(rows[rows[:, 0] > 0][0].data[0])
picked = torch.gather(rows, 1, words.view(-1, 1))
print(picked[0][0].data[0])
print(picked[0].data[0])
print((scores @ scores).data[0])
print((rows @ scores).data[0])
print((rows @ scores)[1].data[0])
print(rows.matmul(scores)[1].data[0])
print(rows.flatten()[2].data[0])
print(rows.flatten(1)[2].data[0])
print(rows[words][0].data[0])
"""


def test_ranks_follow_indexing_by_tensors_and_torch_functions():
    # an element of a 1-D tensor picked by a 0-dim index (7); a mask over every
    # dimension selects a 1-D tensor (9); gather is shaped as its index (12); a
    # product of 1-D tensors is 0-dim (14), a matrix times a vector 1-D (16, 17);
    # flatten() is 1-D (18)
    assert _lines(INDEXING_RANKS) == [7, 9, 12, 14, 16, 17, 18]
    # lookalikes: a row picked by a 0-dim index (8), rows picked by a mask over the
    # first dimension (10), a row of a gather (13), a vector product (15), a flatten
    # keeping the first dimension (19), rows picked by an index vector (20)


CRITERION_DEFAULT = """\
import torch


def mse(x, x_hat):
    return torch.mean(torch.pow(x - x_hat, 2.))


def refine(module, x, criterion=None, tol=1e-9):
    if criterion is None:
        criterion = mse
    y = module(x)
    if criterion(x, y).data[0] < tol:
        return y
    return x


def refine_with(module, x, criterion=None, tol=1e-9):
    if criterion is None:
        criterion = mse
    y = module(x)
    if criterion(x, y).data[0] < tol:
        return y
    return x


def run(module, x, custom):
    refine(module, x)
    refine_with(module, x, criterion=custom)
"""


def test_a_called_name_that_may_hold_none_is_what_its_other_bindings_hold(tmp_path):
    # every call of refine leaves criterion None: the call that runs calls mse (12);
    # refine_with is given something unknown, so its criterion is unknown (21)
    assert _cli_lines(tmp_path, CRITERION_DEFAULT) == [12]


OPTIONS_CLASS = """\
import argparse
import torch
import torch.nn as nn


class Options:
    def __init__(self):
        self.parser = argparse.ArgumentParser()
        self.parser.add_argument('--alpha', type=float, default=50)
        self.opt = None

    def parse(self):
        self.opt = self.parser.parse_args()
        self.opt.isTrain = True
        {between}
        return self.opt

    def reset(self):
        self.opt = torch.ones(3)


opt = Options().parse()
criterion = nn.L1Loss()
loss = criterion(torch.ones(2), torch.zeros(2)) * opt.alpha
print(loss.data[0])
"""


@pytest.mark.parametrize("between, reported", [
    # the method's own earlier ``self.opt = ...`` is what its return reads, not __init__'s None
    ("print(self.opt)", True),
    # a call of a method of ``self`` in between may bind it again: unknown
    ("self.reset()", False),
    # so may an assignment inside a block
    ("if self.opt.alpha > 1:\n            self.opt = None", False),
])
def test_an_attribute_a_method_assigned_earlier_is_read_as_assigned(tmp_path, between, reported):
    lines = _cli_lines(tmp_path, OPTIONS_CLASS.format(between=between))
    assert bool(lines) is reported, lines


ADD_ERR = """\
import torch
import torch.nn as nn


def add_err(overall_err, new_err):
    if overall_err is None:
        return new_err
    else:
        overall_err += new_err
        return overall_err


def add_or_fill(overall_err, new_err):
    if overall_err is None:
        return torch.zeros(3)
    overall_err += new_err
    return overall_err


def train(preds, targets):
    criterion = nn.NLLLoss()
    total = None
    for pred, target in zip(preds, targets):
        total = add_err(total, criterion(pred, target))
    total.backward()
    print(total.data[0])


def train_filled(preds, targets):
    criterion = nn.NLLLoss()
    total = None
    for pred, target in zip(preds, targets):
        total = add_or_fill(total, criterion(pred, target))
    print(total.data[0])


def add_cat(overall_err, new_err):
    if overall_err is None:
        return new_err
    return torch.cat([overall_err.view(-1), new_err.view(-1)])


def train_cat(preds, targets):
    criterion = nn.NLLLoss()
    total = None
    for pred, target in zip(preds, targets):
        total = add_cat(total, criterion(pred, target))
    print(total.data[0])
"""


def test_a_helper_returning_what_it_is_passed_where_the_accumulator_is_none(tmp_path):
    # ELF's add_err(total, loss): called with None, it returns the loss it was given, a
    # 0-dim NLLLoss, and given that 0-dim total back, a 0-dim sum: a fixed point (26).
    # add_or_fill returns a 3-element tensor at first (34); add_cat returns the loss at
    # first but a 1-D tensor once given it back: no fixed point, unknown (48)
    assert _cli_lines(tmp_path, ADD_ERR) == [26]


# -- running means, lambdas, ``.item()`` and calls on receivers of several classes -----

RUNNING_MEAN = """\
import numpy as np
import torch
import torch.nn.functional as F


def running(model, loader):
    avg = 0
    for i, (x, y) in enumerate(loader):
        loss = F.nll_loss(model(x), y)
        avg += (loss - avg) / (i + 1)
    print(avg.data[0])


def running_vector(model, loader):
    avg = 0
    for i, (x, y) in enumerate(loader):
        per_sample = F.nll_loss(model(x), y, reduction="none")
        avg += (per_sample - avg) / (i + 1)
    print(avg.data[0])


def counted(x, mask):
    total = torch.sum(x * mask)
    count = torch.sum(mask).item()
    size = np.prod(x.size()).item()
    return (total / count).data[0], (torch.sum(x) / size).data[0]
"""


def test_a_running_mean_updated_with_itself_keeps_the_loss_s_dimensions():
    # e2e-model-learning: ``avg += (loss - avg) * n / (i + n)`` starts at 0 and adds a
    # 0-dim loss minus itself: 0-dim on every pass (11); a per-sample loss makes it 1-D (19).
    # ``.item()`` of a tensor or of a NumPy value is a Python number: dividing a 0-dim
    # sum by it keeps 0 dimensions (26).
    assert _lines(RUNNING_MEAN) == [11, 26, 26]


LAMBDA_COSTS = {
    "batch.py": """\
        def get_cost(model, data, loss_fn):
            avg = 0
            for i, (x, y) in enumerate(data):
                batch_cost = loss_fn(model(x), y)
                avg += (batch_cost - avg) / (i + 1)
            print(avg.data[0])
            return avg
        """,
    "policy.py": """\
        import torch.nn as nn
        import batch


        def run(model, data, d):
            cost = lambda z, y: (z - y.mv(d)).clamp(min=0).mean()
            total = batch.get_cost(model, data, cost)
            nll = batch.get_cost(model, data, nn.NLLLoss())
            print(total.data[0], nll.data[0])
        """,
    "vector.py": """\
        import batch


        def run(model, data, d):
            per_row = lambda z, y: (z - y.mv(d)).clamp(min=0)
            return batch.get_cost(model, data, per_row)
        """,
}


def test_a_lambda_passed_as_the_loss_function_gives_what_its_body_gives(tmp_path):
    # A lambda ending in ``.mean()`` and an ``nn.NLLLoss()`` both make 0-dim costs; vector.py's
    # lambda gives a 1-D one, so get_cost's running mean is not known 0-dim (6) ...
    assert _folder_lines(tmp_path, LAMBDA_COSTS) == []
    # ... until it is gone: then every call passes a 0-dim loss function.
    (tmp_path / "vector.py").unlink()
    assert _folder_lines(tmp_path, {k: v for k, v in LAMBDA_COSTS.items() if k != "vector.py"}) == [
        ("batch.py", 6), ("policy.py", 9), ("policy.py", 9)]


FACTORY = {
    "models/__init__.py": "",
    "models/base.py": """\
        class BaseModel:
            def initialize(self, opt):
                self.opt = opt
        """,
    "models/cycle.py": """\
        import torch.nn as nn
        from models.base import BaseModel


        class CycleModel(BaseModel):
            def initialize(self, opt):
                BaseModel.initialize(self, opt)
                self.criterion = nn.L1Loss()

            def backward(self, fake, real):
                loss = self.criterion(fake, real) * self.opt.lambda_a
                print(loss.data[0])
        """,
    "models/factory.py": """\
        def create_model(opt):
            if opt.model == "cycle":
                from models.cycle import CycleModel
                model = CycleModel()
            else:
                from models.missing import OtherModel
                model = OtherModel()
            model.initialize(opt)
            return model
        """,
    "train.py": """\
        import argparse
        from models.factory import create_model

        parser = argparse.ArgumentParser()
        parser.add_argument("--lambda_a", type=float, default=10.0)
        opt = parser.parse_args()
        model = create_model(opt)
        """,
}


def test_a_method_called_on_a_receiver_of_unknown_class_still_passes_its_arguments(tmp_path):
    # ``model`` in create_model may be a class the project does not hold: the call
    # ``model.initialize(opt)`` may still be CycleModel's, and it passes the options,
    # so ``self.opt.lambda_a`` is a number and the scaled L1 loss is 0-dim (12).
    assert _folder_lines(tmp_path, FACTORY) == [("cycle.py", 12)]
    # Another module calling ``initialize`` on something unknown with a tensor: the
    # options are no longer all it may be given.
    files = dict(FACTORY, **{"other.py": """\
        import torch
        import models.cycle


        def reset(anything):
            anything.initialize(torch.ones(3))
        """})
    assert _folder_lines(tmp_path, files) == []


# -- answers that do not depend on which question came first ----------------------------

CRITIC_LOOP = """\
import torch
from torch.autograd import Variable


class Trainer(object):
    def train(self):
        for g_iter in range(100):
            d_loss_real = 0
            Wasserstein_D = 0
            for d_iter in range(5):
                images = self.data.__next__()
                if self.cuda:
                    images = Variable(images.cuda())
                else:
                    images = Variable(images)
                d_loss_real = self.D(images)
                d_loss_real = d_loss_real.mean()
                Wasserstein_D = d_loss_real * 2
            info = {
                'Wasserstein distance': Wasserstein_D.data[0],
                'Loss D Real': d_loss_real.data[0],
            }
            for tag, value in info.items():
                self.log(tag, value)
            info = {'real_images': self.real_images(images)}
            for tag, images in info.items():
                self.log(tag, images)
"""


def test_a_name_first_asked_from_inside_a_cycle_keeps_all_its_bindings():
    # Working out line 20 goes round the loop (``images`` is rebound below) to line 21's
    # ``d_loss_real`` while ``d_loss_real.mean()`` is still being worked out: that answer
    # (the number 0 alone) held only inside the cycle; kept, line 21 was missed.
    assert _lines(CRITIC_LOOP) == [20, 21]


def test_each_read_of_the_cycle_gets_the_answer_it_gets_when_asked_alone():
    import libcst as cst
    import libcst.matchers as m
    from torchlint.analysis.context import analyse

    def reads():
        module = cst.parse_module(CRITIC_LOOP)
        context, _ = analyse(module, [])
        found = []

        class Reads(cst.CSTVisitor):
            def visit_Attribute(self, node):
                if node.attr.value == "data" and m.matches(node.value, m.Name(value=m.DoesNotMatch("self"))):
                    found.append(node.value)  # the two ``.data[0]`` reads
        module.visit(Reads())
        return context.inference, found

    alone = []
    for index in range(2):
        inference, found = reads()
        alone.append(inference.used_as_tensor(found[index]))
    inference, found = reads()
    in_order = [inference.used_as_tensor(found[index]) for index in range(2)]
    inference, found = reads()
    reversed_order = [inference.used_as_tensor(found[index]) for index in (1, 0)][::-1]
    assert alone == in_order == reversed_order
    assert all(value.if_tensor is not None or value.scalar for value in alone)


def test_a_specialised_call_inside_a_cycle_is_no_internal_error(tmp_path):
    # ``pad_to(t, 0, ...)``: the constant decides an ``if`` of the def, so a copy of the
    # inference works the call out while the caller's own evaluation is in progress;
    # each keeps its own record of what it is working out.
    (tmp_path / "padding.py").write_text(textwrap.dedent("""\
        import torch
        import torch.nn.functional as F


        def pad_to(t, dim, size, fill=0):
            if t.size(dim) < size:
                shape = list(t.size())
                missing = size - t.size(dim)
                t = t.view(shape[:dim + 1] + [-1])
                if t.dim() == 2:
                    t = t.unsqueeze(0)
                t = F.pad(t, (0, 0, 0, missing), value=fill)
                shape[dim] = size
                t = t.view(shape)
            return t


        def match_sizes(a, b, dim, fill):
            if a.size(dim) < b.size(dim):
                a = pad_to(a, dim, b.size(dim), fill=fill)
            elif a.size(dim) > b.size(dim):
                b = pad_to(b, dim, a.size(dim), fill=fill)
            return a, b
        """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import torch
        from padding import *


        def step(labels, scores, end_token):
            labels = pad_to(labels, 0, labels.size(0) + 1, end_token)
            labels, scores = match_sizes(labels, scores, 0, end_token)
            loss = scores.sum()
            return loss.data[0]
        """))
    result = subprocess.run(
        [sys.executable, "-m", "torchlint.frontends.cli", "--isolated", "--no-cache", "-j1", "--select", "TL101", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "internal error" not in result.stderr, result.stderr
    assert "train.py:9:12: TL101" in result.stdout


def test_what_bindings_agree_on_does_not_depend_on_their_order():
    import itertools

    from torchlint.analysis.inference import NUMBER, UNKNOWN, Kind, Value, meet

    loss = Value(Kind.TENSOR, scalar=True, ndim=0, one_element=True, loss=True)
    either = Value(Kind.UNKNOWN, unless_number=loss)
    for values in ([NUMBER, loss, UNKNOWN], [NUMBER, loss, either], [either, NUMBER, loss, NUMBER]):
        answers = {meet(order) for order in itertools.permutations(values)}
        assert len(answers) == 1, values
    assert meet([NUMBER, loss, UNKNOWN]) == UNKNOWN
    assert meet([either, NUMBER, loss]).unless_number == loss


EVAL_WITH_BUFFERS = """\
import torch
import torch.nn as nn
from torch.autograd import Variable


def test(model, test_x, test_y, batch_size):
    test_loss = 0
    data = Variable(torch.FloatTensor(batch_size, test_x.size(1)), volatile=True)
    targets = Variable(torch.FloatTensor(batch_size, test_y.size(1)), volatile=True)
    for i in range(0, test_x.size(0), batch_size):
        data.data[:] = test_x[i:i + batch_size]
        targets.data[:] = test_y[i:i + batch_size]
        output = model(data)
        test_loss += nn.MSELoss()(output, targets)
    test_loss = test_loss.data[0] / (test_x.size(0) / batch_size)
    return test_loss
"""


def test_a_statement_that_rebinds_the_name_it_reads_does_not_reach_its_own_read():
    # ``test_loss = test_loss.data[0] / n`` runs once: what it binds is not what its
    # right side reads (0, then the sum of the MSE losses: a 0-dim tensor wherever
    # ``.data`` works). The statements writing into ``.data[:]`` above changed the
    # order in which the bindings met, and with it the answer.
    assert _lines(EVAL_WITH_BUFFERS) == [15]


NONZERO_ROWS = """\
import torch


def pairs(mask, scores):
    first = mask.nonzero()[:, 0]
    rows = torch.nonzero(scores > 0)[:, 1]
    flat = mask[0, 0, :-1].nonzero()[:, 0]
    print(first[0].data[0], rows[1].data[0], flat[2].data[0])
    # Lookalikes: a row of indices (of an array's nonzero(), a tuple's first array) and a
    # tuple of index tensors keep their dimension.
    row = mask.nonzero()[0]
    picked = torch.nonzero(scores > 0, as_tuple=True)[0]
    print(row.data[0], picked.data[0])
"""


def test_a_column_of_nonzero_indices_gives_elements_that_are_0_dim():
    # ``x.nonzero()`` is 2-D whatever x's shape (an array's is a tuple, which no ``[:, 0]``
    # reads); an element of one of its columns is 0-dim.
    assert _lines(NONZERO_ROWS) == [8, 8, 8]


CONFIG_PARSER_SUBCLASS = """\
import configparser
import torch


class RunFile(configparser.ConfigParser):
    def __init__(self, name):
        super(RunFile, self).__init__()
        self.read(name)

    def tensor_of(self, section):
        return torch.ones(3)


def loss_of(x, run):
    beta = run.getfloat("learning", "beta", fallback=0.0)
    entropy = beta * x.sum()
    scaled = run.tensor_of("learning") * x.sum()
    print(entropy.data[0], scaled.data[0])


if __name__ == "__main__":
    loss_of(torch.ones(3), RunFile("run.ini"))
"""


def test_what_a_config_parser_subclass_inherits_reads_settings():
    # ``getfloat`` comes from configparser: a number, which adds no dimension to the
    # sum; the class's own ``tensor_of`` gives what its body returns (3 elements).
    assert _lines(CONFIG_PARSER_SUBCLASS) == [18]


DISCREPANCY_STEPS = """\
import torch.nn.functional as F


def train(loader, model, weight_of, steps):
    for x, y in loader:
        loss = 0
        loss -= F.mse_loss(model(x), y)
        for i in range(steps):
            loss = 0
            loss += F.mse_loss(model(x), y) * weight_of(i)
            loss.backward()
        print(loss.data[0])
"""


def test_a_binding_differentiated_without_a_gradient_has_one_element():
    # ``loss += mse * weight_of(i)``: the weight is of no kind inference knows, but
    # ``loss.backward()`` right after takes only a one-element tensor; with no step the
    # loss read is the 0-dim one before the loop. One element on every run, 0-dim on
    # some: ``.item()`` reads both.
    assert _lines(DISCREPANCY_STEPS) == [12]
    # Without the backward nothing says the weighted loss has one element.
    assert _lines(DISCREPANCY_STEPS.replace("            loss.backward()\n", "")) == []
