"""commands/ parses, calls one function and renders (issue 33): no function there over 60
lines, and the package's top level stays small (the stages live in their folders)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "installer" / "gpuenv"
LONGEST = 60
TOP_LEVEL = 8  # modules beside the folders, __init__ and __main__ not counted


def long_functions(folder: Path) -> list[str]:
    found = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > LONGEST:
                    found.append(f"{path.name}:{node.name} ({length} lines)")
    return found


def test_no_function_in_commands_is_over_sixty_lines() -> None:
    assert long_functions(PACKAGE / "commands") == []


def test_the_check_finds_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(LONGEST))
    (tmp_path / "long.py").write_text(f"def f() -> None:\n{body}\n")
    assert long_functions(tmp_path) == [f"long.py:f ({LONGEST + 1} lines)"]


def test_the_top_level_holds_few_modules() -> None:
    top = sorted(
        p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")
    )
    assert len(top) <= TOP_LEVEL, top
    assert not (
        PACKAGE / "setup.py"
    ).exists()  # setup is a package: a setup.py reads as a build script
    assert (PACKAGE / "setup" / "workflow.py").is_file()
