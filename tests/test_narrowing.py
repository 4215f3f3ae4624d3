"""Checking parses only the top-level statements that can hold findings.

``torchlint/engine/narrowing.py`` cuts the defs and classes no rule can flag down to
their headers before libcst parses a file. Findings must be exactly those
of the whole file: every test here compares ``Engine.check`` (narrowed)
with ``Engine.check(..., whole=True)``, on what each would report, where,
and whether a fix is offered. The corpus test does the same on real code.
"""

from __future__ import annotations

import ast
import textwrap
from typing import List

import pytest

from torchlint.analysis.cutting import first_line, last_line
from torchlint.analysis.outline import Outline
from torchlint.core.source import SourceFile
from torchlint.engine.linter import Engine
from torchlint.engine.narrowing import MIN_BODY_LINES, narrow
from torchlint.rules import all_rules
from torchlint.rules.rule import Rule

RULES: List[Rule] = all_rules()
BY_CODE = {rule.code: rule for rule in RULES}
ENGINE = Engine(RULES)  # opt-in rules too

# A body long enough to be worth stubbing, and that no rule can flag.
FILLER = "".join(f"    _unused_{i} = {i}\n" for i in range(MIN_BODY_LINES))


def _report(engine: Engine, source: str, whole: bool):
    result = engine.check(source, whole=whole)
    return [(d.code, d.line, d.column, d.message, d.fix is not None) for d in result.diagnostics], result


def _assert_same_as_whole(engine: Engine, source: str):
    narrowed, result = _report(engine, source, whole=False)
    whole, _ = _report(engine, source, whole=True)
    assert narrowed == whole, source
    return result


# --- the text libcst parses ----------------------------------------------------

SOURCE = '''\
import torch.nn.functional as F


@decorator(1)
def unrelated(x,
              y=2) -> int:
    """A docstring
    on two lines."""
    total = x + y
    return total


class Net(Base, metaclass=Meta):
    @staticmethod
    def helper(x):
        return x * 2

    def forward(self, x):
        return F.sigmoid(x)


def short(x): return x
'''


def _narrowed(source: str, code: str = "TL104"):
    tree = ast.parse(source)
    return narrow(SourceFile(source), tree, [BY_CODE[code]])


def test_stubs_keep_headers_and_line_numbers():
    source = SOURCE.replace("return F.sigmoid(x)", "return F.sigmoid(unrelated(x))")
    narrowed = _narrowed(source)
    assert narrowed is not None
    lines, original = narrowed.source.text.splitlines(), source.splitlines()
    assert len(lines) == len(original)
    # The def no rule can flag keeps its decorator and header, and loses its body.
    assert lines[3:6] == original[3:6]
    assert lines[6:10] == ['    """', "", "", '"""']  # one string over the body's lines
    # The class holding the finding is kept whole, and so is what is too short to stub.
    assert lines[12:] == original[12:]
    assert narrowed.stubbed == ((4, 10),)
    assert [narrowed.keeps(line) for line in (3, 4, 10, 11)] == [True, False, False, True]
    ast.parse(narrowed.source.text)


def test_a_cut_def_nothing_kept_names_is_cut_whole():
    narrowed = _narrowed(SOURCE)  # nothing kept calls ``unrelated``
    assert narrowed is not None
    lines, original = narrowed.source.text.splitlines(), SOURCE.splitlines()
    assert len(lines) == len(original)
    assert lines[3:10] == ['"""', "", "", "", "", "", '"""']  # decorator, header and body: one string
    assert lines[12:] == original[12:]
    assert narrowed.stubbed == ((4, 10),)
    assert [narrowed.keeps(line) for line in (3, 4, 10, 11)] == [True, False, False, True]
    ast.parse(narrowed.source.text)


CHAIN = '''\
import torch.nn.functional as F


class Base(Root):
    def setup(self):
        self.a = 1
        self.b = 2
        return self


class Other(Root):
    def setup(self):
        self.a = 1
        self.b = 2
        return self


@register(Base)
def make(x):
    y = x + 1
    z = y + 1
    w = z + 1
    return w


def forward(x):
    return F.sigmoid(make(x))
'''


