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
from typing import Any, Optional

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
    spec = _our_spec(folder)
    return spec is not None and spec[0] == env_name


def _our_spec(folder: Path) -> Optional[tuple[str, dict[str, Any]]]:
    """(environment name, kernel spec) of a kernel gpuenv wrote; None for any other."""
    from gpuenv.fs.safe_paths import UnsafePathError, read_bounded

    try:
        raw = read_bounded(folder / "kernel.json", MAX_KERNEL_BYTES, "kernel", follow_links=False)
        spec = json.loads(raw.decode("utf-8"))
    except (UnsafePathError, ValueError, RecursionError):
        return None
    metadata = spec.get("metadata") if isinstance(spec, dict) else None
    mark = metadata.get(MARKER) if isinstance(metadata, dict) else None
    name = mark.get("environment") if isinstance(mark, dict) else None
    return (name, spec) if isinstance(name, str) else None


def kernels_that_cannot_start(environ: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(kernel folder, its environment's name, why) for each kernel gpuenv wrote whose environment cannot start it: its
    interpreter is gone, or the environment (rebuilt with another stack, say) has no ipykernel."""
    kernels = jupyter_data_dir(environ) / "kernels"
    try:
        folders = sorted(p for p in kernels.iterdir() if p.name.startswith(KERNEL_PREFIX))
    except OSError:
        return []
    out = []
    for folder in folders:
        found = None if folder.is_symlink() else _our_spec(folder)
        if found is None:
            continue
        argv = found[1].get("argv")
        python = (
            Path(argv[0]) if isinstance(argv, list) and argv and isinstance(argv[0], str) else None
        )
        if python is None or not python.exists():
            out.append((str(folder), found[0], f"its interpreter {python} does not exist"))
        elif not _has_ipykernel(python):
            out.append((str(folder), found[0], f"the environment of {python} has no ipykernel"))
    return out


def _has_ipykernel(python: Path) -> bool:
    """ipykernel_launcher.py in the environment's site-packages (looked for, not imported)."""
    env = python.parent.parent
    patterns = (
        "lib/python*/site-packages/ipykernel_launcher.py",
        "Lib/site-packages/ipykernel_launcher.py",
    )
    return any(next(env.glob(p), None) is not None for p in patterns)


MAX_KERNEL_BYTES = 1 << 20  # a kernel.json is a few hundred bytes
