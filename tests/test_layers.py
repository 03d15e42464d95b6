"""The package's import structure: data flows one way, down a fixed order of layers.

An AST walk over every module of ``src/zeroclaw_eval`` finds each import that runs
(at module level or inside a function; imports under ``if TYPE_CHECKING:`` never
run, and may point anywhere). A module may import its own package and anything
in a lower layer; a sibling of the same layer, or anything above, is refused. The
default plugins in ``builtin/`` are imported by the plugin manager alone (by name,
as strings), never by an import statement outside ``builtin/``. And no set of
modules may import each other in a circle.

docs/ARCHITECTURE.md shows the same table; a change of layering is a change of
both, reviewed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from .conftest import PROJECT

PACKAGE = PROJECT / "src" / "zeroclaw_eval"

#: Bottom to top. Each entry is a unit: a module, or a package with everything in
#: it (the longest matching name wins: ``agents.base`` sits below the rest of
#: ``agents``, which implements it).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "version"),
    ("util", "toolserver.headers"),
    ("protocol", "agents.dialect", "workspace", "report"),
    ("grading",),
    ("config", "modes", "agents.base", "hookspecs"),
    ("plugins",),
    ("case", "bridge", "toolserver", "agents"),
    ("builtin",),
    ("selection", "history"),
    ("run",),
    ("cli",),
    ("testing", "__init__", "__main__", "launch"),
)

LAYER_OF = {unit: number for number, units in enumerate(LAYERS) for unit in units}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or "__init__"


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def unit_of(module: str) -> str:
    """The layer table's entry ``module`` belongs to."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in LAYER_OF:
            return candidate
    raise AssertionError(f"zeroclaw_eval.{module} is in no layer: add it to LAYERS")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` except what sits under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield child
                yield from _runtime_nodes(child)
            continue
        yield node
        yield from _runtime_nodes(node)


def _target(module: str) -> str | None:
    """The project module an absolute import names, relative to the package."""
    if module == "zeroclaw_eval":
        return "__init__"
    if module.startswith("zeroclaw_eval."):
        return module.removeprefix("zeroclaw_eval.")
    return None


@cache
def runtime_imports(module: str) -> dict[str, int]:
    """The project modules ``module`` imports when it runs, with a line of each."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found: dict[str, int] = {}
    for node in _runtime_nodes(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [t for alias in node.names if (t := _target(alias.name))]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            base = _target(node.module)
            if base is not None:
                for alias in node.names:
                    # ``from zeroclaw_eval.bridge import server`` imports a module.
                    submodule = alias.name if base == "__init__" else f"{base}.{alias.name}"
                    targets.append(submodule if submodule in MODULES else base)
        for target in targets:
            found.setdefault(target, node.lineno)
    return found


def edges() -> list[tuple[str, str, int]]:
    return [
        (module, target, line)
        for module in MODULES
        for target, line in runtime_imports(module).items()
        if target != module
    ]


def test_the_walk_sees_the_package() -> None:
    # Otherwise every check below could pass on nothing.
    assert len(MODULES) > 60
    assert "plugins.registry" in runtime_imports("run.session")
    assert len(edges()) > 150


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        unit_of(module)


def test_no_runtime_import_goes_up_or_sideways() -> None:
    wrong = []
    for module, target, line in edges():
        source_unit, target_unit = unit_of(module), unit_of(target)
        if source_unit == target_unit:
            continue
        if LAYER_OF[target_unit] >= LAYER_OF[source_unit]:
            wrong.append(
                f"src/zeroclaw_eval/{MODULES[module].relative_to(PACKAGE)}:{line}: "
                f"{module} (layer {LAYER_OF[source_unit]}, {source_unit}) imports {target} "
                f"(layer {LAYER_OF[target_unit]}, {target_unit})"
            )
    assert wrong == []


def test_only_the_builtin_plugins_import_each_other() -> None:
    wrong = [
        f"{module} imports {target}"
        for module, target, _ in edges()
        if unit_of(target) == "builtin" and unit_of(module) != "builtin"
    ]
    assert wrong == []


def test_there_is_no_import_cycle() -> None:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for module, target, _ in edges():
        graph[module].add(target)
    assert strongly_connected(graph) == []


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: every set of two or more modules that import each other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in graph.get(node, ()):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize(
    ("graph", "cycles"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ],
)
def test_the_cycle_finder_finds_cycles(graph: dict[str, set[str]], cycles: list[list[str]]) -> None:
    assert strongly_connected(graph) == cycles


def test_the_walk_skips_type_checking_imports_and_sees_lazy_ones() -> None:
    # run/session.py imports the selection lazily, and the agent kind only for its types.
    imports = runtime_imports("run.session")
    assert "selection.select" in imports
    assert "agents.base" not in imports


def test_docs_architecture_shows_the_same_layers() -> None:
    text = (PROJECT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    table = text.split("| layer | packages |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| (\d+) \| (.*) \|$", table, re.MULTILINE)
    documented = tuple(tuple(re.findall(r"`([\w.]+)`", units)) for _, units in rows)
    assert [int(number) for number, _ in rows] == list(range(len(LAYERS)))
    assert documented == LAYERS
