"""Run one probe script with an environment's interpreter, in a child process with a timeout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from gpuenv.verify.probes import RESULT_MARKER, STAGE_MARKER, probe_path

# Keep the frameworks from taking the whole GPU for a 32 x 32 product, unless the user chose.
_CHILD_DEFAULTS = {
    "TF_FORCE_GPU_ALLOW_GROWTH": "true",
    "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
    "PYTHONIOENCODING": "utf-8",
}
_STDERR_LINES = 60


@dataclass(frozen=True)
class ProbeRun:
    """What came back from one probe: its facts, or why there are none."""

    probe: str
    facts: Optional[dict[str, Any]]  # the probe's JSON; None when it printed none
    returncode: Optional[int]  # None: killed on timeout
    timed_out: bool
    seconds: float
    last_stage: Optional[str]  # the step it was at (or had reached) when it stopped
    stderr_tail: tuple[str, ...]  # the child's stderr, stage markers removed
    launch_error: Optional[str] = None  # the interpreter could not be started


def _parse(
    probe: str, stdout: str, stderr: str, returncode: Optional[int], timed_out: bool, seconds: float
) -> ProbeRun:
    facts = None
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            try:
                facts = json.loads(line[len(RESULT_MARKER) :])
            except ValueError:
                facts = None
            break
    stages = [ln[len(STAGE_MARKER) :] for ln in stderr.splitlines() if ln.startswith(STAGE_MARKER)]
    rest = [ln for ln in stderr.splitlines() if not ln.startswith(STAGE_MARKER) and ln.strip()]
    return ProbeRun(
        probe,
        facts,
        returncode,
        timed_out,
        seconds,
        stages[-1] if stages else None,
        tuple(rest[-_STDERR_LINES:]),
    )


def _kill(proc: subprocess.Popen[str]) -> None:
    """Kill the probe and whatever it started (its own session on POSIX)."""
    try:
        if sys.platform != "win32":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError, OSError):
        proc.kill()


def interpreter_flags(env: Mapping[str, str]) -> list[str]:
    """`-I` keeps the user's PYTHONPATH, PYTHONSTARTUP and user site out of the probe, and with
    them PYTHONDONTWRITEBYTECODE: where the user set it, say it again with `-B`, or the probe
    writes bytecode into the environment the user asked to keep without it (importing torch
    writes about 700 files, a second of a setup)."""
    return ["-I", "-B"] if env.get("PYTHONDONTWRITEBYTECODE") else ["-I"]


def run_probe(
    python: Path,
    probe: str,
    *,
    timeout: float,
    env: Optional[Mapping[str, str]] = None,
    script: Optional[Path] = None,
) -> ProbeRun:
    """`python -I <probe script>` (and `-B`, see interpreter_flags); `script` overrides the
    script (tests use a hanging one)."""
    child_env = {**_CHILD_DEFAULTS, **(os.environ if env is None else env)}
    path = script or probe_path(probe)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            [str(python), *interpreter_flags(child_env), str(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=child_env,
            start_new_session=sys.platform != "win32",
        )
    except OSError as exc:
        return ProbeRun(probe, None, None, False, 0.0, None, (), launch_error=str(exc))
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        _kill(proc)
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # a grandchild holds the pipes open
            out, err = "", ""
        timed_out = True
    seconds = round(time.monotonic() - start, 2)
    return _parse(
        probe, out or "", err or "", None if timed_out else proc.returncode, timed_out, seconds
    )
