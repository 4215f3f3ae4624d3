"""The project model: findings that need the project's other modules, from every front end.

A small 2018-style project is written to a temporary folder: a package of
loss classes re-exported through ``from .loss import *``, a module of helpers,
and a training script that gets ``nn``/``F`` through ``from model import *``.
The command, flake8 (in a subprocess) and ``--stdin-filename`` must give the
same findings; the result cache must notice when a module it consulted
changes; an unparseable module must not stop the others; and the fixed
project must run under real torch.
"""

import ast
import json
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

from torchlint.analysis.outline import Outline, inherits_from_elsewhere
from torchlint.engine.linter import Engine
from torchlint.rules import all_rules

LOSS = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiBoxLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.smooth = nn.SmoothL1Loss()

    def forward(self, loc, conf, targets):
        loss_l = self.smooth(loc, targets)
        loss_c = F.cross_entropy(conf, targets.long().argmax(1))
        return loss_l, loss_c
"""

MODEL = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


def evaluate(net, x):
    out = net(x)
    loss = F.mse_loss(out, x)
    return loss


class Trainer:
    def __init__(self, net):
        self.net = net
        self.criterion = nn.MSELoss()

    def step(self, x):
        return self.criterion(self.net(x), x)
"""

TRAIN = """\
from model import *
from layers import MultiBoxLoss

criterion = MultiBoxLoss()


def step(loc, conf, targets, net, x):
    loss_l, loss_c = criterion(loc, conf, targets)
    loss = loss_l + loss_c
    first = loss.data[0]
    second = loss_l.data[0]
    y = F.sigmoid(x)
    value = evaluate(net, x).data[0]
    trainer = Trainer(net)
    other = trainer.step(x).data[0]
    return first, second, y, value, other
"""

EXPECTED = {
    ("train.py", 10, "TL101"), ("train.py", 11, "TL101"), ("train.py", 12, "TL104"),
    ("train.py", 13, "TL101"), ("train.py", 15, "TL101"),
}


def _write_project(root):
    (root / "layers").mkdir()
    (root / "layers" / "__init__.py").write_text("from .loss import *\n")
    (root / "layers" / "loss.py").write_text(LOSS)
    (root / "model.py").write_text(MODEL)
    (root / "train.py").write_text(TRAIN)
    (root / "pyproject.toml").write_text("[tool.torchlint]\n")


def _cli(root, *args, stdin=None):
    return subprocess.run([sys.executable, "-m", "torchlint.frontends.cli", *args], cwd=root, input=stdin,
                          capture_output=True, text=True, timeout=300)


def _json_findings(output, default_name=None):
    return {(os.path.basename(item["filename"]) if default_name is None else default_name,
             item["location"]["row"], item["code"]) for item in json.loads(output)}


@pytest.fixture
def project(tmp_path):
    _write_project(tmp_path)
    return tmp_path


def test_command_follows_the_project(project):
    result = _cli(project, "--no-cache", "--output-format", "json", ".")
    assert _json_findings(result.stdout) == EXPECTED, result.stderr


def test_flake8_and_stdin_agree_with_the_command(project):
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "TL", "train.py"], cwd=project,
                            capture_output=True, text=True, timeout=300)
    found = {(line.split(":")[0], int(line.split(":")[1]), line.split(" ")[1]) for line in flake8.stdout.splitlines()}
    assert found == EXPECTED, flake8.stdout + flake8.stderr
    stdin = _cli(project, "--no-cache", "--output-format", "json", "--stdin-filename", "train.py", "-",
                 stdin=TRAIN)
    assert _json_findings(stdin.stdout, "train.py") == EXPECTED, stdin.stderr


