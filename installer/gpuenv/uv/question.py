"""uv asked a question (which Python, whether it can download one, where its cache is, its
default index), where gpuenv runs uv: fs.workdir.uv_question_place."""

from __future__ import annotations

import subprocess
from typing import Optional


def ask_uv(cmd: list[str], timeout: float) -> Optional[subprocess.CompletedProcess[str]]:
    """`cmd` run to its end, its output as text; None when uv could not start or ran past
    `timeout` (then killed)."""
    from gpuenv.fs.workdir import uv_question_place

    where, env = uv_question_place()
    try:
        return subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, check=False, cwd=where, env=env
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
