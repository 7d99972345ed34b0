"""An environment of another stack is replaced only when the user says so (`--replace`): an
install of a jax lockfile must not silently turn a torch + Jupyter environment into a jax one."""

from __future__ import annotations

from typing import Any, Optional

from gpuenv.envs.errors import InstallError
from gpuenv.envs.store import EnvLocation, read_metadata


def _kind(frameworks: Any, accelerator: Any) -> tuple[tuple[str, ...], str]:
    return tuple(sorted(str(f) for f in frameworks)), str(accelerator)


def replace_refusal(where: EnvLocation, frameworks: Any, accelerator: str) -> Optional[str]:
    """Why installing a stack of these frameworks on this accelerator at `where` needs
    `--replace`, or None: nothing there, or the same frameworks on the same accelerator (an
    upgrade or a rebuild)."""
    current = where.current()
    if current is None:
        return None
    try:
        old = read_metadata(current)
    except InstallError:
        return None  # unreadable: install replaces it, as it says
    stack = old.get("stack") or {}
    before = _kind(stack, old.get("accelerator", ""))
    after = _kind(frameworks, accelerator)
    if before == after:
        return None
    from gpuenv.output import shown  # the metadata on disk is untrusted

    had = ", ".join(f"{n} {v}" for n, v in sorted(stack.items())) or "no frameworks"
    new = ", ".join(after[0]) or "no frameworks"
    return (
        f"{where.link} holds another stack ({shown(had)}, {shown(before[1])}); this lockfile"
        f" installs {new} ({after[1]}). Pass --replace to replace it (the version there stays"
        f" restorable with `gpuenv envs rollback {where.name}` until the next install), or"
        " --name NAME for an environment of its own."
    )
