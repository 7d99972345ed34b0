"""`gpuenv export --name ENV --to lmod -o FILE.lua`: an Lmod modulefile that activates an
environment of gpuenv's store the way its activation does (the environment's stable link, so a
rebuild keeps the module working): `module load NAME` puts its Python first on PATH, `module
unload` takes it away again. A conda environment's own activation scripts (activate.d) are not
run: the module sets what a venv's activation sets, and CONDA_PREFIX."""

from __future__ import annotations

from pathlib import Path

from gpuenv.export.recipe import ExportError


def lua_string(text: str) -> str:
    """`text` as a Lua long string that no character of it can end, nor escape from."""
    level = 0
    while f"]{'=' * level}]" in text:
        level += 1
    eq = "=" * level
    if "\n" in text or "\r" in text or "\0" in text:
        raise ExportError(f"{text!r}: a path or name with a line break cannot go into a modulefile")
    return f"[{eq}[{text}]{eq}]"


def modulefile(name: str, link: Path, backend: str, stack: str, python: str) -> str:
    """The modulefile text for environment `name` at `link` (the store's stable link)."""
    bin_dir = link / ("Scripts" if (link / "Scripts").is_dir() else "bin")
    lines = [
        "-- Made by `gpuenv export --to lmod`: the gpuenv environment " + name.replace("\n", " "),
        f"help({lua_string(f'gpuenv environment {name}: {stack}; Python {python}')})",
        f"whatis({lua_string(f'Name: {name}')})",
        f"whatis({lua_string(f'Description: {stack} (gpuenv)')})",
        'family("python_environment")',
        f"local root = {lua_string(str(link))}",
        f'prepend_path("PATH", {lua_string(str(bin_dir))})',
        'setenv("VIRTUAL_ENV", root)' if backend == "venv" else 'setenv("CONDA_PREFIX", root)',
        'unsetenv("PYTHONHOME")',
    ]
    return "\n".join(lines) + "\n"