def _concise_findings(output):
    return {(os.path.basename(line.split(":")[0]), int(line.split(":")[1]), line.split(" ")[1])
            for line in output.splitlines() if ": TL" in line}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cache_notices_a_changed_dependency(project, jobs):
    # The concise output: the JSON one asks for fix previews, which the cache does not hold.
    # model.py is checked before train.py: the model is handed its text then,
    # and the cache must still learn that train.py's findings depend on it.
    cache = ["--cache-dir", str(project / ".cache"), "-j", jobs, "."]
    assert _concise_findings(_cli(project, *cache).stdout) == EXPECTED
    assert (project / ".cache" / "results-v2.json").is_file()
    assert _concise_findings(_cli(project, *cache).stdout) == EXPECTED  # from the cache
    # ``evaluate`` now returns a value nobody can know: line 13 is no longer a finding.
    (project / "model.py").write_text(MODEL.replace("    return loss\n", "    return out\n"))
    assert _concise_findings(_cli(project, *cache).stdout) == EXPECTED - {("train.py", 13, "TL101")}


def test_cache_notices_a_module_added_where_an_import_found_nothing(tmp_path):
    (tmp_path / "train.py").write_text(
        "from helpers import total_loss\n"
        "\n"
        "def report(out, y):\n"
        "    loss = total_loss(out, y)\n"
        "    print(loss.data[0])\n")
    # Only train.py is checked: helpers.py is seen through its import alone.
    # (The concise output: the JSON one asks for fix previews, which the cache does not hold.)
    cache = ["--cache-dir", str(tmp_path / ".cache"), "train.py"]
    assert "train.py:5" not in _cli(tmp_path, *cache).stdout  # helpers: nowhere to be found
    assert "train.py:5" not in _cli(tmp_path, *cache).stdout  # from the cache
    (tmp_path / "helpers.py").write_text(
        "import torch.nn.functional as F\n"
        "\n"
        "def total_loss(out, y):\n"
        "    return F.cross_entropy(out, y)\n")
    assert "train.py:5:11: TL101" in _cli(tmp_path, *cache).stdout


def test_a_broken_module_is_unknown_and_stops_nothing(project):
    (project / "model.py").write_text("def evaluate(:\n")
    result = _cli(project, "--no-cache", "--output-format", "json", ".")
    found = _json_findings(result.stdout)
    # Without model.py nothing comes through its star import; the loss classes still count.
    assert {("train.py", 10, "TL101"), ("train.py", 11, "TL101")} <= found
    assert "Traceback" not in result.stderr
    assert any(item["code"] is None and item["filename"].endswith("model.py") for item in json.loads(result.stdout))


def test_fixed_project_runs_warning_free_under_torch(project):
    torch = pytest.importorskip("torch")
    result = _cli(project, "--no-cache", "--fix", ".")
    assert result.returncode in (0, 1), result.stderr
    fixed = (project / "train.py").read_text()
    assert ".data[0]" not in fixed and "F.sigmoid" not in fixed
    sys.path.insert(0, str(project))
    try:
        namespace = {}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            exec(compile(fixed, str(project / "train.py"), "exec"), namespace)
            torch.manual_seed(0)
            loc, conf = torch.randn(4, 3), torch.randn(4, 3)
            targets = torch.eye(3)[torch.tensor([0, 1, 2, 0])]
            net = torch.nn.Identity()
            first, second, y, value, other = namespace["step"](loc, conf, targets, net, torch.randn(2, 2))
    finally:
        sys.path.remove(str(project))
        for name in ("model", "layers", "layers.loss"):
            sys.modules.pop(name, None)
    assert isinstance(first, float) and isinstance(second, float) and value == 0.0 and other == 0.0


# -- evidence inside one file -------------------------------------------------------


def _codes(source):
    engine = Engine(all_rules())
    return [(d.line, d.code) for d in engine.check(textwrap.dedent(source)).diagnostics]


def test_isinstance_and_early_return_prove_a_tensor():
    assert _codes("""
        import torch

        def move(x):
            if isinstance(x, torch.Tensor):
                x.cuda()
            if not torch.is_tensor(x):
                return x
            x.cuda()
        """) == [(6, "TL201"), (9, "TL201")]


