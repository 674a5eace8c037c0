"""The package layers of flinkwin, read from the source with ``ast``: every import, including
those inside functions (not those under ``if TYPE_CHECKING:``, which never run), is an edge of
the module graph. No import circle may cross from one package to another for the stream API
(``flinkwin.datastream``), the package root and ``flinkwin.spark``; the Flink core imports no
Spark, not even lazily. Run as a script to print every circle that spans packages."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "flinkwin"
#: packages whose circles with other packages are broken (issue 34)
LAYERED = {"flinkwin", "flinkwin.datastream", "flinkwin.spark"}
#: the Flink core: Flink's semantics, with no Spark below them
CORE = {
    "flinkwin.operator", "flinkwin.windows", "flinkwin.assigners", "flinkwin.triggers",
    "flinkwin.evictors", "flinkwin.functions", "flinkwin.state",
}


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = ("flinkwin", *path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in _runtime_imports_of(child))
            continue
        yield from _runtime_imports_of(node)


def _runtime_imports_of(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    else:
        yield from _runtime_imports(node)


def import_graph() -> dict[str, set[str]]:
    """Module -> the flinkwin modules it imports (``from package import module`` names the
    module; a lazily loaded name in a ``__getattr__`` table counts as an import of its module)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _runtime_imports(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names]
            graph[name].update(t for t in targets if t in modules and t != name)
        if any(isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
               for node in tree.body):
            graph[name].update(
                node.value for node in ast.walk(tree)
                if isinstance(node, ast.Constant) and node.value in modules and node.value != name
            )
    return graph


def package_of(module: str) -> str:
    """The top-level package a module belongs to (``flinkwin`` for the root's modules)."""
    parts = module.split(".")
    if len(parts) > 1 and (ROOT / parts[1]).is_dir():
        return ".".join(parts[:2])
    return "flinkwin"


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def circles_across_packages() -> list[set[str]]:
    return [c for c in strongly_connected(import_graph())
            if len({package_of(m) for m in c}) > 1]


def test_no_import_circle_crosses_the_stream_api_root_and_spark_packages() -> None:
    crossing = [sorted(c) for c in circles_across_packages()
                if {package_of(m) for m in c} & LAYERED]
    assert crossing == []


def test_no_import_circle_joins_two_packages_subpackages_included() -> None:
    """Finer than the above: no circle joins modules of two packages, counting subpackages as
    packages of their own, so the operator's layers hold too (the object window operator in
    ``flinkwin.operator``, the state forms behind ``flinkwin.operator.states``, the snapshots in
    ``flinkwin.operator.snapshots``, the functions below them)."""
    modules = _modules()

    def own_package(module: str) -> str:
        return module if modules[module].name == "__init__.py" else module.rpartition(".")[0]

    crossing = [sorted(c) for c in strongly_connected(import_graph())
                if len({own_package(m) for m in c}) > 1]
    assert crossing == []


def _imports_pyspark(path: Path) -> bool:
    return any(
        target.split(".")[0] == "pyspark"
        for node in _runtime_imports(ast.parse(path.read_text()))
        for target in ([a.name for a in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""])
    )


def test_the_flink_core_imports_no_spark_even_lazily() -> None:
    modules, graph = _modules(), import_graph()
    reached = {m for m in modules if package_of(m) in CORE}
    frontier = set(reached)
    while frontier:
        frontier = {t for m in frontier for t in graph[m]} - reached
        reached |= frontier
    assert sorted(m for m in reached if package_of(m) == "flinkwin.spark") == []
    assert sorted(m for m in reached if _imports_pyspark(modules[m])) == []


def test_the_graph_reader_sees_lazy_imports_and_skips_type_checking_ones() -> None:
    graph = import_graph()
    # imported inside DataStream.keyBy only
    assert "flinkwin.datastream.keyed_stream" in graph["flinkwin.datastream.data_stream"]
    # loaded on first use through the package's __getattr__ table
    assert "flinkwin.datastream.keyed_stream" in graph["flinkwin"]
    # imported under ``if TYPE_CHECKING:`` only
    assert "flinkwin.datastream.window_result_stream" not in graph["flinkwin.spark.writer"]
    assert package_of("flinkwin.datastream.keyed_stream") == "flinkwin.datastream"
    assert package_of("flinkwin.errors") == "flinkwin"


def test_a_circle_through_two_packages_is_found_and_one_inside_a_package_is_not_crossing() -> None:
    graph = {
        "flinkwin.datastream.a": {"flinkwin.spark.b", "flinkwin.datastream.c"},
        "flinkwin.spark.b": {"flinkwin.datastream.a"},
        "flinkwin.datastream.c": {"flinkwin.datastream.d"},
        "flinkwin.datastream.d": {"flinkwin.datastream.c"},
        "flinkwin.errors": set(),
    }
    circles = sorted(sorted(c) for c in strongly_connected(graph))
    assert circles == [["flinkwin.datastream.a", "flinkwin.spark.b"],
                       ["flinkwin.datastream.c", "flinkwin.datastream.d"]]
    assert [len({package_of(m) for m in c}) for c in circles] == [2, 1]


if __name__ == "__main__":
    for component in circles_across_packages():
        print(sorted({package_of(m) for m in component}), sorted(component))
