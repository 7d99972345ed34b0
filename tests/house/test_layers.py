"""Layers point down only (issue 33): a module imports (at any depth of its code, function-level
imports included) only from its own layer or those below. The order is the pipeline's: values
and helpers at the bottom, then where packages come from and what gpuenv knows, then the
stages (detect, resolve, lock, install, verify, doctor), then the workflows, then the CLI.

A node is a folder of the package (or a top-level module); `machine.describe` is one of its own:
it builds a Machine from flags, a file or detection, above the Machine value that recipes uses.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "installer" / "gpuenv"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "versions", "_lazy", "gpuenv", "output", "fs"),
    ("cache", "conda", "uv", "dataclass_code"),
    ("index", "machine"),
    ("recipes",),
    ("detect", "machine.describe", "resolve"),
    ("lock",),
    ("lab", "envs"),
    ("verify",),
    ("doctor",),
    ("setup", "api", "maint", "gpucheck", "export"),
    ("commands", "cli", "_entry", "__main__"),
)
RANK = {node: i for i, layer in enumerate(LAYERS) for node in layer}


def node_of(module: str) -> str:
    """gpuenv.lock.pipeline -> lock; gpuenv.machine.describe -> machine.describe; gpuenv -> gpuenv."""
    parts = module.split(".")[1:]
    if not parts:
        return "gpuenv"
    if parts[:2] == ["machine", "describe"]:
        return "machine.describe"
    return parts[0]


def module_of(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every gpuenv module an import statement of the file names, at any depth, outside
    `if TYPE_CHECKING:` (annotations only: nothing runs)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        test = getattr(node, "test", None)
        if isinstance(node, ast.If) and getattr(test, "id", getattr(test, "attr", "")) == (
            "TYPE_CHECKING"
        ):
            skipped.update(id(n) for n in ast.walk(node))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "gpuenv")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "gpuenv":
            module = node.module or ""
            found.add(module)
            if module == "gpuenv":  # `from gpuenv import cache`: the module cache
                found.update(f"gpuenv.{a.name}" for a in node.names)
    return found


def upward_imports(package: Path = PACKAGE) -> list[str]:
    out = []
    for path in sorted(package.rglob("*.py")):
        module = module_of(path, package)
        source = node_of(module)
        for target in sorted(imports(path)):
            to = node_of(target)
            if to == "gpuenv" and target != "gpuenv":
                continue
            if RANK.get(to, -1) > RANK[source]:
                out.append(f"{module} ({source}) imports {target} ({to})")
    return out


def test_every_folder_has_a_layer() -> None:
    nodes = {node_of(module_of(p)) for p in PACKAGE.rglob("*.py")}
    assert sorted(nodes - set(RANK)) == []


def test_layers_point_down_only() -> None:
    assert upward_imports() == []


def test_the_check_sees_a_function_level_import_that_points_up(tmp_path: Path) -> None:
    fake = tmp_path / "gpuenv"
    (fake / "fs").mkdir(parents=True)
    (fake / "fs" / "x.py").write_text("def f():\n    from gpuenv.lock.pipeline import lock_plan\n")
    (fake / "fs" / "y.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from gpuenv.lock import z\n"
    )
    assert upward_imports(fake) == ["gpuenv.fs.x (fs) imports gpuenv.lock.pipeline (lock)"]
