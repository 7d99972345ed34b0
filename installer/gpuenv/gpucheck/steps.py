"""Run gpuenv's own commands as a user would, each cut off in time, within one overall budget."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from gpuenv.detect._run import ProbeError, run

FRAMEWORKS = ("torch", "tensorflow", "jax")
# Runs under each candidate interpreter with -I: which frameworks are importable there, and its
# version. find_spec imports nothing heavy.
FIND_FRAMEWORKS = (
    "import importlib.util as u, json, sys; "
    "print(json.dumps({'python': '%d.%d.%d' % sys.version_info[:3], 'executable': sys.executable,"
    " 'frameworks': [n for n in " + repr(list(FRAMEWORKS)) + " if u.find_spec(n)]}))"
)


class Budget:
    """The check's overall time limit; each step gets its own limit, cut to what is left."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def limit(self, wanted: float) -> float:
        return min(wanted, self.left())


@dataclass(frozen=True)
class Step:
    name: str
    argv: tuple[str, ...]
    returncode: Optional[int]  # None: did not finish (timeout, could not start, skipped)
    seconds: float
    stdout: str = ""
    stderr: str = ""
    error: Optional[str] = None  # why it did not finish

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "argv": list(self.argv),
            "returncode": self.returncode,
            "seconds": self.seconds,
            "error": self.error,
            "stderr_tail": self.stderr.strip().splitlines()[-15:],
        }


def run_step(
    name: str,
    argv: Sequence[str],
    budget: Budget,
    timeout: float,
    env: Optional[Mapping[str, str]] = None,
) -> Step:
    limit = budget.limit(timeout)
    if limit < 1:
        return Step(name, tuple(argv), None, 0.0, error="skipped: the check's time budget is spent")
    start = time.monotonic()
    try:
        res = run(list(argv), timeout=limit, env=env)
    except ProbeError as exc:
        return Step(name, tuple(argv), None, round(time.monotonic() - start, 2), error=str(exc))
    seconds = round(time.monotonic() - start, 2)
    return Step(name, tuple(argv), res.returncode, seconds, res.stdout, res.stderr)


def gpuenv(*args: str) -> list[str]:
    """`gpuenv ARGS` with this interpreter, so the check tests the checkout it runs from."""
    return [sys.executable, "-m", "gpuenv", *args]


@dataclass(frozen=True)
class Interpreter:
    path: str
    python: str
    frameworks: tuple[str, ...]


def find_framework_pythons(
    candidates: Sequence[str], budget: Budget, env: Mapping[str, str]
) -> tuple[list[Interpreter], list[str]]:
    """Of the candidate interpreters, those with torch, tensorflow or jax importable."""
    found: list[Interpreter] = []
    notes: list[str] = []
    seen: set[str] = set()
    for path in candidates:
        if budget.left() < 5:
            notes.append("time budget spent before every interpreter was looked at")
            break
        try:
            res = run([path, "-I", "-c", FIND_FRAMEWORKS], timeout=budget.limit(15), env=env)
            data = json.loads(res.stdout.strip().splitlines()[-1]) if res.returncode == 0 else None
        except (ProbeError, ValueError, IndexError):
            data = None
        if not isinstance(data, dict):
            notes.append(f"{path}: did not answer as a Python interpreter")
            continue
        key = str(data.get("executable") or path)
        if key in seen:
            continue
        seen.add(key)
        names = tuple(n for n in data.get("frameworks") or [] if n in FRAMEWORKS)
        if names:
            found.append(Interpreter(path, str(data.get("python") or ""), names))
    return found, notes
