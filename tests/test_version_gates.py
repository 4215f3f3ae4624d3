"""Code a torch version gate protects is not flagged for what the gate handles
(``analysis/version_gates.py``): deprecation findings (TL1xx) inside an
``if`` on the torch version or a ``try``/``except`` fallback are dropped; the
same code outside a gate, and bug findings inside one, are still reported."""

from __future__ import annotations

import ast
import textwrap

import pytest
from conftest import run_flake8, run_torchlint

from torchlint.analysis.outline import Outline
from torchlint.analysis.version_gates import gated_ranges, names_that_may_gate, project_spellings, version_flags
from torchlint.core.settings import Settings, parse_version
from torchlint.engine.linter import Engine
from torchlint.knowledge.torch_api import ADDED_KEYWORDS
from torchlint.rules import all_rules

ENGINE = Engine(all_rules())


def codes(source: str):
    return [(d.line, d.code) for d in ENGINE.check(textwrap.dedent(source).lstrip()).diagnostics]


GATED = {
    "version flag": """
        import torch
        from packaging import version
        _TORCH_GE_2_4 = version.parse(torch.__version__) >= version.parse("2.4")
        if _TORCH_GE_2_4:
            scaler = torch.amp.GradScaler("cuda")
        else:
            scaler = torch.cuda.amp.GradScaler()
        """,
    "flag derived from a flag": """
        import torch
        _TORCH_2 = int(torch.__version__.split(".")[0]) >= 2
        _NEW_AMP = _TORCH_2 and True
        scaler = torch.amp.GradScaler("cuda") if _NEW_AMP else torch.cuda.amp.GradScaler()
        """,
    "version read in the test": """
        import torch
        import torch.nn.functional as F
        def up(x):
            if torch.__version__ < "0.4.1":
                return F.upsample(x, scale_factor=2)
            return F.interpolate(x, scale_factor=2)
        """,
    "hasattr probe": """
        import torch
        import torch.nn as nn
        if hasattr(nn.init, "xavier_uniform_"):
            init = nn.init.xavier_uniform_
        else:
            init = nn.init.xavier_uniform
        """,
    "keyword fallback": """
        import torch
        def load(path):
            try:
                return torch.load(path, map_location="cpu", weights_only=True)
            except TypeError:
                return torch.load(path, map_location="cpu")
        def rng():
            try:
                return torch.linalg.cholesky(torch.eye(2))
            except AttributeError:
                return torch.cholesky(torch.eye(2))
        """,
    "lightning_utilities flags": """
        import operator
        import torch
        from lightning_utilities.core.imports import RequirementCache, compare_version
        _TORCH_GREATER_EQUAL_2_4 = compare_version("torch", operator.ge, "2.4.0")
        _TORCH_2_2 = RequirementCache("torch>=2.2")
        scaler = torch.amp.GradScaler("cuda") if _TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler()
        if _TORCH_2_2:
            from torch.distributed.checkpoint import save
        else:
            from torch.distributed.checkpoint import save_state_dict as save
        """,
    "installed distribution's version": """
        import torch
        from importlib.metadata import version
        from packaging.version import Version
        if Version(version("torch")) < Version("2.4"):
            scaler = torch.cuda.amp.GradScaler()
        """,
    "installed version through an alias": """
        import torch
        from importlib.metadata import version as installed
        from packaging.version import Version
        OLD_TORCH = Version(installed("torch")) < Version("2.4")
        if OLD_TORCH:
            scaler = torch.cuda.amp.GradScaler()
        """,
    "import fallback": """
        import torch
        try:
            from torch.amp import GradScaler
        except ImportError:
            from torch.cuda.amp import GradScaler
        """,
}


@pytest.mark.parametrize("name", GATED)
def test_deprecations_inside_a_gate_are_not_reported(name):
    found = [code for _, code in codes(GATED[name]) if code.startswith("TL1")]
    assert found == [], found