def test_a_cut_def_is_kept_as_a_stub_when_kept_code_names_it_through_other_headers():
    narrowed = _narrowed(CHAIN)
    assert narrowed is not None
    lines = narrowed.source.text.splitlines()
    # ``forward`` names ``make``, whose decorator names ``Base``: both keep their headers.
    assert lines[3] == "class Base(Root):" and lines[17:19] == ["@register(Base)", "def make(x):"]
    # Nothing names ``Other``.
    assert lines[10] == '"""' and "Other" not in narrowed.source.text
    assert narrowed.stubbed == ((4, 8), (11, 15), (18, 23))
    ast.parse(narrowed.source.text)


def test_a_body_starting_with_a_decorated_method_is_stubbed_from_its_decorator():
    source = "class Empty(Base):\n    @property\n    def a(self):\n        return 1\n\n    b = 2\n"
    narrowed = _narrowed("import torch.nn.functional as F\n" + source + "def f(x): return F.sigmoid(Empty(x))\n")
    assert narrowed is not None
    assert narrowed.source.text.splitlines()[1:7] == ["class Empty(Base):", '    """', "", "", "", '"""']
    ast.parse(narrowed.source.text)


METHODS = """\
import torch.nn.functional as F


class Net(Base):
    scale = 2

    @property
    def size(self):
        a = 1
        b = 2
        c = a + b
        return c

    def forward(self, x):
        y = x * self.scale
        z = y + 1
        return F.sigmoid(z)
"""


def test_methods_a_kept_class_does_not_need_are_cut():
    narrowed = _narrowed(METHODS)
    assert narrowed is not None
    lines, original = narrowed.source.text.splitlines(), METHODS.splitlines()
    assert lines[:8] == original[:8]  # the class header, class-level code, the method's header
    assert lines[8:12] == ['        """', "", "", '"""']
    assert lines[12:] == original[12:]
    assert narrowed.stubbed == ((7, 12),)
    ast.parse(narrowed.source.text)
    (finding,) = _assert_same_as_whole(Engine([BY_CODE["TL104"]]), METHODS).diagnostics
    assert (finding.line, finding.column) == (17, 17)


def _cut_names(source: str, narrowed) -> set:
    """The names of the defs, classes and methods ``narrowed`` cut."""
    spans = set(narrowed.stubbed)
    return {node.name for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and (first_line(node), last_line(node)) in spans}


def test_a_screen_that_locates_its_candidates_keeps_only_what_holds_them():
    # ``act = F.sigmoid`` passes TL104's screen for every statement; its
    # screen says where its candidates are, so the others are still cut.
    source = _padded("import torch.nn.functional as F\nact = F.sigmoid\n"
                     "def f(x):\n    return F.tanh(x)\n"
                     "def g(x):\n    return x\n"
                     "@F.sigmoid\ndef h(x):\n    return x\n"
                     "class Net:\n    def forward(self, x):\n        return F.sigmoid(x)\n"
                     "    def helper(self):\n" + FILLER.replace("    ", "        ") +
                     "class Plain:\n    def forward(self, x):\n        return x\n")
    assert BY_CODE["TL104"].screen_candidates(Outline(ast.parse(source))) is not None
    assert _cut_names(source, _narrowed(source)) == {"g", "helper", "Plain"}
    result = _assert_same_as_whole(Engine([BY_CODE["TL104"]]), source)
    assert len(result.diagnostics) == 4  # act, f, h's decorator, Net.forward


def test_a_screen_that_cannot_locate_its_candidates_keeps_the_whole_file():
    # TL204's screen has no candidates to give: its module-level one keeps every statement.
    source = _padded("import torch\nimport torch.nn.functional as F\np = F.softmax(torch.ones(3))\n"
                     "def g(y):\n    return y\n")
    assert BY_CODE["TL204"].screen_candidates(Outline(ast.parse(source))) is None
    assert _narrowed(source, "TL204") is None


