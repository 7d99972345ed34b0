"""What the benchmarks share: a clean environment, paired A/B timing, the goals table.

Every measurement pairs a gpuenv command with the command a user would run instead, in the same
run, alternating which goes first each round (ABBA...), and reports both medians, their spread
(min-max) and the ratio of the medians. A goal is either a ratio to the baseline or an absolute
ceiling in seconds.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parent.parent
GPUENV = [sys.executable, "-m", "gpuenv"]
PYTHON_PASS = [sys.executable, "-c", "pass"]

# Index settings of the machine running the benchmark (mirrors, wheelhouses) would make gpuenv and
# uv fetch different files: every command gets exactly the index the benchmark names.
_DROPPED = ("PIP_", "UV_INDEX", "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROPPED)}
    env.update(PIP_CONFIG_FILE=os.devnull, UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never")
    env.update(extra)
    return env


class Arm:
    """Which gpuenv the gpuenv commands run: this checkout's, or (for a before/after
    comparison in the same run) another checkout's source, set by `paired` around its calls."""

    source: Optional[Path] = None

    @classmethod
    def tag(cls) -> str:
        return "" if cls.source is None else "-before"


def run(
    cmd: Sequence[str],
    env: Mapping[str, str],
    *,
    cwd: Optional[Path] = None,
    allowed: tuple[int, ...] = (0,),
) -> float:
    """Seconds the command took; stops the benchmark with the command's error if it failed."""
    if Arm.source is not None and list(cmd[: len(GPUENV)]) == GPUENV:
        env = {**env, "PYTHONPATH": str(Arm.source / "installer")}
    start = time.perf_counter()
    done = subprocess.run(
        list(cmd), env=dict(env), cwd=cwd, capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in allowed:
        sys.exit(
            f"failed ({done.returncode}): {' '.join(map(str, cmd))}\n"
            f"{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
        )
    return elapsed


def output(cmd: Sequence[str], env: Mapping[str, str], *, cwd: Optional[Path] = None) -> str:
    done = subprocess.run(
        list(cmd), env=dict(env), cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(map(str, cmd))}\n{done.stderr[-3000:]}")
    return done.stdout


Step = Callable[[], float]  # one measured run: its seconds (it may do untimed preparation)


@dataclass
class Row:
    """One line of the goals table: gpuenv against the baseline, measured in one run."""

    task: str
    gpuenv: str  # the gpuenv command, for people
    baseline: str  # the command a user would run instead
    goal_ratio: Optional[float] = None  # gpuenv <= goal_ratio x baseline
    goal_seconds: Optional[float] = None  # gpuenv <= goal_seconds, whatever the baseline
    a: list[float] = field(default_factory=list)
    b: list[float] = field(default_factory=list)
    before: list[float] = field(default_factory=list)  # gpuenv from BEFORE, when asked

    @property
    def ratio(self) -> float:
        return statistics.median(self.a) / statistics.median(self.b)

    @property
    def met(self) -> bool:
        ok = True
        if self.goal_ratio is not None:
            ok = ok and self.ratio <= self.goal_ratio
        if self.goal_seconds is not None:
            ok = ok and statistics.median(self.a) <= self.goal_seconds
        return ok

    def goal(self) -> str:
        parts = []
        if self.goal_ratio is not None:
            parts.append(f"<= {self.goal_ratio:g}x")
        if self.goal_seconds is not None:
            parts.append(f"<= {self.goal_seconds:g} s")
        return ", ".join(parts)

    def render(self) -> str:
        before = ""
        if self.before:
            ratio = statistics.median(self.before) / statistics.median(self.b)
            before = f" {_stat(self.before)}, {ratio:.2f}x |"
        return (
            f"| {self.task} |{before} {_stat(self.a)} | {self.baseline}: {_stat(self.b)} |"
            f" {self.ratio:.2f}x | {self.goal()} | {'met' if self.met else 'NOT met'} |"
        )


def header(with_before: bool) -> str:
    if with_before:
        return (
            "| task | before: median (min-max), ratio | gpuenv, median (min-max) |"
            " baseline: median (min-max) | ratio | goal | |\n|---|---:|---:|---|---:|---|---|"
        )
    return (
        "| task | gpuenv, median (min-max) | baseline: median (min-max) | ratio | goal | |\n"
        "|---|---:|---|---:|---|---|"
    )


def _stat(samples: list[float]) -> str:
    med = statistics.median(samples)
    if med < 1:
        return f"{med * 1000:.0f} ms ({min(samples) * 1000:.0f}-{max(samples) * 1000:.0f})"
    return f"{med:.2f} s ({min(samples):.2f}-{max(samples):.2f})"


BEFORE: Optional[Path] = None  # set by --before: also measure that checkout's gpuenv


def _before(step: Step) -> float:
    Arm.source = BEFORE
    try:
        return step()
    finally:
        Arm.source = None


def paired(row: Row, gpuenv: Step, baseline: Step, rounds: int) -> Row:
    """Alternate A and B (ABBA...), so drift in the machine's load hits both alike; with
    --before, the older gpuenv takes its turn in each round too."""
    for r in range(rounds):
        steps: list[tuple[list[float], Step]] = [(row.a, gpuenv), (row.b, baseline)]
        if BEFORE is not None:
            steps.append((row.before, lambda: _before(gpuenv)))
        for samples, step in steps if r % 2 == 0 else reversed(steps):
            samples.append(step())
        print(f"  {row.task}: round {r + 1}/{rounds}", file=sys.stderr, flush=True)
    return row


def print_table(rows: list[Row]) -> None:
    print(header(any(r.before for r in rows)))
    for row in rows:
        print(row.render(), flush=True)