UNGATED = {
    "no gate": ("""
        import torch
        scaler = torch.cuda.amp.GradScaler()
        """, "TL109"),
    "a name is no evidence": ("""
        import torch
        from lightning_utilities import _TORCH_GREATER_EQUAL_2_4
        if _TORCH_GREATER_EQUAL_2_4:
            scaler = torch.amp.GradScaler("cuda")
        else:
            scaler = torch.cuda.amp.GradScaler()
        """, "TL109"),
    "a version that is not torch's": ("""
        import numpy
        import torch
        if numpy.__version__ >= "2":
            scaler = torch.cuda.amp.GradScaler()
        """, "TL109"),
    "a query about another distribution": ("""
        import torch
        from lightning_utilities.core.imports import RequirementCache, compare_version
        _TV = RequirementCache("torchvision>=0.16")
        _XLA = compare_version("torch_xla", operator.ge, "2.0")
        if _TV and _XLA:
            scaler = torch.cuda.amp.GradScaler()
        """, "TL109"),
    "a bare except": ("""
        import torch
        try:
            scaler = torch.cuda.amp.GradScaler()
        except:
            scaler = None
        """, "TL109"),
    "a bare except repeating the call with the same keywords": ("""
        import torch
        try:
            scaler = torch.cuda.amp.GradScaler(enabled=True)
        except:
            scaler = torch.cuda.amp.GradScaler(enabled=True)
        """, "TL109"),
    "an unrelated handler": ("""
        import torch
        try:
            scaler = torch.cuda.amp.GradScaler()
        except ValueError:
            scaler = torch.cuda.amp.GradScaler(enabled=False)
        """, "TL109"),
    "after the gate": ("""
        import torch
        if hasattr(torch, "compile"):
            pass
        scaler = torch.cuda.amp.GradScaler()
        """, "TL109"),
}


@pytest.mark.parametrize("name", UNGATED)
def test_the_same_code_without_a_gate_is_reported(name):
    source, code = UNGATED[name]
    assert code in [c for _, c in codes(source)]


KEYWORD_FALLBACK = """
    import torch
    def restore(path):
        try:
            state = torch.load(path, map_location="cpu", weights_only=False)
        except{caught}:
            state = torch.load(path, map_location="cpu")
        return state
    """


@pytest.mark.parametrize("caught", ["", " Exception", " (RuntimeError, Exception)"])
def test_a_handler_catching_everything_that_drops_the_new_keyword_is_a_fallback(caught):
    # s3prl: the handler is the spelling for a torch before ``weights_only=`` (< 1.13)
    assert codes(KEYWORD_FALLBACK.format(caught=caught)) == []


def test_a_handler_catching_everything_is_no_fallback_without_a_dropped_new_keyword():
    kept = KEYWORD_FALLBACK.replace('map_location="cpu")\n', 'map_location="cpu", weights_only=False)\n')
    assert ("TL214" not in [c for _, c in codes(kept.format(caught=""))])  # nothing to report: both pass it
    older = KEYWORD_FALLBACK.replace(", weights_only=False", "").replace('torch.load(path, map_location="cpu")\n',
                                                                     "torch.load(path)\n")
    # ``map_location=`` is as old as torch.load: dropping it is no version fallback
    assert [c for _, c in codes(older.format(caught=""))].count("TL214") == 2


def test_the_keywords_torch_added_exist_in_its_signatures():
    import inspect

    torch = pytest.importorskip("torch")  # skipped where torch is not installed
    for name, keywords in ADDED_KEYWORDS.items():
        function = torch.load if name == "torch.load" else torch.serialization.load
        assert keywords <= set(inspect.signature(function).parameters), name


def test_a_flag_another_module_assigns_gates_the_module_that_imports_it():
    # lightning assigns its flags in one module and imports them everywhere else;
    # only the project model can tell the importing file what the name is
    defining = Outline(ast.parse(textwrap.dedent("""
        import operator
        from lightning_utilities.core.imports import compare_version
        _TORCH_GREATER_EQUAL_2_4 = compare_version("torch", operator.ge, "2.4.0")
        _TORCHVISION_0_16 = compare_version("torchvision", operator.ge, "0.16.0")
        """)))
    assert version_flags(defining) == {"_TORCH_GREATER_EQUAL_2_4"}
    importing = Outline(ast.parse(textwrap.dedent("""
        import torch
        from pkg.imports import _TORCH_GREATER_EQUAL_2_4
        _NEW_AMP = _TORCH_GREATER_EQUAL_2_4 and torch.cuda.is_available()
        def make_scaler(device):
            return torch.amp.GradScaler(device) if _TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler()
        def make_other():
            if _NEW_AMP:
                return None
            return torch.cuda.amp.GradScaler()
        """).lstrip()))
    assert gated_ranges(importing) == ()  # the name alone is no evidence
    assert gated_ranges(importing, frozenset({"_TORCH_GREATER_EQUAL_2_4"})) == ((5, 5), (7, 8))


def test_bugs_inside_a_gate_are_still_reported():
    source = """
        import torch
        if torch.__version__ >= "2.0":
            x = torch.ones(2)
            x.cuda()
        """
    assert [code for _, code in codes(source)] == ["TL201"]


