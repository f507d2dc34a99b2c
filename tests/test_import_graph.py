"""The direction of imports inside app/, read from the source with `ast`.

Every import counts, those inside functions too: an import moved into a function to dodge a cycle
still ties the two modules together, and only works while nobody imports them in the other order.
Importing `a.b.c` also runs the package `a.b`, so that edge counts as well. Imports under
`if TYPE_CHECKING:` never run and are left out (they are for the type checker).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

from tests.python_source import parse_file

APP = Path(__file__).resolve().parent.parent / "app"
LAYERS_ABOVE_CORE = ("app.ui", "app.server", "app.cli")


def module_files() -> dict[str, Path]:
    """Every module of the app by its dotted name (a package by its __init__.py)."""
    modules = {}
    for path in APP.rglob("*.py"):
        parts = list(path.relative_to(APP.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement at any depth, except those under `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif _is_type_checking_block(node):
            yield from (n for branch in node.orelse for n in _imports(ast.Module(body=[branch], type_ignores=[])))
        else:
            yield from _imports(node)


@functools.cache
def _top_level_names(path: Path) -> set[str]:
    """The names a module binds at its top level (what `from module import name` can find)."""
    names = set()
    for node in ast.walk(parse_file(path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


@functools.cache
def import_graph() -> tuple[dict[str, set[str]], list[str]]:
    """(module -> the app modules it imports, imports of app names that do not exist)."""
    modules = module_files()
    graph: dict[str, set[str]] = {}
    missing: list[str] = []

    def target(name: str, where: str) -> set[str]:
        """`name` and the packages above it, as modules of the app; a missing module is noted."""
        if name not in modules:
            missing.append(f"{where}: no module {name}")
            return set()
        parts = name.split(".")
        return {".".join(parts[:i]) for i in range(2, len(parts) + 1)}

    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in _imports(parse_file(path)):
            where = f"{name}:{node.lineno}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "app":
                        edges |= target(alias.name, where)
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != "app":
                continue
            edges |= target(source, where)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in modules:
                    edges |= target(submodule, where)
                elif source in modules and alias.name != "*" and alias.name not in _top_level_names(modules[source]):
                    missing.append(f"{where}: {source} has no {alias.name}")
        # A module needs its own packages anyway; those edges are not dependencies.
        graph[name] = {edge for edge in edges if edge != name and not name.startswith(edge + ".")}
    return graph, missing


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                group.append(other)
                if other == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_reader_finds_a_cycle_hidden_inside_a_function() -> None:
    graph = {"app.core.a": {"app.core.b"}, "app.core.b": {"app.core.c"}, "app.core.c": {"app.core.a"}, "app.x": set()}
    assert cycles(graph) == [["app.core.a", "app.core.b", "app.core.c"]]
    tree = ast.parse("import os\ndef f():\n    from app.core import paths\nif TYPE_CHECKING:\n    import app.ui\n")
    assert [ast.unparse(node) for node in _imports(tree)] == ["import os", "from app.core import paths"]


def test_the_graph_holds_every_module_and_the_imports_inside_functions() -> None:
    graph, _ = import_graph()
    assert len(graph) > 100
    # app/core/journal/store.py imports journal.migration inside Journal._connect only.
    assert "app.core.journal.migration" in graph["app.core.journal.store"]
    # Importing app.core.i18n.formats runs the package app.core.i18n first.
    assert {"app.core.i18n", "app.core.i18n.formats"} <= graph["app.core.data_folder"]


def test_no_module_imports_itself_back_through_others() -> None:
    graph, _ = import_graph()
    assert cycles(graph) == []


def test_every_import_of_the_app_names_a_module_or_name_that_exists() -> None:
    _, missing = import_graph()
    assert missing == []


def test_the_core_imports_no_ui_server_or_cli() -> None:
    graph, _ = import_graph()
    upward = sorted(
        f"{module} -> {other}"
        for module, imported in graph.items()
        if module.startswith("app.core")
        for other in imported
        if other.startswith(LAYERS_ABOVE_CORE)
    )
    assert upward == []


def test_the_server_and_the_ui_never_import_each_other() -> None:
    graph, _ = import_graph()
    crossing = sorted(
        f"{module} -> {other}"
        for module, imported in graph.items()
        for other in imported
        if (module.startswith("app.server") and other.startswith("app.ui"))
        or (module.startswith("app.ui") and other.startswith("app.server"))
    )
    assert crossing == []
