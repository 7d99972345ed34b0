"""The shape of the package, read from its source (issue 17): no import cycle among gpuenv's
modules, no module that imports conda-lock or pydantic (test dependencies only), and no module
over 400 lines without a reason in its docstring.

Only imports a module runs when it is imported count for cycles: those at module level, outside
`if TYPE_CHECKING:`. An import inside a function runs later, when every module is loaded.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "installer" / "gpuenv"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


LONG = 400
# a long module says why in its docstring, in a sentence that starts with these words
LONG_REASON = "Long because"

MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(name: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The gpuenv modules an import statement in module `name` loads."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}" if base else package
    found = [base]
    # `from gpuenv.lock import pipeline` loads the module gpuenv.lock.pipeline too
    found += [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
    return found


def module_level_imports(name: str) -> set[str]:
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    out: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                out.update(m for m in _imported(name, node) if m in MODULES)
            elif isinstance(node, ast.If) and not _is_type_checking(node):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)

    visit(tree.body)
    # a.b.c's own packages (a, a.b) are being imported already when it runs: no edge to them
    ancestors = {name.rsplit(".", n)[0] for n in range(1, name.count(".") + 1)}
    return out - ancestors - {name}


def all_imports(path: Path) -> set[str]:
    """Every module any import statement of the file names, at any depth of the code."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_relative_and_package_imports() -> None:
    """The reader is not blind: known edges of the real package are in the graph."""
    assert "gpuenv.lock.model" in module_level_imports("gpuenv.lock.pipeline") or any(
        "gpuenv.lock" in m for m in module_level_imports("gpuenv.lock.pipeline")
    )
    assert "gpuenv.fs.atomic_write" in module_level_imports("gpuenv.lock.pipeline")


def test_no_import_cycle() -> None:
    graph = {name: module_level_imports(name) for name in MODULES}
    assert cycles(graph) == []


@pytest.mark.parametrize("heavy", ["conda_lock", "pydantic"])
def test_gpuenv_never_imports(heavy: str) -> None:
    users = [
        name
        for name, path in MODULES.items()
        if any(m == heavy or m.startswith(f"{heavy}.") for m in all_imports(path))
    ]
    assert users == []


def test_long_modules_say_why() -> None:
    long = []
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > LONG:
            doc = ast.get_docstring(ast.parse(text)) or ""
            if LONG_REASON not in doc:
                long.append(f"{name} ({text.count(chr(10))} lines)")
    assert long == []