def test_cli_and_flake8_agree_on_gated_code(tmp_path):
    path = tmp_path / "gated.py"
    path.write_text(textwrap.dedent(GATED["version flag"]).lstrip() + "other = torch.cuda.amp.GradScaler()\n")
    cli = run_torchlint([str(path), "--no-cache", "--isolated"])
    assert cli.returncode == 1
    assert [line.split(": ")[1].split()[0] for line in cli.stdout.splitlines() if "gated.py:" in line] == ["TL109"]
    assert "gated.py:8:" in cli.stdout
    flake8 = run_flake8([str(path), "--select", "TL"])
    assert [line.split(": ")[1].split()[0] for line in flake8.stdout.splitlines()] == ["TL109"]


def test_a_flag_another_module_of_the_project_derives_from_the_torch_version(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "imports.py").write_text(
        "import operator\nfrom lightning_utilities.core.imports import compare_version\n"
        "_TORCH_GREATER_EQUAL_2_4 = compare_version('torch', operator.ge, '2.4.0')\nOTHER = True\n")
    body = ("import torch\n"
            "def make(device):\n"
            "    return torch.amp.GradScaler(device=device) if {flag} else torch.cuda.amp.GradScaler()\n")
    (tmp_path / "pkg" / "amp.py").write_text("from pkg.imports import _TORCH_GREATER_EQUAL_2_4\n"
                                              + body.format(flag="_TORCH_GREATER_EQUAL_2_4"))
    (tmp_path / "pkg" / "other.py").write_text("from pkg.imports import OTHER\n" + body.format(flag="OTHER"))
    for run in (run_torchlint(["--isolated", "--no-cache", "pkg"], cwd=tmp_path),
                run_flake8(["--select", "TL", "pkg"], cwd=tmp_path)):
        assert "amp.py" not in run.stdout, run.stdout  # gated by the imported flag
        assert "other.py:4" in run.stdout  # a flag unrelated to torch's version gates nothing


@pytest.mark.parametrize("name", sorted(GATED))
def test_the_gates_around_given_lines_are_those_of_the_whole_file_holding_them(name):
    """The engine asks only for the gates around its findings' lines: the
    answer must be exactly the whole file's gates that hold one of them."""
    tree = ast.parse(textwrap.dedent(GATED[name]).lstrip())
    every = gated_ranges(Outline(tree))
    assert every
    last = max(end for _, end in every) + 1
    for lines in ([1], [last], *([line] for line in range(1, last + 1)), list(range(1, last + 1))):
        wanted = gated_ranges(Outline(tree), lines=lines)
        assert wanted == tuple(r for r in every if any(r[0] <= line <= r[1] for line in lines)), lines


def test_only_names_that_can_gate_a_line_are_asked_about() -> None:
    outline = Outline(ast.parse(textwrap.dedent("""\
        from pkg.imports import OLD, NEW, OTHER, unrelated
        DERIVED = NEW and not OLD
        if OTHER:
            x = 1
        if DERIVED:
            y = torch.cuda.amp.autocast()
        z = a if unrelated() else b
        """)))
    # Line 6 is in the second ``if``: its test reads DERIVED, assigned from NEW and OLD.
    assert names_that_may_gate(outline, [6]) == {"DERIVED", "NEW", "OLD"}
    assert names_that_may_gate(outline, [7]) == {"unrelated"}
    assert names_that_may_gate(outline, [1]) == frozenset()


def test_a_version_helper_of_the_project_gates_like_an_inline_comparison(tmp_path):
    # diffusers-style ``is_torch_version("<", "2.2")``: a function of the project
    # whose return asks for the torch version is a test wherever it is called
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "vers.py").write_text(
        "import operator\nimport torch\nfrom packaging import version\n"
        "def is_torch_version(op, ref):\n"
        "    return getattr(operator, op)(version.parse(torch.__version__), version.parse(ref))\n"
        "def is_fast():\n    return True\n")
    body = ("import torch\n"
            "if {helper}('lt', '2.2'):\n"
            "    torch.utils._pytree._register_pytree_node(dict, None, None)\n"
            "else:\n"
            "    torch.utils._pytree.register_pytree_node(dict, None, None)\n")
    (tmp_path / "pkg" / "gated.py").write_text("from pkg.vers import is_torch_version\n"
                                                + body.format(helper="is_torch_version"))
    (tmp_path / "pkg" / "ungated.py").write_text("from pkg.vers import is_fast\n" + body.format(helper="is_fast"))
    (tmp_path / "pkg" / "local.py").write_text(
        "import torch\ndef torch_older(ref):\n    return torch.__version__ < ref\n"
        + body.replace("import torch\n", "").format(helper="torch_older"))
    for run in (run_torchlint(["--isolated", "--no-cache", "pkg"], cwd=tmp_path),
                run_flake8(["--select", "TL", "pkg"], cwd=tmp_path)):
        assert "gated.py" not in run.stdout.replace("ungated.py", ""), run.stdout
        assert "local.py" not in run.stdout, run.stdout
        assert "ungated.py:4" in run.stdout, run.stdout  # a helper that asks nothing of torch gates nothing
    helper = Outline(ast.parse("import torch\ndef older(ref):\n    def inner():\n        return torch.__version__\n"
                               "    return inner\n"))
    assert version_flags(helper) == set()  # only the function's own returns count


