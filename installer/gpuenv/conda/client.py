"""The parent side of gpuenv.conda.rattler_child."""

from __future__ import annotations

import json
import sys
from typing import Any

from gpuenv.errors import FAILURE_EXIT, GpuenvError

RATTLER_TIMEOUT = 900.0


class CondaError(GpuenvError, RuntimeError):
    exit_code = FAILURE_EXIT


def run_rattler(request: dict[str, Any], timeout: float = RATTLER_TIMEOUT) -> dict[str, Any]:
    import subprocess  # not at the top: `gpuenv lock` imports this module before uv starts

    from gpuenv import output

    shown = {k: v for k, v in request.items() if k != "records"}  # records are many and long
    output.debug(f"py-rattler {request.get('op')}: {json.dumps(shown, sort_keys=True)}")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "gpuenv.conda.rattler_child"],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise CondaError(f"py-rattler did not finish within {timeout:.0f}s") from exc
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        tail = (done.stderr or done.stdout).strip()[-2000:]
        raise CondaError(f"py-rattler failed (exit {done.returncode}): {tail}")
    result: dict[str, Any] = json.loads(lines[-1])
    if not result.get("ok"):
        raise CondaError(str(result.get("error")))
    return result