def test_a_guard_ends_where_the_name_is_rebound_or_the_test_is_not_torch():
    assert _codes("""
        import torch

        def move(x, kind):
            if isinstance(x, kind):
                x.cuda()
            if isinstance(x, torch.Tensor):
                x = x.tolist()
                x.cuda()
        """) == []


def test_backward_without_gradient_proves_a_one_element_tensor():
    assert _codes("""
        def step(model, batch, grad):
            loss = model(batch)
            loss.backward()
            print(loss.data[0])
            out = model(batch)
            out.backward(grad)
            print(out.data[0])
        """) == [(5, "TL101")]


def test_project_function_that_may_return_none_is_unknown():
    assert _codes("""
        import torch.nn.functional as F

        def maybe(x, y):
            if x is None:
                return
            return F.mse_loss(x, y)

        def use(x, y):
            return maybe(x, y).data[0]
        """) == []


def test_dict_and_tuple_values_keep_their_kind():
    assert _codes("""
        import torch.nn as nn

        crit = nn.MSELoss()

        def losses(a, b):
            return {"mse": crit(a, b)}, crit(b, a)

        def use(a, b):
            named, other = losses(a, b)
            return named["mse"].data[0] + other.data[0]
        """) == [(11, "TL101"), (11, "TL101")]


def test_the_last_binding_in_an_enclosing_block_decides():
    assert _codes("""
        import torch.nn.functional as F

        def per_box(a, b):
            c = F.cross_entropy(a, b, reduction="none")
            c = c.view(3, -1)
            c = F.cross_entropy(a, b, reduction="sum")
            c /= 4
            return c.data[0]

        def maybe(a, b, flag):
            c = F.cross_entropy(a, b)
            if flag:
                c = c.view(1)
            return c.data[0]
        """) == [(9, "TL101")]


def test_a_data_read_leaves_out_number_bindings():
    assert _codes("""
        import torch.nn as nn

        crit = nn.CrossEntropyLoss()

        def train(batches):
            total = 0
            for x, y in batches:
                total = total + crit(x, y).detach()
            return total.data[0]

        class Meter:
            def __init__(self):
                self.acc = 0

            def add(self, x, y):
                self.acc += crit(x, y).detach()
                return self.acc.data[0]
        """) == [(10, "TL101"), (18, "TL101")]


def test_methods_only_tensors_have_prove_a_tensor():
    # ``masked_select`` is a tensor's alone: the lost copy ``pin_memory()`` makes is a
    # tensor's (TL201). A DataFrame has ``eq`` too: nothing is known of ``frame``'s. The
    # full reductions' ``.data[0]`` work on neither torch >= 0.4 nor NumPy nor pandas >= 1.0.
    assert _codes("""
        def accuracy(pred, target, mask):
            hits = pred.eq(target).masked_select(mask)
            hits.pin_memory()
            return hits.sum().data[0]

        def other(frame, target):
            hits = frame.eq(target)
            hits.pin_memory()
            return hits.sum().data[0]
        """) == [(4, "TL201"), (5, "TL101"), (10, "TL101")]


def test_volatile_through_a_method_of_the_project():
    assert _codes("""
        from torch.autograd import Variable

        class Solver:
            def tensor2var(self, x, volatile=False):
                return Variable(x, volatile=volatile)

            def test(self, x):
                return self.tensor2var(x, volatile=True)
        """) == [(6, "TL107"), (6, "TL102"), (9, "TL102")]


def test_members_come_from_base_classes_and_either_class_of_an_if():
    assert _codes("""
        import torch.nn as nn
        import torch.nn.functional as F

        class RPN(nn.Module):
            def __init__(self):
                super().__init__()
                self.loss_cls = 0

            def forward(self, x, y):
                self.loss_cls = F.cross_entropy(x, y)
                return x

        class Base(nn.Module):
            def __init__(self):
                super().__init__()
                self.rpn = RPN()

        class A(Base):
            pass

        class B(Base):
            pass

        def build(kind):
            if kind == "a":
                net = A()
            else:
                net = B()
            return net.rpn.loss_cls.data[0]
        """) == [(30, "TL101")]