def test_a_flag_read_through_the_module_that_assigns_it_gates_like_an_imported_one(tmp_path):
    # torch_geometric assigns WITH_PT20 and friends in torch_geometric/typing.py
    # and reads them as ``torch_geometric.typing.WITH_PT20`` everywhere else
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "typing.py").write_text(
        "import os\nimport torch\n"
        "WITH_PT20 = int(torch.__version__.split('.')[0]) >= 2\n"
        "WITH_PT112 = WITH_PT20 or int(torch.__version__.split('.')[1]) >= 12\n"
        "WITH_PT30 = os.environ.get('PT30') == '1'\n")  # named like a flag, asks nothing of torch
    body = ("if {flag}:\n"
            "    torch.utils._pytree.register_pytree_node(dict, None, None)\n"
            "else:\n"
            "    torch.utils._pytree._register_pytree_node(dict, None, None)\n")
    gated = {
        "plain.py": ("import torch\nimport pkg.typing\n", "pkg.typing.WITH_PT20"),
        "elif.py": ("import torch\nimport pkg.typing\n", "pkg.typing.WITH_PT30:\n    pass\nelif pkg.typing.WITH_PT112"),
        "member.py": ("import torch\nfrom pkg import typing\n", "not typing.WITH_PT112 or typing.WITH_PT20"),
        "alias.py": ("import torch\nimport pkg.typing as pyg_typing\n", "pyg_typing.WITH_PT112"),
        "relative.py": ("import torch\nfrom . import typing\n", "typing.WITH_PT20"),
    }
    ungated = {
        "lookalike.py": ("import torch\nimport pkg.typing\n", "pkg.typing.WITH_PT30"),
        "outside.py": ("import torch\nimport other_lib.typing\n", "other_lib.typing.WITH_PT20"),
    }
    for name, (imports, flag) in {**gated, **ungated}.items():
        (tmp_path / "pkg" / name).write_text(imports + body.format(flag=flag))
    # A declared floor that has ``register_pytree_node``: without one, the flags' tests (torch
    # 1.11 told apart from 1.12) would stand for the floor, and no file would be told to move.
    for run in (run_torchlint(["--isolated", "--no-cache", "--torch-version", "2.5", "pkg"], cwd=tmp_path),
                run_flake8(["--select", "TL", "--torch-version", "2.5", "pkg"], cwd=tmp_path)):
        reported = {line.split(":")[0].rsplit("/", 1)[-1] for line in run.stdout.splitlines() if "TL109" in line}
        assert reported == set(ungated), run.stdout


def test_the_names_a_gate_may_read_through_a_module_are_spelled_for_the_project_model() -> None:
    outline = Outline(ast.parse(textwrap.dedent("""\
        import pkg.typing
        import pkg.typing as pt
        from pkg import typing as t
        from . import sibling
        from .flags import OLD
        if pkg.typing.WITH_PT20 or pt.WITH_PT112 or t.WITH_PT21 or sibling.NEW or OLD or local.FLAG:
            x = 1
        """)))
    tested = names_that_may_gate(outline, [7])
    assert {"pkg.typing.WITH_PT20", "pt.WITH_PT112", "t.WITH_PT21", "sibling.NEW", "OLD", "local.FLAG"} <= tested
    assert project_spellings(outline, tested) == {
        "pkg.typing.WITH_PT20": "pkg.typing.WITH_PT20", "pkg.typing": "pkg.typing",
        "pt.WITH_PT112": "pkg.typing.WITH_PT112", "t.WITH_PT21": "pkg.typing.WITH_PT21",
        "sibling.NEW": ".sibling.NEW", "OLD": ".flags.OLD",  # local.FLAG: no import binds it
        "t": "pkg.typing", "sibling": "..sibling"}  # a module: the project model says it is no flag
    source = "import torch\nimport pkg.typing\nif pkg.typing.WITH_PT20:\n    x = torch.cuda.amp.GradScaler()\n"
    assert gated_ranges(Outline(ast.parse(source))) == ()  # the chain alone is no evidence
    assert gated_ranges(Outline(ast.parse(source)), frozenset({"pkg.typing.WITH_PT20"})) == ((3, 4),)


