"""verify: run probes with an environment's own interpreter and judge them against its plan.

Each framework is probed in its own child process (`python -I probe.py`) with a timeout, one
after another; the env probe (the interpreter's facts) runs beside them when the plan names the
frameworks. The probes (gpuenv.verify.probes) only report facts, gpuenv.verify.judge decides.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Optional

from gpuenv.errors import USAGE_EXIT, GpuenvError
from gpuenv.verify.expectations import Expectations, ExpectedFramework
from gpuenv.verify.judge import judge
from gpuenv.verify.report import Check, FrameworkReport, Report
from gpuenv.verify.runner import ProbeRun, run_probe

__all__ = [
    "Check",
    "Expectations",
    "ExpectedFramework",
    "FrameworkReport",
    "ProbeRun",
    "Report",
    "VerifyError",
    "import_failures",
    "verify_environment",
]

PROBED = ("torch", "tensorflow", "jax")


class VerifyError(GpuenvError):
    """The environment cannot be verified at all (no interpreter there)."""

    exit_code = USAGE_EXIT


def verify_environment(
    python: Path,
    expectations: Optional[Expectations] = None,
    *,
    timeout: float = 120.0,
    env: Optional[Mapping[str, str]] = None,
) -> Report:
    """Probe `python`'s environment; with no expectations, what is installed must work on CPU."""
    if not Path(python).exists():
        raise VerifyError(f"no interpreter at {python}")
    problems: list[str] = []
    notes: list[str] = []
    if expectations is None:  # which frameworks to probe is the env probe's answer: wait for it
        info = run_probe(python, "env", timeout=timeout, env=env)
        expectations = Expectations.cpu_only(
            [n for n in (info.facts or {}).get("installed") or [] if n in PROBED]
        )
        if info.facts is not None and not expectations.frameworks:
            notes.append("no framework (torch, tensorflow, jax) is installed here")
        reports = _probe_frameworks(python, expectations, notes, timeout, env)
    else:  # the env probe runs beside the framework probes: its interpreter costs no time
        env_probe = _started(lambda: run_probe(python, "env", timeout=timeout, env=env))
        reports = _probe_frameworks(python, expectations, notes, timeout, env)
        info = env_probe()
    facts = info.facts or {}
    if info.facts is None:
        problems.append(
            f"{python} did not run a Python script: "
            + (
                info.launch_error
                or (
                    "timed out"
                    if info.timed_out
                    else "; ".join(info.stderr_tail[-3:]) or "no output"
                )
            )
        )
    version = facts.get("python")
    if expectations.python and version and not str(version).startswith(expectations.python):
        problems.append(
            f"the environment runs Python {version}, the plan chose {expectations.python}"
        )
    return Report(
        python=str(python),
        python_version=version,
        accelerator=expectations.accelerator,
        frameworks=tuple(reports),
        problems=tuple(problems),
        notes=tuple(notes),
    )


def _probe_frameworks(
    python: Path,
    expectations: Expectations,
    notes: list[str],
    timeout: float,
    env: Optional[Mapping[str, str]],
) -> list[FrameworkReport]:
    """Each expected framework's probe, one after another: two frameworks starting on the same
    GPU at once would compete for its memory."""
    reports = []
    for name in expectations.frameworks:
        if name not in PROBED:
            notes.append(f"{name}: gpuenv has no probe for it; not checked")
            continue
        reports.append(judge(name, expectations, run_probe(python, name, timeout=timeout, env=env)))
    return reports


def _started(work: Callable[[], ProbeRun]) -> Callable[[], ProbeRun]:
    """Start `work` in a thread now; the function returned waits for its answer (or raises
    what it raised)."""
    answer: list[ProbeRun] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            answer.append(work())
        except BaseException as exc:  # handed to the waiting caller
            failure.append(exc)

    thread = threading.Thread(target=run, name="gpuenv-env-probe", daemon=True)
    thread.start()

    def wait() -> ProbeRun:
        thread.join()
        if failure:
            raise failure[0]
        return answer[0]

    return wait


def import_failures(report: Report) -> Optional[str]:
    """Why the environment cannot even import its frameworks (None when it can): the smoke
    test's question, answered from a verify report so the frameworks are imported only once."""
    failed: list[str] = []
    for fw in report.frameworks:
        if not any(c.name == "import" and c.ok for c in fw.checks):
            failed += [f"{fw.name}: {p}" for p in fw.problems] or [f"{fw.name}: did not import"]
    return "\n".join(failed) or None
