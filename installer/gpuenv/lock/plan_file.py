"""`gpuenv lock --plan FILE`: a Plan that `gpuenv resolve --json` saved. The file may come from
elsewhere, so it is read like a lockfile's plan: bounded, strict JSON, every field checked."""

from __future__ import annotations

from pathlib import Path

from gpuenv.lock.errors import LockfileError
from gpuenv.resolve.plan import Plan

MAX_PLAN_BYTES = 4 << 20


def read_plan_file(path: Path) -> Plan:
    """The Plan in `path`; LockfileError (exit 2) naming `--plan` for anything else."""
    from gpuenv.fs import strict_json
    from gpuenv.fs.safe_paths import read_bounded
    from gpuenv.lock.plan_fields import check_plan

    raw = read_bounded(path, MAX_PLAN_BYTES, "plan file")
    try:  # NaN, 5000-digit numbers and deep nesting are refused, never a traceback
        data = strict_json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise LockfileError(f"--plan {path}: not a JSON plan ({exc})") from exc
    if isinstance(data, dict):
        data.pop("rejected", None)  # resolve's explanation of other builds: not part of the stack
    problem = check_plan(data)
    if problem:
        raise LockfileError(f"--plan {path}: {problem}")
    return Plan.from_json(data)
