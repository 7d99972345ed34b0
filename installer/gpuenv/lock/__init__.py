"""lock: a Plan becomes a lockfile: every file, for the target platform, with its hash.

result = lock_plan(plan, LockOptions(output=Path("gpuenv.conda-lock.yml")))
locked = load_locked(Path("gpuenv.conda-lock.yml"))

A thin face (gpuenv._lazy): install reads a lockfile through gpuenv.lock.load before it needs
the pipeline, uv's runner or the resolver, and importing that module runs this file first.
"""

from __future__ import annotations

from gpuenv._lazy import lazy_attributes

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: see _entry
if TYPE_CHECKING:
    from gpuenv.lock.errors import LockError, LockfileError
    from gpuenv.lock.load import load_locked
    from gpuenv.lock.model import LockedEnvironment
    from gpuenv.lock.pipeline import (
        LockOptions,
        LockResult,
        check_lockfile,
        lock_plan,
        plan_changes,
        start_pip_lock,
    )

_HOMES = {
    "LockError": "gpuenv.lock.errors",
    "LockfileError": "gpuenv.lock.errors",
    "LockedEnvironment": "gpuenv.lock.model",
    "LockOptions": "gpuenv.lock.pipeline",
    "LockResult": "gpuenv.lock.pipeline",
    "check_lockfile": "gpuenv.lock.pipeline",
    "load_locked": "gpuenv.lock.load",
    "lock_plan": "gpuenv.lock.pipeline",
    "plan_changes": "gpuenv.lock.pipeline",
    "start_pip_lock": "gpuenv.lock.pipeline",
}
__all__ = [
    "LockError",
    "LockOptions",
    "LockResult",
    "LockedEnvironment",
    "LockfileError",
    "check_lockfile",
    "load_locked",
    "lock_plan",
    "plan_changes",
    "start_pip_lock",
]
__getattr__ = lazy_attributes(__name__, _HOMES)
