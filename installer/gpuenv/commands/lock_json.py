"""What `gpuenv lock --json` says about each lockfile: written, checked, or failed."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any, Optional

from gpuenv.commands.json_output import plan_summary


def absolute(path: Path) -> str:
    return os.path.abspath(path)


def file_sha256(path: Path) -> Optional[str]:
    """The file's content hash; None when there is no regular file (yet). Only a regular file is
    opened: a pipe or a device given as -o would block or never end (lock then refuses it)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    except OSError:
        return None


def locked_json(result: Any, fmt: str, before: Optional[str]) -> dict[str, Any]:
    """A lockfile lock wrote: where, what, and whether its bytes changed (`before`: its hash
    before the lock)."""
    after = file_sha256(result.path)
    return {
        "lockfile": absolute(result.path),
        "format": fmt,
        **plan_summary(result.plan),
        "pip_count": result.pip_count,
        "conda_count": result.conda_count,
        "exclude_newer": result.exclude_newer,
        "inputs_hash": result.inputs_hash,
        "lockfile_sha256": after,
        "changed": after != before,
    }


def check_json(ok: bool, message: str, output: Path, plan: Any) -> dict[str, Any]:
    """A lockfile `lock --check` compared with its inputs."""
    return {
        "lockfile": absolute(output),
        "up_to_date": ok,
        "exists": output.exists(),
        "reason": message,
        **plan_summary(plan),
    }


def failed_json(name: str, output: Path, exc: BaseException, status: int) -> dict[str, Any]:
    """A lab class that could not be locked or checked."""
    return {
        "class": name,
        "status": "failed",
        "lockfile": absolute(output),
        "error": str(exc),
        "exit": status,
    }


def fallback(ideal: Any, plan: Any) -> list[str]:
    """How the locked plan differs from the one every source would have allowed."""
    from gpuenv.lock import plan_changes

    return plan_changes(ideal, plan) if ideal is not None and ideal is not plan else []