def test_statements_without_candidates_are_cut_without_asking_the_screen(monkeypatch):
    # TL201 is not accepted by the module-level code; its candidates (on the
    # whole file) are the only statements its screen is asked about.
    source = _padded("import torch\n"
                     "def f():\n    x = torch.zeros(3)\n    x.cuda()\n"
                     "def g(y):\n    y.cuda()\n"
                     "def h(y):\n    return y\n")
    rule = BY_CODE["TL201"]
    assert [c.lineno for c in rule.screen_candidates(Outline(ast.parse(source)))] == [4]
    asked = []
    original = type(rule).may_match_tree.__func__

    def counting(cls, outline):
        asked.append(outline)
        return original(cls, outline)

    monkeypatch.setattr(type(rule), "may_match_tree", classmethod(counting))
    assert _cut_names(source, _narrowed(source, "TL201")) == {"g", "h"}
    assert len(asked) == 2  # the module with every def stubbed, then with ``f`` whole
    _assert_same_as_whole(Engine([rule]), source)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_endings_are_kept(newline):
    source = SOURCE.replace("\n", newline)
    narrowed = _narrowed(source)
    assert narrowed is not None
    assert narrowed.source.text.count(newline) == source.count(newline)
    assert narrowed.source.text.replace(newline, "") == narrowed.source.text.replace(newline, "").replace("\n", "")
    _assert_same_as_whole(ENGINE, source)


@pytest.mark.parametrize("source", [
    # a body on the header's line
    "def f(x): y = x; \\\n    return y\n",
    # too short to be worth it
    "def f(x):\n    return x\n",
    # binds a module name from inside: its body decides what names mean elsewhere
    "def f():\n    global state\n    state = 1\n    a = 2\n    b = 3\n",
    "class C:\n    def f(self):\n        global state\n        state = 1\n        a = 2\n",
])
def test_what_is_never_stubbed(source):
    assert _narrowed("import torch.nn.functional as F\ndef f(x):\n    return F.sigmoid(x)\n" + source) is None


def test_no_narrowing_when_a_whole_file_rule_is_active():
    source = "import os\nimport torch\n\nclass Config:\n" + FILLER + "    device = torch.cuda.current_device()\n" \
        "\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n"
    assert BY_CODE["TL210"].whole_file
    assert narrow(SourceFile(source), ast.parse(source), [BY_CODE["TL210"]]) is None
    assert [d.code for d in Engine([BY_CODE["TL210"]]).check(source).diagnostics] == ["TL210"]


# --- a finding never depends on a stubbed body ---------------------------------

