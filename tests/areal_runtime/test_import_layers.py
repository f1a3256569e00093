# SPDX-License-Identifier: Apache-2.0
"""No import runs back up the runtime's layers, and no two subpackages import each other.

The layers, lowest first (a module may import its own layer and the ones below):

    0  utils         helpers with no opinion on RL: tensors, files, sockets, the process pool,
                     the calculator table
    1  models        the embedded model and tokenizers
    2  api           AReaL's contracts: io_struct, cli_args, the experiment configs, workflow_api,
                     reward_api
    3  engine        inference engines (scripted, local, remote)
    4  experimental  the OpenAI-compatible proxy over an engine, and its clients
    5  infra         what runs workflows: the executor (agents through the proxy), stall detector
    6  reward, dataset, workflow   what a user's workflow is built from; consistency, the
                     train-inference checks that run a workflow (check, trainer, test kit)
    7  testing       the pytest plugin and its consistency_check fixture
    8  trainer       the training loop on top of everything

A few modules live at AReaL's paths but do the work of a higher layer; they sit at that layer
(``GLUE``). Every import counts, at module level or inside a function (a lazy import is still a
dependency, only a later one), and so does a module named in ``lazy_exports(...)`` or
``importlib.import_module(...)``; imports under ``if TYPE_CHECKING:`` do not (they never run).

``python tests/areal_runtime/test_import_layers.py`` prints the package graph and what breaks it.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "areal_runtime"
LAYERS = {
    "utils": 0,
    "models": 1,
    "api": 2,
    "engine": 3,
    "experimental": 4,
    "infra": 5,
    "reward": 6,
    "dataset": 6,
    "workflow": 6,
    "consistency": 6,
    "testing": 7,
    "trainer": 8,
}
# AReaL's paths whose content is a higher layer's: the tokenizer loader knows the embedded
# model's names, recovery saves engines through the API's SaveLoadMeta, the test helpers
# subclass the API's RolloutWorkflow.
GLUE = {
    "utils.hf_utils": 1,
    "utils.recover": 2,
    "utils.testing_utils": 2,
}


# Calls whose string arguments name modules they import (absolute names only are followed).
DYNAMIC_IMPORTERS = {"lazy_exports", "importlib.import_module", "import_module"}


def _runtime_module(path: Path) -> str:
    parts = path.relative_to(RUNTIME).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    path = RUNTIME.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.AST) -> list[tuple[str, int]]:
    """``(module inside areal_runtime, line)`` for every import that runs."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, node.lineno))
            # `from areal_runtime.api import reward_api` imports the module reward_api
            found.extend(
                (f"{node.module}.{a.name}", node.lineno)
                for a in node.names
                if _is_module(f"{node.module}.{a.name}")
            )
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in DYNAMIC_IMPORTERS:
            # lazy_exports(__name__, {"Name": "areal_runtime.x.y"}): an import, made later
            found.extend(
                (c.value, node.lineno)
                for arg in node.args
                for c in ast.walk(arg)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            )
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    prefix = "areal_runtime."
    return [(m.removeprefix(prefix), line) for m, line in found if m.startswith(prefix)]


def _layer(module: str) -> tuple[str, int] | None:
    """``(node, layer)``: the node is the subpackage, or the glue module itself."""
    package = module.split(".")[0]
    if package not in LAYERS:
        return None  # areal_runtime.errors, .workflow_context: top-level modules, no layer
    for glue, layer in GLUE.items():
        if module == glue or module.startswith(glue + "."):
            return glue, layer
    return package, LAYERS[package]


def import_arrows() -> list[tuple[str, str, str, int]]:
    """``(importing module, imported module, file, line)`` across two subpackages."""
    arrows = []
    for path in sorted(RUNTIME.rglob("*.py")):
        source = _runtime_module(path)
        if _layer(source) is None:
            continue
        for target, line in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if _layer(target) is not None and _layer(target)[0] != _layer(source)[0]:
                arrows.append((source, target, str(path.relative_to(RUNTIME.parent)), line))
    return arrows


