"""Run a command, or a function, with a timeout; every failure becomes a ProbeError."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Optional


class ProbeError(Exception):
    """A probe could not tell; the message goes into Machine.notes."""


@dataclass(frozen=True)
class Completed:
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return (self.stdout + "\n" + self.stderr).strip()


def run(
    argv: Sequence[str],
    timeout: float,
    env: Optional[Mapping[str, str]] = None,
) -> Completed:
    """Run argv, capture its output as text, kill it (and its children) after `timeout` seconds.

    Raises ProbeError when the program cannot be started or does not finish in time; a non-zero
    exit status is returned, not raised: callers decide what it means.
    """
    name = os.path.basename(argv[0])
    kwargs: dict[str, object] = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = getattr(subprocess, "CREATE_NO_WINDOW", 0)
    else:
        kwargs["start_new_session"] = True  # so a timeout can kill the whole process group
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            **kwargs,  # type: ignore[call-overload]
        )
    except OSError as exc:
        raise ProbeError(f"could not run {name}: {exc.strerror or exc}") from exc
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise ProbeError(f"{name} did not answer within {timeout:g}s and was stopped") from None
    return Completed(proc.returncode, _text(out), _text(err))


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        if sys.platform != "win32":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:
        pass
    with contextlib.suppress(subprocess.TimeoutExpired, OSError, ValueError):
        proc.communicate(timeout=1)


def _text(data: Optional[bytes]) -> str:
    if not data:
        return ""
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n")