def test_gradient_penalties_and_builtin_min_max_stay_scalar():
    assert _codes("""
        import torch
        from torch.autograd import grad

        def penalty(critic, x, real_err, fake_err, k):
            out = critic(x)
            gradients = grad(outputs=out, inputs=x, grad_outputs=torch.ones(3))[0]
            gp = 10 * ((gradients.norm(2, dim=1) - 1) ** 2).mean()
            weight = min(max(k, 0), 1)
            loss = real_err.mean() - weight * gp
            return gp.data[0], loss.data[0]
        """) == [(11, "TL101"), (11, "TL101")]  # ``real_err.mean()`` is one value (a 0-dim tensor or
    # a NumPy scalar): minus a 0-dim tensor, ``loss`` is a 0-dim tensor too


def test_packages_a_script_puts_on_sys_path_are_found(tmp_path):
    (tmp_path / "lib" / "model").mkdir(parents=True)
    (tmp_path / "lib" / "model" / "__init__.py").write_text("")
    (tmp_path / "lib" / "model" / "losses.py").write_text(
        "import torch.nn.functional as F\n\ndef detection_loss(a, b):\n    return F.cross_entropy(a, b)\n")
    (tmp_path / "_init_paths.py").write_text(
        "import os.path as osp\nimport sys\n\ndef add_path(path):\n    if path not in sys.path:\n"
        "        sys.path.insert(0, path)\n\nthis_dir = osp.dirname(__file__)\nadd_path(osp.join(this_dir, 'lib'))\n")
    (tmp_path / "train.py").write_text(
        "import _init_paths\nfrom model.losses import detection_loss\n\n"
        "def step(a, b):\n    return detection_loss(a, b).data[0]\n")
    result = _cli(tmp_path, "--isolated", "--no-cache", "--output-format", "json", "train.py")
    assert _json_findings(result.stdout) == {("train.py", 5, "TL101")}, result.stderr