# For each case, ``g``'s body is cut (FILLER makes it long enough) and
# would change the rule's finding or fix if a rule read it: a name bound
# there, an import there, a use there. Statement-local rules must not read
# it (their narrowed and whole results agree because the facts about the
# whole file come from Python's tree); rules declared ``whole_file`` are
# never narrowed. The boolean says whether anything is cut: not for those
# rules, nor where a candidate is in module-level code (a flagged import)
# and the rule's screen cannot say where the others are: then every
# statement passes the screen. The table rules (renames, deprecations) can
# (``Rule.screen_candidates``): they keep the statements holding candidates,
# counting for a deprecation's from-import every use of the name it binds
# (its fix rewrites them), a string annotation included.
CROSS_STATEMENT_CASES = [
    ("TL103", True, "from torch.nn.functional import upsample\ndef f(x):\n    return upsample(x, scale_factor=2)\n"
                    "def g():\n    y: 'upsample' = None\n"),
    ("TL104", True, "import torch.nn.functional as F\ndef f(x):\n    return F.sigmoid(x)\n"
                    "def g():\n    torch = None\n"),
    ("TL105", True, "from torch.nn.init import normal\ndef f(w):\n    normal(w)\ndef g():\n    y: 'normal' = None\n"),
    ("TL108", False, "from torch import set_deterministic\ndef f():\n    set_deterministic(True)\n"
                     "def g():\n    y: 'set_deterministic' = None\n"),
    ("TL109", True, "from torch import cuda\ndef f():\n    with cuda.amp.autocast():\n        pass\n"
                    "def g():\n    torch = None\n"),
    ("TL109", False, "from torch import ger\ndef f(a, b):\n    return ger(a, b)\ndef g():\n    y: 'ger' = None\n"),
    ("TL109", True, "from torch import ger\ndef f(a, b):\n    return ger(a, b)\ndef g():\n    torch = None\n"),
    # a candidate in a def's header (kept by its stub) and in module-level code
    ("TL114", True, "import torch\n@torch._dynamo.allow_in_graph\ndef f(x):\n    return x\n"
                    "def g():\n    torch = None\n"),
    ("TL104", True, "import torch.nn.functional as F\nact = F.sigmoid\nclass Net:\n    def forward(self, x):\n"
                    "        return F.tanh(x)\ndef g():\n    F = None\n"),
    ("TL110", True, "from torch import zeros, FloatTensor\ndef f():\n    return zeros(3, dtype=FloatTensor)\n"
                    "def g():\n    torch = None\n"),
    ("TL114", True, "from torch.utils.data import _utils\ndef f(s):\n    return _utils.collate.default_convert(s)\n"
                    "def g():\n    torch = None\n"),
    # one level down: what a method decides never depends on another method's body
    ("TL205", True, "import torch.nn as nn\nimport torch.nn.functional as F\nclass Net(nn.Module):\n"
                    "    def helper(self, x):\n        self.training = False\n        torch = None\n"
                    "        x = x + 1\n        return x\n    def forward(self, x):\n        return F.dropout(x)\n"),
    # (TL111's screen accepts every method of an autograd Function: nothing is cut)
    ("TL111", False, "import torch\nclass Double(torch.autograd.Function):\n    def forward(self, x):\n"
                     "        return x * 2\n    @staticmethod\n    def backward(ctx, grad):\n        y = grad * 2\n"
                     "        import torch\n        y = y + 0\n        return y\n"),
    ("TL206", True, "from safetensors.torch import load_file\ndef f(model, path):\n    sd = load_file(path)\n"
                    "    model.load_state_dict(sd, strict=False)\ndef g():\n    import torch\n"),
    # what ``self.scores`` holds comes from another method (the project model reads the whole class)
    ("TL109", True, "import torch\nclass Meter:\n    def reset(self):\n        self.scores = torch.zeros(3)\n"
                    + FILLER.replace("    ", "        ") + "    def grow(self):\n"
                    + FILLER.replace("    ", "        ") + "        return self.scores.storage()\n"),
    # the loss is built in another method: ``self.criterion`` reaches it through the project model
    ("TL216", True, "import torch\nimport torch.nn as nn\nclass Trainer:\n    def __init__(self):\n"
                    "        self.criterion = nn.CrossEntropyLoss()\n" + FILLER.replace("    ", "        ")
                    + "    def step(self):\n        inputs = torch.randn(4, 3)\n"
                    "        targets = torch.tensor([0, 2, 1, 0])\n" + FILLER.replace("    ", "        ")
                    + "        return self.criterion(inputs[0:1], targets[0])\n"),
    # the file's use of CUDA, which the rule asks the whole file about, is in a cut statement
    ("TL203", False, "import torch\ndef f(path):\n    return torch.load(path)\ndef g(model):\n    model.cuda()\n"),
    ("TL208", False,  # whole file: a sentinel may come from another method
     "from math import nan\ndef f():\n    y = 2.0\n    return y == nan\ndef g():\n    math = None\n"),
    ("TL209", False, "import torch\nimport torch.nn.functional as F\ntotal = 0.0\n"
                     "for x, y in [(torch.ones(2), torch.ones(2))]:\n    total += F.mse_loss(x, y)\n"
                     "def g():\n    total.backward()\n"),
    ("TL210", False, "import os\nimport torch\nclass Config:\n    device = torch.cuda.current_device()\n"
                     "os.environ['CUDA_VISIBLE_DEVICES'] = '1'\n"),
    # g is kept: its assignment is itself a candidate (a name torch lacks)
    ("TL211", False, "import torch\ndef f():\n    return torch.my_helper(1)\n"
                     "def g():\n    torch.my_helper = lambda x: x\n"),
    ("TL211", True, "import torch\ndef f(x):\n    x.require_grad = True\ndef g(x):\n    return x.require_grad\n"),
    ("TL211", True, "def f(x):\n    x.require_grad = True\ndef g():\n    import torch\n"),
    ("TL301", False,  # whole file: whole numbers may come from another method
     "from torch import log\ndef f(x):\n    return log(1 + x)\ndef g():\n    torch = None\n"),
    ("TL302", False, "from torch.utils.data import DataLoader\nloader = DataLoader([1, 2, 3])\n"
                     "def train(model):\n    for x in loader:\n        x = x.cuda()\n"
                     "        model(x).sum().backward()\n"),
    ("TL303", True, "def f(opt):\n    opt.zero_grad(set_to_none=False)\ndef g():\n    import torch\n"),
    ("TL304", False, "import torch\ntorch.backends.cudnn.benchmark = true\ndef g():\n    true = 1\n"),
    ("TL304", False, "import torch\ntorch.backends.cudnn.benchmark = True\ndef g():\n"
                     "    torch.backends.cudnn.deterministic = True\n"),
]


