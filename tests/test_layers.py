"""The folder tree is the architecture: each package of torchlint is a layer,
and a module imports only from its own layer or the layers below it.

Every import counts: at module level, inside functions (lazy imports) and
under ``TYPE_CHECKING``, because each is a dependency a reader must follow.
No import circle is allowed either, lazy or not.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "torchlint"

# Lowest first. ``torchlint/__init__.py`` (the version) sits below them all;
# ``__main__`` (``python -m torchlint``) above them all.
LAYERS = ["core", "knowledge", "analysis", "rules", "engine", "run", "frontends"]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> Dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: Set[str]) -> Set[str]:
    """The torchlint modules ``name`` imports, anywhere in its file."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                found.add(submodule if submodule in known else source)
    return {module for module in found if module in known and module != name}


def layer_of(name: str) -> int:
    parts = name.split(".")
    if name == "torchlint":
        return -1
    if parts[1] == "__main__":
        return len(LAYERS)
    return LAYERS.index(parts[1])


def import_graph() -> Dict[str, Set[str]]:
    modules = all_modules()
    return {name: imports_of(name, path, set(modules)) for name, path in modules.items()}


def test_every_module_belongs_to_a_layer():
    loose = [name for name in all_modules() if name.count(".") == 1 and name.split(".")[1] not in LAYERS
             and name != "torchlint.__main__"]
    assert loose == [], f"modules outside the layer packages {LAYERS}: {loose}"


def test_every_layer_package_says_what_belongs_there_and_what_it_may_import():
    for layer in LAYERS:
        doc = ast.get_docstring(ast.parse((PACKAGE / layer / "__init__.py").read_text(encoding="utf-8")))
        assert doc and "May import" in doc, f"torchlint/{layer}/__init__.py needs a docstring with 'May import'"


def test_no_module_imports_a_higher_layer():
    upward = [
        f"{name} (layer {LAYERS[layer_of(name)] if layer_of(name) < len(LAYERS) else '__main__'}) imports "
        f"{target} (layer {LAYERS[layer_of(target)]})"
        for name, targets in import_graph().items()
        for target in sorted(targets)
        if layer_of(target) > layer_of(name)
    ]
    assert upward == []


def strongly_connected(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Tarjan's algorithm, iteratively; components of more than one module."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    components: List[List[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def test_no_import_circles():
    assert strongly_connected(import_graph()) == []


@pytest.mark.parametrize(
    "graph, expected",
    [
        ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ],
)
def test_the_circle_finder_finds_circles(graph, expected):
    assert strongly_connected(graph) == expected


def test_the_import_reader_sees_lazy_and_type_checking_imports(tmp_path):
    package = tmp_path / "torchlint"
    (package / "run").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "run" / "__init__.py").write_text("")
    path = package / "run" / "runner.py"
    path.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from torchlint.run.report import FileReport\n"
        "def f():\n    from . import notebook\n"
    )
    known = {"torchlint", "torchlint.run", "torchlint.run.runner", "torchlint.run.report", "torchlint.run.notebook"}
    assert imports_of("torchlint.run.runner", path, known) == {"torchlint.run.report", "torchlint.run.notebook"}


def test_rule_modules_do_not_import_each_other():
    """A rule is a self-describing unit: what two rules share lives in a shared
    place (``rules/edits.py``, ``rules/_*.py``, ``analysis/``, ``knowledge/``),
    never in one rule's module for the other to import."""
    modules = all_modules()
    known = set(modules)
    rule_modules = {name for name in modules if name.split(".")[-1].startswith("tl") and ".rules." in name}
    crossing = {name: sorted(imports_of(name, modules[name], known) & rule_modules) for name in sorted(rule_modules)}
    assert {name: found for name, found in crossing.items() if found} == {}


# A whole-module walk a rule may still make, and why it is not the traversal's.
WHOLE_MODULE_WALKS = {
    # Parents of every node, needed only once a misspelling is found (four files
    # of transformers): recording them in every traversal would cost more.
    "torchlint.rules.tl211_misspelled_api": "__init__",  # of _FileFacts
}


def _whole_module_walks(path: Path) -> List[str]:
    """Functions of ``path`` that call ``<...>.module.visit(...)`` or ``module.visit(...)``."""
    found = []
    for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for call in ast.walk(function):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "visit"):
                continue
            receiver = call.func.value
            if (isinstance(receiver, ast.Name) and receiver.id == "module") or (
                    isinstance(receiver, ast.Attribute) and receiver.attr == "module"):
                found.append(function.name)
    return found


def test_rules_read_the_single_traversal_instead_of_walking_the_module_again():
    """One traversal per file: a rule that needs every node of a type declares it
    in ``gathers`` and reads ``ctx.file.nodes(...)``; it does not visit the tree again."""
    modules = all_modules()
    walks = {}
    for name in sorted(modules):
        if ".rules." in name:
            for function in _whole_module_walks(modules[name]):
                walks[name] = f"{walks[name]}, {function}" if name in walks else function
    assert walks == WHOLE_MODULE_WALKS