def upward_arrows() -> list[str]:
    """Each import from a lower layer to a higher one, as ``file:line: what imports what``."""
    out = []
    for source, target, file, line in import_arrows():
        (_, low), (_, high) = _layer(source), _layer(target)  # type: ignore[misc]
        if high > low:
            out.append(f"{file}:{line}: {source} (layer {low}) imports {target} (layer {high})")
    return sorted(set(out))


def package_graph() -> dict[str, set[str]]:
    """Node (subpackage or glue module) -> the nodes it imports."""
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target, _, _ in import_arrows():
        graph[_layer(source)[0]].add(_layer(target)[0])  # type: ignore[index]
    return graph


def module_graph(package: str = "") -> dict[str, set[str]]:
    """Module -> the modules it imports, inside one subpackage, or the whole runtime for ``""``
    (``__init__`` files left out: importing any module runs them, which is no circle in the
    code)."""
    graph: dict[str, set[str]] = defaultdict(set)
    prefix = package + "." if package else ""
    for path in sorted((RUNTIME / package).rglob("*.py")):
        source = _runtime_module(path)
        if path.name == "__init__.py":
            continue
        for target, _ in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            folder = RUNTIME.joinpath(*target.split("."))
            inside = target.startswith(prefix) and not folder.is_dir()
            if inside and _is_module(f"areal_runtime.{target}"):
                graph[source].add(target)
    return graph


def package_cycles() -> list[list[str]]:
    """Strongly connected groups of more than one node in :func:`package_graph`."""
    return _cycles(package_graph(), sorted(set(LAYERS) | set(GLUE)))


def _cycles(graph: dict[str, set[str]], nodes: list[str]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def connect(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in nodes:
        if node not in index:
            connect(node)
    return groups


def test_every_subpackage_has_a_layer():
    packages = {p.parent.name for p in RUNTIME.glob("*/__init__.py")}
    assert packages == set(LAYERS)


def test_no_import_runs_back_up_a_layer():
    assert upward_arrows() == []


def test_no_two_subpackages_import_each_other():
    assert package_cycles() == []


def test_no_two_api_modules_import_each_other():
    graph = module_graph("api")
    assert "api.experiment_config" in graph["api.cli_args"]  # the re-export is seen
    assert _cycles(graph, sorted(graph)) == []


def test_no_two_runtime_modules_import_each_other():
    """A circle inside a subpackage (the loop and the learner once shared an error class) is a
    circle too, lazy import or not."""
    graph = module_graph()
    assert "trainer.errors" in graph["trainer.learner"]
    assert _cycles(graph, sorted(graph)) == []


def test_the_checker_sees_an_upward_arrow_and_a_cycle(monkeypatch):
    """utils importing the trainer is both: a layer up, and a circle with trainer -> utils."""
    assert ("trainer.rl_trainer", 3) in _imports(
        ast.parse(
            "if TYPE_CHECKING:\n    import areal_runtime.api\nimport areal_runtime.trainer.rl_trainer\n"
        )
    )
    real = import_arrows()
    fake = ("utils.files", "trainer.rl_trainer", "areal_runtime/utils/files.py", 1)
    monkeypatch.setitem(globals(), "import_arrows", lambda: [*real, fake])
    assert "utils.files (layer 0) imports trainer.rl_trainer (layer 8)" in " ".join(upward_arrows())
    assert any({"trainer", "utils"} <= set(group) for group in package_cycles())


if __name__ == "__main__":
    for node, targets in sorted(package_graph().items()):
        print(f"{node} -> {', '.join(sorted(targets))}")
    arrows, cycles = upward_arrows(), package_cycles()
    print(f"\n{len(arrows)} upward arrows")
    print("\n".join(arrows))
    print(f"\n{len(cycles)} cycles between subpackages: {cycles}")
    modules = module_graph()
    module_cycles = _cycles(modules, sorted(modules))
    print(f"{len(module_cycles)} cycles between modules: {module_cycles}")
    cycles += module_cycles
    sys.exit(1 if arrows or cycles else 0)