@pytest.mark.parametrize("call, reached", [
    ("sys.path.insert(0, LIB)", "lib"),  # in front of the script's folder: lib/helpers.py
    ("sys.path.append(LIB)", "beside"),  # after it: the helpers.py beside the script
])
def test_a_folder_put_on_sys_path_is_searched_where_python_puts_it(tmp_path, call, reached):
    (tmp_path / "lib").mkdir()
    loss = "import torch.nn.functional as F\n\ndef total_loss(out, y):\n    return F.cross_entropy(out, y)\n"
    unknown = "def total_loss(out, y):\n    return out\n"
    (tmp_path / "lib" / "helpers.py").write_text(loss if reached == "lib" else unknown)
    (tmp_path / "helpers.py").write_text(unknown if reached == "lib" else loss)
    (tmp_path / "train.py").write_text(
        f"import os\nimport sys\n\nLIB = os.path.join(os.path.dirname(__file__), 'lib')\n{call}\n"
        "from helpers import total_loss\n\n"
        "def report(out, y):\n    loss = total_loss(out, y)\n    print(loss.data[0])\n")
    # What Python imports, run the way the script is run:
    probe = subprocess.run([sys.executable, "-c", f"import os, sys\nLIB = {str(tmp_path / 'lib')!r}\n{call}\n"
                            "import helpers\nprint(helpers.__file__)"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=60)
    assert (os.path.basename(os.path.dirname(probe.stdout.strip())) == "lib") == (reached == "lib"), probe.stderr
    assert "train.py:10:11: TL101" in _cli(tmp_path, "--isolated", "--no-cache", "train.py").stdout


def test_trees_are_kept_only_while_a_module_is_analysed(project):
    """A module read for what its imports bind, and the file just checked,
    keep their text and facts but not their trees: a host process (flake8)
    would otherwise walk them in every garbage collection."""
    from torchlint.analysis import project as model
    from torchlint.analysis.project import Project
    from torchlint.core.source import SourceFile
    from torchlint.run.project_files import FileFinder, project_roots

    engine = Engine(all_rules(), project=Project(FileFinder(project_roots(str(project), ()))))
    path = str(project / "train.py")
    result = engine.check(SourceFile(TRAIN), module=engine.module_for(path))
    assert {("train.py", d.line, d.code) for d in result.diagnostics} == EXPECTED
    modules = {key: module for key, module in engine.project._modules.items() if module is not None}
    assert {os.path.basename(key) for key in modules} >= {"model.py", "__init__.py"}
    analysed = {id(module) for module in engine.project._analysed.values()}
    assert len(analysed) <= model.ANALYSED_KEPT
    for module in modules.values():
        assert module.facts() is not None
        assert not module.source.parsed or id(module) in analysed, module.ref.key
    checked = engine.project._registered[engine.module_for(path).key]
    assert not checked.source.parsed and checked.facts() is not None
    # Asked again, a released module is parsed again and gives the same answers.
    for module in modules.values():
        module.release()
    again = engine.check(SourceFile(TRAIN), module=engine.module_for(path))
    assert {("train.py", d.line, d.code) for d in again.diagnostics} == EXPECTED


def test_nothing_the_model_keeps_holds_the_checked_tree(project):
    """The checked text's tree dies with the check, even while the model keeps
    the module registered (and can still work out the digest of its bytes)."""
    import gc
    import weakref

    from torchlint.analysis.project import Project
    from torchlint.core.source import SourceFile
    from torchlint.run.project_files import FileFinder, project_roots

    engine = Engine(all_rules(), project=Project(FileFinder(project_roots(str(project), ()))))
    for text in (TRAIN, "import torch\n\nx = torch.ones(2)\n"):  # analysed, and screened out
        path = str(project / "train.py")
        source = SourceFile(text)
        tree = weakref.ref(source.tree)
        engine.check(source, module=engine.module_for(path))
        del source
        gc.collect()
        assert tree() is None
        # The digest of the bytes, asked only now: train.py's bytes decode to TRAIN alone.
        assert (engine.project._registered[path].digest is not None) == (text == TRAIN)


def test_calling_a_class_reads_only_the_headers_of_its_module(tmp_path, monkeypatch):
    """What calling a class makes (a module, another object) is in its header:
    one libcst parse of the module with every body cut answers it for every
    class there, even one too long to analyse whole."""
    import torchlint.core.source as source_module
    from torchlint.analysis.inference import Kind
    from torchlint.analysis.project import MAX_DEFINITION_LINES, Project
    from torchlint.core.settings import Settings
    from torchlint.run.project_files import FileFinder

    methods = "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(MAX_DEFINITION_LINES // 3 + 1))
    (tmp_path / "models.py").write_text(
        "import torch.nn as nn\n\n\nclass Base(nn.Module):\n    pass\n\n\n"
        f"class Big(Base):\n{methods}\n\nclass Plain:\n    def go(self):\n        return 1\n")
    parsed = []
    real = source_module.libcst_tree

    def counting(text, *args, **kwargs):
        parsed.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(source_module, "libcst_tree", counting)
    finder = FileFinder([str(tmp_path)])
    project = Project(finder, Settings())
    ref = finder.module_for(str(tmp_path / "models.py"))
    assert project.call_value(ref, "Big").kind is Kind.MODULE
    assert project.call_value(ref, "Base").kind is Kind.MODULE
    assert project.call_value(ref, "Plain").kind is Kind.OBJECT
    assert len(parsed) == 1 and "def m1(" not in parsed[0]


def test_star_imports_that_go_round_end_the_search(tmp_path):
    # seq2seq-dnc (2017): ``dnc/__init__.py`` star-imports ``.memory``, whose ``from dnc
    # import *`` names the package again. Looking a name up through them must stop (not
    # found) rather than go round until Python's stack runs out (an internal error of
    # whichever rule asked).
    from torchlint.analysis.project import Project
    from torchlint.core.settings import Settings
    from torchlint.run.project_files import FileFinder

    (tmp_path / "dnc").mkdir()
    (tmp_path / "dnc" / "__init__.py").write_text("from .memory import *\n")
    (tmp_path / "dnc" / "memory.py").write_text("import torch\nfrom dnc import *\n\n\nclass Memory(torch.nn.Module):\n    pass\n")
    (tmp_path / "train.py").write_text("from dnc import *\n")
    finder = FileFinder([str(tmp_path)])
    project = Project(finder, Settings())
    ref = finder.module_for(str(tmp_path / "train.py"))
    assert project.definition("dnc.helper", ref) is None
    assert project.definition("dnc.Memory", ref)[1] == "Memory"


def test_a_member_a_base_class_in_another_module_assigns_is_followed(tmp_path):
    # The outline screen must let ``self.w.cuda()`` through although this
    # file never assigns ``w``: the base class's module does, with a tensor.
    (tmp_path / "base.py").write_text(
        "import torch\n\n\nclass Base:\n    def __init__(self):\n        self.w = torch.zeros(3)\n")
    (tmp_path / "child.py").write_text(
        "from base import Base\n\n\nclass Child(Base):\n    def move(self):\n        self.w.cuda()\n")
    expected = {("child.py", 6, "TL201")}
    assert _concise_findings(_cli(tmp_path, "--no-cache", "child.py").stdout) == expected
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "TL", "child.py"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert _concise_findings(flake8.stdout) == expected, flake8.stderr
    # a base the project model knows no members of (torch's) lets the screen stay sharp
    assert not inherits_from_elsewhere(Outline(ast.parse(
        "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    pass\n\n\nclass Deeper(Net, object):\n    pass\n")))
    assert inherits_from_elsewhere(Outline(ast.parse((tmp_path / "child.py").read_text())))


def test_a_question_about_one_definition_parses_only_what_it_names() -> None:
    from torchlint.analysis.project import _keeping
    from torchlint.core.source import SourceFile

    source = textwrap.dedent('''\
        import torch


        class Used(torch.nn.Module):
            def forward(self, x):
                y = x + 1
                z = y + 1
                return z


        class Unused(torch.nn.Module):
            def forward(self, x):
                y = x + 1
                z = y + 1
                return z


        def asked(x):
            return Used()(x)
        ''')
    kept = _keeping(SourceFile(source), ast.parse(source), "asked").splitlines()
    assert len(kept) == len(source.splitlines())
    assert kept[3] == "class Used(torch.nn.Module):"  # named by ``asked``: its header stays
    assert kept[10:15] == ['"""', "", "", "", '"""']  # ``Unused``: cut whole
    assert kept[17:] == source.splitlines()[17:]
    # Asked about every header at once, none is cut whole.
    assert _keeping(SourceFile(source), ast.parse(source), None).splitlines()[10] == "class Unused(torch.nn.Module):"


def test_the_screens_ask_the_project_model_what_an_imported_call_gives(tmp_path):
    """A file calling what it imports from the project reaches libcst for
    TL201 only when the project model may give the call a tensor: calling an
    imported class makes a module or an object, a function returning a string
    gives none; a function returning a tensor does, and is flagged."""
    from torchlint.analysis.project import Project
    from torchlint.core.source import SourceFile
    from torchlint.run.project_files import FileFinder, project_roots

    (tmp_path / "models.py").write_text(
        "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    pass\n\n\nclass Trie:\n"
        "    def add(self, word):\n        return word\n\n\ndef make():\n    return torch.zeros(3)\n\n\n"
        "def label():\n    return 'x'\n")
    quiet = (
        "import torch\nfrom collections import defaultdict\nfrom models import Net, Trie, label\n\n\n"
        "class Runner:\n    def __init__(self):\n        self.trie = Trie()\n        self.kind = Trie\n\n"
        "    def run(self, device):\n        net = Net()\n        net.cuda()\n        name = label()\n"
        "        name.float()\n        self.trie.add(name)\n        self.kind.half()\n"
        "        table = defaultdict(set)\n        table[name].add(1)\n")
    flagged = "import torch\nfrom models import make\n\n\ndef run():\n    made = make()\n    made.cuda()\n"
    engine = Engine(all_rules(), project=Project(FileFinder(project_roots(str(tmp_path), ()))))
    for text, reaches in ((quiet, False), (flagged, True)):
        path = str(tmp_path / "train.py")
        source = SourceFile(text)
        module = engine.module_for(path)
        assert ("TL201" in [r.code for r in engine.rules_for(source.text, source.tree, module)]) == reaches, text
        found = [(d.line, d.code) for d in engine.check(SourceFile(text), module=module).diagnostics]
        assert found == ([(7, "TL201")] if reaches else []), text
    # A text alone (no project): inference knows nothing of what ``make()`` gives, nor does the screen.
    alone = Engine(all_rules())
    assert "TL201" not in [r.code for r in alone.rules_for(flagged, SourceFile(flagged).tree)]
    assert alone.check(SourceFile(flagged)).diagnostics == []


def test_a_package_wins_over_a_module_of_the_same_name_in_one_folder(tmp_path):
    # Python imports helpers/__init__.py, not helpers.py beside it: what the
    # package's total_loss returns is unknown, so nothing is flagged.
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers.py").write_text(
        "import torch.nn.functional as F\n\ndef total_loss(out, y):\n    return F.cross_entropy(out, y)\n")
    (tmp_path / "helpers" / "__init__.py").write_text("def total_loss(out, y):\n    return out\n")
    (tmp_path / "train.py").write_text(
        "from helpers import total_loss\n\ndef report(out, y):\n    loss = total_loss(out, y)\n    print(loss.data[0])\n")
    result = _cli(tmp_path, "--no-cache", "train.py")
    assert result.returncode == 0 and "TL101" not in result.stdout, result.stdout + result.stderr
    # The package is what Python imports (the model reads the text the interpreter would run).
    found = subprocess.run([sys.executable, "-c", "import helpers; print(helpers.__file__)"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
    assert found.stdout.strip().endswith(os.path.join("helpers", "__init__.py"))
    # Without the package's __init__.py, the folder is a namespace portion: the module wins.
    (tmp_path / "helpers" / "__init__.py").unlink()
    assert "train.py:5:11: TL101" in _cli(tmp_path, "--no-cache", "train.py").stdout


@pytest.mark.parametrize("spelled", [
    "'%s/../common' % os.path.dirname(os.path.realpath(__file__))",
    "'{}/../common'.format(os.path.dirname(__file__))",
    "f'{os.path.dirname(__file__)}/../common'",
    "os.path.dirname(__file__) + '/../common'",
])
def test_a_folder_spelled_by_string_formatting_is_put_on_sys_path(tmp_path, spelled):
    (tmp_path / "common").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "common" / "dnn.py").write_text(
        "import torch.nn.functional as F\n\ndef total_loss(out, y):\n    return F.cross_entropy(out, y)\n")
    (tmp_path / "scripts" / "train.py").write_text(
        f"import os\nimport sys\nsys.path.append({spelled})\nfrom dnn import total_loss\n\n"
        "def report(out, y):\n    print(total_loss(out, y).data[0])\n")
    # Python finds it there:
    probe = subprocess.run([sys.executable, "-c", f"import os, sys\n__file__ = {str(tmp_path / 'scripts' / 'train.py')!r}\n"
                            f"sys.path.append({spelled})\nimport dnn\nprint(dnn.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert os.path.basename(os.path.dirname(probe.stdout.strip())) == "common", probe.stderr
    assert "train.py:7:11: TL101" in _cli(tmp_path / "scripts", "--isolated", "--no-cache", "train.py").stdout
