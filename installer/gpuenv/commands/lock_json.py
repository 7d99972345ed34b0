"""What `gpuenv lock --json` says about each lockfile: written, checked, or failed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from gpuenv.fs.file_hash import file_sha256

if TYPE_CHECKING:
    from gpuenv.lock.pipeline import LockResult
    from gpuenv.resolve.plan import Plan


def absolute(path: Path) -> str:
    return os.path.abspath(path)


def locked_json(result: LockResult, fmt: str, before: Optional[str]) -> dict[str, Any]:
    """A lockfile lock wrote: where, what, and whether its bytes changed (`before`: its hash
    before the lock)."""
    after = file_sha256(result.path)
    return {
        "lockfile": absolute(result.path),
        "format": fmt,
        **result.plan.summary(),
        "pip_count": result.pip_count,
        "conda_count": result.conda_count,
        "exclude_newer": result.exclude_newer,
        "inputs_hash": result.inputs_hash,
        "lockfile_sha256": after,
        "changed": after != before,
    }


def check_json(ok: bool, message: str, output: Path, plan: Plan) -> dict[str, Any]:
    """A lockfile `lock --check` compared with its inputs."""
    return {
        "lockfile": absolute(output),
        "up_to_date": ok,
        "exists": output.exists(),
        "reason": message,
        **plan.summary(),
    }


def failed_json(name: str, output: Path, error: str, status: int) -> dict[str, Any]:
    """A lab class that could not be locked or checked."""
    return {
        "class": name,
        "status": "failed",
        "lockfile": absolute(output),
        "error": error,
        "exit": status,
    }


def fallback(ideal: Optional[Plan], plan: Plan) -> list[str]:
    """How the locked plan differs from the one every source would have allowed."""
    from gpuenv.lock import plan_changes

    return plan_changes(ideal, plan) if ideal is not None and ideal is not plan else []