def test_the_torch_version_a_project_helper_reads_from_the_distribution_it_is_given_is_a_flag(tmp_path):
    # diffusers: ``_torch_available, _torch_version = _is_package_available("torch")``,
    # then ``def is_torch_version(op, v): return compare(parse(_torch_version), op, v)``
    helpers = textwrap.dedent("""\
        import importlib.util
        import importlib.metadata as importlib_metadata
        from packaging.version import parse

        def _is_package_available(pkg_name):
            pkg_exists = importlib.util.find_spec(pkg_name) is not None
            pkg_version = "N/A"
            if pkg_exists:
                try:
                    pkg_version = importlib_metadata.version(pkg_name)
                except importlib_metadata.PackageNotFoundError:
                    pkg_exists = False
            return pkg_exists, pkg_version

        _torch_available, _torch_version = _is_package_available("torch")
        _vision_available, _vision_version = _is_package_available(pkg_name="torchvision")

        def is_torch_available():
            return _torch_available

        def is_torch_version(operation, version):
            return getattr(parse(_torch_version), operation)(parse(version))

        def is_vision_version(operation, version):
            return getattr(parse(_vision_version), operation)(parse(version))
        """)
    assert version_flags(Outline(ast.parse(helpers))) == {"_torch_version", "is_torch_version"}
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "import_utils.py").write_text(helpers)
    body = ("import torch\nfrom pkg.import_utils import {helper}\n"
            "if {helper}('__lt__', '2.2'):\n"
            "    torch.utils._pytree._register_pytree_node(dict, None, None)\n")
    for helper in ("is_torch_version", "is_torch_available", "is_vision_version"):
        (tmp_path / "pkg" / f"{helper}.py").write_text(body.format(helper=helper))
    for run in (run_torchlint(["--isolated", "--no-cache", "pkg"], cwd=tmp_path),
                run_flake8(["--select", "TL", "pkg"], cwd=tmp_path)):
        reported = {line.split(":")[0].rsplit("/", 1)[-1] for line in run.stdout.splitlines() if "TL109" in line}
        # whether torch is installed, or another package's version, gates nothing
        assert reported == {"is_torch_available.py", "is_vision_version.py"}, run.stdout


@pytest.mark.parametrize("source, reported", [
    # torch_geometric's torch_load: the gate's body returns on every path, so what follows it
    # is the fallback for older torch; both spellings are compatibility code.
    ("""
     import pickle
     import torch
     _TORCH_24 = torch.__version__ >= "2.4"
     def load(path):
         if _TORCH_24:
             try:
                 return torch.load(path, weights_only=True)
             except pickle.UnpicklingError:
                 return torch.load(path, weights_only=False)
         return torch.load(path)
     """, []),
    # the same fallback when the body may fall through (no return on the except path): reported
    ("""
     import pickle
     import torch
     _TORCH_24 = torch.__version__ >= "2.4"
     def load(path):
         if _TORCH_24:
             try:
                 return torch.load(path, weights_only=True)
             except pickle.UnpicklingError:
                 pass
         return torch.load(path)
     """, [(10, "TL214")]),
    # a guard that only raises: what follows is code for the torch it requires, still checked
    ("""
     import torch
     if torch.__version__ < "2.0":
         raise ImportError("needs torch 2")
     def lower(a):
         return torch.cholesky(a)
     """, [(5, "TL108")]),  # removed in torch 2.14, the default target
])
def test_code_after_a_gate_whose_body_always_returns_is_its_else(source, reported):
    assert [item for item in codes(source) if item[1] in ("TL214", "TL108", "TL109")] == reported


@pytest.mark.parametrize("source, release", [
    ("import torch\nif torch.__version__ >= '1.12':\n    pass\n", (1, 11)),
    ("import torch\nfrom packaging import version\n"
     "NEW = version.parse(torch.__version__) >= version.parse('2.1')\n", (2, 0)),
    ("import torch\nNEW = torch.__version__ >= (2, 4)\n", (2, 3)),
    # torch_geometric's flags, derived from each other
    ("import torch\nWITH_PT20 = int(torch.__version__.split('.')[0]) >= 2\n"
     "WITH_PT112 = WITH_PT20 or int(torch.__version__.split('.')[1]) >= 12\n"
     "WITH_PT24 = WITH_PT20 and int(torch.__version__.split('.')[1]) >= 4\n", (1, 11)),
    # a guard refusing old torch tells nothing about what the project runs on
    ("import torch\nif torch.__version__ < '1.9':\n    raise ImportError('torch 1.9 or newer')\n", None),
    # what cannot be evaluated tells nothing either
    ("import torch\nNEW = parse(torch.__version__) >= (1, 12)\n", None),
    ("import os\nNEW = os.environ.get('V', '1.0') >= '1.12'\n", None),
])
def test_the_oldest_release_a_module_tells_apart(source, release):
    from torchlint.analysis.version_tests import oldest_release_told_apart
    assert oldest_release_told_apart(Outline(ast.parse(source))) == release