# A method no rule can flag, long enough to be cut.
UNRELATED_METHOD = "    def _unrelated(self, x):\n        a = x + 1\n        b = a * 2\n        return b\n"


def _padded(source: str) -> str:
    """Every top-level def and class ends with FILLER, long enough to be
    cut, and every class with a method no rule can flag."""
    lines = source.splitlines(keepends=True)
    tree = ast.parse(source)
    for statement in reversed(tree.body):
        if isinstance(statement, ast.ClassDef):
            lines.insert(statement.end_lineno, FILLER + UNRELATED_METHOD)
        elif isinstance(statement, ast.FunctionDef):
            lines.insert(statement.end_lineno, FILLER)
    return "".join(lines)


@pytest.mark.parametrize("code, cut, source", CROSS_STATEMENT_CASES,
                         ids=[f"{code}-{i}" for i, (code, _, _) in enumerate(CROSS_STATEMENT_CASES)])
def test_a_finding_never_depends_on_a_stubbed_body(code, cut, source):
    rule = BY_CODE[code]
    source = _padded(source)
    assert _assert_same_as_whole(Engine([rule]), source).narrowed is cut
    assert cut is not (rule.whole_file or narrow(SourceFile(source), ast.parse(source), [rule]) is None)
    _assert_same_as_whole(ENGINE, source)


# --- every example of every rule, next to code that gets stubbed ---------------

UNRELATED = textwrap.dedent('''\


    class Unrelated:
        def method(self, x):
            y = x + 1
            return y * 2

        def other(self):
            return self.method(1)


    def helper(items):
        total = 0
        for item in items:
            total += item
        return total
''')


def _examples():
    for rule in RULES:
        for index, example in enumerate(rule.flagged):
            if example.python3:  # the others are repaired first (TL115): the repaired text is narrowed
                yield pytest.param(rule, example.code, id=f"{rule.code}-flagged-{index}")
        for index, snippet in enumerate(rule.accepted):
            yield pytest.param(rule, snippet, id=f"{rule.code}-accepted-{index}")


def _wrapped(source: str) -> str:
    """The example as the body of a function (where its names are locals)."""
    return "def example():\n" + textwrap.indent(source, "    ") + "\n"


@pytest.mark.parametrize("rule, source", list(_examples()))
def test_rule_examples_give_the_same_findings_narrowed(rule, source):
    """As written (module-level code: every statement is kept, for the rule
    and for its screen), and inside a function, next to code that is cut."""
    engine = Engine([rule])
    _assert_same_as_whole(engine, _padded(source) + UNRELATED)
    _assert_same_as_whole(ENGINE, _padded(source) + UNRELATED)
    if "__future__" in source:
        return
    wrapped = _wrapped(source) + UNRELATED
    _assert_same_as_whole(engine, wrapped)
    _assert_same_as_whole(ENGINE, wrapped)
    assert engine.check(wrapped).narrowed or rule.whole_file or not engine.rules_for(wrapped, ast.parse(wrapped))
