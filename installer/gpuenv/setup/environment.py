"""The environment setup rebuilds: what a rebuild would change or lose in it, the framework
releases `add` keeps, its Jupyter kernel and the line that activates it."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from gpuenv.envs.store import EnvLocation


def before_replacing(location: EnvLocation, stack: str, name: str) -> list[str]:
    """What a rebuild would change or lose in the environment it replaces."""
    from gpuenv.envs.errors import EnvironmentNotFound
    from gpuenv.envs.hand_installed import hand_installed
    from gpuenv.envs.store import read_metadata
    from gpuenv.output import shown  # the metadata on disk is untrusted

    current = location.current()
    if current is None:
        return []
    try:
        meta = read_metadata(current)
    except EnvironmentNotFound:
        return []
    lines = []
    old = shown(", ".join(f"{n} {v}" for n, v in (meta.get("stack") or {}).items()))
    if old and old != stack:
        lines.append(f"note: replacing environment {name} ({old}) with ({stack})")
    if "pip_packages" in meta and meta.get("backend") == "venv":
        extra = hand_installed(current, meta["pip_packages"])
        if extra:
            lines.append(
                f"warning: {', '.join(extra)} were installed into {name} by hand and are not in"
                f" its lockfile, so the rebuilt environment will not have them; keep them with"
                f" `gpuenv add -n {name} {' '.join(extra)}`"
            )
    return lines


def installed_builds(name: str) -> tuple[str, ...]:
    """`add` keeps the framework releases the environment has (`gpuenv setup` re-plans them):
    each as `name==version`, from the environment's own metadata (checked like input)."""
    from gpuenv.envs.errors import InstallError
    from gpuenv.envs.store import EnvLocation, read_metadata
    from gpuenv.resolve.requirements import RequirementError, parse_requirements

    current = EnvLocation.named(name).current()
    if current is None:
        return ()
    try:
        plan = read_metadata(current).get("plan") or {}
        pins = tuple(
            f"{fw}=={choice['version']}" for fw, choice in (plan.get("frameworks") or {}).items()
        )
        parse_requirements(list(pins))  # a damaged record is ignored, not trusted
    except (InstallError, RequirementError, AttributeError, KeyError, TypeError):
        return ()
    return pins


def register_kernel(link: Path, backend: str, name: str, stack: str) -> Path:
    from gpuenv.envs.jupyter import register_kernel as register
    from gpuenv.envs.store import interpreter

    env = {"CONDA_PREFIX": str(link)} if backend == "conda" else {}
    # the link, not the version folder: the kernel keeps working after a rebuild
    return register(interpreter(link), name, stack, env, os.environ)


def activate_line(link: Path, backend: Optional[str], name: str) -> str:
    """The line for the user's own shell (`gpuenv activate --hint` prints the same), made from
    the environment itself each time, never read back from the record: the record is a file
    on disk and the line is pasted into a shell."""
    from gpuenv.envs.activation import ActivationError, activate_hint, detect_shell

    shell = detect_shell(os.environ, sys.platform == "win32")
    if backend is None:
        backend = "conda" if (link / "conda-meta").is_dir() else "venv"
    try:
        return activate_hint(link, backend, shell, name)
    except ActivationError as exc:
        # the environment is installed and works; only a shell line cannot name its path
        return f"gpuenv run -n {name} -- COMMAND ({exc})"