def _write_undeclared_project(root, flags: str, floor: str = "") -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("import pkg.typing\n")
    (root / "pkg" / "typing.py").write_text("import torch\n" + flags)
    (root / "pkg" / "datasets").mkdir()
    (root / "pkg" / "datasets" / "__init__.py").write_text("")
    (root / "pkg" / "datasets" / "pascal.py").write_text(
        "import torch\n"
        "from torchvision import models\n"
        "vgg16 = models.vgg16(pretrained=True)\n")
    (root / "pyproject.toml").write_text(
        "[project]\nname = 'pkg'\n" + (f"dependencies = ['torch>={floor}']\n" if floor else ""))


@pytest.mark.parametrize("flags, floor, reported", [
    # torch_geometric declares no torch floor, but its flags tell torch 1.11 from 1.12:
    # it runs on a torch without torchvision's weights= (torch 1.12), so TL112 does not fit
    ("WITH_PT112 = int(torch.__version__.split('.')[1]) >= 12 or int(torch.__version__.split('.')[0]) >= 2\n",
     "", False),
    # flags that only tell 2.x releases apart leave the advice standing
    ("WITH_PT24 = torch.__version__ >= (2, 4)\n", "", True),
    # a declared floor wins over what the code shows
    ("WITH_PT112 = torch.__version__ >= (1, 12)\n", "1.12", True),
])
def test_a_project_without_a_floor_is_judged_by_the_torch_its_version_tests_show(tmp_path, flags, floor, reported):
    _write_undeclared_project(tmp_path, flags, floor)
    for run in (run_torchlint(["--no-cache", "--select", "TL112", "pkg"], cwd=tmp_path),
                run_flake8(["--select", "TL112", "pkg"], cwd=tmp_path)):
        assert ("TL112" in run.stdout) is reported, run.stdout + run.stderr


_AT_LEAST = ("import torch\nfrom packaging.version import parse as parse_version\n\n"
             "def is_fbcode():\n    return not hasattr(torch.version, 'git_version')\n\n"
             "def torch_version_at_least(min_version):\n    if is_fbcode():\n        return True\n"
             "    return parse_version(torch.__version__) >= parse_version(min_version)\n")


@pytest.mark.parametrize("source, release", [
    # a helper of the module, called with the version it asks about (torchao's)
    (_AT_LEAST + "if torch_version_at_least('2.10.0'):\n    pass\n", (2, 9)),
    (_AT_LEAST + "NEW = torch_version_at_least('2.7.0.dev')\n", (2, 6)),
    # helpers comparing with an operator given as a string are not evaluated: unknown
    ("import torch\nimport operator\n\ndef is_torch_version(op, v):\n"
     "    return getattr(operator, op)(torch.__version__, v)\n\nif is_torch_version('ge', '1.11'):\n    pass\n", None),
    # a def that is not a helper: its call tells nothing
    (_AT_LEAST + "def newest():\n    return '2.4'\n\nif newest() >= '2.4':\n    pass\n", None),
    # a helper defined but never called tells nothing either
    (_AT_LEAST, None),
])
def test_the_project_version_helpers_a_module_calls_tell_releases_apart(source, release):
    from torchlint.analysis.version_tests import oldest_release_told_apart
    assert oldest_release_told_apart(Outline(ast.parse(source))) == release


def test_a_version_helper_imported_from_another_module_is_evaluated_there():
    from torchlint.analysis.version_tests import oldest_release_told_apart, version_helpers
    helpers = version_helpers(Outline(ast.parse(_AT_LEAST)))
    assert set(helpers) == {"torch_version_at_least"}
    caller = Outline(ast.parse("import torch\nfrom pkg.utils import torch_version_at_least as at_least\n"
                               "if at_least('2.10.0'):\n    pass\n"))
    assert oldest_release_told_apart(caller) is None  # alone, the name is just a name
    assert oldest_release_told_apart(caller, {"at_least": helpers["torch_version_at_least"]}) == (2, 9)


def _write_project_with_helper(root, gate: str) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "utils.py").write_text(_AT_LEAST)
    (root / "pkg" / "ops.py").write_text(
        "import torch\nfrom pkg.utils import torch_version_at_least\n"
        f"if torch_version_at_least('{gate}'):\n    USE_NEW_KERNEL = True\n")
    (root / "pkg" / "model.py").write_text(
        "import torch\nimport torch.nn.functional as F\nfrom pkg import ops\n\n"
        "def gate(x):\n    return F.sigmoid(x)\n\n"
        "def restore(path):\n    return torch.load(path)\n")
    (root / "pyproject.toml").write_text("[project]\nname = 'pkg'\ndependencies = ['numpy']\n")


