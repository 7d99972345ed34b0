"""A Jupyter kernel for an environment, so a notebook server anywhere on the machine can use it.

The kernel names the environment's stable link (`<store>/<name>/bin/python`), not a version
folder, so it keeps working when the environment is rebuilt. Kernels gpuenv writes are named
`gpuenv-<name>` and carry a marker, so removal touches only its own.
"""

from __future__ import annotations

import json
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
    return jupyter_data_dir(environ) / "kernels" / kernel_name(env_name)


def kernel_name(env_name: str) -> str:
    """`gpuenv-<name>`, lowercase as Jupyter's kernel names are. Store names are case-sensitive,
    so a name with capitals gets a short hash of itself as well: `foo` and `Foo` must not share
    (and remove) one kernel."""
    name = f"{KERNEL_PREFIX}{env_name}".lower()
    if env_name != env_name.lower():
        import hashlib

        name += "-" + hashlib.sha256(env_name.encode("utf-8")).hexdigest()[:8]
    return name


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
    from gpuenv.fs.atomic_write import OutputPathError, OutputWriteError, atomic_write_text

    folder = kernel_dir(env_name, environ)
    if folder.is_symlink() or (folder.exists() and not _is_ours(folder, env_name)):
        raise KernelError(
            f"{folder} exists and was not written by gpuenv for environment {env_name!r}; remove"
            " it or choose another name (the environment itself is installed)"
        )
    spec = kernel_spec(python, env_name, stack, env)
    try:
        # the one atomic writer: a link planted at the kernel's folder or at kernel.json is
        # refused, never written through
        atomic_write_text(
            folder / "kernel.json", json.dumps(spec, indent=1) + "\n", root=folder.parent
        )
    except OutputWriteError as exc:
        raise KernelError(
            f"cannot write the Jupyter kernel in {folder}: {exc.reason} (is JUPYTER_DATA_DIR"
            " a folder?); the environment itself is installed"
        ) from None
    except OutputPathError as exc:
        raise KernelError(f"{exc}; the environment itself is installed") from None
    return folder


def remove_kernel(env_name: str, environ: Mapping[str, str]) -> bool:
    """Remove the environment's kernel if gpuenv wrote it; whether one was removed."""
    folder = kernel_dir(env_name, environ)
    if folder.is_symlink() or not folder.is_dir() or not _is_ours(folder, env_name):
        return False
    shutil.rmtree(folder)
    return True


def _is_ours(folder: Path, env_name: str) -> bool:
    """Whether gpuenv wrote this kernel, for this very environment."""
    from gpuenv.fs.safe_paths import UnsafePathError, read_bounded

    try:
        raw = read_bounded(folder / "kernel.json", MAX_KERNEL_BYTES, "kernel", follow_links=False)
        spec = json.loads(raw.decode("utf-8"))
    except (UnsafePathError, ValueError, RecursionError):
        return False
    metadata = spec.get("metadata") if isinstance(spec, dict) else None
    mark = metadata.get(MARKER) if isinstance(metadata, dict) else None
    return isinstance(mark, dict) and mark.get("environment") == env_name


MAX_KERNEL_BYTES = 1 << 20  # a kernel.json is a few hundred bytes
