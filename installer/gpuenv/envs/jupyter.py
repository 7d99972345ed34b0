"""A Jupyter kernel for an environment, so a notebook server anywhere on the machine can use it.

The kernel names the environment's stable link (`<store>/<name>/bin/python`), not a version
folder, so it keeps working when the environment is rebuilt. Kernels gpuenv writes are named
`gpuenv-<name>` and carry a marker, so removal touches only its own.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpuenv.errors import USAGE_EXIT, GpuenvError

KERNEL_PREFIX = "gpuenv-"
MARKER = "gpuenv"


class KernelError(GpuenvError):
    """A Jupyter kernel that gpuenv cannot write or remove (one it did not write, a folder in
    the way): the user chooses another name or removes it."""

    exit_code = USAGE_EXIT


def jupyter_data_dir(environ: Mapping[str, str], platform: str = sys.platform) -> Path:
    """Jupyter's per-user data folder, where `jupyter kernelspec list` finds user kernels."""
    if environ.get("JUPYTER_DATA_DIR"):
        return Path(environ["JUPYTER_DATA_DIR"])
    home = Path(environ.get("HOME") or Path.home())
    if platform == "win32":
        appdata = environ.get("APPDATA")
        return Path(appdata) / "jupyter" if appdata else home / "AppData" / "Roaming" / "jupyter"
    if platform == "darwin":
        return home / "Library" / "Jupyter"
    xdg = environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else home / ".local" / "share") / "jupyter"


def kernel_dir(env_name: str, environ: Mapping[str, str]) -> Path:
    return jupyter_data_dir(environ) / "kernels" / f"{KERNEL_PREFIX}{env_name}".lower()


def kernel_spec(python: Path, env_name: str, stack: str, env: Mapping[str, str]) -> dict[str, Any]:
    return {
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"{env_name} ({stack})" if stack else env_name,
        "language": "python",
        "env": dict(env),
        "metadata": {MARKER: {"environment": env_name}},
    }


def register_kernel(
    python: Path, env_name: str, stack: str, env: Mapping[str, str], environ: Mapping[str, str]
) -> Path:
    """Write (or replace) the environment's kernel; its folder."""
    folder = kernel_dir(env_name, environ)
    if folder.is_symlink() or (folder.exists() and not _is_ours(folder)):
        raise KernelError(
            f"{folder} exists and was not written by gpuenv; remove it or choose another name"
        )
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / "kernel.json.tmp"
    spec = kernel_spec(python, env_name, stack, env)
    tmp.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, folder / "kernel.json")
    return folder


def remove_kernel(env_name: str, environ: Mapping[str, str]) -> bool:
    """Remove the environment's kernel if gpuenv wrote it; whether one was removed."""
    folder = kernel_dir(env_name, environ)
    if folder.is_symlink() or not folder.is_dir() or not _is_ours(folder):
        return False
    shutil.rmtree(folder)
    return True


def _is_ours(folder: Path) -> bool:
    try:
        spec = json.loads((folder / "kernel.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(spec, dict) and MARKER in (spec.get("metadata") or {})