@pytest.mark.parametrize("gate, reported", [
    # torchao declares no torch floor; its helper's gates tell 2.9 from 2.10: the code runs on
    # 2.9, where F.sigmoid no longer warns (TL104 ended in 2.0) and torch.load already defaults
    # to weights_only=True (TL214's risk ended in 2.6)
    ("2.10.0", set()),
    # gates that tell 1.11 from 1.12 show a torch that still has both problems
    ("1.12", {"TL104", "TL214"}),
])
def test_a_project_without_a_floor_takes_the_oldest_torch_its_version_helpers_tell_apart(tmp_path, gate, reported):
    _write_project_with_helper(tmp_path, gate)
    for run in (run_torchlint(["--no-cache", "--select", "TL104,TL214", "pkg"], cwd=tmp_path),
                run_flake8(["--select", "TL104,TL214", "pkg"], cwd=tmp_path)):
        found = {code for code in ("TL104", "TL214") if code in run.stdout}
        assert found == reported, run.stdout + run.stderr
    # a declared floor wins over what the code shows
    declared = run_torchlint(["--no-cache", "--torch-version", "1.10", "--select", "TL104,TL214", "pkg"], cwd=tmp_path)
    assert {code for code in ("TL104", "TL214") if code in declared.stdout} == {"TL104", "TL214"}, declared.stdout


def test_the_floor_a_helper_shows_is_worked_out_again_when_the_helper_changes(tmp_path):
    # model.py's findings depend on ops.py's gate and on utils.py's helper: the cache must
    # know both (the helper edited to stop asking for the version shows no torch at all)
    _write_project_with_helper(tmp_path, "2.10.0")
    first = run_torchlint(["--select", "TL104,TL214", "pkg"], cwd=tmp_path)
    assert "TL104" not in first.stdout and "TL214" not in first.stdout, first.stdout
    utils = tmp_path / "pkg" / "utils.py"
    utils.write_text(utils.read_text().replace(
        "return parse_version(torch.__version__) >= parse_version(min_version)", "return True"))
    again = run_torchlint(["--select", "TL104,TL214", "pkg"], cwd=tmp_path)
    assert "TL104" in again.stdout and "TL214" in again.stdout, again.stdout


def test_a_module_s_own_version_parser_compares_as_versions():
    # torchao/__init__.py: whatever the parser does, comparing its results only means
    # something if it keeps the order of versions: 2.10 is told apart from 2.11
    from torchlint.analysis.version_tests import oldest_release_told_apart
    source = ("import re\nimport torch\n\ndef _parse_version(text):\n"
              "    major, minor, patch = map(int, re.match(r'(\\d+)\\.(\\d+)\\.(\\d+)', text).groups())\n"
              "    return [major, minor, patch]\n\n"
              "current = _parse_version(torch.__version__)\nminimum = _parse_version('2.11.0')\n"
              "if current >= minimum:\n    load_extensions = True\n")
    assert oldest_release_told_apart(Outline(ast.parse(source))) == (2, 10)
    # a function of two parameters, or one imported from elsewhere, is not taken for a parser
    assert oldest_release_told_apart(Outline(ast.parse(source.replace("(text)", "(text, strict=True)")))) is None
    assert oldest_release_told_apart(Outline(ast.parse(
        "import torch\nfrom x import parse_it\nif parse_it(torch.__version__) >= parse_it('2.11.0'):\n    pass\n"))) is None


@pytest.mark.parametrize("helper", [
    "from diffusers.utils import is_torch_version\nNEW = is_torch_version('>=', '1.11.0')\n",
    "from accelerate.utils import is_torch_version\nNEW = is_torch_version('>=', '1.11.0')\n",
    "from transformers.utils import is_torch_greater_or_equal\nNEW = is_torch_greater_or_equal('1.11')\n",
])
def test_a_library_s_torch_version_helper_gates_the_checkpoint_without_use_reentrant(helper):
    # iopaint copies diffusers' blocks: the branch for torch < 1.11 cannot pass use_reentrant=
    source = ("import torch\nimport torch.utils.checkpoint\n" + helper +
              "def run(block, x):\n"
              "    if NEW:\n"
              "        return torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)\n"
              "    return torch.utils.checkpoint.checkpoint(block, x)\n")
    assert "TL212" not in {code for _, code in codes(source)}
    # the same call with no gate around it is reported
    ungated = source.replace("    if NEW:\n        return torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)\n", "")
    assert "TL212" in {code for _, code in codes(ungated)}


@pytest.mark.parametrize("source, release", [
    ("from diffusers.utils import is_torch_version\nif is_torch_version('>=', '1.11.0'):\n    pass\n", (1, 10)),
    ("from accelerate.utils import is_torch_version\nOLD = is_torch_version('<', '2.1')\n", (2, 0)),
    ("from transformers.utils import is_torch_greater_or_equal\nNEW = is_torch_greater_or_equal('2.3')\n", (2, 2)),
    # an operator the helper does not know, or a helper of the same name from elsewhere: unknown
    ("from accelerate.utils import is_torch_version\nNEW = is_torch_version('~=', '2.3')\n", None),
    ("from mylib import is_torch_version\nNEW = is_torch_version('>=', '2.3')\n", None),
])
def test_a_library_s_torch_version_helper_tells_releases_apart(source, release):
    from torchlint.analysis.version_tests import oldest_release_told_apart
    assert oldest_release_told_apart(Outline(ast.parse(source))) == release


def test_a_test_file_outside_the_package_is_judged_by_what_the_package_it_imports_runs_first(tmp_path):
    # tests/test_model.py is no module of pkg; importing pkg runs pkg/ops.py's gates
    # (2.9 told apart from 2.10), so the test is checked against torch 2.9 too.
    _write_project_with_helper(tmp_path, "2.10.0")
    (tmp_path / "pkg" / "__init__.py").write_text("from pkg import ops\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_model.py").write_text(
        "import torch\nimport torch.nn.functional as F\nimport pkg\n\n"
        "def test_gate():\n    assert F.sigmoid(torch.zeros(1)) == 0.5\n")
    run = run_torchlint(["--no-cache", "--select", "TL104", "tests"], cwd=tmp_path)
    assert "TL104" not in run.stdout, run.stdout + run.stderr
    (tmp_path / "tests" / "test_model.py").write_text(
        "import torch\nimport torch.nn.functional as F\n\n"
        "def test_gate():\n    assert F.sigmoid(torch.zeros(1)) == 0.5\n")
    assert "TL104" in run_torchlint(["--no-cache", "--select", "TL104", "tests"], cwd=tmp_path).stdout


GATE_IN_A_TRY = """\
import torch
def min_version(ref):
    return torch.__version__ >= ref
try:
    if min_version("2.4"):
        forward = torch.amp.custom_fwd
    else:
        forward = torch.cuda.amp.custom_fwd
except{caught}:
    forward = {fallback}
"""


@pytest.mark.parametrize("caught, fallback, reported", [
    # megatron: the handler runs the gate's old branch when asking the version fails
    ("", "torch.cuda.amp.custom_fwd", False),
    (" Exception", "torch.cuda.amp.custom_fwd", False),
    # a handler that runs something else than either branch is no answer of the gate
    ("", "torch.cuda.amp.custom_bwd", True),
    # one that catches a particular error is not a fallback for a failed version check
    (" ValueError", "torch.cuda.amp.custom_fwd", True),
])
def test_a_handler_repeating_a_branch_of_the_gate_in_its_try_is_gated(caught, fallback, reported):
    # a project declaring torch>=2.6 (megatron_core): the deprecations of 2.4 apply
    engine = Engine(all_rules(), Settings(torch_version=parse_version("2.6")))
    source = GATE_IN_A_TRY.format(caught=caught, fallback=fallback)
    found = [(d.line, d.code) for d in engine.check(source).diagnostics]
    assert ((10, "TL109") in found) is reported, found
    assert (8, "TL109") not in found  # the gate's own old branch, as before


def test_an_import_fallback_shows_the_file_supports_a_torch_without_the_imported_names():
    # verl: DTensor is tried from torch.distributed.tensor (public from 2.5) with a fallback
    # to the private module, so the file runs on a torch older than 2.5: renaming its other
    # imports to torch.distributed.tensor (also 2.5) would break it.
    newer = """
        from torch.distributed._tensor import Placement, Shard

        try:
            from torch.distributed.tensor import DTensor
        except ImportError:
            from torch.distributed._tensor import DTensor
        """
    assert [code for _, code in codes(newer)] == []
    # torchrl: the fallback is for torch.compiler.is_compiling (2.3); that shows a torch older
    # than 2.3, not one older than 2.1, where torch.compiler.assume_constant_result appeared.
    older = """
        import torch

        try:
            from torch.compiler import disable, is_compiling
        except ImportError:
            from torch._dynamo import disable, is_compiling


        @torch._dynamo.assume_constant_result
        def size():
            return 3
        """
    assert codes(older) == [(9, "TL114")]
    # torchao's tests: a handler that sets the names to None (or skips the module) gives
    # no other spelling to run with; the private import stays reported.
    given_up = """
        from torch.distributed._tensor import DTensor

        try:
            from torch.distributed.tensor.parallel import parallelize_module
        except ImportError:
            parallelize_module = None
        """
    assert codes(given_up) == [(1, "TL114")]
